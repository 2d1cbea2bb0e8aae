/*
 * test_preproc.c - the pump-mode scanner: directive lexer, header maps,
 * search-path model, include closure with its fallbacks, and the
 * persistent memo.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/util.h"
#include "preproc/hmap.h"
#include "preproc/lex.h"
#include "preproc/memo.h"
#include "preproc/scan.h"
#include "preproc/search.h"
#include "tests/unit/unit.h"

static struct bc_pp_dirs D;

static size_t
lex(const char *text)
{
	bc_pp_dirs_free(&D);
	ck_assert_int_eq(bc_pp_lex(text, strlen(text), &D, NULL), BC_OK);
	return D.n;
}

static void
expect(size_t i, int kind, int angled, const char *name)
{
	ck_assert_uint_gt(D.n, i);
	ck_assert_int_eq(D.v[i].kind, kind);
	ck_assert_int_eq(D.v[i].angled, angled);
	if (name == NULL) {
		ck_assert_int_eq(D.v[i].computed, 1);
		ck_assert_ptr_null(D.v[i].name);
	} else if (name[0] == '=') {	/* computed, with a macro name */
		ck_assert_int_eq(D.v[i].computed, 1);
		ck_assert_str_eq(D.v[i].name, name + 1);
	} else {
		ck_assert_int_eq(D.v[i].computed, 0);
		ck_assert_str_eq(D.v[i].name, name);
	}
}

START_TEST(test_lex_basic)
{
	ck_assert_uint_eq(lex("#include <stdio.h>\n#include \"a.h\"\n"
	    "  #  include_next <b.h>\n#import \"c.h\"\n"), 4);
	expect(0, BC_PP_INCLUDE, 1, "stdio.h");
	expect(1, BC_PP_INCLUDE, 0, "a.h");
	expect(2, BC_PP_INCLUDE_NEXT, 1, "b.h");
	expect(3, BC_PP_IMPORT, 0, "c.h");
	ck_assert_uint_eq(D.v[2].line, 3);
	/* no trailing newline, digraph, comment between # and include */
	ck_assert_uint_eq(lex("%:include <d.h>\n#/*x*/include/**/\"e.h\""), 2);
	expect(0, BC_PP_INCLUDE, 1, "d.h");
	expect(1, BC_PP_INCLUDE, 0, "e.h");
	/* header names keep backslashes and // literally */
	ck_assert_uint_eq(lex("#include <a//b.h>\n#include \"c\\d.h\"\n"), 2);
	expect(0, BC_PP_INCLUDE, 1, "a//b.h");
	expect(1, BC_PP_INCLUDE, 0, "c\\d.h");
}
END_TEST

START_TEST(test_lex_not_directives)
{
	/* inside comments and literals, or not first on the line */
	ck_assert_uint_eq(lex("/* #include <a.h> */\n"
	    "// #include <b.h>\n"
	    "const char *s = \"#include <c.h>\";\n"
	    "char c = '#'; int x; #include <d.h>\n"
	    "x = 1; /* multi\n#include <e.h>\n*/\n"
	    "const char *r = R\"xy(\n#include <f.h>\n)\" )xy\";\n"
	    "const char *r2 = u8R\"(\n#include <g.h>\n)\";\n"
	    "s = \"unterminated\n#include <h.h>\n"), 1);
	expect(0, BC_PP_INCLUDE, 1, "h.h");
	/* digit separators are not char literals */
	ck_assert_uint_eq(lex("int n = 1'000'000;\n#include <i.h>\n"
	    "double d = 0x1p-3'0; char q = 'a';\n#include <j.h>\n"), 2);
	expect(0, BC_PP_INCLUDE, 1, "i.h");
	expect(1, BC_PP_INCLUDE, 1, "j.h");
	/* #define of an include-like text is not an include (but is
	 * reported as a definition for computed includes) */
	ck_assert_uint_eq(lex("#define X <k.h>\n#error don't\n#include <l.h>\n"
	    "#define Y \"m.h\" // c\n#define Z 3\n#define F(x) <x>\n"), 4);
	expect(0, BC_PP_DEFINE, 1, "X k.h");
	expect(1, BC_PP_INCLUDE, 1, "l.h");
	expect(2, BC_PP_DEFINE, 0, "Y m.h");
	expect(3, BC_PP_DEFINE, 0, "=Z");
}
END_TEST

