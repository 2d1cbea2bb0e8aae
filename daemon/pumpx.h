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
#include "common/io.h"
#include "common/proto.h"

/* 1 if req is a pump job of either kind (protocol 3 or BOLT pump). */
#define BC_REQ_IS_PUMP(req) ((req)->proto == 3 || \
	((req)->proto == BC_PROTO_BOLT && (req)->kind == BC_RQST_PUMP))

/*
 * After the head of a BOLT pump request: make the job dir (*dir, set
 * even on failure), build <dir>/root from the manifest, the store and the
 * files received, create the client's cwd there.  cache_dir: where the
 * store lives (NULL: under $TMPDIR).  *root, *cwd malloc'd.
 */
int bc_pumpx_receive(struct bc_io *io, const struct bc_request *req,
    const char *cache_dir, char **dir, char **root, char **cwd, char *why);
/* The BOLT pump reply, with <jobdir>/deps.d fixed up as DOTD. */
int bc_pumpx_job_reply(struct bc_buf *out, const char *jobdir,
    const char *root, const struct bc_reply *rep, char *err);

#endif
