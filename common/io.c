/*
 * io.c - blocking reads and writes with an idle timeout and an absolute
 * job deadline, built on poll() so a trickling peer cannot hold a job.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "io.h"
#include "osdep.h"
#include "limits.h"
#include "util.h"
#include "wire.h"

void
bc_io_init(struct bc_io *io, int rfd, int wfd, int io_timeout_ms)
{
	io->rfd = rfd;
	io->wfd = wfd;
	io->io_timeout_ms = io_timeout_ms;
	io->deadline_ms = 0;
	io->bytes_in = 0;
	io->bytes_out = 0;
	io->beat_timeout_ms = 0;
	io->beats = 0;
	io->idle_name = NULL;
	io->deadline_name = NULL;
	io->rpos = 0;
	io->rlen = 0;
	io->pre = NULL;
	io->pre_pos = io->pre_len = 0;
}

void
bc_io_preload(struct bc_io *io, const void *p, size_t n)
{
	io->pre = p;
	io->pre_pos = 0;
	io->pre_len = n;
}

size_t
bc_io_preload_left(const struct bc_io *io)
{
	return io->pre_len - io->pre_pos;
}

/* Copy up to n bytes already in hand (preloaded, then read ahead) to p. */
static size_t
take_buffered(struct bc_io *io, uint8_t *p, size_t n)
{
	size_t k;

	if (io->pre_pos < io->pre_len) {
		k = io->pre_len - io->pre_pos;
		if (k > n)
			k = n;
		memcpy(p, io->pre + io->pre_pos, k);
		io->pre_pos += k;
		return k;
	}
	if (io->rpos < io->rlen) {
		k = io->rlen - io->rpos;
		if (k > n)
			k = n;
		memcpy(p, io->rbuf + io->rpos, k);
		io->rpos += k;
		return k;
	}
	return 0;
}

