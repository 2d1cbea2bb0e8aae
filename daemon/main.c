/*
 * main.c - boltccd: the run modes, logging, daemonizing, pid file.
 *
 * The command line and the environment are read once, by dconf.c (its
 * option table); bad values exit 101 (BC_EXIT_BAD_ARGUMENTS), bind
 * failures 102.  Everything else is in server.c (listener) and job.c
 * (work).
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
#include "dconf.h"
#include "selftest.h"
#include "server.h"

/* open files the daemon asks for (raise_nofile), as the plist's limit */
#define BC_DAEMON_NOFILE 8192
/* --cache-admin waits this long for the daemon (a clear of a big cache) */
#define BC_ADMIN_CLIENT_TIMEOUT_MS (30 * 60 * 1000)

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
admin_client(const struct bc_dconf *o, const struct bc_server_conf *sc)
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
self_test(const struct bc_server_conf *sc, const struct bc_dconf *o,
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
	struct bc_dconf d;
	struct bc_server_conf *sc = &d.sc;
	struct bc_listeners ls = { .n = 0 };
	char err[BC_ERRLEN];
	int rc;

	bc_log_init("boltccd", BC_LOG_INFO);
	if (bc_dconf_load(&d, argc, argv, err) != BC_OK) {
		fprintf(stderr, "boltccd: %s\n", err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (d.cache_check) {
		rc = cache_check(sc);
		goto out;
	}
	if (d.admin_op != NULL) {
		rc = admin_client(&d, sc);
		goto out;
	}
	if (d.self_test_cc != NULL && !d.self_test) {
		fprintf(stderr, "boltccd: --self-test-compiler needs "
		    "--self-test\n");
		rc = BC_EXIT_BAD_ARGUMENTS;
		goto out;
	}
	if (sc->stats_port != 0 && sc->stats_port == sc->port) {
		fprintf(stderr, "boltccd: --stats-port must differ from "
		    "--port\n");
		return BC_EXIT_BAD_ARGUMENTS;
	}

	bc_log_set_level(d.level);
	bc_log_stamp_stderr(1);	/* a daemon's stderr is a log too */
	if (bc_log_share_once(err) != BC_OK)	/* once per daemon */
		fprintf(stderr, "boltccd: warning: %s\n", err);
	if (d.log_file != NULL && bc_log_open(d.log_file, err) != BC_OK) {
		fprintf(stderr, "boltccd: --log-file: %s\n", err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (d.log_file == NULL && !d.log_stderr &&
	    sc->mode != BC_MODE_FOREGROUND)
		bc_log_silence();	/* stdout/stderr belong to the peer */
	if (bc_scratch_init(d.tmp_dir, d.tmpdir, err) != BC_OK) {
		fprintf(stderr, "boltccd: %s\n", err);
		rc = BC_EXIT_BAD_ARGUMENTS;
		goto out;
	}

	bc_policy_set_path(&sc->policy, d.compiler_path);
	(void)bc_policy_add_dir(&sc->policy, "/usr/lib/distcc");
	(void)bc_policy_add_dir(&sc->policy, "/usr/local/lib/distcc");

	if (d.self_test) {
		rc = self_test(sc, &d, argv[0]);
		goto out;
	}
	if (sc->mode == BC_MODE_INETD) {
		rc = bc_server_inetd(sc);
		goto out;
	}
	if (sc->mode == BC_MODE_MUX) {
		rc = bc_server_mux(sc);
		goto out;
	}
	raise_nofile();
	if (!d.allow_given) {
		bc_acl_add_loopback(&sc->acl);
		bc_info("no --allow given: serving loopback clients only "
		    "(127.0.0.0/8, ::1)");
	}
	if (bc_server_bind(sc, &ls, err) != BC_OK) {
		bc_error("%s", err);
		if (d.log_file != NULL || sc->mode == BC_MODE_DAEMON)
			fprintf(stderr, "boltccd: %s\n", err);
		rc = BC_EXIT_BIND_FAILED;
		goto out;
	}
	if (sc->mode == BC_MODE_DAEMON) {
		if (daemonize(err) != BC_OK) {
			bc_error("%s", err);
			rc = BC_EXIT_FAILURE;
			goto out;
		}
		if (!d.log_stderr) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				(void)dup2(fd, 2);
				if (fd > 2)
					close(fd);
			}
		}
	}
	if (sc->pid_file != NULL &&
	    write_pid_file(sc->pid_file, err) != BC_OK) {
		bc_error("--pid-file: %s", err);
		rc = BC_EXIT_FAILURE;
		goto out;
	}
	rc = bc_server_run(sc, &ls);
	if (sc->pid_file != NULL)
		(void)unlink(sc->pid_file);
out:
	bc_dconf_free(&d);
	return rc;
}
