/*
 * rjob.c - one compile through the farm: start, the local half, each
 * host in turn, the fallback (rjob.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "common/exitcode.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "client/binstate.h"
#include "client/jobcache.h"
#include "client/remote.h"
#include "client/rjob.h"
#include "client/ssh.h"

/* One host's attempt at the job. */
struct rjob_try {
	struct bc_slot slot;
	const struct bc_host *h;
	int proto;			/* 1, 2, 3 or BC_PROTO_BOLT */
	int pumping;			/* pump mode toward h */
	int64_t sent_at;		/* for the host's job time */
	struct bc_reply rep;
	const char *why;		/* a failed exchange's reason */
	char err[BC_ERRLEN];
};

static enum bc_rjob_step
done(struct bc_rjob *rj, int rc)
{
	rj->rc = rc;
	return BC_RJOB_DONE;
}

static int
contains(const uint8_t *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	return n >= k && memmem(p, n, needle, k) != NULL;
}

/* --------------------------------------------------------------------- */
/* decisions */

int
bc_rjob_host_proto(const struct bc_host *h, int bolt)
{
	/* ,cpp,lzo: pump (3) when the scan allows (client/pump.c) */
	return bolt ? BC_PROTO_BOLT : h->protocol == 1 ? 1 :
	    h->protocol == 3 ? 3 : 2;
}

int
bc_rjob_wants_pump(const struct bc_cconf *cfg, const struct bc_host *h,
    int proto)
{
	return proto == 3 || (proto == BC_PROTO_BOLT && (h->protocol == 3 ||
	    (cfg->pump && !h->plain)));
}

int
bc_rjob_farm_failure(uint32_t status)
{
	int code;

	if (WIFSIGNALED(status) || !WIFEXITED(status))
		return 1;
	code = WEXITSTATUS(status);
	/* >= 128: the compiler died; 100..118: distcc/boltcc's own codes
	 * for daemon-side failures (compiler missing, I/O, timeout). */
	return code >= 128 || (code >= BC_EXIT_FAILURE &&
	    code <= BC_EXIT_TIMEOUT);
}

int
bc_rjob_pump_gives_local(const char *pump_only, int pumping, int proto)
{
	if (pumping && proto == BC_PROTO_BOLT)
		return 1;
	return proto != BC_PROTO_BOLT && strcmp(pump_only, "debug-info") == 0;
}

int
bc_rjob_host_independent(const struct bc_rjob *rj, int *proto, int *pump)
{
	const struct bc_cjob *j = rj->job;
	size_t i, n = 0;

	for (i = 0; i < rj->hl.n; i++) {
		const struct bc_host *h = &rj->hl.v[i];
		int bolt, pr, pu;

		if (h->kind != BC_HOST_TCP && h->kind != BC_HOST_SSH)
			return 0;	/* localhost (or unknown): as it comes */
		bolt = h->bolt == BC_BOLT_YES ? 1 : h->bolt == BC_BOLT_NO ?
		    0 : bc_remote_probe_cached(j->cfg->statedir, h);
		if (bolt < 0 || (!bolt && j->plan.dia_file != NULL))
			return 0;	/* probed first; .dia: choose_mode */
		pr = bc_rjob_host_proto(h, bolt);
		pu = bc_rjob_wants_pump(j->cfg, h, pr);
		if (n++ > 0 && (pr != *proto || pu != *pump))
			return 0;
		*proto = pr;
		*pump = pu;
	}
	return n > 0;
}

enum bc_rjob_verdict
bc_rjob_verdict(const struct bc_rjob_tally *t, int fallback,
    const char *pump_only, const char **reason)
{
	*reason = NULL;
	if (t->pump_skipped && !t->host_failed) {
		*reason = pump_only;
		return BC_RJOB_PUMP_ONLY;
	}
	if (!fallback)
		return BC_RJOB_FAIL;
	if (t->dia_skipped && !t->host_failed) {
		*reason = "serialize-diagnostics";
		return BC_RJOB_LOCAL;
	}
	*reason = t->host_failed ? t->last_why : t->no_host_why;
	return BC_RJOB_FALLBACK;
}

/* --------------------------------------------------------------------- */
/* the job's state */

