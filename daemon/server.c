/*
 * server.c - listener, worker processes and the stats endpoint (see
 * server.h).  One event loop (common/evloop.h, poll() underneath):
 * bc_server_run registers what it waits for (watch), waits, and handles
 * what is ready; every fd it watches is non-blocking, and nothing in the
 * loop waits on a peer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/evloop.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/osdep.h"
#include "common/util.h"
#include "acl.h"
#include "activate.h"
#include "admin.h"
#include "ident.h"
#include "job.h"
#include "keeper.h"
#include "scratch.h"
#include "server.h"
#include "stats.h"
#include "fasthit.h"
#include "intake.h"

#define KEEPER_SYNC_MS 1000	/* the stats page waits for the keeper */
#define MAX_STATS_CONNS	16
#define STATS_TIMEOUT_MS 2000
#define KILL_WAIT_MS	3000
#define ADMIN_TIMEOUT_MS (30 * 60 * 1000)	/* a clear of a huge cache */

struct worker {
	pid_t pid;
	int in_slot;
	int done;	/* reported DONE: exiting, no longer counts as load */
};

struct stats_conn {
	int fd;
	char req[BC_MAX_HTTP_REQUEST];
	size_t len;
	struct bc_buf out;
	size_t off;
	int writing;
	int64_t deadline;
	uint32_t sync_seq;	/* waiting for the keeper's answer, 0 none */
	int admin_ok;		/* the peer may send admin requests */
	int admin_fd;		/* an admin child's answer (admin.h), -1 none */
	char peer[NI_MAXHOST + NI_MAXSERV + 8];
};


static int srv_sig_wr = -1;
static volatile sig_atomic_t sig_term, sig_int, sig_hup;

static void
srv_on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig == SIGTERM)
		sig_term = 1;
	else if (sig == SIGINT)
		sig_int = 1;
	else if (sig == SIGHUP)
		sig_hup = 1;
	if (srv_sig_wr >= 0)
		(void)write(srv_sig_wr, &c, 1);
	errno = saved;
}

static void
set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return;
	(void)fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