START_TEST(test_lex_continuations)
{
	ck_assert_uint_eq(lex("#inc\\\nlude <a.h>\n"
	    "# \\\r\n include \"b\\\n.h\"\n"
	    "// comment \\\n#include <c.h>\n"
	    "/\\\n* comment *\\\n/ #include <d.h>\n"), 3);
	expect(0, BC_PP_INCLUDE, 1, "a.h");
	expect(1, BC_PP_INCLUDE, 0, "b.h");
	expect(2, BC_PP_INCLUDE, 1, "d.h");
	/* a comment before # keeps the line start */
	ck_assert_uint_eq(lex("/* a */ # include <e.h>\n"
	    "/* spans\n lines */ #include <f.h>\n"), 2);
}
END_TEST

START_TEST(test_lex_computed_and_has_include)
{
	ck_assert_uint_eq(lex("#include MACRO\n#include <unterminated\n"
	    "#if __has_include(<x.h>) && defined(__has_include)\n"
	    "#elif __has_include_next ( \"y.h\" )\n"
	    "#if __has_include(HDR)\n"
	    "#define H __has_include(<z.h>)\n"), 6);
	expect(0, BC_PP_INCLUDE, 0, "=MACRO");
	expect(1, BC_PP_INCLUDE, 0, NULL);
	expect(2, BC_PP_HAS_INCLUDE, 1, "x.h");
	expect(3, BC_PP_HAS_INCLUDE_NEXT, 0, "y.h");
	expect(4, BC_PP_HAS_INCLUDE, 0, NULL);
	expect(5, BC_PP_DEFINE, 0, "=H");
}
END_TEST

START_TEST(test_lex_mutations)
{
	static const char golden[] = "#include <a.h>\n/* c */ #include \"b.h\"\n"
	    "R\"x(#include <c.h>)x\" '\\'' \"\\\"\" 1'2\n#if __has_include(<d>)\n"
	    "#include_next <e.h>\\\n\n";
	size_t n = sizeof(golden) - 1, i, b;
	char *m = xmalloc(n);

	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++) {
			memcpy(m, golden, n);
			m[i] ^= (char)(1 << b);
			bc_pp_dirs_free(&D);
			ck_assert_int_eq(bc_pp_lex(m, n, &D, NULL), BC_OK);
		}
	for (i = 0; i <= n; i++) {
		bc_pp_dirs_free(&D);
		ck_assert_int_eq(bc_pp_lex(golden, i, &D, NULL), BC_OK);
		bc_pp_dirs_free(&D);
		ck_assert_int_eq(bc_pp_lex(golden + i, n - i, &D, NULL), BC_OK);
	}
	free(m);
}
END_TEST

/* --- header maps ------------------------------------------------------ */

static void
put32(unsigned char *p, uint32_t v, int big)
{
	int i;

	for (i = 0; i < 4; i++)
		p[big ? 3 - i : i] = (unsigned char)(v >> (8 * i));
}

static uint32_t
hkey(const char *k)
{
	uint32_t h = 0;

	for (; *k; k++)
		h += (uint32_t)((*k >= 'A' && *k <= 'Z') ? *k + 32 : *k) * 13;
	return h;
}

/* A writer following xcode.md 4 (keys/prefix/suffix, 8 buckets). */
static size_t
mkhmap(unsigned char *out, int big, const char *const *kv, size_t n)
{
	unsigned char strtab[1024];
	size_t sl = 1, i, nb = 8, so = 24 + 12 * nb;

	memset(out, 0, so);
	strtab[0] = 0;
	memcpy(out, big ? "hmap" : "pamh", 4);
	out[big ? 5 : 4] = 1;
	put32(out + 8, (uint32_t)so, big);
	put32(out + 12, (uint32_t)n, big);
	put32(out + 16, (uint32_t)nb, big);
	for (i = 0; i < n; i++) {
		const char *k = kv[2 * i], *v = kv[2 * i + 1];
		const char *sl2 = strrchr(v, '/');
		size_t b = hkey(k) & (nb - 1), pl = sl2 ? (size_t)(sl2 - v + 1) : 0;
		uint32_t ko, po, xo;

		while (out[24 + 12 * b] || out[25 + 12 * b] ||
		    out[26 + 12 * b] || out[27 + 12 * b])
			b = (b + 1) & (nb - 1);
		ko = (uint32_t)sl;
		memcpy(strtab + sl, k, strlen(k) + 1);
		sl += strlen(k) + 1;
		po = (uint32_t)sl;
		memcpy(strtab + sl, v, pl);
		strtab[sl + pl] = 0;
		sl += pl + 1;
		xo = (uint32_t)sl;
		memcpy(strtab + sl, v + pl, strlen(v + pl) + 1);
		sl += strlen(v + pl) + 1;
		put32(out + 24 + 12 * b, ko, big);
		put32(out + 28 + 12 * b, po, big);
		put32(out + 32 + 12 * b, xo, big);
	}
	memcpy(out + so, strtab, sl);
	return so + sl;
}

