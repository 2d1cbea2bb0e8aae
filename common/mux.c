/*
 * mux.c - stream multiplexing over one byte stream (see mux.h and
 * doc/PROTOCOL.md).  The codec parses only through struct bc_buf; the
 * engine never buffers more than one window per stream and direction
 * plus a bounded output queue, whatever the peer sends.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "common/mux.h"
#include "common/osdep.h"
#include "common/util.h"

#define IN_MAX (BC_MUX_HELLO_LEN + BC_MUX_HDR_LEN + BC_MUX_MAX_PAYLOAD)
#define OUT_MAX (BC_MUX_OUTQ_HIGH + BC_MUX_HELLO_LEN + BC_MUX_HDR_LEN + \
	BC_MUX_MAX_PAYLOAD + BC_MUX_MAX_STREAMS * (3 * BC_MUX_HDR_LEN + 4 + \
	BC_MUX_MAX_REASON) + 1024)

/* --------------------------------------------------------------------- */
/* codec */

int
bc_mux_put_hello(struct bc_buf *out, const struct bc_mux_hello *h)
{
	int r = bc_buf_put(out, BC_MUX_MAGIC, BC_MUX_MAGIC_LEN);

	if (r == BC_OK)
		r = bc_buf_put_u32be(out, h->version);
	if (r == BC_OK)
		r = bc_buf_put_u32be(out, h->max_payload);
	if (r == BC_OK)
		r = bc_buf_put_u32be(out, h->max_streams);
	if (r == BC_OK)
		r = bc_buf_put_u32be(out, h->window);
	return r;
}

int
bc_mux_get_hello(struct bc_buf *in, struct bc_mux_hello *h, char *err)
{
	const uint8_t *p;
	struct bc_buf v;

	if (bc_buf_peek(in, BC_MUX_MAGIC_LEN, &p) != BC_OK) {
		/* a short wrong start is already known to be wrong */
		if (bc_buf_avail(in) > 0 && memcmp(bc_buf_ptr(in), BC_MUX_MAGIC,
		    bc_buf_avail(in)) != 0)
			return bc_seterr(err, BC_ERR_PROTO, "not a mux greeting");
		return BC_ERR_TRUNCATED;
	}
	if (memcmp(p, BC_MUX_MAGIC, BC_MUX_MAGIC_LEN) != 0)
		return bc_seterr(err, BC_ERR_PROTO, "not a mux greeting");
	if (bc_buf_get_view(in, BC_MUX_HELLO_LEN, &v) != BC_OK)
		return BC_ERR_TRUNCATED;
	(void)bc_buf_skip(&v, BC_MUX_MAGIC_LEN);
	(void)bc_buf_get_u32be(&v, &h->version);
	(void)bc_buf_get_u32be(&v, &h->max_payload);
	(void)bc_buf_get_u32be(&v, &h->max_streams);
	(void)bc_buf_get_u32be(&v, &h->window);
	if (h->version != BC_MUX_VERSION)
		return bc_seterr(err, BC_ERR_NOTSUP, "mux version %u (this "
		    "side speaks %u)", h->version, BC_MUX_VERSION);
	if (h->max_payload < BC_MUX_MIN_PAYLOAD || h->window <
	    BC_MUX_MIN_WINDOW || h->max_streams == 0)
		return bc_seterr(err, BC_ERR_NOTSUP, "mux greeting with "
		    "unusable limits (payload %u, window %u, streams %u)",
		    h->max_payload, h->window, h->max_streams);
	if (h->max_payload > BC_MUX_MAX_PAYLOAD)
		h->max_payload = BC_MUX_MAX_PAYLOAD;
	if (h->window > BC_MUX_MAX_CREDIT)
		h->window = BC_MUX_MAX_CREDIT;
	if (h->max_streams > BC_MUX_MAX_STREAMS)
		h->max_streams = BC_MUX_MAX_STREAMS;
	return BC_OK;
}

