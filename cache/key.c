/*
 * key.c - cache key normalization and compiler identity (see key.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/key.h"
#include "cache/pathmap.h"

#define VERSION_OUT_MAX (64 * 1024)	/* bytes of --version kept */
#define MEMO_MAX 8192

/* Output-naming options whose value is the next word: dropped with it. */
static const char *const drop_with_value[] = {
	"-o", "-MF", "-MT", "-MQ", "-MJ", "--serialize-diagnostics", NULL
};
/* Output-naming options that stand alone: dropped. */
static const char *const drop_alone[] = {
	"-MD", "-MMD", "-MP", "-MG", NULL
};
/* Joined forms (-oFILE, -MFFILE...): dropped. */
static const char *const drop_prefix[] = {
	"-o", "-MF", "-MT", "-MQ", "-MJ", NULL
};
/* Other options whose value is the next word: kept with it, so that the
 * value is never mistaken for an option we drop (-D -o ...). */
static const char *const keep_with_value[] = {
	"-x", "-include", "-imacros", "-idirafter", "-iprefix",
	"-iwithprefix", "-iwithprefixbefore", "-isystem", "-isystem-after",
	"-isysroot", "-iquote", "-iframework", "-ivfsoverlay", "-include-pch",
	"-I", "-D", "-U", "-L", "-A", "-F", "-Xclang", "-Xlinker",
	"-Xassembler", "-Xpreprocessor", "-Xanalyzer", "-target", "-arch",
	"--param", "-mllvm", "-T", "-u", "-z", "--sysroot", "-gcc-toolchain",
	NULL
};

static int
in_table(const char *a, const char *const *t)
{
	size_t i;

	for (i = 0; t[i] != NULL; i++)
		if (strcmp(a, t[i]) == 0)
			return 1;
	return 0;
}

static int
has_table_prefix(const char *a, const char *const *t)
{
	size_t i;

	for (i = 0; t[i] != NULL; i++)
		if (bc_str_has_prefix(a, t[i]) && a[strlen(t[i])] != '\0')
			return 1;
	return 0;
}

/* Walk argv and call fn for every word that is part of the key. */
static void
walk_args(char *const *argv, size_t argc,
    void (*fn)(void *ctx, const char *word), void *ctx)
{
	size_t i;

	if (argc == 0)
		return;
	fn(ctx, bc_basename(argv[0]));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (in_table(a, drop_with_value)) {
			i++;
			continue;
		}
		if (in_table(a, drop_alone) || has_table_prefix(a, drop_prefix))
			continue;
		fn(ctx, a);
		if (in_table(a, keep_with_value) && i + 1 < argc)
			fn(ctx, argv[++i]);
	}
}

static void
push_word(void *ctx, const char *w)
{
	bc_strv_push((struct bc_strv *)ctx, w);
}

void
bc_cache_key_args(char *const *argv, size_t argc, struct bc_strv *out)
{
	walk_args(argv, argc, push_word, out);
}

/*
 * The words of argv after argv[0] in turn, without the options that take
 * a value and their values: start with *i = 0; NULL at the end.
 */
static const char *
next_word(char *const *argv, size_t argc, size_t *i)
{
	while (++*i < argc) {
		const char *a = argv[*i];

		if (!in_table(a, keep_with_value) &&
		    !in_table(a, drop_with_value))
			return a;
		++*i;
	}
	return NULL;
}

int
bc_cache_key_debug(char *const *argv, size_t argc)
{
	const char *a;
	int on = 0;
	size_t i = 0;

	while ((a = next_word(argv, argc, &i)) != NULL) {
		if (a[0] != '-' || a[1] != 'g')
			continue;
		if (strcmp(a, "-g0") == 0 || strcmp(a, "-ggdb0") == 0 ||
		    strcmp(a, "-gstabs0") == 0)
			on = 0;
		else if (bc_str_has_prefix(a, "-gno-") ||
		    bc_str_has_prefix(a, "-gz") ||
		    strcmp(a, "-gcolumn-info") == 0 ||
		    strcmp(a, "-gsplit-dwarf") == 0 ||
		    strcmp(a, "-grecord-gcc-switches") == 0 ||
		    strcmp(a, "-gcc-toolchain") == 0)
			continue;	/* modifiers: do not enable by themselves */
		else
			on = 1;
	}
	return on;
}

