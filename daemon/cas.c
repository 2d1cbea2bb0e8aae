/*
 * cas.c - content-addressed store of pump files (see cas.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "cas.h"
#include "scratch.h"

static int
mkdir_private(const char *d, int check_owner, char *err)
{
	struct stat st;

	if (mkdir(d, 0700) != 0 && errno != EEXIST)
		return bc_seterr(err, BC_ERR_IO, "mkdir %s: %s", d,
		    strerror(errno));
	if (lstat(d, &st) != 0 || !S_ISDIR(st.st_mode))
		return bc_seterr(err, BC_ERR_IO, "%s is not a directory", d);
	if (check_owner && (st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0))
		return bc_seterr(err, BC_ERR_DENIED,
		    "%s is not a private directory of ours", d);
	return BC_OK;
}

int
bc_cas_open(struct bc_cas *c, const char *cache_dir, uint64_t max_bytes,
    char *err)
{
	char *d;
	int r;

	c->dir = NULL;
	c->max_bytes = max_bytes > 0 ? max_bytes : BC_CAS_MAX_DEFAULT;
	if (cache_dir != NULL) {
		d = xasprintf("%s/pumpfiles", cache_dir);
		r = mkdir_private(d, 0, err);
	} else {
		/* no cache: a transient store in the scratch dir (tmpfs
		 * where there is one, like the job dirs) */
		d = xasprintf("%s/boltccd-pumpfiles-%lu", bc_scratch_dir(),
		    (unsigned long)geteuid());
		r = mkdir_private(d, 1, err);
	}
	if (r != BC_OK) {
		free(d);
		return r;
	}
	c->dir = d;
	return BC_OK;
}

void
bc_cas_close(struct bc_cas *c)
{
	free(c->dir);
	c->dir = NULL;
}

static char *
path_of(const struct bc_cas *c, const uint8_t hash[BC_HASH_LEN])
{
	char hex[BC_HASH_HEXLEN + 1];

	bc_hash_hex(hash, BC_HASH_LEN, hex);
	return xasprintf("%s/%.2s/%s", c->dir, hex, hex);
}

int
bc_cas_get(const struct bc_cas *c, const uint8_t hash[BC_HASH_LEN],
    struct bc_buf *out, size_t max, char *err)
{
	uint8_t h[BC_HASH_LEN];
	struct bc_buf b;
	char *p;
	int r;

	if (c->dir == NULL)
		return bc_seterr(err, BC_ERR_NOENT, "no store");
	p = path_of(c, hash);
	bc_buf_init(&b, max);
	r = bc_read_file(p, max, &b, NULL);
	if (r != BC_OK) {
		r = bc_seterr(err, BC_ERR_NOENT, "not stored");
	} else {
		bc_hash_bytes(bc_buf_data(&b), bc_buf_len(&b), h);
		if (memcmp(h, hash, BC_HASH_LEN) != 0) {
			bc_warn("pump store: %s is damaged, removed", p);
			(void)unlink(p);
			r = bc_seterr(err, BC_ERR_NOENT, "damaged");
		} else if (bc_buf_put(out, bc_buf_data(&b), bc_buf_len(&b))
		    != BC_OK) {
			r = bc_seterr(err, BC_ERR_ALLOC, "out of memory");
		} else {
			(void)utimes(p, NULL);	/* recently used */
		}
	}
	bc_buf_free(&b);
	free(p);
	return r;
}

int
bc_cas_put(const struct bc_cas *c, const uint8_t hash[BC_HASH_LEN],
    const void *p, size_t n, char *err)
{
	uint8_t h[BC_HASH_LEN];
	char *path, *sub;
	int r;

	bc_hash_bytes(p, n, h);
	if (memcmp(h, hash, BC_HASH_LEN) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "contents do not match their SHA-256");
	if (c->dir == NULL)
		return BC_OK;
	path = path_of(c, hash);
	sub = xstrndup(path, strlen(c->dir) + 3);
	if (mkdir(sub, 0700) != 0 && errno != EEXIST) {
		r = bc_seterr(err, BC_ERR_IO, "mkdir %s: %s", sub,
		    strerror(errno));
	} else {
		r = bc_write_file_atomic(path, p, n, 0600, err);
	}
	free(sub);
	free(path);
	return r;
}

struct cfile {
	char *path;
	time_t mtime;
	uint64_t size;
};

static int
cmp_old_first(const void *a, const void *b)
{
	const struct cfile *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime ? 1 : 0;
}

void
bc_cas_trim(const struct bc_cas *c, int force)
{
	struct cfile *v = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct stat st;
	char *stamp;
	DIR *d1;
	struct dirent *a;

	if (c->dir == NULL)
		return;
	stamp = xasprintf("%s/.trimmed", c->dir);
	if (!force && stat(stamp, &st) == 0 &&
	    st.st_mtime + BC_CAS_TRIM_EVERY_SEC > time(NULL)) {
		free(stamp);
		return;
	}
	(void)bc_write_file_atomic(stamp, "", 0, 0600, NULL);
	free(stamp);
	if ((d1 = opendir(c->dir)) == NULL)
		return;
	while ((a = readdir(d1)) != NULL) {
		char *sd;
		DIR *d2;
		struct dirent *b;

		if (strlen(a->d_name) != 2 || a->d_name[0] == '.')
			continue;
		sd = xasprintf("%s/%s", c->dir, a->d_name);
		if ((d2 = opendir(sd)) == NULL) {
			free(sd);
			continue;
		}
		while ((b = readdir(d2)) != NULL) {
			char *fp;

			if (b->d_name[0] == '.')
				continue;
			fp = xasprintf("%s/%s", sd, b->d_name);
			if (lstat(fp, &st) != 0 || !S_ISREG(st.st_mode)) {
				free(fp);
				continue;
			}
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				v = xrealloc(v, cap, sizeof(*v));
			}
			v[n].path = fp;
			v[n].mtime = st.st_mtime;
			v[n].size = (uint64_t)st.st_size;
			total += v[n].size;
			n++;
		}
		closedir(d2);
		free(sd);
	}
	closedir(d1);
	if (total > c->max_bytes) {
		uint64_t goal = c->max_bytes / 10 * 8;

		qsort(v, n, sizeof(*v), cmp_old_first);
		for (i = 0; i < n && total > goal; i++)
			if (unlink(v[i].path) == 0)
				total -= v[i].size;
		bc_info("pump store trimmed to %llu bytes",
		    (unsigned long long)total);
	}
	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}
