/*
 * hmap.c - header-map reader (see hmap.h).  The whole file is kept in a
 * bc_buf; the header, buckets and strings are read through bounds-checked
 * views of it, never by pointer arithmetic on the file's bytes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/pathmap.h"
#include "preproc/hmap.h"

#define HMAP_MAGIC 0x686D6170u
#define HMAP_HDR 24
#define HMAP_BUCKET 12

static uint32_t
rd32(const uint8_t *p, int swap)
{
	if (swap)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		    (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[1] << 8 | p[0];
}

static uint16_t
rd16(const uint8_t *p, int swap)
{
	return swap ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

int
bc_hmap_is_hmap(const void *p, size_t n)
{
	const uint8_t *b = p;

	return n >= 4 && (memcmp(b, "pamh", 4) == 0 ||
	    memcmp(b, "hmap", 4) == 0);
}

int
bc_hmap_load_mem(struct bc_hmap *m, const void *p, size_t n, char *err)
{
	struct bc_buf in;
	uint8_t b[HMAP_HDR];
	uint32_t strtab, nb;
	int swap;

	memset(m, 0, sizeof(*m));
	bc_buf_init(&m->file, BC_HMAP_MAX_SIZE);
	if (n <= HMAP_HDR || !bc_hmap_is_hmap(p, n))
		return bc_seterr(err, BC_ERR_CORRUPT, "not a header map");
	if (n > BC_HMAP_MAX_SIZE)
		return bc_seterr(err, BC_ERR_LIMIT, "header map too large");
	bc_buf_view(&in, p, n);
	(void)bc_buf_get(&in, b, sizeof(b));	/* n > HMAP_HDR */
	swap = memcmp(b, "hmap", 4) == 0;
	if (rd32(b, swap) != HMAP_MAGIC || rd16(b + 4, swap) != 1 ||
	    rd16(b + 6, swap) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "header map: bad version or reserved field");
	strtab = rd32(b + 8, swap);
	nb = rd32(b + 16, swap);
	if (nb == 0 || (nb & (nb - 1)) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "header map: bucket count %lu is not a power of two",
		    (unsigned long)nb);
	if ((uint64_t)nb * HMAP_BUCKET > (uint64_t)(n - HMAP_HDR))
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "header map: file too short for its buckets");
	if ((size_t)strtab > n)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "header map: string table offset past the end");
	if (bc_buf_put(&m->file, p, n) != BC_OK)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	m->swap = swap;
	m->strtab = strtab;
	m->nbuckets = nb;
	return BC_OK;
}

int
bc_hmap_load(struct bc_hmap *m, const char *path, char *err)
{
	struct bc_buf b;
	int r;

	memset(m, 0, sizeof(*m));
	bc_buf_init(&b, BC_HMAP_MAX_SIZE);
	r = bc_read_file(path, BC_HMAP_MAX_SIZE, &b, err);
	if (r == BC_OK)
		r = bc_hmap_load_mem(m, bc_buf_data(&b), bc_buf_len(&b), err);
	bc_buf_free(&b);
	return r;
}

void
bc_hmap_free(struct bc_hmap *m)
{
	bc_buf_free(&m->file);
	memset(m, 0, sizeof(*m));
}

/* The NUL-terminated string at string-table offset off, or NULL. */
static const char *
str_at(const struct bc_hmap *m, uint32_t off, size_t *len)
{
	struct bc_buf v, s;
	size_t start = (size_t)m->strtab + off;

	if (start < m->strtab)
		return NULL;
	bc_buf_view(&v, bc_buf_data(&m->file), bc_buf_len(&m->file));
	if (bc_buf_skip(&v, start) != BC_OK ||
	    bc_buf_get_until(&v, '\0', &s) != BC_OK)
		return NULL;
	*len = bc_buf_avail(&s);
	return (const char *)bc_buf_ptr(&s);
}

/* Bucket i's key, prefix and suffix offsets into off[]: BC_OK, or
 * BC_ERR_CORRUPT if the bucket is not in the file. */
