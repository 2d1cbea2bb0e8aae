/*
 * blobdir.c - where the cache's blobs live on disk: blobs/ab/<key>, the
 * 256 directories made with the cache (a store never creates one), the
 * move from schema 1's blobs/ab/cd/<key>, and publishing a blob by temp
 * file and rename, so that a reader sees a whole blob or none.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

char *
bc_blobdir_path(const char *blobdir, const char *key)
{
	return xasprintf("%s/%.2s/%s", blobdir, key, key);
}

char *
bc_cache_blob_path(const struct bc_cache *c, const char *key)
{
	return bc_blobdir_path(c->blobdir, key);
}

void
bc_blobdir_unlink(const struct bc_cache *c, const char *key)
{
	char *p = bc_cache_blob_path(c, key);

	(void)unlink(p);
	free(p);
}

int
bc_blobdir_maybe(const char *blobdir, const char *key)
{
	struct stat sb;
	char *p = bc_blobdir_path(blobdir, key);
	int r = stat(p, &sb) == 0 || errno != ENOENT;

	free(p);
	return r;
}

int
bc_cache_blob_exists(const struct bc_cache *c, const char *key)
{
	return bc_hash_is_hex(key) && bc_blobdir_maybe(c->blobdir, key);
}

/* ---------------------------------------------------------------------
 * the directories
 */

static int
is_hex2(const char *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[2] == '\0';
}

/* All at once, when the cache is made: a mkdir per store would cost more
 * than the store (an inode allocation). */
void
bc_blobdir_make(struct bc_cache *c)
{
	int i;

	for (i = 0; i < 256; i++) {
		char *p = xasprintf("%s/%02x", c->blobdir, i);

		(void)mkdir(p, 0700);
		free(p);
	}
}

void
bc_blobdir_each(struct bc_cache *c,
    void (*fn)(struct bc_cache *c, const char *dir, void *arg), void *arg)
{
	struct dirent *a;
	DIR *d;

	if ((d = opendir(c->blobdir)) == NULL)
		return;
	while ((a = readdir(d)) != NULL) {
		char *p;

		if (!is_hex2(a->d_name))
			continue;
		p = xasprintf("%s/%s", c->blobdir, a->d_name);
		fn(c, p, arg);
		free(p);
	}
	closedir(d);
}

/* Every file of dir/cd moved up into dir (blobs/ab), or removed if it is
 * not a blob; then dir/cd itself. */
static void
migrate_subdir(const char *dir, const char *sub)
{
	char *p2 = xasprintf("%s/%s", dir, sub);
	struct dirent *f;
	DIR *d3;

	if ((d3 = opendir(p2)) == NULL) {
		free(p2);
		return;
	}
	while ((f = readdir(d3)) != NULL) {
		char *from, *to;

		if (f->d_name[0] == '.' && (f->d_name[1] == '\0' ||
		    strcmp(f->d_name, "..") == 0))
			continue;
		from = xasprintf("%s/%s", p2, f->d_name);
		to = xasprintf("%s/%s", dir, f->d_name);
		if (!bc_hash_is_hex(f->d_name) || rename(from, to) != 0)
			(void)unlink(from);
		free(from);
		free(to);
	}
	closedir(d3);
	(void)rmdir(p2);
	free(p2);
}

/* blobs/ab/cd/<key> -> blobs/ab/<key> for every cd under dir (blobs/ab) */
static void
migrate_dir(struct bc_cache *c, const char *dir, void *arg)
{
	struct dirent *b;
	DIR *d2;

	(void)c;
	(void)arg;
	if ((d2 = opendir(dir)) == NULL)
		return;
	while ((b = readdir(d2)) != NULL)
		if (is_hex2(b->d_name))
			migrate_subdir(dir, b->d_name);
	closedir(d2);
}

/*
 * Schema 1 kept blobs in blobs/ab/cd/<key>; move them to blobs/ab/<key>
 * (a rename each, in the same file system) and drop the emptied
 * directories.  Runs in the first process that opens a schema-1 cache
 * (boltccd's parent, before it serves anything); interrupted, it goes on
 * at the next open, and whatever it missed start-up reconciliation
 * counts as rows without blobs.
 */
void
bc_blobdir_migrate_v1(struct bc_cache *c)
{
	char *p;

	bc_blobdir_each(c, migrate_dir, NULL);
	/* schema 1's in-flight lock dir (inflight.lock replaced it) */
	p = xasprintf("%s/inflight", c->dir);
	(void)rmdir(p);
	free(p);
}

/* ---------------------------------------------------------------------
 * publishing a blob
 */

/* All n bytes of p to fd. */
static int
write_all(int fd, const uint8_t *p, size_t n, const char *path, char *err)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return bc_seterr(err, BC_ERR_IO, "writing %s: %s", path,
			    w < 0 ? strerror(errno) : "short write");
		p += w;
		n -= (size_t)w;
	}
	return BC_OK;
}

/* The temp file next to path: its directory made if need be. */
static int
temp_path(const char *path, char **tmp, char *err)
{
	char *dir = xstrdup(path), *slash;
	char e[BC_ERRLEN];
	int r;

	*tmp = NULL;
	slash = strrchr(dir, '/');
	*slash = '\0';
	if ((r = bc_mkdir_p(dir, 0700, e)) != BC_OK) {
		free(dir);
		return bc_seterr(err, r, "%s", e);
	}
	*tmp = xasprintf("%s/.tmp.%s.%ld", dir, slash + 1, (long)getpid());
	free(dir);
	return BC_OK;
}

int
bc_blobdir_write(const char *path, const struct bc_buf *b, char *err)
{
	char *tmp;
	int fd, r;

	if ((r = temp_path(path, &tmp, err)) != BC_OK)
		return r;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0) {
		r = bc_seterr(err, BC_ERR_IO, "cannot create %s: %s", tmp,
		    strerror(errno));
		free(tmp);
		return r;
	}
	if ((r = write_all(fd, bc_buf_data(b), bc_buf_len(b), tmp, err)) !=
	    BC_OK) {
		close(fd);
		(void)unlink(tmp);
		free(tmp);
		return r;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		r = bc_seterr(err, BC_ERR_IO, "publishing %s: %s", path,
		    strerror(errno));
		(void)unlink(tmp);
		free(tmp);
		return r;
	}
	free(tmp);
	return BC_OK;
}
