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

int bc_cpumpx_compile(struct bc_cpump *p, const struct bc_host *h,
    int connect_timeout_ms, int io_timeout_ms, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err);

#endif
