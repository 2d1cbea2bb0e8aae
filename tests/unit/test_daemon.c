/*
 * test_daemon.c - unit tests of the daemon's pure decisions: --allow
 * parsing and matching, the compiler allowlist and option refusals, the
 * argv rewrite, and the stats page format (golden: spec vectors
 * stats-page.txt).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/acl.h"
#include "daemon/compgroup.h"
#include "daemon/dconf.h"
#include "daemon/job.h"
#include "daemon/keeper.h"
#include "common/proto.h"
#include "daemon/locdir.h"
#include "daemon/policy.h"
#include "daemon/scratch.h"
#include "daemon/stats.h"
#include "daemon/intake.h"
#include "common/proto3.h"
#include "common/wire.h"
#include "tests/unit/unit.h"

/* ------------------------------------------------------------------ ACL */

static int
match4(const struct bc_acl *acl, const char *a)
{
	uint8_t b[4];

	ck_assert_int_eq(inet_pton(AF_INET, a, b), 1);
	return bc_acl_match_addr(acl, AF_INET, b);
}

static int
match6(const struct bc_acl *acl, const char *a)
{
	uint8_t b[16];

	ck_assert_int_eq(inet_pton(AF_INET6, a, b), 1);
	return bc_acl_match_addr(acl, AF_INET6, b);
}

START_TEST(acl_parse_good)
{
	struct bc_acl_entry e;
	char buf[64], err[BC_ERRLEN];

	ck_assert_int_eq(bc_acl_parse("127.0.0.1", &e, err), BC_OK);
	ck_assert_int_eq(e.family, AF_INET);
	ck_assert_int_eq(e.bits, 32);
	bc_acl_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "127.0.0.1/32");

	ck_assert_int_eq(bc_acl_parse("192.168.1.77/24", &e, err), BC_OK);
	bc_acl_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "192.168.1.0/24");

	ck_assert_int_eq(bc_acl_parse("10.1.2.3/0", &e, err), BC_OK);
	bc_acl_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.0.0.0/0");

	ck_assert_int_eq(bc_acl_parse("::1", &e, err), BC_OK);
	ck_assert_int_eq(e.family, AF_INET6);
	ck_assert_int_eq(e.bits, 128);

	ck_assert_int_eq(bc_acl_parse("[fe80::1:2]/10", &e, err), BC_OK);
	bc_acl_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "fe80::/10");

	ck_assert_int_eq(bc_acl_parse("fd00:1234::/33", &e, err), BC_OK);
	bc_acl_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "fd00:1234::/33");

	/* mapped entries fold to IPv4 */
	ck_assert_int_eq(bc_acl_parse("::ffff:10.0.0.0/104", &e, err), BC_OK);
	ck_assert_int_eq(e.family, AF_INET);
	bc_acl_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.0.0.0/8");
}
END_TEST

START_TEST(acl_parse_bad)
{
	static const char *const bad[] = {
		"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4/33",
		"1.2.3.4/", "1.2.3.4/x", "1.2.3.4/8x", "1.2.3.4/-1",
		"::1/129", "::1/", "abc", "[::1", "::1]", "[1.2.3.4",
		"1.2.3.4 /8", " 1.2.3.4", "1.2.3.4/8/8", "::g", "1:2:3",
		"[]", "/8", "1.2.3.4/99999999999999999999", "localhost",
		NULL
	};
	struct bc_acl_entry e;
	char err[BC_ERRLEN];
	int i;

	for (i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		ck_assert_msg(bc_acl_parse(bad[i], &e, err) == BC_ERR_INVAL,
		    "accepted '%s'", bad[i]);
		ck_assert_msg(err[0] != '\0', "no message for '%s'", bad[i]);
	}
}
END_TEST

START_TEST(acl_match)
{
	struct bc_acl acl;
	struct sockaddr_in s4;
	struct sockaddr_in6 s6;
	char err[BC_ERRLEN];

	bc_acl_init(&acl);
	/* empty list allows nobody */
	ck_assert_int_eq(match4(&acl, "127.0.0.1"), 0);
	bc_acl_add_loopback(&acl);
	ck_assert_int_eq(match4(&acl, "127.0.0.1"), 1);
	ck_assert_int_eq(match4(&acl, "127.255.3.4"), 1);
	ck_assert_int_eq(match4(&acl, "128.0.0.1"), 0);
	ck_assert_int_eq(match4(&acl, "10.0.0.1"), 0);
	ck_assert_int_eq(match6(&acl, "::1"), 1);
	ck_assert_int_eq(match6(&acl, "::2"), 0);
	/* v4-mapped peers are compared as IPv4 */
	ck_assert_int_eq(match6(&acl, "::ffff:127.0.0.1"), 1);
	ck_assert_int_eq(match6(&acl, "::ffff:10.0.0.1"), 0);

	ck_assert_int_eq(bc_acl_add(&acl, "10.20.0.0/15", err), BC_OK);
	ck_assert_int_eq(match4(&acl, "10.21.255.255"), 1);
	ck_assert_int_eq(match4(&acl, "10.22.0.0"), 0);
	ck_assert_int_eq(match4(&acl, "10.19.255.255"), 0);
	ck_assert_int_eq(match6(&acl, "::ffff:10.20.1.1"), 1);
	ck_assert_int_eq(bc_acl_add(&acl, "fd00::/8", err), BC_OK);
	ck_assert_int_eq(match6(&acl, "fdff::1"), 1);
	ck_assert_int_eq(match6(&acl, "fe00::1"), 0);
	ck_assert_int_eq(bc_acl_add(&acl, "bogus", err), BC_ERR_INVAL);
	ck_assert_int_eq(acl.n, 4);

	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.9", &s4.sin_addr);
	ck_assert_int_eq(bc_acl_match(&acl, (struct sockaddr *)&s4,
	    sizeof(s4)), 1);
	inet_pton(AF_INET, "192.0.2.1", &s4.sin_addr);
	ck_assert_int_eq(bc_acl_match(&acl, (struct sockaddr *)&s4,
	    sizeof(s4)), 0);
	/* short length is refused, not read past */
	ck_assert_int_eq(bc_acl_match(&acl, (struct sockaddr *)&s4, 2), 0);
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &s6.sin6_addr);
	ck_assert_int_eq(bc_acl_match(&acl, (struct sockaddr *)&s6,
	    sizeof(s6)), 1);
	ck_assert_int_eq(bc_acl_match(&acl, NULL, 0), 0);
	bc_acl_free(&acl);
}
END_TEST

/* Deterministic mutations of good CIDRs: never crash, always a clean
 * result, and an accepted mutant formats to something re-parseable. */
START_TEST(acl_mutations)
{
	static const char *const gold[] = {
		"192.168.10.0/24", "fe80::1:2:3/64", "[::ffff:1.2.3.4]/120",
		NULL
	};
	int g;

	for (g = 0; gold[g] != NULL; g++) {
		size_t n = strlen(gold[g]), i, k;
		char m[64], err[BC_ERRLEN], fmt[80];
		struct bc_acl_entry e, e2;

		for (i = 0; i < n; i++)
			for (k = 0; k < 8; k++) {
				memcpy(m, gold[g], n + 1);
				m[i] = (char)(m[i] ^ (1 << k));
				if (m[i] == '\0')
					continue;
				if (bc_acl_parse(m, &e, err) == BC_OK) {
					bc_acl_format(&e, fmt, sizeof(fmt));
					ck_assert_int_eq(bc_acl_parse(fmt, &e2,
					    err), BC_OK);
					ck_assert_int_eq(e2.bits, e.bits);
				}
			}
		for (i = 0; i <= n; i++) {
			memcpy(m, gold[g] + i, n - i + 1);	/* head cut */
			(void)bc_acl_parse(m, &e, err);
			memcpy(m, gold[g], n - i);		/* tail cut */
			m[n - i] = '\0';
			(void)bc_acl_parse(m, &e, err);
		}
	}
}
END_TEST

/* --------------------------------------------------------------- policy */

static const char *const good_names[] = {
	"cc", "c++", "gcc", "g++", "clang", "clang++", "gcc-12", "g++-12",
	"clang-14", "clang++-14", "gcc-12.2", "x86_64-linux-gnu-gcc",
	"x86_64-linux-gnu-gcc-12", "x86_64-pc-linux-gnu-gcc-12",
	"x86_64-linux-gnu-g++", "aarch64-apple-darwin23-clang",
	"arm-none-eabi-gcc", "x86_64-pc-linux-gnu-clang++-17.1", NULL
};

static const char *const bad_names[] = {
	"gcc;id", "sh", "tcc", "cc1", "bash", ".", "..", "", "-gcc",
	"gcc-", "gcc-x", "gcc-1.2.3", "gcc-12345", "x-gcc", "x-y-gcc",
	"a-b-c-d-e-gcc", "x86_64--linux-gcc", "-linux-gnu-gcc", "gcc 12",
	"gcc\n", "gcc$(id)", "clang++x", "gccgo", "cpp", "ld", "python3",
	"x86_64-linux-gnu-ld", "g++;", NULL
};

