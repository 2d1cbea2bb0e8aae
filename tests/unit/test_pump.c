/*
 * test_pump.c - daemon side of pump mode: the validated file tree
 * (hostile names and links refused, nothing written outside the root),
 * argv rewriting, .d fix-up, and protocol-3 framing round trips.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/proto3.h"
#include "common/util.h"
#include "daemon/pump.h"
#include "tests/unit/unit.h"

static char *base, *root;
static struct bc_pump_tree tree;

static void
setup(void)
{
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "pumptest_", &base, NULL),
	    BC_OK);
	root = xasprintf("%s/root", base);
	ck_assert_int_eq(bc_pump_tree_open(&tree, root, NULL), BC_OK);
}

static void
teardown(void)
{
	bc_pump_tree_close(&tree);
	(void)bc_rmtree(base);
	free(base);
	free(root);
}

static int
add_file(const char *name, const char *text)
{
	char why[BC_ERRLEN];

	return bc_pump_tree_add(&tree, name, 0, (const uint8_t *)text,
	    strlen(text), why);
}

static int
add_link(const char *name, const char *target)
{
	char why[BC_ERRLEN];

	return bc_pump_tree_add(&tree, name, 1, (const uint8_t *)target,
	    strlen(target), why);
}

static int
exists_under(const char *rel)
{
	struct stat sb;
	char *p = xasprintf("%s%s", root, rel);
	int r = lstat(p, &sb) == 0;

	free(p);
	return r;
}

START_TEST(test_tree_good)
{
	char buf[64];
	char *p;
	ssize_t n;

	ck_assert_int_eq(add_file("/tmp/src/hello.c", "int x;\n"), BC_OK);
	ck_assert_int_eq(add_file("/tmp/src/forcing_technique_271828", ""),
	    BC_OK);
	ck_assert_int_eq(add_link("/usr/include",
	    "../../../../../../../../../../../../../../../../../../../../../../"
	    "usr/include"), BC_OK);
	ck_assert_int_eq(add_link("/tmp/src/l.h", "hello.c"), BC_OK);
	ck_assert_int_eq(add_link("/tmp/src/abs.h", "/tmp/src/hello.c"), BC_OK);
	ck_assert_int_eq(bc_pump_tree_mkdir(&tree, "/tmp/src/sub/dir", NULL),
	    BC_OK);
	ck_assert(exists_under("/tmp/src/sub/dir"));
	p = xasprintf("%s/usr/include/stdio.h", root);
	ck_assert_int_eq(access(p, R_OK), 0);	/* the server's own header */
	free(p);
	p = xasprintf("%s/tmp/src/abs.h", root);
	n = readlink(p, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	free(p);
	p = xasprintf("%s/tmp/src/hello.c", root);
	ck_assert_str_eq(buf, p);	/* absolute targets go under the root */
	free(p);
	ck_assert_uint_eq(tree.nfiles, 2);
	ck_assert_uint_eq(tree.nlinks, 3);
	ck_assert_int_eq(bc_pump_tree_finish(&tree, NULL), BC_OK);
}
END_TEST

