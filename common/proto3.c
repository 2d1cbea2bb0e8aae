/*
 * proto3.c - distcc protocol 3 file entries and replies (see proto3.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/codec.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/packet.h"
#include "common/proto3.h"
#include "common/wire.h"

void
bc_proto3_limits_default(struct bc_proto3_limits *lim)
{
	lim->max_nfil = BC_MAX_NFIL;
	lim->max_path = BC_MAX_PATH_LEN;
	lim->max_file = BC_MAX_FILE;
	lim->max_total = BC_MAX_JOB_BYTES;
	lim->max_wire = BC_MAX_WIRE_BODY;
	lim->frame_only = 0;
}

/* out := NUL-terminated copy; NUL bytes inside are a protocol error. */
static int
as_cstr(const struct bc_buf *b, const char *tok, struct bc_buf *s, char *err)
{
	bc_buf_reset(s);
	if (bc_buf_len(b) > 0 && memchr(bc_buf_data(b), '\0', bc_buf_len(b)))
		return bc_seterr(err, BC_ERR_PROTO, "%s contains a NUL byte",
		    tok);
	if (bc_buf_put(s, bc_buf_data(b), bc_buf_len(b)) != BC_OK ||
	    bc_buf_put_u8(s, 0) != BC_OK)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	return BC_OK;
}

int
bc_proto3_read_nfil(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, uint32_t *nfil, char *err)
{
	struct bc_proto3_limits dl;
	char tok[5];
	int r;

	if (lim == NULL) {
		bc_proto3_limits_default(&dl);
		lim = &dl;
	}
	if ((r = bc_packet_rd_hdr(io, in, "NFIL", tok, nfil, err)) != BC_OK)
		return r;
	if ((size_t)*nfil > lim->max_nfil)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "NFIL %lu exceeds the limit of %zu", (unsigned long)*nfil,
		    lim->max_nfil);
	return BC_OK;
}

int
bc_proto3_read_name(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim, struct bc_buf *body, char *err)
{
	char tok[5];
	uint32_t len;
	int r;

	if ((r = bc_packet_rd_hdr(io, in, "NAME", tok, &len, err)) != BC_OK ||
	    (r = bc_packet_rd_body(io, in, "NAME", len, lim->max_path, body,
	    err)) != BC_OK)
		return r;
	if (len == 0)
		return bc_seterr(err, BC_ERR_PROTO, "empty NAME");
	return BC_OK;
}