START_TEST(policy_builtin_names)
{
	int i;

	for (i = 0; good_names[i] != NULL; i++)
		ck_assert_msg(bc_policy_builtin_name(good_names[i]) == 1,
		    "refused '%s'", good_names[i]);
	for (i = 0; bad_names[i] != NULL; i++)
		ck_assert_msg(bc_policy_builtin_name(bad_names[i]) == 0,
		    "accepted '%s'", bad_names[i]);
}
END_TEST

START_TEST(policy_check_name)
{
	struct bc_policy p;
	const char *name;
	char why[BC_ERRLEN], err[BC_ERRLEN];
	static const char *const refused[] = {
		"gcc;id", "/bin/sh", "../x", "/usr/local/bin/gcc", "sh",
		"tcc", "cc1", "./gcc", "/usr/bin/../bin/gcc", "bin/gcc",
		"/usr/bin/sh", "/usr/bin/", "/bin/tcc", "", "gcc/", NULL
	};
	int i;

	bc_policy_init(&p);
	for (i = 0; refused[i] != NULL; i++) {
		why[0] = '\0';
		ck_assert_msg(bc_policy_check_name(&p, refused[i], &name, why) ==
		    BC_ERR_DENIED, "accepted '%s'", refused[i]);
		ck_assert_ptr_null(name);
		ck_assert(why[0] != '\0');
	}
	/* hostile bytes are escaped in the reason */
	ck_assert_int_eq(bc_policy_check_name(&p, "gcc\n;x", &name, why),
	    BC_ERR_DENIED);
	ck_assert_ptr_null(strchr(why, '\n'));

	ck_assert_int_eq(bc_policy_check_name(&p, "gcc", &name, why), BC_OK);
	ck_assert_str_eq(name, "gcc");
	ck_assert_int_eq(bc_policy_check_name(&p, "/usr/bin/gcc", &name, why),
	    BC_OK);
	ck_assert_str_eq(name, "gcc");
	ck_assert_int_eq(bc_policy_check_name(&p, "/bin/gcc-12", &name, why),
	    BC_OK);
	ck_assert_str_eq(name, "gcc-12");
	ck_assert_int_eq(bc_policy_check_name(&p, "/USR/BIN/gcc", &name, why),
	    BC_OK);
	ck_assert_int_eq(bc_policy_check_name(&p, "x86_64-linux-gnu-gcc",
	    &name, why), BC_OK);

	/* operator additions */
	ck_assert_int_eq(bc_policy_allow(&p, "/usr/local/bin/gcc", err), BC_OK);
	ck_assert_int_eq(bc_policy_allow(&p, "tcc", err), BC_OK);
	ck_assert_int_eq(bc_policy_allow(&p, "gcc;id", err), BC_ERR_INVAL);
	ck_assert_int_eq(bc_policy_allow(&p, "../x", err), BC_ERR_INVAL);
	ck_assert_int_eq(bc_policy_allow(&p, "/usr/../bin/sh", err),
	    BC_ERR_INVAL);
	ck_assert_int_eq(bc_policy_allow(&p, "", err), BC_ERR_INVAL);
	ck_assert_int_eq(bc_policy_check_name(&p, "/usr/local/bin/gcc", &name,
	    why), BC_OK);
	ck_assert_str_eq(name, "/usr/local/bin/gcc");
	ck_assert_int_eq(bc_policy_check_name(&p, "/usr/local/bin/gcc-12",
	    &name, why), BC_ERR_DENIED);
	ck_assert_int_eq(bc_policy_check_name(&p, "tcc", &name, why), BC_OK);
	ck_assert_int_eq(bc_policy_check_name(&p, "/bin/tcc", &name, why),
	    BC_OK);
	ck_assert_int_eq(bc_policy_check_name(&p, "sh", &name, why),
	    BC_ERR_DENIED);
	bc_policy_free(&p);
}
END_TEST

static void
write_exe(const char *path, const char *body)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(body, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

START_TEST(policy_resolve)
{
	struct bc_policy p;
	char *dir = NULL, *d1, *d2, *x, *path = NULL;
	char why[BC_ERRLEN], err[BC_ERRLEN];

	bc_log_silence();
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_policy_", &dir,
	    err), BC_OK);
	d1 = xasprintf("%s/masq", dir);
	d2 = xasprintf("%s/bin", dir);
	ck_assert_int_eq(mkdir(d1, 0755), 0);
	ck_assert_int_eq(mkdir(d2, 0755), 0);
	/* masq/gcc -> ../bin/distcc: must be skipped, bin/gcc used */
	x = xasprintf("%s/distcc", d2);
	write_exe(x, "#!/bin/sh\n");
	free(x);
	x = xasprintf("%s/gcc", d1);
	ck_assert_int_eq(symlink("../bin/distcc", x), 0);
	free(x);
	x = xasprintf("%s/gcc", d2);
	write_exe(x, "#!/bin/sh\n");
	free(x);
	x = xasprintf("%s/mycc", d1);
	ck_assert_int_eq(symlink("../bin/distcc", x), 0);
	free(x);
	x = xasprintf("%s/mycc", d2);
	write_exe(x, "#!/bin/sh\n");
	free(x);
	x = xasprintf("%s/notexec", d2);
	{
		FILE *f = fopen(x, "w");

		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
	free(x);

	bc_policy_init(&p);
	x = xasprintf("relative:%s:%s", d1, d2);
	bc_policy_set_path(&p, x);
	free(x);
	ck_assert_int_eq(bc_policy_resolve(&p, "gcc", &path, why), BC_OK);
	x = xasprintf("%s/gcc", d2);
	ck_assert_str_eq(path, x);
	free(x);
	free(path);
	ck_assert_int_eq(bc_policy_resolve(&p, "mycc", &path, why),
	    BC_ERR_DENIED);
	ck_assert_ptr_null(path);
	/* masquerade dir entries become allowed names */
	ck_assert_int_eq(bc_policy_add_dir(&p, d1), 2);
	ck_assert_int_eq(bc_policy_add_dir(&p, "/nonexistent/dir"), 0);
	ck_assert_int_eq(bc_policy_resolve(&p, "mycc", &path, why), BC_OK);
	free(path);
	ck_assert_int_eq(bc_policy_resolve(&p, "clang", &path, why),
	    BC_ERR_COMPILER);
	ck_assert_ptr_null(path);
	x = xasprintf("%s/notexec", d2);
	ck_assert_int_eq(bc_policy_allow(&p, x, err), BC_OK);
	ck_assert_int_eq(bc_policy_resolve(&p, x, &path, why), BC_ERR_COMPILER);
	free(x);
	bc_policy_free(&p);
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(d1);
	free(d2);
	free(dir);
}
END_TEST

static int
args_ok(const char *a1, const char *a2)
{
	char *v[6];
	size_t n = 0;
	char why[BC_ERRLEN];

	v[n++] = (char *)"gcc";
	v[n++] = (char *)"-c";
	v[n++] = (char *)"x.c";
	v[n++] = (char *)a1;
	if (a2 != NULL)
		v[n++] = (char *)a2;
	v[n] = NULL;
	return bc_policy_check_args(v, n, why) == BC_OK;
}

START_TEST(policy_args)
{
	static const char *const refused[][2] = {
		{ "-fplugin=/tmp/x.so", NULL }, { "-fplugin-arg-x-y=1", NULL },
		{ "-specs=/tmp/x.specs", NULL }, { "--specs=/tmp/x", NULL },
		{ "-specs", "/tmp/x" }, { "-B/tmp/evil", NULL },
		{ "-B", "/tmp/evil" }, { "--prefix=/tmp", NULL },
		{ "-wrapper", "gdb,--args" }, { "-Xclang", "-load" },
		{ "-Xclang", "-plugin" }, { "-Xclang", "-plugin-arg-foo" },
		{ "-Xclang", "-add-plugin" }, { "-Xclang", NULL },
		{ "-fpass-plugin=/tmp/p.so", NULL },
		{ "--config=/tmp/x.cfg", NULL }, { "--config", "/tmp/x" },
		{ "-save-temps", NULL }, { "-save-temps=obj", NULL },
		{ "@/etc/passwd", NULL }, { "-aux-info", "/tmp/x" },
		{ "-fdump-tree-all=/tmp/x", NULL },
		{ "-Wa,-adhln=/tmp/x.lst", NULL }, { "-Wp,-MD,/tmp/x.d", NULL },
		{ "-Xassembler", "-a=/tmp/x" }, { "-Xpreprocessor", "-MD" },
		{ "-dumpdir", "/tmp/" }, { "-ftime-trace=/tmp/t.json", NULL },
		{ NULL, NULL }
	};
	static const char *const ok[][2] = {
		{ "-O2", NULL }, { "-g", NULL }, { "-Wall", NULL },
		{ "-fPIC", NULL }, { "-std=c11", NULL },
		{ "-Wa,--noexecstack", NULL }, { "-Xclang", "-fno-pch-timestamp" },
		{ "-fdebug-prefix-map=/a=/b", NULL }, { "-march=x86-64", NULL },
		{ "-ftime-trace", NULL }, { "-fdump-tree-all", NULL },
		{ "-target", "x86_64-pc-linux-gnu" }, { NULL, NULL }
	};
	int i;

	for (i = 0; refused[i][0] != NULL; i++)
		ck_assert_msg(!args_ok(refused[i][0], refused[i][1]),
		    "accepted %s %s", refused[i][0],
		    refused[i][1] ? refused[i][1] : "");
	for (i = 0; ok[i][0] != NULL; i++)
		ck_assert_msg(args_ok(ok[i][0], ok[i][1]), "refused %s %s",
		    ok[i][0], ok[i][1] ? ok[i][1] : "");
	ck_assert_int_eq(bc_policy_is_clang("clang"), 1);
	ck_assert_int_eq(bc_policy_is_clang("/usr/bin/clang++-14"), 1);
	ck_assert_int_eq(bc_policy_is_clang("x86_64-pc-linux-gnu-clang"), 1);
	ck_assert_int_eq(bc_policy_is_clang("gcc"), 0);
	ck_assert_int_eq(bc_policy_is_clang("x86_64-linux-gnu-gcc-12"), 0);
}
END_TEST

