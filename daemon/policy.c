/*
 * policy.c - compiler allowlist and option refusals (see policy.h).
 *
 * Everything here is a pure decision on strings except bc_policy_resolve
 * and bc_policy_add_dir, which look at the file system.  Refusal reasons
 * are written for the log and for BOLT clients; peer strings in them are
 * escaped.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "policy.h"

#define DEFAULT_SEARCH_PATH "/usr/local/bin:/usr/bin:/bin"

static const char *const builtin_bases[] = {
	"cc", "c++", "gcc", "g++", "clang", "clang++", NULL
};

/* Names that are us (or distcc): never executed as "the compiler". */
static const char *const self_names[] = {
	"boltcc", "boltccd", "distcc", "distccd", "ccache", NULL
};

void
bc_policy_init(struct bc_policy *p)
{
	bc_strv_init(&p->names);
	bc_strv_init(&p->paths);
	p->search_path = xstrdup(DEFAULT_SEARCH_PATH);
}

void
bc_policy_free(struct bc_policy *p)
{
	bc_strv_free(&p->names);
	bc_strv_free(&p->paths);
	free(p->search_path);
	p->search_path = NULL;
}

void
bc_policy_set_path(struct bc_policy *p, const char *path)
{
	free(p->search_path);
	p->search_path = xstrdup(path != NULL && *path != '\0' ? path :
	    DEFAULT_SEARCH_PATH);
}

static void
esc(const char *s, char *out, size_t outlen)
{
	bc_log_escape(s, strlen(s), out, outlen);
}

/* [A-Za-z0-9._+-]+, not "." or "..", not starting with '-'. */
static int
safe_name(const char *s)
{
	const char *c;

	if (*s == '\0' || *s == '-' || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return 0;
	for (c = s; *c != '\0'; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
		    *c == '+' || *c == '-'))
			return 0;
	}
	return 1;
}

static int
all_digits(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 4)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Length of name without a "-N" or "-N.N" version suffix. */
static size_t
strip_version(const char *s, size_t n)
{
	size_t i = n, dot = 0;

	while (i > 0 && s[i - 1] != '-')
		i--;
	if (i == 0)
		return n;
	/* s[i..n) is the candidate suffix after '-' */
	{
		const char *v = s + i;
		size_t vn = n - i, k;

		for (k = 0; k < vn; k++)
			if (v[k] == '.') {
				if (dot != 0)
					return n;
				dot = k + 1;
			}
		if (dot == 0) {
			if (!all_digits(v, vn))
				return n;
		} else if (!all_digits(v, dot - 1) ||
		    !all_digits(v + dot, vn - dot))
			return n;
	}
	return i - 1;
}

/* "<a>-<b>-<c>" or "<a>-<b>-<c>-<d>" of [A-Za-z0-9_.]+ parts. */
static int
triple_ok(const char *s, size_t n)
{
	size_t i, parts = 1, partlen = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '-') {
			if (partlen == 0)
				return 0;
			parts++;
			partlen = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.'))
			return 0;
		partlen++;
	}
	return partlen > 0 && (parts == 3 || parts == 4);
}

int
bc_policy_builtin_name(const char *name)
{
	size_t n, i;

	if (!safe_name(name))
		return 0;
	n = strip_version(name, strlen(name));
	for (i = 0; builtin_bases[i] != NULL; i++) {
		size_t bl = strlen(builtin_bases[i]);

		if (n < bl || memcmp(name + n - bl, builtin_bases[i], bl) != 0)
			continue;
		if (n == bl)
			return 1;
		if (n > bl + 1 && name[n - bl - 1] == '-' &&
		    triple_ok(name, n - bl - 1))
			return 1;
	}
	return 0;
}

int
bc_policy_allow(struct bc_policy *p, const char *spec, char *err)
{
	if (spec == NULL || *spec == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "empty compiler name");
	if (spec[0] == '/') {
		if (strstr(spec, "/../") != NULL || strstr(spec, "/./") != NULL ||
		    bc_str_has_suffix(spec, "/..") ||
		    bc_str_has_suffix(spec, "/.") || bc_str_has_suffix(spec, "/"))
			return bc_seterr(err, BC_ERR_INVAL,
			    "compiler path '%s' must be a plain absolute path",
			    spec);
		bc_strv_push(&p->paths, spec);
		return BC_OK;
	}
	if (!safe_name(spec))
		return bc_seterr(err, BC_ERR_INVAL,
		    "compiler '%s' must be a name of [A-Za-z0-9._+-] or an "
		    "absolute path", spec);
	bc_strv_push(&p->names, spec);
	return BC_OK;
}

