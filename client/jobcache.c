/*
 * jobcache.c - asking the caches for one job: the local tier, the key's
 * owner, every BOLT host (jobcache.h, doc/cache.md).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/limits.h"
#include "common/log.h"
#include "cache/key.h"
#include "client/direct.h"
#include "client/hitcache.h"
#include "client/hostsel.h"
#include "client/jobcache.h"
#include "client/lookup.h"
#include "client/pumpx.h"
#include "client/remote.h"

unsigned char *
bc_jobcache_candidates(const struct bc_cjob *j, const struct bc_hostlist *hl)
{
	unsigned char *cand = xcalloc(hl->n > 0 ? hl->n : 1, 1);
	size_t i;

	for (i = 0; i < hl->n; i++) {
		const struct bc_host *h = &hl->v[i];

		if (h->kind == BC_HOST_LOCAL || h->down || h->auth ||
		    h->limit <= 0 || h->bolt == BC_BOLT_NO)
			continue;
		if (h->bolt != BC_BOLT_YES &&
		    bc_remote_probe_cached(j->cfg->statedir, h) != 1)
			continue;
		if (bc_hostsel_backed_off(j->cfg->lockdir, h,
		    j->cfg->backoff_period))
			continue;
		cand[i] = 1;
	}
	return cand;
}

/* After asking hosts: back off the ones that failed, count the bytes. */
static void
lookup_done(struct bc_cjob *j, const struct bc_hostlist *hl,
    const struct bc_lookup_result *res)
{
	bc_lookup_note_failed(hl, res, j->cfg->lockdir,
	    j->cfg->backoff_period, &j->stats);
	bc_cstats_add(&j->stats, "bytes_sent", (long long)res->sent);
	bc_cstats_add(&j->stats, "bytes_received", (long long)res->received);
}

/*
 * Ask the key's owner, which knows where its keys went (doc/cache.md,
 * "Locations"), telling it the job goes to host `at` (-1: not chosen
 * yet) if nobody has it; every candidate only when the owner cannot tell.
 * Host failures are noted and the bytes counted.  BC_OK: a hit in rep.
 */
static int
ask_farm(struct bc_cjob *j, const struct bc_hostlist *hl,
    unsigned char *cand, ssize_t owner, ssize_t at, const char *key,
    struct bc_reply *rep, struct bc_lookup_result *res, char *err)
{
	int r;

	r = bc_lookup_locate(hl, cand, (size_t)owner, at, key,
	    bc_cjob_origin(j), BC_CONNECT_TIMEOUT_MS,
	    j->cfg->io_timeout * 1000, rep, res, err);
	if (r == BC_ERR_NOTSUP) {
		bc_debug("cache: %.16s: %s; asking every host", key, err);
		if (res->nfailed > 0)
			cand[owner] = 0;	/* it just failed */
		lookup_done(j, hl, res);
		r = bc_lookup_fanout(hl, cand, owner, key, bc_cjob_origin(j),
		    BC_CONNECT_TIMEOUT_MS, j->cfg->io_timeout * 1000, rep, res,
		    err);
	}
	lookup_done(j, hl, res);
	return r;
}

/*
 * The routing shared by every cache lookup of a job with this key: finds
 * the key's owner among the BOLT hosts (*owner, -1 if none), and when the
 * only cache to ask is the host the job goes to (`here`), says so (*inl:
 * the compile request itself asks, FLAG_HIT_MARK).  Otherwise asks the
 * farm (ask_farm).  Returns 1 with *rep and *res filled on a
 * hit; 0 for no lookup, an inline one, or a miss (counted).
 */
static int
lookup_route(struct bc_cjob *j, const struct bc_hostlist *hl,
    const char *key, size_t here, ssize_t *owner, int *inl,
    struct bc_reply *rep, struct bc_lookup_result *res)
{
	char err[BC_ERRLEN];
	unsigned char *cand = bc_jobcache_candidates(j, hl);
	size_t i, ncand = 0;
	int r;

	*owner = bc_lookup_owner(hl, cand, key);
	if (*owner < 0 || strcmp(key, j->missed_key) == 0) {
		/* no BOLT host, or direct mode asked for this key already */
		free(cand);
		return 0;
	}
	bc_cstats_add(&j->stats, "cache_lookups", 1);
	for (i = 0; i < hl->n; i++)
		ncand += cand[i];
	if (ncand == 1 && (size_t)*owner == here) {
		/* The one cache to ask is the host the job goes to: the
		 * compile request asks it (FLAG_HIT_MARK), which saves a
		 * connection and a round trip on every miss. */
		free(cand);
		*inl = 1;
		return 0;
	}
	r = ask_farm(j, hl, cand, *owner, (ssize_t)here, key, rep, res, err);
	free(cand);
	if (r != BC_OK) {
		bc_debug("cache: %.16s: %s", key, err);
		bc_cstats_add(&j->stats, "cache_misses", 1);
		return 0;
	}
	return 1;
}

