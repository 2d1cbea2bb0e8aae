/*
 * muxd.c - `boltccd --mux`: many job streams over stdin/stdout (one SSH
 * channel held open by the client's SSH helper), framed by common/mux.c
 * (doc/PROTOCOL.md, "Stream multiplexing").
 *
 * Each stream is served exactly like a TCP connection: a socketpair, one
 * end to a forked worker running bc_job_serve() (allowlist, limits,
 * request and job deadlines, compile slots, cache), the other relayed by
 * this process in one event loop (common/evloop.h).  Streams are
 * limited to --jobs + --queue (at most BC_MUX_MAX_STREAMS); the
 * per-stream credit window bounds what is buffered here.  A frame that
 * breaks one stream resets it; one that breaks the framing ends this
 * process (logged with the reason); the workers of its streams then see
 * their client gone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"
#include "common/evloop.h"
#include "common/io.h"
#include "common/log.h"
#include "common/mux.h"
#include "common/util.h"
#include "job.h"
#include "server.h"

#define MUXD_FLUSH_MS 2000	/* last words (GOAWAY) before exiting */

struct muxd {
	struct bc_job_conf jc;
	uint64_t streams;
	struct bc_mux *m;
	int in_eof;		/* the client's end is gone */
	int input_bad;		/* this wakeup's input broke a frame */
};

static void
nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* A new stream: a worker on one end of a socketpair. */
static int
muxd_open(struct bc_mux *m, struct bc_mux_stream *st, void *ctx, char *err)
{
	struct muxd *d = ctx;
	char peer[48];
	int sv[2], nul;
	size_t i;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return bc_seterr(err, BC_ERR_IO, "socketpair: %s",
		    strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return bc_seterr(err, BC_ERR_BUSY, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* the worker: only its own stream, never the others' */
		nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			(void)dup2(nul, 0);
			(void)dup2(nul, 1);
			if (nul > 2)
				close(nul);
		}
		close(sv[0]);
		for (i = 0; i < m->ns; i++)
			if (m->s[i]->fd >= 0)
				close(m->s[i]->fd);
		snprintf(peer, sizeof(peer), "mux stream %u", st->id);
		bc_job_serve(&d->jc, sv[1], sv[1], peer);
		_exit(0);
	}
	close(sv[1]);
	nonblock(sv[0]);
	(void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	st->fd = sv[0];
	d->streams++;
	return BC_OK;
}

/* Write queued frames to fd 1; BC_ERR_EOF when the peer is gone. */
static int
flush_out(struct bc_mux *m)
{
	const uint8_t *p;
	size_t n;
	ssize_t w;

	while ((n = bc_mux_out(m, &p)) > 0) {
		w = write(1, p, n);
		if (w > 0) {
			bc_mux_out_done(m, (size_t)w);
			continue;
		}
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return BC_OK;
		return BC_ERR_EOF;
	}
	return BC_OK;
}

/* stdin: the client's frames. */
static void
on_stdin(void *arg, const struct bc_evloop_ev *e)
{
	struct muxd *d = arg;
	char err[BC_ERRLEN];
	uint8_t *p;
	size_t space = bc_mux_in_space(d->m, &p);
	ssize_t n = space > 0 ? read(0, p, space) : -1;

	(void)e;
	if (n > 0) {
		if (bc_mux_input(d->m, (size_t)n, err) != BC_OK)
			d->input_bad = 1;	/* logged by the loop */
	} else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR))
		d->in_eof = 1;
}

/* stdout: its errors and hang-up end the connection. */
static void
on_stdout(void *arg, const struct bc_evloop_ev *e)
{
	struct muxd *d = arg;

	if (!d->input_bad && (e->revents & (POLLERR | POLLHUP)))
		d->in_eof = 1;
}

/* What the loop waits for: stdin while the input buffer has room, stdout
 * while frames wait (its errors and hang-up always), the streams' sockets
 * the engine would read or write (bc_mux_pump moves their bytes, whatever
 * woke the loop); at least once a second. */
