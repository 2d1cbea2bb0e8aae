/*
 * proto3x.c - the BOLT pump request (see proto3x.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/codec.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/proto.h"
#include "common/packet.h"
#include "common/proto3x.h"
#include "common/pumpname.h"
#include "common/wire.h"

#define PUMPX_ZSTD_LEVEL 1	/* client CPU is what pump mode saves */

void
bc_proto3x_manifest_free(struct bc_proto3x_manifest *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->v[i].name);
		free(m->v[i].target);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static int
put_zstd(struct bc_buf *out, const char *tok, const void *p, size_t n,
    char *err)
{
	return bc_packet_put_bulk(out, tok, BC_COMP_ZSTD, PUMPX_ZSTD_LEVEL, p,
	    n, err);
}

/* malloc'd C string of a body without NUL bytes. */
static int
cstr(const struct bc_buf *b, const char *tok, char **out, char *err)
{
	size_t n = bc_buf_len(b);

	if (n > 0 && memchr(bc_buf_data(b), '\0', n) != NULL)
		return bc_seterr(err, BC_ERR_PROTO, "%s contains a NUL byte",
		    tok);
	*out = xstrndup(n > 0 ? (const char *)bc_buf_data(b) : "", n);
	return BC_OK;
}

/* ---- client ------------------------------------------------------- */

int
bc_proto3x_write_head(struct bc_buf *out, uint32_t flags, const char *cwd,
    const char *identity, const struct bc_strv *argv, size_t nfil, char *err)
{
	int r;

	if (cwd == NULL || cwd[0] != '/' || strlen(cwd) > BC_MAX_PATH_LEN)
		return bc_seterr(err, BC_ERR_INVAL, "bad working directory");
	if (identity != NULL && strlen(identity) != BC_HASH_HEXLEN)
		return bc_seterr(err, BC_ERR_INVAL, "bad compiler identity");
	flags &= ~(uint32_t)BC_FLAG_IDENTITY;
	if (identity != NULL)
		flags |= BC_FLAG_IDENTITY;
	if (argv->n == 0 || argv->n > BC_MAX_ARGC || nfil > BC_MAX_NFIL)
		return bc_seterr(err, BC_ERR_LIMIT, "bad argv or file count");
	if ((r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err)) != BC_OK ||
	    (r = bc_packet_put_int(out, "RQST", BC_RQST_PUMP, err)) != BC_OK ||
	    (r = bc_packet_put_int(out, "FLAG", flags, err)) != BC_OK ||
	    (r = bc_packet_put_str(out, "CDIR", cwd, strlen(cwd), err)) != BC_OK)
		return r;
	if (identity != NULL && (r = bc_packet_put_str(out, "CMPI", identity,
	    BC_HASH_HEXLEN, err)) != BC_OK)
		return r;
	return bc_proto3_write_argv(out, argv, nfil, err);
}

int
bc_proto3x_write_hash(struct bc_buf *out, const char *name,
    const uint8_t hash[BC_HASH_LEN], char *err)
{
	int r;

	if ((r = bc_packet_put_str(out, "NAME", name, strlen(name), err)) != BC_OK)
		return r;
	return bc_packet_put_str(out, "HASH", hash, BC_HASH_LEN, err);
}

int
bc_proto3x_write_link(struct bc_buf *out, const char *name, const char *target,
    char *err)
{
	int r;

	if ((r = bc_packet_put_str(out, "NAME", name, strlen(name), err)) != BC_OK)
		return r;
	return bc_packet_put_str(out, "LINK", target, strlen(target), err);
}

int
bc_proto3x_write_dir(struct bc_buf *out, const char *name, char *err)
{
	int r;

	if ((r = bc_packet_put_str(out, "NAME", name, strlen(name), err)) != BC_OK)
		return r;
	return bc_packet_put_int(out, "DIRM", 0, err);
}

