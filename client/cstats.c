/*
 * cstats.c - client counters in $DIR/stats (see cstats.h).
 *
 * Appends and rewrites (compaction, zero) hold an exclusive fcntl lock
 * on the file itself, readers a shared one; a rewrite replaces the file
 * by rename (see bc_cstats_commit).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "client/cstats.h"

void
bc_cstats_init(struct bc_cstats *s)
{
	s->v = NULL;
	s->n = 0;
	s->cap = 0;
}

void
bc_cstats_free(struct bc_cstats *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	bc_cstats_init(s);
}

static char *
clean_name(const char *name)
{
	char *c = xstrdup(name);
	char *p;

	for (p = c; *p != '\0'; p++)
		if (*p <= ' ' || *p > '~')
			*p = '_';
	return c;
}

static struct bc_cstat *
find(const struct bc_cstats *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return &s->v[i];
	return NULL;
}

void
bc_cstats_add(struct bc_cstats *s, const char *name, long long delta)
{
	char *c = clean_name(name);
	struct bc_cstat *e = find(s, c);

	if (e != NULL) {
		e->value += delta;
		free(c);
		return;
	}
	if (s->n >= BC_CSTATS_MAX_ENTRIES) {
		free(c);
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap == 0 ? 16 : s->cap * 2;
		s->v = xrealloc(s->v, s->cap, sizeof(*s->v));
	}
	s->v[s->n].name = c;
	s->v[s->n].value = delta;
	s->n++;
}

void
bc_cstats_add2(struct bc_cstats *s, const char *prefix, const char *reason,
    long long delta)
{
	char *name = xasprintf("%s:%s", prefix, reason != NULL ? reason :
	    "unknown");

	bc_cstats_add(s, name, delta);
	free(name);
}

long long
bc_cstats_get(const struct bc_cstats *s, const char *name)
{
	const struct bc_cstat *e = find(s, name);

	return e != NULL ? e->value : 0;
}

static void
parse_into(const char *p, size_t n, struct bc_cstats *out)
{
	size_t i = 0;

	while (i < n) {
		size_t start = i, sp;
		char *line;

		while (i < n && p[i] != '\n')
			i++;
		line = xstrndup(p + start, i - start);
		i++;
		sp = strcspn(line, " ");
		if (sp > 0 && line[sp] == ' ') {
			long long v;

			line[sp] = '\0';
			if (bc_parse_int(line + sp + 1, -(1LL << 62),
			    1LL << 62, &v) == BC_OK)
				bc_cstats_add(out, line, v);
		}
		free(line);
	}
}

/* Read the whole (locked) file at fd into out; BC_ERR_LIMIT past
 * BC_CSTATS_MAX_FILE. */
static int
load_fd(int fd, const char *path, struct bc_cstats *out, char *err)
{
	struct bc_buf b = BC_BUF_INIT(BC_CSTATS_MAX_FILE);
	uint8_t *dst;
	off_t off = 0;
	ssize_t n;
	int r;

	for (;;) {
		r = bc_buf_reserve(&b, 4096, &dst);
		if (r != BC_OK) {
			bc_buf_free(&b);
			return bc_seterr(err, r, "%s is larger than %d bytes",
			    path, BC_CSTATS_MAX_FILE);
		}
		n = pread(fd, dst, 4096, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = bc_seterr(err, BC_ERR_IO, "cannot read %s: %s", path,
			    strerror(errno));
			bc_buf_free(&b);
			return r;
		}
		if (n == 0)
			break;
		(void)bc_buf_commit(&b, (size_t)n);
		off += n;
	}
	parse_into((const char *)bc_buf_data(&b), bc_buf_len(&b), out);
	bc_buf_free(&b);
	return BC_OK;
}

static int
lock_fd(int fd, short type)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	while (fcntl(fd, F_SETLKW, &fl) != 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int
bc_cstats_load(const char *dir, struct bc_cstats *out, char *err)
{
	char *path = xasprintf("%s/stats", dir);
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = errno == ENOENT ? BC_OK : bc_seterr(err, BC_ERR_IO,
		    "cannot open %s: %s", path, strerror(errno));
		free(path);
		return r;
	}
	/* appends are whole lines under the exclusive lock */
	(void)lock_fd(fd, F_RDLCK);
	r = load_fd(fd, path, out, err);
	close(fd);
	free(path);
	return r;
}

/*
 * Open dir/stats (created if missing) and take the exclusive lock, held
 * only for one append or one rewrite.  A rewrite replaces the file by
 * rename while holding its lock, so a lock obtained on a file that has
 * meanwhile been replaced (no links left) is dropped and the new file is
 * opened.  (fcntl locks belong to the process and go away when any of
 * its descriptors of the file is closed: under the lock, the file is
 * only accessed through this fd.)
 */
