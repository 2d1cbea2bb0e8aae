/*
 * proto.c - job requests and replies: distcc protocols 1 and 2 (spec
 * distcc-protocol.md sections 4-6) and the boltcc extension BOLT v1
 * (doc/PROTOCOL.md).
 *
 * Every reader runs over a "source" that is either a bc_io (the network)
 * or a bc_buf (bytes in memory, for fuzzing and tests), so both paths are
 * the same code.  Counts and lengths a peer claims are checked against a
 * bc_proto_limits before anything is read or allocated; strings and
 * vectors grow only as their bytes arrive.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "common/codec.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/packet.h"
#include "common/wire.h"

/* Bodies at least this large are compressed with the faster zstd level. */
#define BC_PROTO_ZSTD_BIG	((size_t)256 << 10)
#define BC_PROTO_ESC		160	/* escaped peer bytes in a message */

struct src {
	struct bc_io *io;	/* exactly one of io and in */
	struct bc_buf *in;
	int started;		/* past the first header: EOF is truncation */
	int frame_only;		/* bodies skipped (bc_proto_limits) */
	struct bc_buf tmp;	/* scratch for bodies read from io */
};

static void
src_init(struct src *s, struct bc_io *io, struct bc_buf *in)
{
	s->io = io;
	s->in = in;
	s->started = 0;
	s->frame_only = 0;
	bc_buf_init(&s->tmp, BC_BUF_CEILING);
}

static void
src_free(struct src *s)
{
	bc_buf_free(&s->tmp);
}

static int
src_eof(struct src *s, int r, char *err)
{
	if (r == BC_ERR_EOF && s->started)
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "peer closed the connection in the middle of a message");
	return r;
}

static int
src_read(struct src *s, void *p, size_t n, char *err)
{
	if (s->io != NULL)
		return src_eof(s, bc_io_read_full(s->io, p, n, err), err);
	if (bc_buf_avail(s->in) == 0)
		return src_eof(s, bc_seterr(err, BC_ERR_EOF, "end of input"),
		    err);
	if (bc_buf_get(s->in, p, n) != BC_OK)
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "input ends inside a packet header");
	return BC_OK;
}

/* Read a 12-byte header; expect (if not NULL) is the required token. */
static int
src_hdr(struct src *s, const char *expect, char tok[5], uint32_t *val,
    char *err)
{
	uint8_t h[BC_HDR_LEN];
	char esc[BC_PROTO_ESC];
	int r;

	if ((r = src_read(s, h, sizeof h, err)) != BC_OK)
		return r;
	s->started = 1;
	if (expect != NULL && memcmp(h, expect, BC_TOKEN_LEN) != 0) {
		bc_wire_escape(h, sizeof h, esc, sizeof esc);
		return bc_seterr(err, BC_ERR_PROTO, "expected %s, got \"%s\"",
		    expect, esc);
	}
	return bc_wire_parse_hdr(h, tok, val, err);
}

static int
check_len(const char *tok, uint32_t len, size_t max, char *err)
{
	if ((size_t)len > max)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "%s of %lu bytes exceeds the limit of %zu bytes", tok,
		    (unsigned long)len, max);
	return BC_OK;
}

/*
 * Make the next len bytes available at *p without copying them into a
 * destination (valid until the next src call).  len <= max is checked
 * before anything is read.
 */
static int
src_body_ptr(struct src *s, const char *tok, uint32_t len, size_t max,
    const uint8_t **p, char *err)
{
	int r;

	*p = NULL;
	if ((r = check_len(tok, len, max, err)) != BC_OK)
		return r;
	if (len == 0)
		return BC_OK;
	if (s->io != NULL) {
		bc_buf_reset(&s->tmp);
		r = bc_io_read_body(s->io, len, max, &s->tmp, err);
		if (r != BC_OK)
			return src_eof(s, r, err);
		*p = bc_buf_data(&s->tmp);
		return BC_OK;
	}
	if (bc_buf_peek(s->in, len, p) != BC_OK)
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "input ends inside the %lu-byte %s body",
		    (unsigned long)len, tok);
	return bc_buf_skip(s->in, len);
}

/* Append the next len bytes to dest (len <= max checked first). */
static int
src_body_into(struct src *s, const char *tok, uint32_t len, size_t max,
    struct bc_buf *dest, char *err)
{
	const uint8_t *p;
	int r;

	if ((r = check_len(tok, len, max, err)) != BC_OK)
		return r;
	if (len == 0)
		return BC_OK;
	if (s->io != NULL)
		return src_eof(s, bc_io_read_body(s->io, len, max, dest, err),
		    err);
	if ((r = src_body_ptr(s, tok, len, max, &p, err)) != BC_OK)
		return r;
	if ((r = bc_buf_put(dest, p, len)) != BC_OK)
		return bc_seterr(err, r, "%s: cannot store %lu bytes", tok,
		    (unsigned long)len);
	return BC_OK;
}

/*
 * The body of a bulk token whose header said len: raw bodies are limited
 * by max_plain, compressed ones by max_wire on the wire and max_plain
 * after expansion.  Length 0 is empty and never reaches a decompressor.
 */
static int
src_bulk_body(struct src *s, const char *tok, uint32_t len, enum bc_comp comp,
    size_t max_plain, size_t max_wire, struct bc_buf *dest, char *err)
{
	char sub[BC_ERRLEN];
	const uint8_t *p;
	int r;

	if (len == 0)
		return BC_OK;
	if (s->frame_only)
		return src_body_ptr(s, tok, len, comp == BC_COMP_NONE ?
		    max_plain : max_wire, &p, err);
	if (comp == BC_COMP_NONE)
		return src_body_into(s, tok, len, max_plain, dest, err);
	if ((r = src_body_ptr(s, tok, len, max_wire, &p, err)) != BC_OK)
		return r;
	sub[0] = '\0';
	r = bc_codec_decompress(comp, p, len, max_plain, dest, sub);
	if (r != BC_OK)
		return bc_seterr(err, r, "%s body: %s", tok, sub);
	return BC_OK;
}

