/*
 * test_blob.c - unit tests of the cache's blob format (cache/blob.c):
 * round trips (both versions, origins, empty sections and payloads), a
 * flipped byte in every region of the blob rejected with that region's
 * message, every bit flip and truncation from both ends, truncated
 * files, limits checked before allocating, and what the reader leaves
 * behind on error.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/util.h"
#include "cache/blob.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

/* Offsets in a version 2 blob (blob.h). */
#define OFF_VERSION 4
#define OFF_COMP 6
#define OFF_NSECT 7
#define OFF_SIZE 8		/* + 8 * section */
#define OFF_ZLEN 48		/* + 8 * section */
#define OFF_MS 88
#define OFF_PLEN 96
#define OFF_ORIGIN 104
#define OFF_SUM BC_CACHE_HDR_LEN
#define OFF_PAYLOAD (BC_CACHE_HDR_LEN + BC_HASH_LEN)

/* An entry with all five sections, and an origin. */
static void
full_entry(struct bc_cache_entry *e)
{
	ct_fill_entry(e, 4, 700);
	ck_assert_int_eq(bc_buf_put_str(&e->dotd, "x.o: x.c x.h\n"), BC_OK);
	memcpy(e->origin, "0123456789abcdef", sizeof(e->origin));
}

static uint8_t *
encode(const struct bc_cache_entry *e, size_t *n)
{
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	uint8_t *m;

	ck_assert_msg(bc_cache_blob_encode(e, 1, &blob, err) == BC_OK, "%s",
	    err);
	*n = bc_buf_len(&blob);
	m = xmalloc(*n);
	memcpy(m, bc_buf_data(&blob), *n);
	bc_buf_free(&blob);
	return m;
}

/* Decode m; BC_ERR_CORRUPT with a message containing want, and e left
 * empty. */
static void
assert_corrupt(const uint8_t *m, size_t n, const char *want, const char *ctx,
    size_t at)
{
	struct bc_cache_entry d;
	char err[BC_ERRLEN] = "";
	int r = bc_cache_blob_decode(m, n, &d, err);

	ck_assert_msg(r == BC_ERR_CORRUPT && strstr(err, want) != NULL,
	    "%s at %zu: got %d \"%s\", want \"%s\"", ctx, at, r, err, want);
	ck_assert_uint_eq(bc_buf_len(&d.serr) + bc_buf_len(&d.sout) +
	    bc_buf_len(&d.obj) + bc_buf_len(&d.dia) + bc_buf_len(&d.dotd), 0);
	ck_assert_str_eq(d.origin, "");
	bc_cache_entry_free(&d);
}

START_TEST(test_blob_roundtrip)
{
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];

	ct_fill_entry(&e, 4, 5000);
	ck_assert_int_eq(bc_buf_put_str(&e.dotd, "x.o: x.c\n"), BC_OK);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_mem_eq(bc_buf_data(&blob), "BCCE\0\2\2\5", 8);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	ck_assert_str_eq(d.origin, "");
	bc_cache_entry_free(&d);
	/* an unknown origin is 16 NULs */
	{
		static const uint8_t zero[BC_CACHE_ORIGIN_LEN];

		ck_assert_mem_eq(bc_buf_data(&blob) + OFF_ORIGIN, zero,
		    sizeof(zero));
	}
	bc_buf_reset(&blob);

	/* the storer's origin goes with the blob (version 2) */
	memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_mem_eq(bc_buf_data(&blob) + OFF_ORIGIN, "0123456789abcdef",
	    BC_CACHE_ORIGIN_LEN);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert_str_eq(d.origin, "0123456789abcdef");
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	/* an origin that is not hex is corrupt, even with a good checksum */
	{
		size_t n = bc_buf_len(&blob);
		uint8_t *m = xmalloc(n);

		memcpy(m, bc_buf_data(&blob), n);
		m[BC_CACHE_HDR_LEN - 3] = 'G';
		ct_resum(m, n);
		assert_corrupt(m, n, "origin", "origin G", 0);
		/* nor half digits, half NULs */
		memcpy(m, bc_buf_data(&blob), n);
		memset(m + OFF_ORIGIN, 0, 8);
		ct_resum(m, n);
		assert_corrupt(m, n, "bad origin", "half origin", 0);
		free(m);
	}
	/* an origin that is not 16 characters is stored as unknown */
	bc_buf_reset(&blob);
	memcpy(e.origin, "abc", 4);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert_str_eq(d.origin, "");
	bc_cache_entry_free(&d);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);

	/* a negative compile time is stored as 0 */
	ct_fill_entry(&e, 1, 10);
	e.compile_ms = -7;
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert_int_eq(d.compile_ms, 0);
	bc_cache_entry_free(&d);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);
}
END_TEST