START_TEST(test_tree_hostile)
{
	char *outside = xasprintf("%s/escaped", base);

	ck_assert_int_eq(add_file("../../x", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("/../../x", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("/a/../../x", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("/a/./x", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("relative/x", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("/", "a"), BC_ERR_DENIED);
	/* relative link escaping, not the system-dir form */
	ck_assert_int_eq(add_link("/a/up", "../../escaped"), BC_ERR_DENIED);
	ck_assert_int_eq(add_link("/a/up2", "../../../../../../etc"),
	    BC_ERR_DENIED);
	ck_assert_int_eq(add_link("/usr/include",
	    "../../../../../../../../../../../../../../../../../../../../../"
	    "usr/include"), BC_ERR_DENIED);	/* 21, not 22 */
	ck_assert_int_eq(add_link("/usr/include",
	    "../../../../../../../../../../../../../../../../../../../../../../"
	    "etc"), BC_ERR_DENIED);		/* other dir */
	ck_assert_int_eq(add_link("/abs", "/../../../etc"), BC_ERR_DENIED);
	ck_assert_int_eq(add_link("/empty", ""), BC_ERR_DENIED);
	/* a link cannot be written through, nor replaced */
	ck_assert_int_eq(add_link("/d", "/"), BC_OK);
	ck_assert_int_eq(add_file("/d/x", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_link("/sys", "../../../../../../../../../../../"
	    "../../../../../../../../../../sys"), BC_OK);
	ck_assert_int_eq(add_file("/sys/pwned", "a"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("/f", "a"), BC_OK);
	ck_assert_int_eq(add_file("/f", "b"), BC_ERR_DENIED);
	ck_assert_int_eq(add_file("/f/x", "b"), BC_ERR_DENIED);
	/* distcc's system-directory link: to a directory of this host only;
	 * to a file refused, to nothing left out (no dangling link) */
	ck_assert_int_eq(add_link("/etc/passwd", "../../../../../../../../../"
	    "../../../../../../../../../../../../etc/passwd"), BC_ERR_DENIED);
	ck_assert_int_eq(add_link("/no-such-dir-here", "../../../../../../../"
	    "../../../../../../../../../../../../../../no-such-dir-here"),
	    BC_OK);
	ck_assert(!exists_under("/no-such-dir-here"));
	ck_assert_int_eq(add_file("/no-such-dir-here/x", "a"), BC_ERR_DENIED);
	/* a chain of links out of the tree */
	ck_assert_int_eq(add_link("/q/up", ".."), BC_OK);
	ck_assert_int_eq(add_link("/q/out", "up/../../etc"), BC_ERR_DENIED);
	ck_assert_int_ne(access(outside, F_OK), 0);
	ck_assert_int_ne(access("/pwned", F_OK), 0);
	free(outside);
}
END_TEST

START_TEST(test_sysdir_rule)
{
	ck_assert(bc_pump_is_sysdir_link("/usr/lib/gcc/x86_64-linux-gnu/12/include",
	    "../../../../../../../../../../../../../../../../../../../../../../"
	    "../../../../usr/lib/gcc/x86_64-linux-gnu/12/include"));
	ck_assert(!bc_pump_is_sysdir_link("/usr/include", "../usr/include"));
	ck_assert(!bc_pump_is_sysdir_link("/", "../"));
}
END_TEST

START_TEST(test_plan_argv)
{
	char *av[] = { "gcc", "-I/abs/inc", "-Irel", "-isystem", "/s",
	    "-include", "/p.h", "-g", "-MD", "-c", "/abs/a.c", "-o", "obj/a.o",
	    "-MF", "obj/a.d", NULL };
	struct bc_pump_plan p;
	char *joined, why[BC_ERRLEN];

	ck_assert_int_eq(bc_pump_plan_argv(av, 15, "gcc", "/R", "/J", &p, why),
	    BC_OK);
	joined = bc_strv_join(&p.argv);
	ck_assert_str_eq(joined, "gcc -ffile-prefix-map=/R= -I/R/abs/inc -Irel "
	    "-isystem /R/s -include /R/p.h -g -MD -c /R/abs/a.c -o /J/out.o "
	    "-MF /J/deps.d -MT obj/a.o");
	free(joined);
	ck_assert_str_eq(p.orig_src, "/abs/a.c");
	bc_pump_plan_free(&p);
	{
		char *b[] = { "cc", "-c", "x.c", "-MT", "t", NULL };

		ck_assert_int_eq(bc_pump_plan_argv(b, 5, "cc", "/R", "/J", &p,
		    why), BC_OK);
		joined = bc_strv_join(&p.argv);
		ck_assert_str_eq(joined, "cc -ffile-prefix-map=/R= -c x.c -MT t "
		    "-o /J/out.o -MMD -MF /J/deps.d");
		free(joined);
		bc_pump_plan_free(&p);
	}
	{
		/* the user's prefix maps get rooted twins after them */
		char *b[] = { "cc", "-ffile-prefix-map=/home/a=/src", "-c",
		    "/home/a/x.c", "-fdebug-prefix-map=/b=/B",
		    "-fmacro-prefix-map=rel=R", "-fcoverage-prefix-map=/c=",
		    NULL };

		ck_assert_int_eq(bc_pump_plan_argv(b, 7, "cc", "/R", "/J", &p,
		    why), BC_OK);
		joined = bc_strv_join(&p.argv);
		/* user debug/macro maps: the root map in those kinds, and
		 * for coverage (-fcoverage-prefix-map is clang's) */
		ck_assert_str_eq(joined, "cc -fdebug-prefix-map=/R= "
		    "-fmacro-prefix-map=/R= -fcoverage-prefix-map=/R= "
		    "-ffile-prefix-map=/home/a=/src "
		    "-ffile-prefix-map=/R/home/a=/src -c /R/home/a/x.c "
		    "-fdebug-prefix-map=/b=/B -fdebug-prefix-map=/R/b=/B "
		    "-fmacro-prefix-map=rel=R "
		    "-fcoverage-prefix-map=/c= -fcoverage-prefix-map=/R/c= "
		    "-o /J/out.o -MMD -MF /J/deps.d -MT x.o");
		free(joined);
		bc_pump_plan_free(&p);
	}
	{
		/* only -ffile-prefix-map: the root map stays one option */
		char *b[] = { "cc", "-ffile-prefix-map=/home/a=/src", "-c",
		    "x.c", NULL };

		ck_assert_int_eq(bc_pump_plan_argv(b, 4, "cc", "/R", "/J", &p,
		    why), BC_OK);
		joined = bc_strv_join(&p.argv);
		ck_assert_str_eq(joined, "cc -ffile-prefix-map=/R= "
		    "-ffile-prefix-map=/home/a=/src "
		    "-ffile-prefix-map=/R/home/a=/src -c x.c "
		    "-o /J/out.o -MMD -MF /J/deps.d -MT x.o");
		free(joined);
		bc_pump_plan_free(&p);
	}
	{
		/* a client's .dia path is never written here; the job plan
		 * asks for <jobdir>/out.dia when the BOLT client wants one */
		char *b[] = { "clang", "--serialize-diagnostics",
		    "/etc/owned.dia", "-index-store-path", "/etc/idx",
		    "-ivfsstatcache", "/etc/sc", "-c", "x.c", NULL };
		struct bc_jobplan jp;

		ck_assert_int_eq(bc_pump_plan_argv(b, 9, "clang", "/R", "/J",
		    &p, why), BC_OK);
		joined = bc_strv_join(&p.argv);
		ck_assert_str_eq(joined, "clang -ffile-prefix-map=/R= -c x.c "
		    "-o /J/out.o -MMD -MF /J/deps.d -MT x.o");
		free(joined);
		bc_pump_plan_free(&p);
		ck_assert_int_eq(bc_pump_job_plan(b, 9, "clang", "/R", "/J", 0,
		    &jp, why), BC_OK);
		ck_assert_ptr_null(jp.dia_name);
		joined = bc_strv_join(&jp.argv);
		ck_assert_ptr_null(strstr(joined, "dia"));
		free(joined);
		bc_jobplan_free(&jp);
		ck_assert_int_eq(bc_pump_job_plan(b, 9, "clang", "/R", "/J", 1,
		    &jp, why), BC_OK);
		ck_assert_str_eq(jp.dia_name, "out.dia");
		joined = bc_strv_join(&jp.argv);
		ck_assert_ptr_nonnull(strstr(joined,
		    " --serialize-diagnostics /J/out.dia"));
		ck_assert_ptr_null(strstr(joined, "/etc/"));
		free(joined);
		bc_jobplan_free(&jp);
		/* a value missing is refused */
		ck_assert_int_eq(bc_pump_plan_argv(b, 2, "clang", "/R", "/J",
		    &p, why), BC_ERR_DENIED);
	}
	{
		char *b[] = { "cc", "-E", "x.c", NULL };
		char *c[] = { "cc", "x.c", NULL };
		char *d[] = { "cc", "-c", "x.c", "-o", NULL };

		ck_assert_int_eq(bc_pump_plan_argv(b, 3, "cc", "/R", "/J", &p,
		    why), BC_ERR_DENIED);
		ck_assert_int_eq(bc_pump_plan_argv(c, 2, "cc", "/R", "/J", &p,
		    why), BC_ERR_DENIED);
		ck_assert_int_eq(bc_pump_plan_argv(d, 4, "cc", "/R", "/J", &p,
		    why), BC_ERR_DENIED);
	}
}
END_TEST

START_TEST(test_fix_deps)
{
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	static const char in[] = "a.o: a.c /R/usr/include/stdio.h \\\n"
	    " /R/tmp/x/h.h /Rx/keep.h\n";

	ck_assert_int_eq(bc_buf_put_str(&b, in), BC_OK);
	bc_pump_fix_deps("/R", &b);
	ck_assert_uint_eq(bc_buf_len(&b), strlen(in) - 4);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "a.o: a.c /usr/include/stdio.h "
	    "\\\n /tmp/x/h.h /Rx/keep.h\n", bc_buf_len(&b)), 0);
	bc_buf_free(&b);
}
END_TEST

struct collect {
	struct bc_strv names;
	size_t bytes;
};

static int
collect(void *ctx, const char *name, int is_link, const uint8_t *data,
    size_t len, char *err)
{
	struct collect *c = ctx;

	(void)data;
	(void)err;
	bc_strv_push_owned(&c->names, xasprintf("%s%s", is_link ? "L:" : "F:",
	    name));
	c->bytes += len;
	return BC_OK;
}

START_TEST(test_proto3_roundtrip)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20), in;
	struct bc_strv av = BC_STRV_INIT;
	struct collect c;
	struct bc_proto3_limits lim;
	char err[BC_ERRLEN];
	size_t cut, i, bit;
	uint8_t *mut;

	memset(&c, 0, sizeof(c));
	bc_strv_push(&av, "gcc");
	bc_strv_push(&av, "-c");
	bc_strv_push(&av, "a.c");
	ck_assert_int_eq(bc_proto3_write_head(&out, "/w", &av, 3, err), BC_OK);
	ck_assert_int_eq(bc_proto3_write_file(&out, "/w/a.c", "int a;\n", 7,
	    err), BC_OK);
	ck_assert_int_eq(bc_proto3_write_file(&out, "/w/forcing_technique_271828",
	    "", 0, err), BC_OK);
	ck_assert_int_eq(bc_proto3_write_link(&out, "/usr/include", "../x",
	    err), BC_OK);
	/* skip the head: DIST, CDIR, ARGC, 3 x ARGV */
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_buf_skip(&in, 12 + 12 + 2 + 12 + 12 + 3 + 12 + 2 +
	    12 + 3), BC_OK);
	ck_assert_int_eq(bc_proto3_read_files(NULL, &in, NULL, collect, &c,
	    err), BC_OK);
	ck_assert_uint_eq(c.names.n, 3);
	ck_assert_str_eq(c.names.v[0], "F:/w/a.c");
	ck_assert_str_eq(c.names.v[2], "L:/usr/include");
	ck_assert_uint_eq(c.bytes, 7 + 0 + 4);
	bc_strv_free(&c.names);
	/* limits: NFIL above the limit fails before reading entries */
	bc_proto3_limits_default(&lim);
	lim.max_nfil = 2;
	bc_buf_view(&in, bc_buf_data(&out) + 82, bc_buf_len(&out) - 82);
	ck_assert_int_eq(bc_proto3_read_files(NULL, &in, &lim, collect, &c,
	    err), BC_ERR_LIMIT);
	bc_strv_free(&c.names);
	/* truncation and bit flips: clean errors only */
	mut = xmalloc(bc_buf_len(&out));
	for (cut = 82; cut < bc_buf_len(&out); cut++) {
		bc_buf_view(&in, bc_buf_data(&out) + 82, cut - 82);
		ck_assert_int_ne(bc_proto3_read_files(NULL, &in, NULL, collect,
		    &c, err), BC_OK);
		bc_strv_free(&c.names);
	}
	for (i = 82; i < bc_buf_len(&out); i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(mut, bc_buf_data(&out), bc_buf_len(&out));
			mut[i] ^= (uint8_t)(1 << bit);
			bc_buf_view(&in, mut + 82, bc_buf_len(&out) - 82);
			(void)bc_proto3_read_files(NULL, &in, NULL, collect, &c,
			    err);
			bc_strv_free(&c.names);
		}
	free(mut);
	bc_strv_free(&av);
	bc_buf_free(&out);
}
END_TEST

START_TEST(test_proto3_reply)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20), in;
	struct bc_buf e = BC_BUF_INIT(1 << 20), o = BC_BUF_INIT(1 << 20),
	    obj = BC_BUF_INIT(1 << 20), d = BC_BUF_INIT(1 << 20);
	struct bc_buf e2 = BC_BUF_INIT(1 << 20), o2 = BC_BUF_INIT(1 << 20),
	    obj2 = BC_BUF_INIT(1 << 20), d2 = BC_BUF_INIT(1 << 20);
	uint32_t st;
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_buf_put_str(&e, "warning\n"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&obj, "\177ELF...."), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&d, "a.o: a.c\n"), BC_OK);
	ck_assert_int_eq(bc_proto3_write_reply(&out, 0, &e, &o, &obj, &d, err),
	    BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_proto3_read_reply(NULL, &in, &st, &e2, &o2, &obj2,
	    &d2, err), BC_OK);
	ck_assert_uint_eq(st, 0);
	ck_assert_uint_eq(bc_buf_len(&d2), 9);
	ck_assert_uint_eq(bc_buf_len(&obj2), 8);
	ck_assert_uint_eq(bc_buf_avail(&in), 0);
	/* failure: ends after DOTO 0, no DOTD */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto3_write_reply(&out, 0x100, &e, &o, &obj, &d,
	    err), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&out) + bc_buf_len(&out) - 12,
	    "DOTO00000000", 12), 0);
	bc_buf_free(&out);
	bc_buf_free(&e); bc_buf_free(&o); bc_buf_free(&obj); bc_buf_free(&d);
	bc_buf_free(&e2); bc_buf_free(&o2); bc_buf_free(&obj2); bc_buf_free(&d2);
}
END_TEST