void
bc_rjob_init(struct bc_rjob *rj, struct bc_cjob *j)
{
	memset(rj, 0, sizeof(*rj));
	rj->job = j;
	bc_buf_init(&rj->doti, BC_MAX_DOTI);
	bc_cpump_init(&rj->pump);
	rj->tally.no_host_why = "no-usable-host";
	rj->rc = -1;
}

void
bc_rjob_free(struct bc_rjob *rj)
{
	bc_cpump_free(&rj->pump);
	free(rj->tried);
	free(rj->tally.last_host);
	bc_buf_free(&rj->doti);
	bc_hosts_free(&rj->hl);
	rj->tried = NULL;
	rj->tally.last_host = NULL;
}

/* No host list at all: local, or an error with DISTCC_FALLBACK=0. */
static int
no_hosts(struct bc_cjob *j)
{
	if (!j->cfg->fallback) {
		fprintf(stderr, "boltcc: error: no hosts configured "
		    "(BOLTCC_HOSTS, DISTCC_HOSTS, %s/hosts, "
		    "/etc/distcc/hosts) and DISTCC_FALLBACK=0\n", j->cfg->dir);
		return BC_EXIT_NO_HOSTS;
	}
	bc_warn("no hosts configured (set BOLTCC_HOSTS or "
	    "DISTCC_HOSTS); compiling %s locally", j->plan.source);
	return bc_cjob_run_local(j, "no-hosts");
}

enum bc_rjob_step
bc_rjob_start(struct bc_rjob *rj)
{
	struct bc_cjob *j = rj->job;
	const struct bc_cconf *cfg = j->cfg;
	char err[BC_ERRLEN];
	int r;

	if (j->plan.output == NULL || j->plan.source == NULL)
		return done(rj, bc_cjob_run_local(j, "no-output"));
	if (cfg->error != NULL) {
		fprintf(stderr, "boltcc: error: %s (not compiling %s)\n",
		    cfg->error, j->plan.source);
		return done(rj, cfg->error_exit);
	}
	r = bc_cconf_hosts(cfg, &rj->hl, err);
	if (r == BC_ERR_NOENT)
		return done(rj, no_hosts(j));
	if (r != BC_OK) {
		fprintf(stderr, "boltcc: error: bad host list in %s: %s\n",
		    cfg->hosts_origin, err);
		return done(rj, BC_EXIT_BAD_HOSTSPEC);
	}
	if (bc_cconf_make_dirs(cfg, err) != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		return done(rj, BC_EXIT_IO_ERROR);
	}
	rj->tried = xcalloc(rj->hl.n > 0 ? rj->hl.n : 1, 1);
	return BC_RJOB_GO;
}

/* --------------------------------------------------------------------- */
/* the local half */

/*
 * Pump mode or not, the one place it is decided: wanted toward the host
 * (want, from bc_rjob_wants_pump) and the include scan, made once per
 * job, allows it (bc_cpump_try; for_bolt rescans a scan made for a stock
 * distccd).  1 if pumping.
 */
static int
pump_mode(struct bc_rjob *rj, int want, int proto)
{
	struct bc_cjob *j = rj->job;

	return want && bc_cpump_try(&rj->pump, &rj->pump_state, &j->plan,
	    &j->argv, j->compiler_path, j->cfg->cwd, j->cfg->statedir,
	    proto == BC_PROTO_BOLT, &j->stats);
}

/*
 * Run the preprocessor into rj->doti.  GO; DONE when the job ends here
 * (the user's cpp error, or compiled locally: modules, diagnostics a
 * .dia would miss); NO_HOST when it could not be run (the fallback).
 */
static enum bc_rjob_step
preprocess(struct bc_rjob *rj)
{
	struct bc_cjob *j = rj->job;
	struct bc_buf *doti = &rj->doti;
	char err[BC_ERRLEN];
	int r, st;

	j->cpp_start = (int64_t)time(NULL);
	r = bc_cjob_preprocess(j, doti, &st, err);
	if (r != BC_OK) {
		bc_warn(r == BC_ERR_LIMIT ? "cannot read preprocessed output: "
		    "%s" : "cannot run the preprocessor: %s", err);
		rj->tally.no_host_why = r == BC_ERR_LIMIT ? "cpp-output" :
		    "cpp-run";
		return BC_RJOB_NO_HOST;
	}
	if (st != 0) {
		/* The user's error, not the farm's. */
		bc_cjob_put_stderr(&j->cpp_err);
		bc_cstats_add(&j->stats, "jobs_cpp_error", 1);
		return done(rj, bc_local_exit_code(st));
	}
	if (contains(bc_buf_data(doti), bc_buf_len(doti), "@import") ||
	    contains(bc_buf_data(doti), bc_buf_len(doti),
	    "#pragma clang module import"))
		return done(rj, bc_cjob_run_local(j, "modules"));
	if (j->plan.dia_file != NULL && bc_buf_len(&j->cpp_err) > 0) {
		/* The .dia would miss the preprocessor's diagnostics. */
		return done(rj, bc_cjob_run_local(j, "cpp-diagnostics"));
	}
	return BC_RJOB_GO;
}