/* ---------------------------------------------------------------- stats */

/* spec/vectors/stats-page.txt, captured from distccd 3.4 */
static const char golden_page[] =
	"HTTP/1.0 200 OK\n"
	"Content-Type: text/plain\n"
	"Connection: close\n"
	"\n"
	"argv /distccd\n"
	"<distccstats>\n"
	"dcc_tcp_accept 10\n"
	"dcc_rej_bad_req 0\n"
	"dcc_rej_overload 0\n"
	"dcc_compile_ok 7\n"
	"dcc_compile_error 2\n"
	"dcc_compile_timeout 0\n"
	"dcc_cli_disconnect 0\n"
	"dcc_other 1\n"
	"dcc_longest_job hello.c\n"
	"dcc_longest_job_compiler clang\n"
	"dcc_longest_job_time_msecs 129\n"
	"dcc_max_kids 2\n"
	"dcc_avg_kids1 0\n"
	"dcc_avg_kids2 0\n"
	"dcc_avg_kids3 0\n"
	"dcc_current_load 1\n"
	"dcc_load1 2.10\n"
	"dcc_load2 1.43\n"
	"dcc_load3 0.67\n"
	"dcc_num_compiles1 8\n"
	"dcc_num_compiles2 8\n"
	"dcc_num_compiles3 8\n"
	"dcc_num_procstate_D 0\n"
	"dcc_max_RSS 14344\n"
	"dcc_max_RSS_name (python3)\n"
	"dcc_io_rate -1\n"
	"dcc_free_space 79138 MB\n"
	"</distccstats>\n";

static void
golden_stats(struct bc_stats *st, struct bc_stats_sys *sys, int64_t now)
{
	bc_stats_init(st, 2, 8, now - 5000);
	st->tcp_accept = 10;
	st->compile_ok = 7;
	st->compile_error = 2;
	st->other = 1;
	st->longest_ms = 129;
	snprintf(st->longest_file, sizeof(st->longest_file), "hello.c");
	snprintf(st->longest_compiler, sizeof(st->longest_compiler), "clang");
	st->max_rss_kb = 14344;
	snprintf(st->max_rss_name, sizeof(st->max_rss_name), "python3");
	st->ring_sec = now / 1000;
	st->done_ring[(now / 1000) % BC_STATS_WINDOW] = 8;
	memset(sys, 0, sizeof(*sys));
	sys->load[0] = 2.10;
	sys->load[1] = 1.43;
	sys->load[2] = 0.67;
	sys->current_load = 1;
	sys->free_mb = 79138;
}

START_TEST(stats_text_page)
{
	struct bc_stats st;
	struct bc_stats_sys sys;
	struct bc_buf out = BC_BUF_INIT(1 << 20), file = BC_BUF_INIT(1 << 20);
	int64_t now = 1000000;
	char err[BC_ERRLEN];

	golden_stats(&st, &sys, now);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/distccd", "0",
	    "GET / HTTP/1.0\r\n\r\n", 18, now, &out), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), sizeof(golden_page) - 1);
	ck_assert(memcmp(bc_buf_data(&out), golden_page,
	    sizeof(golden_page) - 1) == 0);
	/* and against the captured file itself (tests/data) */
	{
		const char *src = getenv("BOLTCC_SRCDIR");
		char *path = xasprintf("%s/tests/data/spec/vectors/"
		    "stats-page.txt", src != NULL ? src : ".");

		ck_assert_msg(bc_read_file(path, 1 << 20, &file, err) == BC_OK,
		    "%s: %s", path, err);
		free(path);
		ck_assert_uint_eq(bc_buf_len(&file), bc_buf_len(&out));
		ck_assert(memcmp(bc_buf_data(&file), bc_buf_data(&out),
		    bc_buf_len(&out)) == 0);
	}
	/* no request at all (distccd does not parse it) gives the same */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/distccd", "0",
	    "", 0, now, &out), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), sizeof(golden_page) - 1);
	bc_buf_free(&out);
	bc_buf_free(&file);
}
END_TEST

START_TEST(stats_json_metrics)
{
	struct bc_stats st;
	struct bc_stats_sys sys;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	int64_t now = 1000000;
	const char *s;

	golden_stats(&st, &sys, now);
	snprintf(st.longest_file, sizeof(st.longest_file), "a\"b\\c");
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1.2",
	    "GET /stats.json HTTP/1.1\r\nHost: x\r\n\r\n", 39, now, &out),
	    BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert(bc_str_has_prefix(s, "HTTP/1.0 200 OK\nContent-Type: "
	    "application/json\n"));
	ck_assert_ptr_nonnull(strstr(s, "\n\n{\"version\":\"1.2\",\"jobs\":2,"
	    "\"queue\":8,\"running\":0,\"queued\":0,\"uptime_sec\":5,"
	    "\"dcc_tcp_accept\":10,"));
	ck_assert_ptr_nonnull(strstr(s, "\"dcc_longest_job\":\"a\\\"b\\\\c\""));
	ck_assert_ptr_nonnull(strstr(s, "\"dcc_num_compiles3\":8,"));
	ck_assert(bc_str_has_suffix(s, "\"dcc_free_space_mb\":79138}\n"));

	bc_buf_reset(&out);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1.2",
	    "GET /metrics?x HTTP/1.0\n\n", 25, now, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "# TYPE boltccd_compile_ok_total "
	    "counter\nboltccd_compile_ok_total 7\n"));
	ck_assert_ptr_nonnull(strstr(s, "# HELP boltccd_jobs "));
	ck_assert_ptr_nonnull(strstr(s, "boltccd_jobs 2\n"));
	bc_buf_free(&out);
}
END_TEST

/* The jobs now: a row per worker from its accept to its DONE or its
 * exit, its state following the events; the pages list them, file names
 * as valid JSON (UTF-8 kept, a broken sequence as U+FFFD). */
START_TEST(stats_active_jobs)
{
	struct bc_stats st;
	struct bc_stats_sys sys;
	struct bc_job_event ev;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	int64_t t = 7000000;
	const char *s;

	golden_stats(&st, &sys, t);
	ck_assert_uint_le(sizeof(ev), 512);
	bc_stats_job_begin(&st, 101, "10.0.0.7:4000", t - 3000);
	bc_stats_job_begin(&st, 102, "10.0.0.8:4001", t - 1000);
	bc_stats_job_begin(&st, 103, "10.0.0.9:4002", t - 500);
	bc_stats_job_begin(&st, 102, "again", t);	/* no second row */
	ck_assert_uint_eq(st.njob, 3);
	memset(&ev, 0, sizeof(ev));
	ev.kind = BC_EV_JOB;
	ev.pid = 101;
	ev.mode = BC_MODE_BOLT_PUMP;
	snprintf(ev.compiler, sizeof(ev.compiler), "clang");
	snprintf(ev.file, sizeof(ev.file), "h\xc3\xa9llo\xff.m");
	bc_stats_event(&st, &ev, t - 2500);
	ev.kind = BC_EV_SLOT_START;
	bc_stats_event(&st, &ev, t - 2000);
	ev.kind = BC_EV_JOB;
	ev.pid = 102;
	ev.mode = BC_MODE_PLAIN;
	snprintf(ev.compiler, sizeof(ev.compiler), "gcc");
	snprintf(ev.file, sizeof(ev.file), "q\"uote.c");
	bc_stats_event(&st, &ev, t - 900);
	ck_assert_int_eq(st.job[0].state, BC_JOB_COMPILING);
	ck_assert_int_eq(st.job[1].state, BC_JOB_QUEUED);
	ck_assert_int_eq(st.job[2].state, BC_JOB_READING);

	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1",
	    "GET /stats.json HTTP/1.0\n\n", 26, t, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "\"active_jobs\":[{\"pid\":101,"
	    "\"state\":\"compiling\",\"mode\":\"bolt-pump\",\"seconds\":3.0,"
	    "\"compile_seconds\":2.0,\"client\":\"10.0.0.7:4000\","
	    "\"compiler\":\"clang\",\"file\":\"h\xc3\xa9llo\\ufffd.m\"},"
	    "{\"pid\":102,\"state\":\"queued\",\"mode\":\"plain\","));
	ck_assert_ptr_nonnull(strstr(s, "\"file\":\"q\\\"uote.c\"}"));
	ck_assert_ptr_nonnull(strstr(s, "{\"pid\":103,\"state\":\"reading\","
	    "\"mode\":\"-\""));
	/* the text page: distccd's block as it was, then the jobs */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1",
	    "GET / HTTP/1.0\n\n", 16, t, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "</distccstats>\n<boltccjobs>\n"
	    "job compiling 3.0 bolt-pump 10.0.0.7:4000 clang "
	    "h\\xc3\\xa9llo\\xff.m\n"));
	ck_assert(bc_str_has_suffix(s, "job reading 0.5 - 10.0.0.9:4002 - -\n"
	    "</boltccjobs>\n"));

	/* DONE and an exit take rows away; the hit rate of the last
	 * minute comes with the history */
	ev.kind = BC_EV_DONE;
	ev.pid = 101;
	ev.outcome = BC_OUT_OK;
	ev.cache = BC_EV_CACHE_HIT;
	bc_stats_event(&st, &ev, t);
	ev.pid = 102;
	ev.cache = BC_EV_CACHE_HIT;
	bc_stats_event(&st, &ev, t - 20000);
	ev.pid = 999;
	ev.cache = BC_EV_CACHE_MISS;
	bc_stats_event(&st, &ev, t);
	bc_stats_job_end(&st, 103);
	bc_stats_job_end(&st, 103);
	ck_assert_uint_eq(st.njob, 0);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_stats_render_json(&st, &sys, "1", t, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "\"active_jobs\":[],\"throughput\":{"
	    "\"jobs_per_second\":0.18,\"hits\":2,\"misses\":1,"
	    "\"hit_rate\":66.7},\"history\":{\"step_seconds\":10,\"done\":["));
	ck_assert_ptr_nonnull(strstr(s, ",1,0,10],\"hits\":["));
	ck_assert_ptr_nonnull(strstr(s, ",1,0,1],\"misses\":["));
	ck_assert_ptr_nonnull(strstr(s, ",0,0,1]}"));
	bc_buf_free(&out);
	bc_stats_free(&st);
}
END_TEST

