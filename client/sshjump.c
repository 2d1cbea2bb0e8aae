/*
 * sshjump.c - ProxyJump in the SSH helper (boltcc-ssh).  A host behind a
 * jump host is reached over a direct-tcpip channel of the jump host's
 * session: a thread per hop relays the channel's bytes to one end of a
 * socketpair, and the next session (handshake, host key check,
 * authentication: ssh.c) runs on the other end as on a TCP socket.  A
 * chain is the same step repeated, each session riding on the tunnel of
 * the one before it.
 *
 * The thread owns the jump host's session and its channel.  It ends,
 * closing both, when the next session closes its end of the socketpair
 * (bc_ssh_sess_close), or when the channel ends or fails (the next
 * session then sees EOF and fails as a lost connection).  Closing a
 * session so tears down its whole chain, hop by hop.  libssh2 sessions
 * are independent: each is only ever used by one thread at a time (the
 * jump host's by its relay thread once the tunnel is open).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#include "common/err.h"
#include "common/io.h"
#include "common/log.h"
#include "common/osdep.h"
#include "common/util.h"
#include "client/ssh.h"

#define TUNNEL_BUF 32768
#define TUNNEL_POLL_MS 1000

struct tunnel {
	struct bc_ssh_sess *ss;		/* the jump host's session */
	LIBSSH2_CHANNEL *ch;		/* direct-tcpip to the next hop */
	int fd;				/* our end of the socketpair */
	char label[300];
	uint8_t up[TUNNEL_BUF];		/* socketpair -> channel */
	size_t up_len;
	uint8_t down[TUNNEL_BUF];	/* channel -> socketpair */
	size_t down_off, down_len;
	int fd_eof;
};

static atomic_int tunnels_live;

