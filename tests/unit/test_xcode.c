/*
 * test_xcode.c - the Xcode/macOS integration modules: the client's
 * configuration file (cfgfile: syntax, limits, file choice, environment
 * precedence, a mutation loop), the compiler of the building Xcode
 * (xcode: fake Developer directory trees, -isysroot, a fake xcrun, never
 * boltcc itself), the daemon's socket activation variables (activate)
 * and its compiler identity lines (ident).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/io.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/cfgfile.h"
#include "client/local.h"
#include "client/xcode.h"
#include "daemon/activate.h"
#include "daemon/ident.h"
#include "tests/unit/unit.h"

static void
put_file(const char *path, const char *text, int mode)
{
	char err[BC_ERRLEN];
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');

	*slash = '\0';
	ck_assert_int_eq(bc_mkdir_p(dir, 0755, err), BC_OK);
	free(dir);
	ck_assert_int_eq(bc_write_file_atomic(path, text, strlen(text), mode,
	    err), BC_OK);
}

/* ---- cfgfile ------------------------------------------------------ */

static const char golden_cfg[] =
    "# boltcc configuration\n"
    "\n"
    "BOLTCC_HOSTS = 192.168.50.2/10,bolt localhost/4   # the farm\n"
    "export DISTCC_IO_TIMEOUT=600\n"
    "  DISTCC_LOG='/tmp/boltcc log # not a comment'\n"
    "DISTCC_VERBOSE=\"1\"\r\n"
    "BOLTCC_DIR = \"/var/tmp/a \\\"b\\\"\"\n"
    "DEVELOPER_DIR=/Applications/Xcode.app\n"
    "DISTCC_FALLBACK=\n"
    "PATH=/evil\n"
    "BOLTCC_SAFEGUARD=1\n"
    "not a setting\n"
    "DISTCC_SAVE_TEMPS='unterminated\n"
    "DISTCC_BACKOFF_PERIOD = 'x' y\n";

START_TEST(test_cfg_parse)
{
	struct bc_strv k = BC_STRV_INIT, v = BC_STRV_INIT, w = BC_STRV_INIT;
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_cfgfile_parse(golden_cfg, strlen(golden_cfg), &k,
	    &v, &w, err), BC_OK);
	ck_assert_uint_eq(k.n, 7);
	ck_assert_str_eq(k.v[0], "BOLTCC_HOSTS");
	ck_assert_str_eq(v.v[0], "192.168.50.2/10,bolt localhost/4");
	ck_assert_str_eq(k.v[1], "DISTCC_IO_TIMEOUT");
	ck_assert_str_eq(v.v[1], "600");
	ck_assert_str_eq(v.v[2], "/tmp/boltcc log # not a comment");
	ck_assert_str_eq(k.v[3], "DISTCC_VERBOSE");
	ck_assert_str_eq(v.v[3], "1");
	ck_assert_str_eq(v.v[4], "/var/tmp/a \"b\"");
	ck_assert_str_eq(k.v[5], "DEVELOPER_DIR");
	ck_assert_str_eq(k.v[6], "DISTCC_FALLBACK");
	ck_assert_str_eq(v.v[6], "");
	/* PATH, BOLTCC_SAFEGUARD, "not a setting", unterminated, trailing */
	ck_assert_uint_eq(w.n, 5);
	ck_assert_ptr_nonnull(strstr(w.v[0], "line 10"));
	ck_assert_ptr_nonnull(strstr(w.v[0], "PATH"));
	ck_assert_ptr_nonnull(strstr(w.v[4], "line 14"));
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_strv_free(&w);
}
END_TEST