/*
 * The three pages of one bc_stats with every counter set (each to a value
 * of its own), a baseline from an operator's zero, the cache on with
 * reasons, a job and some history, byte for byte against
 * tests/data/stats/: what the daemon served before its counters became
 * one table.  BOLTCC_STATS_PIN_WRITE=1 writes the files instead (after a
 * deliberate change to a page; say why in the commit).
 */
static void
pinned_stats(struct bc_stats *st, struct bc_stats_sys *sys, int64_t now)
{
	struct bc_job_event ev;
	uint64_t *c[] = { &st->tcp_accept, &st->rej_acl, &st->rej_bad_req,
	    &st->rej_overload, &st->compile_ok, &st->compile_error,
	    &st->compile_timeout, &st->cli_disconnect, &st->other,
	    &st->hello, &st->lookup_fast, &st->hit_fast,
	    &st->intake_dropped, &st->intake_expired };
	size_t i;

	golden_stats(st, sys, now);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		*c[i] = 1000 + 37 * i;
	bc_stats_zero(st, 1764000000);	/* 2025-11-24T16:00:00Z */
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		*c[i] += 3 + i;
	st->base.other = st->other + 5;	/* a baseline above: shows 0 */
	st->intake_reading = 3;
	st->intake_waiting = 2;
	st->running = 1;
	st->workers = 4;
	st->avg_kids[0] = 1.5;
	st->avg_kids[1] = 0.75;
	st->avg_kids[2] = 0.125;
	st->cache_on = 1;
	st->cache.requests = 50;
	st->cache.hits = 30;
	st->cache.misses = 20;
	st->cache.stores = 18;
	st->cache.store_errors = 1;
	st->cache.evictions = 4;
	st->cache.corrupt = 2;
	st->cache.identity_mismatch = 3;
	st->cache.time_saved_ms = 123456;
	st->cache.hits_other_checkout = 7;
	st->cache.uncacheable = 9;
	st->cache.entries = 17;
	st->cache.stored_bytes = 1 << 20;
	st->cache.max_bytes = 1 << 30;
	st->cache.limit_set = 1;
	st->cache.zeroed_at = 1764000000;
	st->cache.nreasons = 2;
	snprintf(st->cache.reasons[0].name, sizeof(st->cache.reasons[0].name),
	    "time-macro");
	st->cache.reasons[0].value = 6;
	snprintf(st->cache.reasons[1].name, sizeof(st->cache.reasons[1].name),
	    "odd \"name\"\\");
	st->cache.reasons[1].value = 3;
	st->cache_base.hits = 10;
	st->cache_base.requests = 15;
	bc_stats_job_begin(st, 42, "10.0.0.1:999", now - 2500);
	memset(&ev, 0, sizeof(ev));
	ev.kind = BC_EV_JOB;
	ev.pid = 42;
	ev.mode = BC_MODE_BOLT;
	snprintf(ev.compiler, sizeof(ev.compiler), "clang");
	snprintf(ev.file, sizeof(ev.file), "x.c");
	bc_stats_event(st, &ev, now - 2000);
	ev.kind = BC_EV_SLOT_START;
	bc_stats_event(st, &ev, now - 1000);
	st->hit_ring[(now / 1000 - 1) % BC_STATS_WINDOW] = 4;
	st->miss_ring[(now / 1000 - 15) % BC_STATS_WINDOW] = 1;
	st->done_ring[(now / 1000 - 200) % BC_STATS_WINDOW] = 2;
}

static void
pin_check(const char *name, const struct bc_buf *got)
{
	const char *src = getenv("BOLTCC_SRCDIR");
	char *path = xasprintf("%s/tests/data/stats/%s",
	    src != NULL ? src : ".", name);
	struct bc_buf want = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN];
	size_t i;

	if (getenv("BOLTCC_STATS_PIN_WRITE") != NULL)
		ck_assert_msg(bc_write_file_atomic(path, bc_buf_data(got),
		    bc_buf_len(got), 0644, err) == BC_OK, "%s: %s", path, err);
	ck_assert_msg(bc_read_file(path, 1 << 20, &want, err) == BC_OK,
	    "%s: %s", path, err);
	for (i = 0; i < bc_buf_len(&want) && i < bc_buf_len(got); i++)
		if (bc_buf_data(&want)[i] != bc_buf_data(got)[i])
			break;
	ck_assert_msg(i == bc_buf_len(&want) && i == bc_buf_len(got),
	    "%s: differs at byte %zu: ...%.60s", name, i,
	    (const char *)bc_buf_data(got) + (i > 20 ? i - 20 : 0));
	bc_buf_free(&want);
	free(path);
}

START_TEST(stats_pages_pinned)
{
	static const struct {
		const char *req, *file;
	} page[] = {
		{ "GET / HTTP/1.0\r\n\r\n", "page.txt" },
		{ "GET /stats.json HTTP/1.0\r\n\r\n", "stats.json" },
		{ "GET /metrics HTTP/1.0\r\n\r\n", "metrics.txt" },
	};
	struct bc_stats st;
	struct bc_stats_sys sys;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	int64_t now = 1764000123456;
	size_t i;

	ck_assert_int_eq(setenv("TZ", "UTC0", 1), 0);
	tzset();
	pinned_stats(&st, &sys, now);
	for (i = 0; i < sizeof(page) / sizeof(page[0]); i++) {
		bc_buf_reset(&out);
		ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/usr/bin/"
		    "boltccd", "9.8", page[i].req, strlen(page[i].req), now,
		    &out), BC_OK);
		pin_check(page[i].file, &out);
	}
	bc_buf_free(&out);
	bc_stats_free(&st);
}
END_TEST

/* A DIST request: argv a.c, then a DOTI of the given body bytes. */
static void
dist_request(struct bc_buf *b, int version, const char *doti, size_t n)
{
	ck_assert_int_eq(bc_wire_put_int(b, "DIST", (uint32_t)version), BC_OK);
	ck_assert_int_eq(bc_wire_put_int(b, "ARGC", 2), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(b, "ARGV", "cc", 2), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(b, "ARGV", "a.c", 3), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(b, "DOTI", doti, n), BC_OK);
}

/* The parent's test for a whole request: every prefix of a request is
 * "not yet", the whole is whole; compressed bodies are not expanded
 * (a worker does, and says what is wrong); garbage is never whole. */
