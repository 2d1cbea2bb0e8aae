/*
 * pump.c - daemon side of pump mode (see pump.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/key.h"
#include "common/deps.h"
#include "common/dia.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto3.h"
#include "common/util.h"
#include "pump.h"
#include "scratch.h"

int
bc_pump_tree_open(struct bc_pump_tree *t, const char *root, char *why)
{
	memset(t, 0, sizeof(*t));
	t->rootfd = -1;
	bc_pump_names_init(&t->names);
	if (mkdir(root, 0700) != 0)
		return bc_seterr(why, BC_ERR_IO, "mkdir %s: %s", root,
		    strerror(errno));
	t->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->rootfd < 0)
		return bc_seterr(why, BC_ERR_IO, "open %s: %s", root,
		    strerror(errno));
	t->root = xstrdup(root);
	return BC_OK;
}

void
bc_pump_tree_close(struct bc_pump_tree *t)
{
	if (t->rootfd >= 0)
		close(t->rootfd);
	bc_pump_names_free(&t->names);
	free(t->root);
	memset(t, 0, sizeof(*t));
	t->rootfd = -1;
}

static void
esc(const char *s, char *out, size_t n)
{
	bc_log_escape(s, strlen(s), out, n);
}

/*
 * Check an absolute client path and split it into components in *comps
 * (pointers into the copy *buf).  Rejects ".", "..", empty paths and
 * overlong components.
 */
static int
split_name(const char *name, char **buf, struct bc_strv *comps, char *why)
{
	char e[256], *p, *c;
	size_t n = strlen(name);

	esc(name, e, sizeof(e));
	if (name[0] != '/')
		return bc_seterr(why, BC_ERR_DENIED, "NAME '%s' is not absolute",
		    e);
	if (n > BC_MAX_PATH_LEN)
		return bc_seterr(why, BC_ERR_DENIED, "NAME too long");
	*buf = xstrdup(name);
	for (p = *buf; *p != '\0'; p = c) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		for (c = p; *c != '\0' && *c != '/'; c++)
			;
		if (*c == '/')
			*c++ = '\0';
		if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0 ||
		    strlen(p) > 255) {
			bc_strv_free(comps);
			return bc_seterr(why, BC_ERR_DENIED,
			    "NAME '%s' has a '.', '..' or overlong component",
			    e);
		}
		bc_strv_push(comps, p);
	}
	if (comps->n == 0)
		return bc_seterr(why, BC_ERR_DENIED, "NAME '%s' names the root",
		    e);
	return BC_OK;
}

/* Open (creating) the directory of comps[0..n) under the root, never
 * following a link.  Returns an fd or -1 with why set. */
static int
walk(struct bc_pump_tree *t, struct bc_strv *comps, size_t n, char *why)
{
	int fd = dup(t->rootfd), nfd;
	size_t i;

	if (fd < 0) {
		bc_seterr(why, BC_ERR_IO, "dup: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		nfd = openat(fd, comps->v[i], O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			if (mkdirat(fd, comps->v[i], 0755) != 0 &&
			    errno != EEXIST) {
				bc_seterr(why, BC_ERR_IO, "mkdir: %s",
				    strerror(errno));
				close(fd);
				return -1;
			}
			nfd = openat(fd, comps->v[i], O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			char e[256];

			esc(comps->v[i], e, sizeof(e));
			bc_seterr(why, BC_ERR_DENIED,
			    "path component '%s' is a link or a file", e);
			close(fd);
			return -1;
		}
		close(fd);
		fd = nfd;
	}
	return fd;
}

/*
 * distcc's system-directory link for name: 1 to make it, 0 to leave it
 * out (no such directory here: the compile finds nothing there either
 * way, and no dangling link is left for a write to follow), -1 with why
 * set when name is something else than a directory on this host.
 */
