/*
 * store.c - blobs, sqlite index, LRU eviction, reconciliation and
 * counters of the artifact cache (see store.h and doc/cache.md).
 *
 * Order of writes, so that a crash (SIGKILL, power loss) at any point
 * leaves nothing that could be served wrong: the blob goes to a temp file
 * and is renamed into place, and only then is its row inserted; eviction
 * deletes rows first and files after the commit (an operator's clear and
 * evict-older-than the other way round, so that a crash never brings a
 * removed entry back: see store.h).  The worst a crash
 * leaves is a blob without a row or a row without a blob; both are found
 * at start-up (bc_cache_reconcile) and on read (a missing blob is a miss,
 * a bad one is corrupt: removed, counted, never served).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zstd.h>

#include "common/buf.h"
#include "common/codec.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/util.h"
#include "cache/store.h"

#define NSECT 5
#define BUSY_TIMEOUT_MS 10000
#define EVICT_BATCH 64
/* 1: blobs/ab/cd/<key>; 2: blobs/ab/<key> (no directory per new key) */
#define SCHEMA_VERSION 2
#define STR_(x) #x
#define STR(x) STR_(x)

static const char magic[4] = { 'B', 'C', 'C', 'E' };

struct bc_cache {
	char *dir;
	char *blobdir;
	char *lockpath;		/* CACHEDIR/inflight.lock */
	int lockfd;		/* opened on first use, -1 before */
	sqlite3 *db;
	uint64_t max_bytes;
};

/* ---------------------------------------------------------------------
 * entries and blobs
 */

static const size_t sect_max[NSECT] = {
	BC_MAX_STDERR, BC_MAX_STDOUT, BC_MAX_OBJECT, BC_MAX_DIA, BC_MAX_DOTD
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

int
bc_cache_blob_encode(const struct bc_cache_entry *e, int level,
    struct bc_buf *out, char *err)
{
	struct bc_buf z[NSECT], hdr;
	uint8_t sum[BC_HASH_LEN];
	struct bc_hash h;
	size_t start = bc_buf_len(out), total = 0;
	char sub[BC_ERRLEN];
	int i, r = BC_OK;

	for (i = 0; i < NSECT; i++) {
		bc_buf_init(&z[i], BC_BUF_CEILING);
		if (bc_buf_len(csect(e, i)) > sect_max[i])
			r = bc_seterr(err, BC_ERR_LIMIT,
			    "cache entry section %d too large", i);
	}
	sub[0] = '\0';
	for (i = 0; i < NSECT && r == BC_OK; i++) {
		if (bc_buf_len(csect(e, i)) == 0)
			continue;
		r = bc_zstd_compress(bc_buf_data(csect(e, i)),
		    bc_buf_len(csect(e, i)), level, &z[i], sub);
		if (r != BC_OK)
			r = bc_seterr(err, r, "encoding cache blob: %s", sub);
		total += bc_buf_len(&z[i]);
	}
	bc_buf_init(&hdr, BC_CACHE_HDR_LEN);
	if (r == BC_OK) {
		(void)bc_buf_put(&hdr, magic, sizeof(magic));
		(void)bc_buf_put_u8(&hdr, BC_CACHE_BLOB_VERSION >> 8);
		(void)bc_buf_put_u8(&hdr, BC_CACHE_BLOB_VERSION & 0xff);
		(void)bc_buf_put_u8(&hdr, 2);
		(void)bc_buf_put_u8(&hdr, NSECT);
		for (i = 0; i < NSECT; i++)
			(void)bc_buf_put_u64be(&hdr, bc_buf_len(csect(e, i)));
		for (i = 0; i < NSECT; i++)
			(void)bc_buf_put_u64be(&hdr, bc_buf_len(&z[i]));
		(void)bc_buf_put_u64be(&hdr, (uint64_t)(e->compile_ms > 0 ?
		    e->compile_ms : 0));
		(void)bc_buf_put_u64be(&hdr, total);
		r = put_origin(&hdr, e->origin);
		if (r != BC_OK || bc_buf_len(&hdr) != BC_CACHE_HDR_LEN)
			r = bc_seterr(err, BC_ERR_INTERNAL, "cache header size");
	}
	if (r == BC_OK) {
		bc_hash_init(&h);
		bc_hash_update(&h, bc_buf_data(&hdr), bc_buf_len(&hdr));
		for (i = 0; i < NSECT; i++)
			bc_hash_update(&h, bc_buf_data(&z[i]), bc_buf_len(&z[i]));
		bc_hash_final(&h, sum);
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

/* Verify everything but the frames' contents; fills sizes and offsets. */
static int
blob_check(const void *p, size_t n, uint64_t size[NSECT], size_t off[NSECT],
    size_t zlen[NSECT], int64_t *ms_out, char origin[BC_CACHE_ORIGIN_LEN + 1],
    char *err)
{
	struct bc_buf in;
	uint64_t zl[NSECT], ms, plen, ztotal = 0;
	uint8_t m[4], vhi, vlo, comp, nsect, sum[BC_HASH_LEN];
	struct bc_hash h;
	size_t pos, hlen;
	unsigned version;
	int i, r;

	if (n < BC_CACHE_BLOB_MIN)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob of %zu bytes is shorter than its header", n);
	bc_buf_view(&in, p, n);
	(void)bc_buf_get(&in, m, sizeof(m));
	(void)bc_buf_get_u8(&in, &vhi);
	(void)bc_buf_get_u8(&in, &vlo);
	(void)bc_buf_get_u8(&in, &comp);
	(void)bc_buf_get_u8(&in, &nsect);
	if (memcmp(m, magic, sizeof(magic)) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT, "not a cache blob (magic)");
	version = (unsigned)vhi << 8 | vlo;
	if (version != 1 && version != BC_CACHE_BLOB_VERSION)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob version %u not supported", version);
	hlen = version == 1 ? BC_CACHE_HDR_LEN_V1 : BC_CACHE_HDR_LEN;
	if (n < hlen + BC_HASH_LEN)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob of %zu bytes is shorter than its header", n);
	if (comp != 2 || nsect != NSECT)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob: compression %u, %u sections", comp, nsect);
	for (i = 0; i < NSECT; i++) {
		(void)bc_buf_get_u64be(&in, &size[i]);
		if (size[i] > sect_max[i])
			return bc_seterr(err, BC_ERR_CORRUPT,
			    "cache blob section %d of %llu bytes exceeds its "
			    "limit", i, (unsigned long long)size[i]);
	}
	for (i = 0; i < NSECT; i++) {
		(void)bc_buf_get_u64be(&in, &zl[i]);
		if (zl[i] > n || (zl[i] == 0) != (size[i] == 0))
			return bc_seterr(err, BC_ERR_CORRUPT,
			    "cache blob section %d: bad compressed size", i);
		ztotal += zl[i];
	}
	(void)bc_buf_get_u64be(&in, &ms);
	(void)bc_buf_get_u64be(&in, &plen);
	origin[0] = '\0';
	if (version > 1 && (r = get_origin(&in, origin, err)) != BC_OK)
		return r;
	if (plen != n - hlen - BC_HASH_LEN || ztotal != plen)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob payload is %zu bytes, header says %llu",
		    n - hlen - BC_HASH_LEN, (unsigned long long)plen);
	bc_hash_init(&h);
	bc_hash_update(&h, p, hlen);
	bc_hash_update(&h, (const uint8_t *)p + hlen + BC_HASH_LEN,
	    (size_t)plen);
	bc_hash_final(&h, sum);
	if (memcmp(sum, (const uint8_t *)p + hlen, BC_HASH_LEN) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "cache blob checksum mismatch");
	pos = hlen + BC_HASH_LEN;
	for (i = 0; i < NSECT; i++) {
		off[i] = pos;
		zlen[i] = (size_t)zl[i];
		if (zl[i] > 0) {
			const uint8_t *f = (const uint8_t *)p + pos;
			unsigned long long cs = ZSTD_getFrameContentSize(f,
			    (size_t)zl[i]);
			size_t fs = ZSTD_findFrameCompressedSize(f, (size_t)zl[i]);

			if (cs != size[i] || ZSTD_isError(fs) || fs != zl[i])
				return bc_seterr(err, BC_ERR_CORRUPT,
				    "cache blob section %d: frame does not "
				    "match its header", i);
		}
		pos += (size_t)zl[i];
	}
	*ms_out = (int64_t)(ms > INT64_MAX ? INT64_MAX : ms);
	return BC_OK;
}

int
bc_cache_blob_check(const void *p, size_t n, struct bc_cache_blob *b,
    char *err)
{
	int r;

	bc_cache_blob_free(b);
	r = blob_check(p, n, b->size, b->off, b->zlen, &b->compile_ms,
	    b->origin, err);
	if (r == BC_OK && (r = bc_buf_put(&b->data, p, n)) != BC_OK)
		r = bc_seterr(err, r, "cache blob: out of memory");
	if (r != BC_OK)
		bc_cache_blob_free(b);
	return r;
}

static int
expand(const uint8_t *p, const uint64_t size[NSECT], const size_t off[NSECT],
    const size_t zlen[NSECT], struct bc_cache_entry *e, char *err)
{
	char sub[BC_ERRLEN];
	int i, r;

	for (i = 0; i < NSECT; i++) {
		if (zlen[i] == 0)
			continue;
		sub[0] = '\0';
		r = bc_zstd_decompress(p + off[i], zlen[i], (size_t)size[i],
		    sect(e, i), sub);
		if (r != BC_OK || bc_buf_len(sect(e, i)) != size[i]) {
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
	return expand(bc_buf_data(&b->data), b->size, b->off, b->zlen, e, err);
}

int
bc_cache_blob_decode(const void *p, size_t n, struct bc_cache_entry *e,
    char *err)
{
	uint64_t size[NSECT];
	size_t off[NSECT], zlen[NSECT];
	int64_t ms;
	int r;

	bc_cache_entry_init(e);
	if ((r = blob_check(p, n, size, off, zlen, &ms, e->origin, err)) !=
	    BC_OK)
		return r;
	e->compile_ms = ms;
	return expand(p, size, off, zlen, e, err);
}

/* ---------------------------------------------------------------------
 * sqlite helpers
 */

static int db_open(struct bc_cache *c, char *err);

static int
dberr(struct bc_cache *c, char *err, const char *what)
{
	return bc_seterr(err, BC_ERR_IO, "cache index: %s: %s", what,
	    c->db != NULL ? sqlite3_errmsg(c->db) : "not open");
}

/* The index, opened on first use for a lazy handle. */
static int
need_db(struct bc_cache *c, char *err)
{
	return c->db != NULL ? BC_OK : db_open(c, err);
}

static int
exec(struct bc_cache *c, const char *sql, char *err)
{
	char *msg = NULL;
	int r;

	if ((r = need_db(c, err)) != BC_OK)
		return r;
	if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		r = bc_seterr(err, BC_ERR_IO, "cache index: %s: %s", sql,
		    msg != NULL ? msg : "error");

		sqlite3_free(msg);
		return r;
	}
	return BC_OK;
}

static int
prep(struct bc_cache *c, const char *sql, sqlite3_stmt **st, char *err)
{
	int r;

	*st = NULL;
	if ((r = need_db(c, err)) != BC_OK)
		return r;
	if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return dberr(c, err, sql);
	}
	return BC_OK;
}

static int
begin(struct bc_cache *c, char *err)
{
	return exec(c, "BEGIN IMMEDIATE", err);
}

static int
commit(struct bc_cache *c, char *err)
{
	int r = exec(c, "COMMIT", err);

	if (r != BC_OK)
		(void)exec(c, "ROLLBACK", NULL);
	return r;
}

static void
rollback(struct bc_cache *c)
{
	(void)exec(c, "ROLLBACK", NULL);
}

/* Add delta to table.name (counters or state). */
static int
add_to(struct bc_cache *c, const char *table, const char *name, int64_t delta)
{
	char sql[160];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "INSERT INTO %s(name,value) VALUES(?1,?2) "
	    "ON CONFLICT(name) DO UPDATE SET value=value+excluded.value",
	    table);
	if (prep(c, sql, &st, NULL) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, delta);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? BC_OK : BC_ERR_IO;
}

static int64_t
get_value(struct bc_cache *c, const char *table, const char *name)
{
	char sql[128];
	sqlite3_stmt *st;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT value FROM %s WHERE name=?1",
	    table);
	if (prep(c, sql, &st, NULL) != BC_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int
set_state(struct bc_cache *c, const char *name, int64_t v)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(c, "INSERT OR REPLACE INTO state(name,value) VALUES(?1,?2)",
	    &st, NULL) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, v);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? BC_OK : BC_ERR_IO;
}

