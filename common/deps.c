/*
 * deps.c - make-style dependency files: parse, and write back wrapped the
 * way gcc (libcpp mkdeps) or clang (DependencyFileGenerator) do.
 *
 * Wrapping rules (measured against gcc 12 and clang 14):
 *  gcc:   limit 72.  A word of (escaped) width w at column c > 0 goes on
 *         the same line as " word" if c + w <= 72, else after " \\\n "
 *         (column restarts at 1).  Targets and deps alike; ':' follows
 *         the last target directly and counts one column.  -MP: "dep:\n"
 *         for every dep but the first.
 *  clang: limit 75.  Targets: the first at column 0; then " t" if
 *         c + w + 2 <= 75, else " \\\n  t" (column w + 2).  Deps use
 *         their unescaped width u: if c + u + 3 > 75 write " \\\n "
 *         (column 2), then " dep", column + u + 1.  -MP: "\ndep:\n" for
 *         every dep but the first.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/deps.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"

#define GCC_COLMAX	72
#define CLANG_COLMAX	75

void
bc_deps_init(struct bc_deps *d)
{
	memset(d, 0, sizeof(*d));
	bc_buf_init(&d->text, BC_MAX_DOTD);
}

void
bc_deps_free(struct bc_deps *d)
{
	bc_buf_free(&d->text);
	free(d->targets);
	free(d->deps);
	memset(d, 0, sizeof(*d));
	bc_buf_init(&d->text, BC_MAX_DOTD);
}

static int
add_word(struct bc_deps *d, int target, const uint8_t *p, size_t n,
    char *err)
{
	struct bc_deps_word *w;
	size_t off = bc_buf_len(&d->text);
	int r;

	if (d->ntargets + d->ndeps >= BC_MAX_DEPS_WORDS)
		return bc_seterr(err, BC_ERR_LIMIT, ".d: more than %d words",
		    BC_MAX_DEPS_WORDS);
	if (d->ntargets == d->cap || d->ndeps == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 16;

		d->targets = xrealloc(d->targets, nc, sizeof(*w));
		d->deps = xrealloc(d->deps, nc, sizeof(*w));
		d->cap = nc;
	}
	r = bc_buf_put(&d->text, p, n);
	if (r != BC_OK)
		return bc_seterr(err, r, ".d too large");
	w = target ? &d->targets[d->ntargets++] : &d->deps[d->ndeps++];
	w->off = off;
	w->len = n;
	return BC_OK;
}

static const uint8_t *
word_ptr(const struct bc_deps *d, const struct bc_deps_word *w)
{
	return bc_buf_data(&d->text) + w->off;
}

/* Take blanks and backslash-newlines; stop at a newline or a word.
 * Returns the bytes taken. */
static size_t
skip_blank(struct bc_buf *in)
{
	size_t n = 0, k;
	int c;

	for (;;) {
		c = bc_buf_at(in, 0);
		if (c == ' ' || c == '\t' || c == '\r')
			k = 1;
		else if (c == '\\' && bc_buf_at(in, 1) == '\n')
			k = 2;
		else if (c == '\\' && bc_buf_at(in, 1) == '\r' &&
		    bc_buf_at(in, 2) == '\n')
			k = 3;
		else
			return n;
		(void)bc_buf_skip(in, k);
		n += k;
	}
}

/* Length of the word at the cursor, not taken (a backslash before a
 * blank escapes it). */
static size_t
word_len(const struct bc_buf *in)
{
	size_t k = 0;
	int c, c1;

	while ((c = bc_buf_at(in, k)) >= 0) {
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			break;
		if (c == '\\' && (c1 = bc_buf_at(in, k + 1)) >= 0) {
			if (c1 == '\n' || (c1 == '\r' &&
			    bc_buf_at(in, k + 2) == '\n'))
				break;
			if (c1 == ' ' || c1 == '\t') {
				k += 2;
				continue;
			}
		}
		k++;
	}
	return k;
}