/* A version 1 blob (no origin), as older daemons stored them, is read. */
START_TEST(test_blob_version1)
{
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	size_t n, v1n;
	uint8_t *m;
	struct bc_hash h;

	ct_fill_entry(&e, 2, 300);
	memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	n = bc_buf_len(&blob);
	v1n = n - (BC_CACHE_HDR_LEN - BC_CACHE_HDR_LEN_V1);
	m = xmalloc(n);
	memcpy(m, bc_buf_data(&blob), BC_CACHE_HDR_LEN_V1);
	m[5] = 1;
	memcpy(m + BC_CACHE_HDR_LEN_V1 + BC_HASH_LEN,
	    bc_buf_data(&blob) + BC_CACHE_HDR_LEN + BC_HASH_LEN,
	    n - BC_CACHE_HDR_LEN - BC_HASH_LEN);
	bc_hash_init(&h);
	bc_hash_update(&h, m, BC_CACHE_HDR_LEN_V1);
	bc_hash_update(&h, m + BC_CACHE_HDR_LEN_V1 + BC_HASH_LEN,
	    v1n - BC_CACHE_HDR_LEN_V1 - BC_HASH_LEN);
	bc_hash_final(&h, m + BC_CACHE_HDR_LEN_V1);
	bc_hash_free(&h);
	ck_assert_int_eq(bc_cache_blob_decode(m, v1n, &d, err), BC_OK);
	ck_assert_str_eq(d.origin, "");
	e.origin[0] = '\0';
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	/* its shortest form is BC_CACHE_BLOB_MIN bytes; one less is short */
	ck_assert_uint_eq(BC_CACHE_BLOB_MIN, BC_CACHE_HDR_LEN_V1 + BC_HASH_LEN);
	assert_corrupt(m, BC_CACHE_BLOB_MIN - 1, "shorter than its header",
	    "v1 short", BC_CACHE_BLOB_MIN - 1);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);
	free(m);
}
END_TEST

/* Empty sections have no frame and a zlen of 0; an all-empty entry is a
 * header and a checksum over it. */
START_TEST(test_blob_empty)
{
	struct bc_cache_entry e, d;
	struct bc_cache_blob b;
	struct bc_buf *one[BC_CACHE_NSECT];
	char err[BC_ERRLEN];
	uint8_t *m;
	size_t n;
	int i, k;

	bc_cache_entry_init(&e);
	m = encode(&e, &n);
	ck_assert_uint_eq(n, BC_CACHE_HDR_LEN + BC_HASH_LEN);
	for (i = OFF_SIZE; i < OFF_MS; i++)
		ck_assert_uint_eq(m[i], 0);	/* every size and zlen */
	for (i = OFF_PLEN; i < OFF_PLEN + 8; i++)
		ck_assert_uint_eq(m[i], 0);	/* payload_len */
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_cache_blob_init(&b);
	ck_assert_int_eq(bc_cache_blob_check(m, n, &b, err), BC_OK);
	for (i = 0; i < BC_CACHE_NSECT; i++) {
		ck_assert_uint_eq(b.size[i], 0);
		ck_assert_uint_eq(b.zlen[i], 0);
		ck_assert_uint_eq(b.off[i], OFF_PAYLOAD);
	}
	bc_cache_blob_free(&b);
	/* a section claiming a frame without content, or content without
	 * a frame, is corrupt even with a good checksum */
	m[OFF_ZLEN + 8 * 2 + 7] = 1;
	ct_resum(m, n);
	assert_corrupt(m, n, "section 2: bad compressed size", "zlen", 2);
	m[OFF_ZLEN + 8 * 2 + 7] = 0;
	m[OFF_SIZE + 8 * 3 + 7] = 5;
	ct_resum(m, n);
	assert_corrupt(m, n, "section 3: bad compressed size", "size", 3);
	free(m);

	/* each section alone */
	one[0] = &e.serr;
	one[1] = &e.sout;
	one[2] = &e.obj;
	one[3] = &e.dia;
	one[4] = &e.dotd;
	for (k = 0; k < BC_CACHE_NSECT; k++) {
		ck_assert_int_eq(bc_buf_put_str(one[k], "only this"), BC_OK);
		m = encode(&e, &n);
		bc_cache_blob_init(&b);
		ck_assert_int_eq(bc_cache_blob_check(m, n, &b, err), BC_OK);
		for (i = 0; i < BC_CACHE_NSECT; i++) {
			ck_assert_uint_eq(b.size[i], i == k ? 9 : 0);
			ck_assert_int_eq(b.zlen[i] > 0, i == k);
		}
		ck_assert_uint_eq(n, OFF_PAYLOAD + b.zlen[k]);
		ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
		ck_assert(ct_entries_equal(&e, &d));
		bc_cache_entry_free(&d);
		bc_cache_blob_free(&b);
		bc_buf_reset(one[k]);
		free(m);
	}
	bc_cache_entry_free(&e);
}
END_TEST