int
bc_policy_add_dir(struct bc_policy *p, const char *dir)
{
	DIR *d;
	struct dirent *de;
	int added = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (!safe_name(de->d_name))
			continue;
		bc_strv_push(&p->names, de->d_name);
		added++;
	}
	closedir(d);
	return added;
}

static int
strv_has(const struct bc_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

int
bc_policy_check_name(const struct bc_policy *p, const char *argv0,
    const char **name_out, char *why)
{
	char e[256];
	const char *name = argv0;

	*name_out = NULL;
	if (argv0 == NULL || *argv0 == '\0')
		return bc_seterr(why, BC_ERR_DENIED, "empty compiler name");
	if (argv0[0] == '/' && strv_has(&p->paths, argv0)) {
		*name_out = argv0;
		return BC_OK;
	}
	if (strncasecmp(name, "/usr/bin/", 9) == 0)
		name += 9;
	else if (strncasecmp(name, "/bin/", 5) == 0)
		name += 5;
	esc(argv0, e, sizeof(e));
	if (strchr(name, '/') != NULL)
		return bc_seterr(why, BC_ERR_DENIED,
		    "compiler '%s' is a path that is not allowed "
		    "(use --allow-compiler /abs/path)", e);
	if (!safe_name(name))
		return bc_seterr(why, BC_ERR_DENIED,
		    "compiler name '%s' has characters outside [A-Za-z0-9._+-]",
		    e);
	if (!bc_policy_builtin_name(name) && !strv_has(&p->names, name))
		return bc_seterr(why, BC_ERR_DENIED,
		    "compiler '%s' is not allowed (not a built-in compiler "
		    "name, not in a distcc masquerade dir, no --allow-compiler)",
		    e);
	*name_out = name;
	return BC_OK;
}

static int
is_self(const char *path)
{
	char real[PATH_MAX];
	const char *b;
	size_t i;

	if (realpath(path, real) == NULL)
		return 1;
	b = bc_basename(real);
	for (i = 0; self_names[i] != NULL; i++)
		if (strcmp(b, self_names[i]) == 0)
			return 1;
	return 0;
}

static int
executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

int
bc_policy_resolve(const struct bc_policy *p, const char *argv0,
    char **path_out, char *why)
{
	const char *name, *dir, *end;
	char e[256];
	int r;

	*path_out = NULL;
	if ((r = bc_policy_check_name(p, argv0, &name, why)) != BC_OK)
		return r;
	esc(name, e, sizeof(e));
	if (name[0] == '/') {
		if (!executable_file(name))
			return bc_seterr(why, BC_ERR_COMPILER,
			    "allowed compiler %s is not an executable file", e);
		*path_out = xstrdup(name);
		return BC_OK;
	}
	for (dir = p->search_path; dir != NULL && *dir != '\0'; dir = end) {
		char *cand;
		size_t dl;

		end = strchr(dir, ':');
		dl = end != NULL ? (size_t)(end - dir) : strlen(dir);
		if (end != NULL)
			end++;
		if (dl == 0 || dir[0] != '/')
			continue;	/* relative PATH entries are never used */
		cand = xasprintf("%.*s/%s", (int)dl, dir, name);
		if (executable_file(cand) && !is_self(cand)) {
			*path_out = cand;
			return BC_OK;
		}
		free(cand);
	}
	return bc_seterr(why, BC_ERR_COMPILER,
	    "compiler '%s' not found in the daemon's PATH", e);
}

/* The option that follows -Xclang must not load code or write files. */
static const char *const xclang_refused[] = {
	"-load", "-plugin", "-add-plugin", "-fplugin", "-fpass-plugin",
	"-dependency-file", "-header-include-file", "-stats-file",
	"-coverage-notes-file", "-coverage-data-file", "-o",
	NULL
};

/* Option prefixes refused outright. */
static const char *const refused_prefix[] = {
	"-fplugin",		/* loads a shared object into cc1 */
	"-fpass-plugin",	/* clang: loads an LLVM pass plugin */
	"-specs", "--specs",	/* spec files can run any program */
	"-B",			/* driver search dir: runs our programs */
	"--prefix",		/* gcc alias of -B */
	"-wrapper",		/* runs subprocesses under a wrapper */
	"--config",		/* clang config files (incl. -dir options) */
	"-save-temps",		/* writes next to paths we do not control */
	"-aux-info",		/* writes a file at a client path */
	"-dumpdir", "-dumpbase",
	"-foptimization-record-file",
	"-fprofile-note",
	"-fcrash-diagnostics-dir",
	"-fproc-stat-report",
	"-fmodules-cache-path",
	"-fmodule-file",
	"-ftime-trace-file",
	NULL
};

static int
has_prefix_any(const char *a, const char *const *list, const char **hit)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (bc_str_has_prefix(a, list[i])) {
			*hit = list[i];
			return 1;
		}
	return 0;
}

