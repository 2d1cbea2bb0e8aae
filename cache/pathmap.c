/*
 * pathmap.c - path prefix maps for cache keys and outputs (pathmap.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "cache/pathmap.h"
#include "common/buf.h"
#include "common/dia.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"

#define TOKEN_BYTE '\1'

/* Where a path sits inside a word of the argv: options whose value is a
 * path joined to them. */
static const char *const joined_path_opts[] = {
	"-I", "-F", "-iquote", "-isystem", "-idirafter", "-iframework",
	"-isysroot", "-include", "-imacros", "-ivfsoverlay", "-B", "-L",
	"--sysroot=", "-fmodules-cache-path=", "-fmodule-map-file=",
	"-fprebuilt-module-path=", "-fdebug-compilation-dir=",
	"-fcoverage-compilation-dir=", "-ffile-compilation-dir=",
	"-fprofile-instr-generate=", "-fprofile-generate=",
	"-fprofile-instr-use=", "-fprofile-use=", "-MT", "-MQ", NULL
};

/* Directories of the toolchain and the OS: same for everyone, kept. */
static const char *const system_dirs[] = {
	"/usr", "/Applications", "/Library/Developer", "/System",
	"/opt/homebrew", "/nix/store", NULL
};

/* Options whose outputs could name a path in a form the leak check
 * cannot see. */
static const char *const exact_opts[] = {
	"-gz", "-gsplit-dwarf", NULL
};

static void
push_dir(struct bc_strv *v, const char *p, size_t n)
{
	while (n > 1 && p[n - 1] == '/')
		n--;
	if (n > 1 && p[0] == '/') {
		char *d = xstrndup(p, n);

		bc_strv_push(v, d);
		free(d);
	}
}

static void
read_map(struct bc_pathmap *pm, const char *val)
{
	const char *eq = strchr(val, '=');
	size_t n = eq != NULL ? (size_t)(eq - val) : strlen(val);

	if (eq == NULL || n < 2 || val[0] != '/' ||
	    memchr(val, TOKEN_BYTE, n) != NULL || memchr(val, '\n', n) != NULL) {
		bc_strv_push(&pm->old, "");
		return;
	}
	while (n > 1 && val[n - 1] == '/')
		n--;
	{
		char *o = xstrndup(val, n);

		bc_strv_push(&pm->old, o);
		free(o);
	}
}

void
bc_pathmap_init(struct bc_pathmap *pm, char *const *argv, size_t argc)
{
	size_t i, k, usable = 0;

	memset(pm, 0, sizeof(*pm));
	bc_strv_init(&pm->old);
	bc_strv_init(&pm->sys);
	for (k = 0; system_dirs[k] != NULL; k++)
		bc_strv_push(&pm->sys, system_dirs[k]);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t ol = bc_cache_key_prefix_map_opt(a);

		if (ol > 0 && pm->old.n < BC_MAX_PATH_MAPS) {
			read_map(pm, a + ol);
			continue;
		}
		if (ol > 0) {
			bc_pathmap_set_exact(pm, "too many path prefix maps",
			    NULL);
			continue;
		}
		if ((strcmp(a, "-isysroot") == 0 || strcmp(a, "--sysroot") == 0)
		    && i + 1 < argc)
			push_dir(&pm->sys, argv[i + 1], strlen(argv[i + 1]));
		else if (bc_str_has_prefix(a, "--sysroot="))
			push_dir(&pm->sys, a + 10, strlen(a + 10));
		else if (bc_str_has_prefix(a, "-isysroot/"))
			push_dir(&pm->sys, a + 9, strlen(a + 9));
		for (k = 0; exact_opts[k] != NULL; k++)
			if (bc_str_has_prefix(a, exact_opts[k]))
				bc_pathmap_set_exact(pm, "option", a);
	}
	for (i = 0; i < pm->old.n; i++)
		usable += pm->old.v[i][0] != '\0';
	if (usable == 0)
		bc_pathmap_set_exact(pm, "no path prefix map", NULL);
}

void
bc_pathmap_free(struct bc_pathmap *pm)
{
	bc_strv_free(&pm->old);
	bc_strv_free(&pm->sys);
	free(pm->exact);
	pm->exact = NULL;
}

int
bc_pathmap_active(const struct bc_pathmap *pm)
{
	return pm->exact == NULL;
}

void
bc_pathmap_set_exact(struct bc_pathmap *pm, const char *why,
    const char *what)
{
	if (pm->exact != NULL)
		return;
	pm->exact = what != NULL ? xasprintf("%s: %s", why, what) :
	    xstrdup(why);
}

/* 1 if path starts with the directory dir (a whole component). */
static int
under(const char *path, const char *dir, size_t dl)
{
	return dl > 0 && strncmp(path, dir, dl) == 0 &&
	    (path[dl] == '/' || path[dl] == '\0');
}