int
bc_proto3_read_files(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim0, bc_proto3_entry_fn fn, void *ctx,
    char *err)
{
	struct bc_proto3_limits dl;
	const struct bc_proto3_limits *lim = lim0;
	struct bc_buf body, name, plain;
	char tok[5];
	uint32_t nfil, len, i;
	size_t total = 0;
	int r;

	if (lim == NULL) {
		bc_proto3_limits_default(&dl);
		lim = &dl;
	}
	if ((r = bc_proto3_read_nfil(io, in, lim, &nfil, err)) != BC_OK)
		return r;
	bc_buf_init(&body, BC_BUF_CEILING);
	bc_buf_init(&name, lim->max_path + 1);
	bc_buf_init(&plain, lim->max_file + 1);
	for (i = 0; i < nfil; i++) {
		int is_link;

		if ((r = bc_proto3_read_name(io, in, lim, &body, err)) != BC_OK ||
		    (r = as_cstr(&body, "NAME", &name, err)) != BC_OK)
			break;
		if ((r = bc_packet_rd_hdr(io, in, NULL, tok, &len, err)) != BC_OK)
			break;
		if (strcmp(tok, "FILE") == 0)
			is_link = 0;
		else if (strcmp(tok, "LINK") == 0)
			is_link = 1;
		else {
			char esc[32];

			bc_wire_escape(tok, 4, esc, sizeof(esc));
			r = bc_seterr(err, BC_ERR_PROTO,
			    "expected FILE or LINK, got \"%s\"", esc);
			break;
		}
		if (is_link) {
			if ((r = bc_packet_rd_body(io, in, "LINK", len, lim->max_path,
			    &body, err)) != BC_OK ||
			    (r = as_cstr(&body, "LINK", &plain, err)) != BC_OK)
				break;
			r = fn(ctx, (const char *)bc_buf_data(&name), 1,
			    bc_buf_data(&plain), bc_buf_len(&plain) - 1, err);
		} else {
			char sub[BC_ERRLEN];

			if ((r = bc_packet_rd_body(io, in, "FILE", len, lim->max_wire,
			    &body, err)) != BC_OK)
				break;
			bc_buf_reset(&plain);
			sub[0] = '\0';
			if (len > 0 && !lim->frame_only &&
			    (r = bc_lzo_decompress(bc_buf_data(&body),
			    bc_buf_len(&body), lim->max_file, &plain, sub))
			    != BC_OK) {
				r = bc_seterr(err, r, "FILE body: %s", sub);
				break;
			}
			total += bc_buf_len(&plain);
			if (total > lim->max_total) {
				r = bc_seterr(err, BC_ERR_LIMIT,
				    "files exceed %zu bytes in total",
				    lim->max_total);
				break;
			}
			r = fn(ctx, (const char *)bc_buf_data(&name), 0,
			    bc_buf_data(&plain), bc_buf_len(&plain), err);
		}
		if (r != BC_OK)
			break;
	}
	bc_buf_free(&body);
	bc_buf_free(&name);
	bc_buf_free(&plain);
	return r;
}

/* LZO bulk; empty = length 0. */
static int
put_lzo(struct bc_buf *out, const char *tok, const void *p, size_t n,
    char *err)
{
	return bc_packet_put_bulk(out, tok, BC_COMP_LZO, 0, p, n, err);
}

int
bc_proto3_write_head(struct bc_buf *out, const char *cwd,
    const struct bc_strv *argv, size_t nfil, char *err)
{
	int r;

	if (cwd == NULL || cwd[0] != '/' || strlen(cwd) > BC_MAX_PATH_LEN)
		return bc_seterr(err, BC_ERR_INVAL, "bad working directory");
	if (argv->n == 0 || argv->n > BC_MAX_ARGC || nfil > BC_MAX_NFIL)
		return bc_seterr(err, BC_ERR_LIMIT, "bad argv or file count");
	if ((r = bc_packet_put_int(out, "DIST", 3, err)) != BC_OK ||
	    (r = bc_packet_put_str(out, "CDIR", cwd, strlen(cwd), err)) != BC_OK)
		return r;
	return bc_proto3_write_argv(out, argv, nfil, err);
}

int
bc_proto3_write_argv(struct bc_buf *out, const struct bc_strv *argv,
    size_t nfil, char *err)
{
	size_t i;
	int r;

	if ((r = bc_packet_put_int(out, "ARGC", (uint32_t)argv->n, err)) != BC_OK)
		return r;
	for (i = 0; i < argv->n; i++)
		if ((r = bc_packet_put_str(out, "ARGV", argv->v[i], strlen(argv->v[i]),
		    err)) != BC_OK)
			return r;
	return bc_packet_put_int(out, "NFIL", (uint32_t)nfil, err);
}

int
bc_proto3_write_file(struct bc_buf *out, const char *name, const void *data,
    size_t n, char *err)
{
	int r;

	if ((r = bc_packet_put_str(out, "NAME", name, strlen(name), err)) != BC_OK)
		return r;
	return put_lzo(out, "FILE", data, n, err);
}

int
bc_proto3_write_file_lzo(struct bc_buf *out, const char *name,
    const void *lzo, size_t n, char *err)
{
	int r;

	if ((r = bc_packet_put_str(out, "NAME", name, strlen(name), err)) != BC_OK)
		return r;
	return bc_packet_put_str(out, "FILE", lzo, n, err);
}