int
bc_deps_parse(struct bc_deps *d, const uint8_t *p, size_t n, char *err)
{
	struct bc_buf in;
	const uint8_t *w;
	size_t e, nph = 0, blanks;
	int colon = 0, r, blank = 0, rule = 0;

	bc_deps_free(d);
	if (n > BC_MAX_DOTD)
		return bc_seterr(err, BC_ERR_LIMIT, ".d larger than %zu bytes",
		    (size_t)BC_MAX_DOTD);
	bc_buf_view(&in, p, n);
	/* the first rule: targets ':' deps */
	for (;;) {
		(void)skip_blank(&in);
		if (bc_buf_at(&in, 0) < 0 || bc_buf_at(&in, 0) == '\n')
			break;
		e = word_len(&in);
		/* a word ending in a backslash would escape the blank that
		 * follows it once written back: not a shape to re-wrap */
		if (e == 0 || bc_buf_at(&in, e - 1) == '\\')
			return bc_seterr(err, BC_ERR_INVAL, ".d: stray byte");
		(void)bc_buf_peek(&in, e, &w);
		if (!colon && w[e - 1] == ':' && (e == 1 || w[e - 2] != '\\')) {
			if (e > 1 && (r = add_word(d, 1, w, e - 1, err)) !=
			    BC_OK)
				return r;
			colon = 1;
		} else if ((r = add_word(d, !colon, w, e, err)) != BC_OK)
			return r;
		(void)bc_buf_skip(&in, e);
	}
	if (!colon || d->ntargets == 0 || bc_buf_avail(&in) == 0)
		return bc_seterr(err, BC_ERR_INVAL, ".d: no complete rule");
	(void)bc_buf_skip(&in, 1);	/* its newline */
	/* -MP: "dep:" rules, maybe separated by blank lines */
	while (bc_buf_avail(&in) > 0) {
		const struct bc_deps_word *dw;

		blanks = skip_blank(&in);
		if (bc_buf_at(&in, 0) == '\n') {
			if (blanks != 0)
				return bc_seterr(err, BC_ERR_INVAL,
				    ".d: blanks on an empty line");
			blank++;
			(void)bc_buf_skip(&in, 1);
			continue;
		}
		if (blanks != 0 || bc_buf_avail(&in) == 0)
			return bc_seterr(err, BC_ERR_INVAL, ".d: bad phony rule");
		e = word_len(&in);
		if (e == 0 || bc_buf_at(&in, e) != '\n' ||
		    bc_buf_at(&in, e - 1) != ':')
			return bc_seterr(err, BC_ERR_INVAL, ".d: bad phony rule");
		if (blank > 1)
			return bc_seterr(err, BC_ERR_INVAL,
			    ".d: unexpected blank lines");
		if (rule == 0)
			d->phony_blank = blank;
		else if (blank != d->phony_blank)
			return bc_seterr(err, BC_ERR_INVAL,
			    ".d: irregular blank lines");
		nph++;
		if (nph >= d->ndeps)
			return bc_seterr(err, BC_ERR_INVAL,
			    ".d: phony rule without its dependency");
		dw = &d->deps[nph];
		(void)bc_buf_peek(&in, e, &w);
		if (dw->len != e - 1 || memcmp(word_ptr(d, dw), w, dw->len) != 0)
			return bc_seterr(err, BC_ERR_INVAL,
			    ".d: phony rule does not match its dependency");
		rule++;
		blank = 0;
		(void)bc_buf_skip(&in, e + 1);
	}
	if (blank != 0)
		return bc_seterr(err, BC_ERR_INVAL, ".d: trailing blank lines");
	if (nph > 0) {
		if (nph != d->ndeps - 1)
			return bc_seterr(err, BC_ERR_INVAL,
			    ".d: phony rules for only some dependencies");
		d->phony = 1;
	}
	return BC_OK;
}

