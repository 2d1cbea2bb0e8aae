/*
 * blob.c - the cache's blob format (blob.h): an entry encoded as zstd
 * frames under a SHA-256 checksum, and every check a reader makes before
 * it trusts or allocates anything.  No files and no index here: the
 * store (store.c) and the client's local tier (client/hitcache.c) read
 * and write the bytes.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <zstd.h>

#include "common/buf.h"
#include "common/codec.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "cache/blob.h"
#include "cache/store_int.h"

#define NSECT BC_CACHE_NSECT
#define COMP_ZSTD 2

static const char magic[4] = { 'B', 'C', 'C', 'E' };

static const size_t sect_max[NSECT] = {
	BC_MAX_STDERR, BC_MAX_STDOUT, BC_MAX_OBJECT, BC_MAX_DIA, BC_MAX_DOTD
};

/* The header of a blob, as read (read_header). */
struct hdr {
	size_t len;			/* BC_CACHE_HDR_LEN or _V1 */
	uint64_t size[NSECT];
	uint64_t zlen[NSECT];
	uint64_t compile_ms;
	uint64_t payload_len;
	char origin[BC_CACHE_ORIGIN_LEN + 1];
};

static struct bc_buf *
sect(struct bc_cache_entry *e, int i)
{
	struct bc_buf *v[NSECT] = { &e->serr, &e->sout, &e->obj, &e->dia,
	    &e->dotd };

	return v[i];
}

static const struct bc_buf *
csect(const struct bc_cache_entry *e, int i)
{
	return sect((struct bc_cache_entry *)(uintptr_t)e, i);
}

void
bc_cache_entry_init(struct bc_cache_entry *e)
{
	int i;

	for (i = 0; i < NSECT; i++)
		bc_buf_init(sect(e, i), sect_max[i]);
	e->compile_ms = 0;
	e->origin[0] = '\0';
}

void
bc_cache_entry_free(struct bc_cache_entry *e)
{
	int i;

	for (i = 0; i < NSECT; i++)
		bc_buf_free(sect(e, i));
	bc_cache_entry_init(e);
}

int64_t
bc_blob_entry_len(const struct bc_cache_entry *e)
{
	int64_t n = 0;
	int i;

	for (i = 0; i < NSECT; i++)
		n += (int64_t)bc_buf_len(csect(e, i));
	return n;
}

void
bc_cache_blob_init(struct bc_cache_blob *b)
{
	bc_buf_init(&b->data, BC_BUF_CEILING);
	memset(b->size, 0, sizeof(b->size));
	memset(b->off, 0, sizeof(b->off));
	memset(b->zlen, 0, sizeof(b->zlen));
	b->compile_ms = 0;
	b->created = 0;
	b->origin[0] = '\0';
}

void
bc_cache_blob_free(struct bc_cache_blob *b)
{
	bc_buf_free(&b->data);
	bc_cache_blob_init(b);
}

/* ---------------------------------------------------------------------
 * writing
 */

/* The origin field: 16 hex digits, or 16 NUL bytes when unknown. */
static int
put_origin(struct bc_buf *hdr, const char *origin)
{
	uint8_t o[BC_CACHE_ORIGIN_LEN];
	size_t n = strnlen(origin, BC_CACHE_ORIGIN_LEN);

	memset(o, 0, sizeof(o));
	if (n == BC_CACHE_ORIGIN_LEN)
		memcpy(o, origin, n);
	return bc_buf_put(hdr, o, sizeof(o));
}

/* Each non-empty section of e as one zstd frame in z[i]; *total: the
 * bytes of all frames. */
static int
compress_sections(const struct bc_cache_entry *e, int level,
    struct bc_buf z[NSECT], size_t *total, char *err)
{
	char sub[BC_ERRLEN];
	int i, r = BC_OK;

	*total = 0;
	for (i = 0; i < NSECT; i++)
		if (bc_buf_len(csect(e, i)) > sect_max[i])
			r = bc_seterr(err, BC_ERR_LIMIT,
			    "cache entry section %d too large", i);
	sub[0] = '\0';
	for (i = 0; i < NSECT && r == BC_OK; i++) {
		if (bc_buf_len(csect(e, i)) == 0)
			continue;
		r = bc_zstd_compress(bc_buf_data(csect(e, i)),
		    bc_buf_len(csect(e, i)), level, &z[i], sub);
		if (r != BC_OK)
			r = bc_seterr(err, r, "encoding cache blob: %s", sub);
		*total += bc_buf_len(&z[i]);
	}
	return r;
}

