/*
 * cstats.c - client counters in $DIR/stats (see cstats.h).
 *
 * The lock lives on a separate file because the stats file itself is
 * replaced by rename on every update.
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

int
bc_cstats_load(const char *dir, struct bc_cstats *out, char *err)
{
	char *path = xasprintf("%s/stats", dir);
	struct bc_buf b;
	struct stat st;
	int r;

	if (stat(path, &st) != 0 && errno == ENOENT) {
		free(path);
		return BC_OK;
	}
	bc_buf_init(&b, BC_CSTATS_MAX_FILE);
	r = bc_read_file(path, BC_CSTATS_MAX_FILE, &b, err);
	free(path);
	if (r == BC_ERR_NOENT) {
		bc_buf_free(&b);
		return BC_OK;
	}
	if (r == BC_OK)
		parse_into((const char *)bc_buf_data(&b), bc_buf_len(&b), out);
	bc_buf_free(&b);
	return r;
}

static int
lock_stats(const char *dir, int *fd_out, char *err)
{
	char *path = xasprintf("%s/stats.lock", dir);
	struct flock fl;
	int fd;

	*fd_out = -1;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int r = bc_seterr(err, BC_ERR_IO, "cannot open %s: %s", path,
		    strerror(errno));

		free(path);
		return r;
	}
	free(path);
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	while (fcntl(fd, F_SETLKW, &fl) != 0) {
		if (errno != EINTR) {
			close(fd);
			return bc_seterr(err, BC_ERR_IO, "cannot lock stats: %s",
			    strerror(errno));
		}
	}
	*fd_out = fd;
	return BC_OK;
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

int
bc_cstats_commit(const char *dir, const struct bc_cstats *delta, char *err)
{
	struct bc_cstats cur;
	size_t i;
	int fd, r;

	if (delta->n == 0)
		return BC_OK;
	r = lock_stats(dir, &fd, err);
	if (r != BC_OK)
		return r;
	bc_cstats_init(&cur);
	r = bc_cstats_load(dir, &cur, err);
	if (r != BC_OK)	/* unreadable: start over rather than fail jobs */
		bc_cstats_free(&cur);
	for (i = 0; i < delta->n; i++)
		bc_cstats_add(&cur, delta->v[i].name, delta->v[i].value);
	r = write_stats(dir, &cur, err);
	bc_cstats_free(&cur);
	close(fd);
	return r;
}

int
bc_cstats_zero(const char *dir, char *err)
{
	struct bc_cstats empty;
	int fd, r;

	r = lock_stats(dir, &fd, err);
	if (r != BC_OK)
		return r;
	bc_cstats_init(&empty);
	r = write_stats(dir, &empty, err);
	close(fd);
	return r;
}
