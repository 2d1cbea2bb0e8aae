/*
 * test_counters.c - unit tests of the cache's statistics
 * (cache/counters.c): named counters and uncacheable reasons, the index's
 * totals, persistence across a reopen, and the zero's baseline (the
 * totals go on, the pages count from the baseline, never below 0).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

START_TEST(test_counters_persist_zero)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e, d;
	struct bc_cache_stats s, base, since;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int64_t before = (int64_t)time(NULL);

	ct_key(1, k);
	ct_fill_entry(&e, 2, 3000);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_NOENT);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_OK);
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_count(c, "uncacheable:compile-error", 2),
	    BC_OK);
	ck_assert_int_eq(bc_cache_count(c, "identity_mismatch", 3), BC_OK);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.stores, 1);
	ck_assert_uint_eq(s.identity_mismatch, 3);
	ck_assert_uint_eq(s.entries, 1);
	ck_assert_uint_gt(s.stored_bytes, 0);
	ck_assert_uint_eq(s.time_saved_ms, 1002);
	ck_assert_uint_eq(s.uncacheable, 2);
	ck_assert_uint_eq(s.nreasons, 1);
	ck_assert_str_eq(s.reasons[0].name, "compile-error");
	ck_assert_uint_eq(s.max_bytes, BC_CACHE_DEFAULT_SIZE);
	ck_assert_int_eq(s.limit_set, 0);
	ck_assert_int_ge(s.oldest_used, before);
	ck_assert_int_eq(s.zeroed_at, 0);
	/* never zeroed: the baseline is all 0 */
	ck_assert_int_eq(bc_cache_baseline(c, &base, err), BC_OK);
	ck_assert_uint_eq(base.hits + base.requests + base.uncacheable, 0);
	ck_assert_int_eq(base.zeroed_at, 0);

	/* counters survive a reopen; zero keeps the totals */
	bc_cache_close(c);
	c = ct_open(0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_int_eq(bc_cache_zero(c, err), BC_OK);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.entries, 1);
	ck_assert_int_ge(s.zeroed_at, before);
	ck_assert_int_eq(bc_cache_baseline(c, &base, err), BC_OK);
	ck_assert_uint_eq(base.hits, 1);
	ck_assert_uint_eq(base.uncacheable, 2);
	ck_assert_int_eq(base.zeroed_at, s.zeroed_at);
	bc_cache_stats_since(&s, &base, &since);
	ck_assert_uint_eq(since.hits, 0);
	ck_assert_uint_eq(since.requests, 0);
	ck_assert_uint_eq(since.uncacheable, 0);
	ck_assert_uint_eq(since.reasons[0].value, 0);
	ck_assert_uint_eq(since.entries, 1);
	ck_assert_int_eq(since.zeroed_at, base.zeroed_at);
	/* what comes after the zero is counted from it; the baseline also
	 * outlives a reopen */
	ck_assert_int_eq(bc_cache_count(c, "hits", 4), BC_OK);
	ck_assert_int_eq(bc_cache_count(c, "uncacheable:no-identity", 1),
	    BC_OK);
	bc_cache_close(c);
	c = ct_open(0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_int_eq(bc_cache_baseline(c, &base, err), BC_OK);
	bc_cache_stats_since(&s, &base, &since);
	ck_assert_uint_eq(s.hits, 5);
	ck_assert_uint_eq(since.hits, 4);
	ck_assert_uint_eq(since.uncacheable, 1);
	ck_assert_uint_eq(since.nreasons, 2);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* bc_cache_stats_since alone: counter by counter, never below 0, reasons
 * matched by name, the index totals from total, zeroed_at from base. */
START_TEST(test_stats_since)
{
	struct bc_cache_stats t, b, o;

	memset(&t, 0, sizeof(t));
	memset(&b, 0, sizeof(b));
	t.requests = 10;
	b.requests = 4;
	t.hits = 3;
	b.hits = 7;		/* a baseline above the total: 0, not a wrap */
	t.time_saved_ms = 900;
	b.time_saved_ms = 100;
	t.hits_other_checkout = 2;
	t.entries = 5;
	b.entries = 99;
	t.stored_bytes = 1234;
	t.max_bytes = 4096;
	t.limit_set = 1;
	t.oldest_used = 17;
	t.zeroed_at = 1;
	b.zeroed_at = 1700000000;
	t.nreasons = 2;
	snprintf(t.reasons[0].name, sizeof(t.reasons[0].name), "a");
	t.reasons[0].value = 5;
	snprintf(t.reasons[1].name, sizeof(t.reasons[1].name), "b");
	t.reasons[1].value = 8;
	t.uncacheable = 13;
	b.nreasons = 1;
	snprintf(b.reasons[0].name, sizeof(b.reasons[0].name), "b");
	b.reasons[0].value = 6;
	b.uncacheable = 6;
	bc_cache_stats_since(&t, &b, &o);
	ck_assert_uint_eq(o.requests, 6);
	ck_assert_uint_eq(o.hits, 0);
	ck_assert_uint_eq(o.time_saved_ms, 800);
	ck_assert_uint_eq(o.hits_other_checkout, 2);
	ck_assert_uint_eq(o.entries, 5);
	ck_assert_uint_eq(o.stored_bytes, 1234);
	ck_assert_uint_eq(o.max_bytes, 4096);
	ck_assert_int_eq(o.limit_set, 1);
	ck_assert_int_eq(o.oldest_used, 17);
	ck_assert_int_eq(o.zeroed_at, 1700000000);
	ck_assert_uint_eq(o.nreasons, 2);
	ck_assert_uint_eq(o.reasons[0].value, 5);
	ck_assert_uint_eq(o.reasons[1].value, 2);
	ck_assert_uint_eq(o.uncacheable, 7);
}
END_TEST

/* More uncacheable reasons than the stats hold: the first
 * BC_CACHE_MAX_REASONS by name are listed, the sum counts them all;
 * unknown names that are not reasons are ignored. */
START_TEST(test_counters_many_reasons)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_stats s;
	char name[64], err[BC_ERRLEN];
	int i;

	for (i = 0; i < BC_CACHE_MAX_REASONS + 4; i++) {
		snprintf(name, sizeof(name), "uncacheable:r%02d", i);
		ck_assert_int_eq(bc_cache_count(c, name, i + 1), BC_OK);
	}
	ck_assert_int_eq(bc_cache_count(c, "something-else", 5), BC_OK);
	ck_assert_int_eq(bc_cache_count(c, "hits", -3), BC_OK);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.nreasons, BC_CACHE_MAX_REASONS);
	ck_assert_str_eq(s.reasons[0].name, "r00");
	ck_assert_str_eq(s.reasons[BC_CACHE_MAX_REASONS - 1].name, "r15");
	ck_assert_uint_eq(s.uncacheable,
	    (BC_CACHE_MAX_REASONS + 4) * (BC_CACHE_MAX_REASONS + 5) / 2);
	ck_assert_uint_eq(s.hits, 0);	/* a negative total reads as 0 */
	bc_cache_close(c);
}
END_TEST

static Suite *
counters_suite(void)
{
	Suite *s = suite_create("counters");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.2 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_counters_persist_zero);
	tcase_add_test(tc, test_stats_since);
	tcase_add_test(tc, test_counters_many_reasons);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(counters_suite());
}
