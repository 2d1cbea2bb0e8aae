/*
 * delayrelay.c - test helper for tests/cluster: a TCP relay that adds a
 * one-way delay in each direction, because the test machines have tc's
 * rate limiter (tbf) but no netem.
 *
 *   delayrelay --delay-us N [--delay-file FILE] [--pid-file FILE]
 *              --map LADDR:LPORT=TADDR:TPORT [--map ...]
 *
 * Every --map listens on LADDR:LPORT (IPv4) and forwards each connection
 * to TADDR:TPORT.  Each chunk read from one side is stamped with the time
 * it arrived and written to the other side only once `delay` has passed,
 * so a request/reply exchange through the relay takes 2 x delay longer.
 * EOF travels the same way (shutdown(SHUT_WR) after the delay); a reset or
 * an error on one side resets the other at once.  SIGHUP re-reads the
 * delay (in microseconds) from --delay-file; it applies to chunks read
 * from then on.  SIGTERM/SIGINT exit.
 *
 * This is a split TCP connection: the relay acknowledges the bytes itself,
 * so TCP's own round-trip (slow start, ACK clock) does not see the delay.
 * Request/reply latency is honest; bulk-transfer ramp-up is optimistic.
 * Not part of the product: built by `make check` for the cluster tests.
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RELAY_MAX_MAPS 16
#define RELAY_MAX_CONNS 1024
#define RELAY_CHUNK 65536
#define RELAY_QUEUE_CAP (8u * 1024 * 1024)	/* bytes held per direction */
#define RELAY_MAX_DELAY_US 10000000LL

struct chunk {
	struct chunk *next;
	int64_t due_ns;
	size_t len, off;
	int eof;		/* marker: shut the write side down */
	unsigned char data[];
};

struct dir {
	int src, dst;		/* read from src, write to dst */
	struct chunk *head, *tail;
	size_t queued;
	int src_eof;		/* read EOF, marker queued */
	int done;		/* marker delivered */
};

struct conn {
	int used;
	int fd[2];		/* 0: accepted side, 1: target side */
	struct dir d[2];	/* d[0]: fd0 -> fd1, d[1]: fd1 -> fd0 */
};

struct map {
	int lfd;
	struct sockaddr_in to;
};

static volatile sig_atomic_t got_hup, got_term;
static int64_t delay_ns;
static struct conn conns[RELAY_MAX_CONNS];
static struct map maps[RELAY_MAX_MAPS];
static int nmaps;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
parse_us(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno != 0 || end == s || *end != '\0' || v < 0 ||
	    v > RELAY_MAX_DELAY_US)
		return -1;
	*out = (int64_t)v * 1000;
	return 0;
}

static void
read_delay_file(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd;
	int64_t v;

	if (path == NULL)
		return;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (parse_us(buf, &v) == 0)
		delay_ns = v;
	else
		fprintf(stderr, "delayrelay: bad delay in %s\n", path);
}

static int
parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;
	size_t hl;

	if (colon == NULL)
		return -1;
	hl = (size_t)(colon - s);
	if (hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port <= 0 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int
add_map(const char *spec)
{
	char lspec[128];
	const char *eq = strchr(spec, '=');
	struct sockaddr_in la;
	int one = 1, fd;
	size_t ll;

	if (eq == NULL || nmaps >= RELAY_MAX_MAPS)
		return -1;
	ll = (size_t)(eq - spec);
	if (ll >= sizeof(lspec))
		return -1;
	memcpy(lspec, spec, ll);
	lspec[ll] = '\0';
	if (parse_addr(lspec, &la) < 0 || parse_addr(eq + 1,
	    &maps[nmaps].to) < 0)
		return -1;
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&la, sizeof(la)) < 0 ||
	    listen(fd, 128) < 0 || set_nonblock(fd) < 0) {
		fprintf(stderr, "delayrelay: listen %s: %s\n", lspec,
		    strerror(errno));
		(void)close(fd);
		return -1;
	}
	maps[nmaps++].lfd = fd;
	return 0;
}

/* Close fd so the peer sees a reset, not an orderly EOF. */
static void
close_reset(int fd)
{
	struct linger lg;

	if (fd < 0)
		return;
	lg.l_onoff = 1;
	lg.l_linger = 0;
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	(void)close(fd);
}