START_TEST(test_cfg_limits)
{
	struct bc_strv k = BC_STRV_INIT, v = BC_STRV_INIT, w = BC_STRV_INIT;
	char err[BC_ERRLEN];
	struct bc_buf b;
	size_t i;

	/* too big, NUL byte: whole file refused, nothing appended */
	bc_buf_init(&b, (size_t)1 << 20);
	for (i = 0; i <= BC_CFG_MAX_SIZE / 16; i++)
		ck_assert_int_eq(bc_buf_put_str(&b, "BOLTCC_X=123456\n"), BC_OK);
	ck_assert_int_eq(bc_cfgfile_parse((const char *)bc_buf_data(&b),
	    bc_buf_len(&b), &k, &v, &w, err), BC_ERR_LIMIT);
	ck_assert_uint_eq(k.n, 0);
	ck_assert_int_eq(bc_cfgfile_parse("A=1\0B=2", 7, &k, &v, &w, err),
	    BC_ERR_PROTO);
	/* more than BC_CFG_MAX_ENTRIES settings: the rest ignored */
	bc_buf_reset(&b);
	for (i = 0; i < BC_CFG_MAX_ENTRIES + 5; i++)
		ck_assert_int_eq(bc_buf_putf(&b, "DISTCC_LOG=/l%zu\n", i),
		    BC_OK);
	ck_assert_int_eq(bc_cfgfile_parse((const char *)bc_buf_data(&b),
	    bc_buf_len(&b), &k, &v, &w, err), BC_OK);
	ck_assert_uint_eq(k.n, BC_CFG_MAX_ENTRIES);
	ck_assert_uint_eq(w.n, 5);
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_strv_free(&w);
	/* an over-long line is ignored, the next one read */
	bc_buf_reset(&b);
	(void)bc_buf_put_str(&b, "BOLTCC_HOSTS=");
	for (i = 0; i < BC_CFG_MAX_LINE; i++)
		(void)bc_buf_put_u8(&b, 'x');
	(void)bc_buf_put_str(&b, "\nBOLTCC_DIR=2");
	bc_strv_init(&k);
	bc_strv_init(&v);
	bc_strv_init(&w);
	ck_assert_int_eq(bc_cfgfile_parse((const char *)bc_buf_data(&b),
	    bc_buf_len(&b), &k, &v, &w, err), BC_OK);
	ck_assert_uint_eq(k.n, 1);
	ck_assert_str_eq(k.v[0], "BOLTCC_DIR");
	ck_assert_uint_eq(w.n, 1);
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_strv_free(&w);
	bc_buf_free(&b);
}
END_TEST

static void
cfg_parse_any(const char *p, size_t n)
{
	struct bc_strv k = BC_STRV_INIT, v = BC_STRV_INIT, w = BC_STRV_INIT;
	char err[BC_ERRLEN];
	size_t i;
	int r = bc_cfgfile_parse(p, n, &k, &v, &w, err);

	ck_assert(r == BC_OK || r == BC_ERR_PROTO || r == BC_ERR_LIMIT);
	ck_assert_uint_eq(k.n, v.n);
	for (i = 0; i < k.n; i++)
		ck_assert(bc_cfgfile_key_ok(k.v[i]));
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_strv_free(&w);
}

START_TEST(test_cfg_mutations)
{
	size_t n = sizeof(golden_cfg) - 1, i, bit;
	char *m = xmalloc(n);

	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(m, golden_cfg, n);
			m[i] = (char)(m[i] ^ (1 << bit));
			cfg_parse_any(m, n);
		}
		memcpy(m, golden_cfg, n);
		m[i] = (char)(0xff - i);
		cfg_parse_any(m, n);
		cfg_parse_any(golden_cfg, i);		/* truncated end */
		cfg_parse_any(golden_cfg + i, n - i);	/* truncated start */
	}
	free(m);
}
END_TEST

