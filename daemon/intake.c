/*
 * intake.c - connections whose request is not whole yet (see intake.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/proto3.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "intake.h"
#include "pumpx.h"

#define INTAKE_READ_CHUNK 65536

/* The descriptors this process may have (boltccd's main raised the
 * soft limit already: raise_nofile). */
static size_t
fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 256;
	if (rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > BC_MAX_INTAKE + BC_INTAKE_FD_RESERVE)
		return BC_MAX_INTAKE + BC_INTAKE_FD_RESERVE;
	return (size_t)rl.rlim_cur;
}

void
bc_intake_init(struct bc_intake *t)
{
	size_t fds = fd_limit();

	memset(t, 0, sizeof(*t));
	t->max_total = fds > BC_INTAKE_FD_RESERVE + 16 ?
	    fds - BC_INTAKE_FD_RESERVE : 16;
	if (t->max_total > BC_MAX_INTAKE)
		t->max_total = BC_MAX_INTAKE;
	t->max_per_addr = t->max_total * 3 / 4;
	if (t->max_per_addr < 1)
		t->max_per_addr = 1;
	bc_info("connections waiting for a whole request: at most %zu, %zu "
	    "per client address (%zu descriptors)", t->max_total,
	    t->max_per_addr, fds);
}

void
bc_intake_free(struct bc_intake *t)
{
	while (t->n > 0)
		bc_intake_remove(t, t->n - 1, 0);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

void
bc_intake_remove(struct bc_intake *t, size_t i, int keep_fd)
{
	if (i >= t->n)
		return;
	if (!keep_fd)
		close(t->v[i].fd);
	if (t->v[i].sending)
		t->pending -= bc_buf_len(&t->v[i].in) - t->v[i].sent;
	bc_buf_free(&t->v[i].in);
	t->v[i] = t->v[--t->n];
}

/* The stalled connection (not ready) silent longest, of addr if not
 * NULL; (size_t)-1 if none. */
static size_t
oldest_stalled(const struct bc_intake *t, const char *addr)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < t->n; i++) {
		const struct bc_intake_conn *c = &t->v[i];

		if (c->ready || c->sending ||
		    (addr != NULL && strcmp(c->addr, addr) != 0))
			continue;
		if (best == (size_t)-1 || c->t_last < t->v[best].t_last)
			best = i;
	}
	return best;
}

static void
drop(struct bc_intake *t, size_t i, const char *why)
{
	bc_warn("client %s: dropped after %zu bytes of a request: %s",
	    t->v[i].peer, bc_buf_len(&t->v[i].in), why);
	bc_intake_remove(t, i, 0);
}

int
bc_intake_drop_oldest(struct bc_intake *t, const char *why)
{
	size_t i = oldest_stalled(t, NULL);

	if (i == (size_t)-1)
		return 0;
	drop(t, i, why);
	return 1;
}

static size_t
count_addr(const struct bc_intake *t, const char *addr)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += strcmp(t->v[i].addr, addr) == 0;
	return n;
}

