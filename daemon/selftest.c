/*
 * selftest.c - `boltccd --self-test` (see selftest.h): one function per
 * check, each returning BC_OK with what it did or a BC_ERR_* code with
 * the reason, both one line for the report.
 *
 * Nothing is faked: the compiler really compiles, the cache really
 * writes and reads a blob and its index row, the daemon is this very
 * executable serving a real protocol-1 connection.  Everything made lives
 * in one private dir in the scratch dir (or, for the store test of a
 * --cache-dir, in a private dir inside it, so its file system is the one
 * tested), removed at the end.  Children run in process groups of their
 * own, so a ^C reaches only us and we stop them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/exitcode.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/osdep.h"
#include "common/proto.h"
#include "common/util.h"
#include "job.h"
#include "jobplan.h"
#include "policy.h"
#include "scratch.h"
#include "selftest.h"

#define STEP_MS BC_SELFTEST_STEP_MS
#define STEP_S (BC_SELFTEST_STEP_MS / 1000)
/* Attempts at starting the daemon when the ports picked were taken in
 * between (it binds them itself; --port has no "any free port"). */
#define START_TRIES 3

/*
 * What a client's preprocessor sends for a tiny C file.  No header, so
 * no SDK is needed; data and code, so the object has both.
 */
static const char doti_text[] =
    "# 1 \"selftest.c\"\n"
    "static const char bc_selftest_name[] = \"boltccd --self-test\";\n"
    "static const int bc_selftest_table[4] = { 3, 1, 4, 1 };\n"
    "int bc_selftest_sum(int n);\n"
    "int bc_selftest_sum(int n)\n"
    "{\n"
    "\tint i, s = (int)sizeof(bc_selftest_name);\n"
    "\n"
    "\tfor (i = 0; i < n && i < 4; i++)\n"
    "\t\ts += bc_selftest_table[i];\n"
    "\treturn s;\n"
    "}\n";
#define DOTI_LEN (sizeof(doti_text) - 1)

/* The job's argv after the compiler's name, as a distcc client sends it
 * (-g0: no debug info, so no directory in the object). */
static const char *const job_args[] = {
	"-g0", "-c", "selftest.i", "-o", "selftest.o", NULL
};

struct selftest {
	const struct bc_selftest_conf *conf;
	const char *cc;		/* the compiler name a client sends */
	char *dir;		/* private dir in the scratch dir, or NULL */
	char dir_err[BC_ERRLEN];	/* why there is none */
	struct bc_strv job_argv;	/* cc + job_args */
	struct bc_buf obj;	/* the compiler check's object (empty: none) */
};

/* The test daemon. */
struct testd {
	pid_t pid;		/* -1: not running (or reaped) */
	int port, stats_port;
	char *log;		/* its --log-file */
	char *out;		/* its stdout and stderr */
};

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* "exited with status N" or "was killed by signal N" */
static void
exit_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		(void)snprintf(buf, len, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		(void)snprintf(buf, len, "was killed by signal %d",
		    WTERMSIG(status));
	else
		(void)snprintf(buf, len, "ended with wait status %#x", status);
}

/* 1 if the n bytes at p contain the string t. */
static int
has_text(const char *p, size_t n, const char *t)
{
	size_t i, tl = strlen(t);

	for (i = 0; i + tl <= n; i++)
		if (memcmp(p + i, t, tl) == 0)
			return 1;
	return 0;
}

/*
 * One line of what a program wrote to path, escaped: the first non-empty
 * line, or with last set the last error or warning of a boltccd log
 * (else the last line) of its last 8 KiB; "no output" if there is none.
 */
static void
file_line(const char *path, int last, char *out, size_t outlen)
{
	char buf[8192];
	const char *pick = NULL, *p, *end;
	size_t picklen = 0, n = 0;
	struct stat sb;
	ssize_t r;
	int fd, pick_err = 0;

	(void)snprintf(out, outlen, "no output");
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &sb) == 0 && sb.st_size > (off_t)sizeof(buf))
		(void)lseek(fd, sb.st_size - (off_t)sizeof(buf), SEEK_SET);
	while (n < sizeof(buf) &&
	    ((r = read(fd, buf + n, sizeof(buf) - n)) > 0 ||
	    (r < 0 && errno == EINTR)))
		if (r > 0)
			n += (size_t)r;
	close(fd);
	for (p = buf; p < buf + n; p = end + 1) {
		size_t l;
		int is_err;

		end = memchr(p, '\n', (size_t)(buf + n - p));
		if (end == NULL)
			end = buf + n;
		l = (size_t)(end - p);
		if (l == 0)
			continue;
		is_err = has_text(p, l, "boltccd[") &&
		    (has_text(p, l, "] ERROR: ") ||
		    has_text(p, l, "] WARN: "));
		if (pick == NULL || (last && (is_err || !pick_err))) {
			pick = p;
			picklen = l;
			pick_err = is_err;
		}
		if (!last)
			break;
	}
	if (pick != NULL)
		bc_log_escape(pick, picklen, out, outlen);
}

/*
 * Start path with argv in dir: stdin /dev/null, stdout and stderr into
 * the file out, in a process group of its own.  A compiler (compile set)
 * gets the environment a job's compiler gets (jobrun.c: TMPDIR is its dir);
 * the daemon loses a service manager's sockets, which are not its own.
 */