int
bc_mux_put_frame(struct bc_buf *out, uint8_t type, uint32_t stream,
    const void *payload, size_t len)
{
	uint8_t *p;
	int r;

	if (len > BC_MUX_MAX_PAYLOAD)
		return BC_ERR_LIMIT;
	r = bc_buf_reserve(out, BC_MUX_HDR_LEN + len, &p);
	if (r != BC_OK)
		return r;
	p[0] = (uint8_t)(stream >> 24);
	p[1] = (uint8_t)(stream >> 16);
	p[2] = (uint8_t)(stream >> 8);
	p[3] = (uint8_t)stream;
	p[4] = (uint8_t)(len >> 24);
	p[5] = (uint8_t)(len >> 16);
	p[6] = (uint8_t)(len >> 8);
	p[7] = (uint8_t)len;
	p[8] = type;
	p[9] = p[10] = p[11] = 0;
	if (len > 0)
		memcpy(p + BC_MUX_HDR_LEN, payload, len);
	return bc_buf_commit(out, BC_MUX_HDR_LEN + len);
}

int
bc_mux_get_frame(struct bc_buf *in, uint32_t max_payload,
    struct bc_mux_frame *f, char *err)
{
	struct bc_buf v, body;
	uint8_t rsv[3];
	const uint8_t *p;

	if (bc_buf_peek(in, BC_MUX_HDR_LEN, &p) != BC_OK)
		return BC_ERR_TRUNCATED;
	bc_buf_view(&v, p, BC_MUX_HDR_LEN);
	(void)bc_buf_get_u32be(&v, &f->stream);
	(void)bc_buf_get_u32be(&v, &f->len);
	(void)bc_buf_get_u8(&v, &f->type);
	(void)bc_buf_get(&v, rsv, 3);
	if (rsv[0] != 0 || rsv[1] != 0 || rsv[2] != 0)
		return bc_seterr(err, BC_ERR_PROTO, "mux frame with reserved "
		    "bits set");
	if (f->type < BC_MUX_OPEN || f->type > BC_MUX_GOAWAY)
		return bc_seterr(err, BC_ERR_PROTO, "unknown mux frame type %u",
		    f->type);
	if (f->len > max_payload || f->len > BC_MUX_MAX_PAYLOAD)
		return bc_seterr(err, BC_ERR_LIMIT, "mux frame of %u bytes "
		    "(limit %u)", f->len, max_payload);
	if ((f->type == BC_MUX_OPEN || f->type == BC_MUX_EOF) && f->len != 0)
		return bc_seterr(err, BC_ERR_PROTO, "mux frame type %u with a "
		    "payload", f->type);
	if (f->type == BC_MUX_CREDIT && f->len != 4)
		return bc_seterr(err, BC_ERR_PROTO, "mux CREDIT of %u bytes",
		    f->len);
	if ((f->type == BC_MUX_RESET || f->type == BC_MUX_GOAWAY) &&
	    f->len > BC_MUX_MAX_REASON)
		return bc_seterr(err, BC_ERR_LIMIT, "mux reason of %u bytes "
		    "(limit %u)", f->len, BC_MUX_MAX_REASON);
	if ((f->type == BC_MUX_GOAWAY) != (f->stream == 0))
		return bc_seterr(err, BC_ERR_PROTO, "mux frame type %u on "
		    "stream %u", f->type, f->stream);
	if (bc_buf_avail(in) < BC_MUX_HDR_LEN + (size_t)f->len)
		return BC_ERR_TRUNCATED;
	(void)bc_buf_skip(in, BC_MUX_HDR_LEN);
	(void)bc_buf_get_view(in, f->len, &body);
	f->payload = bc_buf_ptr(&body);
	return BC_OK;
}

/* --------------------------------------------------------------------- */
/* engine */

