/*
 * test_rsp.c - response files (client/rsp.c): splitting a response
 * file's text into words as gcc and clang do (quotes, escapes, NULs,
 * every case of a table and mutations of a golden file), and expanding
 * @file arguments (relative to the including file, then the current
 * directory; nesting and size limits, self-inclusion, missing files,
 * a FIFO that must not block).  Moved out of test_args.c.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/args.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"
#include "tests/unit/unit.h"

/* ---- helpers (split and join: unit.c) ------------------------------- */

static void
mkdir_in(const char *base, const char *name)
{
	char *p = xasprintf("%s/%s", base, name);

	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
}

/* ---- response files -------------------------------------------------- */

struct split_case {
	const char *text;
	size_t len;		/* 0: strlen */
	const char *words;	/* joined with '|'; "" = no words */
};

static const struct split_case split_cases[] = {
	{ "a b\tc\n d\r\n", 0, "a|b|c|d" },
	{ "'-DWITH_SPACE=a b'", 0, "-DWITH_SPACE=a b" },
	{ "-DQ=\\\"q\\\"", 0, "-DQ=\"q\"" },
	{ "\"a b\" 'c d'", 0, "a b|c d" },
	{ "\"x\\\"y\"", 0, "x\"y" },
	{ "'a\\b'", 0, "ab" },		/* gcc and clang: \ escapes in '' */
	{ "'it\\'s'", 0, "it's" },
	{ "a\\ b", 0, "a b" },
	{ "a\\\\b", 0, "a\\b" },
	{ "''", 0, "" },		/* one empty word: checked below */
	{ "\"unterminated word", 0, "unterminated word" },
	{ "trail\\", 0, "trail" },
	{ "a\0b", 3, "a" },
	{ "", 0, "" },
	{ "   \n\t ", 0, "" },
	{ "-std=gnu11 '-fmodules-cache-path=/x y/z'", 0,
	    "-std=gnu11|-fmodules-cache-path=/x y/z" },
	{ "a'b'c a\"b c\"d", 0, "abc|ab cd" },
	{ "\\'", 0, "'" },
	{ "'\"' \"'\"", 0, "\"|'" },
	{ "@nested.rsp -c", 0, "@nested.rsp|-c" },
};

START_TEST(test_split)
{
	const struct split_case *c = &split_cases[_i];
	struct bc_strv sv = BC_STRV_INIT;
	char err[BC_ERRLEN];
	size_t i, len = c->len != 0 ? c->len : strlen(c->text);
	char *got;

	ck_assert_int_eq(bc_args_split_rsp(c->text, len, &sv, err), BC_OK);
	got = xstrdup("");
	for (i = 0; i < sv.n; i++) {
		char *t = xasprintf("%s%s%s", got, i > 0 ? "|" : "", sv.v[i]);

		free(got);
		got = t;
	}
	ck_assert_msg(strcmp(got, c->words) == 0, "split '%s': '%s'", c->text,
	    got);
	if (strcmp(c->text, "''") == 0) {
		ck_assert_uint_eq(sv.n, 1);
		ck_assert_str_eq(sv.v[0], "");
	}
	if (c->words[0] == '\0' && strcmp(c->text, "''") != 0)
		ck_assert_uint_eq(sv.n, 0);
	free(got);
	bc_strv_free(&sv);
}
END_TEST

static char *tmpdir;

static void
rsp_setup(void)
{
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_rsp-", &tmpdir, err), BC_OK);
}

static void
rsp_teardown(void)
{
	ck_assert_int_eq(bc_rmtree(tmpdir), BC_OK);
	free(tmpdir);
	tmpdir = NULL;
}

static char *
put(const char *name, const char *body)
{
	char err[BC_ERRLEN];
	char *p = xasprintf("%s/%s", tmpdir, name);

	ck_assert_int_eq(bc_write_file_atomic(p, body, strlen(body), 0644,
	    err), BC_OK);
	return p;
}

static char *
expand_join(const char *cmd, int want_rc)
{
	struct bc_strv in, out = BC_STRV_INIT;
	char err[BC_ERRLEN] = "";
	char *s;
	int rc;

	bc_unit_split_rsp(cmd, &in);
	rc = bc_args_expand_rsp(&in, &out, err);
	ck_assert_msg(rc == want_rc, "expand '%s': rc %d (%s)", cmd, rc, err);
	if (rc != BC_OK) {
		ck_assert(err[0] != '\0');
		ck_assert_uint_eq(out.n, 0);
	}
	s = bc_unit_join(&out);
	bc_strv_free(&in);
	bc_strv_free(&out);
	return s;
}

