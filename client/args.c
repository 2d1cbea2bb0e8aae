/*
 * args.c - is this compiler command distributable, and if so, what runs
 * locally (the preprocessor) and what the daemon runs.
 *
 * Rules: distcc 3.4's (spec distcc-protocol.md 8.4/8.5), tightened where a
 * remote compile would differ from a local one, plus Xcode's (spec
 * xcode.md 1.2, 2, 7).  Pure: no file system access, nothing is run.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/args.h"
#include "err.h"
#include "util.h"
#include "common/json.h"

enum input_kind { IN_SOURCE, IN_ASM, IN_HEADER, IN_STDIN, IN_OTHER };

struct lang_map {
	const char *key;	/* extension or -x language */
	const char *lang;	/* plan language */
	int preprocessed;
};

static const struct lang_map ext_langs[] = {
	{ ".c", "c", 0 }, { ".i", "c", 1 },
	{ ".cc", "c++", 0 }, { ".cpp", "c++", 0 }, { ".cxx", "c++", 0 },
	{ ".cp", "c++", 0 }, { ".c++", "c++", 0 }, { ".C", "c++", 0 },
	{ ".CPP", "c++", 0 }, { ".ii", "c++", 1 },
	{ ".m", "objective-c", 0 }, { ".mi", "objective-c", 1 },
	{ ".mm", "objective-c++", 0 }, { ".M", "objective-c++", 0 },
	{ ".mii", "objective-c++", 1 },
	{ NULL, NULL, 0 }
};

static const struct lang_map x_langs[] = {
	{ "c", "c", 0 }, { "c++", "c++", 0 },
	{ "objective-c", "objective-c", 0 },
	{ "objective-c++", "objective-c++", 0 },
	{ "cpp-output", "c", 1 }, { "c++-cpp-output", "c++", 1 },
	{ "objective-c-cpp-output", "objective-c", 1 },
	{ "objc-cpp-output", "objective-c", 1 },
	{ "objective-c++-cpp-output", "objective-c++", 1 },
	{ "objc++-cpp-output", "objective-c++", 1 },
	{ NULL, NULL, 0 }
};

static const char *const asm_exts[] = { ".s", ".S", ".sx", NULL };
static const char *const header_exts[] = {
	".h", ".hh", ".hpp", ".hxx", ".H", ".h++", ".hp", ".HPP", ".tcc",
	".pch", ".gch", NULL
};

/* Options whose value is the next argument (gcc and clang drivers). */
static const char *const sep_opts[] = {
	"-o", "-x", "-D", "-U", "-I", "-L", "-l", "-A", "-B", "-u", "-T",
	"-z", "-e", "-MF", "-MT", "-MQ", "-MJ", "-include", "-imacros",
	"-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isystem",
	"-idirafter", "-iquote", "-isysroot", "-imultilib", "-iframework",
	"-iframeworkwithsysroot", "-iwithsysroot", "-F", "-ivfsoverlay",
	"-ivfsstatcache", "-index-store-path", "-index-unit-output-path",
	"--serialize-diagnostics", "-target", "-arch", "-Xpreprocessor",
	"-Xassembler", "-Xlinker", "-Xclang", "-Xanalyzer", "-mllvm",
	"-aux-info", "-include-pch", "-isystem-after", "-cxx-isystem",
	"-stdlib++-isystem", "-dumpbase", "-dumpbase-ext", "-dumpdir",
	"--param", "--sysroot", "-wrapper", "-working-directory",
	"-framework", "-filelist", "-install_name", "-compatibility_version",
	"-current_version", "-exported_symbols_list", "-bundle_loader",
	"-rpath", "-Xopenmp-target", "-Xcuda-ptxas", "-Xcuda-fatbinary",
	NULL
};

/* Remote argv: dropped together with their value (spec 8.5, xcode 7). */
static const char *const strip_sep[] = {
	"-D", "-I", "-U", "-L", "-l", "-MF", "-MT", "-MQ", "-MJ", "-include",
	"-imacros", "-iprefix", "-iwithprefix", "-isystem",
	"-iwithprefixbefore", "-idirafter", "-Xpreprocessor", "-iquote",
	"-F", "-iframework", "-iframeworkwithsysroot", "-iwithsysroot",
	"-ivfsoverlay", "-ivfsstatcache", "-index-store-path",
	"-index-unit-output-path", "--serialize-diagnostics", "-include-pch",
	"-isystem-after", "-cxx-isystem", "-stdlib++-isystem", NULL
};