/* The root taken out of bytes, as the old in-place loop did it (the
 * reference for bc_pump_strip_root). */
static size_t
strip_ref(const char *r, const char *in, size_t n, char *out)
{
	size_t rl = strlen(r), i, o = 0;

	for (i = 0; i < n; ) {
		if (n - i > rl && memcmp(in + i, r, rl) == 0 &&
		    in[i + rl] == '/') {
			i += rl;
			continue;
		}
		out[o++] = in[i++];
	}
	return o;
}

START_TEST(test_strip_root)
{
	static const char *const cases[] = {
		"",
		"/r",
		"/r/",
		"/r/a.h",
		"x.o: /r/a.h /r/b/c.h \\\n /r/r/d.h /rx/e.h /r\n",
		"/r//r/",
		"/r/r/r/r/",
		"a/r/b /r",
		"no root here at all",
		"/r/\n/r/",
	};
	struct bc_buf b;
	char want[128];
	size_t i, n, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = strlen(cases[i]);
		k = strip_ref("/r", cases[i], n, want);
		bc_buf_init(&b, 1024);
		ck_assert_int_eq(bc_buf_put(&b, cases[i], n), BC_OK);
		bc_pump_strip_root("/r", &b);
		ck_assert_msg(bc_buf_len(&b) == k && (k == 0 ||
		    memcmp(bc_buf_data(&b), want, k) == 0),
		    "case %zu: \"%.*s\", want \"%.*s\"", i,
		    (int)bc_buf_len(&b), (const char *)bc_buf_data(&b),
		    (int)k, want);
		bc_buf_free(&b);
	}
	/* no root, or an empty buffer: unchanged */
	bc_buf_init(&b, 16);
	bc_pump_strip_root("/r", &b);
	ck_assert_uint_eq(bc_buf_len(&b), 0);
	ck_assert_int_eq(bc_buf_put_str(&b, "/r/a"), BC_OK);
	bc_pump_strip_root(NULL, &b);
	bc_pump_strip_root("", &b);
	ck_assert_uint_eq(bc_buf_len(&b), 4);
	bc_buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pump");
	TCase *t = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_tree_good);
	tcase_add_test(t, test_tree_hostile);
	tcase_add_test(t, test_sysdir_rule);
	tcase_add_test(t, test_plan_argv);
	tcase_add_test(t, test_fix_deps);
	tcase_add_test(t, test_strip_root);
	tcase_add_test(t, test_proto3_roundtrip);
	tcase_add_test(t, test_proto3_reply);
	suite_add_tcase(s, t);
	return bc_unit_run(s);
}
