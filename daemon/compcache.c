/*
 * compcache.c - the artifact cache around a compile in a worker
 * (doc/cache.md): this daemon's compiler identity and the job's key,
 * a hit served before compiling, the wait for an identical job in
 * flight, the result stored after the reply (the blob here, its row by
 * the cache keeper), a mapped key's outputs tokenized (pathmap.h).
 * Shared with job.c through job_int.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "cache/pathmap.h"
#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "job_int.h"
#include "keeper.h"
#include "pumpx.h"

int
bc_compcache_open(struct job *j)
{
	char e[BC_ERRLEN];

	if (j->cache != NULL)
		return BC_OK;
	if (j->conf->cache_dir == NULL)
		return BC_ERR_NOENT;
	if (bc_cache_open_lazy(j->conf->cache_dir, j->conf->cache_max,
	    &j->cache, e) != BC_OK) {
		bc_warn_once("cache disabled for this job: %s", e);
		j->cache = NULL;
		return BC_ERR_IO;
	}
	return BC_OK;
}

/* A BOLT pump job's keys: mapped when its paths allow (pathmap.h), then
 * also the exact one; none yet while a header map's contents are
 * missing (j->key_deferred: computed again once the files came). */
void
bc_compcache_pump_keys(struct job *j, const struct bc_request *req)
{
	j->key_exact[0] = '\0';
	j->key_deferred = bc_pumpx_key(&j->pm, req, j->identity,
	    j->conf->cache_dir, 0, j->key, &j->key_mapped);
	if (!j->key_deferred && j->key_mapped)
		(void)bc_pumpx_key(&j->pm, req, j->identity,
		    j->conf->cache_dir, 1, j->key_exact, NULL);
}

/*
 * Compute this daemon's identity of the compiler at path and the key of
 * the request.  A client that named another compiler identity is refused
 * (BC_ERR_DENIED, why set): its compiler differs from ours, so our object
 * would not be the one it asked for.  Any other problem only leaves the
 * job uncached (j->key empty).
 */
int
bc_compcache_prepare(struct job *j, const struct bc_request *req,
    const char *path, char *why)
{
	struct bc_cache_key_in in;
	char e[BC_ERRLEN], *memo;
	int r;

	j->key[0] = '\0';
	if (bc_compcache_open(j) != BC_OK)
		return BC_OK;
	memo = xasprintf("%s/identity", j->conf->cache_dir);
	(void)bc_mkdir_p(memo, 0700, NULL);
	r = bc_cache_identity(path, memo, j->identity, e);
	free(memo);
	if (r != BC_OK) {
		bc_warn_once("cache: no identity for %s: %s", path, e);
		(void)bc_cache_count(j->cache, "uncacheable:no-identity", 1);
		return BC_OK;
	}
	if (req->identity != NULL && strcmp(req->identity, j->identity) != 0) {
		(void)bc_cache_count(j->cache, "identity_mismatch", 1);
		return bc_seterr(why, BC_ERR_DENIED,
		    "compiler identity mismatch: the client's compiler is "
		    "%.16s..., this daemon's %s is %.16s...", req->identity,
		    path, j->identity);
	}
	memset(&in, 0, sizeof(in));
	in.identity = j->identity;
	in.argv = req->argv.v;
	in.argc = req->argv.n;
	in.cdir = req->proto == BC_PROTO_BOLT ? req->cwd : NULL;
	in.flags = req->proto == BC_PROTO_BOLT ? req->flags : 0;
	in.doti = bc_buf_data(&req->doti);
	in.doti_len = bc_buf_len(&req->doti);
	bc_cache_origin(req->proto == BC_PROTO_BOLT ? req->cwd : NULL,
	    j->origin);
	if (BC_REQ_IS_PUMP(req))	/* BOLT pump: from the manifest */
		bc_compcache_pump_keys(j, req);
	else
		bc_cache_key(&in, j->key);
	return BC_OK;
}

/* Reply with a cached result: BOLT gets the stored frames as they are,
 * a distcc client gets them expanded and encoded for its protocol. */
int
bc_compcache_send_blob(struct job *j, const struct bc_request *req,
    const struct bc_cache_blob *b, char *why)
{
	struct bc_buf out = BC_BUF_INIT(BC_BUF_CEILING);
	char e[BC_ERRLEN];
	int r;

	if (req->proto == BC_PROTO_BOLT) {
		const void *z[BC_CACHE_NSECT];
		int i;

		for (i = 0; i < BC_CACHE_NSECT; i++)
			z[i] = bc_buf_data(&b->data) + b->off[i];
		r = req->kind == BC_RQST_PUMP ? (j->pump_fetched ?
		    bc_proto3x_write_stored : bc_proto3x_write_hit)(&out,
		    req->flags, b->origin, z, b->zlen, e) :
		    bc_proto_write_reply_zstd(&out, req, b->origin, z,
		    b->zlen, e);
	} else {
		struct bc_cache_entry ce;
		struct bc_reply rep;

		r = bc_cache_blob_expand(b, &ce, e);
		bc_reply_init(&rep);
		rep.proto = req->proto;
		rep.status = 0;
		bc_buf_move(&rep.serr, &ce.serr);
		bc_buf_move(&rep.sout, &ce.sout);
		bc_buf_move(&rep.doto, &ce.obj);
		bc_buf_move(&rep.dia, &ce.dia);
		bc_buf_move(&rep.dotd, &ce.dotd);
		if (r == BC_OK)
			r = bc_proto_write_reply(&out, req, &rep, e);
		bc_reply_free(&rep);
		bc_cache_entry_free(&ce);
	}
	if (r == BC_OK)
		r = bc_job_write_all(j, &out, e);
	bc_buf_free(&out);
	if (r != BC_OK)
		return bc_seterr(why, r, "sending cached result: %s", e);
	return BC_OK;
}