/*
 * The local tier (client/hitcache.h): the outputs of key for this very
 * command in this directory, if this machine kept them.  1 with rep
 * filled (initialised here) on a hit.
 */
static int
local_get(struct bc_cjob *j, const char *key, struct bc_reply *rep)
{
	char lkey[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int r;

	if (j->cfg->local_cache_size == 0 || j->cfg->cwd == NULL)
		return 0;
	bc_hitcache_key(key, j->cfg->cwd, &j->argv, lkey);
	bc_reply_init(rep);
	r = bc_hitcache_get(j->cfg->hitdir, lkey, rep, err);
	if (r == BC_OK) {
		bc_debug("local cache hit %.16s for %s", key, j->plan.source);
		bc_cstats_add(&j->stats, "cache_hits_local", 1);
		return 1;
	}
	bc_reply_free(rep);
	if (r == BC_ERR_CORRUPT) {
		bc_warn("%s", err);
		bc_cstats_add(&j->stats, "local_cache_corrupt", 1);
	}
	return 0;
}

void
bc_jobcache_put_local(struct bc_cjob *j, const char *key,
    const struct bc_reply *rep)
{
	char lkey[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	if (j->cfg->local_cache_size == 0 || j->cfg->cwd == NULL ||
	    key[0] == '\0' || rep->status != 0)
		return;
	bc_hitcache_key(key, j->cfg->cwd, &j->argv, lkey);
	if (bc_hitcache_put(j->cfg->hitdir, j->cfg->local_cache_size, lkey,
	    rep, err) != BC_OK)
		bc_debug("local cache: %s", err);
}

void
bc_jobcache_count_hit(struct bc_cjob *j, const struct bc_reply *rep)
{
	bc_cstats_add(&j->stats, "cache_hits", 1);
	if (rep->has_origin && rep->origin[0] != '\0' &&
	    strcmp(rep->origin, bc_cjob_origin(j)) != 0)
		bc_cstats_add(&j->stats, "cache_hits_other_checkout", 1);
}

/*
 * A hit whose outputs were written (r, err: how that went): replay its
 * messages, count it, free rep; *rc is the job's exit code, also
 * returned.
 */
static int
hit_done(struct bc_cjob *j, struct bc_reply *rep, int r, const char *err,
    int *rc)
{
	if (r != BC_OK) {
		bc_reply_free(rep);
		fprintf(stderr, "boltcc: error: %s\n", err);
		return *rc = BC_EXIT_IO_ERROR;
	}
	bc_cjob_replay(j, rep);
	bc_jobcache_count_hit(j, rep);
	bc_reply_free(rep);
	return *rc = 0;
}

void
bc_jobcache_record_direct(struct bc_cjob *j, const struct bc_buf *doti)
{
	struct bc_buf dotd = BC_BUF_INIT(BC_MAX_DOTD);
	struct bc_buf cpperr = BC_BUF_INIT(BC_MAX_STDERR);
	char err[BC_ERRLEN];

	if (j->direct.path == NULL || j->cache_key[0] == '\0')
		return;
	if (j->plan.dep_wanted && j->plan.dep_file != NULL &&
	    bc_read_file(j->plan.dep_file, BC_MAX_DOTD, &dotd, NULL) != BC_OK)
		goto out;
	(void)bc_buf_put(&cpperr, bc_buf_data(&j->cpp_err),
	    bc_buf_len(&j->cpp_err));
	if (bc_direct_put(&j->direct, j->cache_key, bc_buf_data(doti),
	    bc_buf_len(doti), &dotd, &cpperr, j->cpp_start, err) != BC_OK)
		bc_debug("no direct mode manifest: %s", err);
out:
	bc_buf_free(&dotd);
	bc_buf_free(&cpperr);
}

int
bc_jobcache_plain(struct bc_cjob *j, const struct bc_hostlist *hl,
    const struct bc_buf *doti, size_t here, char ident[BC_HASH_HEXLEN + 1],
    ssize_t *owner, int *inl, int *rc)
{
	struct bc_cache_key_in in;
	struct bc_lookup_result res;
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	*owner = -1;
	*inl = 0;
	ident[0] = '\0';
	if (!bc_cjob_identity(j))
		return 0;
	memcpy(ident, j->ident, sizeof(j->ident));
	memset(&in, 0, sizeof(in));
	in.identity = ident;
	in.argv = j->plan.remote_argv.v;
	in.argc = j->plan.remote_argv.n;
	in.cdir = j->cfg->cwd;
	in.flags = j->plan.dia_file != NULL ? BC_FLAG_WANT_DIA : 0;
	in.doti = bc_buf_data(doti);
	in.doti_len = bc_buf_len(doti);
	bc_cache_key(&in, key);
	memcpy(j->cache_key, key, sizeof(key));
	if (local_get(j, key, &rep)) {
		if (hit_done(j, &rep, bc_cjob_write_outputs(j, &rep, err), err,
		    rc) == 0)
			bc_jobcache_record_direct(j, doti);
		return 1;
	}
	if (!lookup_route(j, hl, key, here, owner, inl, &rep, &res))
		return 0;
	if (j->plan.dia_file != NULL && bc_buf_len(&rep.dia) == 0) {
		bc_reply_free(&rep);
		bc_cstats_add(&j->stats, "cache_misses", 1);
		return 0;
	}
	bc_debug("cache hit %.16s on %s for %s", key,
	    bc_host_label(&hl->v[res.hit_host]), j->plan.source);
	bc_jobcache_put_local(j, key, &rep);
	if (hit_done(j, &rep, bc_cjob_write_outputs(j, &rep, err), err, rc) ==
	    0)
		bc_jobcache_record_direct(j, doti);
	return 1;
}

int
bc_jobcache_pump(struct bc_cjob *j, const struct bc_hostlist *hl,
    struct bc_cpump *p, size_t here, ssize_t *owner, int *inl, int *rc)
{
	struct bc_lookup_result res;
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int r;

	*owner = -1;
	*inl = 0;
	if (!bc_cjob_identity(j) || bc_cpumpx_key(p, j->ident, key) != BC_OK)
		return 0;
	memcpy(j->cache_key, key, sizeof(key));
	if (local_get(j, key, &rep)) {
		r = bc_cjob_write_outputs(j, &rep, err);
		if (r == BC_OK)
			r = bc_cpump_write_deps(p, &rep, err);
		(void)hit_done(j, &rep, r, err, rc);
		return 1;
	}
	p->identity = j->ident;	/* the daemon refuses a different compiler */
	r = lookup_route(j, hl, key, here, owner, inl, &rep, &res);
	/* the pump request asks itself (inline) or says it was asked */
	p->flags = (p->flags & BC_FLAG_WANT_DIA) | (*inl ? BC_FLAG_HIT_MARK |
	    BC_FLAG_ORIGIN : *owner >= 0 ? BC_FLAG_LOOKED_UP : 0);
	if (!r)
		return 0;
	bc_debug("cache hit %.16s (pump) on %s for %s", key,
	    bc_host_label(&hl->v[res.hit_host]), j->plan.source);
	r = bc_cpumpx_unmap(p, &rep, err);
	if (r == BC_OK)
		r = bc_cjob_write_outputs(j, &rep, err);
	if (r == BC_OK)
		r = bc_cpump_write_deps(p, &rep, err);
	if (r == BC_OK)
		bc_jobcache_put_local(j, key, &rep);
	(void)hit_done(j, &rep, r, err, rc);
	return 1;
}

int
bc_jobcache_direct(struct bc_cjob *j, const struct bc_hostlist *hl, int *rc)
{
	struct bc_buf dotd = BC_BUF_INIT(BC_MAX_DOTD);
	struct bc_buf cpperr = BC_BUF_INIT(BC_MAX_STDERR);
	struct bc_lookup_result res;
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	unsigned char *cand;
	ssize_t owner;
	int r, done = 0;

	if (!bc_cjob_identity(j) || j->cfg->cwd == NULL)
		return 0;
	bc_direct_init(&j->direct, j->cfg->statedir, j->ident, j->cfg->cwd,
	    &j->plan.cpp_argv, &j->plan.remote_argv, j->cfg->cpp_env);
	if (bc_direct_get(&j->direct, key, &dotd, &cpperr) != BC_OK ||
	    (j->plan.dia_file != NULL && bc_buf_len(&cpperr) > 0))
		goto out;
	if (local_get(j, key, &rep))
		goto hit;
	cand = bc_jobcache_candidates(j, hl);
	owner = bc_lookup_owner(hl, cand, key);
	if (owner < 0) {
		free(cand);
		goto out;
	}
	bc_cstats_add(&j->stats, "cache_lookups", 1);
	r = ask_farm(j, hl, cand, owner, -1, key, &rep, &res, err);
	free(cand);
	if (r != BC_OK || (j->plan.dia_file != NULL &&
	    bc_buf_len(&rep.dia) == 0)) {
		if (r == BC_OK)
			bc_reply_free(&rep);
		bc_cstats_add(&j->stats, "cache_misses", 1);
		memcpy(j->missed_key, key, sizeof(key));
		goto out;
	}
	bc_debug("cache hit %.16s (direct) for %s", key, j->plan.source);
	bc_jobcache_put_local(j, key, &rep);
hit:
	done = 1;
	r = bc_cjob_write_outputs(j, &rep, err);
	if (r == BC_OK && j->plan.dep_wanted && j->plan.dep_file != NULL &&
	    bc_buf_len(&dotd) > 0)
		r = bc_cjob_write_file(j->plan.dep_file, &dotd, err);
	if (r == BC_OK)		/* the preprocessor's messages */
		bc_cjob_put_stderr(&cpperr);
	if (hit_done(j, &rep, r, err, rc) == 0)
		bc_cstats_add(&j->stats, "cache_hits_direct", 1);
out:
	bc_buf_free(&dotd);
	bc_buf_free(&cpperr);
	return done;
}
