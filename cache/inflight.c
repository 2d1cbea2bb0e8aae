/*
 * inflight.c - in-flight locks: identical jobs in flight compile once
 * (doc/cache.md, "Locations"), and the lookup probe that answers most
 * misses without the index (bc_cache_probe).
 *
 * One lock file for the whole cache, one byte of it per key: a worker
 * compiling key K holds an fcntl write lock on the byte at inflight_off(K).
 * Nothing is created or removed per job (a file create costs ~0.3 ms on
 * some volumes), and the kernel drops the lock when its holder dies.  Two
 * keys on the same byte (48 bits of a SHA-256) only make one wait for the
 * other.  fcntl locks belong to the process and go away when it closes
 * any descriptor of the file: a process keeps one handle per cache dir.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

static off_t
inflight_off(const char *key)	/* a checked key (bc_hash_is_hex) */
{
	uint8_t b[6];		/* 48 bits: a valid off_t everywhere */
	uint64_t v = 0;
	int i;

	(void)bc_hash_unhex(key, sizeof(b), b);
	for (i = 0; i < 6; i++)
		v = v << 8 | b[i];
	return (off_t)v;
}

static int
lockfile_open(const char *path, int create, char *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW |
	    (create ? O_CREAT : 0), 0600);

	if (fd < 0 && (create || errno != ENOENT))
		bc_seterr(err, BC_ERR_IO, "cannot open %s: %s", path,
		    strerror(errno));
	return fd;
}

static void
inflight_range(struct flock *fl, short type, const char *key)
{
	memset(fl, 0, sizeof(*fl));
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = inflight_off(key);
	fl->l_len = 1;
}

int
bc_cache_inflight_try(struct bc_cache *c, const char *key, int *fd_out,
    char *err)
{
	struct flock fl;

	*fd_out = -1;
	if (!bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "bad cache key");
	if (c->lockfd < 0 && (c->lockfd = lockfile_open(c->lockpath, 1,
	    err)) < 0)
		return BC_ERR_IO;
	inflight_range(&fl, F_WRLCK, key);
	if (fcntl(c->lockfd, F_SETLK, &fl) != 0) {
		if (errno == EACCES || errno == EAGAIN)
			return BC_ERR_BUSY;
		return bc_seterr(err, BC_ERR_IO, "lock %s: %s", c->lockpath,
		    strerror(errno));
	}
	*fd_out = c->lockfd;
	return BC_OK;
}

void
bc_cache_inflight_release(struct bc_cache *c, const char *key, int fd)
{
	struct flock fl;

	if (fd < 0)
		return;
	inflight_range(&fl, F_UNLCK, key);
	(void)fcntl(fd, F_SETLK, &fl);
}

/* 1 if another process holds key's in-flight lock in the cache at dir
 * (or that cannot be told), 0 if nobody does or there is no lock file. */
static int
held_elsewhere(const char *dir, const char *key)
{
	struct flock fl;
	char *p = xasprintf("%s/" BC_CACHE_LOCKFILE, dir);
	int fd, r;

	fd = lockfile_open(p, 0, NULL);
	free(p);
	if (fd < 0)
		return errno != ENOENT;
	inflight_range(&fl, F_WRLCK, key);
	r = fcntl(fd, F_GETLK, &fl);
	close(fd);
	return r != 0 || fl.l_type != F_UNLCK;
}

int
bc_cache_probe(const char *dir, const char *key)
{
	char *p;
	int r;

	if (!bc_hash_is_hex(key))
		return BC_CACHE_PROBE_MAYBE;	/* let the full lookup say why */
	p = xasprintf("%s/blobs", dir);
	r = bc_blobdir_maybe(p, key);
	free(p);
	if (r || held_elsewhere(dir, key))	/* being compiled right now */
		return BC_CACHE_PROBE_MAYBE;
	return BC_CACHE_PROBE_ABSENT;
}