START_TEST(test_hmap_lookup)
{
	static const char *const kv[] = { "Foo.h", "/abs/dir/Foo.h",
	    "MyLib/Bar.h", "/abs/lib/Bar.h", "Baz.h", "MyLib/Bar.h" };
	unsigned char img[2048];
	struct bc_hmap m;
	char *out;
	int big;

	for (big = 0; big < 2; big++) {
		size_t n = mkhmap(img, big, kv, 3);

		ck_assert(bc_hmap_is_hmap(img, n));
		ck_assert_int_eq(bc_hmap_load_mem(&m, img, n, NULL), BC_OK);
		ck_assert_int_eq(m.swap, big);
		ck_assert_int_eq(bc_hmap_lookup(&m, "Foo.h", &out), BC_OK);
		ck_assert_str_eq(out, "/abs/dir/Foo.h");
		free(out);
		ck_assert_int_eq(bc_hmap_lookup(&m, "FOO.H", &out), BC_OK);
		ck_assert_str_eq(out, "/abs/dir/Foo.h");
		free(out);
		ck_assert_int_eq(bc_hmap_lookup(&m, "mylib/bar.h", &out), BC_OK);
		ck_assert_str_eq(out, "/abs/lib/Bar.h");
		free(out);
		ck_assert_int_eq(bc_hmap_lookup(&m, "Baz.h", &out), BC_OK);
		ck_assert_str_eq(out, "MyLib/Bar.h");
		free(out);
		ck_assert_int_eq(bc_hmap_lookup(&m, "Nope.h", &out),
		    BC_ERR_NOENT);
		bc_hmap_free(&m);
	}
}
END_TEST

START_TEST(test_hmap_invalid)
{
	static const char *const kv[] = { "a.h", "/x/a.h" };
	unsigned char img[1024], mut[1024];
	struct bc_hmap m;
	size_t n = mkhmap(img, 0, kv, 1), i, b;
	char *out;

	ck_assert_int_eq(bc_hmap_load_mem(&m, img, 24, NULL), BC_ERR_CORRUPT);
	memcpy(mut, img, n);
	mut[4] = 2;	/* version */
	ck_assert_int_ne(bc_hmap_load_mem(&m, mut, n, NULL), BC_OK);
	memcpy(mut, img, n);
	put32(mut + 16, 6, 0);	/* not a power of two */
	ck_assert_int_ne(bc_hmap_load_mem(&m, mut, n, NULL), BC_OK);
	memcpy(mut, img, n);
	put32(mut + 16, 1u << 20, 0);	/* more buckets than the file */
	ck_assert_int_ne(bc_hmap_load_mem(&m, mut, n, NULL), BC_OK);
	/* deterministic mutation loop: never crashes, lookups bounded */
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++) {
			memcpy(mut, img, n);
			mut[i] ^= (unsigned char)(1 << b);
			if (bc_hmap_load_mem(&m, mut, n, NULL) == BC_OK) {
				out = NULL;
				(void)bc_hmap_lookup(&m, "a.h", &out);
				free(out);
				bc_hmap_free(&m);
			}
		}
	for (i = 0; i <= n; i++) {
		if (bc_hmap_load_mem(&m, img, i, NULL) == BC_OK) {
			out = NULL;
			(void)bc_hmap_lookup(&m, "a.h", &out);
			free(out);
			bc_hmap_free(&m);
		}
	}
}
END_TEST

/* --- search and scan on a temp tree ----------------------------------- */

static char *T;

static void
wr(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", T, rel), *d = xstrdup(p);

	*strrchr(d, '/') = '\0';
	ck_assert_int_eq(bc_mkdir_p(d, 0755, NULL), BC_OK);
	ck_assert_int_eq(bc_write_file_atomic(p, text, strlen(text), 0644,
	    NULL), BC_OK);
	free(d);
	free(p);
}

static char *
tp(const char *rel)
{
	return xasprintf("%s/%s", T, rel);
}

static void
mktree(void)
{
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "pptest_", &T, NULL),
	    BC_OK);
	wr("src/main.c", "#include \"local.h\"\n#include <angled.h>\n"
	    "#include <sys1.h>\n#include <Fw/Api.h>\n#if 0\n#include \"gone.h\"\n"
	    "#endif\n");
	wr("src/local.h", "#include \"q.h\"\n");
	wr("quote/q.h", "/* found through -iquote */\n");
	wr("quote/angled.h", "#error not for angled\n");
	wr("inc1/angled.h", "#include_next <angled.h>\n");
	wr("inc2/angled.h", "/* second */\n");
	wr("sys/sys1.h", "#include <not_followed.h>\n");
	wr("fw/Fw.framework/Headers/Api.h", "#include <Fw/Priv.h>\n");
	wr("fw/Fw.framework/PrivateHeaders/Priv.h", "\n");
}

