/*
 * sshmux.c - the SSH helper process (the boltcc-ssh executable): holds
 * libssh2 sessions open across jobs and hands each job a socket.
 * The boltcc side that starts it and asks it for connections is
 * sshclient.c.
 *
 * The helper listens on $DIR/ssh/helper.sock (directory 0700, owner
 * checked by the client).  A client sends one request (the resolved
 * target as "key value" lines, sshclient.c) and gets back "OK\n" with
 * one end of a socketpair attached (SCM_RIGHTS), or "ERR code message\n".
 * When the job's stream ends the helper writes "EXIT status signal
 * stderr\n" (or "LOST message\n") on the request connection, which the
 * client reads only to explain a failure.
 *
 * Hosts known to be boltccd (the request has a mux_command): ONE channel
 * per session runs `boltccd --mux`, and every job is a stream of it
 * (common/mux.c); concurrent jobs share the channel, so the remote
 * user's shell and boltccd start once per session, not once per job.
 * If the remote does not greet in the mux protocol (a stock distccd, an
 * older boltccd), the target is remembered as such for the helper's
 * lifetime and its jobs get a channel each, as below.
 *
 * Other hosts: a channel per job running `... --inetd`, relayed to the
 * job's socket.  libssh2's transport keeps a single pending outgoing
 * packet per session, so channels sharing a session cannot be driven
 * independently in non-blocking mode: those sessions carry one channel
 * at a time, from a small pool per target (as many as there were
 * concurrent jobs).
 *
 * Opening a session and reading the mux greeting are blocking (bounded
 * by the connect timeout); relaying is non-blocking with one event loop
 * (common/evloop.h).  The shared helper exits after BOLTCC_SSH_IDLE
 * seconds (default 120) without a job.
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
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#include "common/err.h"
#include "common/evloop.h"
#include "common/io.h"
#include "common/log.h"
#include "common/mux.h"
#include "common/osdep.h"
#include "common/util.h"
#include "client/ssh.h"


#define MUX_MAX_CONNS 256
#define MUX_MAX_SESSIONS 64
#define MUX_BUF 65536
#define MUX_DRAIN_MS 15000	/* remote must end this long after the
				 * client left */
#define MUX_IO_TIMEOUT_MS (600 * 1000)
#define MUX_GREETING_MS 15000	/* remote shell + boltccd --mux start */
#define MUX_MAX_NOMUX 64	/* targets remembered as not speaking mux */

/* One session whose single channel runs `boltccd --mux`. */
struct mchan {
	struct bc_ssh_sess *ss;
	char *key;
	char *label;
	LIBSSH2_CHANNEL *ch;
	struct bc_mux mux;
	char serr[BC_SSH_MAX_STDERR];
	size_t serr_len;
	int64_t idle_since;
	uint64_t jobs;
};

struct msess {
	struct bc_ssh_sess *ss;
	char *key;
	int busy;
	int64_t idle_since;
};

/* C_WAITING: a request that waits (reuse_wait_ms at most) for its
 * target's session, busy with a job whose client has already left. */
enum { C_READING, C_WAITING, C_RUNNING, C_MUXED, C_DONE };

struct mconn {
	int state;
	int ctl;
	int data;
	char req[BC_SSH_MAX_REQUEST];
	size_t req_len;
	struct msess *sess;
	LIBSSH2_CHANNEL *ch;
	uint8_t up[MUX_BUF];
	size_t up_len;
	uint8_t down[MUX_BUF];
	size_t down_off, down_len;
	char serr[BC_SSH_MAX_STDERR];
	size_t serr_len;
	int client_eof, sent_eof, shut_wr, closing;
	int64_t last_io, client_gone_at;
	int64_t wait_until;	/* C_WAITING: then a session of its own */
	struct mchan *mc;		/* C_MUXED: the channel and stream */
	struct bc_mux_stream *st;
};