int
bc_cache_count(struct bc_cache *c, const char *name, int64_t delta)
{
	return add_to(c, "counters", name, delta);
}

/* ---------------------------------------------------------------------
 * open / close
 */

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS entries ("
    " key TEXT PRIMARY KEY NOT NULL,"
    " size INTEGER NOT NULL,"		/* blob bytes on disk */
    " osize INTEGER NOT NULL,"		/* uncompressed bytes */
    " created INTEGER NOT NULL,"	/* unix seconds */
    " last_used INTEGER NOT NULL,"	/* unix seconds */
    " seq INTEGER NOT NULL,"		/* LRU order: larger = more recent */
    " hits INTEGER NOT NULL DEFAULT 0,"
    " compile_ms INTEGER NOT NULL DEFAULT 0"
    ") WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS entries_lru ON entries(seq);"
    "CREATE TABLE IF NOT EXISTS counters ("
    " name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS locations ("
    " key TEXT PRIMARY KEY NOT NULL, host TEXT NOT NULL"
    ");"
    "CREATE TABLE IF NOT EXISTS state ("
    " name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    /* which checkout stored an entry (a hash of its working directory),
     * for hits_other_checkout; gone with its entry */
    "CREATE TABLE IF NOT EXISTS origins ("
    " key TEXT PRIMARY KEY NOT NULL, dir TEXT NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TRIGGER IF NOT EXISTS origins_gone AFTER DELETE ON entries"
    " BEGIN DELETE FROM origins WHERE key=old.key; END;";

static int is_hex2(const char *s);

/* All 256 blob directories at once, when the cache is made: a mkdir per
 * store would cost more than the store (an inode allocation). */
static void
make_blob_dirs(struct bc_cache *c)
{
	int i;

	for (i = 0; i < 256; i++) {
		char *p = xasprintf("%s/%02x", c->blobdir, i);

		(void)mkdir(p, 0700);
		free(p);
	}
}

/* Each blob directory blobs/ab that exists: fn(c, its path, arg). */
static void
each_blob_dir(struct bc_cache *c,
    void (*fn)(struct bc_cache *c, const char *dir, void *arg), void *arg)
{
	struct dirent *a;
	DIR *d;

	if ((d = opendir(c->blobdir)) == NULL)
		return;
	while ((a = readdir(d)) != NULL) {
		char *p;

		if (!is_hex2(a->d_name))
			continue;
		p = xasprintf("%s/%s", c->blobdir, a->d_name);
		fn(c, p, arg);
		free(p);
	}
	closedir(d);
}

/* blobs/ab/cd/<key> -> blobs/ab/<key> for every cd under dir (blobs/ab) */
static void
migrate_dir(struct bc_cache *c, const char *dir, void *arg)
{
	struct dirent *b, *f;
	DIR *d2, *d3;

	(void)c;
	(void)arg;
	if ((d2 = opendir(dir)) == NULL)
		return;
	while ((b = readdir(d2)) != NULL) {
		char *p2;

		if (!is_hex2(b->d_name))
			continue;
		p2 = xasprintf("%s/%s", dir, b->d_name);
		if ((d3 = opendir(p2)) == NULL) {
			free(p2);
			continue;
		}
		while ((f = readdir(d3)) != NULL) {
			char *from, *to;

			if (f->d_name[0] == '.' && (f->d_name[1] == '\0' ||
			    strcmp(f->d_name, "..") == 0))
				continue;
			from = xasprintf("%s/%s", p2, f->d_name);
			to = xasprintf("%s/%s", dir, f->d_name);
			if (!bc_hash_is_hex(f->d_name) || rename(from, to) != 0)
				(void)unlink(from);
			free(from);
			free(to);
		}
		closedir(d3);
		(void)rmdir(p2);
		free(p2);
	}
	closedir(d2);
}

/*
 * Schema 1 kept blobs in blobs/ab/cd/<key>; move them to blobs/ab/<key>
 * (a rename each, in the same file system) and drop the emptied
 * directories.  Runs in the first process that opens a schema-1 cache
 * (boltccd's parent, before it serves anything); interrupted, it goes on
 * at the next open, and whatever it missed start-up reconciliation
 * counts as rows without blobs.
 */
static void
migrate_v1_blobs(struct bc_cache *c)
{
	char *p;

	each_blob_dir(c, migrate_dir, NULL);
	/* schema 1's in-flight lock dir (inflight.lock replaced it) */
	p = xasprintf("%s/inflight", c->dir);
	(void)rmdir(p);
	free(p);
}

/* Open the index (and make or migrate it): on bc_cache_open, or on the
 * first use of a handle from bc_cache_open_lazy.  On failure c->db stays
 * NULL, so a later use tries again and fails the same way. */
static int
db_open(struct bc_cache *c, char *err)
{
	char *path;
	sqlite3_stmt *st;
	int r, uv = 0;

	path = xasprintf("%s/index.sqlite", c->dir);
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		r = bc_seterr(err, BC_ERR_IO, "cannot open %s: %s", path,
		    c->db != NULL ? sqlite3_errmsg(c->db) : "out of memory");
		free(path);
		goto fail;
	}
	free(path);
	sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
	/* Keep -wal and -shm after the last connection closes: workers open
	 * and close the index for every job, and a full disk must not make
	 * an existing index unreadable. */
	{
		int one = 1;

		(void)sqlite3_file_control(c->db, "main",
		    SQLITE_FCNTL_PERSIST_WAL, &one);
		/* ... and do not checkpoint (with an fsync) every time a
		 * worker closes: the automatic checkpoints suffice. */
		(void)sqlite3_db_config(c->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
		    1, NULL);
	}
	if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL)
	    != SQLITE_OK) {
		r = dberr(c, err, "reading the schema version");
		goto fail;
	}
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		uv = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW) {
		r = dberr(c, err, "reading the schema version");
		goto fail;
	}
	if (uv > SCHEMA_VERSION) {
		r = bc_seterr(err, BC_ERR_INVAL,
		    "cache index schema %d is newer than this boltccd (%d)",
		    uv, SCHEMA_VERSION);
		goto fail;
	}
	if (uv == 1)
		migrate_v1_blobs(c);
	if (uv < SCHEMA_VERSION)
		make_blob_dirs(c);
	if (uv < SCHEMA_VERSION) {
		/* New index: WAL (a setting that persists in the file). */
		if ((r = exec(c, "PRAGMA journal_mode=WAL", err)) != BC_OK ||
		    (r = exec(c, schema, err)) != BC_OK ||
		    (r = exec(c, "PRAGMA user_version=" STR(SCHEMA_VERSION),
		    err)) != BC_OK)
			goto fail;
	}
	if ((r = exec(c, "PRAGMA synchronous=NORMAL", err)) != BC_OK)
		goto fail;
	return BC_OK;
