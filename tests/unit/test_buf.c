/*
 * test_buf.c - unit tests of the bounds-checked byte buffer.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"

START_TEST(test_put_get_roundtrip)
{
	struct bc_buf b;
	uint8_t u8, raw[3];
	uint32_t u32;
	uint64_t u64;

	bc_buf_init(&b, 1024);
	ck_assert_int_eq(bc_buf_put_u8(&b, 0xab), BC_OK);
	ck_assert_int_eq(bc_buf_put_u32be(&b, 0x01020304), BC_OK);
	ck_assert_int_eq(bc_buf_put_u64be(&b, 0x1122334455667788ULL), BC_OK);
	ck_assert_int_eq(bc_buf_put(&b, "xyz", 3), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 1 + 4 + 8 + 3);
	ck_assert_int_eq(memcmp(bc_buf_data(&b) + 1, "\x01\x02\x03\x04", 4), 0);
	ck_assert_int_eq(memcmp(bc_buf_data(&b) + 5,
	    "\x11\x22\x33\x44\x55\x66\x77\x88", 8), 0);

	ck_assert_int_eq(bc_buf_get_u8(&b, &u8), BC_OK);
	ck_assert_uint_eq(u8, 0xab);
	ck_assert_int_eq(bc_buf_get_u32be(&b, &u32), BC_OK);
	ck_assert_uint_eq(u32, 0x01020304);
	ck_assert_int_eq(bc_buf_get_u64be(&b, &u64), BC_OK);
	ck_assert(u64 == 0x1122334455667788ULL);
	ck_assert_int_eq(bc_buf_get(&b, raw, 3), BC_OK);
	ck_assert_int_eq(memcmp(raw, "xyz", 3), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 0);
	ck_assert_int_eq(bc_buf_get_u8(&b, &u8), BC_ERR_TRUNCATED);
	bc_buf_free(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.max, 1024);
}
END_TEST

START_TEST(test_no_consume_on_failure)
{
	struct bc_buf b = BC_BUF_INIT(64);
	uint32_t u32 = 7;
	uint64_t u64 = 7;
	uint8_t out[8];
	const uint8_t *p;
	struct bc_buf v;

	ck_assert_int_eq(bc_buf_put(&b, "abc", 3), BC_OK);
	ck_assert_int_eq(bc_buf_get_u32be(&b, &u32), BC_ERR_TRUNCATED);
	ck_assert_uint_eq(u32, 7);
	ck_assert_int_eq(bc_buf_get_u64be(&b, &u64), BC_ERR_TRUNCATED);
	ck_assert_int_eq(bc_buf_get(&b, out, 4), BC_ERR_TRUNCATED);
	ck_assert_int_eq(bc_buf_skip(&b, 4), BC_ERR_TRUNCATED);
	ck_assert_int_eq(bc_buf_peek(&b, 4, &p), BC_ERR_TRUNCATED);
	ck_assert_int_eq(bc_buf_get_view(&b, 4, &v), BC_ERR_TRUNCATED);
	ck_assert_uint_eq(bc_buf_avail(&b), 3);
	ck_assert_int_eq(bc_buf_peek(&b, 3, &p), BC_OK);
	ck_assert_int_eq(memcmp(p, "abc", 3), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 3);	/* peek does not consume */
	ck_assert_int_eq(bc_buf_skip(&b, 1), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&b), 2);
	ck_assert_int_eq(*bc_buf_ptr(&b), 'b');
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_limits)
{
	struct bc_buf b;
	uint8_t *w;

	bc_buf_init(&b, 10);
	ck_assert_int_eq(bc_buf_put(&b, "0123456789", 10), BC_OK);
	/* A failed append leaves the buffer unchanged. */
	ck_assert_int_eq(bc_buf_put_u8(&b, 'x'), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&b), 10);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "0123456789", 10), 0);
	ck_assert_int_eq(bc_buf_reserve(&b, 1, &w), BC_ERR_LIMIT);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(bc_buf_put(&b, NULL, 0), BC_OK);
	/* Huge sizes must not wrap around. */
	ck_assert_int_eq(bc_buf_reserve(&b, SIZE_MAX, &w), BC_ERR_LIMIT);
	ck_assert_int_eq(bc_buf_reserve(&b, SIZE_MAX - 5, &w), BC_ERR_LIMIT);
	bc_buf_free(&b);

	/* max is clamped to the global ceiling. */
	bc_buf_init(&b, SIZE_MAX);
	ck_assert_uint_eq(b.max, BC_BUF_CEILING);
	ck_assert_int_eq(bc_buf_reserve(&b, BC_BUF_CEILING + 1, &w),
	    BC_ERR_LIMIT);
	ck_assert_uint_eq(b.cap, 0);	/* nothing allocated for a failure */
	bc_buf_free(&b);

	/* A zero-max buffer accepts nothing but empty appends. */
	bc_buf_init(&b, 0);
	ck_assert_int_eq(bc_buf_put(&b, "", 0), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&b, 1), BC_ERR_LIMIT);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_reserve_commit_growth)
{
	struct bc_buf b;
	uint8_t *w;
	size_t i;

	bc_buf_init(&b, 1 << 20);
	for (i = 0; i < 5000; i++) {
		ck_assert_int_eq(bc_buf_reserve(&b, 100, &w), BC_OK);
		w[0] = (uint8_t)i;
		w[1] = (uint8_t)(i >> 8);
		ck_assert_int_eq(bc_buf_commit(&b, 2), BC_OK);
	}
	ck_assert_uint_eq(bc_buf_len(&b), 10000);
	ck_assert_uint_le(b.cap, 1 << 20);
	for (i = 0; i < 5000; i++) {
		ck_assert_uint_eq(bc_buf_data(&b)[2 * i], (uint8_t)i);
		ck_assert_uint_eq(bc_buf_data(&b)[2 * i + 1],
		    (uint8_t)(i >> 8));
	}
	/* Growth never allocates beyond max. */
	bc_buf_free(&b);
	bc_buf_init(&b, 300);
	ck_assert_int_eq(bc_buf_reserve(&b, 299, &w), BC_OK);
	ck_assert_int_eq(bc_buf_commit(&b, 299), BC_OK);
	ck_assert_int_eq(bc_buf_reserve(&b, 1, &w), BC_OK);
	ck_assert_uint_le(b.cap, 300);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_views)
{
	static const char text[] = "hello world";
	struct bc_buf v, sub;
	uint8_t c;
	char *s;

	bc_buf_view(&v, text, 11);
	ck_assert_uint_eq(bc_buf_avail(&v), 11);
	ck_assert_ptr_eq(bc_buf_ptr(&v), (const uint8_t *)text);
	/* Views are read-only: appends are refused. */
	ck_assert_int_ne(bc_buf_put_u8(&v, 'x'), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&v), 11);

	ck_assert_int_eq(bc_buf_get_view(&v, 5, &sub), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&sub), 5);
	ck_assert_ptr_eq(bc_buf_ptr(&sub), (const uint8_t *)text);
	ck_assert_int_eq(bc_buf_dup_cstr(&sub, &s), BC_OK);
	ck_assert_str_eq(s, "hello");
	free(s);
	ck_assert_int_eq(bc_buf_get_u8(&v, &c), BC_OK);
	ck_assert_int_eq(c, ' ');
	ck_assert_int_eq(bc_buf_dup_cstr(&v, &s), BC_OK);
	ck_assert_str_eq(s, "world");
	free(s);
	/* A sub-view cannot read past its own end. */
	ck_assert_int_eq(bc_buf_skip(&sub, 6), BC_ERR_TRUNCATED);
	bc_buf_free(&sub);	/* frees nothing */
	bc_buf_free(&v);

	/* dup_cstr refuses embedded NULs. */
	bc_buf_view(&v, "a\0b", 3);
	s = (char *)1;
	ck_assert_int_eq(bc_buf_dup_cstr(&v, &s), BC_ERR_INVAL);
	ck_assert_ptr_null(s);
	/* Empty view. */
	bc_buf_view(&v, NULL, 0);
	ck_assert_uint_eq(bc_buf_avail(&v), 0);
	ck_assert_int_eq(bc_buf_dup_cstr(&v, &s), BC_OK);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_putf)
{
	struct bc_buf b;
	char big[1000];
	int i;

	bc_buf_init(&b, 4096);
	ck_assert_int_eq(bc_buf_putf(&b, "%s=%d;", "x", 42), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&b, "tail"), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 9);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "x=42;tail", 9), 0);
	/* Longer than the internal stack buffer. */
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(bc_buf_putf(&b, "<%s>", big), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 9 + 1001);
	ck_assert_int_eq(bc_buf_data(&b)[9], '<');
	for (i = 0; i < 999; i++)
		ck_assert_int_eq(bc_buf_data(&b)[10 + i], 'q');
	ck_assert_int_eq(bc_buf_data(&b)[1009], '>');
	bc_buf_free(&b);

	/* Over the limit: error, nothing appended (not even partially). */
	bc_buf_init(&b, 8);
	ck_assert_int_eq(bc_buf_putf(&b, "%s", "12345"), BC_OK);
	ck_assert_int_eq(bc_buf_putf(&b, "%s", "6789"), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&b), 5);
	ck_assert_int_eq(bc_buf_putf(&b, "%s", big), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&b), 5);
	/* Exactly filling max works (NUL not counted). */
	ck_assert_int_eq(bc_buf_putf(&b, "%d", 678), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 8);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_reset_move)
{
	struct bc_buf a, b;

	bc_buf_init(&a, 100);
	bc_buf_init(&b, 100);
	ck_assert_int_eq(bc_buf_put_str(&a, "abcdef"), BC_OK);
	ck_assert_int_eq(bc_buf_skip(&a, 2), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&b, "old"), BC_OK);
	bc_buf_move(&b, &a);
	ck_assert_uint_eq(bc_buf_len(&a), 0);
	ck_assert_ptr_null(a.data);
	ck_assert_uint_eq(bc_buf_avail(&b), 4);
	ck_assert_int_eq(memcmp(bc_buf_ptr(&b), "cdef", 4), 0);
	bc_buf_reset(&b);
	ck_assert_uint_eq(bc_buf_len(&b), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 0);
	ck_assert_int_eq(bc_buf_put_str(&b, "again"), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "again", 5), 0);
	/* src remains usable after a move. */
	ck_assert_int_eq(bc_buf_put_str(&a, "new"), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&a), 3);
	bc_buf_free(&a);
	bc_buf_free(&b);
}
END_TEST