static int
sysdir_wanted(const char *name, char *why)
{
	struct stat st;
	char e[256];

	esc(name, e, sizeof(e));
	if (stat(name, &st) != 0) {
		bc_debug("system-directory LINK '%s': %s here, not made", e,
		    strerror(errno));
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		bc_seterr(why, BC_ERR_DENIED, "system-directory LINK '%s' "
		    "names a file on this host, not a directory", e);
		return -1;
	}
	return 1;
}

int
bc_pump_tree_add(void *ctx, const char *name, int is_link,
    const uint8_t *data, size_t len, char *why)
{
	struct bc_pump_tree *t = ctx;
	struct bc_strv comps = BC_STRV_INIT;
	char *buf = NULL, *target = NULL, e[256];
	enum bc_pump_kind kind;
	int dfd = -1, fd, r = BC_OK;

	/* every check first (common/pumpname.h), then the file system */
	if ((r = bc_pump_names_add(&t->names, name, strlen(name),
	    is_link ? BC_PUMP_LINK : BC_PUMP_FILE, (const char *)data, len,
	    &kind, why)) != BC_OK)
		return r;
	if (kind == BC_PUMP_SYSLINK && (r = sysdir_wanted(name, why)) <= 0)
		return r < 0 ? BC_ERR_DENIED : BC_OK;
	if ((r = split_name(name, &buf, &comps, why)) != BC_OK)
		goto out;
	if ((dfd = walk(t, &comps, comps.n - 1, why)) < 0) {
		r = BC_ERR_DENIED;
		goto out;
	}
	if (!is_link) {
		fd = openat(dfd, comps.v[comps.n - 1], O_WRONLY | O_CREAT |
		    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0) {
			esc(name, e, sizeof(e));
			r = bc_seterr(why, BC_ERR_DENIED, "cannot create '%s': %s",
			    e, strerror(errno));
			goto out;
		}
		while (len > 0) {
			ssize_t w = write(fd, data, len);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				r = bc_seterr(why, BC_ERR_IO, "write: %s",
				    strerror(errno));
				break;
			}
			data += w;
			len -= (size_t)w;
		}
		close(fd);
		t->nfiles++;
		goto out;
	}
	/* the target was checked: an absolute one goes under the root */
	target = data[0] == '/' && kind == BC_PUMP_LINK ?
	    xasprintf("%s%.*s", t->root, (int)len, (const char *)data) :
	    xstrndup((const char *)data, len);
	if (symlinkat(target, dfd, comps.v[comps.n - 1]) != 0) {
		esc(name, e, sizeof(e));
		r = bc_seterr(why, BC_ERR_DENIED, "cannot link '%s': %s", e,
		    strerror(errno));
		goto out;
	}
	t->nlinks++;
out:
	if (dfd >= 0)
		close(dfd);
	bc_strv_free(&comps);
	free(buf);
	free(target);
	return r;
}

/* mkdir -p of dir (recorded as kind) under the root. */
static int
tree_dir(struct bc_pump_tree *t, const char *dir, enum bc_pump_kind kind,
    char *why)
{
	struct bc_strv comps = BC_STRV_INIT;
	char *buf = NULL;
	int fd, r;

	if ((r = bc_pump_names_add(&t->names, dir, strlen(dir), kind, NULL, 0,
	    NULL, why)) != BC_OK)
		return r;
	if (strcmp(dir, "/") == 0)
		return BC_OK;
	if ((r = split_name(dir, &buf, &comps, why)) != BC_OK) {
		free(buf);
		return r;
	}
	fd = walk(t, &comps, comps.n, why);
	bc_strv_free(&comps);
	free(buf);
	if (fd < 0)
		return BC_ERR_DENIED;
	close(fd);
	return BC_OK;
}

int
bc_pump_tree_mkdir(struct bc_pump_tree *t, const char *dir, char *why)
{
	return tree_dir(t, dir, BC_PUMP_DIR_IMPLIED, why);
}

int
bc_pump_tree_dirm(struct bc_pump_tree *t, const char *dir, char *why)
{
	return tree_dir(t, dir, BC_PUMP_DIR, why);
}

