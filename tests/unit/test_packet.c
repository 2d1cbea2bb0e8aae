/*
 * test_packet.c - one packet at a time (common/packet.c): int, string
 * and bulk packets written and read back, from memory and through a
 * bc_io; a body over its limit refused before anything is read; every
 * truncation of a packet reported as truncation; a packet that does not
 * fit the output buffer leaves nothing of itself there.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/codec.h"
#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/packet.h"
#include "common/wire.h"
#include "tests/unit/unit.h"

/* A compressible body of n bytes. */
static void
fill(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)("int main(void) { return 0; }\n"[i % 30]);
}

START_TEST(t_int_roundtrip)
{
	struct bc_buf out, in;
	char err[BC_ERRLEN], tok[5];
	uint32_t v;

	bc_buf_init(&out, 1024);
	ck_assert_int_eq(bc_packet_put_int(&out, "ARGC", 7, err), BC_OK);
	ck_assert_int_eq(bc_packet_put_int(&out, "DONE", 0xffffffffu, err),
	    BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 2 * BC_HDR_LEN);
	ck_assert_int_eq(memcmp(bc_buf_data(&out), "ARGC00000007", 12), 0);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, "ARGC", tok, &v, err),
	    BC_OK);
	ck_assert_str_eq(tok, "ARGC");
	ck_assert_uint_eq(v, 7);
	/* NULL expect: any token */
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, NULL, tok, &v, err),
	    BC_OK);
	ck_assert_str_eq(tok, "DONE");
	ck_assert_uint_eq(v, 0xffffffffu);
	ck_assert_uint_eq(bc_buf_avail(&in), 0);
	bc_buf_free(&out);
}
END_TEST

START_TEST(t_wrong_token)
{
	struct bc_buf out, in;
	char err[BC_ERRLEN], tok[5];
	uint32_t v;

	bc_buf_init(&out, 1024);
	ck_assert_int_eq(bc_packet_put_int(&out, "ARGC", 1, err), BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	err[0] = '\0';
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, "DOTI", tok, &v, err),
	    BC_ERR_PROTO);
	ck_assert_str_ne(err, "");
	bc_buf_free(&out);
}
END_TEST

START_TEST(t_str_roundtrip)
{
	static const char body[] = "-DX=\"a b\"\0binary\377";
	struct bc_buf out, in, got;
	char err[BC_ERRLEN], tok[5];
	uint32_t v;

	bc_buf_init(&out, 1024);
	bc_buf_init(&got, 1024);
	ck_assert_int_eq(bc_packet_put_str(&out, "ARGV", body, sizeof(body),
	    err), BC_OK);
	ck_assert_int_eq(bc_packet_put_str(&out, "ARGV", "", 0, err), BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, "ARGV", tok, &v, err),
	    BC_OK);
	ck_assert_uint_eq(v, sizeof(body));
	ck_assert_int_eq(bc_packet_rd_body(NULL, &in, tok, v, sizeof(body),
	    &got, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&got), sizeof(body));
	ck_assert_int_eq(memcmp(bc_buf_data(&got), body, sizeof(body)), 0);
	/* an empty body: out is reset, nothing read */
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, "ARGV", tok, &v, err),
	    BC_OK);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(bc_packet_rd_body(NULL, &in, tok, v, 10, &got, err),
	    BC_OK);
	ck_assert_uint_eq(bc_buf_len(&got), 0);
	ck_assert_uint_eq(bc_buf_avail(&in), 0);
	bc_buf_free(&got);
	bc_buf_free(&out);
}
END_TEST