/* A misspelt name is warned about, with the closest known one. */
START_TEST(test_cfg_unknown)
{
	static const char text[] =
	    "BOLTCC_HOST = x\n"
	    "DISTCC_FALBACK=0\n"
	    "BOLTCC_ZZZZZZZZ=1\n"
	    "export DISTCC_SSH=ssh\n"
	    "BOLTC_HOSTS=a\n"
	    "BOLTCC_HOSTS=b\n"
	    "DEVELOPER_DIRS=/x\n";
	static const char *const want[] = {
	    "line 1: BOLTCC_HOST: unknown setting; did you mean BOLTCC_HOSTS?",
	    "line 2: DISTCC_FALBACK: unknown setting; did you mean "
	    "DISTCC_FALLBACK?",
	    "line 3: BOLTCC_ZZZZZZZZ: unknown setting",
	    "line 4: DISTCC_SSH: a distcc setting that boltcc does not use",
	    "line 5: BOLTC_HOSTS is not a boltcc setting, ignored; did you "
	    "mean BOLTCC_HOSTS?",
	    "line 7: DEVELOPER_DIRS is not a boltcc setting, ignored; did you "
	    "mean DEVELOPER_DIR?",
	};
	struct bc_strv k = BC_STRV_INIT, v = BC_STRV_INIT, w = BC_STRV_INIT;
	char err[BC_ERRLEN];
	size_t i;

	ck_assert_int_eq(bc_cfgfile_parse(text, strlen(text), &k, &v, &w,
	    err), BC_OK);
	/* BOLTCC_ and DISTCC_ names are still set (harmless when unread) */
	ck_assert_uint_eq(k.n, 5);
	ck_assert_str_eq(k.v[0], "BOLTCC_HOST");
	ck_assert_str_eq(k.v[4], "BOLTCC_HOSTS");
	ck_assert_uint_eq(w.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < w.n; i++)
		ck_assert_str_eq(w.v[i], want[i]);
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_strv_free(&w);

	ck_assert(bc_cfgfile_key_known("BOLTCC_HOSTS"));
	ck_assert(bc_cfgfile_key_known("DEVELOPER_DIR"));
	ck_assert(!bc_cfgfile_key_known("BOLTCC_HOST"));
	ck_assert(!bc_cfgfile_key_known("BOLTCC_CONFIG"));
	ck_assert_str_eq(bc_cfgfile_suggest("BOLTCC_PUPM"), "BOLTCC_PUMP");
	ck_assert_ptr_null(bc_cfgfile_suggest("distcc_log"));
	ck_assert_str_eq(bc_cfgfile_suggest("BOLTCC_DIRS"), "BOLTCC_DIR");
	ck_assert_ptr_null(bc_cfgfile_suggest("BOLTCC_X"));
	ck_assert_ptr_null(bc_cfgfile_suggest(""));
}
END_TEST

/*
 * Every BOLTCC_ or DISTCC_ name the client's sources mention is one the
 * file knows (or one it may not set): a new variable read in cconf.c
 * without an entry in cfgfile.c's known_keys would be warned about.
 */
START_TEST(test_cfg_known_keys_complete)
{
	const char *src = getenv("BOLTCC_SRCDIR");
	static const char *const files[] = { "cconf.c", "main.c",
	    "sshclient.c", "xcode.c", "local.c", "remote.c", "hostsel.c",
	    "direct.c", "lookup.c", "hitcache.c", "pump.c", "pumpx.c",
	    "ssh.c", "cstats.c", NULL };
	struct bc_buf b;
	char err[BC_ERRLEN], *path, *text;
	size_t i, seen = 0;

	if (src == NULL || *src == '\0')
		return;		/* run by hand outside make check */
	for (i = 0; files[i] != NULL; i++) {
		const char *p;

		path = xasprintf("%s/client/%s", src, files[i]);
		bc_buf_init(&b, (size_t)1 << 24);
		if (bc_read_file(path, (size_t)1 << 24, &b, err) != BC_OK) {
			bc_buf_free(&b);
			free(path);
			continue;
		}
		ck_assert_int_eq(bc_buf_dup_cstr(&b, &text), BC_OK);
		for (p = text; (p = strchr(p, '"')) != NULL; p++) {
			char name[64];
			size_t n = 0;

			if (strncmp(p + 1, "BOLTCC_", 7) != 0 &&
			    strncmp(p + 1, "DISTCC_", 7) != 0)
				continue;
			while (n + 1 < sizeof(name) &&
			    ((p[1 + n] >= 'A' && p[1 + n] <= 'Z') ||
			    (p[1 + n] >= '0' && p[1 + n] <= '9') ||
			    p[1 + n] == '_')) {
				name[n] = p[1 + n];
				n++;
			}
			name[n] = '\0';
			if (n <= 7 || !bc_cfgfile_key_ok(name))
				continue;	/* a prefix; a guard */
			ck_assert_msg(bc_cfgfile_key_known(name), "client/%s "
			    "reads %s: add it to cfgfile.c's known_keys",
			    files[i], name);
			seen++;
		}
		free(text);
		bc_buf_free(&b);
		free(path);
	}
	ck_assert_uint_gt(seen, 10);
}
END_TEST

