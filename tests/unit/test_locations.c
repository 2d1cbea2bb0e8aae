/*
 * test_locations.c - unit tests of the locations table
 * (cache/locations.c): a batch recorded and read back oldest first, a
 * key moved to another host becoming the newest, an empty host
 * forgetting the key, bad keys and hosts skipped, a reopen keeping it.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

/* What bc_cache_loc_each reported: "key-index=host" lines. */
struct seen {
	char text[4096];
	int n;
};

static void
collect(void *arg, const char *key, const char *host)
{
	struct seen *s = arg;
	size_t len = strlen(s->text);
	int i;

	for (i = 0; i < 100; i++) {
		char k[BC_HASH_HEXLEN + 1];

		ct_key(i, k);
		if (strcmp(k, key) == 0)
			break;
	}
	snprintf(s->text + len, sizeof(s->text) - len, "%d=%s ", i, host);
	s->n++;
}

static void
loc(struct bc_cache_loc *v, int i, const char *host)
{
	memset(v, 0, sizeof(*v));
	ct_key(i, v->key);
	snprintf(v->host, sizeof(v->host), "%s", host);
}

static const char *
each(struct bc_cache *c, struct seen *s)
{
	char err[BC_ERRLEN];

	memset(s, 0, sizeof(*s));
	ck_assert_msg(bc_cache_loc_each(c, collect, s, err) == BC_OK, "%s",
	    err);
	return s->text;
}

START_TEST(test_locations)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_loc v[4];
	struct seen s;
	char err[BC_ERRLEN];

	ck_assert_str_eq(each(c, &s), "");
	ck_assert_int_eq(bc_cache_loc_put(c, v, 0, err), BC_OK);
	loc(&v[0], 1, "a:3632");
	loc(&v[1], 2, "b");
	loc(&v[2], 3, "c.example");
	ck_assert_int_eq(bc_cache_loc_put(c, v, 3, err), BC_OK);
	ck_assert_str_eq(each(c, &s), "1=a:3632 2=b 3=c.example ");
	/* a key moved becomes the newest; an empty host forgets a key; a
	 * record with a bad key is skipped, the rest of its batch kept */
	loc(&v[0], 1, "d");
	loc(&v[1], 2, "");
	loc(&v[2], 4, "e");
	memcpy(v[2].key, "not-a-key", 10);
	loc(&v[3], 5, "f");
	ck_assert_int_eq(bc_cache_loc_put(c, v, 4, err), BC_OK);
	ck_assert_str_eq(each(c, &s), "3=c.example 1=d 5=f ");
	/* kept across a reopen */
	bc_cache_close(c);
	c = ct_open(0);
	ck_assert_str_eq(each(c, &s), "3=c.example 1=d 5=f ");
	ck_assert_int_eq(s.n, 3);
	bc_cache_close(c);
}
END_TEST

/* Rows that do not make a location (written by something else) are not
 * reported: a key that is not a key, a host longer than a host may be. */
START_TEST(test_locations_bad_rows)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_loc v;
	struct seen s;
	char err[BC_ERRLEN], k[BC_HASH_HEXLEN + 1];
	char *path = xasprintf("%s/cache/index.sqlite", ct_tmpd), *sql;
	char *longhost = xmalloc(BC_MAX_LOC_HOST + 2);
	sqlite3 *db;

	loc(&v, 1, "a");
	ck_assert_int_eq(bc_cache_loc_put(c, &v, 1, err), BC_OK);
	memset(longhost, 'h', BC_MAX_LOC_HOST + 1);
	longhost[BC_MAX_LOC_HOST + 1] = '\0';
	ct_key(2, k);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	sql = sqlite3_mprintf("INSERT INTO locations(key,host) VALUES"
	    "('%q','%q'),('nothex','b')", k, longhost);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_free(sql);
	sqlite3_close(db);
	ck_assert_str_eq(each(c, &s), "1=a ");
	free(longhost);
	free(path);
	bc_cache_close(c);
}
END_TEST

static Suite *
locations_suite(void)
{
	Suite *s = suite_create("locations");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.2 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_locations);
	tcase_add_test(tc, test_locations_bad_rows);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(locations_suite());
}
