/*
 * search.c - search-path model (see search.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/osdep.h"
#include "common/util.h"
#include "preproc/search.h"

#define VERBOSE_MAX ((size_t)1 << 20)
/* How long a compiler that gave no search list is not asked again (a
 * compiler change, seen by its size and mtime, asks at once). */
#define FAIL_MEMO_SEC 3600

/* An open-addressing table of paths and whether each is a regular file:
 * a scan asks about the same candidates again and again, and the files
 * do not change in the milliseconds it runs. */
struct bc_pp_exists {
	char **path;
	unsigned char *yes;
	size_t n, cap;
};

static void
exists_free(struct bc_pp_exists *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->cap; i++)
		free(m->path[i]);
	free(m->path);
	free(m->yes);
	free(m);
}

void
bc_pp_search_init(struct bc_pp_search *s)
{
	memset(s, 0, sizeof(*s));
	bc_strv_init(&s->sysdirs);
	bc_strv_init(&s->defines);
	bc_strv_init(&s->forced);
	bc_strv_init(&s->user_dirs);
	bc_strv_init(&s->query);
}

void
bc_pp_search_free(struct bc_pp_search *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].path);
		if (s->v[i].hmap != NULL) {
			bc_hmap_free(s->v[i].hmap);
			free(s->v[i].hmap);
		}
	}
	free(s->v);
	exists_free(s->exists);
	bc_strv_free(&s->sysdirs);
	bc_strv_free(&s->defines);
	bc_strv_free(&s->forced);
	bc_strv_free(&s->user_dirs);
	bc_strv_free(&s->query);
	free(s->sysroot);
	free(s->lang);
	bc_pp_search_init(s);
}

int
bc_pp_file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The slot of path in m: its entry, or the empty slot it would take. */
static size_t
exists_slot(const struct bc_pp_exists *m, const char *path)
{
	size_t i = (size_t)bc_fnv1a_str(BC_FNV1A_BASIS, path) & (m->cap - 1);

	while (m->path[i] != NULL && strcmp(m->path[i], path) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int
file_exists_memo(const struct bc_pp_search *s, const char *path)
{
	struct bc_pp_exists *m = s->exists;
	size_t i;
	int yes;

	if (m == NULL)
		return bc_pp_file_exists(path);
	if (m->cap == 0) {
		m->cap = 2 * BC_PP_MAX_EXISTS_MEMO;	/* a power of two */
		m->path = xcalloc(m->cap, sizeof(*m->path));
		m->yes = xcalloc(m->cap, sizeof(*m->yes));
	}
	i = exists_slot(m, path);
	if (m->path[i] != NULL)
		return m->yes[i];
	yes = bc_pp_file_exists(path);
	if (m->n < BC_PP_MAX_EXISTS_MEMO) {
		m->path[i] = xstrdup(path);
		m->yes[i] = (unsigned char)yes;
		m->n++;
	}
	return yes;
}

static void
push_ent(struct bc_pp_search *s, const char *path, int kind, int sysdef,
    size_t at)
{
	struct bc_pp_ent e;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap, sizeof(*s->v));
	}
	memset(&e, 0, sizeof(e));
	e.path = xstrdup(path);
	e.kind = kind;
	e.sysdef = sysdef;
	if (kind == BC_PP_ENT_HMAP) {
		e.hmap = xcalloc(1, sizeof(*e.hmap));
		if (bc_hmap_load(e.hmap, path, NULL) != BC_OK) {
			free(e.hmap);
			e.hmap = NULL;
		}
	}
	memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof(*s->v));
	s->v[at] = e;
	s->n++;
}

void
bc_pp_search_add(struct bc_pp_search *s, const char *path, int kind,
    int sysdef, int quote)
{
	if (quote) {
		push_ent(s, path, kind, sysdef, s->quote_end);
		s->quote_end++;
	} else {
		push_ent(s, path, kind, sysdef, s->n);
	}
}

/* A dir given to -I/-iquote that is a header-map file. */
static int
dir_kind(const char *path)
{
	struct stat sb;
	char magic[4];
	int fd, k = BC_PP_ENT_DIR;

	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return BC_PP_ENT_DIR;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return BC_PP_ENT_DIR;
	if (read(fd, magic, 4) == 4 && bc_hmap_is_hmap(magic, 4))
		k = BC_PP_ENT_HMAP;
	close(fd);
	return k;
}