/* Remote argv: dropped when the argument starts with one of these. */
static const char *const strip_prefix[] = {
	"-Wp,", "-Wl,", "-D", "-U", "-I", "-l", "-L", "-MF", "-MT", "-MQ",
	"-isystem", "-stdlib", "-iquote", "-F", "-iframework", "-idirafter",
	"-imacros", "-iprefix", "-iwithprefix", "-include", "-ivfsoverlay",
	"-ivfsstatcache", "-fmodule-map-file=", "-fmodules-cache-path=",
	"-fbuild-session-file=", "-fbuild-session-timestamp=", "-fmodules-",
	NULL
};

/* Remote argv: dropped, no value. */
static const char *const strip_alone[] = {
	"-undef", "-nostdinc", "-nostdinc++", "-MD", "-MMD", "-MG", "-MP",
	"-fmodules", "-gmodules", "-fimplicit-module-maps", NULL
};

/* cpp argv: dropped together with their value. */
static const char *const cpp_drop_sep[] = {
	"-o", "--serialize-diagnostics", "-index-store-path",
	"-index-unit-output-path", "-ivfsstatcache", NULL
};

/*
 * Options that keep a job local.  match: 0 exact, 1 prefix.  The reason
 * strings are part of the --explain output; see bc_args_classify().
 */
struct local_rule {
	const char *opt;
	int prefix;
	const char *reason;
	const char *why;
};

static const struct local_rule local_rules[] = {
	{ "--analyze", 0, "--analyze", "static analyzer run" },
	{ "-fsyntax-only", 0, "-fsyntax-only", "no object is produced" },
	{ "-###", 0, "-###", "driver dry run" },
	{ "-march=native", 0, "-march=native",
	    "generates code for the local machine" },
	{ "-mtune=native", 0, "-mtune=native",
	    "tunes code for the local machine" },
	{ "-mcpu=native", 0, "-mcpu=native",
	    "generates code for the local machine" },
	{ "-flto", 1, "-flto", "link-time optimisation objects" },
	{ "-specs=", 1, "-specs", "compiler specs file is local" },
	{ "--specs", 1, "-specs", "compiler specs file is local" },
	{ "-fplugin=", 1, "-fplugin", "compiler plugin is local" },
	{ "-fpass-plugin=", 1, "-fplugin", "compiler plugin is local" },
	{ "-fprofile-arcs", 0, "coverage", "compiler emits/uses profile data" },
	{ "-ftest-coverage", 0, "coverage", "compiler emits/uses profile data" },
	{ "--coverage", 0, "coverage", "compiler emits/uses profile data" },
	{ "-fprofile-generate", 1, "coverage",
	    "compiler emits/uses profile data" },
	{ "-fprofile-use", 1, "coverage", "compiler emits/uses profile data" },
	{ "-fauto-profile", 1, "coverage",
	    "compiler emits/uses profile data" },
	{ "-fprofile-correction", 0, "coverage",
	    "compiler emits/uses profile data" },
	{ "-frepo", 0, "coverage", "compiler emits/uses profile data" },
	{ "-fprofile-sample-use", 1, "coverage",
	    "compiler emits/uses profile data" },
	{ "-fcs-profile-generate", 1, "coverage",
	    "compiler emits/uses profile data" },
	{ "-dr", 1, "-dr", "RTL dumps are written locally" },
	{ "-save-temps", 1, "-save-temps", "temporary files are kept" },
	{ "-fdump-", 1, "-fdump", "compiler dumps are written locally" },
	{ "-Xclang", 0, "-Xclang", "frontend options of unknown effect" },
	{ "-Xarch_", 1, "-Xarch", "per-architecture options" },
	{ "-working-directory", 0, "-working-directory",
	    "paths are relative to another directory" },
	{ "-gsplit-dwarf", 1, "extra output file", "writes a .dwo file" },
	{ "-fstack-usage", 0, "extra output file", "writes a .su file" },
	{ "-fcallgraph-info", 1, "extra output file", "writes a .ci file" },
	{ "-ftime-trace", 1, "extra output file", "writes a trace file" },
	{ "-fsave-optimization-record", 1, "extra output file",
	    "writes an optimization record" },
	{ "-aux-info", 0, "extra output file", "writes prototypes file" },
	{ "-MJ", 1, "extra output file", "writes a compilation database entry" },
	{ "--help", 1, "query", "prints information, compiles nothing" },
	{ "--version", 0, "query", "prints information, compiles nothing" },
	{ "-dumpversion", 0, "query", "prints information, compiles nothing" },
	{ "-dumpfullversion", 0, "query",
	    "prints information, compiles nothing" },
	{ "-dumpmachine", 0, "query", "prints information, compiles nothing" },
	{ "-dumpspecs", 0, "query", "prints information, compiles nothing" },
	{ "-print-", 1, "query", "prints information, compiles nothing" },
	{ "--print-", 1, "query", "prints information, compiles nothing" },
	{ NULL, 0, NULL, NULL }
};