int
bc_pump_tree_finish(struct bc_pump_tree *t, char *why)
{
	return bc_pump_names_resolve(&t->names, why);
}

void
bc_pump_plan_free(struct bc_pump_plan *p)
{
	bc_strv_free(&p->argv);
	free(p->out_path);
	free(p->deps_path);
	free(p->orig_src);
	memset(p, 0, sizeof(*p));
}

/* Options whose (absolute) path value is taken under the root. */
static const char *const path_opts[] = {
	"-I", "-iquote", "-isystem", "-idirafter", "-include", "-imacros",
	"-iprefix", "-iwithprefix", "-iwithprefixbefore", "-F", "-iframework",
	NULL
};

/* Options whose value is the next word (kept as is). */
static const char *const val_opts[] = {
	"-x", "-D", "-U", "-A", "-Xclang", "-target", "-arch", "--param",
	"-mllvm", "-isysroot", "--sysroot", "-MJ", "-Xpreprocessor",
	"-Xassembler", "-Xlinker", "-L", "-T", "-u", "-z", NULL
};

static int
in_list(const char *a, const char *const *l)
{
	size_t i;

	for (i = 0; l[i] != NULL; i++)
		if (strcmp(a, l[i]) == 0)
			return 1;
	return 0;
}

static const char *
is_source(const char *a)
{
	static const char *const exts[] = { ".c", ".cc", ".cp", ".cxx", ".cpp",
	    ".CPP", ".c++", ".C", ".m", ".mm", ".M", ".i", ".ii", ".mi", ".mii",
	    ".s", ".S", NULL };
	const char *e = bc_extension(a);

	if (a[0] == '-' || !in_list(e, exts))
		return NULL;
	return a;
}

static void
push_rooted(struct bc_strv *out, const char *prefix, const char *v,
    const char *root)
{
	if (v[0] == '/')
		bc_strv_push_owned(out, xasprintf("%s%s%s", prefix, root, v));
	else
		bc_strv_push_owned(out, xasprintf("%s%s", prefix, v));
}

/*
 * A user's path prefix map with an absolute OLD (-ffile-prefix-map=OLD=NEW
 * and its kin): the compiler reads OLD's files under root here, and the
 * -ffile-prefix-map=<root>= in front maps such a path back to OLD and
 * stops there (one substitution per path), so the object would name OLD
 * where the local compile names NEW.  A twin <root>OLD=NEW after it maps
 * them to NEW at once: gcc applies the last matching map, clang 14 the
 * longest, and the twin is both.  1 if a was such a map (both pushed).
 */
static int
push_prefix_map(struct bc_strv *out, const char *a, const char *root)
{
	size_t ol = bc_cache_key_prefix_map_opt(a);

	if (ol == 0 || a[ol] != '/')
		return 0;
	bc_strv_push(out, a);
	bc_strv_push_owned(out, xasprintf("%.*s%s%s", (int)ol, a, root,
	    a + ol));
	return 1;
}

/*
 * The map that takes the root off every path the compiler sees.  Usually
 * -ffile-prefix-map=<root>=.  But gcc lets a -ffile-prefix-map beat every
 * -fdebug-prefix-map and -fmacro-prefix-map, whatever their order, so
 * when the user gives those, the root map is given in the same kinds
 * (their twins after it then win, as the user's maps do locally), plus
 * clang's -fcoverage-prefix-map=<root>= when the job has clang coverage
 * (gcc knows no such option; clang's coverage flags are clang's alone).
 */