START_TEST(intake_whole_requests)
{
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	struct bc_strv av = BC_STRV_INIT;
	char err[BC_ERRLEN];
	size_t k;
	int r;

	dist_request(&b, 1, "int a;\n", 7);
	for (k = 0; k < bc_buf_len(&b); k++) {
		r = bc_intake_whole(bc_buf_data(&b), k, err);
		ck_assert_msg(r == BC_ERR_TRUNCATED || r == BC_ERR_EOF,
		    "prefix %zu: %d", k, r);
	}
	ck_assert_int_eq(bc_intake_whole(bc_buf_data(&b), bc_buf_len(&b), err),
	    BC_OK);
	/* protocol 2 with a DOTI that is no LZO stream: whole all the same */
	bc_buf_reset(&b);
	dist_request(&b, 2, "not lzo at all", 14);
	ck_assert_int_eq(bc_intake_whole(bc_buf_data(&b), bc_buf_len(&b), err),
	    BC_OK);
	ck_assert_int_eq(bc_intake_whole(bc_buf_data(&b), bc_buf_len(&b) - 1,
	    err), BC_ERR_TRUNCATED);
	/* protocol 3: whole only with its files */
	bc_buf_reset(&b);
	bc_strv_push(&av, "cc");
	bc_strv_push(&av, "-c");
	bc_strv_push(&av, "a.c");
	ck_assert_int_eq(bc_proto3_write_head(&b, "/w", &av, 2, err), BC_OK);
	ck_assert_int_eq(bc_proto3_write_file(&b, "/w/a.c", "int a;\n", 7,
	    err), BC_OK);
	k = bc_buf_len(&b);
	ck_assert_int_eq(bc_intake_whole(bc_buf_data(&b), k, err),
	    BC_ERR_EOF);
	ck_assert_int_eq(bc_proto3_write_file(&b, "/w/a.h", "", 0, err),
	    BC_OK);
	ck_assert_int_eq(bc_intake_whole(bc_buf_data(&b), bc_buf_len(&b), err),
	    BC_OK);
	/* not a request at all: never whole, a worker says why */
	r = bc_intake_whole((const uint8_t *)"GET / HTTP/1.0\r\n\r\n", 18,
	    err);
	ck_assert(r != BC_OK && r != BC_ERR_TRUNCATED && r != BC_ERR_EOF);
	bc_strv_free(&av);
	bc_buf_free(&b);
}
END_TEST

START_TEST(stats_events)
{
	struct bc_stats st;
	struct bc_job_event ev;
	int64_t t = 5000000;

	bc_stats_init(&st, 4, 16, t);
	memset(&ev, 0, sizeof(ev));
	ev.kind = BC_EV_DONE;
	ev.outcome = BC_OUT_OK;
	ev.ms = 50;
	ev.rss_kb = 1000;
	snprintf(ev.compiler, sizeof(ev.compiler), "gcc");
	snprintf(ev.file, sizeof(ev.file), "a.c");
	bc_stats_event(&st, &ev, t);
	ev.ms = 70;
	snprintf(ev.file, sizeof(ev.file), "b.c");
	bc_stats_event(&st, &ev, t + 30000);	/* 30 s later */
	ev.outcome = BC_OUT_COMPILE_ERROR;
	ev.ms = 900;
	ev.rss_kb = 5000;
	snprintf(ev.compiler, sizeof(ev.compiler), "clang");
	bc_stats_event(&st, &ev, t + 400000);	/* 400 s later */
	ev.outcome = BC_OUT_BAD_REQ;
	bc_stats_event(&st, &ev, t + 400000);
	ev.outcome = BC_OUT_HELLO;
	bc_stats_event(&st, &ev, t + 400000);
	ev.kind = BC_EV_SLOT_START;
	bc_stats_event(&st, &ev, t + 400000);

	ck_assert_uint_eq(st.compile_ok, 2);
	ck_assert_uint_eq(st.compile_error, 1);
	ck_assert_uint_eq(st.rej_bad_req, 1);
	ck_assert_uint_eq(st.hello, 1);
	ck_assert_int_eq(st.longest_ms, 70);	/* failures do not count */
	ck_assert_str_eq(st.longest_file, "b.c");
	ck_assert_int_eq(st.max_rss_kb, 5000);
	ck_assert_str_eq(st.max_rss_name, "clang");
	ck_assert_uint_eq(bc_stats_recent(&st, 60, t + 400000), 1);
	ck_assert_uint_eq(bc_stats_recent(&st, 900, t + 400000), 3);
	ck_assert_uint_eq(bc_stats_recent(&st, 60, t + 30500), 2);
	ck_assert_uint_eq(bc_stats_recent(&st, 20, t + 30500), 1);
	ck_assert_uint_eq(bc_stats_recent(&st, 60, t + 2000000), 0);

	st.running = 2;
	bc_stats_tick(&st, t + 1000);
	ck_assert(st.avg_kids[0] > 0.0 && st.avg_kids[0] < 0.1);
	ck_assert(st.avg_kids[0] > st.avg_kids[2]);
}
END_TEST

/* -------------------------------------------------------------- scratch */

START_TEST(scratch_names)
{
	static const char *const bad[] = {
		"boltccd_abcdef", "boltccd.1.2.abcde", "boltccd.1.2.abcdefg",
		"boltccd..2.abcdef", "boltccd.1..abcdef", "boltccd.1.0.abcdef",
		"boltccd.x.2.abcdef", "boltccd.1.2.abc/ef", "boltccd.1.2.abc.ef",
		"Boltccd.1.2.abcdef", "boltccd.1.99999999999.abcdef",
		"boltccd.1.2", "", "boltccd.", NULL
	};
	unsigned long uid;
	long pid;
	char *dir = NULL, name[64];
	int i;

	ck_assert(bc_scratch_parse_name("boltccd.1000.4242.aZ09xy", &uid,
	    &pid));
	ck_assert_uint_eq(uid, 1000);
	ck_assert_int_eq(pid, 4242);
	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(!bc_scratch_parse_name(bad[i], &uid, &pid),
		    "accepted '%s'", bad[i]);
	/* every single-byte change of a good name either still parses to
	 * a well-formed name or is refused; never a crash */
	for (i = 0; i < 24; i++) {
		int c;

		for (c = 1; c < 256; c++) {
			snprintf(name, sizeof(name), "boltccd.1000.4242.aZ09xy");
			name[i] = (char)c;
			(void)bc_scratch_parse_name(name, &uid, &pid);
		}
	}
	/* what mkjob creates, the sweep recognises as this process's */
	ck_assert_int_eq(bc_scratch_init(NULL, getenv("TMPDIR"), NULL), BC_OK);
	ck_assert_int_eq(bc_scratch_mkjob(&dir, NULL), BC_OK);
	ck_assert(bc_scratch_parse_name(bc_basename(dir), &uid, &pid));
	ck_assert_uint_eq(uid, (unsigned long)geteuid());
	ck_assert_int_eq(pid, (long)getpid());
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(dir);
}
END_TEST

/* The choice: --tmp-dir, else TMPDIR's value as dconf read it (not the
 * environment's now), else tmpfs or /tmp. */
START_TEST(scratch_choice)
{
	char *d, err[BC_ERRLEN], *old = getenv("TMPDIR") != NULL ?
	    xstrdup(getenv("TMPDIR")) : NULL;

	ck_assert_int_eq(bc_mkdtemp(old, "scratchopt.", &d, NULL), BC_OK);
	ck_assert_int_eq(setenv("TMPDIR", "/nonexistent-env", 1), 0);
	ck_assert_int_eq(bc_scratch_init(NULL, "/from/dconf//", err), BC_OK);
	ck_assert_str_eq(bc_scratch_dir(), "/from/dconf");
	ck_assert_str_eq(bc_scratch_origin(), "TMPDIR");
	ck_assert_int_eq(bc_scratch_init(d, "/from/dconf", err), BC_OK);
	ck_assert_str_eq(bc_scratch_dir(), d);
	ck_assert_str_eq(bc_scratch_origin(), "--tmp-dir");
	ck_assert_int_eq(bc_scratch_init(NULL, "", err), BC_OK);
	ck_assert(strcmp(bc_scratch_origin(), "tmpfs") == 0 ||
	    strcmp(bc_scratch_origin(), "/tmp") == 0);
	ck_assert_int_eq(bc_scratch_init("relative", NULL, err),
	    BC_ERR_INVAL);
	ck_assert_int_eq(bc_rmtree(d), BC_OK);
	free(d);
	if (old != NULL)
		ck_assert_int_eq(setenv("TMPDIR", old, 1), 0);
	else
		ck_assert_int_eq(unsetenv("TMPDIR"), 0);
	free(old);
}
END_TEST

/* ---------------------------------------------------------------- dconf */

static int
dconf_args(struct bc_dconf *d, char *err, ...)
{
	char *argv[16];
	va_list ap;
	int argc = 0;

	argv[argc++] = "boltccd";
	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)) != NULL && argc < 15)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return bc_dconf_load(d, argc, argv, err);
}