/*
 * Plain mode's local half of a job sent in proto, once per job: direct
 * mode's lookup (toward a boltccd with the cache on, when the caches were
 * not asked yet), then the preprocessor.  As preprocess; DONE also for a
 * direct-mode hit, written out.
 */
static enum bc_rjob_step
local_half(struct bc_rjob *rj, int proto)
{
	struct bc_cjob *j = rj->job;
	enum bc_rjob_step step;

	if (rj->local_done)
		return BC_RJOB_GO;
	if (!rj->looked_up && proto == BC_PROTO_BOLT && j->cfg->cache &&
	    bc_jobcache_direct(j, &rj->hl, &rj->rc))
		return BC_RJOB_DONE;
	step = preprocess(rj);
	if (step == BC_RJOB_GO)
		rj->local_done = 1;
	return step;
}

/*
 * The local half before a slot is taken, when every host would get the
 * same request: the pump scan, or plain mode's local half.  Done first,
 * it overlaps the other jobs' compiles instead of holding a slot idle,
 * and a direct hit needs no slot at all.  NEXT: on to the hosts.
 */
static enum bc_rjob_step
early_half(struct bc_rjob *rj)
{
	struct bc_cjob *j = rj->job;
	enum bc_rjob_step step;
	int proto = 0, want = 0;

	if (!bc_rjob_host_independent(rj, &proto, &want) ||
	    pump_mode(rj, want, proto))
		return BC_RJOB_NEXT;
	/* plain mode, whichever host */
	if (j->plan.pump_only != NULL &&
	    !bc_rjob_pump_gives_local(j->plan.pump_only, 0, proto))
		return done(rj, bc_cjob_run_local(j, j->plan.pump_only));
	step = local_half(rj, proto);
	return step == BC_RJOB_GO ? BC_RJOB_NEXT : step;
}

/* --------------------------------------------------------------------- */
/* one host */

int
bc_rjob_next_host(struct bc_rjob *rj, struct bc_slot *slot)
{
	const struct bc_cconf *cfg = rj->job->cfg;
	char err[BC_ERRLEN];
	int r;

	r = bc_hostsel_pick(&rj->hl, cfg->lockdir, rj->tried,
	    cfg->backoff_period, (int64_t)cfg->io_timeout * 1000, slot, err);
	if (r != BC_OK) {
		rj->tally.no_host_why = r == BC_ERR_BUSY ? "no-free-slot" :
		    "no-usable-host";
		bc_debug("%s", err);
		return r;
	}
	rj->tried[slot->host_index] = 1;
	return BC_OK;
}

/* A host failure the fallback names: the last one. */
static void
remember_failure(struct bc_rjob_tally *t, const struct bc_host *h,
    const char *why, const char *err)
{
	t->host_failed = 1;
	free(t->last_host);
	t->last_host = xstrdup(bc_host_label(h));
	t->last_why = why;
	snprintf(t->last_err, sizeof(t->last_err), "%s", err);
}

void
bc_rjob_note_failure(struct bc_rjob *rj, const struct bc_host *h, int r,
    const char *why, char *err)
{
	struct bc_cjob *j = rj->job;
	const struct bc_cconf *cfg = j->cfg;
	const char *fault;

	if (bc_ssh_explain(h, err) > 0)	/* ssh: the remote side's why */
		why = "ssh-remote-command";
	bc_cstats_add(&j->stats, "host_failures", 1);
	if ((fault = bc_remote_fault_counter(r, why)) != NULL)
		bc_cstats_add(&j->stats, fault, 1);
	bc_cstats_add2(&j->stats, "host_failure_by_reason", why, 1);
	/* A boltccd that refused this one job (EROR: policy, busy) is alive
	 * and serves other jobs: no backoff mark. */
	if (cfg->backoff_period > 0 && r != BC_ERR_DENIED &&
	    r != BC_ERR_BUSY) {
		char *mark = xasprintf("%s%s%s", why,
		    err[0] != '\0' ? ": " : "", err);

		(void)bc_hostsel_backoff_mark_why(cfg->lockdir, h, mark);
		free(mark);
	}
	remember_failure(&rj->tally, h, why, err);
	bc_info("failed to distribute %s to %s: %s (%s)", j->plan.source,
	    bc_host_label(h), why, err);
}