START_TEST(test_cfg_candidates)
{
	struct bc_strv c = BC_STRV_INIT;
	int ex;

	bc_cfgfile_candidates("/x/cfg", "/xdg", "/home/u", "/etc/b", &c, &ex);
	ck_assert_int_eq(ex, 1);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.v[0], "/x/cfg");
	bc_strv_free(&c);
	bc_strv_init(&c);
	bc_cfgfile_candidates("", "/xdg", "/home/u", "/etc/b", &c, &ex);
	ck_assert_int_eq(ex, 0);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_str_eq(c.v[0], "/xdg/boltcc/config");
	ck_assert_str_eq(c.v[1], "/etc/b");
	bc_strv_free(&c);
	bc_strv_init(&c);
	bc_cfgfile_candidates(NULL, "relative", "/home/u", "/etc/b", &c, &ex);
	ck_assert_str_eq(c.v[0], "/home/u/.config/boltcc/config");
	bc_strv_free(&c);
}
END_TEST

/* The file sets what the environment does not; the environment wins. */
START_TEST(test_cfg_apply_precedence)
{
	char err[BC_ERRLEN], *tmpd, *path;
	struct bc_cconf c;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_xcode-", &tmpd,
	    err), BC_OK);
	path = xasprintf("%s/config", tmpd);
	put_file(path, "BOLTCC_HOSTS = filehost/3,bolt\n"
	    "DISTCC_IO_TIMEOUT = 77\nDISTCC_BACKOFF_PERIOD=5\n"
	    "DISTCC_BACKOFF_PERIOD=9\nBOLTCC_DIR=", 0644);
	{
		/* append the state dir (exists) */
		char *t = xasprintf("BOLTCC_HOSTS = filehost/3,bolt\n"
		    "DISTCC_IO_TIMEOUT = 77\nDISTCC_BACKOFF_PERIOD=5\n"
		    "DISTCC_BACKOFF_PERIOD=9\nBOLTCC_DIR=%s\n", tmpd);

		put_file(path, t, 0644);
		free(t);
	}
	setenv("BOLTCC_CONFIG", path, 1);
	unsetenv("BOLTCC_HOSTS");
	unsetenv("DISTCC_HOSTS");
	unsetenv("BOLTCC_DIR");
	unsetenv("DISTCC_DIR");
	unsetenv("DISTCC_BACKOFF_PERIOD");
	setenv("DISTCC_IO_TIMEOUT", "33", 1);
	bc_cconf_load(&c);
	ck_assert_ptr_nonnull(c.config_file);
	ck_assert_str_eq(c.config_file, path);
	ck_assert_str_eq(c.hosts_origin, "BOLTCC_HOSTS");
	ck_assert_str_eq(c.hosts_text, "filehost/3,bolt");
	ck_assert_int_eq(c.io_timeout, 33);		/* environment */
	ck_assert_int_eq(c.backoff_period, 9);		/* last line */
	ck_assert_str_eq(c.dir, tmpd);
	ck_assert_uint_eq(c.warnings.n, 0);
	bc_cconf_free(&c);
	/* an explicit file that is missing: a warning, no failure */
	unsetenv("BOLTCC_HOSTS");
	unsetenv("BOLTCC_DIR");
	unsetenv("DISTCC_BACKOFF_PERIOD");
	setenv("BOLTCC_CONFIG", "/nonexistent/boltcc.cfg", 1);
	bc_cconf_load(&c);
	ck_assert_ptr_null(c.config_file);
	ck_assert_uint_ge(c.warnings.n, 1);
	ck_assert_ptr_nonnull(strstr(c.warnings.v[0], "/nonexistent/"));
	bc_cconf_free(&c);
	unsetenv("BOLTCC_CONFIG");
	unsetenv("DISTCC_IO_TIMEOUT");
	ck_assert_int_eq(bc_rmtree(tmpd), BC_OK);
	free(tmpd);
	free(path);
}
END_TEST

/* ---- xcode --------------------------------------------------------- */