static void
reason_copy(char *dst, const uint8_t *p, size_t n)
{
	size_t i;

	if (n > BC_MUX_MAX_REASON)
		n = BC_MUX_MAX_REASON;
	for (i = 0; i < n; i++)
		dst[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	dst[n] = '\0';
}

/* Queue a control frame; a full queue means the peer does not read. */
static int
queue(struct bc_mux *m, uint8_t type, uint32_t id, const void *p, size_t n)
{
	if (bc_mux_put_frame(&m->out, type, id, p, n) != BC_OK) {
		if (!m->failed)
			snprintf(m->why, sizeof(m->why), "output queue full "
			    "(the peer does not read)");
		m->failed = 1;
		return BC_ERR_LIMIT;
	}
	return BC_OK;
}

void
bc_mux_init(struct bc_mux *m, int role, uint32_t max_streams,
    bc_mux_open_fn on_open, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->role = role;
	bc_buf_init(&m->in, IN_MAX);
	bc_buf_init(&m->out, OUT_MAX);
	if (max_streams == 0)
		max_streams = 1;
	if (max_streams > BC_MUX_MAX_STREAMS)
		max_streams = BC_MUX_MAX_STREAMS;
	m->mine.version = BC_MUX_VERSION;
	m->mine.max_payload = BC_MUX_MAX_PAYLOAD;
	m->mine.max_streams = max_streams;
	m->mine.window = BC_MUX_WINDOW;
	m->on_open = on_open;
	m->ctx = ctx;
	m->s = xcalloc(BC_MUX_MAX_STREAMS, sizeof(*m->s));
	(void)bc_mux_put_hello(&m->out, &m->mine);
}

static void
stream_free(struct bc_mux_stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	bc_buf_free(&st->in);
	free(st);
}

void
bc_mux_free(struct bc_mux *m)
{
	size_t i;

	for (i = 0; i < m->ns; i++)
		stream_free(m->s[i]);
	free(m->s);
	bc_buf_free(&m->in);
	bc_buf_free(&m->out);
	memset(m, 0, sizeof(*m));
}

static int
stream_active(const struct bc_mux_stream *st)
{
	return !st->done && !(st->eof_sent && st->peer_eof);
}

size_t
bc_mux_active(const struct bc_mux *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->ns; i++)
		n += (size_t)stream_active(m->s[i]);
	return n;
}

uint32_t
bc_mux_peer_streams(const struct bc_mux *m)
{
	if (!m->hello_in)
		return 0;
	return m->peer.max_streams;
}

static struct bc_mux_stream *
stream_new(struct bc_mux *m, uint32_t id)
{
	struct bc_mux_stream *st = xcalloc(1, sizeof(*st));

	st->id = id;
	st->fd = -1;
	bc_buf_init(&st->in, m->mine.window);
	st->send_credit = m->peer.window;
	m->s[m->ns++] = st;
	m->opened++;
	return st;
}

static struct bc_mux_stream *
stream_find(struct bc_mux *m, uint32_t id)
{
	size_t i;

	for (i = 0; i < m->ns; i++)
		if (m->s[i]->id == id && !m->s[i]->done)
			return m->s[i];
	return NULL;
}

void
bc_mux_reset(struct bc_mux *m, struct bc_mux_stream *st, const char *reason)
{
	size_t n = strlen(reason);

	if (st->done)
		return;
	if (n > BC_MUX_MAX_REASON)
		n = BC_MUX_MAX_REASON;
	(void)queue(m, BC_MUX_RESET, st->id, reason, n);
	m->resets_sent++;
	reason_copy(st->reason, (const uint8_t *)reason, n);
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	st->reset = 1;
	st->done = 1;
}

static int conn_error(struct bc_mux *m, int r, char *err, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

/* The byte stream cannot be trusted any more: say why (GOAWAY) and fail. */
static int
conn_error(struct bc_mux *m, int r, char *err, const char *fmt, ...)
{
	char msg[BC_MUX_MAX_REASON];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!m->failed) {
		snprintf(m->why, sizeof(m->why), "%s", msg);
		(void)bc_mux_put_frame(&m->out, BC_MUX_GOAWAY, 0, msg,
		    strlen(msg));
	}
	m->failed = 1;
	return bc_seterr(err, r, "%s", m->why);
}