static int
spawn(const char *path, char *const *argv, const char *dir, const char *out,
    int compile, pid_t *pid_out, char *err)
{
	pid_t pid;
	int in, fo, e;

	*pid_out = -1;
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fo = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (in < 0 || fo < 0) {
		e = errno;
		if (in >= 0)
			close(in);
		return bc_seterr(err, BC_ERR_IO, "cannot open %s: %s",
		    in < 0 ? "/dev/null" : out, strerror(e));
	}
	if ((pid = fork()) < 0) {
		e = errno;
		close(in);
		close(fo);
		return bc_seterr(err, BC_ERR_IO, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		char msg[512];
		int n;

		(void)setpgid(0, 0);
		if (chdir(dir) != 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 ||
		    dup2(fo, 2) < 0)
			_exit(BC_EXIT_IO_ERROR);
		/* dup2 onto itself (fds 0-2 were closed) keeps CLOEXEC */
		(void)fcntl(0, F_SETFD, 0);
		(void)fcntl(1, F_SETFD, 0);
		(void)fcntl(2, F_SETFD, 0);
		if (compile) {
			if (setenv("_DISTCC_SAFEGUARD", "1", 1) != 0 ||
			    setenv("TMPDIR", dir, 1) != 0)
				_exit(BC_EXIT_OUT_OF_MEMORY);
		} else {
			(void)unsetenv("LISTEN_PID");
			(void)unsetenv("LISTEN_FDS");
			(void)unsetenv("LISTEN_FDNAMES");
		}
		execv(path, argv);
		n = snprintf(msg, sizeof(msg), "cannot execute %s: %s\n", path,
		    strerror(errno));
		if (n > 0)
			(void)write(2, msg, (size_t)n < sizeof(msg) ?
			    (size_t)n : sizeof(msg) - 1);
		_exit(BC_EXIT_COMPILER_MISSING);
	}
	(void)setpgid(pid, pid);	/* as the child does: no race */
	close(in);
	close(fo);
	*pid_out = pid;
	return BC_OK;
}

/*
 * 1 if child pid exited (then it is reaped, *status set), 0 if it runs,
 * -1 with errno.  Between its exit and the reaping, while its pid and
 * process group cannot be anyone else's, what is left of its group is
 * killed: a compiler's or a daemon's children that outlived it.
 */
static int
reap_if_exited(pid_t pid, int *status)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno == EINTR ? 0 : -1;
	if (si.si_pid != pid)
		return 0;
	(void)kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 1;
}

/* Wait until child pid exited and is reaped, until deadline:
 * BC_ERR_TIMEOUT (still running), BC_ERR_IO (interrupted, or waiting
 * failed). */
static int
wait_exit(pid_t pid, int64_t deadline, int *status, const char *what,
    char *err)
{
	int r;

	for (;;) {
		if ((r = reap_if_exited(pid, status)) > 0)
			return BC_OK;
		if (r < 0)
			return bc_seterr(err, BC_ERR_IO, "waiting for %s: %s",
			    what, strerror(errno));
		if (interrupted)
			return bc_seterr(err, BC_ERR_IO,
			    "interrupted while waiting for %s", what);
		if (bc_now_ms() >= deadline)
			return bc_seterr(err, BC_ERR_TIMEOUT,
			    "%s did not finish within %d s", what, STEP_S);
		bc_sleep_ms(5);
	}
}

