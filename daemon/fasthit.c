/*
 * fasthit.c - answers the daemon's parent gives without a worker (see
 * fasthit.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "cache/store.h"
#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "fasthit.h"
#include "keeper.h"
#include "pumpx.h"

void
bc_fasthit_init(struct bc_fasthit *fh)
{
	memset(fh, 0, sizeof(*fh));
}

void
bc_fasthit_free(struct bc_fasthit *fh)
{
	if (fh->cache != NULL)
		bc_cache_close(fh->cache);
	free(fh->identity_memo);
	memset(fh, 0, sizeof(*fh));
}

void
bc_fasthit_answer_init(struct bc_fasthit_answer *a)
{
	memset(a, 0, sizeof(*a));
	bc_buf_init(&a->out, BC_MAX_FASTHIT_REPLY);
}

void
bc_fasthit_answer_free(struct bc_fasthit_answer *a)
{
	bc_buf_free(&a->out);
}

/* The cache, blobs only (bc_cache_open_lazy opens no index; nothing
 * here asks for it). */
static struct bc_cache *
cache_of(struct bc_fasthit *fh, const struct bc_job_conf *conf)
{
	char e[BC_ERRLEN];

	if (fh->cache != NULL || fh->disabled || conf->cache_dir == NULL)
		return fh->cache;
	if (bc_cache_open_lazy(conf->cache_dir, conf->cache_max, &fh->cache,
	    e) != BC_OK) {
		bc_warn("cache: the parent answers no hits: %s", e);
		fh->disabled = 1;
		fh->cache = NULL;
		return NULL;
	}
	fh->identity_memo = xasprintf("%s/identity", conf->cache_dir);
	(void)bc_mkdir_p(fh->identity_memo, 0700, NULL);
	return fh->cache;
}

/*
 * The hit's bookkeeping goes to the keeper as a worker's does, but never
 * into the index from here: a full pipe (or no keeper) leaves the job to
 * a worker.
 */
static int
touch_sent(const struct bc_job_conf *conf, const char *key,
    int64_t compile_ms, const char *origin)
{
	return bc_keeper_touch_send(conf->keeper_fd, key, BC_CACHE_COUNT_ALL,
	    1, compile_ms, origin) == 0;
}

/* The event a worker's end of this hit would send (its DONE). */
static void
hit_event(struct bc_fasthit_answer *a, int mode, const char *compiler,
    const char *src)
{
	memset(&a->ev, 0, sizeof(a->ev));
	a->ev.kind = BC_EV_DONE;
	a->ev.outcome = BC_OUT_OK;
	a->ev.mode = mode;
	a->ev.cache = BC_EV_CACHE_HIT;
	snprintf(a->ev.compiler, sizeof(a->ev.compiler), "%s", compiler);
	snprintf(a->ev.file, sizeof(a->ev.file), "%s", src);
}

/* ---------------------------------------------------------------------
 * lookups (LOOKUP, LOOKUPF, LOCATE)
 */

static enum bc_fasthit_kind
answer_lookup(struct bc_fasthit *fh, const struct bc_job_conf *conf,
    const char *peer, const struct bc_request *req,
    struct bc_fasthit_answer *a)
{
	struct bc_cache_blob b;
	struct bc_cache *c;
	const void *z[BC_CACHE_NSECT];
	char e[BC_ERRLEN], file[20];
	int i, r;
	int64_t t0 = bc_now_ms();

	if (conf->cache_dir == NULL || bc_cache_probe(conf->cache_dir,
	    req->key) == BC_CACHE_PROBE_ABSENT) {
		if (bc_job_write_absent(conf, req, &a->out, &a->rec, e) !=
		    BC_OK)
			return BC_FAST_NONE;
		return a->kind = BC_FAST_ABSENT;
	}
	if ((c = cache_of(fh, conf)) == NULL)
		return BC_FAST_NONE;
	bc_cache_blob_init(&b);
	r = bc_cache_lookup_blob(c, req->key, &b, e);
	if (r == BC_OK) {
		for (i = 0; i < BC_CACHE_NSECT; i++)
			z[i] = bc_buf_data(&b.data) + b.off[i];
		r = bc_proto_write_reply_zstd(&a->out, req, b.origin, z,
		    b.zlen, e);
	}
	/* a missing or damaged blob, or a reply too large: the index's
	 * way, in a worker (which drops and counts a damaged one) */
	if (r != BC_OK || !touch_sent(conf, req->key, b.compile_ms,
	    req->origin)) {
		bc_cache_blob_free(&b);
		bc_buf_reset(&a->out);
		return BC_FAST_NONE;
	}
	bc_cache_blob_free(&b);
	snprintf(file, sizeof(file), "%.16s", req->key);
	hit_event(a, BC_MODE_LOOKUP, "lookup", file);
	a->ev.ms = bc_now_ms() - t0;
	bc_job_log_end(peer, BC_OUT_OK, 0, 0, a->ev.ms, "lookup", file);
	return a->kind = BC_FAST_HIT;
}

/* ---------------------------------------------------------------------
 * BOLT pump requests: the checks and the key of check_compiler (job.c)
 * and bc_compcache_prepare (compcache.c), then the blob
 */

/* The compiler's path, allowed by the policy, with allowed options:
 * else NULL (a worker refuses it, saying why). */
static char *
allowed_compiler(const struct bc_job_conf *conf,
    const struct bc_request *req)
{
	char why[BC_ERRLEN], *path = NULL;
	const char *name;

	if (req->argv.n == 0 ||
	    bc_policy_resolve(conf->policy, req->argv.v[0], &path, why) !=
	    BC_OK)
		return NULL;
	if (bc_policy_check_name(conf->policy, req->argv.v[0], &name, why) !=
	    BC_OK || bc_policy_check_args(req->argv.v, req->argv.n, why) !=
	    BC_OK) {
		free(path);
		return NULL;
	}
	return path;
}