/* Pick the wire protocol for a host (probing it once if needed). */
static int
choose_proto(struct bc_cjob *j, const struct bc_host *h, int *proto,
    char *err)
{
	int bolt = -1, r;

	if (h->bolt == BC_BOLT_YES)
		bolt = 1;
	else if (h->bolt == BC_BOLT_NO)
		bolt = 0;
	else {
		bolt = bc_remote_probe_cached(j->cfg->statedir, h);
		if (bolt < 0) {
			r = bc_remote_probe(h, BC_CONNECT_TIMEOUT_MS,
			    j->cfg->io_timeout * 1000, &bolt, err);
			if (r != BC_OK) {
				bc_cstats_add(&j->stats, "probe_failed", 1);
				return r;
			}
			bc_cstats_add(&j->stats, bolt ? "probe_bolt" :
			    "probe_distcc", 1);
			bc_remote_probe_remember(j->cfg->statedir, h, bolt);
		}
	}
	*proto = bc_rjob_host_proto(h, bolt);
	return BC_OK;
}

/*
 * What the job is toward t->h: run here ("localhost" in the list), or
 * the protocol and pump or plain mode.  GO; NEXT when the host cannot
 * take it (not probed, no .dia, a pump-only job in plain mode).
 */
static enum bc_rjob_step
choose_mode(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;
	const struct bc_host *h = t->h;
	int r;

	if (h->kind == BC_HOST_LOCAL) {
		/* "localhost" in the list: run here, in its slot. */
		bc_cstats_add(&j->stats, "jobs_local", 1);
		bc_cstats_add2(&j->stats, "local_by_reason", "localhost", 1);
		return done(rj, bc_cjob_exec_local(j));
	}
	if (h->kind != BC_HOST_TCP && h->kind != BC_HOST_SSH) {
		bc_info("skipping %s: not a TCP or SSH host", bc_host_label(h));
		return BC_RJOB_NEXT;
	}
	r = choose_proto(j, h, &t->proto, t->err);
	if (r != BC_OK) {
		bc_rjob_note_failure(rj, h, r, "probe-connect", t->err);
		return BC_RJOB_NEXT;
	}
	if (j->plan.dia_file != NULL && t->proto != BC_PROTO_BOLT) {
		/* A stock distccd cannot return a .dia. */
		bc_info("skipping %s for %s: --serialize-diagnostics "
		    "needs a boltccd", bc_host_label(h), j->plan.source);
		rj->tally.dia_skipped = 1;
		return BC_RJOB_NEXT;
	}
	t->pumping = pump_mode(rj, bc_rjob_wants_pump(j->cfg, h, t->proto),
	    t->proto);
	if (t->proto == 3 && !t->pumping)
		t->proto = 2;
	if (j->plan.pump_only != NULL &&
	    !bc_rjob_pump_gives_local(j->plan.pump_only, t->pumping,
	    t->proto)) {
		/* only a pump compile gives the local object */
		bc_info("skipping %s for %s: %s needs pump mode there",
		    bc_host_label(h), j->plan.source, j->plan.pump_only);
		rj->tally.pump_skipped = 1;
		return BC_RJOB_NEXT;
	}
	return BC_RJOB_GO;
}

/* After a miss: move the job to the key's owner if it has a free slot
 * now (and is not much slower), so that the next client finds the result
 * where it looks first. */