/* Random get sequences over a random buffer never consume past the end. */
START_TEST(test_random_gets)
{
	uint8_t data[64], tmp[16];
	struct bc_buf b, v;
	unsigned seed = 12345;
	int iter, step;

	for (iter = 0; iter < 2000; iter++) {
		size_t n = (size_t)(iter % 64);

		bc_buf_view(&b, data, n);
		for (step = 0; step < 20; step++) {
			size_t before = bc_buf_avail(&b);
			size_t want;
			int r, op;

			seed = seed * 1103515245u + 12345u;
			op = (int)((seed >> 16) % 4);
			want = (size_t)((seed >> 8) % 17);
			switch (op) {
			case 0:
				r = bc_buf_get(&b, tmp, want);
				break;
			case 1:
				r = bc_buf_skip(&b, want);
				break;
			case 2:
				r = bc_buf_get_view(&b, want, &v);
				break;
			default: {
				uint32_t x;

				want = 4;
				r = bc_buf_get_u32be(&b, &x);
				break;
			}
			}
			if (want <= before) {
				ck_assert_int_eq(r, BC_OK);
				ck_assert_uint_eq(bc_buf_avail(&b),
				    before - want);
			} else {
				ck_assert_int_eq(r, BC_ERR_TRUNCATED);
				ck_assert_uint_eq(bc_buf_avail(&b), before);
			}
		}
	}
}
END_TEST

static Suite *
buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_put_get_roundtrip);
	tcase_add_test(tc, test_no_consume_on_failure);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_reserve_commit_growth);
	tcase_add_test(tc, test_views);
	tcase_add_test(tc, test_putf);
	tcase_add_test(tc, test_reset_move);
	tcase_add_test(tc, test_random_gets);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(buf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
