/*
 * proto3.h - distcc protocol 3 (pump mode), spec distcc-protocol.md 4.2,
 * 5 and 7: the file part of the request (NFIL, then NAME + FILE|LINK per
 * entry), and the reply with DOTD.  The head of a protocol-3 request
 * (DIST 3, CDIR, ARGC/ARGV) is read by bc_proto_read_request, which
 * returns with req->proto == 3 and req->cwd set and leaves NFIL unread.
 *
 * FILE bodies are LZO1X-1 (length 0 = empty file); LINK bodies are plain
 * strings.  Counts and sizes are checked against the limits before
 * anything is read or allocated.
 */
#ifndef BC_PROTO3_H
#define BC_PROTO3_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "io.h"
#include "util.h"

struct bc_proto3_limits {
	size_t max_nfil;	/* BC_MAX_NFIL */
	size_t max_path;	/* BC_MAX_PATH_LEN: NAME and LINK */
	size_t max_file;	/* BC_MAX_FILE: one file expanded */
	size_t max_total;	/* BC_MAX_JOB_BYTES: all files expanded */
	size_t max_wire;	/* BC_MAX_WIRE_BODY */
	int frame_only;		/* FILE bodies skipped, not expanded: the
				 * callback gets no data (daemon/intake.h) */
};
void bc_proto3_limits_default(struct bc_proto3_limits *lim);

/* One entry: name is NUL-terminated (no NUL inside, checked); for a
 * link, data is the NUL-terminated target. */
typedef int (*bc_proto3_entry_fn)(void *ctx, const char *name, int is_link,
    const uint8_t *data, size_t len, char *err);

/*
 * The two reads every file list starts with (protocol 3 and BOLT pump):
 * NFIL, checked against lim->max_nfil (lim NULL: the defaults); and one
 * entry's NAME into body (at most lim->max_path bytes, not empty).
 */
int bc_proto3_read_nfil(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, uint32_t *nfil, char *err);
int bc_proto3_read_name(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, struct bc_buf *body, char *err);

/*
 * Read NFIL and the entries from io (or from in when io is NULL),
 * calling fn for each.  A non-BC_OK return of fn stops reading and is
 * returned.
 */
int bc_proto3_read_files(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, bc_proto3_entry_fn fn, void *ctx,
    char *err);

/* Client side: encode DIST 3, CDIR, ARGC/ARGV, NFIL n. */
int bc_proto3_write_head(struct bc_buf *out, const char *cwd,
    const struct bc_strv *argv, size_t nfil, char *err);
/* The tail of either pump head (bc_proto3x_write_head too): ARGC, each
 * ARGV, NFIL n; the counts are the caller's to check. */
int bc_proto3_write_argv(struct bc_buf *out, const struct bc_strv *argv,
    size_t nfil, char *err);
/* One entry: NAME + FILE (data LZO-compressed here; n == 0 = empty) ... */
int bc_proto3_write_file(struct bc_buf *out, const char *name,
    const void *data, size_t n, char *err);
/* ... or NAME + LINK target. */
int bc_proto3_write_link(struct bc_buf *out, const char *name,
    const char *target, char *err);
/* The same FILE entry from an already LZO-compressed body. */
int bc_proto3_write_file_lzo(struct bc_buf *out, const char *name,
    const void *lzo, size_t n, char *err);

/* Daemon side: DONE 3, STAT, SERR, SOUT, DOTO, and DOTD when status == 0. */
int bc_proto3_write_reply(struct bc_buf *out, uint32_t status,
    const struct bc_buf *serr, const struct bc_buf *sout,
    const struct bc_buf *doto, const struct bc_buf *dotd, char *err);

/* Client side: read that reply.  dotd may be NULL (body then drained). */
int bc_proto3_read_reply(struct bc_io *io, struct bc_buf *in, uint32_t *status,
    struct bc_buf *serr, struct bc_buf *sout, struct bc_buf *doto,
    struct bc_buf *dotd, char *err);

#endif