static void
rmtree(void)
{
	(void)bc_rmtree(T);
	free(T);
}

static void
base_search(struct bc_pp_search *s)
{
	char *q = tp("quote"), *i1 = tp("inc1"), *i2 = tp("inc2"),
	    *sy = tp("sys"), *fw = tp("fw");

	bc_pp_search_init(s);
	bc_pp_search_add(s, q, BC_PP_ENT_DIR, 0, 1);
	bc_pp_search_add(s, i1, BC_PP_ENT_DIR, 0, 0);
	bc_pp_search_add(s, i2, BC_PP_ENT_DIR, 0, 0);
	bc_pp_search_add(s, fw, BC_PP_ENT_FRAMEWORK, 0, 0);
	bc_pp_search_add(s, sy, BC_PP_ENT_DIR, 1, 0);
	free(q);
	free(i1);
	free(i2);
	free(sy);
	free(fw);
}

START_TEST(test_resolve)
{
	struct bc_pp_search s;
	char *out, *src, *exp;
	long idx;

	mktree();
	src = tp("src");
	base_search(&s);
	/* quoted: includer dir first */
	ck_assert_int_eq(bc_pp_resolve(&s, "local.h", 0, src, -1, &out, &idx),
	    BC_OK);
	ck_assert_int_eq(idx, -1);
	free(out);
	/* quoted: then -iquote */
	ck_assert_int_eq(bc_pp_resolve(&s, "q.h", 0, src, -1, &out, &idx),
	    BC_OK);
	ck_assert_int_eq(idx, 0);
	free(out);
	/* angled skips -iquote and the includer dir */
	ck_assert_int_eq(bc_pp_resolve(&s, "angled.h", 1, src, -1, &out, &idx),
	    BC_OK);
	ck_assert_int_eq(idx, 1);
	exp = tp("inc1/angled.h");
	ck_assert_str_eq(out, exp);
	free(exp);
	free(out);
	ck_assert_int_eq(bc_pp_resolve(&s, "q.h", 1, src, -1, &out, &idx),
	    BC_ERR_NOENT);
	/* #include_next continues after the includer's entry */
	ck_assert_int_eq(bc_pp_resolve(&s, "angled.h", 1, NULL, 1, &out, &idx),
	    BC_OK);
	ck_assert_int_eq(idx, 2);
	free(out);
	ck_assert_int_eq(bc_pp_resolve(&s, "angled.h", 1, NULL, 2, &out, &idx),
	    BC_ERR_NOENT);
	/* frameworks: Headers, then PrivateHeaders */
	ck_assert_int_eq(bc_pp_resolve(&s, "Fw/Api.h", 1, NULL, -1, &out,
	    &idx), BC_OK);
	exp = tp("fw/Fw.framework/Headers/Api.h");
	ck_assert_str_eq(out, exp);
	free(exp);
	free(out);
	ck_assert_int_eq(bc_pp_resolve(&s, "Fw/Priv.h", 1, NULL, -1, &out,
	    &idx), BC_OK);
	exp = tp("fw/Fw.framework/PrivateHeaders/Priv.h");
	ck_assert_str_eq(out, exp);
	free(exp);
	free(out);
	ck_assert_int_eq(bc_pp_resolve(&s, "Api.h", 1, NULL, -1, &out, &idx),
	    BC_ERR_NOENT);
	bc_pp_search_free(&s);
	free(src);
	rmtree();
}
END_TEST

