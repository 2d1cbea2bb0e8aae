/*
 * pumpx.h - the daemon side of the BOLT pump request (common/proto3x.h):
 * the manifest is read, files already in the content store (daemon/cas.h)
 * go into the job's tree from there, the rest is asked for (NEED),
 * received, checked against its SHA-256 and stored; then the job runs as a
 * protocol-3 job (daemon/pump.h, same tree rules and argv rewrite) and is
 * answered in BOLT framing with zstd bodies.
 */
#ifndef BC_PUMPX_H
#define BC_PUMPX_H

#include "common/buf.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/proto.h"
#include "common/proto3x.h"

/* 1 if req is a pump job of either kind (protocol 3 or BOLT pump). */
#define BC_REQ_IS_PUMP(req) ((req)->proto == 3 || \
	((req)->proto == BC_PROTO_BOLT && (req)->kind == BC_RQST_PUMP))

/* After the head of a BOLT pump request: check CDIR, read the manifest
 * (m freed by the caller with bc_proto3x_manifest_free). */
int bc_pumpx_read(struct bc_io *io, const struct bc_request *req,
    struct bc_proto3x_manifest *m, char *why);
/*
 * The cache key of the job (cache/key.h, bc_cache_pump_key) from the
 * manifest as received and this daemon's compiler identity.  exact: the
 * key with the paths as written even when they could be mapped.  A
 * mapped key needs each header map's contents: they come from the file
 * store under cache_dir, or from bc_pumpx_fetch; while one is missing
 * the key cannot be known yet and out is "" (returns 1; else 0).
 * *mapped (when not NULL) says whether the key is mapped.
 */
int bc_pumpx_key(struct bc_proto3x_manifest *m, const struct bc_request *req,
    const char *identity, const char *cache_dir, int exact,
    char out[BC_HASH_HEXLEN + 1], int *mapped);
/*
 * After the manifest: make the job dir (*dir, set even on failure), ask
 * for the files the store lacks (NEED), build <dir>/root from the store
 * and the files received (each checked against its SHA-256), create the
 * client's cwd there.  cache_dir: where the store lives (NULL: under
 * $TMPDIR).  *root, *cwd malloc'd.  Header maps get their mapped digest
 * (bc_pumpx_key) on the way.
 */
/* Files a job received, to be put into the store once the compiler runs
 * (bc_pumpx_store_received).  Zeroed before the first use. */
struct bc_pumpx_file {
	uint8_t hash[BC_HASH_LEN];
	uint8_t *data;
	size_t len;
};
struct bc_pumpx_received {
	struct bc_pumpx_file *v;
	size_t n;
	size_t bytes;		/* at most BC_PUMPX_DEFER_MAX */
};

int bc_pumpx_fetch(struct bc_io *io, const struct bc_request *req,
    struct bc_proto3x_manifest *m, const char *cache_dir,
    struct bc_pumpx_received *rx, char **dir, char **root, char **cwd,
    char *why);
/* Put the files bc_pumpx_fetch received into rx (already checked against
 * their SHA-256) into the store under cache_dir (as for bc_pumpx_fetch),
 * and empty rx; the worker calls it once the compiler runs, and again at
 * the end. */
void bc_pumpx_store_received(struct bc_pumpx_received *rx,
    const char *cache_dir);

#endif