fail:
	if (c->db != NULL)
		sqlite3_close(c->db);
	c->db = NULL;
	return r;
}

static int
cache_new(const char *dir, uint64_t max_bytes, struct bc_cache **out,
    char *err)
{
	struct bc_cache *c;
	char e[BC_ERRLEN];
	int r;

	*out = NULL;
	if (dir == NULL || dir[0] == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "no cache directory");
	if ((r = bc_mkdir_p(dir, 0700, e)) != BC_OK)
		return bc_seterr(err, r, "cache directory: %s", e);
	c = xcalloc(1, sizeof(*c));
	c->dir = xstrdup(dir);
	c->blobdir = xasprintf("%s/blobs", dir);
	c->lockpath = xasprintf("%s/" BC_CACHE_LOCKFILE, dir);
	c->lockfd = -1;
	c->max_bytes = max_bytes > 0 ? max_bytes : BC_CACHE_DEFAULT_SIZE;
	if ((r = bc_mkdir_p(c->blobdir, 0700, e)) != BC_OK) {
		bc_cache_close(c);
		return bc_seterr(err, r, "cache directory: %s", e);
	}
	*out = c;
	return BC_OK;
}

int
bc_cache_open(const char *dir, uint64_t max_bytes, struct bc_cache **out,
    char *err)
{
	int r;

	if ((r = cache_new(dir, max_bytes, out, err)) != BC_OK)
		return r;
	if ((r = db_open(*out, err)) != BC_OK) {
		bc_cache_close(*out);
		*out = NULL;
	}
	return r;
}

int
bc_cache_open_lazy(const char *dir, uint64_t max_bytes,
    struct bc_cache **out, char *err)
{
	return cache_new(dir, max_bytes, out, err);
}

void
bc_cache_close(struct bc_cache *c)
{
	if (c == NULL)
		return;
	if (c->db != NULL)
		sqlite3_close(c->db);
	if (c->lockfd >= 0)
		close(c->lockfd);
	free(c->dir);
	free(c->blobdir);
	free(c->lockpath);
	free(c);
}

const char *
bc_cache_dir(const struct bc_cache *c)
{
	return c->dir;
}

static char *
blob_path_in(const char *blobdir, const char *key)
{
	return xasprintf("%s/%.2s/%s", blobdir, key, key);
}

char *
bc_cache_blob_path(const struct bc_cache *c, const char *key)
{
	return blob_path_in(c->blobdir, key);
}

/* ---------------------------------------------------------------------
 * get / put / evict
 */

/* Delete key's row if it is still the one created at `created`, and its
 * blob; fix the byte total. */
static void
drop_entry(struct bc_cache *c, const char *key, int64_t created,
    int unlink_blob)
{
	sqlite3_stmt *st;
	int64_t size = -1;

	if (begin(c, NULL) != BC_OK)
		return;
	if (prep(c, "SELECT size FROM entries WHERE key=?1 AND created=?2",
	    &st, NULL) == BC_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, created);
		if (sqlite3_step(st) == SQLITE_ROW)
			size = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (size >= 0 && prep(c, "DELETE FROM entries WHERE key=?1", &st,
	    NULL) == BC_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		(void)sqlite3_step(st);
		sqlite3_finalize(st);
		(void)add_to(c, "state", "stored_bytes", -size);
	}
	if (commit(c, NULL) == BC_OK && size >= 0 && unlink_blob) {
		char *p = bc_cache_blob_path(c, key);

		(void)unlink(p);
		free(p);
	}
}

static void
count_miss(struct bc_cache *c, int count, int corrupt)
{
	if (count != BC_CACHE_COUNT_ALL && !corrupt)
		return;
	if (begin(c, NULL) != BC_OK)
		return;
	if (count == BC_CACHE_COUNT_ALL) {
		(void)add_to(c, "counters", "requests", 1);
		(void)add_to(c, "counters", "misses", 1);
	}
	if (corrupt)
		(void)add_to(c, "counters", "corrupt", 1);
	(void)commit(c, NULL);
}