/* -Wa,x,y / -Xassembler x: refuse listings (-a...) and output (-o). */
static int
bad_as_option(const char *piece)
{
	return bc_str_has_prefix(piece, "-a") || bc_str_has_prefix(piece, "-o") ||
	    bc_str_has_prefix(piece, "--MD") || bc_str_has_prefix(piece, "@");
}

static int
bad_wa_list(const char *list)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		const char *c = strchr(p, ',');
		char piece[64];
		size_t n = c != NULL ? (size_t)(c - p) : strlen(p);

		if (n >= sizeof(piece))
			n = sizeof(piece) - 1;
		memcpy(piece, p, n);
		piece[n] = '\0';
		if (bad_as_option(piece))
			return 1;
		p = c != NULL ? c + 1 : NULL;
	}
	return 0;
}

int
bc_policy_check_args(char *const *argv, size_t argc, char *why)
{
	char e[256];
	const char *hit;
	size_t i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		esc(a, e, sizeof(e));
		if (a[0] == '@')
			return bc_seterr(why, BC_ERR_DENIED,
			    "response file argument '%s' refused", e);
		if (has_prefix_any(a, refused_prefix, &hit))
			return bc_seterr(why, BC_ERR_DENIED,
			    "option '%s' refused (%s is not allowed on a "
			    "compile server)", e, hit);
		if ((bc_str_has_prefix(a, "-fdump-") ||
		    bc_str_has_prefix(a, "-fopt-info") ||
		    bc_str_has_prefix(a, "-ftime-trace")) &&
		    strchr(a, '=') != NULL)
			return bc_seterr(why, BC_ERR_DENIED,
			    "option '%s' refused (writes to a client-chosen "
			    "path)", e);
		if (bc_str_has_prefix(a, "-Wa,") && bad_wa_list(a + 4))
			return bc_seterr(why, BC_ERR_DENIED,
			    "assembler option '%s' refused", e);
		if (bc_str_has_prefix(a, "-Wp,"))
			return bc_seterr(why, BC_ERR_DENIED,
			    "preprocessor option '%s' refused (the source is "
			    "already preprocessed)", e);
		if (strcmp(a, "-Xassembler") == 0 || strcmp(a, "-Xclang") == 0 ||
		    strcmp(a, "-Xpreprocessor") == 0) {
			const char *n;
			char e2[256];

			if (i + 1 >= argc)
				return bc_seterr(why, BC_ERR_DENIED,
				    "%s without an argument", a);
			n = argv[i + 1];
			esc(n, e2, sizeof(e2));
			if (strcmp(a, "-Xpreprocessor") == 0 ||
			    (strcmp(a, "-Xassembler") == 0 && bad_as_option(n)) ||
			    (strcmp(a, "-Xclang") == 0 &&
			    (has_prefix_any(n, xclang_refused, &hit) ||
			    has_prefix_any(n, refused_prefix, &hit) ||
			    n[0] == '@')))
				return bc_seterr(why, BC_ERR_DENIED,
				    "option '%s %s' refused", a, e2);
			i++;
		}
	}
	return BC_OK;
}

int
bc_policy_is_clang(const char *argv0)
{
	const char *b = bc_basename(argv0);
	size_t n = strip_version(b, strlen(b));

	if (n >= 5 && memcmp(b, "clang", 5) == 0)
		return 1;
	/* triple-prefixed: ...-clang or ...-clang++ */
	if ((n >= 6 && memcmp(b + n - 6, "-clang", 6) == 0) ||
	    (n >= 8 && memcmp(b + n - 8, "-clang++", 8) == 0))
		return 1;
	return 0;
}