static void
set_cloexec(int fd)
{
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int
bind_one(struct bc_listeners *ls, const char *addr, int port, int is_stats,
    int optional, char *err)
{
	struct addrinfo hints, *ai = NULL;
	char portstr[16];
	int fd, one = 1, r;
	const char *a = addr;
	char host[128];

	if (ls->n >= BC_MAX_LISTENERS)
		return bc_seterr(err, BC_ERR_LIMIT, "too many --listen");
	/* accept [v6] too */
	if (addr[0] == '[') {
		size_t n = strlen(addr);

		if (n < 3 || addr[n - 1] != ']' || n - 2 >= sizeof(host))
			return bc_seterr(err, BC_ERR_INVAL,
			    "bad listen address '%s'", addr);
		memcpy(host, addr + 1, n - 2);
		host[n - 2] = '\0';
		a = host;
	}
	snprintf(portstr, sizeof(portstr), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((r = getaddrinfo(a, portstr, &hints, &ai)) != 0)
		return bc_seterr(err, BC_ERR_INVAL,
		    "bad listen address '%s': %s", addr, gai_strerror(r));
	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0) {
		r = errno;
		freeaddrinfo(ai);
		if (optional) {
			bc_warn("not listening on %s: %s", addr, strerror(r));
			return BC_OK;
		}
		return bc_seterr(err, BC_ERR_IO, "socket for %s: %s", addr,
		    strerror(r));
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
#ifdef IPV6_V6ONLY
	if (ai->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
#endif
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(fd, 1024) != 0) {
		r = errno;
		close(fd);
		freeaddrinfo(ai);
		if (optional && (r == EADDRNOTAVAIL || r == EAFNOSUPPORT)) {
			bc_warn("not listening on %s: %s", addr, strerror(r));
			return BC_OK;
		}
		return bc_seterr(err, BC_ERR_IO, "cannot listen on %s port %d: "
		    "%s", addr, port, strerror(r));
	}
	freeaddrinfo(ai);
	set_nonblock(fd, 1);
	set_cloexec(fd);
	if (!is_stats)
		bc_osdep_defer_accept(fd);
	ls->v[ls->n].fd = fd;
	ls->v[ls->n].is_stats = is_stats;
	snprintf(ls->v[ls->n].label, sizeof(ls->v[ls->n].label),
	    "%s port %d", addr, port);
	ls->n++;
	bc_info("listening on %s%s", ls->v[ls->n - 1].label,
	    is_stats ? " (stats)" : "");
	return BC_OK;
}

int
bc_server_bind(const struct bc_server_conf *conf, struct bc_listeners *ls,
    char *err)
{
	static const char *const all[] = { "0.0.0.0", "::" };
	struct bc_activated act[BC_ACTIVATE_MAX];
	int pass, r, have[2] = { 0, 0 };
	size_t i, nact = 0;

	/* systemd / launchd sockets replace binding our own (activate.h). */
	r = bc_activate_sockets(conf->activation, conf->stats_port, act,
	    BC_ACTIVATE_MAX, &nact, err);
	if (r != BC_OK)
		return r;
	for (i = 0; i < nact && ls->n < BC_MAX_LISTENERS; i++) {
		ls->v[ls->n].fd = act[i].fd;
		ls->v[ls->n].is_stats = act[i].is_stats;
		if (!act[i].is_stats)
			bc_osdep_defer_accept(act[i].fd);
		snprintf(ls->v[ls->n].label, sizeof(ls->v[ls->n].label),
		    "activated fd %d", act[i].fd);
		ls->n++;
		have[act[i].is_stats ? 1 : 0] = 1;
	}
	for (pass = 0; pass < 2; pass++) {
		int port = pass == 0 ? conf->port : conf->stats_port;

		if (port == 0 || have[pass])
			continue;
		if (conf->listen.n == 0) {
			for (i = 0; i < 2; i++)
				if ((r = bind_one(ls, all[i], port, pass,
				    i == 1, err)) != BC_OK)
					return r;
		} else
			for (i = 0; i < conf->listen.n; i++)
				if ((r = bind_one(ls, conf->listen.v[i],
				    port, pass, 0, err)) != BC_OK)
					return r;
	}
	if (ls->n == 0)
		return bc_seterr(err, BC_ERR_IO, "no listening socket");
	return BC_OK;
}

void
bc_listeners_close(struct bc_listeners *ls)
{
	int i;

	for (i = 0; i < ls->n; i++)
		if (ls->v[i].fd >= 0) {
			close(ls->v[i].fd);
			ls->v[i].fd = -1;
		}
}

static void
peer_label(const struct sockaddr *sa, socklen_t len, char *out, size_t outlen)
{
	char h[NI_MAXHOST], s[NI_MAXSERV];

	if (getnameinfo(sa, len, h, sizeof(h), s, sizeof(s),
	    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(out, outlen, "?");
	else if (sa->sa_family == AF_INET6)
		snprintf(out, outlen, "[%s]:%s", h, s);
	else
		snprintf(out, outlen, "%s:%s", h, s);
}

/* Slot lock file: private, unlinked, shared by workers through the fd;
 * in the scratch dir (--tmp-dir, TMPDIR, ...: scratch.h). */
static int
open_slot_file(char *err)
{
	const char *t = bc_scratch_dir();
	char *path;
	int fd;

	path = xasprintf("%s/boltccd-slots-XXXXXX", t);
	fd = mkstemp(path);
	if (fd < 0) {
		int e = errno;

		free(path);
		return bc_seterr(err, BC_ERR_IO, "slot file in %s: %s", t,
		    strerror(e));
	}
	(void)unlink(path);
	free(path);
	set_cloexec(fd);
	return fd;
}

struct server {
	const struct bc_server_conf *conf;
	struct bc_listeners *ls;	/* bc_server_bind's */
	struct bc_job_conf jc;
	struct bc_stats st;
	struct worker *w;
	int nw;
	int wcap;
	int sig_rd;
	int ev_rd;
	struct stats_conn sc[MAX_STATS_CONNS];
	int stopping;		/* 0 run, 1 grace, 2 SIGTERM sent, 3 SIGKILL */
	int64_t stop_deadline;
	int64_t last_overload_log;
	uint64_t overload_suppressed;
	const char *tmpdir;
	int sweep_due;		/* a worker died from a signal */
	int64_t next_sweep;
	struct bc_locdir locdir;	/* where owned keys were compiled */
	int keeper_fd;		/* records for the cache keeper, -1 none */
	int keeper_ack;		/* its SYNC answers (non-blocking), -1 none */
	uint32_t keeper_seq;	/* the last SYNC sent */
	struct bc_intake in;	/* connections until their request is whole */
	struct bc_fasthit fast;	/* the parent's own answers */
	struct bc_fasthit_answer answer;
	struct bc_intake_limits ilim;
	int64_t last_tick;	/* the last 1 s statistics tick */
	struct bc_evloop loop;
};

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = srv_on_signal;
	sa.sa_flags = SA_RESTART;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	(void)sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	(void)sigaction(SIGPIPE, &sa, NULL);
}

static void
worker_main(struct server *s, size_t mine)
{
	const struct bc_intake_conn *c = &s->in.v[mine];
	int fd = c->fd;
	const char *peer = c->peer;
	size_t k;
	int i;

	/* the other connections are the parent's, not this worker's */
	for (k = 0; k < s->in.n; k++)
		if (k != mine)
			close(s->in.v[k].fd);
	for (i = 0; i < s->ls->n; i++)
		if (s->ls->v[i].fd >= 0)
			close(s->ls->v[i].fd);
	for (i = 0; i < MAX_STATS_CONNS; i++)
		if (s->sc[i].fd >= 0)
			close(s->sc[i].fd);
	close(s->sig_rd);
	close(srv_sig_wr);
	srv_sig_wr = -1;
	close(s->ev_rd);
	if (s->keeper_ack >= 0)
		close(s->keeper_ack);
	set_nonblock(fd, 0);
	bc_job_serve_from(&s->jc, fd, fd, peer, bc_buf_data(&c->in),
	    bc_buf_len(&c->in));
	close(fd);
	_exit(0);
}

static int
active_workers(const struct server *s)
{
	int i, n = 0;

	for (i = 0; i < s->nw; i++)
		n += !s->w[i].done;
	return n;
}

/* A key's location changed (the parent's LOCATE answer or a worker's):
 * the directory now says so, and the keeper keeps it for the next start
 * (a full pipe loses the record: it is a hint). */
static void
apply_location(struct server *s, const char *key, const char *host)
{
	struct bc_keeper_rec rec;

	if (bc_locdir_put(&s->locdir, key, host) != 0)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.kind = BC_KEEP_LOC;
	snprintf(rec.u.loc.key, sizeof(rec.u.loc.key), "%s", key);
	snprintf(rec.u.loc.host, sizeof(rec.u.loc.host), "%s", host);
	(void)bc_keeper_send(s->keeper_fd, &rec);
}

/* The address of a peer label ("a.b.c.d:port", "[v6]:port"), for the
 * intake's bound per address. */
static void
peer_addr(const char *peer, char *out, size_t outlen)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon != NULL ? (size_t)(colon - peer) : strlen(peer);

	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

/* A connection comes in: it waits in the intake until its request is
 * whole (intake.h), costing a descriptor and no worker. */
static void
accept_jobs(struct server *s, int lfd)
{
	int n;

	for (n = 0; n < 64; n++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char peer[NI_MAXHOST + NI_MAXSERV + 8], addr[NI_MAXHOST + 8];
		unsigned dropped = 0;
		int fd;

		fd = accept(lfd, (struct sockaddr *)&ss, &sl);
		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE) &&
			    bc_intake_drop_oldest(&s->in, "out of descriptors "
			    "(RLIMIT_NOFILE)")) {
				s->st.intake_dropped++;
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				bc_warn("accept: %s", strerror(errno));
			return;
		}
		set_cloexec(fd);
		peer_label((struct sockaddr *)&ss, sl, peer, sizeof(peer));
		if (!bc_acl_match(&s->conf->acl, (struct sockaddr *)&ss, sl)) {
			s->st.rej_acl++;
			bc_warn("connection from %s denied by --allow", peer);
			close(fd);
			continue;
		}
		s->st.tcp_accept++;
		/* A client whose machine or link went away stops answering:
		 * reading its request (here) or its reply (the worker) fails
		 * within seconds (keepalive, and unacknowledged data), not
		 * after --request-timeout or --io-timeout
		 * (tests/cluster/t_liveness.sh). */
		if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
			bc_osdep_tcp_liveness(fd, BC_TCP_KEEPIDLE_S,
			    BC_TCP_KEEPINTVL_S, BC_TCP_KEEPCNT,
			    BC_TCP_USER_TIMEOUT_MS);
		peer_addr(peer, addr, sizeof(addr));
		bc_intake_add(&s->in, fd, peer, addr, bc_now_ms(), &dropped);
		s->st.intake_dropped += dropped;
	}
}

/* A worker for intake entry i (its request whole): 0, or -1 if none
 * could be started (the entry is gone then). */
static int
start_worker(struct server *s, size_t i)
{
	struct bc_intake_conn *c = &s->in.v[i];
	char peer[BC_INTAKE_PEER_LEN];
	pid_t pid;

	snprintf(peer, sizeof(peer), "%s", c->peer);
	pid = fork();
	if (pid < 0) {
		bc_error("fork: %s", strerror(errno));
		s->st.other++;
		bc_intake_remove(&s->in, i, 0);
		return -1;
	}
	if (pid == 0)
		worker_main(s, i);
	bc_intake_remove(&s->in, i, 0);	/* the worker has it now */
	if (s->nw == s->wcap) {
		s->wcap *= 2;
		s->w = xrealloc(s->w, (size_t)s->wcap, sizeof(*s->w));
	}
	s->w[s->nw].pid = pid;
	s->w[s->nw].in_slot = 0;
	s->w[s->nw].done = 0;
	s->nw++;
	bc_stats_job_begin(&s->st, (int32_t)pid, peer, bc_now_ms());
	s->st.workers = s->nw;
	bc_debug("worker %ld for %s", (long)pid, peer);
	return 0;
}

/*
 * The parent's own answer to intake entry i, if it has one (a lookup's
 * miss, a cache hit: fasthit.h): 1 answered (the entry sends it or is
 * gone), 0 for a worker.
 */
static int
answer_here(struct server *s, size_t i)
{
	struct bc_intake_conn *c = &s->in.v[i];
	struct bc_fasthit_answer *a = &s->answer;

	if (s->in.pending >= BC_MAX_FASTHIT_PENDING)
		return 0;	/* clients that do not read: workers wait */
	switch (bc_fasthit_answer(&s->fast, &s->jc, c->peer,
	    bc_buf_data(&c->in), bc_buf_len(&c->in), a)) {
	case BC_FAST_ABSENT:
		if (a->rec.key[0] != '\0')
			apply_location(s, a->rec.key, a->rec.host);
		s->st.hello++;
		s->st.lookup_fast++;
		break;
	case BC_FAST_HIT:
		bc_stats_event(&s->st, &a->ev, bc_now_ms());
		s->st.hit_fast++;
		break;
	default:
		return 0;
	}
	bc_intake_reply(&s->in, i, &a->out, bc_now_ms());
	bc_buf_init(&a->out, BC_MAX_FASTHIT_REPLY);
	return 1;
}

/*
 * Whole requests to workers, oldest first, while there is room for one
 * (--jobs + --queue); the rest wait here, read, costing no worker.  Most
 * of a farm's lookups miss, and an incremental build's jobs hit: those
 * are answered here, without a worker (fasthit.h).
 */
static void
dispatch_ready(struct server *s)
{
	size_t i;

	while (!s->stopping && (i = bc_intake_next_ready(&s->in)) !=
	    (size_t)-1) {
		if (answer_here(s, i))
			continue;
		if (active_workers(s) >= s->conf->jobs + s->conf->queue)
			break;
		(void)start_worker(s, i);
	}
	s->st.intake_reading = s->st.intake_waiting = 0;
	for (i = 0; i < s->in.n; i++) {
		if (s->in.v[i].ready)
			s->st.intake_waiting++;
		else if (!s->in.v[i].sending)
			s->st.intake_reading++;
	}
}

static struct worker *
find_worker(struct server *s, pid_t pid)
{
	int i;

	for (i = 0; i < s->nw; i++)
		if (s->w[i].pid == pid)
			return &s->w[i];
	return NULL;
}

static void
recount_running(struct server *s)
{
	int i, n = 0;

	for (i = 0; i < s->nw; i++)
		n += s->w[i].in_slot;
	s->st.running = n;
	s->st.workers = s->nw;
}

static void
drain_events(struct server *s)
{
	struct bc_job_event ev;
	ssize_t r;

	while ((r = read(s->ev_rd, &ev, sizeof(ev))) == (ssize_t)sizeof(ev)) {
		struct worker *w = find_worker(s, (pid_t)ev.pid);

		if (w != NULL && ev.kind == BC_EV_SLOT_START)
			w->in_slot = 1;
		else if (w != NULL && (ev.kind == BC_EV_SLOT_END ||
		    ev.kind == BC_EV_DONE))
			w->in_slot = 0;
		if (w != NULL && ev.kind == BC_EV_DONE)
			w->done = 1;
		if (ev.kind == BC_EV_LOCATION) {
			ev.key[sizeof(ev.key) - 1] = '\0';
			ev.loc[sizeof(ev.loc) - 1] = '\0';
			apply_location(s, ev.key, ev.loc);
			continue;
		}
		bc_stats_event(&s->st, &ev, bc_now_ms());
	}
	recount_running(s);
}

static void
reap(struct server *s)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		int i;

		for (i = 0; i < s->nw; i++)
			if (s->w[i].pid == pid) {
				s->w[i] = s->w[s->nw - 1];
				s->nw--;
				break;
			}
		bc_stats_job_end(&s->st, (int32_t)pid);
		if (WIFSIGNALED(st)) {
			bc_warn("worker %ld killed by signal %d", (long)pid,
			    WTERMSIG(st));
			s->sweep_due = 1;	/* its job dir stayed */
		}
	}
	recount_running(s);
}