/* A bulk body written with comp, read back and decompressed. */
static void
bulk_roundtrip(enum bc_comp comp, size_t n)
{
	static uint8_t body[100000];
	struct bc_buf out, in, got, plain;
	char err[BC_ERRLEN], tok[5];
	uint32_t v;

	ck_assert_uint_le(n, sizeof(body));
	fill(body, n);
	bc_buf_init(&out, BC_MAX_WIRE_BODY);
	bc_buf_init(&got, BC_MAX_WIRE_BODY);
	bc_buf_init(&plain, BC_MAX_WIRE_BODY);
	ck_assert_int_eq(bc_packet_put_bulk(&out, "DOTI", comp, 1, body, n,
	    err), BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, "DOTI", tok, &v, err),
	    BC_OK);
	if (n == 0 || comp == BC_COMP_NONE)
		ck_assert_uint_eq(v, n);
	else if (n >= 4096)
		ck_assert_uint_lt(v, n);	/* it did compress */
	ck_assert_int_eq(bc_packet_rd_body(NULL, &in, tok, v,
	    BC_MAX_WIRE_BODY, &got, err), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&in), 0);
	if (n > 0) {
		ck_assert_int_eq(bc_codec_decompress(comp, bc_buf_data(&got),
		    bc_buf_len(&got), sizeof(body), &plain, err), BC_OK);
		ck_assert_uint_eq(bc_buf_len(&plain), n);
		ck_assert_int_eq(memcmp(bc_buf_data(&plain), body, n), 0);
	}
	bc_buf_free(&plain);
	bc_buf_free(&got);
	bc_buf_free(&out);
}

START_TEST(t_bulk_roundtrip)
{
	static const size_t sizes[] = { 0, 1, 30, 4096, 100000 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		bulk_roundtrip(BC_COMP_NONE, sizes[i]);
		bulk_roundtrip(BC_COMP_LZO, sizes[i]);
		bulk_roundtrip(BC_COMP_ZSTD, sizes[i]);
	}
}
END_TEST

/* A body over max is refused before a byte is read, and out is reset. */
START_TEST(t_body_limit)
{
	struct bc_buf out, in, got;
	char err[BC_ERRLEN], tok[5];
	uint32_t v;
	struct bc_io io;

	bc_buf_init(&out, 1024);
	bc_buf_init(&got, 1024);
	ck_assert_int_eq(bc_buf_put_str(&got, "stale"), BC_OK);
	ck_assert_int_eq(bc_packet_put_str(&out, "DOTI", "0123456789", 10,
	    err), BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_packet_rd_hdr(NULL, &in, "DOTI", tok, &v, err),
	    BC_OK);
	err[0] = '\0';
	ck_assert_int_eq(bc_packet_rd_body(NULL, &in, tok, v, 9, &got, err),
	    BC_ERR_LIMIT);
	ck_assert_ptr_nonnull(strstr(err, "DOTI"));
	ck_assert_uint_eq(bc_buf_len(&got), 0);
	ck_assert_uint_eq(bc_buf_avail(&in), 10);	/* nothing consumed */
	/* exactly max is fine */
	ck_assert_int_eq(bc_packet_rd_body(NULL, &in, tok, v, 10, &got, err),
	    BC_OK);
	ck_assert_uint_eq(bc_buf_len(&got), 10);

	/* the same through a bc_io: a claimed 4 GB body is refused */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_packet_put_int(&out, "DOTI", 0xfffffff0u, err),
	    BC_OK);
	bc_io_init(&io, -1, -1, 1000);
	bc_io_preload(&io, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_packet_rd_hdr(&io, NULL, "DOTI", tok, &v, err),
	    BC_OK);
	ck_assert_int_eq(bc_packet_rd_body(&io, NULL, tok, v,
	    BC_MAX_WIRE_BODY, &got, err), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&got), 0);
	bc_buf_free(&got);
	bc_buf_free(&out);
}
END_TEST

/* Every proper prefix of "ARGV header + body" is truncation, never a
 * packet, from memory and through a bc_io. */