static int
src_bulk(struct src *s, const char *tok, enum bc_comp comp, size_t max_plain,
    size_t max_wire, struct bc_buf *dest, char *err)
{
	char t[5];
	uint32_t len;
	int r;

	if ((r = src_hdr(s, tok, t, &len, err)) != BC_OK)
		return r;
	return src_bulk_body(s, tok, len, comp, max_plain, max_wire, dest, err);
}

/*
 * A string token (ARGV, CDIR, EROR, INFO) as a new NUL-terminated string.
 * Embedded NUL bytes are a protocol error: such a string could not be
 * passed on intact.
 */
static int
src_string_body(struct src *s, const char *tok, uint32_t len, size_t max,
    char **out, char *err)
{
	const uint8_t *p;
	char *str;
	int r;

	*out = NULL;
	if ((r = src_body_ptr(s, tok, len, max, &p, err)) != BC_OK)
		return r;
	if (len > 0 && memchr(p, '\0', len) != NULL)
		return bc_seterr(err, BC_ERR_PROTO,
		    "%s string contains a NUL byte", tok);
	if ((str = malloc((size_t)len + 1)) == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	if (len > 0)
		memcpy(str, p, len);
	str[len] = '\0';
	*out = str;
	return BC_OK;
}

static const struct bc_proto_limits *
limits_or_default(const struct bc_proto_limits *lim,
    struct bc_proto_limits *storage)
{
	if (lim != NULL)
		return lim;
	bc_proto_limits_default(storage);
	return storage;
}

void
bc_proto_limits_default(struct bc_proto_limits *lim)
{
	lim->max_argc = BC_MAX_ARGC;
	lim->max_arg_len = BC_MAX_ARG_LEN;
	lim->max_argv_total = BC_MAX_ARGV_TOTAL;
	lim->max_path_len = BC_MAX_PATH_LEN;
	lim->max_wire_body = BC_MAX_WIRE_BODY;
	lim->max_doti = BC_MAX_DOTI;
	lim->max_stderr = BC_MAX_STDERR;
	lim->max_stdout = BC_MAX_STDOUT;
	lim->max_object = BC_MAX_OBJECT;
	lim->max_dia = BC_MAX_DIA;
	lim->max_msg = BC_MAX_MSG;
	lim->frame_only = 0;
}

void
bc_request_init(struct bc_request *req)
{
	req->proto = 0;
	req->kind = 0;
	req->flags = 0;
	req->cwd = NULL;
	bc_strv_init(&req->argv);
	bc_buf_init(&req->doti, BC_MAX_DOTI);
	req->identity = NULL;
	req->key = NULL;
	req->loc_host = NULL;
	req->origin = NULL;
}

void
bc_request_free(struct bc_request *req)
{
	free(req->cwd);
	bc_strv_free(&req->argv);
	bc_buf_free(&req->doti);
	free(req->identity);
	free(req->key);
	free(req->loc_host);
	free(req->origin);
	bc_request_init(req);
}

void
bc_reply_init(struct bc_reply *rep)
{
	rep->proto = 0;
	rep->status = 0;
	bc_buf_init(&rep->serr, BC_MAX_STDERR);
	bc_buf_init(&rep->sout, BC_MAX_STDOUT);
	bc_buf_init(&rep->doto, BC_MAX_OBJECT);
	bc_buf_init(&rep->dia, BC_MAX_DIA);
	rep->info = NULL;
	rep->errmsg = NULL;
	rep->locn = NULL;
	rep->miss = 0;
	rep->cache_hit = 0;
	rep->has_origin = 0;
	rep->origin[0] = '\0';
	rep->beats = 0;
	bc_buf_init(&rep->dotd, BC_MAX_DOTD);
}

void
bc_reply_free(struct bc_reply *rep)
{
	bc_buf_free(&rep->serr);
	bc_buf_free(&rep->sout);
	bc_buf_free(&rep->doto);
	bc_buf_free(&rep->dia);
	bc_buf_free(&rep->dotd);
	free(rep->info);
	free(rep->locn);
	free(rep->errmsg);
	bc_reply_init(rep);
}

/* ---------------------------------------------------------------------
 * Reading requests (daemon side)
 */

/* ARGC and the ARGV strings, pushed one by one as they arrive. */
static int
read_argv(struct src *s, const struct bc_proto_limits *lim,
    struct bc_strv *argv, char *err)
{
	char t[5], *str;
	uint32_t argc, len, i;
	size_t total = 0;
	int r;

	if ((r = src_hdr(s, "ARGC", t, &argc, err)) != BC_OK)
		return r;
	if (argc == 0)
		return bc_seterr(err, BC_ERR_PROTO, "ARGC is 0");
	if ((size_t)argc > lim->max_argc)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "ARGC %lu exceeds the limit of %zu", (unsigned long)argc,
		    lim->max_argc);
	for (i = 0; i < argc; i++) {
		if ((r = src_hdr(s, "ARGV", t, &len, err)) != BC_OK)
			return r;
		if ((r = check_len("ARGV", len, lim->max_arg_len, err))
		    != BC_OK)
			return r;
		if ((size_t)len > lim->max_argv_total - total)
			return bc_seterr(err, BC_ERR_LIMIT,
			    "ARGV strings exceed the limit of %zu bytes "
			    "in total", lim->max_argv_total);
		r = src_string_body(s, "ARGV", len, lim->max_arg_len, &str,
		    err);
		if (r != BC_OK)
			return r;
		bc_strv_push_owned(argv, str);
		total += len;
	}
	return BC_OK;
}