START_TEST(test_resolve_hmap)
{
	unsigned char img[2048];
	const char *kv[6];
	struct bc_pp_search s;
	char *hm, *a, *b, *out, *dangling;
	size_t n;
	long idx;

	mktree();
	wr("hm/real/Foo.h", "\n");
	wr("hm/lib/Bar.h", "\n");
	wr("inc2/Dangle.h", "\n");
	a = tp("hm/real/Foo.h");
	b = tp("hm/lib/Bar.h");
	dangling = tp("nowhere/Dangle.h");
	kv[0] = "Foo.h"; kv[1] = a;
	kv[2] = "MyLib/Bar.h"; kv[3] = b;
	kv[4] = "Dangle.h"; kv[5] = dangling;
	n = mkhmap(img, 0, kv, 3);
	hm = tp("t.hmap");
	ck_assert_int_eq(bc_write_file_atomic(hm, img, n, 0644, NULL), BC_OK);
	bc_pp_search_init(&s);
	bc_pp_search_add(&s, hm, BC_PP_ENT_HMAP, 0, 1);
	{
		char *i2 = tp("inc2");

		bc_pp_search_add(&s, i2, BC_PP_ENT_DIR, 0, 0);
		free(i2);
	}
	ck_assert_int_eq(bc_pp_resolve(&s, "foo.h", 0, NULL, -1, &out, &idx),
	    BC_OK);
	ck_assert_str_eq(out, a);
	ck_assert_int_eq(idx, 0);
	free(out);
	ck_assert_int_eq(bc_pp_resolve(&s, "MyLib/Bar.h", 0, NULL, -1, &out,
	    &idx), BC_OK);
	ck_assert_str_eq(out, b);
	free(out);
	/* a dangling value keeps searching */
	ck_assert_int_eq(bc_pp_resolve(&s, "Dangle.h", 0, NULL, -1, &out,
	    &idx), BC_OK);
	ck_assert_int_eq(idx, 1);
	free(out);
	bc_pp_search_free(&s);
	/* built from argv: -iquote X.hmap is a map, -I X.hmap too */
	{
		char *av[6];
		const char *fb;
		char *iq = xasprintf("-iquote%s", hm);

		av[0] = "cc"; av[1] = iq; av[2] = "-c"; av[3] = "x.c";
		av[4] = NULL;
		bc_pp_search_init(&s);
		ck_assert_int_eq(bc_pp_search_build(&s, av, 4, "c", NULL, NULL,
		    0, &fb, NULL), BC_OK);
		ck_assert_uint_eq(s.n, 1);
		ck_assert_int_eq(s.v[0].kind, BC_PP_ENT_HMAP);
		ck_assert_ptr_nonnull(s.v[0].hmap);
		ck_assert_uint_eq(s.user_dirs.n, 0);
		bc_pp_search_free(&s);
		free(iq);
	}
	free(hm);
	free(a);
	free(b);
	free(dangling);
	rmtree();
}
END_TEST

START_TEST(test_search_build_order)
{
	char *av[] = { "gcc", "-Ia", "-iquote", "q", "-isystem", "s", "-F",
	    "fw", "-I", "b", "-idirafter", "z", "-iframework", "sfw",
	    "--sysroot=/sr", "-I=/inc", "-include", "pre.h", "-D", "-Inot",
	    "-c", "x.c", NULL };
	struct bc_pp_search s;
	const char *fb;
	static const char *const want[] = { "q", "a", "fw", "b", "/sr/inc",
	    "s", "sfw", "z" };
	size_t i;

	bc_pp_search_init(&s);
	ck_assert_int_eq(bc_pp_search_build(&s, av, 22, "c", NULL, NULL, 0, &fb,
	    NULL), BC_OK);
	ck_assert_ptr_null(fb);
	ck_assert_uint_eq(s.n, 8);
	ck_assert_uint_eq(s.quote_end, 1);
	for (i = 0; i < 8; i++)
		ck_assert_str_eq(s.v[i].path, want[i]);
	ck_assert_int_eq(s.v[2].kind, BC_PP_ENT_FRAMEWORK);
	ck_assert_int_eq(s.v[6].kind, BC_PP_ENT_FRAMEWORK);
	ck_assert_uint_eq(s.forced.n, 1);
	ck_assert_str_eq(s.forced.v[0], "pre.h");
	ck_assert_str_eq(s.sysroot, "/sr");
	bc_pp_search_free(&s);
}
END_TEST

START_TEST(test_search_fallbacks)
{
	char *a1[] = { "clang", "-ivfsoverlay", "o.yaml", "-c", "x.c", NULL };
	char *a2[] = { "gcc", "-iprefix", "/p", "-c", "x.c", NULL };
	char *a3[] = { "gcc", "-Xclang", "-I/x", "-c", "x.c", NULL };
	struct bc_pp_search s;
	const char *fb;

	bc_pp_search_init(&s);
	ck_assert_int_eq(bc_pp_search_build(&s, a1, 5, "c", NULL, NULL, 0, &fb,
	    NULL), BC_ERR_NOTSUP);
	ck_assert_str_eq(fb, "ivfsoverlay");
	bc_pp_search_free(&s);
	ck_assert_int_eq(bc_pp_search_build(&s, a2, 5, "c", NULL, NULL, 0, &fb,
	    NULL), BC_ERR_NOTSUP);
	ck_assert_str_eq(fb, "unmodelled-option");
	bc_pp_search_free(&s);
	ck_assert_int_eq(bc_pp_search_build(&s, a3, 5, "c", NULL, NULL, 0, &fb,
	    NULL), BC_ERR_NOTSUP);
	bc_pp_search_free(&s);
	/* CPATH & co, as the client's configuration read them */
	ck_assert_int_eq(bc_pp_search_build(&s, a2 + 0, 1, "c", NULL, NULL,
	    1, &fb, NULL), BC_ERR_NOTSUP);
	ck_assert_str_eq(fb, "cpath-env");
	bc_pp_search_free(&s);
}
END_TEST