START_TEST(test_expand_basic)
{
	char *f1, *f2, *cmd, *s;

	mkdir_in(tmpdir, "sub");
	f2 = put("sub/two.rsp", "-DB=2 '-DSP=a b'\n-DQ=\\\"q\\\"\n");
	f1 = put("one.rsp", "-DA=1 @sub/two.rsp -c");
	(void)f2;

	/* nested relative @file: looked up next to the including file */
	cmd = xasprintf("clang @%s x.c", f1);
	s = expand_join(cmd, BC_OK);
	ck_assert_str_eq(s, "clang -DA=1 -DB=2 -DSP=a b -DQ=\"q\" -c x.c");
	free(s);
	free(cmd);

	/* missing, bare '@', directory: literal */
	cmd = xasprintf("gcc @/nonexistent/x.rsp @ @%s -c a.c", tmpdir);
	s = expand_join(cmd, BC_OK);
	ck_assert_str_eq(s, cmd);
	free(s);
	free(cmd);

	/* argv[0] is never expanded */
	cmd = xasprintf("@%s -c", f1);
	s = expand_join(cmd, BC_OK);
	ck_assert_str_eq(s, cmd);
	free(s);
	free(cmd);

	/* empty file contributes nothing */
	free(f1);
	f1 = put("empty.rsp", "");
	cmd = xasprintf("gcc @%s -c a.c", f1);
	s = expand_join(cmd, BC_OK);
	ck_assert_str_eq(s, "gcc -c a.c");
	free(s);
	free(cmd);
	free(f1);
	free(f2);
}
END_TEST

START_TEST(test_expand_cwd_fallback)
{
	char cwd[PATH_MAX];
	char *f, *s, *cmd;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	mkdir_in(tmpdir, "d");
	free(put("inner.rsp", "-DINNER"));
	f = put("d/outer.rsp", "@inner.rsp -DOUTER");
	ck_assert_int_eq(chdir(tmpdir), 0);
	/* inner.rsp is not in d/, so it is found relative to the cwd */
	cmd = xasprintf("gcc @%s", f);
	s = expand_join(cmd, BC_OK);
	ck_assert_str_eq(s, "gcc -DINNER -DOUTER");
	free(s);
	free(cmd);
	/* top-level relative path */
	s = expand_join("gcc @inner.rsp", BC_OK);
	ck_assert_str_eq(s, "gcc -DINNER");
	free(s);
	ck_assert_int_eq(chdir(cwd), 0);
	free(f);
}
END_TEST

START_TEST(test_expand_depth)
{
	char name[32], body[64];
	char *cmd, *s, *p;
	int i;

	/* chain of BC_MAX_RSP_DEPTH files: fine */
	for (i = 0; i < BC_MAX_RSP_DEPTH; i++) {
		snprintf(name, sizeof(name), "c%d.rsp", i);
		if (i == BC_MAX_RSP_DEPTH - 1)
			snprintf(body, sizeof(body), "-DEND");
		else
			snprintf(body, sizeof(body), "-D%d @c%d.rsp", i, i + 1);
		free(put(name, body));
	}
	cmd = xasprintf("gcc @%s/c0.rsp", tmpdir);
	s = expand_join(cmd, BC_OK);
	ck_assert_ptr_nonnull(strstr(s, "-D14 -DEND"));
	free(s);
	free(cmd);

	/* one more level: rejected */
	p = put("deeper.rsp", "@c0.rsp");
	cmd = xasprintf("gcc @%s", p);
	s = expand_join(cmd, BC_ERR_LIMIT);
	free(s);
	free(cmd);
	free(p);

	/* a file that includes itself */
	p = put("self.rsp", "-DX @self.rsp");
	cmd = xasprintf("gcc @%s", p);
	s = expand_join(cmd, BC_ERR_LIMIT);
	free(s);
	free(cmd);
	free(p);

	/* exponential fan-out is cut off by the total budget */
	p = put("fan.rsp", "@fan.rsp @fan.rsp");
	cmd = xasprintf("gcc @%s", p);
	s = expand_join(cmd, BC_ERR_LIMIT);
	free(s);
	free(cmd);
	free(p);
}
END_TEST