struct mux {
	struct mconn *c[MUX_MAX_CONNS];
	size_t nc;
	struct msess *s[MUX_MAX_SESSIONS];
	size_t ns;
	struct mchan *mc[MUX_MAX_SESSIONS];
	size_t nmc;
	char *nomux[MUX_MAX_NOMUX];
	size_t nnomux;
	int reuse_wait_ms;	/* struct bc_sshmux_opts */
};

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Small writes on the control connection; best effort. */
static void
ctl_send(int fd, const char *s)
{
	size_t n = strlen(s);

	if (fd < 0)
		return;
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_DONTWAIT | BC_MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void
ctl_err(int fd, int code, const char *msg)
{
	char line[BC_ERRLEN + 32];

	snprintf(line, sizeof(line), "ERR %d %s\n", -code, msg);
	ctl_send(fd, line);
}

static void
sess_drop(struct mux *m, struct msess *s)
{
	size_t i;

	for (i = 0; i < m->ns; i++)
		if (m->s[i] == s) {
			m->s[i] = m->s[--m->ns];
			break;
		}
	bc_ssh_sess_close(s->ss, 0);
	free(s->key);
	free(s);
}

static void
conn_free(struct mux *m, size_t idx)
{
	struct mconn *c = m->c[idx];

	if (c->ctl >= 0)
		close(c->ctl);
	if (c->data >= 0)
		close(c->data);
	free(c);
	m->c[idx] = m->c[--m->nc];
}

/* The job failed in the middle: tell the client, drop the session (its
 * channel state is unknown). */
static void
conn_fail(struct mux *m, struct mconn *c, const char *why)
{
	char line[BC_ERRLEN];
	char esc[300];

	bc_log_escape(why, strlen(why), esc, sizeof(esc));
	snprintf(line, sizeof(line), "LOST %s\n", esc);
	ctl_send(c->ctl, line);
	bc_debug("ssh helper: job failed: %s", esc);
	if (c->ch != NULL)
		c->ch = NULL;	/* freed with its session */
	if (c->sess != NULL)
		sess_drop(m, c->sess);
	c->sess = NULL;
	c->state = C_DONE;
}

static void
conn_finish(struct mux *m, struct mconn *c)
{
	LIBSSH2_SESSION *s = bc_ssh_sess_handle(c->sess->ss);
	char *sig = NULL;
	size_t siglen = 0;
	char esc[BC_SSH_MAX_STDERR * 2], line[BC_SSH_MAX_STDERR * 2 + 64];
	int status = libssh2_channel_get_exit_status(c->ch);

	(void)libssh2_channel_get_exit_signal(c->ch, &sig, &siglen, NULL, NULL,
	    NULL, NULL);
	while (c->serr_len > 0 && (c->serr[c->serr_len - 1] == '\n' ||
	    c->serr[c->serr_len - 1] == '\r'))
		c->serr_len--;
	bc_log_escape(c->serr, c->serr_len, esc, sizeof(esc));
	snprintf(line, sizeof(line), "EXIT %d %.30s %s\n", status,
	    sig != NULL && siglen > 0 ? sig : "-", esc);
	if (sig != NULL)
		libssh2_free(s, sig);
	ctl_send(c->ctl, line);
	libssh2_session_set_blocking(s, 1);
	libssh2_session_set_timeout(s, 1000);
	(void)libssh2_channel_free(c->ch);
	libssh2_session_set_blocking(s, 0);
	c->ch = NULL;
	c->sess->busy = 0;
	c->sess->idle_since = bc_now_ms();
	c->sess = NULL;
	c->state = C_DONE;
}

/*
 * The steps of conn_pump return 1 if they moved anything, 0 if not, or
 * CONN_ENDED when the job is over (conn_finish or conn_fail ran, the
 * state is C_DONE and the channel is gone).
 */
#define CONN_ENDED (-1)

/* 1 if errno says a non-blocking read or send should only be retried. */
static int
conn_again(void)
{
	return errno == EAGAIN || errno == EINTR || errno == EWOULDBLOCK;
}

/* The client's bytes into c->up; end of file or an error ends them. */
static int
conn_read_client(struct mconn *c, int64_t now)
{
	ssize_t n;

	if (c->client_eof || c->up_len >= sizeof(c->up))
		return 0;
	n = read(c->data, c->up + c->up_len, sizeof(c->up) - c->up_len);
	if (n > 0) {
		c->up_len += (size_t)n;
		return 1;
	}
	if (n == 0 || !conn_again()) {
		c->client_eof = 1;
		c->client_gone_at = now;
		return 1;
	}
	return 0;
}

static int
conn_write_channel(struct mux *m, struct mconn *c)
{
	ssize_t n;

	if (c->up_len == 0)
		return 0;
	n = libssh2_channel_write(c->ch, (const char *)c->up, c->up_len);
	if (n > 0) {
		memmove(c->up, c->up + n, c->up_len - (size_t)n);
		c->up_len -= (size_t)n;
		return 1;
	}
	if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
		conn_fail(m, c, "channel write failed (connection lost?)");
		return CONN_ENDED;
	}
	return 0;
}

/* EOF to the remote once the client's bytes have all gone up. */
static int
conn_send_eof(struct mconn *c)
{
	if (!c->client_eof || c->up_len != 0 || c->sent_eof)
		return 0;
	if (libssh2_channel_send_eof(c->ch) == LIBSSH2_ERROR_EAGAIN)
		return 0;
	c->sent_eof = 1;
	return 1;
}

/* The remote's stdout into c->down. */
static int
conn_read_channel(struct mux *m, struct mconn *c)
{
	ssize_t n;

	if (c->down_off == c->down_len)
		c->down_off = c->down_len = 0;
	if (c->down_len >= sizeof(c->down))
		return 0;
	n = libssh2_channel_read(c->ch, (char *)c->down + c->down_len,
	    sizeof(c->down) - c->down_len);
	if (n > 0) {
		c->down_len += (size_t)n;
		return 1;
	}
	if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
		conn_fail(m, c, "channel read failed (connection lost?)");
		return CONN_ENDED;
	}
	return 0;
}

/* The remote's stderr, kept up to c->serr's size (the rest is dropped). */
static int
conn_read_stderr(struct mconn *c)
{
	char tmp[4096];
	ssize_t n;
	size_t k;

	n = libssh2_channel_read_stderr(c->ch, tmp, sizeof(tmp));
	if (n <= 0)
		return 0;
	k = (size_t)n;
	if (k > sizeof(c->serr) - c->serr_len)
		k = sizeof(c->serr) - c->serr_len;
	memcpy(c->serr + c->serr_len, tmp, k);
	c->serr_len += k;
	return 1;
}