static void
stream_error(struct bc_mux *m, struct bc_mux_stream *st, const char *why)
{
	bc_warn("mux stream %u: %s: stream reset", st->id, why);
	bc_mux_reset(m, st, why);
}

static int
dispatch(struct bc_mux *m, const struct bc_mux_frame *f, char *err)
{
	struct bc_mux_stream *st;
	char e[BC_ERRLEN];
	uint32_t inc;

	if (f->type == BC_MUX_GOAWAY) {
		char r[BC_MUX_MAX_REASON + 1];

		reason_copy(r, f->payload, f->len);
		m->failed = 1;
		snprintf(m->why, sizeof(m->why), "peer gave up: %s", r);
		return bc_seterr(err, BC_ERR_EOF, "%s", m->why);
	}
	if (f->type == BC_MUX_OPEN) {
		if (m->role != BC_MUX_ROLE_SERVER)
			return conn_error(m, BC_ERR_PROTO, err, "OPEN sent to the "
			    "client side (stream %u)", f->stream);
		if (f->stream <= m->last_id)
			return conn_error(m, BC_ERR_PROTO, err, "stream id %u "
			    "reused or not increasing", f->stream);
		m->last_id = f->stream;
		if (bc_mux_active(m) >= m->mine.max_streams) {
			bc_warn("mux stream %u: too many open streams (limit "
			    "%u): stream reset", f->stream, m->mine.max_streams);
			m->resets_sent++;
			return queue(m, BC_MUX_RESET, f->stream,
			    "too many streams", 16) == BC_OK ? BC_OK :
			    bc_seterr(err, BC_ERR_LIMIT, "%s", m->why);
		}
		st = stream_new(m, f->stream);
		e[0] = '\0';
		if (m->on_open == NULL || m->on_open(m, st, m->ctx, e) != BC_OK
		    || st->fd < 0)
			stream_error(m, st, e[0] != '\0' ? e : "cannot serve");
		return m->failed ? bc_seterr(err, BC_ERR_LIMIT, "%s", m->why) :
		    BC_OK;
	}
	st = stream_find(m, f->stream);
	if (st == NULL) {
		if (f->stream != 0 && f->stream <= m->last_id) {
			m->ignored++;	/* closed meanwhile (crossed a RESET) */
			return BC_OK;
		}
		return conn_error(m, BC_ERR_PROTO, err, "frame for unknown "
		    "stream %u", f->stream);
	}
	switch (f->type) {
	case BC_MUX_DATA:
		if (st->peer_eof) {
			stream_error(m, st, "data after end of data");
			break;
		}
		if (bc_buf_avail(&st->in) + f->len > m->mine.window) {
			stream_error(m, st, "flow-control window exceeded");
			break;
		}
		if (bc_buf_avail(&st->in) == 0)
			bc_buf_reset(&st->in);
		else if (f->len > bc_buf_room(&st->in))
			bc_buf_compact(&st->in);
		if (f->len > 0 && bc_buf_put(&st->in, f->payload, f->len) !=
		    BC_OK)
			stream_error(m, st, "out of memory");
		break;
	case BC_MUX_EOF:
		if (st->peer_eof)
			stream_error(m, st, "second end of data");
		st->peer_eof = 1;
		break;
	case BC_MUX_RESET:
		reason_copy(st->reason, f->payload, f->len);
		if (st->fd >= 0)
			close(st->fd);
		st->fd = -1;
		st->reset = 2;
		st->done = 1;
		break;
	case BC_MUX_CREDIT:
		inc = ((uint32_t)f->payload[0] << 24) |
		    ((uint32_t)f->payload[1] << 16) |
		    ((uint32_t)f->payload[2] << 8) | f->payload[3];
		if (inc > BC_MUX_MAX_CREDIT - st->send_credit)
			return conn_error(m, BC_ERR_PROTO, err, "credit overflow "
			    "on stream %u", f->stream);
		st->send_credit += inc;
		break;
	default:
		break;
	}
	return m->failed ? bc_seterr(err, BC_ERR_LIMIT, "%s", m->why) : BC_OK;
}