START_TEST(test_expand_size)
{
	char err[BC_ERRLEN];
	char *big = xmalloc(BC_MAX_RSP_SIZE + 1);
	char *p, *cmd, *s;

	memset(big, 'a', BC_MAX_RSP_SIZE + 1);
	p = xasprintf("%s/big.rsp", tmpdir);
	ck_assert_int_eq(bc_write_file_atomic(p, big, BC_MAX_RSP_SIZE + 1, 0644,
	    err), BC_OK);
	cmd = xasprintf("gcc @%s", p);
	s = expand_join(cmd, BC_ERR_LIMIT);
	free(s);
	/* exactly at the limit: one long word */
	ck_assert_int_eq(bc_write_file_atomic(p, big, BC_MAX_RSP_SIZE, 0644,
	    err), BC_OK);
	s = expand_join(cmd, BC_OK);
	ck_assert_uint_eq(strlen(s), 4 + BC_MAX_RSP_SIZE);
	free(s);
	free(cmd);
	free(p);
	free(big);
}
END_TEST

START_TEST(test_expand_fifo)
{
	char *p = xasprintf("%s/fifo", tmpdir);
	char *cmd, *s;

	ck_assert_int_eq(mkfifo(p, 0600), 0);
	cmd = xasprintf("gcc @%s -c a.c", p);
	s = expand_join(cmd, BC_OK);	/* must not block */
	ck_assert_str_eq(s, cmd);
	free(s);
	free(cmd);
	free(p);
}
END_TEST

/* Quote a word so that GNU splitting gives it back. */
static void
quote_word(struct bc_strv *acc, const char *w)
{
	size_t n = strlen(w), i, k = 0;
	char *q = xmalloc(2 * n + 3);

	q[k++] = '\'';
	for (i = 0; i < n; i++) {
		if (w[i] == '\\' || w[i] == '\'')
			q[k++] = '\\';
		q[k++] = w[i];
	}
	q[k++] = '\'';
	q[k] = '\0';
	bc_strv_push_owned(acc, q);
}

static void
split_roundtrip(const char *text, size_t n)
{
	struct bc_strv a = BC_STRV_INIT, q = BC_STRV_INIT, b = BC_STRV_INIT;
	char err[BC_ERRLEN];
	char *joined;
	size_t i;

	ck_assert_int_eq(bc_args_split_rsp(text, n, &a, err), BC_OK);
	for (i = 0; i < a.n; i++) {
		ck_assert_ptr_nonnull(a.v[i]);
		quote_word(&q, a.v[i]);
	}
	joined = bc_unit_join(&q);
	ck_assert_int_eq(bc_args_split_rsp(joined, strlen(joined), &b, err),
	    BC_OK);
	ck_assert_uint_eq(a.n, b.n);
	for (i = 0; i < a.n; i++)
		ck_assert_str_eq(a.v[i], b.v[i]);
	free(joined);
	bc_strv_free(&a);
	bc_strv_free(&q);
	bc_strv_free(&b);
}

/* Mutations of a golden response file: always a clean split that
 * round-trips through quoting. */
START_TEST(test_split_mutations)
{
	static const char golden[] = "-target x86_64-apple-ios15.1-simulator "
	    "'-std=gnu11' -fobjc-arc \"-DQ=\\\"q\\\"\" -I/a\\ b\n"
	    "'-DWITH_SPACE=a b' @nested ''\t-O0 'it\\'s'";
	size_t n = sizeof(golden) - 1, i;
	char buf[sizeof(golden)];
	int bit, total = 0;

	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(buf, golden, sizeof(golden));
			buf[i] = (char)(buf[i] ^ (1 << bit));
			split_roundtrip(buf, n);
			total++;
		}
		split_roundtrip(golden, i);		/* cut the end */
		split_roundtrip(golden + i, n - i);	/* cut the start */
		total += 2;
	}
	ck_assert_int_gt(total, 1000);
}
END_TEST

static Suite *
rsp_suite(void)
{
	Suite *s = suite_create("rsp");
	TCase *tr = bc_tcase("rsp", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tr, rsp_setup, rsp_teardown);
	tcase_add_loop_test(tr, test_split, 0,
	    (int)(sizeof(split_cases) / sizeof(split_cases[0])));
	tcase_add_test(tr, test_expand_basic);
	tcase_add_test(tr, test_expand_cwd_fallback);
	tcase_add_test(tr, test_expand_depth);
	tcase_add_test(tr, test_expand_size);
	tcase_add_test(tr, test_expand_fifo);
	tcase_add_test(tr, test_split_mutations);
	suite_add_tcase(s, tr);
	return s;
}

int
main(void)
{
	return bc_unit_run(rsp_suite());
}