/* c->down to the client; once the client is gone it is discarded. */
static int
conn_write_client(struct mconn *c, int64_t now)
{
	ssize_t n;

	if (c->down_len <= c->down_off)
		return 0;
	if (c->client_eof && c->shut_wr) {
		c->down_off = c->down_len;	/* nobody to read it */
		return 0;
	}
	n = send(c->data, c->down + c->down_off, c->down_len - c->down_off,
	    MSG_DONTWAIT | BC_MSG_NOSIGNAL);
	if (n > 0) {
		c->down_off += (size_t)n;
		return 1;
	}
	if (n < 0 && !conn_again()) {
		/* the client went away: discard */
		c->down_off = c->down_len;
		c->client_eof = 1;
		c->shut_wr = 1;
		if (c->client_gone_at == 0)
			c->client_gone_at = now;
	}
	return 0;
}

/*
 * Once the remote's output has ended and all of it went to the client:
 * end the client's input, close the channel and, when it is closed,
 * finish the job.
 */
static int
conn_close_channel(struct mux *m, struct mconn *c)
{
	int prog = 0, r;

	if (!libssh2_channel_eof(c->ch) || c->down_off != c->down_len)
		return 0;
	if (!c->shut_wr) {
		(void)shutdown(c->data, SHUT_WR);
		c->shut_wr = 1;
		prog = 1;
	}
	if (!c->closing) {
		r = libssh2_channel_close(c->ch);
		if (r == 0)
			c->closing = 1;
		else if (r != LIBSSH2_ERROR_EAGAIN) {
			conn_fail(m, c, "channel close failed");
			return CONN_ENDED;
		}
	}
	if (!c->closing)
		return prog;
	r = libssh2_channel_wait_closed(c->ch);
	if (r == 0) {
		conn_finish(m, c);
		return CONN_ENDED;
	}
	if (r != LIBSSH2_ERROR_EAGAIN) {
		conn_fail(m, c, "channel close failed");
		return CONN_ENDED;
	}
	return prog;
}

/* Fails the job if the remote outlives its client or goes quiet. */
static int
conn_check_time(struct mux *m, struct mconn *c, int64_t now)
{
	if (c->client_eof && c->client_gone_at > 0 &&
	    now - c->client_gone_at > MUX_DRAIN_MS) {
		conn_fail(m, c, "remote command did not end after the client "
		    "left");
		return CONN_ENDED;
	}
	if (now - c->last_io > MUX_IO_TIMEOUT_MS) {
		conn_fail(m, c, "no data for too long");
		return CONN_ENDED;
	}
	return 0;
}

/* Move bytes; returns 1 if anything happened. */
static int
conn_pump(struct mux *m, struct mconn *c, int64_t now)
{
	int prog, r;

	prog = conn_read_client(c, now);
	if ((r = conn_write_channel(m, c)) == CONN_ENDED)
		return 1;
	prog |= r;
	prog |= conn_send_eof(c);
	if ((r = conn_read_channel(m, c)) == CONN_ENDED)
		return 1;
	prog |= r;
	prog |= conn_read_stderr(c);
	prog |= conn_write_client(c, now);
	if (prog)
		c->last_io = now;
	if ((r = conn_close_channel(m, c)) == CONN_ENDED)
		return 1;
	prog |= r;
	if (conn_check_time(m, c, now) == CONN_ENDED)
		return 1;
	return prog;
}

static void
close_idle_sessions(struct mux *m, int64_t now, int idle_sec, int all)
{
	size_t i = 0;

	while (i < m->ns) {
		struct msess *s = m->s[i];

		if (!s->busy && (all || now - s->idle_since >
		    (int64_t)idle_sec * 1000)) {
			sess_drop(m, s);
			continue;
		}
		i++;
	}
}

/* Send "OK\n" with fd attached. */
static int
send_fd(int ctl, int fd)
{
	struct msghdr mh;
	struct iovec iov;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct cmsghdr *cm;
	char ok[] = "OK\n";
	ssize_t w;

	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	iov.iov_base = ok;
	iov.iov_len = 3;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.b;
	mh.msg_controllen = sizeof(u.b);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		w = sendmsg(ctl, &mh, BC_MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == 3 ? BC_OK : BC_ERR_IO;
}

/* --------------------------------------------------------------------- */
/* multiplexed channels (boltccd --mux) */

static int
nomux_has(const struct mux *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->nnomux; i++)
		if (strcmp(m->nomux[i], key) == 0)
			return 1;
	return 0;
}

static void
nomux_add(struct mux *m, const char *key)
{
	if (nomux_has(m, key))
		return;
	if (m->nnomux == MUX_MAX_NOMUX) {
		free(m->nomux[0]);
		memmove(m->nomux, m->nomux + 1, (MUX_MAX_NOMUX - 1) *
		    sizeof(m->nomux[0]));
		m->nnomux--;
	}
	m->nomux[m->nnomux++] = xstrdup(key);
}

static void
mchan_stderr(struct mchan *mc)
{
	char tmp[4096];
	ssize_t n;

	while ((n = libssh2_channel_read_stderr(mc->ch, tmp, sizeof(tmp))) >
	    0) {
		size_t k = (size_t)n;

		if (k > sizeof(mc->serr) - mc->serr_len)
			k = sizeof(mc->serr) - mc->serr_len;
		memcpy(mc->serr + mc->serr_len, tmp, k);
		mc->serr_len += k;
	}
}

