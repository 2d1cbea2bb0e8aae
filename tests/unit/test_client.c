/*
 * test_client.c - the client runtime modules: configuration from the
 * environment (cconf), host choice and slot/backoff lock files (hostsel,
 * spec distcc-protocol.md 8.6-8.7) and the shared counters file (cstats).
 *
 * Slot locks are fcntl() locks, which belong to a process: a second lock
 * of the same file by the same process always succeeds.  Every test that
 * needs a slot to be "taken" therefore holds it in a forked child.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/exitcode.h"
#include "common/hosts.h"
#include "common/io.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/cstats.h"
#include "client/hostsel.h"
#include "tests/unit/unit.h"

/* ------------------------------------------------------------------ */
/* helpers */

static char *
mk_tmpdir(void)
{
	char err[BC_ERRLEN];
	char *d = NULL;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_client_", &d, err),
	    BC_OK);
	ck_assert_ptr_nonnull(d);
	return d;
}

static void
rm_tmpdir(char *d)
{
	(void)bc_rmtree(d);
	free(d);
}

static void
put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

static int
path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static const char *const client_vars[] = {
	"BOLTCC_HOSTS", "DISTCC_HOSTS", "BOLTCC_DIR", "DISTCC_DIR",
	"DISTCC_IO_TIMEOUT", "DISTCC_FALLBACK", "DISTCC_VERBOSE",
	"DISTCC_SAVE_TEMPS", "DISTCC_SKIP_LOCAL_RETRY",
	"DISTCC_BACKOFF_PERIOD", "DISTCC_LOG", "BOLTCC_STATS_PORT",
	"_DISTCC_SAFEGUARD", "BOLTCC_SAFEGUARD", NULL,
};

/* A controlled environment: no client variable set, HOME = home. */
static void
clean_env(const char *home)
{
	size_t i;

	for (i = 0; client_vars[i] != NULL; i++)
		ck_assert_int_eq(unsetenv(client_vars[i]), 0);
	ck_assert_int_eq(setenv("HOME", home, 1), 0);
}