/*
 * Options that let a job leave only in BOLT pump mode: clang's
 * source-based coverage maps regions of the real source files, which a
 * preprocessed .i no longer has (its object differs from the local one),
 * while boltccd's pump compile of the real files at their mapped paths
 * gives the local object byte for byte (-ffile-prefix-map covers the
 * coverage mapping's paths).  A stock distccd's pump leaves its own
 * paths in it.  Elsewhere such a job runs locally, reason "coverage".
 * gcc's --coverage/-fprofile-arcs/-ftest-coverage stay local (above):
 * they write a .gcno next to the object, which no reply carries yet.
 */
static const struct local_rule pump_only_rules[] = {
	{ "-fprofile-instr-generate", 1, "coverage",
	    "clang source-based coverage" },
	{ "-fcoverage-mapping", 0, "coverage", "clang source-based coverage" },
	/* clang's profile use reads a .profdata: pump mode ships it */
	{ "-fprofile-instr-use", 1, "profile-use",
	    "clang profile-guided optimisation" },
	{ NULL, 0, NULL, NULL }
};

/*
 * The gcc and clang drivers' "--" options (gcc's option_map and
 * common.opt, clang's Options.td), for the implicit "boltcc --opt ..."
 * form.  A name ending in '-' is a family (prefix); any other matches
 * exactly or followed by '='.
 */
static const char *const driver_long_opts[] = {
	"--all-warnings", "--analyze", "--analyzer-", "--ansi", "--assemble",
	"--assert", "--autocomplete", "--bootclasspath", "--classpath",
	"--CLASSPATH", "--comments", "--comments-in-macros", "--compile",
	"--completion", "--config", "--constant-cfstrings", "--coverage",
	"--debug", "--define-macro", "--dependencies", "--driver-mode",
	"--dump", "--dumpbase", "--dumpdir", "--dyld-prefix", "--embed-dir",
	"--emit-static-lib", "--encoding", "--end-no-unused-arguments",
	"--entry", "--extdirs", "--extra-warnings", "--for-assembler",
	"--for-linker", "--force-link", "--gcc-install-dir", "--gcc-toolchain",
	"--help", "--help-hidden", "--imacros", "--include",
	"--include-barrier", "--include-directory", "--include-directory-after",
	"--include-prefix", "--include-with-prefix",
	"--include-with-prefix-after", "--include-with-prefix-before",
	"--language", "--ld-path", "--library-directory", "--machine",
	"--mhwdiv", "--migrate", "--no-canonical-prefixes",
	"--no-default-config", "--no-integrated-cpp", "--no-line-commands",
	"--no-pedantic", "--no-standard-includes", "--no-standard-libraries",
	"--no-sysroot-suffix", "--no-system-header-prefix", "--no-undefined",
	"--no-warnings", "--optimize", "--output", "--output-class-directory",
	"--param", "--pass-exit-codes", "--pedantic", "--pedantic-errors",
	"--pie", "--pipe", "--precompile", "--prefix", "--preprocess",
	"--print-", "--profile", "--profile-blocks", "--ptxas-path",
	"--relocatable-pch", "--resource", "--rsp-quoting", "--rtlib",
	"--save-stats", "--save-temps", "--serialize-diagnostics", "--shared",
	"--signed-char", "--specs", "--start-no-unused-arguments", "--static",
	"--static-pie", "--std", "--stdlib", "--symbolic", "--sysroot",
	"--system-header-prefix", "--target", "--target-help", "--time",
	"--trace-includes", "--traditional", "--traditional-cpp",
	"--trigraphs", "--undefine-macro", "--unsigned-char", "--unwindlib",
	"--user-dependencies", "--verbose", "--verify-debug-info", "--version",
	"--via-file-asm", "--warn-", "--write-dependencies",
	"--write-user-dependencies",
	/* offloading families (CUDA, HIP, OpenMP targets, SYCL) */
	"--amdgpu-", "--cuda-", "--gpu-", "--hip-", "--hipspv-",
	"--libomptarget-", "--no-cuda-", "--no-gpu-", "--no-offload-",
	"--offload", "--offload-", "--rocm-", "--sycl-",
	NULL
};

int
bc_args_is_driver_long_option(const char *a)
{
	size_t i, n;

	if (!bc_str_has_prefix(a, "--") || a[2] == '\0')
		return 0;
	for (i = 0; driver_long_opts[i] != NULL; i++) {
		n = strlen(driver_long_opts[i]);
		if (strncmp(a, driver_long_opts[i], n) != 0)
			continue;
		if (driver_long_opts[i][n - 1] == '-' || a[n] == '\0' ||
		    a[n] == '=')
			return 1;
	}
	return 0;
}