/* Which messages a byte flipped in each region of a blob may give (the
 * first check that sees the change), and the one it must give at least
 * once: every region is covered by a check of its own, not only by the
 * checksum. */
struct region {
	const char *name;
	size_t from, to;	/* [from, to) */
	const char *must;
	const char *may[3];
};

static int
message_in(const char *err, const struct region *g)
{
	int i;

	if (strstr(err, g->must) != NULL)
		return 1;
	for (i = 0; i < 3 && g->may[i] != NULL; i++)
		if (strstr(err, g->may[i]) != NULL)
			return 1;
	return 0;
}

START_TEST(test_blob_regions)
{
	struct bc_cache_entry e, d;
	char err[BC_ERRLEN];
	uint8_t *good, *m;
	size_t n, at, gi;
	int i;

	full_entry(&e);
	good = encode(&e, &n);
	m = xmalloc(n);
	{
		const struct region g[] = {
			{ "magic", 0, 4, "magic", { NULL } },
			{ "version", OFF_VERSION, OFF_COMP, "version",
			    { NULL } },
			{ "compression", OFF_COMP, OFF_NSECT + 1,
			    "cache blob: compression", { NULL } },
			{ "sizes", OFF_SIZE, OFF_ZLEN, "exceeds its limit",
			    { "bad compressed size", "checksum mismatch" } },
			{ "zlens", OFF_ZLEN, OFF_MS, "bad compressed size",
			    { "payload is", NULL } },
			{ "compile_ms", OFF_MS, OFF_PLEN, "checksum mismatch",
			    { NULL } },
			{ "payload_len", OFF_PLEN, OFF_ORIGIN, "payload is",
			    { NULL } },
			{ "origin", OFF_ORIGIN, OFF_SUM, "bad origin",
			    { NULL } },
			{ "checksum", OFF_SUM, OFF_PAYLOAD,
			    "checksum mismatch", { NULL } },
			{ "payload", OFF_PAYLOAD, n, "checksum mismatch",
			    { NULL } },
		};

		for (gi = 0; gi < sizeof(g) / sizeof(g[0]); gi++) {
			int seen = 0;

			for (at = g[gi].from; at < g[gi].to; at++) {
				memcpy(m, good, n);
				m[at] ^= 0xff;
				err[0] = '\0';
				ck_assert_int_eq(bc_cache_blob_decode(m, n, &d,
				    err), BC_ERR_CORRUPT);
				bc_cache_entry_free(&d);
				ck_assert_msg(message_in(err, &g[gi]),
				    "%s byte %zu: \"%s\"", g[gi].name, at, err);
				seen += strstr(err, g[gi].must) != NULL;
			}
			ck_assert_msg(seen > 0, "%s: never \"%s\"", g[gi].name,
			    g[gi].must);
		}
	}
	/* with the checksum made to match again: a size within its limit
	 * still disagrees with its frame, and each frame's own header is
	 * checked against the blob's */
	for (i = 0; i < BC_CACHE_NSECT; i++) {
		memcpy(m, good, n);
		m[OFF_SIZE + 8 * i + 7] ^= 0x01;
		ct_resum(m, n);
		assert_corrupt(m, n, "frame does not match its header",
		    "size resum", (size_t)i);
	}
	{
		struct bc_cache_blob b;
		size_t off;

		bc_cache_blob_init(&b);
		ck_assert_int_eq(bc_cache_blob_check(good, n, &b, err), BC_OK);
		for (i = 0; i < BC_CACHE_NSECT; i++) {
			ck_assert_uint_gt(b.zlen[i], 0);
			off = b.off[i];
			memcpy(m, good, n);
			m[off] ^= 0xff;		/* the frame's magic */
			ct_resum(m, n);
			snprintf(err, sizeof(err), "section %d: frame", i);
			assert_corrupt(m, n, err, "frame magic", off);
		}
		bc_cache_blob_free(&b);
	}
	/* the compile time is covered by the checksum alone: made to match,
	 * it is another (valid) blob */
	memcpy(m, good, n);
	m[OFF_MS + 7] ^= 0x01;
	ct_resum(m, n);
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_OK);
	ck_assert_int_eq(d.compile_ms, e.compile_ms ^ 1);
	bc_cache_entry_free(&d);
	/* the original still decodes */
	ck_assert_int_eq(bc_cache_blob_decode(good, n, &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_cache_entry_free(&e);
	free(good);
	free(m);
}
END_TEST

START_TEST(test_blob_mutations)
{
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	uint8_t *m;
	size_t n, i;
	int bit;

	ct_fill_entry(&e, 3, 700);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 3, &blob, err), BC_OK);
	n = bc_buf_len(&blob);
	m = xmalloc(n);
	/* every bit flip of every byte is caught */
	for (i = 0; i < n; i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(m, bc_buf_data(&blob), n);
			m[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(bc_cache_blob_decode(m, n, &d, err) != BC_OK,
			    "flip at %zu bit %d accepted", i, bit);
			bc_cache_entry_free(&d);
		}
	/* byte replacement */
	for (i = 0; i < n; i++) {
		memcpy(m, bc_buf_data(&blob), n);
		m[i] = (uint8_t)~m[i];
		ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err),
		    BC_ERR_CORRUPT);
		bc_cache_entry_free(&d);
	}
	/* truncation from both ends */
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob), i, &d,
		    err), BC_ERR_CORRUPT);
		bc_cache_entry_free(&d);
		ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob) + i + 1,
		    n - i - 1, &d, err), BC_ERR_CORRUPT);
		bc_cache_entry_free(&d);
	}
	/* bad magic and version are named */
	memcpy(m, bc_buf_data(&blob), n);
	m[0] = 'X';
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "magic"));
	memcpy(m, bc_buf_data(&blob), n);
	m[5] = 9;
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "version"));
	/* the original still decodes */
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob), n, &d, err),
	    BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	free(m);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);
}
END_TEST