int
bc_pp_parse_verbose(const char *text, size_t n, struct bc_strv *dirs,
    struct bc_strv *fwdirs)
{
	const char *p = text, *end = text + n;
	int in = 0, found = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		const char *q = p;

		if (len >= 20 && memcmp(p, "#include <...> search starts here:",
		    len < 34 ? len : 34) == 0 && len >= 34) {
			in = 1;
			found = 1;
		} else if (len >= 19 && memcmp(p, "End of search list.", 19) == 0) {
			in = 0;
		} else if (in && len > 1 && p[0] == ' ') {
			static const char fw[] = " (framework directory)";
			size_t l = len - 1, fl = sizeof(fw) - 1;
			int isfw = 0;

			q = p + 1;
			while (l > 0 && (q[l - 1] == '\r' || q[l - 1] == ' '))
				l--;
			if (l > fl && memcmp(q + l - fl, fw, fl) == 0) {
				l -= fl;
				isfw = 1;
			}
			if (l > 0) {
				char *d = xstrndup(q, l);

				bc_strv_push_owned(isfw ? fwdirs : dirs, d);
			}
		}
		p += len + (nl != NULL ? 1 : 0);
	}
	return found ? BC_OK : BC_ERR_NOENT;
}

/* Run cc -E -v and capture stderr. */
static int
ask_compiler(const char *cc, const struct bc_pp_search *s, struct bc_buf *out,
    char *err)
{
	struct bc_strv av = BC_STRV_INIT;
	int pfd[2], st = 0;
	pid_t pid;
	size_t i;

	if (pipe(pfd) != 0)
		return bc_seterr(err, BC_ERR_IO, "pipe: %s", strerror(errno));
	bc_strv_push(&av, cc);
	bc_strv_push(&av, "-E");
	bc_strv_push(&av, "-v");
	bc_strv_push(&av, "-x");
	bc_strv_push(&av, s->lang != NULL ? s->lang : "c");
	for (i = 0; i < s->query.n; i++)
		bc_strv_push(&av, s->query.v[i]);
	bc_strv_push(&av, "/dev/null");
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		bc_strv_free(&av);
		return bc_seterr(err, BC_ERR_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
		    dup2(pfd[1], 2) < 0)
			_exit(127);
		close(pfd[0]);
		(void)setenv("LC_ALL", "C", 1);
		execv(cc, av.v);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		uint8_t *w;
		ssize_t r;

		if (bc_buf_reserve(out, 4096, &w) != BC_OK)
			break;
		r = read(pfd[0], w, 4096);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		(void)bc_buf_commit(out, (size_t)r);
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	bc_strv_free(&av);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return bc_seterr(err, BC_ERR_COMPILER,
		    "%s -E -v failed (status 0x%x)", cc, (unsigned)st);
	return BC_OK;
}

/* 1: the memo in file has key's dirs; -1: it says the query failed
 * less than FAIL_MEMO_SEC ago; 0: nothing usable. */
static int
load_cached(const char *file, const char *key, struct bc_strv *dirs,
    struct bc_strv *fw)
{
	struct bc_buf b;
	struct stat sb;
	const char *p, *end, *nl;
	size_t kl = strlen(key);
	int ok = 0;

	bc_buf_init(&b, VERBOSE_MAX);
	if (bc_read_file(file, VERBOSE_MAX, &b, NULL) != BC_OK) {
		bc_buf_free(&b);
		return 0;
	}
	p = (const char *)bc_buf_data(&b);
	end = p + bc_buf_len(&b);
	if ((size_t)(end - p) > kl + 2 && memcmp(p, "K ", 2) == 0 &&
	    memcmp(p + 2, key, kl) == 0 && p[2 + kl] == '\n') {
		ok = 1;
		p += kl + 3;
		if (end - p >= 2 && memcmp(p, "X\n", 2) == 0) {
			time_t now = time(NULL);

			bc_buf_free(&b);
			return stat(file, &sb) == 0 && sb.st_mtime <= now &&
			    now - sb.st_mtime < FAIL_MEMO_SEC ? -1 : 0;
		}
		while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))
		    != NULL) {
			if (nl - p > 2 && (p[0] == 'D' || p[0] == 'F') &&
			    p[1] == ' ')
				bc_strv_push_owned(p[0] == 'D' ? dirs : fw,
				    xstrndup(p + 2, (size_t)(nl - p - 2)));
			p = nl + 1;
		}
	}
	bc_buf_free(&b);
	return ok;
}