struct key_ctx {
	struct bc_hash *h;
	size_t n;
	struct bc_pathmap *pm;	/* mapped key: words through the maps */
};

static void
count_word(void *ctx, const char *w)
{
	(void)w;
	((struct key_ctx *)ctx)->n++;
}

/* A word as the key hashes it: through the maps when the key is mapped. */
static void
hash_mapped(struct bc_hash *h, struct bc_pathmap *pm, const char *w)
{
	char *m = pm != NULL ? bc_pathmap_word(pm, w) : NULL;

	bc_hash_update_str(h, m != NULL ? m : w);
	free(m);
}

static void
hash_word(void *ctx, const char *w)
{
	struct key_ctx *kc = ctx;

	hash_mapped(kc->h, kc->pm, w);
}

static void
check_word(void *ctx, const char *w)
{
	free(bc_pathmap_word(((struct key_ctx *)ctx)->pm, w));
}

/* The start both keys share: the domain tag, the compiler identity, the
 * key flags and the normalized argv (count, then words). */
static void
hash_head(struct bc_hash *h, const char *tag, const char *identity,
    uint32_t flags, char *const *argv, size_t argc, struct bc_pathmap *pm)
{
	struct key_ctx kc;
	char num[48];

	bc_hash_update_str(h, tag);
	bc_hash_update_str(h, identity != NULL ? identity : "");
	snprintf(num, sizeof(num), "flags %lu",
	    (unsigned long)(flags & BC_CACHE_KEY_FLAGS_MASK));
	bc_hash_update_str(h, num);
	kc.h = h;
	kc.n = 0;
	kc.pm = pm;
	walk_args(argv, argc, count_word, &kc);
	snprintf(num, sizeof(num), "argc %zu", kc.n);
	bc_hash_update_str(h, num);
	walk_args(argv, argc, hash_word, &kc);
}

void
bc_cache_key(const struct bc_cache_key_in *in, char out[BC_HASH_HEXLEN + 1])
{
	struct bc_hash h;
	char num[32];

	bc_hash_init(&h);
	hash_head(&h, "boltcc-cache-key-v1", in->identity, in->flags,
	    in->argv, in->argc, NULL);
	if (bc_cache_key_debug(in->argv, in->argc)) {
		/* The object names its compilation directory. */
		if (in->cdir != NULL) {
			bc_hash_update_str(&h, "cdir");
			bc_hash_update_str(&h, in->cdir);
		} else
			bc_hash_update_str(&h, "cdir-daemon-temp");
	} else
		bc_hash_update_str(&h, "nodebug");
	snprintf(num, sizeof(num), "doti %zu", in->doti_len);
	bc_hash_update_str(&h, num);
	bc_hash_update(&h, in->doti, in->doti_len);
	bc_hash_final_hex(&h, out);
}

/* ---------------------------------------------------------------------
 * pump keys
 */

int
bc_cache_pump_deps_wanted(char *const *argv, size_t argc)
{
	const char *a;
	size_t i = 0;

	while ((a = next_word(argv, argc, &i)) != NULL)
		if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0)
			return 1;
	return 0;
}

/* The words that decide the .d's contents (not its file name). */
static void
hash_deps_shape(struct bc_hash *h, char *const *argv, size_t argc,
    struct bc_pathmap *pm)
{
	const char *out = NULL;
	size_t i, targets = 0;