int
bc_proto3x_write_body(struct bc_buf *out, const void *p, size_t n, char *err)
{
	return put_zstd(out, "FILE", p, n, err);
}

/* "BOLT 1" then the expected token, or EROR -> BC_ERR_DENIED.  With
 * chit != NULL a "CHIT 0" first (served from the cache) sets *chit. */
/* ORIG (len bytes of body): an origin into out. */
static int
rd_origin(struct bc_io *io, uint32_t len, char out[BC_ORIGIN_LEN + 1],
    char *err)
{
	struct bc_buf b;
	int r;

	bc_buf_init(&b, BC_ORIGIN_LEN);
	r = bc_packet_rd_body(io, NULL, "ORIG", len, BC_ORIGIN_LEN, &b, err);
	if (r == BC_OK && !bc_proto_origin_valid((const char *)bc_buf_data(&b),
	    bc_buf_len(&b)))
		r = bc_seterr(err, BC_ERR_PROTO, "bad ORIG");
	if (r == BC_OK) {
		if (bc_buf_len(&b) > 0)
			memcpy(out, bc_buf_data(&b), bc_buf_len(&b));
		out[bc_buf_len(&b)] = '\0';
	}
	bc_buf_free(&b);
	return r;
}

static int
rd_bolt(struct bc_io *io, const char *expect, uint32_t *val,
    struct bc_reply *rep, char **errmsg, char *err)
{
	char t[5];
	uint32_t v;
	int r;

	/* FLAG_HEARTBEAT: BEATs may come before NEED and before the reply */
	if ((r = bc_io_read_hdr_beat(io, "BOLT", t, &v, err)) != BC_OK)
		return r;
	if (v != BC_BOLT_VERSION)
		return bc_seterr(err, BC_ERR_PROTO, "BOLT version %lu",
		    (unsigned long)v);
	if ((r = bc_io_read_hdr(io, NULL, t, val, err)) != BC_OK)
		return r;
	if (rep != NULL && strcmp(t, "CHIT") == 0) {
		if (*val != 0)
			return bc_seterr(err, BC_ERR_PROTO,
			    "CHIT with value %lu", (unsigned long)*val);
		rep->cache_hit = 1;
		if ((r = bc_io_read_hdr(io, NULL, t, val, err)) != BC_OK)
			return r;
		if (strcmp(t, "ORIG") == 0) {	/* FLAG_ORIGIN */
			if ((r = rd_origin(io, *val, rep->origin, err)) !=
			    BC_OK || (r = bc_io_read_hdr(io, NULL, t, val,
			    err)) != BC_OK)
				return r;
			rep->has_origin = 1;
		}
	}
	if (strcmp(t, "EROR") == 0) {
		struct bc_buf b;

		bc_buf_init(&b, BC_MAX_MSG);
		r = bc_packet_rd_body(io, NULL, "EROR", *val, BC_MAX_MSG, &b, err);
		if (r == BC_OK && errmsg != NULL) {
			free(*errmsg);
			*errmsg = NULL;
			r = cstr(&b, "EROR", errmsg, err);
		}
		bc_buf_free(&b);
		if (r != BC_OK)
			return r;
		return bc_seterr(err, BC_ERR_DENIED, "daemon refused the job: "
		    "%.200s", errmsg != NULL && *errmsg != NULL ? *errmsg : "");
	}
	if (strcmp(t, expect) != 0) {
		char esc[32];

		bc_wire_escape(t, 4, esc, sizeof(esc));
		return bc_seterr(err, BC_ERR_PROTO, "expected %s, got \"%s\"",
		    expect, esc);
	}
	return BC_OK;
}

