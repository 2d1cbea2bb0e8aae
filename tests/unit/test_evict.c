/*
 * test_evict.c - unit tests of what leaves the cache (cache/evict.c):
 * exact LRU eviction order, the limit in force (an operator's, kept in the
 * index, over the size the cache was opened with), an operator's clear
 * and evict-older-than over more entries than a batch, and a clear cut
 * short by a crash.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

#include <sqlite3.h>

START_TEST(test_lru_eviction)
{
	struct bc_cache *c;
	struct bc_cache_entry e[6], d;
	struct bc_cache_stats s;
	char k[6][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	uint64_t one;
	int i;

	for (i = 0; i < 6; i++) {
		ct_key(100 + i, k[i]);
		/* incompressible-ish, all the same blob size */
		ct_fill_entry(&e[i], 2 * i + 1, 1000);
	}
	ck_assert_int_eq(bc_cache_blob_encode(&e[0], 1, &blob, err), BC_OK);
	one = bc_buf_len(&blob);
	bc_buf_free(&blob);
	/* room for exactly three entries */
	c = ct_open(3 * one + one / 2);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(bc_cache_put(c, k[i], &e[i], err), BC_OK);
	/* use 0: now 1 is the least recently used */
	ck_assert_int_eq(bc_cache_get(c, k[0], 1, &d, err), BC_OK);
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_put(c, k[3], &e[3], err), BC_OK);
	ck_assert(bc_cache_has(c, k[0]));
	ck_assert(!bc_cache_has(c, k[1]));
	ck_assert(bc_cache_has(c, k[2]));
	ck_assert(bc_cache_has(c, k[3]));
	/* next victims: 2, then 0 */
	ck_assert_int_eq(bc_cache_put(c, k[4], &e[4], err), BC_OK);
	ck_assert(!bc_cache_has(c, k[2]));
	ck_assert(bc_cache_has(c, k[0]));
	ck_assert_int_eq(bc_cache_put(c, k[5], &e[5], err), BC_OK);
	ck_assert(!bc_cache_has(c, k[0]));
	ck_assert(bc_cache_has(c, k[3]) && bc_cache_has(c, k[4]) &&
	    bc_cache_has(c, k[5]));
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.evictions, 3);
	ck_assert_uint_eq(s.entries, 3);
	ck_assert_uint_le(s.stored_bytes, 3 * one + one / 2);
	/* evicted blobs are gone from disk */
	{
		char *p = bc_cache_blob_path(c, k[1]);
		struct stat sb;

		ck_assert_int_ne(stat(p, &sb), 0);
		free(p);
	}
	/* explicit eviction to one entry keeps the most recent */
	ck_assert_int_eq(bc_cache_evict(c, one + one / 2, NULL, err), BC_OK);
	ck_assert(!bc_cache_has(c, k[3]) && !bc_cache_has(c, k[4]) &&
	    bc_cache_has(c, k[5]));
	for (i = 0; i < 6; i++)
		bc_cache_entry_free(&e[i]);
	bc_cache_close(c);
}
END_TEST

/* Clear, evict-older-than and an operator's limit: more entries than a
 * batch, rows and blobs go together, the limit outlives a reopen and
 * overrides the size the cache is opened with. */
