/*
 * job.c - serve one connection in a worker process (see job.h).
 *
 * Order of work: read the whole request under the request deadline;
 * check compiler and options; rewrite the argv (jobplan.c, or pump.c
 * for a tree); ask the cache (compcache.c); write the DOTI into a
 * private temp dir; wait for a compile slot and run the compiler
 * (jobrun.c: its own process group, led by a sentinel that kills it if
 * this worker dies, compgroup.h; cwd = temp dir and relative file names,
 * so the daemon's temp dir does not leak into the object; the client
 * socket and the deadline watched meanwhile); reply; store the result;
 * clean up; tell the parent.  Peer data is logged only escaped.
 *
 * serve_compile reads as the steps of a compile; what differs between
 * the protocols a compile comes in (distcc 1 and 2, protocol 3, BOLT,
 * BOLT pump) is a row of struct job_proto.
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
#include <sys/wait.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/exitcode.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "admin.h"
#include "job.h"
#include "job_int.h"
#include "jobplan.h"
#include "keeper.h"
#include "policy.h"
#include "pump.h"
#include "pumpx.h"
#include "scratch.h"
#include "stats.h"

void
bc_job_limit_name(enum bc_job_limit which, int ms, char *out, size_t n)
{
	static const struct {
		const char *what, *opt, *tail;
	} lim[] = {
		[BC_LIMIT_REQUEST] = { "request timeout", "--request-timeout",
		    "" },
		[BC_LIMIT_JOB] = { "job timeout", "--job-timeout", "" },
		[BC_LIMIT_IO] = { "I/O timeout", "--io-timeout", "" },
		[BC_LIMIT_REPLY] = { "reply deadline", "--job-timeout",
		    " from the reply's start" },
	};
	size_t i = (size_t)which;

	if (n == 0)
		return;
	if (i >= sizeof(lim) / sizeof(lim[0]))
		i = BC_LIMIT_JOB;
	if (ms % 1000 == 0)
		(void)snprintf(out, n, "%s (%s %d s%s)", lim[i].what,
		    lim[i].opt, ms / 1000, lim[i].tail);
	else
		(void)snprintf(out, n, "%s (%s, %d ms%s)", lim[i].what,
		    lim[i].opt, ms, lim[i].tail);
}

/* ---------------------------------------------------------------------
 * the worker
 */

static int job_sig_wr = -1;
volatile sig_atomic_t bc_job_term;

static void
job_on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig == SIGTERM)
		bc_job_term = 1;
	if (job_sig_wr >= 0)
		(void)write(job_sig_wr, &c, 1);
	errno = saved;
}

/* An event for the parent, kind and pid filled in here.  Non-blocking:
 * a full pipe loses it (a stats event, a location hint), never stalls. */
static void
emit(const struct job *j, struct bc_job_event *ev, int kind)
{
	if (j->conf->event_fd < 0)
		return;
	ev->kind = kind;
	ev->pid = (int32_t)getpid();
	(void)write(j->conf->event_fd, ev, sizeof(*ev));
}

static void
send_event(const struct job *j, int kind, int outcome, int64_t ms)
{
	struct bc_job_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.outcome = outcome;
	ev.mode = j->mode;
	ev.cache = j->cache_res;
	ev.ms = ms;
	ev.rss_kb = j->rss_kb;
	memcpy(ev.compiler, j->compiler, sizeof(ev.compiler));
	memcpy(ev.file, j->src, sizeof(ev.file));
	emit(j, &ev, kind);
}