/* Remove the job dirs of dead workers (this daemon's or an earlier one's)
 * from the scratch dir. */
static void
sweep_scratch(struct server *s, int64_t now)
{
	char err[BC_ERRLEN];
	unsigned n = 0;

	s->sweep_due = 0;
	s->next_sweep = now + BC_SCRATCH_SWEEP_MS;
	if (bc_scratch_sweep(bc_scratch_dir(), &n, err) != BC_OK)
		bc_warn("scratch sweep: %s", err);
	if (n > 0)
		bc_info("scratch sweep: removed %u job dir%s of dead workers "
		    "from %s", n, n == 1 ? "" : "s", bc_scratch_dir());
}

static void
stats_close(struct stats_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->admin_fd >= 0)
		close(c->admin_fd);
	c->admin_fd = -1;
	bc_buf_free(&c->out);
	c->len = 0;
	c->off = 0;
	c->writing = 0;
}

static void
accept_stats(struct server *s, int lfd)
{
	int n;

	for (n = 0; n < 16; n++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char peer[NI_MAXHOST + NI_MAXSERV + 8];
		int fd, i;

		fd = accept(lfd, (struct sockaddr *)&ss, &sl);
		if (fd < 0)
			return;
		if (!bc_acl_match(&s->conf->acl, (struct sockaddr *)&ss, sl) &&
		    !bc_acl_match(&s->conf->admin_allow,
		    (struct sockaddr *)&ss, sl)) {
			peer_label((struct sockaddr *)&ss, sl, peer,
			    sizeof(peer));
			bc_warn("stats connection from %s denied by --allow",
			    peer);
			close(fd);
			continue;
		}
		for (i = 0; i < MAX_STATS_CONNS && s->sc[i].fd >= 0; i++)
			;
		if (i == MAX_STATS_CONNS) {
			close(fd);
			continue;
		}
		set_nonblock(fd, 1);
		set_cloexec(fd);
		s->sc[i].fd = fd;
		s->sc[i].len = 0;
		s->sc[i].off = 0;
		s->sc[i].writing = 0;
		s->sc[i].sync_seq = 0;
		s->sc[i].admin_ok = bc_admin_peer_ok(&s->conf->admin_allow,
		    (struct sockaddr *)&ss, sl);
		peer_label((struct sockaddr *)&ss, sl, s->sc[i].peer,
		    sizeof(s->sc[i].peer));
		bc_buf_init(&s->sc[i].out, 256 * 1024);
		s->sc[i].deadline = bc_now_ms() + STATS_TIMEOUT_MS;
	}
}