static int
read_cdir(struct src *s, const struct bc_proto_limits *lim, char **cwd,
    char *err)
{
	char t[5];
	uint32_t len;
	int r;

	if ((r = src_hdr(s, "CDIR", t, &len, err)) != BC_OK)
		return r;
	if ((r = src_string_body(s, "CDIR", len, lim->max_path_len, cwd,
	    err)) != BC_OK)
		return r;
	if ((*cwd)[0] != '/')
		return bc_seterr(err, BC_ERR_PROTO,
		    "CDIR is not an absolute path");
	return BC_OK;
}

/* CKEY / CMPI: exactly 64 lowercase hex digits (a SHA-256). */
static int
read_hex64(struct src *s, const char *tok, char **out, char *err)
{
	char t[5];
	uint32_t len;
	int r;

	if ((r = src_hdr(s, tok, t, &len, err)) != BC_OK)
		return r;
	if (len != BC_HASH_HEXLEN)
		return bc_seterr(err, BC_ERR_PROTO,
		    "%s of %lu bytes (must be %d hex digits)", tok,
		    (unsigned long)len, BC_HASH_HEXLEN);
	if ((r = src_string_body(s, tok, len, BC_HASH_HEXLEN, out, err))
	    != BC_OK)
		return r;
	if (!bc_hash_is_hex(*out))
		return bc_seterr(err, BC_ERR_PROTO,
		    "%s is not lowercase hex", tok);
	return BC_OK;
}

static int
parse_dist(struct src *s, uint32_t version, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	int r;

	if (version == 0)
		return bc_seterr(err, BC_ERR_PROTO,
		    "protocol version 0 is not supported");
	if (version > 3)
		return bc_seterr(err, BC_ERR_PROTO,
		    "unknown distcc protocol version %lu",
		    (unsigned long)version);
	req->proto = (int)version;
	req->kind = BC_RQST_COMPILE;
	/* Pump: CDIR comes first; the NFIL part after ARGV is left unread
	 * for bc_proto3_read_files (common/proto3.h). */
	if (version == 3 && (r = read_cdir(s, lim, &req->cwd, err)) != BC_OK)
		return r;
	if ((r = read_argv(s, lim, &req->argv, err)) != BC_OK)
		return r;
	if (version == 3)
		return BC_OK;
	return src_bulk(s, "DOTI", version == 2 ? BC_COMP_LZO : BC_COMP_NONE,
	    lim->max_doti, lim->max_wire_body, &req->doti, err);
}

static int
parse_bolt(struct src *s, uint32_t version, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	char t[5];
	uint32_t kind;
	int r;

	req->proto = BC_PROTO_BOLT;
	if (version != BC_BOLT_VERSION)
		return bc_seterr(err, BC_ERR_NOTSUP,
		    "BOLT version %lu not supported (this is version %d)",
		    (unsigned long)version, BC_BOLT_VERSION);
	if ((r = src_hdr(s, "RQST", t, &kind, err)) != BC_OK)
		return r;
	if (kind == BC_RQST_HELLO || kind == BC_RQST_ZERO) {
		req->kind = (int)kind;
		return BC_OK;
	}
	if (BC_RQST_IS_LOOKUP(kind)) {
		uint32_t len;

		req->kind = (int)kind;
		if ((r = read_hex64(s, "CKEY", &req->key, err)) != BC_OK ||
		    kind == BC_RQST_LOOKUP)
			return r;
		if ((r = src_hdr(s, "FLAG", t, &req->flags, err)) != BC_OK)
			return r;
		/* LOCATE: and where the job goes if nobody has the key */
		if (kind == BC_RQST_LOCATE &&
		    ((r = src_hdr(s, "HOST", t, &len, err)) != BC_OK ||
		    (r = src_string_body(s, "HOST", len, BC_MAX_LOC_HOST,
		    &req->loc_host, err)) != BC_OK))
			return r;
		if ((req->flags & BC_FLAG_ORIGIN) == 0)
			return BC_OK;
		if ((r = src_hdr(s, "ORIG", t, &len, err)) != BC_OK ||
		    (r = src_string_body(s, "ORIG", len, BC_ORIGIN_LEN,
		    &req->origin, err)) != BC_OK)
			return r;
		if (!bc_proto_origin_valid(req->origin, strlen(req->origin)) ||
		    req->origin[0] == '\0')
			return bc_seterr(err, BC_ERR_PROTO, "ORIG is not %d "
			    "lowercase hex digits", BC_ORIGIN_LEN);
		return BC_OK;
	}
	if (kind != BC_RQST_COMPILE && kind != BC_RQST_PUMP)
		return bc_seterr(err, BC_ERR_NOTSUP,
		    "unknown BOLT request kind %lu", (unsigned long)kind);
	req->kind = (int)kind;
	if ((r = src_hdr(s, "FLAG", t, &req->flags, err)) != BC_OK)
		return r;
	if ((r = read_cdir(s, lim, &req->cwd, err)) != BC_OK)
		return r;
	if ((req->flags & BC_FLAG_IDENTITY) &&
	    (r = read_hex64(s, "CMPI", &req->identity, err)) != BC_OK)
		return r;
	if (kind == BC_RQST_PUMP)	/* manifest: bc_proto3x_read_manifest */
		return read_argv(s, lim, &req->argv, err);
	if ((r = read_argv(s, lim, &req->argv, err)) != BC_OK)
		return r;
	return src_bulk(s, "DOTI", BC_COMP_ZSTD, lim->max_doti,
	    lim->max_wire_body, &req->doti, err);
}

