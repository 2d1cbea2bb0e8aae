/*
 * hitcache.h - the client's own tier of the artifact cache: the results
 * this user's builds got from the farm (hits and compiles), kept on the
 * local disk, so that building the same tree again needs no connection.
 *
 * An entry is found by its local key: SHA-256 over the farm's cache key
 * (which already covers the compiler, the flags, and the contents of the
 * source and every header, cache/key.h), the working directory and the
 * command as typed but for where its outputs go (-o, -MF,
 * --serialize-diagnostics), so it is only served to the command that
 * made it, in the directory that made it: its .d and messages name that
 * command's files, and a mapped key (shared across checkouts on the farm)
 * never hands one checkout's paths to another here.  What is stored is
 * what the farm's reply gave after the client made it its own (the
 * object, stderr, stdout, the .dia and the .d), in the farm's blob format
 * (cache/blob.h: zstd frames under a SHA-256 checksum), so a damaged
 * entry is found out, removed and never served.
 *
 * Layout: DIR/<2 hex>/<64 hex>, DIR = $BOLTCC_DIR/hits.  Entries are
 * written by temp file and rename (concurrent builds see a whole entry
 * or none) and read without locks; a hit refreshes the entry's mtime,
 * and once in BC_HITCACHE_TRIM_EVERY stores the oldest entries go until
 * the tier is at most 80% of its size limit (BOLTCC_LOCAL_CACHE_SIZE).
 */
#ifndef BC_HITCACHE_H
#define BC_HITCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/proto.h"
#include "common/util.h"
#include "common/limits.h"

/* Default size limit of the tier (BOLTCC_LOCAL_CACHE_SIZE). */
#define BC_HITCACHE_DEFAULT_SIZE ((uint64_t)512 << 20)
/* One store in this many looks at the tier's size (a directory walk). */
#define BC_HITCACHE_TRIM_EVERY 32

/* The local key of a farm key for this command in this directory. */
void bc_hitcache_key(const char *key, const char *cwd,
    const struct bc_strv *argv, char out[BC_HASH_HEXLEN + 1]);

/*
 * Read the entry lkey of the tier at dir into rep (initialised by the
 * caller; serr, sout, doto, dia and dotd set, status 0).  BC_OK: a hit;
 * BC_ERR_NOENT: none; BC_ERR_CORRUPT: it failed verification and was
 * removed (err says why).
 */
int bc_hitcache_get(const char *dir, const char *lkey, struct bc_reply *rep,
    char *err);

/* Store rep (a successful compile's outputs) as the entry lkey, then
 * maybe trim the tier to max_bytes. */
int bc_hitcache_put(const char *dir, uint64_t max_bytes, const char *lkey,
    const struct bc_reply *rep, char *err);

/* Remove the oldest entries until the tier holds at most 80% of
 * max_bytes; the bytes it holds after, in *left (may be NULL). */
int bc_hitcache_trim(const char *dir, uint64_t max_bytes, uint64_t *left,
    char *err);

/* What the tier at dir holds: entries, their bytes, and the oldest
 * entry's last use (unix seconds, its mtime; 0 if none). */
void bc_hitcache_info(const char *dir, uint64_t *entries, uint64_t *bytes,
    int64_t *oldest);
/* Remove the entries not used since before cutoff (unix seconds;
 * INT64_MAX: all of them, `boltcc --cache clear --local`); *removed and
 * *freed (may be NULL) get what went. */
int bc_hitcache_evict_older(const char *dir, int64_t cutoff,
    uint64_t *removed, uint64_t *freed, char *err);

#endif
