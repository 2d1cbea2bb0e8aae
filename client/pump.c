/*
 * pump.c - boltcc's pump mode (see pump.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/deps.h"
#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto3.h"
#include "common/util.h"
#include "client/pump.h"
#include "client/cstats.h"
#include "client/pumpx.h"
#include "preproc/memo.h"
#include "preproc/scan.h"
#include "preproc/search.h"

void
bc_cpump_init(struct bc_cpump *p)
{
	memset(p, 0, sizeof(*p));
	bc_strv_init(&p->argv);
}

void
bc_cpump_free(struct bc_cpump *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].target);
	}
	free(p->v);
	free(p->cwd);
	free(p->dep_file);
	bc_strv_free(&p->argv);
	bc_cpump_init(p);
}

static struct bc_cpump_ent *
add_ent(struct bc_cpump *p, const char *name, int kind)
{
	struct bc_cpump_ent *e;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 32;
		p->v = xrealloc(p->v, p->cap, sizeof(*p->v));
	}
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->kind = kind;
	return e;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* 1 if path is dir or below it. */
static int
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

static int
under_any(const char *path, const struct bc_strv *dirs)
{
	size_t i;

	for (i = 0; i < dirs->n; i++)
		if (under(path, dirs->v[i]))
			return 1;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* distcc's link to the server's own copy of a system directory. */
static char *
sysdir_target(const char *dir)
{
	size_t slashes = 0, i, n;
	const char *c;
	char *t, *o;

	for (c = dir; *c != '\0'; c++)
		slashes += *c == '/';
	n = 3 * (20 + slashes) + strlen(dir);
	t = xmalloc(n + 1);
	o = t;
	for (i = 0; i < 20 + slashes; i++) {
		memcpy(o, "../", 3);
		o += 3;
	}
	memcpy(o, dir + 1, strlen(dir + 1) + 1);
	return t;
}

/*
 * The compiler's default directories as distcc links them: normalized,
 * existing, and none below another one of the list.
 */
static void
link_dirs(const struct bc_pp_search *s, struct bc_strv *out)
{
	struct bc_strv norm = BC_STRV_INIT;
	size_t i, k;

	for (i = 0; i < s->sysdirs.n; i++) {
		char *d = bc_pp_abspath("/", s->sysdirs.v[i], NULL);
		struct stat st;

		if (strcmp(d, "/") == 0 || stat(d, &st) != 0 ||
		    !S_ISDIR(st.st_mode)) {
			free(d);
			continue;
		}
		bc_strv_push_owned(&norm, d);
	}
	for (i = 0; i < norm.n; i++) {
		int covered = 0;

		for (k = 0; k < norm.n && !covered; k++)
			if (k != i && under(norm.v[i], norm.v[k]) &&
			    (strcmp(norm.v[i], norm.v[k]) != 0 || k < i))
				covered = 1;
		if (!covered)
			bc_strv_push(out, norm.v[i]);
	}
	bc_strv_free(&norm);
}

static int
has_dep_target(const struct bc_strv *av)
{
	size_t i;

	for (i = 1; i < av->n; i++)
		if (bc_str_has_prefix(av->v[i], "-MT") ||
		    bc_str_has_prefix(av->v[i], "-MQ"))
			return 1;
	return 0;
}

static int
has_output(const struct bc_strv *av, const char *output)
{
	size_t i;

	for (i = 1; i < av->n; i++)
		if (strcmp(av->v[i], "-o") == 0 ||
		    (bc_str_has_prefix(av->v[i], "-o") &&
		    strcmp(av->v[i] + 2, output) == 0))
			return 1;
	return 0;
}

/* Options a stock distccd does not move under its root. */
static const char *
stock_blocker(const struct bc_pp_search *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->v[i].sysdef)
			continue;
		if (s->v[i].kind == BC_PP_ENT_HMAP)
			return "header-map";
		if (s->v[i].kind == BC_PP_ENT_FRAMEWORK &&
		    s->v[i].path[0] == '/')
			return "framework-dir";
	}
	return NULL;
}

/*
 * Options that never leave the client, with their value: the .dia is
 * asked for with FLAG WANT_DIA and written here; Xcode's index store and
 * stat cache are this machine's (a worker would write the index at the
 * client's path, or not find the cache).
 */
static int
never_sent(const char *a)
{
	static const char *const opts[] = { "--serialize-diagnostics",
	    "-index-store-path", "-index-unit-output-path", "-ivfsstatcache",
	    NULL };
	size_t i;

	for (i = 0; opts[i] != NULL; i++)
		if (strcmp(a, opts[i]) == 0)
			return 1;
	return 0;
}