static int
parse_request(struct src *s, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	uint8_t h[BC_HDR_LEN];
	char tok[5], esc[BC_PROTO_ESC];
	uint32_t val;
	int r;

	bc_request_init(req);
	if ((r = src_read(s, h, sizeof h, err)) != BC_OK)
		return r;
	s->started = 1;
	if (memcmp(h, "DIST", BC_TOKEN_LEN) == 0) {
		if ((r = bc_wire_parse_hdr(h, tok, &val, err)) == BC_OK)
			r = parse_dist(s, val, lim, req, err);
	} else if (memcmp(h, "BOLT", BC_TOKEN_LEN) == 0) {
		if ((r = bc_wire_parse_hdr(h, tok, &val, err)) == BC_OK)
			r = parse_bolt(s, val, lim, req, err);
	} else {
		bc_wire_escape(h, sizeof h, esc, sizeof esc);
		r = bc_seterr(err, BC_ERR_PROTO,
		    "unknown first token \"%s\" (neither DIST nor BOLT)", esc);
	}
	if (r != BC_OK) {
		/* Keep the protocol so a BOLT peer can be told why. */
		int proto = req->proto;

		bc_request_free(req);
		req->proto = proto;
	}
	return r;
}

int
bc_proto_read_request_lim(struct bc_io *io, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	struct bc_proto_limits dflt;
	struct src s;
	int r;

	src_init(&s, io, NULL);
	s.frame_only = lim != NULL && lim->frame_only;
	r = parse_request(&s, limits_or_default(lim, &dflt), req, err);
	src_free(&s);
	return r;
}

int
bc_proto_read_request(struct bc_io *io, struct bc_request *req, char *err)
{
	return bc_proto_read_request_lim(io, NULL, req, err);
}

int
bc_proto_bolt_kind(const void *p, size_t n)
{
	struct bc_buf in;
	struct src s;
	char t[5];
	uint32_t v;
	int kind = -1;

	bc_buf_view(&in, p, n);
	src_init(&s, NULL, &in);
	if (src_hdr(&s, "BOLT", t, &v, NULL) == BC_OK &&
	    v == BC_BOLT_VERSION && src_hdr(&s, "RQST", t, &v, NULL) == BC_OK &&
	    v <= BC_RQST_LOOKUPF)
		kind = (int)v;
	src_free(&s);
	return kind;
}

int
bc_proto_parse_request(struct bc_buf *in, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	struct bc_proto_limits dflt;
	struct src s;
	int r;

	src_init(&s, NULL, in);
	s.frame_only = lim != NULL && lim->frame_only;
	r = parse_request(&s, limits_or_default(lim, &dflt), req, err);
	src_free(&s);
	return r;
}

/* ---------------------------------------------------------------------
 * Reading replies (client side)
 */

/* SERR, SOUT, DOTO (and DIAG for BOLT) after STAT. */
static int
parse_outputs(struct src *s, enum bc_comp comp, int bolt,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err)
{
	char t[5];
	uint32_t len;
	int r;

	if ((r = src_bulk(s, "SERR", comp, lim->max_stderr,
	    lim->max_wire_body, &rep->serr, err)) != BC_OK)
		return r;
	if ((r = src_bulk(s, "SOUT", comp, lim->max_stdout,
	    lim->max_wire_body, &rep->sout, err)) != BC_OK)
		return r;
	if ((r = src_hdr(s, "DOTO", t, &len, err)) != BC_OK)
		return r;
	/* Spec 5.2: a failed compile has no output; do not read one. */
	if (rep->status != 0 && len != 0)
		return bc_seterr(err, BC_ERR_PROTO,
		    "server sent a %lu-byte DOTO with status 0x%lx",
		    (unsigned long)len, (unsigned long)rep->status);
	if ((r = src_bulk_body(s, "DOTO", len, comp, lim->max_object,
	    lim->max_wire_body, &rep->doto, err)) != BC_OK)
		return r;
	if (!bolt)
		return BC_OK;
	return src_bulk(s, "DIAG", comp, lim->max_dia, lim->max_wire_body,
	    &rep->dia, err);
}

static int
parse_dist_reply(struct src *s, int proto, const struct bc_proto_limits *lim,
    struct bc_reply *rep, char *err)
{
	char t[5];
	uint32_t val;
	int r;

	if ((r = src_hdr(s, "DONE", t, &val, err)) != BC_OK)
		return r;
	if (val != (uint32_t)proto)
		return bc_seterr(err, BC_ERR_PROTO,
		    "reply is DONE %lu to a protocol %d request",
		    (unsigned long)val, proto);
	if ((r = src_hdr(s, "STAT", t, &rep->status, err)) != BC_OK)
		return r;
	return parse_outputs(s, proto == 2 ? BC_COMP_LZO : BC_COMP_NONE, 0,
	    lim, rep, err);
}

/*
 * The reply's first header after any BEAT 0 packets (FLAG_HEARTBEAT, a
 * compile's only); after the first BEAT, the reader's idle limit becomes
 * io->beat_timeout_ms.
 */