/* A blob file cut short at every length (a crash in the middle of a copy,
 * a full disk) is read and refused with the message for what is
 * missing. */
START_TEST(test_blob_truncated_files)
{
	struct bc_cache_entry e, d;
	struct bc_buf raw = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN], want[BC_ERRLEN];
	char *path = xasprintf("%s/blob", ct_tmpd);
	struct bc_cache_blob b;
	uint8_t *good;
	size_t n, len;
	int i, seen_zlen = 0;

	full_entry(&e);
	good = encode(&e, &n);
	bc_cache_blob_init(&b);
	ck_assert_int_eq(bc_cache_blob_check(good, n, &b, err), BC_OK);
	ck_assert_int_eq(bc_write_file_atomic(path, good, n, 0600, err),
	    BC_OK);
	for (len = n; len-- > 0;) {
		ck_assert_int_eq(truncate(path, (off_t)len), 0);
		bc_buf_reset(&raw);
		ck_assert_int_eq(bc_read_file(path, BC_BUF_CEILING, &raw, err),
		    BC_OK);
		ck_assert_uint_eq(bc_buf_len(&raw), len);
		for (i = 0; i < BC_CACHE_NSECT && b.zlen[i] <= len; i++)
			;
		if (len < OFF_PAYLOAD)
			snprintf(want, sizeof(want), "cache blob of %zu bytes "
			    "is shorter than its header", len);
		else if (i < BC_CACHE_NSECT)	/* a frame longer than all */
			snprintf(want, sizeof(want), "cache blob section %d: "
			    "bad compressed size", i);
		else
			snprintf(want, sizeof(want), "cache blob payload is "
			    "%zu bytes, header says %zu", len - OFF_PAYLOAD,
			    n - OFF_PAYLOAD);
		assert_corrupt(bc_buf_data(&raw), len, want, "truncated file",
		    len);
		seen_zlen += len >= OFF_PAYLOAD && i < BC_CACHE_NSECT;
	}
	ck_assert_int_gt(seen_zlen, 0);	/* both messages were seen */
	bc_cache_blob_free(&b);
	/* the whole file again: good */
	ck_assert_int_eq(bc_write_file_atomic(path, good, n, 0600, err),
	    BC_OK);
	bc_buf_reset(&raw);
	ck_assert_int_eq(bc_read_file(path, BC_BUF_CEILING, &raw, err), BC_OK);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&raw),
	    bc_buf_len(&raw), &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_cache_entry_free(&e);
	bc_buf_free(&raw);
	free(good);
	free(path);
}
END_TEST