START_TEST(test_xcode_names)
{
	char *d;
	struct bc_strv a = BC_STRV_INIT;

	ck_assert_str_eq(bc_xcode_tool_for("cc"), "clang");
	ck_assert_str_eq(bc_xcode_tool_for("clang"), "clang");
	ck_assert_str_eq(bc_xcode_tool_for("c++"), "clang++");
	ck_assert_str_eq(bc_xcode_tool_for("clang++"), "clang++");
	ck_assert_ptr_null(bc_xcode_tool_for("clang-14"));
	ck_assert_ptr_null(bc_xcode_tool_for("/usr/bin/clang"));
	d = bc_xcode_devdir_of_sysroot("/Applications/Xcode_15.4.app/Contents/"
	    "Developer/Platforms/iPhoneSimulator.platform/Developer/SDKs/"
	    "iPhoneSimulator17.5.sdk");
	ck_assert_str_eq(d, "/Applications/Xcode_15.4.app/Contents/Developer");
	free(d);
	d = bc_xcode_devdir_of_sysroot("/Library/Developer/CommandLineTools/"
	    "SDKs/MacOSX.sdk");
	ck_assert_str_eq(d, "/Library/Developer/CommandLineTools");
	free(d);
	ck_assert_ptr_null(bc_xcode_devdir_of_sysroot("/opt/sdk"));
	ck_assert_ptr_null(bc_xcode_devdir_of_sysroot("rel/Contents/"
	    "Developer/x"));
	ck_assert_ptr_null(bc_xcode_devdir_of_sysroot(NULL));
	bc_strv_push(&a, "clang");
	bc_strv_push(&a, "-isysroot");
	bc_strv_push(&a, "/a");
	bc_strv_push(&a, "-isysroot/b");
	bc_strv_push(&a, "-c");
	ck_assert_str_eq(bc_xcode_sysroot_arg(&a), "/b");
	bc_strv_free(&a);
}
END_TEST

static void
argv_of(struct bc_strv *a, const char *s0, const char *s1, const char *s2)
{
	bc_strv_init(a);
	bc_strv_push(a, s0);
	if (s1 != NULL)
		bc_strv_push(a, s1);
	if (s2 != NULL)
		bc_strv_push(a, s2);
	bc_strv_push(a, "-c");
	bc_strv_push(a, "x.m");
}

