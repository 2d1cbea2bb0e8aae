/*
 * memo.c - persistent per-file scan memo (see memo.h).
 *
 * File format (text, one record per file):
 *   boltcc-ppmemo 2
 *   F dev ino size mtime_ns ctime_ns used hash|- ndirs path
 *   D kind angled computed line name        (ndirs times; name may be empty)
 * Paths and names never contain a newline (such files are not memoized).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/osdep.h"
#include "common/hash.h"
#include "common/util.h"
#include "preproc/memo.h"

#define MEMO_MAGIC "boltcc-ppmemo 2\n"	/* 2: with #defines */
#define MEMO_MAX_DIGITS 31	/* bytes of a number (a uint64 needs 20) */

void
bc_pp_stamp_of(const struct stat *sb, struct bc_pp_stamp *st)
{
	st->dev = (uint64_t)sb->st_dev;
	st->ino = (uint64_t)sb->st_ino;
	st->size = (uint64_t)sb->st_size;
	st->mtime_ns = bc_osdep_mtime_ns(sb);
	st->ctime_ns = bc_osdep_ctime_ns(sb);
}

static void
ent_free(struct bc_pp_mentry *e)
{
	if (e == NULL)
		return;
	free(e->path);
	bc_pp_dirs_free(&e->dirs);
	free(e);
}