START_TEST(test_blob_limits)
{
	/* A header claiming a huge object is refused before allocating. */
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	uint8_t *m;
	size_t n;

	ct_fill_entry(&e, 1, 10);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	n = bc_buf_len(&blob);
	m = xmalloc(n);
	memcpy(m, bc_buf_data(&blob), n);
	/* object size field: offset 8 + 2*8 */
	memset(m + 24, 0x7f, 8);
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "limit"));
	free(m);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);

	/* an entry with a section over its limit is not encoded, and out
	 * keeps what it had */
	bc_cache_entry_init(&e);
	bc_buf_free(&e.serr);
	bc_buf_init(&e.serr, BC_BUF_CEILING);
	{
		uint8_t *big = xcalloc(1, BC_MAX_STDERR + 1);

		ck_assert_int_eq(bc_buf_put(&e.serr, big, BC_MAX_STDERR + 1),
		    BC_OK);
		free(big);
	}
	ck_assert_int_eq(bc_buf_put_str(&blob, "kept"), BC_OK);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err),
	    BC_ERR_LIMIT);
	ck_assert_ptr_nonnull(strstr(err, "section 0 too large"));
	ck_assert_uint_eq(bc_buf_len(&blob), 4);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);
}
END_TEST

/* bc_cache_blob_check copies and indexes the frames without expanding;
 * bc_cache_blob_expand then gives the entry; encode appends. */
START_TEST(test_blob_check_expand)
{
	struct bc_cache_entry e, d;
	struct bc_cache_blob b;
	struct bc_buf out = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	uint8_t *good;
	size_t n;
	int i;

	full_entry(&e);
	good = encode(&e, &n);
	bc_cache_blob_init(&b);
	ck_assert_int_eq(bc_cache_blob_check(good, n, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b.data), n);
	ck_assert_mem_eq(bc_buf_data(&b.data), good, n);
	ck_assert_uint_eq(b.off[0], OFF_PAYLOAD);
	for (i = 0; i + 1 < BC_CACHE_NSECT; i++)
		ck_assert_uint_eq(b.off[i + 1], b.off[i] + b.zlen[i]);
	ck_assert_uint_eq(b.off[4] + b.zlen[4], n);
	ck_assert_uint_eq(b.size[2], 700);
	ck_assert_int_eq(b.compile_ms, e.compile_ms);
	ck_assert_str_eq(b.origin, "0123456789abcdef");
	ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	/* a bad blob leaves b empty, whatever it held */
	good[n - 1] ^= 1;
	ck_assert_int_eq(bc_cache_blob_check(good, n, &b, err),
	    BC_ERR_CORRUPT);
	ck_assert_uint_eq(bc_buf_len(&b.data), 0);
	ck_assert_uint_eq(b.zlen[2], 0);
	ck_assert_str_eq(b.origin, "");
	good[n - 1] ^= 1;
	bc_cache_blob_free(&b);

	/* encode appends to what out holds */
	ck_assert_int_eq(bc_buf_put_str(&out, "xyz"), BC_OK);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &out, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 3 + n);
	ck_assert_mem_eq(bc_buf_data(&out), "xyz", 3);
	ck_assert_mem_eq(bc_buf_data(&out) + 3, good, n);
	bc_buf_free(&out);
	bc_cache_entry_free(&e);
	free(good);
}
END_TEST

static Suite *
blob_suite(void)
{
	Suite *s = suite_create("blob");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.05 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_blob_roundtrip);
	tcase_add_test(tc, test_blob_version1);
	tcase_add_test(tc, test_blob_empty);
	tcase_add_test(tc, test_blob_regions);
	tcase_add_test(tc, test_blob_mutations);
	tcase_add_test(tc, test_blob_truncated_files);
	tcase_add_test(tc, test_blob_limits);
	tcase_add_test(tc, test_blob_check_expand);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(blob_suite());
}