static int
bucket(const struct bc_hmap *m, uint32_t i, uint32_t off[3])
{
	struct bc_buf v;
	uint8_t b[HMAP_BUCKET];
	int k;

	bc_buf_view(&v, bc_buf_data(&m->file), bc_buf_len(&m->file));
	if (bc_buf_skip(&v, HMAP_HDR + (size_t)i * HMAP_BUCKET) != BC_OK ||
	    bc_buf_get(&v, b, sizeof(b)) != BC_OK)
		return BC_ERR_CORRUPT;
	for (k = 0; k < 3; k++)
		off[k] = rd32(b + 4 * k, m->swap);
	return BC_OK;
}

/* One bucket's strings, for the walks over every bucket. */
struct hmap_ent {
	const char *key, *pre, *suf;
	size_t kl, pl, sl;
};

/* Bucket i's strings into e: BC_OK, or BC_ERR_NOENT if the bucket is
 * empty, not in the file, or names a string that is not (a bad bucket
 * is a miss either way). */
static int
entry_at(const struct bc_hmap *m, uint32_t i, struct hmap_ent *e)
{
	uint32_t off[3];

	if (bucket(m, i, off) != BC_OK || off[0] == 0)
		return BC_ERR_NOENT;
	e->key = str_at(m, off[0], &e->kl);
	e->pre = str_at(m, off[1], &e->pl);
	e->suf = str_at(m, off[2], &e->sl);
	if (e->key == NULL || e->pre == NULL || e->suf == NULL)
		return BC_ERR_NOENT;
	return BC_OK;
}

