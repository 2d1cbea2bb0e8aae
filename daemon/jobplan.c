/*
 * jobplan.c - the daemon's argv scan and rewrite for a plain job (see
 * jobplan.h): pure, unit-tested (tests/unit/test_jobplan.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "jobplan.h"

/* Options whose value is the next argument (so it is not the source). */
static const char *const opts_with_arg[] = {
	"-x", "-o", "-MF", "-MT", "-MQ", "-MJ", "-include", "-imacros",
	"-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
	"-isystem", "-isystem-after", "-isysroot", "-iquote", "-iframework",
	"-ivfsoverlay", "-include-pch", "-I", "-D", "-U", "-L", "-A", "-F",
	"-Xclang", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xanalyzer",
	"-target", "-arch", "--param", "-mllvm", "-T", "-u", "-z",
	"--sysroot", "--serialize-diagnostics", "-gcc-toolchain",
	"-working-directory", NULL
};

static int
takes_arg(const char *a)
{
	size_t i;

	for (i = 0; opts_with_arg[i] != NULL; i++)
		if (strcmp(a, opts_with_arg[i]) == 0)
			return 1;
	return 0;
}

/* Language class of a source: 0 none, 1 C, 2 C++, 3 ObjC, 4 ObjC++. */
enum lang { L_NONE = 0, L_C, L_CXX, L_OBJC, L_OBJCXX };

static const struct {
	const char *ext;
	enum lang lang;
	int preprocessed;
} src_exts[] = {
	{ ".c", L_C, 0 }, { ".i", L_C, 1 },
	{ ".cc", L_CXX, 0 }, { ".cp", L_CXX, 0 }, { ".cxx", L_CXX, 0 },
	{ ".cpp", L_CXX, 0 }, { ".CPP", L_CXX, 0 }, { ".c++", L_CXX, 0 },
	{ ".C", L_CXX, 0 }, { ".ii", L_CXX, 1 },
	{ ".m", L_OBJC, 0 }, { ".mi", L_OBJC, 1 },
	{ ".mm", L_OBJCXX, 0 }, { ".M", L_OBJCXX, 0 }, { ".mii", L_OBJCXX, 1 },
	{ NULL, L_NONE, 0 }
};

static const char *const pp_ext[] = { "", ".i", ".ii", ".mi", ".mii" };

static enum lang
source_lang(const char *path)
{
	const char *e = bc_extension(path);
	size_t i;

	for (i = 0; src_exts[i].ext != NULL; i++)
		if (strcmp(e, src_exts[i].ext) == 0)
			return src_exts[i].lang;
	return L_NONE;
}

static const struct {
	const char *name;
	enum lang lang;
	const char *pp_name;	/* the -x value we pass on */
} x_langs[] = {
	{ "c", L_C, "cpp-output" },
	{ "cpp-output", L_C, "cpp-output" },
	{ "c-cpp-output", L_C, "c-cpp-output" },
	{ "c++", L_CXX, "c++-cpp-output" },
	{ "c++-cpp-output", L_CXX, "c++-cpp-output" },
	{ "objective-c", L_OBJC, "objective-c-cpp-output" },
	{ "objective-c-cpp-output", L_OBJC, "objective-c-cpp-output" },
	{ "objc-cpp-output", L_OBJC, "objc-cpp-output" },
	{ "objective-c++", L_OBJCXX, "objective-c++-cpp-output" },
	{ "objective-c++-cpp-output", L_OBJCXX, "objective-c++-cpp-output" },
	{ "objc++-cpp-output", L_OBJCXX, "objc++-cpp-output" },
	{ NULL, L_NONE, NULL }
};

static int
x_lang(const char *v, enum lang *lang, const char **pp)
{
	size_t i;

	for (i = 0; x_langs[i].name != NULL; i++)
		if (strcmp(v, x_langs[i].name) == 0) {
			*lang = x_langs[i].lang;
			*pp = x_langs[i].pp_name;
			return 1;
		}
	return 0;
}

/* A file name safe to create in the job dir from the client's source. */
static char *
job_src_name(const char *orig, enum lang lang)
{
	const char *b = bc_basename(orig);
	const char *e = bc_extension(b);
	size_t stem = (size_t)(e - b), i;
	int ok = stem > 0 && stem <= 100 && b[0] != '-' && b[0] != '.';

	for (i = 0; ok && i < stem; i++) {
		char c = b[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '+' || c == '-'))
			ok = 0;
	}
	if (!ok)
		return xasprintf("input%s", pp_ext[lang]);
	return xasprintf("%.*s%s", (int)stem, b, pp_ext[lang]);
}

void
bc_jobplan_init(struct bc_jobplan *plan)
{
	bc_strv_init(&plan->argv);
	plan->src_name = NULL;
	plan->out_name = NULL;
	plan->dia_name = NULL;
	plan->orig_src = NULL;
}