struct scan {
	int cc1, dash_E, dash_M, dash_c, dash_S;
	const char *pump_only;	/* a pump_only_rules reason, or NULL */
	const char *profile;	/* -fprofile-instr-use's file (the last) */
	const char *M_opt;
	const char *rule_reason;
	char *rule_detail;
	const char *missing;	/* option lacking its value */
	const char *rsp;	/* literal @file left over */
	const char *bad_lang;	/* first unsupported -x */
	const char *pch_why;
	size_t ninputs;
	const char *input;
	enum input_kind kind;
	const struct lang_map *lang;	/* of the input */
	const char *output;
	size_t nout;
	int dep;		/* -MD / -MMD */
	const char *MF;
	int MT;			/* -MT or -MQ present */
	const char *dia;
	int narch;
	int modules;
	int x_given;
};

static int
in_list(const char *s, const char *const *list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

static int
prefix_in_list(const char *s, const char *const *list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (bc_str_has_prefix(s, list[i]))
			return 1;
	return 0;
}

static const struct lang_map *
map_find(const struct lang_map *m, const char *key)
{
	for (; m->key != NULL; m++)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

static int
is_header_lang(const char *x)
{
	return strstr(x, "-header") != NULL;
}

/* "-oFILE" joined form (but not clang's -objcmt-* or ld's -object). */
static int
is_joined_o(const char *a)
{
	return a[0] == '-' && a[1] == 'o' && a[2] != '\0' &&
	    !bc_str_has_prefix(a, "-objcmt") &&
	    strcmp(a, "-object") != 0;
}

static const struct local_rule *
match_rule(const struct local_rule *rules, const char *a)
{
	const struct local_rule *r;

	for (r = rules; r->opt != NULL; r++) {
		if (r->prefix ? bc_str_has_prefix(a, r->opt) :
		    strcmp(a, r->opt) == 0)
			return r;
	}
	return NULL;
}

static void
note_rule(struct scan *s, const char *reason, char *detail)
{
	if (s->rule_reason == NULL) {
		s->rule_reason = reason;
		s->rule_detail = detail;
	} else {
		free(detail);
	}
}

static void
set_x(struct scan *s, const char *x, const char **cur_x)
{
	s->x_given = 1;
	if (strcmp(x, "none") == 0) {
		*cur_x = NULL;
		return;
	}
	*cur_x = x;
	if (map_find(x_langs, x) != NULL)
		return;
	if (is_header_lang(x)) {
		if (s->pch_why == NULL)
			s->pch_why = x;
		return;
	}
	if (s->bad_lang == NULL)
		s->bad_lang = x;
}

static void
note_input(struct scan *s, const char *a, const char *cur_x)
{
	const char *ext;

	if (++s->ninputs > 1)
		return;
	s->input = a;
	if (strcmp(a, "-") == 0) {
		s->kind = IN_STDIN;
		return;
	}
	if (cur_x != NULL) {
		s->lang = map_find(x_langs, cur_x);
		if (s->lang != NULL)
			s->kind = IN_SOURCE;
		else if (is_header_lang(cur_x))
			s->kind = IN_HEADER;
		else
			s->kind = IN_OTHER;
		return;
	}
	ext = bc_extension(a);
	s->lang = map_find(ext_langs, ext);
	if (s->lang != NULL)
		s->kind = IN_SOURCE;
	else if (in_list(ext, asm_exts))
		s->kind = IN_ASM;
	else if (in_list(ext, header_exts))
		s->kind = IN_HEADER;
	else
		s->kind = IN_OTHER;
}

/*
 * "-Wp,-MD,file" and "-Wp,-MMD,file" mean "-MD -MF file" (spec 8.2);
 * everything else is kept as written.
 */
static void
normalize(const struct bc_strv *in, struct bc_strv *out)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		const char *a = in->v[i];
		const char *comma;

		if (i > 0 && bc_str_has_prefix(a, "-Wp,") &&
		    (bc_str_has_prefix(a + 4, "-MD,") ||
		    bc_str_has_prefix(a + 4, "-MMD,"))) {
			comma = strchr(a + 4, ',');
			if (comma[1] != '\0' && strchr(comma + 1, ',') == NULL) {
				bc_strv_push_owned(out,
				    xstrndup(a + 4, (size_t)(comma - (a + 4))));
				bc_strv_push(out, "-MF");
				bc_strv_push(out, comma + 1);
				continue;
			}
		}
		bc_strv_push(out, a);
	}
}