START_TEST(test_admin_ops)
{
	enum { N = BC_CACHE_ADMIN_BATCH + 44, OLD = 100 };
	static char k[N][BC_HASH_HEXLEN + 1];
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	struct bc_cache_stats s;
	struct bc_cache_check chk;
	char err[BC_ERRLEN];
	uint64_t n, freed, one, before;
	int64_t now = (int64_t)time(NULL);
	int i;

	ct_fill_entry(&e, 3, 500);
	for (i = 0; i < N; i++) {
		ct_key(5000 + i, k[i]);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	}
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, N);
	one = s.stored_bytes / N;
	ck_assert_uint_eq(s.limit_set, 0);
	ck_assert_uint_eq(s.max_bytes, BC_CACHE_DEFAULT_SIZE);

	/* evict-older-than: exactly the old ones */
	for (i = 0; i < OLD; i++)
		ct_set_last_used(k[i], now - 10 * 86400);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_int_le(s.oldest_used, now - 10 * 86400);
	ck_assert_int_eq(bc_cache_evict_older(c, now - 7 * 86400, &n, &freed,
	    err), BC_OK);
	ck_assert_uint_eq(n, OLD);
	ck_assert_uint_eq(freed, OLD * one);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(bc_cache_has(c, k[i]), i >= OLD);
		ck_assert_int_eq(ct_blob_there(c, k[i]), i >= OLD);
	}
	ck_assert_int_eq(bc_cache_evict_older(c, now - 7 * 86400, &n, NULL,
	    err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, N - OLD);
	ck_assert_uint_eq(s.stored_bytes, (N - OLD) * one);
	ck_assert_uint_eq(s.evictions, OLD);

	/* an operator's limit: evicts down to it (LRU), persists */
	before = s.stored_bytes;
	ck_assert_int_eq(bc_cache_set_limit(c, 50 * one, &n, &freed, err),
	    BC_OK);
	ck_assert_uint_eq(n, N - OLD - 50);
	ck_assert_uint_eq(freed, before - 50 * one);
	ck_assert(bc_cache_has(c, k[N - 1]) && !bc_cache_has(c, k[OLD]));
	bc_cache_close(c);
	c = ct_open(1 << 30);	/* --cache-size 1G: the operator's wins */
	ck_assert_uint_eq(bc_cache_operator_limit(c), 50 * one);
	ck_assert_uint_eq(bc_cache_limit(c), 50 * one);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.limit_set, 1);
	ck_assert_uint_eq(s.max_bytes, 50 * one);
	ck_assert_uint_eq(s.entries, 50);
	{
		/* a store beyond it evicts to it */
		char nk[BC_HASH_HEXLEN + 1];

		ct_key(9999, nk);
		ck_assert_int_eq(bc_cache_put(c, nk, &e, err), BC_OK);
		ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
		ck_assert_uint_eq(s.entries, 50);
		ck_assert(bc_cache_has(c, nk));
	}
	/* 0 forgets it: the size the cache was opened with again */
	ck_assert_int_eq(bc_cache_set_limit(c, 0, &n, NULL, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(bc_cache_operator_limit(c), 0);
	ck_assert_uint_eq(bc_cache_limit(c), 1 << 30);

	/* clear: every row and blob, counted as evictions */
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	before = s.evictions;
	ck_assert_int_eq(bc_cache_clear(c, &n, &freed, err), BC_OK);
	ck_assert_uint_eq(n, 50);
	ck_assert_uint_eq(freed, 50 * one);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 0);
	ck_assert_uint_eq(s.stored_bytes, 0);
	ck_assert_uint_eq(s.oldest_used, 0);
	ck_assert_uint_eq(s.evictions, before + 50);
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.bad_size + chk.corrupt, 0);
	for (i = 0; i < N; i++)
		ck_assert(!ct_blob_there(c, k[i]));

	/* a clear cut short after a batch's blobs went (a crash): the rows
	 * left are misses, and the start-up reconciliation drops them */
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	for (i = 0; i < 2; i++) {
		char *p = bc_cache_blob_path(c, k[i]);

		ck_assert_int_eq(unlink(p), 0);
		free(p);
	}
	{
		struct bc_cache_entry d;

		ck_assert_int_eq(bc_cache_get(c, k[0], 1, &d, err),
		    BC_ERR_NOENT);
		bc_cache_entry_free(&d);
	}
	ck_assert_int_eq(bc_cache_reconcile(c, 1, 0, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows, 1);
	ck_assert_uint_eq(chk.entries, 2);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 2);
	ck_assert_uint_eq(s.stored_bytes, 2 * one);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* Eviction with nothing to evict, to 0, and of a total that is stale
 * (more bytes counted than the rows hold). */
START_TEST(test_evict_edges)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	uint64_t n = 99;
	int i;

	ck_assert_int_eq(bc_cache_evict(c, 0, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ct_fill_entry(&e, 1, 400);
	for (i = 0; i < 3; i++) {
		ct_key(600 + i, k);
		ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	}
	ck_assert_int_eq(bc_cache_evict(c, UINT64_MAX / 2, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(bc_cache_evict(c, 0, &n, err), BC_OK);
	ck_assert_uint_eq(n, 3);
	for (i = 0; i < 3; i++) {
		ct_key(600 + i, k);
		ck_assert(!bc_cache_has(c, k) && !ct_blob_there(c, k));
	}
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.stored_bytes, 0);
	ck_assert_uint_eq(s.evictions, 3);
	/* a total with no rows behind it is reset, not looped on */
	{
		char *path = xasprintf("%s/cache/index.sqlite", ct_tmpd);
		sqlite3 *db;

		ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(db, "UPDATE state SET "
		    "value=12345 WHERE name='stored_bytes'", NULL, NULL, NULL),
		    SQLITE_OK);
		sqlite3_close(db);
		free(path);
	}
	ck_assert_int_eq(bc_cache_evict(c, 100, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.stored_bytes, 0);
	/* a limit beyond what sqlite holds is refused */
	ck_assert_int_eq(bc_cache_set_limit(c, UINT64_MAX, &n, NULL, err),
	    BC_ERR_INVAL);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

static Suite *
evict_suite(void)
{
	Suite *s = suite_create("evict");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT_SLOW);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest, test_admin_ops (300 stores), takes 0.9 s under ASan
	 * on 2 busy cores */
	tcase_add_test(tc, test_lru_eviction);
	tcase_add_test(tc, test_admin_ops);
	tcase_add_test(tc, test_evict_edges);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(evict_suite());
}