/* The map that covers path (the longest OLD; the first of equals), or -1. */
static long
find_map(const struct bc_pathmap *pm, const char *path, size_t *len)
{
	size_t i, best = 0;
	long at = -1;

	for (i = 0; i < pm->old.n; i++) {
		size_t ol = strlen(pm->old.v[i]);

		if (ol > best && under(path, pm->old.v[i], ol)) {
			best = ol;
			at = (long)i;
		}
	}
	*len = best;
	return at;
}

char *
bc_pathmap_path(const struct bc_pathmap *pm, const char *path)
{
	size_t len;
	long i = find_map(pm, path, &len);

	if (i < 0)
		return NULL;
	return xasprintf("%c%ld%c%s", TOKEN_BYTE, i, TOKEN_BYTE, path + len);
}

int
bc_pathmap_is_system(const struct bc_pathmap *pm, const char *path)
{
	size_t i;

	for (i = 0; i < pm->sys.n; i++)
		if (under(path, pm->sys.v[i], strlen(pm->sys.v[i])))
			return 1;
	return 0;
}

char *
bc_pathmap_need(struct bc_pathmap *pm, const char *path)
{
	char *m;

	if (path == NULL || path[0] != '/')
		return NULL;
	if ((m = bc_pathmap_path(pm, path)) != NULL)
		return m;
	if (!bc_pathmap_is_system(pm, path))
		bc_pathmap_set_exact(pm, "a path no map covers", path);
	return NULL;
}

/* Where the path of a word starts, or -1 when the word holds none. */
static long
path_start(const char *w)
{
	size_t k;

	if (w[0] == '/')
		return 0;
	if (w[0] != '-')
		return -1;
	for (k = 0; joined_path_opts[k] != NULL; k++) {
		size_t ol = strlen(joined_path_opts[k]);

		if (strncmp(w, joined_path_opts[k], ol) == 0 && w[ol] == '/')
			return (long)ol;
	}
	return -1;
}

/* 1 if some OLD occurs anywhere in w. */
static int
holds_old(const struct bc_pathmap *pm, const char *w)
{
	size_t i;

	for (i = 0; i < pm->old.n; i++)
		if (pm->old.v[i][0] != '\0' && strstr(w, pm->old.v[i]) != NULL)
			return 1;
	return 0;
}

/* A prefix map word: the option, OLD's token when OLD is a map of ours,
 * and NEW. */
static char *
map_word_of_map(const struct bc_pathmap *pm, const char *w, size_t ol)
{
	const char *val = w + ol, *eq = strchr(val, '=');
	size_t i, n;

	if (eq == NULL || val[0] != '/')
		return NULL;
	n = (size_t)(eq - val);
	while (n > 1 && val[n - 1] == '/')
		n--;
	for (i = 0; i < pm->old.n; i++)
		if (strlen(pm->old.v[i]) == n &&
		    strncmp(pm->old.v[i], val, n) == 0)
			return xasprintf("%.*s%c%zu%c%s", (int)ol, w,
			    TOKEN_BYTE, i, TOKEN_BYTE, eq);
	return NULL;
}

char *
bc_pathmap_word(struct bc_pathmap *pm, const char *w)
{
	size_t ol = bc_cache_key_prefix_map_opt(w);
	long at;
	char *m, *r;

	if (ol > 0)
		return map_word_of_map(pm, w, ol);
	at = path_start(w);
	if (at < 0) {
		if (holds_old(pm, w))
			bc_pathmap_set_exact(pm, "a mapped path inside a word",
			    w);
		return NULL;
	}
	if ((m = bc_pathmap_path(pm, w + at)) == NULL) {
		if (!bc_pathmap_is_system(pm, w + at))
			bc_pathmap_set_exact(pm, "a path no map covers", w);
		return NULL;
	}
	r = xasprintf("%.*s%s", (int)at, w, m);
	free(m);
	return r;
}

/* ---------------------------------------------------------------------
 * outputs
 */

static int
path_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
	    c == '/' || c == '+' || c == '~' || c >= 0x80;
}

/* OLD as make writes it in a .d: ' ' '#' as "\ " "\#", '$' as "$$". */
static char *
make_escape(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *r = xmalloc(2 * n + 1);

	for (i = 0; i < n; i++) {
		if (s[i] == ' ' || s[i] == '#' || s[i] == '\t')
			r[o++] = '\\';
		else if (s[i] == '$')
			r[o++] = '$';
		r[o++] = s[i];
	}
	r[o] = '\0';
	return r;
}

static void
olds_as_written(const struct bc_pathmap *pm, int make_escaped,
    struct bc_strv *v)
{
	size_t i;

	bc_strv_init(v);
	for (i = 0; i < pm->old.n; i++) {
		char *e = make_escaped ? make_escape(pm->old.v[i]) :
		    xstrdup(pm->old.v[i]);

		bc_strv_push(v, e);
		free(e);
	}
}

