/*
 * pumpx.c - BOLT pump request, daemon side (see pumpx.h).
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/key.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "preproc/hmap.h"
#include "cache/pathmap.h"
#include "cas.h"
#include "pump.h"
#include "pumpx.h"
#include "scratch.h"

/*
 * A received file waits in the job's bc_pumpx_received to be put into the
 * store until the compiler runs (bc_pumpx_store_received): a file create
 * costs up to about 1 ms on a journaling disk, and the store only serves
 * later jobs, so it overlaps with the compile instead of delaying it.
 * Bounded by BC_PUMPX_DEFER_MAX bytes (limits.h); a file beyond that is
 * stored at once.
 */
static int
defer_store(struct bc_pumpx_received *rx, const uint8_t hash[BC_HASH_LEN],
    const uint8_t *p, size_t n)
{
	struct bc_pumpx_file *d;

	if (n > BC_PUMPX_DEFER_MAX - rx->bytes)
		return 0;
	rx->v = xrealloc(rx->v, rx->n + 1, sizeof(*rx->v));
	d = &rx->v[rx->n++];
	memcpy(d->hash, hash, BC_HASH_LEN);
	d->data = xmalloc(n > 0 ? n : 1);
	if (n > 0)
		memcpy(d->data, p, n);
	d->len = n;
	rx->bytes += n;
	return 1;
}

/* Empty rx without storing. */
static void
received_free(struct bc_pumpx_received *rx)
{
	size_t i;

	for (i = 0; i < rx->n; i++)
		free(rx->v[i].data);
	free(rx->v);
	memset(rx, 0, sizeof(*rx));
}

void
bc_pumpx_store_received(struct bc_pumpx_received *rx, const char *cache_dir)
{
	struct bc_cas cas;
	char e[BC_ERRLEN];
	size_t i, stored = 0;

	if (rx->n == 0)
		return;
	if (bc_cas_open(&cas, cache_dir, 0, e) != BC_OK)
		bc_info_once("pump store unavailable (%s): received files not "
		    "kept", e);
	else {
		for (i = 0; i < rx->n; i++) {
			if (bc_cas_put(&cas, rx->v[i].hash, rx->v[i].data,
			    rx->v[i].len, e) != BC_OK)
				bc_info_once("pump store: %s", e);
			else
				stored++;
		}
		if (stored > 0)
			bc_cas_trim(&cas, 0);
		bc_cas_close(&cas);
	}
	received_free(rx);
}

/* The tree's copy of a header map named by -I/-iquote/-isystem gets its
 * absolute values moved under the root (xcode.md 4: a map's values are
 * client paths).  Only regular files inside the root are touched. */
static void
rebase_hmaps(const char *root, const char *cwd, const struct bc_strv *argv)
{
	static const char *const opts[] = { "-I", "-iquote", "-isystem", NULL };
	char *rroot = realpath(root, NULL);
	struct bc_strv done = BC_STRV_INIT;	/* a map named twice (-iquote
						 * and -I) is rebased once */
	size_t i, k, d;

	if (rroot == NULL)
		return;
	for (i = 1; i < argv->n; i++) {
		const char *a = argv->v[i], *v = NULL;
		char *path, *real;
		struct bc_hmap m;
		struct bc_buf b, nb;
		char e[BC_ERRLEN];
		struct stat st;

		for (k = 0; opts[k] != NULL && v == NULL; k++) {
			size_t ol = strlen(opts[k]);

			if (strcmp(a, opts[k]) == 0 && i + 1 < argv->n)
				v = argv->v[++i];
			else if (strncmp(a, opts[k], ol) == 0 && a[ol] != '\0')
				v = a + ol;
		}
		if (v == NULL || v[0] == '=' || v[0] == '\0')
			continue;
		path = v[0] == '/' ? xasprintf("%s%s", root, v) :
		    xasprintf("%s%s/%s", root, cwd, v);
		real = realpath(path, NULL);
		free(path);
		if (real == NULL || strncmp(real, rroot, strlen(rroot)) != 0 ||
		    real[strlen(rroot)] != '/' || lstat(real, &st) != 0 ||
		    !S_ISREG(st.st_mode)) {
			free(real);
			continue;
		}
		for (d = 0; d < done.n && strcmp(done.v[d], real) != 0; d++)
			;
		if (d < done.n) {
			free(real);
			continue;
		}
		bc_strv_push(&done, real);
		bc_buf_init(&b, BC_HMAP_MAX_SIZE);
		bc_buf_init(&nb, BC_HMAP_MAX_SIZE);
		if (bc_read_file(real, BC_HMAP_MAX_SIZE, &b, NULL) == BC_OK &&
		    bc_hmap_is_hmap(bc_buf_data(&b), bc_buf_len(&b)) &&
		    bc_hmap_load_mem(&m, bc_buf_data(&b), bc_buf_len(&b), e)
		    == BC_OK) {
			if (bc_hmap_rebase(&m, root, &nb, e) == BC_OK &&
			    bc_write_file_atomic(real, bc_buf_data(&nb),
			    bc_buf_len(&nb), 0600, e) == BC_OK)
				bc_debug("header map %s rebased", v);
			bc_hmap_free(&m);
		}
		bc_buf_free(&b);
		bc_buf_free(&nb);
		free(real);
	}
	bc_strv_free(&done);
	free(rroot);
}