static void
scan_args(const struct bc_strv *av, struct scan *s)
{
	const char *cur_x = NULL;
	size_t i;

	for (i = 1; i < av->n; i++) {
		const char *a = av->v[i];
		const char *next = i + 1 < av->n ? av->v[i + 1] : NULL;
		const struct local_rule *rule;

		if (a[0] != '-' || a[1] == '\0') {
			if (a[0] == '@' && s->rsp == NULL)
				s->rsp = a;
			note_input(s, a, cur_x);
			continue;
		}
		if (bc_str_has_prefix(a, "-cc1"))
			s->cc1 = 1;
		else if (strcmp(a, "-c") == 0)
			s->dash_c = 1;
		else if (strcmp(a, "-S") == 0)
			s->dash_S = 1;
		else if (strcmp(a, "-E") == 0)
			s->dash_E = 1;
		else if (strcmp(a, "-M") == 0 || strcmp(a, "-MM") == 0) {
			s->dash_M = 1;
			if (s->M_opt == NULL)
				s->M_opt = a;
		} else if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0)
			s->dep = 1;
		else if (strcmp(a, "-fmodules") == 0)
			s->modules = 1;
		else if (strcmp(a, "-MF") != 0 && bc_str_has_prefix(a, "-MF"))
			s->MF = a + 3;
		else if ((strcmp(a, "-MT") != 0 && bc_str_has_prefix(a, "-MT")) ||
		    (strcmp(a, "-MQ") != 0 && bc_str_has_prefix(a, "-MQ")))
			s->MT = 1;
		else if (strcmp(a, "-x") != 0 && bc_str_has_prefix(a, "-x"))
			set_x(s, a + 2, &cur_x);
		else if (is_joined_o(a)) {
			s->output = a + 2;
			s->nout++;
		} else if (bc_str_has_prefix(a, "-Wa,") &&
		    (strstr(a, ",-a") != NULL || strstr(a, "--MD") != NULL)) {
			note_rule(s, "-Wa listing", xasprintf("%s writes an "
			    "assembler listing or dependency file", a));
		} else if ((rule = match_rule(local_rules, a)) != NULL) {
			note_rule(s, rule->reason,
			    xasprintf("%s: %s", a, rule->why));
		} else if ((rule = match_rule(pump_only_rules, a)) != NULL) {
			if (s->pump_only == NULL)
				s->pump_only = rule->reason;
			if (bc_str_has_prefix(a, "-fprofile-instr-use"))
				s->profile = a[19] == '=' ? a + 20 :
				    a[19] == '\0' ? "default.profdata" : NULL;
		}

		if (!in_list(a, sep_opts))
			continue;
		if (next == NULL) {
			if (s->missing == NULL)
				s->missing = a;
			break;
		}
		if (strcmp(a, "-o") == 0) {
			s->output = next;
			s->nout++;
		} else if (strcmp(a, "-x") == 0) {
			set_x(s, next, &cur_x);
		} else if (strcmp(a, "-MF") == 0) {
			s->MF = next;
		} else if (strcmp(a, "-MT") == 0 || strcmp(a, "-MQ") == 0) {
			s->MT = 1;
		} else if (strcmp(a, "--serialize-diagnostics") == 0) {
			s->dia = next;
		} else if (strcmp(a, "-arch") == 0) {
			s->narch++;
		}
		i++;
	}
}

/*
 * A check of decide: the reason (static) the job runs locally, with
 * *detail set (malloc'd), or NULL when the check lets the job through.
 */
typedef const char *(*decide_fn)(const struct bc_strv *av, struct scan *s,
    char **detail);

/* The scan's rule reason and detail (the detail handed over). */
static const char *
take_rule(struct scan *s, char **detail)
{
	*detail = s->rule_detail;
	s->rule_detail = NULL;
	return s->rule_reason;
}

/* A command line that cannot be read, or a clang -cc1 job. */
static const char *
decide_command(const struct bc_strv *av, struct scan *s, char **detail)
{
	if (av->n < 2) {
		*detail = xstrdup("no arguments after the compiler");
		return "no arguments";
	}
	if (s->cc1) {
		*detail = xstrdup("clang -cc1 frontend jobs run locally "
		    "unmodified");
		return "clang -cc1 frontend job";
	}
	if (s->rsp != NULL) {
		*detail = xasprintf("response file %s could not be read", s->rsp);
		return "response file";
	}
	if (s->missing != NULL) {
		*detail = xasprintf("option %s lacks its argument", s->missing);
		return "bad arguments";
	}
	return NULL;
}

/* Rules whose jobs write no object (they only check or query). */
static int
is_query_rule(const char *reason)
{
	return reason != NULL && (strcmp(reason, "--analyze") == 0 ||
	    strcmp(reason, "-fsyntax-only") == 0 ||
	    strcmp(reason, "query") == 0 || strcmp(reason, "-###") == 0);
}