START_TEST(dconf_env_and_args)
{
	static const char *const keep[] = { "TMPDIR", "PATH", "HOME", NULL };
	struct bc_dconf d;
	char err[BC_ERRLEN];
	char *want, *old[3];
	int i;

	for (i = 0; keep[i] != NULL; i++)
		old[i] = getenv(keep[i]) != NULL ? xstrdup(getenv(keep[i])) :
		    NULL;
	ck_assert_int_eq(setenv("TMPDIR", "/t/env", 1), 0);
	ck_assert_int_eq(setenv("DISTCCD_PATH", "/opt/cc/bin", 1), 0);
	ck_assert_int_eq(setenv("PATH", "/usr/bin:/bin", 1), 0);
	ck_assert_int_eq(setenv("XDG_CACHE_HOME", "/x/cache", 1), 0);
	ck_assert_int_eq(setenv("HOME", "/h/me", 1), 0);
	ck_assert_int_eq(setenv("LISTEN_PID", "1", 1), 0);
	ck_assert_int_eq(setenv("LISTEN_FDS", "2", 1), 0);
	ck_assert_int_eq(unsetenv("LISTEN_FDNAMES"), 0);
	ck_assert_int_eq(dconf_args(&d, err, "--jobs", "3", "--tmp-dir=/t/opt",
	    "--no-detach", NULL), BC_OK);
	/* unset afterwards: the values were read once, into d */
	ck_assert_int_eq(unsetenv("LISTEN_PID"), 0);
	ck_assert_int_eq(unsetenv("LISTEN_FDS"), 0);
	ck_assert_str_eq(d.tmpdir, "/t/env");
	ck_assert_str_eq(d.tmp_dir, "/t/opt");
	ck_assert_str_eq(d.compiler_path, "/opt/cc/bin");
	ck_assert_str_eq(d.activation.listen_pid, "1");
	ck_assert_str_eq(d.activation.listen_fds, "2");
	ck_assert_ptr_null(d.activation.listen_fdnames);
	ck_assert_ptr_eq(d.sc.activation, &d.activation);
	ck_assert_int_eq(d.sc.jobs, 3);
	ck_assert_int_eq(d.sc.queue, 32);	/* 4 x jobs, at least 32 */
	want = bc_dconf_default_cache_dir((unsigned long)getuid(),
	    "/x/cache", "/h/me");
	ck_assert_str_eq(d.sc.cache_dir, want);
	free(want);
	bc_dconf_free(&d);

	/* an empty DISTCCD_PATH: PATH; --no-cache: no cache dir */
	ck_assert_int_eq(setenv("DISTCCD_PATH", "", 1), 0);
	ck_assert_int_eq(dconf_args(&d, err, "--no-cache", "--jobs", "20",
	    NULL), BC_OK);
	ck_assert_str_eq(d.compiler_path, "/usr/bin:/bin");
	ck_assert_ptr_null(d.sc.cache_dir);
	ck_assert_int_eq(d.sc.queue, 80);
	ck_assert_ptr_null(d.tmp_dir);
	bc_dconf_free(&d);

	/* --cache-dir wins over the environment */
	ck_assert_int_eq(dconf_args(&d, err, "--cache-dir", "/c", NULL),
	    BC_OK);
	ck_assert_str_eq(d.sc.cache_dir, "/c");
	ck_assert(d.cache_dir_given);
	bc_dconf_free(&d);

	/* a bad option is named */
	ck_assert_int_eq(dconf_args(&d, err, "--jobs", "0", NULL),
	    BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "--jobs"));
	bc_dconf_free(&d);
	ck_assert_int_eq(dconf_args(&d, err, "--tmp-dir", "", NULL),
	    BC_ERR_INVAL);
	bc_dconf_free(&d);
	ck_assert_int_eq(unsetenv("DISTCCD_PATH"), 0);
	ck_assert_int_eq(unsetenv("XDG_CACHE_HOME"), 0);
	for (i = 0; keep[i] != NULL; i++) {
		if (old[i] != NULL)
			ck_assert_int_eq(setenv(keep[i], old[i], 1), 0);
		else
			ck_assert_int_eq(unsetenv(keep[i]), 0);
		free(old[i]);
	}
}
END_TEST

START_TEST(dconf_default_cache_dir)
{
	char *s;

	s = bc_dconf_default_cache_dir(0, "/x", "/h");
	ck_assert_str_eq(s, "/var/cache/boltccd");
	free(s);
	s = bc_dconf_default_cache_dir(1000, "/x", "/h");
	ck_assert_str_eq(s, "/x/boltccd");
	free(s);
	/* only an absolute XDG_CACHE_HOME counts */
	s = bc_dconf_default_cache_dir(1000, "rel", "/h");
	ck_assert_str_eq(s, "/h/.cache/boltccd");
	free(s);
	ck_assert_ptr_null(bc_dconf_default_cache_dir(1000, NULL, "rel"));
	ck_assert_ptr_null(bc_dconf_default_cache_dir(1000, NULL, NULL));
}
END_TEST

static void
mkfile(const char *path)
{
	ck_assert_int_eq(bc_write_file_atomic(path, "x", 1, 0600, NULL), BC_OK);
}

START_TEST(scratch_sweep)
{
	char *top = NULL, *out = NULL, *p;
	struct stat st;
	unsigned n = 99;
	pid_t dead;
	int status;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "scratchtest.", &top,
	    NULL), BC_OK);
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "scratchout.", &out,
	    NULL), BC_OK);
	p = xasprintf("%s/keep", out);
	mkfile(p);
	free(p);
	dead = fork();
	ck_assert(dead >= 0);
	if (dead == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(dead, &status, 0), dead);
#define AT(...) (free(p), p = xasprintf(__VA_ARGS__))
	p = NULL;
	/* stale: a dead worker's tree with a subdir, a file, a symlink out */
	AT("%s/boltccd.%lu.%ld.stale1", top, (unsigned long)geteuid(),
	    (long)dead);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	AT("%s/boltccd.%lu.%ld.stale1/root", top, (unsigned long)geteuid(),
	    (long)dead);
	ck_assert_int_eq(mkdir(p, 0500), 0);	/* not writable: still gone */
	AT("%s/boltccd.%lu.%ld.stale1/out.o", top, (unsigned long)geteuid(),
	    (long)dead);
	mkfile(p);
	AT("%s/boltccd.%lu.%ld.stale1/escape", top, (unsigned long)geteuid(),
	    (long)dead);
	ck_assert_int_eq(symlink(out, p), 0);
	/* a symlink with a job dir's name: not a dir, left alone */
	AT("%s/boltccd.%lu.%ld.link01", top, (unsigned long)geteuid(),
	    (long)dead);
	ck_assert_int_eq(symlink(out, p), 0);
	/* a live worker's (the parent of this test is alive) */
	AT("%s/boltccd.%lu.%ld.alive1", top, (unsigned long)geteuid(),
	    (long)getppid());
	ck_assert_int_eq(mkdir(p, 0700), 0);
	/* another uid's name, and a name outside the pattern */
	AT("%s/boltccd.%lu.%ld.other1", top, (unsigned long)geteuid() + 1,
	    (long)dead);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	AT("%s/boltccd_%ld", top, (long)dead);
	ck_assert_int_eq(mkdir(p, 0700), 0);

	ck_assert_int_eq(bc_scratch_sweep(top, &n, NULL), BC_OK);
	ck_assert_uint_eq(n, 1);
	AT("%s/boltccd.%lu.%ld.stale1", top, (unsigned long)geteuid(),
	    (long)dead);
	ck_assert(lstat(p, &st) != 0);
	AT("%s/boltccd.%lu.%ld.link01", top, (unsigned long)geteuid(),
	    (long)dead);
	ck_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	AT("%s/boltccd.%lu.%ld.alive1", top, (unsigned long)geteuid(),
	    (long)getppid());
	ck_assert(lstat(p, &st) == 0);
	AT("%s/boltccd.%lu.%ld.other1", top, (unsigned long)geteuid() + 1,
	    (long)dead);
	ck_assert(lstat(p, &st) == 0);
	AT("%s/boltccd_%ld", top, (long)dead);
	ck_assert(lstat(p, &st) == 0);
	AT("%s/keep", out);
	ck_assert_msg(lstat(p, &st) == 0, "followed a symlink out");
	/* nothing stale left: a second sweep removes nothing */
	ck_assert_int_eq(bc_scratch_sweep(top, &n, NULL), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_ne(bc_scratch_sweep("/nonexistent/scratch", &n, NULL),
	    BC_OK);
#undef AT
	free(p);
	ck_assert_int_eq(bc_rmtree(top), BC_OK);
	ck_assert_int_eq(bc_rmtree(out), BC_OK);
	free(top);
	free(out);
}
END_TEST