int
bc_pumpx_read(struct bc_io *io, const struct bc_request *req,
    struct bc_proto3x_manifest *m, char *why)
{
	memset(m, 0, sizeof(*m));
	int r;

	if (req->cwd == NULL || req->cwd[0] != '/')
		return bc_seterr(why, BC_ERR_PROTO, "pump request without CDIR");
	if ((r = bc_proto3x_read_manifest(io, NULL, NULL, m, why)) != BC_OK)
		return r;
	/* refused here, before its key is looked up or a file asked for */
	if ((r = bc_proto3x_manifest_check(m, req->cwd, why)) != BC_OK)
		bc_proto3x_manifest_free(m);
	return r;
}

/* An entry the key takes by its mapped digest: a header map by name. */
static int
wants_mhash(const struct bc_proto3x_ent *e)
{
	return e->kind == BC_PROTO3X_FILE &&
	    bc_str_has_suffix(e->name, ".hmap");
}

static void
set_mhash(struct bc_proto3x_ent *e, const struct bc_pathmap *pm,
    const void *p, size_t n)
{
	/* 1 digest known, -1 no header map (keyed by its hash) */
	if (wants_mhash(e) && e->has_mhash == 0)
		e->has_mhash = bc_hmap_mapped_digest(p, n, pm, e->mhash) ==
		    BC_OK ? 1 : -1;
}

/* Fill the header maps' digests from the store: 0 if one is missing. */
static int
mhash_from_store(struct bc_proto3x_manifest *m, const struct bc_pathmap *pm,
    const char *cache_dir)
{
	struct bc_cas cas;
	struct bc_buf data;
	char e[BC_ERRLEN];
	size_t i;
	int all = 1, open = 0;

	bc_buf_init(&data, BC_HMAP_MAX_SIZE);
	for (i = 0; i < m->n; i++) {
		struct bc_proto3x_ent *en = &m->v[i];

		if (!wants_mhash(en) || en->has_mhash)
			continue;
		if (!open && bc_cas_open(&cas, cache_dir, 0, e) != BC_OK) {
			all = 0;
			break;
		}
		open = 1;
		bc_buf_reset(&data);
		if (bc_cas_get(&cas, en->hash, &data, BC_HMAP_MAX_SIZE, e) !=
		    BC_OK) {
			all = 0;
			continue;
		}
		set_mhash(en, pm, bc_buf_data(&data), bc_buf_len(&data));
	}
	if (open)
		bc_cas_close(&cas);
	bc_buf_free(&data);
	return all;
}

int
bc_pumpx_key(struct bc_proto3x_manifest *m, const struct bc_request *req,
    const char *identity, const char *cache_dir, int exact,
    char out[BC_HASH_HEXLEN + 1], int *mapped)
{
	struct bc_cache_pump_ent *v = xcalloc(m->n > 0 ? m->n : 1, sizeof(*v));
	struct bc_cache_pump_in in;
	struct bc_pathmap pm;
	char *why = NULL;
	size_t i;

	out[0] = '\0';
	if (mapped != NULL)
		*mapped = 0;
	bc_pathmap_init(&pm, req->argv.v, req->argv.n);
	if (exact)
		bc_pathmap_set_exact(&pm, "asked for", NULL);
	if (bc_pathmap_active(&pm) && !mhash_from_store(m, &pm, cache_dir)) {
		bc_pathmap_free(&pm);
		free(v);
		return 1;
	}
	for (i = 0; i < m->n; i++) {
		v[i].name = m->v[i].name;
		v[i].kind = m->v[i].kind == BC_PROTO3X_FILE ?
		    BC_CACHE_PUMP_FILE : m->v[i].kind == BC_PROTO3X_LINK ?
		    BC_CACHE_PUMP_LINK : BC_CACHE_PUMP_DIR;
		v[i].hash = m->v[i].hash;
		v[i].target = m->v[i].target;
		if (!exact && m->v[i].has_mhash > 0)
			v[i].mhash = m->v[i].mhash;
	}
	memset(&in, 0, sizeof(in));
	in.identity = identity;
	in.argv = req->argv.v;
	in.argc = req->argv.n;
	in.cwd = req->cwd;
	in.flags = req->flags;
	in.ents = v;
	in.n = m->n;
	in.exact = exact;
	bc_cache_pump_key_paths(&in, out, &why);
	if (mapped != NULL)
		*mapped = why == NULL;
	free(why);
	bc_pathmap_free(&pm);
	free(v);
	return 0;
}

