/*
 * hitcache.c - the client's own tier of the artifact cache (hitcache.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/osdep.h"
#include "common/util.h"
#include "client/hitcache.h"

/* -o FILE, -oFILE, -MF FILE, -MFFILE, --serialize-diagnostics FILE. */
static int
output_opt(const char *a)
{
	return strncmp(a, "-o", 2) == 0 || strncmp(a, "-MF", 3) == 0 ||
	    strcmp(a, "--serialize-diagnostics") == 0;
}

void
bc_hitcache_key(const char *key, const char *cwd, const struct bc_strv *argv,
    char out[BC_HASH_HEXLEN + 1])
{
	struct bc_hash h;
	size_t i;

	bc_hash_init(&h);
	bc_hash_update_str(&h, "boltcc-local-hit-v1");
	bc_hash_update_str(&h, key);
	bc_hash_update_str(&h, cwd != NULL ? cwd : "");
	for (i = 0; i < argv->n; i++) {
		const char *a = argv->v[i];

		/* where the outputs go does not change their bytes (a .d's
		 * target is in the farm's key) */
		if (output_opt(a)) {
			if (a[2] == '\0' || strcmp(a, "-MF") == 0 ||
			    strcmp(a, "--serialize-diagnostics") == 0)
				i++;
			continue;
		}
		bc_hash_update_str(&h, "arg");
		bc_hash_update_str(&h, a);
	}
	bc_hash_update_str(&h, "end");
	bc_hash_final_hex(&h, out);
	bc_hash_free(&h);
}

static char *
entry_path(const char *dir, const char *lkey)
{
	return xasprintf("%s/%.2s/%s", dir, lkey, lkey);
}

int
bc_hitcache_get(const char *dir, const char *lkey, struct bc_reply *rep,
    char *err)
{
	struct bc_cache_entry e;
	struct bc_buf raw;
	char *path, sub[BC_ERRLEN];
	int r;

	if (!bc_hash_is_hex(lkey))
		return bc_seterr(err, BC_ERR_INVAL, "bad local key");
	path = entry_path(dir, lkey);
	bc_buf_init(&raw, BC_BUF_CEILING);
	sub[0] = '\0';
	r = bc_read_file(path, BC_BUF_CEILING, &raw, sub);
	if (r != BC_OK) {
		bc_buf_free(&raw);
		free(path);
		return r == BC_ERR_NOENT ? BC_ERR_NOENT :
		    bc_seterr(err, r, "%s", sub);
	}
	r = bc_cache_blob_decode(bc_buf_data(&raw), bc_buf_len(&raw), &e, sub);
	bc_buf_free(&raw);
	if (r != BC_OK) {
		/* never served: gone, so that the next build stores anew */
		(void)unlink(path);
		free(path);
		return bc_seterr(err, BC_ERR_CORRUPT, "local cache entry "
		    "%.16s removed: %s", lkey, sub);
	}
	(void)utimensat(AT_FDCWD, path, NULL, 0);	/* recently used */
	free(path);
	rep->status = 0;
	bc_buf_move(&rep->serr, &e.serr);
	bc_buf_move(&rep->sout, &e.sout);
	bc_buf_move(&rep->doto, &e.obj);
	bc_buf_move(&rep->dia, &e.dia);
	bc_buf_move(&rep->dotd, &e.dotd);
	bc_cache_entry_free(&e);
	return BC_OK;
}

/* The value of a hex key's first two digits. */
static unsigned
first_byte(const char *hex)
{
	uint8_t b[1];

	return bc_hash_unhex(hex, 1, b) == 0 ? b[0] : 0;
}

int
bc_hitcache_put(const char *dir, uint64_t max_bytes, const char *lkey,
    const struct bc_reply *rep, char *err)
{
	struct bc_cache_entry e;
	struct bc_buf blob;
	char *sub, *path;
	int r;

	if (!bc_hash_is_hex(lkey) || rep->status != 0)
		return bc_seterr(err, BC_ERR_INVAL, "nothing to store");
	bc_buf_view(&e.serr, bc_buf_data(&rep->serr), bc_buf_len(&rep->serr));
	bc_buf_view(&e.sout, bc_buf_data(&rep->sout), bc_buf_len(&rep->sout));
	bc_buf_view(&e.obj, bc_buf_data(&rep->doto), bc_buf_len(&rep->doto));
	bc_buf_view(&e.dia, bc_buf_data(&rep->dia), bc_buf_len(&rep->dia));
	bc_buf_view(&e.dotd, bc_buf_data(&rep->dotd), bc_buf_len(&rep->dotd));
	e.compile_ms = 0;
	e.origin[0] = '\0';
	if (bc_buf_len(&e.obj) + bc_buf_len(&e.serr) > max_bytes / 8)
		return bc_seterr(err, BC_ERR_LIMIT, "too large for the local "
		    "cache");
	bc_buf_init(&blob, BC_BUF_CEILING);
	r = bc_cache_blob_encode(&e, 1, &blob, err);
	if (r == BC_OK) {
		sub = xasprintf("%s/%.2s", dir, lkey);
		r = bc_mkdir_p(sub, 0700, err);
		free(sub);
	}
	if (r == BC_OK) {
		path = entry_path(dir, lkey);
		r = bc_write_file_atomic(path, bc_buf_data(&blob),
		    bc_buf_len(&blob), 0600, err);
		free(path);
	}
	bc_buf_free(&blob);
	/* the trim's walk, once in a while: the key's first byte decides */
	if (r == BC_OK && first_byte(lkey) % BC_HITCACHE_TRIM_EVERY == 0)
		r = bc_hitcache_trim(dir, max_bytes, NULL, err);
	return r;
}