	if (!bc_cache_pump_deps_wanted(argv, argc)) {
		bc_hash_update_str(h, "nodeps");
		return;
	}
	bc_hash_update_str(h, "deps");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (in_table(a, keep_with_value) || strcmp(a, "-MF") == 0 ||
		    strcmp(a, "-MJ") == 0 ||
		    strcmp(a, "--serialize-diagnostics") == 0) {
			i++;
			continue;
		}
		if (strcmp(a, "-o") == 0) {
			if (i + 1 < argc)
				out = argv[++i];
			continue;
		}
		if ((strcmp(a, "-MT") == 0 || strcmp(a, "-MQ") == 0) &&
		    i + 1 < argc) {
			bc_hash_update_str(h, a);
			hash_mapped(h, pm, argv[++i]);
			targets++;
		} else if (bc_str_has_prefix(a, "-MT") ||
		    bc_str_has_prefix(a, "-MQ")) {
			if (a[3] != '\0') {
				hash_mapped(h, pm, a);
				targets++;
			}
		} else if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0 ||
		    strcmp(a, "-MP") == 0 || strcmp(a, "-MG") == 0)
			bc_hash_update_str(h, a);
		else if (bc_str_has_prefix(a, "-o") && a[2] != '\0')
			out = a + 2;
	}
	if (targets == 0) {
		/* the daemon names the output as the target */
		bc_hash_update_str(h, "-MT-output");
		hash_mapped(h, pm, out != NULL ? out : "");
	}
}

/* An entry's path as the key sees it: relative below the working
 * directory, else through the maps (mapped keys), else absolute.
 * malloc'd. */
static char *
pump_ent_path(const char *name, const char *cwd, struct bc_pathmap *pm)
{
	size_t cl = cwd != NULL ? strlen(cwd) : 0;
	char *m;

	while (cl > 1 && cwd[cl - 1] == '/')
		cl--;
	if (cl > 1 && strncmp(name, cwd, cl) == 0) {
		if (name[cl] == '\0')
			return xstrdup("rel:.");
		if (name[cl] == '/')
			return xasprintf("rel:%s", name + cl + 1);
	}
	if (pm != NULL && (m = bc_pathmap_path(pm, name)) != NULL) {
		char *r = xasprintf("map:%s", m);

		free(m);
		return r;
	}
	return xasprintf("abs:%s", name);
}

/* One entry as the key sees it: kind, keyed path, payload.  A mapped key
 * takes a header map by its mapped digest (kind H). */
static char *
pump_ent_text(const struct bc_cache_pump_ent *e, const char *cwd,
    struct bc_pathmap *pm, size_t *len)
{
	const char *name = e->name != NULL ? e->name : "";
	const uint8_t *hash = e->hash;
	const char *payload;
	char hex[BC_HASH_HEXLEN + 1], *t, *head, *path, kind;
	size_t hl, pl;

	kind = e->kind == BC_CACHE_PUMP_FILE ? 'F' :
	    e->kind == BC_CACHE_PUMP_LINK ? 'L' : 'D';
	if (pm != NULL && e->kind == BC_CACHE_PUMP_FILE && e->mhash != NULL) {
		kind = 'H';
		hash = e->mhash;
	}
	hex[0] = '\0';
	if (e->kind == BC_CACHE_PUMP_FILE && hash != NULL)
		bc_hash_hex(hash, BC_HASH_LEN, hex);
	path = pump_ent_path(name, cwd, pm);
	head = xasprintf("%c%s", kind, path);
	free(path);
	payload = e->kind == BC_CACHE_PUMP_FILE ? hex :
	    e->kind == BC_CACHE_PUMP_LINK && e->target != NULL ? e->target : "";
	hl = strlen(head);
	pl = strlen(payload);
	/* path NUL payload: a path never contains NUL */
	t = xmalloc(hl + 1 + pl + 1);
	memcpy(t, head, hl + 1);
	memcpy(t + hl + 1, payload, pl + 1);
	free(head);
	*len = hl + 1 + pl;
	return t;
}