static unsigned char
lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static int
eq_nocase(const char *a, size_t an, const char *b)
{
	size_t i;

	if (strlen(b) != an)
		return 0;
	for (i = 0; i < an; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return 0;
	return 1;
}

int
bc_hmap_lookup(const struct bc_hmap *m, const char *key, char **out)
{
	uint32_t h = 0, i, probe;
	const unsigned char *k;

	*out = NULL;
	if (bc_buf_len(&m->file) == 0)
		return BC_ERR_NOENT;
	for (k = (const unsigned char *)key; *k != '\0'; k++)
		h += (uint32_t)lower(*k) * 13u;
	for (probe = 0; probe < m->nbuckets; probe++) {
		uint32_t off[3];
		const char *ks, *ps, *ss;
		size_t kl, pl, sl;

		i = (h + probe) & (m->nbuckets - 1);
		if (bucket(m, i, off) != BC_OK || off[0] == 0)
			return BC_ERR_NOENT;
		ks = str_at(m, off[0], &kl);
		if (ks == NULL || !eq_nocase(ks, kl, key))
			continue;
		ps = str_at(m, off[1], &pl);
		ss = str_at(m, off[2], &sl);
		if (ps == NULL || ss == NULL)
			return BC_ERR_NOENT;
		if ((*out = malloc(pl + sl + 1)) == NULL)
			return BC_ERR_ALLOC;
		memcpy(*out, ps, pl);
		memcpy(*out + pl, ss, sl);
		(*out)[pl + sl] = '\0';
		return BC_OK;
	}
	return BC_ERR_NOENT;
}

static void
wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Append s (with its NUL) to the string table; its offset in *off. */
static int
tab_put(struct bc_buf *tab, const char *a, const char *b, uint32_t *off)
{
	if (bc_buf_len(tab) > UINT32_MAX - 1)
		return BC_ERR_LIMIT;
	*off = (uint32_t)bc_buf_len(tab);
	if (bc_buf_put_str(tab, a) != BC_OK ||
	    (b != NULL && bc_buf_put_str(tab, b) != BC_OK) ||
	    bc_buf_put_u8(tab, 0) != BC_OK)
		return BC_ERR_LIMIT;
	return BC_OK;
}

int
bc_hmap_rebase(const struct bc_hmap *m, const char *prefix,
    struct bc_buf *out, char *err)
{
	struct bc_buf tab;
	uint8_t *hdr;
	uint32_t i, used = 0, maxval = 0;
	size_t nb = m->nbuckets, start = bc_buf_len(out);
	int r = BC_OK;

	bc_buf_init(&tab, BC_HMAP_MAX_SIZE);
	(void)bc_buf_put_u8(&tab, 0);	/* offset 0 = empty bucket */
	if (bc_buf_reserve(out, HMAP_HDR + nb * HMAP_BUCKET, &hdr) != BC_OK) {
		bc_buf_free(&tab);
		return bc_seterr(err, BC_ERR_LIMIT, "header map too large");
	}
	memset(hdr, 0, HMAP_HDR + nb * HMAP_BUCKET);
	for (i = 0; i < nb && r == BC_OK; i++) {
		struct hmap_ent e;
		uint32_t k2, p2, s2;

		if (entry_at(m, i, &e) != BC_OK)
			continue;
		r = tab_put(&tab, e.key, NULL, &k2);
		if (r == BC_OK && e.pre[0] == '/')
			r = tab_put(&tab, prefix, e.pre, &p2);
		else if (r == BC_OK)
			r = tab_put(&tab, e.pre, NULL, &p2);
		if (r == BC_OK)
			r = tab_put(&tab, e.suf, NULL, &s2);
		if (r != BC_OK)
			break;
		wr32le(hdr + HMAP_HDR + (size_t)i * HMAP_BUCKET, k2);
		wr32le(hdr + HMAP_HDR + (size_t)i * HMAP_BUCKET + 4, p2);
		wr32le(hdr + HMAP_HDR + (size_t)i * HMAP_BUCKET + 8, s2);
		used++;
		if (e.pl + e.sl + (e.pre[0] == '/' ? strlen(prefix) : 0) >
		    maxval)
			maxval = (uint32_t)(e.pl + e.sl + (e.pre[0] == '/' ?
			    strlen(prefix) : 0));
	}
	if (r != BC_OK) {
		bc_buf_free(&tab);
		return bc_seterr(err, BC_ERR_LIMIT, "header map too large");
	}
	memcpy(hdr, "pamh", 4);
	hdr[4] = 1;
	wr32le(hdr + 8, (uint32_t)(HMAP_HDR + nb * HMAP_BUCKET));
	wr32le(hdr + 12, used);
	wr32le(hdr + 16, (uint32_t)nb);
	wr32le(hdr + 20, maxval);
	(void)bc_buf_commit(out, HMAP_HDR + nb * HMAP_BUCKET);
	if (bc_buf_put(out, bc_buf_data(&tab), bc_buf_len(&tab)) != BC_OK) {
		bc_buf_free(&tab);
		(void)start;
		return bc_seterr(err, BC_ERR_LIMIT, "header map too large");
	}
	bc_buf_free(&tab);
	return BC_OK;
}

void
bc_hmap_digest(const struct bc_hmap *m, char *(*map)(void *ctx,
    const char *path), void *ctx, uint8_t out[BC_HASH_LEN])
{
	struct bc_hash h;
	char num[32];
	uint32_t i;

	bc_hash_init(&h);
	bc_hash_update_str(&h, "boltcc-hmap-digest-v1");
	snprintf(num, sizeof(num), "buckets %lu", (unsigned long)m->nbuckets);
	bc_hash_update_str(&h, num);
	for (i = 0; i < m->nbuckets; i++) {
		struct hmap_ent e;
		char *value, *mapped;

		if (entry_at(m, i, &e) != BC_OK)
			continue;
		value = xasprintf("%s%s", e.pre, e.suf);
		mapped = value[0] == '/' ? map(ctx, value) : NULL;
		snprintf(num, sizeof(num), "bucket %lu", (unsigned long)i);
		bc_hash_update_str(&h, num);
		bc_hash_update_str(&h, e.key);
		bc_hash_update_str(&h, mapped != NULL ? mapped : value);
		free(mapped);
		free(value);
	}
	bc_hash_final(&h, out);
}

static char *
map_value(void *ctx, const char *path)
{
	return bc_pathmap_path(ctx, path);
}

int
bc_hmap_mapped_digest(const void *p, size_t n, const struct bc_pathmap *pm,
    uint8_t out[32])
{
	struct bc_hmap m;
	char e[BC_ERRLEN];

	if (!bc_hmap_is_hmap(p, n) || bc_hmap_load_mem(&m, p, n, e) != BC_OK)
		return BC_ERR_NOENT;
	bc_hmap_digest(&m, map_value, (void *)pm, out);
	bc_hmap_free(&m);
	return BC_OK;
}
