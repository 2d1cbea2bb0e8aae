/*
 * test_hitcache.c - unit tests of the client's local tier of the artifact
 * cache (client/hitcache.c): keys, round trip, damaged entries never
 * served, the size bound.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/hitcache.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/proto.h"
#include "common/util.h"
#include "tests/unit/unit.h"

static const char key1[] = "1111111111111111111111111111111111111111111111111111111111111111";

static void
fill(struct bc_reply *rep, size_t objlen, int seed)
{
	size_t i;

	bc_reply_init(rep);
	for (i = 0; i < objlen; i++)
		ck_assert_int_eq(bc_buf_put_u8(&rep->doto,
		    (uint8_t)(i * 31 + (size_t)seed)), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&rep->serr, "a.c:1: warning: w\n"),
	    BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&rep->dotd, "a.o: a.c a.h\n"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&rep->dia, "DIAG...."), BC_OK);
}

static int
same(const struct bc_buf *a, const struct bc_buf *b)
{
	return bc_buf_len(a) == bc_buf_len(b) && (bc_buf_len(a) == 0 ||
	    memcmp(bc_buf_data(a), bc_buf_data(b), bc_buf_len(a)) == 0);
}

static struct bc_strv
argv_of(const char *a, const char *b)
{
	struct bc_strv v = BC_STRV_INIT;

	bc_strv_push(&v, "gcc");
	bc_strv_push(&v, a);
	bc_strv_push(&v, b);
	return v;
}

/* The local key splits by farm key, directory and command. */
START_TEST(test_key)
{
	char k1[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1];
	struct bc_strv a = argv_of("-c", "x.c"), b = argv_of("-c", "y.c");
	struct bc_strv c = argv_of("-cx.c", "");

	bc_hitcache_key(key1, "/w", &a, k1);
	ck_assert(bc_hash_is_hex(k1));
	bc_hitcache_key(key1, "/w", &a, k2);
	ck_assert_str_eq(k1, k2);
	bc_hitcache_key(key1, "/v", &a, k2);
	ck_assert_str_ne(k1, k2);
	bc_hitcache_key(key1, "/w", &b, k2);
	ck_assert_str_ne(k1, k2);
	bc_hitcache_key("2222222222222222222222222222222222222222222222222222"
	    "222222222222", "/w", &a, k2);
	ck_assert_str_ne(k1, k2);
	/* words cannot run together */
	bc_hitcache_key(key1, "/w", &c, k2);
	ck_assert_str_ne(k1, k2);
	/* where the outputs go does not split it */
	bc_hitcache_key(key1, "/w", &a, k1);
	bc_strv_push(&a, "-o");
	bc_strv_push(&a, "/out/x.o");
	bc_strv_push(&a, "-MFx.d");
	bc_strv_push(&a, "--serialize-diagnostics");
	bc_strv_push(&a, "x.dia");
	bc_hitcache_key(key1, "/w", &a, k2);
	ck_assert_str_eq(k1, k2);
	bc_strv_push(&a, "-DX");
	bc_hitcache_key(key1, "/w", &a, k2);
	ck_assert_str_ne(k1, k2);
	bc_strv_free(&a);
	bc_strv_free(&b);
	bc_strv_free(&c);
}
END_TEST

/* Stored outputs come back byte for byte; a missing entry is a miss. */
START_TEST(test_roundtrip)
{
	struct bc_reply in, out;
	char *dir, err[BC_ERRLEN], lk[BC_HASH_HEXLEN + 1];
	struct bc_strv a = argv_of("-c", "x.c");

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "hitcache_", &dir, NULL),
	    BC_OK);
	bc_hitcache_key(key1, dir, &a, lk);
	bc_reply_init(&out);
	ck_assert_int_eq(bc_hitcache_get(dir, lk, &out, err), BC_ERR_NOENT);
	bc_reply_free(&out);
	fill(&in, 5000, 1);
	ck_assert_int_eq(bc_hitcache_put(dir, (uint64_t)1 << 30, lk, &in,
	    err), BC_OK);
	bc_reply_init(&out);
	out.status = 7;
	ck_assert_int_eq(bc_hitcache_get(dir, lk, &out, err), BC_OK);
	ck_assert_uint_eq(out.status, 0);
	ck_assert(same(&in.doto, &out.doto));
	ck_assert(same(&in.serr, &out.serr));
	ck_assert(same(&in.sout, &out.sout));
	ck_assert(same(&in.dotd, &out.dotd));
	ck_assert(same(&in.dia, &out.dia));
	bc_reply_free(&out);
	/* a failed compile is never stored */
	in.status = 256;
	ck_assert_int_ne(bc_hitcache_put(dir, (uint64_t)1 << 30, lk, &in, err),
	    BC_OK);
	bc_reply_free(&in);
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(dir);
	bc_strv_free(&a);
}
END_TEST