/* The header of e's blob (version 2) into hdr. */
static int
put_header(struct bc_buf *hdr, const struct bc_cache_entry *e,
    const struct bc_buf z[NSECT], size_t total, char *err)
{
	int i, r;

	(void)bc_buf_put(hdr, magic, sizeof(magic));
	(void)bc_buf_put_u8(hdr, BC_CACHE_BLOB_VERSION >> 8);
	(void)bc_buf_put_u8(hdr, BC_CACHE_BLOB_VERSION & 0xff);
	(void)bc_buf_put_u8(hdr, COMP_ZSTD);
	(void)bc_buf_put_u8(hdr, NSECT);
	for (i = 0; i < NSECT; i++)
		(void)bc_buf_put_u64be(hdr, bc_buf_len(csect(e, i)));
	for (i = 0; i < NSECT; i++)
		(void)bc_buf_put_u64be(hdr, bc_buf_len(&z[i]));
	(void)bc_buf_put_u64be(hdr, (uint64_t)(e->compile_ms > 0 ?
	    e->compile_ms : 0));
	(void)bc_buf_put_u64be(hdr, total);
	r = put_origin(hdr, e->origin);
	if (r != BC_OK || bc_buf_len(hdr) != BC_CACHE_HDR_LEN)
		return bc_seterr(err, BC_ERR_INTERNAL, "cache header size");
	return BC_OK;
}

/* SHA-256 over the header and the frames. */
static void
checksum(const struct bc_buf *hdr, const struct bc_buf z[NSECT],
    uint8_t sum[BC_HASH_LEN])
{
	struct bc_hash h;
	int i;

	bc_hash_init(&h);
	bc_hash_update(&h, bc_buf_data(hdr), bc_buf_len(hdr));
	for (i = 0; i < NSECT; i++)
		bc_hash_update(&h, bc_buf_data(&z[i]), bc_buf_len(&z[i]));
	bc_hash_final(&h, sum);
}

int
bc_cache_blob_encode(const struct bc_cache_entry *e, int level,
    struct bc_buf *out, char *err)
{
	struct bc_buf z[NSECT], hdr;
	uint8_t sum[BC_HASH_LEN];
	size_t start = bc_buf_len(out), total;
	int i, r;

	for (i = 0; i < NSECT; i++)
		bc_buf_init(&z[i], BC_BUF_CEILING);
	bc_buf_init(&hdr, BC_CACHE_HDR_LEN);
	r = compress_sections(e, level, z, &total, err);
	if (r == BC_OK)
		r = put_header(&hdr, e, z, total, err);
	if (r == BC_OK) {
		checksum(&hdr, z, sum);
		r = bc_buf_put(out, bc_buf_data(&hdr), bc_buf_len(&hdr));
		if (r == BC_OK)
			r = bc_buf_put(out, sum, sizeof(sum));
		for (i = 0; i < NSECT && r == BC_OK; i++)
			r = bc_buf_put(out, bc_buf_data(&z[i]), bc_buf_len(&z[i]));
		if (r != BC_OK) {
			if (out->off <= start)
				out->len = start;
			r = bc_seterr(err, r, "cache blob too large");
		}
	}
	for (i = 0; i < NSECT; i++)
		bc_buf_free(&z[i]);
	bc_buf_free(&hdr);
	return r;
}

/* ---------------------------------------------------------------------
 * reading
 */

/* Read the origin field into out ("" for NULs); BC_ERR_CORRUPT unless
 * it is 16 lowercase hex digits or 16 NULs. */
static int
get_origin(struct bc_buf *in, char out[BC_CACHE_ORIGIN_LEN + 1], char *err)
{
	uint8_t o[BC_CACHE_ORIGIN_LEN];
	size_t i, zeros = 0;

	out[0] = '\0';
	if (bc_buf_get(in, o, sizeof(o)) != BC_OK)
		return bc_seterr(err, BC_ERR_CORRUPT, "cache blob: no origin");
	for (i = 0; i < sizeof(o); i++) {
		if (o[i] == 0)
			zeros++;
		else if (!((o[i] >= '0' && o[i] <= '9') ||
		    (o[i] >= 'a' && o[i] <= 'f')))
			break;
	}
	if (zeros == sizeof(o))
		return BC_OK;
	if (zeros != 0 || i != sizeof(o))
		return bc_seterr(err, BC_ERR_CORRUPT, "cache blob: bad origin");
	memcpy(out, o, sizeof(o));
	out[sizeof(o)] = '\0';
	return BC_OK;
}