static void
push_root_map(struct bc_strv *out, char *const *argv, size_t argc,
    const char *root)
{
	int split = 0, cov = 0;
	size_t i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		split |= bc_str_has_prefix(a, "-fdebug-prefix-map=") ||
		    bc_str_has_prefix(a, "-fmacro-prefix-map=");
		cov |= bc_str_has_prefix(a, "-fcoverage-prefix-map=") ||
		    bc_str_has_prefix(a, "-fprofile-instr-generate") ||
		    strcmp(a, "-fcoverage-mapping") == 0;
	}
	if (!split) {
		bc_strv_push_owned(out, xasprintf("-ffile-prefix-map=%s=", root));
		return;
	}
	bc_strv_push_owned(out, xasprintf("-fdebug-prefix-map=%s=", root));
	bc_strv_push_owned(out, xasprintf("-fmacro-prefix-map=%s=", root));
	if (cov)
		bc_strv_push_owned(out, xasprintf("-fcoverage-prefix-map=%s=",
		    root));
}

/* Options naming the client's files, dropped with their value. */
static const char *const dropped_opts[] = {
	"-MF", "--serialize-diagnostics", "-index-store-path",
	"-index-unit-output-path", "-ivfsstatcache", NULL
};

/*
 * One pass over a pump argv (bc_pump_plan_argv): the word at hand, what
 * was seen so far, and the plan whose argv is being built.
 */
struct plan_state {
	char *const *argv;
	size_t argc;
	size_t i;		/* index of the word at hand */
	const char *root;
	struct bc_pump_plan *p;
	const char *orig_out;	/* the client's -o value, NULL if none */
	int mode;		/* 'c' or 'S' once either was given, else 0 */
	int have_md, have_mt;
};

/*
 * A step of the pass looks at word a (argv[i]): 1 if it took the word
 * (and moved i past any value it took with it), 0 if the word is not of
 * its kind, or BC_ERR_DENIED with why filled.
 */
typedef int (*plan_step_fn)(struct plan_state *s, const char *a, char *why);

/* The value word after the option at hand (i moves onto it), or NULL. */
static const char *
plan_value(struct plan_state *s)
{
	if (s->i + 1 >= s->argc)
		return NULL;
	return s->argv[++s->i];
}

static int
plan_missing(char *why)
{
	return bc_seterr(why, BC_ERR_DENIED, "option without its value");
}

/* -c or -S, kept; -S wins over -c. */
static int
plan_mode(struct plan_state *s, const char *a, char *why)
{
	if (strcmp(a, "-c") != 0 && strcmp(a, "-S") != 0)
		return 0;
	if (s->mode == 0 || a[1] == 'S')
		s->mode = a[1];
	bc_strv_push(&s->p->argv, a);
	return 1;
}

static int
plan_refused(struct plan_state *s, const char *a, char *why)
{
	if (strcmp(a, "-E") == 0 || strcmp(a, "-M") == 0 ||
	    strcmp(a, "-MM") == 0 ||
	    bc_str_has_prefix(a, "-working-directory") ||
	    bc_str_has_prefix(a, "-fplugin") ||
	    bc_str_has_prefix(a, "-specs"))
		return bc_seterr(why, BC_ERR_DENIED,
		    "option not served in pump mode: %s", a);
	return 0;
}

/* -o FILE or -oFILE: noted; the plan's own -o is added at the end. */
static int
plan_output(struct plan_state *s, const char *a, char *why)
{
	if (!bc_str_has_prefix(a, "-o"))
		return 0;
	if (a[2] != '\0')
		s->orig_out = a + 2;
	else if ((s->orig_out = plan_value(s)) == NULL)
		return plan_missing(why);
	return 1;
}

/*
 * -MF FILE or -MFFILE (the plan's own -MF is added at the end), and the
 * client's paths that are never written or read here (a BOLT client asks
 * for the .dia with FLAG WANT_DIA, bc_pump_job_plan): dropped.
 */
static int
plan_dropped(struct plan_state *s, const char *a, char *why)
{
	if (in_list(a, dropped_opts)) {
		if (plan_value(s) == NULL)
			return plan_missing(why);
		return 1;
	}
	return bc_str_has_prefix(a, "-MF");
}

/* Notes a user's -MD/-MMD and -MT/-MQ; never takes the word. */
static int
plan_deps_seen(struct plan_state *s, const char *a, char *why)
{
	if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0)
		s->have_md = 1;
	if (bc_str_has_prefix(a, "-MT") || bc_str_has_prefix(a, "-MQ"))
		s->have_mt = 1;
	return 0;
}

