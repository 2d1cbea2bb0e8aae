/*
 * scan.c - include closure (see scan.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "preproc/lex.h"
#include "preproc/scan.h"

void
bc_pp_result_init(struct bc_pp_result *r)
{
	memset(r, 0, sizeof(*r));
	bc_strv_init(&r->files);
	bc_strv_init(&r->spelled);
	bc_strv_init(&r->dirs);
}

void
bc_pp_result_free(struct bc_pp_result *r)
{
	bc_strv_free(&r->files);
	bc_strv_free(&r->spelled);
	bc_strv_free(&r->dirs);
	free(r->via_abs);
	bc_pp_result_init(r);
}

static void
push_unique(struct bc_strv *v, const char *s)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return;
	bc_strv_push(v, s);
}

char *
bc_pp_abspath(const char *cwd, const char *path, struct bc_strv *need_dirs)
{
	char *full, *out;
	size_t o = 0, i = 0, n;

	if (path[0] == '/')
		full = xstrdup(path);
	else
		full = xasprintf("%s/%s", cwd, path);
	n = strlen(full);
	out = xmalloc(n + 2);
	while (i < n) {
		size_t j;

		while (i < n && full[i] == '/')
			i++;
		if (i >= n)
			break;
		for (j = i; j < n && full[j] != '/'; j++)
			;
		if (j - i == 1 && full[i] == '.') {
			/* skip */
		} else if (j - i == 2 && full[i] == '.' && full[i + 1] == '.') {
			if (need_dirs != NULL && o > 0) {
				out[o] = '\0';
				push_unique(need_dirs, out);
			}
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, full + i, j - i);
			o += j - i;
		}
		i = j;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	free(full);
	return out;
}

/* A set of strings (visited keys). */
struct sset {
	char **v;
	size_t cap, n;
};

/* 1 if added, 0 if present. */
static int
sset_add(struct sset *s, const char *k)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		char **old = s->v;
		size_t oc = s->cap, j;

		s->cap = oc ? oc * 2 : 256;
		s->v = xcalloc(s->cap, sizeof(*s->v));
		for (j = 0; j < oc; j++)
			if (old[j] != NULL) {
				i = (size_t)bc_fnv1a_str(BC_FNV1A_BASIS,
				    old[j]) & (s->cap - 1);
				while (s->v[i] != NULL)
					i = (i + 1) & (s->cap - 1);
				s->v[i] = old[j];
			}
		free(old);
	}
	i = (size_t)bc_fnv1a_str(BC_FNV1A_BASIS, k) & (s->cap - 1);
	while (s->v[i] != NULL) {
		if (strcmp(s->v[i], k) == 0)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->v[i] = xstrdup(k);
	s->n++;
	return 1;
}

static void
sset_free(struct sset *s)
{
	size_t i;

	for (i = 0; i < s->cap; i++)
		free(s->v[i]);
	free(s->v);
}

struct item {
	char *spelled;
	long idx;
};

/* "#include MACRO" met in a file, resolved once the #defines are known. */
struct pending {
	char *spelled;		/* the includer */
	long idx;
	int next;		/* #include_next */
	char *macro;
};

/* "#define NAME <x>" / "NAME \"x\"" (value set), or NAME with another
 * value (value NULL). */
struct def {
	char *name;
	char *value;
	int angled;
};

struct scan {
	const struct bc_pp_search *s;
	const char *cwd;
	struct bc_pp_memo *memo, own;
	struct bc_pp_result *res;
	struct sset visited, shipped, pend_keys, def_keys;
	struct item *q;
	size_t qn, qcap, qi;
	struct pending *pend;
	size_t npend, cpend;
	struct def *defs;
	size_t ndefs, cdefs;
};

static void
add_def(struct scan *sc, const char *name, const char *value, int angled)
{
	char *key = xasprintf("%s|%d|%s", name, angled,
	    value != NULL ? value : "\001");

	if (sset_add(&sc->def_keys, key)) {
		if (sc->ndefs == sc->cdefs) {
			sc->cdefs = sc->cdefs ? sc->cdefs * 2 : 32;
			sc->defs = xrealloc(sc->defs, sc->cdefs,
			    sizeof(*sc->defs));
		}
		sc->defs[sc->ndefs].name = xstrdup(name);
		sc->defs[sc->ndefs].value = value != NULL ? xstrdup(value) :
		    NULL;
		sc->defs[sc->ndefs].angled = angled;
		sc->ndefs++;
	}
	free(key);
}

static void
add_pending(struct scan *sc, const char *spelled, long idx, int next,
    const char *macro)
{
	char *key = xasprintf("%ld|%d|%s|%s", idx, next, macro, spelled);

	if (sset_add(&sc->pend_keys, key)) {
		if (sc->npend == sc->cpend) {
			sc->cpend = sc->cpend ? sc->cpend * 2 : 8;
			sc->pend = xrealloc(sc->pend, sc->cpend,
			    sizeof(*sc->pend));
		}
		sc->pend[sc->npend].spelled = xstrdup(spelled);
		sc->pend[sc->npend].idx = idx;
		sc->pend[sc->npend].next = next;
		sc->pend[sc->npend].macro = xstrdup(macro);
		sc->npend++;
	}
	free(key);
}

