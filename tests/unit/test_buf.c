/*
 * test_buf.c - unit tests of the bounds-checked byte buffer.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "tests/unit/unit.h"

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

START_TEST(test_room_max)
{
	struct bc_buf b, v;

	bc_buf_init(&b, 10);
	ck_assert_uint_eq(bc_buf_max(&b), 10);
	ck_assert_uint_eq(bc_buf_room(&b), 10);
	ck_assert_int_eq(bc_buf_put_str(&b, "abcd"), BC_OK);
	ck_assert_uint_eq(bc_buf_room(&b), 6);
	/* consuming does not make room; compacting does (below) */
	ck_assert_int_eq(bc_buf_skip(&b, 4), BC_OK);
	ck_assert_uint_eq(bc_buf_room(&b), 6);
	/* the maximum can be raised, and lowered down to the length */
	ck_assert_int_eq(bc_buf_set_max(&b, 3), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_max(&b), 10);
	ck_assert_int_eq(bc_buf_set_max(&b, 4), BC_OK);
	ck_assert_uint_eq(bc_buf_room(&b), 0);
	ck_assert_int_eq(bc_buf_put_u8(&b, 'x'), BC_ERR_LIMIT);
	ck_assert_int_eq(bc_buf_set_max(&b, 100), BC_OK);
	ck_assert_uint_eq(bc_buf_room(&b), 96);
	ck_assert_int_eq(bc_buf_set_max(&b, SIZE_MAX), BC_OK);
	ck_assert_uint_eq(bc_buf_max(&b), BC_BUF_CEILING);
	bc_buf_free(&b);

	/* a max above the ceiling given by the initializer counts as the
	 * ceiling */
	{
		struct bc_buf big = BC_BUF_INIT(SIZE_MAX);

		ck_assert_uint_eq(bc_buf_max(&big), BC_BUF_CEILING);
		ck_assert_uint_eq(bc_buf_room(&big), BC_BUF_CEILING);
	}

	/* a view has no room and its maximum is fixed */
	bc_buf_view(&v, "abc", 3);
	ck_assert_uint_eq(bc_buf_max(&v), 3);
	ck_assert_uint_eq(bc_buf_room(&v), 0);
	ck_assert_int_eq(bc_buf_set_max(&v, 10), BC_ERR_INVAL);
	ck_assert_uint_eq(bc_buf_max(&v), 3);
}
END_TEST

START_TEST(test_truncate)
{
	struct bc_buf b, v;
	size_t cap;

	bc_buf_init(&b, 100);
	ck_assert_int_eq(bc_buf_put_str(&b, "head"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&b, "+failed"), BC_OK);
	cap = b.cap;
	/* an encoder's rollback: back to the length before it */
	bc_buf_truncate(&b, 4);
	ck_assert_uint_eq(bc_buf_len(&b), 4);
	ck_assert_uint_eq(bc_buf_avail(&b), 4);
	ck_assert_uint_eq(b.cap, cap);	/* storage kept */
	ck_assert_int_eq(bc_buf_put_str(&b, "!"), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "head!", 5), 0);
	/* at or past the length: nothing changes */
	bc_buf_truncate(&b, 5);
	bc_buf_truncate(&b, SIZE_MAX);
	ck_assert_uint_eq(bc_buf_len(&b), 5);
	/* a cursor past the new length comes back to it */
	ck_assert_int_eq(bc_buf_skip(&b, 4), BC_OK);
	bc_buf_truncate(&b, 2);
	ck_assert_uint_eq(bc_buf_len(&b), 2);
	ck_assert_uint_eq(bc_buf_tell(&b), 2);
	ck_assert_uint_eq(bc_buf_avail(&b), 0);
	bc_buf_truncate(&b, 0);
	ck_assert_uint_eq(bc_buf_len(&b), 0);
	bc_buf_free(&b);

	/* a view gets shorter; its bytes are not touched */
	bc_buf_view(&v, "abcdef", 6);
	bc_buf_truncate(&v, 3);
	ck_assert_uint_eq(bc_buf_avail(&v), 3);
	ck_assert_int_eq(bc_buf_skip(&v, 4), BC_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_patch)
{
	struct bc_buf b, v;

	bc_buf_init(&b, 100);
	ck_assert_int_eq(bc_buf_put_str(&b, "abcdef"), BC_OK);
	ck_assert_int_eq(bc_buf_skip(&b, 3), BC_OK);
	/* offsets count from the start, whatever the cursor */
	ck_assert_int_eq(bc_buf_patch(&b, 1, "XY", 2), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "aXYdef", 6), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 3);
	ck_assert_int_eq(bc_buf_patch(&b, 4, "ZZ", 2), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "aXYdZZ", 6), 0);
	/* never past the length, never wrapping */
	ck_assert_int_eq(bc_buf_patch(&b, 5, "zz", 2), BC_ERR_INVAL);
	ck_assert_int_eq(bc_buf_patch(&b, 7, "", 0), BC_ERR_INVAL);
	ck_assert_int_eq(bc_buf_patch(&b, SIZE_MAX, "z", 1), BC_ERR_INVAL);
	ck_assert_int_eq(bc_buf_patch(&b, 1, "z", SIZE_MAX), BC_ERR_INVAL);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "aXYdZZ", 6), 0);
	ck_assert_int_eq(bc_buf_patch(&b, 6, "", 0), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 6);
	/* from its own bytes, overlapping */
	ck_assert_int_eq(bc_buf_patch(&b, 0, bc_buf_data(&b) + 2, 4), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "YdZZZZ", 6), 0);
	bc_buf_free(&b);

	/* a view is read-only */
	bc_buf_view(&v, "abc", 3);
	ck_assert_int_eq(bc_buf_patch(&v, 0, "x", 1), BC_ERR_INVAL);
}
END_TEST

