/*
 * test_dia.c - unit tests of the .dia blob rewriter (common/dia.c).
 *
 * The fixtures in tests/data/dia were written by clang 14 (Debian 12)
 * compiling the same sources by absolute path in /tmp/x/a and in
 * /tmp/longer/path/b (tests/data/dia/make.sh, README): rewriting one
 * directory's file names and messages into the other's must give the
 * other's .dia byte for byte.  Hand-made streams (a small bit writer
 * below) cover the encodings clang does not use and hostile input.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/dia.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"
#include "tests/unit/unit.h"

#define DIR_A	"/tmp/x/a"
#define DIR_B	"/tmp/longer/path/b"

static const char *const cases[] = { "clean", "warn", "error" };
#define NCASES	(sizeof(cases) / sizeof(cases[0]))
/* fixture k: case k / 2, directory a (even k) or b (odd k) */
#define NFIXTURES	(2 * NCASES)

/* --- fixtures ----------------------------------------------------------- */

/* tests/data/dia ($BOLTCC_SRCDIR, or next to this file), or NULL. */
static char *
data_dir(void)
{
	const char *src = getenv("BOLTCC_SRCDIR");
	struct stat st;
	char *d, *f, *slash;

	if (src != NULL) {
		d = xasprintf("%s/tests/data/dia", src);
		if (stat(d, &st) == 0)
			return d;
		free(d);
	}
	if (__FILE__[0] == '/') {
		f = xstrdup(__FILE__);
		slash = strrchr(f, '/');
		*slash = '\0';
		d = xasprintf("%s/../data/dia", f);
		free(f);
		if (stat(d, &st) == 0)
			return d;
		free(d);
	}
	return NULL;
}

static void
load(const char *name, struct bc_buf *out)
{
	char err[BC_ERRLEN], *dir, *path;
	int r;

	dir = data_dir();
	if (dir == NULL)
		ck_abort_msg("tests/data/dia not found (set BOLTCC_SRCDIR)");
	path = xasprintf("%s/%s", dir, name);
	bc_buf_init(out, BC_MAX_DIA);
	r = bc_read_file(path, BC_MAX_DIA, out, err);
	ck_assert_msg(r == BC_OK, "cannot read %s: %s", path, err);
	free(path);
	free(dir);
}

static void
load_fixture(int k, struct bc_buf *out)
{
	char *name = xasprintf("%s-%c.dia", cases[k / 2], k % 2 ? 'b' : 'a');

	load(name, out);
	free(name);
}

/* --- transforms --------------------------------------------------------- */

/* Every occurrence of from becomes to; counts the blobs. */
struct repl {
	const char *from;
	const char *to;
	size_t nblobs;
};

static int
keep_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	if (ctx != NULL)
		((struct repl *)ctx)->nblobs++;
	return bc_buf_put(out, blob, n);
}

static int
repl_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	struct repl *rp = ctx;
	const char *p = blob, *end = p + n, *hit;
	size_t fl = strlen(rp->from);
	int r;

	rp->nblobs++;
	while (p < end && (hit = memmem(p, (size_t)(end - p), rp->from,
	    fl)) != NULL) {
		if ((r = bc_buf_put(out, p, (size_t)(hit - p))) != BC_OK ||
		    (r = bc_buf_put_str(out, rp->to)) != BC_OK)
			return bc_seterr(err, r, "blob too large");
		p = hit + fl;
	}
	return bc_buf_put(out, p, (size_t)(end - p));
}

/* Blobs equal to from become to (a string of any bytes). */
struct swap {
	const void *from;
	size_t nfrom;
	const void *to;
	size_t nto;
	int hits;
};

static int
swap_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	struct swap *s = ctx;

	if (n == s->nfrom && memcmp(blob, s->from, n) == 0) {
		s->hits++;
		return bc_buf_put(out, s->to, s->nto);
	}
	return bc_buf_put(out, blob, n);
}

/* Collects every blob, NUL-separated. */
static int
collect_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	int r;

	if ((r = bc_buf_put(ctx, blob, n)) != BC_OK ||
	    (r = bc_buf_put_u8(ctx, 0)) != BC_OK)
		return r;
	return bc_buf_put(out, blob, n);
}

static int
fail_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	return bc_seterr(err, BC_ERR_INVAL, "no thanks");
}

static int
has_blob(const struct bc_buf *all, const char *s)
{
	const uint8_t *p = bc_buf_data(all);
	size_t i = 0, n = bc_buf_len(all), l;

	while (i < n) {
		l = strlen((const char *)p + i);
		if (strcmp((const char *)p + i, s) == 0)
			return 1;
		i += l + 1;
	}
	return 0;
}

static void
assert_same(const struct bc_buf *got, const struct bc_buf *want,
    const char *what)
{
	ck_assert_msg(bc_buf_len(got) == bc_buf_len(want) &&
	    memcmp(bc_buf_data(got), bc_buf_data(want),
	    bc_buf_len(want)) == 0, "%s: %zu bytes, want %zu, differ", what,
	    bc_buf_len(got), bc_buf_len(want));
}