/* Tell a stream's client how it ended (best effort) and forget it. */
static void
conn_stream_end(struct mconn *c, const char *lost)
{
	char line[BC_ERRLEN + 16], esc[BC_ERRLEN / 2];

	if (lost != NULL) {
		bc_log_escape(lost, strlen(lost), esc, sizeof(esc));
		snprintf(line, sizeof(line), "LOST %s\n", esc);
		bc_debug("ssh helper: stream failed: %s", esc);
	} else
		snprintf(line, sizeof(line), "EXIT 0 - \n");
	ctl_send(c->ctl, line);
	c->st = NULL;
	c->mc = NULL;
	c->state = C_DONE;
}

static void
mchan_free(struct mux *m, struct mchan *mc, int polite)
{
	size_t i;

	for (i = 0; i < m->nmc; i++)
		if (m->mc[i] == mc) {
			m->mc[i] = m->mc[--m->nmc];
			break;
		}
	bc_mux_free(&mc->mux);	/* closes the streams' sockets */
	bc_ssh_sess_close(mc->ss, polite);	/* frees the channel */
	free(mc->key);
	free(mc->label);
	free(mc);
}

/* The channel failed: every stream on it is a host failure. */
static void
mchan_fail(struct mux *m, struct mchan *mc, const char *why)
{
	char msg[BC_ERRLEN];
	size_t i;

	if (mc->ch != NULL && libssh2_channel_eof(mc->ch)) {
		int st = libssh2_channel_get_exit_status(mc->ch);
		char *sig = NULL;
		size_t siglen = 0;

		(void)libssh2_channel_get_exit_signal(mc->ch, &sig, &siglen,
		    NULL, NULL, NULL, NULL);
		mchan_stderr(mc);
		while (mc->serr_len > 0 && (mc->serr[mc->serr_len - 1] ==
		    '\n' || mc->serr[mc->serr_len - 1] == '\r'))
			mc->serr_len--;
		if (sig != NULL && siglen > 0)
			snprintf(msg, sizeof(msg), "%s: %s (killed by signal "
			    "%.30s) %.*s", mc->label, why, sig,
			    (int)mc->serr_len, mc->serr);
		else
			snprintf(msg, sizeof(msg), "%s: %s (exit status %d) "
			    "%.*s", mc->label, why, st, (int)mc->serr_len,
			    mc->serr);
		if (sig != NULL)
			libssh2_free(bc_ssh_sess_handle(mc->ss), sig);
	} else
		snprintf(msg, sizeof(msg), "%s: %s", mc->label, why);
	bc_debug("ssh helper: mux channel failed: %s", msg);
	for (i = 0; i < mc->mux.ns; i++) {
		struct bc_mux_stream *st = mc->mux.s[i];

		if (st->user != NULL)
			conn_stream_end(st->user, msg);
		st->user = NULL;
	}
	mchan_free(m, mc, 0);
}

/* Open a session with one channel running the mux command and read the
 * greeting (blocking, bounded).  NULL with err; *nomux = 1 when the
 * remote ran but does not speak the mux protocol. */
static struct mchan *
mchan_open(struct mux *m, const struct bc_ssh_target *t, const char *key,
    int *nomux, char *err)
{
	struct bc_ssh_sess *ss;
	struct mchan *mc;
	LIBSSH2_SESSION *s;
	void *chp = NULL;
	int64_t deadline;
	char e[BC_ERRLEN];
	int r;

	*nomux = 0;
	r = bc_ssh_sess_open(t, &ss, err);
	if (r != BC_OK)
		return NULL;
	r = bc_ssh_sess_exec(ss, t->mux_command, t->timeout_ms, &chp, err);
	if (r != BC_OK) {
		bc_ssh_sess_close(ss, 1);
		return NULL;
	}
	mc = xcalloc(1, sizeof(*mc));
	mc->ss = ss;
	mc->ch = chp;
	mc->key = xstrdup(key);
	mc->label = xasprintf("%s@%s", t->user, t->alias);
	bc_mux_init(&mc->mux, BC_MUX_ROLE_CLIENT, BC_MUX_MAX_STREAMS, NULL,
	    NULL);
	s = bc_ssh_sess_handle(ss);
	libssh2_session_set_blocking(s, 1);
	libssh2_session_set_timeout(s, t->timeout_ms > MUX_GREETING_MS ?
	    t->timeout_ms : MUX_GREETING_MS);
	deadline = bc_now_ms() + (t->timeout_ms > MUX_GREETING_MS ?
	    t->timeout_ms : MUX_GREETING_MS);
	/* our greeting (queued by bc_mux_init), then theirs */
	{
		const uint8_t *p;
		size_t n = bc_mux_out(&mc->mux, &p);
		ssize_t w = libssh2_channel_write(mc->ch, (const char *)p, n);

		if (w > 0)
			bc_mux_out_done(&mc->mux, (size_t)w);
	}
	while (!mc->mux.hello_in && !mc->mux.failed &&
	    bc_now_ms() < deadline) {
		uint8_t *p;
		size_t need = BC_MUX_HELLO_LEN - bc_buf_avail(&mc->mux.in);
		ssize_t n;

		if (bc_mux_in_space(&mc->mux, &p) < need)
			break;
		n = libssh2_channel_read(mc->ch, (char *)p, need);
		if (n <= 0)
			break;
		if (bc_mux_input(&mc->mux, (size_t)n, e) != BC_OK)
			break;
	}
	if (!mc->mux.hello_in) {
		int st = -1;

		mchan_stderr(mc);
		if (libssh2_channel_eof(mc->ch))
			st = libssh2_channel_get_exit_status(mc->ch);
		while (mc->serr_len > 0 && (mc->serr[mc->serr_len - 1] == '\n'
		    || mc->serr[mc->serr_len - 1] == '\r'))
			mc->serr_len--;
		*nomux = mc->mux.failed || libssh2_channel_eof(mc->ch);
		bc_seterr(err, BC_ERR_PROTO, "ssh: `%s` on %s did not greet in "
		    "the mux protocol (%s; exit status %d): %.*s",
		    t->mux_command, mc->label, mc->mux.failed ? mc->mux.why :
		    libssh2_channel_eof(mc->ch) ? "ended" : "timeout", st,
		    (int)mc->serr_len, mc->serr);
		bc_debug("%s", err);
		libssh2_session_set_timeout(s, 1000);
		mchan_free(m, mc, 1);
		return NULL;
	}
	libssh2_session_set_blocking(s, 0);
	mc->idle_since = bc_now_ms();
	m->mc[m->nmc++] = mc;
	bc_debug("ssh helper: mux channel to %s:%d open (`%s`, up to %u "
	    "streams)", t->hostname, t->port, t->mux_command,
	    bc_mux_peer_streams(&mc->mux));
	return mc;
}

