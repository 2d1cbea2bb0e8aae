/*
 * dconf.c - boltccd's command line and environment, read once (see
 * dconf.h).
 *
 * One option table drives parsing and --help.  Bad values are reported
 * naming the option; main exits 101 (BC_EXIT_BAD_ARGUMENTS) on them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/err.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/util.h"
#include "acl.h"
#include "dconf.h"
#include "policy.h"
#include "server.h"

/* default --queue floor: lookups from every client of a farm queue too */
#define BC_DAEMON_MIN_QUEUE 32

typedef int (*opt_fn)(struct bc_dconf *o, const char *arg, char *err);

struct option_def {
	const char *name;
	const char *argname;	/* NULL: takes no argument */
	opt_fn fn;
	const char *help;
};

static int opt_help(struct bc_dconf *, const char *, char *);
static int opt_version(struct bc_dconf *, const char *, char *);

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
set_mode(struct bc_dconf *o, enum bc_run_mode m, char *err)
{
	if (o->mode_set && o->sc.mode != m)
		return bc_seterr(err, BC_ERR_INVAL,
		    "--daemon, --no-detach, --inetd and --mux exclude each "
		    "other");
	o->mode_set = 1;
	o->sc.mode = m;
	return BC_OK;
}

static int
opt_daemon(struct bc_dconf *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_DAEMON, err);
}

static int
opt_nodetach(struct bc_dconf *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_FOREGROUND, err);
}

static int
opt_inetd(struct bc_dconf *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_INETD, err);
}

static int
opt_mux(struct bc_dconf *o, const char *a, char *err)
{
	return set_mode(o, BC_MODE_MUX, err);
}

/* distcc's ssh mode runs `distccd --inetd --enable-tcp-insecure`: accepted
 * so a stock client can use boltccd over ssh, and ignored: the compiler
 * allowlist and every limit stay on (doc/ssh.md). */
static int
opt_tcp_insecure(struct bc_dconf *o, const char *a, char *err)
{
	return BC_OK;
}

static int
opt_listen(struct bc_dconf *o, const char *a, char *err)
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
	bc_strv_push(&o->sc.listen, host);
	return BC_OK;
}

static int
opt_port(struct bc_dconf *o, const char *a, char *err)
{
	return int_arg("--port", a, 1, 65535, &o->sc.port, err);
}

static int
opt_stats_port(struct bc_dconf *o, const char *a, char *err)
{
	return int_arg("--stats-port", a, 0, 65535, &o->sc.stats_port, err);
}

static int
opt_allow(struct bc_dconf *o, const char *a, char *err)
{
	char e[BC_ERRLEN];

	if (bc_acl_add(&o->sc.acl, a, e) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "--allow: %s", e);
	o->allow_given = 1;
	return BC_OK;
}

static int
opt_admin_allow(struct bc_dconf *o, const char *a, char *err)
{
	char e[BC_ERRLEN];

	if (bc_acl_add(&o->sc.admin_allow, a, e) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "--admin-allow: %s", e);
	return BC_OK;
}

static int
set_admin_op(struct bc_dconf *o, const char *op, char *err)
{
	if (o->admin_op != NULL)
		return bc_seterr(err, BC_ERR_INVAL, "--zero-stats and "
		    "--cache-admin exclude each other (one request a run)");
	o->admin_op = op;
	return BC_OK;
}

static int
opt_zero_stats(struct bc_dconf *o, const char *a, char *err)
{
	return set_admin_op(o, "zero", err);
}

/* --cache-admin clear|show|limit SIZE|evict-older-than AGE: the value
 * is the next argument (parse_args). */
static int
opt_cache_admin(struct bc_dconf *o, const char *a, char *err)
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
opt_jobs(struct bc_dconf *o, const char *a, char *err)
{
	o->jobs_set = 1;
	return int_arg("--jobs", a, 1, 1024, &o->sc.jobs, err);
}