static int
has_warning(const struct bc_cconf *c, const char *part)
{
	size_t i;

	for (i = 0; i < c->warnings.n; i++)
		if (strstr(c->warnings.v[i], part) != NULL)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* cconf */

START_TEST(cconf_defaults)
{
	char *home = mk_tmpdir();
	char *want;
	struct bc_cconf c;

	clean_env(home);
	bc_cconf_load(&c);
	want = xasprintf("%s/.boltcc", home);
	ck_assert_str_eq(c.dir, want);
	ck_assert_ptr_null(c.dir_var);
	ck_assert_int_eq(c.dir_ok, 1);
	ck_assert_int_eq(path_exists(want), 1);	/* default dir is created */
	free(want);
	want = xasprintf("%s/.boltcc/lock", home);
	ck_assert_str_eq(c.lockdir, want);
	free(want);
	want = xasprintf("%s/.boltcc/state", home);
	ck_assert_str_eq(c.statedir, want);
	free(want);
	ck_assert_ptr_null(c.error);
	ck_assert_int_eq(c.fallback, 1);
	ck_assert_int_eq(c.skip_local_retry, 0);
	ck_assert_int_eq(c.backoff_period, 60);
	ck_assert_int_eq(c.io_timeout, 300);
	ck_assert_int_eq(c.verbose, 0);
	ck_assert_int_eq(c.save_temps, 0);
	ck_assert_ptr_null(c.log_file);
	ck_assert_int_eq(c.safeguard, 0);
	ck_assert_uint_eq(c.warnings.n, 0);
	/* No host list in the environment or the dir: only the system
	 * file (present on some machines) may supply one. */
	if (c.hosts_origin != NULL)
		ck_assert_str_eq(c.hosts_origin, "/etc/distcc/hosts");
	else
		ck_assert_ptr_null(c.hosts_text);

	/* make_dirs creates lock/ and state/ */
	{
		char err[BC_ERRLEN];

		ck_assert_int_eq(bc_cconf_make_dirs(&c, err), BC_OK);
		ck_assert_int_eq(path_exists(c.lockdir), 1);
		ck_assert_int_eq(path_exists(c.statedir), 1);
	}
	bc_cconf_free(&c);
	rm_tmpdir(home);
}
END_TEST

/* The environment the other client modules use, read once here: they
 * see these values, not the process's environment at their time. */
START_TEST(cconf_module_env)
{
	char *home = mk_tmpdir();
	char *cfgf = xasprintf("%s/config", home);
	struct bc_cconf c;
	size_t i;

	clean_env(home);
	for (i = 0; i < BC_CPPENV_N; i++)
		ck_assert_int_eq(unsetenv(bc_cppenv_names[i]), 0);
	ck_assert_int_eq(unsetenv("DEVELOPER_DIR"), 0);
	ck_assert_int_eq(unsetenv("SSH_AUTH_SOCK"), 0);
	bc_cconf_load(&c);
	for (i = 0; i < BC_CPPENV_N; i++)
		ck_assert_ptr_null(c.cpp_env[i]);
	ck_assert(!bc_cconf_cpath_env(&c));
	ck_assert(!bc_cconf_deps_env(&c));
	ck_assert_ptr_null(c.developer_dir);
	ck_assert_ptr_null(c.ssh_agent);
	ck_assert_int_eq(c.ssh_idle, -1);
	ck_assert_int_eq(c.ssh_reuse_wait, -1);
	ck_assert_str_eq(c.home, home);
	bc_cconf_free(&c);

	/* set, even empty: CPATH & co and the dependency files count */
	ck_assert_int_eq(setenv("OBJC_INCLUDE_PATH", "", 1), 0);
	ck_assert_int_eq(setenv("SUNPRO_DEPENDENCIES", "x.d", 1), 0);
	ck_assert_int_eq(setenv("SDKROOT", "/sdk", 1), 0);
	ck_assert_int_eq(setenv("BOLTCC_SSH_IDLE", "77", 1), 0);
	ck_assert_int_eq(setenv("SSH_AUTH_SOCK", "", 1), 0);
	put_file(cfgf, "DEVELOPER_DIR=/X.app/Contents/Developer\n"
	    "BOLTCC_SSH_REUSE_WAIT=2500\n");
	ck_assert_int_eq(setenv("BOLTCC_CONFIG", cfgf, 1), 0);
	bc_cconf_load(&c);
	ck_assert(bc_cconf_cpath_env(&c));
	ck_assert(bc_cconf_deps_env(&c));
	ck_assert_str_eq(c.cpp_env[BC_CPPENV_SDKROOT], "/sdk");
	ck_assert_str_eq(c.cpp_env[BC_CPPENV_OBJC_INCLUDE_PATH], "");
	ck_assert_int_eq(c.ssh_idle, 77);
	ck_assert_int_eq(c.ssh_reuse_wait, 2500);	/* from the file */
	ck_assert_ptr_null(c.ssh_agent);	/* empty: unset */
	/* the file's DEVELOPER_DIR, read after the file was applied */
	ck_assert_str_eq(c.developer_dir, "/X.app/Contents/Developer");
	bc_cconf_free(&c);

	/* a bad BOLTCC_SSH_IDLE is ignored, as before */
	ck_assert_int_eq(setenv("BOLTCC_SSH_IDLE", "soon", 1), 0);
	ck_assert_int_eq(setenv("BOLTCC_SSH_REUSE_WAIT", "600001", 1), 0);
	bc_cconf_load(&c);
	ck_assert_int_eq(c.ssh_idle, -1);
	ck_assert_int_eq(c.ssh_reuse_wait, -1);
	bc_cconf_free(&c);

	ck_assert_int_eq(unsetenv("OBJC_INCLUDE_PATH"), 0);
	ck_assert_int_eq(unsetenv("SUNPRO_DEPENDENCIES"), 0);
	ck_assert_int_eq(unsetenv("SDKROOT"), 0);
	ck_assert_int_eq(unsetenv("BOLTCC_SSH_IDLE"), 0);
	ck_assert_int_eq(unsetenv("BOLTCC_SSH_REUSE_WAIT"), 0);
	ck_assert_int_eq(unsetenv("SSH_AUTH_SOCK"), 0);
	ck_assert_int_eq(unsetenv("BOLTCC_CONFIG"), 0);
	ck_assert_int_eq(unsetenv("DEVELOPER_DIR"), 0);
	free(cfgf);
	free(home);
}
END_TEST

START_TEST(cconf_hosts_precedence)
{
	char *home = mk_tmpdir();
	char *dir = mk_tmpdir();
	char *hf = xasprintf("%s/hosts", dir);
	struct bc_cconf c;

	clean_env(home);
	put_file(hf, "filehost/3\n");
	ck_assert_int_eq(setenv("BOLTCC_DIR", dir, 1), 0);

	/* both set: BOLTCC_HOSTS wins and allows boltcc options */
	ck_assert_int_eq(setenv("BOLTCC_HOSTS", "bolthost,bolt", 1), 0);
	ck_assert_int_eq(setenv("DISTCC_HOSTS", "distcchost", 1), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.hosts_text, "bolthost,bolt");
	ck_assert_str_eq(c.hosts_origin, "BOLTCC_HOSTS");
	ck_assert_int_eq(c.hosts_boltopts, 1);
	bc_cconf_free(&c);

	/* DISTCC_HOSTS only: no boltcc options */
	ck_assert_int_eq(unsetenv("BOLTCC_HOSTS"), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.hosts_text, "distcchost");
	ck_assert_str_eq(c.hosts_origin, "DISTCC_HOSTS");
	ck_assert_int_eq(c.hosts_boltopts, 0);
	bc_cconf_free(&c);

	/* neither: $DIR/hosts (a BOLTCC_DIR is boltcc's own) */
	ck_assert_int_eq(unsetenv("DISTCC_HOSTS"), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.hosts_text, "filehost/3\n");
	ck_assert_str_eq(c.hosts_origin, hf);
	ck_assert_int_eq(c.hosts_boltopts, 1);
	bc_cconf_free(&c);

	/* the same file through DISTCC_DIR: shared with distcc, no
	 * boltcc options */
	ck_assert_int_eq(unsetenv("BOLTCC_DIR"), 0);
	ck_assert_int_eq(setenv("DISTCC_DIR", dir, 1), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.hosts_text, "filehost/3\n");
	ck_assert_str_eq(c.hosts_origin, hf);
	ck_assert_int_eq(c.hosts_boltopts, 0);
	bc_cconf_free(&c);

	/* env beats the file */
	ck_assert_int_eq(setenv("DISTCC_HOSTS", "envhost", 1), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.hosts_text, "envhost");
	bc_cconf_free(&c);

	/* no file in the dir: never the dir's (missing) file */
	ck_assert_int_eq(unsetenv("DISTCC_HOSTS"), 0);
	ck_assert_int_eq(unlink(hf), 0);
	bc_cconf_load(&c);
	if (c.hosts_origin != NULL)
		ck_assert_str_eq(c.hosts_origin, "/etc/distcc/hosts");
	bc_cconf_free(&c);

	free(hf);
	rm_tmpdir(dir);
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_dir_precedence)
{
	char *home = mk_tmpdir();
	char *a = mk_tmpdir();
	char *b = mk_tmpdir();
	char *want;
	struct bc_cconf c;

	clean_env(home);
	ck_assert_int_eq(setenv("BOLTCC_DIR", a, 1), 0);
	ck_assert_int_eq(setenv("DISTCC_DIR", b, 1), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.dir, a);
	ck_assert_str_eq(c.dir_var, "BOLTCC_DIR");
	ck_assert_int_eq(c.dir_ok, 1);
	ck_assert_ptr_null(c.error);
	want = xasprintf("%s/lock", a);
	ck_assert_str_eq(c.lockdir, want);
	free(want);
	bc_cconf_free(&c);

	ck_assert_int_eq(unsetenv("BOLTCC_DIR"), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.dir, b);
	ck_assert_str_eq(c.dir_var, "DISTCC_DIR");
	ck_assert_int_eq(c.dir_ok, 1);
	bc_cconf_free(&c);

	/* an empty BOLTCC_DIR counts as unset */
	ck_assert_int_eq(setenv("BOLTCC_DIR", "", 1), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.dir, b);
	bc_cconf_free(&c);

	/* neither: ~/.boltcc, not created before */
	ck_assert_int_eq(unsetenv("BOLTCC_DIR"), 0);
	ck_assert_int_eq(unsetenv("DISTCC_DIR"), 0);
	want = xasprintf("%s/.boltcc", home);
	ck_assert_int_eq(path_exists(want), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.dir, want);
	ck_assert_ptr_null(c.dir_var);
	ck_assert_int_eq(c.dir_ok, 1);
	ck_assert_int_eq(path_exists(want), 1);
	free(want);
	bc_cconf_free(&c);

	rm_tmpdir(a);
	rm_tmpdir(b);
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_missing_dir)
{
	static const char *const vars[] = { "BOLTCC_DIR", "DISTCC_DIR" };
	char *home = mk_tmpdir();
	char *missing = xasprintf("%s/no-such-dir", home);
	char *file = xasprintf("%s/plainfile", home);
	char err[BC_ERRLEN];
	struct bc_cconf c;
	size_t i;

	put_file(file, "x");
	for (i = 0; i < 2; i++) {
		clean_env(home);
		ck_assert_int_eq(setenv(vars[i], missing, 1), 0);
		bc_cconf_load(&c);
		ck_assert_int_eq(c.dir_ok, 0);
		ck_assert_ptr_nonnull(c.error);
		ck_assert_msg(strstr(c.error, vars[i]) != NULL,
		    "error does not name %s: %s", vars[i], c.error);
		ck_assert_msg(strstr(c.error, missing) != NULL,
		    "error does not name the dir: %s", c.error);
		ck_assert_int_eq(c.error_exit, BC_EXIT_BAD_ARGUMENTS);
		/* never created behind the user's back */
		ck_assert_int_eq(path_exists(missing), 0);
		ck_assert_int_ne(bc_cconf_make_dirs(&c, err), BC_OK);
		ck_assert_int_eq(path_exists(missing), 0);
		bc_cconf_free(&c);

		/* a file is not a directory */
		ck_assert_int_eq(setenv(vars[i], file, 1), 0);
		bc_cconf_load(&c);
		ck_assert_int_eq(c.dir_ok, 0);
		ck_assert_ptr_nonnull(c.error);
		ck_assert_ptr_nonnull(strstr(c.error, vars[i]));
		bc_cconf_free(&c);
	}
	free(file);
	free(missing);
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_io_timeout)
{
	static const char *const bad[] = { "0", "-1", "-300", "abc", "10s",
	    " 5", "99999999999999999999", NULL };
	char *home = mk_tmpdir();
	struct bc_cconf c;
	size_t i;

	clean_env(home);
	ck_assert_int_eq(setenv("DISTCC_IO_TIMEOUT", "17", 1), 0);
	bc_cconf_load(&c);
	ck_assert_int_eq(c.io_timeout, 17);
	ck_assert_ptr_null(c.error);
	bc_cconf_free(&c);

	for (i = 0; bad[i] != NULL; i++) {
		ck_assert_int_eq(setenv("DISTCC_IO_TIMEOUT", bad[i], 1), 0);
		bc_cconf_load(&c);
		ck_assert_msg(c.error != NULL, "DISTCC_IO_TIMEOUT=%s accepted",
		    bad[i]);
		ck_assert_ptr_nonnull(strstr(c.error, "DISTCC_IO_TIMEOUT"));
		ck_assert_int_eq(c.error_exit, BC_EXIT_BAD_ARGUMENTS);
		/* a usable value remains for whatever still runs */
		ck_assert_int_gt(c.io_timeout, 0);
		bc_cconf_free(&c);
	}
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_booleans)
{
	static const struct {
		const char *var;
		size_t off;
		int def;
	} vars[] = {
		{ "DISTCC_FALLBACK", offsetof(struct bc_cconf, fallback), 1 },
		{ "DISTCC_VERBOSE", offsetof(struct bc_cconf, verbose), 0 },
		{ "DISTCC_SAVE_TEMPS", offsetof(struct bc_cconf, save_temps),
		    0 },
	};
	static const char *const junk[] = { "yes", "no", "true", "2", "00",
	    "01", " 1", "1 ", "-1", "on", NULL };
	char *home = mk_tmpdir();
	struct bc_cconf c;
	size_t i, k;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		clean_env(home);
		ck_assert_int_eq(setenv(vars[i].var, "0", 1), 0);
		bc_cconf_load(&c);
		ck_assert_int_eq(*(int *)((char *)&c + vars[i].off), 0);
		ck_assert_uint_eq(c.warnings.n, 0);
		bc_cconf_free(&c);

		ck_assert_int_eq(setenv(vars[i].var, "1", 1), 0);
		bc_cconf_load(&c);
		ck_assert_int_eq(*(int *)((char *)&c + vars[i].off), 1);
		ck_assert_uint_eq(c.warnings.n, 0);
		bc_cconf_free(&c);

		for (k = 0; junk[k] != NULL; k++) {
			ck_assert_int_eq(setenv(vars[i].var, junk[k], 1), 0);
			bc_cconf_load(&c);
			ck_assert_msg(*(int *)((char *)&c + vars[i].off) ==
			    vars[i].def, "%s=%s did not give the default",
			    vars[i].var, junk[k]);
			ck_assert_msg(has_warning(&c, vars[i].var),
			    "%s=%s: no warning", vars[i].var, junk[k]);
			ck_assert_ptr_null(c.error);
			bc_cconf_free(&c);
		}
	}
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_skip_local_retry_presence)
{
	static const char *const vals[] = { "1", "0", "", "no", NULL };
	char *home = mk_tmpdir();
	struct bc_cconf c;
	size_t i;

	clean_env(home);
	bc_cconf_load(&c);
	ck_assert_int_eq(c.skip_local_retry, 0);
	bc_cconf_free(&c);
	/* presence test: any value, even "0" (spec 12.19) */
	for (i = 0; vals[i] != NULL; i++) {
		ck_assert_int_eq(setenv("DISTCC_SKIP_LOCAL_RETRY", vals[i], 1),
		    0);
		bc_cconf_load(&c);
		ck_assert_msg(c.skip_local_retry == 1,
		    "DISTCC_SKIP_LOCAL_RETRY='%s' not taken as set", vals[i]);
		ck_assert_uint_eq(c.warnings.n, 0);
		bc_cconf_free(&c);
	}
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_backoff_period)
{
	static const struct {
		const char *v;
		int want;
		int warn;
	} rows[] = {
		{ "0", 0, 0 }, { "1", 1, 0 }, { "5", 5, 0 }, { "600", 600, 0 },
		{ "", 60, 0 }, { "-1", 60, 1 }, { "abc", 60, 1 },
		{ "5x", 60, 1 }, { "99999999999999", 60, 1 },
	};
	char *home = mk_tmpdir();
	struct bc_cconf c;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		clean_env(home);
		ck_assert_int_eq(setenv("DISTCC_BACKOFF_PERIOD", rows[i].v, 1),
		    0);
		bc_cconf_load(&c);
		ck_assert_msg(c.backoff_period == rows[i].want,
		    "DISTCC_BACKOFF_PERIOD='%s': %d, want %d", rows[i].v,
		    c.backoff_period, rows[i].want);
		ck_assert_int_eq(has_warning(&c, "DISTCC_BACKOFF_PERIOD"),
		    rows[i].warn);
		/* a bad period is not fatal */
		ck_assert_ptr_null(c.error);
		bc_cconf_free(&c);
	}
	rm_tmpdir(home);
}
END_TEST

