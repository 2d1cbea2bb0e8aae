/*
 * proto.h - job requests and replies on the wire: distcc protocols 1 and 2
 * byte-for-byte (spec distcc-protocol.md sections 4-6), and boltcc's own
 * extension "BOLT" (doc/PROTOCOL.md) used only between boltcc and boltccd.
 *
 * BOLT v1 (all bulk bodies zstd, empty = length 0):
 *   request:  BOLT 1, RQST kind
 *             kind 1 (compile): FLAG bits, CDIR cwd, ARGC n, ARGV x n, DOTI
 *             kind 2 (hello):   nothing more
 *             kind 3 (lookup):  CKEY <64 hex: cache key>
 *             kind 4 (zero):    nothing more (an operator's: zero the
 *                               counters the daemon's pages show)
 *             kind 5 (pump):    FLAG, CDIR, ARGC, ARGV x n, then the
 *                               manifest (common/proto3x.h)
 *             A compile with FLAG_IDENTITY has CMPI <identity hex> after
 *             CDIR.
 *   reply:    BOLT 1, then either EROR <text> (refused, connection closes)
 *             or for compile: STAT, SERR, SOUT, DOTO, DIAG (a compile
 *                             with FLAG_HIT_MARK served from the cache:
 *                             CHIT 0 first)
 *             or for hello:   INFO <text "boltccd VERSION">
 *             or for lookup:  MISS 0, or STAT 0, SERR, SOUT, DOTO, DIAG, DOTD
 *             or for zero:    INFO <text>
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
	BC_RQST_LOOKUP = 3,	/* cache lookup by key (doc/cache.md) */
	BC_RQST_ZERO = 4,	/* zero the pages' counters (an operator's) */
	BC_RQST_PUMP = 5,	/* pump with content-addressed files
				 * (common/proto3x.h); the reader stops
				 * after ARGV */
	BC_RQST_LOCATE = 6,	/* lookup at the key's owner, which also
				 * knows where its keys were compiled
				 * (doc/cache.md, "Locations") */
	BC_RQST_LOOKUPF = 7,	/* LOOKUP with a FLAG (BC_FLAG_ORIGIN) */
};
/* A lookup of any kind: the same hit and MISS replies. */
#define BC_RQST_IS_LOOKUP(k) ((k) == BC_RQST_LOOKUP || \
	(k) == BC_RQST_LOCATE || (k) == BC_RQST_LOOKUPF)
/* FLAG bits of a LOCATE request. */
#define BC_LOCATE_REPLACE 0x1	/* the location the owner gave missed:
				 * record HOST instead */
/* FLAG bit of every request kind with a FLAG: a reply served from the
 * cache names the working directory that stored the entry (ORIG before
 * STAT: its bc_cache_origin, empty when unknown).  A LOCATE or LOOKUPF
 * with it carries the client's own origin (ORIG, last), a compile or
 * pump request has CDIR; with it the client and the farm count hits
 * from another checkout. */
#define BC_FLAG_ORIGIN 0x20
/* An origin on the wire: 16 lowercase hex digits (cache/store.h). */
#define BC_ORIGIN_LEN 16

/* FLAG bits of a BOLT compile request. */
#define BC_FLAG_WANT_DIA 0x1	/* client wants serialized diagnostics */
#define BC_FLAG_IDENTITY 0x2	/* CMPI (compiler identity) follows CDIR;
				 * set by the writer iff req->identity */
#define BC_FLAG_LOOKED_UP 0x4	/* client already asked the cache */
#define BC_FLAG_HIT_MARK 0x8	/* client did not ask the cache: a reply
				 * served from it starts with CHIT 0 */
#define BC_FLAG_HEARTBEAT 0x10	/* compile: the daemon sends BEAT 0 every
				 * BC_BEAT_INTERVAL_MS until the reply */
#define BC_BEAT_INTERVAL_MS 2000
/* A client that has seen a BEAT gives up after this long without a byte
 * (DISTCC_IO_TIMEOUT still wins when it is shorter). */
#define BC_BEAT_TIMEOUT_MS 10000