/* --- clang's files ------------------------------------------------------ */

START_TEST(test_identity)
{
	struct bc_buf in, out;
	struct repl rp = { NULL, NULL, 0 };
	char err[BC_ERRLEN];
	int r;

	load_fixture(_i, &in);
	bc_buf_init(&out, BC_MAX_DIA);
	r = bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in), keep_blob, &rp,
	    &out, err);
	ck_assert_msg(r == BC_OK, "fixture %d: %s", _i, err);
	assert_same(&out, &in, "identity");
	/* the clean compile has no diagnostics, hence no strings */
	ck_assert_uint_eq(rp.nblobs, _i / 2 == 0 ? 0 : _i / 2 == 1 ? 23 : 4);
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

/* Appended after what out holds; a failure leaves that as it was. */
START_TEST(test_appends)
{
	struct bc_buf in, out;
	char err[BC_ERRLEN];

	load("warn-a.dia", &in);
	bc_buf_init(&out, BC_MAX_DIA);
	ck_assert_int_eq(bc_buf_put(&out, "xyz", 3), BC_OK);
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in),
	    keep_blob, NULL, &out, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 3 + bc_buf_len(&in));
	ck_assert_int_eq(memcmp(bc_buf_data(&out), "xyz", 3), 0);
	ck_assert_int_eq(memcmp(bc_buf_data(&out) + 3, bc_buf_data(&in),
	    bc_buf_len(&in)), 0);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_buf_put(&out, "xyz", 3), BC_OK);
	err[0] = '\0';
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in),
	    fail_blob, NULL, &out, err), BC_ERR_INVAL);
	ck_assert_str_eq(err, "no thanks");
	ck_assert_uint_eq(bc_buf_len(&out), 3);
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

/* Directory A's .dia with A's prefix turned into B's is B's, and back. */
START_TEST(test_other_dir)
{
	struct bc_buf a, b, out;
	struct repl ab = { DIR_A, DIR_B, 0 }, ba = { DIR_B, DIR_A, 0 };
	char err[BC_ERRLEN];

	load_fixture(2 * _i, &a);
	load_fixture(2 * _i + 1, &b);
	bc_buf_init(&out, BC_MAX_DIA);
	ck_assert_msg(bc_dia_rewrite(bc_buf_data(&a), bc_buf_len(&a),
	    repl_blob, &ab, &out, err) == BC_OK, "%s: %s", cases[_i], err);
	assert_same(&out, &b, "A -> B");
	bc_buf_reset(&out);
	ck_assert_msg(bc_dia_rewrite(bc_buf_data(&b), bc_buf_len(&b),
	    repl_blob, &ba, &out, err) == BC_OK, "%s: %s", cases[_i], err);
	assert_same(&out, &a, "B -> A");
	ck_assert_uint_eq(ab.nblobs, ba.nblobs);
	bc_buf_free(&a);
	bc_buf_free(&b);
	bc_buf_free(&out);
}
END_TEST

/* Every kind of string reaches the callback. */
START_TEST(test_strings)
{
	static const char *const want[] = {
		DIR_A "/warn.c", DIR_A "/w.h", "User-Defined Issue",
		"Semantic Issue", "", "#warnings", "parentheses",
		"sign-compare", "unused-variable",
		"\"a warning from the main file\"",
		"in file included from " DIR_A "/warn.c:1:",
	"place parentheses around the assignment to silence this warning",
		"(", ")", "==", "unused variable 'unused'",
	};
	struct bc_buf in, out, all;
	char err[BC_ERRLEN];
	size_t i;

	load("warn-a.dia", &in);
	bc_buf_init(&out, BC_MAX_DIA);
	bc_buf_init(&all, BC_MAX_DIA);
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in),
	    collect_blob, &all, &out, err), BC_OK);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(has_blob(&all, want[i]), "no blob \"%s\"",
		    want[i]);
	bc_buf_free(&in);
	bc_buf_free(&out);
	bc_buf_free(&all);
}
END_TEST

/* A length that does not fit its Fixed operand fails cleanly. */
START_TEST(test_fixed_too_long)
{
	static const struct {
		const char *from;
		size_t len;
		const char *want;
	} t[] = {
		{ DIR_A "/w.h", 65536, "Fixed(16)" },	/* file name */
		{ "Semantic Issue", 256, "Fixed(8)" },	/* category */
		{ "==", 65536, "Fixed(16)" },		/* fix-it */
	};
	struct bc_buf in, out;
	struct swap s;
	char err[BC_ERRLEN], *big;
	size_t i;

	load("warn-a.dia", &in);
	bc_buf_init(&out, BC_MAX_DIA);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		big = xmalloc(t[i].len);
		memset(big, 'x', t[i].len);
		s.from = t[i].from;
		s.nfrom = strlen(t[i].from);
		s.to = big;
		s.nto = t[i].len;
		s.hits = 0;
		err[0] = '\0';
		ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in),
		    bc_buf_len(&in), swap_blob, &s, &out, err), BC_ERR_LIMIT);
		ck_assert_int_eq(s.hits, 1);
		ck_assert_msg(strstr(err, t[i].want) != NULL, "%s", err);
		ck_assert_uint_eq(bc_buf_len(&out), 0);
		/* one byte less fits */
		s.nto = t[i].len - 1;
		ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in),
		    bc_buf_len(&in), swap_blob, &s, &out, err), BC_OK);
		bc_buf_reset(&out);
		free(big);
	}
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