/* A job on a mux channel: 1 if handled (started or failed), 0 to use a
 * channel of its own (the remote does not speak mux). */
static int
conn_start_mux(struct mux *m, struct mconn *c, const struct bc_ssh_target *t,
    const char *key, int64_t now)
{
	struct mchan *mc = NULL;
	struct bc_mux_stream *st;
	char err[BC_ERRLEN];
	int sv[2], nomux;
	size_t i;

	for (i = 0; i < m->nmc; i++)
		if (strcmp(m->mc[i]->key, key) == 0 &&
		    bc_mux_active(&m->mc[i]->mux) <
		    bc_mux_peer_streams(&m->mc[i]->mux)) {
			mc = m->mc[i];
			break;
		}
	if (mc == NULL) {
		if (m->nmc >= MUX_MAX_SESSIONS) {
			ctl_err(c->ctl, BC_ERR_BUSY, "ssh helper: too many "
			    "sessions");
			return 1;
		}
		mc = mchan_open(m, t, key, &nomux, err);
		if (mc == NULL && nomux) {
			nomux_add(m, key);
			return 0;
		}
		if (mc == NULL) {
			ctl_err(c->ctl, BC_ERR_IO, err);
			return 1;
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		ctl_err(c->ctl, BC_ERR_IO, "ssh helper: socketpair failed");
		return 1;
	}
	set_nonblock(sv[0]);
	if (bc_mux_open(&mc->mux, sv[0], &st, err) != BC_OK) {
		close(sv[0]);
		close(sv[1]);
		ctl_err(c->ctl, BC_ERR_BUSY, err);
		return 1;
	}
	if (send_fd(c->ctl, sv[1]) != BC_OK) {
		close(sv[1]);
		bc_mux_reset(&mc->mux, st, "the client went away");
		return 1;
	}
	close(sv[1]);
	st->user = c;
	mc->jobs++;
	c->mc = mc;
	c->st = st;
	c->last_io = now;
	c->state = C_MUXED;
	bc_debug("ssh helper: job %llu on the mux channel to %s (stream %u)",
	    (unsigned long long)mc->jobs, mc->label, st->id);
	return 1;
}

/* The channel failed with libssh2 error r: fail it, saying which. */
static void
mchan_lost(struct mux *m, struct mchan *mc, const char *what, int r)
{
	char why[BC_ERRLEN];
	char *msg = NULL;

	if (mc->ss != NULL)
		(void)libssh2_session_last_error(bc_ssh_sess_handle(mc->ss),
		    &msg, NULL, 0);
	snprintf(why, sizeof(why), "connection lost (%s: libssh2 error %d: %s)",
	    what, r, msg != NULL ? msg : "?");
	mchan_fail(m, mc, why);
}

/* Move bytes on one mux channel; returns 1 if anything happened. */
static int
mchan_pump(struct mux *m, struct mchan *mc, int64_t now)
{
	char err[BC_ERRLEN];
	int prog = 0, k;
	size_t i;

	for (k = 0; k < 64; k++) {
		uint8_t *p;
		const uint8_t *op;
		size_t space = bc_mux_in_space(&mc->mux, &p), n;
		ssize_t r;
		int moved = 0;

		if (space > 0) {
			r = libssh2_channel_read(mc->ch, (char *)p, space);
			if (r > 0) {
				moved = 1;
				if (bc_mux_input(&mc->mux, (size_t)r, err) !=
				    BC_OK) {
					bc_warn("ssh helper: mux channel to %s: "
					    "%s", mc->label, err);
					mchan_fail(m, mc, err);
					return 1;
				}
			} else if (r < 0 && r != LIBSSH2_ERROR_EAGAIN) {
				mchan_lost(m, mc, "reading", (int)r);
				return 1;
			}
		}
		mchan_stderr(mc);
		moved |= bc_mux_pump(&mc->mux);
		n = bc_mux_out(&mc->mux, &op);
		if (n > 0) {
			r = libssh2_channel_write(mc->ch, (const char *)op, n);
			if (r > 0) {
				bc_mux_out_done(&mc->mux, (size_t)r);
				moved = 1;
			} else if (r < 0 && r != LIBSSH2_ERROR_EAGAIN) {
				mchan_lost(m, mc, "writing", (int)r);
				return 1;
			}
		}
		if (mc->mux.failed) {
			mchan_fail(m, mc, mc->mux.why);
			return 1;
		}
		if (!moved)
			break;
		prog = 1;
	}
	if (libssh2_channel_eof(mc->ch)) {
		mchan_fail(m, mc, "the remote boltccd --mux ended");
		return 1;
	}
	/* finished streams: tell their clients */
	for (i = 0; i < mc->mux.ns; i++) {
		struct bc_mux_stream *st = mc->mux.s[i];
		struct mconn *c = st->user;

		if (c == NULL)
			continue;
		if (st->done) {
			char why[BC_MUX_MAX_REASON + 64];

			if (st->reset)
				snprintf(why, sizeof(why), "%s: stream reset "
				    "by %s: %s", mc->label, st->reset == 2 ?
				    "the remote" : "the helper", st->reason);
			conn_stream_end(c, st->reset ? why : NULL);
			st->user = NULL;
			prog = 1;
			continue;
		}
		if (st->local_eof && c->client_gone_at == 0)
			c->client_gone_at = now;
		if (c->client_gone_at > 0 && now - c->client_gone_at >
		    MUX_DRAIN_MS) {
			bc_mux_reset(&mc->mux, st, "the client left and the "
			    "job did not end");
			conn_stream_end(c, "the remote job did not end after "
			    "the client left");
			st->user = NULL;
			prog = 1;
		}
	}
	bc_mux_collect(&mc->mux);
	if (mc->mux.ns > 0)
		mc->idle_since = now;
	return prog;
}

/* A complete request: find or open a session, open the channel. */
/*
 * Whether request c should wait for a session of its target rather than
 * log in again: one is busy with a job whose client has left (it has its
 * outputs; the remote command is only still ending, storing its result
 * in the cache, say), and c has not waited m->reuse_wait_ms yet.  Then c
 * is C_WAITING and the loop starts it again (bc_sshmux_run).  Sequential
 * jobs so keep one session; parallel ones, whose clients are still
 * there, get sessions of their own at once.
 */
static int
wait_for_session(struct mux *m, struct mconn *c, const char *key,
    int64_t now)
{
	size_t i;

	if (m->reuse_wait_ms <= 0 || (c->wait_until != 0 &&
	    now >= c->wait_until))
		return 0;
	for (i = 0; i < m->nc; i++) {
		const struct mconn *o = m->c[i];

		if (o != c && o->state == C_RUNNING && o->ctl < 0 &&
		    o->sess != NULL && strcmp(o->sess->key, key) == 0)
			break;
	}
	if (i == m->nc)
		return 0;
	if (c->wait_until == 0) {
		c->wait_until = now + m->reuse_wait_ms;
		bc_debug("ssh helper: waiting for a session that is ending");
	}
	c->state = C_WAITING;
	return 1;
}

static void
conn_start(struct mux *m, struct mconn *c, int64_t now)
{
	struct bc_ssh_target t;
	char err[BC_ERRLEN];
	struct msess *s = NULL;
	void *chp = NULL;
	const char *body;
	char *key;
	int sv[2], r, attempt;
	size_t i;

	c->state = C_DONE;
	if (c->req_len < 8 || memcmp(c->req, "BCSSH 1\n", 8) != 0) {
		ctl_err(c->ctl, BC_ERR_PROTO, "bad helper request");
		return;
	}
	body = c->req + 8;
	r = bc_ssh_target_decode(body, c->req_len - 8, &t, err);
	if (r != BC_OK) {
		ctl_err(c->ctl, r, err);
		return;
	}
	key = xstrndup(body, c->req_len - 8);
	if (t.mux_command != NULL && !nomux_has(m, key) &&
	    conn_start_mux(m, c, &t, key, now)) {
		free(key);
		bc_ssh_target_free(&t);
		return;
	}
	for (attempt = 0; attempt < 2; attempt++) {
		s = NULL;
		for (i = 0; attempt == 0 && i < m->ns; i++)
			if (!m->s[i]->busy && strcmp(m->s[i]->key, key) == 0) {
				s = m->s[i];
				break;
			}
		if (s == NULL && attempt == 0 && wait_for_session(m, c, key,
		    now)) {
			free(key);
			bc_ssh_target_free(&t);
			return;
		}
		if (s == NULL) {
			struct bc_ssh_sess *ss;

			if (m->ns >= MUX_MAX_SESSIONS)
				close_idle_sessions(m, now, 0, 1);
			if (m->ns >= MUX_MAX_SESSIONS) {
				r = bc_seterr(err, BC_ERR_BUSY, "ssh helper: "
				    "too many sessions");
				break;
			}
			r = bc_ssh_sess_open(&t, &ss, err);
			if (r != BC_OK)
				break;
			s = xcalloc(1, sizeof(*s));
			s->ss = ss;
			s->key = xstrdup(key);
			m->s[m->ns++] = s;
			bc_debug("ssh helper: new session to %s@%s:%d%s%s (%zu "
			    "open)", t.user, t.hostname, t.port, t.njumps > 0 ?
			    " via jump host " : "", t.njumps > 0 ?
			    t.jumps[t.njumps - 1].alias : "", m->ns);
		} else
			bc_debug("ssh helper: reusing a session to %s@%s:%d",
			    t.user, t.hostname, t.port);
		r = bc_ssh_sess_exec(s->ss, t.command, t.timeout_ms, &chp, err);
		if (r == BC_OK)
			break;
		/* a reused session may have been closed by the server */
		sess_drop(m, s);
		s = NULL;
	}
	free(key);
	if (r != BC_OK) {
		bc_debug("ssh helper: %s", err);
		ctl_err(c->ctl, r, err);
		bc_ssh_target_free(&t);
		return;
	}
	bc_ssh_target_free(&t);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		ctl_err(c->ctl, BC_ERR_IO, "ssh helper: socketpair failed");
		libssh2_channel_free(chp);
		sess_drop(m, s);
		return;
	}
	if (send_fd(c->ctl, sv[1]) != BC_OK) {
		close(sv[0]);
		close(sv[1]);
		sess_drop(m, s);	/* channel freed with it */
		return;
	}
	close(sv[1]);
	set_nonblock(sv[0]);
	s->busy = 1;
	c->sess = s;
	c->ch = chp;
	c->data = sv[0];
	c->last_io = now;
	c->state = C_RUNNING;
}

