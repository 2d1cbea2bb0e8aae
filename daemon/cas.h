/*
 * cas.h - the daemon's store of pump-mode files, addressed by the SHA-256
 * of their contents (BOLT pump, doc/PROTOCOL.md).  Layout:
 * DIR/<2 hex>/<64 hex>, files 0600, written by temp file + rename.  A
 * file is stored only after its contents were hashed here and matched the
 * address (a client's claim is never trusted), and its hash is checked
 * again when it is read (a damaged file is removed and reported missing).
 * Bounded: when the store exceeds its size, the least recently used files
 * (by mtime, refreshed on every use) are removed down to 80%.
 */
#ifndef BC_CAS_H
#define BC_CAS_H

#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"
#include "common/hash.h"

#define BC_CAS_MAX_DEFAULT ((uint64_t)512 << 20)
#define BC_CAS_TRIM_EVERY_SEC 30

struct bc_cas {
	char *dir;		/* NULL = no store (every file is needed) */
	uint64_t max_bytes;
};

/*
 * Open (create) the store under cache_dir/pumpfiles, or, without a cache
 * dir, $TMPDIR/boltccd-pumpfiles-<uid> (which must then be a directory of
 * ours, mode 0700, not a link).  Failure leaves c->dir NULL: the daemon
 * works without dedup.
 */
int bc_cas_open(struct bc_cas *c, const char *cache_dir, uint64_t max_bytes,
    char *err);
void bc_cas_close(struct bc_cas *c);

/* Contents of hash into out (appended): BC_OK, BC_ERR_NOENT. */
int bc_cas_get(const struct bc_cas *c, const uint8_t hash[BC_HASH_LEN],
    struct bc_buf *out, size_t max, char *err);
/* Store n bytes at p under hash: BC_ERR_CORRUPT if they do not hash to
 * it (nothing stored). */
int bc_cas_put(const struct bc_cas *c, const uint8_t hash[BC_HASH_LEN],
    const void *p, size_t n, char *err);
/* Remove least recently used files while the store is above its bound
 * (at most once per BC_CAS_TRIM_EVERY_SEC unless force). */
void bc_cas_trim(const struct bc_cas *c, int force);

#endif
