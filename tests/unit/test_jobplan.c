/*
 * test_jobplan.c - the daemon's argv scan and rewrite (daemon/jobplan.c):
 * accepted command lines and their rewritten argv, refusals and why,
 * BOLT's debug-path and .dia options, and random argv words.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/jobplan.h"
#include "tests/unit/unit.h"

/* Split a space-separated command line (test helper; no quoting). */
static size_t
split(char *s, char **v, size_t max)
{
	size_t n = 0;
	char *p = s;

	while (*p != '\0' && n + 1 < max) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		v[n++] = p;
		while (*p != '\0' && *p != ' ')
			p++;
		if (*p == ' ')
			*p++ = '\0';
	}
	v[n] = NULL;
	return n;
}

static char *
plan_str(const char *cmd, const struct bc_jobplan_opts *o, int *rc,
    struct bc_jobplan *plan)
{
	char buf[1024], *v[64], why[BC_ERRLEN];
	struct bc_jobplan_opts def;
	size_t n;
	char *joined;

	memset(&def, 0, sizeof(def));
	snprintf(buf, sizeof(buf), "%s", cmd);
	n = split(buf, v, 64);
	*rc = bc_jobplan_argv(v, n, v[0], o != NULL ? o : &def, plan, why);
	if (*rc != BC_OK)
		return NULL;
	joined = bc_strv_join(&plan->argv);
	return joined;
}

static void
expect_plan(const char *cmd, const char *want, const char *src)
{
	struct bc_jobplan plan;
	int rc;
	char *got = plan_str(cmd, NULL, &rc, &plan);

	ck_assert_msg(rc == BC_OK, "refused: %s", cmd);
	ck_assert_str_eq(got, want);
	if (src != NULL)
		ck_assert_str_eq(plan.src_name, src);
	free(got);
	bc_jobplan_free(&plan);
}

static void
expect_refused(const char *cmd)
{
	struct bc_jobplan plan;
	int rc;
	char *got = plan_str(cmd, NULL, &rc, &plan);

	ck_assert_msg(rc == BC_ERR_DENIED, "accepted: %s -> %s", cmd,
	    got ? got : "");
	ck_assert_ptr_null(got);
	ck_assert_ptr_null(plan.src_name);
	ck_assert_ptr_null(plan.argv.v);
}

START_TEST(plan_rewrite)
{
	/* the captured distcc request */
	expect_plan("x86_64-linux-gnu-gcc -c hello.c -o hello.o",
	    "x86_64-linux-gnu-gcc -c hello.i -o out.o", "hello.i");
	expect_plan("gcc -O2 -c src/dir/foo.c -o obj/foo.o -g",
	    "gcc -O2 -c foo.i -o out.o -g", "foo.i");
	/* no -o: ours is appended */
	expect_plan("gcc -c a.c", "gcc -c a.i -o out.o", "a.i");
	expect_plan("gcc -c a.c -oa.o", "gcc -c a.i -o out.o", NULL);
	expect_plan("gcc -S a.c -o a.s", "gcc -S a.i -o out.s", NULL);
	/* dependency options are the client's business */
	expect_plan("gcc -MD -MF x.d -MT t.o -MQ q -MMD -MP -MG -c a.c -o a.o",
	    "gcc -c a.i -o out.o", NULL);
	expect_plan("gcc -MFx.d -MTt -c a.c -o a.o", "gcc -c a.i -o out.o",
	    NULL);
	/* languages */
	expect_plan("g++ -c a.cpp -o a.o", "g++ -c a.ii -o out.o", "a.ii");
	expect_plan("g++ -c a.cc", "g++ -c a.ii -o out.o", "a.ii");
	expect_plan("g++ -c a.C", "g++ -c a.ii -o out.o", "a.ii");
	expect_plan("clang -c a.m", "clang -c a.mi -o out.o", "a.mi");
	expect_plan("clang -c a.mm", "clang -c a.mii -o out.o", "a.mii");
	expect_plan("clang -c a.M", "clang -c a.mii -o out.o", "a.mii");
	expect_plan("gcc -c hello.i -o hello.o", "gcc -c hello.i -o out.o",
	    "hello.i");
	expect_plan("g++ -c a.ii", "g++ -c a.ii -o out.o", "a.ii");
	/* -x LANG becomes the preprocessed language */
	expect_plan("gcc -x c -c hello.c -o hello.o",
	    "gcc -x cpp-output -c hello.i -o out.o", "hello.i");
	expect_plan("gcc -xc++ -c t.c", "gcc -x c++-cpp-output -c t.ii -o out.o",
	    "t.ii");
	expect_plan("gcc -x cpp-output -c t.i",
	    "gcc -x cpp-output -c t.i -o out.o", "t.i");
	expect_plan("clang -x objective-c -c t.m",
	    "clang -x objective-c-cpp-output -c t.mi -o out.o", "t.mi");
	/* option values are not sources */
	expect_plan("gcc -c -I inc -D X=1 -include foo.h -target x a.c",
	    "gcc -c -I inc -D X=1 -include foo.h -target x a.i -o out.o",
	    NULL);
	/* file names that are unsafe as a temp name */
	expect_plan("gcc -c ../../etc/x.c", "gcc -c x.i -o out.o", "x.i");
	expect_plan("gcc -c .hidden.c", "gcc -c input.i -o out.o", "input.i");
	expect_plan("gcc -c we$ird.c", "gcc -c input.i -o out.o", "input.i");
	/* --serialize-diagnostics without WANT_DIA is dropped */
	expect_plan("clang --serialize-diagnostics x.dia -c a.c",
	    "clang -c a.i -o out.o", NULL);

	expect_refused("gcc hello.c -o hello");		/* link */
	expect_refused("gcc -c");			/* no source */
	expect_refused("gcc -c a.c b.c");		/* two sources */
	expect_refused("gcc -c a.c foo.o");		/* object input */
	expect_refused("gcc -c a.s");			/* assembler */
	expect_refused("gcc -c a.h");			/* header */
	expect_refused("gcc -E a.c");
	expect_refused("gcc -M -c a.c");
	expect_refused("gcc -MM -c a.c");
	expect_refused("gcc -c a.c -o x -o y");
	expect_refused("gcc -c a.c -o");
	expect_refused("gcc -c a.c -MF");
	expect_refused("gcc -x assembler -c a.c");
	expect_refused("gcc -x c-header -c a.c");
	expect_refused("gcc -c a.c -x");
	expect_refused("gcc -c a.c -I");
	expect_refused("clang -working-directory /x -c a.c");
}
END_TEST