struct pump_text {
	char *p;
	size_t n;
};

static int
cmp_pump_text(const void *a, const void *b)
{
	const struct pump_text *x = a, *y = b;
	size_t n = x->n < y->n ? x->n : y->n;
	int c = memcmp(x->p, y->p, n);

	if (c != 0)
		return c;
	return x->n < y->n ? -1 : x->n > y->n;
}

size_t
bc_cache_key_prefix_map_opt(const char *arg)
{
	static const char *const opts[] = {
		"-ffile-prefix-map=", "-fdebug-prefix-map=",
		"-fmacro-prefix-map=", "-fcoverage-prefix-map=", NULL
	};
	size_t k;

	for (k = 0; opts[k] != NULL; k++)
		if (bc_str_has_prefix(arg, opts[k]))
			return strlen(opts[k]);
	return 0;
}


/* 1 if name lies at or below the working directory. */
static int
below_cwd(const char *name, const char *cwd)
{
	size_t cl = cwd != NULL ? strlen(cwd) : 0;

	while (cl > 1 && cwd[cl - 1] == '/')
		cl--;
	return cl > 1 && strncmp(name, cwd, cl) == 0 &&
	    (name[cl] == '\0' || name[cl] == '/');
}

/* Decide whether the pump key can use mapped paths: every word, the .d
 * targets, the working directory (when debug info names it) and every
 * entry outside it must be mapped or system (pathmap.h). */
static void
check_paths(struct bc_pathmap *pm, const struct bc_cache_pump_in *in,
    int debug)
{
	struct bc_hash scratch;
	struct key_ctx kc;
	size_t i;

	if (!bc_pathmap_active(pm))
		return;
	kc.h = NULL;
	kc.n = 0;
	kc.pm = pm;
	walk_args(in->argv, in->argc, check_word, &kc);
	bc_hash_init(&scratch);
	hash_deps_shape(&scratch, in->argv, in->argc, pm);
	bc_hash_free(&scratch);
	if (debug)
		free(bc_pathmap_need(pm, in->cwd));
	for (i = 0; i < in->n && bc_pathmap_active(pm); i++) {
		const struct bc_cache_pump_ent *e = &in->ents[i];

		if (e->name != NULL && !below_cwd(e->name, in->cwd))
			free(bc_pathmap_need(pm, e->name));
		if (e->kind == BC_CACHE_PUMP_LINK && e->target != NULL &&
		    !below_cwd(e->target, in->cwd))
			free(bc_pathmap_need(pm, e->target));
	}
}

void
bc_cache_pump_key_paths(const struct bc_cache_pump_in *in,
    char out[BC_HASH_HEXLEN + 1], char **exact_why)
{
	struct bc_pathmap maps, *pm = NULL;
	struct pump_text *v;
	struct bc_hash h;
	char num[48], *cdir = NULL;
	size_t i;
	int debug = bc_cache_key_debug(in->argv, in->argc);

	bc_pathmap_init(&maps, in->argv, in->argc);
	if (in->exact)
		bc_pathmap_set_exact(&maps, "exact key asked for", NULL);
	check_paths(&maps, in, debug);
	if (bc_pathmap_active(&maps))
		pm = &maps;
	if (exact_why != NULL)
		*exact_why = maps.exact != NULL ? xstrdup(maps.exact) : NULL;
	bc_hash_init(&h);
	hash_head(&h, "boltcc-pump-key-v1", in->identity, in->flags,
	    in->argv, in->argc, pm);
	hash_deps_shape(&h, in->argv, in->argc, pm);
	for (i = 1; i < in->argc; i++)
		if (bc_cache_key_prefix_map_opt(in->argv[i]) > 0) {
			bc_hash_update_str(&h, "prefix maps rooted");
			break;
		}
	if (pm != NULL)
		bc_hash_update_str(&h, "paths mapped");
	if (debug) {
		bc_hash_update_str(&h, "cdir");
		if (pm != NULL)
			cdir = bc_pathmap_path(pm, in->cwd != NULL ? in->cwd :
			    "");
		bc_hash_update_str(&h, cdir != NULL ? cdir :
		    in->cwd != NULL ? in->cwd : "");
		free(cdir);
	} else
		bc_hash_update_str(&h, "nodebug");
	v = xcalloc(in->n > 0 ? in->n : 1, sizeof(*v));
	for (i = 0; i < in->n; i++)
		v[i].p = pump_ent_text(&in->ents[i], in->cwd, pm, &v[i].n);
	if (in->n > 1)
		qsort(v, in->n, sizeof(*v), cmp_pump_text);
	snprintf(num, sizeof(num), "entries %zu", in->n);
	bc_hash_update_str(&h, num);
	for (i = 0; i < in->n; i++) {
		snprintf(num, sizeof(num), "entry %zu", v[i].n);
		bc_hash_update_str(&h, num);
		bc_hash_update(&h, v[i].p, v[i].n);
		free(v[i].p);
	}
	free(v);
	bc_hash_final_hex(&h, out);
	bc_pathmap_free(&maps);
}