void
bc_jobplan_free(struct bc_jobplan *plan)
{
	bc_strv_free(&plan->argv);
	free(plan->src_name);
	free(plan->out_name);
	free(plan->dia_name);
	free(plan->orig_src);
	bc_jobplan_init(plan);
}

static int
deny(struct bc_jobplan *plan, char *why, const char *what, const char *arg)
{
	char e[256];

	if (arg != NULL) {
		bc_log_escape(arg, strlen(arg), e, sizeof(e));
		bc_seterr(why, BC_ERR_DENIED, "%s: '%s'", what, e);
	} else
		bc_seterr(why, BC_ERR_DENIED, "%s", what);
	bc_jobplan_free(plan);
	return BC_ERR_DENIED;
}

/* The scan so far. */
struct scan {
	ssize_t src_at;		/* the source's place in the plan's argv */
	ssize_t out_at;		/* -o's value's place */
	enum lang xlang;	/* the last -x, L_NONE if none */
	int mode;		/* 'c' or 'S' */
};

/* The source file: one, of a language we compile. */
static int
scan_source(const char *a, struct bc_jobplan *plan, struct scan *st,
    char *why)
{
	if (source_lang(a) == L_NONE)
		return deny(plan, why,
		    "argument is not a source file I can compile", a);
	if (st->src_at >= 0)
		return deny(plan, why, "more than one source file", a);
	st->src_at = (ssize_t)plan->argv.n;
	plan->orig_src = xstrdup(a);
	bc_strv_push(&plan->argv, a);
	return BC_OK;
}

/* -M options: dependency output is made by the client's preprocessor.
 * 1 if a was one (skipped, with its value), 0 if not, or refused. */
static int
scan_deps(char *const *argv, size_t argc, size_t *i, struct bc_jobplan *plan,
    char *why)
{
	const char *a = argv[*i];

	if (strcmp(a, "-E") == 0 || strcmp(a, "-M") == 0 ||
	    strcmp(a, "-MM") == 0)
		return deny(plan, why, "preprocess-only option", a);
	if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0 ||
	    strcmp(a, "-MG") == 0 || strcmp(a, "-MP") == 0)
		return 1;
	if (strcmp(a, "-MF") == 0 || strcmp(a, "-MT") == 0 ||
	    strcmp(a, "-MQ") == 0 || strcmp(a, "-MJ") == 0) {
		if (*i + 1 >= argc)
			return deny(plan, why, "missing value", a);
		++*i;
		return 1;
	}
	if (bc_str_has_prefix(a, "-MF") || bc_str_has_prefix(a, "-MT") ||
	    bc_str_has_prefix(a, "-MQ") || bc_str_has_prefix(a, "-MJ"))
		return 1;
	return 0;
}

/* --serialize-diagnostics PATH: ours (out.dia) when the client wants
 * one, else dropped. */
static int
scan_dia(char *const *argv, size_t argc, size_t *i,
    const struct bc_jobplan_opts *opts, struct bc_jobplan *plan, char *why)
{
	const char *a = argv[*i];

	if (*i + 1 >= argc)
		return deny(plan, why, "missing value", a);
	++*i;
	if (opts->want_dia && plan->dia_name == NULL) {
		plan->dia_name = xstrdup("out.dia");
		bc_strv_push(&plan->argv, a);
		bc_strv_push(&plan->argv, plan->dia_name);
	}
	return BC_OK;
}

/* -o FILE or -oFILE: one, its value filled in by plan_outputs. */
static int
scan_out(char *const *argv, size_t argc, size_t *i, struct bc_jobplan *plan,
    struct scan *st, char *why)
{
	const char *a = argv[*i];

	if (st->out_at >= 0)
		return deny(plan, why, "more than one -o", a);
	if (a[2] == '\0') {
		if (*i + 1 >= argc)
			return deny(plan, why, "missing value", a);
		++*i;
	}
	bc_strv_push(&plan->argv, "-o");
	st->out_at = (ssize_t)plan->argv.n;
	bc_strv_push(&plan->argv, "");	/* filled by plan_outputs */
	return BC_OK;
}

/* -x LANG or -xLANG: the preprocessed language passed on. */
static int
scan_x(char *const *argv, size_t argc, size_t *i, struct bc_jobplan *plan,
    struct scan *st, char *why)
{
	const char *a = argv[*i], *v, *xpp = NULL;

