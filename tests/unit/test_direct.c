/*
 * test_direct.c - direct mode manifests (client/direct.c): the line
 * markers of a .i; the manifest key and what it depends on; a manifest
 * written and read back; a changed, resized or deleted file detected, a
 * file touched but unchanged still trusted; relative names resolved in
 * the later command's directory; the 2-second rule, __DATE__ and
 * unreadable files refused; and every truncation and a set of
 * corruptions of a manifest refused, with the outputs left empty.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "client/cconf.h"
#include "client/direct.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "tests/unit/unit.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The preprocessor's environment as the client's config reads it
 * (client/cconf.h, enum bc_cppenv order). */
static char *cpp_env_now[BC_CPPENV_N];

static char *const *
cpp_env(void)
{
	size_t i;

	for (i = 0; i < BC_CPPENV_N; i++)
		cpp_env_now[i] = getenv(bc_cppenv_names[i]);
	return cpp_env_now;
}

static char tmpl[64];
static char *dir;		/* the test's directory */
static char *statedir;
static int oldcwd = -1;
static int64_t now;

/* dir/name with content s, modified age seconds ago; the full path. */
static char *
put(const char *name, const char *s, int age)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct timeval tv[2];
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_write_file_atomic(p, s, strlen(s), 0644, err),
	    BC_OK);
	tv[0].tv_sec = tv[1].tv_sec = (time_t)(now - age);
	tv[0].tv_usec = tv[1].tv_usec = 0;
	ck_assert_int_eq(utimes(p, tv), 0);
	return p;
}

static void
setup(void)
{
	char err[BC_ERRLEN];

	strcpy(tmpl, "/tmp/bc-direct.XXXXXX");
	dir = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(dir);
	statedir = xasprintf("%s/state", dir);
	ck_assert_int_eq(bc_mkdir_p(statedir, 0700, err), BC_OK);
	oldcwd = open(".", O_RDONLY);
	now = (int64_t)time(NULL);
	unsetenv("CPATH");
}

static void
teardown(void)
{
	if (oldcwd >= 0) {
		(void)fchdir(oldcwd);
		close(oldcwd);
	}
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(statedir);
}

/* A direct-mode handle for "cc -E a.c" / "cc -c" plus extra remote
 * arguments (NULL-terminated), in cwd. */
static void
init(struct bc_direct *d, const char *cwd, const char *extra)
{
	struct bc_strv cpp = BC_STRV_INIT, rem = BC_STRV_INIT;

	bc_strv_push(&cpp, "cc");
	bc_strv_push(&cpp, "-E");
	bc_strv_push(&cpp, "a.c");
	bc_strv_push(&rem, "cc");
	bc_strv_push(&rem, "-c");
	if (extra != NULL)
		bc_strv_push(&rem, extra);
	bc_direct_init(d, statedir, "gcc-13.2", cwd, &cpp, &rem, cpp_env());
	bc_strv_free(&rem);
	bc_strv_free(&cpp);
}

/* A .i naming the given files (NULL-terminated) in line markers. */
static char *
doti(const char *first, ...)
{
	struct bc_buf b;
	const char *f;
	va_list ap;
	char *s;

	bc_buf_init(&b, 1 << 20);
	ck_assert_int_eq(bc_buf_put_str(&b, "# 1 \"<built-in>\"\n"), BC_OK);
	va_start(ap, first);
	for (f = first; f != NULL; f = va_arg(ap, const char *))
		ck_assert_int_eq(bc_buf_putf(&b, "# 1 \"%s\" 1\nint x;\n", f),
		    BC_OK);
	va_end(ap);
	ck_assert_int_eq(bc_buf_dup_cstr(&b, &s), BC_OK);
	bc_buf_free(&b);
	return s;
}

/* bc_direct_put of the .i with a .d and stderr of fixed content. */
static int
record(const struct bc_direct *d, const char *i, int64_t start, char *err)
{
	struct bc_buf dotd, cpperr;
	int r;