static int
opt_queue(struct bc_dconf *o, const char *a, char *err)
{
	o->queue_set = 1;
	return int_arg("--queue", a, 0, 65536, &o->sc.queue, err);
}

static int
opt_log_file(struct bc_dconf *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--log-file: empty name");
	free(o->log_file);
	o->log_file = xstrdup(a);
	return BC_OK;
}

static int
opt_log_stderr(struct bc_dconf *o, const char *a, char *err)
{
	o->log_stderr = 1;
	return BC_OK;
}

static int
opt_log_level(struct bc_dconf *o, const char *a, char *err)
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
opt_pid_file(struct bc_dconf *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--pid-file: empty name");
	free(o->sc.pid_file);
	o->sc.pid_file = xstrdup(a);
	return BC_OK;
}

static int
opt_allow_compiler(struct bc_dconf *o, const char *a, char *err)
{
	char e[BC_ERRLEN];

	if (bc_policy_allow(&o->sc.policy, a, e) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "--allow-compiler: %s", e);
	bc_strv_push(&o->allow_compiler, a);
	return BC_OK;
}

static int
opt_io_timeout(struct bc_dconf *o, const char *a, char *err)
{
	return int_arg("--io-timeout", a, 1, 86400, &o->sc.io_timeout_sec,
	    err);
}

static int
opt_job_timeout(struct bc_dconf *o, const char *a, char *err)
{
	return int_arg("--job-timeout", a, 1, 86400, &o->sc.job_timeout_sec,
	    err);
}

static int
opt_request_timeout(struct bc_dconf *o, const char *a, char *err)
{
	return int_arg("--request-timeout", a, 1, 86400,
	    &o->sc.request_timeout_sec, err);
}

static int
opt_grace(struct bc_dconf *o, const char *a, char *err)
{
	return int_arg("--shutdown-grace", a, 0, 86400, &o->sc.grace_sec,
	    err);
}

static int
opt_cache_dir(struct bc_dconf *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--cache-dir: empty name");
	free(o->sc.cache_dir);
	o->sc.cache_dir = xstrdup(a);
	o->cache_dir_given = 1;
	return BC_OK;
}

/* SIZE: bytes, or a number with K, M, G or T (powers of 1024). */
static int
opt_cache_size(struct bc_dconf *o, const char *a, char *err)
{
	if (bc_parse_size(a, 1, &o->sc.cache_size) == BC_OK)
		return BC_OK;
	return bc_seterr(err, BC_ERR_INVAL,
	    "--cache-size: '%s' is not a size like 500M or 4G", a);
}

static int
opt_tmp_dir(struct bc_dconf *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "--tmp-dir: empty name");
	free(o->tmp_dir);
	o->tmp_dir = xstrdup(a);
	return BC_OK;
}

static int
opt_no_cache(struct bc_dconf *o, const char *a, char *err)
{
	o->no_cache = 1;
	return BC_OK;
}

static int
opt_cache_check(struct bc_dconf *o, const char *a, char *err)
{
	o->cache_check = 1;
	return BC_OK;
}

static int
opt_self_test(struct bc_dconf *o, const char *a, char *err)
{
	o->self_test = 1;
	return BC_OK;
}