int
bc_proto3x_read_need(struct bc_io *io, size_t nfil, uint32_t **idx, size_t *k,
    char **errmsg, char *err)
{
	char t[5];
	uint32_t n, i, v;
	int r;

	*idx = NULL;
	*k = 0;
	if ((r = rd_bolt(io, "NEED", &n, NULL, errmsg, err)) != BC_OK)
		return r;
	if ((size_t)n > nfil)
		return bc_seterr(err, BC_ERR_PROTO, "NEED %lu of %zu entries",
		    (unsigned long)n, nfil);
	if (n > 0)
		*idx = xcalloc(n, sizeof(**idx));
	for (i = 0; i < n; i++) {
		if ((r = bc_io_read_hdr(io, "INDX", t, &v, err)) != BC_OK)
			break;
		if ((size_t)v >= nfil || (i > 0 && v <= (*idx)[i - 1])) {
			r = bc_seterr(err, BC_ERR_PROTO, "bad INDX %lu",
			    (unsigned long)v);
			break;
		}
		(*idx)[i] = v;
	}
	if (r != BC_OK) {
		free(*idx);
		*idx = NULL;
		return r;
	}
	*k = n;
	return BC_OK;
}

static int
rd_zstd(struct bc_io *io, const char *tok, size_t max, struct bc_buf *dest,
    char *err)
{
	struct bc_buf body;
	char t[5], sub[BC_ERRLEN];
	uint32_t len;
	int r;

	if ((r = bc_io_read_hdr(io, tok, t, &len, err)) != BC_OK)
		return r;
	bc_buf_init(&body, BC_MAX_WIRE_BODY);
	r = bc_packet_rd_body(io, NULL, tok, len, BC_MAX_WIRE_BODY, &body, err);
	if (r == BC_OK && len > 0 && dest != NULL) {
		sub[0] = '\0';
		r = bc_zstd_decompress(bc_buf_data(&body), bc_buf_len(&body),
		    max, dest, sub);
		if (r != BC_OK)
			r = bc_seterr(err, r, "%s body: %s", tok, sub);
	}
	bc_buf_free(&body);
	return r;
}

int
bc_proto3x_read_reply(struct bc_io *io, struct bc_reply *rep, int want_dia,
    char **errmsg, char *err)
{
	int r;

	if ((r = rd_bolt(io, "STAT", &rep->status, rep, errmsg, err)) != BC_OK)
		return r;
	if ((r = rd_zstd(io, "SERR", BC_MAX_STDERR, &rep->serr, err)) != BC_OK ||
	    (r = rd_zstd(io, "SOUT", BC_MAX_STDOUT, &rep->sout, err)) != BC_OK ||
	    (r = rd_zstd(io, "DOTO", BC_MAX_OBJECT, &rep->doto, err)) != BC_OK ||
	    (r = rd_zstd(io, "DOTD", BC_MAX_DOTD, &rep->dotd, err)) != BC_OK)
		return r;
	return !want_dia ? BC_OK :
	    rd_zstd(io, "DIAG", BC_MAX_DIA, &rep->dia, err);
}

/* ---- daemon ------------------------------------------------------- */