size_t
bc_mux_in_space(struct bc_mux *m, uint8_t **p)
{
	size_t space;

	bc_buf_compact(&m->in);
	space = bc_buf_room(&m->in);
	if (space == 0 || bc_buf_reserve(&m->in, space, p) != BC_OK)
		return 0;
	return space;
}

int
bc_mux_input(struct bc_mux *m, size_t n, char *err)
{
	struct bc_mux_frame f;
	char e[BC_ERRLEN];
	int r;

	if (m->failed)
		return bc_seterr(err, BC_ERR_PROTO, "%s", m->why);
	if (n > 0 && bc_buf_commit(&m->in, n) != BC_OK)
		return conn_error(m, BC_ERR_INTERNAL, err, "input overrun");
	if (!m->hello_in) {
		r = bc_mux_get_hello(&m->in, &m->peer, e);
		if (r == BC_ERR_TRUNCATED)
			return BC_OK;
		if (r != BC_OK) {
			m->failed = 1;
			snprintf(m->why, sizeof(m->why), "%.*s",
			    (int)sizeof(m->why) - 1, e);
			return bc_seterr(err, r, "%s", e);
		}
		m->hello_in = 1;
	}
	for (;;) {
		r = bc_mux_get_frame(&m->in, m->mine.max_payload, &f, e);
		if (r == BC_ERR_TRUNCATED)
			return BC_OK;
		if (r != BC_OK)
			return conn_error(m, r, err, "%s", e);
		r = dispatch(m, &f, err);
		if (r != BC_OK)
			return r;
	}
}

size_t
bc_mux_out(struct bc_mux *m, const uint8_t **p)
{
	*p = bc_buf_ptr(&m->out);
	return bc_buf_avail(&m->out);
}

void
bc_mux_out_done(struct bc_mux *m, size_t n)
{
	(void)bc_buf_skip(&m->out, n);
	if (bc_buf_avail(&m->out) == 0)
		bc_buf_reset(&m->out);
	else if (bc_buf_tell(&m->out) > 65536)
		bc_buf_compact(&m->out);
}

int
bc_mux_open(struct bc_mux *m, int fd, struct bc_mux_stream **out, char *err)
{
	struct bc_mux_stream *st;

	*out = NULL;
	if (m->role != BC_MUX_ROLE_CLIENT || !m->hello_in || m->failed)
		return bc_seterr(err, BC_ERR_PROTO, "mux not ready");
	if (bc_mux_active(m) >= bc_mux_peer_streams(m) ||
	    m->ns >= BC_MUX_MAX_STREAMS || m->last_id == UINT32_MAX)
		return bc_seterr(err, BC_ERR_BUSY, "mux: all %u streams in "
		    "use", bc_mux_peer_streams(m));
	if (queue(m, BC_MUX_OPEN, m->last_id + 1, NULL, 0) != BC_OK)
		return bc_seterr(err, BC_ERR_LIMIT, "%s", m->why);
	st = stream_new(m, ++m->last_id);
	st->fd = fd;
	*out = st;
	return BC_OK;
}