	bc_buf_init(&dotd, 1024);
	bc_buf_init(&cpperr, 1024);
	ck_assert_int_eq(bc_buf_put_str(&dotd, "a.o: a.c a.h\n\n"), BC_OK);
	ck_assert_int_eq(bc_buf_put(&cpperr, "warn\0ing\n", 9), BC_OK);
	r = bc_direct_put(d, KEY, (const uint8_t *)i, strlen(i), &dotd,
	    &cpperr, start, err);
	bc_buf_free(&cpperr);
	bc_buf_free(&dotd);
	return r;
}

/* bc_direct_get; on BC_OK checks what record() stored, otherwise that
 * the outputs are empty. */
static int
lookup(const struct bc_direct *d)
{
	struct bc_buf dotd, cpperr;
	char key[BC_HASH_HEXLEN + 1];
	int r;

	bc_buf_init(&dotd, 1 << 20);
	bc_buf_init(&cpperr, 1 << 20);
	r = bc_direct_get(d, key, &dotd, &cpperr);
	if (r == BC_OK) {
		ck_assert_str_eq(key, KEY);
		ck_assert_uint_eq(bc_buf_len(&dotd), 14);
		ck_assert_int_eq(memcmp(bc_buf_data(&dotd), "a.o: a.c a.h\n\n",
		    14), 0);
		ck_assert_uint_eq(bc_buf_len(&cpperr), 9);
		ck_assert_int_eq(memcmp(bc_buf_data(&cpperr), "warn\0ing\n", 9),
		    0);
	} else {
		ck_assert_str_eq(key, "");
		ck_assert_uint_eq(bc_buf_len(&dotd), 0);
		ck_assert_uint_eq(bc_buf_len(&cpperr), 0);
	}
	bc_buf_free(&cpperr);
	bc_buf_free(&dotd);
	return r;
}

START_TEST(t_markers)
{
	static const char text[] =
	    "# 1 \"a.c\"\n"
	    "# 1 \"<built-in>\"\n"
	    "# 1 \"<command-line>\"\n"
	    "# 1 \"/usr/include/stdio.h\" 1 3 4\n"
	    "int x;\n"
	    "# 5 \"a.c\" 2\n"			/* seen already */
	    "# 1 \"we\\\"ird.h\" 1\n"		/* escaped quote */
	    "# 1 \"/build/dir//\"\n"		/* a directory */
	    "# 1 \"\"\n"			/* empty */
	    "# 1 \"open.h\n"			/* no closing quote */
	    "#line 3 \"line.h\"\n"		/* not a marker of -E */
	    "#pragma \"p.h\"\n"
	    "  # 1 \"indented.h\"\n"
	    "# 7 \"last.h\"";			/* no newline at the end */
	static const char *const want[] = { "a.c", "/usr/include/stdio.h",
	    "we\"ird.h", "last.h" };
	struct bc_strv sv = BC_STRV_INIT;
	size_t i, n;

	bc_direct_markers((const uint8_t *)text, strlen(text), &sv);
	ck_assert_uint_eq(sv.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sv.n; i++)
		ck_assert_str_eq(sv.v[i], want[i]);
	bc_strv_free(&sv);
	/* every prefix parses without reading past its end */
	for (n = 0; n <= strlen(text); n++) {
		char *copy = xmalloc(n + 1);

		memcpy(copy, text, n);
		bc_direct_markers((const uint8_t *)copy, n, &sv);
		ck_assert_uint_le(sv.n, 4);
		bc_strv_free(&sv);
		free(copy);
	}
}
END_TEST