START_TEST(test_parse_verbose)
{
	static const char gcc[] = "ignoring nonexistent directory \"/x\"\n"
	    "#include \"...\" search starts here:\n"
	    "#include <...> search starts here:\n"
	    " /usr/lib/gcc/x86_64-linux-gnu/12/include\n"
	    " /usr/local/include\n /usr/include\nEnd of search list.\n";
	static const char clang[] = "#include <...> search starts here:\n"
	    " /usr/include\n /Sys/Library/Frameworks (framework directory)\n"
	    "End of search list.\n";
	struct bc_strv d = BC_STRV_INIT, f = BC_STRV_INIT;

	ck_assert_int_eq(bc_pp_parse_verbose(gcc, strlen(gcc), &d, &f), BC_OK);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_str_eq(d.v[0], "/usr/lib/gcc/x86_64-linux-gnu/12/include");
	ck_assert_str_eq(d.v[2], "/usr/include");
	ck_assert_uint_eq(f.n, 0);
	bc_strv_free(&d);
	ck_assert_int_eq(bc_pp_parse_verbose(clang, strlen(clang), &d, &f),
	    BC_OK);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_uint_eq(f.n, 1);
	ck_assert_str_eq(f.v[0], "/Sys/Library/Frameworks");
	bc_strv_free(&d);
	bc_strv_free(&f);
	ck_assert_int_eq(bc_pp_parse_verbose("nothing", 7, &d, &f),
	    BC_ERR_NOENT);
}
END_TEST

START_TEST(test_default_dirs_real_compiler)
{
	char *av[] = { "gcc", "-c", "x.c", NULL };
	struct bc_pp_search s;
	const char *fb;
	char *state;
	size_t i;
	int sys = 0;

	if (access("/usr/bin/gcc", X_OK) != 0)
		return;
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "ppstate_", &state, NULL),
	    BC_OK);
	for (i = 0; i < 2; i++) {	/* second time from the cache */
		size_t k;

		bc_pp_search_init(&s);
		ck_assert_int_eq(bc_pp_search_build(&s, av, 3, "c",
		    "/usr/bin/gcc", state, 0, &fb, NULL), BC_OK);
		for (k = 0; k < s.sysdirs.n; k++)
			if (strcmp(s.sysdirs.v[k], "/usr/include") == 0)
				sys = 1;
		ck_assert_int_eq(sys, 1);
		bc_pp_search_free(&s);
	}
	(void)bc_rmtree(state);
	free(state);
}
END_TEST

/* A compiler that cannot list its search dirs is asked once, not on every
 * job, until it changes. */
START_TEST(test_default_dirs_failure_remembered)
{
	char *av[] = { "cc", "-c", "x.c", NULL };
	struct bc_pp_search s;
	const char *fb;
	char *state, *cc, *count, *script, err[BC_ERRLEN];
	struct bc_buf b;
	int i;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "ppfail_", &state, NULL),
	    BC_OK);
	cc = xasprintf("%s/badcc", state);
	count = xasprintf("%s/runs", state);
	script = xasprintf("#!/bin/sh\necho run >> '%s'\nexit 1\n", count);
	ck_assert_int_eq(bc_write_file_atomic(cc, script, strlen(script), 0755,
	    err), BC_OK);
	for (i = 0; i < 3; i++) {
		bc_pp_search_init(&s);
		ck_assert_int_ne(bc_pp_search_build(&s, av, 3, "c", cc, state,
		    0, &fb, NULL), BC_OK);
		ck_assert_str_eq(fb, "default-dirs");
		bc_pp_search_free(&s);
	}
	bc_buf_init(&b, 1 << 16);
	ck_assert_int_eq(bc_read_file(count, 1 << 16, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 4);	/* one "run\n" */
	/* a changed compiler (another size) is asked again */
	free(script);
	script = xasprintf("#!/bin/sh\necho run >> '%s'\nexit 1\n\n", count);
	ck_assert_int_eq(bc_write_file_atomic(cc, script, strlen(script), 0755,
	    err), BC_OK);
	bc_pp_search_init(&s);
	ck_assert_int_ne(bc_pp_search_build(&s, av, 3, "c", cc, state, 0, &fb,
	    NULL), BC_OK);
	bc_pp_search_free(&s);
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_read_file(count, 1 << 16, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 8);
	bc_buf_free(&b);
	(void)bc_rmtree(state);
	free(state);
	free(cc);
	free(count);
	free(script);
}
END_TEST

