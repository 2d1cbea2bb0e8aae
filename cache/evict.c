/*
 * evict.c - what leaves the artifact cache and when: exact LRU eviction
 * down to the limit in force (after a store, at start-up), that limit
 * (an operator's, kept in the index, else --cache-size), and an
 * operator's clear and evict-older-than (doc/cache.md, "Writes, crashes,
 * eviction" and "Administration").
 *
 * LRU eviction deletes rows first and unlinks the blobs after the commit;
 * an operator's removals unlink a batch's blobs first and then delete its
 * rows, so that a crash never brings back an entry the operator removed
 * (a blob without a row would be adopted at the next start).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

/* rows deleted per transaction of LRU eviction */
#define EVICT_BATCH 64

/* ---------------------------------------------------------------------
 * the limit
 */

uint64_t
bc_cache_operator_limit(struct bc_cache *c)
{
	int64_t v = bc_index_get(c, "state", "limit_bytes");

	return v > 0 ? (uint64_t)v : 0;
}

uint64_t
bc_cache_limit(struct bc_cache *c)
{
	uint64_t op = bc_cache_operator_limit(c);

	return op > 0 ? op : c->max_bytes;
}

/* ---------------------------------------------------------------------
 * LRU eviction
 */

/* Rows deleted in LRU order while *total exceeds max_bytes, at most a
 * batch; their keys pushed to gone, *n of them, *rows rows looked at.  In
 * the caller's transaction. */
static int
delete_lru(struct bc_cache *c, uint64_t max_bytes, int64_t *total,
    int *rows, int *n, struct bc_strv *gone, char *err)
{
	sqlite3_stmt *st, *del;

	if (bc_index_prep(c, "SELECT key, size FROM entries ORDER BY seq "
	    "LIMIT " BC_CACHE_STR(EVICT_BATCH), &st, err) != BC_OK ||
	    bc_index_prep(c, "DELETE FROM entries WHERE key=?1", &del, err)
	    != BC_OK)
		return BC_ERR_IO;
	while (*total > (int64_t)max_bytes &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);

		(*rows)++;
		if (k == NULL)
			continue;
		sqlite3_bind_text(del, 1, k, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(del) == SQLITE_DONE) {
			*total -= sqlite3_column_int64(st, 1);
			bc_strv_push(gone, k);
			(*n)++;
		}
		sqlite3_reset(del);
	}
	sqlite3_finalize(st);
	sqlite3_finalize(del);
	return BC_OK;
}

/* One transaction of eviction; gone: the keys whose blobs are to go
 * after it.  *done: nothing more to evict. */
static int
evict_batch(struct bc_cache *c, uint64_t max_bytes, struct bc_strv *gone,
    int *done, char *err)
{
	int64_t total;
	int n = 0, rows = 0, r;

	*done = 1;
	if ((r = bc_index_begin(c, err)) != BC_OK)
		return r;
	total = bc_index_get(c, "state", "stored_bytes");
	if (total <= (int64_t)max_bytes) {
		(void)bc_index_commit(c, NULL);
		return BC_OK;
	}
	if (delete_lru(c, max_bytes, &total, &rows, &n, gone, err) != BC_OK) {
		bc_index_rollback(c);
		return BC_ERR_IO;
	}
	if (rows == 0)
		total = 0;	/* nothing left: the total was stale */
	if (bc_index_set_state(c, "stored_bytes", total < 0 ? 0 : total) !=
	    BC_OK || bc_index_add(c, "counters", "evictions", n) != BC_OK) {
		bc_index_rollback(c);
		return bc_index_err(c, err, "evict");
	}
	if ((r = bc_index_commit(c, err)) != BC_OK)
		return r;
	*done = rows == 0;
	return BC_OK;
}

int
bc_cache_evict(struct bc_cache *c, uint64_t max_bytes, uint64_t *evicted,
    char *err)
{
	struct bc_strv gone = BC_STRV_INIT;
	uint64_t n_total = 0;
	size_t i;
	int r, done;

	if (evicted != NULL)
		*evicted = 0;
	do {
		r = evict_batch(c, max_bytes, &gone, &done, err);
		if (r == BC_OK) {
			for (i = 0; i < gone.n; i++)
				bc_blobdir_unlink(c, gone.v[i]);
			n_total += gone.n;
		}
		bc_strv_free(&gone);
	} while (r == BC_OK && !done);
	if (evicted != NULL)
		*evicted = n_total;
	return r;
}

/* ---------------------------------------------------------------------
 * an operator's clear and evict-older-than
 */

/* Up to BC_CACHE_ADMIN_BATCH keys of entries with seq <= maxseq and
 * last_used < cutoff, oldest first. */