START_TEST(plan_bolt)
{
	struct bc_jobplan_opts o;
	struct bc_jobplan plan;
	int rc;
	char *got;

	memset(&o, 0, sizeof(o));
	o.cwd = "/home/u/proj";
	o.tmpdir = "/tmp/boltccd_AbC123";
	o.is_clang = 1;
	o.want_dia = 1;
	got = plan_str("clang --serialize-diagnostics a.dia -g -c a.c -o a.o",
	    &o, &rc, &plan);
	ck_assert_int_eq(rc, BC_OK);
	ck_assert_str_eq(got, "clang -fdebug-compilation-dir=/home/u/proj "
	    "--serialize-diagnostics out.dia -g -c a.i -o out.o");
	ck_assert_str_eq(plan.dia_name, "out.dia");
	free(got);
	bc_jobplan_free(&plan);

	o.is_clang = 0;
	o.want_dia = 0;
	got = plan_str("gcc -g -c a.c -o a.o", &o, &rc, &plan);
	ck_assert_int_eq(rc, BC_OK);
	ck_assert_str_eq(got, "gcc -fdebug-prefix-map=/tmp/boltccd_AbC123="
	    "/home/u/proj -g -c a.i -o out.o");
	ck_assert_ptr_null(plan.dia_name);
	free(got);
	bc_jobplan_free(&plan);

	/* a relative CDIR is ignored */
	o.cwd = "relative";
	got = plan_str("gcc -c a.c", &o, &rc, &plan);
	ck_assert_str_eq(got, "gcc -c a.i -o out.o");
	free(got);
	bc_jobplan_free(&plan);
}
END_TEST

/* Random argv words drawn from a vocabulary: never crash, never leak,
 * and an accepted plan always has exactly one source and one -o. */
