/*
 * sshmux.c - SSH session reuse: a per-user helper process that holds
 * libssh2 sessions open across jobs, and the client side that asks it for
 * a channel.
 *
 * The helper listens on $DIR/ssh/helper.sock (directory 0700, owner
 * checked by the client).  A client sends one request (the resolved
 * target as "key value" lines, sshconf/ssh.c) and gets back "OK\n" with
 * one end of a socketpair attached (SCM_RIGHTS), or "ERR code message\n".
 * The helper relays bytes between that socketpair and a channel running
 * the remote command, and when the channel ends writes
 * "EXIT status signal stderr\n" (or "LOST message\n") on the request
 * connection, which the client reads only to explain a failure.
 *
 * One session carries one channel at a time: libssh2's transport keeps a
 * single pending outgoing packet per session, so channels sharing a
 * session cannot be driven independently in non-blocking mode.  The
 * helper therefore keeps a small pool of sessions per target (as many as
 * there were concurrent jobs) and reuses idle ones; the handshake and
 * authentication are paid once per pool slot, not per job.  Opening a
 * session is done blocking (bounded by the connect timeout); relaying is
 * non-blocking with one poll() loop.  The helper exits after
 * BOLTCC_SSH_IDLE seconds (default 120) without a job.
 *
 * If the helper cannot run (no state dir, socket path too long), the
 * client forks a private helper for the one job: same code, no reuse.
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
#include "common/io.h"
#include "common/log.h"
#include "common/util.h"
#include "client/ssh.h"

extern char *bc_ssh_g_statedir;
extern int bc_ssh_g_idle;
extern char *bc_ssh_g_helper_log;

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0	/* macOS: SIGPIPE is ignored by boltcc and the helper */
#endif

#define MUX_MAX_CONNS 256
#define MUX_MAX_SESSIONS 64
#define MUX_BUF 65536
#define MUX_DRAIN_MS 15000	/* remote must end this long after the
				 * client left */
#define MUX_IO_TIMEOUT_MS (600 * 1000)

struct msess {
	struct bc_ssh_sess *ss;
	char *key;
	int busy;
	int64_t idle_since;
};

enum { C_READING, C_RUNNING, C_DONE };

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
};