START_TEST(cconf_misc)
{
	char *home = mk_tmpdir();
	struct bc_cconf c;

	clean_env(home);
	ck_assert_int_eq(setenv("DISTCC_LOG", "/tmp/x.log", 1), 0);
	ck_assert_int_eq(setenv("_DISTCC_SAFEGUARD", "1", 1), 0);
	ck_assert_int_eq(setenv("BOLTCC_STATS_PORT", "4000", 1), 0);
	bc_cconf_load(&c);
	ck_assert_str_eq(c.log_file, "/tmp/x.log");
	ck_assert_int_eq(c.safeguard, 1);
	ck_assert_int_eq(c.stats_port, 4000);
	bc_cconf_free(&c);

	clean_env(home);
	ck_assert_int_eq(setenv("BOLTCC_SAFEGUARD", "1", 1), 0);
	ck_assert_int_eq(setenv("BOLTCC_STATS_PORT", "70000", 1), 0);
	bc_cconf_load(&c);
	ck_assert_int_eq(c.safeguard, 1);
	ck_assert_int_eq(c.stats_port, 0);
	ck_assert_int_eq(has_warning(&c, "BOLTCC_STATS_PORT"), 1);
	bc_cconf_free(&c);
	rm_tmpdir(home);
}
END_TEST