/* A message long enough for a second VBR16 chunk, and back. */
START_TEST(test_vbr_grows)
{
	static const char msg[] = "unused variable 'unused'";
	struct bc_buf in, out, back, all;
	struct swap s;
	char err[BC_ERRLEN], *big;
	size_t n = 40000;

	load("warn-a.dia", &in);
	bc_buf_init(&out, BC_MAX_DIA);
	bc_buf_init(&back, BC_MAX_DIA);
	bc_buf_init(&all, BC_MAX_DIA);
	big = xmalloc(n + 1);
	memset(big, 'y', n);
	big[n] = '\0';
	memcpy(big, msg, strlen(msg));
	s = (struct swap){ msg, strlen(msg), big, n, 0 };
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in),
	    swap_blob, &s, &out, err), BC_OK);
	ck_assert_int_eq(s.hits, 1);
	/* the blob's bytes padded to words; the length operand grows by
	 * one 16-bit chunk, which the blob's alignment absorbs or not */
	ck_assert_uint_ge(bc_buf_len(&out), bc_buf_len(&in) + n - 24);
	ck_assert_uint_le(bc_buf_len(&out), bc_buf_len(&in) + n - 24 + 8);
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&out), bc_buf_len(&out),
	    collect_blob, &all, &back, err), BC_OK);
	ck_assert(has_blob(&all, big));
	assert_same(&back, &out, "identity of the grown file");
	bc_buf_reset(&back);
	s = (struct swap){ big, n, msg, strlen(msg), 0 };
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&out), bc_buf_len(&out),
	    swap_blob, &s, &back, err), BC_OK);
	ck_assert_int_eq(s.hits, 1);
	assert_same(&back, &in, "shrunk back");
	free(big);
	bc_buf_free(&in);
	bc_buf_free(&out);
	bc_buf_free(&back);
	bc_buf_free(&all);
}
END_TEST

/* The output buffer's max is honoured. */
START_TEST(test_out_max)
{
	struct bc_buf in, out;
	char err[BC_ERRLEN];

	load("warn-a.dia", &in);
	bc_buf_init(&out, bc_buf_len(&in) - 1);
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in),
	    keep_blob, NULL, &out, err), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&out), 0);
	bc_buf_free(&out);
	bc_buf_init(&out, bc_buf_len(&in));
	ck_assert_int_eq(bc_dia_rewrite(bc_buf_data(&in), bc_buf_len(&in),
	    keep_blob, NULL, &out, err), BC_OK);
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

/* An input over BC_MAX_DIA is refused before it is read. */
START_TEST(test_in_max)
{
	struct bc_buf out;
	char err[BC_ERRLEN];
	uint8_t *p = xcalloc(1, BC_MAX_DIA + 4);

	memcpy(p, "DIAG", 4);
	bc_buf_init(&out, BC_MAX_DIA);
	ck_assert_int_eq(bc_dia_rewrite(p, BC_MAX_DIA + 4, keep_blob, NULL,
	    &out, err), BC_ERR_LIMIT);
	ck_assert(strstr(err, "BC_MAX_DIA") != NULL);
	ck_assert_uint_eq(bc_buf_len(&out), 0);
	free(p);
}
END_TEST

/* r is a clean failure with a message. */
static void
assert_clean_failure(int r, const char *err, const char *what, size_t at)
{
	ck_assert_msg(r == BC_ERR_CORRUPT || r == BC_ERR_LIMIT,
	    "%s at %zu: %d", what, at, r);
	ck_assert_msg(err[0] != '\0', "%s at %zu: no message", what, at);
}

/*
 * Every truncation fails cleanly, but for those that end right after a
 * top-level block: a valid stream, rewritten as itself.  Each input is a
 * malloc'd block of exactly its size (ASan sees any read past it).
 */