/*
 * Wait for the in-flight lock on j->key (someone else compiling the same
 * job) and take it.  BC_OK held; BC_ERR_EOF client gone; another error:
 * not held (the caller goes on without it).
 */
int
bc_compcache_take_inflight(struct job *j, char *why)
{
	char e[BC_ERRLEN];
	int r;

	for (;;) {
		r = bc_cache_inflight_try(j->cache, j->key, &j->inflight_fd, e);
		if (r != BC_ERR_BUSY)
			return r;
		if (bc_job_term || bc_now_ms() >= j->deadline)
			return BC_ERR_TIMEOUT;
		if (bc_jobrun_watch(j, 10))
			return bc_seterr(why, BC_ERR_EOF, "client gone (%s) "
			    "while an identical job compiled", j->gone);
	}
}

/*
 * Before compiling: serve a hit.  Returns 1 if the job was answered from
 * the cache, 0 to compile (holding the in-flight lock when possible),
 * -1 if the client went away.
 */
int
bc_compcache_before(struct job *j, const struct bc_request *req, char *why)
{
	struct bc_cache_blob b;
	char e[BC_ERRLEN];
	int count, r;

	if (j->cache == NULL || j->key[0] == '\0')
		return 0;
	/* A mapped key whose outputs named a mapped prefix was stored under
	 * the exact key (bc_compcache_after). */
	if (j->key_mapped && j->key_exact[0] != '\0' &&
	    !bc_cache_blob_exists(j->cache, j->key) &&
	    bc_cache_blob_exists(j->cache, j->key_exact)) {
		memcpy(j->key, j->key_exact, sizeof(j->key));
		j->key_mapped = 0;
	}
	/* A key with no blob that nobody compiles: take the in-flight lock
	 * and compile, without the index (the miss is counted with the
	 * store).  Look again under the lock: it may have been stored in
	 * between. */
	if (!bc_cache_blob_exists(j->cache, j->key) &&
	    bc_cache_inflight_try(j->cache, j->key, &j->inflight_fd, e) ==
	    BC_OK) {
		if (!bc_cache_blob_exists(j->cache, j->key)) {
			j->miss_pending = 1;
			j->cache_res = BC_EV_CACHE_MISS;
			return 0;
		}
	}
	/* Lookups do not count their misses (job.c, serve_lookup): this
	 * one does, also after a client's lookup (BC_FLAG_LOOKED_UP). */
	count = BC_CACHE_COUNT_ALL;
	bc_cache_blob_init(&b);
	for (;;) {
		/* the blob alone first: a hit opens no index (the keeper
		 * counts it); anything else the index's way */
		r = bc_cache_lookup_blob(j->cache, j->key, &b, e);
		if (r != BC_OK)
			r = bc_cache_lookup(j->cache, j->key, &b, e);
		if (r == BC_OK) {
			bc_cache_inflight_release(j->cache, j->key,
			    j->inflight_fd);
			j->inflight_fd = -1;
			bc_info("client: %s cache hit %.16s %s", j->peer, j->key,
			    j->file);
			j->cache_res = BC_EV_CACHE_HIT;
			r = bc_compcache_send_blob(j, req, &b, why);
			/* the client has its answer: now the bookkeeping */
			bc_keeper_touch(j->conf->keeper_fd, j->cache, j->key,
			    count, 1, b.compile_ms, j->origin);
			bc_cache_blob_free(&b);
			return r == BC_OK ? 1 : -1;
		}
		if (r == BC_ERR_CORRUPT)
			bc_warn("cache: corrupt entry %.16s evicted: %s", j->key,
			    e);
		if (j->inflight_fd >= 0) {
			bc_cache_touch(j->cache, j->key, count, 0, 0);
			j->cache_res = BC_EV_CACHE_MISS;
			return 0;
		}
		/* Identical jobs in flight compile once: wait for the
		 * other one, then look again (counting only a hit). */
		r = bc_compcache_take_inflight(j, why);
		if (r == BC_ERR_EOF)
			return -1;
		if (r != BC_OK) {
			bc_cache_touch(j->cache, j->key, count, 0, 0);
			j->cache_res = BC_EV_CACHE_MISS;
			return 0;
		}
		if (count == BC_CACHE_COUNT_ALL) {
			/* the first look was a miss: count it now */
			bc_cache_touch(j->cache, j->key, count, 0, 0);
			count = BC_CACHE_COUNT_HITS;
		}
	}
}

