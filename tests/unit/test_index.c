/*
 * test_index.c - unit tests of the cache's handle and sqlite index
 * (cache/index.c): what a new cache is made of, lazy handles, an index
 * from a newer boltccd refused, the move from schema 1, the statements
 * the other files use (store_int.h), and open errors.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

/* The first column of sql's first row in dir's index, as text. */
static char *
query(const char *dir, const char *sql)
{
	char *path = xasprintf("%s/index.sqlite", dir), *v = NULL;
	sqlite3 *db;
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
	    SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
	return v != NULL ? v : xstrdup("");
}

static void
assert_query(const char *dir, const char *sql, const char *want)
{
	char *v = query(dir, sql);

	ck_assert_msg(strcmp(v, want) == 0, "%s: \"%s\", want \"%s\"", sql, v,
	    want);
	free(v);
}

/* A new cache: schema 2 in WAL mode, its tables, 256 blob directories. */
START_TEST(test_index_new)
{
	struct bc_cache *c = ct_open(0);
	const char *dir = bc_cache_dir(c);
	char *p;
	struct stat sb;
	int i;

	p = xasprintf("%s/cache", ct_tmpd);
	ck_assert_str_eq(dir, p);
	free(p);
	assert_query(dir, "PRAGMA user_version", "2");
	assert_query(dir, "PRAGMA journal_mode", "wal");
	assert_query(dir, "SELECT group_concat(name, ' ') FROM (SELECT name "
	    "FROM sqlite_master ORDER BY name)",
	    "counters entries entries_lru locations origins origins_gone "
	    "sqlite_autoindex_locations_1 state");
	for (i = 0; i < 256; i++) {
		p = xasprintf("%s/blobs/%02x", dir, i);
		ck_assert_msg(stat(p, &sb) == 0 && S_ISDIR(sb.st_mode), "%s",
		    p);
		free(p);
	}
	/* an entry's origin goes with it (the trigger) */
	{
		struct bc_cache_entry e;
		char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

		ct_key(1, k);
		ct_fill_entry(&e, 1, 10);
		memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
		ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
		assert_query(dir, "SELECT COUNT(*) FROM origins", "1");
		ck_assert_int_eq(bc_cache_clear(c, NULL, NULL, err), BC_OK);
		assert_query(dir, "SELECT COUNT(*) FROM origins", "0");
		bc_cache_entry_free(&e);
	}
	bc_cache_close(c);
	/* reopening changes nothing */
	c = ct_open(0);
	assert_query(bc_cache_dir(c), "PRAGMA user_version", "2");
	bc_cache_close(c);
}
END_TEST

/* A lazy handle makes no index until a call needs one; an index from a
 * newer boltccd is that call's error, each time, and bc_cache_open's. */
START_TEST(test_index_lazy_newer)
{
	struct bc_cache *c;
	struct bc_cache_stats st;
	char err[BC_ERRLEN];
	char *dir = xasprintf("%s/lazy", ct_tmpd), *idx;
	struct stat sb;
	sqlite3 *db;

	ck_assert_int_eq(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	idx = xasprintf("%s/index.sqlite", dir);
	ck_assert_int_ne(stat(idx, &sb), 0);
	ck_assert_int_eq(bc_cache_stats(c, &st, err), BC_OK);
	ck_assert_int_eq(stat(idx, &sb), 0);
	bc_cache_close(c);
	ck_assert_int_eq(sqlite3_open(idx, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	err[0] = '\0';
	ck_assert_int_ne(bc_cache_stats(c, &st, err), BC_OK);
	ck_assert_ptr_nonnull(strstr(err, "newer"));
	err[0] = '\0';
	ck_assert_int_eq(bc_cache_set_limit(c, 1000, NULL, NULL, err),
	    BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "newer"));
	bc_cache_close(c);
	ck_assert_int_eq(bc_cache_open(dir, 0, &c, err), BC_ERR_INVAL);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "schema 99 is newer"));
	free(idx);
	free(dir);
}
END_TEST

/* A schema-1 cache (blobs/ab/cd/<key>) opens with its entries intact. */
START_TEST(test_migrate_v1)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e, d;
	struct bc_cache_check chk;
	char k[4][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *dir = xstrdup(bc_cache_dir(c)), *p;
	sqlite3 *db;
	struct stat sb;
	int i;

	for (i = 0; i < 4; i++) {
		ct_key(100 + i, k[i]);
		ct_fill_entry(&e, i, 300 + (size_t)i);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
		bc_cache_entry_free(&e);
	}
	bc_cache_close(c);
	/* rewrite it as schema 1 left it */
	for (i = 0; i < 4; i++) {
		char *from = xasprintf("%s/blobs/%.2s/%s", dir, k[i], k[i]);
		char *sub = xasprintf("%s/blobs/%.2s/%.2s", dir, k[i],
		    k[i] + 2);
		char *to = xasprintf("%s/%s", sub, k[i]);

		ck_assert_int_eq(bc_mkdir_p(sub, 0700, err), BC_OK);
		ck_assert_int_eq(rename(from, to), 0);
		free(from);
		free(sub);
		free(to);
	}
	p = xasprintf("%s/index.sqlite", dir);
	ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version=1", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	free(p);
	ck_assert_int_eq(bc_cache_open(dir, 0, &c, err), BC_OK);
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.corrupt + chk.bad_size, 0);
	ck_assert_uint_eq(chk.entries, 4);
	for (i = 0; i < 4; i++) {
		char *sub = xasprintf("%s/blobs/%.2s/%.2s", dir, k[i],
		    k[i] + 2);

		ct_fill_entry(&e, i, 300 + (size_t)i);
		ck_assert_int_eq(bc_cache_get(c, k[i], BC_CACHE_COUNT_ALL, &d,
		    err), BC_OK);
		ck_assert(ct_entries_equal(&e, &d));
		bc_cache_entry_free(&e);
		bc_cache_entry_free(&d);
		ck_assert_int_ne(stat(sub, &sb), 0);	/* emptied, removed */
		free(sub);
	}
	bc_cache_close(c);
	free(dir);
}
END_TEST