struct mux {
	struct mconn *c[MUX_MAX_CONNS];
	size_t nc;
	struct msess *s[MUX_MAX_SESSIONS];
	size_t ns;
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
		ssize_t w = send(fd, s, n, MSG_DONTWAIT | MSG_NOSIGNAL);

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

/* Move bytes; returns 1 if anything happened. */
static int
conn_pump(struct mux *m, struct mconn *c, int64_t now)
{
	LIBSSH2_CHANNEL *ch = c->ch;
	int prog = 0;
	ssize_t n;

	if (!c->client_eof && c->up_len < sizeof(c->up)) {
		n = read(c->data, c->up + c->up_len, sizeof(c->up) - c->up_len);
		if (n > 0) {
			c->up_len += (size_t)n;
			prog = 1;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR &&
		    errno != EWOULDBLOCK)) {
			c->client_eof = 1;
			c->client_gone_at = now;
			prog = 1;
		}
	}
	if (c->up_len > 0) {
		n = libssh2_channel_write(ch, (const char *)c->up, c->up_len);
		if (n > 0) {
			memmove(c->up, c->up + n, c->up_len - (size_t)n);
			c->up_len -= (size_t)n;
			prog = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			conn_fail(m, c, "channel write failed (connection "
			    "lost?)");
			return 1;
		}
	}
	if (c->client_eof && c->up_len == 0 && !c->sent_eof) {
		int r = libssh2_channel_send_eof(ch);

		if (r != LIBSSH2_ERROR_EAGAIN) {
			c->sent_eof = 1;
			prog = 1;
		}
	}
	if (c->down_off == c->down_len)
		c->down_off = c->down_len = 0;
	if (c->down_len < sizeof(c->down)) {
		n = libssh2_channel_read(ch, (char *)c->down + c->down_len,
		    sizeof(c->down) - c->down_len);
		if (n > 0) {
			c->down_len += (size_t)n;
			prog = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			conn_fail(m, c, "channel read failed (connection "
			    "lost?)");
			return 1;
		}
	}
	{
		char tmp[4096];

		n = libssh2_channel_read_stderr(ch, tmp, sizeof(tmp));
		if (n > 0) {
			size_t k = (size_t)n;

			if (k > sizeof(c->serr) - c->serr_len)
				k = sizeof(c->serr) - c->serr_len;
			memcpy(c->serr + c->serr_len, tmp, k);
			c->serr_len += k;
			prog = 1;
		}
	}
	if (c->down_len > c->down_off) {
		if (c->client_eof && c->shut_wr) {
			c->down_off = c->down_len;	/* nobody to read it */
		} else {
			n = send(c->data, c->down + c->down_off,
			    c->down_len - c->down_off,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				c->down_off += (size_t)n;
				prog = 1;
			} else if (n < 0 && errno != EAGAIN &&
			    errno != EINTR && errno != EWOULDBLOCK) {
				/* the client went away: discard */
				c->down_off = c->down_len;
				c->client_eof = 1;
				c->shut_wr = 1;
				if (c->client_gone_at == 0)
					c->client_gone_at = now;
			}
		}
	}
	if (prog)
		c->last_io = now;
	if (libssh2_channel_eof(ch) && c->down_off == c->down_len) {
		if (!c->shut_wr) {
			(void)shutdown(c->data, SHUT_WR);
			c->shut_wr = 1;
			prog = 1;
		}
		if (!c->closing) {
			int r = libssh2_channel_close(ch);

			if (r == 0)
				c->closing = 1;
			else if (r != LIBSSH2_ERROR_EAGAIN) {
				conn_fail(m, c, "channel close failed");
				return 1;
			}
		}
		if (c->closing) {
			int r = libssh2_channel_wait_closed(ch);

			if (r == 0) {
				conn_finish(m, c);
				return 1;
			}
			if (r != LIBSSH2_ERROR_EAGAIN) {
				conn_fail(m, c, "channel close failed");
				return 1;
			}
		}
	}
	if (c->client_eof && c->client_gone_at > 0 &&
	    now - c->client_gone_at > MUX_DRAIN_MS) {
		conn_fail(m, c, "remote command did not end after the client "
		    "left");
		return 1;
	}
	if (now - c->last_io > MUX_IO_TIMEOUT_MS) {
		conn_fail(m, c, "no data for too long");
		return 1;
	}
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
		w = sendmsg(ctl, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == 3 ? BC_OK : BC_ERR_IO;
}

/* A complete request: find or open a session, open the channel. */
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
	for (attempt = 0; attempt < 2; attempt++) {
		s = NULL;
		for (i = 0; attempt == 0 && i < m->ns; i++)
			if (!m->s[i]->busy && strcmp(m->s[i]->key, key) == 0) {
				s = m->s[i];
				break;
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
			bc_debug("ssh helper: new session to %s@%s:%d (%zu open)",
			    t.user, t.hostname, t.port, m->ns);
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

void
bc_sshmux_run(int listen_fd, int client_fd, int idle_sec)
{
	struct mux m;
	struct pollfd *pfd;
	int64_t last_busy = bc_now_ms();
	size_t i;

	memset(&m, 0, sizeof(m));
	(void)libssh2_init(0);
	signal(SIGPIPE, SIG_IGN);
	pfd = xcalloc(1 + 3 * MUX_MAX_CONNS, sizeof(*pfd));
	if (client_fd >= 0)
		add_conn(&m, client_fd, last_busy);
	for (;;) {
		int64_t now = bc_now_ms();
		size_t np = 0, li = (size_t)-1;
		int prog, timeout;

		do {
			prog = 0;
			for (i = 0; i < m.nc; i++)
				if (m.c[i]->state == C_RUNNING)
					prog |= conn_pump(&m, m.c[i], now);
		} while (prog);
		for (i = 0; i < m.nc;)
			if (m.c[i]->state == C_DONE)
				conn_free(&m, i);
			else
				i++;
		if (m.nc > 0)
			last_busy = now;
		if (listen_fd < 0 && m.nc == 0)
			break;
		if (listen_fd >= 0 && m.nc == 0 &&
		    now - last_busy >= (int64_t)idle_sec * 1000)
			break;
		close_idle_sessions(&m, now, idle_sec, 0);

		if (listen_fd >= 0) {
			li = np;
			pfd[np].fd = listen_fd;
			pfd[np].events = POLLIN;
			np++;
		}
		for (i = 0; i < m.nc; i++) {
			struct mconn *c = m.c[i];

			if (c->ctl >= 0) {
				pfd[np].fd = c->ctl;
				pfd[np].events = POLLIN;
				np++;
			}
			if (c->state != C_RUNNING)
				continue;
			pfd[np].fd = c->data;
			pfd[np].events = (short)((!c->client_eof &&
			    c->up_len < sizeof(c->up) ? POLLIN : 0) |
			    (c->down_len > c->down_off ? POLLOUT : 0));
			np++;
			pfd[np].fd = bc_ssh_sess_fd(c->sess->ss);
			pfd[np].events = POLLIN;
			if (libssh2_session_block_directions(
			    bc_ssh_sess_handle(c->sess->ss)) &
			    LIBSSH2_SESSION_BLOCK_OUTBOUND)
				pfd[np].events |= POLLOUT;
			np++;
		}
		for (i = 0; i < np; i++)
			pfd[i].revents = 0;
		timeout = m.nc > 0 ? 250 : 1000;
		if (poll(pfd, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		now = bc_now_ms();
		/* control connections (requests, clients leaving) */
		for (i = 0; i < m.nc; i++) {
			struct mconn *c = m.c[i];
			size_t k;

			if (c->ctl < 0)
				continue;
			for (k = 0; k < np; k++)
				if (pfd[k].fd == c->ctl && pfd[k].revents != 0) {
					conn_read_ctl(&m, c, now);
					break;
				}
		}
		if (li != (size_t)-1 && (pfd[li].revents & POLLIN)) {
			int fd = accept(listen_fd, NULL, NULL);

			if (fd >= 0) {
				uid_t ok = 0;
#ifdef SO_PEERCRED
				struct ucred uc;
				socklen_t ul = sizeof(uc);

				ok = getsockopt(fd, SOL_SOCKET, SO_PEERCRED,
				    &uc, &ul) == 0 && uc.uid == getuid();
#else
				uid_t eu;
				gid_t eg;

				ok = getpeereid(fd, &eu, &eg) == 0 &&
				    eu == getuid();
#endif
				if (ok)
					add_conn(&m, fd, now);
				else
					close(fd);
			}
		}
	}
	for (i = m.nc; i > 0; i--)
		conn_free(&m, i - 1);
	close_idle_sessions(&m, bc_now_ms(), 0, 1);
	free(pfd);
	libssh2_exit();
}

/* --------------------------------------------------------------------- */
/* client side */

struct pending {
	const struct bc_host *h;
	int ctl;
	char *command;
	char *label;
};
static struct pending g_pend[16];

static void
pending_set(const struct bc_host *h, int ctl, const struct bc_ssh_target *t)
{
	size_t i, slot = 0;

	for (i = 0; i < 16; i++)
		if (g_pend[i].h == h || g_pend[i].h == NULL) {
			slot = i;
			break;
		}
	if (i == 16)
		slot = 0;
	if (g_pend[slot].h != NULL) {
		if (g_pend[slot].ctl >= 0)
			close(g_pend[slot].ctl);
		free(g_pend[slot].command);
		free(g_pend[slot].label);
	}
	g_pend[slot].h = h;
	g_pend[slot].ctl = ctl;
	g_pend[slot].command = xstrdup(t->command);
	g_pend[slot].label = xasprintf("%s@%s", t->user, t->alias);
}

static void
close_fds_from(int lo, int keep1, int keep2)
{
	long max = sysconf(_SC_OPEN_MAX);
	int fd;

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lo; fd < (int)max; fd++)
		if (fd != keep1 && fd != keep2)
			(void)close(fd);
}

static void
child_stdio(void)
{
	int nul = open("/dev/null", O_RDWR);

	if (nul >= 0) {
		(void)dup2(nul, 0);
		(void)dup2(nul, 1);
		(void)dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	if (bc_ssh_g_helper_log != NULL) {
		bc_log_init("boltcc-ssh", BC_LOG_DEBUG);
		(void)bc_log_open(bc_ssh_g_helper_log, NULL);
	} else
		bc_log_silence();
}

/* The shared helper: lock, bind, serve until idle. */
static void
helper_main(const char *dir)
{
	char *lockp = xasprintf("%s/helper.lock", dir);
	char *sockp = xasprintf("%s/helper.sock", dir);
	struct sockaddr_un sa;
	struct flock fl;
	int lk, ls;

	close_fds_from(3, -1, -1);
	child_stdio();
	lk = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lk < 0)
		_exit(1);
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(lk, F_SETLK, &fl) != 0)
		_exit(0);	/* another helper is running */
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sockp, strlen(sockp) + 1);
	(void)unlink(sockp);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sockp, 0600) != 0 || listen(ls, 128) != 0)
		_exit(1);
	set_nonblock(ls);
	bc_debug("ssh helper %ld: listening on %s", (long)getpid(), sockp);
	bc_sshmux_run(ls, -1, bc_ssh_g_idle);
	(void)unlink(sockp);
	bc_debug("ssh helper %ld: idle, exiting", (long)getpid());
	_exit(0);
}