START_TEST(test_scan_closure)
{
	struct bc_pp_search s;
	struct bc_pp_result r;
	char *src, err[BC_ERRLEN];
	size_t i;
	int has_q = 0, has_i2 = 0, has_priv = 0, has_sys = 0;

	mktree();
	src = tp("src/main.c");
	base_search(&s);
	bc_pp_result_init(&r);
	ck_assert_int_eq(bc_pp_scan(&s, T, src, NULL, &r, err), BC_OK);
	for (i = 0; i < r.files.n; i++) {
		has_q |= strstr(r.files.v[i], "/quote/q.h") != NULL;
		has_i2 |= strstr(r.files.v[i], "/inc2/angled.h") != NULL;
		has_priv |= strstr(r.files.v[i], "Priv.h") != NULL;
		has_sys |= strstr(r.files.v[i], "sys1.h") != NULL;
		ck_assert_int_eq(r.via_abs[i], 1);
	}
	ck_assert(has_q && has_i2 && has_priv && !has_sys);
	/* main, local, q, inc1/angled, inc2/angled, Api, Priv */
	ck_assert_uint_eq(r.files.n, 7);
	ck_assert_uint_eq(r.system_hits, 1);
	bc_pp_result_free(&r);
	/* computed include of a macro with a value that is not a header
	 * name: fallback */
	wr("src/local.h", "#define HDR OTHER\n#include HDR\n");
	bc_pp_result_init(&r);
	ck_assert_int_eq(bc_pp_scan(&s, T, src, NULL, &r, err), BC_ERR_NOTSUP);
	ck_assert_str_eq(r.fallback, "computed-include");
	bc_pp_result_free(&r);
	/* a macro never defined: the include is not reached */
	wr("src/local.h", "#if defined(HDR)\n#include HDR\n#endif\n");
	bc_pp_result_init(&r);
	ck_assert_int_eq(bc_pp_scan(&s, T, src, NULL, &r, err), BC_OK);
	bc_pp_result_free(&r);
	/* defined as a header name (even in a file included later): the
	 * header is followed */
	wr("src/local.h", "#include CONF\n");
	wr("src/conf_def.h", "#define CONF \"conf.h\"\n");
	wr("src/conf.h", "int conf;\n");
	wr("src/main2.c", "#include \"local.h\"\n#include \"conf_def.h\"\n");
	{
		char *src2 = tp("src/main2.c");
		int has_conf = 0;

		bc_pp_result_init(&r);
		ck_assert_int_eq(bc_pp_scan(&s, T, src2, NULL, &r, err), BC_OK);
		for (i = 0; i < r.files.n; i++)
			has_conf |= bc_str_has_suffix(r.files.v[i], "/conf.h");
		ck_assert(has_conf);
		bc_pp_result_free(&r);
		free(src2);
	}
	/* but a computed include inside a system header is not followed */
	wr("src/local.h", "\n");
	wr("sys/sys1.h", "#include HDR\n");
	bc_pp_result_init(&r);
	ck_assert_int_eq(bc_pp_scan(&s, T, src, NULL, &r, err), BC_OK);
	bc_pp_result_free(&r);
	/* unreadable source */
	bc_pp_result_init(&r);
	ck_assert_int_eq(bc_pp_scan(&s, T, "/nonexistent/x.c", NULL, &r, err),
	    BC_ERR_NOTSUP);
	ck_assert_str_eq(r.fallback, "unreadable-file");
	bc_pp_result_free(&r);
	bc_pp_search_free(&s);
	free(src);
	rmtree();
}
END_TEST

START_TEST(test_abspath)
{
	struct bc_strv need = BC_STRV_INIT;
	char *p;

	p = bc_pp_abspath("/w/src", "./a//b/../c.h", &need);
	ck_assert_str_eq(p, "/w/src/a/c.h");
	ck_assert_uint_eq(need.n, 1);
	ck_assert_str_eq(need.v[0], "/w/src/a/b");
	free(p);
	p = bc_pp_abspath("/w", "/x/../../y", NULL);
	ck_assert_str_eq(p, "/y");
	free(p);
	p = bc_pp_abspath("/", ".", NULL);
	ck_assert_str_eq(p, "/");
	free(p);
	bc_strv_free(&need);
}
END_TEST