/* The location directory (daemon/locdir.h). */
START_TEST(test_locdir)
{
	struct bc_locdir d;
	char k[65], k2[65], name[32];
	int rec, i;

	memset(k, 'a', 64);
	k[64] = '\0';
	memcpy(k2, k, sizeof(k));
	k2[40] = 'b';	/* same first 16 bytes: the same slot, a collision */
	bc_locdir_init(&d);
	ck_assert_ptr_null(bc_locdir_get(&d, k));
	/* unknown key: MISS, record the client's host (none for "") */
	ck_assert_ptr_null(bc_locdir_decide(&d, k, "h1:1", 0, &rec));
	ck_assert_int_eq(rec, 1);
	ck_assert_ptr_null(bc_locdir_decide(&d, k, "", 0, &rec));
	ck_assert_int_eq(rec, 0);
	ck_assert_int_eq(bc_locdir_put(&d, k, "h1:1"), 0);
	ck_assert_str_eq(bc_locdir_get(&d, k), "h1:1");
	ck_assert_str_eq(bc_locdir_get(&d, k2), "h1:1");
	/* known: sent there, whoever asks */
	ck_assert_str_eq(bc_locdir_decide(&d, k, "", 0, &rec), "h1:1");
	ck_assert_int_eq(rec, 0);
	ck_assert_str_eq(bc_locdir_decide(&d, k, "h1:1", 0, &rec), "h1:1");
	ck_assert_str_eq(bc_locdir_decide(&d, k, "h2:2", 0, &rec), "h1:1");
	/* REPLACE: MISS, record the new host; "" forgets */
	ck_assert_ptr_null(bc_locdir_decide(&d, k, "h2:2", BC_LOCATE_REPLACE,
	    &rec));
	ck_assert_int_eq(rec, 1);
	ck_assert_int_eq(bc_locdir_put(&d, k, "h2:2"), 0);
	ck_assert_str_eq(bc_locdir_get(&d, k), "h2:2");
	ck_assert_ptr_null(bc_locdir_decide(&d, k, "", BC_LOCATE_REPLACE,
	    &rec));
	ck_assert_int_eq(rec, 1);
	ck_assert_int_eq(bc_locdir_put(&d, k, ""), 0);
	ck_assert_ptr_null(bc_locdir_get(&d, k));
	/* bad input */
	ck_assert_int_eq(bc_locdir_put(&d, "nothex", "h"), -1);
	ck_assert_ptr_null(bc_locdir_get(&d, "nothex"));
	{
		char big[BC_MAX_LOC_HOST + 2];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		ck_assert_int_eq(bc_locdir_put(&d, k, big), -1);
	}
	/* the host table is bounded (h1 and h2 are in it already); keys
	 * with a host past it are not recorded */
	for (i = 0; i < BC_LOCDIR_HOSTS - 2; i++) {
		snprintf(name, sizeof(name), "host%d:1", i);
		snprintf(k, sizeof(k), "%064x", i);
		ck_assert_int_eq(bc_locdir_put(&d, k, name), 0);
	}
	ck_assert_int_eq(bc_locdir_put(&d, k2, "one-too-many:1"), -1);
	ck_assert_int_eq(bc_locdir_put(&d, k2, "host7:1"), 0);	/* known */
	/* a full neighbourhood: the newest put always wins a slot */
	for (i = 0; i < 4 * BC_LOCDIR_PROBE; i++) {
		snprintf(k, sizeof(k), "%08x%056x", 7u, (unsigned)i + 1);
		ck_assert_int_eq(bc_locdir_put(&d, k, "host1:1"), 0);
		ck_assert_str_eq(bc_locdir_get(&d, k), "host1:1");
	}
	bc_locdir_free(&d);
}
END_TEST

/* A cache entry whose object is n bytes derived from seed. */
static void
keeper_entry(struct bc_cache_entry *e, int seed, size_t n)
{
	size_t i;

	bc_cache_entry_init(e);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(bc_buf_put_u8(&e->obj,
		    (uint8_t)((i * 13 + (size_t)seed) % 251)), BC_OK);
	e->compile_ms = 100 + seed;
}

static void
keeper_key(int n, char out[BC_HASH_HEXLEN + 1])
{
	int i;

	for (i = 0; i < BC_HASH_HEXLEN; i++)
		out[i] = "0123456789abcdef"[(n * 7 + i) % 16];
	out[BC_HASH_HEXLEN] = '\0';
}

/*
 * The keeper writes the rows of blobs the workers stored: whole records,
 * a record split across writes, an unknown kind skipped; SYNC answered
 * after everything before it; a blob whose row is not written yet is
 * served; EOF ends the keeper; a SYNC to a keeper gone fails.
 */