/* ------------------------------------------------------------------ */
/* hostsel */

struct holder {
	pid_t pid;		/* killed to release what it holds */
	int rc;			/* child's pick result */
	int host_index;
	int index;
};

struct pick_report {
	int rc;
	int host_index;
	int index;
};

/*
 * Fork a child that picks a slot (local slot when hl == NULL) and holds
 * it until release.  The parent learns what it got.
 */
static void
hold_slot(const struct bc_hostlist *hl, const char *lockdir,
    int64_t max_wait_ms, struct holder *out)
{
	int rep[2];
	struct pick_report pr;
	ssize_t n;

	ck_assert_int_eq(pipe(rep), 0);
	out->pid = fork();
	ck_assert_int_ge(out->pid, 0);
	if (out->pid == 0) {
		struct bc_slot s = BC_SLOT_INIT;
		char err[BC_ERRLEN];

		close(rep[0]);
		if (hl != NULL)
			pr.rc = bc_hostsel_pick(hl, lockdir, NULL, 60,
			    max_wait_ms, &s, err);
		else
			pr.rc = bc_hostsel_local_slot(lockdir, 2, max_wait_ms,
			    &s, err);
		pr.host_index = (int)s.host_index;
		pr.index = s.index;
		if (write(rep[1], &pr, sizeof(pr)) != (ssize_t)sizeof(pr))
			_exit(2);
		close(rep[1]);
		for (;;)
			pause();
	}
	close(rep[1]);
	do {
		n = read(rep[0], &pr, sizeof(pr));
	} while (n < 0 && errno == EINTR);
	close(rep[0]);
	ck_assert_int_eq((int)n, (int)sizeof(pr));
	out->rc = pr.rc;
	out->host_index = pr.host_index;
	out->index = pr.index;
}

static void
release_holder(struct holder *h)
{
	int st = -1;

	ck_assert_int_eq(kill(h->pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(h->pid, &st, 0), h->pid);
	ck_assert_int_eq(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, 1);
}

/* Lock one named slot file in a child (as another boltcc would). */
static void
hold_file(const char *lockdir, const char *name, struct holder *out)
{
	int rep[2];
	char c = 0;
	ssize_t n;

	ck_assert_int_eq(pipe(rep), 0);
	out->pid = fork();
	ck_assert_int_ge(out->pid, 0);
	if (out->pid == 0) {
		char *path = xasprintf("%s/%s", lockdir, name);
		struct flock fl;
		int fd;

		close(rep[0]);
		fd = open(path, O_WRONLY | O_CREAT, 0600);
		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		c = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
		if (write(rep[1], &c, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(rep[1]);
	do {
		n = read(rep[0], &c, 1);
	} while (n < 0 && errno == EINTR);
	close(rep[0]);
	ck_assert_int_eq((int)n, 1);
	ck_assert_int_eq(c, 'y');
}

struct hs_env {
	char *dir;
	char *lockdir;
	struct bc_hostlist hl;
};

static void
hs_setup(struct hs_env *e, const char *hosts)
{
	char err[BC_ERRLEN];

	e->dir = mk_tmpdir();
	e->lockdir = xasprintf("%s/lock", e->dir);
	ck_assert_int_eq(mkdir(e->lockdir, 0700), 0);
	memset(&e->hl, 0, sizeof(e->hl));
	ck_assert_msg(bc_hosts_parse(hosts, 1, &e->hl, err) == BC_OK,
	    "%s: %s", hosts, err);
}

static void
hs_teardown(struct hs_env *e)
{
	bc_hosts_free(&e->hl);
	free(e->lockdir);
	rm_tmpdir(e->dir);
}

START_TEST(hostsel_names)
{
	struct hs_env e;
	char name[256];

	hs_setup(&e, "hosta/1 hostb:4000/2 localhost @sshbox");
	ck_assert_uint_eq(e.hl.n, 4);
	ck_assert_int_eq(bc_hostsel_lock_name(&e.hl.v[0], 0, name,
	    sizeof(name)), BC_OK);
	ck_assert_str_eq(name, "cpu_tcp_hosta_3632_0");
	ck_assert_int_eq(bc_hostsel_lock_name(&e.hl.v[1], 1, name,
	    sizeof(name)), BC_OK);
	ck_assert_str_eq(name, "cpu_tcp_hostb_4000_1");
	ck_assert_int_eq(bc_hostsel_lock_name(&e.hl.v[2], 1, name,
	    sizeof(name)), BC_OK);
	ck_assert_str_eq(name, "cpu_localhost_1");
	ck_assert_int_eq(bc_hostsel_lock_name(NULL, 3, name, sizeof(name)),
	    BC_OK);
	ck_assert_str_eq(name, "cpu_localhost_3");
	ck_assert_int_eq(bc_hostsel_lock_name(&e.hl.v[3], 0, name,
	    sizeof(name)), BC_OK);
	ck_assert_str_eq(name, "cpu_ssh_sshbox_0");
	ck_assert_int_eq(bc_hostsel_backoff_name(&e.hl.v[1], name,
	    sizeof(name)), BC_OK);
	ck_assert_str_eq(name, "backoff_tcp_hostb_4000_0");
	ck_assert_int_eq(bc_hostsel_host_key(&e.hl.v[1], name, sizeof(name)),
	    BC_OK);
	ck_assert_str_eq(name, "hostb_4000");
	/* too small a buffer is an error, never a truncated name */
	ck_assert_int_ne(bc_hostsel_lock_name(&e.hl.v[0], 0, name, 8), BC_OK);
	ck_assert_int_ne(bc_hostsel_backoff_name(&e.hl.v[0], name, 8), BC_OK);
	hs_teardown(&e);

	/* IPv6 and odd characters are sanitized to [A-Za-z0-9._-] */
	hs_setup(&e, "[::1]:4000");
	ck_assert_int_eq(bc_hostsel_lock_name(&e.hl.v[0], 2, name,
	    sizeof(name)), BC_OK);
	ck_assert_str_eq(name, "cpu_tcp___1_4000_2");
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_breadth_first)
{
	/* A has 1 slot, B has 2: A0, B0, B1, then nothing. */
	static const int want[3][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 } };
	struct hs_env e;
	struct holder h[3];
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	char *p;
	int64_t t0, dt;
	int i;

	hs_setup(&e, "hosta/1 hostb/2");
	for (i = 0; i < 3; i++) {
		hold_slot(&e.hl, e.lockdir, 0, &h[i]);
		ck_assert_int_eq(h[i].rc, BC_OK);
		ck_assert_msg(h[i].host_index == want[i][0] &&
		    h[i].index == want[i][1], "pick %d: host %d slot %d", i,
		    h[i].host_index, h[i].index);
	}
	p = xasprintf("%s/cpu_tcp_hosta_3632_0", e.lockdir);
	ck_assert_int_eq(path_exists(p), 1);
	free(p);
	p = xasprintf("%s/cpu_tcp_hostb_3632_1", e.lockdir);
	ck_assert_int_eq(path_exists(p), 1);
	free(p);

	/* every slot taken by other processes: bounded wait, then BUSY */
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 150, &s,
	    err), BC_ERR_BUSY);
	dt = bc_now_ms() - t0;
	ck_assert_int_ge(dt, 150);
	ck_assert_int_lt(dt, 2000);
	ck_assert_int_eq(s.fd, -1);

	/* B0's holder exits: exactly that slot comes back */
	release_holder(&h[1]);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 1);
	ck_assert_int_eq(s.index, 0);
	ck_assert_ptr_eq(s.host, &e.hl.v[1]);
	ck_assert_int_ge(s.fd, 0);
	/* a remote slot's lock is not inherited by an exec'd compiler */
	ck_assert_int_ne(fcntl(s.fd, F_GETFD) & FD_CLOEXEC, 0);
	bc_hostsel_release(&s);
	ck_assert_int_eq(s.fd, -1);
	bc_hostsel_release(&s);	/* safe twice */

	release_holder(&h[0]);
	release_holder(&h[2]);
	/* all free again: A0 first */
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	ck_assert_int_eq(s.index, 0);
	bc_hostsel_release(&s);
	hs_teardown(&e);

	/* equal limits: index-major, A0 B0 A1 B1 (not A0 A1 B0 B1) */
	{
		static const int want2[4][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 },
		    { 1, 1 } };
		struct holder h2[4];

		hs_setup(&e, "hosta/2 hostb/2");
		for (i = 0; i < 4; i++) {
			hold_slot(&e.hl, e.lockdir, 0, &h2[i]);
			ck_assert_int_eq(h2[i].rc, BC_OK);
			ck_assert_msg(h2[i].host_index == want2[i][0] &&
			    h2[i].index == want2[i][1],
			    "pick %d: host %d slot %d", i, h2[i].host_index,
			    h2[i].index);
		}
		for (i = 0; i < 4; i++)
			release_holder(&h2[i]);
		hs_teardown(&e);
	}
}
END_TEST