START_TEST(test_xcode_find)
{
	char err[BC_ERRLEN], *tmpd, *app, *clt, *p, *out, *self_bin, *xcrun,
	    *rsp, *t;
	struct bc_self self;
	struct bc_xcode_env env = { NULL, NULL };
	struct bc_strv a;
	const char *how;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_xcode-", &tmpd,
	    err), BC_OK);
	app = xasprintf("%s/Xcode_16.app", tmpd);
	p = xasprintf("%s/Contents/Developer/Toolchains/XcodeDefault."
	    "xctoolchain/usr/bin/clang", app);
	put_file(p, "#!/bin/sh\n", 0755);
	free(p);
	p = xasprintf("%s/Contents/Developer/Toolchains/XcodeDefault."
	    "xctoolchain/usr/bin/clang++", app);
	put_file(p, "#!/bin/sh\n", 0755);
	free(p);
	clt = xasprintf("%s/CommandLineTools", tmpd);
	p = xasprintf("%s/usr/bin/clang", clt);
	put_file(p, "#!/bin/sh\n", 0755);
	free(p);
	self_bin = xasprintf("%s/bin/boltcc", tmpd);
	put_file(self_bin, "#!/bin/sh\n", 0755);
	bc_local_self_init(&self, self_bin, "/usr/bin:/bin");

	/* not an Xcode build: nothing to say, PATH decides */
	argv_of(&a, "clang", NULL, NULL);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_ERR_NOENT);
	ck_assert_str_eq(err, "not an Xcode build");
	bc_strv_free(&a);

	/* DEVELOPER_DIR as the .app and as Contents/Developer */
	argv_of(&a, "cc", NULL, NULL);
	env.developer_dir = app;
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_OK);
	ck_assert_str_eq(how, "DEVELOPER_DIR");
	p = xasprintf("%s/Contents/Developer/Toolchains/XcodeDefault."
	    "xctoolchain/usr/bin/clang", app);
	ck_assert_str_eq(out, p);
	free(out);
	bc_strv_free(&a);
	argv_of(&a, "c++", NULL, NULL);
	t = xasprintf("%s/Contents/Developer", app);
	env.developer_dir = t;
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_OK);
	ck_assert(bc_str_has_suffix(out, "/usr/bin/clang++"));
	free(out);
	bc_strv_free(&a);
	free(t);

	/* a path is never resolved here (the launcher's argv[1]) */
	argv_of(&a, "/opt/clang", NULL, NULL);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_ERR_NOENT);
	bc_strv_free(&a);

	/* -isysroot inside the .app, also through an @file */
	env.developer_dir = NULL;
	t = xasprintf("%s/Contents/Developer/Platforms/MacOSX.platform/"
	    "Developer/SDKs/MacOSX.sdk", app);
	argv_of(&a, "clang", "-isysroot", t);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_OK);
	ck_assert_str_eq(how, "-isysroot");
	ck_assert_str_eq(out, p);
	free(out);
	bc_strv_free(&a);
	rsp = xasprintf("%s/common-args.resp", tmpd);
	{
		char *body = xasprintf("'-std=gnu11' -isysroot '%s'\n", t);

		put_file(rsp, body, 0644);
		free(body);
	}
	free(t);
	t = xasprintf("@%s", rsp);
	argv_of(&a, "clang", t, NULL);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_OK);
	ck_assert_str_eq(out, p);
	free(out);
	bc_strv_free(&a);
	free(t);

	/* Command Line Tools SDK */
	t = xasprintf("%s/SDKs/MacOSX14.sdk", clt);
	argv_of(&a, "clang", "-isysroot", t);
	/* not under a real /Library path: the marker is absolute, so use
	 * DEVELOPER_DIR=the CLT dir instead */
	env.developer_dir = clt;
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_OK);
	ck_assert_str_eq(how, "DEVELOPER_DIR");
	ck_assert(bc_str_has_suffix(out, "/CommandLineTools/usr/bin/clang"));
	free(out);
	bc_strv_free(&a);
	free(t);

	/* a fake xcrun: its answer is used when nothing else applies */
	env.developer_dir = NULL;
	xcrun = xasprintf("%s/xcrun", tmpd);
	t = xasprintf("#!/bin/sh\n[ \"$1\" = -f ] && echo '%s'\n", p);
	put_file(xcrun, t, 0755);
	free(t);
	env.xcrun = xcrun;
	argv_of(&a, "clang", NULL, NULL);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_OK);
	ck_assert_str_eq(how, "xcrun");
	ck_assert_str_eq(out, p);
	free(out);
	/* ... but never boltcc itself */
	t = xasprintf("#!/bin/sh\necho '%s'\n", self_bin);
	put_file(xcrun, t, 0755);
	free(t);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_ERR_NOENT);
	ck_assert_ptr_nonnull(strstr(err, "xcrun -f clang"));
	bc_strv_free(&a);

	/* a Developer dir whose clang is a link to boltcc: refused */
	free(p);
	p = xasprintf("%s/Fake.app/Contents/Developer/Toolchains/XcodeDefault."
	    "xctoolchain/usr/bin", tmpd);
	ck_assert_int_eq(bc_mkdir_p(p, 0755, err), BC_OK);
	t = xasprintf("%s/clang", p);
	ck_assert_int_eq(symlink(self_bin, t), 0);
	free(t);
	t = xasprintf("%s/Fake.app", tmpd);
	env.developer_dir = t;
	env.xcrun = NULL;
	argv_of(&a, "clang", NULL, NULL);
	ck_assert_int_eq(bc_xcode_find_compiler(&self, &a, &env, &out, &how,
	    err), BC_ERR_NOENT);
	ck_assert_ptr_nonnull(strstr(err, "no clang of the building Xcode"));
	bc_strv_free(&a);
	free(t);

	bc_local_self_free(&self);
	ck_assert_int_eq(bc_rmtree(tmpd), BC_OK);
	free(p);
	free(rsp);
	free(xcrun);
	free(self_bin);
	free(clt);
	free(app);
	free(tmpd);
}
END_TEST

/* ---- activate ------------------------------------------------------ */