START_TEST(plan_mutations)
{
	static const char *const vocab[] = {
		"-c", "-S", "-E", "-o", "a.c", "b.cpp", "x.o", "-x", "c", "c++",
		"-MF", "-MD", "-MT", "-I", "-D", "--serialize-diagnostics",
		"-oout", "", "-", "-xc", "-MFx", "d.mm", "-g", "-O2", "a.i",
		"-Xclang", "-target", "-working-directory", "none", "\xff.c"
	};
	const size_t nv = sizeof(vocab) / sizeof(vocab[0]);
	unsigned seed = 12345;
	int iter;

	for (iter = 0; iter < 5000; iter++) {
		char *v[10], why[BC_ERRLEN];
		struct bc_jobplan plan;
		struct bc_jobplan_opts o;
		size_t n, i, outs = 0;

		memset(&o, 0, sizeof(o));
		o.want_dia = iter & 1;
		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 9;
		v[0] = (char *)"gcc";
		for (i = 1; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = (char *)vocab[(seed >> 16) % nv];
		}
		v[n] = NULL;
		if (bc_jobplan_argv(v, n, "gcc", &o, &plan, why) != BC_OK) {
			ck_assert_ptr_null(plan.argv.v);
			continue;
		}
		for (i = 0; i < plan.argv.n; i++)
			if (strcmp(plan.argv.v[i], "-o") == 0)
				outs++;
		ck_assert_int_eq(outs, 1);
		ck_assert_ptr_nonnull(plan.src_name);
		bc_jobplan_free(&plan);
	}
}
END_TEST

/* -S wins over -c in either order; -x none ends a -x; a lone "-" is not
 * a source. */
START_TEST(plan_modes)
{
	expect_plan("gcc -c -S a.c", "gcc -c -S a.i -o out.s", "a.i");
	expect_plan("gcc -S -c a.c", "gcc -S -c a.i -o out.s", "a.i");
	expect_plan("gcc -x c -x none -c a.c",
	    "gcc -x cpp-output -x none -c a.i -o out.o", "a.i");
	expect_plan("g++ -x none -c a.cc", "g++ -x none -c a.ii -o out.o",
	    "a.ii");
	expect_refused("gcc -c -");
	expect_refused("clang -working-directory=/x -c a.c");
}
END_TEST

/* WANT_DIA: clang gets a .dia of ours although the client sent no
 * --serialize-diagnostics; gcc cannot write one. */
START_TEST(plan_dia)
{
	struct bc_jobplan_opts o;
	struct bc_jobplan plan;
	int rc;
	char *got;

	memset(&o, 0, sizeof(o));
	o.want_dia = 1;
	o.is_clang = 1;
	got = plan_str("clang -c a.c", &o, &rc, &plan);
	ck_assert_int_eq(rc, BC_OK);
	ck_assert_str_eq(got, "clang -c a.i -o out.o "
	    "--serialize-diagnostics out.dia");
	ck_assert_str_eq(plan.dia_name, "out.dia");
	ck_assert_str_eq(plan.orig_src, "a.c");
	free(got);
	bc_jobplan_free(&plan);

	o.is_clang = 0;
	got = plan_str("gcc -c a.c", &o, &rc, &plan);
	ck_assert_int_eq(rc, BC_OK);
	ck_assert_str_eq(got, "gcc -c a.i -o out.o");
	ck_assert_ptr_null(plan.dia_name);
	free(got);
	bc_jobplan_free(&plan);
}
END_TEST

/* A refusal says why, with the argument escaped, and leaves no plan. */
START_TEST(plan_why)
{
	char b[] = "b\001.c";
	char *v[] = { "gcc", "-c", "a.c", b, NULL };
	char why[BC_ERRLEN];
	struct bc_jobplan_opts o;
	struct bc_jobplan plan;

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(bc_jobplan_argv(v, 4, "gcc", &o, &plan, why),
	    BC_ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(why, "more than one source file: 'b"));
	ck_assert_ptr_null(strchr(why, '\001'));
	ck_assert_ptr_null(plan.argv.v);
	ck_assert_ptr_null(plan.orig_src);
	ck_assert_int_eq(bc_jobplan_argv(v, 0, "gcc", &o, &plan, why),
	    BC_ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(why, "empty argv"));
	ck_assert_int_eq(bc_jobplan_argv(v, 2, "gcc", &o, &plan, why),
	    BC_ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(why, "no source file"));
	ck_assert_int_eq(bc_jobplan_argv(v + 1, 1, "gcc", &o, &plan, why),
	    BC_ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(why, "neither -c nor -S"));
}
END_TEST

static Suite *
jobplan_suite(void)
{
	Suite *s = suite_create("jobplan");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(tc, plan_rewrite);
	tcase_add_test(tc, plan_bolt);
	tcase_add_test(tc, plan_modes);
	tcase_add_test(tc, plan_dia);
	tcase_add_test(tc, plan_why);
	tcase_add_test(tc, plan_mutations);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	bc_log_silence();
	return bc_unit_run(jobplan_suite());
}