static void
save_cached(const char *file, const char *key, const struct bc_strv *dirs,
    const struct bc_strv *fw)
{
	struct bc_buf b;
	size_t i;

	bc_buf_init(&b, VERBOSE_MAX);
	(void)bc_buf_putf(&b, "K %s\n", key);
	if (dirs == NULL)	/* the query failed */
		(void)bc_buf_putf(&b, "X\n");
	for (i = 0; dirs != NULL && i < dirs->n; i++)
		(void)bc_buf_putf(&b, "D %s\n", dirs->v[i]);
	for (i = 0; dirs != NULL && i < fw->n; i++)
		(void)bc_buf_putf(&b, "F %s\n", fw->v[i]);
	(void)bc_write_file_atomic(file, bc_buf_data(&b), bc_buf_len(&b), 0644,
	    NULL);
	bc_buf_free(&b);
}

static int
default_dirs(struct bc_pp_search *s, const char *cc, const char *statedir,
    struct bc_strv *dirs, struct bc_strv *fw, char *err)
{
	struct stat sb;
	struct bc_buf b;
	char *key, *file = NULL, *q;
	size_t i;
	int r;

	if (stat(cc, &sb) != 0)
		return bc_seterr(err, BC_ERR_COMPILER, "%s: %s", cc,
		    strerror(errno));
	key = xasprintf("%s|%llu|%llu|%lld|%lld|%s", cc,
	    (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
	    (long long)sb.st_size, (long long)bc_osdep_mtime_ns(&sb),
	    s->lang != NULL ? s->lang : "c");
	for (i = 0; i < s->query.n; i++) {
		q = xasprintf("%s|%s", key, s->query.v[i]);
		free(key);
		key = q;
	}
	if (strchr(key, '\n') == NULL && statedir != NULL) {
		/* the file's name: with preproc/'s basis, as before */
		file = xasprintf("%s/ppdirs-%016llx", statedir,
		    (unsigned long long)bc_fnv1a_str(BC_FNV1A_BASIS_PP, key));
		if ((r = load_cached(file, key, dirs, fw)) != 0) {
			free(file);
			free(key);
			return r > 0 ? BC_OK : bc_seterr(err, BC_ERR_COMPILER,
			    "%s -E -v gave no search list (remembered for "
			    "%d s; this compiler is not scanned)", cc,
			    FAIL_MEMO_SEC);
		}
	}
	bc_buf_init(&b, VERBOSE_MAX);
	r = ask_compiler(cc, s, &b, err);
	if (r == BC_OK && bc_pp_parse_verbose((const char *)bc_buf_data(&b),
	    bc_buf_len(&b), dirs, fw) != BC_OK)
		r = bc_seterr(err, BC_ERR_COMPILER,
		    "no search list in the output of %s -E -v", cc);
	/* Remember an answer, and a compiler that cannot give one: the
	 * query costs a compiler start, on every job otherwise. */
	if (file != NULL && (r == BC_OK || r == BC_ERR_COMPILER))
		save_cached(file, key, r == BC_OK ? dirs : NULL, fw);
	bc_buf_free(&b);
	free(file);
	free(key);
	return r;
}

/* Value of an option given joined (-Ifoo) or separate (-I foo). */
static const char *
optval(char *const *argv, size_t argc, size_t *i, const char *opt)
{
	size_t ol = strlen(opt);
	const char *a = argv[*i];

	if (strncmp(a, opt, ol) != 0)
		return NULL;
	if (a[ol] != '\0')
		return a + ol;
	if (*i + 1 >= argc)
		return NULL;
	(*i)++;
	return argv[*i];
}

/* Options that take the next word and do not affect the search. */
static const char *const skip_arg[] = {
	"-o", "-D", "-U", "-MF", "-MT", "-MQ", "-MJ", "-x", "-A", "-L",
	"-Xlinker", "-Xassembler", "--param", "-mllvm", "-T", "-u", "-z",
	"--serialize-diagnostics", "-dependency-file", "-aux-info", NULL
};

/* Options that affect the search in ways not modelled. */
static const char *const unmodelled[] = {
	"-iprefix", "-iwithprefix", "-iwithprefixbefore", "-cxx-isystem",
	"-isystem-after", "-I-", "-Xpreprocessor", "-Xclang", "-Wp,",
	"--include-directory", "-iwithsysroot", "-imsvc", "-fmodules",
	"-fmodule-map-file", "-fprebuilt-module-path", "-include-pch",
	"-iembed-dir", "--embed-dir", "-ibuiltininc", NULL
};

/* Flags passed on to the default-directory query. */
static const char *const query_flags[] = {
	"-nostdinc", "-nostdinc++", "-nostdlibinc", "-nobuiltininc",
	"-m32", "-m64", "-mx32", "-m16", NULL
};
static const char *const query_prefix[] = {
	"--target=", "-stdlib=", "--gcc-toolchain=", "--sysroot=", "-B",
	"-std=", NULL
};

static char *
under_sysroot(const struct bc_pp_search *s, const char *d)
{
	if (d[0] == '=' )
		return xasprintf("%s%s", s->sysroot != NULL ? s->sysroot : "",
		    d + 1);
	return xstrdup(d);
}

/* The user's search options, as given, before they are put in order. */
struct user_opts {
	struct bc_strv angled, angled_fw, sys, after, quote;
	struct bc_strv order;	/* "I" or "F" per angled */
};

static void
user_opts_free(struct user_opts *o)
{
	bc_strv_free(&o->angled);
	bc_strv_free(&o->angled_fw);
	bc_strv_free(&o->sys);
	bc_strv_free(&o->after);
	bc_strv_free(&o->quote);
	bc_strv_free(&o->order);
}

/* Options that name search directories, forced includes or the sysroot;
 * 1 when argv[*i] was one (*i past its value), 0 otherwise. */
static int
search_opt(struct bc_pp_search *s, struct user_opts *o, char *const *argv,
    size_t argc, size_t *i)
{
	const char *a = argv[*i], *v;

	if ((v = optval(argv, argc, i, "-isysroot")) != NULL ||
	    (strcmp(a, "--sysroot") == 0 &&
	    (v = optval(argv, argc, i, "--sysroot")) != NULL) ||
	    (bc_str_has_prefix(a, "--sysroot=") && (v = a + 10))) {
		free(s->sysroot);
		s->sysroot = xstrdup(v);
		bc_strv_push(&s->query, "--sysroot");
		bc_strv_push(&s->query, v);
		return 1;
	}
	if ((v = optval(argv, argc, i, "-iquote")) != NULL) {
		bc_strv_push_owned(&o->quote, under_sysroot(s, v));
		return 1;
	}
	if ((v = optval(argv, argc, i, "-isystem")) != NULL) {
		bc_strv_push_owned(&o->sys, under_sysroot(s, v));
		return 1;
	}
	if ((v = optval(argv, argc, i, "-idirafter")) != NULL) {
		bc_strv_push_owned(&o->after, under_sysroot(s, v));
		return 1;
	}
	if ((v = optval(argv, argc, i, "-iframework")) != NULL) {
		bc_strv_push(&o->sys, "\001");	/* marker: framework */
		bc_strv_push(&o->sys, v);
		return 1;
	}
	if ((v = optval(argv, argc, i, "-include")) != NULL ||
	    (v = optval(argv, argc, i, "-imacros")) != NULL) {
		bc_strv_push(&s->forced, v);
		return 1;
	}
	if (strcmp(a, "-I") == 0 || (a[1] == 'I' && a[2] != '\0')) {
		if ((v = optval(argv, argc, i, "-I")) == NULL)
			return 1;
		bc_strv_push_owned(&o->angled, under_sysroot(s, v));
		bc_strv_push(&o->order, "I");
		return 1;
	}
	if (strcmp(a, "-F") == 0 || (a[1] == 'F' && a[2] != '\0')) {
		if ((v = optval(argv, argc, i, "-F")) == NULL)
			return 1;
		bc_strv_push(&o->angled_fw, v);
		bc_strv_push(&o->order, "F");
		return 1;
	}
	return 0;
}

/* Options passed on to the default-directory query. */
static void
query_opt(struct bc_pp_search *s, char *const *argv, size_t argc, size_t *i)
{
	const char *a = argv[*i];
	size_t k;

	if (strcmp(a, "-target") == 0 || strcmp(a, "-arch") == 0 ||
	    strcmp(a, "-B") == 0 || strcmp(a, "--gcc-toolchain") == 0) {
		bc_strv_push(&s->query, a);
		if (*i + 1 < argc)
			bc_strv_push(&s->query, argv[++*i]);
		return;
	}
	for (k = 0; query_flags[k] != NULL; k++)
		if (strcmp(a, query_flags[k]) == 0)
			bc_strv_push(&s->query, a);
	for (k = 0; query_prefix[k] != NULL; k++)
		if (bc_str_has_prefix(a, query_prefix[k]))
			bc_strv_push(&s->query, a);
}

/* Read the options that matter to the search, in the order given. */
static int
parse_options(struct bc_pp_search *s, struct user_opts *o,
    char *const *argv, size_t argc, const char **fallback, char *err)
{
	size_t i, k;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		int done = 0;

		if (a[0] != '-')
			continue;
		if (strcmp(a, "-D") == 0 && i + 1 < argc) {
			bc_strv_push(&s->defines, argv[i + 1]);
			i++;
			continue;
		}
		if (a[1] == 'D' && a[2] != '\0') {
			bc_strv_push(&s->defines, a + 2);
			continue;
		}
		for (k = 0; skip_arg[k] != NULL; k++)
			if (strcmp(a, skip_arg[k]) == 0) {
				i++;
				done = 1;
				break;
			}
		if (done)
			continue;
		if (strcmp(a, "-ivfsoverlay") == 0 ||
		    bc_str_has_prefix(a, "-ivfsoverlay")) {
			*fallback = "ivfsoverlay";
			return bc_seterr(err, BC_ERR_NOTSUP, "-ivfsoverlay");
		}
		for (k = 0; unmodelled[k] != NULL; k++)
			if (bc_str_has_prefix(a, unmodelled[k])) {
				*fallback = "unmodelled-option";
				return bc_seterr(err, BC_ERR_NOTSUP,
				    "option %s is not modelled", unmodelled[k]);
			}
		if (!search_opt(s, o, argv, argc, &i))
			query_opt(s, argv, argc, &i);
	}
	return BC_OK;
}