int
bc_proto3x_read_manifest(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim0, struct bc_proto3x_manifest *m,
    char *err)
{
	struct bc_proto3_limits dl;
	const struct bc_proto3_limits *lim = lim0;
	struct bc_buf body;
	char tok[5];
	uint32_t nfil, len, i;
	int r = BC_OK;

	m->v = NULL;
	m->n = 0;
	if (lim == NULL) {
		bc_proto3_limits_default(&dl);
		lim = &dl;
	}
	if ((r = bc_proto3_read_nfil(io, in, lim, &nfil, err)) != BC_OK)
		return r;
	bc_buf_init(&body, lim->max_path + 1);
	if (nfil > 0)
		m->v = xcalloc(nfil, sizeof(*m->v));
	for (i = 0; i < nfil; i++) {
		struct bc_proto3x_ent *e = &m->v[i];

		if ((r = bc_proto3_read_name(io, in, lim, &body, err)) != BC_OK ||
		    (r = cstr(&body, "NAME", &e->name, err)) != BC_OK)
			break;
		m->n = i + 1;
		if ((r = bc_packet_rd_hdr(io, in, NULL, tok, &len, err)) != BC_OK)
			break;
		if (strcmp(tok, "HASH") == 0) {
			e->kind = BC_PROTO3X_FILE;
			if (len != BC_HASH_LEN) {
				r = bc_seterr(err, BC_ERR_PROTO,
				    "HASH of %lu bytes", (unsigned long)len);
				break;
			}
			if ((r = bc_packet_rd_body(io, in, "HASH", len, BC_HASH_LEN,
			    &body, err)) != BC_OK)
				break;
			memcpy(e->hash, bc_buf_data(&body), BC_HASH_LEN);
		} else if (strcmp(tok, "LINK") == 0) {
			e->kind = BC_PROTO3X_LINK;
			if ((r = bc_packet_rd_body(io, in, "LINK", len, lim->max_path,
			    &body, err)) != BC_OK ||
			    (r = cstr(&body, "LINK", &e->target, err)) != BC_OK)
				break;
		} else if (strcmp(tok, "DIRM") == 0) {
			e->kind = BC_PROTO3X_DIR;
			if (len != 0) {
				r = bc_seterr(err, BC_ERR_PROTO, "DIRM %lu",
				    (unsigned long)len);
				break;
			}
		} else {
			char esc[32];

			bc_wire_escape(tok, 4, esc, sizeof(esc));
			r = bc_seterr(err, BC_ERR_PROTO,
			    "expected HASH, LINK or DIRM, got \"%s\"", esc);
			break;
		}
	}
	bc_buf_free(&body);
	if (r != BC_OK)
		bc_proto3x_manifest_free(m);
	return r;
}

int
bc_proto3x_manifest_check(const struct bc_proto3x_manifest *m, const char *cwd,
    char *err)
{
	struct bc_pump_names names;
	size_t i;
	int r = BC_OK;

	bc_pump_names_init(&names);
	for (i = 0; i < m->n && r == BC_OK; i++) {
		const struct bc_proto3x_ent *e = &m->v[i];
		enum bc_pump_kind k = e->kind == BC_PROTO3X_FILE ?
		    BC_PUMP_FILE : e->kind == BC_PROTO3X_LINK ? BC_PUMP_LINK :
		    BC_PUMP_DIR;

		r = bc_pump_names_add(&names, e->name, strlen(e->name), k,
		    e->target, e->target != NULL ? strlen(e->target) : 0, NULL,
		    err);
	}
	if (r == BC_OK && cwd != NULL)
		r = bc_pump_names_add(&names, cwd, strlen(cwd),
		    BC_PUMP_DIR_IMPLIED, NULL, 0, NULL, err);
	if (r == BC_OK)
		r = bc_pump_names_resolve(&names, err);
	bc_pump_names_free(&names);
	return r;
}

int
bc_proto3x_write_need(struct bc_buf *out, const uint32_t *idx, size_t k,
    char *err)
{
	size_t i;
	int r;

	if ((r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err)) != BC_OK ||
	    (r = bc_packet_put_int(out, "NEED", (uint32_t)k, err)) != BC_OK)
		return r;
	for (i = 0; i < k; i++)
		if ((r = bc_packet_put_int(out, "INDX", idx[i], err)) != BC_OK)
			return r;
	return BC_OK;
}