/* Anything but compiling to an object: -E, -M, a query, a link, -S. */
static const char *
decide_action(const struct bc_strv *av, struct scan *s, char **detail)
{
	if (s->dash_E) {
		*detail = xstrdup("-E: preprocessing only, runs locally");
		return "-E";
	}
	if (s->dash_M) {
		*detail = xasprintf("%s implies -E", s->M_opt);
		return s->M_opt[2] == 'M' ? "-MM" : "-M";
	}
	if (is_query_rule(s->rule_reason))
		return take_rule(s, detail);
	if (!s->dash_c && !s->dash_S) {
		*detail = xstrdup("no -c or -S: not a compile (link or other)");
		return "link";
	}
	if (s->dash_S) {
		*detail = xstrdup("-S: assembler output is produced locally");
		return "-S";
	}
	return NULL;
}

static int
is_pch_output(const char *output)
{
	return output != NULL && (bc_str_has_suffix(output, ".pch") ||
	    bc_str_has_suffix(output, ".gch"));
}

static const char *
decide_pch(const struct bc_strv *av, struct scan *s, char **detail)
{
	if (s->pch_why == NULL && !(s->ninputs == 1 && s->kind == IN_HEADER) &&
	    !is_pch_output(s->output))
		return NULL;
	*detail = xasprintf("precompiled header (%s)",
	    s->pch_why != NULL ? s->pch_why :
	    is_pch_output(s->output) ? s->output : s->input);
	return "precompiled header";
}

/* An option kept local by a rule, or a language not served. */
static const char *
decide_options(const struct bc_strv *av, struct scan *s, char **detail)
{
	if (s->rule_reason != NULL)
		return take_rule(s, detail);
	if (s->bad_lang != NULL) {
		*detail = xasprintf("-x %s is not c, c++, objective-c or "
		    "objective-c++", s->bad_lang);
		return "language";
	}
	return NULL;
}

/* Exactly one input, a C-family source or header file. */
static const char *
decide_input(const struct bc_strv *av, struct scan *s, char **detail)
{
	if (s->ninputs == 0) {
		*detail = xstrdup("no input file");
		return "no input";
	}
	if (s->ninputs > 1) {
		*detail = xasprintf("%zu input files", s->ninputs);
		return "multiple inputs";
	}
	switch (s->kind) {
	case IN_STDIN:
		*detail = xstrdup("source read from stdin");
		return "stdin input";
	case IN_ASM:
		*detail = xasprintf("%s is assembler source", s->input);
		return "assembler source";
	case IN_OTHER:
		*detail = xasprintf("%s is not a recognised source file",
		    s->input);
		return "unknown input";
	case IN_HEADER:
	case IN_SOURCE:
		break;
	}
	return NULL;
}

/* Exactly one output, a file, for one architecture. */
static const char *
decide_output(const struct bc_strv *av, struct scan *s, char **detail)
{
	if (s->nout > 1) {
		*detail = xasprintf("%zu -o options", s->nout);
		return "multiple outputs";
	}
	if (s->narch > 1) {
		*detail = xasprintf("%d -arch options (universal binary)",
		    s->narch);
		return "multiple -arch";
	}
	if (s->output != NULL && strcmp(s->output, "-") == 0) {
		*detail = xstrdup("output to stdout");
		return "output to stdout";
	}
	return NULL;
}

static const char *
decide_conftest(const struct bc_strv *av, struct scan *s, char **detail)
{
	const char *base = bc_basename(s->input);

	if (bc_str_has_prefix(base, "conftest.") ||
	    bc_str_has_prefix(base, "tmp.conftest.")) {
		*detail = xasprintf("autoconf test %s runs locally", s->input);
		return "conftest";
	}
	return NULL;
}

/* decide's checks, in order: the first reason found is the answer. */
static const decide_fn decide_checks[] = {
	decide_command, decide_action, decide_pch, decide_options,
	decide_input, decide_output, decide_conftest,
};

/* Decide; returns the reason (static) and sets *detail (malloc'd). */
static const char *
decide(const struct bc_strv *av, struct scan *s, char **detail)
{
	const char *reason = NULL;
	size_t i;

	*detail = NULL;
	for (i = 0; i < sizeof(decide_checks) / sizeof(decide_checks[0]) &&
	    reason == NULL; i++)
		reason = decide_checks[i](av, s, detail);
	return reason;
}

static char *
replace_ext(const char *path, const char *newext)
{
	const char *ext = bc_extension(path);
	size_t stem = strlen(path) - strlen(ext);

	return xasprintf("%.*s%s", (int)stem, path, newext);
}