/* Count a file's bytes in the job's: BC_OK, or BC_ERR_LIMIT past
 * BC_MAX_JOB_BYTES, from the store and the wire together. */
static int
add_total(size_t *total, const struct bc_buf *data, char *why)
{
	*total += bc_buf_len(data);
	if (*total > BC_MAX_JOB_BYTES)
		return bc_seterr(why, BC_ERR_LIMIT,
		    "files exceed %zu bytes in total", (size_t)BC_MAX_JOB_BYTES);
	return BC_OK;
}

/* One job's files on their way into its pump tree (bc_pumpx_fetch). */
struct fetch {
	const struct bc_proto3x_manifest *m;
	struct bc_pumpx_received *rx;	/* files to store after the compile */
	struct bc_pathmap pm;	/* for the header maps' mapped digests */
	struct bc_pump_tree t;
	int tree_open;
	struct bc_cas cas;	/* the store; its open may have failed */
	struct bc_buf data;	/* the file at hand */
	uint32_t *need;		/* the files the client is to send */
	size_t nneed;
	size_t total;		/* file bytes, from store and wire */
	size_t held;		/* files taken from the store */
	size_t stored;		/* files put into the store */
	char sub[BC_ERRLEN];	/* the store's messages */
};

static void
fetch_init(struct fetch *f, const struct bc_proto3x_manifest *m,
    const struct bc_request *req, const char *cache_dir)
{
	memset(f, 0, sizeof(*f));
	f->m = m;
	bc_pathmap_init(&f->pm, req->argv.v, req->argv.n);
	if (bc_cas_open(&f->cas, cache_dir, 0, f->sub) != BC_OK)
		bc_info_once("pump store unavailable (%s): every file is "
		    "needed", f->sub);
	bc_buf_init(&f->data, BC_MAX_FILE);
	f->need = xcalloc(m->n > 0 ? m->n : 1, sizeof(*f->need));
}

static void
fetch_free(struct fetch *f)
{
	if (f->tree_open)
		bc_pump_tree_close(&f->t);
	free(f->need);
	bc_buf_free(&f->data);
	bc_cas_close(&f->cas);
	bc_pathmap_free(&f->pm);
}

/* File i, its bytes in f->data, into the tree; a header map's mapped
 * digest is taken on the way. */
static int
fetch_add_file(struct fetch *f, size_t i, char *why)
{
	struct bc_proto3x_ent *e = &f->m->v[i];

	set_mhash(e, &f->pm, bc_buf_data(&f->data), bc_buf_len(&f->data));
	return bc_pump_tree_add(&f->t, e->name, 0, bc_buf_data(&f->data),
	    bc_buf_len(&f->data), why);
}

/* File i from the store into the tree, or onto the list of those the
 * client is to send when the store lacks it. */
static int
fetch_from_store(struct fetch *f, size_t i, char *why)
{
	const struct bc_proto3x_ent *e = &f->m->v[i];
	int r;

	bc_buf_reset(&f->data);
	if (bc_cas_get(&f->cas, e->hash, &f->data, BC_MAX_FILE, f->sub) !=
	    BC_OK) {
		f->need[f->nneed++] = (uint32_t)i;
		return BC_OK;
	}
	if ((r = add_total(&f->total, &f->data, why)) != BC_OK)
		return r;
	f->held++;
	return fetch_add_file(f, i, why);
}

/* Every entry the daemon has at hand into the tree: links, directories
 * and the files the store holds. */
