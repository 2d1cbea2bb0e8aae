/*
 * test_deps.c - unit tests of the .d parser and re-wrapper (common/deps.c).
 *
 * The golden outputs below were captured from gcc 12.2 and clang 14 (Debian
 * 12) compiling a main.c that includes headers named with spaces, '$', '#',
 * a backslash and lengths around the wrap columns.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deps.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"
#include "daemon/pump.h"
#include "tests/unit/unit.h"

struct golden {
	int style;
	const char *what;
	const char *text;
};

static const struct golden goldens[] = {
	{ BC_DEPS_GCC, "gcc -MMD",
	    "o.o: main.c a.h with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h \\\n"
	    " dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h \\\n"
	    " dir\\ one/b\\\\\\ c.h zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h \\\n"
	    " qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h \\\n"
	    " m.h\n"
	    "" },
	{ BC_DEPS_GCC, "gcc -MMD -MP",
	    "o.o: main.c a.h with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h \\\n"
	    " dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h \\\n"
	    " dir\\ one/b\\\\\\ c.h zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h \\\n"
	    " qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h \\\n"
	    " m.h\n"
	    "a.h:\n"
	    "with\\ space.h:\n"
	    "dollar$$sign.h:\n"
	    "hash\\#mark.h:\n"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h:\n"
	    "dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h:\n"
	    "dir\\ one/b\\\\\\ c.h:\n"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h:\n"
	    "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h:\n"
	    "m.h:\n"
	    "" },
	{ BC_DEPS_GCC, "gcc -MMD -MT dependencies -MQ out $#.o -MT tttttttttttttttttttttttttttttttttttttttttttttttttt",
	    "dependencies tttttttttttttttttttttttttttttttttttttttttttttttttt \\\n"
	    " out\\ $$\\#.o: main.c a.h with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h \\\n"
	    " dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h \\\n"
	    " dir\\ one/b\\\\\\ c.h zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h \\\n"
	    " qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h \\\n"
	    " m.h\n"
	    "" },
	{ BC_DEPS_CLANG, "clang -MMD",
	    "o.o: main.c a.h with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    "  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h \\\n"
	    "  dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h \\\n"
	    "  dir\\ one/b/\\ c.h zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h \\\n"
	    "  qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h \\\n"
	    "  m.h\n"
	    "" },
	{ BC_DEPS_CLANG, "clang -MMD -MP",
	    "o.o: main.c a.h with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    "  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h \\\n"
	    "  dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h \\\n"
	    "  dir\\ one/b/\\ c.h zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h \\\n"
	    "  qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h \\\n"
	    "  m.h\n"
	    "\n"
	    "a.h:\n"
	    "\n"
	    "with\\ space.h:\n"
	    "\n"
	    "dollar$$sign.h:\n"
	    "\n"
	    "hash\\#mark.h:\n"
	    "\n"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h:\n"
	    "\n"
	    "dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h:\n"
	    "\n"
	    "dir\\ one/b/\\ c.h:\n"
	    "\n"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h:\n"
	    "\n"
	    "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h:\n"
	    "\n"
	    "m.h:\n"
	    "" },
	{ BC_DEPS_CLANG, "clang -MMD -MT dependencies -MQ out $#.o -MT tttttttttttttttttttttttttttttttttttttttttttttttttt",
	    "dependencies out\\ $$\\#.o \\\n"
	    "  tttttttttttttttttttttttttttttttttttttttttttttttttt: main.c a.h \\\n"
	    "  with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    "  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.h \\\n"
	    "  dir\\ one/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.h \\\n"
	    "  dir\\ one/b/\\ c.h zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.h \\\n"
	    "  qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.h \\\n"
	    "  m.h\n"
	    "" },
};
#define NGOLDEN (sizeof(goldens) / sizeof(goldens[0]))

/* The first rule on one line (continuations folded), phony rules kept. */
static char *
flatten(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *f = xmalloc(n + 1);

	for (i = 0; i < n; ) {
		if (s[i] == ' ' && s[i + 1] == '\\' && s[i + 2] == '\n') {
			i += 3;
			while (s[i] == ' ')
				i++;
			f[o++] = ' ';
			continue;
		}
		f[o++] = s[i++];
	}
	f[o] = '\0';
	return f;
}