/* Option a and its value word, both kept as they are. */
static int
plan_pair(struct plan_state *s, const char *a, char *why)
{
	const char *v;

	if ((v = plan_value(s)) == NULL)
		return plan_missing(why);
	bc_strv_push(&s->p->argv, a);
	bc_strv_push(&s->p->argv, v);
	return 1;
}

static int
plan_dep_target(struct plan_state *s, const char *a, char *why)
{
	if (strcmp(a, "-MT") != 0 && strcmp(a, "-MQ") != 0)
		return 0;
	return plan_pair(s, a, why);
}

/* A path option (path_opts): an absolute value is taken under the root. */
static int
plan_path_opt(struct plan_state *s, const char *a, char *why)
{
	const char *v;
	size_t k;

	for (k = 0; path_opts[k] != NULL; k++) {
		size_t ol = strlen(path_opts[k]);

		if (strcmp(a, path_opts[k]) == 0) {
			if ((v = plan_value(s)) == NULL)
				return plan_missing(why);
			bc_strv_push(&s->p->argv, a);
			push_rooted(&s->p->argv, "", v, s->root);
			return 1;
		}
		if (strncmp(a, path_opts[k], ol) == 0 && a[ol] == '/') {
			char *pre = xstrndup(a, ol);

			push_rooted(&s->p->argv, pre, a + ol, s->root);
			free(pre);
			return 1;
		}
	}
	return 0;
}

static int
plan_profile(struct plan_state *s, const char *a, char *why)
{
	if (!bc_str_has_prefix(a, "-fprofile-instr-use=/"))
		return 0;
	/* the profile came with the files */
	push_rooted(&s->p->argv, "-fprofile-instr-use=", a + 20, s->root);
	return 1;
}

static int
plan_value_opt(struct plan_state *s, const char *a, char *why)
{
	if (!in_list(a, val_opts))
		return 0;
	return plan_pair(s, a, why);
}

static int
plan_source(struct plan_state *s, const char *a, char *why)
{
	if (is_source(a) == NULL)
		return 0;
	if (s->p->orig_src != NULL)
		return bc_seterr(why, BC_ERR_DENIED,
		    "more than one source file");
	s->p->orig_src = xstrdup(a);
	push_rooted(&s->p->argv, "", a, s->root);
	return 1;
}

static int
plan_prefix_map(struct plan_state *s, const char *a, char *why)
{
	return push_prefix_map(&s->p->argv, a, s->root);
}

/* Each word goes to the first step that takes it, in this order. */
static const plan_step_fn plan_steps[] = {
	plan_mode, plan_refused, plan_output, plan_dropped, plan_deps_seen,
	plan_dep_target, plan_path_opt, plan_profile, plan_value_opt,
	plan_source, plan_prefix_map,
};

/* The word at hand through the steps; a word no step takes is kept. */
static int
plan_word(struct plan_state *s, char *why)
{
	const char *a = s->argv[s->i];
	size_t k;
	int r;

	for (k = 0; k < sizeof(plan_steps) / sizeof(plan_steps[0]); k++)
		if ((r = plan_steps[k](s, a, why)) != 0)
			return r < 0 ? r : BC_OK;
	bc_strv_push(&s->p->argv, a);
	return BC_OK;
}

/*
 * The plan's own output and dependency file in jobdir, after the user's
 * words: -o, -MMD unless the user gave -MD or -MMD, -MF, and unless the
 * user gave -MT or -MQ, a -MT naming what the local compile would (the
 * user's -o, else the source's base name with the output's extension).
 */