START_TEST(test_compact)
{
	static const char text[] = "0123456789";
	struct bc_buf b, v;

	bc_buf_init(&b, 10);
	ck_assert_int_eq(bc_buf_put(&b, text, 10), BC_OK);
	bc_buf_compact(&b);		/* nothing consumed: no change */
	ck_assert_uint_eq(bc_buf_len(&b), 10);
	ck_assert_int_eq(bc_buf_skip(&b, 7), BC_OK);
	ck_assert_uint_eq(bc_buf_room(&b), 0);
	bc_buf_compact(&b);
	ck_assert_uint_eq(bc_buf_len(&b), 3);
	ck_assert_uint_eq(bc_buf_tell(&b), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 3);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "789", 3), 0);
	ck_assert_uint_eq(bc_buf_room(&b), 7);
	ck_assert_int_eq(bc_buf_put(&b, text, 7), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_ptr(&b), "7890123456", 10), 0);
	/* all consumed: empty */
	ck_assert_int_eq(bc_buf_skip(&b, 10), BC_OK);
	bc_buf_compact(&b);
	ck_assert_uint_eq(bc_buf_len(&b), 0);
	ck_assert_uint_eq(bc_buf_room(&b), 10);
	bc_buf_free(&b);

	/* a view starts at its cursor */
	bc_buf_view(&v, text, 10);
	ck_assert_int_eq(bc_buf_skip(&v, 4), BC_OK);
	bc_buf_compact(&v);
	ck_assert_uint_eq(bc_buf_len(&v), 6);
	ck_assert_uint_eq(bc_buf_tell(&v), 0);
	ck_assert_ptr_eq(bc_buf_data(&v), (const uint8_t *)text + 4);
	ck_assert_uint_eq(bc_buf_room(&v), 0);
}
END_TEST

START_TEST(test_get_until)
{
	struct bc_buf b, line;
	char *s;

	bc_buf_view(&b, "ab\n\ncd", 6);
	ck_assert_int_eq(bc_buf_get_until(&b, '\n', &line), BC_OK);
	ck_assert_int_eq(bc_buf_dup_cstr(&line, &s), BC_OK);
	ck_assert_str_eq(s, "ab");
	free(s);
	ck_assert_uint_eq(bc_buf_tell(&b), 3);	/* the delimiter is taken */
	ck_assert_int_eq(bc_buf_get_until(&b, '\n', &line), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&line), 0);	/* an empty line */
	/* no delimiter left: nothing consumed, an empty view */
	ck_assert_int_eq(bc_buf_get_until(&b, '\n', &line), BC_ERR_TRUNCATED);
	ck_assert_uint_eq(bc_buf_avail(&line), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 2);
	ck_assert_int_eq(bc_buf_get_until(&b, 'd', &line), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&line), 1);
	ck_assert_int_eq(*bc_buf_ptr(&line), 'c');
	ck_assert_uint_eq(bc_buf_avail(&b), 0);
	ck_assert_int_eq(bc_buf_get_until(&b, 'd', &line), BC_ERR_TRUNCATED);
	/* a view cannot reach past its own end for a delimiter */
	bc_buf_view(&b, "abc", 2);
	ck_assert_int_eq(bc_buf_get_until(&b, 'c', &line), BC_ERR_TRUNCATED);
	bc_buf_view(&b, NULL, 0);
	ck_assert_int_eq(bc_buf_get_until(&b, 0, &line), BC_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_at_tell_rewind)
{
	struct bc_buf b;
	uint32_t v;
	size_t mark;

	bc_buf_view(&b, "\xff" "bcdefgh", 8);
	ck_assert_int_eq(bc_buf_at(&b, 0), 0xff);	/* never negative */
	ck_assert_int_eq(bc_buf_at(&b, 7), 'h');
	ck_assert_int_eq(bc_buf_at(&b, 8), -1);
	ck_assert_int_eq(bc_buf_at(&b, SIZE_MAX), -1);
	ck_assert_uint_eq(bc_buf_tell(&b), 0);
	ck_assert_int_eq(bc_buf_skip(&b, 1), BC_OK);
	ck_assert_int_eq(bc_buf_at(&b, 0), 'b');
	ck_assert_int_eq(bc_buf_at(&b, 7), -1);
	/* a header read, its body not there yet: un-read the header */
	mark = bc_buf_tell(&b);
	ck_assert_uint_eq(mark, 1);
	ck_assert_int_eq(bc_buf_get_u32be(&b, &v), BC_OK);
	ck_assert_int_eq(bc_buf_skip(&b, 4), BC_ERR_TRUNCATED);
	bc_buf_rewind(&b, mark);
	ck_assert_uint_eq(bc_buf_avail(&b), 7);
	ck_assert_int_eq(bc_buf_at(&b, 0), 'b');
	bc_buf_rewind(&b, mark);		/* to where it is: fine */
	bc_buf_rewind(&b, 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 8);
}
END_TEST