static int
parse_bolt_beats(struct src *s, int kind, struct bc_reply *rep,
    char tok[5], uint32_t *val, char *err)
{
	int r;

	for (;;) {
		if ((r = src_hdr(s, NULL, tok, val, err)) != BC_OK)
			return r;
		if (kind != BC_RQST_COMPILE || strcmp(tok, "BEAT") != 0)
			return BC_OK;
		if (*val != 0 || rep->beats >= BC_MAX_BEATS)
			return bc_seterr(err, BC_ERR_PROTO, "bad BEAT %lu "
			    "(after %lu)", (unsigned long)*val,
			    (unsigned long)rep->beats);
		rep->beats++;
		s->started = 0;
		if (s->io != NULL && s->io->beat_timeout_ms > 0 &&
		    (s->io->io_timeout_ms <= 0 ||
		    s->io->beat_timeout_ms < s->io->io_timeout_ms))
			s->io->io_timeout_ms = s->io->beat_timeout_ms;
	}
}

/* BOLT <version>, after any BEATs. */
static int
parse_bolt_start(struct src *s, int kind, struct bc_reply *rep, char *err)
{
	char tok[5], esc[BC_PROTO_ESC];
	uint32_t val;
	int r;

	if ((r = parse_bolt_beats(s, kind, rep, tok, &val, err)) != BC_OK)
		return r;
	if (strcmp(tok, "BOLT") != 0) {
		bc_wire_escape(tok, strlen(tok), esc, sizeof esc);
		return bc_seterr(err, BC_ERR_PROTO, "expected BOLT, got "
		    "\"%s\"", esc);
	}
	if (val != BC_BOLT_VERSION)
		return bc_seterr(err, BC_ERR_PROTO,
		    "reply is BOLT version %lu, expected %d",
		    (unsigned long)val, BC_BOLT_VERSION);
	return BC_OK;
}

/* EROR <text>: the job refused; BC_ERR_BUSY or BC_ERR_DENIED. */
static int
parse_bolt_eror(struct src *s, uint32_t len,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err)
{
	char esc[BC_PROTO_ESC];
	int r;

	if ((r = src_string_body(s, "EROR", len, lim->max_msg, &rep->errmsg,
	    err)) != BC_OK)
		return r;
	bc_wire_escape(rep->errmsg, strlen(rep->errmsg), esc, sizeof esc);
	r = strncmp(rep->errmsg, "busy:", 5) == 0 ? BC_ERR_BUSY :
	    BC_ERR_DENIED;
	return bc_seterr(err, r, "server refused the job: %s", esc);
}

static int
parse_bolt_miss(uint32_t val, struct bc_reply *rep, char *err)
{
	if (val != 0)
		return bc_seterr(err, BC_ERR_PROTO,
		    "MISS with value %lu", (unsigned long)val);
	rep->miss = 1;
	return BC_OK;
}

/* LOCN <host>: not here; where is rep->locn. */
static int
parse_bolt_locn(struct src *s, uint32_t len, struct bc_reply *rep,
    char *err)
{
	int r;

	if ((r = src_string_body(s, "LOCN", len, BC_MAX_LOC_HOST,
	    &rep->locn, err)) != BC_OK)
		return r;
	if (rep->locn[0] == '\0')
		return bc_seterr(err, BC_ERR_PROTO, "empty LOCN");
	rep->miss = 1;
	return BC_OK;
}

/* CHIT 0: answered from the daemon's cache (FLAG_HIT_MARK); the next
 * header into tok, *val. */
static int
parse_bolt_chit(struct src *s, char tok[5], uint32_t *val,
    struct bc_reply *rep, char *err)
{
	if (*val != 0)
		return bc_seterr(err, BC_ERR_PROTO,
		    "CHIT with value %lu", (unsigned long)*val);
	rep->cache_hit = 1;
	return src_hdr(s, NULL, tok, val, err);
}

/* ORIG <origin>: a hit, FLAG_ORIGIN: who stored the entry; then STAT
 * into tok, *val. */
static int
parse_bolt_orig(struct src *s, char tok[5], uint32_t *val,
    struct bc_reply *rep, char *err)
{
	char *o = NULL;
	int r;

	if ((r = src_string_body(s, "ORIG", *val, BC_ORIGIN_LEN, &o,
	    err)) != BC_OK)
		return r;
	if (!bc_proto_origin_valid(o, strlen(o))) {
		free(o);
		return bc_seterr(err, BC_ERR_PROTO, "bad ORIG");
	}
	memcpy(rep->origin, o, strlen(o) + 1);
	rep->has_origin = 1;
	free(o);
	return src_hdr(s, "STAT", tok, val, err);
}

/* INFO <text> for a hello, else STAT and the outputs (and a lookup's
 * DOTD). */
static int
parse_bolt_result(struct src *s, int kind, const char *tok, uint32_t val,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err)
{
	char esc[BC_PROTO_ESC];
	const char *want;
	int r;

	want = kind == BC_RQST_HELLO || kind == BC_RQST_ZERO ? "INFO" : "STAT";
	if (strcmp(tok, want) != 0) {
		bc_wire_escape(tok, strlen(tok), esc, sizeof esc);
		return bc_seterr(err, BC_ERR_PROTO,
		    "expected %s or EROR, got \"%s\"", want, esc);
	}
	if (kind == BC_RQST_HELLO || kind == BC_RQST_ZERO)
		return src_string_body(s, "INFO", val, lim->max_msg,
		    &rep->info, err);
	rep->status = val;
	if (BC_RQST_IS_LOOKUP(kind) && val != 0)
		return bc_seterr(err, BC_ERR_PROTO,
		    "lookup hit with status 0x%lx", (unsigned long)val);
	if ((r = parse_outputs(s, BC_COMP_ZSTD, 1, lim, rep, err)) != BC_OK ||
	    !BC_RQST_IS_LOOKUP(kind))
		return r;
	return src_bulk(s, "DOTD", BC_COMP_ZSTD, BC_MAX_DOTD,
	    lim->max_wire_body, &rep->dotd, err);
}

