/*
 * store.h - the daemon's artifact cache: zstd blobs on disk, an sqlite3
 * index (WAL mode) with exact LRU eviction, start-up reconciliation, and
 * counters that persist across restarts.  See doc/cache.md.
 *
 * Layout under the cache dir:
 *   index.sqlite (+ -wal, -shm)   entries, counters
 *   blobs/ab/<key>                one blob per entry (key = 64 hex digits)
 *   inflight.lock                 one byte per key (48 bits of it), fcntl
 *                                 write-locked while the key is compiled
 *   identity/                     compiler identity memos (key.h)
 *
 * Each blob is in the format of blob.h.  A blob is written to a temp file
 * in its directory and renamed; only then is its index row inserted.  A
 * handle (struct bc_cache) holds one sqlite connection: open one per
 * process, never share across fork().
 *
 * Where each part lives (cache/; store_int.h is what they share):
 *   blob.c       the blob format (blob.h)
 *   blobdir.c    the blob files: paths, directories, publishing a blob
 *   index.c      the handle (open, close) and the sqlite index: schema,
 *                migration, statements
 *   store.c      get and put
 *   evict.c      LRU eviction, the size limit, an operator's clear and
 *                evict-older-than
 *   reconcile.c  making index and files agree
 *   counters.c   counters, stats and the zero's baseline
 *   locations.c  the locations table (daemon/locdir.h)
 *   inflight.c   in-flight locks and the index-free probe
 */
#ifndef BC_CACHE_STORE_H
#define BC_CACHE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/limits.h"
#include "cache/blob.h"	/* the blob format and struct bc_cache_entry */
#include "cache/key.h"	/* BC_CACHE_ORIGIN_LEN, bc_cache_origin */

#define BC_CACHE_DEFAULT_SIZE ((uint64_t)4 << 30)
#define BC_CACHE_MAX_REASONS 16

/* Counters (the counters table) and index totals. */
struct bc_cache_stats {
	uint64_t requests;	/* lookups and compile requests checked */
	uint64_t hits;
	uint64_t misses;
	uint64_t stores;
	uint64_t store_errors;	/* compile succeeded, store failed */
	uint64_t evictions;
	uint64_t corrupt;	/* blobs that failed verification */
	uint64_t identity_mismatch;	/* jobs refused: other compiler */
	uint64_t time_saved_ms;	/* sum of compile_ms of every hit */
	uint64_t hits_other_checkout;	/* hits whose entry another working
					 * directory stored */
	uint64_t uncacheable;	/* sum of the reasons below */
	uint64_t entries;	/* rows in the index */
	uint64_t stored_bytes;	/* blob bytes on disk */
	uint64_t max_bytes;	/* the limit in force: an operator's
				 * (bc_cache_set_limit), else --cache-size */
	int limit_set;		/* 1 if max_bytes is an operator's limit */
	int64_t oldest_used;	/* unix seconds: the least recent use of an
				 * entry (0: no entries) */
	int64_t zeroed_at;	/* unix seconds of the last bc_cache_zero,
				 * 0 never */
	size_t nreasons;
	struct {
		char name[48];
		uint64_t value;
	} reasons[BC_CACHE_MAX_REASONS];
};

/* Result of bc_cache_reconcile. */
struct bc_cache_check {
	uint64_t entries;	/* rows after the check */
	uint64_t bytes;		/* their blob bytes */
	uint64_t orphan_rows;	/* rows without a blob */
	uint64_t orphan_blobs;	/* blobs without a row */
	uint64_t adopted;	/* of those, verified and indexed (repair) */
	uint64_t temp_files;	/* leftovers of interrupted writes */
	uint64_t bad_size;	/* blob size differs from its row */
	uint64_t corrupt;	/* blobs failing verification (verify only) */
	uint64_t evicted;	/* entries evicted to fit max_bytes */
};

/* ------------------------------------------------------------ index.c */

struct bc_cache;

/*
 * Open (creating) the cache in dir with a size limit (0 = default).
 * BC_OK or BC_ERR_IO / BC_ERR_INVAL with err.
 */
int bc_cache_open(const char *dir, uint64_t max_bytes, struct bc_cache **out,
    char *err);
/*
 * The same, but the index is opened (made, migrated) only when a call
 * first needs it, and its errors are that call's: for a worker that may
 * need nothing but the blob files and the in-flight locks.
 */
int bc_cache_open_lazy(const char *dir, uint64_t max_bytes,
    struct bc_cache **out, char *err);
void bc_cache_close(struct bc_cache *c);
const char *bc_cache_dir(const struct bc_cache *c);

/* ------------------------------------------------------------ store.c */

