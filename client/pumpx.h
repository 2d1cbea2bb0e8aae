/*
 * pumpx.h - the client side of the BOLT pump request (doc/PROTOCOL.md,
 * "BOLT pump"): manifest of names and SHA-256 first, then only the files
 * the daemon lacks, zstd bodies.
 */
#ifndef BC_CLIENT_PUMPX_H
#define BC_CLIENT_PUMPX_H

#include "common/hash.h"
#include "common/hosts.h"
#include "common/proto.h"
#include "client/pump.h"
#include "client/remote.h"

/*
 * The cache key of the job as the daemon will compute it from the
 * manifest (cache/key.h, bc_cache_pump_key), for routing and lookups.
 * BC_OK, or BC_ERR_INVAL when a file has no hash (not scanned for BOLT).
 */
int bc_cpumpx_key(const struct bc_cpump *p, const char *identity,
    char out[BC_HASH_HEXLEN + 1]);
/* The same, with *exact_why (when not NULL) as bc_cache_pump_key_paths
 * says: NULL for a key across checkouts, else why it is exact. */
int bc_cpumpx_key_paths(const struct bc_cpump *p, const char *identity,
    char out[BC_HASH_HEXLEN + 1], char **exact_why);

/* A reply served from the cache names the storer's mapped prefixes as
 * tokens (cache/pathmap.h): make its stderr and .d name ours.  A no-op
 * for a reply without tokens.  BC_ERR_CORRUPT for a token naming no map
 * of this command. */
int bc_cpumpx_unmap(const struct bc_cpump *p, struct bc_reply *rep,
    char *err);

int bc_cpumpx_compile(struct bc_cpump *p, const struct bc_host *h,
    int connect_timeout_ms, int io_timeout_ms, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err);

#endif