static int
fetch_held(struct fetch *f, char *why)
{
	size_t i;
	int r = BC_OK;

	for (i = 0; i < f->m->n && r == BC_OK; i++) {
		const struct bc_proto3x_ent *e = &f->m->v[i];

		switch (e->kind) {
		case BC_PROTO3X_LINK:
			r = bc_pump_tree_add(&f->t, e->name, 1,
			    (const uint8_t *)e->target, strlen(e->target), why);
			break;
		case BC_PROTO3X_DIR:
			r = bc_pump_tree_dirm(&f->t, e->name, why);
			break;
		default:
			r = fetch_from_store(f, i, why);
			break;
		}
	}
	return r;
}

/* NEED: the files the client is to send. */
static int
fetch_ask(struct bc_io *io, struct fetch *f, char *why)
{
	struct bc_buf out;
	int r;

	bc_buf_init(&out, BC_BUF_CEILING);
	if ((r = bc_proto3x_write_need(&out, f->need, f->nneed, why)) ==
	    BC_OK)
		r = bc_io_write_buf(io, &out, why);
	bc_buf_free(&out);
	return r;
}

/* A received file (in f->data) into the store, now or after the compile
 * (defer_store); the store failing is only logged. */
static void
fetch_store(struct fetch *f, const uint8_t hash[BC_HASH_LEN])
{
	if (defer_store(f->rx, hash, bc_buf_data(&f->data),
	    bc_buf_len(&f->data)))
		return;
	if (bc_cas_put(&f->cas, hash, bc_buf_data(&f->data),
	    bc_buf_len(&f->data), f->sub) != BC_OK)
		bc_info_once("pump store: %s", f->sub);
	else
		f->stored++;
}

/* File i from the wire into the tree and the store, once its contents
 * match the manifest's hash. */
static int
fetch_receive(struct bc_io *io, struct fetch *f, size_t i, char *why)
{
	const struct bc_proto3x_ent *e = &f->m->v[i];
	uint8_t h[BC_HASH_LEN];
	int r;

	if ((r = bc_proto3x_read_body(io, NULL, NULL, &f->data, why)) !=
	    BC_OK || (r = add_total(&f->total, &f->data, why)) != BC_OK)
		return r;
	/* the client's hash is a claim: checked before use */
	bc_hash_bytes(bc_buf_data(&f->data), bc_buf_len(&f->data), h);
	if (memcmp(h, e->hash, BC_HASH_LEN) != 0)
		return bc_seterr(why, BC_ERR_PROTO,
		    "%s: contents do not match the manifest's SHA-256",
		    e->name);
	fetch_store(f, e->hash);
	return fetch_add_file(f, i, why);
}

static int
fetch_received(struct bc_io *io, struct fetch *f, char *why)
{
	size_t i;
	int r = BC_OK;

	for (i = 0; i < f->nneed && r == BC_OK; i++)
		r = fetch_receive(io, f, f->need[i], why);
	return r;
}

/* The client's cwd in the tree, the tree complete: *cwd set. */
static int
fetch_finish(struct fetch *f, const struct bc_request *req,
    const char *root, char **cwd, char *why)
{
	int r;

	if ((r = bc_pump_tree_mkdir(&f->t, req->cwd, why)) != BC_OK ||
	    (r = bc_pump_tree_finish(&f->t, why)) != BC_OK)
		return r;
	bc_debug("bolt pump tree: %zu entries, %zu files from the "
	    "store, %zu received", f->m->n, f->held, f->nneed);
	*cwd = xasprintf("%s%s", root, req->cwd);
	rebase_hmaps(root, req->cwd, &req->argv);
	return BC_OK;
}

int
bc_pumpx_fetch(struct bc_io *io, const struct bc_request *req,
    struct bc_proto3x_manifest *mp, const char *cache_dir,
    struct bc_pumpx_received *rx, char **dir, char **root, char **cwd,
    char *why)
{
	struct fetch f;
	int r;

	*root = NULL;
	*cwd = NULL;
	if (*dir == NULL && (r = bc_scratch_mkjob(dir, why)) != BC_OK)
		return r;
	fetch_init(&f, mp, req, cache_dir);
	f.rx = rx;
	*root = xasprintf("%s/root", *dir);
	if ((r = bc_pump_tree_open(&f.t, *root, why)) != BC_OK)
		goto out;
	f.tree_open = 1;
	if ((r = fetch_held(&f, why)) != BC_OK ||
	    (r = fetch_ask(io, &f, why)) != BC_OK)
		goto out;
	r = fetch_received(io, &f, why);
	if (r == BC_OK)
		r = fetch_finish(&f, req, *root, cwd, why);
	if (f.stored > 0)
		bc_cas_trim(&f.cas, 0);
out:
	fetch_free(&f);
	return r;
}