static const char *
cpp_output_lang(const char *x)
{
	const struct lang_map *m = map_find(x_langs, x);

	if (m == NULL || m->preprocessed)
		return x;
	if (strcmp(x, "c") == 0)
		return "cpp-output";
	if (strcmp(x, "c++") == 0)
		return "c++-cpp-output";
	if (strcmp(x, "objective-c") == 0)
		return "objective-c-cpp-output";
	return "objective-c++-cpp-output";
}

static void
build_cpp_argv(const struct bc_strv *av, const struct scan *s,
    struct bc_plan *p)
{
	size_t i;

	bc_strv_push(&p->cpp_argv, av->v[0]);
	for (i = 1; i < av->n; i++) {
		const char *a = av->v[i];

		if (strcmp(a, "-c") == 0 || is_joined_o(a))
			continue;
		if (in_list(a, cpp_drop_sep)) {
			i++;
			continue;
		}
		bc_strv_push(&p->cpp_argv, a);
		if (in_list(a, sep_opts) && i + 1 < av->n)
			bc_strv_push(&p->cpp_argv, av->v[++i]);
	}
	bc_strv_push(&p->cpp_argv, "-E");
	if (p->dep_wanted) {
		if (s->MF == NULL) {
			bc_strv_push(&p->cpp_argv, "-MF");
			bc_strv_push(&p->cpp_argv, p->dep_file);
		}
		if (!s->MT) {
			/* -MQ quotes like the driver does for its own -MD. */
			bc_strv_push(&p->cpp_argv, "-MQ");
			bc_strv_push(&p->cpp_argv, p->output);
		}
	}
}

static void
build_remote_argv(const struct bc_strv *av, const struct scan *s,
    struct bc_plan *p)
{
	size_t i;

	(void)s;
	bc_strv_push(&p->remote_argv, bc_basename(av->v[0]));
	for (i = 1; i < av->n; i++) {
		const char *a = av->v[i];

		if (strcmp(a, "-o") == 0 || is_joined_o(a)) {
			bc_strv_push(&p->remote_argv, "-o");
			bc_strv_push(&p->remote_argv,
			    a[2] != '\0' ? a + 2 : av->v[++i]);
			continue;
		}
		if (in_list(a, strip_sep)) {
			i++;
			continue;
		}
		if (strcmp(a, "-x") == 0 || bc_str_has_prefix(a, "-x")) {
			const char *x = a[2] != '\0' ? a + 2 : av->v[++i];

			bc_strv_push(&p->remote_argv, "-x");
			bc_strv_push(&p->remote_argv, cpp_output_lang(x));
			continue;
		}
		if (in_list(a, strip_alone) || prefix_in_list(a, strip_prefix))
			continue;
		bc_strv_push(&p->remote_argv, a);
		if (in_list(a, sep_opts) && i + 1 < av->n)
			bc_strv_push(&p->remote_argv, av->v[++i]);
	}
	if (s->output == NULL) {
		bc_strv_push(&p->remote_argv, "-o");
		bc_strv_push(&p->remote_argv, p->output);
	}
}

void
bc_plan_init(struct bc_plan *p)
{
	memset(p, 0, sizeof(*p));
	bc_strv_init(&p->cpp_argv);
	bc_strv_init(&p->remote_argv);
	p->reason = "";
}

void
bc_plan_free(struct bc_plan *p)
{
	free(p->detail);
	free(p->compiler);
	free(p->source);
	free(p->output);
	free(p->dep_file);
	free(p->dia_file);
	free(p->profile_file);
	bc_strv_free(&p->cpp_argv);
	bc_strv_free(&p->remote_argv);
	bc_plan_init(p);
}