START_TEST(hostsel_order_around_held_files)
{
	struct hs_env e;
	struct holder a0, b0;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];

	hs_setup(&e, "hosta/2 hostb/2");
	/* A0 taken elsewhere: B0 (same index) beats A1 */
	hold_file(e.lockdir, "cpu_tcp_hosta_3632_0", &a0);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 1);
	ck_assert_int_eq(s.index, 0);
	bc_hostsel_release(&s);
	/* A0 and B0 taken: A1 */
	hold_file(e.lockdir, "cpu_tcp_hostb_3632_0", &b0);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	ck_assert_int_eq(s.index, 1);
	bc_hostsel_release(&s);
	release_holder(&a0);
	release_holder(&b0);
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_child_holds_until_exit)
{
	struct hs_env e;
	struct holder h;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];

	hs_setup(&e, "onlyhost/1");
	hold_slot(&e.hl, e.lockdir, 0, &h);
	ck_assert_int_eq(h.rc, BC_OK);
	ck_assert_int_eq(h.index, 0);
	/* the child's lock is not ours: busy, repeatedly */
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_ERR_BUSY);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 50, &s,
	    err), BC_ERR_BUSY);
	release_holder(&h);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_int_eq(s.index, 0);

	/* ...and now the parent holds it against a new child */
	hold_slot(&e.hl, e.lockdir, 100, &h);
	ck_assert_int_eq(h.rc, BC_ERR_BUSY);
	release_holder(&h);
	bc_hostsel_release(&s);
	hold_slot(&e.hl, e.lockdir, 0, &h);
	ck_assert_int_eq(h.rc, BC_OK);
	release_holder(&h);
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_waiter_wakes)
{
	struct hs_env e;
	struct holder h;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	pid_t rel;
	int64_t t0, dt;
	int st;

	hs_setup(&e, "onlyhost/1");
	hold_slot(&e.hl, e.lockdir, 0, &h);
	ck_assert_int_eq(h.rc, BC_OK);
	/* a helper releases the holder after 300 ms while we wait */
	rel = fork();
	ck_assert_int_ge(rel, 0);
	if (rel == 0) {
		usleep(300 * 1000);
		kill(h.pid, SIGKILL);
		_exit(0);
	}
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 5000, &s,
	    err), BC_OK);
	dt = bc_now_ms() - t0;
	ck_assert_int_ge(dt, 250);
	ck_assert_int_lt(dt, 4000);
	bc_hostsel_release(&s);
	ck_assert_int_eq(waitpid(rel, &st, 0), rel);
	ck_assert_int_eq(waitpid(h.pid, &st, 0), h.pid);
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_backoff)
{
	struct hs_env e;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	struct timeval tv[2];
	struct bc_buf b;
	char *mark;

	hs_setup(&e, "hosta/1 hostb/1");
	mark = xasprintf("%s/backoff_tcp_hosta_3632_0", e.lockdir);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 60), 0);

	ck_assert_int_eq(bc_hostsel_backoff_mark(e.lockdir, &e.hl.v[0]),
	    BC_OK);
	ck_assert_int_eq(path_exists(mark), 1);
	bc_buf_init(&b, 64);
	ck_assert_int_eq(bc_read_file(mark, 64, &b, NULL), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 1);
	ck_assert_int_eq(((const char *)bc_buf_data(&b))[0], 'x');
	bc_buf_free(&b);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 60), 1);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[1], 60), 0);

	/* marked host skipped although its slot is free */
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 1);
	bc_hostsel_release(&s);

	/* period 0: marks are ignored */
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 0), 0);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 0, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	bc_hostsel_release(&s);

	/* age the mark by 30 s: still fresh for 60, stale for 10 */
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= 30;
	tv[1] = tv[0];
	ck_assert_int_eq(utimes(mark, tv), 0);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 60), 1);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 10), 0);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 10, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	bc_hostsel_release(&s);

	/* re-marking an old file makes it fresh again (mtime moves) */
	ck_assert_int_eq(bc_hostsel_backoff_mark(e.lockdir, &e.hl.v[0]),
	    BC_OK);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 10), 1);

	/* real time: a 1 s period expires */
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 1), 1);
	sleep(2);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 1), 0);
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 1, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	bc_hostsel_release(&s);

	/* success clears the mark */
	ck_assert_int_eq(bc_hostsel_backoff_mark(e.lockdir, &e.hl.v[0]),
	    BC_OK);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 60), 1);
	bc_hostsel_backoff_clear(e.lockdir, &e.hl.v[0]);
	ck_assert_int_eq(path_exists(mark), 0);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 60), 0);
	bc_hostsel_backoff_clear(e.lockdir, &e.hl.v[0]);	/* no-op */

	/* every host backed off: "no usable host" at once, no waiting */
	ck_assert_int_eq(bc_hostsel_backoff_mark(e.lockdir, &e.hl.v[0]),
	    BC_OK);
	ck_assert_int_eq(bc_hostsel_backoff_mark(e.lockdir, &e.hl.v[1]),
	    BC_OK);
	{
		int64_t t0 = bc_now_ms();

		ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60,
		    5000, &s, err), BC_ERR_NOENT);
		ck_assert_int_lt(bc_now_ms() - t0, 1000);
	}
	ck_assert_int_eq(s.fd, -1);
	free(mark);
	hs_teardown(&e);
}
END_TEST