void
bc_intake_add(struct bc_intake *t, int fd, const char *peer,
    const char *addr, int64_t now, unsigned *dropped)
{
	struct bc_intake_conn *c;
	size_t i;
	int fl;

	while (count_addr(t, addr) >= t->max_per_addr &&
	    (i = oldest_stalled(t, addr)) != (size_t)-1) {
		drop(t, i, "the most silent of its address's connections at "
		    "the bound (boltccd holds that many per address)");
		(*dropped)++;
	}
	while (t->n >= t->max_total &&
	    (i = oldest_stalled(t, NULL)) != (size_t)-1) {
		drop(t, i, "the most silent connection at the bound on "
		    "connections waiting for a whole request");
		(*dropped)++;
	}
	if (t->n >= t->max_total || count_addr(t, addr) >= t->max_per_addr) {
		/* every one of them is whole and waits for a worker */
		bc_warn("client %s: refused: %zu whole requests wait for a "
		    "worker already", peer, t->n);
		close(fd);
		(*dropped)++;
		return;
	}
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (t->n == t->cap) {
		t->cap = t->cap == 0 ? 64 : t->cap * 2;
		t->v = xrealloc(t->v, t->cap, sizeof(*t->v));
	}
	c = &t->v[t->n++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	bc_buf_init(&c->in, BC_MAX_INTAKE_BYTES);
	c->t_accept = c->t_last = now;
}

static int
any_entry(void *ctx, const char *name, int is_link, const uint8_t *data,
    size_t len, char *err)
{
	(void)ctx, (void)name, (void)is_link, (void)data, (void)len, (void)err;
	return BC_OK;
}

int
bc_intake_whole(const uint8_t *p, size_t n, char *err)
{
	struct bc_proto_limits lim;
	struct bc_proto3_limits lim3;
	struct bc_request req;
	struct bc_io io;
	int r;

	/* the framing only: the worker expands and checks the bodies */
	bc_proto_limits_default(&lim);
	lim.frame_only = 1;
	bc_proto3_limits_default(&lim3);
	lim3.frame_only = 1;
	bc_io_init(&io, -1, -1, 0);
	bc_io_preload(&io, p, n);
	bc_request_init(&req);
	r = bc_proto_read_request_lim(&io, &lim, &req, err);
	if (r == BC_OK && req.proto == 3)
		r = bc_proto3_read_files(&io, NULL, &lim3, any_entry, NULL,
		    err);
	else if (r == BC_OK && req.proto == BC_PROTO_BOLT &&
	    BC_REQ_IS_PUMP(&req)) {
		struct bc_proto3x_manifest m;

		memset(&m, 0, sizeof(m));
		r = bc_proto3x_read_manifest(&io, NULL, NULL, &m, err);
		bc_proto3x_manifest_free(&m);
	}
	bc_request_free(&req);
	return r;
}

int
bc_intake_read(struct bc_intake *t, size_t i, int64_t now)
{
	struct bc_intake_conn *c = &t->v[i];
	char err[BC_ERRLEN];
	int got = 0, r;

	for (;;) {
		size_t room = BC_MAX_INTAKE_BYTES - bc_buf_len(&c->in);
		uint8_t *w;
		ssize_t k;

		if (room == 0)
			break;
		if (room > INTAKE_READ_CHUNK)
			room = INTAKE_READ_CHUNK;
		if (bc_buf_reserve(&c->in, room, &w) != BC_OK)
			break;
		k = read(c->fd, w, room);
		if (k > 0) {
			(void)bc_buf_commit(&c->in, (size_t)k);
			got = 1;
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (k < 0 && errno == EINTR)
			continue;
		/* EOF after a whole request is a half-close: the client
		 * has sent all and waits for the reply */
		if (k == 0 && bc_buf_len(&c->in) > 0 &&
		    bc_intake_whole(bc_buf_data(&c->in), bc_buf_len(&c->in),
		    err) == BC_OK) {
			c->t_last = now;
			c->ready = 1;
			return 1;
		}
		/* closed (or failed: a link cut, keepalive) before its
		 * request was whole */
		if (k == 0)
			bc_debug("client %s: closed after %zu bytes, before a "
			    "whole request", c->peer, bc_buf_len(&c->in));
		else
			bc_info("client %s: gone after %zu bytes, before a "
			    "whole request: %s", c->peer, bc_buf_len(&c->in),
			    strerror(errno));
		bc_intake_remove(t, i, 0);
		return -1;
	}
	if (!got)
		return 0;
	c->t_last = now;
	if (bc_buf_len(&c->in) >= BC_MAX_INTAKE_BYTES) {
		c->ready = 1;	/* large and coming: a worker reads on */
		return 1;
	}
	r = bc_intake_whole(bc_buf_data(&c->in), bc_buf_len(&c->in), err);
	if (r == BC_ERR_TRUNCATED || r == BC_ERR_EOF)
		return 0;
	c->ready = 1;		/* whole, or a worker says what is wrong */
	return 1;
}

/*
 * Connection i's request ran out of time (the words as a worker's own
 * reader says them, common/io.c): logged, a BOLT client is told why,
 * then it goes.
 */
static void
cut_off(struct bc_intake *t, size_t i, const char *limit)
{
	struct bc_intake_conn *c = &t->v[i];
	struct bc_buf out = BC_BUF_INIT(BC_MAX_MSG + 64);
	char msg[256], e[BC_ERRLEN];

	snprintf(msg, sizeof(msg), "%s while reading (%zu bytes received, 0 "
	    "sent)", limit, bc_buf_len(&c->in));
	bc_warn("client %s: request cut off: %s", c->peer, msg);
	if (bc_buf_len(&c->in) >= 4 &&
	    memcmp(bc_buf_data(&c->in), "BOLT", 4) == 0 &&
	    bc_proto_write_error(&out, msg, e) == BC_OK)
		(void)send(c->fd, bc_buf_data(&out), bc_buf_len(&out),
		    MSG_DONTWAIT);	/* the parent ignores SIGPIPE */
	bc_buf_free(&out);
	bc_intake_remove(t, i, 0);
}

unsigned
bc_intake_expire(struct bc_intake *t, int64_t now,
    const struct bc_intake_limits *lim)
{
	unsigned n = 0;
	size_t i = 0;

	while (i < t->n) {
		struct bc_intake_conn *c = &t->v[i];
		char limit[160];

		if (c->ready) {
			i++;
			continue;
		}
		if (c->sending) {
			if (lim->io_ms > 0 &&
			    now - c->t_last >= (int64_t)lim->io_ms) {
				bc_warn("client %s: reply cut off: I/O timeout "
				    "(--io-timeout %d s): no progress for %lld ms "
				    "while sending (%zu of %zu bytes sent)",
				    c->peer, lim->io_sec, (long long)lim->io_ms,
				    c->sent, bc_buf_len(&c->in));
				bc_intake_remove(t, i, 0);
				n++;
			} else
				i++;
			continue;
		}
		if (lim->request_ms > 0 &&
		    now - c->t_accept >= (int64_t)lim->request_ms)
			snprintf(limit, sizeof(limit), "request timeout "
			    "(--request-timeout %d s) passed", lim->request_sec);
		else if (lim->io_ms > 0 && now - c->t_last >= (int64_t)lim->io_ms)
			snprintf(limit, sizeof(limit), "I/O timeout (--io-timeout "
			    "%d s): no progress for %lld ms", lim->io_sec,
			    (long long)lim->io_ms);
		else {
			i++;
			continue;
		}
		cut_off(t, i, limit);
		n++;
	}
	return n;
}

void
bc_intake_reply(struct bc_intake *t, size_t i, struct bc_buf *out,
    int64_t now)
{
	struct bc_intake_conn *c = &t->v[i];

	bc_buf_free(&c->in);
	bc_buf_move(&c->in, out);
	c->ready = 0;
	c->sending = 1;
	c->sent = 0;
	c->t_last = now;
	t->pending += bc_buf_len(&c->in);
	(void)bc_intake_write(t, i, now);
}

int
bc_intake_write(struct bc_intake *t, size_t i, int64_t now)
{
	struct bc_intake_conn *c = &t->v[i];
	size_t len = bc_buf_len(&c->in);

	while (c->sent < len) {
		ssize_t k = send(c->fd, bc_buf_data(&c->in) + c->sent,
		    len - c->sent, MSG_DONTWAIT);	/* SIGPIPE ignored */

		if (k > 0) {
			c->sent += (size_t)k;
			t->pending -= (size_t)k;
			c->t_last = now;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		bc_info("client %s: gone while its reply was sent (%zu of %zu "
		    "bytes): %s", c->peer, c->sent, len,
		    k < 0 ? strerror(errno) : "no progress");
		bc_intake_remove(t, i, 0);
		return -1;
	}
	bc_intake_remove(t, i, 0);
	return 1;
}

size_t
bc_intake_next_ready(const struct bc_intake *t)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < t->n; i++)
		if (t->v[i].ready && (best == (size_t)-1 ||
		    t->v[i].t_last < t->v[best].t_last))
			best = i;
	return best;
}