static void
rewrap_eq(const char *in, int style, const char *want)
{
	struct bc_buf b;
	char err[BC_ERRLEN];

	bc_buf_init(&b, BC_MAX_DOTD);
	ck_assert_int_eq(bc_buf_put_str(&b, in), BC_OK);
	ck_assert_int_eq(bc_deps_rewrap(&b, style, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), strlen(want));
	ck_assert_int_eq(memcmp(bc_buf_data(&b), want, strlen(want)), 0);
	bc_buf_free(&b);
}

START_TEST(test_golden_roundtrip)
{
	const struct golden *g = &goldens[_i];
	struct bc_deps d;
	struct bc_buf out;
	char err[BC_ERRLEN];

	bc_deps_init(&d);
	bc_buf_init(&out, BC_MAX_DOTD);
	ck_assert_msg(bc_deps_parse(&d, (const uint8_t *)g->text,
	    strlen(g->text), err) == BC_OK, "%s: %s", g->what, err);
	ck_assert_uint_eq(d.ndeps, 11);		/* main.c + 10 headers */
	ck_assert_int_eq(bc_deps_write(&d, g->style, &out, err), BC_OK);
	ck_assert_msg(bc_buf_len(&out) == strlen(g->text) &&
	    memcmp(bc_buf_data(&out), g->text, strlen(g->text)) == 0,
	    "%s: re-written differs", g->what);
	ck_assert_int_eq(bc_deps_detect((const uint8_t *)g->text,
	    strlen(g->text)), g->style);
	bc_buf_free(&out);
	bc_deps_free(&d);
}
END_TEST

START_TEST(test_golden_from_flat)
{
	const struct golden *g = &goldens[_i];
	char *f = flatten(g->text);

	ck_assert_str_ne(f, g->text);
	rewrap_eq(f, g->style, g->text);
	/* re-wrapping is idempotent */
	rewrap_eq(g->text, g->style, g->text);
	free(f);
}
END_TEST

START_TEST(test_words)
{
	static const char in[] = "a\\ b.o c: x\\\\\\ y.h $$d \\#e.h\n";
	struct bc_deps d;
	char err[BC_ERRLEN];

	bc_deps_init(&d);
	ck_assert_int_eq(bc_deps_parse(&d, (const uint8_t *)in,
	    sizeof(in) - 1, err), BC_OK);
	ck_assert_uint_eq(d.ntargets, 2);
	ck_assert_uint_eq(d.ndeps, 3);
	ck_assert_uint_eq(d.targets[0].len, 6);
	ck_assert_uint_eq(d.targets[1].len, 1);
	ck_assert_uint_eq(d.deps[0].len, 8);
	ck_assert_int_eq(memcmp(bc_buf_data(&d.text) + d.deps[0].off,
	    "x\\\\\\ y.h", 8), 0);
	ck_assert_int_eq(d.phony, 0);
	bc_deps_free(&d);
}
END_TEST

START_TEST(test_rejects)
{
	static const char *bad[] = {
		"", "\n", "no colon here\n", "t: a.h",	/* no newline */
		": a.h\n", "t: a b\nb\n", "t: a b\nc:\n", "t: a b c\nb:\n",
		"t: a b\n\n\nb:\n", "t: a b\nb:\n\n", "t: a b\n b:\n",
		"t: a b\nb: x\n",
	};
	struct bc_deps d;
	char err[BC_ERRLEN];
	size_t i;

	bc_deps_init(&d);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(bc_deps_parse(&d, (const uint8_t *)bad[i],
		    strlen(bad[i]), err) == BC_ERR_INVAL, "accepted #%zu", i);
	ck_assert_int_eq(bc_deps_detect((const uint8_t *)"t: a\nx", 6), 0);
	bc_deps_free(&d);
}
END_TEST