/* Read from a control connection. */
static void
conn_read_ctl(struct mux *m, struct mconn *c, int64_t now)
{
	char tmp[512];
	ssize_t n;

	if (c->state == C_READING) {
		n = recv(c->ctl, c->req + c->req_len,
		    sizeof(c->req) - c->req_len, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			c->state = C_DONE;
			return;
		}
		if (n < 0)
			return;
		c->req_len += (size_t)n;
		if (c->req_len >= 2 && c->req[c->req_len - 1] == '\n' &&
		    c->req[c->req_len - 2] == '\n')
			conn_start(m, c, now);
		else if (c->req_len == sizeof(c->req)) {
			ctl_err(c->ctl, BC_ERR_LIMIT, "request too large");
			c->state = C_DONE;
		}
		return;
	}
	n = recv(c->ctl, tmp, sizeof(tmp), MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(c->ctl);	/* the client exited; the job may go on */
		c->ctl = -1;
	}
}

static void
add_conn(struct mux *m, int fd, int64_t now)
{
	struct mconn *c;

	if (m->nc >= MUX_MAX_CONNS) {
		ctl_err(fd, BC_ERR_BUSY, "ssh helper: too many connections");
		close(fd);
		return;
	}
	set_nonblock(fd);
	c = xcalloc(1, sizeof(*c));
	c->ctl = fd;
	c->data = -1;
	c->state = C_READING;
	c->last_io = now;
	m->c[m->nc++] = c;
}