int
bc_cache_has(struct bc_cache *c, const char *key)
{
	sqlite3_stmt *st;
	int found = 0;

	if (prep(c, "SELECT 1 FROM entries WHERE key=?1", &st, NULL) != BC_OK)
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int
bc_cache_lookup_blob(struct bc_cache *c, const char *key,
    struct bc_cache_blob *b, char *err)
{
	struct bc_buf raw;
	char *path, sub[BC_ERRLEN];
	int r;

	bc_cache_blob_free(b);
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	path = bc_cache_blob_path(c, key);
	bc_buf_init(&raw, BC_BUF_CEILING);
	sub[0] = '\0';
	r = bc_read_file(path, BC_BUF_CEILING, &raw, sub);
	free(path);
	if (r == BC_OK)
		r = blob_check(bc_buf_data(&raw), bc_buf_len(&raw), b->size,
		    b->off, b->zlen, &b->compile_ms, b->origin, sub);
	if (r == BC_OK)
		bc_buf_move(&b->data, &raw);
	bc_buf_free(&raw);
	if (r != BC_OK)
		return bc_seterr(err, r == BC_ERR_NOENT ? BC_ERR_NOENT :
		    BC_ERR_CORRUPT, "%s", sub);
	return BC_OK;
}

int
bc_cache_lookup(struct bc_cache *c, const char *key, struct bc_cache_blob *b,
    char *err)
{
	sqlite3_stmt *st;
	int64_t created = 0, size = 0;
	struct bc_buf raw;
	char *path;
	char sub[BC_ERRLEN];
	int r, found = 0;

	bc_cache_blob_free(b);
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	if (prep(c, "SELECT created, size FROM entries WHERE key=?1", &st,
	    err) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if ((r = sqlite3_step(st)) == SQLITE_ROW) {
		found = 1;
		created = sqlite3_column_int64(st, 0);
		size = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return dberr(c, err, "lookup");
	/* No row: a blob whose row the keeper has not written yet is
	 * served all the same (verified like any other). */
	if (!found && !bc_cache_blob_exists(c, key))
		return bc_seterr(err, BC_ERR_NOENT, "not in the cache");
	path = bc_cache_blob_path(c, key);
	bc_buf_init(&raw, BC_BUF_CEILING);
	sub[0] = '\0';
	r = bc_read_file(path, BC_BUF_CEILING, &raw, sub);
	if (r == BC_OK && found && (int64_t)bc_buf_len(&raw) != size)
		r = bc_seterr(sub, BC_ERR_CORRUPT,
		    "blob is %zu bytes, index says %lld", bc_buf_len(&raw),
		    (long long)size);
	if (r == BC_OK) {
		/* take the bytes over instead of copying them */
		r = blob_check(bc_buf_data(&raw), bc_buf_len(&raw), b->size,
		    b->off, b->zlen, &b->compile_ms, b->origin, sub);
		if (r == BC_OK)
			bc_buf_move(&b->data, &raw);
	}
	bc_buf_free(&raw);
	if (r == BC_ERR_NOENT) {
		free(path);
		/* Row without blob (a crash between the two): forget it. */
		if (found)
			drop_entry(c, key, created, 0);
		return bc_seterr(err, BC_ERR_NOENT, "blob missing: %s", sub);
	}
	if (r != BC_OK) {
		int corrupt = r == BC_ERR_CORRUPT;

		if (found && (corrupt || r == BC_ERR_IO))
			drop_entry(c, key, created, 1);
		else if (corrupt)
			(void)unlink(path);
		if (corrupt)
			(void)bc_cache_count(c, "corrupt", 1);
		free(path);
		bc_cache_blob_free(b);
		return bc_seterr(err, corrupt ? BC_ERR_CORRUPT : r, "%s", sub);
	}
	free(path);
	b->created = created;
	return BC_OK;
}

/* A hit for a checkout other than the one that stored the entry. */
static int
other_checkout(struct bc_cache *c, const char *key, const char *origin)
{
	sqlite3_stmt *st;
	int other = 0;

	if (origin == NULL || origin[0] == '\0' ||
	    prep(c, "SELECT dir FROM origins WHERE key=?1", &st, NULL) != BC_OK)
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *d = sqlite3_column_text(st, 0);

		other = d != NULL && strcmp((const char *)d, origin) != 0;
	}
	sqlite3_finalize(st);
	return other;
}

void
bc_cache_touch(struct bc_cache *c, const char *key, int count, int hit,
    int64_t compile_ms)
{
	bc_cache_touch_from(c, key, count, hit, compile_ms, NULL);
}

void
bc_cache_touch_from(struct bc_cache *c, const char *key, int count, int hit,
    int64_t compile_ms, const char *origin)
{
	sqlite3_stmt *st;

	if (!hit) {
		count_miss(c, count, 0);
		return;
	}
	if (begin(c, NULL) != BC_OK)
		return;
	if (prep(c, "UPDATE entries SET last_used=?2, hits=hits+1, "
	    "seq=(SELECT COALESCE(MAX(seq),0)+1 FROM entries) WHERE key=?1",
	    &st, NULL) == BC_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
		(void)sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (count != BC_CACHE_COUNT_NONE) {
		(void)add_to(c, "counters", "requests", 1);
		(void)add_to(c, "counters", "hits", 1);
		(void)add_to(c, "counters", "time_saved_ms", compile_ms);
		if (other_checkout(c, key, origin))
			(void)add_to(c, "counters", "hits_other_checkout", 1);
	}
	(void)commit(c, NULL);
}

int
bc_cache_get(struct bc_cache *c, const char *key, int count,
    struct bc_cache_entry *e, char *err)
{
	struct bc_cache_blob b;
	int r;

	bc_cache_entry_init(e);
	bc_cache_blob_init(&b);
	r = bc_cache_lookup(c, key, &b, err);
	if (r == BC_OK)
		r = bc_cache_blob_expand(&b, e, err);
	if (r == BC_OK) {
		bc_cache_touch(c, key, count, 1, e->compile_ms);
	} else if (r != BC_ERR_INVAL && r != BC_ERR_IO) {
		bc_cache_touch(c, key, count, 0, 0);
	}
	if (r == BC_ERR_CORRUPT && bc_buf_len(&b.data) > 0)
		drop_entry(c, key, b.created, 1);
	bc_cache_blob_free(&b);
	return r;
}

static int
write_blob(const char *path, const struct bc_buf *b, char *err)
{
	char *dir = xstrdup(path), *tmp, *slash;
	const uint8_t *p = bc_buf_data(b);
	size_t left = bc_buf_len(b);
	char e[BC_ERRLEN];
	int fd, r;

	slash = strrchr(dir, '/');
	*slash = '\0';
	if ((r = bc_mkdir_p(dir, 0700, e)) != BC_OK) {
		free(dir);
		return bc_seterr(err, r, "%s", e);
	}
	tmp = xasprintf("%s/.tmp.%s.%ld", dir, slash + 1, (long)getpid());
	free(dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0) {
		r = bc_seterr(err, BC_ERR_IO, "cannot create %s: %s", tmp,
		    strerror(errno));
		free(tmp);
		return r;
	}
	while (left > 0) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = bc_seterr(err, BC_ERR_IO, "writing %s: %s", tmp,
			    w < 0 ? strerror(errno) : "short write");
			close(fd);
			(void)unlink(tmp);
			free(tmp);
			return r;
		}
		p += w;
		left -= (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		r = bc_seterr(err, BC_ERR_IO, "publishing %s: %s", path,
		    strerror(errno));
		(void)unlink(tmp);
		free(tmp);
		return r;
	}
	free(tmp);
	return BC_OK;
}

int
bc_cache_put_blob(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, int miss, struct bc_cache_stored *rec,
    char *err)
{
	struct bc_buf blob;
	char *path;
	int r, i;

	memset(rec, 0, sizeof(*rec));
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	for (i = 0; i < NSECT; i++)
		rec->osize += (int64_t)bc_buf_len(csect(e, i));
	bc_buf_init(&blob, BC_BUF_CEILING);
	r = bc_cache_blob_encode(e, 1, &blob, err);
	if (r == BC_OK) {
		path = bc_cache_blob_path(c, key);
		r = write_blob(path, &blob, err);
		free(path);
	}
	if (r != BC_OK) {
		bc_buf_free(&blob);
		(void)bc_cache_count(c, "store_errors", 1);
		return r;
	}
	memcpy(rec->key, key, BC_HASH_HEXLEN);
	rec->size = (int64_t)bc_buf_len(&blob);
	rec->created = (int64_t)time(NULL);
	rec->compile_ms = e->compile_ms;
	memcpy(rec->origin, e->origin, sizeof(rec->origin));
	rec->miss = miss != 0;
	bc_buf_free(&blob);
	return BC_OK;
}

/* The rows of one batch, in the caller's transaction; *added: bytes. */
static int
index_rows(struct bc_cache *c, const struct bc_cache_stored *v, size_t n,
    int64_t *added, char *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL, *org = NULL;
	size_t i;
	int r = BC_OK;

	*added = 0;
	if (prep(c, "INSERT OR REPLACE INTO origins(key,dir) VALUES(?1,?2)",
	    &org, err) != BC_OK)
		return BC_ERR_IO;
	if (prep(c, "SELECT size FROM entries WHERE key=?1", &sel, err)
	    != BC_OK || prep(c, "INSERT OR REPLACE INTO entries(key,size,"
	    "osize,created,last_used,seq,hits,compile_ms) VALUES(?1,?2,?3,"
	    "?4,?4,(SELECT COALESCE(MAX(seq),0)+1 FROM entries),0,?5)", &ins,
	    err) != BC_OK) {
		sqlite3_finalize(sel);
		sqlite3_finalize(org);
		return BC_ERR_IO;
	}
	for (i = 0; i < n && r == BC_OK; i++) {
		int64_t old = 0;

		if (!bc_hash_is_hex(v[i].key) || v[i].size < 0) {
			r = bc_seterr(err, BC_ERR_INVAL, "bad stored record");
			break;
		}
		sqlite3_reset(sel);
		sqlite3_bind_text(sel, 1, v[i].key, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(sel) == SQLITE_ROW)
			old = sqlite3_column_int64(sel, 0);
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, v[i].key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ins, 2, v[i].size);
		sqlite3_bind_int64(ins, 3, v[i].osize);
		sqlite3_bind_int64(ins, 4, v[i].created);
		sqlite3_bind_int64(ins, 5, v[i].compile_ms);
		if (sqlite3_step(ins) != SQLITE_DONE)
			r = dberr(c, err, "insert");
		*added += v[i].size - old;
		if (r == BC_OK && v[i].origin[0] != '\0') {
			sqlite3_reset(org);
			sqlite3_bind_text(org, 1, v[i].key, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(org, 2, v[i].origin, -1,
			    SQLITE_TRANSIENT);
			if (sqlite3_step(org) != SQLITE_DONE)
				r = dberr(c, err, "insert origin");
		}
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	sqlite3_finalize(org);
	return r;
}

int
bc_cache_index_stored(struct bc_cache *c, const struct bc_cache_stored *v,
    size_t n, char *err)
{
	int64_t added = 0, misses = 0;
	size_t i;
	int r;

	if (n == 0)
		return BC_OK;
	for (i = 0; i < n; i++)
		misses += v[i].miss != 0;
	if ((r = begin(c, err)) == BC_OK) {
		r = index_rows(c, v, n, &added, err);
		if (r == BC_OK && (add_to(c, "state", "stored_bytes", added)
		    != BC_OK || add_to(c, "counters", "stores", (int64_t)n)
		    != BC_OK || (misses > 0 &&
		    (add_to(c, "counters", "requests", misses) != BC_OK ||
		    add_to(c, "counters", "misses", misses) != BC_OK))))
			r = dberr(c, err, "insert");
		if (r == BC_OK)
			r = commit(c, err);
		else
			rollback(c);
	}
	if (r != BC_OK) {
		/* No row was written: take the blobs away again. */
		for (i = 0; i < n; i++) {
			char *path;

			if (!bc_hash_is_hex(v[i].key))
				continue;
			path = bc_cache_blob_path(c, v[i].key);
			(void)unlink(path);
			free(path);
		}
		(void)bc_cache_count(c, "store_errors", (int64_t)n);
		return r;
	}
	if ((uint64_t)get_value(c, "state", "stored_bytes") >
	    bc_cache_limit(c))
		(void)bc_cache_evict(c, bc_cache_limit(c), NULL, NULL);
	return BC_OK;
}

static int
put_entry(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, int miss, char *err)
{
	struct bc_cache_stored rec;
	int r = bc_cache_put_blob(c, key, e, miss, &rec, err);

	return r != BC_OK ? r : bc_cache_index_stored(c, &rec, 1, err);
}

int
bc_cache_put(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, char *err)
{
	return put_entry(c, key, e, 0, err);
}

int
bc_cache_put_miss(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, char *err)
{
	return put_entry(c, key, e, 1, err);
}

int
bc_cache_evict(struct bc_cache *c, uint64_t max_bytes, uint64_t *evicted,
    char *err)
{
	struct bc_strv gone = BC_STRV_INIT;
	uint64_t n_total = 0;
	size_t i;
	int r = BC_OK;

	if (evicted != NULL)
		*evicted = 0;
	for (;;) {
		sqlite3_stmt *st, *del;
		int64_t total;
		int n = 0, rows = 0;

		if ((r = begin(c, err)) != BC_OK)
			break;
		total = get_value(c, "state", "stored_bytes");
		if (total <= (int64_t)max_bytes) {
			(void)commit(c, NULL);
			break;
		}
		if (prep(c, "SELECT key, size FROM entries ORDER BY seq "
		    "LIMIT 64", &st, err) != BC_OK ||
		    prep(c, "DELETE FROM entries WHERE key=?1", &del, err)
		    != BC_OK) {
			rollback(c);
			r = BC_ERR_IO;
			break;
		}
		while (total > (int64_t)max_bytes &&
		    sqlite3_step(st) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);

			rows++;
			if (k == NULL)
				continue;
			sqlite3_bind_text(del, 1, k, -1, SQLITE_TRANSIENT);
			if (sqlite3_step(del) == SQLITE_DONE) {
				total -= sqlite3_column_int64(st, 1);
				bc_strv_push(&gone, k);
				n++;
			}
			sqlite3_reset(del);
		}
		sqlite3_finalize(st);
		sqlite3_finalize(del);
		if (rows == 0)
			total = 0;	/* nothing left: the total was stale */
		if (set_state(c, "stored_bytes", total < 0 ? 0 : total) != BC_OK
		    || add_to(c, "counters", "evictions", n) != BC_OK) {
			rollback(c);
			r = dberr(c, err, "evict");
			break;
		}
		if ((r = commit(c, err)) != BC_OK)
			break;
		for (i = 0; i < gone.n; i++) {
			char *p = bc_cache_blob_path(c, gone.v[i]);

			(void)unlink(p);
			free(p);
		}
		n_total += gone.n;
		bc_strv_free(&gone);
		if (rows == 0)
			break;
	}
	bc_strv_free(&gone);
	if (evicted != NULL)
		*evicted = n_total;
	return r;
}

/* ---------------------------------------------------------------------
 * reconcile
 */

static int
is_hex2(const char *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[2] == '\0';
}

static void
delete_row(struct bc_cache *c, const char *key)
{
	sqlite3_stmt *st;

	if (prep(c, "DELETE FROM entries WHERE key=?1", &st, NULL) != BC_OK)
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	(void)sqlite3_step(st);
	sqlite3_finalize(st);
}

struct scan_ctx {
	int repair;
	struct bc_cache_check *out;
};

/* A verified blob without a row gets one (its stores were counted). */
static int
adopt_blob(struct bc_cache *c, const char *key, const char *path)
{
	struct bc_cache_stored rec;
	struct bc_cache_blob b;
	struct stat sb;
	int64_t added = 0;
	int r, i;

	bc_cache_blob_init(&b);
	memset(&rec, 0, sizeof(rec));
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    bc_read_file(path, BC_BUF_CEILING, &b.data, NULL) != BC_OK ||
	    blob_check(bc_buf_data(&b.data), bc_buf_len(&b.data), b.size,
	    b.off, b.zlen, &rec.compile_ms, rec.origin, NULL) != BC_OK) {
		bc_cache_blob_free(&b);
		return BC_ERR_CORRUPT;
	}
	memcpy(rec.key, key, BC_HASH_HEXLEN);
	rec.size = (int64_t)bc_buf_len(&b.data);
	for (i = 0; i < NSECT; i++)
		rec.osize += (int64_t)b.size[i];
	rec.created = (int64_t)sb.st_mtime;
	bc_cache_blob_free(&b);
	if ((r = begin(c, NULL)) != BC_OK)
		return r;
	if ((r = index_rows(c, &rec, 1, &added, NULL)) == BC_OK &&
	    (r = add_to(c, "state", "stored_bytes", added)) == BC_OK)
		return commit(c, NULL);
	rollback(c);
	return r;
}

/* One blob directory: temp files and blobs without rows. */
static void
scan_dir(struct bc_cache *c, const char *dir, void *arg)
{
	struct scan_ctx *x = arg;
	const char *ab = strrchr(dir, '/') + 1;
	struct dirent *f;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((f = readdir(d)) != NULL) {
		const char *n = f->d_name;
		char *fp;
		int bad = 0;

		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		if (bc_str_has_prefix(n, ".tmp.")) {
			x->out->temp_files++;
			bad = 1;
		} else if (!bc_hash_is_hex(n) || strncmp(n, ab, 2) != 0 ||
		    !bc_cache_has(c, n)) {
			x->out->orphan_blobs++;
			bad = 1;
		}
		if (bad && x->repair) {
			fp = xasprintf("%s/%s", dir, n);
			if (bc_hash_is_hex(n) && strncmp(n, ab, 2) == 0 &&
			    adopt_blob(c, n, fp) == BC_OK)
				x->out->adopted++;
			else
				(void)unlink(fp);
			free(fp);
		}
	}
	closedir(d);
}

/* Files under blobs/: leftovers and blobs without rows. */
static void
scan_blobs(struct bc_cache *c, int repair, struct bc_cache_check *out)
{
	struct scan_ctx x;

	x.repair = repair;
	x.out = out;
	each_blob_dir(c, scan_dir, &x);
}

int
bc_cache_reconcile(struct bc_cache *c, int repair, int verify,
    struct bc_cache_check *out, char *err)
{
	struct bc_strv keys = BC_STRV_INIT;
	struct bc_strv sizes = BC_STRV_INIT;
	sqlite3_stmt *st;
	size_t i;
	int r = BC_OK;

	memset(out, 0, sizeof(*out));
	if (prep(c, "SELECT key, size FROM entries", &st, err) != BC_OK)
		return BC_ERR_IO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		char num[32];

		snprintf(num, sizeof(num), "%lld",
		    (long long)sqlite3_column_int64(st, 1));
		bc_strv_push(&keys, k != NULL ? k : "");
		bc_strv_push(&sizes, num);
	}
	sqlite3_finalize(st);
	if (repair && (r = begin(c, err)) != BC_OK)
		goto out;
	for (i = 0; i < keys.n; i++) {
		const char *k = keys.v[i];
		long long size = 0;
		struct stat sb;
		char *p;
		int drop = 0, unl = 0;

		(void)bc_parse_int(sizes.v[i], 0, 1LL << 62, &size);
		if (!bc_hash_is_hex(k)) {
			out->orphan_rows++;
			if (repair)
				delete_row(c, k);
			continue;
		}
		p = bc_cache_blob_path(c, k);
		if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			out->orphan_rows++;
			drop = 1;
		} else if ((long long)sb.st_size != size) {
			out->bad_size++;
			drop = unl = 1;
		} else if (verify) {
			struct bc_buf b;
			struct bc_cache_entry e;

			bc_buf_init(&b, BC_BUF_CEILING);
			if (bc_read_file(p, BC_BUF_CEILING, &b, NULL) != BC_OK ||
			    bc_cache_blob_decode(bc_buf_data(&b), bc_buf_len(&b),
			    &e, NULL) != BC_OK) {
				out->corrupt++;
				drop = unl = 1;
			}
			bc_cache_entry_free(&e);
			bc_buf_free(&b);
		}
		if (!drop) {
			out->entries++;
			out->bytes += (uint64_t)size;
		} else if (repair) {
			delete_row(c, k);
			if (unl)
				(void)unlink(p);
		}
		free(p);
	}
	if (repair) {
		if (out->corrupt > 0)
			(void)add_to(c, "counters", "corrupt",
			    (int64_t)out->corrupt);
		if (set_state(c, "stored_bytes", (int64_t)out->bytes) != BC_OK) {
			rollback(c);
			r = dberr(c, err, "reconcile");
			goto out;
		}
		if ((r = commit(c, err)) != BC_OK)
			goto out;
	}
	scan_blobs(c, repair, out);
	if (out->adopted > 0) {
		out->entries += out->adopted;
		out->bytes = (uint64_t)get_value(c, "state", "stored_bytes");
	}
	if (repair)
		r = bc_cache_evict(c, bc_cache_limit(c), &out->evicted, err);
	if (r == BC_OK && out->evicted > 0) {
		out->entries -= out->evicted < out->entries ? out->evicted :
		    out->entries;
		out->bytes = (uint64_t)get_value(c, "state", "stored_bytes");
	}