/* Width clang counts for a dependency: its unescaped length. */
static size_t
unescaped_len(const uint8_t *p, size_t n)
{
	size_t i, u = 0, k;

	for (i = 0; i < n; ) {
		if (p[i] == '$' && i + 1 < n && p[i + 1] == '$') {
			u++;
			i += 2;
		} else if (p[i] == '\\' && i + 1 < n && p[i + 1] == '#') {
			u++;
			i += 2;
		} else if (p[i] == '\\') {
			/* k backslashes then a blank: (k - 1) / 2 + blank */
			for (k = 0; i + k < n && p[i + k] == '\\'; k++)
				;
			if (i + k < n && (p[i + k] == ' ' || p[i + k] == '\t')) {
				u += (k - 1) / 2 + 1;
				i += k + 1;
			} else {
				u += k;
				i += k;
			}
		} else {
			u++;
			i++;
		}
	}
	return u;
}

static int
put_word(struct bc_buf *out, const struct bc_deps *d,
    const struct bc_deps_word *w)
{
	return bc_buf_put(out, word_ptr(d, w), w->len);
}

static int
write_gcc(const struct bc_deps *d, struct bc_buf *out)
{
	size_t col = 0, i, nw = d->ntargets + d->ndeps;
	int r;

	for (i = 0; i < nw; i++) {
		const struct bc_deps_word *w = i < d->ntargets ?
		    &d->targets[i] : &d->deps[i - d->ntargets];

		if (col > 0) {
			if (col + w->len > GCC_COLMAX) {
				if ((r = bc_buf_put(out, " \\\n", 3)) != BC_OK)
					return r;
				col = 0;
			}
			col++;
			if ((r = bc_buf_put_u8(out, ' ')) != BC_OK)
				return r;
		}
		col += w->len;
		if ((r = put_word(out, d, w)) != BC_OK)
			return r;
		if (i + 1 == d->ntargets) {
			if ((r = bc_buf_put_u8(out, ':')) != BC_OK)
				return r;
			col++;
		}
	}
	if ((r = bc_buf_put_u8(out, '\n')) != BC_OK)
		return r;
	for (i = 1; d->phony && i < d->ndeps; i++) {
		if ((r = put_word(out, d, &d->deps[i])) != BC_OK ||
		    (r = bc_buf_put(out, ":\n", 2)) != BC_OK)
			return r;
	}
	return BC_OK;
}

static int
write_clang(const struct bc_deps *d, struct bc_buf *out)
{
	size_t col = 0, i, w;
	int r;

	for (i = 0; i < d->ntargets; i++) {
		w = d->targets[i].len;
		r = BC_OK;
		if (i == 0) {
			col = w;
		} else if (col + w + 2 > CLANG_COLMAX) {
			col = w + 2;
			r = bc_buf_put(out, " \\\n  ", 5);
		} else {
			col += w + 1;
			r = bc_buf_put_u8(out, ' ');
		}
		if (r != BC_OK)
			return r;
		if ((r = put_word(out, d, &d->targets[i])) != BC_OK)
			return r;
	}
	if ((r = bc_buf_put_u8(out, ':')) != BC_OK)
		return r;
	col++;
	for (i = 0; i < d->ndeps; i++) {
		w = unescaped_len(word_ptr(d, &d->deps[i]), d->deps[i].len);
		if (col + w + 1 + 2 > CLANG_COLMAX) {
			if ((r = bc_buf_put(out, " \\\n ", 4)) != BC_OK)
				return r;
			col = 2;
		}
		if ((r = bc_buf_put_u8(out, ' ')) != BC_OK ||
		    (r = put_word(out, d, &d->deps[i])) != BC_OK)
			return r;
		col += w + 1;
	}
	if ((r = bc_buf_put_u8(out, '\n')) != BC_OK)
		return r;
	for (i = 1; d->phony && i < d->ndeps; i++) {
		if ((r = bc_buf_put_u8(out, '\n')) != BC_OK ||
		    (r = put_word(out, d, &d->deps[i])) != BC_OK ||
		    (r = bc_buf_put(out, ":\n", 2)) != BC_OK)
			return r;
	}
	return BC_OK;
}