/* Every bit flip and truncation of an entry is found out: the entry is
 * removed and nothing is served. */
START_TEST(test_damaged)
{
	struct bc_reply in, out;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char *dir, *path, err[BC_ERRLEN], lk[BC_HASH_HEXLEN + 1];
	struct bc_strv a = argv_of("-c", "x.c");
	size_t n, i;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "hitcache_", &dir, NULL),
	    BC_OK);
	bc_hitcache_key(key1, dir, &a, lk);
	fill(&in, 300, 2);
	ck_assert_int_eq(bc_hitcache_put(dir, (uint64_t)1 << 30, lk, &in,
	    err), BC_OK);
	path = xasprintf("%s/%.2s/%s", dir, lk, lk);
	ck_assert_int_eq(bc_read_file(path, BC_BUF_CEILING, &blob, err), BC_OK);
	n = bc_buf_len(&blob);
	for (i = 0; i < n; i += (i < 200 ? 1 : 7)) {
		uint8_t *m = xmalloc(n);

		memcpy(m, bc_buf_data(&blob), n);
		m[i] ^= (uint8_t)(1u << (i % 8));
		ck_assert_int_eq(bc_write_file_atomic(path, m, n, 0600, err),
		    BC_OK);
		bc_reply_init(&out);
		ck_assert_int_eq(bc_hitcache_get(dir, lk, &out, err),
		    BC_ERR_CORRUPT);
		bc_reply_free(&out);
		ck_assert_int_ne(access(path, F_OK), 0);	/* removed */
		/* truncated */
		ck_assert_int_eq(bc_write_file_atomic(path, m, i, 0600, err),
		    BC_OK);
		bc_reply_init(&out);
		ck_assert_int_eq(bc_hitcache_get(dir, lk, &out, err),
		    BC_ERR_CORRUPT);
		bc_reply_free(&out);
		free(m);
	}
	bc_reply_free(&in);
	bc_buf_free(&blob);
	free(path);
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(dir);
	bc_strv_free(&a);
}
END_TEST

/* Past the size limit the oldest entries go until 80% is left; the most
 * recently used one stays. */
START_TEST(test_trim)
{
	struct bc_reply in, out;
	char *dir, err[BC_ERRLEN], lk[20][BC_HASH_HEXLEN + 1], num[16];
	uint64_t left;
	struct timespec ts[2];
	int i, kept = 0;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "hitcache_", &dir, NULL),
	    BC_OK);
	for (i = 0; i < 20; i++) {
		struct bc_strv a;
		char *p;

		snprintf(num, sizeof(num), "f%d.c", i);
		a = argv_of("-c", num);
		bc_hitcache_key(key1, dir, &a, lk[i]);
		bc_strv_free(&a);
		fill(&in, 20000, i);	/* random-ish: ~20 KB each */
		ck_assert_int_eq(bc_hitcache_put(dir, (uint64_t)1 << 30,
		    lk[i], &in, err), BC_OK);
		bc_reply_free(&in);
		/* entry i is i seconds old... but entry 0 was just used */
		p = xasprintf("%s/%.2s/%s", dir, lk[i], lk[i]);
		ts[0].tv_sec = ts[1].tv_sec = time(NULL) - 100 + i;
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
		if (i == 0)
			ts[0].tv_sec = ts[1].tv_sec = time(NULL) + 10;
		ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
		free(p);
	}
	ck_assert_int_eq(bc_hitcache_trim(dir, (uint64_t)1 << 30, &left, err),
	    BC_OK);
	ck_assert_uint_gt(left, 0);
	/* a limit of half what is there: down to 80% of it */
	ck_assert_int_eq(bc_hitcache_trim(dir, left / 2, &left, err), BC_OK);
	for (i = 0; i < 20; i++) {
		bc_reply_init(&out);
		if (bc_hitcache_get(dir, lk[i], &out, err) == BC_OK) {
			kept++;
			ck_assert(i == 0 || i >= 10);	/* the newest */
		}
		bc_reply_free(&out);
	}
	ck_assert_int_gt(kept, 0);
	ck_assert_int_lt(kept, 20);
	bc_reply_init(&out);
	ck_assert_int_eq(bc_hitcache_get(dir, lk[0], &out, err), BC_OK);
	bc_reply_free(&out);
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(dir);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("hitcache");
	TCase *tc = bc_tcase("hitcache", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(tc, test_key);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_damaged);
	tcase_add_test(tc, test_trim);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(suite());
}