/* Fork twice so the helper is nobody's child; wait for the first. */
static int
spawn(const char *dir, int ctl_child, int ctl_parent)
{
	pid_t pid = fork(), p2;
	int st;

	if (pid < 0)
		return BC_ERR_IO;
	if (pid == 0) {
		(void)setsid();
		p2 = fork();
		if (p2 != 0)
			_exit(p2 < 0 ? 1 : 0);
		signal(SIGPIPE, SIG_IGN);
		if (dir != NULL)
			helper_main(dir);
		close(ctl_parent);
		close_fds_from(3, ctl_child, -1);
		child_stdio();
		bc_sshmux_run(-1, ctl_child, 0);
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return BC_OK;
}

static int
helper_dir(char *out, size_t n)
{
	struct stat st;
	char e[BC_ERRLEN];
	int k;

	if (bc_ssh_g_statedir == NULL)
		return BC_ERR_NOENT;
	k = snprintf(out, n, "%s/ssh", bc_ssh_g_statedir);
	if (k < 0 || (size_t)k >= n)
		return BC_ERR_LIMIT;
	if (bc_mkdir_p(out, 0700, e) != BC_OK)
		return BC_ERR_IO;
	if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid())
		return BC_ERR_DENIED;
	if ((st.st_mode & 077) != 0 && chmod(out, 0700) != 0)
		return BC_ERR_DENIED;
	return BC_OK;
}

