/*
 * main.c - boltccd: command line, logging, daemonizing, pid file.
 *
 * One option table drives parsing and --help.  Bad values are reported
 * naming the option and exit 101 (BC_EXIT_BAD_ARGUMENTS); bind failures
 * exit 102.  Everything else is in server.c (listener) and job.c (work).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/err.h"
#include "common/json.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/log.h"
#include "common/util.h"
#include "acl.h"
#include "policy.h"
#include "scratch.h"
#include "selftest.h"
#include "server.h"

/* open files the daemon asks for (raise_nofile), as the plist's limit */
#define BC_DAEMON_NOFILE 8192
/* --cache-admin waits this long for the daemon (a clear of a big cache) */
#define BC_ADMIN_CLIENT_TIMEOUT_MS (30 * 60 * 1000)
/* default --queue floor: lookups from every client of a farm queue too */
#define BC_DAEMON_MIN_QUEUE 32

struct opts {
	struct bc_server_conf *sc;
	int mode_set;
	int jobs_set, queue_set;
	char *log_file;
	int log_stderr;
	enum bc_log_level level;
	int allow_given;
	int no_cache;
	int cache_check;
	char *tmp_dir;
	int cache_dir_given;
	int self_test;
	char *self_test_cc;		/* --self-test-compiler */
	struct bc_strv allow_compiler;	/* --allow-compiler as given */
	const char *admin_op;		/* --zero-stats, --cache-admin OP */
	const char *admin_value;	/* its SIZE or AGE */
	int admin_need_value;
};

typedef int (*opt_fn)(struct opts *o, const char *arg, char *err);

struct option_def {
	const char *name;
	const char *argname;	/* NULL: takes no argument */
	opt_fn fn;
	const char *help;
};

static int opt_help(struct opts *, const char *, char *);
static int opt_version(struct opts *, const char *, char *);

static int
int_arg(const char *opt, const char *arg, long long min, long long max,
    int *out, char *err)
{
	long long v;

	if (bc_parse_int(arg, min, max, &v) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL,
		    "%s: '%s' is not a number in %lld..%lld", opt, arg, min,
		    max);
	*out = (int)v;
	return BC_OK;
}

static int
set_mode(struct opts *o, enum bc_run_mode m, char *err)
{
	if (o->mode_set && o->sc->mode != m)
		return bc_seterr(err, BC_ERR_INVAL,
		    "--daemon, --no-detach, --inetd and --mux exclude each "
		    "other");
	o->mode_set = 1;
	o->sc->mode = m;
	return BC_OK;
}

static int
opt_daemon(struct opts *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_DAEMON, err);
}

static int
opt_nodetach(struct opts *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_FOREGROUND, err);
}

static int
opt_inetd(struct opts *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_INETD, err);
}

static int
opt_mux(struct opts *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_MUX, err);
}

/* distcc's ssh mode runs `distccd --inetd --enable-tcp-insecure`: accepted
 * so a stock client can use boltccd over ssh, and ignored: the compiler
 * allowlist and every limit stay on (doc/ssh.md). */
static int
opt_tcp_insecure(struct opts *o, const char *a, char *err)
{
	return BC_OK;
}

static int
opt_listen(struct opts *o, const char *a, char *err)
{
	struct bc_acl_entry e;
	char host[128];
	size_t n = strlen(a);

	if (n >= 2 && a[0] == '[' && a[n - 1] == ']' && n - 2 < sizeof(host)) {
		memcpy(host, a + 1, n - 2);
		host[n - 2] = '\0';
	} else if (n < sizeof(host))
		memcpy(host, a, n + 1);
	else
		host[0] = '\0';
	if (strchr(host, '/') != NULL || bc_acl_parse(host, &e, NULL) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL,
		    "--listen: '%s' is not an IPv4 or IPv6 address", a);
	bc_strv_push(&o->sc->listen, host);
	return BC_OK;
}

static int
opt_port(struct opts *o, const char *a, char *err)
{
	return int_arg("--port", a, 1, 65535, &o->sc->port, err);
}

static int
opt_stats_port(struct opts *o, const char *a, char *err)
{
	return int_arg("--stats-port", a, 0, 65535, &o->sc->stats_port, err);
}

static int
opt_allow(struct opts *o, const char *a, char *err)
{
	char e[BC_ERRLEN];

	if (bc_acl_add(&o->sc->acl, a, e) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "--allow: %s", e);
	o->allow_given = 1;
	return BC_OK;
}