/* -iquote, then -I and -F as given, then -isystem and -iframework. */
static void
add_user_dirs(struct bc_pp_search *s, const struct user_opts *o)
{
	size_t i, ai = 0, fi = 0;

	for (i = 0; i < o->quote.n; i++) {
		int kq = dir_kind(o->quote.v[i]);

		bc_pp_search_add(s, o->quote.v[i], kq, 0, 1);
		if (kq == BC_PP_ENT_DIR)
			bc_strv_push(&s->user_dirs, o->quote.v[i]);
	}
	for (i = 0; i < o->order.n; i++) {
		if (o->order.v[i][0] == 'I') {
			const char *d = o->angled.v[ai++];

			int kd = dir_kind(d);

			bc_pp_search_add(s, d, kd, 0, 0);
			if (kd == BC_PP_ENT_DIR)
				bc_strv_push(&s->user_dirs, d);
		} else {
			bc_pp_search_add(s, o->angled_fw.v[fi++],
			    BC_PP_ENT_FRAMEWORK, 0, 0);
		}
	}
	for (i = 0; i < o->sys.n; i++) {
		if (o->sys.v[i][0] == '\001' && i + 1 < o->sys.n) {
			i++;
			bc_pp_search_add(s, o->sys.v[i], BC_PP_ENT_FRAMEWORK,
			    0, 0);
		} else {
			bc_pp_search_add(s, o->sys.v[i], BC_PP_ENT_DIR, 0, 0);
			bc_strv_push(&s->user_dirs, o->sys.v[i]);
		}
	}
}