/* Magic, version (and so the header's length), compression and section
 * count; the blob is known to hold BC_CACHE_BLOB_MIN bytes. */
static int
read_prefix(struct bc_buf *in, size_t n, struct hdr *h, char *err)
{
	uint8_t m[4], vhi, vlo, comp, nsect;
	unsigned version;

	(void)bc_buf_get(in, m, sizeof(m));
	(void)bc_buf_get_u8(in, &vhi);
	(void)bc_buf_get_u8(in, &vlo);
	(void)bc_buf_get_u8(in, &comp);
	(void)bc_buf_get_u8(in, &nsect);
	if (memcmp(m, magic, sizeof(magic)) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT, "not a cache blob (magic)");
	version = (unsigned)vhi << 8 | vlo;
	if (version != 1 && version != BC_CACHE_BLOB_VERSION)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob version %u not supported", version);
	h->len = version == 1 ? BC_CACHE_HDR_LEN_V1 : BC_CACHE_HDR_LEN;
	if (n < h->len + BC_HASH_LEN)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob of %zu bytes is shorter than its header", n);
	if (comp != COMP_ZSTD || nsect != NSECT)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob: compression %u, %u sections", comp, nsect);
	return BC_OK;
}

/* The header of the n-byte blob at p, each field checked on its own
 * (limits, zlen 0 iff size 0, the origin's digits). */
static int
read_header(const void *p, size_t n, struct hdr *h, char *err)
{
	struct bc_buf in;
	int i, r;

	if (n < BC_CACHE_BLOB_MIN)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob of %zu bytes is shorter than its header", n);
	bc_buf_view(&in, p, n);
	if ((r = read_prefix(&in, n, h, err)) != BC_OK)
		return r;
	for (i = 0; i < NSECT; i++) {
		(void)bc_buf_get_u64be(&in, &h->size[i]);
		if (h->size[i] > sect_max[i])
			return bc_seterr(err, BC_ERR_CORRUPT,
			    "cache blob section %d of %llu bytes exceeds its "
			    "limit", i, (unsigned long long)h->size[i]);
	}
	for (i = 0; i < NSECT; i++) {
		(void)bc_buf_get_u64be(&in, &h->zlen[i]);
		if (h->zlen[i] > n || (h->zlen[i] == 0) != (h->size[i] == 0))
			return bc_seterr(err, BC_ERR_CORRUPT,
			    "cache blob section %d: bad compressed size", i);
	}
	(void)bc_buf_get_u64be(&in, &h->compile_ms);
	(void)bc_buf_get_u64be(&in, &h->payload_len);
	h->origin[0] = '\0';
	if (h->len == BC_CACHE_HDR_LEN)
		return get_origin(&in, h->origin, err);
	return BC_OK;
}

/* The payload is as long as the header says, and its frames fill it. */
static int
check_payload_len(size_t n, const struct hdr *h, char *err)
{
	uint64_t ztotal = 0;
	int i;

	for (i = 0; i < NSECT; i++)
		ztotal += h->zlen[i];
	if (h->payload_len != n - h->len - BC_HASH_LEN ||
	    ztotal != h->payload_len)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob payload is %zu bytes, header says %llu",
		    n - h->len - BC_HASH_LEN,
		    (unsigned long long)h->payload_len);
	return BC_OK;
}