START_TEST(test_limit_words)
{
	struct bc_buf b;
	struct bc_deps d;
	char err[BC_ERRLEN];
	size_t i;

	bc_buf_init(&b, BC_MAX_DOTD);
	ck_assert_int_eq(bc_buf_put_str(&b, "t:"), BC_OK);
	for (i = 0; i < BC_MAX_DEPS_WORDS; i++)
		ck_assert_int_eq(bc_buf_put_str(&b, " a"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&b, "\n"), BC_OK);
	bc_deps_init(&d);
	ck_assert_int_eq(bc_deps_parse(&d, bc_buf_data(&b), bc_buf_len(&b),
	    err), BC_ERR_LIMIT);
	bc_deps_free(&d);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_style_for)
{
	char *dir, *f, *path;
	FILE *fp;

	ck_assert_int_eq(bc_deps_style_for("clang", NULL), BC_DEPS_CLANG);
	ck_assert_int_eq(bc_deps_style_for("/usr/bin/clang-14", NULL),
	    BC_DEPS_CLANG);
	ck_assert_int_eq(bc_deps_style_for("clang++", NULL), BC_DEPS_CLANG);
	ck_assert_int_eq(bc_deps_style_for("gcc", NULL), BC_DEPS_GCC);
	ck_assert_int_eq(bc_deps_style_for("x86_64-linux-gnu-g++-12", NULL),
	    BC_DEPS_GCC);
	ck_assert_int_eq(bc_deps_style_for(NULL, NULL), BC_DEPS_GCC);
	/* a bare cc is looked up on the PATH value given, not the
	 * environment's: there it is clang */
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_deps-", &dir,
	    NULL), BC_OK);
	f = xasprintf("%s/clang-17", dir);
	ck_assert_ptr_nonnull(fp = fopen(f, "w"));
	fclose(fp);
	ck_assert_int_eq(chmod(f, 0755), 0);
	free(f);
	f = xasprintf("%s/cc", dir);
	ck_assert_int_eq(symlink("clang-17", f), 0);
	path = xasprintf("/nonexistent:%s", dir);
	ck_assert_int_eq(bc_deps_style_for("cc", path), BC_DEPS_CLANG);
	ck_assert_int_eq(bc_deps_style_for("cc", "/nonexistent"),
	    BC_DEPS_GCC);
	(void)bc_rmtree(dir);
	free(path);
	free(f);
	free(dir);
}
END_TEST

/* The .d of g with every dependency behind prefix pre, as its compiler
 * would have wrapped it (the writer is checked against the goldens). */
static void
prefixed(const struct golden *g, const char *pre, struct bc_buf *out)
{
	struct bc_deps d;
	struct bc_buf flat;
	char err[BC_ERRLEN];
	size_t i;

	bc_deps_init(&d);
	bc_buf_init(&flat, BC_MAX_DOTD);
	ck_assert_int_eq(bc_deps_parse(&d, (const uint8_t *)g->text,
	    strlen(g->text), err), BC_OK);
	for (i = 0; i < d.ntargets; i++)
		ck_assert_int_eq(bc_buf_putf(&flat, "%s%.*s", i ? " " : "",
		    (int)d.targets[i].len, bc_buf_data(&d.text) +
		    d.targets[i].off), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&flat, ":"), BC_OK);
	for (i = 0; i < d.ndeps; i++)
		ck_assert_int_eq(bc_buf_putf(&flat, " %s%.*s", pre,
		    (int)d.deps[i].len, bc_buf_data(&d.text) + d.deps[i].off),
		    BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&flat, "\n"), BC_OK);
	for (i = 1; d.phony && i < d.ndeps; i++)
		ck_assert_int_eq(bc_buf_putf(&flat, "%s%s%.*s:\n",
		    d.phony_blank ? "\n" : "", pre, (int)d.deps[i].len,
		    bc_buf_data(&d.text) + d.deps[i].off), BC_OK);
	ck_assert_int_eq(bc_deps_parse(&d, bc_buf_data(&flat),
	    bc_buf_len(&flat), err), BC_OK);
	ck_assert_int_eq(bc_deps_write(&d, g->style, out, err), BC_OK);
	bc_buf_free(&flat);
	bc_deps_free(&d);
}