static void
plan_outputs(struct plan_state *s, const char *jobdir)
{
	struct bc_pump_plan *p = s->p;
	const char *ext = s->mode == 'S' ? "s" : "o";
	const char *b, *e;

	p->out_path = xasprintf("%s/out.%s", jobdir, ext);
	p->deps_path = xasprintf("%s/deps.d", jobdir);
	bc_strv_push(&p->argv, "-o");
	bc_strv_push(&p->argv, p->out_path);
	if (!s->have_md)
		bc_strv_push(&p->argv, "-MMD");
	bc_strv_push(&p->argv, "-MF");
	bc_strv_push(&p->argv, p->deps_path);
	if (s->have_mt)
		return;
	bc_strv_push(&p->argv, "-MT");
	if (s->orig_out != NULL) {
		bc_strv_push(&p->argv, s->orig_out);
		return;
	}
	b = bc_basename(p->orig_src);
	e = bc_extension(b);
	bc_strv_push_owned(&p->argv, xasprintf("%.*s.%s", (int)(e - b), b,
	    ext));
}

int
bc_pump_plan_argv(char *const *argv, size_t argc, const char *name0,
    const char *root, const char *jobdir, struct bc_pump_plan *p, char *why)
{
	struct plan_state s;
	int r;

	memset(p, 0, sizeof(*p));
	bc_strv_init(&p->argv);
	if (argc < 1)
		return bc_seterr(why, BC_ERR_DENIED, "empty argv");
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.argc = argc;
	s.root = root;
	s.p = p;
	bc_strv_push(&p->argv, name0);
	push_root_map(&p->argv, argv, argc, root);
	for (s.i = 1; s.i < argc; s.i++) {
		if ((r = plan_word(&s, why)) != BC_OK) {
			bc_pump_plan_free(p);
			return r;
		}
	}
	if (s.mode == 0 || p->orig_src == NULL) {
		bc_pump_plan_free(p);
		return bc_seterr(why, BC_ERR_DENIED,
		    s.mode == 0 ? "neither -c nor -S given" : "no source file");
	}
	plan_outputs(&s, jobdir);
	return BC_OK;
}

/* 1 if root followed by '/' starts at byte i of the n at d. */
static int
root_at(const uint8_t *d, size_t n, size_t i, const char *root, size_t rl)
{
	return n - i > rl && memcmp(d + i, root, rl) == 0 && d[i + rl] == '/';
}

void
bc_pump_strip_root(const char *root, struct bc_buf *b)
{
	size_t rl = root != NULL ? strlen(root) : 0, i, j, o = 0;
	size_t n = bc_buf_len(b);
	const uint8_t *d = bc_buf_data(b);

	if (d == NULL || rl == 0)
		return;
	/* each run between roots moves down over the roots before it; a
	 * run only ever moves towards the start, so the bytes still to be
	 * looked at are never overwritten */
	for (i = 0; i < n; i = j) {
		if (root_at(d, n, i, root, rl)) {
			j = i + rl;
			continue;
		}
		for (j = i + 1; j < n && !root_at(d, n, j, root, rl); j++)
			;
		if (o != i)
			(void)bc_buf_patch(b, o, d + i, j - i);
		o += j - i;
	}
	bc_buf_truncate(b, o);
}

/* A .dia blob (a file name, a message) with the root taken out (out
 * starts empty for each blob, common/dia.h). */
static int
strip_root_blob(void *ctx, const void *blob, size_t n, struct bc_buf *out,
    char *err)
{
	int r = bc_buf_put(out, blob, n);

	if (r != BC_OK)
		return bc_seterr(err, r, ".dia blob too large");
	bc_pump_strip_root(ctx, out);
	return BC_OK;
}

int
bc_pump_strip_root_dia(const char *root, struct bc_buf *dia, char *err)
{
	struct bc_buf nb;
	int r;

	if (root == NULL || root[0] == '\0' || bc_buf_len(dia) == 0)
		return BC_OK;
	bc_buf_init(&nb, BC_MAX_DIA);
	r = bc_dia_rewrite(bc_buf_data(dia), bc_buf_len(dia), strip_root_blob,
	    (void *)(uintptr_t)root, &nb, err);
	if (r == BC_OK)
		bc_buf_move(dia, &nb);
	bc_buf_free(&nb);
	return r;
}