/* Relay what can move now, until nothing does; then the requests that
 * wait for a session, again; then forget the connections that are done. */
static void
mux_work(struct mux *m, int64_t now)
{
	size_t i;
	int prog;

	do {
		prog = 0;
		for (i = 0; i < m->nc; i++)
			if (m->c[i]->state == C_RUNNING)
				prog |= conn_pump(m, m->c[i], now);
		for (i = 0; i < m->nmc;) {
			size_t before = m->nmc;

			prog |= mchan_pump(m, m->mc[i], now);
			if (m->nmc == before)
				i++;
		}
	} while (prog);
	/* requests waiting for a session: again, now that jobs ran */
	for (i = 0; i < m->nc; i++)
		if (m->c[i]->state == C_WAITING) {
			if (m->c[i]->ctl < 0)
				m->c[i]->state = C_DONE;
			else
				conn_start(m, m->c[i], now);
		}
	for (i = 0; i < m->nc;)
		if (m->c[i]->state == C_DONE)
			conn_free(m, i);
		else
			i++;
}

/* Sessions and mux channels without a job for idle_sec go. */
static void
mux_idle(struct mux *m, int64_t now, int idle_sec)
{
	size_t i;

	close_idle_sessions(m, now, idle_sec, 0);
	for (i = 0; i < m->nmc;) {
		if (m->mc[i]->mux.ns == 0 && now - m->mc[i]->idle_since >
		    (int64_t)idle_sec * 1000) {
			mchan_free(m, m->mc[i], 1);
			continue;
		}
		i++;
	}
}

/* A control connection (tag: its index in m->c) has a request's bytes,
 * or its client left. */
static void
on_ctl(void *arg, const struct bc_evloop_ev *e)
{
	struct mux *m = arg;
	struct mconn *c;

	if (e->tag >= m->nc)	/* connections go only between waits */
		return;
	c = m->c[e->tag];
	if (c->ctl >= 0 && c->ctl == e->fd)
		conn_read_ctl(m, c, bc_now_ms());
}

/* A client of this user connects. */
static void
on_accept(void *arg, const struct bc_evloop_ev *e)
{
	struct mux *m = arg;
	uid_t peer;
	int fd;

	if (!(e->revents & POLLIN) || (fd = accept(e->fd, NULL, NULL)) < 0)
		return;
	if (bc_osdep_peer_uid(fd, &peer) == 0 && peer == getuid())
		add_conn(m, fd, bc_now_ms());
	else
		close(fd);
}