static int
check_sum(const uint8_t *p, const struct hdr *h, char *err)
{
	uint8_t sum[BC_HASH_LEN];
	struct bc_hash hs;

	bc_hash_init(&hs);
	bc_hash_update(&hs, p, h->len);
	bc_hash_update(&hs, p + h->len + BC_HASH_LEN, (size_t)h->payload_len);
	bc_hash_final(&hs, sum);
	if (memcmp(sum, p + h->len, BC_HASH_LEN) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob checksum mismatch");
	return BC_OK;
}

/* Each frame spans exactly its zlen and declares exactly its size;
 * off[i]: where frame i starts. */
static int
check_frames(const uint8_t *p, const struct hdr *h, size_t off[NSECT],
    char *err)
{
	size_t pos = h->len + BC_HASH_LEN;
	int i;

	for (i = 0; i < NSECT; i++) {
		off[i] = pos;
		if (h->zlen[i] > 0) {
			const uint8_t *f = p + pos;
			unsigned long long cs = ZSTD_getFrameContentSize(f,
			    (size_t)h->zlen[i]);
			size_t fs = ZSTD_findFrameCompressedSize(f,
			    (size_t)h->zlen[i]);

			if (cs != h->size[i] || ZSTD_isError(fs) ||
			    fs != h->zlen[i])
				return bc_seterr(err, BC_ERR_CORRUPT,
				    "cache blob section %d: frame does not "
				    "match its header", i);
		}
		pos += (size_t)h->zlen[i];
	}
	return BC_OK;
}

int
bc_blob_verify(const void *p, size_t n, struct bc_cache_blob *b, char *err)
{
	size_t off[NSECT];
	struct hdr h;
	int i, r;

	if ((r = read_header(p, n, &h, err)) != BC_OK ||
	    (r = check_payload_len(n, &h, err)) != BC_OK ||
	    (r = check_sum(p, &h, err)) != BC_OK ||
	    (r = check_frames(p, &h, off, err)) != BC_OK)
		return r;
	for (i = 0; i < NSECT; i++) {
		b->size[i] = h.size[i];
		b->off[i] = off[i];
		b->zlen[i] = (size_t)h.zlen[i];
	}
	b->compile_ms = (int64_t)(h.compile_ms > INT64_MAX ? INT64_MAX :
	    h.compile_ms);
	memcpy(b->origin, h.origin, sizeof(b->origin));
	return BC_OK;
}

int
bc_cache_blob_check(const void *p, size_t n, struct bc_cache_blob *b,
    char *err)
{
	int r;

	bc_cache_blob_free(b);
	r = bc_blob_verify(p, n, b, err);
	if (r == BC_OK && (r = bc_buf_put(&b->data, p, n)) != BC_OK)
		r = bc_seterr(err, r, "cache blob: out of memory");
	if (r != BC_OK)
		bc_cache_blob_free(b);
	return r;
}

/* Expand the frames of the verified blob at p (b's sizes and offsets)
 * into e's sections; on error e is emptied. */
static int
expand(const uint8_t *p, const struct bc_cache_blob *b,
    struct bc_cache_entry *e, char *err)
{
	char sub[BC_ERRLEN];
	int i, r;

	for (i = 0; i < NSECT; i++) {
		if (b->zlen[i] == 0)
			continue;
		sub[0] = '\0';
		r = bc_zstd_decompress(p + b->off[i], b->zlen[i],
		    (size_t)b->size[i], sect(e, i), sub);
		if (r != BC_OK || bc_buf_len(sect(e, i)) != b->size[i]) {
			bc_cache_entry_free(e);
			if (r == BC_ERR_ALLOC)
				return bc_seterr(err, r, "out of memory");
			return bc_seterr(err, BC_ERR_CORRUPT,
			    "cache blob section %d: %s", i, r != BC_OK ? sub :
			    "wrong expanded size");
		}
	}
	return BC_OK;
}

int
bc_cache_blob_expand(const struct bc_cache_blob *b, struct bc_cache_entry *e,
    char *err)
{
	bc_cache_entry_init(e);
	e->compile_ms = b->compile_ms;
	memcpy(e->origin, b->origin, sizeof(e->origin));
	return expand(bc_buf_data(&b->data), b, e, err);
}

int
bc_cache_blob_decode(const void *p, size_t n, struct bc_cache_entry *e,
    char *err)
{
	struct bc_cache_blob b;
	int r;

	bc_cache_entry_init(e);
	bc_cache_blob_init(&b);		/* its data stays empty: p is read */
	if ((r = bc_blob_verify(p, n, &b, err)) != BC_OK)
		return r;
	e->compile_ms = b.compile_ms;
	memcpy(e->origin, b.origin, sizeof(e->origin));
	return expand(p, &b, e, err);
}