void
bc_pump_fix_deps(const char *root, struct bc_buf *deps)
{
	int style;
	char err[BC_ERRLEN];

	if (bc_buf_data(deps) == NULL || root == NULL || root[0] == '\0')
		return;
	/* the compiler wrapped its lines while the paths carried the root:
	 * learn its style from the bytes as written, re-wrap once stripped */
	style = bc_deps_detect(bc_buf_data(deps), bc_buf_len(deps));
	bc_pump_strip_root(root, deps);
	if (style != 0)
		(void)bc_deps_rewrap(deps, style, err);	/* else kept as is */
}

int
bc_pump_receive(struct bc_io *io, const struct bc_request *req, char **dir,
    char **root, char **cwd, char *why)
{
	struct bc_pump_tree t;
	int r;

	*root = NULL;
	*cwd = NULL;
	if (req->cwd == NULL || req->cwd[0] != '/')
		return bc_seterr(why, BC_ERR_PROTO, "pump request without CDIR");
	if (*dir == NULL && (r = bc_scratch_mkjob(dir, why)) != BC_OK)
		return r;
	*root = xasprintf("%s/root", *dir);
	if ((r = bc_pump_tree_open(&t, *root, why)) != BC_OK)
		return r;
	r = bc_proto3_read_files(io, NULL, NULL, bc_pump_tree_add, &t, why);
	if (r == BC_OK)
		r = bc_pump_tree_mkdir(&t, req->cwd, why);
	if (r == BC_OK)
		r = bc_pump_tree_finish(&t, why);
	if (r == BC_OK)
		bc_debug("pump tree: %zu files, %zu links", t.nfiles, t.nlinks);
	bc_pump_tree_close(&t);
	if (r == BC_OK)
		*cwd = xasprintf("%s%s", *root, req->cwd);
	return r;
}

int
bc_pump_job_plan(char *const *argv, size_t argc, const char *name0,
    const char *root, const char *jobdir, int want_dia,
    struct bc_jobplan *plan, char *why)
{
	struct bc_pump_plan p;
	int r;

	bc_jobplan_init(plan);
	if (root == NULL)
		return bc_seterr(why, BC_ERR_DENIED, "no pump tree");
	if ((r = bc_pump_plan_argv(argv, argc, name0, root, jobdir, &p, why))
	    != BC_OK)
		return r;
	plan->argv = p.argv;
	bc_strv_init(&p.argv);
	plan->out_name = xstrdup(bc_basename(p.out_path));
	plan->src_name = xstrdup("pump.unused");	/* empty DOTI */
	if (want_dia) {
		plan->dia_name = xstrdup("out.dia");
		bc_strv_push(&plan->argv, "--serialize-diagnostics");
		bc_strv_push_owned(&plan->argv, xasprintf("%s/%s", jobdir,
		    plan->dia_name));
	}
	plan->orig_src = p.orig_src;
	p.orig_src = NULL;
	bc_pump_plan_free(&p);
	return BC_OK;
}

void
bc_pump_read_deps(const char *jobdir, const char *root,
    const struct bc_reply *rep, struct bc_buf *deps)
{
	char *p;

	bc_buf_init(deps, BC_MAX_DOTD);
	if (rep->status != 0)
		return;
	p = xasprintf("%s/deps.d", jobdir);
	(void)bc_read_file(p, BC_MAX_DOTD, deps, NULL);
	free(p);
	bc_pump_fix_deps(root, deps);
}

int
bc_pump_write_reply(struct bc_buf *out, const char *jobdir, const char *root,
    const struct bc_reply *rep, char *err)
{
	struct bc_buf deps;
	int r;

	bc_pump_read_deps(jobdir, root, rep, &deps);
	r = bc_proto3_write_reply(out, rep->status, &rep->serr, &rep->sout,
	    &rep->doto, &deps, err);
	bc_buf_free(&deps);
	return r;
}