int64_t
bc_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t
bc_io_run_capture(const char *path, char *const argv[], const char *lc_all,
    int timeout_ms, char *buf, size_t buflen)
{
	int pfd[2], st = 0, nul;
	size_t n = 0;
	pid_t pid;
	int64_t deadline = bc_now_ms() + timeout_ms;

	if (pipe(pfd) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			(void)dup2(nul, 0);
			(void)dup2(nul, 2);
		}
		(void)dup2(pfd[1], 1);
		if (lc_all != NULL)
			(void)setenv("LC_ALL", lc_all, 1);
		execv(path, argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		int64_t left = deadline - bc_now_ms();
		ssize_t r;

		if ((timeout_ms > 0 && left <= 0) || n >= buflen)
			break;
		if (timeout_ms > 0) {
			r = poll(&p, 1, (int)left);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
		}
		r = read(pfd[0], buf + n, buflen - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(pfd[0]);
	if (timeout_ms > 0 || n >= buflen)
		(void)kill(pid, SIGKILL);	/* harmless if it exited */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return (ssize_t)n;
}

void
bc_sleep_ms(int ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Wait until fd is ready for `events`, honouring both limits.  Returns
 * BC_OK when ready (or on POLLERR/POLLHUP, so the following read/write
 * reports the real condition).
 */
static int
io_wait(struct bc_io *io, int fd, short events, const char *what, char *err)
{
	struct pollfd pfd;
	int64_t start = bc_now_ms(), now, wait;
	int by_deadline, n;

	for (;;) {
		now = bc_now_ms();
		wait = -1;
		by_deadline = 0;
		/* an idle limit that ran out is 0 here, not -1 ("none"): poll
		 * overshoots by a millisecond, and a deadline must not then
		 * take the idle limit's place */
		if (io->io_timeout_ms > 0) {
			wait = io->io_timeout_ms - (now - start);
			if (wait < 0)
				wait = 0;
		}
		if (io->deadline_ms > 0 && (io->io_timeout_ms <= 0 ||
		    io->deadline_ms - now < wait)) {
			wait = io->deadline_ms - now;
			by_deadline = 1;
		}
		if (wait < 0 && (io->io_timeout_ms > 0 || io->deadline_ms > 0))
			wait = 0;
		if (wait == 0 && (io->io_timeout_ms > 0 || io->deadline_ms > 0))
			goto timeout;
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		n = poll(&pfd, 1, wait > 0x7fffffff ? 0x7fffffff : (int)wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return bc_seterr(err, BC_ERR_IO, "poll while %s: %s",
			    what, strerror(errno));
		}
		if (n > 0)
			return BC_OK;
		/* n == 0: loop recomputes and detects expiry. */
	}
timeout:
	return bc_io_timeout_err(io, by_deadline, what, err);
}

int
bc_io_timeout_err(const struct bc_io *io, int by_deadline, const char *what,
    char *err)
{
	unsigned long long in = io->bytes_in, out = io->bytes_out;

	if (by_deadline)
		return bc_seterr(err, BC_ERR_TIMEOUT, "%s passed while %s "
		    "(%llu bytes received, %llu sent)", io->deadline_name !=
		    NULL ? io->deadline_name : "whole-job deadline", what, in,
		    out);
	return bc_seterr(err, BC_ERR_TIMEOUT, "%s: no progress for %d ms "
	    "while %s (%llu bytes received, %llu sent)", io->idle_name != NULL ?
	    io->idle_name : "idle timeout", io->io_timeout_ms, what, in, out);
}

int
bc_io_read_full(struct bc_io *io, void *p, size_t n, char *err)
{
	uint8_t *s = p;
	size_t got = 0;
	ssize_t r;
	int rc;

	while (got < n) {
		size_t k = take_buffered(io, s + got, n - got);

		if (k > 0) {
			got += k;
			continue;
		}
		if (io->rfd < 0)
			return got == 0 ? bc_seterr(err, BC_ERR_EOF, "end of "
			    "input") : bc_seterr(err, BC_ERR_TRUNCATED, "input "
			    "ends after %zu of %zu bytes", got, n);
		if ((rc = io_wait(io, io->rfd, POLLIN, "reading", err)) != BC_OK)
			return rc;
		if (n - got < sizeof(io->rbuf)) {
			/* a small packet: take whatever else is there too */
			r = read(io->rfd, io->rbuf, sizeof(io->rbuf));
			if (r > 0) {
				io->rpos = 0;
				io->rlen = (size_t)r;
				io->bytes_in += (uint64_t)r;
				continue;
			}
		} else
			r = read(io->rfd, s + got, n - got);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			return bc_seterr(err, BC_ERR_IO, "read failed: %s",
			    strerror(errno));
		}
		if (r == 0) {
			if (got == 0)
				return bc_seterr(err, BC_ERR_EOF,
				    "connection closed by peer");
			return bc_seterr(err, BC_ERR_TRUNCATED, "connection "
			    "closed after %zu of %zu bytes", got, n);
		}
		got += (size_t)r;
		io->bytes_in += (uint64_t)r;
	}
	return BC_OK;
}

int
bc_io_write_full(struct bc_io *io, const void *p, size_t n, char *err)
{
	const uint8_t *s = p;
	size_t done = 0;
	ssize_t r;
	int rc;

	while (done < n) {
		if ((rc = io_wait(io, io->wfd, POLLOUT, "writing", err)) != BC_OK)
			return rc;
		r = write(io->wfd, s + done, n - done);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			if (errno == EPIPE || errno == ECONNRESET)
				return bc_seterr(err, BC_ERR_EOF, "write "
				    "failed: %s", strerror(errno));
			return bc_seterr(err, BC_ERR_IO, "write failed: %s",
			    strerror(errno));
		}
		done += (size_t)r;
		io->bytes_out += (uint64_t)r;
	}
	return BC_OK;
}

int
bc_io_write_buf(struct bc_io *io, const struct bc_buf *b, char *err)
{
	if (bc_buf_avail(b) == 0)
		return BC_OK;
	return bc_io_write_full(io, bc_buf_ptr(b), bc_buf_avail(b), err);
}

int
bc_io_read_hdr(struct bc_io *io, const char *expect, char tok_out[5],
    uint32_t *val, char *err)
{
	uint8_t hdr[BC_HDR_LEN];
	char esc[BC_HDR_LEN * 4 + 1];
	int r;

	if ((r = bc_io_read_full(io, hdr, sizeof(hdr), err)) != BC_OK) {
		if (r == BC_ERR_EOF && expect != NULL)
			return bc_seterr(err, r, "connection closed by peer "
			    "while waiting for %s", expect);
		return r;
	}
	if (expect != NULL && (strlen(expect) != BC_TOKEN_LEN ||
	    memcmp(hdr, expect, BC_TOKEN_LEN) != 0)) {
		bc_wire_escape(hdr, sizeof(hdr), esc, sizeof(esc));
		return bc_seterr(err, BC_ERR_PROTO, "expected token %s, got "
		    "\"%s\"", expect, esc);
	}
	return bc_wire_parse_hdr(hdr, tok_out, val, err);
}

int
bc_io_read_hdr_beat(struct bc_io *io, const char *expect, char tok_out[5],
    uint32_t *val, char *err)
{
	char esc[BC_TOKEN_LEN * 4 + 1];
	int r;

	for (;;) {
		if ((r = bc_io_read_hdr(io, NULL, tok_out, val, err)) != BC_OK) {
			if (r == BC_ERR_EOF && expect != NULL)
				return bc_seterr(err, r, "connection closed by "
				    "peer while waiting for %s", expect);
			return r;
		}
		if (strcmp(tok_out, "BEAT") != 0)
			break;
		if (*val != 0 || io->beats >= BC_MAX_BEATS)
			return bc_seterr(err, BC_ERR_PROTO, "bad BEAT %lu "
			    "(after %lu)", (unsigned long)*val,
			    (unsigned long)io->beats);
		io->beats++;
		if (io->beat_timeout_ms > 0 && (io->io_timeout_ms <= 0 ||
		    io->beat_timeout_ms < io->io_timeout_ms))
			io->io_timeout_ms = io->beat_timeout_ms;
	}
	if (expect != NULL && strcmp(tok_out, expect) != 0) {
		bc_wire_escape(tok_out, strlen(tok_out), esc, sizeof(esc));
		return bc_seterr(err, BC_ERR_PROTO, "expected token %s, got "
		    "\"%s\"", expect, esc);
	}
	return BC_OK;
}

int
bc_io_read_body(struct bc_io *io, uint32_t len, size_t max,
    struct bc_buf *out, char *err)
{
	size_t start = bc_buf_len(out), got = 0, want;
	uint8_t *w;
	ssize_t r;
	int rc;

	if (len > max)
		return bc_seterr(err, BC_ERR_LIMIT, "body of %lu bytes exceeds "
		    "limit %zu", (unsigned long)len, max);
	while (got < len) {
		/* Grow by what can arrive now, not by the claimed length. */
		want = len - got;
		if (want > 65536)
			want = 65536;
		if ((rc = bc_buf_reserve(out, want, &w)) != BC_OK) {
			rc = bc_seterr(err, rc, "cannot store body of %lu "
			    "bytes: %s", (unsigned long)len, bc_strerror(rc));
			goto fail;
		}
		if ((r = (ssize_t)take_buffered(io, w, want)) > 0) {
			(void)bc_buf_commit(out, (size_t)r);
			got += (size_t)r;
			continue;
		}
		if (io->rfd < 0) {
			rc = bc_seterr(err, BC_ERR_TRUNCATED, "input ends after "
			    "%zu of a %lu-byte body", got, (unsigned long)len);
			goto fail;
		}
		if ((rc = io_wait(io, io->rfd, POLLIN, "reading body",
		    err)) != BC_OK)
			goto fail;
		r = read(io->rfd, w, want);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			rc = bc_seterr(err, BC_ERR_IO, "read failed: %s",
			    strerror(errno));
			goto fail;
		}
		if (r == 0) {
			rc = bc_seterr(err, BC_ERR_TRUNCATED, "connection "
			    "closed after %zu of %lu body bytes", got,
			    (unsigned long)len);
			goto fail;
		}
		(void)bc_buf_commit(out, (size_t)r);
		got += (size_t)r;
		io->bytes_in += (uint64_t)r;
	}
	return BC_OK;
fail:
	bc_buf_truncate(out, start);
	return rc;
}