START_TEST(test_truncations)
{
	struct bc_buf in, out;
	char err[BC_ERRLEN];
	size_t i, ok = 0, n;
	uint8_t *p;
	int r;

	load_fixture(_i, &in);
	n = bc_buf_len(&in);
	bc_buf_init(&out, BC_MAX_DIA);
	for (i = 0; i < n; i++) {
		p = xmalloc(i + 1);
		memcpy(p, bc_buf_data(&in), i);
		bc_buf_reset(&out);
		err[0] = '\0';
		r = bc_dia_rewrite(i > 0 ? p : NULL, i, keep_blob, NULL, &out,
		    err);
		if (r == BC_OK) {
			ck_assert_uint_eq(bc_buf_len(&out), i);
			ck_assert_int_eq(memcmp(bc_buf_data(&out), p, i), 0);
			ok++;
		} else {
			assert_clean_failure(r, err, "truncation", i);
			ck_assert_uint_eq(bc_buf_len(&out), 0);
		}
		free(p);
	}
	/* "DIAG" alone, after BLOCKINFO, after META, after each diagnostic
	 * but the last */
	ck_assert_uint_eq(ok, _i / 2 == 0 ? 2 : _i / 2 == 1 ? 7 : 4);
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

/* Every single bit flipped: a clean failure, or the identity holds. */
START_TEST(test_bit_flips)
{
	struct bc_buf in, out;
	char err[BC_ERRLEN];
	size_t i, n;
	uint8_t *p;
	int r;

	load_fixture(_i, &in);
	n = bc_buf_len(&in);
	bc_buf_init(&out, BC_MAX_DIA);
	p = xmalloc(n);
	for (i = 0; i < 8 * n; i++) {
		memcpy(p, bc_buf_data(&in), n);
		p[i / 8] ^= (uint8_t)(1u << (i % 8));
		bc_buf_reset(&out);
		err[0] = '\0';
		r = bc_dia_rewrite(p, n, keep_blob, NULL, &out, err);
		if (r == BC_OK)
			ck_assert_msg(bc_buf_len(&out) == n &&
			    memcmp(bc_buf_data(&out), p, n) == 0,
			    "bit %zu: accepted but not kept", i);
		else
			assert_clean_failure(r, err, "bit flip", i);
	}
	free(p);
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* A block length word one more or one less than its content. */
START_TEST(test_block_length)
{
	struct bc_buf in, out;
	char err[BC_ERRLEN];
	size_t at[2], k, n;
	uint8_t *p;
	int d, r;

	load("warn-a.dia", &in);
	n = bc_buf_len(&in);
	bc_buf_init(&out, BC_MAX_DIA);
	p = xmalloc(n);
	/* BLOCKINFO's length word at byte 8, META's after BLOCKINFO */
	at[0] = 8;
	at[1] = 12 + 4 * (size_t)get32(bc_buf_data(&in) + 8) + 4;
	ck_assert_uint_lt(at[1] + 4, n);
	ck_assert_uint_eq(get32(bc_buf_data(&in) + at[1]), 2);
	for (k = 0; k < 2; k++)
		for (d = -1; d <= 1; d += 2) {
			memcpy(p, bc_buf_data(&in), n);
			put32(p + at[k], get32(p + at[k]) + (uint32_t)d);
			err[0] = '\0';
			r = bc_dia_rewrite(p, n, keep_blob, NULL, &out, err);
			ck_assert_int_eq(r, BC_ERR_CORRUPT);
			ck_assert_msg(strstr(err, "block") != NULL, "%s", err);
			ck_assert_uint_eq(bc_buf_len(&out), 0);
		}
	free(p);
	bc_buf_free(&in);
	bc_buf_free(&out);
}
END_TEST

/* --- hand-made streams -------------------------------------------------- */

/* A minimal bitstream writer (LSB first). */
struct bw {
	uint8_t b[8192];
	size_t nbits;
};

static void
bw_bits(struct bw *w, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++, w->nbits++) {
		ck_assert_uint_lt(w->nbits / 8, sizeof(w->b));
		if ((v >> i) & 1)
			w->b[w->nbits / 8] |= (uint8_t)(1u << (w->nbits % 8));
	}
}

/* v as a VBR of this width in exactly chunks chunks (0: minimal). */
static void
bw_vbr_n(struct bw *w, uint64_t v, unsigned width, unsigned chunks)
{
	uint64_t mask = ((uint64_t)1 << (width - 1)) - 1;
	unsigned i;

	if (chunks == 0) {
		chunks = 1;
		while (chunks * (width - 1) < 64 &&
		    (v >> (chunks * (width - 1))) != 0)
			chunks++;
	}
	for (i = 0; i < chunks; i++) {
		bw_bits(w, (v & mask) | (i + 1 < chunks ? mask + 1 : 0), width);
		v = (width - 1) < 64 ? v >> (width - 1) : 0;
	}
}

static void
bw_vbr(struct bw *w, uint64_t v, unsigned width)
{
	bw_vbr_n(w, v, width, 0);
}

static void
bw_align(struct bw *w)
{
	while (w->nbits % 32 != 0)
		bw_bits(w, 0, 1);
}

static void
bw_start(struct bw *w)
{
	memset(w, 0, sizeof(*w));
	bw_bits(w, 'D', 8);
	bw_bits(w, 'I', 8);
	bw_bits(w, 'A', 8);
	bw_bits(w, 'G', 8);
}

/* ENTER_SUBBLOCK; returns where the length word is. */
static size_t
bw_enter(struct bw *w, unsigned width, uint64_t bid, unsigned inner)
{
	size_t at;

	bw_bits(w, 1, width);
	bw_vbr(w, bid, 8);
	bw_vbr(w, inner, 4);
	bw_align(w);
	at = w->nbits / 8;
	bw_bits(w, 0, 32);
	return at;
}

static void
bw_end(struct bw *w, unsigned inner, size_t at)
{
	bw_bits(w, 0, inner);
	bw_align(w);
	put32(w->b + at, (uint32_t)((w->nbits / 8 - at - 4) / 4));
}

/* DEFINE_ABBREV from a spec: L<n> literal, F<n> fixed, V<n> vbr, A
 * array, C char6, B blob, separated by spaces. */
static void
bw_abbrev(struct bw *w, unsigned width, const char *spec)
{
	unsigned n = 0;
	const char *p;
	char *end;
	unsigned long v;

	for (p = spec; *p != '\0'; p++)
		if (p == spec || p[-1] == ' ')
			n++;
	bw_bits(w, 2, width);
	bw_vbr(w, n, 5);
	for (p = spec; *p != '\0'; p = *end == ' ' ? end + 1 : end) {
		v = strtoul(p + 1, &end, 10);
		switch (*p) {
		case 'L':
			bw_bits(w, 1, 1);
			bw_vbr(w, v, 8);
			break;
		case 'F':
			bw_bits(w, 0, 1);
			bw_bits(w, 1, 3);
			bw_vbr(w, v, 5);
			break;
		case 'V':
			bw_bits(w, 0, 1);
			bw_bits(w, 2, 3);
			bw_vbr(w, v, 5);
			break;
		default:
			bw_bits(w, 0, 1);
			bw_bits(w, *p == 'A' ? 3 : *p == 'C' ? 4 : 5, 3);
			break;
		}
	}
}

static void
bw_blob(struct bw *w, const char *s)
{
	size_t i, n = strlen(s);

	bw_vbr(w, n, 6);
	bw_align(w);
	for (i = 0; i < n; i++)
		bw_bits(w, (uint8_t)s[i], 8);
	bw_align(w);
}

static void
bw_unabbrev(struct bw *w, unsigned width, unsigned code, size_t n,
    const uint64_t *ops)
{
	size_t i;

	bw_bits(w, 3, width);
	bw_vbr(w, code, 6);
	bw_vbr(w, n, 6);
	for (i = 0; i < n; i++)
		bw_vbr(w, ops[i], 6);
}

/*
 * A stream with what clang does not write: local abbreviations, a
 * literal, an array, char6, Fixed(64), two blobs in one record, length
 * operands that do not match, a non-minimal VBR length.  big: the blobs
 * "abc" written as "abcdefgh", as an LLVM writer would have.
 */
static void
bw_generic(struct bw *w, int big)
{
	const char *abc = big ? "abcdefgh" : "abc";
	const char *xabcx = big ? "xabcdefghx" : "xabcx";
	unsigned n = big ? 8 : 3;
	uint64_t setbid = 9, ops[3] = { 1, 2, 300 };
	size_t at, at2;

	bw_start(w);
	at = bw_enter(w, 2, 0, 2);			/* BLOCKINFO */
	bw_unabbrev(w, 2, 1, 1, &setbid);
	bw_abbrev(w, 2, "L2 F3 V16 B");		/* block 9, id 4 */
	bw_end(w, 2, at);

	at = bw_enter(w, 2, 9, 5);
	bw_abbrev(w, 5, "L7 F8 B");			/* id 5 */
	bw_abbrev(w, 5, "L8 L3 B");			/* id 6 */
	bw_abbrev(w, 5, "L9 V6 C F64 A V3");		/* id 7 */
	bw_abbrev(w, 5, "L10 F8 B F4 B");		/* id 8 */
	bw_abbrev(w, 5, "L11 F0 B");			/* id 9 */
	/* id 4: VBR16 length in two chunks, minimal once it changes */
	bw_bits(w, 4, 5);
	bw_bits(w, 5, 3);
	bw_vbr_n(w, n, 16, big ? 0 : 2);
	bw_blob(w, abc);
	/* id 5: Fixed(8) length */
	bw_bits(w, 5, 5);
	bw_bits(w, n, 8);
	bw_blob(w, abc);
	/* id 6: the literal before the blob stays */
	bw_bits(w, 6, 5);
	bw_blob(w, abc);
	/* id 7: no blob; a VBR6 of 7 in three chunks stays so */
	bw_bits(w, 7, 5);
	bw_vbr_n(w, 7, 6, 3);
	bw_bits(w, 12, 6);
	bw_bits(w, 0xdeadbeefcafef00dULL, 64);
	bw_vbr(w, 3, 6);
	bw_vbr(w, 1, 3);
	bw_vbr(w, 5, 3);
	bw_vbr(w, 100, 3);
	/* id 8: operands that are not the blobs' lengths stay */
	bw_bits(w, 8, 5);
	bw_bits(w, 99, 8);
	bw_blob(w, abc);
	bw_bits(w, 3, 4);
	bw_blob(w, xabcx);
	/* id 9: an empty blob after a zero-width operand */
	bw_bits(w, 9, 5);
	bw_blob(w, "");
	bw_unabbrev(w, 5, 3, 3, ops);
	/* a nested block 9 sees the BLOCKINFO abbreviation only */
	at2 = bw_enter(w, 5, 9, 3);
	bw_bits(w, 4, 3);
	bw_bits(w, 1, 3);
	bw_vbr(w, n, 16);
	bw_blob(w, abc);
	bw_end(w, 3, at2);
	bw_end(w, 5, at);
}

START_TEST(test_generic)
{
	struct bw *w = xcalloc(1, sizeof(*w)), *want = xcalloc(1, sizeof(*w));
	struct repl rp = { "abc", "abcdefgh", 0 };
	struct bc_buf out;
	char err[BC_ERRLEN];
	size_t n;

	bw_generic(w, 0);
	bw_generic(want, 1);
	n = w->nbits / 8;
	bc_buf_init(&out, BC_MAX_DIA);
	ck_assert_msg(bc_dia_rewrite(w->b, n, keep_blob, NULL, &out, err) ==
	    BC_OK, "%s", err);
	ck_assert_uint_eq(bc_buf_len(&out), n);
	ck_assert_int_eq(memcmp(bc_buf_data(&out), w->b, n), 0);
	bc_buf_reset(&out);
	ck_assert_msg(bc_dia_rewrite(w->b, n, repl_blob, &rp, &out, err) ==
	    BC_OK, "%s", err);
	ck_assert_uint_eq(rp.nblobs, 7);
	ck_assert_uint_eq(bc_buf_len(&out), want->nbits / 8);
	ck_assert_int_eq(memcmp(bc_buf_data(&out), want->b, want->nbits / 8),
	    0);
	bc_buf_free(&out);
	free(w);
	free(want);
}
END_TEST

/* Hostile streams: each fails with its code and a message naming it. */
struct hostile {
	const char *name;
	int code;
	const char *want;	/* in the message */
};

static const struct hostile hostiles[] = {
	{ "bad magic", BC_ERR_CORRUPT, "magic" },
	{ "not whole words", BC_ERR_CORRUPT, "32-bit words" },
	{ "garbage word after the last block", BC_ERR_CORRUPT,
	    "outside any block" },
	{ "undefined abbreviation", BC_ERR_CORRUPT, "not defined" },
	{ "nesting too deep", BC_ERR_LIMIT, "BC_MAX_DIA_DEPTH" },
	{ "too many abbreviations", BC_ERR_LIMIT, "BC_MAX_DIA_ABBREVS" },
	{ "too many operands", BC_ERR_LIMIT, "BC_MAX_DIA_ABBREV_OPS" },
	{ "Fixed(65)", BC_ERR_CORRUPT, "Fixed width 65" },
	{ "VBR(0)", BC_ERR_CORRUPT, "VBR width 0" },
	{ "VBR(33)", BC_ERR_CORRUPT, "VBR width 33" },
	{ "array of arrays", BC_ERR_CORRUPT, "array of arrays" },
	{ "array not second to last", BC_ERR_CORRUPT, "second to last" },
	{ "blob past the end", BC_ERR_CORRUPT, "blob" },
	{ "block longer than its content", BC_ERR_CORRUPT, "length word" },
	{ "block shorter than its content", BC_ERR_CORRUPT,
	    "past the end of its block" },
	{ "block past the end of the file", BC_ERR_CORRUPT,
	    "past the end of the file" },
	{ "nonzero padding", BC_ERR_CORRUPT, "padding" },
	{ "END_BLOCK outside blocks", BC_ERR_CORRUPT, "outside any block" },
	{ "DEFINE_ABBREV before SETBID", BC_ERR_CORRUPT, "before SETBID" },
	{ "VBR over 64 bits", BC_ERR_CORRUPT, "64 bits" },
	{ "abbreviation id width 0", BC_ERR_CORRUPT, "id width 0" },
	{ "abbreviation without operands", BC_ERR_CORRUPT, "without operands" },
	{ "unknown encoding", BC_ERR_CORRUPT, "encoding 6" },
	{ "record operands past the end", BC_ERR_CORRUPT, "record operands" },
	{ "array past the end", BC_ERR_CORRUPT, "array" },
	{ "block inside BLOCKINFO", BC_ERR_CORRUPT, "inside BLOCKINFO" },
	{ "abbreviated record in BLOCKINFO", BC_ERR_CORRUPT,
	    "record in BLOCKINFO" },
	{ "abbreviation starting with an array", BC_ERR_CORRUPT,
	    "starts with an array" },
	{ "array of zero-width elements", BC_ERR_CORRUPT, "zero-width" },
	{ "array of blobs", BC_ERR_CORRUPT, "array of blobs" },
	{ "VBR of empty chunks past 64 bits", BC_ERR_CORRUPT, "64 bits" },
};
#define NHOSTILE	(sizeof(hostiles) / sizeof(hostiles[0]))

/* Hostile stream k into w; returns its length in bytes. */
static size_t
bw_hostile(struct bw *w, int k)
{
	size_t at, stack[BC_MAX_DIA_DEPTH + 1];
	uint64_t one = 1, zero = 0;
	int i;

	bw_start(w);
	switch (k) {
	case 0:
		w->b[3] = 'X';
		break;
	case 1:
		at = bw_enter(w, 2, 9, 3);
		bw_end(w, 3, at);
		return w->nbits / 8 + 2;
	case 2:
		at = bw_enter(w, 2, 9, 3);
		bw_end(w, 3, at);
		bw_bits(w, 0, 32);
		break;
	case 3:
		at = bw_enter(w, 2, 9, 3);
		bw_bits(w, 5, 3);
		bw_end(w, 3, at);
		break;
	case 4:
		for (i = 0; i <= BC_MAX_DIA_DEPTH; i++)
			stack[i] = bw_enter(w, i == 0 ? 2 : 3, 9, 3);
		for (i = BC_MAX_DIA_DEPTH; i >= 0; i--)
			bw_end(w, 3, stack[i]);
		break;
	case 5:
		at = bw_enter(w, 2, 9, 3);
		for (i = 0; i <= BC_MAX_DIA_ABBREVS; i++)
			bw_abbrev(w, 3, "L1");
		bw_end(w, 3, at);
		break;
	case 6:
		at = bw_enter(w, 2, 9, 3);
		bw_abbrev(w, 3, "L1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 "
		    "F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1");
		bw_end(w, 3, at);
		break;
	case 7:
	case 8:
	case 9:
	case 10:
	case 11:
		at = bw_enter(w, 2, 9, 3);
		bw_abbrev(w, 3, k == 7 ? "L1 F65" : k == 8 ? "L1 V0" :
		    k == 9 ? "L1 V33" : k == 10 ? "L1 A A" : "L1 A F8 F8");
		bw_end(w, 3, at);
		break;
	case 12:
		at = bw_enter(w, 2, 9, 3);
		bw_abbrev(w, 3, "L1 B");
		bw_bits(w, 4, 3);
		bw_vbr(w, 1000, 6);
		bw_align(w);
		bw_bits(w, 0, 32);
		bw_end(w, 3, at);
		break;
	case 13:
	case 14:
		at = bw_enter(w, 2, 9, 3);
		bw_unabbrev(w, 3, 5, 1, &one);
		bw_end(w, 3, at);
		put32(w->b + at, get32(w->b + at) + (k == 13 ? 1u : -1u));
		if (k == 13)
			bw_bits(w, 0, 32);	/* room for a longer block */
		break;
	case 15:
		at = bw_enter(w, 2, 9, 3);
		bw_end(w, 3, at);
		put32(w->b + at, 2);
		break;
	case 16:
		at = bw_enter(w, 2, 9, 3);
		bw_end(w, 3, at);
		w->b[w->nbits / 8 - 1] = 0x80;
		break;
	case 17:
		bw_bits(w, 0, 2);
		bw_align(w);
		break;
	case 18:
		at = bw_enter(w, 2, 0, 2);
		bw_abbrev(w, 2, "L1 F8");
		bw_end(w, 2, at);
		break;
	case 19:
		at = bw_enter(w, 2, 9, 3);
		bw_bits(w, 3, 3);
		bw_vbr(w, 1, 6);
		bw_vbr(w, 1, 6);
		for (i = 0; i < 14; i++)
			bw_bits(w, 0x3f, 6);
		bw_bits(w, 0, 6);
		bw_end(w, 3, at);
		break;
	case 20:
		at = bw_enter(w, 2, 9, 0);
		bw_end(w, 0, at);
		break;
	case 21:
		at = bw_enter(w, 2, 9, 3);
		bw_bits(w, 2, 3);
		bw_vbr(w, 0, 5);
		bw_end(w, 3, at);
		break;
	case 22:
		at = bw_enter(w, 2, 9, 3);
		bw_bits(w, 2, 3);
		bw_vbr(w, 1, 5);
		bw_bits(w, 0, 1);
		bw_bits(w, 6, 3);
		bw_end(w, 3, at);
		break;
	case 23:
		at = bw_enter(w, 2, 9, 3);
		bw_bits(w, 3, 3);
		bw_vbr(w, 1, 6);
		bw_vbr(w, 1000000, 6);
		bw_end(w, 3, at);
		break;
	case 24:
		at = bw_enter(w, 2, 9, 3);
		bw_abbrev(w, 3, "L1 A F8");
		bw_bits(w, 4, 3);
		bw_vbr(w, 100000, 6);
		bw_end(w, 3, at);
		break;
	case 25:
		at = bw_enter(w, 2, 0, 2);
		bw_enter(w, 2, 9, 3);
		bw_end(w, 2, at);
		break;
	case 26:
		/* BLOCKINFO gives BLOCKINFO an abbreviation ... */
		at = bw_enter(w, 2, 0, 2);
		bw_unabbrev(w, 2, 1, 1, &zero);
		bw_abbrev(w, 2, "L1 F8");
		bw_end(w, 2, at);
		/* ... which a second BLOCKINFO uses */
		at = bw_enter(w, 2, 0, 3);
		bw_bits(w, 4, 3);
		bw_bits(w, 0, 8);
		bw_end(w, 3, at);
		break;
	case 27:
	case 28:
	case 29:
		at = bw_enter(w, 2, 9, 3);
		bw_abbrev(w, 3, k == 27 ? "A F8" : k == 28 ? "L1 A F0" :
		    "L1 A B");
		bw_end(w, 3, at);
		break;
	case 30:
		at = bw_enter(w, 2, 9, 3);
		bw_bits(w, 3, 3);
		bw_vbr(w, 1, 6);
		bw_vbr(w, 1, 6);
		for (i = 0; i < 13; i++)
			bw_bits(w, 0x20, 6);
		bw_bits(w, 0, 6);
		bw_end(w, 3, at);
		break;
	}
	return w->nbits / 8;
}

START_TEST(test_hostile)
{
	const struct hostile *h = &hostiles[_i];
	struct bw *w = xcalloc(1, sizeof(*w));
	struct bc_buf out;
	char err[BC_ERRLEN];
	size_t n;
	uint8_t *p;
	int r;

	n = bw_hostile(w, _i);
	p = xmalloc(n);
	memcpy(p, w->b, n);
	bc_buf_init(&out, BC_MAX_DIA);
	err[0] = '\0';
	r = bc_dia_rewrite(p, n, keep_blob, NULL, &out, err);
	ck_assert_msg(r == h->code, "%s: got %d (%s), want %d", h->name, r,
	    err, h->code);
	ck_assert_msg(strstr(err, h->want) != NULL, "%s: \"%s\" lacks \"%s\"",
	    h->name, err, h->want);
	ck_assert_uint_eq(bc_buf_len(&out), 0);
	bc_buf_free(&out);
	free(p);
	free(w);
}
END_TEST

/* Just under the limits is fine. */
START_TEST(test_at_limits)
{
	struct bw *w = xcalloc(1, sizeof(*w));
	struct bc_buf out;
	char err[BC_ERRLEN];
	size_t stack[BC_MAX_DIA_DEPTH], n;
	int i;

	bw_start(w);
	for (i = 0; i < BC_MAX_DIA_DEPTH; i++)
		stack[i] = bw_enter(w, i == 0 ? 2 : 7, 9, 7);
	for (i = 0; i < BC_MAX_DIA_ABBREVS; i++)
		bw_abbrev(w, 7, "L1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 "
		    "F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 F1 B");
	bw_bits(w, 4 + BC_MAX_DIA_ABBREVS - 1, 7);
	bw_bits(w, 0, 30);
	bw_blob(w, "hello");
	for (i = BC_MAX_DIA_DEPTH - 1; i >= 0; i--)
		bw_end(w, 7, stack[i]);
	n = w->nbits / 8;
	bc_buf_init(&out, BC_MAX_DIA);
	ck_assert_msg(bc_dia_rewrite(w->b, n, keep_blob, NULL, &out, err) ==
	    BC_OK, "%s", err);
	ck_assert_uint_eq(bc_buf_len(&out), n);
	ck_assert_int_eq(memcmp(bc_buf_data(&out), w->b, n), 0);
	bc_buf_free(&out);
	free(w);
}
END_TEST

static Suite *
dia_suite(void)
{
	Suite *s = suite_create("dia");
	TCase *tc = bc_tcase("clang", BC_TEST_TIMEOUT_SLOW);
	TCase *th = bc_tcase("streams", BC_TEST_TIMEOUT);

	tcase_add_loop_test(tc, test_identity, 0, (int)NFIXTURES);
	tcase_add_test(tc, test_appends);
	tcase_add_loop_test(tc, test_other_dir, 0, (int)NCASES);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_fixed_too_long);
	tcase_add_test(tc, test_vbr_grows);
	tcase_add_test(tc, test_out_max);
	tcase_add_test(tc, test_in_max);
	tcase_add_loop_test(tc, test_truncations, 0, (int)NFIXTURES);
	tcase_add_loop_test(tc, test_bit_flips, 0, (int)NFIXTURES);
	tcase_add_test(tc, test_block_length);
	suite_add_tcase(s, tc);
	tcase_add_test(th, test_generic);
	tcase_add_loop_test(th, test_hostile, 0, (int)NHOSTILE);
	tcase_add_test(th, test_at_limits);
	suite_add_tcase(s, th);
	return s;
}

int
main(void)
{
	return bc_unit_run(dia_suite());
}