static int
select_batch(struct bc_cache *c, int64_t maxseq, int64_t cutoff,
    struct bc_strv *keys, char *err)
{
	sqlite3_stmt *st;

	if (bc_index_prep(c, "SELECT key FROM entries WHERE seq<=?1 AND "
	    "last_used<?2 ORDER BY seq LIMIT "
	    BC_CACHE_STR(BC_CACHE_ADMIN_BATCH), &st, err) != BC_OK)
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

/* The blobs of a batch, before its rows. */
static void
unlink_blobs(struct bc_cache *c, const struct bc_strv *keys)
{
	size_t i;

	for (i = 0; i < keys->n; i++)
		if (bc_hash_is_hex(keys->v[i]))
			bc_blobdir_unlink(c, keys->v[i]);
}

/* The rows of keys that still match (a key stored again meanwhile has a
 * newer seq and stays), in the caller's transaction; *gone, *cnt: their
 * bytes and number. */
static int
delete_rows(struct bc_cache *c, const struct bc_strv *keys, int64_t maxseq,
    int64_t cutoff, int64_t *gone, int64_t *cnt, char *err)
{
	sqlite3_stmt *sel = NULL, *del = NULL;
	size_t i;
	int r = BC_OK;

	if (bc_index_prep(c, "SELECT size FROM entries WHERE key=?1 AND "
	    "seq<=?2 AND last_used<?3", &sel, err) != BC_OK ||
	    bc_index_prep(c, "DELETE FROM entries WHERE key=?1", &del, err)
	    != BC_OK) {
		sqlite3_finalize(sel);
		return BC_ERR_IO;
	}
	for (i = 0; i < keys->n && r == BC_OK; i++) {
		sqlite3_reset(sel);
		sqlite3_bind_text(sel, 1, keys->v[i], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(sel, 2, maxseq);
		sqlite3_bind_int64(sel, 3, cutoff);
		if (sqlite3_step(sel) != SQLITE_ROW)
			continue;
		*gone += sqlite3_column_int64(sel, 0);
		sqlite3_reset(del);
		sqlite3_bind_text(del, 1, keys->v[i], -1, SQLITE_TRANSIENT);
		if (sqlite3_step(del) != SQLITE_DONE)
			r = bc_index_err(c, err, "delete");
		(*cnt)++;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(del);
	return r;
}

/* A batch's rows, its bytes off the total and its evictions counted, in
 * one transaction; *n, *bytes grow by what went. */
static int
delete_batch(struct bc_cache *c, const struct bc_strv *keys, int64_t maxseq,
    int64_t cutoff, uint64_t *n, uint64_t *bytes, char *err)
{
	int64_t total, gone = 0, cnt = 0;
	int r;

	if ((r = bc_index_begin(c, err)) != BC_OK)
		return r;
	r = delete_rows(c, keys, maxseq, cutoff, &gone, &cnt, err);
	total = bc_index_get(c, "state", "stored_bytes") - gone;
	if (r == BC_OK && (bc_index_set_state(c, "stored_bytes", total < 0 ?
	    0 : total) != BC_OK || bc_index_add(c, "counters", "evictions",
	    cnt) != BC_OK))
		r = bc_index_err(c, err, "remove");
	if (r != BC_OK) {
		bc_index_rollback(c);
		return r;
	}
	if ((r = bc_index_commit(c, err)) != BC_OK)
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

	if ((r = bc_index_need(c, err)) != BC_OK)
		return r;
	maxseq = bc_index_query_int(c,
	    "SELECT COALESCE(MAX(seq),0) FROM entries");
	for (;;) {
		struct bc_strv keys = BC_STRV_INIT;

		if ((r = select_batch(c, maxseq, cutoff, &keys, err)) != BC_OK ||
		    keys.n == 0) {
			bc_strv_free(&keys);
			break;
		}
		unlink_blobs(c, &keys);
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
	if ((r = bc_index_need(c, err)) != BC_OK)
		return r;
	if (bytes == 0)
		r = bc_index_exec(c, "DELETE FROM state WHERE "
		    "name='limit_bytes'", err);
	else if (bc_index_set_state(c, "limit_bytes", (int64_t)bytes) !=
	    BC_OK)
		r = bc_index_err(c, err, "setting the limit");
	if (r != BC_OK)
		return r;
	before = bc_index_get(c, "state", "stored_bytes");
	r = bc_cache_evict(c, bc_cache_limit(c), n, err);
	after = bc_index_get(c, "state", "stored_bytes");
	if (freed != NULL)
		*freed = before > after ? (uint64_t)(before - after) : 0;
	return r;
}