START_TEST(t_truncation)
{
	struct bc_buf out, in, got;
	char err[BC_ERRLEN], tok[5];
	uint32_t v;
	struct bc_io io;
	size_t cut, total;
	int r;

	bc_buf_init(&out, 1024);
	bc_buf_init(&got, 1024);
	ck_assert_int_eq(bc_packet_put_str(&out, "ARGV", "abcdefghij", 10,
	    err), BC_OK);
	total = bc_buf_len(&out);
	for (cut = 0; cut < total; cut++) {
		bc_buf_view(&in, bc_buf_data(&out), cut);
		r = bc_packet_rd_hdr(NULL, &in, "ARGV", tok, &v, err);
		if (cut < BC_HDR_LEN) {
			ck_assert_int_eq(r, BC_ERR_TRUNCATED);
			continue;
		}
		ck_assert_int_eq(r, BC_OK);
		ck_assert_int_eq(bc_packet_rd_body(NULL, &in, tok, v, 100,
		    &got, err), BC_ERR_TRUNCATED);
		ck_assert_ptr_nonnull(strstr(err, "ARGV"));

		bc_io_init(&io, -1, -1, 1000);
		bc_io_preload(&io, bc_buf_data(&out), cut);
		ck_assert_int_eq(bc_packet_rd_hdr(&io, NULL, "ARGV", tok, &v,
		    err), BC_OK);
		ck_assert_int_eq(bc_packet_rd_body(&io, NULL, tok, v, 100,
		    &got, err), BC_ERR_TRUNCATED);
	}
	/* the whole packet through a bc_io */
	bc_io_init(&io, -1, -1, 1000);
	bc_io_preload(&io, bc_buf_data(&out), total);
	ck_assert_int_eq(bc_packet_rd_hdr(&io, NULL, "ARGV", tok, &v, err),
	    BC_OK);
	ck_assert_int_eq(bc_packet_rd_body(&io, NULL, tok, v, 100, &got, err),
	    BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&got), "abcdefghij", 10), 0);
	bc_buf_free(&got);
	bc_buf_free(&out);
}
END_TEST

/* A packet that does not fit out: BC_ERR_LIMIT naming the token, and out
 * as it was. */
START_TEST(t_out_full)
{
	static uint8_t body[4096];
	struct bc_buf out;
	char err[BC_ERRLEN];
	size_t before;

	fill(body, sizeof(body));
	bc_buf_init(&out, 40);
	ck_assert_int_eq(bc_packet_put_int(&out, "ARGC", 1, err), BC_OK);
	before = bc_buf_len(&out);
	err[0] = '\0';
	ck_assert_int_eq(bc_packet_put_str(&out, "ARGV", body, 29, err),
	    BC_ERR_LIMIT);
	ck_assert_ptr_nonnull(strstr(err, "ARGV"));
	ck_assert_uint_eq(bc_buf_len(&out), before);
	ck_assert_int_eq(bc_packet_put_bulk(&out, "DOTI", BC_COMP_NONE, 0,
	    body, sizeof(body), err), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&out), before);
	ck_assert_int_eq(bc_packet_put_bulk(&out, "DOTI", BC_COMP_ZSTD, 1,
	    body, sizeof(body), err), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&out), before);
	/* what fits exactly still goes in, and then not a header more */
	ck_assert_int_eq(bc_packet_put_str(&out, "ARGV", body, 16, err),
	    BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 40);
	ck_assert_int_eq(bc_packet_put_int(&out, "DOTI", 1, err),
	    BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&out), 40);
	bc_buf_free(&out);
}
END_TEST

static Suite *
packet_suite(void)
{
	Suite *s = suite_create("packet");
	TCase *tc = bc_tcase("packet", BC_TEST_TIMEOUT);

	tcase_add_test(tc, t_int_roundtrip);
	tcase_add_test(tc, t_wrong_token);
	tcase_add_test(tc, t_str_roundtrip);
	tcase_add_test(tc, t_bulk_roundtrip);
	tcase_add_test(tc, t_body_limit);
	tcase_add_test(tc, t_truncation);
	tcase_add_test(tc, t_out_full);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(packet_suite());
}