/* The daemon strips its temp root and re-wraps (daemon/pump.c). */
START_TEST(test_fix_deps_rewraps)
{
	const struct golden *g = &goldens[_i];
	static const char root[] = "/tmp/boltccd-job-123456/root";
	struct bc_buf want, in;

	bc_buf_init(&want, BC_MAX_DOTD);
	bc_buf_init(&in, BC_MAX_DOTD);
	prefixed(g, "/src/", &want);
	prefixed(g, "/tmp/boltccd-job-123456/root/src/", &in);
	ck_assert_int_eq(bc_deps_detect(bc_buf_data(&in), bc_buf_len(&in)),
	    g->style);
	bc_pump_fix_deps(root, &in);
	ck_assert_msg(bc_buf_len(&in) == bc_buf_len(&want) &&
	    memcmp(bc_buf_data(&in), bc_buf_data(&want),
	    bc_buf_len(&in)) == 0, "%s: stripped .d not re-wrapped",
	    g->what);
	bc_buf_free(&in);
	bc_buf_free(&want);
}
END_TEST

/* Bit flips, byte flips and truncations of every golden: a clean result
 * (parsed or rejected), and a parsed one writes back without error. */
START_TEST(test_mutations)
{
	const struct golden *g = &goldens[_i];
	size_t n = strlen(g->text), i, bit;
	uint8_t *m = xmalloc(n);
	struct bc_deps d;
	struct bc_buf out;
	char err[BC_ERRLEN];
	int r;

	bc_deps_init(&d);
	bc_buf_init(&out, BC_MAX_DOTD);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 9; bit++) {
			memcpy(m, g->text, n);
			m[i] = bit < 8 ? (uint8_t)(m[i] ^ (1u << bit)) :
			    (uint8_t)~m[i];
			r = bc_deps_parse(&d, m, n, err);
			ck_assert(r == BC_OK || r == BC_ERR_INVAL);
			if (r == BC_OK) {
				bc_buf_reset(&out);
				ck_assert_int_eq(bc_deps_write(&d, g->style,
				    &out, err), BC_OK);
			}
			(void)bc_deps_detect(m, n);
		}
		r = bc_deps_parse(&d, (const uint8_t *)g->text, i, err);
		ck_assert(r == BC_OK || r == BC_ERR_INVAL);
		r = bc_deps_parse(&d, (const uint8_t *)g->text + i, n - i,
		    err);
		ck_assert(r == BC_OK || r == BC_ERR_INVAL);
	}
	free(m);
	bc_buf_free(&out);
	bc_deps_free(&d);
}
END_TEST

static Suite *
deps_suite(void)
{
	Suite *s = suite_create("deps");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT_SLOW);

	tcase_add_loop_test(tc, test_golden_roundtrip, 0, (int)NGOLDEN);
	tcase_add_loop_test(tc, test_golden_from_flat, 0, (int)NGOLDEN);
	tcase_add_loop_test(tc, test_fix_deps_rewraps, 0, (int)NGOLDEN);
	tcase_add_loop_test(tc, test_mutations, 0, (int)NGOLDEN);
	tcase_add_test(tc, test_words);
	tcase_add_test(tc, test_rejects);
	tcase_add_test(tc, test_limit_words);
	tcase_add_test(tc, test_style_for);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(deps_suite());
}