int
bc_deps_write(const struct bc_deps *d, int style, struct bc_buf *out,
    char *err)
{
	int r;

	if (d->ntargets == 0)
		return bc_seterr(err, BC_ERR_INVAL, ".d without a target");
	if (style == BC_DEPS_GCC)
		r = write_gcc(d, out);
	else if (style == BC_DEPS_CLANG)
		r = write_clang(d, out);
	else
		return bc_seterr(err, BC_ERR_INVAL, "unknown .d style %d",
		    style);
	if (r != BC_OK)
		return bc_seterr(err, r, "writing .d: %s", bc_strerror(r));
	return BC_OK;
}

static int
same_as(const struct bc_deps *d, int style, const uint8_t *p, size_t n)
{
	struct bc_buf out;
	char err[BC_ERRLEN];
	int same;

	bc_buf_init(&out, BC_MAX_DOTD);
	same = bc_deps_write(d, style, &out, err) == BC_OK &&
	    bc_buf_len(&out) == n &&
	    (n == 0 || memcmp(bc_buf_data(&out), p, n) == 0);
	bc_buf_free(&out);
	return same;
}

int
bc_deps_detect(const uint8_t *p, size_t n)
{
	struct bc_deps d;
	char err[BC_ERRLEN];
	int style = 0;

	bc_deps_init(&d);
	if (bc_deps_parse(&d, p, n, err) == BC_OK) {
		if (!d.phony_blank && same_as(&d, BC_DEPS_GCC, p, n))
			style = BC_DEPS_GCC;
		else if (same_as(&d, BC_DEPS_CLANG, p, n))
			style = BC_DEPS_CLANG;
	}
	bc_deps_free(&d);
	bc_buf_free(&d.text);
	return style;
}

int
bc_deps_rewrap(struct bc_buf *dotd, int style, char *err)
{
	struct bc_deps d;
	struct bc_buf out;
	int r;

	bc_deps_init(&d);
	bc_buf_init(&out, BC_MAX_DOTD);
	r = bc_deps_parse(&d, bc_buf_data(dotd), bc_buf_len(dotd), err);
	if (r == BC_OK && d.phony && d.phony_blank != (style == BC_DEPS_CLANG))
		r = bc_seterr(err, BC_ERR_INVAL,
		    ".d: phony rules of another compiler");
	if (r == BC_OK)
		r = bc_deps_write(&d, style, &out, err);
	if (r == BC_OK) {
		/* the result takes dotd's place with dotd's room, or more */
		if (bc_buf_max(dotd) > bc_buf_max(&out))
			(void)bc_buf_set_max(&out, bc_buf_max(dotd));
		bc_buf_move(dotd, &out);
	}
	bc_buf_free(&out);
	bc_deps_free(&d);
	bc_buf_free(&d.text);
	return r;
}

/* The first executable "dir/name" on path (PATH's value, or NULL),
 * malloc'd, or NULL. */
static char *
path_lookup(const char *name, const char *path)
{
	const char *s, *e;

	for (s = path; s != NULL && *s != '\0'; s = *e ? e + 1 : e) {
		char *cand;

		e = strchr(s, ':');
		if (e == NULL)
			e = s + strlen(s);
		cand = xasprintf("%.*s/%s", e == s ? 1 : (int)(e - s),
		    e == s ? "." : s, name);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
	}
	return NULL;
}

int
bc_deps_style_for(const char *compiler, const char *path)
{
	const char *b;
	char *real = NULL;
	int style;

	if (compiler == NULL)
		return BC_DEPS_GCC;
	b = bc_basename(compiler);
	if (strstr(b, "clang") != NULL)
		return BC_DEPS_CLANG;
	if (strcmp(b, "cc") != 0 && strcmp(b, "c++") != 0)
		return BC_DEPS_GCC;
	if (strchr(compiler, '/') != NULL)
		real = realpath(compiler, NULL);
	else {
		char *found = path_lookup(compiler, path);

		if (found != NULL) {
			real = realpath(found, NULL);
			free(found);
		}
	}
	style = real != NULL && strstr(bc_basename(real), "clang") != NULL ?
	    BC_DEPS_CLANG : BC_DEPS_GCC;
	free(real);
	return style;
}
