/*
 * proto3x.h - the BOLT pump request (doc/PROTOCOL.md, "BOLT pump"):
 * pump mode between boltcc and boltccd with content-addressed files and
 * zstd bodies.
 *
 *   client: BOLT 1, RQST 5, FLAG f, CDIR cwd, ARGC n, ARGV x n, NFIL m,
 *           m x (NAME path, then HASH <32-byte SHA-256 of the contents>
 *                | LINK target | DIRM 0)
 *   daemon: BOLT 1, NEED k, k x INDX i   (strictly ascending, i < m,
 *           each a HASH entry), or BOLT 1, EROR text
 *   client: k x FILE <zstd of the contents; length 0 = empty file>
 *   daemon: BOLT 1, then STAT, SERR, SOUT, DOTO, DOTD (zstd; DOTO and
 *           DOTD empty when STAT != 0), or EROR text
 *   A cache hit (doc/cache.md) is answered right after the manifest with
 *   NEED 0 and the reply; with FLAG_HIT_MARK that reply starts CHIT 0.
 *
 * The head up to ARGV is read by bc_proto_read_request (req->kind ==
 * BC_RQST_PUMP); the manifest from NFIL on by bc_proto3x_read_manifest.
 * Every count and length is checked against the limits before anything
 * is read or allocated.
 */
#ifndef BC_PROTO3X_H
#define BC_PROTO3X_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "hash.h"
#include "io.h"
#include "proto.h"
#include "proto3.h"
#include "util.h"

enum bc_proto3x_kind { BC_PROTO3X_FILE = 0, BC_PROTO3X_LINK, BC_PROTO3X_DIR };

struct bc_proto3x_ent {
	char *name;
	int kind;			/* enum bc_proto3x_kind */
	uint8_t hash[BC_HASH_LEN];	/* FILE */
	char *target;			/* LINK */
	/* the daemon's: a header map's mapped digest (cache/pathmap.h),
	 * set once its contents were at hand */
	int has_mhash;
	uint8_t mhash[BC_HASH_LEN];
};

struct bc_proto3x_manifest {
	struct bc_proto3x_ent *v;
	size_t n;
};

void bc_proto3x_manifest_free(struct bc_proto3x_manifest *m);

/* Client: the request up to NFIL, then one call per entry. */
int bc_proto3x_write_head(struct bc_buf *out, uint32_t flags, const char *cwd,
    const char *identity, const struct bc_strv *argv, size_t nfil,
    char *err);
int bc_proto3x_write_hash(struct bc_buf *out, const char *name,
    const uint8_t hash[BC_HASH_LEN], char *err);
int bc_proto3x_write_link(struct bc_buf *out, const char *name,
    const char *target, char *err);
int bc_proto3x_write_dir(struct bc_buf *out, const char *name, char *err);
/* Client: one FILE body (zstd). */
int bc_proto3x_write_body(struct bc_buf *out, const void *p, size_t n,
    char *err);
/* Client: the NEED list; an EROR answer is BC_ERR_DENIED with *errmsg
 * (malloc'd).  *idx malloc'd (NULL when k == 0). */
int bc_proto3x_read_need(struct bc_io *io, size_t nfil, uint32_t **idx,
    size_t *k, char **errmsg, char *err);
/* Client: the final reply (EROR as above) into rep (initialised by the
 * caller): status and SERR, SOUT, DOTO, DOTD; DIAG after DOTD when the
 * request had FLAG WANT_DIA (want_dia), else there is none.  A reply
 * served from the daemon's cache starts with CHIT 0 (FLAG_HIT_MARK):
 * rep->cache_hit, then with FLAG_ORIGIN ORIG: rep->origin. */
int bc_proto3x_read_reply(struct bc_io *io, struct bc_reply *rep, int want_dia,
    char **errmsg, char *err);

/* Daemon: NFIL and the entries (from io, or from in when io is NULL). */
int bc_proto3x_read_manifest(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, struct bc_proto3x_manifest *m,
    char *err);
/* Daemon: every name of a manifest and cwd (CDIR) checked together, as
 * the tree will be built (common/pumpname.h: names, link targets,
 * duplicates, a file where a directory is, links through the tree).
 * BC_OK, or an error with err naming the problem and the name. */
int bc_proto3x_manifest_check(const struct bc_proto3x_manifest *m,
    const char *cwd, char *err);
int bc_proto3x_write_need(struct bc_buf *out, const uint32_t *idx, size_t k,
    char *err);
/* Daemon: one FILE body into plain (reset first). */
int bc_proto3x_read_body(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, struct bc_buf *plain, char *err);
/* Daemon: a cache hit, answered right after the manifest: "NEED 0" and
 * the reply, bodies the stored zstd frames of the blob's sections
 * (stderr, stdout, object, .dia, .d).  flags: the request's FLAG: with
 * HIT_MARK CHIT 0 first and then, with ORIGIN, ORIG naming origin (the
 * storer's, NULL unknown); with WANT_DIA the .dia as DIAG after DOTD. */
int bc_proto3x_write_hit(struct bc_buf *out, uint32_t flags, const char *origin,
    const void *const z[5], const size_t zn[5], char *err);
/* The same reply without "NEED 0": a hit found once the files came (a
 * key that needed a header map's contents, daemon/pumpx.h). */
int bc_proto3x_write_stored(struct bc_buf *out, uint32_t flags,
    const char *origin, const void *const z[5], const size_t zn[5],
    char *err);
/* Daemon: a compile's reply; dia NULL: no DIAG section (the client did
 * not ask for one), else DIAG after DOTD, also when status != 0. */
int bc_proto3x_write_reply(struct bc_buf *out, uint32_t status,
    const struct bc_buf *serr, const struct bc_buf *sout,
    const struct bc_buf *doto, const struct bc_buf *dotd,
    const struct bc_buf *dia, char *err);

#endif