static int
opt_admin_allow(struct opts *o, const char *a, char *err)
{
	char e[BC_ERRLEN];

	if (bc_acl_add(&o->sc->admin_allow, a, e) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "--admin-allow: %s", e);
	return BC_OK;
}

static int
set_admin_op(struct opts *o, const char *op, char *err)
{
	if (o->admin_op != NULL)
		return bc_seterr(err, BC_ERR_INVAL, "--zero-stats and "
		    "--cache-admin exclude each other (one request a run)");
	o->admin_op = op;
	return BC_OK;
}

static int
opt_zero_stats(struct opts *o, const char *a, char *err)
{
	return set_admin_op(o, "zero", err);
}

/* --cache-admin clear|show|limit SIZE|evict-older-than AGE: the value
 * is the next argument (parse_args). */
static int
opt_cache_admin(struct opts *o, const char *a, char *err)
{
	if (strcmp(a, "limit") == 0 || strcmp(a, "evict-older-than") == 0)
		o->admin_need_value = 1;
	else if (strcmp(a, "clear") != 0 && strcmp(a, "show") != 0)
		return bc_seterr(err, BC_ERR_INVAL, "--cache-admin: '%s' is "
		    "not one of clear, show, limit SIZE, evict-older-than AGE",
		    a);
	return set_admin_op(o, a, err);
}

static int
opt_jobs(struct opts *o, const char *a, char *err)
{
	o->jobs_set = 1;
	return int_arg("--jobs", a, 1, 1024, &o->sc->jobs, err);
}

static int
opt_queue(struct opts *o, const char *a, char *err)
{
	o->queue_set = 1;
	return int_arg("--queue", a, 0, 65536, &o->sc->queue, err);
}

static int
opt_log_file(struct opts *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--log-file: empty name");
	free(o->log_file);
	o->log_file = xstrdup(a);
	return BC_OK;
}

static int
opt_log_stderr(struct opts *o, const char *a, char *err)
{
	o->log_stderr = 1;
	return BC_OK;
}

static int
opt_log_level(struct opts *o, const char *a, char *err)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(a, names[i]) == 0) {
			o->level = (enum bc_log_level)i;
			return BC_OK;
		}
	if (strcmp(a, "warning") == 0) {
		o->level = BC_LOG_WARN;
		return BC_OK;
	}
	return bc_seterr(err, BC_ERR_INVAL,
	    "--log-level: '%s' is not one of error, warn, info, debug", a);
}

static int
opt_pid_file(struct opts *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--pid-file: empty name");
	free(o->sc->pid_file);
	o->sc->pid_file = xstrdup(a);
	return BC_OK;
}

static int
opt_allow_compiler(struct opts *o, const char *a, char *err)
{
	char e[BC_ERRLEN];

	if (bc_policy_allow(&o->sc->policy, a, e) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "--allow-compiler: %s", e);
	bc_strv_push(&o->allow_compiler, a);
	return BC_OK;
}

static int
opt_io_timeout(struct opts *o, const char *a, char *err)
{
	return int_arg("--io-timeout", a, 1, 86400, &o->sc->io_timeout_sec,
	    err);
}

static int
opt_job_timeout(struct opts *o, const char *a, char *err)
{
	return int_arg("--job-timeout", a, 1, 86400, &o->sc->job_timeout_sec,
	    err);
}

static int
opt_request_timeout(struct opts *o, const char *a, char *err)
{
	return int_arg("--request-timeout", a, 1, 86400,
	    &o->sc->request_timeout_sec, err);
}

static int
opt_grace(struct opts *o, const char *a, char *err)
{
	return int_arg("--shutdown-grace", a, 0, 86400, &o->sc->grace_sec,
	    err);
}

static int
opt_cache_dir(struct opts *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--cache-dir: empty name");
	free(o->sc->cache_dir);
	o->sc->cache_dir = xstrdup(a);
	o->cache_dir_given = 1;
	return BC_OK;
}

/* SIZE: bytes, or a number with K, M, G or T (powers of 1024). */
static int
opt_cache_size(struct opts *o, const char *a, char *err)
{
	if (bc_parse_size(a, 1, &o->sc->cache_size) == BC_OK)
		return BC_OK;
	return bc_seterr(err, BC_ERR_INVAL,
	    "--cache-size: '%s' is not a size like 500M or 4G", a);
}