/* The key a worker would look up (compcache.c: bc_compcache_pump_keys,
 * bc_compcache_before): 0 with key set, -1 if only a worker can tell. */
static int
pump_key(struct bc_fasthit *fh, const struct bc_job_conf *conf,
    const struct bc_request *req, struct bc_proto3x_manifest *m,
    char key[BC_HASH_HEXLEN + 1])
{
	char identity[BC_HASH_HEXLEN + 1], exact[BC_HASH_HEXLEN + 1], e[BC_ERRLEN];
	char *path;
	int mapped = 0;

	if ((path = allowed_compiler(conf, req)) == NULL)
		return -1;
	if (bc_cache_identity(path, fh->identity_memo, identity, e) != BC_OK) {
		free(path);
		return -1;
	}
	free(path);
	if (req->identity != NULL && strcmp(req->identity, identity) != 0)
		return -1;	/* refused, by a worker */
	if (bc_pumpx_key(m, req, identity, conf->cache_dir, 0, key, &mapped))
		return -1;	/* needs a header map's contents */
	/* a mapped key whose outputs named a mapped prefix was stored
	 * under the exact key */
	if (mapped && !bc_cache_blob_exists(fh->cache, key) &&
	    !bc_pumpx_key(m, req, identity, conf->cache_dir, 1, exact, NULL) &&
	    bc_cache_blob_exists(fh->cache, exact))
		memcpy(key, exact, sizeof(exact));
	return 0;
}

static enum bc_fasthit_kind
answer_pump(struct bc_fasthit *fh, const struct bc_job_conf *conf,
    const char *peer, const struct bc_request *req, struct bc_io *io,
    struct bc_fasthit_answer *a)
{
	struct bc_proto3x_manifest m;
	struct bc_cache_blob b;
	const void *z[BC_CACHE_NSECT];
	char key[BC_HASH_HEXLEN + 1], origin[BC_CACHE_ORIGIN_LEN + 1];
	char why[BC_ERRLEN], compiler[64], file[128], src[128];
	int i, r;
	int64_t t0 = bc_now_ms();

	if (cache_of(fh, conf) == NULL)
		return BC_FAST_NONE;
	memset(&m, 0, sizeof(m));
	r = bc_pumpx_read(io, req, &m, why);
	if (r != BC_OK || bc_io_preload_left(io) != 0 || m.n == 0 ||
	    pump_key(fh, conf, req, &m, key) != 0 ||
	    !bc_cache_blob_exists(fh->cache, key)) {
		bc_proto3x_manifest_free(&m);
		return BC_FAST_NONE;
	}
	bc_job_name_src(m.v[0].name, file, sizeof(file), src, sizeof(src));
	bc_proto3x_manifest_free(&m);
	bc_cache_blob_init(&b);
	r = bc_cache_lookup_blob(fh->cache, key, &b, why);
	if (r == BC_OK) {
		for (i = 0; i < BC_CACHE_NSECT; i++)
			z[i] = bc_buf_data(&b.data) + b.off[i];
		r = bc_proto3x_write_hit(&a->out, req->flags, b.origin, z,
		    b.zlen, why);
	}
	bc_cache_origin(req->cwd, origin);
	if (r != BC_OK || !touch_sent(conf, key, b.compile_ms, origin)) {
		bc_cache_blob_free(&b);
		bc_buf_reset(&a->out);
		return BC_FAST_NONE;
	}
	bc_cache_blob_free(&b);
	bc_log_escape(req->argv.v[0], strlen(req->argv.v[0]), compiler,
	    sizeof(compiler));
	bc_info("client: %s cache hit %.16s %s", peer, key, file);
	hit_event(a, BC_MODE_BOLT_PUMP, compiler, src);
	a->ev.ms = bc_now_ms() - t0;
	bc_job_log_end(peer, BC_OUT_OK, 0, 0, a->ev.ms, compiler, file);
	return a->kind = BC_FAST_HIT;
}

enum bc_fasthit_kind
bc_fasthit_answer(struct bc_fasthit *fh, const struct bc_job_conf *conf,
    const char *peer, const void *in, size_t n, struct bc_fasthit_answer *a)
{
	struct bc_request req;
	struct bc_io io;
	char e[BC_ERRLEN];
	int kind;

	a->kind = BC_FAST_NONE;
	a->rec.key[0] = '\0';
	bc_buf_reset(&a->out);
	/* only BOLT lookups and pump requests: one look at the head */
	kind = n >= 4 ? bc_proto_bolt_kind(in, n) : -1;
	if (!BC_RQST_IS_LOOKUP(kind) && kind != BC_RQST_PUMP)
		return BC_FAST_NONE;
	if (BC_RQST_IS_LOOKUP(kind) && n > BC_MAX_LOOKUP_PEEK)
		return BC_FAST_NONE;
	bc_io_init(&io, -1, -1, 0);
	bc_io_preload(&io, in, n);
	bc_request_init(&req);
	if (bc_proto_read_request(&io, &req, e) == BC_OK &&
	    req.proto == BC_PROTO_BOLT && req.kind == kind) {
		if (BC_RQST_IS_LOOKUP(kind) && bc_io_preload_left(&io) == 0)
			(void)answer_lookup(fh, conf, peer, &req, a);
		else if (kind == BC_RQST_PUMP)
			(void)answer_pump(fh, conf, peer, &req, &io, a);
	}
	bc_request_free(&req);
	return a->kind;
}