/* -D operands as definitions. */
static void
cmdline_defs(struct scan *sc)
{
	size_t i;

	for (i = 0; i < sc->s->defines.n; i++) {
		const char *d = sc->s->defines.v[i], *eq = strchr(d, '=');
		char *name = eq != NULL ? xstrndup(d, (size_t)(eq - d)) :
		    xstrdup(d);
		size_t vl = eq != NULL ? strlen(eq + 1) : 0;

		if (vl >= 3 && ((eq[1] == '"' && eq[vl] == '"') ||
		    (eq[1] == '<' && eq[vl] == '>'))) {
			char *v = xstrndup(eq + 2, vl - 2);

			add_def(sc, name, v, eq[1] == '<');
			free(v);
		} else {
			add_def(sc, name, NULL, 0);
		}
		free(name);
	}
}

static void
enqueue(struct scan *sc, const char *spelled, long idx)
{
	char *abs = bc_pp_abspath(sc->cwd, spelled, &sc->res->dirs);
	char *key = xasprintf("%ld|%s", idx, abs);

	if (sset_add(&sc->visited, key)) {
		if (sc->qn == sc->qcap) {
			sc->qcap = sc->qcap ? sc->qcap * 2 : 64;
			sc->q = xrealloc(sc->q, sc->qcap, sizeof(*sc->q));
		}
		sc->q[sc->qn].spelled = xstrdup(spelled);
		sc->q[sc->qn].idx = idx;
		sc->qn++;
		if (sset_add(&sc->shipped, abs)) {
			struct bc_pp_result *r = sc->res;

			bc_strv_push(&r->files, abs);
			bc_strv_push(&r->spelled, spelled);
			r->via_abs = xrealloc(r->via_abs, r->files.n,
			    sizeof(int));
			r->via_abs[r->files.n - 1] = spelled[0] == '/';
		}
	}
	free(key);
	free(abs);
}

static char *
dir_of(const char *p)
{
	const char *sl = strrchr(p, '/');

	if (sl == NULL)
		return xstrdup(".");
	if (sl == p)
		return xstrdup("/");
	return xstrndup(p, (size_t)(sl - p));
}

static int
is_sysdef(const struct bc_pp_search *s, long idx)
{
	return idx >= 0 && (size_t)idx < s->n && s->v[idx].sysdef;
}

static void enqueue(struct scan *sc, const char *spelled, long idx);

static char *dir_of(const char *p);

static int is_sysdef(const struct bc_pp_search *s, long idx);

/*
 * Resolve the pending computed includes through every definition of their
 * macro seen so far.  A macro also defined with a value that is not one
 * header name cannot be followed: BC_ERR_NOTSUP.  One never defined in
 * the files or on the command line is taken as not reached (an active
 * "#include MACRO" of an undefined macro is an error; if a system header
 * defines it, the server compiles with its own copy or fails, and the
 * client then compiles locally).
 */
static int
resolve_pending(struct scan *sc, char *err)
{
	struct bc_pp_result *res = sc->res;
	size_t i, k;

	for (i = 0; i < sc->npend; i++) {
		const struct pending *p = &sc->pend[i];
		char *idir = dir_of(p->spelled);
		long from = p->next && p->idx >= 0 ? p->idx : -1;

		for (k = 0; k < sc->ndefs; k++) {
			const struct def *d = &sc->defs[k];
			char *found = NULL;
			long idx = -1;

			if (strcmp(d->name, p->macro) != 0)
				continue;
			if (d->value == NULL) {
				free(idir);
				res->fallback = "computed-include";
				return bc_seterr(err, BC_ERR_NOTSUP,
				    "%s: #include %s: the macro has a value "
				    "that is not a header name", p->spelled,
				    p->macro);
			}
			if (bc_pp_resolve(sc->s, d->value, d->angled,
			    from >= 0 ? NULL : idir, from, &found, &idx)
			    != BC_OK)
				continue;
			if (is_sysdef(sc->s, idx))
				res->system_hits++;
			else
				enqueue(sc, found, idx);
			free(found);
		}
		free(idir);
	}
	return BC_OK;
}