char *
bc_cache_key_paths_argv(char *const *argv, size_t argc, const char *cwd)
{
	struct bc_cache_pump_in in;
	struct bc_pathmap pm;
	char *why;

	memset(&in, 0, sizeof(in));
	in.argv = argv;
	in.argc = argc;
	in.cwd = cwd;
	bc_pathmap_init(&pm, argv, argc);
	check_paths(&pm, &in, bc_cache_key_debug(argv, argc));
	why = pm.exact != NULL ? xstrdup(pm.exact) : NULL;
	bc_pathmap_free(&pm);
	return why;
}

void
bc_cache_pump_key(const struct bc_cache_pump_in *in,
    char out[BC_HASH_HEXLEN + 1])
{
	bc_cache_pump_key_paths(in, out, NULL);
}

/* ---------------------------------------------------------------------
 * compiler identity
 */

/* Run `path --version` and append its stdout+stderr (bounded) and exit
 * status to the hash. */
static int
hash_version(struct bc_hash *h, const char *path, char *err)
{
	char buf[4096];
	size_t total = 0;
	int p[2], st = 0, dn;
	pid_t pid;
	ssize_t n;

	if (pipe(p) != 0)
		return bc_seterr(err, BC_ERR_IO, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return bc_seterr(err, BC_ERR_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char *const av[] = { (char *)path, (char *)"--version", NULL };

		dn = open("/dev/null", O_RDONLY);
		if (dn >= 0)
			(void)dup2(dn, 0);
		(void)dup2(p[1], 1);
		(void)dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		(void)setenv("LC_ALL", "C", 1);
		(void)signal(SIGPIPE, SIG_DFL);
		execv(path, av);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (total < VERSION_OUT_MAX) {
			size_t k = (size_t)n;

			if (k > VERSION_OUT_MAX - total)
				k = VERSION_OUT_MAX - total;
			bc_hash_update(h, buf, k);
			total += k;
		}
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return bc_seterr(err, BC_ERR_COMPILER,
		    "%s --version failed (status 0x%x)", path, (unsigned)st);
	snprintf(buf, sizeof(buf), "\nversion-bytes %zu", total);
	bc_hash_update_str(h, buf);
	return BC_OK;
}

static int
hash_binary(const char *path, char out[BC_HASH_HEXLEN + 1], char *err)
{
	struct bc_hash h;
	uint8_t *buf;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bc_seterr(err, errno == ENOENT ? BC_ERR_NOENT : BC_ERR_IO,
		    "cannot open %s: %s", path, strerror(errno));
	buf = xmalloc(1 << 20);
	bc_hash_init(&h);
	for (;;) {
		n = read(fd, buf, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		bc_hash_update(&h, buf, (size_t)n);
	}
	free(buf);
	close(fd);
	if (n < 0) {
		bc_hash_free(&h);
		return bc_seterr(err, BC_ERR_IO, "reading %s: %s", path,
		    strerror(errno));
	}
	bc_hash_final_hex(&h, out);
	return BC_OK;
}

static char *
memo_stamp(const char *rp, const struct stat *st)
{
	return xasprintf("boltcc-identity-memo-v1\n%s\n%llu %llu %llu %lld "
	    "%lld\n", rp, (unsigned long long)st->st_dev,
	    (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
	    (long long)st->st_mtime, (long long)st->st_ctime);
}

int
bc_cache_identity(const char *compiler_path, const char *memo_dir,
    char out[BC_HASH_HEXLEN + 1], char *err)
{
	char rp[PATH_MAX], binhex[BC_HASH_HEXLEN + 1];
	char *memo = NULL, *stamp = NULL;
	struct bc_hash h;
	struct stat st;
	int r;

	out[0] = '\0';
	if (realpath(compiler_path, rp) == NULL)
		return bc_seterr(err, BC_ERR_NOENT, "cannot resolve %s: %s",
		    compiler_path, strerror(errno));
	if (stat(rp, &st) != 0 || !S_ISREG(st.st_mode))
		return bc_seterr(err, BC_ERR_NOENT, "%s is not a file", rp);
	stamp = memo_stamp(rp, &st);
	if (memo_dir != NULL) {
		uint8_t d[BC_HASH_LEN];
		char dh[BC_HASH_HEXLEN + 1];
		struct bc_buf b;

		bc_hash_bytes(rp, strlen(rp), d);
		bc_hash_hex(d, sizeof(d), dh);
		memo = xasprintf("%s/compiler-identity_%.16s", memo_dir, dh);
		bc_buf_init(&b, MEMO_MAX);
		if (bc_read_file(memo, MEMO_MAX, &b, NULL) == BC_OK) {
			size_t sl = strlen(stamp), n = bc_buf_len(&b);
			const uint8_t *p = bc_buf_data(&b);

			if (n == sl + BC_HASH_HEXLEN + 1 &&
			    memcmp(p, stamp, sl) == 0 &&
			    p[n - 1] == '\n') {
				memcpy(out, p + sl, BC_HASH_HEXLEN);
				out[BC_HASH_HEXLEN] = '\0';
				if (bc_hash_is_hex(out)) {
					bc_buf_free(&b);
					free(memo);
					free(stamp);
					return BC_OK;
				}
				out[0] = '\0';
			}
		}
		bc_buf_free(&b);
	}
	if ((r = hash_binary(rp, binhex, err)) != BC_OK)
		goto done;
	bc_hash_init(&h);
	bc_hash_update_str(&h, "boltcc-compiler-identity-v1");
	if ((r = hash_version(&h, rp, err)) != BC_OK) {
		bc_hash_free(&h);
		goto done;
	}
	bc_hash_update_str(&h, binhex);
	bc_hash_final_hex(&h, out);
	if (memo != NULL) {
		char *text = xasprintf("%s%s\n", stamp, out);

		(void)bc_write_file_atomic(memo, text, strlen(text), 0644,
		    NULL);
		free(text);
	}
done:
	free(memo);
	free(stamp);
	return r;
}

void
bc_cache_origin(const char *dir, char out[BC_CACHE_ORIGIN_LEN + 1])
{
	uint8_t d[BC_HASH_LEN];
	char hex[BC_HASH_HEXLEN + 1];

	out[0] = '\0';
	if (dir == NULL || dir[0] == '\0')
		return;
	bc_hash_bytes(dir, strlen(dir), d);
	bc_hash_hex(d, sizeof(d), hex);
	memcpy(out, hex, BC_CACHE_ORIGIN_LEN);
	out[BC_CACHE_ORIGIN_LEN] = '\0';
}