/* The compiler's own directories and frameworks, after the user's. */
static int
add_default_dirs(struct bc_pp_search *s, const char *compiler_path,
    const char *statedir, const char **fallback, char *err)
{
	struct bc_strv dd = BC_STRV_INIT, dfw = BC_STRV_INIT;
	size_t i;
	int r;

	r = default_dirs(s, compiler_path, statedir, &dd, &dfw, err);
	if (r != BC_OK) {
		*fallback = "default-dirs";
		r = BC_ERR_NOTSUP;
		goto out;
	}
	for (i = 0; i < dd.n; i++) {
		bc_pp_search_add(s, dd.v[i], BC_PP_ENT_DIR, 1, 0);
		bc_strv_push(&s->sysdirs, dd.v[i]);
	}
	for (i = 0; i < dfw.n; i++) {
		bc_pp_search_add(s, dfw.v[i], BC_PP_ENT_FRAMEWORK, 1, 0);
		bc_strv_push(&s->sysdirs, dfw.v[i]);
	}
out:
	bc_strv_free(&dd);
	bc_strv_free(&dfw);
	return r;
}

int
bc_pp_search_build(struct bc_pp_search *s, char *const *argv, size_t argc,
    const char *lang, const char *compiler_path, const char *statedir,
    int cpath_env, const char **fallback, char *err)
{
	struct user_opts o = { BC_STRV_INIT, BC_STRV_INIT, BC_STRV_INIT,
	    BC_STRV_INIT, BC_STRV_INIT, BC_STRV_INIT };
	size_t i;
	int r = BC_OK;

	*fallback = NULL;
	if (s->exists == NULL)
		s->exists = xcalloc(1, sizeof(*s->exists));
	s->lang = xstrdup(lang != NULL ? lang : "c");
	if (cpath_env) {
		*fallback = "cpath-env";
		return bc_seterr(err, BC_ERR_NOTSUP,
		    "CPATH or *_INCLUDE_PATH is set");
	}
	r = parse_options(s, &o, argv, argc, fallback, err);
	if (r != BC_OK)
		goto out;
	/* assemble in search order */
	add_user_dirs(s, &o);
	if (compiler_path != NULL) {
		r = add_default_dirs(s, compiler_path, statedir, fallback, err);
		if (r != BC_OK)
			goto out;
	}
	for (i = 0; i < o.after.n; i++) {
		bc_pp_search_add(s, o.after.v[i], BC_PP_ENT_DIR, 0, 0);
		bc_strv_push(&s->user_dirs, o.after.v[i]);
	}
out:
	user_opts_free(&o);
	return r;
}