/* The statements the other files of the cache run through. */
START_TEST(test_index_statements)
{
	struct bc_cache *c = ct_open(0);
	char err[BC_ERRLEN];
	sqlite3_stmt *st;

	ck_assert_int_eq(bc_index_get(c, "state", "nothing"), 0);
	ck_assert_int_eq(bc_index_add(c, "counters", "x", 5), BC_OK);
	ck_assert_int_eq(bc_index_add(c, "counters", "x", -2), BC_OK);
	ck_assert_int_eq(bc_index_get(c, "counters", "x"), 3);
	ck_assert_int_eq(bc_index_set_state(c, "s", 7), BC_OK);
	ck_assert_int_eq(bc_index_set_state(c, "s", 9), BC_OK);
	ck_assert_int_eq(bc_index_get(c, "state", "s"), 9);
	ck_assert_int_eq(bc_index_query_int(c,
	    "SELECT COUNT(*) FROM state WHERE name='s'"), 1);
	ck_assert_int_eq(bc_index_query_int(c, "SELECT 1 WHERE 0"), 0);
	ck_assert_int_eq(bc_index_query_int(c, "not sql"), 0);
	/* a rolled back transaction leaves nothing, a committed one is
	 * there for the next connection */
	ck_assert_int_eq(bc_index_begin(c, err), BC_OK);
	ck_assert_int_eq(bc_index_add(c, "counters", "x", 100), BC_OK);
	bc_index_rollback(c);
	ck_assert_int_eq(bc_index_get(c, "counters", "x"), 3);
	ck_assert_int_eq(bc_index_begin(c, err), BC_OK);
	ck_assert_int_eq(bc_index_add(c, "counters", "x", 10), BC_OK);
	ck_assert_int_eq(bc_index_commit(c, err), BC_OK);
	assert_query(bc_cache_dir(c), "SELECT value FROM counters WHERE "
	    "name='x'", "13");
	/* a commit without a transaction fails, and says why */
	err[0] = '\0';
	ck_assert_int_eq(bc_index_commit(c, err), BC_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err, "cache index: COMMIT"));
	/* errors name the statement */
	err[0] = '\0';
	ck_assert_int_eq(bc_index_exec(c, "NOT SQL", err), BC_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err, "cache index: NOT SQL"));
	err[0] = '\0';
	ck_assert_int_eq(bc_index_prep(c, "SELECT nothing FROM nowhere", &st,
	    err), BC_ERR_IO);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(err, "nowhere"));
	ck_assert_int_eq(bc_index_add(c, "nosuchtable", "x", 1), BC_ERR_IO);
	bc_cache_close(c);
}
END_TEST

START_TEST(test_index_open_errors)
{
	struct bc_cache *c = (struct bc_cache *)&c;
	char err[BC_ERRLEN], *file = xasprintf("%s/file", ct_tmpd), *dir;

	ck_assert_int_eq(bc_cache_open("", 0, &c, err), BC_ERR_INVAL);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "no cache directory"));
	ck_assert_int_eq(bc_cache_open_lazy(NULL, 0, &c, err), BC_ERR_INVAL);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(bc_write_file_atomic(file, "x", 1, 0600, err), BC_OK);
	ck_assert_int_ne(bc_cache_open(file, 0, &c, err), BC_OK);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "cache directory"));
	/* blobs/ taken by a file */
	dir = xasprintf("%s/c2", ct_tmpd);
	ck_assert_int_eq(bc_mkdir_p(dir, 0700, err), BC_OK);
	free(file);
	file = xasprintf("%s/blobs", dir);
	ck_assert_int_eq(bc_write_file_atomic(file, "x", 1, 0600, err), BC_OK);
	ck_assert_int_ne(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "cache directory"));
	bc_cache_close(NULL);
	free(file);
	free(dir);
}
END_TEST

static Suite *
index_suite(void)
{
	Suite *s = suite_create("index");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.15 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_index_new);
	tcase_add_test(tc, test_index_lazy_newer);
	tcase_add_test(tc, test_migrate_v1);
	tcase_add_test(tc, test_index_statements);
	tcase_add_test(tc, test_index_open_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(index_suite());
}