START_TEST(test_keeper)
{
	struct bc_keeper_rec ra, rb, rx;
	struct bc_cache_entry ea, eb, ec, got;
	struct bc_cache_stats st;
	struct bc_cache *c;
	char ka[BC_HASH_HEXLEN + 1], kb[BC_HASH_HEXLEN + 1];
	char kc[BC_HASH_HEXLEN + 1], err[BC_ERRLEN], *dir;
	int p[2], a[2], status;
	pid_t pid;

	(void)signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_keeper_", &dir,
	    err), BC_OK);
	ck_assert_int_eq(bc_cache_open(dir, 0, &c, err), BC_OK);
	bc_cache_close(c);	/* made; each process opens its own */
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(a), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		close(a[0]);
		if (bc_cache_open(dir, 0, &c, err) != BC_OK)
			_exit(2);
		bc_keeper_run(c, p[0], a[1]);
		bc_cache_close(c);
		_exit(0);
	}
	close(p[0]);
	close(a[1]);
	ck_assert_int_eq(fcntl(a[0], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(bc_cache_open(dir, 0, &c, err), BC_OK);
	keeper_key(1, ka);
	keeper_key(2, kb);
	keeper_key(3, kc);
	keeper_entry(&ea, 1, 3000);
	keeper_entry(&eb, 2, 5000);
	keeper_entry(&ec, 3, 700);
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	memset(&rx, 0, sizeof(rx));
	ra.kind = rb.kind = BC_KEEP_STORED;
	rx.kind = 99;
	ck_assert_int_eq(bc_cache_put_blob(c, ka, &ea, 1, &ra.u.stored, err),
	    BC_OK);
	ck_assert_int_eq(bc_cache_put_blob(c, kb, &eb, 0, &rb.u.stored, err),
	    BC_OK);
	ck_assert_int_eq(bc_keeper_send(p[1], &ra), 0);
	ck_assert_int_eq(bc_keeper_send(p[1], &rx), 0);
	/* a record in two writes (only a writer's bug would do this, but
	 * the reader must not lose its place) */
	ck_assert_int_eq(write(p[1], &rb, 100), 100);
	ck_assert_int_eq(write(p[1], (char *)&rb + 100, sizeof(rb) - 100),
	    (ssize_t)(sizeof(rb) - 100));
	ck_assert_int_eq(bc_keeper_sync(p[1], 7), 0);
	{
		struct pollfd pf;
		uint32_t last = 0;
		int r = 0, tries = 0;

		while (r == 0 && tries++ < 100) {
			pf.fd = a[0];
			pf.events = POLLIN;
			(void)poll(&pf, 1, 100);
			r = bc_keeper_acks(a[0], &last);
		}
		ck_assert_int_eq(r, 1);
		ck_assert_uint_eq(last, 7);
		ck_assert(BC_KEEPER_DONE(7, last) && !BC_KEEPER_DONE(8, last));
		ck_assert(BC_KEEPER_DONE(0xfffffffeU, 1U));	/* wraps */
	}
	ck_assert(bc_cache_has(c, ka));
	ck_assert(bc_cache_has(c, kb));
	ck_assert_int_eq(bc_cache_stats(c, &st, err), BC_OK);
	ck_assert_uint_eq(st.stores, 2);
	ck_assert_uint_eq(st.misses, 1);
	ck_assert_uint_eq(st.requests, 1);
	ck_assert_uint_eq(st.entries, 2);
	ck_assert_uint_eq(st.stored_bytes,
	    (uint64_t)(ra.u.stored.size + rb.u.stored.size));
	/* a blob whose row is on its way is a hit already */
	{
		struct bc_keeper_rec rc;

		memset(&rc, 0, sizeof(rc));
		ck_assert_int_eq(bc_cache_put_blob(c, kc, &ec, 0,
		    &rc.u.stored, err), BC_OK);
		ck_assert(!bc_cache_has(c, kc));
		ck_assert_int_eq(bc_cache_get(c, kc, BC_CACHE_COUNT_ALL, &got,
		    err), BC_OK);
		ck_assert_uint_eq(bc_buf_len(&got.obj), 700);
		ck_assert_int_eq(memcmp(bc_buf_data(&got.obj),
		    bc_buf_data(&ec.obj), 700), 0);
		bc_cache_entry_free(&got);
	}
	/* hits a worker served: the keeper counts them (a hit from another
	 * directory too) and refreshes the entry; with no keeper, here */
	{
		struct bc_cache_stats s2;
		struct pollfd pf;
		uint32_t last = 0;
		int r = 0, tries = 0;

		ck_assert_int_eq(bc_cache_stats(c, &st, err), BC_OK);
		bc_keeper_touch(p[1], c, ka, BC_CACHE_COUNT_ALL, 1, 250, NULL);
		bc_keeper_touch(p[1], c, kb, BC_CACHE_COUNT_ALL, 1, 50,
		    "0123456789abcdef");
		ck_assert_int_eq(bc_keeper_sync(p[1], 9), 0);
		while (r == 0 && tries++ < 100) {
			pf.fd = a[0];
			pf.events = POLLIN;
			(void)poll(&pf, 1, 100);
			r = bc_keeper_acks(a[0], &last);
			if (r == 1 && !BC_KEEPER_DONE(9, last))
				r = 0;
		}
		ck_assert_int_eq(r, 1);
		ck_assert_int_eq(bc_cache_stats(c, &s2, err), BC_OK);
		ck_assert_uint_eq(s2.hits, st.hits + 2);
		ck_assert_uint_eq(s2.time_saved_ms, st.time_saved_ms + 300);
		bc_keeper_touch(-1, c, ka, BC_CACHE_COUNT_ALL, 1, 1, NULL);
		ck_assert_int_eq(bc_cache_stats(c, &s2, err), BC_OK);
		ck_assert_uint_eq(s2.hits, st.hits + 3);
	}
	/* a full pipe (the keeper stopped): the worker writes the row */
	{
		struct bc_cache_stored rd;
		struct bc_keeper_rec fill;
		char kd[BC_HASH_HEXLEN + 1];
		int q[2], nfill = 0;

		ck_assert_int_eq(pipe(q), 0);
		ck_assert_int_eq(fcntl(q[1], F_SETFL, O_NONBLOCK), 0);
		memset(&fill, 0, sizeof(fill));
		fill.kind = BC_KEEP_SYNC;
		while (bc_keeper_send(q[1], &fill) == 0 && nfill < 100000)
			nfill++;
		ck_assert_int_gt(nfill, 0);
		keeper_key(4, kd);
		ck_assert_int_eq(bc_cache_put_blob(c, kd, &ec, 0, &rd, err),
		    BC_OK);
		ck_assert(!bc_cache_has(c, kd));
		ck_assert_int_eq(bc_keeper_store_row(q[1], c, &rd, err), BC_OK);
		ck_assert(bc_cache_has(c, kd));
		/* a hit's record alone (the parent's fast path) is not sent
		 * and counts nothing; bc_keeper_touch counts it here */
		{
			struct bc_cache_stats s3, s4;

			ck_assert_int_eq(bc_cache_stats(c, &s3, err), BC_OK);
			ck_assert_int_eq(bc_keeper_touch_send(q[1], kd,
			    BC_CACHE_COUNT_ALL, 1, 5, NULL), -1);
			ck_assert_int_eq(bc_keeper_touch_send(-1, kd,
			    BC_CACHE_COUNT_ALL, 1, 5, NULL), -1);
			ck_assert_int_eq(bc_cache_stats(c, &s4, err), BC_OK);
			ck_assert_uint_eq(s4.hits, s3.hits);
			bc_keeper_touch(q[1], c, kd, BC_CACHE_COUNT_ALL, 1, 5,
			    NULL);
			ck_assert_int_eq(bc_cache_stats(c, &s4, err), BC_OK);
			ck_assert_uint_eq(s4.hits, s3.hits + 1);
		}
		/* and with no keeper at all */
		keeper_key(5, kd);
		ck_assert_int_eq(bc_cache_put_blob(c, kd, &ec, 0, &rd, err),
		    BC_OK);
		ck_assert_int_eq(bc_keeper_store_row(-1, c, &rd, err), BC_OK);
		ck_assert(bc_cache_has(c, kd));
		close(q[0]);
		close(q[1]);
	}
	/* EOF: the keeper exits; its answers' pipe says so; a SYNC to a
	 * pipe nobody reads cannot be sent */
	close(p[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	{
		uint32_t last = 0;

		ck_assert_int_eq(bc_keeper_acks(a[0], &last), -1);
	}
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	ck_assert_int_ne(bc_keeper_sync(p[1], 8), 0);
	close(p[1]);
	close(a[0]);
	bc_cache_close(c);
	bc_cache_entry_free(&ea);
	bc_cache_entry_free(&eb);
	bc_cache_entry_free(&ec);
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);

		ck_assert_int_eq(system(cmd), 0);
		free(cmd);
	}
	free(dir);
}
END_TEST

/* The names of the limits in failure messages (issue 21). */
START_TEST(test_job_limit_name)
{
	char b[96];

	bc_job_limit_name(BC_LIMIT_REQUEST, 120000, b, sizeof(b));
	ck_assert_str_eq(b, "request timeout (--request-timeout 120 s)");
	bc_job_limit_name(BC_LIMIT_JOB, 600000, b, sizeof(b));
	ck_assert_str_eq(b, "job timeout (--job-timeout 600 s)");
	bc_job_limit_name(BC_LIMIT_IO, 1500, b, sizeof(b));
	ck_assert_str_eq(b, "I/O timeout (--io-timeout, 1500 ms)");
	bc_job_limit_name(BC_LIMIT_REPLY, 2000, b, sizeof(b));
	ck_assert_str_eq(b, "reply deadline (--job-timeout 2 s from the "
	    "reply's start)");
	bc_job_limit_name(BC_LIMIT_REQUEST, 1000, b, 12);
	ck_assert_str_eq(b, "request tim");
}
END_TEST

/* A stand-in for a compile in group g: a "driver" and its child (a
 * "cc1"), pausing forever.  Both inherit the caller's descriptors but
 * g's hold (as an exec'd compiler, close-on-exec), so a probe pipe's
 * read end sees EOF once both are dead (zombies or not).  Returns the
 * driver's pid once both exist. */
static pid_t
compile_member(const struct bc_compgroup *g)
{
	int ready[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(g->hold);
		(void)setpgid(0, g->pgid);
		if (fork() < 0)
			_exit(1);
		(void)write(ready[1], "x", 1);
		for (;;)
			pause();
	}
	(void)setpgid(pid, g->pgid);
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/* 1 if fd's writers are all gone (EOF) within ms. */
static int
eof_within(int fd, int ms)
{
	struct pollfd p;
	char c;

	p.fd = fd;
	p.events = POLLIN;
	p.revents = 0;
	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 0;
}

/* A worker that dies mid-compile (any way: here _exit) takes its
 * compile with it, the driver's children included (issue 21). */
START_TEST(compgroup_dies_with_worker)
{
	int probe[2], info[2];
	pid_t w, pgid = -1;
	int st;

	ck_assert_int_eq(pipe(probe), 0);
	ck_assert_int_eq(pipe(info), 0);
	w = fork();
	ck_assert_int_ge(w, 0);
	if (w == 0) {
		struct bc_compgroup g;
		char e[BC_ERRLEN];

		close(probe[0]);
		close(info[0]);
		if (bc_compgroup_start(&g, e) != BC_OK)
			_exit(2);
		(void)compile_member(&g);
		(void)write(info[1], &g.pgid, sizeof(g.pgid));
		_exit(0);	/* no bc_compgroup_end: as a SIGKILL */
	}
	close(probe[1]);
	close(info[1]);
	ck_assert_int_eq(read(info[0], &pgid, sizeof(pgid)),
	    (ssize_t)sizeof(pgid));
	ck_assert_int_eq(waitpid(w, &st, 0), w);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!eof_within(probe[0], 3000)) {
		(void)kill(-pgid, SIGKILL);	/* leave nothing running */
		ck_abort_msg("the compile outlived its worker by 3 s");
	}
	close(probe[0]);
	close(info[0]);
}
END_TEST

/* While the worker lives the compile runs; bc_compgroup_end kills all
 * of it and reaps the sentinel. */
START_TEST(compgroup_end)
{
	struct bc_compgroup g;
	char e[BC_ERRLEN];
	int probe[2], st;
	pid_t m, sentinel;

	ck_assert_int_eq(pipe(probe), 0);
	ck_assert_int_eq(bc_compgroup_start(&g, e), BC_OK);
	ck_assert_int_gt(g.pgid, 0);
	ck_assert_int_ge(g.hold, 0);
	ck_assert_int_ne(fcntl(g.hold, F_GETFD) & FD_CLOEXEC, 0);
	sentinel = g.pgid;
	m = compile_member(&g);
	close(probe[1]);
	ck_assert_int_eq(getpgid(m), g.pgid);
	ck_assert(!eof_within(probe[0], 200));
	bc_compgroup_end(&g);
	ck_assert_int_eq(g.pgid, -1);
	ck_assert_int_eq(g.hold, -1);
	ck_assert(eof_within(probe[0], 3000));
	ck_assert_int_eq(waitpid(m, &st, 0), m);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_int_eq(waitpid(sentinel, &st, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	bc_compgroup_end(&g);	/* again: nothing */
	close(probe[0]);
}
END_TEST

static Suite *
daemon_suite(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(tc, test_locdir);
	tcase_add_test(tc, test_job_limit_name);
	tcase_add_test(tc, test_keeper);

	tcase_add_test(tc, acl_parse_good);
	tcase_add_test(tc, acl_parse_bad);
	tcase_add_test(tc, acl_match);
	tcase_add_test(tc, acl_mutations);
	tcase_add_test(tc, policy_builtin_names);
	tcase_add_test(tc, policy_check_name);
	tcase_add_test(tc, policy_resolve);
	tcase_add_test(tc, policy_args);
	tcase_add_test(tc, stats_text_page);
	tcase_add_test(tc, stats_json_metrics);
	tcase_add_test(tc, stats_active_jobs);
	tcase_add_test(tc, stats_pages_pinned);
	tcase_add_test(tc, intake_whole_requests);
	tcase_add_test(tc, stats_events);
	tcase_add_test(tc, scratch_names);
	tcase_add_test(tc, scratch_sweep);
	tcase_add_test(tc, scratch_choice);
	tcase_add_test(tc, dconf_env_and_args);
	tcase_add_test(tc, dconf_default_cache_dir);
	tcase_add_test(tc, compgroup_dies_with_worker);
	tcase_add_test(tc, compgroup_end);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	bc_log_silence();
	return bc_unit_run(daemon_suite());
}