static int
request_complete(const struct stats_conn *c)
{
	size_t i;

	for (i = 0; i + 1 < c->len; i++) {
		if (c->req[i] == '\n' && c->req[i + 1] == '\n')
			return 1;
		if (c->req[i] == '\n' && c->req[i + 1] == '\r' &&
		    i + 2 < c->len && c->req[i + 2] == '\n')
			return 1;
	}
	return c->len == sizeof(c->req);
}

/* The cache counters live in its index: read them for each page. */
static void
refresh_cache_stats(struct server *s)
{
	struct bc_cache *c;
	char e[BC_ERRLEN];

	s->st.cache_on = s->conf->cache_dir != NULL;
	if (!s->st.cache_on)
		return;
	if (bc_cache_open(s->conf->cache_dir, s->conf->cache_size, &c, e)
	    != BC_OK) {
		bc_warn("cache stats: %s", e);
		return;
	}
	if (bc_cache_stats(c, &s->st.cache, e) != BC_OK ||
	    bc_cache_baseline(c, &s->st.cache_base, e) != BC_OK)
		bc_warn("cache stats: %s", e);
	bc_cache_close(c);
}

static void
load_location(void *arg, const char *key, const char *host)
{
	(void)bc_locdir_put(arg, key, host);
}

/* Start-up: make index and blobs agree (a crash may have left either),
 * and read the key locations back into the directory. */
static void
reconcile_cache(const struct bc_server_conf *conf, struct bc_locdir *dir)
{
	struct bc_cache_check chk;
	struct bc_cache *c;
	char e[BC_ERRLEN];

	if (conf->cache_dir == NULL)
		return;
	if (bc_cache_open(conf->cache_dir, conf->cache_size, &c, e) != BC_OK) {
		bc_error("cache: %s", e);
		return;
	}
	if (bc_cache_loc_each(c, load_location, dir, e) != BC_OK)
		bc_error("cache: key locations: %s", e);
	if (bc_cache_operator_limit(c) > 0)
		bc_info("cache %s: size limit %llu bytes, set by an operator "
		    "(kept in the index; overrides --cache-size %llu; "
		    "boltccd --cache-admin limit 0 forgets it)",
		    conf->cache_dir,
		    (unsigned long long)bc_cache_operator_limit(c),
		    (unsigned long long)conf->cache_size);
	if (bc_cache_reconcile(c, 1, 0, &chk, e) != BC_OK)
		bc_error("cache: reconcile: %s", e);
	else
		bc_info("cache %s: %llu entries, %llu bytes (limit %llu); "
		    "removed %llu rows without blob, %llu blobs without row "
		    "(%llu of them indexed), %llu temp files, %llu bad sizes; "
		    "evicted %llu",
		    conf->cache_dir, (unsigned long long)chk.entries,
		    (unsigned long long)chk.bytes,
		    (unsigned long long)bc_cache_limit(c),
		    (unsigned long long)chk.orphan_rows,
		    (unsigned long long)chk.orphan_blobs,
		    (unsigned long long)chk.adopted,
		    (unsigned long long)chk.temp_files,
		    (unsigned long long)chk.bad_size,
		    (unsigned long long)chk.evicted);
	bc_cache_close(c);
}

