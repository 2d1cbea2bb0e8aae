/*
 * store.c - getting and putting the artifact cache's entries: a lookup
 * reads and verifies the blob, then counts the request and refreshes the
 * entry's LRU position; a store writes the blob, then its index row,
 * then evicts beyond the size limit (evict.c).  See store.h for which
 * other file does what, and doc/cache.md.
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

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

/* ---------------------------------------------------------------------
 * get
 */

/* Delete key's row if it is still the one created at `created`, and its
 * blob; fix the byte total. */
static void
drop_entry(struct bc_cache *c, const char *key, int64_t created,
    int unlink_blob)
{
	sqlite3_stmt *st;
	int64_t size = -1;

	if (bc_index_begin(c, NULL) != BC_OK)
		return;
	if (bc_index_prep(c, "SELECT size FROM entries WHERE key=?1 AND "
	    "created=?2", &st, NULL) == BC_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, created);
		if (sqlite3_step(st) == SQLITE_ROW)
			size = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (size >= 0 && bc_index_prep(c, "DELETE FROM entries WHERE key=?1",
	    &st, NULL) == BC_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		(void)sqlite3_step(st);
		sqlite3_finalize(st);
		(void)bc_index_add(c, "state", "stored_bytes", -size);
	}
	if (bc_index_commit(c, NULL) == BC_OK && size >= 0 && unlink_blob)
		bc_blobdir_unlink(c, key);
}

static void
count_miss(struct bc_cache *c, int count, int corrupt)
{
	if (count != BC_CACHE_COUNT_ALL && !corrupt)
		return;
	if (bc_index_begin(c, NULL) != BC_OK)
		return;
	if (count == BC_CACHE_COUNT_ALL) {
		(void)bc_index_add(c, "counters", "requests", 1);
		(void)bc_index_add(c, "counters", "misses", 1);
	}
	if (corrupt)
		(void)bc_index_add(c, "counters", "corrupt", 1);
	(void)bc_index_commit(c, NULL);
}