START_TEST(t_key)
{
	struct bc_direct a, b;
	char *want;

	init(&a, dir, NULL);
	init(&b, dir, NULL);
	ck_assert(bc_hash_is_hex(a.mkey));
	ck_assert_str_eq(a.mkey, b.mkey);
	want = xasprintf("%s/direct/%.2s/%s", statedir, a.mkey, a.mkey);
	ck_assert_str_eq(a.path, want);
	free(want);
	bc_direct_free(&b);
	/* the directory counts only when debug info names it */
	init(&b, "/elsewhere", NULL);
	ck_assert_str_eq(a.mkey, b.mkey);
	bc_direct_free(&b);
	bc_direct_free(&a);
	init(&a, dir, "-g");
	init(&b, "/elsewhere", "-g");
	ck_assert_str_ne(a.mkey, b.mkey);
	bc_direct_free(&b);
	/* the remote argv and the preprocessor's environment count */
	init(&b, dir, "-O2");
	ck_assert_str_ne(a.mkey, b.mkey);
	bc_direct_free(&b);
	bc_direct_free(&a);
	init(&b, dir, NULL);
	setenv("CPATH", "/opt/include", 1);
	init(&a, dir, NULL);
	ck_assert_str_ne(a.mkey, b.mkey);
	unsetenv("CPATH");
	bc_direct_free(&a);
	bc_direct_free(&b);
}
END_TEST

START_TEST(t_off)
{
	struct bc_direct d;
	struct bc_strv v = BC_STRV_INIT;
	char err[BC_ERRLEN], *i;

	bc_strv_push(&v, "cc");
	bc_direct_init(&d, NULL, "gcc", dir, &v, &v, NULL);
	ck_assert_ptr_null(d.path);
	bc_direct_init(&d, statedir, "", dir, &v, &v, NULL);
	ck_assert_ptr_null(d.path);
	bc_direct_init(&d, statedir, "gcc", NULL, &v, &v, NULL);
	ck_assert_ptr_null(d.path);
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
	i = doti("a.c", NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_INVAL);
	free(i);
	bc_direct_free(&d);
	bc_strv_free(&v);
}
END_TEST

START_TEST(t_roundtrip)
{
	struct bc_direct d;
	char err[BC_ERRLEN], *a, *h, *sp, *i;

	a = put("a.c", "#include \"a.h\"\nint main(void) { return X; }\n", 100);
	h = put("a.h", "#define X 0\n", 100);
	sp = put("with space.h", "int y;\n", 100);
	i = doti(a, h, sp, NULL);
	init(&d, dir, NULL);
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);	/* no manifest */
	ck_assert_int_eq(record(&d, i, now, err), BC_OK);
	ck_assert_int_eq(lookup(&d), BC_OK);
	ck_assert_int_eq(lookup(&d), BC_OK);
	bc_direct_free(&d);
	free(i);
	free(sp);
	free(h);
	free(a);
}
END_TEST

START_TEST(t_changed)
{
	struct bc_direct d;
	char err[BC_ERRLEN], *a, *h, *i;

	a = put("a.c", "#include \"a.h\"\n", 100);
	h = put("a.h", "#define X 0\n", 100);
	i = doti(a, h, NULL);
	init(&d, dir, NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_OK);
	ck_assert_int_eq(lookup(&d), BC_OK);
	/* rewritten with the same bytes and time: hashed again, trusted */
	free(put("a.h", "#define X 0\n", 100));
	ck_assert_int_eq(lookup(&d), BC_OK);
	/* same size, same mtime, other content */
	free(put("a.h", "#define X 1\n", 100));
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
	free(put("a.h", "#define X 0\n", 100));
	ck_assert_int_eq(lookup(&d), BC_OK);
	/* another size */
	free(put("a.h", "#define X 10\n", 100));
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
	/* gone */
	ck_assert_int_eq(unlink(h), 0);
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
	/* a directory in its place */
	ck_assert_int_eq(mkdir(h, 0700), 0);
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
	ck_assert_int_eq(rmdir(h), 0);
	free(put("a.h", "#define X 0\n", 100));
	ck_assert_int_eq(lookup(&d), BC_OK);
	bc_direct_free(&d);
	free(i);
	free(h);
	free(a);
}
END_TEST

