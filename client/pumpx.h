/*
 * pumpx.h - the client side of the BOLT pump request (doc/PROTOCOL.md,
 * "BOLT pump"): manifest of names and SHA-256 first, then only the files
 * the daemon lacks, zstd bodies.
 */
#ifndef BC_CLIENT_PUMPX_H
#define BC_CLIENT_PUMPX_H

#include "common/hosts.h"
#include "common/proto.h"
#include "client/pump.h"
#include "client/remote.h"

int bc_cpumpx_compile(struct bc_cpump *p, const struct bc_host *h,
    int connect_timeout_ms, int io_timeout_ms, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err);

#endif