int
bc_cache_has(struct bc_cache *c, const char *key)
{
	sqlite3_stmt *st;
	int found = 0;

	if (bc_index_prep(c, "SELECT 1 FROM entries WHERE key=?1", &st, NULL)
	    != BC_OK)
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* Read and verify key's blob into b (its bytes moved in, not copied);
 * with has_row, the file must be as long as the row says. */
static int
read_blob(struct bc_cache *c, const char *key, int has_row, int64_t size,
    struct bc_cache_blob *b, char *sub)
{
	struct bc_buf raw;
	char *path = bc_cache_blob_path(c, key);
	int r;

	bc_buf_init(&raw, BC_BUF_CEILING);
	sub[0] = '\0';
	r = bc_read_file(path, BC_BUF_CEILING, &raw, sub);
	free(path);
	if (r == BC_OK && has_row && (int64_t)bc_buf_len(&raw) != size)
		r = bc_seterr(sub, BC_ERR_CORRUPT,
		    "blob is %zu bytes, index says %lld", bc_buf_len(&raw),
		    (long long)size);
	if (r == BC_OK) {
		r = bc_blob_verify(bc_buf_data(&raw), bc_buf_len(&raw), b, sub);
		if (r == BC_OK)
			bc_buf_move(&b->data, &raw);
	}
	bc_buf_free(&raw);
	return r;
}

int
bc_cache_lookup_blob(struct bc_cache *c, const char *key,
    struct bc_cache_blob *b, char *err)
{
	char sub[BC_ERRLEN];
	int r;

	bc_cache_blob_free(b);
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	r = read_blob(c, key, 0, 0, b, sub);
	if (r != BC_OK)
		return bc_seterr(err, r == BC_ERR_NOENT ? BC_ERR_NOENT :
		    BC_ERR_CORRUPT, "%s", sub);
	return BC_OK;
}

/* key's row: *found, and its creation time and blob size. */
static int
find_row(struct bc_cache *c, const char *key, int *found, int64_t *created,
    int64_t *size, char *err)
{
	sqlite3_stmt *st;
	int r;

	*found = 0;
	if (bc_index_prep(c, "SELECT created, size FROM entries WHERE key=?1",
	    &st, err) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if ((r = sqlite3_step(st)) == SQLITE_ROW) {
		*found = 1;
		*created = sqlite3_column_int64(st, 0);
		*size = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return bc_index_err(c, err, "lookup");
	return BC_OK;
}

/* A blob that could not be served (r, sub: why): a bad one goes, with
 * its row when it has one, and is counted. */
static int
drop_bad_blob(struct bc_cache *c, const char *key, int found,
    int64_t created, int r, struct bc_cache_blob *b, const char *sub,
    char *err)
{
	int corrupt = r == BC_ERR_CORRUPT;

	if (found && (corrupt || r == BC_ERR_IO))
		drop_entry(c, key, created, 1);
	else if (corrupt)
		bc_blobdir_unlink(c, key);
	if (corrupt)
		(void)bc_cache_count(c, "corrupt", 1);
	bc_cache_blob_free(b);
	return bc_seterr(err, corrupt ? BC_ERR_CORRUPT : r, "%s", sub);
}

int
bc_cache_lookup(struct bc_cache *c, const char *key, struct bc_cache_blob *b,
    char *err)
{
	int64_t created = 0, size = 0;
	char sub[BC_ERRLEN];
	int r, found;

	bc_cache_blob_free(b);
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	if ((r = find_row(c, key, &found, &created, &size, err)) != BC_OK)
		return r;
	/* No row: a blob whose row the keeper has not written yet is
	 * served all the same (verified like any other). */
	if (!found && !bc_cache_blob_exists(c, key))
		return bc_seterr(err, BC_ERR_NOENT, "not in the cache");
	r = read_blob(c, key, found, size, b, sub);
	if (r == BC_ERR_NOENT) {
		/* Row without blob (a crash between the two): forget it. */
		if (found)
			drop_entry(c, key, created, 0);
		return bc_seterr(err, BC_ERR_NOENT, "blob missing: %s", sub);
	}
	if (r != BC_OK)
		return drop_bad_blob(c, key, found, created, r, b, sub, err);
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
	    bc_index_prep(c, "SELECT dir FROM origins WHERE key=?1", &st,
	    NULL) != BC_OK)
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
	if (bc_index_begin(c, NULL) != BC_OK)
		return;
	if (bc_index_prep(c, "UPDATE entries SET last_used=?2, hits=hits+1, "
	    "seq=(SELECT COALESCE(MAX(seq),0)+1 FROM entries) WHERE key=?1",
	    &st, NULL) == BC_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
		(void)sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (count != BC_CACHE_COUNT_NONE) {
		(void)bc_index_add(c, "counters", "requests", 1);
		(void)bc_index_add(c, "counters", "hits", 1);
		(void)bc_index_add(c, "counters", "time_saved_ms", compile_ms);
		if (other_checkout(c, key, origin))
			(void)bc_index_add(c, "counters",
			    "hits_other_checkout", 1);
	}
	(void)bc_index_commit(c, NULL);
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

/* ---------------------------------------------------------------------
 * put
 */

int
bc_cache_put_blob(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, int miss, struct bc_cache_stored *rec,
    char *err)
{
	struct bc_buf blob;
	char *path;
	int r;

	memset(rec, 0, sizeof(*rec));
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	rec->osize = bc_blob_entry_len(e);
	bc_buf_init(&blob, BC_BUF_CEILING);
	r = bc_cache_blob_encode(e, 1, &blob, err);
	if (r == BC_OK) {
		path = bc_cache_blob_path(c, key);
		r = bc_blobdir_write(path, &blob, err);
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

/* The row of one record with the batch's statements (sel: its old size,
 * ins: the row, org: its origin); *added grows by its bytes. */
static int
insert_row(struct bc_cache *c, sqlite3_stmt *sel, sqlite3_stmt *ins,
    sqlite3_stmt *org, const struct bc_cache_stored *v, int64_t *added,
    char *err)
{
	int64_t old = 0;
	int r = BC_OK;

	if (!bc_hash_is_hex(v->key) || v->size < 0)
		return bc_seterr(err, BC_ERR_INVAL, "bad stored record");
	sqlite3_reset(sel);
	sqlite3_bind_text(sel, 1, v->key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(sel) == SQLITE_ROW)
		old = sqlite3_column_int64(sel, 0);
	sqlite3_reset(ins);
	sqlite3_bind_text(ins, 1, v->key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(ins, 2, v->size);
	sqlite3_bind_int64(ins, 3, v->osize);
	sqlite3_bind_int64(ins, 4, v->created);
	sqlite3_bind_int64(ins, 5, v->compile_ms);
	if (sqlite3_step(ins) != SQLITE_DONE)
		r = bc_index_err(c, err, "insert");
	*added += v->size - old;
	if (r == BC_OK && v->origin[0] != '\0') {
		sqlite3_reset(org);
		sqlite3_bind_text(org, 1, v->key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(org, 2, v->origin, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(org) != SQLITE_DONE)
			r = bc_index_err(c, err, "insert origin");
	}
	return r;
}

int
bc_store_insert_rows(struct bc_cache *c, const struct bc_cache_stored *v,
    size_t n, int64_t *added, char *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL, *org = NULL;
	size_t i;
	int r = BC_OK;

	*added = 0;
	if (bc_index_prep(c, "INSERT OR REPLACE INTO origins(key,dir) "
	    "VALUES(?1,?2)", &org, err) != BC_OK)
		return BC_ERR_IO;
	if (bc_index_prep(c, "SELECT size FROM entries WHERE key=?1", &sel,
	    err) != BC_OK || bc_index_prep(c, "INSERT OR REPLACE INTO "
	    "entries(key,size,osize,created,last_used,seq,hits,compile_ms) "
	    "VALUES(?1,?2,?3,?4,?4,(SELECT COALESCE(MAX(seq),0)+1 FROM "
	    "entries),0,?5)", &ins, err) != BC_OK) {
		sqlite3_finalize(sel);
		sqlite3_finalize(org);
		return BC_ERR_IO;
	}
	for (i = 0; i < n && r == BC_OK; i++)
		r = insert_row(c, sel, ins, org, &v[i], added, err);
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	sqlite3_finalize(org);
	return r;
}

/* The rows of a batch and what they count, in one transaction. */
static int
index_batch(struct bc_cache *c, const struct bc_cache_stored *v, size_t n,
    char *err)
{
	int64_t added = 0, misses = 0;
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		misses += v[i].miss != 0;
	if ((r = bc_index_begin(c, err)) != BC_OK)
		return r;
	r = bc_store_insert_rows(c, v, n, &added, err);
	if (r == BC_OK && (bc_index_add(c, "state", "stored_bytes", added)
	    != BC_OK || bc_index_add(c, "counters", "stores", (int64_t)n)
	    != BC_OK || (misses > 0 &&
	    (bc_index_add(c, "counters", "requests", misses) != BC_OK ||
	    bc_index_add(c, "counters", "misses", misses) != BC_OK))))
		r = bc_index_err(c, err, "insert");
	if (r == BC_OK)
		return bc_index_commit(c, err);
	bc_index_rollback(c);
	return r;
}

int
bc_cache_index_stored(struct bc_cache *c, const struct bc_cache_stored *v,
    size_t n, char *err)
{
	size_t i;
	int r;

	if (n == 0)
		return BC_OK;
	if ((r = index_batch(c, v, n, err)) != BC_OK) {
		/* No row was written: take the blobs away again. */
		for (i = 0; i < n; i++)
			if (bc_hash_is_hex(v[i].key))
				bc_blobdir_unlink(c, v[i].key);
		(void)bc_cache_count(c, "store_errors", (int64_t)n);
		return r;
	}
	if ((uint64_t)bc_index_get(c, "state", "stored_bytes") >
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