static int
open_locked(const char *dir, int *fd_out, char *err)
{
	char *path = xasprintf("%s/stats", dir);
	struct stat st;
	int fd, tries;

	*fd_out = -1;
	for (tries = 0; tries < 100; tries++) {
		fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			int r = bc_seterr(err, BC_ERR_IO, "cannot open %s: %s",
			    path, strerror(errno));

			free(path);
			return r;
		}
		if (lock_fd(fd, F_WRLCK) != 0) {
			int r = bc_seterr(err, BC_ERR_IO, "cannot lock %s: %s",
			    path, strerror(errno));

			close(fd);
			free(path);
			return r;
		}
		if (fstat(fd, &st) == 0 && st.st_nlink > 0) {
			free(path);
			*fd_out = fd;
			return BC_OK;
		}
		close(fd);	/* replaced while we waited: open the new one */
	}
	free(path);
	return bc_seterr(err, BC_ERR_IO, "%s/stats keeps being replaced", dir);
}

static int
write_stats(const char *dir, const struct bc_cstats *s, char *err)
{
	struct bc_buf b;
	char *path;
	size_t i;
	int r = BC_OK;

	bc_buf_init(&b, BC_CSTATS_MAX_FILE);
	for (i = 0; i < s->n && r == BC_OK; i++)
		r = bc_buf_putf(&b, "%s %lld\n", s->v[i].name, s->v[i].value);
	if (r != BC_OK) {
		bc_buf_free(&b);
		return bc_seterr(err, r, "stats too large");
	}
	path = xasprintf("%s/stats", dir);
	r = bc_write_file_atomic(path, bc_buf_data(&b), bc_buf_len(&b), 0644,
	    err);
	free(path);
	bc_buf_free(&b);
	return r;
}

/* Rewrite dir/stats with one line per name (the sums of its lines), or
 * empty (zero).  A file that cannot be read starts over from `start`. */
static int
compact(const char *dir, int zero, const struct bc_cstats *start,
    char *err)
{
	struct bc_cstats cur;
	char *path = xasprintf("%s/stats", dir);
	size_t i;
	int fd, r;

	r = open_locked(dir, &fd, err);
	if (r != BC_OK) {
		free(path);
		return r;
	}
	bc_cstats_init(&cur);
	if (!zero && load_fd(fd, path, &cur, err) != BC_OK) {
		bc_cstats_free(&cur);	/* unreadable: start over */
		for (i = 0; start != NULL && i < start->n; i++)
			bc_cstats_add(&cur, start->v[i].name,
			    start->v[i].value);
	}
	r = write_stats(dir, &cur, err);
	bc_cstats_free(&cur);
	close(fd);
	free(path);
	return r;
}

/*
 * A job's deltas are appended as "name delta" lines in one write(2) under
 * the exclusive lock, held for that one write (readers sum repeated
 * names): no read, no temp file, no rename per job.  When the file has
 * grown past BC_CSTATS_COMPACT it is rewritten with one line per name.
 */
#define BC_CSTATS_COMPACT (16 * 1024)

int
bc_cstats_commit(const char *dir, const struct bc_cstats *delta, char *err)
{
	struct bc_buf b;
	struct stat st;
	size_t i;
	ssize_t w;
	int fd, r = BC_OK, big = 0;

	if (delta->n == 0)
		return BC_OK;
	bc_buf_init(&b, BC_CSTATS_MAX_FILE / 2);
	for (i = 0; i < delta->n && r == BC_OK; i++)
		if (delta->v[i].value != 0)
			r = bc_buf_putf(&b, "%s %lld\n", delta->v[i].name,
			    delta->v[i].value);
	if (r != BC_OK) {
		bc_buf_free(&b);
		return bc_seterr(err, r, "stats too large");
	}
	if (bc_buf_len(&b) == 0) {
		bc_buf_free(&b);
		return BC_OK;
	}
	r = open_locked(dir, &fd, err);
	if (r != BC_OK) {
		bc_buf_free(&b);
		return r;
	}
	do {
		w = write(fd, bc_buf_data(&b), bc_buf_len(&b));
	} while (w < 0 && errno == EINTR);
	if (w != (ssize_t)bc_buf_len(&b))
		r = bc_seterr(err, BC_ERR_IO, "cannot append to %s/stats: %s",
		    dir, w < 0 ? strerror(errno) : "short write");
	else if (fstat(fd, &st) == 0 && st.st_size > BC_CSTATS_COMPACT)
		big = 1;
	close(fd);
	bc_buf_free(&b);
	if (r == BC_OK && big)
		r = compact(dir, 0, delta, err);
	return r;
}

int
bc_cstats_zero(const char *dir, char *err)
{
	return compact(dir, 1, NULL, err);
}