struct bc_request {
	int proto;		/* 1, 2 or BC_PROTO_BOLT */
	int kind;		/* enum bc_rqst (always COMPILE for 1/2) */
	uint32_t flags;		/* BOLT FLAG */
	char *cwd;		/* BOLT CDIR; NULL for protocols 1/2 */
	struct bc_strv argv;	/* compiler argv as sent */
	struct bc_buf doti;	/* preprocessed source, uncompressed */
	char *identity;		/* BOLT CMPI: compiler identity hex, or NULL */
	char *key;		/* BOLT lookup CKEY (64 hex), or NULL */
	char *loc_host;		/* BOLT LOCATE HOST: where the client will
				 * compile on a miss ("" = the owner) */
	char *origin;		/* BOLT LOCATE/LOOKUPF ORIG (the client's
				 * origin, BC_ORIGIN_LEN hex), or NULL */
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
	int miss;		/* BOLT lookup: answered MISS */
	char *locn;		/* BOLT LOCATE: answered LOCN (the host
				 * holding or compiling the key) */
	int cache_hit;		/* BOLT compile: answered CHIT (from cache) */
	/* BOLT hit with FLAG_ORIGIN: ORIG, the origin of the directory that
	 * stored the entry ("" when unknown); has_origin: ORIG was there */
	int has_origin;
	char origin[BC_ORIGIN_LEN + 1];
	uint32_t beats;		/* BOLT compile: BEATs before the reply */
	struct bc_buf dotd;	/* BOLT lookup hit: stored .d, may be empty */
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
/* BOLT reply of a successful compile (or lookup hit) whose bodies are
 * already zstd frames, e.g. from the artifact cache: z[i]/zn[i] are SERR,
 * SOUT, DOTO, DIAG and, for a lookup, DOTD (zn 0 = empty).  The frames
 * are sent as they are.  With FLAG_ORIGIN in the request (and CHIT for a
 * compile), ORIG names origin, the storer's (NULL: unknown). */
int bc_proto_write_reply_zstd(struct bc_buf *out, const struct bc_request *req,
    const char *origin, const void *const z[5], const size_t zn[5],
    char *err);
/* The origin of a hit's entry: ORIG with origin, or empty when origin is
 * NULL, "" or not BC_ORIGIN_LEN lowercase hex digits (unknown). */
int bc_proto_write_origin(struct bc_buf *out, const char *origin, char *err);
/* 1 if the n bytes at p are an origin: BC_ORIGIN_LEN lowercase hex digits,
 * or empty. */
int bc_proto_origin_valid(const char *p, size_t n);
/* BOLT refusal: "BOLT 1, EROR text". */
int bc_proto_write_error(struct bc_buf *out, const char *msg, char *err);
/* BOLT hello reply. */
int bc_proto_write_info(struct bc_buf *out, const char *info, char *err);

/*
 * Limits applied by the readers; the plain entry points above use
 * bc_proto_limits_default() (the values of limits.h).  Tests and fuzz
 * targets pass smaller ones.  Readers (re)initialise *req / *rep on entry
 * and leave it empty on failure, except req->proto (1, 2 or BC_PROTO_BOLT
 * once the first header named it, so a BOLT peer can get an EROR) and
 * rep->errmsg (the EROR text); the caller frees it in every case.
 */
struct bc_proto_limits {
	size_t max_argc;
	size_t max_arg_len;
	size_t max_argv_total;
	size_t max_path_len;
	size_t max_wire_body;	/* any compressed body */
	size_t max_doti;
	size_t max_stderr;
	size_t max_stdout;
	size_t max_object;
	size_t max_dia;
	size_t max_msg;
	/* only check that the request is all there: compressed bodies are
	 * skipped, not expanded (boltccd's parent, daemon/intake.h) */
	int frame_only;
};
void bc_proto_limits_default(struct bc_proto_limits *lim);
int bc_proto_read_request_lim(struct bc_io *io,
    const struct bc_proto_limits *lim, struct bc_request *req, char *err);
int bc_proto_read_reply_lim(struct bc_io *io, int proto, int kind,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err);
/* The same parsers over bytes already in memory (fuzzing, tests); input
 * is consumed up to the end of the message, trailing bytes are left. */
int bc_proto_parse_request(struct bc_buf *in, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err);
/* The kind of a BOLT request from its first 24 bytes (enum bc_rqst), or
 * -1 (not BOLT, another version, an unknown kind, too few bytes). */
int bc_proto_bolt_kind(const void *p, size_t n);
int bc_proto_parse_reply(struct bc_buf *in, int proto, int kind,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err);

#endif