	if (a[2] == '\0') {
		if (*i + 1 >= argc)
			return deny(plan, why, "missing value", a);
		v = argv[++*i];
	} else
		v = a + 2;
	if (strcmp(v, "none") == 0) {
		st->xlang = L_NONE;
		bc_strv_push(&plan->argv, "-x");
		bc_strv_push(&plan->argv, "none");
		return BC_OK;
	}
	if (!x_lang(v, &st->xlang, &xpp))
		return deny(plan, why, "language cannot be compiled remotely",
		    v);
	bc_strv_push(&plan->argv, "-x");
	bc_strv_push(&plan->argv, xpp);
	return BC_OK;
}

/* One argument (and its value when it takes one, *i moved past it). */
static int
scan_arg(char *const *argv, size_t argc, size_t *i,
    const struct bc_jobplan_opts *opts, struct bc_jobplan *plan,
    struct scan *st, char *why)
{
	const char *a = argv[*i];
	int r;

	if (a[0] != '-' || a[1] == '\0')
		return scan_source(a, plan, st, why);
	if (strcmp(a, "-c") == 0 || strcmp(a, "-S") == 0) {
		if (st->mode == 0 || a[1] == 'S')
			st->mode = a[1];
		bc_strv_push(&plan->argv, a);
		return BC_OK;
	}
	if ((r = scan_deps(argv, argc, i, plan, why)) != 0)
		return r < 0 ? r : BC_OK;
	if (strcmp(a, "--serialize-diagnostics") == 0)
		return scan_dia(argv, argc, i, opts, plan, why);
	if (strcmp(a, "-o") == 0 || bc_str_has_prefix(a, "-o"))
		return scan_out(argv, argc, i, plan, st, why);
	if (strcmp(a, "-working-directory") == 0 ||
	    bc_str_has_prefix(a, "-working-directory="))
		return deny(plan, why, "option refused", a);
	if (strcmp(a, "-x") == 0 || (a[1] == 'x' && a[2] != '\0'))
		return scan_x(argv, argc, i, plan, st, why);
	bc_strv_push(&plan->argv, a);
	if (takes_arg(a)) {
		if (*i + 1 >= argc)
			return deny(plan, why, "missing value", a);
		bc_strv_push(&plan->argv, argv[++*i]);
	}
	return BC_OK;
}

/* After the scan: the source's and the outputs' names in the job dir,
 * our .dia, and (BOLT) the client's directory in debug info. */
static void
plan_outputs(const struct bc_jobplan_opts *opts, struct bc_jobplan *plan,
    const struct scan *st)
{
	struct bc_strv *out = &plan->argv;
	enum lang lang;

	lang = st->xlang != L_NONE ? st->xlang : source_lang(plan->orig_src);
	plan->src_name = job_src_name(plan->orig_src, lang);
	free(out->v[st->src_at]);
	out->v[st->src_at] = xstrdup(plan->src_name);
	plan->out_name = xstrdup(st->mode == 'S' ? "out.s" : "out.o");
	if (st->out_at >= 0) {
		free(out->v[st->out_at]);
		out->v[st->out_at] = xstrdup(plan->out_name);
	} else {
		bc_strv_push(out, "-o");
		bc_strv_push(out, plan->out_name);
	}
	/* The client strips its own --serialize-diagnostics path and asks
	 * with FLAG WANT_DIA instead; only clang can write one. */
	if (opts->want_dia && opts->is_clang && plan->dia_name == NULL) {
		plan->dia_name = xstrdup("out.dia");
		bc_strv_push(out, "--serialize-diagnostics");
		bc_strv_push(out, plan->dia_name);
	}
	/* BOLT: name the client's directory in debug info, not ours.  Put
	 * first so a user's own setting (later) still wins. */
	if (opts->cwd != NULL && opts->cwd[0] == '/') {
		char *d;

		if (opts->is_clang)
			d = xasprintf("-fdebug-compilation-dir=%s", opts->cwd);
		else if (opts->tmpdir != NULL)
			d = xasprintf("-fdebug-prefix-map=%s=%s", opts->tmpdir,
			    opts->cwd);
		else
			d = NULL;
		if (d != NULL) {
			bc_strv_insert(out, 1, d);
			free(d);
		}
	}
}

int
bc_jobplan_argv(char *const *argv, size_t argc, const char *name0,
    const struct bc_jobplan_opts *opts, struct bc_jobplan *plan, char *why)
{
	struct scan st = { -1, -1, L_NONE, 0 };
	size_t i;
	int r;

	bc_jobplan_init(plan);
	if (argc < 1)
		return deny(plan, why, "empty argv", NULL);
	bc_strv_push(&plan->argv, name0);
	for (i = 1; i < argc; i++)
		if ((r = scan_arg(argv, argc, &i, opts, plan, &st, why)) !=
		    BC_OK)
			return r;
	if (st.mode == 0)
		return deny(plan, why, "neither -c nor -S given", NULL);
	if (st.src_at < 0)
		return deny(plan, why, "no source file", NULL);
	plan_outputs(opts, plan, &st);
	return BC_OK;
}