static void
prefer_owner(struct bc_rjob *rj, size_t owner, struct bc_slot *slot)
{
	const struct bc_cconf *cfg = rj->job->cfg;
	const struct bc_hostlist *hl = &rj->hl;
	struct bc_slot os = BC_SLOT_INIT;
	unsigned char *only = xcalloc(hl->n, 1);
	char err[BC_ERRLEN];

	memset(only, 1, hl->n);
	only[owner] = 0;
	if (bc_hostsel_owner_ok(cfg->lockdir, &hl->v[owner], slot->host) &&
	    bc_hostsel_pick(hl, cfg->lockdir, only, cfg->backoff_period, 0,
	    &os, err) == BC_OK) {
		bc_debug("sending to the key's owner %s",
		    bc_host_label(os.host));
		rj->tried[slot->host_index] = 0;
		bc_hostsel_release(slot);
		*slot = os;
		rj->tried[owner] = 1;
	}
	free(only);
}

/*
 * The caches, asked once per job toward a boltccd with the cache on
 * (client/jobcache.h).  DONE on a hit written out; else GO, the job
 * perhaps moved to the key's owner.
 */
static enum bc_rjob_step
ask_caches(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;
	ssize_t owner = -1;
	int hit;

	if (rj->looked_up || t->proto != BC_PROTO_BOLT || !j->cfg->cache)
		return BC_RJOB_GO;
	rj->looked_up = 1;
	rj->ident[0] = '\0';
	hit = t->pumping ? bc_jobcache_pump(j, &rj->hl, &rj->pump,
	    t->slot.host_index, &owner, &rj->inline_lookup, &rj->rc) :
	    bc_jobcache_plain(j, &rj->hl, &rj->doti, t->slot.host_index,
	    rj->ident, &owner, &rj->inline_lookup, &rj->rc);
	if (hit)
		return BC_RJOB_DONE;
	if (owner >= 0 && (size_t)owner != t->slot.host_index &&
	    !rj->tried[owner])
		prefer_owner(rj, (size_t)owner, &t->slot);
	t->h = t->slot.host;
	return BC_RJOB_GO;
}

/*
 * Send the job to t->h and read the whole reply into t->rep; the slot is
 * released as soon as the host answered.  GO; NEXT after a failed
 * exchange (noted).
 */
static enum bc_rjob_step
send_job(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;
	const struct bc_cconf *cfg = j->cfg;
	struct bc_remote_job req;
	struct bc_remote_counts counts;
	int r;

	memset(&req, 0, sizeof(req));
	req.host = t->h;
	req.proto = t->proto;
	req.argv = &j->plan.remote_argv;
	req.cwd = cfg->cwd;
	req.flags = j->plan.dia_file != NULL ? BC_FLAG_WANT_DIA : 0;
	if (rj->looked_up && rj->ident[0] != '\0') {
		req.identity = rj->ident;
		req.flags |= rj->inline_lookup ? BC_FLAG_HIT_MARK |
		    BC_FLAG_ORIGIN : BC_FLAG_LOOKED_UP;
	}
	req.doti = bc_buf_data(&rj->doti);
	req.doti_len = bc_buf_len(&rj->doti);
	req.connect_timeout_ms = BC_CONNECT_TIMEOUT_MS;
	req.io_timeout_ms = cfg->io_timeout * 1000;
	req.statedir = cfg->statedir;
	bc_reply_init(&t->rep);
	bc_cjob_note_state(j, t->h->name, t->slot.index);
	t->sent_at = bc_now_ms();
	r = t->pumping ? bc_cpump_compile(&rj->pump, t->h, t->proto,
	    req.connect_timeout_ms, req.io_timeout_ms, &t->rep, &counts,
	    &t->why, t->err) : bc_remote_compile(&req, &t->rep, &counts,
	    &t->why, t->err);
	if (t->pumping)
		bc_cstats_add(&j->stats, "jobs_pump", 1);
	bc_hostsel_release(&t->slot);
	bc_cstats_add(&j->stats, "bytes_sent", (long long)counts.sent);
	bc_cstats_add(&j->stats, "bytes_received", (long long)counts.received);
	if (r != BC_OK) {
		bc_reply_free(&t->rep);
		bc_rjob_note_failure(rj, t->h, r, t->why, t->err);
		return BC_RJOB_NEXT;
	}
	return BC_RJOB_GO;
}