/*
 * A small process that keeps one connection to the cache index open for
 * the daemon's lifetime and writes what the parent and the workers send
 * it (keeper.h): the workers leave their stores' rows to it, so a job
 * neither opens the index nor parses its schema.  Without a connection
 * that stays open, each worker opening the index would also be the first
 * (rebuilding the WAL index from the whole WAL) and the last (which
 * checkpoints).  The parent itself never holds a connection across fork,
 * as sqlite requires.  The keeper exits when every write end of its pipe
 * (the parent's and its workers') is closed.  Returns the pipe's write
 * end (non-blocking), *ack the read end of its answers; -1 if none.
 */
static int
start_cache_keeper(const struct bc_server_conf *conf, struct bc_listeners *ls,
    int *ack)
{
	int p[2], a[2];
	pid_t pid;

	*ack = -1;
	if (conf->cache_dir == NULL || pipe(p) != 0)
		return -1;
	if (pipe(a) != 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(a[0]);
		close(a[1]);
		return -1;
	}
	if (pid == 0) {
		struct bc_cache *c = NULL;
		char e[BC_ERRLEN];
		struct sigaction sa;

		close(p[1]);
		close(a[0]);
		set_nonblock(a[1], 1);	/* an answer nobody reads is dropped */
		bc_listeners_close(ls);
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = SIG_IGN;
		(void)sigaction(SIGINT, &sa, NULL);
		(void)sigaction(SIGHUP, &sa, NULL);
		sa.sa_handler = SIG_DFL;
		(void)sigaction(SIGTERM, &sa, NULL);	/* bc_keeper_run's own */
		(void)sigaction(SIGCHLD, &sa, NULL);
		srv_sig_wr = -1;
		if (bc_cache_open(conf->cache_dir, conf->cache_size, &c, e)
		    != BC_OK)
			_exit(1);
		bc_keeper_run(c, p[0], a[1]);
		bc_cache_close(c);
		_exit(0);
	}
	close(p[0]);
	close(a[1]);
	set_cloexec(p[1]);
	set_cloexec(a[0]);
	set_nonblock(p[1], 1);
	set_nonblock(a[0], 1);
	*ack = a[0];
	return p[1];
}

static void
stats_respond(struct server *s, struct stats_conn *c)
{
	struct bc_stats_sys sys;
	int64_t now = bc_now_ms();

	c->sync_seq = 0;
	bc_stats_sample_sys(&sys, &s->st, s->tmpdir);
	refresh_cache_stats(s);
	if (bc_stats_http_response(&s->st, &sys, s->conf->argv0,
	    PACKAGE_VERSION, c->req, c->len, now, &c->out) != BC_OK) {
		stats_close(c);
		return;
	}
	c->writing = 1;
	c->deadline = now + STATS_TIMEOUT_MS;
}

/* In an admin child: what it must not hold (as a worker). */
static void
admin_child_init(void *arg)
{
	struct server *s = arg;
	int i;

	bc_listeners_close(s->ls);
	for (i = 0; i < MAX_STATS_CONNS; i++)
		if (s->sc[i].fd >= 0)
			close(s->sc[i].fd);
	srv_sig_wr = -1;
}

/*
 * An admin request (admin.h): refused here, or the daemon's counters
 * zeroed here and the cache's work left to a child whose answer the
 * main loop relays (admin_io).  0 if the request is a stats page.
 */
static int
admin_request(struct server *s, struct stats_conn *c)
{
	struct bc_admin_req rq;
	int64_t now = bc_now_ms();

	bc_admin_parse(c->req, c->len, &rq);
	if (rq.op == BC_ADMIN_NONE)
		return 0;
	c->deadline = now + STATS_TIMEOUT_MS;
	if (rq.op == BC_ADMIN_BAD) {
		(void)bc_admin_error(rq.status, rq.why, &c->out);
	} else if (!c->admin_ok) {
		char why[96 + sizeof(c->peer)];	/* the whole label fits */

		snprintf(why, sizeof(why), "admin requests are accepted from "
		    "loopback and --admin-allow addresses only; %s is neither",
		    c->peer);
		bc_warn("admin request (%s) from %s refused: not loopback or "
		    "--admin-allow", bc_admin_op_name(rq.op), c->peer);
		(void)bc_admin_error(403, why, &c->out);
	} else {
		bc_info("admin request from %s: %s", c->peer,
		    bc_admin_op_name(rq.op));
		if (rq.op == BC_ADMIN_ZERO)
			bc_stats_zero(&s->st, (int64_t)time(NULL));
		if (rq.op == BC_ADMIN_ZERO && s->conf->cache_dir == NULL)
			(void)bc_admin_answer(200, "{\"op\":\"zero\"}",
			    &c->out);
		else if (bc_admin_spawn(&rq, s->conf->cache_dir,
		    s->conf->cache_size, admin_child_init, s, &c->admin_fd) < 0)
			(void)bc_admin_error(500, "cannot start the admin "
			    "process", &c->out);
		else {
			c->deadline = now + ADMIN_TIMEOUT_MS;
			return 1;
		}
	}
	c->writing = 1;
	return 1;
}