static char *
join(const char *dir, const char *name)
{
	size_t dl = strlen(dir);

	if (dl == 0 || strcmp(dir, ".") == 0)
		return xstrdup(name);
	if (dir[dl - 1] == '/')
		return xasprintf("%s%s", dir, name);
	return xasprintf("%s/%s", dir, name);
}

/* Try one entry; BC_OK with *out, or BC_ERR_NOENT.  *name may be
 * replaced by a header map's relative redirect. */
static int
try_ent(const struct bc_pp_search *s, const struct bc_pp_ent *e,
    char **name, char **out)
{
	char *p, *v = NULL, *v2 = NULL;
	const char *slash;

	*out = NULL;
	if (e->kind == BC_PP_ENT_DIR) {
		p = join(e->path, *name);
		if (file_exists_memo(s, p)) {
			*out = p;
			return BC_OK;
		}
		free(p);
		return BC_ERR_NOENT;
	}
	if (e->kind == BC_PP_ENT_HMAP) {
		if (e->hmap == NULL || bc_hmap_lookup(e->hmap, *name, &v) != BC_OK)
			return BC_ERR_NOENT;
		if (v[0] != '/') {
			/* framework-style redirect: look it up again */
			if (bc_hmap_lookup(e->hmap, v, &v2) == BC_OK &&
			    v2[0] == '/') {
				free(v);
				v = v2;
			} else {
				free(v2);
				free(*name);
				*name = v;
				return BC_ERR_NOENT;
			}
		}
		if (file_exists_memo(s, v)) {
			*out = v;
			return BC_OK;
		}
		free(v);
		return BC_ERR_NOENT;
	}
	/* framework directory: <Fw/rest> */
	slash = strchr(*name, '/');
	if (slash == NULL || slash == *name)
		return BC_ERR_NOENT;
	p = xasprintf("%s/%.*s.framework/Headers/%s", e->path,
	    (int)(slash - *name), *name, slash + 1);
	if (file_exists_memo(s, p)) {
		*out = p;
		return BC_OK;
	}
	free(p);
	p = xasprintf("%s/%.*s.framework/PrivateHeaders/%s", e->path,
	    (int)(slash - *name), *name, slash + 1);
	if (file_exists_memo(s, p)) {
		*out = p;
		return BC_OK;
	}
	free(p);
	return BC_ERR_NOENT;
}

int
bc_pp_resolve(const struct bc_pp_search *s, const char *name, int angled,
    const char *includer_dir, long from, char **out, long *idx)
{
	char *nm;
	size_t i, start;

	*out = NULL;
	*idx = -1;
	if (name[0] == '/') {
		if (!file_exists_memo(s, name))
			return BC_ERR_NOENT;
		*out = xstrdup(name);
		return BC_OK;
	}
	if (from < 0 && !angled && includer_dir != NULL) {
		char *p = join(includer_dir, name);

		if (file_exists_memo(s, p)) {
			*out = p;
			return BC_OK;
		}
		free(p);
	}
	if (from >= 0)
		start = (size_t)from + 1;
	else
		start = angled ? s->quote_end : 0;
	nm = xstrdup(name);
	for (i = start; i < s->n; i++) {
		if (try_ent(s, &s->v[i], &nm, out) == BC_OK) {
			*idx = (long)i;
			free(nm);
			return BC_OK;
		}
	}
	free(nm);
	return BC_ERR_NOENT;
}