/* A successful remote compile (or hit): write it out, count it. */
static enum bc_rjob_step
write_result(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;
	const struct bc_cconf *cfg = j->cfg;
	int r;

	r = bc_cjob_write_outputs(j, &t->rep, t->err);
	if (r == BC_OK && t->pumping)
		r = bc_cpump_write_deps(&rj->pump, &t->rep, t->err);
	if (r == BC_OK && t->proto == BC_PROTO_BOLT && rj->looked_up)
		bc_jobcache_put_local(j, j->cache_key, &t->rep);
	if (r != BC_OK) {
		bc_reply_free(&t->rep);
		fprintf(stderr, "boltcc: error: %s\n", t->err);
		return done(rj, BC_EXIT_IO_ERROR);
	}
	bc_cjob_replay(j, &t->rep);
	bc_hostsel_backoff_clear(cfg->lockdir, t->h);
	if (!t->rep.cache_hit) {
		bc_cstats_add(&j->stats, "jobs_remote_ok", 1);
		if (t->pumping)
			bc_cstats_add(&j->stats, "jobs_remote_pump", 1);
		if (rj->tally.host_failed)	/* after a fault */
			bc_cstats_add(&j->stats, "retries_other_host", 1);
		bc_hostsel_observe(cfg->lockdir, t->h,
		    (bc_now_ms() - t->sent_at) * 1000);
	}
	bc_reply_free(&t->rep);
	if (t->proto == BC_PROTO_BOLT && rj->looked_up && !t->pumping)
		bc_jobcache_record_direct(j, &rj->doti);
	return done(rj, 0);
}

/* A farm-side failure status (bc_rjob_farm_failure): the host answered,
 * so no backoff mark, but another host is tried. */
static enum bc_rjob_step
farm_failed(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;
	const char *why;
	char esc[200];
	size_t n = bc_buf_len(&t->rep.serr);

	bc_log_escape(bc_buf_data(&t->rep.serr), n < 150 ? n : 150, esc,
	    sizeof(esc));
	bc_seterr(t->err, BC_ERR_COMPILER, "remote status 0x%x: %s",
	    (unsigned)t->rep.status, esc);
	why = WIFSIGNALED(t->rep.status) ? "remote-signal" :
	    "remote-daemon-error";
	bc_reply_free(&t->rep);
	remember_failure(&rj->tally, t->h, why, t->err);
	bc_cstats_add2(&j->stats, "host_failure_by_reason", why, 1);
	bc_info("%s on %s: %s", j->plan.source, bc_host_label(t->h), t->err);
	return BC_RJOB_NEXT;
}

/* A genuine compile error: shown as is with DISTCC_SKIP_LOCAL_RETRY,
 * else retried locally (only the local compiler's messages are shown). */
static enum bc_rjob_step
compile_error(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;
	const struct bc_cconf *cfg = j->cfg;
	int rc;

	bc_hostsel_backoff_clear(cfg->lockdir, t->h);
	bc_cstats_add(&j->stats, "jobs_remote_error", 1);
	if (t->pumping)
		bc_cstats_add(&j->stats, "jobs_remote_pump", 1);
	if (cfg->skip_local_retry) {
		/* Xcode reads the .dia on failure too (xcode.md 7.6). */
		if (j->plan.dia_file != NULL && bc_buf_len(&t->rep.dia) > 0 &&
		    bc_cjob_write_file(j->plan.dia_file, &t->rep.dia,
		    t->err) != BC_OK)
			bc_warn("%s", t->err);
		bc_cjob_replay(j, &t->rep);
		rc = bc_local_exit_code((int)t->rep.status);
		bc_reply_free(&t->rep);
		return done(rj, rc);
	}
	bc_reply_free(&t->rep);
	bc_cstats_add(&j->stats, "jobs_local", 1);
	bc_cstats_add2(&j->stats, "local_by_reason", "retry-after-error", 1);
	return done(rj, bc_cjob_exec_in_local_slot(j, rj->hl.localslots));
}

/* The reply in t->rep: a result, a failure of the farm, or the user's
 * compile error. */
static enum bc_rjob_step
take_reply(struct bc_rjob *rj, struct rjob_try *t)
{
	struct bc_cjob *j = rj->job;

	if (t->rep.status == 0 && j->plan.dia_file != NULL &&
	    bc_buf_len(&t->rep.dia) == 0) {
		/* clang always writes a non-empty .dia: the host did not
		 * make one, and Xcode needs it. */
		bc_info("%s returned no diagnostics file for %s",
		    bc_host_label(t->h), j->plan.source);
		bc_reply_free(&t->rep);
		rj->tally.dia_skipped = 1;
		return BC_RJOB_NEXT;
	}
	if (rj->inline_lookup == 1) {
		/* the compile request was the lookup: count it once */
		rj->inline_lookup = 2;
		if (t->rep.cache_hit)
			bc_jobcache_count_hit(j, &t->rep);
		else
			bc_cstats_add(&j->stats, "cache_misses", 1);
	}
	if (t->rep.status == 0)
		return write_result(rj, t);
	if (bc_rjob_farm_failure(t->rep.status))
		return farm_failed(rj, t);
	return compile_error(rj, t);
}