out:
	bc_strv_free(&keys);
	bc_strv_free(&sizes);
	return r;
}

/* ---------------------------------------------------------------------
 * counters
 */

static const struct {
	const char *name;
	size_t off;
} known_counters[] = {
#define F(n) { #n, offsetof(struct bc_cache_stats, n) }
	F(requests), F(hits), F(misses), F(stores), F(store_errors),
	F(evictions), F(corrupt), F(identity_mismatch),
	F(time_saved_ms), F(hits_other_checkout),
#undef F
};
#define NKNOWN (sizeof(known_counters) / sizeof(known_counters[0]))

static uint64_t *
counter_field(struct bc_cache_stats *s, size_t i)
{
	return (uint64_t *)(void *)((char *)s + known_counters[i].off);
}

static uint64_t
counter_get(const struct bc_cache_stats *s, size_t i)
{
	return *(const uint64_t *)(const void *)((const char *)s +
	    known_counters[i].off);
}

/* One counter row (name, value) into out. */
static void
fill_counter(struct bc_cache_stats *out, const char *n, int64_t v)
{
	uint64_t uv = v > 0 ? (uint64_t)v : 0;
	size_t i;

	for (i = 0; i < NKNOWN; i++)
		if (strcmp(n, known_counters[i].name) == 0) {
			*counter_field(out, i) = uv;
			return;
		}
	if (!bc_str_has_prefix(n, "uncacheable:"))
		return;
	out->uncacheable += uv;
	if (out->nreasons < BC_CACHE_MAX_REASONS) {
		snprintf(out->reasons[out->nreasons].name,
		    sizeof(out->reasons[0].name), "%s",
		    n + strlen("uncacheable:"));
		out->reasons[out->nreasons].value = uv;
		out->nreasons++;
	}
}