static int
opt_self_test_cc(struct bc_dconf *o, const char *a, char *err)
{
	if (*a == '\0')
		return bc_seterr(err, BC_ERR_INVAL,
		    "--self-test-compiler: empty name");
	free(o->self_test_cc);
	o->self_test_cc = xstrdup(a);
	return BC_OK;
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
opt_help(struct bc_dconf *o, const char *a, char *err)
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
opt_version(struct bc_dconf *o, const char *a, char *err)
{
	printf("boltccd %s\n", PACKAGE_VERSION);
	exit(BC_EXIT_OK);
}

static int
parse_args(struct bc_dconf *o, int argc, char **argv, char *err)
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

char *
bc_dconf_default_cache_dir(unsigned long uid, const char *xdg,
    const char *home)
{
	if (uid == 0)
		return xstrdup("/var/cache/boltccd");
	if (xdg != NULL && xdg[0] == '/')
		return xasprintf("%s/boltccd", xdg);
	if (home != NULL && home[0] == '/')
		return xasprintf("%s/.cache/boltccd", home);
	return NULL;
}

/* A copy of the variable's value, or NULL when unset. */
static char *
env_dup(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? xstrdup(v) : NULL;
}

static void
load_env(struct bc_dconf *d)
{
	const char *path;

	d->tmpdir = env_dup("TMPDIR");
	path = getenv("DISTCCD_PATH");
	if (path == NULL || *path == '\0')
		path = getenv("PATH");
	d->compiler_path = path != NULL ? xstrdup(path) : NULL;
	d->xdg_cache_home = env_dup("XDG_CACHE_HOME");
	d->home = env_dup("HOME");
	/* copies: activate.c unsets them once used */
	d->activation.listen_pid = env_dup("LISTEN_PID");
	d->activation.listen_fds = env_dup("LISTEN_FDS");
	d->activation.listen_fdnames = env_dup("LISTEN_FDNAMES");
}

static void
defaults(struct bc_dconf *d)
{
	struct bc_server_conf *sc = &d->sc;

	memset(d, 0, sizeof(*d));
	d->level = BC_LOG_INFO;
	bc_strv_init(&d->allow_compiler);
	sc->mode = BC_MODE_FOREGROUND;
	bc_strv_init(&sc->listen);
	sc->port = 3632;
	sc->stats_port = 3633;
	bc_acl_init(&sc->acl);
	bc_acl_init(&sc->admin_allow);
	sc->jobs = bc_ncpus();
	if (sc->jobs > 1024)
		sc->jobs = 1024;
	sc->grace_sec = 30;
	sc->io_timeout_sec = 60;
	sc->job_timeout_sec = 600;
	sc->request_timeout_sec = 120;
	sc->argv0 = "/boltccd";
	bc_policy_init(&sc->policy);
	sc->activation = &d->activation;
}

int
bc_dconf_load(struct bc_dconf *d, int argc, char **argv, char *err)
{
	struct bc_server_conf *sc = &d->sc;
	int r;

	defaults(d);
	load_env(d);
	if ((r = parse_args(d, argc, argv, err)) != BC_OK)
		return r;
	if (!d->queue_set)	/* cache lookups are short connections too */
		sc->queue = 4 * sc->jobs > BC_DAEMON_MIN_QUEUE ? 4 * sc->jobs :
		    BC_DAEMON_MIN_QUEUE;
	if (sc->cache_size == 0)
		sc->cache_size = BC_CACHE_DEFAULT_SIZE;
	if (d->no_cache) {
		free(sc->cache_dir);
		sc->cache_dir = NULL;
	} else if (sc->cache_dir == NULL)
		sc->cache_dir = bc_dconf_default_cache_dir(
		    (unsigned long)getuid(), d->xdg_cache_home, d->home);
	return BC_OK;
}

void
bc_dconf_free(struct bc_dconf *d)
{
	struct bc_server_conf *sc = &d->sc;

	bc_strv_free(&sc->listen);
	bc_acl_free(&sc->acl);
	bc_acl_free(&sc->admin_allow);
	bc_policy_free(&sc->policy);
	free(sc->pid_file);
	free(sc->cache_dir);
	free(d->log_file);
	free(d->tmp_dir);
	free(d->self_test_cc);
	bc_strv_free(&d->allow_compiler);
	free(d->tmpdir);
	free(d->compiler_path);
	free(d->xdg_cache_home);
	free(d->home);
	free(d->activation.listen_pid);
	free(d->activation.listen_fds);
	free(d->activation.listen_fdnames);
	memset(d, 0, sizeof(*d));
}