/* The admin child's answer: relayed to the peer once it is whole. */
static void
admin_io(struct stats_conn *c)
{
	for (;;) {
		uint8_t *w;
		ssize_t n;

		if (bc_buf_reserve(&c->out, 4096, &w) != BC_OK)
			n = 0;
		else
			n = read(c->admin_fd, w, 4096);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n > 0) {
			(void)bc_buf_commit(&c->out, (size_t)n);
			continue;
		}
		break;	/* EOF (the child is done) or an error */
	}
	close(c->admin_fd);
	c->admin_fd = -1;
	if (bc_buf_len(&c->out) == 0)
		(void)bc_admin_error(500, "the admin process died", &c->out);
	else {
		char *body = bc_io_http_body(&c->out);

		body[strcspn(body, "\n")] = '\0';
		bc_info("admin request from %s: HTTP %d %s", c->peer,
		    bc_io_http_status(&c->out), body);
		free(body);
	}
	c->writing = 1;
	c->off = 0;
	c->deadline = bc_now_ms() + STATS_TIMEOUT_MS;
}

/*
 * A stats request is in: first the keeper writes the rows of every store
 * sent so far (keeper.h), so that the counters include them; the answer
 * comes through the main loop (keeper_answered), or the page goes out
 * after KEEPER_SYNC_MS without it.
 */
static void
stats_request_done(struct server *s, struct stats_conn *c)
{
	uint32_t seq = s->keeper_seq + 1;

	if (admin_request(s, c))
		return;
	if (seq == 0)
		seq = 1;	/* 0 means "not waiting" */
	if (s->keeper_fd < 0 || s->keeper_ack < 0 ||
	    bc_keeper_sync(s->keeper_fd, seq) != 0) {
		stats_respond(s, c);
		return;
	}
	s->keeper_seq = seq;
	c->sync_seq = seq;
	c->deadline = bc_now_ms() + KEEPER_SYNC_MS;
}

/* The keeper's answers: pages waiting for them go out. */
static void
keeper_answered(struct server *s)
{
	uint32_t last = 0;
	int i, r = bc_keeper_acks(s->keeper_ack, &last);

	if (r < 0) {
		bc_warn("cache keeper: gone; stats pages no longer wait");
		close(s->keeper_ack);
		s->keeper_ack = -1;
	}
	for (i = 0; i < MAX_STATS_CONNS; i++) {
		struct stats_conn *c = &s->sc[i];

		if (c->fd >= 0 && c->sync_seq != 0 && (r < 0 ||
		    (r > 0 && BC_KEEPER_DONE(c->sync_seq, last))))
			stats_respond(s, c);
	}
}

static void
stats_io(struct server *s, struct stats_conn *c, short revents)
{
	if (c->admin_fd >= 0) {
		admin_io(c);
		return;
	}
	if (!c->writing && c->sync_seq == 0 &&
	    (revents & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t r = read(c->fd, c->req + c->len,
		    sizeof(c->req) - c->len);

		if (r > 0)
			c->len += (size_t)r;
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR) ||
		    request_complete(c))
			stats_request_done(s, c);
	}
	if (c->fd >= 0 && c->writing) {
		size_t left = bc_buf_len(&c->out) - c->off;
		ssize_t w = write(c->fd, bc_buf_data(&c->out) + c->off, left);

		if (w > 0)
			c->off += (size_t)w;
		if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
		    c->off == bc_buf_len(&c->out))
			stats_close(c);
	}
}

static void
begin_stop(struct server *s, const char *why)
{
	int i;

	if (s->stopping)
		return;
	s->stopping = 1;
	s->stop_deadline = bc_now_ms() + (int64_t)s->conf->grace_sec * 1000;
	bc_listeners_close(s->ls);
	if (s->in.n > 0)
		bc_info("%s: closing %zu connection(s) whose request was not "
		    "given to a worker", why, s->in.n);
	bc_intake_free(&s->in);
	for (i = 0; i < MAX_STATS_CONNS; i++)
		stats_close(&s->sc[i]);
	bc_info("%s: no longer accepting; waiting up to %d s for %d "
	    "worker(s)", why, s->conf->grace_sec, s->nw);
}

static void
signal_workers(struct server *s, int sig)
{
	int i;

	for (i = 0; i < s->nw; i++)
		(void)kill(s->w[i].pid, sig);
}

static void
handle_signals(struct server *s)
{
	char tmp[64];

	while (read(s->sig_rd, tmp, sizeof(tmp)) > 0)
		;
	if (sig_hup) {
		char e[BC_ERRLEN];

		sig_hup = 0;
		if (bc_log_reopen(e) != BC_OK)
			bc_error("SIGHUP: %s", e);
		else
			bc_info("SIGHUP: log reopened");
	}
	if (sig_term || sig_int) {
		int again = s->stopping != 0;

		begin_stop(s, sig_term ? "SIGTERM" : "SIGINT");
		if (again && s->stopping == 1 && (sig_int || sig_term) &&
		    s->nw > 0) {
			/* second signal: do not wait for the grace period */
			bc_info("second signal: stopping workers now");
			s->stop_deadline = bc_now_ms();
		}
		sig_term = sig_int = 0;
	}
}

static void
advance_stop(struct server *s, int64_t now)
{
	if (!s->stopping || s->nw == 0 || now < s->stop_deadline)
		return;
	if (s->stopping == 1) {
		bc_warn("grace period over: stopping %d worker(s)", s->nw);
		signal_workers(s, SIGTERM);
		s->stopping = 2;
		s->stop_deadline = now + KILL_WAIT_MS;
	} else if (s->stopping == 2) {
		bc_warn("killing %d worker(s)", s->nw);
		signal_workers(s, SIGKILL);
		s->stopping = 3;
		s->stop_deadline = now + KILL_WAIT_MS;
	}
}

/* The 1 s statistics tick, the scratch sweep, the steps of a stop. */
static void
housekeeping(struct server *s, int64_t now)
{
	if (now - s->last_tick >= 1000) {
		bc_stats_tick(&s->st, now);
		s->last_tick = now;
	}
	if (s->sweep_due || now >= s->next_sweep)
		sweep_scratch(s, now);
	advance_stop(s, now);
}

/* Stats connections past their deadline: one still writing, or waiting
 * for its admin child, is cut off; any other gets its page now (without
 * the keeper's answer, if it waited for that). */