static int
connect_unix(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/* A control connection: the shared helper (started if needed), else a
 * private one. */
static int
helper_connect(int allow_shared, int *shared)
{
	char dir[3072], sock[3200];
	int sv[2], fd, i;

	*shared = 0;
	if (allow_shared && helper_dir(dir, sizeof(dir)) == BC_OK &&
	    (size_t)snprintf(sock, sizeof(sock), "%s/helper.sock", dir) <
	    sizeof(sock) && strlen(sock) < sizeof(((struct sockaddr_un *)0)->
	    sun_path)) {
		fd = connect_unix(sock);
		if (fd >= 0) {
			*shared = 1;
			return fd;
		}
		if (spawn(dir, -1, -1) == BC_OK) {
			for (i = 0; i < 200; i++) {
				struct timespec ts = { 0, 5 * 1000 * 1000 };

				fd = connect_unix(sock);
				if (fd >= 0) {
					*shared = 1;
					return fd;
				}
				nanosleep(&ts, NULL);
			}
		}
		bc_debug("ssh: no shared helper at %s; using a private one",
		    sock);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	if (spawn(NULL, sv[1], sv[0]) != BC_OK) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	close(sv[1]);
	(void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	return sv[0];
}

/* Read one line (and maybe an fd) from ctl within deadline. */
static int
read_line(int ctl, char *line, size_t n, int *fd, int64_t deadline)
{
	size_t o = 0;

	for (;;) {
		struct pollfd p;
		struct msghdr mh;
		struct iovec iov;
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} u;
		struct cmsghdr *cm;
		char ch;
		ssize_t r;
		int64_t left = deadline - bc_now_ms();

		if (left <= 0)
			return BC_ERR_TIMEOUT;
		p.fd = ctl;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = &ch;
		iov.iov_len = 1;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.b;
		mh.msg_controllen = sizeof(u.b);
		r = recvmsg(ctl, &mh, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return BC_ERR_EOF;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
		    cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS && fd != NULL) {
				if (*fd >= 0)
					close(*fd);
				memcpy(fd, CMSG_DATA(cm), sizeof(int));
			}
		if (ch == '\n') {
			line[o] = '\0';
			return BC_OK;
		}
		if (o + 1 < n)
			line[o++] = ch;
	}
}

int
bc_ssh_connect_host(const struct bc_host *h, int timeout_ms, int *fd_out,
    char *err)
{
	struct bc_ssh_target t;
	char line[BC_ERRLEN + 64];
	char *req;
	int r, ctl, shared, dfd, attempt;

	*fd_out = -1;
	if (h->kind == BC_HOST_TCP)
		return bc_io_connect_tcp(h->name != NULL ? h->name : "localhost",
		    h->port, timeout_ms, fd_out, err);
	if (h->kind != BC_HOST_SSH)
		return bc_seterr(err, BC_ERR_NOTSUP, "host %s: not a remote "
		    "host", h->spec);
	r = bc_ssh_resolve(h, timeout_ms, &t, err);
	if (r != BC_OK)
		return r;
	{
		char *body = bc_ssh_target_encode(&t);

		req = xasprintf("BCSSH 1\n%s\n", body);
		free(body);
	}
	r = BC_ERR_IO;
	for (attempt = 0; attempt < 2; attempt++) {
		struct bc_io io;
		long long code;

		dfd = -1;
		ctl = helper_connect(1, &shared);
		if (ctl < 0) {
			r = bc_seterr(err, BC_ERR_IO, "ssh: cannot start the "
			    "ssh helper: %s", strerror(errno));
			break;
		}
		bc_io_init(&io, ctl, ctl, timeout_ms * 3 + 2000);
		r = bc_io_write_full(&io, req, strlen(req), err);
		if (r == BC_OK)
			r = read_line(ctl, line, sizeof(line), &dfd,
			    bc_now_ms() + (int64_t)t.timeout_ms * 4 + 2000);
		if ((r == BC_ERR_EOF || r == BC_ERR_IO) && shared &&
		    attempt == 0) {
			/* the helper was exiting: once more, a fresh one */
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			close(ctl);
			if (dfd >= 0)
				close(dfd);
			nanosleep(&ts, NULL);
			continue;
		}
		if (r != BC_OK) {
			close(ctl);
			if (dfd >= 0)
				close(dfd);
			bc_seterr(err, r, "ssh: no answer from the ssh helper "
			    "for %s (%s)", h->spec, bc_strerror(r));
			break;
		}
		if (strcmp(line, "OK") == 0 && dfd >= 0) {
			(void)fcntl(dfd, F_SETFD, FD_CLOEXEC);
			pending_set(h, ctl, &t);
			*fd_out = dfd;
			r = BC_OK;
			break;
		}
		close(ctl);
		if (dfd >= 0)
			close(dfd);
		if (strncmp(line, "ERR ", 4) == 0) {
			char *sp = strchr(line + 4, ' ');

			if (sp != NULL)
				*sp = '\0';
			r = bc_parse_int(line + 4, 1, 100, &code) == BC_OK ?
			    -(int)code : BC_ERR_IO;
			bc_seterr(err, r, "%s", sp != NULL ? sp + 1 :
			    "ssh helper error");
		} else
			r = bc_seterr(err, BC_ERR_PROTO, "ssh: bad answer "
			    "from the ssh helper");
		break;
	}
	free(req);
	bc_ssh_target_free(&t);
	return r;
}

int
bc_ssh_explain(const struct bc_host *h, char *err)
{
	char line[BC_SSH_MAX_STDERR * 2 + 64];
	struct pending *p = NULL;
	long long st;
	int r, ret = 0;
	size_t i;

	if (h == NULL || h->kind != BC_HOST_SSH)
		return 0;
	for (i = 0; i < 16; i++)
		if (g_pend[i].h == h && g_pend[i].ctl >= 0)
			p = &g_pend[i];
	if (p == NULL)
		return 0;
	r = read_line(p->ctl, line, sizeof(line), NULL, bc_now_ms() + 3000);
	if (r != BC_OK) {
		ret = 0;
	} else if (strncmp(line, "LOST ", 5) == 0) {
		bc_seterr(err, BC_ERR_IO, "ssh: %s: connection lost: %s",
		    p->label, line + 5);
		ret = 1;
	} else if (strncmp(line, "EXIT ", 5) == 0) {
		char *a = line + 5, *b = strchr(a, ' '), *c;

		if (b != NULL) {
			*b++ = '\0';
			c = strchr(b, ' ');
			if (c != NULL)
				*c++ = '\0';
			if (bc_parse_int(a, -1000000, 1000000, &st) != BC_OK)
				st = -1;
			if (strcmp(b, "-") != 0) {
				bc_seterr(err, BC_ERR_IO, "ssh: remote command "
				    "`%s` on %s killed by signal %s: %s",
				    p->command, p->label, b,
				    c != NULL ? c : "");
				ret = 1;
			} else if (st == 126 || st == 127) {
				bc_seterr(err, BC_ERR_NOENT, "ssh: remote "
				    "command `%s` could not be run on %s (exit "
				    "%lld: missing or not executable): %s",
				    p->command, p->label, st,
				    c != NULL ? c : "");
				ret = 2;
			} else if (st != 0) {
				bc_seterr(err, BC_ERR_IO, "ssh: remote command "
				    "`%s` on %s exited with status %lld: %s",
				    p->command, p->label, st,
				    c != NULL ? c : "");
				ret = 1;
			}
		}
	}
	close(p->ctl);
	p->ctl = -1;
	return ret;
}