static int
set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

static int
connect_one(const struct addrinfo *ai, int64_t deadline, int *fd_out,
    int *errno_out)
{
	struct pollfd pfd;
	socklen_t sl;
	int fd, n, soerr, one = 1;
	int64_t left;

	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0) {
		*errno_out = errno;
		return -1;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (set_nonblock(fd, 1) < 0)
		goto fail;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS && errno != EINTR)
			goto fail;
		for (;;) {
			left = deadline - bc_now_ms();
			if (left <= 0) {
				errno = ETIMEDOUT;
				goto fail;
			}
			pfd.fd = fd;
			pfd.events = POLLOUT;
			pfd.revents = 0;
			n = poll(&pfd, 1, left > 0x7fffffff ? 0x7fffffff :
			    (int)left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				goto fail;
			if (n > 0)
				break;
		}
		soerr = 0;
		sl = sizeof(soerr);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			goto fail;
		if (soerr != 0) {
			errno = soerr;
			goto fail;
		}
	}
	if (set_nonblock(fd, 0) < 0)
		goto fail;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	bc_osdep_tcp_liveness(fd, BC_TCP_KEEPIDLE_S, BC_TCP_KEEPINTVL_S,
	    BC_TCP_KEEPCNT, BC_TCP_USER_TIMEOUT_MS);
	*fd_out = fd;
	return 0;