static int
parse_bolt_reply(struct src *s, int kind, const struct bc_proto_limits *lim,
    struct bc_reply *rep, char *err)
{
	char tok[5];
	uint32_t val;
	int r;

	if ((r = parse_bolt_start(s, kind, rep, err)) != BC_OK ||
	    (r = src_hdr(s, NULL, tok, &val, err)) != BC_OK)
		return r;
	if (strcmp(tok, "EROR") == 0)
		return parse_bolt_eror(s, val, lim, rep, err);
	if (BC_RQST_IS_LOOKUP(kind) && strcmp(tok, "MISS") == 0)
		return parse_bolt_miss(val, rep, err);
	if (kind == BC_RQST_LOCATE && strcmp(tok, "LOCN") == 0)
		return parse_bolt_locn(s, val, rep, err);
	if (kind == BC_RQST_COMPILE && strcmp(tok, "CHIT") == 0 &&
	    (r = parse_bolt_chit(s, tok, &val, rep, err)) != BC_OK)
		return r;
	if ((kind == BC_RQST_COMPILE || BC_RQST_IS_LOOKUP(kind)) &&
	    strcmp(tok, "ORIG") == 0 &&
	    (r = parse_bolt_orig(s, tok, &val, rep, err)) != BC_OK)
		return r;
	return parse_bolt_result(s, kind, tok, val, lim, rep, err);
}

static int
parse_reply(struct src *s, int proto, int kind,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err)
{
	int r;

	bc_reply_init(rep);
	rep->proto = proto;
	if (proto == 1 || proto == 2)
		r = parse_dist_reply(s, proto, lim, rep, err);
	else if (proto == BC_PROTO_BOLT && (kind == BC_RQST_COMPILE ||
	    kind == BC_RQST_HELLO || BC_RQST_IS_LOOKUP(kind) ||
	    kind == BC_RQST_ZERO))
		r = parse_bolt_reply(s, kind, lim, rep, err);
	else if (proto == 3)
		r = bc_seterr(err, BC_ERR_NOTSUP,
		    "pump mode (protocol 3) not supported yet");
	else
		r = bc_seterr(err, BC_ERR_INVAL,
		    "no such protocol %d / request kind %d", proto, kind);
	if (r != BC_OK) {
		/* Keep the refusal text: it is the result of a BOLT EROR. */
		char *msg = rep->errmsg;

		rep->errmsg = NULL;
		bc_reply_free(rep);
		rep->proto = proto;
		rep->errmsg = msg;
	}
	return r;
}

int
bc_proto_read_reply_lim(struct bc_io *io, int proto, int kind,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err)
{
	struct bc_proto_limits dflt;
	struct src s;
	int r;

	src_init(&s, io, NULL);
	r = parse_reply(&s, proto, kind, limits_or_default(lim, &dflt), rep,
	    err);
	src_free(&s);
	return r;
}

int
bc_proto_read_reply(struct bc_io *io, int proto, int kind,
    struct bc_reply *rep, char *err)
{
	return bc_proto_read_reply_lim(io, proto, kind, NULL, rep, err);
}

int
bc_proto_parse_reply(struct bc_buf *in, int proto, int kind,
    const struct bc_proto_limits *lim, struct bc_reply *rep, char *err)
{
	struct bc_proto_limits dflt;
	struct src s;
	int r;

	src_init(&s, NULL, in);
	r = parse_reply(&s, proto, kind, limits_or_default(lim, &dflt), rep,
	    err);
	src_free(&s);
	return r;
}

/* ---------------------------------------------------------------------
 * Writing
 */

/* Drop whatever a failed encoder appended after start. */
static int
rollback(struct bc_buf *out, size_t start, int r)
{
	if (r != BC_OK)
		bc_buf_truncate(out, start);
	return r;
}

static int
zstd_level(size_t n)
{
	return n >= BC_PROTO_ZSTD_BIG ? 1 : 3;
}

/* A bulk token: empty is length 0 whatever the compression. */
static int
put_bulk(struct bc_buf *out, const char *tok, enum bc_comp comp,
    const void *p, size_t n, char *err)
{
	return bc_packet_put_bulk(out, tok, comp, zstd_level(n), p, n, err);
}

static int
put_buf(struct bc_buf *out, const char *tok, enum bc_comp comp,
    const struct bc_buf *b, char *err)
{
	return put_bulk(out, tok, comp, bc_buf_data(b), bc_buf_len(b), err);
}

static enum bc_comp
proto_comp(int proto)
{
	if (proto == BC_PROTO_BOLT)
		return BC_COMP_ZSTD;
	return proto == 1 ? BC_COMP_NONE : BC_COMP_LZO;
}

static int
check_proto(int proto, char *err)
{
	if (proto == 1 || proto == 2 || proto == BC_PROTO_BOLT)
		return BC_OK;
	if (proto == 3)
		return bc_seterr(err, BC_ERR_NOTSUP,
		    "pump mode (protocol 3) not supported yet");
	return bc_seterr(err, BC_ERR_INVAL, "no such protocol %d", proto);
}

static int
put_argv(struct bc_buf *out, const struct bc_strv *argv, char *err)
{
	size_t i, len, total = 0;
	int r;

	if (argv->n == 0)
		return bc_seterr(err, BC_ERR_INVAL, "empty argv");
	if (argv->n > BC_MAX_ARGC)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "%zu arguments exceed the limit of %d", argv->n,
		    BC_MAX_ARGC);
	if ((r = bc_packet_put_int(out, "ARGC", (uint32_t)argv->n, err)) !=
	    BC_OK)
		return r;
	for (i = 0; i < argv->n; i++) {
		len = strlen(argv->v[i]);
		if (len > BC_MAX_ARG_LEN)
			return bc_seterr(err, BC_ERR_LIMIT,
			    "argument %zu is longer than %d bytes", i,
			    BC_MAX_ARG_LEN);
		total += len;
		if (total > BC_MAX_ARGV_TOTAL)
			return bc_seterr(err, BC_ERR_LIMIT,
			    "arguments exceed %d bytes in total",
			    BC_MAX_ARGV_TOTAL);
		if ((r = bc_packet_put_str(out, "ARGV", argv->v[i], len,
		    err)) != BC_OK)
			return r;
	}
	return BC_OK;
}