static void
stats_deadlines(struct server *s, int64_t now)
{
	int i;

	for (i = 0; i < MAX_STATS_CONNS; i++) {
		struct stats_conn *c = &s->sc[i];

		if (c->fd < 0 || now < c->deadline)
			continue;
		if (c->writing || c->admin_fd >= 0) {
			stats_close(c);
			continue;
		}
		if (c->sync_seq != 0)
			bc_debug("cache keeper: no answer in %d ms; the "
			    "counters may lag", KEEPER_SYNC_MS);
		stats_respond(s, c);
	}
}

/*
 * The main loop's callbacks (evloop.h), each with the server as its
 * arg; a listener's, a stats connection's and an intake connection's tag
 * is its index in its table.
 */
static void
on_signal(void *arg, const struct bc_evloop_ev *e)
{
	(void)e;
	handle_signals(arg);
}

static void
on_keeper_ack(void *arg, const struct bc_evloop_ev *e)
{
	(void)e;
	keeper_answered(arg);
}

static void
on_listener(void *arg, const struct bc_evloop_ev *e)
{
	struct server *s = arg;

	if (s->stopping)
		return;		/* closed meanwhile */
	if (s->ls->v[e->tag].is_stats)
		accept_stats(s, e->fd);
	else
		accept_jobs(s, e->fd);
}

static void
on_stats_conn(void *arg, const struct bc_evloop_ev *e)
{
	struct server *s = arg;

	if (s->sc[e->tag].fd >= 0)
		stats_io(s, &s->sc[e->tag], e->revents);
}

/* An intake connection: its request's bytes come in, or the parent's
 * reply goes out.  Accepts may have dropped entries since the wait (the
 * last entry takes a removed one's place), hence the fd check. */
static void
on_intake(void *arg, const struct bc_evloop_ev *e)
{
	struct server *s = arg;
	size_t i = e->tag;

	if (s->stopping || i >= s->in.n || s->in.v[i].fd != e->fd)
		return;
	if (s->in.v[i].sending)
		(void)bc_intake_write(&s->in, i, bc_now_ms());
	else
		(void)bc_intake_read(&s->in, i, bc_now_ms());
}

/*
 * What the parent waits for, in the order it is handled: signals, the
 * workers' events (drained after every wait), listeners, stats
 * connections, the keeper's answers, then the intake's connections,
 * from the last to the first (a read that removes its entry moves the
 * last into its place).  It wakes for the 1 s tick, a stats
 * connection's deadline and the stop's next step.
 */
static void
watch(struct server *s)
{
	struct bc_evloop *ev = &s->loop;
	int i, waiting = 0;
	size_t j;

	bc_evloop_begin(ev);
	bc_evloop_timeout(ev, 1000);
	bc_evloop_add(ev, s->sig_rd, POLLIN, on_signal, s);
	bc_evloop_add(ev, s->ev_rd, POLLIN, NULL, NULL);
	for (i = 0; i < s->ls->n; i++)
		if (s->ls->v[i].fd >= 0)
			bc_evloop_add_tag(ev, s->ls->v[i].fd, POLLIN,
			    on_listener, s, (size_t)i);
	for (i = 0; i < MAX_STATS_CONNS; i++) {
		const struct stats_conn *c = &s->sc[i];

		if (c->fd < 0)
			continue;
		waiting += c->sync_seq != 0;
		bc_evloop_add_tag(ev, c->admin_fd >= 0 ? c->admin_fd : c->fd,
		    c->writing ? POLLOUT : c->sync_seq != 0 ? 0 : POLLIN,
		    on_stats_conn, s, (size_t)i);
		bc_evloop_deadline(ev, c->deadline + 1);
	}
	if (waiting > 0 && s->keeper_ack >= 0)
		bc_evloop_add(ev, s->keeper_ack, POLLIN, on_keeper_ack, s);
	for (j = s->in.n; j > 0; j--)
		if (!s->in.v[j - 1].ready)
			bc_evloop_add_tag(ev, s->in.v[j - 1].fd,
			    s->in.v[j - 1].sending ? POLLOUT : POLLIN,
			    on_intake, s, j - 1);
	if (s->stopping)
		bc_evloop_deadline(ev, s->stop_deadline);
}

/* The signals' and the workers' events' pipes, non-blocking and
 * close-on-exec: 0, or -1 (logged). */