/* Every row of sql (name, value), names without prefix, into out. */
static int
fill_counters(struct bc_cache *c, const char *sql, const char *prefix,
    struct bc_cache_stats *out, char *err)
{
	sqlite3_stmt *st;
	size_t pl = strlen(prefix);

	if (prep(c, sql, &st, err) != BC_OK)
		return BC_ERR_IO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 0);

		if (n != NULL && strncmp(n, prefix, pl) == 0)
			fill_counter(out, n + pl, sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	return BC_OK;
}

static int64_t
query_int(struct bc_cache *c, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	if (prep(c, sql, &st, NULL) != BC_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int
bc_cache_stats(struct bc_cache *c, struct bc_cache_stats *out, char *err)
{
	int64_t b;

	memset(out, 0, sizeof(*out));
	if (fill_counters(c, "SELECT name, value FROM counters ORDER BY name",
	    "", out, err) != BC_OK)
		return BC_ERR_IO;
	out->entries = (uint64_t)query_int(c, "SELECT COUNT(*) FROM entries");
	out->oldest_used = query_int(c, "SELECT MIN(last_used) FROM entries");
	b = get_value(c, "state", "stored_bytes");
	out->stored_bytes = b > 0 ? (uint64_t)b : 0;
	out->limit_set = bc_cache_operator_limit(c) > 0;
	out->max_bytes = bc_cache_limit(c);
	out->zeroed_at = get_value(c, "state", "zeroed_at");
	return BC_OK;
}

int
bc_cache_zero(struct bc_cache *c, char *err)
{
	sqlite3_stmt *st;
	int r;

	if ((r = begin(c, err)) != BC_OK)
		return r;
	if ((r = exec(c, "DELETE FROM state WHERE name LIKE 'zero:%';"
	    "INSERT INTO state(name,value) SELECT 'zero:'||name, value "
	    "FROM counters", err)) != BC_OK) {
		rollback(c);
		return r;
	}
	if (prep(c, "INSERT OR REPLACE INTO state(name,value) "
	    "VALUES('zeroed_at',?1)", &st, err) != BC_OK) {
		rollback(c);
		return BC_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
	r = sqlite3_step(st) == SQLITE_DONE ? BC_OK : dberr(c, err, "zero");
	sqlite3_finalize(st);
	if (r != BC_OK) {
		rollback(c);
		return r;
	}
	return commit(c, err);
}

int
bc_cache_baseline(struct bc_cache *c, struct bc_cache_stats *base,
    char *err)
{
	memset(base, 0, sizeof(*base));
	if (fill_counters(c, "SELECT name, value FROM state WHERE name LIKE "
	    "'zero:%' ORDER BY name", "zero:", base, err) != BC_OK)
		return BC_ERR_IO;
	base->zeroed_at = get_value(c, "state", "zeroed_at");
	return BC_OK;
}

static uint64_t
minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void
bc_cache_stats_since(const struct bc_cache_stats *total,
    const struct bc_cache_stats *base, struct bc_cache_stats *out)
{
	size_t i, k;

	*out = *total;
	for (i = 0; i < NKNOWN; i++)
		*counter_field(out, i) = minus(counter_get(total, i),
		    counter_get(base, i));
	out->uncacheable = 0;
	for (i = 0; i < out->nreasons; i++) {
		uint64_t b = 0;

		for (k = 0; k < base->nreasons; k++)
			if (strcmp(base->reasons[k].name,
			    out->reasons[i].name) == 0)
				b = base->reasons[k].value;
		out->reasons[i].value = minus(out->reasons[i].value, b);
		out->uncacheable += out->reasons[i].value;
	}
	out->zeroed_at = base->zeroed_at;
}

/* ---------------------------------------------------------------------
 * administration (store.h)
 */

uint64_t
bc_cache_operator_limit(struct bc_cache *c)
{
	int64_t v = get_value(c, "state", "limit_bytes");

	return v > 0 ? (uint64_t)v : 0;
}

uint64_t
bc_cache_limit(struct bc_cache *c)
{
	uint64_t op = bc_cache_operator_limit(c);

	return op > 0 ? op : c->max_bytes;
}

/* Up to BC_CACHE_ADMIN_BATCH keys of entries with seq <= maxseq and
 * last_used < cutoff, oldest first. */
static int
select_batch(struct bc_cache *c, int64_t maxseq, int64_t cutoff,
    struct bc_strv *keys, char *err)
{
	sqlite3_stmt *st;

	if (prep(c, "SELECT key FROM entries WHERE seq<=?1 AND last_used<?2 "
	    "ORDER BY seq LIMIT " STR(BC_CACHE_ADMIN_BATCH), &st, err) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_int64(st, 1, maxseq);
	sqlite3_bind_int64(st, 2, cutoff);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);

		bc_strv_push(keys, k != NULL ? k : "");
	}
	sqlite3_finalize(st);
	return BC_OK;
}

/* The rows of keys that still match (a key stored again meanwhile has a
 * newer seq and stays), in one transaction; *n, *bytes: what went. */
static int
delete_batch(struct bc_cache *c, const struct bc_strv *keys, int64_t maxseq,
    int64_t cutoff, uint64_t *n, uint64_t *bytes, char *err)
{
	sqlite3_stmt *sel = NULL, *del = NULL;
	int64_t total, gone = 0, cnt = 0;
	size_t i;
	int r;

	if ((r = begin(c, err)) != BC_OK)
		return r;
	if (prep(c, "SELECT size FROM entries WHERE key=?1 AND seq<=?2 AND "
	    "last_used<?3", &sel, err) != BC_OK ||
	    prep(c, "DELETE FROM entries WHERE key=?1", &del, err) != BC_OK) {
		sqlite3_finalize(sel);
		rollback(c);
		return BC_ERR_IO;
	}
	for (i = 0; i < keys->n && r == BC_OK; i++) {
		sqlite3_reset(sel);
		sqlite3_bind_text(sel, 1, keys->v[i], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(sel, 2, maxseq);
		sqlite3_bind_int64(sel, 3, cutoff);
		if (sqlite3_step(sel) != SQLITE_ROW)
			continue;
		gone += sqlite3_column_int64(sel, 0);
		sqlite3_reset(del);
		sqlite3_bind_text(del, 1, keys->v[i], -1, SQLITE_TRANSIENT);
		if (sqlite3_step(del) != SQLITE_DONE)
			r = dberr(c, err, "delete");
		cnt++;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(del);
	total = get_value(c, "state", "stored_bytes") - gone;
	if (r == BC_OK && (set_state(c, "stored_bytes", total < 0 ? 0 : total)
	    != BC_OK || add_to(c, "counters", "evictions", cnt) != BC_OK))
		r = dberr(c, err, "remove");
	if (r != BC_OK) {
		rollback(c);
		return r;
	}
	if ((r = commit(c, err)) != BC_OK)
		return r;
	*n += (uint64_t)cnt;
	*bytes += (uint64_t)gone;
	return BC_OK;
}

/* Remove the entries with last_used < cutoff that exist now (seq at
 * most the largest now), a batch at a time: blobs first, then rows. */
static int
remove_entries(struct bc_cache *c, int64_t cutoff, uint64_t *n,
    uint64_t *freed, char *err)
{
	uint64_t cnt = 0, bytes = 0;
	int64_t maxseq;
	int r;

	if ((r = need_db(c, err)) != BC_OK)
		return r;
	maxseq = query_int(c, "SELECT COALESCE(MAX(seq),0) FROM entries");
	for (;;) {
		struct bc_strv keys = BC_STRV_INIT;
		size_t i;

		if ((r = select_batch(c, maxseq, cutoff, &keys, err)) != BC_OK ||
		    keys.n == 0) {
			bc_strv_free(&keys);
			break;
		}
		for (i = 0; i < keys.n; i++) {
			char *p;

			if (!bc_hash_is_hex(keys.v[i]))
				continue;
			p = bc_cache_blob_path(c, keys.v[i]);
			(void)unlink(p);
			free(p);
		}
		r = delete_batch(c, &keys, maxseq, cutoff, &cnt, &bytes, err);
		bc_strv_free(&keys);
		if (r != BC_OK)
			break;
	}
	if (n != NULL)
		*n = cnt;
	if (freed != NULL)
		*freed = bytes;
	return r;
}

int
bc_cache_clear(struct bc_cache *c, uint64_t *n, uint64_t *freed, char *err)
{
	return remove_entries(c, INT64_MAX, n, freed, err);
}

int
bc_cache_evict_older(struct bc_cache *c, int64_t cutoff, uint64_t *n,
    uint64_t *freed, char *err)
{
	return remove_entries(c, cutoff, n, freed, err);
}

int
bc_cache_set_limit(struct bc_cache *c, uint64_t bytes, uint64_t *n,
    uint64_t *freed, char *err)
{
	int64_t before, after;
	int r;

	if (bytes > (uint64_t)INT64_MAX)
		return bc_seterr(err, BC_ERR_INVAL, "limit too large");
	if ((r = need_db(c, err)) != BC_OK)
		return r;
	if (bytes == 0)
		r = exec(c, "DELETE FROM state WHERE name='limit_bytes'", err);
	else if (set_state(c, "limit_bytes", (int64_t)bytes) != BC_OK)
		r = dberr(c, err, "setting the limit");
	if (r != BC_OK)
		return r;
	before = get_value(c, "state", "stored_bytes");
	r = bc_cache_evict(c, bc_cache_limit(c), n, err);
	after = get_value(c, "state", "stored_bytes");
	if (freed != NULL)
		*freed = before > after ? (uint64_t)(before - after) : 0;
	return r;
}

/* ---------------------------------------------------------------------
 * locations (daemon/locdir.h): key -> host hints, a bounded table
 */

int
bc_cache_loc_put(struct bc_cache *c, const struct bc_cache_loc *v, size_t n,
    char *err)
{
	sqlite3_stmt *ins = NULL, *del = NULL;
	size_t i;
	int r;

	if (n == 0)
		return BC_OK;
	if ((r = begin(c, err)) != BC_OK)
		return r;
	if (prep(c, "INSERT OR REPLACE INTO locations(key,host) "
	    "VALUES(?1,?2)", &ins, err) != BC_OK ||
	    prep(c, "DELETE FROM locations WHERE key=?1", &del, err)
	    != BC_OK) {
		sqlite3_finalize(ins);
		rollback(c);
		return BC_ERR_IO;
	}
	for (i = 0; i < n; i++) {
		sqlite3_stmt *st = v[i].host[0] != '\0' ? ins : del;

		if (!bc_hash_is_hex(v[i].key))
			continue;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, v[i].key, -1, SQLITE_TRANSIENT);
		if (st == ins)
			sqlite3_bind_text(st, 2, v[i].host, -1,
			    SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) {
			r = dberr(c, err, "recording a location");
			sqlite3_finalize(ins);
			sqlite3_finalize(del);
			rollback(c);
			return r;
		}
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(del);
	/* bounded: the oldest rows beyond the limit go (rowids grow with
	 * every INSERT OR REPLACE) */
	r = exec(c, "DELETE FROM locations WHERE rowid <= "
	    "(SELECT MAX(rowid) FROM locations) - " STR(BC_CACHE_LOC_MAX), err);
	if (r != BC_OK) {
		rollback(c);
		return r;
	}
	return commit(c, err);
}

int
bc_cache_loc_each(struct bc_cache *c,
    void (*fn)(void *arg, const char *key, const char *host), void *arg,
    char *err)
{
	sqlite3_stmt *st;
	int r;

	if (prep(c, "SELECT key, host FROM locations ORDER BY rowid", &st,
	    err) != BC_OK)
		return BC_ERR_IO;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *h = (const char *)sqlite3_column_text(st, 1);

		if (k != NULL && h != NULL && bc_hash_is_hex(k) &&
		    strlen(h) <= BC_MAX_LOC_HOST)
			fn(arg, k, h);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? BC_OK : dberr(c, err, "reading locations");
}

/* ---------------------------------------------------------------------
 * in-flight locks
 *
 * One lock file for the whole cache, one byte of it per key: a worker
 * compiling key K holds an fcntl write lock on the byte at inflight_off(K).
 * Nothing is created or removed per job (a file create costs ~0.3 ms on
 * some volumes), and the kernel drops the lock when its holder dies.  Two
 * keys on the same byte (48 bits of a SHA-256) only make one wait for the
 * other.  fcntl locks belong to the process and go away when it closes
 * any descriptor of the file: a process keeps one handle per cache dir.
 */

static off_t
inflight_off(const char *key)	/* a checked key (bc_hash_is_hex) */
{
	uint8_t b[6];		/* 48 bits: a valid off_t everywhere */
	uint64_t v = 0;
	int i;

	(void)bc_hash_unhex(key, sizeof(b), b);
	for (i = 0; i < 6; i++)
		v = v << 8 | b[i];
	return (off_t)v;
}

static int
lockfile_open(const char *path, int create, char *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW |
	    (create ? O_CREAT : 0), 0600);

	if (fd < 0 && (create || errno != ENOENT))
		bc_seterr(err, BC_ERR_IO, "cannot open %s: %s", path,
		    strerror(errno));
	return fd;
}

static void
inflight_range(struct flock *fl, short type, const char *key)
{
	memset(fl, 0, sizeof(*fl));
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = inflight_off(key);
	fl->l_len = 1;
}

int
bc_cache_inflight_try(struct bc_cache *c, const char *key, int *fd_out,
    char *err)
{
	struct flock fl;

	*fd_out = -1;
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	if (c->lockfd < 0 && (c->lockfd = lockfile_open(c->lockpath, 1,
	    err)) < 0)
		return BC_ERR_IO;
	inflight_range(&fl, F_WRLCK, key);
	if (fcntl(c->lockfd, F_SETLK, &fl) != 0) {
		if (errno == EACCES || errno == EAGAIN)
			return BC_ERR_BUSY;
		return bc_seterr(err, BC_ERR_IO, "lock %s: %s", c->lockpath,
		    strerror(errno));
	}
	*fd_out = c->lockfd;
	return BC_OK;
}

void
bc_cache_inflight_release(struct bc_cache *c, const char *key, int fd)
{
	struct flock fl;

	if (fd < 0)
		return;
	inflight_range(&fl, F_UNLCK, key);
	(void)fcntl(fd, F_SETLK, &fl);
}

/* 1 if the blob file of key exists under blobdir, or a stat fails for
 * another reason than its absence (then a lookup tells what is wrong). */
static int
blob_maybe(const char *blobdir, const char *key)
{
	struct stat sb;
	char *p = blob_path_in(blobdir, key);
	int r = stat(p, &sb) == 0 || errno != ENOENT;

	free(p);
	return r;
}

int
bc_cache_blob_exists(const struct bc_cache *c, const char *key)
{
	return bc_hash_is_hex(key) && blob_maybe(c->blobdir, key);
}

int
bc_cache_probe(const char *dir, const char *key)
{
	struct flock fl;
	char *p;
	int fd, r;

	if (!bc_hash_is_hex(key))
		return BC_CACHE_PROBE_MAYBE;	/* let the full lookup say why */
	p = xasprintf("%s/blobs", dir);
	r = blob_maybe(p, key);
	free(p);
	if (r)
		return BC_CACHE_PROBE_MAYBE;
	p = xasprintf("%s/" BC_CACHE_LOCKFILE, dir);
	fd = lockfile_open(p, 0, NULL);
	free(p);
	if (fd < 0)
		return errno == ENOENT ? BC_CACHE_PROBE_ABSENT :
		    BC_CACHE_PROBE_MAYBE;
	inflight_range(&fl, F_WRLCK, key);
	r = fcntl(fd, F_GETLK, &fl);
	close(fd);
	if (r != 0 || fl.l_type != F_UNLCK)
		return BC_CACHE_PROBE_MAYBE;	/* being compiled right now */
	return BC_CACHE_PROBE_ABSENT;
}
