/*
 * store_int.h - what the files of the artifact cache share and nobody
 * else uses: the handle's fields and each file's functions for the
 * others, grouped by the file that defines them.  The public interface is
 * store.h (and blob.h); see there for which file does what.
 */
#ifndef BC_CACHE_STORE_INT_H
#define BC_CACHE_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "cache/store.h"

#define BC_CACHE_STR_(x) #x
#define BC_CACHE_STR(x) BC_CACHE_STR_(x)

/* A process's handle on one cache directory (store.h). */
struct bc_cache {
	char *dir;
	char *blobdir;
	char *lockpath;		/* CACHEDIR/inflight.lock */
	int lockfd;		/* opened on first use, -1 before */
	sqlite3 *db;		/* NULL until opened (bc_cache_open_lazy) */
	uint64_t max_bytes;
};

/* blob.c */
/* Verify the n-byte blob at p (structure, checksum, frame sizes) and fill
 * b's sizes, offsets, compile time and origin on BC_OK; b->data is not
 * touched (the caller moves the bytes in, no copy). */
int bc_blob_verify(const void *p, size_t n, struct bc_cache_blob *b,
    char *err);
/* The uncompressed bytes of an entry (an index row's osize). */
int64_t bc_blob_entry_len(const struct bc_cache_entry *e);

/* blobdir.c: the blob files, blobs/ab/<key> */
/* Path of key's blob under blobdir (malloc'd). */
char *bc_blobdir_path(const char *blobdir, const char *key);
/* All 256 blob directories, when the cache is made. */
void bc_blobdir_make(struct bc_cache *c);
/* fn(c, path, arg) for each blob directory blobs/ab that exists. */
void bc_blobdir_each(struct bc_cache *c,
    void (*fn)(struct bc_cache *c, const char *dir, void *arg), void *arg);
/* Schema 1's blobs/ab/cd/<key> moved to blobs/ab/<key>. */
void bc_blobdir_migrate_v1(struct bc_cache *c);
/* Write b to path by a temp file in its directory and rename. */
int bc_blobdir_write(const char *path, const struct bc_buf *b, char *err);
/* Unlink key's blob, errors ignored (key is not checked: callers check
 * keys that did not come from the index). */
void bc_blobdir_unlink(const struct bc_cache *c, const char *key);
/* 1 if key's blob exists under blobdir, or a stat fails for another
 * reason than its absence (then a lookup tells what is wrong). */
int bc_blobdir_maybe(const char *blobdir, const char *key);

/* index.c: the sqlite index.  err may be NULL everywhere. */
/* Open (make, migrate) the index of c; c->db stays NULL on failure. */
int bc_index_open(struct bc_cache *c, char *err);
/* The index, opened on first use for a lazy handle. */
int bc_index_need(struct bc_cache *c, char *err);
/* BC_ERR_IO with the connection's message, "what" naming the step. */
int bc_index_err(struct bc_cache *c, char *err, const char *what);
int bc_index_exec(struct bc_cache *c, const char *sql, char *err);
/* A prepared statement in *st (NULL on error). */
int bc_index_prep(struct bc_cache *c, const char *sql, sqlite3_stmt **st,
    char *err);
/* BEGIN IMMEDIATE; COMMIT (rolled back if it fails); ROLLBACK. */
int bc_index_begin(struct bc_cache *c, char *err);
int bc_index_commit(struct bc_cache *c, char *err);
void bc_index_rollback(struct bc_cache *c);
/* Add delta to table.name (table: "counters" or "state"). */
int bc_index_add(struct bc_cache *c, const char *table, const char *name,
    int64_t delta);
/* table.name's value, 0 if there is none (or on error). */
int64_t bc_index_get(struct bc_cache *c, const char *table,
    const char *name);
/* Set state.name to v. */
int bc_index_set_state(struct bc_cache *c, const char *name, int64_t v);
/* The first column of sql's first row, 0 if none (or on error). */
int64_t bc_index_query_int(struct bc_cache *c, const char *sql);

/* store.c */
/* The entries (and origins) rows of n stored blobs, in the caller's
 * transaction; *added: the bytes they add to stored_bytes. */
int bc_store_insert_rows(struct bc_cache *c,
    const struct bc_cache_stored *v, size_t n, int64_t *added, char *err);

#endif