static int
pump_stream(struct bc_mux *m, struct bc_mux_stream *st)
{
	int prog = 0;
	ssize_t n;

	/* peer -> local */
	while (bc_buf_avail(&st->in) > 0) {
		n = send(st->fd, bc_buf_ptr(&st->in), bc_buf_avail(&st->in),
		    MSG_DONTWAIT | BC_MSG_NOSIGNAL);
		if (n > 0) {
			(void)bc_buf_skip(&st->in, (size_t)n);
			st->owed += (uint32_t)n;
			prog = 1;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			break;
		bc_mux_reset(m, st, "the local end went away");
		return 1;
	}
	if (bc_buf_avail(&st->in) == 0)
		bc_buf_reset(&st->in);
	if (st->owed > 0 && !st->peer_eof && (st->owed >= m->mine.window / 4 ||
	    bc_buf_avail(&st->in) == 0)) {
		uint8_t c[4] = { (uint8_t)(st->owed >> 24),
		    (uint8_t)(st->owed >> 16), (uint8_t)(st->owed >> 8),
		    (uint8_t)st->owed };

		if (queue(m, BC_MUX_CREDIT, st->id, c, 4) != BC_OK)
			return 1;
		st->owed = 0;
	}
	if (st->peer_eof && bc_buf_avail(&st->in) == 0 && !st->shut) {
		(void)shutdown(st->fd, SHUT_WR);
		st->shut = 1;
		prog = 1;
	}
	/* local -> peer */
	while (!st->local_eof && st->send_credit > 0 &&
	    bc_buf_avail(&m->out) < BC_MUX_OUTQ_HIGH) {
		size_t k = st->send_credit;
		uint8_t *p;

		if (k > m->peer.max_payload)
			k = m->peer.max_payload;
		if (k > BC_MUX_MAX_PAYLOAD)
			k = BC_MUX_MAX_PAYLOAD;
		if (bc_buf_reserve(&m->out, BC_MUX_HDR_LEN + k, &p) != BC_OK)
			break;
		n = read(st->fd, p + BC_MUX_HDR_LEN, k);
		if (n > 0) {
			p[0] = (uint8_t)(st->id >> 24);
			p[1] = (uint8_t)(st->id >> 16);
			p[2] = (uint8_t)(st->id >> 8);
			p[3] = (uint8_t)st->id;
			p[4] = p[5] = 0;
			p[6] = (uint8_t)((size_t)n >> 8);
			p[7] = (uint8_t)n;
			p[8] = BC_MUX_DATA;
			p[9] = p[10] = p[11] = 0;
			(void)bc_buf_commit(&m->out, BC_MUX_HDR_LEN + (size_t)n);
			st->send_credit -= (uint32_t)n;
			prog = 1;
			if ((size_t)n < k)
				break;
			continue;
		}
		if (n == 0) {
			st->local_eof = 1;
			prog = 1;
			break;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			break;
		bc_mux_reset(m, st, "the local end failed");
		return 1;
	}
	if (st->local_eof && !st->eof_sent) {
		if (queue(m, BC_MUX_EOF, st->id, NULL, 0) != BC_OK)
			return 1;
		st->eof_sent = 1;
		prog = 1;
	}
	if (st->eof_sent && st->peer_eof && st->shut &&
	    bc_buf_avail(&st->in) == 0) {
		close(st->fd);
		st->fd = -1;
		st->done = 1;
		prog = 1;
	}
	return prog;
}

int
bc_mux_pump(struct bc_mux *m)
{
	size_t i;
	int prog = 0;

	if (m->failed || !m->hello_in)
		return 0;
	for (i = 0; i < m->ns && !m->failed; i++)
		if (!m->s[i]->done && m->s[i]->fd >= 0)
			prog |= pump_stream(m, m->s[i]);
	return prog;
}

short
bc_mux_events(const struct bc_mux *m, const struct bc_mux_stream *st)
{
	short ev = 0;

	if (st->done || st->fd < 0 || !m->hello_in)
		return 0;
	if (bc_buf_avail(&st->in) > 0)
		ev |= POLLOUT;
	if (!st->local_eof && st->send_credit > 0 &&
	    bc_buf_avail(&m->out) < BC_MUX_OUTQ_HIGH)
		ev |= POLLIN;
	return ev;
}

void
bc_mux_collect(struct bc_mux *m)
{
	size_t i = 0;

	while (i < m->ns) {
		if (m->s[i]->done) {
			stream_free(m->s[i]);
			m->s[i] = m->s[--m->ns];
			continue;
		}
		i++;
	}
}