/*
 * Store an entry: the blob here, its row by the cache keeper when there
 * is one (keeper.h), so that the job does not open the index; here too
 * when the record cannot be sent.
 */
static int
store(struct job *j, const struct bc_cache_entry *ce, char *e)
{
	struct bc_cache_stored row;
	int r;

	r = bc_cache_put_blob(j->cache, j->key, ce, j->miss_pending, &row, e);
	return r != BC_OK ? r : bc_keeper_store_row(j->conf->keeper_fd,
	    j->cache, &row, e);
}

/*
 * A mapped key's entry (pathmap.h): the object must not name a mapped
 * prefix (or our tree), else it is stored under the exact key; stderr,
 * the .d and the .dia's file names and messages are stored with the
 * prefixes as tokens, which the client turns into its own.  m[] receives
 * the tokenized stderr, .d and .dia.  0 to store ce as it is now, -1 not
 * to store.
 */
static int
map_entry(struct job *j, const struct bc_request *req,
    struct bc_cache_entry *ce, struct bc_buf m[3])
{
	struct bc_buf *sect[3] = { &ce->serr, &ce->dotd, &ce->dia };
	struct bc_pathmap pm;
	const char *leak;
	char e[BC_ERRLEN];
	int i, r = 0;

	bc_pathmap_init(&pm, req->argv.v, req->argv.n);
	leak = bc_pathmap_leak(&pm, j->pump_root, bc_buf_data(&ce->obj),
	    bc_buf_len(&ce->obj));
	if (leak == NULL && (bc_pathmap_tokenize(&pm, 0,
	    bc_buf_data(sect[0]), bc_buf_len(sect[0]), &m[0], e) != BC_OK ||
	    bc_pathmap_tokenize(&pm, 1, bc_buf_data(sect[1]),
	    bc_buf_len(sect[1]), &m[1], e) != BC_OK ||
	    bc_pathmap_tokenize_dia(&pm, bc_buf_data(sect[2]),
	    bc_buf_len(sect[2]), &m[2], e) != BC_OK))
		leak = e;
	for (i = 0; i < 3 && leak == NULL && j->pump_root != NULL; i++)
		if (bc_pathmap_leak(&pm, j->pump_root, bc_buf_data(&m[i]),
		    bc_buf_len(&m[i])) != NULL)
			leak = "the job's tree";
	if (leak != NULL) {
		bc_info("cache: %s names %s: stored for this checkout only",
		    j->file, leak);
		(void)bc_cache_count(j->cache, "stores_exact:path-in-output", 1);
		if (j->key_exact[0] == '\0')
			r = -1;
		else
			memcpy(j->key, j->key_exact, sizeof(j->key));
	} else
		for (i = 0; i < 3; i++)
			bc_buf_view(sect[i], bc_buf_data(&m[i]),
			    bc_buf_len(&m[i]));
	bc_pathmap_free(&pm);
	return r;
}

/* After a successful compile was replied: store it. */
void
bc_compcache_after(struct job *j, const struct bc_request *req,
    const struct bc_reply *rep, int64_t ms)
{
	struct bc_buf m[3] = { BC_BUF_INIT(BC_MAX_STDERR),
	    BC_BUF_INIT(BC_MAX_DOTD), BC_BUF_INIT(BC_MAX_DIA) };
	struct bc_cache_entry ce;
	char e[BC_ERRLEN];
	int64_t t0 = bc_now_ms();

	if (j->cache == NULL || j->key[0] == '\0')
		return;
	if (rep->status != 0) {
		(void)bc_cache_count(j->cache, "uncacheable:compile-error", 1);
		return;	/* a pending miss is counted by finish (job.c) */
	}
	bc_buf_view(&ce.serr, bc_buf_data(&rep->serr), bc_buf_len(&rep->serr));
	bc_buf_view(&ce.sout, bc_buf_data(&rep->sout), bc_buf_len(&rep->sout));
	bc_buf_view(&ce.obj, bc_buf_data(&rep->doto), bc_buf_len(&rep->doto));
	bc_buf_view(&ce.dia, bc_buf_data(&rep->dia), bc_buf_len(&rep->dia));
	/* plain mode: empty; BOLT pump: the .d as replied (doc/cache.md) */
	bc_buf_view(&ce.dotd, bc_buf_data(&rep->dotd), bc_buf_len(&rep->dotd));
	ce.compile_ms = ms;
	memcpy(ce.origin, j->origin, sizeof(ce.origin));
	if (j->key_mapped && map_entry(j, req, &ce, m) != 0)
		goto out;
	if (store(j, &ce, e) != BC_OK)
		bc_warn_once("cache: storing %.16s failed (the compile itself "
		    "succeeded): %s", j->key, e);
	else {
		j->miss_pending = 0;	/* counted with the store */
		bc_debug("cache: stored %.16s (%zu object bytes) in %lld ms",
		    j->key, bc_buf_len(&rep->doto),
		    (long long)(bc_now_ms() - t0));
	}
out:
	bc_buf_free(&m[0]);
	bc_buf_free(&m[1]);
	bc_buf_free(&m[2]);
}