static void
conn_free(struct conn *c, int reset)
{
	struct chunk *k, *n;
	int i;

	for (i = 0; i < 2; i++) {
		for (k = c->d[i].head; k != NULL; k = n) {
			n = k->next;
			free(k);
		}
		if (reset)
			close_reset(c->fd[i]);
		else
			(void)close(c->fd[i]);
	}
	memset(c, 0, sizeof(*c));
}

static void
conn_new(int afd, const struct sockaddr_in *to)
{
	struct conn *c = NULL;
	int i, tfd, one = 1;

	for (i = 0; i < RELAY_MAX_CONNS; i++)
		if (!conns[i].used) {
			c = &conns[i];
			break;
		}
	if (c == NULL) {
		close_reset(afd);
		return;
	}
	/* The target is in this namespace: a blocking connect is quick. */
	tfd = socket(AF_INET, SOCK_STREAM, 0);
	if (tfd < 0 || connect(tfd, (const struct sockaddr *)to,
	    sizeof(*to)) < 0) {
		if (tfd >= 0)
			(void)close(tfd);
		close_reset(afd);	/* like a refused connection */
		return;
	}
	(void)fcntl(tfd, F_SETFD, FD_CLOEXEC);
	(void)fcntl(afd, F_SETFD, FD_CLOEXEC);
	if (set_nonblock(afd) < 0 || set_nonblock(tfd) < 0) {
		close_reset(afd);
		(void)close(tfd);
		return;
	}
	(void)setsockopt(afd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(tfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(c, 0, sizeof(*c));
	c->used = 1;
	c->fd[0] = afd;
	c->fd[1] = tfd;
	c->d[0].src = afd;
	c->d[0].dst = tfd;
	c->d[1].src = tfd;
	c->d[1].dst = afd;
}

static void
push(struct dir *d, const unsigned char *p, size_t n, int eof)
{
	struct chunk *k = malloc(sizeof(*k) + n);

	if (k == NULL) {
		perror("delayrelay: malloc");
		exit(1);
	}
	k->next = NULL;
	k->due_ns = now_ns() + delay_ns;
	k->len = n;
	k->off = 0;
	k->eof = eof;
	if (n > 0)
		memcpy(k->data, p, n);
	if (d->tail != NULL)
		d->tail->next = k;
	else
		d->head = k;
	d->tail = k;
	d->queued += n;
}

/* Read what is there: 0 ok, -1 the connection must be reset. */
static int
dir_read(struct dir *d)
{
	unsigned char buf[RELAY_CHUNK];
	ssize_t n;

	n = read(d->src, buf, sizeof(buf));
	if (n > 0) {
		push(d, buf, (size_t)n, 0);
		return 0;
	}
	if (n == 0) {
		d->src_eof = 1;
		push(d, NULL, 0, 1);
		return 0;
	}
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	return -1;
}

/* Write every due chunk: 0 ok, -1 reset. */
static int
dir_write(struct dir *d, int64_t now)
{
	struct chunk *k;
	ssize_t n;

	while ((k = d->head) != NULL && k->due_ns <= now) {
		if (k->eof) {
			(void)shutdown(d->dst, SHUT_WR);
			d->done = 1;
		} else {
			n = write(d->dst, k->data + k->off, k->len - k->off);
			if (n < 0) {
				if (errno == EINTR || errno == EAGAIN ||
				    errno == EWOULDBLOCK)
					return 0;
				return -1;
			}
			k->off += (size_t)n;
			d->queued -= (size_t)n;
			if (k->off < k->len)
				return 0;
		}
		d->head = k->next;
		if (d->head == NULL)
			d->tail = NULL;
		free(k);
	}
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: delayrelay --delay-us N [--delay-file FILE] "
	    "[--pid-file FILE] --map LADDR:LPORT=TADDR:TPORT...\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static struct pollfd pfd[RELAY_MAX_MAPS + 2 * RELAY_MAX_CONNS];
	const char *delay_file = NULL, *pid_file = NULL;
	struct sigaction sa;
	int i, j, n, np;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--delay-us") == 0 && i + 1 < argc) {
			if (parse_us(argv[++i], &delay_ns) < 0)
				usage();
		} else if (strcmp(argv[i], "--delay-file") == 0 &&
		    i + 1 < argc) {
			delay_file = argv[++i];
		} else if (strcmp(argv[i], "--pid-file") == 0 &&
		    i + 1 < argc) {
			pid_file = argv[++i];
		} else if (strcmp(argv[i], "--map") == 0 && i + 1 < argc) {
			if (add_map(argv[++i]) < 0) {
				fprintf(stderr, "delayrelay: bad or unusable "
				    "--map %s\n", argv[i]);
				return 1;
			}
		} else {
			usage();
		}
	}
	if (nmaps == 0)
		usage();
	read_delay_file(delay_file);
#ifdef __linux__
	/* Default timer slack (50 us) would swamp a 40 us delay. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	if (pid_file != NULL) {
		FILE *f = fopen(pid_file, "w");

		if (f == NULL || fprintf(f, "%ld\n", (long)getpid()) < 0 ||
		    fclose(f) != 0) {
			perror("delayrelay: pid file");
			return 1;
		}
	}

	while (!got_term) {
		int64_t now = now_ns(), next = -1;
		int cidx[2 * RELAY_MAX_CONNS];

		if (got_hup) {
			got_hup = 0;
			read_delay_file(delay_file);
		}
		np = 0;
		for (i = 0; i < nmaps; i++) {
			pfd[np].fd = maps[i].lfd;
			pfd[np].events = POLLIN;
			pfd[np].revents = 0;
			np++;
		}
		for (i = 0; i < RELAY_MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (!c->used)
				continue;
			for (j = 0; j < 2; j++) {
				short ev = 0;
				struct dir *in = &c->d[j];	/* reads fd[j] */
				struct dir *out = &c->d[1 - j]; /* writes fd[j] */

				if (!in->src_eof && in->queued < RELAY_QUEUE_CAP)
					ev |= POLLIN;
				if (out->head != NULL) {
					if (out->head->due_ns <= now)
						ev |= POLLOUT;
					else if (next < 0 ||
					    out->head->due_ns < next)
						next = out->head->due_ns;
				}
				/* Nothing wanted: leave the fd out, or a
				 * half-closed socket's POLLHUP would spin. */
				pfd[np].fd = ev != 0 ? c->fd[j] : -1;
				pfd[np].events = ev;
				pfd[np].revents = 0;
				cidx[np - nmaps] = i * 2 + j;
				np++;
			}
		}
		{
			struct timespec ts, *tp = NULL;

			if (next >= 0) {
				int64_t w = next - now;

				if (w < 0)
					w = 0;
				ts.tv_sec = (time_t)(w / 1000000000LL);
				ts.tv_nsec = (long)(w % 1000000000LL);
				tp = &ts;
			}
#ifdef __linux__
			n = ppoll(pfd, (nfds_t)np, tp, NULL);
#else
			n = poll(pfd, (nfds_t)np, tp == NULL ? -1 :
			    (int)(tp->tv_sec * 1000 + (tp->tv_nsec + 999999) /
			    1000000));
#endif
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("delayrelay: poll");
			return 1;
		}
		for (i = 0; i < nmaps; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			for (;;) {
				int afd = accept(maps[i].lfd, NULL, NULL);

				if (afd < 0)
					break;
				conn_new(afd, &maps[i].to);
			}
		}
		for (i = nmaps; i < np; i++) {
			struct conn *c = &conns[cidx[i - nmaps] / 2];
			int side = cidx[i - nmaps] % 2;

			if (!c->used || pfd[i].revents == 0)
				continue;
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				if (!c->d[side].src_eof &&
				    dir_read(&c->d[side]) < 0) {
					conn_free(c, 1);
					continue;
				}
			}
		}
		/* Deliver everything due, whether or not poll said so. */
		now = now_ns();
		for (i = 0; i < RELAY_MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (!c->used)
				continue;
			if (dir_write(&c->d[0], now) < 0 ||
			    dir_write(&c->d[1], now) < 0) {
				conn_free(c, 1);
				continue;
			}
			if (c->d[0].done && c->d[1].done)
				conn_free(c, 0);
		}
	}
	for (i = 0; i < RELAY_MAX_CONNS; i++)
		if (conns[i].used)
			conn_free(&conns[i], 0);
	return 0;
}