int
bc_args_classify(const struct bc_strv *argv, struct bc_plan *plan,
    char *err)
{
	struct bc_strv av = BC_STRV_INIT;
	struct scan s;
	const char *reason;
	char *detail;

	(void)err;
	bc_plan_init(plan);	/* need not be initialised; never freed here */
	memset(&s, 0, sizeof(s));
	if (argv == NULL || argv->n == 0) {
		plan->remote = 0;
		plan->reason = "no arguments";
		plan->detail = xstrdup("empty command line");
		return BC_OK;
	}
	normalize(argv, &av);
	scan_args(&av, &s);
	reason = decide(&av, &s, &detail);
	free(s.rule_detail);

	plan->compiler = xstrdup(av.v[0]);
	plan->dash_S = s.dash_S;
	plan->modules = s.modules;
	if (s.ninputs == 1 && s.kind != IN_STDIN)
		plan->source = xstrdup(s.input);
	if (s.lang != NULL && s.ninputs == 1) {
		plan->lang = s.lang->lang;
		plan->preprocessed = s.lang->preprocessed;
	}
	if (s.output != NULL) {
		plan->output = xstrdup(s.output);
	} else if (plan->source != NULL && (s.dash_c || s.dash_S)) {
		/* gcc: the source's basename, in the working directory. */
		char *stem = replace_ext(bc_basename(plan->source), "");

		plan->output = xasprintf("%s%s", stem, s.dash_S ? ".s" : ".o");
		free(stem);
	}
	if (s.dia != NULL)
		plan->dia_file = xstrdup(s.dia);
	if (s.profile != NULL && s.profile[0] != '\0')
		plan->profile_file = xstrdup(s.profile);

	if (reason != NULL) {
		plan->remote = 0;
		plan->reason = reason;
		plan->detail = detail;
		bc_strv_free(&av);
		return BC_OK;
	}

	/* Distributable. */
	if (s.dep && !plan->preprocessed) {
		plan->dep_wanted = 1;
		plan->dep_file = s.MF != NULL ? xstrdup(s.MF) :
		    replace_ext(plan->output, ".d");
	}
	plan->remote = 1;
	plan->reason = "distributable";
	plan->pump_only = s.pump_only;
	plan->detail = plan->pump_only != NULL ? xasprintf("compile %s to %s "
	    "remotely, in BOLT pump mode only (%s)", plan->source,
	    plan->output, plan->pump_only) : xasprintf("compile %s to %s "
	    "remotely", plan->source, plan->output);
	if (!plan->preprocessed)
		build_cpp_argv(&av, &s, plan);
	build_remote_argv(&av, &s, plan);
	bc_strv_free(&av);
	return BC_OK;
}

/* ---- JSON ---------------------------------------------------------- */

struct jbuf {
	char *p;
	size_t n, cap;
};

static void
jput(struct jbuf *j, const char *s, size_t n)
{
	if (j->n + n + 1 > j->cap) {
		size_t cap = j->cap != 0 ? j->cap : 256;

		while (cap < j->n + n + 1)
			cap *= 2;
		j->p = xrealloc(j->p, cap, 1);
		j->cap = cap;
	}
	memcpy(j->p + j->n, s, n);
	j->n += n;
	j->p[j->n] = '\0';
}

static void
jraw(struct jbuf *j, const char *s)
{
	jput(j, s, strlen(s));
}

/* Adapter: bc_json_escape's pieces into a jbuf. */
static void
jsink(void *ctx, const char *p, size_t n)
{
	jput(ctx, p, n);
}

/* s as a JSON string (common/json.h), or null. */
static void
jstr(struct jbuf *j, const char *s)
{
	if (s == NULL)
		jraw(j, "null");
	else
		bc_json_escape(s, strlen(s), jsink, j);
}

static void
jkey(struct jbuf *j, const char *k)
{
	jraw(j, ",");
	jstr(j, k);
	jraw(j, ":");
}

static void
jarr(struct jbuf *j, const struct bc_strv *sv)
{
	size_t i;

	jraw(j, "[");
	for (i = 0; i < sv->n; i++) {
		if (i > 0)
			jraw(j, ",");
		jstr(j, sv->v[i]);
	}
	jraw(j, "]");
}

char *
bc_args_json_str(const char *s)
{
	struct jbuf j = { NULL, 0, 0 };

	jstr(&j, s);
	return j.p;
}

char *
bc_plan_to_json(const struct bc_plan *p)
{
	struct jbuf j = { NULL, 0, 0 };

	jraw(&j, "{\"mode\":");
	jstr(&j, p->remote ? "remote" : "local");
	jkey(&j, "reason");
	jstr(&j, p->reason);
	jkey(&j, "detail");
	jstr(&j, p->detail);
	jkey(&j, "compiler");
	jstr(&j, p->compiler);
	jkey(&j, "source");
	jstr(&j, p->source);
	jkey(&j, "output");
	jstr(&j, p->output);
	jkey(&j, "lang");
	jstr(&j, p->lang);
	jkey(&j, "preprocessed");
	jraw(&j, p->preprocessed ? "true" : "false");
	jkey(&j, "modules");
	jraw(&j, p->modules ? "true" : "false");
	jkey(&j, "pump_only");
	jstr(&j, p->pump_only);
	jkey(&j, "remote_argv");
	jarr(&j, &p->remote_argv);
	jkey(&j, "cpp_argv");
	jarr(&j, &p->cpp_argv);
	jkey(&j, "dep_file");
	jstr(&j, p->dep_wanted ? p->dep_file : NULL);
	jkey(&j, "dia_file");
	jstr(&j, p->dia_file);
	jraw(&j, "}");
	return j.p;
}