/*
 * Look up key (64 hex).  BC_OK: e holds the entry (hit, counted with its
 * compile time saved and its LRU position refreshed).  BC_ERR_NOENT: a
 * miss.  A blob that is missing or fails verification is removed with
 * its row, counted as corrupt (when it exists but is bad) and reported as
 * a miss.  count: BC_CACHE_COUNT_ALL counts the request as a hit or a
 * miss, _HITS only a hit (a re-check after a miss was counted), _NONE
 * nothing (corrupt blobs are always counted).
 */
#define BC_CACHE_COUNT_NONE 0
#define BC_CACHE_COUNT_ALL 1
#define BC_CACHE_COUNT_HITS 2
int bc_cache_get(struct bc_cache *c, const char *key, int count,
    struct bc_cache_entry *e, char *err);
/*
 * The two halves of bc_cache_get, so that a daemon can answer before it
 * updates the index: bc_cache_lookup reads and verifies the blob (a
 * missing or bad one is dropped and, if bad, counted as corrupt), and
 * bc_cache_touch then counts the request (count as for bc_cache_get) and,
 * for a hit, refreshes the entry's LRU position.
 */
int bc_cache_lookup(struct bc_cache *c, const char *key,
    struct bc_cache_blob *b, char *err);
/* bc_cache_lookup without the index: the blob file alone, verified (its
 * checksum covers every byte).  BC_OK, BC_ERR_NOENT, or BC_ERR_CORRUPT
 * (nothing dropped or counted: ask bc_cache_lookup then, which does). */
int bc_cache_lookup_blob(struct bc_cache *c, const char *key,
    struct bc_cache_blob *b, char *err);
/* bc_cache_touch for a hit asked from origin (bc_cache_origin, or
 * NULL): a hit on an entry stored from another directory also counts
 * hits_other_checkout. */
void bc_cache_touch_from(struct bc_cache *c, const char *key, int count,
    int hit, int64_t compile_ms, const char *origin);
void bc_cache_touch(struct bc_cache *c, const char *key, int count, int hit,
    int64_t compile_ms);

/* 1 if the index has a row for key (no verification, nothing counted). */
int bc_cache_has(struct bc_cache *c, const char *key);
/* Store an entry, then evict least recently used entries beyond the size
 * limit.  On failure nothing is left behind and store_errors is counted
 * (if the index can still be written). */
int bc_cache_put(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, char *err);
/* bc_cache_put that also counts the request and its miss, in the same
 * transaction (a compile that looked the key up without the index). */
int bc_cache_put_miss(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, char *err);
/*
 * The two halves of a store, so that a daemon's worker can leave the
 * index to one process that keeps it open (daemon/keeper.h):
 * bc_cache_put_blob writes the blob (temp file and rename) and fills rec;
 * bc_cache_index_stored writes the rows of n such records in one
 * transaction (counting the stores, and the misses of records with miss
 * set), then evicts beyond the size limit; if it fails, their blobs are
 * removed and store_errors counted.  A blob whose row is still on its way
 * is served already (bc_cache_lookup); a crash before the row is written
 * loses that blob at the next start (bc_cache_reconcile).
 */
struct bc_cache_stored {
	char key[BC_HASH_HEXLEN + 1];
	int64_t size;		/* blob bytes */
	int64_t osize;		/* uncompressed bytes */
	int64_t created;	/* time(NULL) */
	int64_t compile_ms;
	int32_t miss;		/* also count a request and its miss */
	/* bc_cache_origin of the storing client's directory, or "" */
	char origin[BC_CACHE_ORIGIN_LEN + 1];
};
int bc_cache_put_blob(struct bc_cache *c, const char *key,
    const struct bc_cache_entry *e, int miss, struct bc_cache_stored *rec,
    char *err);
int bc_cache_index_stored(struct bc_cache *c,
    const struct bc_cache_stored *v, size_t n, char *err);

/* -------------------------------------------------------- reconcile.c */

/*
 * Make index and files agree: rows without blobs and blobs whose size
 * differs from their row are removed, blobs without rows are indexed if
 * they verify (a crash came between a blob and its row) and deleted
 * otherwise, temp files are deleted, the byte total is recomputed, then
 * eviction to the limit.
 * With repair = 0 only counts; with verify = 1 every blob is decoded and
 * a bad one is counted (and removed when repairing).
 */
int bc_cache_reconcile(struct bc_cache *c, int repair, int verify,
    struct bc_cache_check *out, char *err);

/* --------------------------------------------------------- counters.c */

/* Add delta to a named counter (e.g. "misses", "uncacheable:compile-error"). */
int bc_cache_count(struct bc_cache *c, const char *name, int64_t delta);
int bc_cache_stats(struct bc_cache *c, struct bc_cache_stats *out, char *err);
/*
 * Zero for the pages: the counters themselves are totals that never go
 * backwards (Prometheus); bc_cache_zero keeps a snapshot of them (the
 * baseline, with the time) in the index, and bc_cache_baseline reads it
 * back (all zero, zeroed_at 0, if never zeroed).  Entries stay.
 */