/* Relative names are checked in the directory of the later command. */
START_TEST(t_relative)
{
	struct bc_direct d;
	char err[BC_ERRLEN], *i, *p;

	p = xasprintf("%s/one", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	p = xasprintf("%s/two", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	free(put("one/a.c", "int one;\n", 100));
	free(put("two/a.c", "int two;\n", 100));
	i = doti("a.c", NULL);
	init(&d, "/anywhere", NULL);
	p = xasprintf("%s/one", dir);
	ck_assert_int_eq(chdir(p), 0);
	free(p);
	ck_assert_int_eq(record(&d, i, now, err), BC_OK);
	ck_assert_int_eq(lookup(&d), BC_OK);
	p = xasprintf("%s/two", dir);
	ck_assert_int_eq(chdir(p), 0);
	free(p);
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
	free(put("two/a.c", "int one;\n", 100));	/* same content */
	ck_assert_int_eq(lookup(&d), BC_OK);
	bc_direct_free(&d);
	free(i);
}
END_TEST

START_TEST(t_refused)
{
	struct bc_direct d;
	char err[BC_ERRLEN], *a, *i, *p;

	init(&d, dir, NULL);
	/* the 2-second rule: a file modified at start - 2 or later */
	a = put("a.c", "int a;\n", 2);
	i = doti(a, NULL);
	err[0] = '\0';
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "too new"));
	free(put("a.c", "int a;\n", 0));
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	free(put("a.c", "int a;\n", -60));	/* in the future */
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);	/* nothing written */
	free(put("a.c", "int a;\n", 3));
	ck_assert_int_eq(record(&d, i, now, err), BC_OK);
	ck_assert_int_eq(lookup(&d), BC_OK);
	free(i);

	/* time macros anywhere in a file */
	free(put("a.c", "const char *d = __DATE__;\n", 100));
	i = doti(a, NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	free(i);
	free(put("a.c", "int a;\n", 100));
	free(put("t.h", "/* __TIMESTAMP__ */\n", 100));
	p = xasprintf("%s/t.h", dir);
	i = doti(a, p, NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	free(i);
	free(p);

	/* a file that is missing or no regular file */
	i = doti(a, "/nonexistent/x.h", NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	free(i);
	i = doti(a, dir, NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_ERR_NOTSUP);
	free(i);

	/* no usable marker */
	ck_assert_int_eq(bc_direct_put(&d, KEY, (const uint8_t *)"int x;\n",
	    7, NULL, NULL, now, err), BC_ERR_NOTSUP);
	/* a key that is not one */
	i = doti(a, NULL);
	ck_assert_int_eq(bc_direct_put(&d, "abc", (const uint8_t *)i,
	    strlen(i), NULL, NULL, now, err), BC_ERR_INVAL);
	free(i);
	free(a);
	bc_direct_free(&d);
}
END_TEST

/* Replace the manifest with n bytes of s. */
static void
overwrite(const struct bc_direct *d, const char *s, size_t n)
{
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_write_file_atomic(d->path, s, n, 0600, err),
	    BC_OK);
}

/* s with the first from replaced by to; NULL if from is not in s. */
static char *
subst(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);

	if (at == NULL)
		return NULL;
	return xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

START_TEST(t_corrupt)
{
	static const char *const edits[][2] = {
		{ "boltcc-manifest-v2", "boltcc-manifest-v1" },
		{ "boltcc-manifest-v2\n", "" },
		{ "key 0123", "key 0X23" },
		{ "key 0123", "key  0123" },
		{ "key ", "kee " },
		{ "dotd 14", "dotd 15" },
		{ "dotd 14", "dotd 13" },
		{ "dotd 14", "dotd -1" },
		{ "dotd 14", "dotd 99999999999999999999" },
		{ "dotd 14", "dotd x" },
		{ "dotd 14", "dotd" },
		{ "cpperr 9", "cpperr 10" },
		{ "cpperr", "stderr" },
		{ "file ", "fil " },		/* then no file at all */
		/* one short: bytes would be left after the last blob */
		{ "cpperr 9", "cpperr 8" },
	};
	struct bc_direct d;
	struct bc_buf good;
	char err[BC_ERRLEN], *a, *i, *s, *line;
	size_t k, n, len;

	a = put("a.c", "int a;\n", 100);
	i = doti(a, NULL);
	init(&d, dir, NULL);
	ck_assert_int_eq(record(&d, i, now, err), BC_OK);
	bc_buf_init(&good, 1 << 20);
	ck_assert_int_eq(bc_read_file(d.path, 1 << 20, &good, err), BC_OK);
	len = bc_buf_len(&good);
	s = xmalloc(len + 1);
	memcpy(s, bc_buf_data(&good), len);
	s[len] = '\0';
	/* s, as a string, ends at the NUL of the cpperr body */
	ck_assert_uint_eq(len - strlen(s), 6);

	/* every proper prefix */
	for (n = 0; n < len; n++) {
		overwrite(&d, (const char *)bc_buf_data(&good), n);
		ck_assert_msg(lookup(&d) == BC_ERR_NOENT,
		    "a manifest cut at %zu of %zu accepted", n, len);
	}
	/* the whole of it again, then each corruption */
	overwrite(&d, (const char *)bc_buf_data(&good), len);
	ck_assert_int_eq(lookup(&d), BC_OK);
	for (k = 0; k < sizeof(edits) / sizeof(edits[0]); k++) {
		struct bc_buf m;
		char *e;

		/* the text part up to the cpperr body (which holds a NUL) */
		e = subst(s, edits[k][0], edits[k][1]);
		ck_assert_msg(e != NULL, "%s not in the manifest",
		    edits[k][0]);
		bc_buf_init(&m, 1 << 20);
		ck_assert_int_eq(bc_buf_put_str(&m, e), BC_OK);
		ck_assert_int_eq(bc_buf_put(&m, "\0ing\n\n", 6), BC_OK);
		overwrite(&d, (const char *)bc_buf_data(&m), bc_buf_len(&m));
		ck_assert_msg(lookup(&d) == BC_ERR_NOENT,
		    "accepted with \"%s\" -> \"%s\"", edits[k][0],
		    edits[k][1]);
		bc_buf_free(&m);
		free(e);
	}
	/* a file record whose hash is not the file's */
	line = strstr(s, "file ");
	ck_assert_ptr_nonnull(line);
	line[5] = line[5] == '0' ? '1' : '0';
	{
		struct bc_buf m;

		bc_buf_init(&m, 1 << 20);
		ck_assert_int_eq(bc_buf_put_str(&m, s), BC_OK);
		ck_assert_int_eq(bc_buf_put(&m, "\0ing\n\n", 6), BC_OK);
		overwrite(&d, (const char *)bc_buf_data(&m), bc_buf_len(&m));
		/* unchanged by stat: the recorded hash is trusted */
		ck_assert_int_eq(lookup(&d), BC_OK);
		/* once the stamp differs, the content is hashed and differs */
		free(put("a.c", "int a;\n", 100));	/* a new inode */
		ck_assert_int_eq(lookup(&d), BC_ERR_NOENT);
		bc_buf_free(&m);
	}
	free(s);
	bc_buf_free(&good);
	bc_direct_free(&d);
	free(i);
	free(a);
}
END_TEST

static Suite *
direct_suite(void)
{
	Suite *s = suite_create("direct");
	TCase *tc = bc_tcase("direct", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_markers);
	tcase_add_test(tc, t_key);
	tcase_add_test(tc, t_off);
	tcase_add_test(tc, t_roundtrip);
	tcase_add_test(tc, t_changed);
	tcase_add_test(tc, t_relative);
	tcase_add_test(tc, t_refused);
	tcase_add_test(tc, t_corrupt);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(direct_suite());
}