static int
opt_tmp_dir(struct opts *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--tmp-dir: empty name");
	free(o->tmp_dir);
	o->tmp_dir = xstrdup(a);
	return BC_OK;
}

static int
opt_no_cache(struct opts *o, const char *a, char *err)
{
	o->no_cache = 1;
	return BC_OK;
}

static int
opt_cache_check(struct opts *o, const char *a, char *err)
{
	o->cache_check = 1;
	return BC_OK;
}

static int
opt_self_test(struct opts *o, const char *a, char *err)
{
	o->self_test = 1;
	return BC_OK;
}

static int
opt_self_test_cc(struct opts *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL,
		    "--self-test-compiler: empty name");
	free(o->self_test_cc);
	o->self_test_cc = xstrdup(a);
	return BC_OK;
}

/*
 * Raise the soft limit on open files to BC_DAEMON_NOFILE (or the hard
 * limit, if lower): a worker per connection and the parent's pipes and
 * stats connections add up, and macOS starts what launchd runs outside a
 * plist's own limits (brew services, a shell) at 256.  macOS also refuses
 * more than OPEN_MAX when the hard limit is "unlimited".
 */
static void
raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want = BC_DAEMON_NOFILE;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
		want = rl.rlim_max;
#ifdef OPEN_MAX
	if (want > OPEN_MAX)
		want = OPEN_MAX;
#endif
	if (want <= rl.rlim_cur)
		return;
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		bc_debug("open files limit raised to %llu",
		    (unsigned long long)want);
	else
		bc_warn("cannot raise the open files limit from %llu to %llu: "
		    "%s", (unsigned long long)rl.rlim_cur,
		    (unsigned long long)want, strerror(errno));
}

/* $XDG_CACHE_HOME/boltccd, ~/.cache/boltccd, or /var/cache/boltccd
 * for root. */
static char *
default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (getuid() == 0)
		return xstrdup("/var/cache/boltccd");
	if (x != NULL && x[0] == '/')
		return xasprintf("%s/boltccd", x);
	if (home != NULL && home[0] == '/')
		return xasprintf("%s/.cache/boltccd", home);
	return NULL;
}