static int
would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* socketpair -> channel.  -1: the tunnel is over. */
static int
tunnel_up(struct tunnel *tn)
{
	int prog = 0;
	ssize_t n;

	if (!tn->fd_eof && tn->up_len < sizeof(tn->up)) {
		n = recv(tn->fd, tn->up + tn->up_len,
		    sizeof(tn->up) - tn->up_len, MSG_DONTWAIT);
		if (n > 0) {
			tn->up_len += (size_t)n;
			prog = 1;
		} else if (n == 0 || !would_block()) {
			tn->fd_eof = 1;
			prog = 1;
		}
	}
	if (tn->up_len > 0) {
		n = libssh2_channel_write(tn->ch, (const char *)tn->up,
		    tn->up_len);
		if (n > 0) {
			memmove(tn->up, tn->up + n, tn->up_len - (size_t)n);
			tn->up_len -= (size_t)n;
			prog = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			return -1;
	}
	if (tn->fd_eof && tn->up_len == 0)
		return -1;	/* the next session was closed */
	return prog;
}

/* channel -> socketpair.  -1: the tunnel is over. */
static int
tunnel_down(struct tunnel *tn)
{
	int prog = 0;
	ssize_t n;

	if (tn->down_off == tn->down_len)
		tn->down_off = tn->down_len = 0;
	if (tn->down_len < sizeof(tn->down)) {
		n = libssh2_channel_read(tn->ch, (char *)tn->down +
		    tn->down_len, sizeof(tn->down) - tn->down_len);
		if (n > 0) {
			tn->down_len += (size_t)n;
			prog = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			return -1;
	}
	if (tn->down_len > tn->down_off) {
		n = send(tn->fd, tn->down + tn->down_off,
		    tn->down_len - tn->down_off, MSG_DONTWAIT | BC_MSG_NOSIGNAL);
		if (n > 0) {
			tn->down_off += (size_t)n;
			prog = 1;
		} else if (n < 0 && !would_block())
			return -1;
	}
	if (libssh2_channel_eof(tn->ch) && tn->down_off == tn->down_len)
		return -1;	/* the next hop closed the connection */
	return prog;
}

static void
tunnel_wait(const struct tunnel *tn)
{
	LIBSSH2_SESSION *s = bc_ssh_sess_handle(tn->ss);
	struct pollfd p[2];

	p[0].fd = tn->fd;
	p[0].events = (short)((!tn->fd_eof && tn->up_len < sizeof(tn->up) ?
	    POLLIN : 0) | (tn->down_len > tn->down_off ? POLLOUT : 0));
	p[1].fd = bc_ssh_sess_fd(tn->ss);
	/* not readable for us while the next session does not take what
	 * we have (the window stops the jump host from sending much more);
	 * else poll would not wait */
	p[1].events = (short)(tn->down_len < sizeof(tn->down) ||
	    tn->up_len > 0 ? POLLIN : 0);
	if (libssh2_session_block_directions(s) &
	    LIBSSH2_SESSION_BLOCK_OUTBOUND)
		p[1].events |= POLLOUT;
	p[0].revents = p[1].revents = 0;
	(void)poll(p, 2, TUNNEL_POLL_MS);
}

static void *
tunnel_main(void *arg)
{
	struct tunnel *tn = arg;
	LIBSSH2_SESSION *s = bc_ssh_sess_handle(tn->ss);
	int r;

	libssh2_session_set_blocking(s, 0);
	for (;;) {
		r = tunnel_up(tn);
		if (r >= 0) {
			int d = tunnel_down(tn);

			r = d < 0 ? -1 : (r | d);
		}
		if (r < 0)
			break;
		if (r == 0)
			tunnel_wait(tn);
	}
	close(tn->fd);	/* the next session sees EOF, if still open */
	libssh2_session_set_blocking(s, 1);
	libssh2_session_set_timeout(s, 500);
	(void)libssh2_channel_free(tn->ch);
	bc_ssh_sess_close(tn->ss, 1);
	bc_debug("ssh helper: tunnel %s closed", tn->label);
	free(tn);
	atomic_fetch_sub(&tunnels_live, 1);
	return NULL;
}

int
bc_ssh_tunnel(struct bc_ssh_sess *via, const char *via_label,
    const struct bc_ssh_target *to, int *fd_out, char *err)
{
	LIBSSH2_SESSION *s = bc_ssh_sess_handle(via);
	LIBSSH2_CHANNEL *ch;
	struct tunnel *tn;
	pthread_attr_t at;
	pthread_t th;
	char *m = NULL;
	int sv[2], r;

	*fd_out = -1;
	libssh2_session_set_blocking(s, 1);
	libssh2_session_set_timeout(s, to->timeout_ms);
	ch = libssh2_channel_direct_tcpip_ex(s, to->hostname, to->port,
	    "127.0.0.1", 22);
	if (ch == NULL) {
		(void)libssh2_session_last_error(s, &m, NULL, 0);
		bc_seterr(err, BC_ERR_IO, "ssh: jump host %s cannot open a "
		    "connection to %s:%d (for %s): %s", via_label,
		    to->hostname, to->port, to->alias, m != NULL ? m : "?");
		bc_ssh_sess_close(via, 1);
		return BC_ERR_IO;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		r = bc_seterr(err, BC_ERR_IO, "ssh: socketpair: %s",
		    strerror(errno));
		goto fail_ch;
	}
	(void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(sv[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	tn = xcalloc(1, sizeof(*tn));
	tn->ss = via;
	tn->ch = ch;
	tn->fd = sv[0];
	snprintf(tn->label, sizeof(tn->label), "%s -> %s:%d", via_label,
	    to->hostname, to->port);
	bc_debug("ssh helper: tunnel %s open", tn->label);
	atomic_fetch_add(&tunnels_live, 1);
	if (pthread_attr_init(&at) != 0 ||
	    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) != 0 ||
	    pthread_create(&th, &at, tunnel_main, tn) != 0) {
		atomic_fetch_sub(&tunnels_live, 1);
		free(tn);
		close(sv[0]);
		close(sv[1]);
		r = bc_seterr(err, BC_ERR_IO, "ssh: cannot start the relay "
		    "thread for jump host %s", via_label);
		goto fail_ch;
	}
	(void)pthread_attr_destroy(&at);
	*fd_out = sv[1];
	return BC_OK;
fail_ch:
	libssh2_session_set_timeout(s, 500);
	(void)libssh2_channel_free(ch);
	bc_ssh_sess_close(via, 1);
	return r;
}

void
bc_ssh_tunnels_wait(int ms)
{
	int64_t end = bc_now_ms() + ms;

	while (atomic_load(&tunnels_live) > 0 && bc_now_ms() < end) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}