struct ent {
	int64_t mtime_ns;
	uint64_t size;
	char *path;
};

static int
cmp_age(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/* Every entry of the tier (regular files in DIR/xx/ named by 64 hex
 * digits) into *v, their bytes into *total. */
static void
list_entries(const char *dir, struct ent **v, size_t *n, uint64_t *total)
{
	static const char hex[] = "0123456789abcdef";
	size_t cap = 0;
	int a, b;

	*v = NULL;
	*n = 0;
	*total = 0;
	for (a = 0; a < 16; a++)
		for (b = 0; b < 16; b++) {
			char *sub = xasprintf("%s/%c%c", dir, hex[a], hex[b]);
			DIR *d = opendir(sub);
			struct dirent *de;

			while (d != NULL && (de = readdir(d)) != NULL &&
			    *n < BC_HITCACHE_MAX_ENTRIES) {
				struct stat st;
				char *p;

				if (strlen(de->d_name) != BC_HASH_HEXLEN ||
				    !bc_hash_is_hex(de->d_name))
					continue;
				p = xasprintf("%s/%s", sub, de->d_name);
				if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
					free(p);
					continue;
				}
				if (*n == cap) {
					cap = cap ? 2 * cap : 256;
					*v = xrealloc(*v, cap, sizeof(**v));
				}
				(*v)[*n].mtime_ns = bc_osdep_mtime_ns(&st);
				(*v)[*n].size = (uint64_t)st.st_size;
				(*v)[*n].path = p;
				*total += (uint64_t)st.st_size;
				(*n)++;
			}
			if (d != NULL)
				closedir(d);
			free(sub);
		}
}

int
bc_hitcache_trim(const char *dir, uint64_t max_bytes, uint64_t *left,
    char *err)
{
	struct ent *v;
	uint64_t total, goal = max_bytes / 10 * 8;
	size_t n, i;

	(void)err;
	list_entries(dir, &v, &n, &total);
	if (total > max_bytes) {
		qsort(v, n, sizeof(*v), cmp_age);
		for (i = 0; i < n && total > goal; i++)
			if (unlink(v[i].path) == 0 || errno == ENOENT)
				total -= v[i].size;
	}
	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	if (left != NULL)
		*left = total;
	return BC_OK;
}

void
bc_hitcache_info(const char *dir, uint64_t *entries, uint64_t *bytes,
    int64_t *oldest)
{
	struct ent *v;
	size_t n, i;

	list_entries(dir, &v, &n, bytes);
	*entries = n;
	*oldest = 0;
	for (i = 0; i < n; i++) {
		int64_t s = v[i].mtime_ns / 1000000000;

		if (*oldest == 0 || s < *oldest)
			*oldest = s;
		free(v[i].path);
	}
	free(v);
}

int
bc_hitcache_evict_older(const char *dir, int64_t cutoff, uint64_t *removed,
    uint64_t *freed, char *err)
{
	struct ent *v;
	uint64_t total, nr = 0, nb = 0;
	size_t n, i;
	int r = BC_OK;

	list_entries(dir, &v, &n, &total);
	for (i = 0; i < n; i++) {
		if (v[i].mtime_ns / 1000000000 < cutoff) {
			if (unlink(v[i].path) == 0) {
				nr++;
				nb += v[i].size;
			} else if (errno != ENOENT && r == BC_OK)
				r = bc_seterr(err, BC_ERR_IO, "%s: %s",
				    v[i].path, strerror(errno));
		}
		free(v[i].path);
	}
	free(v);
	if (removed != NULL)
		*removed = nr;
	if (freed != NULL)
		*freed = nb;
	return r;
}