static int
scan_one(struct scan *sc, const struct item *it, char *err)
{
	const struct bc_pp_dirs *dirs;
	struct bc_pp_result *res = sc->res;
	char *abs, *idir, sub[BC_ERRLEN];
	size_t i;
	int r;

	abs = bc_pp_abspath(sc->cwd, it->spelled, NULL);
	r = bc_pp_memo_dirs(sc->memo, abs, &dirs, sub);
	free(abs);
	if (r != BC_OK) {
		res->fallback = "unreadable-file";
		return bc_seterr(err, BC_ERR_NOTSUP, "%s", sub);
	}
	idir = dir_of(it->spelled);
	for (i = 0; i < dirs->n; i++) {
		const struct bc_pp_dir *d = &dirs->v[i];
		char *found = NULL;
		long idx = -1, from = -1;
		int next = d->kind == BC_PP_INCLUDE_NEXT ||
		    d->kind == BC_PP_HAS_INCLUDE_NEXT;

		if (d->kind == BC_PP_DEFINE) {
			char *sp;

			if (d->name == NULL)
				continue;
			if (d->computed) {
				add_def(sc, d->name, NULL, 0);
				continue;
			}
			sp = strchr(d->name, ' ');
			if (sp != NULL) {
				char *nm = xstrndup(d->name,
				    (size_t)(sp - d->name));

				add_def(sc, nm, sp + 1, d->angled);
				free(nm);
			}
			continue;
		}
		if (d->computed && d->name != NULL && (d->kind ==
		    BC_PP_INCLUDE || d->kind == BC_PP_INCLUDE_NEXT ||
		    d->kind == BC_PP_IMPORT)) {
			add_pending(sc, it->spelled, it->idx, next, d->name);
			continue;
		}
		if (d->computed) {
			free(idir);
			res->fallback = "computed-include";
			return bc_seterr(err, BC_ERR_NOTSUP,
			    "%s:%u: computed #include", it->spelled, d->line);
		}
		if (next && it->idx >= 0)
			from = it->idx;
		if (bc_pp_resolve(sc->s, d->name, d->angled,
		    from >= 0 ? NULL : idir, from, &found, &idx) != BC_OK)
			continue;	/* maybe under a false #if */
		if (is_sysdef(sc->s, idx)) {
			res->system_hits++;
			free(found);
			continue;
		}
		enqueue(sc, found, idx);
		free(found);
		if (res->files.n > BC_PP_MAX_CLOSURE) {
			free(idir);
			res->fallback = "too-many-files";
			return bc_seterr(err, BC_ERR_NOTSUP,
			    "include closure above %d files",
			    BC_PP_MAX_CLOSURE);
		}
	}
	free(idir);
	return BC_OK;
}

int
bc_pp_scan(const struct bc_pp_search *s, const char *cwd,
    const char *source, struct bc_pp_memo *memo, struct bc_pp_result *res,
    char *err)
{
	struct scan sc;
	size_t i;
	int r = BC_OK;

	memset(&sc, 0, sizeof(sc));
	sc.s = s;
	sc.cwd = cwd;
	sc.res = res;
	if (memo == NULL) {
		(void)bc_pp_memo_open(&sc.own, NULL, NULL);
		sc.memo = &sc.own;
	} else {
		sc.memo = memo;
	}
	if (!bc_pp_file_exists(source)) {
		res->fallback = "unreadable-file";
		r = bc_seterr(err, BC_ERR_NOTSUP, "%s: not a readable file",
		    source);
		goto out;
	}
	enqueue(&sc, source, -1);
	/* -include/-imacros: searched from the current directory first */
	for (i = 0; i < s->forced.n; i++) {
		char *found = NULL;
		long idx = -1;

		if (bc_pp_resolve(s, s->forced.v[i], 0, ".", -1, &found,
		    &idx) != BC_OK) {
			res->fallback = "unreadable-file";
			r = bc_seterr(err, BC_ERR_NOTSUP,
			    "-include %s not found", s->forced.v[i]);
			goto out;
		}
		if (!is_sysdef(s, idx))
			enqueue(&sc, found, idx);
		free(found);
	}
	/* the working directory and user include dirs must exist there */
	push_unique(&res->dirs, cwd);
	for (i = 0; i < s->user_dirs.n; i++) {
		char *a = bc_pp_abspath(cwd, s->user_dirs.v[i], &res->dirs);

		push_unique(&res->dirs, a);
		free(a);
	}
	cmdline_defs(&sc);
	for (sc.qi = 0; r == BC_OK;) {
		size_t before_defs, before_pend, before_q;

		for (; sc.qi < sc.qn; sc.qi++)
			if ((r = scan_one(&sc, &sc.q[sc.qi], err)) != BC_OK)
				break;
		if (r != BC_OK || sc.npend == 0)
			break;
		before_defs = sc.ndefs;
		before_pend = sc.npend;
		before_q = sc.qn;
		if ((r = resolve_pending(&sc, err)) != BC_OK)
			break;
		if (sc.qn == before_q && sc.ndefs == before_defs &&
		    sc.npend == before_pend)
			break;
		if (res->files.n > BC_PP_MAX_CLOSURE) {
			res->fallback = "too-many-files";
			r = bc_seterr(err, BC_ERR_NOTSUP,
			    "include closure above %d files",
			    BC_PP_MAX_CLOSURE);
			break;
		}
	}
out:
	for (i = 0; i < sc.npend; i++) {
		free(sc.pend[i].spelled);
		free(sc.pend[i].macro);
	}
	free(sc.pend);
	for (i = 0; i < sc.ndefs; i++) {
		free(sc.defs[i].name);
		free(sc.defs[i].value);
	}
	free(sc.defs);
	sset_free(&sc.pend_keys);
	sset_free(&sc.def_keys);
	for (i = 0; i < sc.qn; i++)
		free(sc.q[i].spelled);
	free(sc.q);
	sset_free(&sc.visited);
	sset_free(&sc.shipped);
	if (memo == NULL)
		bc_pp_memo_close(&sc.own);
	return r;
}