void
bc_job_name_src(const char *src, char *file, size_t filen, char *raw,
    size_t rawn)
{
	const char *base = bc_basename(src);
	size_t n = strlen(base);

	bc_log_escape(base, n, file, filen);
	if (n >= rawn) {
		n = rawn - 1;
		while (n > 0 && ((unsigned char)base[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(raw, base, n);
	raw[n] = '\0';
}

/*
 * The job's source, known now: its name for the log and for the
 * monitor (cut at a character boundary), and the event that shows the
 * job waiting for a slot.
 */
static void
job_named(struct job *j, const struct bc_request *req, const char *src)
{
	if (j->named)
		return;		/* one BC_EV_JOB a job */
	j->named = 1;
	bc_job_name_src(src, j->file, sizeof(j->file), j->src,
	    sizeof(j->src));
	j->mode = req->proto != BC_PROTO_BOLT ? (BC_REQ_IS_PUMP(req) ?
	    BC_MODE_PUMP : BC_MODE_PLAIN) : BC_REQ_IS_PUMP(req) ?
	    BC_MODE_BOLT_PUMP : BC_MODE_BOLT;
	send_event(j, BC_EV_JOB, 0, 0);
}

/* A key's new location, for the parent's directory (locdir.h). */
static void
send_location(const struct job *j, const struct bc_cache_loc *rec)
{
	struct bc_job_event ev;

	memset(&ev, 0, sizeof(ev));
	snprintf(ev.key, sizeof(ev.key), "%s", rec->key);
	snprintf(ev.loc, sizeof(ev.loc), "%s", rec->host);
	emit(j, &ev, BC_EV_LOCATION);
}

static int
read_job_file(const struct job *j, const char *name, size_t max,
    struct bc_buf *out, int missing_ok, char *why)
{
	char *p = xasprintf("%s/%s", j->dir, name);
	char e[BC_ERRLEN];
	struct stat sb;
	int r;

	if (missing_ok && lstat(p, &sb) != 0 && errno == ENOENT) {
		free(p);
		return BC_OK;
	}
	r = bc_read_file(p, max, out, e);
	free(p);
	if (r != BC_OK)
		return bc_seterr(why, r, "reading %s: %s", name, e);
	return BC_OK;
}

int
bc_job_write_all(struct job *j, const struct bc_buf *b, char *why)
{
	struct bc_io io;

	bc_io_init(&io, j->rfd, j->wfd, j->conf->io_timeout_ms);
	io.deadline_ms = bc_now_ms() + (int64_t)j->conf->job_timeout_ms;
	io.idle_name = j->lim_io;
	io.deadline_name = j->lim_reply;
	return bc_io_write_buf(&io, b, why);
}

/*
 * After an error reply the peer may still be sending the rest of its
 * request; closing with unread bytes makes the kernel send a RST that can
 * destroy the reply in flight.  So: half-close, then discard input until
 * EOF for a short while.
 */
static void
linger_close(struct job *j)
{
	int64_t end = bc_now_ms() + 1000;
	size_t total = 0;

	(void)shutdown(j->wfd, SHUT_WR);
	while (total < ((size_t)4 << 20)) {
		struct pollfd p;
		char tmp[4096];
		int64_t left = end - bc_now_ms();
		ssize_t r;

		if (left <= 0)
			break;
		p.fd = j->rfd;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, (int)left) <= 0)
			break;
		r = read(j->rfd, tmp, sizeof(tmp));
		if (r <= 0)
			break;
		total += (size_t)r;
	}
}

/* BOLT refusals are explained; distcc ones are a silent close. */
static void
refuse(struct job *j, const struct bc_request *req, const char *why)
{
	struct bc_buf b = BC_BUF_INIT(BC_MAX_MSG + 64);
	char e[BC_ERRLEN];

	if (req->proto != BC_PROTO_BOLT)
		return;
	if (bc_proto_write_error(&b, why, e) == BC_OK &&
	    bc_job_write_all(j, &b, e) == BC_OK)
		linger_close(j);
	bc_buf_free(&b);
}

static const char *
outcome_name(int o)
{
	switch (o) {
	case BC_OUT_OK: return "COMPILE_OK";
	case BC_OUT_COMPILE_ERROR: return "COMPILE_ERROR";
	case BC_OUT_TIMEOUT: return "COMPILE_TIMEOUT";
	case BC_OUT_DISCONNECT: return "CLI_DISCONNECT";
	case BC_OUT_BAD_REQ: return "BAD_REQUEST";
	case BC_OUT_HELLO: return "HELLO";
	default: return "OTHER";
	}
}

void
bc_job_log_end(const char *peer, int outcome, int status, int ret,
    int64_t ms, const char *compiler, const char *file)
{
	bc_info("client: %s %s exit:%d sig:%d core:%d ret:%d time:%lldms %s %s",
	    peer, outcome_name(outcome),
	    WIFEXITED(status) ? WEXITSTATUS(status) : 0,
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0, (status & 0x80) != 0,
	    ret, (long long)ms, compiler[0] != '\0' ? compiler : "-",
	    file[0] != '\0' ? file : "-");
}

static void
finish(struct job *j, int outcome, int status, int ret)
{
	int64_t ms = bc_now_ms() - j->t0;

	bc_jobrun_release_slot(j);
	if (j->cache != NULL) {
		if (j->miss_pending)	/* no store counted it */
			bc_cache_touch(j->cache, j->key, BC_CACHE_COUNT_ALL, 0,
			    0);
		bc_cache_inflight_release(j->cache, j->key, j->inflight_fd);
		j->inflight_fd = -1;
		bc_cache_close(j->cache);
		j->cache = NULL;
	}
	if (outcome != BC_OUT_HELLO)
		bc_job_log_end(j->peer, outcome, status, ret, ms, j->compiler,
		    j->file);
	/* also when the reply of a compile error could not be sent */
	if (outcome == BC_OUT_COMPILE_ERROR || j->errhead[0] != '\0')
		bc_info("client: %s compile error in %s: %s", j->peer,
		    j->file[0] != '\0' ? j->file : "-",
		    j->errhead[0] != '\0' ? j->errhead : "(no message)");
	send_event(j, BC_EV_DONE, outcome, ms);
	/* if the compiler did not run */
	bc_pumpx_store_received(&j->received, j->conf->cache_dir);
	if (j->dir != NULL) {
		(void)bc_rmtree(j->dir);
		free(j->dir);
		j->dir = NULL;
	}
}

/* Not here: MISS, or LOCN at (a LOCATE's answer when the key is
 * elsewhere). */
static int
write_miss(const struct bc_request *req, const char *at, struct bc_buf *out,
    char *e)
{
	struct bc_reply rep;
	int r;

	bc_reply_init(&rep);
	rep.proto = req->proto;
	rep.miss = 1;
	rep.locn = at != NULL ? xstrdup(at) : NULL;
	r = bc_proto_write_reply(out, req, &rep, e);
	bc_reply_free(&rep);
	return r;
}

/*
 * The answer to a lookup of a key this cache does not have: MISS, or for
 * a LOCATE the host the directory names (LOCN).  rec gets the key's new
 * location when it changes (rec->key "" otherwise).
 */
int
bc_job_write_absent(const struct bc_job_conf *conf,
    const struct bc_request *req, struct bc_buf *out, struct bc_cache_loc *rec, char *e)
{
	const char *at;
	int record = 0;

	rec->key[0] = '\0';
	if (req->kind == BC_RQST_LOCATE && conf->locdir == NULL)
		/* no directory here (--mux, --inetd: a process per client
		 * session): the client asks every host instead */
		return bc_proto_write_error(out, "no key locations here", e);
	if (req->kind != BC_RQST_LOCATE)
		return write_miss(req, NULL, out, e);
	at = bc_locdir_decide(conf->locdir, req->key, req->loc_host,
	    req->flags, &record);
	if (record) {
		snprintf(rec->key, sizeof(rec->key), "%s", req->key);
		snprintf(rec->host, sizeof(rec->host), "%s",
		    req->loc_host != NULL ? req->loc_host : "");
	}
	return write_miss(req, at, out, e);
}

/* BOLT lookup: the stored result, or MISS.  Waits for an identical job
 * that is compiling right now. */
static int
serve_lookup(struct job *j, const struct bc_request *req, char *why)
{
	struct bc_buf out = BC_BUF_INIT(BC_MAX_MSG + 64);
	struct bc_cache_blob b;
	char e[BC_ERRLEN];
	int r, waited = 0;

	snprintf(j->compiler, sizeof(j->compiler), "lookup");
	snprintf(j->file, sizeof(j->file), "%.16s", req->key);
	snprintf(j->src, sizeof(j->src), "%.16s", req->key);
	j->mode = BC_MODE_LOOKUP;
	send_event(j, BC_EV_JOB, 0, 0);
	bc_cache_blob_init(&b);
	/* Most lookups of a farm miss (a client asks every host): answer
	 * those without opening the index. */
	if (j->conf->cache_dir != NULL && bc_cache_probe(j->conf->cache_dir,
	    req->key) == BC_CACHE_PROBE_ABSENT)
		goto miss;
	if (bc_compcache_open(j) == BC_OK) {
		memcpy(j->key, req->key, BC_HASH_HEXLEN + 1);
		for (;;) {
			r = bc_cache_lookup_blob(j->cache, j->key, &b, e);
			if (r != BC_OK)
				r = bc_cache_lookup(j->cache, j->key, &b, e);
			if (r == BC_OK) {
				j->cache_res = BC_EV_CACHE_HIT;
				r = bc_compcache_send_blob(j, req, &b, why);
				bc_keeper_touch(j->conf->keeper_fd, j->cache,
				    j->key, BC_CACHE_COUNT_ALL, 1, b.compile_ms,
				    req->origin);
				bc_cache_blob_free(&b);
				return r == BC_OK ? BC_OUT_OK : BC_OUT_DISCONNECT;
			}
			if (r == BC_ERR_CORRUPT)
				bc_warn("cache: corrupt entry %.16s evicted: %s",
				    j->key, e);
			if (waited)
				break;
			/* Being compiled right now?  Then wait for it. */
			r = bc_cache_inflight_try(j->cache, j->key,
			    &j->inflight_fd, e);
			if (r == BC_OK) {
				bc_cache_inflight_release(j->cache, j->key,
				    j->inflight_fd);
				j->inflight_fd = -1;
				break;
			}
			if (r != BC_ERR_BUSY)
				break;
			r = bc_compcache_take_inflight(j, why);
			if (r == BC_ERR_EOF)
				return BC_OUT_DISCONNECT;
			bc_cache_inflight_release(j->cache, j->key,
			    j->inflight_fd);
			j->inflight_fd = -1;
			if (r != BC_OK)
				break;
			waited = 1;
		}
	}
miss:
	/* Not counted: the host that compiles the job counts its miss, so
	 * the farm counts one per job, not one per host asked. */
	{
		struct bc_cache_loc rec;

		r = bc_job_write_absent(j->conf, req, &out, &rec, e);
		if (r == BC_OK && rec.key[0] != '\0')
			send_location(j, &rec);	/* the parent records it */
	}
	if (r == BC_OK)
		r = bc_job_write_all(j, &out, e);
	bc_buf_free(&out);
	if (r != BC_OK) {
		bc_seterr(why, r, "sending MISS: %s", e);
		return BC_OUT_DISCONNECT;
	}
	return BC_OUT_HELLO;	/* a miss is not a job */
}

/* BOLT zero from a peer that may (loopback or --admin-allow): the
 * parent's counters and the cache's baseline; the totals (/metrics) go
 * on.  Any other peer gets an error that says why. */
static int
serve_zero(struct job *j, int fd)
{
	struct bc_buf b = BC_BUF_INIT(BC_MAX_MSG + 64);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char e[BC_ERRLEN], why[BC_ERRLEN];
	int r;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    !bc_admin_peer_ok(j->conf->admin_allow, (struct sockaddr *)&ss,
	    sl)) {
		bc_warn("client %s: zeroing the counters refused: not "
		    "loopback or --admin-allow", j->peer);
		r = bc_proto_write_error(&b, "refused: the farm's counters are "
		    "zeroed only from loopback or --admin-allow addresses "
		    "(boltccd --zero-stats on the daemon's machine)", e);
	} else if (bc_compcache_open(j) != BC_OK)
		r = bc_proto_write_error(&b, "cache disabled", e);
	else if (bc_cache_zero(j->cache, why) != BC_OK)
		r = bc_proto_write_error(&b, why, e);
	else {
		send_event(j, BC_EV_ZERO, 0, 0);
		bc_info("client %s: counters zeroed (the pages count from "
		    "now; /metrics keeps the totals)", j->peer);
		r = bc_proto_write_info(&b, "zeroed", e);
	}
	if (r == BC_OK)
		(void)bc_job_write_all(j, &b, e);
	bc_buf_free(&b);
	return BC_OUT_HELLO;
}

/*
 * BOLT pump, right after the manifest: serve a hit (no NEED round trip,
 * no tree), else (holding the in-flight lock when possible) ask for the
 * files the store lacks and build the tree.  Returns an outcome if the
 * job ended here, -1 to compile.
 */
static int
pumpx_before_compile(struct job *j, const struct bc_request *req, char *why)
{
	const char *src = j->pm.n > 0 ? j->pm.v[0].name : "";
	int r;

	job_named(j, req, src);
	switch (bc_compcache_before(j, req, why)) {
	case 1:
		return BC_OUT_OK;
	case -1:
		return BC_OUT_DISCONNECT;
	default:
		break;
	}
	/* the files are part of the request: its time limit, from now */
	j->io->deadline_ms = bc_now_ms() +
	    (int64_t)j->conf->request_timeout_ms;
	j->io->deadline_name = j->lim_req;
	if (j->io->deadline_ms > j->deadline) {
		j->io->deadline_ms = j->deadline;
		j->io->deadline_name = j->lim_job;
	}
	r = bc_pumpx_fetch(j->io, req, &j->pm, j->conf->cache_dir,
	    &j->received, &j->dir, &j->pump_root, &j->pump_cwd, why);
	if (r == BC_OK && j->key_deferred && j->cache != NULL) {
		/* the header maps are here: the key, and maybe a hit */
		j->pump_fetched = 1;
		bc_compcache_pump_keys(j, req);
		switch (j->key_deferred ? 0 : bc_compcache_before(j, req,
		    why)) {
		case 1:
			return BC_OUT_OK;
		case -1:
			return BC_OUT_DISCONNECT;
		default:
			break;
		}
	}
	if (r == BC_OK)
		return -1;
	if (r != BC_ERR_EOF)
		refuse(j, req, why);
	return r == BC_ERR_EOF || r == BC_ERR_TIMEOUT ||
	    r == BC_ERR_TRUNCATED ? BC_OUT_OTHER : BC_OUT_BAD_REQ;
}

/* The first lines of a failed compile's stderr, for the log line of the
 * job (escaped: the bytes are the compiler's, about the peer's files),
 * after what the status says when a signal ended the compiler; when the
 * compiler wrote nothing, what is known instead (its job dir gone under
 * it is a daemon fault, not the peer's source). */
static void
note_errhead(struct job *j, int status, const struct bc_buf *serr)
{
	const char *p = (const char *)bc_buf_data(serr), *nl;
	size_t n = bc_buf_len(serr), take = 0, at = 0;
	struct stat sb;
	int lines = 0;

	if (WIFSIGNALED(status))
		at = (size_t)snprintf(j->errhead, sizeof(j->errhead),
		    "compiler killed by signal %d (%s)%s", WTERMSIG(status),
		    strsignal(WTERMSIG(status)), n > 0 ? ": " : "");
	if (at >= sizeof(j->errhead))
		return;
	if (n == 0) {
		if (j->dir != NULL && lstat(j->dir, &sb) != 0)
			(void)snprintf(j->errhead + at, sizeof(j->errhead) - at,
			    "(no stderr: the job dir %s vanished during the "
			    "compile)", j->dir);
		else if (at == 0)
			(void)snprintf(j->errhead, sizeof(j->errhead),
			    "(the compiler wrote nothing on stderr)");
		return;
	}
	while (take < n && lines < 3) {
		nl = memchr(p + take, '\n', n - take);
		take = nl != NULL ? (size_t)(nl - p) + 1 : n;
		lines++;
	}
	while (take > 0 && (p[take - 1] == '\n' || p[take - 1] == '\r'))
		take--;
	bc_log_escape(p, take, j->errhead + at, sizeof(j->errhead) - at);
}

/* ---------------------------------------------------------------------
 * a compile: the steps every protocol takes, in serve_compile; what
 * differs between the protocols is a row of job_protos
 */

struct compile;

/* What differs between the protocols a compile comes in. */
struct job_proto {
	/* Before the job dir: the cache key, and for BOLT pump the hit and
	 * then the files.  -1 to go on, or the job's outcome. */
	int (*before)(struct job *j, const struct bc_request *req,
	    struct compile *c, char *why);
	/* The argv to run (jobplan.h, or pump.h's for a tree). */
	int (*plan)(struct job *j, const struct bc_request *req,
	    const char *name0, const struct bc_jobplan_opts *ro,
	    struct bc_jobplan *plan, char *why);
	/* The reply of a compile into out (rep's .d: what the cache then
	 * stores). */
	int (*reply)(struct job *j, const struct bc_request *req,
	    struct bc_reply *rep, struct bc_buf *out, char *e);
	int hit_asked;		/* before() served the hit already */
	int tree;		/* compiled in a tree under j->pump_root: the
				 * messages name the client's files */
};

/* A compile's state between its steps. */
struct compile {
	const struct job_proto *jp;
	char *path;		/* the compiler to run (policy.h) */
	const char *name;	/* its name as the policy knows it */
	struct bc_jobplan plan;
	int64_t ms;		/* how long the compiler ran */
};

/* distcc 1 and 2, BOLT plain: the key from the request and its .i. */
static int
before_plain(struct job *j, const struct bc_request *req, struct compile *c,
    char *why)
{
	if (bc_compcache_prepare(j, req, c->path, why) != BC_OK) {
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	return -1;
}

/* distcc protocol 3: no cache; the tree came with the request. */
static int
before_pump3(struct job *j, const struct bc_request *req, struct compile *c,
    char *why)
{
	(void)j;
	(void)req;
	(void)c;
	(void)why;
	return -1;
}

/* BOLT pump: the key from the manifest, a hit before any tree, then the
 * files and the tree only on a miss. */
static int
before_boltpump(struct job *j, const struct bc_request *req,
    struct compile *c, char *why)
{
	int outcome = before_plain(j, req, c, why);

	return outcome >= 0 ? outcome : pumpx_before_compile(j, req, why);
}

static int
plan_plain(struct job *j, const struct bc_request *req, const char *name0,
    const struct bc_jobplan_opts *ro, struct bc_jobplan *plan, char *why)
{
	(void)j;
	return bc_jobplan_argv(req->argv.v, req->argv.n, name0, ro, plan, why);
}

static int
plan_pump(struct job *j, const struct bc_request *req, const char *name0,
    const struct bc_jobplan_opts *ro, struct bc_jobplan *plan, char *why)
{
	return bc_pump_job_plan(req->argv.v, req->argv.n, name0, j->pump_root,
	    j->dir, ro->want_dia && ro->is_clang, plan, why);
}

/* distcc 1 and 2, BOLT plain: common/proto.c writes all three. */
static int
reply_plain(struct job *j, const struct bc_request *req,
    struct bc_reply *rep, struct bc_buf *out, char *e)
{
	(void)j;
	return bc_proto_write_reply(out, req, rep, e);
}

/* distcc protocol 3: the .d from the tree, in the client's paths. */
static int
reply_pump3(struct job *j, const struct bc_request *req,
    struct bc_reply *rep, struct bc_buf *out, char *e)
{
	(void)req;
	return bc_pump_write_reply(out, j->dir, j->pump_root, rep, e);
}

/* BOLT pump: the .d goes out and, when the client wants one, is
 * stored. */
static int
reply_boltpump(struct job *j, const struct bc_request *req,
    struct bc_reply *rep, struct bc_buf *out, char *e)
{
	int r;

	bc_buf_free(&rep->dotd);
	bc_pump_read_deps(j->dir, j->pump_root, rep, &rep->dotd);
	r = bc_proto3x_write_reply(out, rep->status, &rep->serr, &rep->sout,
	    &rep->doto, &rep->dotd, (req->flags & BC_FLAG_WANT_DIA) != 0 ?
	    &rep->dia : NULL, e);
	if (!bc_cache_pump_deps_wanted(req->argv.v, req->argv.n))
		bc_buf_reset(&rep->dotd);
	return r;
}

static const struct job_proto proto_distcc = {
	before_plain, plan_plain, reply_plain, 0, 0
};
static const struct job_proto proto_pump3 = {
	before_pump3, plan_pump, reply_pump3, 0, 1
};
static const struct job_proto proto_bolt = {
	before_plain, plan_plain, reply_plain, 0, 0
};
static const struct job_proto proto_boltpump = {
	before_boltpump, plan_pump, reply_boltpump, 1, 1
};

static const struct job_proto *
job_proto(const struct bc_request *req)
{
	if (req->proto == 3)
		return &proto_pump3;
	if (req->proto != BC_PROTO_BOLT)
		return &proto_distcc;
	return req->kind == BC_RQST_PUMP ? &proto_boltpump : &proto_bolt;
}

/* As distccd, for a compiler it cannot find: the compile "fails" with
 * exit 110. */
static void
reply_no_compiler(struct job *j, const struct bc_request *req,
    const char *why)
{
	struct bc_buf out = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_reply rep;
	char e[BC_ERRLEN];

	bc_reply_init(&rep);
	rep.proto = req->proto;
	rep.status = W_EXITCODE(BC_EXIT_COMPILER_MISSING, 0);
	(void)bc_buf_putf(&rep.serr, "boltccd: %s\n", why);
	if (bc_proto_write_reply(&out, req, &rep, e) == BC_OK)
		(void)bc_job_write_all(j, &out, e);
	bc_reply_free(&rep);
	bc_buf_free(&out);
}

/* The compiler: allowed and found, with options we run.  -1 to go on,
 * or the job's outcome. */
static int
check_compiler(struct job *j, const struct bc_request *req,
    struct compile *c, int *status, char *why)
{
	const struct bc_policy *pol = j->conf->policy;
	int r;

	if (req->argv.n == 0) {
		bc_seterr(why, BC_ERR_PROTO, "empty argv");
		return BC_OUT_BAD_REQ;
	}
	bc_log_escape(req->argv.v[0], strlen(req->argv.v[0]), j->compiler,
	    sizeof(j->compiler));
	r = bc_policy_resolve(pol, req->argv.v[0], &c->path, why);
	if (r == BC_ERR_COMPILER && req->proto != BC_PROTO_BOLT) {
		reply_no_compiler(j, req, why);
		*status = (int)W_EXITCODE(BC_EXIT_COMPILER_MISSING, 0);
		return BC_OUT_OTHER;
	}
	if (r != BC_OK) {
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	if (bc_policy_check_name(pol, req->argv.v[0], &c->name, why) != BC_OK)
		c->name = req->argv.v[0];	/* not reached: resolve checked it */
	if (bc_policy_check_args(req->argv.v, req->argv.n, why) != BC_OK) {
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	return -1;
}

/* The job dir and the argv to run there; the job gets its name (if the
 * protocol's before() has not given it one). */
static int
plan_compile(struct job *j, const struct bc_request *req, struct compile *c,
    char *why)
{
	struct bc_jobplan_opts ro;
	const char *name;
	char e[BC_ERRLEN];
	int r;

	if (j->dir == NULL && (r = bc_scratch_mkjob(&j->dir, e)) != BC_OK) {
		bc_seterr(why, r, "%s", e);
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	memset(&ro, 0, sizeof(ro));
	ro.want_dia = (req->flags & BC_FLAG_WANT_DIA) != 0 &&
	    req->proto == BC_PROTO_BOLT;
	ro.cwd = req->proto == BC_PROTO_BOLT ? req->cwd : NULL;
	ro.tmpdir = j->dir;
	ro.is_clang = bc_policy_is_clang(c->name);
	name = bc_basename(c->name);
	if (c->jp->plan(j, req, name[0] == '\0' ? req->argv.v[0] : name, &ro,
	    &c->plan, why) != BC_OK) {
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	job_named(j, req, c->plan.orig_src);
	return -1;
}

/* A hit before compiling, unless the protocol's before() asked. */
static int
serve_hit(struct job *j, const struct bc_request *req,
    const struct compile *c, char *why)
{
	if (c->jp->hit_asked)
		return -1;
	switch (bc_compcache_before(j, req, why)) {
	case 1:
		return BC_OUT_OK;
	case -1:
		return BC_OUT_DISCONNECT;
	default:
		return -1;
	}
}

/* The request's source (empty for a pump job) where the plan reads it. */
static int
write_source(struct job *j, const struct bc_request *req,
    const struct compile *c, char *why)
{
	char e[BC_ERRLEN], *p = xasprintf("%s/%s", j->dir, c->plan.src_name);
	int r;

	r = bc_write_file_atomic(p, bc_buf_data(&req->doti),
	    bc_buf_len(&req->doti), 0600, e);
	free(p);
	if (r != BC_OK) {
		bc_seterr(why, r, "%s", e);
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	return -1;
}

/* A compile slot, waited for (bc_jobrun_take_slot).  -1 when held. */
static int
wait_slot(struct job *j, const struct bc_request *req, char *why)
{
	int r = bc_jobrun_take_slot(j, why);

	if (r == BC_OK)
		return -1;
	if (r != BC_ERR_EOF)
		refuse(j, req, why);
	return r == BC_ERR_EOF ? BC_OUT_DISCONNECT : r == BC_ERR_TIMEOUT ?
	    BC_OUT_TIMEOUT : BC_OUT_OTHER;
}

/* The compiler run in the slot held; the slot given back.  The
 * compile's outcome. */
static int
run_in_slot(struct job *j, struct compile *c, int *status, char *why)
{
	int64_t t0;
	int outcome;

	send_event(j, BC_EV_SLOT_START, 0, 0);
	bc_debug("running %s", c->path);
	t0 = bc_now_ms();
	outcome = bc_jobrun_compile(j, c->path, c->plan.argv.v, status, why);
	c->ms = bc_now_ms() - t0;
	bc_jobrun_release_slot(j);
	send_event(j, BC_EV_SLOT_END, 0, 0);
	return outcome;
}

/* Whether a compile's end gets a reply: an object or a compile error
 * does; a client gone does not; a BOLT client is told why; a distcc
 * client gets the status and stderr, but when the daemon goes down a
 * silent close (the client retries). */
static int
gets_reply(struct job *j, const struct bc_request *req, int outcome,
    const char *why)
{
	if (outcome == BC_OUT_OK || outcome == BC_OUT_COMPILE_ERROR)
		return 1;
	if (outcome == BC_OUT_DISCONNECT)
		return 0;
	if (req->proto == BC_PROTO_BOLT) {
		refuse(j, req, why);
		return 0;
	}
	return !bc_job_term;
}

/* A compile's reply, read from the job dir (stderr, stdout, object,
 * .dia; a timeout's message instead), with a tree's root taken out of
 * the messages.  BC_OK, or an error with why. */
static int
collect_reply(struct job *j, const struct bc_request *req,
    const struct compile *c, int outcome, int status, struct bc_reply *rep,
    char *why)
{
	char e[BC_ERRLEN];
	int r;

	bc_reply_init(rep);
	rep->proto = req->proto;
	rep->status = (uint32_t)status;
	bc_buf_free(&rep->serr);
	bc_buf_init(&rep->serr, BC_MAX_STDERR);
	bc_buf_free(&rep->sout);
	bc_buf_init(&rep->sout, BC_MAX_STDOUT);
	bc_buf_free(&rep->doto);
	bc_buf_init(&rep->doto, BC_MAX_OBJECT);
	bc_buf_free(&rep->dia);
	bc_buf_init(&rep->dia, BC_MAX_DIA);
	if (outcome == BC_OUT_TIMEOUT)
		(void)bc_buf_putf(&rep->serr, "boltccd: %s\n", why);
	else if (outcome != BC_OUT_OK && outcome != BC_OUT_COMPILE_ERROR) {
		/* the compiler did not run (its group or its spawn failed):
		 * a failure of the farm's, never a success with no object */
		if (status == 0)
			rep->status = (uint32_t)W_EXITCODE(BC_EXIT_FAILURE, 0);
		(void)bc_buf_putf(&rep->serr, "boltccd: %s\n", why);
	} else if ((r = read_job_file(j, "stderr", BC_MAX_STDERR, &rep->serr, 1,
	    why)) != BC_OK ||
	    (r = read_job_file(j, "stdout", BC_MAX_STDOUT, &rep->sout, 1,
	    why)) != BC_OK ||
	    (status == 0 && (r = read_job_file(j, c->plan.out_name,
	    BC_MAX_OBJECT, &rep->doto, 1, why)) != BC_OK) ||
	    (c->plan.dia_name != NULL && (r = read_job_file(j,
	    c->plan.dia_name, BC_MAX_DIA, &rep->dia, 1, why)) != BC_OK))
		return r;
	if (c->jp->tree) {	/* messages name the client's files */
		bc_pump_strip_root(j->pump_root, &rep->serr);
		if (bc_buf_len(&rep->dia) > 0 &&
		    (r = bc_pump_strip_root_dia(j->pump_root, &rep->dia, e)) !=
		    BC_OK)
			return bc_seterr(why, r, "the compiler's .dia: %s", e);
	}
	return BC_OK;
}

/* The one reply writer of a compile, whatever its protocol (the row's
 * reply()); then the cache gets the result.  The job's outcome. */
static int
reply_compile(struct job *j, const struct bc_request *req,
    const struct compile *c, int outcome, int status, char *why)
{
	struct bc_buf out = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_reply rep;
	char e[BC_ERRLEN];
	int r;

	if (collect_reply(j, req, c, outcome, status, &rep, why) != BC_OK) {
		bc_reply_free(&rep);
		refuse(j, req, why);
		return BC_OUT_OTHER;
	}
	if (status != 0 && outcome == BC_OUT_COMPILE_ERROR)
		note_errhead(j, status, &rep.serr);
	r = c->jp->reply(j, req, &rep, &out, e);
	if (r == BC_OK)
		r = bc_job_write_all(j, &out, e);
	if (outcome == BC_OUT_OK || outcome == BC_OUT_COMPILE_ERROR)
		bc_compcache_after(j, req, &rep, c->ms);
	bc_reply_free(&rep);
	bc_buf_free(&out);
	if (r == BC_OK)
		return outcome;
	if (r == BC_ERR_EOF || r == BC_ERR_IO)
		bc_seterr(why, r, "client gone before the reply was sent: %s",
		    e);
	else
		bc_seterr(why, r, "reply not sent: %s", e);
	if (outcome == BC_OUT_OK || outcome == BC_OUT_COMPILE_ERROR)
		outcome = r == BC_ERR_IO || r == BC_ERR_EOF ?
		    BC_OUT_DISCONNECT : BC_OUT_OTHER;
	return outcome;
}

/*
 * A compile, as its steps: the compiler checked; the protocol's work
 * before the job dir (the cache key; BOLT pump: a hit, the files); the
 * job dir and the argv; a hit; the source written; a slot; the
 * compiler run; the reply and the cache.  Each step returns -1 to go on
 * or the job's outcome (having refused the job as its protocol wants).
 */
static int
serve_compile(struct job *j, struct bc_request *req, int *status, char *why)
{
	struct compile c;
	int outcome;

	*status = 0;
	memset(&c, 0, sizeof(c));
	c.jp = job_proto(req);
	bc_jobplan_init(&c.plan);
	outcome = check_compiler(j, req, &c, status, why);
	if (outcome < 0)
		outcome = c.jp->before(j, req, &c, why);
	if (outcome < 0)
		outcome = plan_compile(j, req, &c, why);
	if (outcome < 0)
		outcome = serve_hit(j, req, &c, why);
	if (outcome < 0)
		outcome = write_source(j, req, &c, why);
	if (outcome < 0)
		outcome = wait_slot(j, req, why);
	if (outcome < 0) {
		outcome = run_in_slot(j, &c, status, why);
		if (gets_reply(j, req, outcome, why))
			outcome = reply_compile(j, req, &c, outcome, *status,
			    why);
	}
	bc_jobplan_free(&c.plan);
	free(c.path);
	return outcome;
}

/* ---------------------------------------------------------------------
 * a connection: the request read whole, then served by its kind
 */

/* The start of a log line about a request that could not be read. */
static const char *
request_failure(int r)
{
	switch (r) {
	case BC_ERR_TIMEOUT:
		return "request cut off";
	case BC_ERR_EOF:
	case BC_ERR_TRUNCATED:
		return "connection closed before a complete request";
	case BC_ERR_IO:
		return "request not read";
	default:
		return "bad request";
	}
}

/* A request that could not be read whole (what: which part): the log
 * line, a BOLT client told why unless it went away, the job's end. */
static void
request_failed(struct job *j, const struct bc_request *req, int r,
    const char *what, const char *why)
{
	bc_warn("client %s: %s%s: %s", j->peer, request_failure(r), what, why);
	if (r != BC_ERR_EOF)
		refuse(j, req, why);	/* BOLT only */
	finish(j, r == BC_ERR_EOF || r == BC_ERR_TIMEOUT ||
	    r == BC_ERR_TRUNCATED ? BC_OUT_OTHER : BC_OUT_BAD_REQ, 0, r);
}

/*
 * Read the whole request under the request deadline: the parent's bytes
 * first (pre), then the socket; a protocol-3 request's files into a
 * tree, a BOLT pump request's manifest.  BC_OK, or the job has ended
 * (request_failed).
 */
static int
read_request(struct job *j, struct bc_io *io, struct bc_request *req,
    const void *pre, size_t npre, char *why)
{
	const struct bc_job_conf *conf = j->conf;
	int r;

	bc_io_init(io, j->rfd, j->wfd, conf->io_timeout_ms);
	if (npre > 0)
		bc_io_preload(io, pre, npre);	/* the parent read these */
	io->deadline_ms = j->t0 + (int64_t)conf->request_timeout_ms;
	io->idle_name = j->lim_io;
	io->deadline_name = j->lim_req;
	if (io->deadline_ms > j->deadline) {
		io->deadline_ms = j->deadline;
		io->deadline_name = j->lim_job;
	}
	if ((r = bc_proto_read_request(io, req, why)) != BC_OK) {
		request_failed(j, req, r, "", why);
		return r;
	}
	if (req->proto == 3 && (r = bc_pump_receive(io, req, &j->dir,
	    &j->pump_root, &j->pump_cwd, why)) != BC_OK) {
		request_failed(j, req, r, " (pump)", why);
		return r;
	}
	j->io = io;
	if (BC_REQ_IS_PUMP(req) && req->proto == BC_PROTO_BOLT &&
	    (r = bc_pumpx_read(io, req, &j->pm, why)) != BC_OK) {
		/* BOLT pump (daemon/pumpx.c) */
		request_failed(j, req, r, " (BOLT pump)", why);
		return r;
	}
	return BC_OK;
}

/* BOLT hello: our name and version. */
static int
serve_hello(struct job *j)
{
	struct bc_buf b = BC_BUF_INIT(BC_MAX_MSG + 64);
	char *info = xasprintf("boltccd %s", j->conf->version);
	char e[BC_ERRLEN];

	if (bc_proto_write_info(&b, info, e) == BC_OK)
		(void)bc_job_write_all(j, &b, e);
	free(info);
	bc_buf_free(&b);
	return BC_OUT_HELLO;
}

/* FLAG_HEARTBEAT on a compile: the first BEAT at once, the client
 * learns we are alive.  1 if the client is gone. */
static int
first_beat(struct job *j, const struct bc_request *req)
{
	if (req->proto != BC_PROTO_BOLT || (req->kind != BC_RQST_COMPILE &&
	    req->kind != BC_RQST_PUMP) || (req->flags & BC_FLAG_HEARTBEAT) == 0)
		return 0;
	j->beat_next = bc_now_ms();
	return bc_jobrun_beat(j);
}

/* A whole request, by its kind: BOLT's hello, lookups and zero, else a
 * compile; then the job's end (finish). */
static void
serve_request(struct job *j, struct bc_request *req, char *why)
{
	int outcome, status = 0;

	if (req->proto == BC_PROTO_BOLT && req->kind == BC_RQST_HELLO)
		outcome = serve_hello(j);
	else if (req->proto == BC_PROTO_BOLT && BC_RQST_IS_LOOKUP(req->kind))
		outcome = serve_lookup(j, req, why);
	else if (req->proto == BC_PROTO_BOLT && req->kind == BC_RQST_ZERO)
		outcome = serve_zero(j, j->rfd);
	else if (first_beat(j, req)) {
		finish(j, BC_OUT_DISCONNECT, 0, BC_ERR_EOF);
		return;
	} else {
		outcome = serve_compile(j, req, &status, why);
		if (outcome != BC_OUT_OK && outcome != BC_OUT_COMPILE_ERROR)
			bc_warn("client %s: %s: %s", j->peer,
			    outcome_name(outcome), why);
	}
	finish(j, outcome, status, 0);
}

/* The job's state before its request: the connection, the deadline,
 * the limits' names. */
static void
job_init(struct job *j, const struct bc_job_conf *conf, int rfd, int wfd,
    const char *peer)
{
	struct stat sb;

	memset(j, 0, sizeof(*j));
	j->conf = conf;
	j->peer = peer;
	j->rfd = rfd;
	j->wfd = wfd;
	j->slot = -1;
	j->inflight_fd = -1;
	/* Only a socket's EOF means the client is gone.  On an inetd/ssh
	 * pipe or a file, EOF may just be a half-close after the request:
	 * finish the job (bounded by its deadline) and reply. */
	j->watch_rfd = fstat(rfd, &sb) != 0 || S_ISSOCK(sb.st_mode);
	/* The compiler must not hold the client's connection: a worker
	 * killed with its daemon (SIGKILL to the process group) would leave
	 * the client waiting for the end of an orphaned compile instead of
	 * seeing the connection close (the compiler has its own process
	 * group and survives).  Its stdin/out/err are set up anew anyway. */
	(void)fcntl(rfd, F_SETFD, FD_CLOEXEC);
	(void)fcntl(wfd, F_SETFD, FD_CLOEXEC);
	j->t0 = bc_now_ms();
	j->deadline = j->t0 + (int64_t)conf->job_timeout_ms;
	bc_job_limit_name(BC_LIMIT_REQUEST, conf->request_timeout_ms,
	    j->lim_req, sizeof(j->lim_req));
	bc_job_limit_name(BC_LIMIT_JOB, conf->job_timeout_ms, j->lim_job,
	    sizeof(j->lim_job));
	bc_job_limit_name(BC_LIMIT_IO, conf->io_timeout_ms, j->lim_io,
	    sizeof(j->lim_io));
	bc_job_limit_name(BC_LIMIT_REPLY, conf->job_timeout_ms, j->lim_reply,
	    sizeof(j->lim_reply));
}

/* The worker's signals: SIGCHLD and SIGTERM wake bc_jobrun_watch through
 * the pipe sp (its read end j->sig_rd), the rest the parent decides.
 * -1 if there is no pipe. */
static int
job_signals(struct job *j, int sp[2])
{
	struct sigaction sa;

	if (pipe(sp) != 0) {
		bc_error("pipe: %s", strerror(errno));
		return -1;
	}
	(void)fcntl(sp[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(sp[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(sp[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(sp[1], F_SETFD, FD_CLOEXEC);
	j->sig_rd = sp[0];
	job_sig_wr = sp[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = job_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGINT, &sa, NULL);	/* the parent decides */
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

void
bc_job_serve(const struct bc_job_conf *conf, int rfd, int wfd,
    const char *peer)
{
	bc_job_serve_from(conf, rfd, wfd, peer, NULL, 0);
}

void
bc_job_serve_from(const struct bc_job_conf *conf, int rfd, int wfd,
    const char *peer, const void *pre, size_t npre)
{
	struct bc_request req;
	struct bc_io io;
	struct job j;
	int sp[2];
	char why[BC_ERRLEN];

	job_init(&j, conf, rfd, wfd, peer);
	why[0] = '\0';
	if (job_signals(&j, sp) != 0)
		return;
	bc_request_init(&req);
	if (read_request(&j, &io, &req, pre, npre, why) == BC_OK)
		serve_request(&j, &req, why);
	bc_proto3x_manifest_free(&j.pm);
	free(j.pump_root);
	free(j.pump_cwd);
	bc_request_free(&req);
	job_sig_wr = -1;
	close(sp[0]);
	close(sp[1]);
}