int
bc_proto3_write_link(struct bc_buf *out, const char *name,
    const char *target, char *err)
{
	int r;

	if ((r = bc_packet_put_str(out, "NAME", name, strlen(name), err)) != BC_OK)
		return r;
	return bc_packet_put_str(out, "LINK", target, strlen(target), err);
}

int
bc_proto3_write_reply(struct bc_buf *out, uint32_t status,
    const struct bc_buf *serr, const struct bc_buf *sout,
    const struct bc_buf *doto, const struct bc_buf *dotd, char *err)
{
	int r;

	if ((r = bc_packet_put_int(out, "DONE", 3, err)) != BC_OK ||
	    (r = bc_packet_put_int(out, "STAT", status, err)) != BC_OK ||
	    (r = put_lzo(out, "SERR", bc_buf_data(serr), bc_buf_len(serr),
	    err)) != BC_OK ||
	    (r = put_lzo(out, "SOUT", bc_buf_data(sout), bc_buf_len(sout),
	    err)) != BC_OK)
		return r;
	if (status != 0)
		return bc_packet_put_int(out, "DOTO", 0, err);
	if ((r = put_lzo(out, "DOTO", bc_buf_data(doto), bc_buf_len(doto),
	    err)) != BC_OK)
		return r;
	return put_lzo(out, "DOTD", bc_buf_data(dotd), bc_buf_len(dotd), err);
}

static int
rd_lzo(struct bc_io *io, struct bc_buf *in, const char *tok, size_t max,
    struct bc_buf *dest, char *err)
{
	struct bc_buf body;
	char t[5], sub[BC_ERRLEN];
	uint32_t len;
	int r;

	if ((r = bc_packet_rd_hdr(io, in, tok, t, &len, err)) != BC_OK)
		return r;
	bc_buf_init(&body, BC_MAX_WIRE_BODY);
	r = bc_packet_rd_body(io, in, tok, len, BC_MAX_WIRE_BODY, &body, err);
	if (r == BC_OK && len > 0 && dest != NULL) {
		sub[0] = '\0';
		r = bc_lzo_decompress(bc_buf_data(&body), bc_buf_len(&body), max,
		    dest, sub);
		if (r != BC_OK)
			r = bc_seterr(err, r, "%s body: %s", tok, sub);
	}
	bc_buf_free(&body);
	return r;
}

int
bc_proto3_read_reply(struct bc_io *io, struct bc_buf *in, uint32_t *status,
    struct bc_buf *serr, struct bc_buf *sout, struct bc_buf *doto,
    struct bc_buf *dotd, char *err)
{
	char t[5];
	uint32_t v, len;
	int r;

	if ((r = bc_packet_rd_hdr(io, in, "DONE", t, &v, err)) != BC_OK)
		return r;
	if (v != 3)
		return bc_seterr(err, BC_ERR_PROTO,
		    "reply is DONE %lu to a protocol 3 request",
		    (unsigned long)v);
	if ((r = bc_packet_rd_hdr(io, in, "STAT", t, status, err)) != BC_OK ||
	    (r = rd_lzo(io, in, "SERR", BC_MAX_STDERR, serr, err)) != BC_OK ||
	    (r = rd_lzo(io, in, "SOUT", BC_MAX_STDOUT, sout, err)) != BC_OK)
		return r;
	if (*status != 0) {
		if ((r = bc_packet_rd_hdr(io, in, "DOTO", t, &len, err)) != BC_OK)
			return r;
		if (len != 0)
			return bc_seterr(err, BC_ERR_PROTO,
			    "server sent a DOTO with status 0x%lx",
			    (unsigned long)*status);
		return BC_OK;
	}
	if ((r = rd_lzo(io, in, "DOTO", BC_MAX_OBJECT, doto, err)) != BC_OK)
		return r;
	return rd_lzo(io, in, "DOTD", BC_MAX_DOTD, dotd, err);
}