/* What --show-hosts reads: the backoff's end and reason, slots held. */
START_TEST(hostsel_state_for_show_hosts)
{
	struct hs_env e;
	struct holder h;
	char why[64], longwhy[400], *name;
	time_t until, before = time(NULL);
	int st;

	hs_setup(&e, "hosta/2 hostb/1 localhost/3");
	/* a fresh state dir: no slot file yet, and none is created */
	ck_assert_int_eq(bc_hostsel_busy_slots(e.lockdir, &e.hl.v[0]), 0);
	name = xasprintf("%s/cpu_tcp_hosta_3632_0", e.lockdir);
	ck_assert_int_eq(path_exists(name), 0);
	free(name);
	ck_assert_int_eq(bc_hostsel_busy_slots(e.lockdir, &e.hl.v[2]), 0);
	/* another process holds one of hosta's slots */
	hold_slot(&e.hl, e.lockdir, 0, &h);
	ck_assert_int_eq(h.rc, BC_OK);
	ck_assert_int_eq(h.host_index, 0);
	ck_assert_int_eq(bc_hostsel_busy_slots(e.lockdir, &e.hl.v[0]), 1);
	ck_assert_int_eq(bc_hostsel_busy_slots(e.lockdir, &e.hl.v[1]), 0);
	kill(h.pid, SIGKILL);
	ck_assert_int_eq(waitpid(h.pid, &st, 0), h.pid);
	ck_assert_int_eq(bc_hostsel_busy_slots(e.lockdir, &e.hl.v[0]), 0);

	/* no mark: not backed off */
	ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir, &e.hl.v[0], 60,
	    &until, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "");
	/* a mark with a reason (control bytes made blanks) */
	ck_assert_int_eq(bc_hostsel_backoff_mark_why(e.lockdir, &e.hl.v[0],
	    "connect: refused\nby\x01peer"), BC_OK);
	ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir, &e.hl.v[0], 60,
	    &until, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "connect: refused by peer");
	/* the file system's clock is coarse: its mtime may trail time() by
	 * a tick, across a second boundary */
	ck_assert(until >= before + 59 && until <= time(NULL) + 60);
	ck_assert_int_eq(bc_hostsel_backed_off(e.lockdir, &e.hl.v[0], 60), 1);
	/* period 0: never backed off */
	ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir, &e.hl.v[0], 0,
	    &until, why, sizeof(why)), 0);
	/* no reason recorded (the old mark, or distcc's): "" */
	ck_assert_int_eq(bc_hostsel_backoff_mark(e.lockdir, &e.hl.v[1]),
	    BC_OK);
	ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir, &e.hl.v[1], 60,
	    &until, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(bc_hostsel_backoff_mark_why(e.lockdir, &e.hl.v[1],
	    ""), BC_OK);
	ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir, &e.hl.v[1], 60,
	    &until, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "");
	/* a long reason is cut (240 bytes kept), and to the caller's buffer */
	memset(longwhy, 'r', sizeof(longwhy) - 1);
	longwhy[sizeof(longwhy) - 1] = '\0';
	ck_assert_int_eq(bc_hostsel_backoff_mark_why(e.lockdir, &e.hl.v[0],
	    longwhy), BC_OK);
	ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir, &e.hl.v[0], 60,
	    &until, why, sizeof(why)), 1);
	ck_assert_uint_eq(strlen(why), sizeof(why) - 1);
	{
		char big[512];

		ck_assert_int_eq(bc_hostsel_backoff_info(e.lockdir,
		    &e.hl.v[0], 60, &until, big, sizeof(big)), 1);
		ck_assert_uint_eq(strlen(big), 240);
	}
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_down_and_tried)
{
	struct hs_env e;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	unsigned char tried[3] = { 0, 0, 0 };
	int64_t t0;
	int i;

	hs_setup(&e, "hosta/2,down hostb/1 hostc/1");
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0,
		    &s, err), BC_OK);
		ck_assert_uint_ne(s.host_index, 0);
		ck_assert_uint_eq(s.host_index, 1);
		bc_hostsel_release(&s);
	}
	/* tried hosts are skipped */
	tried[1] = 1;
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, tried, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 2);
	bc_hostsel_release(&s);
	tried[2] = 1;
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, tried, 60, 5000,
	    &s, err), BC_ERR_NOENT);
	ck_assert_int_lt(bc_now_ms() - t0, 1000);
	hs_teardown(&e);

	/* a list made only of ,down hosts never blocks (spec 12.20) */
	hs_setup(&e, "hosta,down hostb/3,down");
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 5000, &s,
	    err), BC_ERR_NOENT);
	ck_assert_int_lt(bc_now_ms() - t0, 1000);
	ck_assert_int_eq(s.fd, -1);
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_localhost_entry)
{
	struct hs_env e;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	char *p;

	hs_setup(&e, "localhost/1 hostb/1");
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, e.lockdir, NULL, 60, 0, &s,
	    err), BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	ck_assert_int_eq(s.host->kind, BC_HOST_LOCAL);
	/* held across exec of the local compiler */
	ck_assert_int_eq(fcntl(s.fd, F_GETFD) & FD_CLOEXEC, 0);
	p = xasprintf("%s/cpu_localhost_0", e.lockdir);
	ck_assert_int_eq(path_exists(p), 1);
	free(p);
	bc_hostsel_release(&s);
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_local_slots)
{
	struct hs_env e;
	struct holder h0, h1;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	int64_t t0, dt;

	hs_setup(&e, "hosta");
	hold_slot(NULL, e.lockdir, 0, &h0);
	ck_assert_int_eq(h0.rc, BC_OK);
	ck_assert_int_eq(h0.index, 0);
	hold_slot(NULL, e.lockdir, 0, &h1);
	ck_assert_int_eq(h1.rc, BC_OK);
	ck_assert_int_eq(h1.index, 1);
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_hostsel_local_slot(e.lockdir, 2, 120, &s, err),
	    BC_ERR_BUSY);
	dt = bc_now_ms() - t0;
	ck_assert_int_ge(dt, 120);
	ck_assert_int_lt(dt, 2000);
	/* a third slot exists when asked for 3 */
	ck_assert_int_eq(bc_hostsel_local_slot(e.lockdir, 3, 0, &s, err),
	    BC_OK);
	ck_assert_int_eq(s.index, 2);
	ck_assert_ptr_null(s.host);
	ck_assert_int_eq(fcntl(s.fd, F_GETFD) & FD_CLOEXEC, 0);
	bc_hostsel_release(&s);
	release_holder(&h1);
	ck_assert_int_eq(bc_hostsel_local_slot(e.lockdir, 2, 0, &s, err),
	    BC_OK);
	ck_assert_int_eq(s.index, 1);
	bc_hostsel_release(&s);
	release_holder(&h0);
	/* nslots <= 0 means one slot */
	ck_assert_int_eq(bc_hostsel_local_slot(e.lockdir, 0, 0, &s, err),
	    BC_OK);
	ck_assert_int_eq(s.index, 0);
	bc_hostsel_release(&s);
	hs_teardown(&e);
}
END_TEST