static int
write_request_head(struct bc_buf *out, const struct bc_request *req,
    char *err)
{
	uint32_t flags;
	size_t n;
	int r;

	if ((r = check_proto(req->proto, err)) != BC_OK)
		return r;
	if (req->proto != BC_PROTO_BOLT) {
		if (req->kind != BC_RQST_COMPILE)
			return bc_seterr(err, BC_ERR_INVAL,
			    "distcc protocols only carry compile requests");
		if ((r = bc_packet_put_int(out, "DIST", (uint32_t)req->proto,
		    err)) != BC_OK)
			return r;
		return put_argv(out, &req->argv, err);
	}
	if (req->kind != BC_RQST_COMPILE && req->kind != BC_RQST_HELLO &&
	    !BC_RQST_IS_LOOKUP(req->kind) && req->kind != BC_RQST_ZERO)
		return bc_seterr(err, BC_ERR_INVAL, "no such request kind %d",
		    req->kind);
	if (BC_RQST_IS_LOOKUP(req->kind) &&
	    (req->key == NULL || !bc_hash_is_hex(req->key)))
		return bc_seterr(err, BC_ERR_INVAL, "lookup needs a cache key");
	if (req->kind == BC_RQST_LOCATE && req->loc_host != NULL &&
	    strlen(req->loc_host) > BC_MAX_LOC_HOST)
		return bc_seterr(err, BC_ERR_LIMIT, "host name longer than %d "
		    "bytes", BC_MAX_LOC_HOST);
	if (req->identity != NULL && !bc_hash_is_hex(req->identity))
		return bc_seterr(err, BC_ERR_INVAL, "bad compiler identity");
	if ((r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err)) !=
	    BC_OK || (r = bc_packet_put_int(out, "RQST", (uint32_t)req->kind,
	    err)) != BC_OK)
		return r;
	if (req->kind == BC_RQST_HELLO || req->kind == BC_RQST_ZERO)
		return BC_OK;
	if (BC_RQST_IS_LOOKUP(req->kind)) {
		const char *h = req->loc_host != NULL ? req->loc_host : "";

		if ((r = bc_packet_put_str(out, "CKEY", req->key,
		    BC_HASH_HEXLEN, err)) != BC_OK ||
		    req->kind == BC_RQST_LOOKUP ||
		    (r = bc_packet_put_int(out, "FLAG", req->flags, err)) !=
		    BC_OK)
			return r;
		if (req->kind == BC_RQST_LOCATE &&
		    (r = bc_packet_put_str(out, "HOST", h, strlen(h), err)) !=
		    BC_OK)
			return r;
		if ((req->flags & BC_FLAG_ORIGIN) == 0)
			return BC_OK;
		if (req->origin == NULL || strlen(req->origin) !=
		    BC_ORIGIN_LEN || !bc_proto_origin_valid(req->origin,
		    BC_ORIGIN_LEN))
			return bc_seterr(err, BC_ERR_INVAL,
			    "FLAG_ORIGIN needs the client's origin");
		return bc_packet_put_str(out, "ORIG", req->origin,
		    BC_ORIGIN_LEN, err);
	}
	if (req->cwd == NULL || req->cwd[0] != '/')
		return bc_seterr(err, BC_ERR_INVAL,
		    "BOLT compile request needs an absolute working directory");
	n = strlen(req->cwd);
	if (n > BC_MAX_PATH_LEN)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "working directory is longer than %d bytes",
		    BC_MAX_PATH_LEN);
	flags = req->flags & ~(uint32_t)BC_FLAG_IDENTITY;
	if (req->identity != NULL)
		flags |= BC_FLAG_IDENTITY;
	if ((r = bc_packet_put_int(out, "FLAG", flags, err)) != BC_OK ||
	    (r = bc_packet_put_str(out, "CDIR", req->cwd, n, err)) != BC_OK)
		return r;
	if (req->identity != NULL &&
	    (r = bc_packet_put_str(out, "CMPI", req->identity,
	    BC_HASH_HEXLEN, err)) != BC_OK)
		return r;
	return put_argv(out, &req->argv, err);
}

int
bc_proto_write_request_head(struct bc_buf *out, const struct bc_request *req,
    char *err)
{
	size_t start = bc_buf_len(out);

	return rollback(out, start, write_request_head(out, req, err));
}

int
bc_proto_write_doti(struct bc_buf *out, int proto, const void *p, size_t n,
    char *err)
{
	size_t start = bc_buf_len(out);
	int r;

	if ((r = check_proto(proto, err)) != BC_OK)
		return r;
	if (n > BC_MAX_DOTI)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "preprocessed source of %zu bytes exceeds the limit of %zu",
		    n, BC_MAX_DOTI);
	return rollback(out, start, put_bulk(out, "DOTI", proto_comp(proto),
	    p, n, err));
}

static int
write_info(struct bc_buf *out, const char *info, char *err)
{
	size_t n = strlen(info);
	int r;

	if (n > BC_MAX_MSG)
		n = BC_MAX_MSG;
	if ((r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err)) !=
	    BC_OK)
		return r;
	return bc_packet_put_str(out, "INFO", info, n, err);
}

