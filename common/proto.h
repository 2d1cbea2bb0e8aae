/*
 * proto.h - job requests and replies on the wire: distcc protocols 1 and 2
 * byte-for-byte (spec distcc-protocol.md sections 4-6), and boltcc's own
 * extension "BOLT" (doc/PROTOCOL.md) used only between boltcc and boltccd.
 *
 * BOLT v1 (all bulk bodies zstd, empty = length 0):
 *   request:  BOLT 1, RQST kind
 *             kind 1 (compile): FLAG bits, CDIR cwd, ARGC n, ARGV x n, DOTI
 *             kind 2 (hello):   nothing more
 *   reply:    BOLT 1, then either EROR <text> (refused, connection closes)
 *             or for compile: STAT, SERR, SOUT, DOTO, DIAG
 *             or for hello:   INFO <text "boltccd VERSION">
 * A stock distccd closes silently on the unknown first token, which is how
 * a probe tells the two apart.
 *
 * Reading functions enforce the limits of limits.h before allocating.
 */
#ifndef BC_PROTO_H
#define BC_PROTO_H

#include <stdint.h>
#include "buf.h"
#include "io.h"
#include "util.h"

#define BC_PROTO_BOLT 0x100	/* boltcc extension (not a DIST value) */
#define BC_BOLT_VERSION 1

enum bc_rqst {
	BC_RQST_COMPILE = 1,
	BC_RQST_HELLO = 2,
};

/* FLAG bits of a BOLT compile request. */
#define BC_FLAG_WANT_DIA 0x1	/* client wants serialized diagnostics */

struct bc_request {
	int proto;		/* 1, 2 or BC_PROTO_BOLT */
	int kind;		/* enum bc_rqst (always COMPILE for 1/2) */
	uint32_t flags;		/* BOLT FLAG */
	char *cwd;		/* BOLT CDIR; NULL for protocols 1/2 */
	struct bc_strv argv;	/* compiler argv as sent */
	struct bc_buf doti;	/* preprocessed source, uncompressed */
};

struct bc_reply {
	int proto;
	uint32_t status;	/* raw wait status: exit << 8 | signal */
	struct bc_buf serr;	/* all uncompressed */
	struct bc_buf sout;
	struct bc_buf doto;
	struct bc_buf dia;	/* BOLT only */
	char *info;		/* BOLT hello reply text */
	char *errmsg;		/* BOLT EROR text */
};

void bc_request_init(struct bc_request *req);
void bc_request_free(struct bc_request *req);
void bc_reply_init(struct bc_reply *rep);
void bc_reply_free(struct bc_reply *rep);

/*
 * Client side.  The head (everything before DOTI) can be sent while the
 * preprocessor still runs; then the DOTI packet.  proto selects framing
 * and compression (1: raw, 2: LZO, BOLT: zstd).
 */
int bc_proto_write_request_head(struct bc_buf *out, const struct bc_request *req,
    char *err);
int bc_proto_write_doti(struct bc_buf *out, int proto, const void *p, size_t n,
    char *err);
/* Read a whole reply for a request of protocol proto (kind for BOLT).
 * A BOLT EROR reply returns BC_ERR_DENIED with rep->errmsg set. */
int bc_proto_read_reply(struct bc_io *io, int proto, int kind,
    struct bc_reply *rep, char *err);

/*
 * Daemon side.  Reads the first token and the whole request.  DIST 1 and
 * 2 are served; DIST 0, 3 (until pump lands) and >= 4, or any other first
 * token, are BC_ERR_PROTO / BC_ERR_NOTSUP with a message naming it.
 */
int bc_proto_read_request(struct bc_io *io, struct bc_request *req, char *err);
/* Encode a reply for req->proto into out: DONE/STAT/SERR/SOUT/DOTO for
 * distcc protocols (DOTO empty when status != 0), the BOLT form above. */
int bc_proto_write_reply(struct bc_buf *out, const struct bc_request *req,
    const struct bc_reply *rep, char *err);
/* BOLT refusal: "BOLT 1, EROR text". */
int bc_proto_write_error(struct bc_buf *out, const char *msg, char *err);
/* BOLT hello reply. */
int bc_proto_write_info(struct bc_buf *out, const char *info, char *err);

#endif