static void
muxd_watch(struct muxd *d, struct bc_evloop *ev)
{
	const uint8_t *op;
	uint8_t *ip;
	size_t i;

	bc_evloop_begin(ev);
	bc_evloop_timeout(ev, 1000);
	bc_evloop_add(ev, 0, bc_mux_in_space(d->m, &ip) > 0 ? POLLIN : 0,
	    on_stdin, d);
	bc_evloop_add(ev, 1, bc_mux_out(d->m, &op) > 0 ? POLLOUT : 0,
	    on_stdout, d);
	for (i = 0; i < d->m->ns; i++) {
		short events = bc_mux_events(d->m, d->m->s[i]);

		if (events != 0)
			bc_evloop_add(ev, d->m->s[i]->fd, events, NULL, NULL);
	}
}

/* Move what the streams and the client have for each other, within a
 * bound, and write it out; forget the streams that are done. */
static void
muxd_pump(struct muxd *d)
{
	int guard = 0;

	while (bc_mux_pump(d->m) && ++guard < 64)
		if (flush_out(d->m) != BC_OK)
			d->in_eof = 1;
	if (flush_out(d->m) != BC_OK)
		d->in_eof = 1;
	bc_mux_collect(d->m);
}

/* A GOAWAY's last words, within a bound. */
static void
muxd_goaway(struct bc_mux *m)
{
	int64_t end = bc_now_ms() + MUXD_FLUSH_MS;
	const uint8_t *p;

	while (bc_mux_out(m, &p) > 0 && bc_now_ms() < end) {
		struct pollfd o = { 1, POLLOUT, 0 };

		if (flush_out(m) != BC_OK)
			break;
		(void)poll(&o, 1, 100);
	}
}

int
bc_server_mux(const struct bc_server_conf *conf)
{
	struct muxd d;
	struct bc_mux m;
	struct bc_evloop ev;
	struct sigaction sa;
	uint32_t maxs;
	int64_t t0 = bc_now_ms();
	int rc = 0;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	(void)sigaction(SIGCHLD, &sa, NULL);	/* workers reaped by the kernel */
	memset(&d, 0, sizeof(d));
	bc_server_stdio_jobconf(conf, &d.jc);
	maxs = (uint32_t)(conf->jobs + conf->queue);
	if (maxs > BC_MUX_MAX_STREAMS)
		maxs = BC_MUX_MAX_STREAMS;
	nonblock(0);
	nonblock(1);
	bc_mux_init(&m, BC_MUX_ROLE_SERVER, maxs, muxd_open, &d);
	d.m = &m;
	bc_info("mux: serving streams on stdin/stdout (pid %ld, up to %u "
	    "streams)", (long)getpid(), maxs);
	bc_evloop_init(&ev);
	for (;;) {
		muxd_pump(&d);
		if (m.failed) {
			bc_warn("mux: connection failed: %s", m.why);
			rc = 1;
			break;
		}
		if (d.in_eof) {
			bc_info("mux: client closed the connection after %llu "
			    "streams", (unsigned long long)d.streams);
			break;
		}
		if (!m.hello_in && bc_now_ms() - t0 >
		    d.jc.request_timeout_ms) {
			bc_warn("mux: no greeting from the client");
			rc = 1;
			break;
		}
		muxd_watch(&d, &ev);
		d.input_bad = 0;
		if (bc_evloop_run_once(&ev) < 0) {
			bc_error("mux: poll: %s", strerror(errno));
			rc = 1;
			break;
		}
	}
	if (m.failed)
		muxd_goaway(&m);
	bc_evloop_free(&ev);
	bc_mux_free(&m);	/* closes the streams: workers see the end */
	if (d.jc.slot_fd >= 0)
		close(d.jc.slot_fd);
	return rc;
}