int
bc_pathmap_tokenize(const struct bc_pathmap *pm, int make_escaped,
    const void *in, size_t n, struct bc_buf *out, char *err)
{
	const unsigned char *p = in;
	struct bc_strv w;
	size_t i = 0, k;
	int r = BC_OK;

	if (n > 0 && memchr(p, TOKEN_BYTE, n) != NULL)
		return bc_seterr(err, BC_ERR_INVAL,
		    "the output holds a byte 0x01: not mapped");
	olds_as_written(pm, make_escaped, &w);
	while (i < n && r == BC_OK) {
		size_t best = 0, bk = 0;

		if (i == 0 || !path_char(p[i - 1]))
			for (k = 0; k < w.n; k++) {
				size_t ol = strlen(w.v[k]);

				if (ol > best && ol <= n - i &&
				    memcmp(p + i, w.v[k], ol) == 0 &&
				    (i + ol == n || p[i + ol] == '/' ||
				    !path_char(p[i + ol]))) {
					best = ol;
					bk = k;
				}
			}
		if (best > 0) {
			r = bc_buf_putf(out, "%c%zu%c", TOKEN_BYTE, bk,
			    TOKEN_BYTE);
			i += best;
		} else
			r = bc_buf_put_u8(out, p[i++]);
	}
	bc_strv_free(&w);
	return r != BC_OK ? bc_seterr(err, r, "mapped output too large") :
	    BC_OK;
}

int
bc_pathmap_detokenize(const struct bc_pathmap *pm, int make_escaped,
    const void *in, size_t n, struct bc_buf *out, char *err)
{
	const unsigned char *p = in, *t, *end;
	struct bc_strv w;
	size_t i = 0;
	int r = BC_OK;

	olds_as_written(pm, make_escaped, &w);
	while (i < n && r == BC_OK) {
		unsigned long k = 0;
		size_t d = 0;

		t = memchr(p + i, TOKEN_BYTE, n - i);
		if (t == NULL) {
			r = bc_buf_put(out, p + i, n - i);
			break;
		}
		if ((r = bc_buf_put(out, p + i, (size_t)(t - (p + i)))) != BC_OK)
			break;
		end = p + n;
		for (t++; t < end && *t >= '0' && *t <= '9' && d < 6; t++, d++)
			k = k * 10 + (unsigned long)(*t - '0');
		if (d == 0 || t >= end || *t != TOKEN_BYTE || k >= w.n ||
		    w.v[k][0] == '\0') {
			bc_strv_free(&w);
			return bc_seterr(err, BC_ERR_CORRUPT,
			    "a stored path token names no map of this command");
		}
		r = bc_buf_put_str(out, w.v[k]);
		i = (size_t)(t + 1 - p);
	}
	bc_strv_free(&w);
	return r != BC_OK ? bc_seterr(err, r, "output too large") : BC_OK;
}

static int
tokenize_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	return bc_pathmap_tokenize(ctx, 0, blob, n, out, err);
}

static int
detokenize_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	return bc_pathmap_detokenize(ctx, 0, blob, n, out, err);
}

int
bc_pathmap_tokenize_dia(const struct bc_pathmap *pm, const void *in,
    size_t n, struct bc_buf *out, char *err)
{
	if (n == 0)
		return BC_OK;
	return bc_dia_rewrite(in, n, tokenize_blob, (void *)(uintptr_t)pm,
	    out, err);
}

int
bc_pathmap_detokenize_dia(const struct bc_pathmap *pm, const void *in,
    size_t n, struct bc_buf *out, char *err)
{
	if (n == 0)
		return BC_OK;
	return bc_dia_rewrite(in, n, detokenize_blob, (void *)(uintptr_t)pm,
	    out, err);
}

/* s with every character a symbol name cannot hold as '_'. */
static char *
symbol_spelling(const char *s)
{
	char *r = xstrdup(s), *c;

	for (c = r; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9')))
			*c = '_';
	return r;
}

static int
contains(const void *p, size_t n, const char *s)
{
	size_t sl = strlen(s);
	const unsigned char *c = p, *end = c + n;

	if (sl == 0 || sl > n)
		return 0;
	while ((c = memchr(c, (unsigned char)s[0], (size_t)(end - c))) !=
	    NULL) {
		if ((size_t)(end - c) < sl)
			return 0;
		if (memcmp(c, s, sl) == 0)
			return 1;
		c++;
	}
	return 0;
}

const char *
bc_pathmap_leak(const struct bc_pathmap *pm, const char *extra,
    const void *p, size_t n)
{
	size_t i;

	if (extra != NULL && contains(p, n, extra))
		return extra;
	for (i = 0; i < pm->old.n; i++) {
		const char *o = pm->old.v[i];
		char *sym;
		int hit;

		if (o[0] == '\0')
			continue;
		if (contains(p, n, o))
			return o;
		sym = symbol_spelling(o);
		hit = contains(p, n, sym);
		free(sym);
		if (hit)
			return o;
	}
	return NULL;
}