/* --cache-check: verify index and every blob, change nothing. */
static int
cache_check(const struct bc_server_conf *sc)
{
	struct bc_cache_check chk;
	struct bc_cache *c;
	char err[BC_ERRLEN];
	uint64_t bad;

	if (sc->cache_dir == NULL) {
		fprintf(stderr, "boltccd: --cache-check: no cache directory\n");
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (bc_cache_open(sc->cache_dir, sc->cache_size, &c, err) != BC_OK ||
	    bc_cache_reconcile(c, 0, 1, &chk, err) != BC_OK) {
		fprintf(stderr, "boltccd: --cache-check: %s\n", err);
		return BC_EXIT_FAILURE;
	}
	bc_cache_close(c);
	bad = chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.bad_size + chk.corrupt;
	printf("cache %s: %llu entries, %llu bytes; rows without blob %llu, "
	    "blobs without row %llu, temp files %llu, bad sizes %llu, "
	    "corrupt blobs %llu: %s\n", sc->cache_dir,
	    (unsigned long long)chk.entries, (unsigned long long)chk.bytes,
	    (unsigned long long)chk.orphan_rows,
	    (unsigned long long)chk.orphan_blobs,
	    (unsigned long long)chk.temp_files,
	    (unsigned long long)chk.bad_size, (unsigned long long)chk.corrupt,
	    bad == 0 ? "consistent" : "INCONSISTENT");
	return bad == 0 ? 0 : 1;
}

/* Where the running daemon's stats port is reached from this machine:
 * loopback, unless --listen names only other addresses. */
static const char *
admin_host(const struct bc_server_conf *sc)
{
	size_t i;

	for (i = 0; i < sc->listen.n; i++)
		if (strcmp(sc->listen.v[i], "::1") == 0 ||
		    bc_str_has_prefix(sc->listen.v[i], "127.") ||
		    strcmp(sc->listen.v[i], "0.0.0.0") == 0 ||
		    strcmp(sc->listen.v[i], "::") == 0)
			return strchr(sc->listen.v[i], ':') != NULL &&
			    strcmp(sc->listen.v[i], "::") != 0 ? "::1" :
			    "127.0.0.1";
	return sc->listen.n > 0 ? sc->listen.v[0] : "127.0.0.1";
}

/* The request path of an admin op; NULL with err for a bad value. */
static char *
admin_path(const char *op, const char *v, char *err)
{
	uint64_t size;
	int64_t age;

	if (strcmp(op, "zero") == 0)
		return xstrdup("/admin/stats/zero");
	if (strcmp(op, "clear") == 0)
		return xstrdup("/admin/cache/clear");
	if (strcmp(op, "show") == 0)
		return xstrdup("/stats.json");
	if (strcmp(op, "limit") == 0) {
		if (bc_parse_size(v, 0, &size) != BC_OK) {
			bc_seterr(err, BC_ERR_INVAL, "--cache-admin limit: '%s' "
			    "is not a size like 500M or 20G", v);
			return NULL;
		}
		return xasprintf("/admin/cache/limit?size=%s", v);
	}
	if (bc_parse_age(v, &age) != BC_OK) {
		bc_seterr(err, BC_ERR_INVAL, "--cache-admin evict-older-than: "
		    "'%s' is not an age like 90s, 30m, 12h or 7d", v);
		return NULL;
	}
	return xasprintf("/admin/cache/evict?older-than=%s", v);
}

/* --cache-admin show: the cache section of /stats.json, readable. */
static int
admin_show(const char *body)
{
	struct bc_json d;
	char e[BC_ERRLEN];
	size_t c;

	if (bc_json_parse(&d, body, strlen(body), e) != BC_OK) {
		fprintf(stderr, "boltccd: --cache-admin show: %s\n", e);
		bc_json_free(&d);
		return BC_EXIT_PROTOCOL_ERROR;
	}
	c = bc_json_get(&d, 0, "cache");
	if (bc_json_type(&d, c) != BC_JSON_OBJECT)
		printf("no cache (--no-cache)\n");
	else
		printf("entries %.0f\nstored_bytes %.0f\nlimit_bytes %.0f (%s)\n"
		    "hit_rate %.1f%%\noldest_entry_age_sec %.0f\n",
		    bc_json_num(&d, c, "entries", 0),
		    bc_json_num(&d, c, "stored_bytes", 0),
		    bc_json_num(&d, c, "limit_bytes", 0),
		    bc_json_type(&d, bc_json_get(&d, c, "limit_set")) ==
		    BC_JSON_TRUE ? "set by an operator" : "--cache-size",
		    bc_json_num(&d, c, "hit_rate", 0),
		    bc_json_num(&d, c, "oldest_age_sec", 0));
	bc_json_free(&d);
	return 0;
}

/* --zero-stats, --cache-admin: one request to the running daemon. */
static int
admin_client(const struct opts *o, const struct bc_server_conf *sc)
{
	struct bc_buf ans = BC_BUF_INIT(1 << 20);
	const char *host = admin_host(sc);
	char err[BC_ERRLEN], *path, *body;
	int status, rc;

	if (sc->stats_port == 0) {
		fprintf(stderr, "boltccd: %s needs the daemon's stats port "
		    "(--stats-port 0 disables it)\n", strcmp(o->admin_op,
		    "zero") == 0 ? "--zero-stats" : "--cache-admin");
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if ((path = admin_path(o->admin_op, o->admin_value, err)) == NULL) {
		fprintf(stderr, "boltccd: %s\n", err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (bc_io_http_request(strcmp(o->admin_op, "show") == 0 ? "GET" :
	    "POST", host, sc->stats_port, path, BC_ADMIN_CLIENT_TIMEOUT_MS,
	    &ans, err) != BC_OK) {
		fprintf(stderr, "boltccd: no running daemon answered on %s "
		    "port %d: %s\n", host, sc->stats_port, err);
		free(path);
		bc_buf_free(&ans);
		return BC_EXIT_FAILURE;
	}
	status = bc_io_http_status(&ans);
	body = bc_io_http_body(&ans);
	body[strcspn(body, "\n")] = '\0';
	if (status == 200 && strcmp(o->admin_op, "show") == 0)
		rc = admin_show(body);
	else if (status == 200) {
		printf("%s\n", body);
		rc = 0;
	} else {
		fprintf(stderr, "boltccd: %s: HTTP %d: %s\n", path, status,
		    body);
		rc = BC_EXIT_FAILURE;
	}
	free(body);
	free(path);
	bc_buf_free(&ans);
	return rc;
}

/* --self-test: 0 if this install can serve, 1 if not (selftest.h). */
static int
self_test(const struct bc_server_conf *sc, const struct opts *o,
    const char *argv0)
{
	struct bc_selftest_conf c;

	memset(&c, 0, sizeof(c));
	c.argv0 = argv0;
	c.policy = &sc->policy;
	c.allow = &o->allow_compiler;
	c.compiler = o->self_test_cc;
	c.cache_dir = o->cache_dir_given ? sc->cache_dir : NULL;
	c.no_cache = o->no_cache;
	c.cache_size = sc->cache_size;
	return bc_selftest_run(&c, stdout) == 0 ? 0 : 1;
}

static const struct option_def options[] = {
	{ "--daemon", NULL, opt_daemon,
	  "fork into the background (writes --pid-file after forking)" },
	{ "--no-detach", NULL, opt_nodetach,
	  "stay in the foreground (default; for launchd/systemd)" },
	{ "--inetd", NULL, opt_inetd,
	  "serve one connection on stdin/stdout (ssh, inetd), then exit" },
	{ "--mux", NULL, opt_mux,
	  "serve many job streams on stdin/stdout (boltcc's ssh helper)" },
	{ "--enable-tcp-insecure", NULL, opt_tcp_insecure,
	  "accepted for distcc's ssh mode; ignored (the allowlist stays on)" },
	{ "--listen", "ADDR", opt_listen,
	  "listen on this IPv4/IPv6 address (repeatable; default all)" },
	{ "--port", "N", opt_port, "job port (default 3632)" },
	{ "--allow", "CIDR", opt_allow,
	  "allow clients from ADDR[/BITS] (repeatable; default loopback)" },
	{ "--admin-allow", "CIDR", opt_admin_allow,
	  "also accept admin requests from ADDR[/BITS] (besides loopback)" },
	{ "--jobs", "N", opt_jobs,
	  "concurrent compiles, 1..1024 (default: number of CPUs)" },
	{ "--queue", "N", opt_queue,
	  "connections that may wait for a slot (default 4 x jobs, at least 32)" },
	{ "--stats-port", "N", opt_stats_port,
	  "HTTP stats port (default 3633; 0 disables)" },
	{ "--log-file", "FILE", opt_log_file, "append log lines to FILE" },
	{ "--log-stderr", NULL, opt_log_stderr, "log to stderr" },
	{ "--log-level", "LEVEL", opt_log_level,
	  "error, warn, info (default) or debug" },
	{ "--pid-file", "FILE", opt_pid_file, "write the daemon's pid here" },
	{ "--allow-compiler", "NAME|PATH", opt_allow_compiler,
	  "also allow this compiler name or absolute path (repeatable)" },
	{ "--io-timeout", "SEC", opt_io_timeout,
	  "limit for one blocking read or write (default 60)" },
	{ "--job-timeout", "SEC", opt_job_timeout,
	  "limit for a whole job incl. compile (default 600)" },
	{ "--request-timeout", "SEC", opt_request_timeout,
	  "limit for receiving a whole request (default 120)" },
	{ "--shutdown-grace", "SEC", opt_grace,
	  "on SIGTERM wait this long for running jobs (default 30)" },
	{ "--cache-dir", "DIR", opt_cache_dir,
	  "artifact cache (default ~/.cache/boltccd; root: /var/cache/boltccd)" },
	{ "--cache-size", "SIZE", opt_cache_size,
	  "cache size limit, e.g. 500M, 4G (default 4G; LRU eviction)" },
	{ "--no-cache", NULL, opt_no_cache, "do not use the artifact cache" },
	{ "--cache-check", NULL, opt_cache_check,
	  "verify the cache index and every blob, print a report, exit" },
	{ "--cache-admin", "OP", opt_cache_admin,
	  "ask the running daemon (loopback): clear, show, limit SIZE, "
	  "evict-older-than AGE" },
	{ "--zero-stats", NULL, opt_zero_stats,
	  "ask the running daemon (loopback) to zero its page counters" },
	{ "--self-test", NULL, opt_self_test,
	  "check this install can serve (hash, compiler, cache, a job), exit" },
	{ "--self-test-compiler", "NAME", opt_self_test_cc,
	  "the compiler --self-test tries, as a job names it (default cc)" },
	{ "--tmp-dir", "DIR", opt_tmp_dir,
	  "job scratch dir (default $TMPDIR, else /dev/shm if tmpfs, else /tmp)" },
	{ "--version", NULL, opt_version, "print the version and exit" },
	{ "--help", NULL, opt_help, "show this help and exit" },
	{ NULL, NULL, NULL, NULL }
};

static int
opt_help(struct opts *o, const char *a, char *err)
{
	int i;

	printf("usage: boltccd [OPTION]...\n"
	    "Compile server for boltcc and distcc clients (distcc protocols "
	    "1 and 2, BOLT).\n\n");
	for (i = 0; options[i].name != NULL; i++) {
		char left[48];

		snprintf(left, sizeof(left), "%s%s%s", options[i].name,
		    options[i].argname != NULL ? " " : "",
		    options[i].argname != NULL ? options[i].argname : "");
		printf("  %-28s %s\n", left, options[i].help);
	}
	printf("\nEnvironment: DISTCCD_PATH (compiler search path, else PATH), "
	    "TMPDIR.\nSee boltccd(8).\n");
	exit(BC_EXIT_OK);
}

static int
opt_version(struct opts *o, const char *a, char *err)
{
	printf("boltccd %s\n", PACKAGE_VERSION);
	exit(BC_EXIT_OK);
}

static int
parse_args(struct opts *o, int argc, char **argv, char *err)
{
	int i, k, r;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq = strchr(a, '=');
		size_t nl = eq != NULL && bc_str_has_prefix(a, "--") ?
		    (size_t)(eq - a) : strlen(a);

		for (k = 0; options[k].name != NULL; k++)
			if (strlen(options[k].name) == nl &&
			    strncmp(options[k].name, a, nl) == 0)
				break;
		if (options[k].name == NULL)
			return bc_seterr(err, BC_ERR_INVAL,
			    "unknown option '%s' (see --help)", a);
		if (options[k].argname != NULL) {
			if (nl < strlen(a))
				val = a + nl + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return bc_seterr(err, BC_ERR_INVAL,
				    "%s needs an argument %s", options[k].name,
				    options[k].argname);
		} else if (nl < strlen(a))
			return bc_seterr(err, BC_ERR_INVAL,
			    "%s takes no argument", options[k].name);
		if ((r = options[k].fn(o, val, err)) != BC_OK)
			return r;
		if (o->admin_need_value) {
			if (i + 1 >= argc)
				return bc_seterr(err, BC_ERR_INVAL,
				    "--cache-admin %s needs a value", val);
			o->admin_value = argv[++i];
			o->admin_need_value = 0;
		}
	}
	return BC_OK;
}

static int
write_pid_file(const char *path, char *err)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	return bc_write_file_atomic(path, line, (size_t)n, 0644, err);
}

static int
daemonize(char *err)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return bc_seterr(err, BC_ERR_IO, "fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return bc_seterr(err, BC_ERR_IO, "setsid: %s", strerror(errno));
	if (chdir("/") != 0)
		return bc_seterr(err, BC_ERR_IO, "chdir /: %s",
		    strerror(errno));
	if ((fd = open("/dev/null", O_RDWR)) >= 0) {
		(void)dup2(fd, 0);
		(void)dup2(fd, 1);
		if (fd > 2)
			close(fd);
	}
	return BC_OK;
}

int
main(int argc, char **argv)
{
	struct bc_server_conf sc;
	struct opts o;
	char err[BC_ERRLEN];
	const char *path;
	int rc;

	memset(&sc, 0, sizeof(sc));
	memset(&o, 0, sizeof(o));
	o.sc = &sc;
	o.level = BC_LOG_INFO;
	bc_strv_init(&o.allow_compiler);
	sc.mode = BC_MODE_FOREGROUND;
	bc_strv_init(&sc.listen);
	sc.port = 3632;
	sc.stats_port = 3633;
	bc_acl_init(&sc.acl);
	bc_acl_init(&sc.admin_allow);
	sc.jobs = bc_ncpus();
	if (sc.jobs > 1024)
		sc.jobs = 1024;
	sc.grace_sec = 30;
	sc.io_timeout_sec = 60;
	sc.job_timeout_sec = 600;
	sc.request_timeout_sec = 120;
	sc.argv0 = "/boltccd";
	bc_policy_init(&sc.policy);
	bc_log_init("boltccd", BC_LOG_INFO);

	if (parse_args(&o, argc, argv, err) != BC_OK) {
		fprintf(stderr, "boltccd: %s\n", err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (!o.queue_set)	/* cache lookups are short connections too */
		sc.queue = 4 * sc.jobs > BC_DAEMON_MIN_QUEUE ? 4 * sc.jobs :
		    BC_DAEMON_MIN_QUEUE;
	if (sc.cache_size == 0)
		sc.cache_size = BC_CACHE_DEFAULT_SIZE;
	if (o.no_cache) {
		free(sc.cache_dir);
		sc.cache_dir = NULL;
	} else if (sc.cache_dir == NULL)
		sc.cache_dir = default_cache_dir();
	if (o.cache_check) {
		rc = cache_check(&sc);
		goto out;
	}
	if (o.admin_op != NULL) {
		rc = admin_client(&o, &sc);
		goto out;
	}
	if (o.self_test_cc != NULL && !o.self_test) {
		fprintf(stderr, "boltccd: --self-test-compiler needs "
		    "--self-test\n");
		rc = BC_EXIT_BAD_ARGUMENTS;
		goto out;
	}
	if (sc.stats_port != 0 && sc.stats_port == sc.port) {
		fprintf(stderr, "boltccd: --stats-port must differ from "
		    "--port\n");
		return BC_EXIT_BAD_ARGUMENTS;
	}

	bc_log_set_level(o.level);
	bc_log_stamp_stderr(1);	/* a daemon's stderr is a log too */
	if (bc_log_share_once(err) != BC_OK)	/* once per daemon */
		fprintf(stderr, "boltccd: warning: %s\n", err);
	if (o.log_file != NULL && bc_log_open(o.log_file, err) != BC_OK) {
		fprintf(stderr, "boltccd: --log-file: %s\n", err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (o.log_file == NULL && !o.log_stderr && sc.mode != BC_MODE_FOREGROUND)
		bc_log_silence();	/* stdout/stderr belong to the peer */
	if (bc_scratch_init(o.tmp_dir, err) != BC_OK) {
		fprintf(stderr, "boltccd: %s\n", err);
		rc = BC_EXIT_BAD_ARGUMENTS;
		goto out;
	}

	path = getenv("DISTCCD_PATH");
	if (path == NULL || *path == '\0')
		path = getenv("PATH");
	bc_policy_set_path(&sc.policy, path);
	(void)bc_policy_add_dir(&sc.policy, "/usr/lib/distcc");
	(void)bc_policy_add_dir(&sc.policy, "/usr/local/lib/distcc");

	if (o.self_test) {
		rc = self_test(&sc, &o, argv[0]);
		goto out;
	}
	if (sc.mode == BC_MODE_INETD) {
		rc = bc_server_inetd(&sc);
		goto out;
	}
	if (sc.mode == BC_MODE_MUX) {
		rc = bc_server_mux(&sc);
		goto out;
	}
	raise_nofile();
	if (!o.allow_given) {
		bc_acl_add_loopback(&sc.acl);
		bc_info("no --allow given: serving loopback clients only "
		    "(127.0.0.0/8, ::1)");
	}
	if (bc_server_bind(&sc, err) != BC_OK) {
		bc_error("%s", err);
		if (o.log_file != NULL || sc.mode == BC_MODE_DAEMON)
			fprintf(stderr, "boltccd: %s\n", err);
		rc = BC_EXIT_BIND_FAILED;
		goto out;
	}
	if (sc.mode == BC_MODE_DAEMON) {
		if (daemonize(err) != BC_OK) {
			bc_error("%s", err);
			rc = BC_EXIT_FAILURE;
			goto out;
		}
		if (!o.log_stderr) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				(void)dup2(fd, 2);
				if (fd > 2)
					close(fd);
			}
		}
	}
	if (sc.pid_file != NULL && write_pid_file(sc.pid_file, err) != BC_OK) {
		bc_error("--pid-file: %s", err);
		rc = BC_EXIT_FAILURE;
		goto out;
	}
	rc = bc_server_run(&sc);
	if (sc.pid_file != NULL)
		(void)unlink(sc.pid_file);
out:
	bc_strv_free(&sc.listen);
	bc_acl_free(&sc.acl);
	bc_acl_free(&sc.admin_allow);
	bc_policy_free(&sc.policy);
	free(sc.pid_file);
	free(sc.cache_dir);
	free(o.log_file);
	free(o.tmp_dir);
	free(o.self_test_cc);
	bc_strv_free(&o.allow_compiler);
	return rc;
}