/* One host: a slot, the mode, the local half and the caches if not done
 * yet, send, the reply. */
static enum bc_rjob_step
try_host(struct bc_rjob *rj)
{
	struct bc_slot none = BC_SLOT_INIT;
	struct rjob_try t;
	enum bc_rjob_step step;

	memset(&t, 0, sizeof(t));
	t.slot = none;
	if (bc_rjob_next_host(rj, &t.slot) != BC_OK)
		return BC_RJOB_NO_HOST;
	t.h = t.slot.host;
	step = choose_mode(rj, &t);
	if (step == BC_RJOB_GO && !t.pumping)
		step = local_half(rj, t.proto);
	if (step == BC_RJOB_GO)
		step = ask_caches(rj, &t);
	if (step == BC_RJOB_GO)
		step = send_job(rj, &t);
	if (step == BC_RJOB_GO)
		step = take_reply(rj, &t);
	bc_hostsel_release(&t.slot);
	return step;
}

/* --------------------------------------------------------------------- */
/* no host left */

static const char *
describe_no_host(const char *why)
{
	if (strcmp(why, "no-free-slot") == 0)
		return "every host slot stayed busy";
	if (strcmp(why, "no-usable-host") == 0)
		return "no usable host (all down, backed off or failed)";
	return why;
}

/* The local fallback (or, with DISTCC_FALLBACK=0, the error). */
static void
fallback(struct bc_rjob *rj)
{
	struct bc_cjob *j = rj->job;
	const struct bc_rjob_tally *t = &rj->tally;
	const char *reason, *last;
	enum bc_rjob_verdict v;

	v = bc_rjob_verdict(t, j->cfg->fallback, j->plan.pump_only, &reason);
	if (v == BC_RJOB_PUMP_ONLY) {
		rj->rc = bc_cjob_run_local(j, reason);
		return;
	}
	last = t->last_err[0] != '\0' ? t->last_err : t->last_why;
	if (v == BC_RJOB_FAIL) {
		if (t->host_failed)
			fprintf(stderr, "boltcc: error: failed to distribute %s "
			    "to %s: %s; not compiling locally "
			    "(DISTCC_FALLBACK=0)\n", j->plan.source,
			    t->last_host, last);
		else
			fprintf(stderr, "boltcc: error: cannot distribute %s: "
			    "%s; not compiling locally (DISTCC_FALLBACK=0)\n",
			    j->plan.source, t->dia_skipped ?
			    "--serialize-diagnostics needs a boltccd host" :
			    describe_no_host(t->no_host_why));
		bc_cstats_add(&j->stats, "jobs_failed_no_fallback", 1);
		rj->rc = BC_EXIT_NO_HOSTS;
		return;
	}
	if (t->host_failed)
		fprintf(stderr, "boltcc: warning: failed to distribute %s to "
		    "%s: %s; compiling locally\n", j->plan.source,
		    t->last_host, last);
	else
		bc_info("no host available for %s (%s); compiling locally",
		    j->plan.source, t->no_host_why);
	rj->rc = v == BC_RJOB_LOCAL ? bc_cjob_run_local(j, reason) :
	    bc_cjob_run_fallback(j, reason, rj->hl.localslots);
}

/* --------------------------------------------------------------------- */

int
bc_rjob_run(struct bc_cjob *j)
{
	struct bc_rjob rj;
	enum bc_rjob_step step;
	int rc;

	bc_rjob_init(&rj, j);
	if (bc_rjob_start(&rj) == BC_RJOB_GO) {
		step = early_half(&rj);
		while (step == BC_RJOB_NEXT)
			step = try_host(&rj);
		if (step == BC_RJOB_NO_HOST)
			fallback(&rj);
		/* distccmon's record of the job (only when the fallback's
		 * exec failed or the job ended here) */
		if (j->binstate)
			bc_binstate_clear(j->cfg->statedir);
	}
	rc = rj.rc;
	bc_rjob_free(&rj);
	return rc;
}