/* A mark ahead of the cursor is a bug: it aborts, never reads on. */
START_TEST(test_rewind_forward_aborts)
{
	struct bc_buf b;

	bc_buf_view(&b, "abc", 3);
	bc_buf_rewind(&b, 1);
}
END_TEST

/*
 * Random operations over views of every length up to 63 never consume
 * past the end: a failed one consumes nothing.  Bounded by its counts
 * (2000 buffers x 20 steps); the outcome of each step is checked with a
 * plain comparison and reported once, since every passing ck_assert is a
 * write to check's pipe, which on a busy machine under ASan cost more
 * than the test's own work.
 */
#define RANDOM_BUFS	2000
#define RANDOM_STEPS	20

START_TEST(test_random_gets)
{
	uint8_t data[64], tmp[16];
	struct bc_buf b, v;
	unsigned seed = 12345;
	int iter, step, bad_iter = -1, bad_step = -1;
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 37 % 11 == 0 ? '\n' : 'a' + i % 26);
	for (iter = 0; iter < RANDOM_BUFS && bad_iter < 0; iter++) {
		size_t n = (size_t)(iter % 64);

		bc_buf_view(&b, data, n);
		for (step = 0; step < RANDOM_STEPS; step++) {
			size_t before = bc_buf_avail(&b);
			size_t want, mark;
			const uint8_t *nl;
			int r, op, ok;

			seed = seed * 1103515245u + 12345u;
			op = (int)((seed >> 16) % 6);
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
			case 3: {
				uint32_t x;

				want = 4;
				r = bc_buf_get_u32be(&b, &x);
				break;
			}
			case 4:
				/* a line: up to and with the next '\n' */
				nl = before > 0 ? memchr(bc_buf_ptr(&b), '\n',
				    before) : NULL;
				want = nl != NULL ? (size_t)(nl -
				    bc_buf_ptr(&b)) + 1 : before + 1;
				r = bc_buf_get_until(&b, '\n', &v);
				if (r == BC_OK && bc_buf_avail(&v) != want - 1)
					r = BC_ERR_INTERNAL;
				break;
			default:
				/* look ahead, take, give back */
				mark = bc_buf_tell(&b);
				r = (bc_buf_at(&b, want) >= 0) ==
				    (want < before) ? BC_OK : BC_ERR_INTERNAL;
				if (r == BC_OK && bc_buf_skip(&b, want) ==
				    BC_OK)
					bc_buf_rewind(&b, mark);
				want = 0;
				break;
			}
			if (want <= before)
				ok = r == BC_OK &&
				    bc_buf_avail(&b) == before - want;
			else
				ok = r == BC_ERR_TRUNCATED &&
				    bc_buf_avail(&b) == before;
			if (!ok) {
				bad_iter = iter;
				bad_step = step;
				break;
			}
		}
	}
	ck_assert_msg(bad_iter < 0, "buffer %d, step %d: a get consumed "
	    "the wrong bytes", bad_iter, bad_step);
}
END_TEST

static Suite *
buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(tc, test_put_get_roundtrip);
	tcase_add_test(tc, test_no_consume_on_failure);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_reserve_commit_growth);
	tcase_add_test(tc, test_views);
	tcase_add_test(tc, test_putf);
	tcase_add_test(tc, test_reset_move);
	tcase_add_test(tc, test_room_max);
	tcase_add_test(tc, test_truncate);
	tcase_add_test(tc, test_patch);
	tcase_add_test(tc, test_compact);
	tcase_add_test(tc, test_get_until);
	tcase_add_test(tc, test_at_tell_rewind);
	tcase_add_test_raise_signal(tc, test_rewind_forward_aborts, SIGABRT);
	tcase_add_test(tc, test_random_gets);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(buf_suite());
}