START_TEST(hostsel_bad_lockdir)
{
	struct hs_env e;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	char *missing;
	struct bc_hostlist empty;

	hs_setup(&e, "hosta");
	missing = xasprintf("%s/nope", e.dir);
	err[0] = '\0';
	ck_assert_int_eq(bc_hostsel_pick(&e.hl, missing, NULL, 60, 0, &s,
	    err), BC_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err, missing));
	ck_assert_int_eq(s.fd, -1);
	ck_assert_int_eq(bc_hostsel_local_slot(missing, 2, 0, &s, err),
	    BC_ERR_IO);
	memset(&empty, 0, sizeof(empty));
	ck_assert_int_eq(bc_hostsel_pick(&empty, e.lockdir, NULL, 60, 0, &s,
	    err), BC_ERR_NOENT);
	free(missing);
	hs_teardown(&e);
}
END_TEST

/* ------------------------------------------------------------------ */
/* cstats */

START_TEST(cstats_memory)
{
	struct bc_cstats s;
	char name[32];
	int i;

	bc_cstats_init(&s);
	ck_assert_int_eq(bc_cstats_get(&s, "jobs_local"), 0);
	bc_cstats_add(&s, "jobs_local", 1);
	bc_cstats_add(&s, "jobs_local", 2);
	bc_cstats_add(&s, "bytes_sent", 1000);
	bc_cstats_add(&s, "bytes_sent", -1);
	bc_cstats_add2(&s, "local_by_reason", "no-hosts", 1);
	bc_cstats_add2(&s, "local_by_reason", "no-hosts", 1);
	bc_cstats_add2(&s, "fallback_by_reason", NULL, 1);
	bc_cstats_add(&s, "has space\tand\x01" "ctl\xc3\xa9", 5);
	ck_assert_int_eq(bc_cstats_get(&s, "jobs_local"), 3);
	ck_assert_int_eq(bc_cstats_get(&s, "bytes_sent"), 999);
	ck_assert_int_eq(bc_cstats_get(&s, "local_by_reason:no-hosts"), 2);
	ck_assert_int_eq(bc_cstats_get(&s, "fallback_by_reason:unknown"), 1);
	ck_assert_int_eq(bc_cstats_get(&s, "has_space_and_ctl__"), 5);
	ck_assert_uint_eq(s.n, 5);
	/* bounded number of names */
	for (i = 0; i < BC_CSTATS_MAX_ENTRIES + 50; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		bc_cstats_add(&s, name, 1);
	}
	ck_assert_uint_eq(s.n, BC_CSTATS_MAX_ENTRIES);
	/* existing names still count when full */
	bc_cstats_add(&s, "jobs_local", 1);
	ck_assert_int_eq(bc_cstats_get(&s, "jobs_local"), 4);
	bc_cstats_free(&s);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_ptr_null(s.v);
}
END_TEST

START_TEST(cstats_commit_load_zero)
{
	char *dir = mk_tmpdir();
	char err[BC_ERRLEN];
	struct bc_cstats d, got;

	/* missing file = empty */
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_uint_eq(got.n, 0);

	bc_cstats_init(&d);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK); /* empty */
	bc_cstats_add(&d, "jobs_remote_ok", 2);
	bc_cstats_add2(&d, "host_failure_by_reason", "connect", 1);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	bc_cstats_free(&d);
	bc_cstats_init(&d);
	bc_cstats_add(&d, "bytes_sent", 123456789012LL);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	bc_cstats_free(&d);

	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_uint_eq(got.n, 3);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_remote_ok"), 4);
	ck_assert_int_eq(bc_cstats_get(&got,
	    "host_failure_by_reason:connect"), 2);
	ck_assert_int_eq(bc_cstats_get(&got, "bytes_sent"), 123456789012LL);
	bc_cstats_free(&got);

	ck_assert_int_eq(bc_cstats_zero(dir, err), BC_OK);
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_uint_eq(got.n, 0);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_remote_ok"), 0);
	bc_cstats_free(&got);

	/* counting resumes from zero */
	bc_cstats_init(&d);
	bc_cstats_add(&d, "jobs_remote_ok", 1);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	bc_cstats_free(&d);
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_remote_ok"), 1);
	ck_assert_uint_eq(got.n, 1);
	bc_cstats_free(&got);

	/* a missing dir is an error, not a crash */
	{
		char *missing = xasprintf("%s/nope", dir);

		bc_cstats_init(&d);
		bc_cstats_add(&d, "x", 1);
		ck_assert_int_ne(bc_cstats_commit(missing, &d, err), BC_OK);
		ck_assert_int_ne(bc_cstats_zero(missing, err), BC_OK);
		bc_cstats_free(&d);
		free(missing);
	}
	rm_tmpdir(dir);
}
END_TEST

#define CONC_PROCS 8
#define CONC_INCS 50

START_TEST(cstats_concurrent)
{
	char *dir = mk_tmpdir();
	char err[BC_ERRLEN];
	struct bc_cstats got;
	pid_t pids[CONC_PROCS];
	int i, st;

	for (i = 0; i < CONC_PROCS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			int k, bad = 0;

			for (k = 0; k < CONC_INCS; k++) {
				struct bc_cstats d;
				char e2[BC_ERRLEN];

				bc_cstats_init(&d);
				bc_cstats_add(&d, "jobs_local", 1);
				bc_cstats_add(&d, "bytes_sent", 10);
				if (i % 2 == 0)
					bc_cstats_add(&d, "even", 1);
				if (bc_cstats_commit(dir, &d, e2) != BC_OK)
					bad = 1;
				bc_cstats_free(&d);
			}
			_exit(bad);
		}
	}
	for (i = 0; i < CONC_PROCS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
		ck_assert_int_eq(WIFEXITED(st) && WEXITSTATUS(st) == 0, 1);
	}
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_local"),
	    CONC_PROCS * CONC_INCS);
	ck_assert_int_eq(bc_cstats_get(&got, "bytes_sent"),
	    10 * CONC_PROCS * CONC_INCS);
	ck_assert_int_eq(bc_cstats_get(&got, "even"),
	    CONC_PROCS / 2 * CONC_INCS);
	ck_assert_uint_eq(got.n, 3);
	bc_cstats_free(&got);
	rm_tmpdir(dir);
}
END_TEST