fail:
	*errno_out = errno;
	(void)close(fd);
	return -1;
}

int
bc_io_connect_tcp(const char *host, int port, int timeout_ms, int *fd_out,
    char *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char portstr[16];
	/* "[::1]:3632" reads better than "::1:3632" in messages. */
	const char *lb = strchr(host, ':') != NULL ? "[" : "";
	const char *rb = *lb != '\0' ? "]" : "";
	int64_t deadline;
	int gai, e = 0, fd = -1;

	*fd_out = -1;
	if (port <= 0 || port > 65535)
		return bc_seterr(err, BC_ERR_INVAL, "bad port %d for host %s",
		    port, host);
	(void)snprintf(portstr, sizeof(portstr), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = AI_NUMERICSERV;
	if ((gai = getaddrinfo(host, portstr, &hints, &res)) != 0)
		return bc_seterr(err, BC_ERR_NOENT, "cannot resolve %s%s%s:%d: "
		    "%s", lb, host, rb, port, gai_strerror(gai));
	deadline = bc_now_ms() + (timeout_ms > 0 ? timeout_ms : 0x7fffffff);
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (connect_one(ai, deadline, &fd, &e) == 0)
			break;
		if (e == ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		if (e == ETIMEDOUT)
			return bc_seterr(err, BC_ERR_TIMEOUT, "connect to "
			    "%s%s%s:%d timed out after %d ms", lb, host, rb, port,
			    timeout_ms);
		return bc_seterr(err, BC_ERR_IO, "cannot connect to %s%s%s:%d: "
		    "%s", lb, host, rb, port, strerror(e));
	}
	*fd_out = fd;
	return BC_OK;
}

int
bc_io_http_get(const char *host, int port, const char *path,
    int timeout_ms, struct bc_buf *out, char *err)
{
	return bc_io_http_request("GET", host, port, path, timeout_ms, out,
	    err);
}

int
bc_io_http_status(const struct bc_buf *answer)
{
	const char *p = (const char *)bc_buf_data(answer);
	size_t n = bc_buf_len(answer);
	int v = 0, i;

	/* "HTTP/1.x NNN" */
	if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
		return 0;
	for (i = 9; i < 12; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

char *
bc_io_http_body(const struct bc_buf *answer)
{
	const char *p = (const char *)bc_buf_data(answer);
	size_t n = bc_buf_len(answer), i;

	for (i = 0; i + 1 < n; i++) {
		if (p[i] == '\n' && p[i + 1] == '\n')
			return xstrndup(p + i + 2, n - i - 2);
		if (i + 3 < n && memcmp(p + i, "\r\n\r\n", 4) == 0)
			return xstrndup(p + i + 4, n - i - 4);
	}
	return xstrndup(p != NULL ? p : "", p != NULL ? n : 0);
}

int
bc_io_http_request(const char *method, const char *host, int port,
    const char *path, int timeout_ms, struct bc_buf *out, char *err)
{
	char req[BC_MAX_PATH_LEN + 64];
	struct bc_io io;
	int64_t deadline = bc_now_ms() + timeout_ms;
	int fd, n, r;

	n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\n%s\r\n", method,
	    path, strcmp(method, "GET") != 0 ? "Content-Length: 0\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(req))
		return bc_seterr(err, BC_ERR_INVAL, "%s: path too long",
		    method);
	r = bc_io_connect_tcp(host, port, timeout_ms, &fd, err);
	if (r != BC_OK)
		return r;
	bc_io_init(&io, fd, fd, timeout_ms);
	io.deadline_ms = deadline;
	r = bc_io_write_full(&io, req, (size_t)n, err);
	while (r == BC_OK) {
		struct pollfd pfd;
		int64_t left = deadline - bc_now_ms();
		uint8_t *w;
		ssize_t got;

		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (left <= 0 || (got = poll(&pfd, 1, (int)left)) == 0) {
			r = bc_seterr(err, BC_ERR_TIMEOUT, "%s %s: no complete "
			    "answer within %d ms", method, path, timeout_ms);
			break;
		}
		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = bc_seterr(err, BC_ERR_IO, "poll: %s", strerror(errno));
			break;
		}
		if ((r = bc_buf_reserve(out, 4096, &w)) != BC_OK) {
			bc_seterr(err, r, "%s %s: answer too large", method,
			    path);
			break;
		}
		got = read(fd, w, 4096);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0) {
			r = bc_seterr(err, BC_ERR_IO, "read: %s", strerror(errno));
			break;
		}
		if (got == 0)
			break;
		(void)bc_buf_commit(out, (size_t)got);
	}
	close(fd);
	return r;
}