/* Kill a child we have not reaped, with its process group, and reap it. */
static void
kill_reap(pid_t pid)
{
	int st;

	(void)kill(-pid, SIGKILL);
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

static int
same_bytes(const struct bc_buf *a, const struct bc_buf *b)
{
	return bc_buf_len(a) == bc_buf_len(b) && (bc_buf_len(a) == 0 ||
	    memcmp(bc_buf_data(a), bc_buf_data(b), bc_buf_len(a)) == 0);
}

/* Offset of the first byte where a and b differ (the shorter length if
 * one is a prefix of the other). */
static size_t
first_difference(const struct bc_buf *a, const struct bc_buf *b)
{
	size_t i, n = bc_buf_len(a) < bc_buf_len(b) ? bc_buf_len(a) :
	    bc_buf_len(b);

	for (i = 0; i < n; i++)
		if (bc_buf_data(a)[i] != bc_buf_data(b)[i])
			break;
	return i;
}

/* ---------------------------------------------------------------------
 * 1. sha256
 */

static int
check_sha256(struct selftest *s, char *detail, char *err)
{
	char e[BC_ERRLEN];

	(void)s;
	if (bc_hash_selftest(e, sizeof(e)) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT, "%s (cache keys and blob "
		    "checksums would be wrong)", e);
	bc_seterr(detail, BC_OK, "the FIPS 180-2 test vectors hash right");
	return BC_OK;
}

/* ---------------------------------------------------------------------
 * 2. compiler
 */

static int
check_compiler(struct selftest *s, char *detail, char *err)
{
	const struct bc_policy *p = s->conf->policy;
	struct bc_jobplan_opts ro;
	struct bc_jobplan plan;
	char why[BC_ERRLEN], e[BC_ERRLEN], how[64], said[256], real[PATH_MAX];
	char *path = NULL, *wd = NULL, *file = NULL, *log = NULL, *cmd = NULL;
	const char *name;
	int64_t t0;
	pid_t pid;
	int r, status;

	bc_jobplan_init(&plan);
	if (s->dir == NULL)
		return bc_seterr(err, BC_ERR_IO, "%s", s->dir_err);
	if ((r = bc_policy_resolve(p, s->cc, &path, why)) != BC_OK)
		return bc_seterr(err, r, "%s", why);
	/* as plan_compile (job.c) names the compiler in the argv it runs */
	if (bc_policy_check_name(p, s->cc, &name, why) != BC_OK)
		name = s->cc;
	wd = xasprintf("%s/local", s->dir);
	memset(&ro, 0, sizeof(ro));
	ro.tmpdir = wd;
	ro.is_clang = bc_policy_is_clang(name);
	name = bc_basename(name);
	if (bc_jobplan_argv(s->job_argv.v, s->job_argv.n, name[0] != '\0' ?
	    name : s->cc, &ro, &plan, why) != BC_OK) {
		r = bc_seterr(err, BC_ERR_INTERNAL, "the daemon would refuse "
		    "the test job: %s", why);
		goto out;
	}
	if (mkdir(wd, 0700) != 0) {
		r = bc_seterr(err, BC_ERR_IO, "cannot create %s: %s", wd,
		    strerror(errno));
		goto out;
	}
	file = xasprintf("%s/%s", wd, plan.src_name);
	if ((r = bc_write_file_atomic(file, doti_text, DOTI_LEN, 0600, e)) !=
	    BC_OK) {
		r = bc_seterr(err, r, "%s", e);
		goto out;
	}
	log = xasprintf("%s/output", wd);
	t0 = bc_now_ms();
	if ((r = spawn(path, plan.argv.v, wd, log, 1, &pid, e)) != BC_OK) {
		r = bc_seterr(err, r, "%s", e);
		goto out;
	}
	if ((r = wait_exit(pid, t0 + STEP_MS, &status, "the compiler", e)) !=
	    BC_OK) {
		kill_reap(pid);
		r = bc_seterr(err, r, "'%s' (%s): %s", s->cc, path, e);
		goto out;
	}
	if (status != 0) {
		exit_text(status, how, sizeof(how));
		file_line(log, 0, said, sizeof(said));
		r = bc_seterr(err, BC_ERR_COMPILER, "'%s' (%s) %s on a tiny C "
		    "file: %s", s->cc, path, how, said);
		goto out;
	}
	free(file);
	file = xasprintf("%s/%s", wd, plan.out_name);
	bc_buf_free(&s->obj);
	bc_buf_init(&s->obj, BC_MAX_OBJECT);
	if ((r = bc_read_file(file, BC_MAX_OBJECT, &s->obj, e)) != BC_OK ||
	    bc_buf_len(&s->obj) == 0) {
		r = bc_seterr(err, r != BC_OK ? r : BC_ERR_COMPILER, "'%s' (%s) "
		    "exited 0 but made no object: %s", s->cc, path,
		    r != BC_OK ? e : "it is empty");
		bc_buf_reset(&s->obj);
		goto out;
	}
	cmd = bc_strv_join(&plan.argv);
	if (realpath(path, real) == NULL || strcmp(real, path) == 0)
		real[0] = '\0';
	bc_seterr(detail, BC_OK, "'%s' is %s%s%s; `%s` made a %zu-byte object "
	    "in %lld ms in %s (scratch dir from %s)", s->cc, path,
	    real[0] != '\0' ? " -> " : "", real, cmd, bc_buf_len(&s->obj),
	    (long long)(bc_now_ms() - t0), bc_scratch_dir(),
	    bc_scratch_origin());
	r = BC_OK;
out:
	bc_jobplan_free(&plan);
	free(path);
	free(wd);
	free(file);
	free(log);
	free(cmd);
	return r;
}

/* ---------------------------------------------------------------------
 * 3. cache
 */

/*
 * dir does not exist: BC_OK if mkdir -p could make it (its nearest
 * existing ancestor is a directory we may write), the reason otherwise.
 */
static int
cache_dir_creatable(const char *dir, char *note, char *err)
{
	char *a = xstrdup(dir), *slash;
	struct stat sb;
	size_t l;
	int r;

	for (;;) {
		l = strlen(a);
		while (l > 1 && a[l - 1] == '/')
			a[--l] = '\0';
		if ((slash = strrchr(a, '/')) == NULL) {
			free(a);
			a = xstrdup(".");
		} else if (slash == a)
			a[1] = '\0';
		else
			*slash = '\0';
		if (stat(a, &sb) == 0)
			break;
		if (strcmp(a, "/") == 0 || strcmp(a, ".") == 0) {
			r = bc_seterr(err, BC_ERR_IO, "--cache-dir %s cannot be "
			    "created: %s: %s", dir, a, strerror(errno));
			free(a);
			return r;
		}
	}
	if (!S_ISDIR(sb.st_mode))
		r = bc_seterr(err, BC_ERR_IO, "--cache-dir %s cannot be "
		    "created: %s is not a directory", dir, a);
	else if (access(a, W_OK | X_OK) != 0)
		r = bc_seterr(err, BC_ERR_DENIED, "--cache-dir %s cannot be "
		    "created: %s is not writable by uid %lu", dir, a,
		    (unsigned long)geteuid());
	else
		r = bc_seterr(note, BC_OK, "--cache-dir %s does not exist yet; "
		    "the daemon can create it in %s", dir, a);
	free(a);
	return r;
}

/*
 * The --cache-dir given, read-only (a daemon may be using it): a
 * directory we may write, whose index, if it has one, opens and reads.
 * *exists is set when it is a directory.
 */
static int
check_cache_dir(const struct selftest *s, const char *dir, int *exists,
    char *note, char *err)
{
	struct bc_cache_stats cs;
	struct bc_cache *c;
	struct stat sb;
	char e[BC_ERRLEN], *index, *blobs;
	int r;

	*exists = 0;
	if (stat(dir, &sb) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return cache_dir_creatable(dir, note, err);
		return bc_seterr(err, BC_ERR_IO, "--cache-dir %s: %s", dir,
		    strerror(errno));
	}
	if (!S_ISDIR(sb.st_mode))
		return bc_seterr(err, BC_ERR_IO, "--cache-dir %s is not a "
		    "directory", dir);
	if (access(dir, R_OK | W_OK | X_OK) != 0)
		return bc_seterr(err, BC_ERR_DENIED, "--cache-dir %s is not "
		    "writable by uid %lu: %s", dir, (unsigned long)geteuid(),
		    strerror(errno));
	*exists = 1;
	index = xasprintf("%s/index.sqlite", dir);
	blobs = xasprintf("%s/blobs", dir);
	if (stat(blobs, &sb) == 0 && (!S_ISDIR(sb.st_mode) ||
	    access(blobs, W_OK | X_OK) != 0))
		r = bc_seterr(err, BC_ERR_DENIED, "%s is not a directory "
		    "writable by uid %lu", blobs, (unsigned long)geteuid());
	else if (stat(index, &sb) != 0)
		r = bc_seterr(note, BC_OK, "--cache-dir %s is writable and "
		    "has no index yet (the daemon makes it at start)", dir);
	else if (access(index, R_OK | W_OK) != 0)
		r = bc_seterr(err, BC_ERR_DENIED, "%s is not writable by uid "
		    "%lu", index, (unsigned long)geteuid());
	else if ((r = bc_cache_open(dir, s->conf->cache_size, &c, e)) !=
	    BC_OK)
		r = bc_seterr(err, r, "--cache-dir %s: %s", dir, e);
	else {
		r = bc_cache_stats(c, &cs, e);
		bc_cache_close(c);
		if (r != BC_OK)
			r = bc_seterr(err, r, "--cache-dir %s: %s", dir, e);
		else
			r = bc_seterr(note, BC_OK, "--cache-dir %s: index "
			    "opens, %llu entries, %llu of %llu bytes", dir,
			    (unsigned long long)cs.entries,
			    (unsigned long long)cs.stored_bytes,
			    (unsigned long long)cs.max_bytes);
	}
	free(index);
	free(blobs);
	return r;
}

/* An entry with every section the daemon stores; the object is the
 * compiler check's when there is one. */
static int
fill_entry(const struct selftest *s, struct bc_cache_entry *ce, char *err)
{
	static const char dotd[] = "selftest.o: selftest.c\n";
	static const char serr[] = "selftest.c:3: warning: a test warning\n";
	uint8_t pattern[4096];
	size_t i;
	int r;

	bc_cache_entry_init(ce);
	ce->compile_ms = 42;
	if (bc_buf_len(&s->obj) > 0)
		r = bc_buf_put(&ce->obj, bc_buf_data(&s->obj),
		    bc_buf_len(&s->obj));
	else {
		for (i = 0; i < sizeof(pattern); i++)
			pattern[i] = (uint8_t)(i * 7 + i / 251);
		r = bc_buf_put(&ce->obj, pattern, sizeof(pattern));
	}
	if (r == BC_OK)
		r = bc_buf_put_str(&ce->serr, serr);
	if (r == BC_OK)
		r = bc_buf_put_str(&ce->dotd, dotd);
	if (r != BC_OK)
		return bc_seterr(err, r, "building the test entry: %s",
		    bc_strerror(r));
	return BC_OK;
}

/*
 * Store an entry in a new cache in a private dir under base, close it,
 * open it again, read the entry back and compare every section.
 */
static int
cache_roundtrip(const struct selftest *s, const char *base, char *note,
    char *err)
{
	struct bc_cache_entry put, got;
	struct bc_cache_stats cs;
	struct bc_cache *c = NULL;
	struct bc_hash h;
	struct stat sb;
	char key[BC_HASH_HEXLEN + 1], e[BC_ERRLEN], *dir, *blob = NULL;
	long pid = (long)getpid();
	int64_t now = bc_now_ms();
	int r;

	bc_cache_entry_init(&put);
	bc_cache_entry_init(&got);
	dir = xasprintf("%s/.boltccd-selftest.XXXXXX", base);
	if (mkdtemp(dir) == NULL) {
		r = bc_seterr(err, BC_ERR_IO, "cannot create a test cache in "
		    "%s: %s", base, strerror(errno));
		free(dir);
		return r;
	}
	bc_hash_init(&h);
	bc_hash_update_str(&h, "boltccd --self-test");
	bc_hash_update(&h, &pid, sizeof(pid));
	bc_hash_update(&h, &now, sizeof(now));
	bc_hash_update_str(&h, dir);
	bc_hash_final_hex(&h, key);
	if ((r = fill_entry(s, &put, err)) != BC_OK)
		goto out;
	if ((r = bc_cache_open(dir, 0, &c, e)) != BC_OK) {
		r = bc_seterr(err, r, "%s", e);
		goto out;
	}
	if ((r = bc_cache_put(c, key, &put, e)) != BC_OK) {
		r = bc_seterr(err, r, "storing an entry in %s: %s", dir, e);
		goto out;
	}
	/* read back through a new handle: from the files, not memory */
	bc_cache_close(c);
	c = NULL;
	if ((r = bc_cache_open(dir, 0, &c, e)) != BC_OK) {
		r = bc_seterr(err, r, "reopening %s: %s", dir, e);
		goto out;
	}
	r = bc_cache_get(c, key, BC_CACHE_COUNT_ALL, &got, e);
	if (r == BC_ERR_NOENT) {
		r = bc_seterr(err, BC_ERR_CORRUPT, "the entry stored in %s is "
		    "not found after reopening (%s)", dir, e);
		goto out;
	}
	if (r != BC_OK) {
		r = bc_seterr(err, r, "reading back the entry stored in %s: %s",
		    dir, e);
		goto out;
	}
	if (!same_bytes(&put.obj, &got.obj) ||
	    !same_bytes(&put.serr, &got.serr) ||
	    !same_bytes(&put.sout, &got.sout) ||
	    !same_bytes(&put.dia, &got.dia) ||
	    !same_bytes(&put.dotd, &got.dotd) ||
	    put.compile_ms != got.compile_ms) {
		r = bc_seterr(err, BC_ERR_CORRUPT, "the entry read back from "
		    "%s differs from the one stored (object %zu vs %zu bytes)",
		    dir, bc_buf_len(&got.obj), bc_buf_len(&put.obj));
		goto out;
	}
	blob = bc_cache_blob_path(c, key);
	if (stat(blob, &sb) != 0) {
		r = bc_seterr(err, BC_ERR_IO, "the blob %s: %s", blob,
		    strerror(errno));
		goto out;
	}
	if ((r = bc_cache_stats(c, &cs, e)) != BC_OK) {
		r = bc_seterr(err, r, "reading the counters of %s: %s", dir, e);
		goto out;
	}
	if (cs.entries != 1 || cs.stores != 1 || cs.hits != 1) {
		r = bc_seterr(err, BC_ERR_CORRUPT, "the index of %s counts %llu "
		    "entries, %llu stores, %llu hits (want 1, 1, 1)", dir,
		    (unsigned long long)cs.entries,
		    (unsigned long long)cs.stores,
		    (unsigned long long)cs.hits);
		goto out;
	}
	r = bc_seterr(note, BC_OK, "an entry (%zu-byte object) stored in a "
	    "throwaway cache in a private dir in %s (a %lld-byte blob and its "
	    "index row) and read back identical", bc_buf_len(&put.obj), base,
	    (long long)sb.st_size);
out:
	bc_cache_close(c);
	bc_cache_entry_free(&put);
	bc_cache_entry_free(&got);
	if (bc_rmtree(dir) != BC_OK && r == BC_OK)
		r = bc_seterr(err, BC_ERR_IO, "cannot remove the test cache "
		    "%s", dir);
	free(dir);
	free(blob);
	return r;
}

static int
check_cache(struct selftest *s, char *detail, char *err)
{
	const char *given = s->conf->no_cache ? NULL : s->conf->cache_dir;
	char dnote[BC_ERRLEN], tnote[BC_ERRLEN];
	int r, exists = 0;

	if (s->dir == NULL)
		return bc_seterr(err, BC_ERR_IO, "%s", s->dir_err);
	dnote[0] = '\0';
	if (given != NULL &&
	    (r = check_cache_dir(s, given, &exists, dnote, err)) != BC_OK)
		return r;
	/* in the --cache-dir when there is one: its file system is tested */
	if ((r = cache_roundtrip(s, exists ? given : s->dir, tnote, err)) !=
	    BC_OK)
		return r;
	bc_seterr(detail, BC_OK, "%s%s%s", given != NULL ? dnote :
	    s->conf->no_cache ? "--no-cache: the daemon would keep no cache" :
	    "no --cache-dir given, the default one not examined", "; ", tnote);
	return BC_OK;
}

/* ---------------------------------------------------------------------
 * 4. service
 */

/* Two loopback ports free right now (bound together, so distinct). */
static int
free_ports(int *a, int *b, char *err)
{
	struct sockaddr_in sin;
	socklen_t sl;
	int fd[2] = { -1, -1 }, port[2] = { 0, 0 }, i, r = BC_OK;

	for (i = 0; i < 2 && r == BC_OK; i++) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(sin);
		if ((fd[i] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    bind(fd[i], (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
		    getsockname(fd[i], (struct sockaddr *)&sin, &sl) != 0)
			r = bc_seterr(err, BC_ERR_IO, "cannot bind a socket to "
			    "127.0.0.1: %s", strerror(errno));
		else
			port[i] = ntohs(sin.sin_port);
	}
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	*a = port[0];
	*b = port[1];
	return r;
}

/* GET path from the stats port: the body of a 200 answer (NUL
 * terminated) in *body, malloc'd. */
static int
http_get(int port, const char *path, int64_t deadline, char **body,
    char *err)
{
	struct bc_buf resp = BC_BUF_INIT(BC_MAX_SELFTEST_REPLY);
	char e[BC_ERRLEN], *text, *b;
	int64_t left = deadline - bc_now_ms();
	int r;

	*body = NULL;
	if (left <= 0)
		return bc_seterr(err, BC_ERR_TIMEOUT, "no time left");
	if ((r = bc_io_http_get("127.0.0.1", port, path, (int)left, &resp,
	    e)) != BC_OK || (r = bc_buf_put_u8(&resp, 0)) != BC_OK) {
		r = bc_seterr(err, r, "GET %s: %s", path, e);
		goto out;
	}
	text = (char *)bc_buf_data(&resp);
	if (strlen(text) != bc_buf_len(&resp) - 1) {
		r = bc_seterr(err, BC_ERR_PROTO, "GET %s: a NUL byte in the "
		    "answer", path);
		goto out;
	}
	if (!bc_str_has_prefix(text, "HTTP/1.") || strlen(text) < 12 ||
	    strncmp(text + 8, " 200", 4) != 0) {
		char first[128];

		bc_log_escape(text, strcspn(text, "\r\n"), first, sizeof(first));
		r = bc_seterr(err, BC_ERR_PROTO, "GET %s: answered '%s'", path,
		    first);
		goto out;
	}
	if ((b = strstr(text, "\r\n\r\n")) != NULL)
		b += 4;
	else if ((b = strstr(text, "\n\n")) != NULL)
		b += 2;
	else {
		r = bc_seterr(err, BC_ERR_PROTO, "GET %s: no end of the "
		    "header", path);
		goto out;
	}
	*body = xstrdup(b);
	r = BC_OK;
out:
	bc_buf_free(&resp);
	return r;
}

/*
 * The whole count member name of the JSON object text: BC_OK with *v
 * set (-1 when absent or not a whole number from 0 to 10^12), or
 * BC_ERR_PROTO with err when text is not a JSON object.
 */
static int
json_count(const char *text, const char *name, long long *v, char *err)
{
	struct bc_json doc;
	double x;
	int r;

	*v = -1;
	r = bc_json_parse(&doc, text, strlen(text), err);
	if (r == BC_OK && bc_json_type(&doc, 0) != BC_JSON_OBJECT)
		r = bc_seterr(err, BC_ERR_PROTO, "not an object");
	if (r == BC_OK) {
		x = bc_json_num(&doc, 0, name, -1);
		if (x >= 0 && x <= 1e12 && (double)(long long)x == x)
			*v = (long long)x;
	}
	bc_json_free(&doc);
	return r;
}

/* The reason a daemon gave: the last error line of its log, else what it
 * wrote to stderr. */
static void
daemon_said(const struct testd *d, char *out, size_t outlen)
{
	struct stat sb;

	if (stat(d->log, &sb) == 0 && sb.st_size > 0)
		file_line(d->log, 1, out, outlen);
	else
		file_line(d->out, 1, out, outlen);
}

/* Start this executable as a daemon on two free loopback ports. */
static int
daemon_start(const struct selftest *s, const char *exe, struct testd *d,
    char *err)
{
	struct bc_strv av = BC_STRV_INIT;
	char port[16], sport[16], *cache, *tmp;
	size_t i;
	int r;

	if ((r = free_ports(&d->port, &d->stats_port, err)) != BC_OK)
		return r;
	(void)snprintf(port, sizeof(port), "%d", d->port);
	(void)snprintf(sport, sizeof(sport), "%d", d->stats_port);
	cache = xasprintf("%s/daemon-cache", s->dir);
	tmp = xasprintf("%s/daemon-tmp", s->dir);
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
		r = bc_seterr(err, BC_ERR_IO, "cannot create %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	bc_strv_push(&av, exe);
	bc_strv_push(&av, "--no-detach");
	bc_strv_push(&av, "--listen");
	bc_strv_push(&av, "127.0.0.1");
	bc_strv_push(&av, "--port");
	bc_strv_push(&av, port);
	bc_strv_push(&av, "--stats-port");
	bc_strv_push(&av, sport);
	bc_strv_push(&av, "--cache-dir");
	bc_strv_push(&av, cache);
	bc_strv_push(&av, "--tmp-dir");
	bc_strv_push(&av, tmp);
	bc_strv_push(&av, "--log-file");
	bc_strv_push(&av, d->log);
	bc_strv_push(&av, "--log-level");
	bc_strv_push(&av, "debug");
	bc_strv_push(&av, "--jobs");
	bc_strv_push(&av, "1");
	bc_strv_push(&av, "--io-timeout");
	bc_strv_push(&av, "10");
	bc_strv_push(&av, "--request-timeout");
	bc_strv_push(&av, "10");
	bc_strv_push(&av, "--job-timeout");
	bc_strv_push(&av, "10");
	bc_strv_push(&av, "--shutdown-grace");
	bc_strv_push(&av, "5");
	for (i = 0; s->conf->allow != NULL && i < s->conf->allow->n; i++) {
		bc_strv_push(&av, "--allow-compiler");
		bc_strv_push(&av, s->conf->allow->v[i]);
	}
	r = spawn(exe, av.v, s->dir, d->out, 0, &d->pid, err);
out:
	bc_strv_free(&av);
	free(cache);
	free(tmp);
	return r;
}

/*
 * Until the daemon answers on its stats port: BC_OK, BC_ERR_BUSY if it
 * exited because a port was taken in the meantime (try others), another
 * error with the reason.
 */
static int
daemon_wait_ready(struct testd *d, char *err)
{
	int64_t deadline = bc_now_ms() + STEP_MS;
	char e[BC_ERRLEN], how[64], said[256], *body = NULL;
	int status, r;

	for (;;) {
		if ((r = reap_if_exited(d->pid, &status)) < 0)
			return bc_seterr(err, BC_ERR_IO, "waiting for the "
			    "daemon: %s", strerror(errno));
		if (r > 0) {
			d->pid = -1;
			exit_text(status, how, sizeof(how));
			daemon_said(d, said, sizeof(said));
			return bc_seterr(err, WIFEXITED(status) &&
			    WEXITSTATUS(status) == BC_EXIT_BIND_FAILED ?
			    BC_ERR_BUSY : BC_ERR_IO, "the daemon %s at start: "
			    "%s", how, said);
		}
		r = http_get(d->stats_port, "/stats.json",
		    bc_now_ms() + 1000 < deadline ? bc_now_ms() + 1000 :
		    deadline, &body, e);
		free(body);
		if (r == BC_OK)
			return BC_OK;
		if (interrupted)
			return bc_seterr(err, BC_ERR_IO, "interrupted while "
			    "the daemon started");
		if (bc_now_ms() >= deadline) {
			daemon_said(d, said, sizeof(said));
			return bc_seterr(err, BC_ERR_TIMEOUT, "the daemon did "
			    "not answer on 127.0.0.1 port %d within %d s (%s); "
			    "its log: %s", d->stats_port, STEP_S, e, said);
		}
		bc_sleep_ms(20);
	}
}

/* SIGTERM, then wait for a clean exit; SIGKILL if it does not come. */
static int
daemon_stop(struct testd *d, char *err)
{
	char e[BC_ERRLEN], how[64];
	int status, r;

	if (d->pid < 0)
		return BC_OK;
	(void)kill(d->pid, SIGTERM);
	r = wait_exit(d->pid, bc_now_ms() + STEP_MS, &status, "the daemon", e);
	if (r != BC_OK) {
		kill_reap(d->pid);
		d->pid = -1;
		return bc_seterr(err, r, "after SIGTERM: %s (killed)", e);
	}
	d->pid = -1;
	if (status != 0) {
		exit_text(status, how, sizeof(how));
		return bc_seterr(err, BC_ERR_IO, "the daemon %s after SIGTERM",
		    how);
	}
	return BC_OK;
}

/* The test job over protocol 1, as a distcc client sends it. */
static int
remote_job(const struct selftest *s, const struct testd *d,
    struct bc_reply *rep, char *err)
{
	struct bc_request req;
	struct bc_buf out;
	struct bc_io io;
	int64_t deadline = bc_now_ms() + STEP_MS;
	char e[BC_ERRLEN];
	int fd = -1, r;

	if ((r = bc_io_connect_tcp("127.0.0.1", d->port, STEP_MS, &fd, e)) !=
	    BC_OK)
		return bc_seterr(err, r, "%s", e);
	bc_request_init(&req);
	req.proto = 1;
	req.kind = BC_RQST_COMPILE;
	bc_strv_copy(&req.argv, &s->job_argv);
	bc_buf_init(&out, BC_BUF_CEILING);
	r = bc_proto_write_request_head(&out, &req, e);
	if (r == BC_OK)
		r = bc_proto_write_doti(&out, 1, doti_text, DOTI_LEN, e);
	bc_request_free(&req);
	bc_io_init(&io, fd, fd, STEP_MS);
	io.deadline_ms = deadline;
	if (r == BC_OK)
		r = bc_io_write_buf(&io, &out, e);
	if (r == BC_OK)
		r = bc_proto_read_reply(&io, 1, BC_RQST_COMPILE, rep, e);
	bc_buf_free(&out);
	close(fd);
	if (r != BC_OK)
		return bc_seterr(err, r, "job on port %d: %s", d->port, e);
	return BC_OK;
}

/* /stats.json, until it counts the job (the parent counts it when the
 * worker reports, just after the reply). */
static int
stats_count_job(const struct testd *d, long long *ok, char *err)
{
	int64_t deadline = bc_now_ms() + STEP_MS;
	char e[BC_ERRLEN], *body = NULL;
	int r;

	*ok = -1;
	for (;;) {
		if ((r = http_get(d->stats_port, "/stats.json", deadline, &body,
		    e)) != BC_OK)
			return bc_seterr(err, r, "stats port %d: %s",
			    d->stats_port, e);
		r = json_count(body, "dcc_compile_ok", ok, e);
		free(body);
		if (r != BC_OK)
			return bc_seterr(err, BC_ERR_PROTO, "stats port %d: "
			    "/stats.json is not a JSON object: %s",
			    d->stats_port, e);
		if (*ok >= 1)
			return BC_OK;
		if (interrupted || bc_now_ms() + 50 >= deadline)
			return bc_seterr(err, BC_ERR_PROTO, "stats port %d: "
			    "/stats.json shows dcc_compile_ok %lld after the "
			    "job, not 1", d->stats_port, *ok);
		bc_sleep_ms(50);
	}
}

/* The daemon's reply against the local compile's object. */
static int
compare_reply(const struct selftest *s, const struct bc_reply *rep,
    char *err)
{
	const uint8_t *nl;
	char how[64], said[256];
	size_t n;

	if (rep->status != 0) {
		exit_text((int)rep->status, how, sizeof(how));
		/* its first line (SERR is bytes, not a string) */
		n = bc_buf_len(&rep->serr);
		if (n > 0 && (nl = memchr(bc_buf_data(&rep->serr), '\n', n)) !=
		    NULL)
			n = (size_t)(nl - bc_buf_data(&rep->serr));
		bc_log_escape(bc_buf_data(&rep->serr), n, said, sizeof(said));
		return bc_seterr(err, BC_ERR_COMPILER, "the daemon's compile "
		    "%s: %s", how, n > 0 ? said : "no output");
	}
	if (bc_buf_len(&rep->doto) == 0)
		return bc_seterr(err, BC_ERR_PROTO, "the daemon's compile "
		    "succeeded but sent no object");
	if (bc_buf_len(&s->obj) == 0)
		return bc_seterr(err, BC_ERR_COMPILER, "the daemon sent a "
		    "%zu-byte object, but there is no local one to compare it "
		    "with (see the compiler check)", bc_buf_len(&rep->doto));
	if (!same_bytes(&rep->doto, &s->obj))
		return bc_seterr(err, BC_ERR_CORRUPT, "the daemon's object "
		    "(%zu bytes) differs from the local compile's (%zu bytes) "
		    "from byte %zu on", bc_buf_len(&rep->doto),
		    bc_buf_len(&s->obj), first_difference(&rep->doto, &s->obj));
	return BC_OK;
}

static int
check_service(struct selftest *s, char *detail, char *err)
{
	struct testd d;
	struct bc_reply rep;
	char e[BC_ERRLEN], *exe = NULL;
	long long nok = -1;
	long pid = -1;
	int r, tries = 0;

	if (s->dir == NULL)
		return bc_seterr(err, BC_ERR_IO, "%s", s->dir_err);
	memset(&d, 0, sizeof(d));
	d.pid = -1;
	d.log = xasprintf("%s/boltccd.log", s->dir);
	d.out = xasprintf("%s/boltccd.out", s->dir);
	bc_reply_init(&rep);
	if ((exe = bc_osdep_exe_path()) == NULL &&
	    strchr(s->conf->argv0, '/') != NULL)
		exe = xstrdup(s->conf->argv0);
	if (exe == NULL) {
		r = bc_seterr(err, BC_ERR_NOENT, "cannot tell where this "
		    "boltccd is (run it by its path)");
		goto out;
	}
	do {
		if ((r = daemon_start(s, exe, &d, e)) == BC_OK)
			r = daemon_wait_ready(&d, e);
	} while (r == BC_ERR_BUSY && ++tries < START_TRIES);
	if (r != BC_OK) {
		r = bc_seterr(err, r, "%s", e);
		goto out;
	}
	pid = (long)d.pid;
	if ((r = remote_job(s, &d, &rep, e)) != BC_OK ||
	    (r = compare_reply(s, &rep, e)) != BC_OK ||
	    (r = stats_count_job(&d, &nok, e)) != BC_OK) {
		char said[256];

		daemon_said(&d, said, sizeof(said));
		r = bc_seterr(err, r, "%s (daemon log: %s)", e, said);
		goto out;
	}
	if ((r = daemon_stop(&d, e)) != BC_OK) {
		r = bc_seterr(err, r, "%s", e);
		goto out;
	}
	bc_seterr(detail, BC_OK, "%s (pid %ld) on 127.0.0.1 port %d compiled "
	    "a protocol-1 job into the same %zu bytes as the local compile; "
	    "/stats.json on port %d counts it (dcc_compile_ok %lld); it "
	    "exited 0 on SIGTERM", exe, pid, d.port, bc_buf_len(&rep.doto),
	    d.stats_port, nok);
out:
	if (d.pid >= 0 && daemon_stop(&d, e) != BC_OK && r == BC_OK)
		r = bc_seterr(err, BC_ERR_IO, "%s", e);
	bc_reply_free(&rep);
	free(exe);
	free(d.log);
	free(d.out);
	return r;
}

/* --------------------------------------------------------------------- */

typedef int (*check_fn)(struct selftest *s, char *detail, char *err);

static const struct {
	const char *name;
	check_fn fn;
} checks[] = {
	{ "sha256", check_sha256 },
	{ "compiler", check_compiler },
	{ "cache", check_cache },
	{ "service", check_service },
};
#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

int
bc_selftest_run(const struct bc_selftest_conf *conf, FILE *out)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa, old[sizeof(sigs) / sizeof(sigs[0])];
	struct selftest s;
	size_t i;
	int failed = 0;

	memset(&s, 0, sizeof(s));
	s.conf = conf;
	s.cc = conf->compiler != NULL ? conf->compiler : "cc";
	bc_buf_init(&s.obj, BC_MAX_OBJECT);
	bc_strv_init(&s.job_argv);
	bc_strv_push(&s.job_argv, s.cc);
	for (i = 0; job_args[i] != NULL; i++)
		bc_strv_push(&s.job_argv, job_args[i]);
	interrupted = 0;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* no SA_RESTART: a wait notices at once */
		sa.sa_handler = sigs[i] == SIGPIPE ? SIG_IGN : on_signal;
		(void)sigaction(sigs[i], &sa, &old[i]);
	}
	if (bc_scratch_mkjob(&s.dir, s.dir_err) != BC_OK)
		s.dir = NULL;

	for (i = 0; i < NCHECKS; i++) {
		char detail[BC_ERRLEN], err[BC_ERRLEN];
		int r;

		detail[0] = err[0] = '\0';
		if (interrupted)
			r = bc_seterr(err, BC_ERR_IO, "not run: interrupted");
		else
			r = checks[i].fn(&s, detail, err);
		if (r == BC_OK)
			fprintf(out, "ok   %s: %s\n", checks[i].name, detail);
		else {
			fprintf(out, "FAIL %s: %s\n", checks[i].name, err);
			failed++;
		}
		fflush(out);
	}
	if (failed == 0)
		fprintf(out, "boltccd --self-test: all %zu checks passed: this "
		    "install can serve compile jobs\n", NCHECKS);
	else
		fprintf(out, "boltccd --self-test: %d of %zu checks failed: "
		    "this install cannot serve compile jobs\n", failed,
		    NCHECKS);
	fflush(out);

	if (s.dir != NULL && bc_rmtree(s.dir) != BC_OK)
		bc_warn("cannot remove %s", s.dir);
	free(s.dir);
	bc_buf_free(&s.obj);
	bc_strv_free(&s.job_argv);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		(void)sigaction(sigs[i], &old[i], NULL);
	return failed;
}