START_TEST(test_activate_parse)
{
	struct bc_activated a[BC_ACTIVATE_MAX];
	char err[BC_ERRLEN];
	size_t n = 99;

	ck_assert_int_eq(bc_activate_parse_systemd(NULL, NULL, NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	/* for another process */
	ck_assert_int_eq(bc_activate_parse_systemd("41", "2", NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(bc_activate_parse_systemd("42", "2", "jobs:stats", 42,
	    a, BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(a[0].fd, 3);
	ck_assert_int_eq(a[0].is_stats, 0);
	ck_assert_str_eq(a[0].name, "jobs");
	ck_assert_int_eq(a[1].fd, 4);
	ck_assert_int_eq(a[1].is_stats, 1);
	/* fewer names than fds; no names */
	ck_assert_int_eq(bc_activate_parse_systemd("42", "3", "stats", 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(a[0].is_stats, 1);
	ck_assert_str_eq(a[2].name, "");
	ck_assert_int_eq(bc_activate_parse_systemd("42", "1", NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 1);
	/* malformed and over the limit */
	ck_assert_int_eq(bc_activate_parse_systemd("x", "1", NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_ERR_INVAL);
	ck_assert_int_eq(bc_activate_parse_systemd("42", "-1", NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_ERR_INVAL);
	ck_assert_int_eq(bc_activate_parse_systemd("42", "1x", NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_ERR_INVAL);
	ck_assert_int_eq(bc_activate_parse_systemd("42", "17", NULL, 42, a,
	    BC_ACTIVATE_MAX, &n, err), BC_ERR_LIMIT);
	ck_assert_int_eq(bc_activate_parse_systemd("42", "1",
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "456789", 42, a, BC_ACTIVATE_MAX, &n, err), BC_ERR_LIMIT);
}
END_TEST

/* A stand-in for launch_activate_socket: per group a result and fds
 * (real pipe ends, so a close can be seen). */
static struct {
	int listeners_r, stats_r;
	size_t nlisteners, nstats;
	int fds[40];
} fake_ld;

static int
fake_launch_get(const char *name, int **fds, size_t *cnt)
{
	int is_stats = strcmp(name, "Stats") == 0;
	int r = is_stats ? fake_ld.stats_r : fake_ld.listeners_r;
	size_t n = is_stats ? fake_ld.nstats : fake_ld.nlisteners;
	size_t i, base = is_stats ? 20 : 0;

	ck_assert(is_stats || strcmp(name, "Listeners") == 0);
	*fds = NULL;
	*cnt = 0;
	if (r != 0)
		return r;
	*fds = malloc((n > 0 ? n : 1) * sizeof(int));
	for (i = 0; i < n; i++)
		(*fds)[i] = fake_ld.fds[base + i];
	*cnt = n;
	return 0;
}

START_TEST(test_activate_launchd_groups)
{
	struct bc_activated a[BC_ACTIVATE_MAX];
	char err[BC_ERRLEN];
	size_t n = 99, i;
	int p[2];

	for (i = 0; i < 40; i += 2) {
		ck_assert_int_eq(pipe(p), 0);
		fake_ld.fds[i] = p[0];
		fake_ld.fds[i + 1] = p[1];
	}
	/* not started by launchd */
	fake_ld.listeners_r = ESRCH;
	ck_assert_int_eq(bc_activate_from_groups(fake_launch_get, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	/* two job sockets and the stats socket */
	fake_ld.listeners_r = 0;
	fake_ld.nlisteners = 2;
	fake_ld.stats_r = 0;
	fake_ld.nstats = 1;
	ck_assert_int_eq(bc_activate_from_groups(fake_launch_get, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(a[0].fd, fake_ld.fds[0]);
	ck_assert_int_eq(a[0].is_stats, 0);
	ck_assert_str_eq(a[0].name, "Listeners");
	ck_assert_int_eq(a[1].fd, fake_ld.fds[1]);
	ck_assert_int_eq(a[2].fd, fake_ld.fds[20]);
	ck_assert_int_eq(a[2].is_stats, 1);
	ck_assert_str_eq(a[2].name, "stats");
	/* a plist without a Stats group */
	fake_ld.stats_r = ENOENT;
	ck_assert_int_eq(bc_activate_from_groups(fake_launch_get, a,
	    BC_ACTIVATE_MAX, &n, err), BC_OK);
	ck_assert_uint_eq(n, 2);
	/* another error names the group */
	fake_ld.stats_r = EPERM;
	ck_assert_int_eq(bc_activate_from_groups(fake_launch_get, a,
	    BC_ACTIVATE_MAX, &n, err), BC_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err, "Stats"));
	/* more sockets than fit: an error, and the ones not taken are closed */
	fake_ld.stats_r = 0;
	fake_ld.nlisteners = 20;
	fake_ld.nstats = 0;
	ck_assert_int_eq(bc_activate_from_groups(fake_launch_get, a,
	    BC_ACTIVATE_MAX, &n, err), BC_ERR_LIMIT);
	ck_assert_uint_eq(n, BC_ACTIVATE_MAX);
	ck_assert_int_ne(fcntl(fake_ld.fds[BC_ACTIVATE_MAX - 1], F_GETFD), -1);
	for (i = BC_ACTIVATE_MAX; i < 20; i++)
		ck_assert_int_eq(fcntl(fake_ld.fds[i], F_GETFD), -1);
	for (i = 0; i < 40; i++)
		(void)close(fake_ld.fds[i]);
}
END_TEST

/* ---- ident --------------------------------------------------------- */

START_TEST(test_ident_line)
{
	char out[32];
	char *const echo[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"printf 'Apple clang \"16\"\\\\x \\001\\nsecond\\n'", NULL };
	char *const fails[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"echo out; exit 3", NULL };
	char *const longer[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"echo 0123456789012345678901234567890123456789", NULL };

	bc_ident_first_line(echo, out, sizeof(out));
	ck_assert_str_eq(out, "Apple clang _16__x _");
	bc_ident_first_line(fails, out, sizeof(out));
	ck_assert_str_eq(out, "");
	bc_ident_first_line(longer, out, sizeof(out));
	ck_assert_uint_eq(strlen(out), sizeof(out) - 1);
}
END_TEST

/* The one runner both queries use: its two modes and LC_ALL. */
START_TEST(test_run_capture)
{
	char buf[16];
	char *const ok[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"printf 'ok:%s' \"$LC_ALL\"", NULL };
	char *const fails[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"echo out; exit 3", NULL };
	char *const plain[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"echo ok", NULL };
	char *const lingers[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"printf x; exec >&-; exec sleep 30", NULL };
	ssize_t n;

	n = bc_io_run_capture(ok[0], ok, "C", 10000, buf, sizeof(buf));
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(memcmp(buf, "ok:C", 4), 0);
	n = bc_io_run_capture(plain[0], plain, NULL, 0, buf, sizeof(buf));
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(memcmp(buf, "ok\n", 3), 0);
	ck_assert_int_eq(bc_io_run_capture(fails[0], fails, NULL, 0, buf,
	    sizeof(buf)), -1);
	ck_assert_int_eq(bc_io_run_capture("/nonexistent/tool", fails, NULL, 0,
	    buf, sizeof(buf)), -1);
	/* with a deadline, a program that closed its stdout is not waited
	 * for: killed, so no answer */
	ck_assert_int_eq(bc_io_run_capture(lingers[0], lingers, NULL, 10000,
	    buf, sizeof(buf)), -1);
}
END_TEST

static Suite *
xcode_suite(void)
{
	Suite *s = suite_create("xcode");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(tc, test_cfg_parse);
	tcase_add_test(tc, test_cfg_limits);
	tcase_add_test(tc, test_cfg_mutations);
	tcase_add_test(tc, test_cfg_unknown);
	tcase_add_test(tc, test_cfg_known_keys_complete);
	tcase_add_test(tc, test_cfg_candidates);
	tcase_add_test(tc, test_cfg_apply_precedence);
	tcase_add_test(tc, test_xcode_names);
	tcase_add_test(tc, test_xcode_find);
	tcase_add_test(tc, test_activate_parse);
	tcase_add_test(tc, test_activate_launchd_groups);
	tcase_add_test(tc, test_ident_line);
	tcase_add_test(tc, test_run_capture);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(xcode_suite());
}