static struct bc_pp_mentry **
slot(struct bc_pp_memo *m, const char *path)
{
	/* the table's order is the file's for equally old entries: its
	 * basis stays preproc/'s */
	size_t i = (size_t)bc_fnv1a_str(BC_FNV1A_BASIS_PP, path) &
	    (m->cap - 1);

	while (m->tab[i] != NULL && strcmp(m->tab[i]->path, path) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->tab[i];
}

static void
grow(struct bc_pp_memo *m)
{
	struct bc_pp_mentry **old = m->tab;
	size_t oc = m->cap, i;

	m->cap = oc ? oc * 2 : 1024;
	m->tab = xcalloc(m->cap, sizeof(*m->tab));
	for (i = 0; i < oc; i++)
		if (old[i] != NULL)
			*slot(m, old[i]->path) = old[i];
	free(old);
}

/* Insert (replacing any entry of the same path; keeps the newer one if
 * keep_newer and the old one is fresher). */
static void
put(struct bc_pp_memo *m, struct bc_pp_mentry *e, int keep_existing)
{
	struct bc_pp_mentry **s;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	s = slot(m, e->path);
	if (*s != NULL) {
		if (keep_existing) {
			ent_free(e);
			return;
		}
		ent_free(*s);
		*s = e;
		return;
	}
	*s = e;
	m->n++;
}

/* The next word of a line: its bytes up to the next space (taken too),
 * or the rest of the line. */
static void
word(struct bc_buf *line, struct bc_buf *w)
{
	if (bc_buf_get_until(line, ' ', w) != BC_OK)
		(void)bc_buf_get_view(line, bc_buf_avail(line), w);
}

/* The next word as a decimal number (unsigned unless sign): 0 or -1. */
static int
num(struct bc_buf *line, long long *v, int sign)
{
	struct bc_buf w;
	char tmp[MEMO_MAX_DIGITS + 1];
	size_t n;
	char *ep;

	word(line, &w);
	n = bc_buf_avail(&w);
	if (n == 0 || n > MEMO_MAX_DIGITS)
		return -1;
	(void)bc_buf_get(&w, tmp, n);
	tmp[n] = '\0';
	errno = 0;
	if (sign)
		*v = strtoll(tmp, &ep, 10);
	else
		*v = (long long)strtoull(tmp, &ep, 10);
	if (errno != 0 || *ep != '\0' || (!sign && tmp[0] == '-'))
		return -1;
	return 0;
}

/* 1 if the line starts with c and a space (both taken). */
static int
tag(struct bc_buf *line, char c)
{
	if (bc_buf_at(line, 0) != c || bc_buf_at(line, 1) != ' ')
		return 0;
	(void)bc_buf_skip(line, 2);
	return 1;
}

/* The hash word: "-" (none) or BC_HASH_HEXLEN hex digits into e. */
static int
hash_word(struct bc_buf *line, struct bc_pp_mentry *e)
{
	struct bc_buf w;
	const uint8_t *p;

	word(line, &w);
	if (bc_buf_avail(&w) == 1 && bc_buf_at(&w, 0) == '-')
		return 0;
	if (bc_buf_peek(&w, BC_HASH_HEXLEN, &p) != BC_OK ||
	    bc_buf_avail(&w) != BC_HASH_HEXLEN ||
	    bc_hash_unhex((const char *)p, BC_HASH_LEN, e->hash) != 0)
		return -1;
	e->has_hash = 1;
	return 0;
}

/* One "D kind angled computed line name" line into e's directives. */
static int
dir_line(struct bc_buf *line, struct bc_pp_mentry *e)
{
	struct bc_pp_dir *dd;
	long long d[4];
	size_t nl;
	int i;

	if (!tag(line, 'D'))
		return -1;
	for (i = 0; i < 4; i++)
		if (num(line, &d[i], 0) != 0)
			return -1;
	nl = bc_buf_avail(line);	/* the name: the rest of the line */
	if (d[0] < BC_PP_INCLUDE || d[0] > BC_PP_DEFINE || nl > BC_PP_MAX_NAME)
		return -1;
	if (e->dirs.n == e->dirs.cap) {
		e->dirs.cap = e->dirs.cap ? e->dirs.cap * 2 : 8;
		e->dirs.v = xrealloc(e->dirs.v, e->dirs.cap,
		    sizeof(*e->dirs.v));
	}
	dd = &e->dirs.v[e->dirs.n++];
	dd->kind = (int)d[0];
	dd->angled = d[1] != 0;
	dd->computed = d[2] != 0;
	dd->line = (unsigned)d[3];
	dd->name = NULL;
	if (!dd->computed || nl > 0)
		dd->name = xstrndup((const char *)bc_buf_ptr(line), nl);
	return 0;
}

int
bc_pp_memo_parse(struct bc_pp_memo *m, const char *p, size_t n)
{
	struct bc_buf in, line;
	const uint8_t *magic;
	size_t ml = sizeof(MEMO_MAGIC) - 1;

	bc_buf_view(&in, p, n);
	if (bc_buf_peek(&in, ml, &magic) != BC_OK ||
	    memcmp(magic, MEMO_MAGIC, ml) != 0)
		return BC_ERR_CORRUPT;
	(void)bc_buf_skip(&in, ml);
	while (bc_buf_avail(&in) > 0) {
		struct bc_pp_mentry *e;
		long long v[6], nd, k;
		int i;

		if (m->n >= BC_PP_MEMO_MAX_ENTRIES)
			return BC_ERR_LIMIT;
		/* "F dev ino size mtime_ns ctime_ns used hash|- ndirs path" */
		if (bc_buf_get_until(&in, '\n', &line) != BC_OK ||
		    !tag(&line, 'F'))
			return BC_ERR_CORRUPT;
		for (i = 0; i < 6; i++)
			if (num(&line, &v[i], i >= 3) != 0)
				return BC_ERR_CORRUPT;
		e = xcalloc(1, sizeof(*e));
		bc_pp_dirs_init(&e->dirs);
		e->st.dev = (uint64_t)v[0];
		e->st.ino = (uint64_t)v[1];
		e->st.size = (uint64_t)v[2];
		e->st.mtime_ns = v[3];
		e->st.ctime_ns = v[4];
		e->used = v[5];
		if (hash_word(&line, e) != 0 || num(&line, &nd, 0) != 0 ||
		    nd > BC_PP_MAX_DIRS || bc_buf_avail(&line) == 0) {
			ent_free(e);
			return BC_ERR_CORRUPT;
		}
		/* the path: the rest of the line */
		e->path = xstrndup((const char *)bc_buf_ptr(&line),
		    bc_buf_avail(&line));
		for (k = 0; k < nd; k++)
			if (bc_buf_get_until(&in, '\n', &line) != BC_OK ||
			    dir_line(&line, e) != 0) {
				ent_free(e);
				return BC_ERR_CORRUPT;
			}
		put(m, e, 1);
	}
	return BC_OK;
}

static void
load_into(struct bc_pp_memo *m, const char *file)
{
	struct bc_buf b;

	bc_buf_init(&b, BC_PP_MEMO_MAX_FILE);
	if (bc_read_file(file, BC_PP_MEMO_MAX_FILE, &b, NULL) == BC_OK)
		(void)bc_pp_memo_parse(m, (const char *)bc_buf_data(&b),
		    bc_buf_len(&b));
	bc_buf_free(&b);
}

int
bc_pp_memo_open(struct bc_pp_memo *m, const char *file, char *err)
{
	(void)err;
	memset(m, 0, sizeof(*m));
	grow(m);
	if (file != NULL) {
		m->file = xstrdup(file);
		load_into(m, file);
	}
	return BC_OK;
}

void
bc_pp_memo_close(struct bc_pp_memo *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		ent_free(m->tab[i]);
	free(m->tab);
	free(m->file);
	memset(m, 0, sizeof(*m));
}

static int
same_stamp(const struct bc_pp_stamp *a, const struct bc_pp_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	    a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* abspath's stamp now, and its slot in m: BC_OK, or the stat's error. */
static int
stamp_slot(struct bc_pp_memo *m, const char *abspath, struct bc_pp_stamp *st,
    struct bc_pp_mentry ***s, char *err)
{
	struct stat sb;

	if (stat(abspath, &sb) != 0)
		return bc_seterr(err, errno == ENOENT ? BC_ERR_NOENT : BC_ERR_IO,
		    "%s: %s", abspath, strerror(errno));
	bc_pp_stamp_of(&sb, st);
	*s = slot(m, abspath);
	return BC_OK;
}

int
bc_pp_memo_dirs(struct bc_pp_memo *m, const char *abspath,
    const struct bc_pp_dirs **dirs, char *err)
{
	struct bc_pp_mentry *e, **s;
	struct bc_pp_stamp st;
	struct bc_buf b;
	char sub[BC_ERRLEN];
	int r;

	*dirs = NULL;
	if ((r = stamp_slot(m, abspath, &st, &s, err)) != BC_OK)
		return r;
	if (*s != NULL && same_stamp(&(*s)->st, &st)) {
		m->hits++;
		if (!(*s)->fresh) {
			int64_t now = (int64_t)time(NULL);

			(*s)->fresh = 1;
			/* the LRU stamp needs no finer grain than an hour: a
			 * warm scan then writes nothing back */
			if (now - (*s)->used > BC_PP_MEMO_USED_GRAIN) {
				(*s)->used = now;
				m->dirty = 1;
			}
		}
		*dirs = &(*s)->dirs;
		return BC_OK;
	}
	m->misses++;
	bc_buf_init(&b, BC_PP_MAX_SOURCE);
	if ((r = bc_read_file(abspath, BC_PP_MAX_SOURCE, &b, sub)) != BC_OK) {
		bc_buf_free(&b);
		return bc_seterr(err, r, "%s", sub);
	}
	e = xcalloc(1, sizeof(*e));
	bc_pp_dirs_init(&e->dirs);
	r = bc_pp_lex((const char *)bc_buf_data(&b), bc_buf_len(&b), &e->dirs,
	    sub);
	bc_buf_free(&b);
	if (r != BC_OK) {
		ent_free(e);
		return bc_seterr(err, r, "%s: %s", abspath, sub);
	}
	e->path = xstrdup(abspath);
	e->st = st;
	e->used = (int64_t)time(NULL);
	e->fresh = 1;
	put(m, e, 0);
	m->dirty = strchr(abspath, '\n') == NULL ? 1 : m->dirty;
	*dirs = &e->dirs;
	return BC_OK;
}

static int
cmp_used(const void *a, const void *b)
{
	const struct bc_pp_mentry *x = *(struct bc_pp_mentry *const *)a;
	const struct bc_pp_mentry *y = *(struct bc_pp_mentry *const *)b;

	return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

static int
serialize(struct bc_pp_memo *m, struct bc_buf *b)
{
	struct bc_pp_mentry **all;
	size_t i, k = 0, j;
	int r = BC_OK;

	all = xcalloc(m->n ? m->n : 1, sizeof(*all));
	for (i = 0; i < m->cap; i++)
		if (m->tab[i] != NULL)
			all[k++] = m->tab[i];
	qsort(all, k, sizeof(*all), cmp_used);
	if (k > BC_PP_MEMO_MAX_ENTRIES)
		k = BC_PP_MEMO_MAX_ENTRIES;
	r = bc_buf_put_str(b, MEMO_MAGIC);
	for (i = 0; i < k && r == BC_OK; i++) {
		struct bc_pp_mentry *e = all[i];
		int bad = strchr(e->path, '\n') != NULL;

		for (j = 0; j < e->dirs.n; j++)
			if (e->dirs.v[j].name != NULL &&
			    strchr(e->dirs.v[j].name, '\n') != NULL)
				bad = 1;
		if (bad)
			continue;
		r = bc_buf_putf(b, "F %llu %llu %llu %lld %lld %lld ",
		    (unsigned long long)e->st.dev, (unsigned long long)e->st.ino,
		    (unsigned long long)e->st.size, (long long)e->st.mtime_ns,
		    (long long)e->st.ctime_ns, (long long)e->used);
		if (r == BC_OK && e->has_hash) {
			for (j = 0; j < 32 && r == BC_OK; j++)
				r = bc_buf_putf(b, "%02x", e->hash[j]);
			if (r == BC_OK)
				r = bc_buf_put_str(b, " ");
		} else if (r == BC_OK) {
			r = bc_buf_put_str(b, "- ");
		}
		if (r == BC_OK)
			r = bc_buf_putf(b, "%zu %s\n", e->dirs.n, e->path);
		for (j = 0; j < e->dirs.n && r == BC_OK; j++) {
			const struct bc_pp_dir *d = &e->dirs.v[j];

			r = bc_buf_putf(b, "D %d %d %d %u %s\n", d->kind,
			    d->angled, d->computed, d->line,
			    d->name != NULL ? d->name : "");
		}
	}
	free(all);
	return r;
}

int
bc_pp_memo_save(struct bc_pp_memo *m, char *err)
{
	struct bc_pp_memo disk;
	struct bc_buf b;
	struct flock fl;
	char *lock;
	size_t i;
	int fd, r;

	if (m->file == NULL || !m->dirty)
		return BC_OK;
	lock = xasprintf("%s.lock", m->file);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lock);
	if (fd < 0)
		return bc_seterr(err, BC_ERR_IO, "memo lock: %s",
		    strerror(errno));
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	while (fcntl(fd, F_SETLKW, &fl) != 0 && errno == EINTR)
		;
	/* merge: what others saved meanwhile, then ours on top */
	memset(&disk, 0, sizeof(disk));
	grow(&disk);
	load_into(&disk, m->file);
	for (i = 0; i < m->cap; i++) {
		if (m->tab[i] == NULL)
			continue;
		put(&disk, m->tab[i], 0);
		m->tab[i] = NULL;
	}
	m->n = 0;
	bc_buf_init(&b, BC_PP_MEMO_MAX_FILE);
	r = serialize(&disk, &b);
	if (r == BC_OK)
		r = bc_write_file_atomic(m->file, bc_buf_data(&b),
		    bc_buf_len(&b), 0600, err);
	else
		bc_seterr(err, r, "memo too large");
	bc_buf_free(&b);
	/* the merged table becomes ours */
	free(m->tab);
	m->tab = disk.tab;
	m->cap = disk.cap;
	m->n = disk.n;
	m->dirty = 0;
	close(fd);
	return r;
}

int
bc_pp_memo_hash(struct bc_pp_memo *m, const char *abspath,
    uint8_t out[32], char *err)
{
	struct bc_pp_mentry **s;
	struct bc_pp_stamp st;
	struct bc_buf b;
	int r;

	if ((r = stamp_slot(m, abspath, &st, &s, err)) != BC_OK)
		return r;
	if (*s != NULL && same_stamp(&(*s)->st, &st) && (*s)->has_hash) {
		m->hash_hits++;
		memcpy(out, (*s)->hash, 32);
		return BC_OK;
	}
	m->hash_misses++;
	bc_buf_init(&b, BC_PP_MAX_SOURCE);
	r = bc_read_file(abspath, BC_PP_MAX_SOURCE, &b, err);
	if (r == BC_OK)
		bc_hash_bytes(bc_buf_data(&b), bc_buf_len(&b), out);
	bc_buf_free(&b);
	if (r != BC_OK)
		return r;
	/* remembered only with directives of the same contents: the entry
	 * the scan just made or checked */
	if (*s != NULL && same_stamp(&(*s)->st, &st)) {
		memcpy((*s)->hash, out, 32);
		(*s)->has_hash = 1;
		if (strchr(abspath, '\n') == NULL)
			m->dirty = 1;
	}
	return BC_OK;
}