/* One scan's working state, from the expanded argv to the memo. */
struct prep {
	struct bc_strv av;		/* argv, response files expanded */
	struct bc_strv links;		/* system directories linked */
	struct bc_strv hdrs;		/* the files after the source */
	struct bc_pp_search s;
	struct bc_pp_result res;
	struct bc_pp_memo memo;
	char *memofile;
};

/* What in the plan keeps the job from pump mode at all. */
static int
plan_blocker(const struct bc_plan *plan, const char *cwd, int for_bolt,
    const char **fallback, char *err)
{
	if (plan->source == NULL || plan->output == NULL || cwd == NULL ||
	    cwd[0] != '/') {
		*fallback = "no-source";
		return bc_seterr(err, BC_ERR_NOTSUP, "no source, output or cwd");
	}
	if (plan->preprocessed) {
		*fallback = "preprocessed";
		return bc_seterr(err, BC_ERR_NOTSUP, "source is preprocessed");
	}
	if (plan->dia_file != NULL && !for_bolt) {
		*fallback = "serialize-diagnostics";
		return bc_seterr(err, BC_ERR_NOTSUP,
		    "--serialize-diagnostics: a stock distccd returns no .dia");
	}
	if (plan->modules) {
		*fallback = "modules";
		return bc_seterr(err, BC_ERR_NOTSUP, "-fmodules");
	}
	if (plan->env_deps) {
		/* gcc appends to that file, with its own rules */
		*fallback = "deps-env";
		return bc_seterr(err, BC_ERR_NOTSUP,
		    "DEPENDENCIES_OUTPUT or SUNPRO_DEPENDENCIES is set");
	}
	return BC_OK;
}

/* The search order, then the include closure (x->res). */
static int
scan_closure(struct prep *x, const struct bc_plan *plan,
    const struct bc_strv *argv, const char *compiler_path, const char *cwd,
    const char *statedir, int for_bolt, const char **fallback, char *err)
{
	const char *fb = NULL;
	int r;

	r = bc_args_expand_rsp(argv, &x->av, err);
	if (r != BC_OK) {
		*fallback = "scan-error";
		return r;
	}
	r = bc_pp_search_build(&x->s, x->av.v, x->av.n, plan->lang,
	    compiler_path, statedir, plan->env_cpath, &fb, err);
	if (r != BC_OK) {
		*fallback = fb != NULL ? fb : "scan-error";
		return r;
	}
	if (!for_bolt && (fb = stock_blocker(&x->s)) != NULL) {
		*fallback = fb;
		return bc_seterr(err, BC_ERR_NOTSUP, "%s: needs a boltccd", fb);
	}
	if (statedir != NULL)
		x->memofile = xasprintf("%s/ppmemo", statedir);
	(void)bc_pp_memo_open(&x->memo, x->memofile, NULL);
	r = bc_pp_scan(&x->s, cwd, plan->source, &x->memo, &x->res, err);
	if (r != BC_OK) {
		*fallback = x->res.fallback != NULL ? x->res.fallback :
		    "scan-error";
		return r;
	}
	if (x->res.files.n == 0) {
		*fallback = "scan-error";
		return bc_seterr(err, BC_ERR_NOTSUP, "empty include closure");
	}
	return BC_OK;
}

/* ARGV: the user's command, complete (the server preprocesses). */
static void
set_argv(struct bc_cpump *p, const struct bc_strv *av,
    const struct bc_plan *plan, const char *compiler_path, const char *cwd)
{
	size_t i;

	p->cwd = xstrdup(cwd);
	bc_strv_push(&p->argv, plan->remote_argv.n > 0 ?
	    plan->remote_argv.v[0] : bc_basename(av->v[0]));
	for (i = 1; i < av->n; i++) {
		if (never_sent(av->v[i]) && i + 1 < av->n) {
			i++;
			continue;
		}
		bc_strv_push(&p->argv, av->v[i]);
	}
	p->flags = plan->dia_file != NULL ? BC_FLAG_WANT_DIA : 0;
	if (!has_output(av, plan->output)) {
		bc_strv_push(&p->argv, "-o");
		bc_strv_push(&p->argv, plan->output);
	}
	if (plan->dep_wanted) {
		p->dep_wanted = 1;
		p->dep_file = xstrdup(plan->dep_file);
		/* compiler_path has a '/' (client/local.c): no PATH lookup;
		 * a bare name (tests) is not looked up either */
		p->dep_style = bc_deps_style_for(compiler_path != NULL ?
		    compiler_path : p->argv.v[0], NULL);
		if (!has_dep_target(av)) {
			bc_strv_push(&p->argv, "-MT");
			bc_strv_push(&p->argv, plan->output);
		}
	}
}