START_TEST(cstats_atomic_replace)
{
	char *dir = mk_tmpdir();
	char *path = xasprintf("%s/stats", dir);
	char *tmp = xasprintf("%s/.stats.tmpAbC123", dir);
	char err[BC_ERRLEN];
	struct bc_cstats d, got;
	struct stat st0, st1;
	char buf[64];
	ssize_t n;
	int fd;

	bc_cstats_init(&d);
	bc_cstats_add(&d, "jobs_local", 7);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	bc_cstats_free(&d);

	/* a writer that died half-way left a temp file behind */
	put_file(tmp, "jobs_local 99999\njobs_rem");
	ck_assert_int_eq(stat(path, &st0), 0);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);

	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_local"), 7);
	ck_assert_uint_eq(got.n, 1);
	bc_cstats_free(&got);

	bc_cstats_init(&d);
	bc_cstats_add(&d, "jobs_local", 1);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	bc_cstats_free(&d);
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_local"), 8);
	bc_cstats_free(&got);

	/* a commit appends its deltas as whole lines to the same file */
	ck_assert_int_eq(stat(path, &st1), 0);
	ck_assert_int_eq((long)st0.st_ino, (long)st1.st_ino);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt((int)n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "jobs_local 7\njobs_local 1\n");

	/* past 16 KiB the file is compacted: replaced by rename (the old
	 * file, still open, is untouched), one line per name, sums kept */
	{
		int k;

		for (k = 0; k < 1500; k++) {
			bc_cstats_init(&d);
			bc_cstats_add(&d, "jobs_local", 1);
			ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
			bc_cstats_free(&d);
		}
	}
	ck_assert_int_eq(stat(path, &st1), 0);
	ck_assert_int_ne((long)st0.st_ino, (long)st1.st_ino);
	ck_assert_int_lt((long)st1.st_size, 16 * 1024);
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_local"), 1508);
	ck_assert_uint_eq(got.n, 1);
	bc_cstats_free(&got);
	n = pread(fd, buf, 26, 0);
	ck_assert_int_eq((int)n, 26);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "jobs_local 7\njobs_local 1\n");
	close(fd);
	/* the stray temp file was neither used nor damaged */
	ck_assert_int_eq(path_exists(tmp), 1);

	/* no temp file of ours is left behind: only the stray one */
	{
		DIR *dp = opendir(dir);
		struct dirent *de;
		int ntmp = 0;

		ck_assert_ptr_nonnull(dp);
		while ((de = readdir(dp)) != NULL)
			if (strncmp(de->d_name, ".stats.tmp", 10) == 0)
				ntmp++;
		closedir(dp);
		ck_assert_int_eq(ntmp, 1);
	}
	free(tmp);
	free(path);
	rm_tmpdir(dir);
}
END_TEST

START_TEST(cstats_damaged_file)
{
	static const char golden[] =
	    "jobs_local 3\njobs_remote_ok 12\nbytes_sent 4096\n"
	    "local_by_reason:no-hosts 1\n";
	char *dir = mk_tmpdir();
	char *path = xasprintf("%s/stats", dir);
	char err[BC_ERRLEN];
	char text[sizeof(golden)];
	struct bc_cstats got, d;
	size_t len = sizeof(golden) - 1, i;
	int bit;

	/* junk lines are skipped, good ones kept */
	put_file(path, "garbage\n\n x 1\njobs_local 3\nbad -\nneg -5\n"
	    "huge 99999999999999999999999\njobs_local 2\nlast 4");
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_local"), 5);
	ck_assert_int_eq(bc_cstats_get(&got, "neg"), -5);
	ck_assert_int_eq(bc_cstats_get(&got, "last"), 4);
	ck_assert_int_eq(bc_cstats_get(&got, "huge"), 0);
	ck_assert_int_eq(bc_cstats_get(&got, "garbage"), 0);
	bc_cstats_free(&got);

	/* truncation from both ends, bit flips: loads, never crashes, never
	 * more names than lines */
	for (i = 0; i <= len; i++) {
		int tail;

		for (tail = 0; tail < 2; tail++) {
			FILE *f = fopen(path, "w");

			ck_assert_ptr_nonnull(f);
			if (tail)
				fwrite(golden + i, 1, len - i, f);
			else
				fwrite(golden, 1, i, f);
			fclose(f);
			bc_cstats_init(&got);
			ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
			ck_assert_uint_le(got.n, 4);
			bc_cstats_free(&got);
		}
	}
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(text, golden, sizeof(golden));
			text[i] = (char)(text[i] ^ (1 << bit));
			{
				FILE *f = fopen(path, "w");

				ck_assert_ptr_nonnull(f);
				fwrite(text, 1, len, f);
				fclose(f);
			}
			bc_cstats_init(&got);
			ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
			ck_assert_uint_le(got.n, 5);
			bc_cstats_free(&got);
		}
	}

	/* an oversized file: commit starts over instead of failing jobs */
	{
		FILE *f = fopen(path, "w");

		ck_assert_ptr_nonnull(f);
		for (i = 0; i < BC_CSTATS_MAX_FILE / 8 + 100; i++)
			fputs("abc 1\nxy", f);	/* 8 bytes */
		fclose(f);
	}
	bc_cstats_init(&got);
	ck_assert_int_ne(bc_cstats_load(dir, &got, err), BC_OK);
	bc_cstats_free(&got);
	bc_cstats_init(&d);
	bc_cstats_add(&d, "jobs_local", 1);
	ck_assert_int_eq(bc_cstats_commit(dir, &d, err), BC_OK);
	bc_cstats_free(&d);
	bc_cstats_init(&got);
	ck_assert_int_eq(bc_cstats_load(dir, &got, err), BC_OK);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_int_eq(bc_cstats_get(&got, "jobs_local"), 1);
	bc_cstats_free(&got);

	free(path);
	rm_tmpdir(dir);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc;

	tc = bc_tcase("cconf", BC_TEST_TIMEOUT);
	tcase_add_test(tc, cconf_defaults);
	tcase_add_test(tc, cconf_hosts_precedence);
	tcase_add_test(tc, cconf_module_env);
	tcase_add_test(tc, cconf_dir_precedence);
	tcase_add_test(tc, cconf_missing_dir);
	tcase_add_test(tc, cconf_io_timeout);
	tcase_add_test(tc, cconf_booleans);
	tcase_add_test(tc, cconf_skip_local_retry_presence);
	tcase_add_test(tc, cconf_backoff_period);
	tcase_add_test(tc, cconf_misc);
	suite_add_tcase(s, tc);

	tc = bc_tcase("hostsel", BC_TEST_TIMEOUT_SLOW);
	tcase_add_test(tc, hostsel_names);
	tcase_add_test(tc, hostsel_breadth_first);
	tcase_add_test(tc, hostsel_order_around_held_files);
	tcase_add_test(tc, hostsel_child_holds_until_exit);
	tcase_add_test(tc, hostsel_waiter_wakes);
	tcase_add_test(tc, hostsel_backoff);
	tcase_add_test(tc, hostsel_state_for_show_hosts);
	tcase_add_test(tc, hostsel_down_and_tried);
	tcase_add_test(tc, hostsel_localhost_entry);
	tcase_add_test(tc, hostsel_local_slots);
	tcase_add_test(tc, hostsel_bad_lockdir);
	suite_add_tcase(s, tc);

	tc = bc_tcase("cstats", BC_TEST_TIMEOUT_SLOW);
	tcase_add_test(tc, cstats_memory);
	tcase_add_test(tc, cstats_commit_load_zero);
	tcase_add_test(tc, cstats_concurrent);
	tcase_add_test(tc, cstats_atomic_replace);
	tcase_add_test(tc, cstats_damaged_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(client_suite());
}