int
bc_proto3x_read_body(struct bc_io *io, struct bc_buf *in,
    const struct bc_proto3_limits *lim0, struct bc_buf *plain, char *err)
{
	struct bc_proto3_limits dl;
	const struct bc_proto3_limits *lim = lim0;
	struct bc_buf body;
	char tok[5], sub[BC_ERRLEN];
	uint32_t len;
	int r;

	if (lim == NULL) {
		bc_proto3_limits_default(&dl);
		lim = &dl;
	}
	bc_buf_reset(plain);
	if ((r = bc_packet_rd_hdr(io, in, "FILE", tok, &len, err)) != BC_OK)
		return r;
	bc_buf_init(&body, BC_BUF_CEILING);
	r = bc_packet_rd_body(io, in, "FILE", len, lim->max_wire, &body, err);
	if (r == BC_OK && len > 0) {
		sub[0] = '\0';
		r = bc_zstd_decompress(bc_buf_data(&body), bc_buf_len(&body),
		    lim->max_file, plain, sub);
		if (r != BC_OK)
			r = bc_seterr(err, r, "FILE body: %s", sub);
	}
	bc_buf_free(&body);
	return r;
}

int
bc_proto3x_write_reply(struct bc_buf *out, uint32_t status,
    const struct bc_buf *serr, const struct bc_buf *sout,
    const struct bc_buf *doto, const struct bc_buf *dotd,
    const struct bc_buf *dia, char *err)
{
	int r;

	if ((r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err)) != BC_OK ||
	    (r = bc_packet_put_int(out, "STAT", status, err)) != BC_OK ||
	    (r = put_zstd(out, "SERR", bc_buf_data(serr), bc_buf_len(serr),
	    err)) != BC_OK ||
	    (r = put_zstd(out, "SOUT", bc_buf_data(sout), bc_buf_len(sout),
	    err)) != BC_OK)
		return r;
	if (status != 0)
		r = (r = bc_packet_put_int(out, "DOTO", 0, err)) != BC_OK ? r :
		    bc_packet_put_int(out, "DOTD", 0, err);
	else if ((r = put_zstd(out, "DOTO", bc_buf_data(doto),
	    bc_buf_len(doto), err)) == BC_OK)
		r = put_zstd(out, "DOTD", bc_buf_data(dotd), bc_buf_len(dotd),
		    err);
	/* the .dia comes with a failed compile too: Xcode reads it */
	if (r != BC_OK || dia == NULL)
		return r;
	return put_zstd(out, "DIAG", bc_buf_data(dia), bc_buf_len(dia), err);
}

int
bc_proto3x_write_stored(struct bc_buf *out, uint32_t flags, const char *origin,
    const void *const z[5], const size_t zn[5], char *err)
{
	/* blob sections: stderr, stdout, object, .dia, .d; on the wire the
	 * .dia (when asked for) comes last */
	static const int order[5] = { 0, 1, 2, 4, 3 };
	static const char *const toks[5] = { "SERR", "SOUT", "DOTO", "DIAG",
	    "DOTD" };
	size_t start = bc_buf_len(out);
	int k, i, r;

	r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err);
	if (r == BC_OK && (flags & BC_FLAG_HIT_MARK)) {
		r = bc_packet_put_int(out, "CHIT", 0, err);
		if (r == BC_OK && (flags & BC_FLAG_ORIGIN))
			r = bc_proto_write_origin(out, origin, err);
	}
	if (r == BC_OK)
		r = bc_packet_put_int(out, "STAT", 0, err);
	for (k = 0; k < ((flags & BC_FLAG_WANT_DIA) ? 5 : 4) && r == BC_OK;
	    k++) {
		i = order[k];
		r = zn[i] == 0 ? bc_packet_put_int(out, toks[i], 0, err) :
		    bc_packet_put_str(out, toks[i], z[i], zn[i], err);
	}
	if (r != BC_OK)
		bc_buf_truncate(out, start);
	return r;
}

int
bc_proto3x_write_hit(struct bc_buf *out, uint32_t flags, const char *origin,
    const void *const z[5], const size_t zn[5], char *err)
{
	size_t start = bc_buf_len(out);
	int r;

	if ((r = bc_proto3x_write_need(out, NULL, 0, err)) == BC_OK)
		r = bc_proto3x_write_stored(out, flags, origin, z, zn, err);
	if (r != BC_OK)
		bc_buf_truncate(out, start);
	return r;
}