/*
 * The source's entry, then what goes with it into x->hdrs: the headers
 * not under a linked system directory, the header maps, the profile.
 */
static int
collect_files(struct bc_cpump *p, struct prep *x, const struct bc_plan *plan,
    const char *cwd, const char **fallback, char *err)
{
	size_t i;

	link_dirs(&x->s, &x->links);
	for (i = 0; i < x->res.files.n; i++) {
		const char *f = x->res.files.v[i];

		if (i > 0 && under_any(f, &x->links))
			continue;	/* the server has it (pump's rule) */
		if (i == 0) {
			add_ent(p, f, BC_CPUMP_FILE)->line_prefix =
			    x->res.via_abs[0];
			continue;
		}
		bc_strv_push(&x->hdrs, f);
	}
	/* header maps are read by the compiler there too (boltccd rebases
	 * their absolute values under its root) */
	for (i = 0; i < x->s.n; i++)
		if (x->s.v[i].kind == BC_PP_ENT_HMAP && !x->s.v[i].sysdef) {
			char *a = bc_pp_abspath(cwd, x->s.v[i].path, NULL);
			size_t k;

			for (k = 0; k < x->hdrs.n &&
			    strcmp(x->hdrs.v[k], a) != 0; k++)
				;
			if (k == x->hdrs.n)
				bc_strv_push(&x->hdrs, a);
			free(a);
		}
	/* clang's profile use: the .profdata goes with the headers (the
	 * daemon roots the option's path, daemon/pump.c) */
	if (plan->profile_file != NULL) {
		char *a = bc_pp_abspath(cwd, plan->profile_file, NULL);
		struct stat st;

		if (stat(a, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(a);
			*fallback = "profile-not-a-file";
			return bc_seterr(err, BC_ERR_NOTSUP, "%s: not a profile "
			    "file", plan->profile_file);
		}
		bc_strv_push_owned(&x->hdrs, a);
	}
	return BC_OK;
}

/* Entries after the source: headers (sorted), system links, markers. */
static int
add_entries(struct bc_cpump *p, struct prep *x, const char **fallback,
    char *err)
{
	size_t i;

	if (x->hdrs.n > 1)
		qsort(x->hdrs.v, x->hdrs.n, sizeof(*x->hdrs.v), cmp_str);
	for (i = 0; i < x->hdrs.n; i++) {
		size_t k;

		for (k = 1; k < x->res.files.n; k++)
			if (strcmp(x->res.files.v[k], x->hdrs.v[i]) == 0)
				break;
		add_ent(p, x->hdrs.v[i], BC_CPUMP_FILE)->line_prefix =
		    k < x->res.files.n ? x->res.via_abs[k] : 0;
	}
	p->nfiles = p->n;
	for (i = 0; i < x->links.n; i++)
		add_ent(p, x->links.v[i], BC_CPUMP_LINK)->target =
		    sysdir_target(x->links.v[i]);
	for (i = 0; i < x->res.dirs.n; i++) {
		char *m;

		if (under_any(x->res.dirs.v[i], &x->links))
			continue;
		m = strcmp(x->res.dirs.v[i], "/") == 0 ?
		    xstrdup("/" BC_CPUMP_MARKER) :
		    xasprintf("%s/%s", x->res.dirs.v[i], BC_CPUMP_MARKER);
		add_ent(p, m, BC_CPUMP_MARKER_FILE);
		free(m);
	}
	if (p->n > BC_MAX_NFIL) {
		*fallback = "too-many-files";
		return bc_seterr(err, BC_ERR_NOTSUP, "%zu entries", p->n);
	}
	return BC_OK;
}

/* Content addresses for the BOLT pump request. */
static int
hash_files(struct bc_cpump *p, struct prep *x, int for_bolt,
    const char **fallback, char *err)
{
	char sub[BC_ERRLEN];
	size_t i;

	for (i = 0; for_bolt && i < p->nfiles; i++) {
		if (bc_pp_memo_hash(&x->memo, p->v[i].name, p->v[i].hash,
		    sub) != BC_OK) {
			*fallback = "unreadable-file";
			return bc_seterr(err, BC_ERR_NOTSUP, "%s", sub);
		}
		p->v[i].has_hash = 1;
	}
	p->hashed = for_bolt;
	return BC_OK;
}

/* The memo's counters into p, the memo saved, the time, x freed. */
static void
prep_done(struct bc_cpump *p, struct prep *x, uint64_t t0)
{
	char sub[BC_ERRLEN];

	p->memo_hits = x->memo.hits;
	p->memo_misses = x->memo.misses;
	p->hash_hits = x->memo.hash_hits;
	p->hash_misses = x->memo.hash_misses;
	if (x->memo.tab != NULL) {
		if (x->memofile != NULL &&
		    bc_pp_memo_save(&x->memo, sub) != BC_OK)
			bc_debug("scan memo not saved: %s", sub);
		bc_pp_memo_close(&x->memo);
	}
	p->scan_us = now_us() - t0;
	free(x->memofile);
	bc_strv_free(&x->av);
	bc_strv_free(&x->links);
	bc_strv_free(&x->hdrs);
	bc_pp_search_free(&x->s);
	bc_pp_result_free(&x->res);
}

int
bc_cpump_prepare(struct bc_cpump *p, const struct bc_plan *plan,
    const struct bc_strv *argv, const char *compiler_path, const char *cwd,
    const char *statedir, int for_bolt, const char **fallback, char *err)
{
	struct prep x;
	uint64_t t0 = now_us();
	int r;

	*fallback = NULL;
	if ((r = plan_blocker(plan, cwd, for_bolt, fallback, err)) != BC_OK)
		return r;
	memset(&x, 0, sizeof(x));
	bc_strv_init(&x.av);
	bc_strv_init(&x.links);
	bc_strv_init(&x.hdrs);
	bc_pp_search_init(&x.s);
	bc_pp_result_init(&x.res);
	r = scan_closure(&x, plan, argv, compiler_path, cwd, statedir,
	    for_bolt, fallback, err);
	if (r == BC_OK) {
		set_argv(p, &x.av, plan, compiler_path, cwd);
		r = collect_files(p, &x, plan, cwd, fallback, err);
	}
	if (r == BC_OK)
		r = add_entries(p, &x, fallback, err);
	if (r == BC_OK)
		r = hash_files(p, &x, for_bolt, fallback, err);
	prep_done(p, &x, t0);
	if (r != BC_OK && r != BC_ERR_NOTSUP && *fallback == NULL)
		*fallback = "scan-error";
	return r;
}

/* Contents of a shipped file (with the "#line 1" prefix if asked). */
static int
read_ent(const struct bc_cpump_ent *e, int prefix, struct bc_buf *b,
    char *err)
{
	bc_buf_reset(b);
	if (prefix && e->line_prefix) {
		char line[BC_MAX_PATH_LEN + 32];
		int n = snprintf(line, sizeof(line), "#line 1 \"%s\"\n",
		    e->name);

		if (n < 0 || (size_t)n >= sizeof(line))
			return bc_seterr(err, BC_ERR_LIMIT, "path too long");
		if (bc_buf_put(b, line, (size_t)n) != BC_OK)
			return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	}
	return bc_read_file(e->name, BC_MAX_FILE, b, err);
}

int
bc_cpump_encode_p3(const struct bc_cpump *p, struct bc_buf *out, char *err)
{
	struct bc_buf data;
	size_t i;
	int r;

	r = bc_proto3_write_head(out, p->cwd, &p->argv, p->n, err);
	bc_buf_init(&data, BC_MAX_FILE + BC_MAX_PATH_LEN + 32);
	for (i = 0; r == BC_OK && i < p->n; i++) {
		const struct bc_cpump_ent *e = &p->v[i];

		switch (e->kind) {
		case BC_CPUMP_LINK:
			r = bc_proto3_write_link(out, e->name, e->target, err);
			break;
		case BC_CPUMP_MARKER_FILE:
			r = bc_proto3_write_file(out, e->name, "", 0, err);
			break;
		default:
			r = read_ent(e, 1, &data, err);
			if (r == BC_OK)
				r = bc_proto3_write_file(out, e->name,
				    bc_buf_data(&data), bc_buf_len(&data), err);
			break;
		}
	}
	bc_buf_free(&data);
	return r;
}

int
bc_cpump_open(const struct bc_cpump *p, bc_cpump_encoder encode,
    const struct bc_host *h, int connect_timeout_ms, int io_timeout_ms,
    struct bc_buf *out, int *fd, struct bc_io *io, const char **why,
    char *err)
{
	int r;

	bc_buf_init(out, BC_BUF_CEILING);
	if ((r = encode(p, out, err)) != BC_OK) {
		/* a file changed or vanished since the scan: not the host's
		 * fault, but this job cannot go out in pump mode */
		bc_buf_free(out);
		*why = "encode";
		return r;
	}
	r = bc_remote_connect(h, connect_timeout_ms, fd, why, err);
	if (r != BC_OK) {
		bc_buf_free(out);
		return r;
	}
	bc_io_init(io, *fd, *fd, io_timeout_ms);
	return BC_OK;
}

int
bc_cpump_compile(struct bc_cpump *p, const struct bc_host *h, int proto,
    int connect_timeout_ms, int io_timeout_ms, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err)
{
	struct bc_buf out;
	struct bc_io io;
	int fd = -1, r;

	*why = "io";
	counts->sent = counts->received = 0;
	if (proto == BC_PROTO_BOLT)
		return bc_cpumpx_compile(p, h, connect_timeout_ms,
		    io_timeout_ms, rep, counts, why, err);
	r = bc_cpump_open(p, bc_cpump_encode_p3, h, connect_timeout_ms,
	    io_timeout_ms, &out, &fd, &io, why, err);
	if (r != BC_OK)
		return r;
	r = bc_io_write_buf(&io, &out, err);
	bc_buf_free(&out);
	rep->proto = 3;
	if (r == BC_OK)
		r = bc_proto3_read_reply(&io, NULL, &rep->status, &rep->serr,
		    &rep->sout, &rep->doto, &rep->dotd, err);
	counts->sent = io.bytes_out;
	counts->received = io.bytes_in;
	close(fd);
	if (r != BC_OK)
		*why = bc_remote_reason(r);
	return r;
}

int
bc_cpump_write_deps(const struct bc_cpump *p, const struct bc_reply *rep,
    char *err)
{
	mode_t um;

	struct bc_buf dotd;
	char why[BC_ERRLEN];
	int r;

	if (!p->dep_wanted || p->dep_file == NULL)
		return BC_OK;
	/* a stock distccd strips its temp root from the .d but keeps the
	 * line breaks made with it: re-wrap as the compiler would have
	 * (a .d of another shape is written as received) */
	bc_buf_init(&dotd, BC_MAX_DOTD);
	if (p->dep_style != 0 && bc_buf_put(&dotd, bc_buf_data(&rep->dotd),
	    bc_buf_len(&rep->dotd)) == BC_OK)
		(void)bc_deps_rewrap(&dotd, p->dep_style, why);
	else
		bc_buf_reset(&dotd);
	um = umask(0);
	umask(um);
	if (p->dep_style != 0 && bc_buf_len(&dotd) > 0)
		r = bc_write_output(p->dep_file, bc_buf_data(&dotd),
		    bc_buf_len(&dotd), (int)(0666 & ~um), err);
	else
		r = bc_write_output(p->dep_file, bc_buf_data(&rep->dotd),
		    bc_buf_len(&rep->dotd), (int)(0666 & ~um), err);
	bc_buf_free(&dotd);
	return r;
}

int
bc_cpump_try(struct bc_cpump *p, int *state, const struct bc_plan *plan,
    const struct bc_strv *argv, const char *compiler_path, const char *cwd,
    const char *statedir, int for_bolt, struct bc_cstats *stats)
{
	const char *fb = NULL;
	char err[BC_ERRLEN];
	int r;

	if (*state == 1 && for_bolt && !p->hashed) {
		/* scanned for a stock distccd first: rescan with hashes */
		bc_cpump_free(p);
		*state = 0;
	}
	if (*state == 0) {
		err[0] = '\0';
		r = bc_cpump_prepare(p, plan, argv, compiler_path, cwd,
		    statedir, for_bolt, &fb, err);
		bc_cstats_add(stats, "pump_scan_us", (long long)p->scan_us);
		bc_cstats_add(stats, "pump_scans", 1);
		bc_cstats_add(stats, "pump_memo_hits", (long long)p->memo_hits);
		bc_cstats_add(stats, "pump_memo_misses",
		    (long long)p->memo_misses);
		bc_cstats_add(stats, "pump_hash_hits", (long long)p->hash_hits);
		bc_cstats_add(stats, "pump_hash_misses",
		    (long long)p->hash_misses);
		if (r == BC_OK) {
			*state = 1;
			p->stats = stats;
			p->statedir = statedir;
			bc_debug("pump: %zu files, %zu entries, scan %llu us",
			    p->nfiles, p->n, (unsigned long long)p->scan_us);
		} else {
			*state = -1;
			bc_cstats_add2(stats, "pump_fallback_by_reason",
			    fb != NULL ? fb : "scan-error", 1);
			bc_info("pump mode not used for %s (%s): %s",
			    plan->source != NULL ? plan->source : "?",
			    fb != NULL ? fb : "scan-error", err);
			bc_cpump_free(p);
		}
	}
	return *state == 1;
}