START_TEST(test_memo_persist)
{
	struct bc_pp_memo m;
	const struct bc_pp_dirs *d;
	char *f, *memo, *big;
	size_t i;

	mktree();
	f = tp("src/main.c");
	memo = tp("memo");
	ck_assert_int_eq(bc_pp_memo_open(&m, memo, NULL), BC_OK);
	ck_assert_int_eq(bc_pp_memo_dirs(&m, f, &d, NULL), BC_OK);
	ck_assert_uint_eq(d->n, 5);
	ck_assert_uint_eq(m.misses, 1);
	ck_assert_int_eq(bc_pp_memo_save(&m, NULL), BC_OK);
	bc_pp_memo_close(&m);
	/* a new process: hit from disk */
	ck_assert_int_eq(bc_pp_memo_open(&m, memo, NULL), BC_OK);
	ck_assert_int_eq(bc_pp_memo_dirs(&m, f, &d, NULL), BC_OK);
	ck_assert_uint_eq(m.hits, 1);
	ck_assert_uint_eq(m.misses, 0);
	ck_assert_uint_eq(d->n, 5);
	ck_assert_str_eq(d->v[3].name, "Fw/Api.h");
	ck_assert_int_eq(d->v[3].angled, 1);
	bc_pp_memo_close(&m);
	/* a change (same size even) invalidates: ctime/mtime move */
	usleep(20000);
	wr("src/main.c", "#include \"local.h\"\n#include <angled.h>\n"
	    "#include <sys2.h>\n#include <Fw/Api.h>\n#if 0\n#include \"gone.h\"\n"
	    "#endif\n");
	ck_assert_int_eq(bc_pp_memo_open(&m, memo, NULL), BC_OK);
	ck_assert_int_eq(bc_pp_memo_dirs(&m, f, &d, NULL), BC_OK);
	ck_assert_uint_eq(m.misses, 1);
	ck_assert_str_eq(d->v[2].name, "sys2.h");
	ck_assert_int_eq(bc_pp_memo_save(&m, NULL), BC_OK);
	bc_pp_memo_close(&m);
	/* a corrupt memo file is ignored, never fatal; mutations parse
	 * cleanly */
	{
		struct bc_buf b;
		char *mut;
		size_t n, bit;

		bc_buf_init(&b, 1 << 20);
		ck_assert_int_eq(bc_read_file(memo, 1 << 20, &b, NULL), BC_OK);
		n = bc_buf_len(&b);
		mut = xmalloc(n);
		for (i = 0; i < n; i++)
			for (bit = 0; bit < 8; bit += 3) {
				struct bc_pp_memo mm;

				memcpy(mut, bc_buf_data(&b), n);
				mut[i] ^= (char)(1 << bit);
				(void)bc_pp_memo_open(&mm, NULL, NULL);
				(void)bc_pp_memo_parse(&mm, mut, n);
				bc_pp_memo_close(&mm);
			}
		for (i = 0; i <= n; i++) {
			struct bc_pp_memo mm;

			(void)bc_pp_memo_open(&mm, NULL, NULL);
			(void)bc_pp_memo_parse(&mm, (const char *)bc_buf_data(&b),
			    i);
			bc_pp_memo_close(&mm);
		}
		free(mut);
		bc_buf_free(&b);
	}
	big = xmalloc(64);
	memcpy(big, "garbage\n", 9);
	ck_assert_int_eq(bc_write_file_atomic(memo, big, 8, 0644, NULL), BC_OK);
	ck_assert_int_eq(bc_pp_memo_open(&m, memo, NULL), BC_OK);
	ck_assert_uint_eq(m.n, 0);
	bc_pp_memo_close(&m);
	free(big);
	free(f);
	free(memo);
	rmtree();
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("preproc");
	TCase *t = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(t, test_lex_basic);
	tcase_add_test(t, test_lex_not_directives);
	tcase_add_test(t, test_lex_continuations);
	tcase_add_test(t, test_lex_computed_and_has_include);
	tcase_add_test(t, test_lex_mutations);
	tcase_add_test(t, test_hmap_lookup);
	tcase_add_test(t, test_hmap_invalid);
	tcase_add_test(t, test_resolve);
	tcase_add_test(t, test_resolve_hmap);
	tcase_add_test(t, test_search_build_order);
	tcase_add_test(t, test_search_fallbacks);
	tcase_add_test(t, test_parse_verbose);
	tcase_add_test(t, test_default_dirs_real_compiler);
	tcase_add_test(t, test_default_dirs_failure_remembered);
	tcase_add_test(t, test_scan_closure);
	tcase_add_test(t, test_abspath);
	tcase_add_test(t, test_memo_persist);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	int status;

	bc_pp_dirs_init(&D);
	status = bc_unit_run(suite());
	bc_pp_dirs_free(&D);
	return status;
}