int bc_cache_zero(struct bc_cache *c, char *err);
int bc_cache_baseline(struct bc_cache *c, struct bc_cache_stats *base,
    char *err);
/* total - base, counter by counter (never below 0); the index totals
 * (entries, bytes, limit, oldest) are total's; zeroed_at is base's. */
void bc_cache_stats_since(const struct bc_cache_stats *total,
    const struct bc_cache_stats *base, struct bc_cache_stats *out);

/* ------------------------------------------------------------ evict.c */

/* Evict least recently used entries until the blobs take <= max_bytes. */
int bc_cache_evict(struct bc_cache *c, uint64_t max_bytes, uint64_t *evicted,
    char *err);
/*
 * Administration (doc/cache.md, "Administration").  Each works in
 * batches of BC_CACHE_ADMIN_BATCH entries, one short transaction each, so
 * the keeper and the workers are never locked out for long, and in the
 * order that a crash at any point leaves nothing that could be served
 * wrong: a batch's blobs are unlinked first, then its rows deleted (a
 * row without its blob is a miss, dropped on read and at start-up).  An
 * entry stored or refreshed while the operation runs may stay.
 *
 * bc_cache_clear removes every entry; bc_cache_evict_older the entries
 * not used since before the unix time cutoff.  *n and *freed (may be
 * NULL) get the entries and blob bytes removed; they count as evictions.
 */
#define BC_CACHE_ADMIN_BATCH 256
int bc_cache_clear(struct bc_cache *c, uint64_t *n, uint64_t *freed,
    char *err);
int bc_cache_evict_older(struct bc_cache *c, int64_t cutoff, uint64_t *n,
    uint64_t *freed, char *err);
/*
 * An operator's size limit: kept in the index (so it outlives a restart
 * and overrides --cache-size, also in every process that opens the
 * cache later or stores next), then the entries beyond it evicted.
 * bytes 0 forgets the operator's limit (--cache-size rules again).
 */
int bc_cache_set_limit(struct bc_cache *c, uint64_t bytes, uint64_t *n,
    uint64_t *freed, char *err);
/* The operator's limit kept in the index, 0 if none. */
uint64_t bc_cache_operator_limit(struct bc_cache *c);
/* The limit in force for this handle (bc_cache_operator_limit, else the
 * size it was opened with). */
uint64_t bc_cache_limit(struct bc_cache *c);

/* -------------------------------------------------------- locations.c */

/*
 * Locations (daemon/locdir.h): where keys this daemon owns were compiled,
 * kept for the next start.  Put records a batch in one transaction (an
 * empty host deletes the key's row) and keeps the newest
 * BC_CACHE_LOC_MAX rows; each calls fn for every row, oldest first.
 */
#define BC_CACHE_LOC_MAX 1000000
struct bc_cache_loc {
	char key[BC_HASH_HEXLEN + 1];
	char host[BC_MAX_LOC_HOST + 1];
};
int bc_cache_loc_put(struct bc_cache *c, const struct bc_cache_loc *v,
    size_t n, char *err);
int bc_cache_loc_each(struct bc_cache *c,
    void (*fn)(void *arg, const char *key, const char *host), void *arg,
    char *err);

/* --------------------------------------------------------- inflight.c */

#define BC_CACHE_LOCKFILE "inflight.lock"
/*
 * In-flight lock for key: BC_OK with *fd set (held; the descriptor
 * belongs to the handle, release it with bc_cache_inflight_release, do
 * not close it), BC_ERR_BUSY if another process holds it (try again
 * later), BC_ERR_IO.
 */
int bc_cache_inflight_try(struct bc_cache *c, const char *key, int *fd,
    char *err);
void bc_cache_inflight_release(struct bc_cache *c, const char *key, int fd);

/*
 * Without opening the index: BC_CACHE_PROBE_ABSENT if the cache in dir
 * cannot have key (no blob, nobody compiling it), else
 * BC_CACHE_PROBE_MAYBE (look it up).  A cheap answer to the lookups of a
 * farm's clients, most of which miss.  The caller must not hold
 * in-flight locks on this cache (it opens and closes the lock file).
 */
#define BC_CACHE_PROBE_ABSENT 0
#define BC_CACHE_PROBE_MAYBE 1
int bc_cache_probe(const char *dir, const char *key);

/* ---------------------------------------------------------- blobdir.c */

/* Path of key's blob (malloc'd). */
char *bc_cache_blob_path(const struct bc_cache *c, const char *key);
/* 1 if key's blob file exists (or cannot be told apart from existing),
 * 0 if it does not: a stat, safe while holding in-flight locks. */
int bc_cache_blob_exists(const struct bc_cache *c, const char *key);

#endif