static int
open_pipes(struct server *s)
{
	int sp[2], ep[2], i;

	if (pipe(sp) != 0 || pipe(ep) != 0) {
		bc_error("pipe: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		set_nonblock(sp[i], 1);
		set_cloexec(sp[i]);
		set_nonblock(ep[i], 1);
		set_cloexec(ep[i]);
	}
	s->sig_rd = sp[0];
	srv_sig_wr = sp[1];
	s->ev_rd = ep[0];
	s->jc.event_fd = ep[1];
	return 0;
}

/* Everything the loop needs, from the configuration: 0, or -1 (logged). */
static int
server_open(struct server *s, const struct bc_server_conf *conf,
    struct bc_listeners *ls)
{
	static struct bc_ident ident;
	char err[BC_ERRLEN];
	int i;

	memset(s, 0, sizeof(*s));
	s->conf = conf;
	s->ls = ls;
	s->tmpdir = bc_scratch_dir();
	for (i = 0; i < MAX_STATS_CONNS; i++)
		s->sc[i].fd = s->sc[i].admin_fd = -1;
	if (open_pipes(s) != 0)
		return -1;
	install_signals();

	s->jc.policy = &conf->policy;
	s->jc.jobs = conf->jobs;
	s->jc.io_timeout_ms = conf->io_timeout_sec * 1000;
	s->jc.request_timeout_ms = conf->request_timeout_sec * 1000;
	s->jc.job_timeout_ms = conf->job_timeout_sec * 1000;
	s->jc.version = PACKAGE_VERSION;
	s->jc.cache_dir = conf->cache_dir;
	s->jc.cache_max = conf->cache_size;
	bc_locdir_init(&s->locdir);
	s->jc.locdir = &s->locdir;
	reconcile_cache(conf, &s->locdir);
	s->keeper_fd = start_cache_keeper(conf, s->ls, &s->keeper_ack);
	s->jc.keeper_fd = s->keeper_fd;	/* the workers' stores go to it */
	s->jc.admin_allow = &conf->admin_allow;
	if ((s->jc.slot_fd = open_slot_file(err)) < 0) {
		bc_error("%s", err);
		bc_locdir_free(&s->locdir);
		return -1;
	}
	bc_intake_init(&s->in);
	bc_fasthit_init(&s->fast);
	bc_fasthit_answer_init(&s->answer);
	s->ilim.request_sec = conf->request_timeout_sec;
	s->ilim.request_ms = conf->request_timeout_sec * 1000;
	s->ilim.io_sec = conf->io_timeout_sec;
	s->ilim.io_ms = conf->io_timeout_sec * 1000;
	s->wcap = conf->jobs + conf->queue + 1;
	s->w = xcalloc((size_t)s->wcap, sizeof(*s->w));
	bc_stats_init(&s->st, conf->jobs, conf->queue, bc_now_ms());
	bc_ident_collect(&ident, &conf->policy);
	s->st.ident = &ident;
	s->last_tick = bc_now_ms();
	bc_evloop_init(&s->loop);
	return 0;
}

static void
server_close(struct server *s)
{
	int i;

	bc_listeners_close(s->ls);
	for (i = 0; i < MAX_STATS_CONNS; i++)
		stats_close(&s->sc[i]);
	close(s->jc.slot_fd);
	close(s->sig_rd);
	close(srv_sig_wr);
	srv_sig_wr = -1;
	close(s->ev_rd);
	close(s->jc.event_fd);
	if (s->keeper_fd >= 0)
		close(s->keeper_fd);
	if (s->keeper_ack >= 0)
		close(s->keeper_ack);
	bc_locdir_free(&s->locdir);
	bc_stats_free(&s->st);
	bc_intake_free(&s->in);
	bc_fasthit_answer_free(&s->answer);
	bc_fasthit_free(&s->fast);
	free(s->w);
	bc_evloop_free(&s->loop);
}

int
bc_server_run(const struct bc_server_conf *conf, struct bc_listeners *ls)
{
	struct server s;

	if (server_open(&s, conf, ls) != 0)
		return 1;
	bc_info("boltccd %s: %d compile slots, queue %d, %s", PACKAGE_VERSION,
	    conf->jobs, conf->queue, conf->stats_port ? "stats on" :
	    "stats off");
	bc_info("scratch dir %s (from %s)", bc_scratch_dir(),
	    bc_scratch_origin());
	sweep_scratch(&s, bc_now_ms());

	while (!s.stopping || s.nw > 0) {
		stats_deadlines(&s, bc_now_ms());
		watch(&s);
		if (bc_evloop_wait(&s.loop) < 0) {
			bc_error("poll: %s", strerror(errno));
			break;
		}
		/* the workers' news and exits before any new work */
		drain_events(&s);
		reap(&s);
		bc_evloop_dispatch(&s.loop);
		if (!s.stopping) {
			s.st.intake_expired += bc_intake_expire(&s.in,
			    bc_now_ms(), &s.ilim);
			dispatch_ready(&s);
		}
		housekeeping(&s, bc_now_ms());
	}
	bc_info("exiting: %llu jobs accepted, %llu ok, %llu failed",
	    (unsigned long long)s.st.tcp_accept,
	    (unsigned long long)s.st.compile_ok,
	    (unsigned long long)s.st.compile_error);
	server_close(&s);
	return 0;
}

int
bc_server_inetd(const struct bc_server_conf *conf)
{
	struct bc_job_conf jc;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char peer[NI_MAXHOST + NI_MAXSERV + 8];
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	if (getpeername(0, (struct sockaddr *)&ss, &sl) == 0 &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6))
		peer_label((struct sockaddr *)&ss, sl, peer, sizeof(peer));
	else
		snprintf(peer, sizeof(peer), "inetd");
	bc_server_stdio_jobconf(conf, &jc);
	bc_job_serve(&jc, 0, 1, peer);
	if (jc.slot_fd >= 0)
		close(jc.slot_fd);
	return 0;
}

void
bc_server_stdio_jobconf(const struct bc_server_conf *conf,
    struct bc_job_conf *out)
{
	struct bc_job_conf jc;
	const char *t = bc_scratch_dir();
	char *slotpath;

	memset(&jc, 0, sizeof(jc));
	jc.policy = &conf->policy;
	jc.jobs = conf->jobs;
	jc.event_fd = -1;
	jc.keeper_fd = -1;
	jc.io_timeout_ms = conf->io_timeout_sec * 1000;
	jc.request_timeout_ms = conf->request_timeout_sec * 1000;
	jc.job_timeout_ms = conf->job_timeout_sec * 1000;
	jc.version = PACKAGE_VERSION;
	jc.cache_dir = conf->cache_dir;
	jc.cache_max = conf->cache_size;
	/* No parent made (or migrated) the cache: do it now, before the
	 * first job, not in its worker after the reply (the SSH channel
	 * stays open until this process is done). */
	if (conf->cache_dir != NULL) {
		struct bc_cache *c;
		char e[BC_ERRLEN];

		if (bc_cache_open(conf->cache_dir, conf->cache_size, &c, e)
		    != BC_OK)
			bc_warn("cache: %s", e);
		bc_cache_close(c);
	}
	/* inetd instances share slots through a per-user lock file */
	slotpath = xasprintf("%s/boltccd-slots-%ld", t, (long)getuid());
	jc.slot_fd = open(slotpath, O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
	if (jc.slot_fd < 0)
		bc_warn("no slot file %s (%s): compile slots not enforced",
		    slotpath, strerror(errno));
	else
		set_cloexec(jc.slot_fd);
	free(slotpath);
	*out = jc;
}