static int
write_reply(struct bc_buf *out, const struct bc_request *req,
    const struct bc_reply *rep, char *err)
{
	enum bc_comp comp;
	int r;

	if ((r = check_proto(req->proto, err)) != BC_OK)
		return r;
	comp = proto_comp(req->proto);
	if (req->proto == BC_PROTO_BOLT) {
		if (req->kind == BC_RQST_HELLO)
			return write_info(out, rep->info != NULL ? rep->info :
			    "boltccd " PACKAGE_VERSION, err);
		if (req->kind == BC_RQST_ZERO)
			return write_info(out, rep->info != NULL ? rep->info :
			    "zeroed", err);
		r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err);
		if (r == BC_OK && req->kind == BC_RQST_LOCATE &&
		    rep->locn != NULL) {
			size_t n = strlen(rep->locn);

			if (n == 0 || n > BC_MAX_LOC_HOST)
				return bc_seterr(err, BC_ERR_INVAL,
				    "LOCN of %zu bytes", n);
			return bc_packet_put_str(out, "LOCN", rep->locn, n,
			    err);
		}
		if (r == BC_OK && BC_RQST_IS_LOOKUP(req->kind) && rep->miss)
			return bc_packet_put_int(out, "MISS", 0, err);
		if (BC_RQST_IS_LOOKUP(req->kind) && rep->status != 0)
			return bc_seterr(err, BC_ERR_INVAL,
			    "a lookup hit has status 0");
	} else {
		r = bc_packet_put_int(out, "DONE", (uint32_t)req->proto, err);
	}
	if (r != BC_OK ||
	    (r = bc_packet_put_int(out, "STAT", rep->status, err)) != BC_OK ||
	    (r = put_buf(out, "SERR", comp, &rep->serr, err)) != BC_OK ||
	    (r = put_buf(out, "SOUT", comp, &rep->sout, err)) != BC_OK)
		return r;
	/* Spec 5.2: no object after a failure, whatever the compiler left. */
	if (rep->status != 0)
		r = bc_packet_put_int(out, "DOTO", 0, err);
	else
		r = put_buf(out, "DOTO", comp, &rep->doto, err);
	if (r != BC_OK || req->proto != BC_PROTO_BOLT)
		return r;
	r = put_buf(out, "DIAG", comp, &rep->dia, err);
	if (r != BC_OK || !BC_RQST_IS_LOOKUP(req->kind))
		return r;
	return put_buf(out, "DOTD", comp, &rep->dotd, err);
}

int
bc_proto_write_reply(struct bc_buf *out, const struct bc_request *req,
    const struct bc_reply *rep, char *err)
{
	size_t start = bc_buf_len(out);

	return rollback(out, start, write_reply(out, req, rep, err));
}

int
bc_proto_write_origin(struct bc_buf *out, const char *origin, char *err)
{
	size_t n = origin != NULL ? strlen(origin) : 0;

	if (n != 0 && (n != BC_ORIGIN_LEN || !bc_proto_origin_valid(origin, n)))
		n = 0;	/* unknown */
	return bc_packet_put_str(out, "ORIG", n > 0 ? origin : "", n, err);
}

int
bc_proto_origin_valid(const char *p, size_t n)
{
	size_t i;

	if (n != 0 && n != BC_ORIGIN_LEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') ||
		    (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

int
bc_proto_write_reply_zstd(struct bc_buf *out, const struct bc_request *req,
    const char *origin, const void *const z[5], const size_t zn[5],
    char *err)
{
	static const char *const toks[5] = { "SERR", "SOUT", "DOTO", "DIAG",
	    "DOTD" };
	size_t start = bc_buf_len(out);
	int i, n, r;

	if (req->proto != BC_PROTO_BOLT || (req->kind != BC_RQST_COMPILE &&
	    !BC_RQST_IS_LOOKUP(req->kind)))
		return bc_seterr(err, BC_ERR_INVAL,
		    "precompressed replies are BOLT compile or lookup replies");
	n = BC_RQST_IS_LOOKUP(req->kind) ? 5 : 4;
	r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err);
	if (r == BC_OK && req->kind == BC_RQST_COMPILE &&
	    (req->flags & BC_FLAG_HIT_MARK))
		r = bc_packet_put_int(out, "CHIT", 0, err);
	/* who stored it: after CHIT (a compile), first (a lookup) */
	if (r == BC_OK && (req->flags & BC_FLAG_ORIGIN) &&
	    (BC_RQST_IS_LOOKUP(req->kind) || (req->flags & BC_FLAG_HIT_MARK)))
		r = bc_proto_write_origin(out, origin, err);
	if (r == BC_OK)
		r = bc_packet_put_int(out, "STAT", 0, err);
	for (i = 0; i < n && r == BC_OK; i++)
		r = zn[i] == 0 ? bc_packet_put_int(out, toks[i], 0, err) :
		    bc_packet_put_str(out, toks[i], z[i], zn[i], err);
	return rollback(out, start, r);
}

int
bc_proto_write_error(struct bc_buf *out, const char *msg, char *err)
{
	size_t start = bc_buf_len(out), n = strlen(msg);
	int r;

	if (n > BC_MAX_MSG)
		n = BC_MAX_MSG;
	r = bc_packet_put_int(out, "BOLT", BC_BOLT_VERSION, err);
	if (r == BC_OK)
		r = bc_packet_put_str(out, "EROR", msg, n, err);
	return rollback(out, start, r);
}

int
bc_proto_write_info(struct bc_buf *out, const char *info, char *err)
{
	size_t start = bc_buf_len(out);

	return rollback(out, start, write_info(out, info, err));
}