/* What the loop waits for: a session's socket when libssh2 has something
 * to read or send; the relayed sockets when their bytes can move (the
 * pumps move them, whatever woke the loop); the control connections, in
 * their order, then the listener: those two are handled here. */
static void
mux_watch(struct mux *m, struct bc_evloop *ev, int listen_fd)
{
	size_t i, k;

	bc_evloop_begin(ev);
	for (i = 0; i < m->nc; i++) {
		struct mconn *c = m->c[i];
		short events = POLLIN;

		if (c->ctl >= 0)
			bc_evloop_add_tag(ev, c->ctl, POLLIN, on_ctl, m, i);
		if (c->state != C_RUNNING)
			continue;
		bc_evloop_add(ev, c->data, (short)((!c->client_eof &&
		    c->up_len < sizeof(c->up) ? POLLIN : 0) |
		    (c->down_len > c->down_off ? POLLOUT : 0)), NULL, NULL);
		if (libssh2_session_block_directions(
		    bc_ssh_sess_handle(c->sess->ss)) &
		    LIBSSH2_SESSION_BLOCK_OUTBOUND)
			events |= POLLOUT;
		bc_evloop_add(ev, bc_ssh_sess_fd(c->sess->ss), events, NULL,
		    NULL);
	}
	for (i = 0; i < m->nmc; i++) {
		struct mchan *mc = m->mc[i];
		const uint8_t *op;
		short events = POLLIN;

		if ((libssh2_session_block_directions(
		    bc_ssh_sess_handle(mc->ss)) &
		    LIBSSH2_SESSION_BLOCK_OUTBOUND) ||
		    bc_mux_out(&mc->mux, &op) > 0)
			events |= POLLOUT;
		bc_evloop_add(ev, bc_ssh_sess_fd(mc->ss), events, NULL, NULL);
		for (k = 0; k < mc->mux.ns; k++) {
			short sev = bc_mux_events(&mc->mux, mc->mux.s[k]);

			if (sev != 0)
				bc_evloop_add(ev, mc->mux.s[k]->fd, sev, NULL,
				    NULL);
		}
	}
	if (listen_fd >= 0)
		bc_evloop_add(ev, listen_fd, POLLIN, on_accept, m);
	bc_evloop_timeout(ev, m->nc > 0 ? 250 : 1000);
	for (i = 0; i < m->nc; i++)
		if (m->c[i]->state == C_WAITING)
			bc_evloop_timeout(ev, 5);	/* the session may be
							 * free */
}

void
bc_sshmux_run(int listen_fd, int client_fd, const struct bc_sshmux_opts *o)
{
	int idle_sec = o->idle_sec;
	struct mux m;
	struct bc_evloop ev;
	int64_t last_busy = bc_now_ms();
	size_t i;

	memset(&m, 0, sizeof(m));
	m.reuse_wait_ms = o->reuse_wait_ms;
	(void)libssh2_init(0);
	signal(SIGPIPE, SIG_IGN);
	bc_evloop_init(&ev);
	if (client_fd >= 0)
		add_conn(&m, client_fd, last_busy);
	for (;;) {
		int64_t now = bc_now_ms();

		mux_work(&m, now);
		if (m.nc > 0)
			last_busy = now;
		if (listen_fd < 0 && m.nc == 0)
			break;
		if (listen_fd >= 0 && m.nc == 0 &&
		    now - last_busy >= (int64_t)idle_sec * 1000)
			break;
		mux_idle(&m, now, idle_sec);
		mux_watch(&m, &ev, listen_fd);
		if (bc_evloop_run_once(&ev) < 0)
			break;
	}
	for (i = m.nc; i > 0; i--)
		conn_free(&m, i - 1);
	close_idle_sessions(&m, bc_now_ms(), 0, 1);
	while (m.nmc > 0)
		mchan_free(&m, m.mc[0], 1);
	for (i = 0; i < m.nnomux; i++)
		free(m.nomux[i]);
	bc_evloop_free(&ev);
	bc_ssh_tunnels_wait(2000);	/* jump hosts' sessions, closing */
	libssh2_exit();
}

/* The shared helper: lock, bind $dir/helper.sock, serve until idle. */
int
bc_sshmux_serve_dir(const char *dir, const struct bc_sshmux_opts *o)
{
	char *lockp = xasprintf("%s/helper.lock", dir);
	char *sockp = xasprintf("%s/helper.sock", dir);
	struct sockaddr_un sa;
	struct flock fl;
	int lk, ls, rc = 0;

	lk = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lk < 0) {
		rc = 1;
		goto out;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(lk, F_SETLK, &fl) != 0)
		goto out;	/* another helper is running */
	if (strlen(sockp) >= sizeof(sa.sun_path)) {
		rc = 1;
		goto out;
	}
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sockp, strlen(sockp) + 1);
	(void)unlink(sockp);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sockp, 0600) != 0 || listen(ls, 128) != 0) {
		rc = 1;
		goto out;
	}
	set_nonblock(ls);
	bc_debug("ssh helper %ld: listening on %s", (long)getpid(), sockp);
	bc_sshmux_run(ls, -1, o);
	(void)unlink(sockp);
	close(ls);
	bc_debug("ssh helper %ld: idle, exiting", (long)getpid());
out:
	if (lk >= 0)
		close(lk);
	free(lockp);
	free(sockp);
	return rc;
}

