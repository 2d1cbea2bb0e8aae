/*
 * test_cache.c - unit tests of the artifact cache: key normalization
 * (which argv changes split the key and which do not), compiler identity,
 * the blob format (round trip, flipped bytes, truncation, bad magic and
 * version), index operations, exact LRU eviction order, reconciliation,
 * counters and in-flight locks.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/hash.h"
#include "common/proto.h"
#include "common/util.h"
#include "cache/key.h"
#include "cache/pathmap.h"
#include "cache/store.h"
#include "tests/unit/unit.h"

#include <sqlite3.h>

static char *tmpd;

static void
setup(void)
{
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_mkdtemp("test_cache-", &tmpd, err), BC_OK);
}

static void
teardown(void)
{
	ck_assert_int_eq(bc_rmtree(tmpd), BC_OK);
	free(tmpd);
	tmpd = NULL;
}

/* ------------------------------------------------------------------ hash */

START_TEST(test_hash_vectors)
{
	uint8_t d[BC_HASH_LEN];
	char hex[BC_HASH_HEXLEN + 1], why[256] = "";
	struct bc_hash h;

	/* the table boltccd --self-test checks on the Mac (CommonCrypto) */
	ck_assert_msg(bc_hash_selftest(why, sizeof(why)) == 0, "%s", why);
	bc_hash_bytes("", 0, d);
	bc_hash_hex(d, sizeof(d), hex);
	ck_assert_str_eq(hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

	bc_hash_bytes("abc", 3, d);
	bc_hash_hex(d, sizeof(d), hex);
	ck_assert_str_eq(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	bc_hash_init(&h);
	bc_hash_update(&h, "a", 1);
	bc_hash_update(&h, "bc", 2);
	bc_hash_final_hex(&h, hex);
	ck_assert_str_eq(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ck_assert(bc_hash_is_hex(hex));
	{
		uint8_t back[BC_HASH_LEN];

		ck_assert_int_eq(bc_hash_unhex(hex, sizeof(back), back), 0);
		ck_assert_int_eq(memcmp(back, d, sizeof(d)), 0);
		ck_assert_int_eq(bc_hash_unhex("0aff", 2, back), 0);
		ck_assert_uint_eq(back[0], 0x0a);
		ck_assert_uint_eq(back[1], 0xff);
		ck_assert_int_eq(bc_hash_unhex("0aFf", 2, back), -1);
		ck_assert_int_eq(bc_hash_unhex("0g", 1, back), -1);
	}
	hex[3] = 'G';
	ck_assert(!bc_hash_is_hex(hex));
	ck_assert(!bc_hash_is_hex("abc"));
}
END_TEST

/* FNV-1a 64 against the published vectors (www.isthe.com/chongo/tech/
 * comp/fnv), in pieces as in one go; and preproc/'s basis, whose values
 * name the state dir's ppdirs-* files, still giving what it gave. */
START_TEST(test_fnv1a_vectors)
{
	static const struct {
		const char *s;
		uint64_t h;
	} v[] = {
		{ "", 0xcbf29ce484222325ULL },
		{ "a", 0xaf63dc4c8601ec8cULL },
		{ "b", 0xaf63df4c8601f1a5ULL },
		{ "foo", 0xdcb27518fed9d577ULL },
		{ "foobar", 0x85944171f73967e8ULL },
		{ "chongo was here!\n", 0x46810940eff5f915ULL },
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_msg(bc_fnv1a_str(BC_FNV1A_BASIS, v[i].s) == v[i].h,
		    "FNV-1a of \"%s\"", v[i].s);
		ck_assert_msg(bc_fnv1a(BC_FNV1A_BASIS, v[i].s,
		    strlen(v[i].s)) == v[i].h, "FNV-1a of \"%s\"", v[i].s);
	}
	ck_assert(bc_fnv1a(bc_fnv1a(BC_FNV1A_BASIS, "foo", 3), "bar", 3) ==
	    0x85944171f73967e8ULL);
	ck_assert(bc_fnv1a(BC_FNV1A_BASIS, "a\0b", 3) !=
	    bc_fnv1a_str(BC_FNV1A_BASIS, "a"));	/* bytes, NULs too */
	/* what memo.c's and search.c's own copies gave */
	ck_assert(bc_fnv1a_str(BC_FNV1A_BASIS_PP, "") == 0x14650fb0739d0383ULL);
	ck_assert(bc_fnv1a_str(BC_FNV1A_BASIS_PP, "/usr/include/stdio.h") ==
	    0xd84396541ffc8e0dULL);
	ck_assert(bc_fnv1a_str(BC_FNV1A_BASIS_PP, "gcc|1|2|3|4|c|-O2") ==
	    0xa9b9538667804b51ULL);
}
END_TEST

/* ------------------------------------------------------------------ keys */

static void
key_of(const char *argline, const char *cdir, uint32_t flags,
    const char *doti, const char *identity, char out[BC_HASH_HEXLEN + 1])
{
	struct bc_strv v = BC_STRV_INIT;
	char *copy = xstrdup(argline), *p = copy, *w;
	struct bc_cache_key_in in;

	while ((w = strsep(&p, " ")) != NULL)
		if (*w != '\0')
			bc_strv_push(&v, w);
	memset(&in, 0, sizeof(in));
	in.identity = identity;
	in.argv = v.v;
	in.argc = v.n;
	in.cdir = cdir;
	in.flags = flags;
	in.doti = doti;
	in.doti_len = strlen(doti);
	bc_cache_key(&in, out);
	bc_strv_free(&v);
	free(copy);
}

#define BASE "gcc -O2 -c hello.c -o hello.o"
#define DOTI "int main(void) { return 0; }\n"
#define ID "1111111111111111111111111111111111111111111111111111111111111111"

/* Same key as the base? */
static int
same_as_base(const char *args)
{
	char a[BC_HASH_HEXLEN + 1], b[BC_HASH_HEXLEN + 1];

	key_of(BASE, "/home/a/src", 0, DOTI, ID, a);
	key_of(args, "/home/a/src", 0, DOTI, ID, b);
	return strcmp(a, b) == 0;
}

START_TEST(test_key_same)
{
	/* Changes that must NOT split the key. */
	static const char *const same[] = {
		BASE,
		"gcc -O2 -c hello.c -o /elsewhere/obj/hello.o",
		"gcc -O2 -c hello.c -oother.o",
		"gcc -O2 -c hello.c",
		"/usr/bin/gcc -O2 -c hello.c -o hello.o",
		"/opt/x/gcc -O2 -c hello.c -o hello.o",
		"gcc -O2 -c hello.c -o hello.o -MD -MF dep/hello.d",
		"gcc -O2 -MMD -MP -MT hello.o -MQ x -c hello.c -o hello.o",
		"gcc -O2 -c hello.c -o hello.o -MFhello.d -MThello.o",
		"gcc -O2 -c hello.c -o hello.o --serialize-diagnostics h.dia",
		"gcc -O2 -c hello.c -o hello.o -MJ cdb.json",
		NULL
	};
	size_t i;

	for (i = 0; same[i] != NULL; i++)
		ck_assert_msg(same_as_base(same[i]), "split: %s", same[i]);
}
END_TEST

START_TEST(test_key_split)
{
	/* Changes that MUST split the key. */
	static const char *const split[] = {
		"gcc -O0 -c hello.c -o hello.o",
		"gcc -O2 -c hello.c -o hello.o -DX=1",
		"gcc -O2 -c hello.c -o hello.o -D -o",	/* value, not -o */
		"gcc -O2 -c hello.c -o hello.o -Wall",
		"gcc -O2 -S hello.c -o hello.o",
		"gcc -O2 -c hello.cc -o hello.o",
		"gcc -O2 -x c++ -c hello.c -o hello.o",
		"gcc -O2 -m32 -c hello.c -o hello.o",
		"gcc -O2 -target aarch64-linux-gnu -c hello.c -o hello.o",
		"gcc -O2 -fcolor-diagnostics -c hello.c -o hello.o",
		"gcc -O2 -fdiagnostics-color=always -c hello.c -o hello.o",
		"clang -O2 -c hello.c -o hello.o",
		"g++ -O2 -c hello.c -o hello.o",
		"gcc -c -O2 hello.c -o hello.o",	/* order kept */
		"gcc -O2 -c hello.c -o hello.o -g",
		NULL
	};
	size_t i;

	for (i = 0; split[i] != NULL; i++)
		ck_assert_msg(!same_as_base(split[i]), "not split: %s",
		    split[i]);
}
END_TEST

START_TEST(test_key_inputs)
{
	char a[BC_HASH_HEXLEN + 1], b[BC_HASH_HEXLEN + 1];

	/* input content */
	key_of(BASE, NULL, 0, DOTI, ID, a);
	key_of(BASE, NULL, 0, "int main(void) { return 1; }\n", ID, b);
	ck_assert_str_ne(a, b);
	/* compiler identity */
	key_of(BASE, NULL, 0, DOTI,
	    "2222222222222222222222222222222222222222222222222222222222222222",
	    b);
	ck_assert_str_ne(a, b);
	/* the .dia flag changes what comes back */
	key_of(BASE, NULL, 1, DOTI, ID, b);
	ck_assert_str_ne(a, b);
	/* unknown flag bits do not */
	key_of(BASE, NULL, 0x100, DOTI, ID, b);
	ck_assert_str_eq(a, b);
	/* no debug info: the working directory is not in the key */
	key_of(BASE, "/home/a/src", 0, DOTI, ID, a);
	key_of(BASE, "/home/b/other", 0, DOTI, ID, b);
	ck_assert_str_eq(a, b);
	key_of(BASE, NULL, 0, DOTI, ID, b);
	ck_assert_str_eq(a, b);
	/* with debug info it is (the object names it) */
	key_of(BASE " -g", "/home/a/src", 0, DOTI, ID, a);
	key_of(BASE " -g", "/home/b/other", 0, DOTI, ID, b);
	ck_assert_str_ne(a, b);
	key_of(BASE " -g", NULL, 0, DOTI, ID, b);
	ck_assert_str_ne(a, b);
	/* -g0 last turns it off again */
	key_of(BASE " -g -g0", "/home/a/src", 0, DOTI, ID, a);
	key_of(BASE " -g -g0", "/home/b/other", 0, DOTI, ID, b);
	ck_assert_str_eq(a, b);
	/* a field boundary cannot be moved: "-DA" "B" != "-DAB" */
	key_of("gcc -DA B.c -c", NULL, 0, DOTI, ID, a);
	key_of("gcc -DAB.c -c", NULL, 0, DOTI, ID, b);
	ck_assert_str_ne(a, b);
	ck_assert(bc_hash_is_hex(a));
}
END_TEST

START_TEST(test_key_args_and_debug)
{
	char *const argv[] = { "/usr/bin/gcc", "-O2", "-MD", "-MF", "x.d",
	    "-c", "x.c", "-o", "x.o", "-D", "-o", "-gno-record-gcc-switches",
	    NULL };
	struct bc_strv out = BC_STRV_INIT;
	char *j;

	bc_cache_key_args(argv, 12, &out);
	j = bc_strv_join(&out);
	ck_assert_str_eq(j, "gcc -O2 -c x.c -D -o -gno-record-gcc-switches");
	free(j);
	bc_strv_free(&out);
	ck_assert_int_eq(bc_cache_key_debug(argv, 12), 0);
	{
		char *const g1[] = { "gcc", "-ggdb3", "-c", "x.c", NULL };
		char *const g2[] = { "gcc", "-g", "-g0", NULL };
		char *const g3[] = { "gcc", "-gdwarf-4", NULL };
		char *const g4[] = { "gcc", "-gsplit-dwarf", NULL };
		char *const g5[] = { "gcc", "-gcc-toolchain", "/x", NULL };

		ck_assert_int_eq(bc_cache_key_debug(g1, 4), 1);
		ck_assert_int_eq(bc_cache_key_debug(g2, 3), 0);
		ck_assert_int_eq(bc_cache_key_debug(g3, 2), 1);
		ck_assert_int_eq(bc_cache_key_debug(g4, 2), 0);
		ck_assert_int_eq(bc_cache_key_debug(g5, 3), 0);
	}
}
END_TEST

/* A fake compiler: a script answering --version with its own text. */
static char *
fake_compiler(const char *name, const char *version)
{
	char *p = xasprintf("%s/%s", tmpd, name);
	char *text = xasprintf("#!/bin/sh\necho '%s'\n", version);

	ck_assert_int_eq(bc_write_file_atomic(p, text, strlen(text), 0755,
	    NULL), BC_OK);
	free(text);
	return p;
}

/* ---- pump keys ---- */

struct pk {
	const char *args;
	const char *cwd;
	const char *identity;
	struct bc_cache_pump_ent e[6];
	size_t n;
};

static const uint8_t H1[BC_HASH_LEN] = { 1 };
static const uint8_t H2[BC_HASH_LEN] = { 2 };
static const uint8_t H3[BC_HASH_LEN] = { 3 };

/* The base job: a source and a header below cwd, one header outside,
 * a system-dir link and the cwd marker. */
static void
pk_base(struct pk *k, const char *cwd)
{
	static char names[4][3][64];	/* rotating scratch for the names */
	static int slot;
	char (*n)[64] = names[slot++ & 3];

	memset(k, 0, sizeof(*k));
	k->args = "gcc -O2 -c hello.c -o hello.o";
	k->cwd = cwd;
	k->identity = ID;
	snprintf(n[0], 64, "%s/hello.c", cwd);
	snprintf(n[1], 64, "%s/inc/hello.h", cwd);
	snprintf(n[2], 64, "%s", cwd);
	k->e[0].name = n[0];
	k->e[0].kind = BC_CACHE_PUMP_FILE;
	k->e[0].hash = H1;
	k->e[1].name = n[1];
	k->e[1].kind = BC_CACHE_PUMP_FILE;
	k->e[1].hash = H2;
	k->e[2].name = "/opt/lib/include/lib.h";
	k->e[2].kind = BC_CACHE_PUMP_FILE;
	k->e[2].hash = H3;
	k->e[3].name = "/usr/include";
	k->e[3].kind = BC_CACHE_PUMP_LINK;
	k->e[3].target = "../../../../../../../../../../../../../../../../"
	    "../../../../../../usr/include";
	k->e[4].name = n[2];
	k->e[4].kind = BC_CACHE_PUMP_DIR;
	k->n = 5;
}

static void
pk_key(const struct pk *k, char out[BC_HASH_HEXLEN + 1])
{
	struct bc_strv v = BC_STRV_INIT;
	char *copy = xstrdup(k->args), *p = copy, *w;
	struct bc_cache_pump_in in;

	while ((w = strsep(&p, " ")) != NULL)
		if (*w != '\0')
			bc_strv_push(&v, w);
	memset(&in, 0, sizeof(in));
	in.identity = k->identity;
	in.argv = v.v;
	in.argc = v.n;
	in.cwd = k->cwd;
	in.ents = k->e;
	in.n = k->n;
	bc_cache_pump_key(&in, out);
	bc_strv_free(&v);
	free(copy);
}

/* The key of the base job in cwd, with args instead of its argv if not
 * NULL (k is left as that job). */
static void
pk_at(struct pk *k, const char *cwd, const char *args,
    char out[BC_HASH_HEXLEN + 1])
{
	pk_base(k, cwd);
	if (args != NULL)
		k->args = args;
	pk_key(k, out);
}

/* split a command line into a strv (words separated by spaces) */
static void
words(const char *line, struct bc_strv *v)
{
	char *c = xstrdup(line), *t, *save = NULL;

	bc_strv_init(v);
	for (t = strtok_r(c, " ", &save); t != NULL; t = strtok_r(NULL, " ",
	    &save))
		bc_strv_push(v, t);
	free(c);
}

START_TEST(test_pathmap)
{
	struct bc_buf b = BC_BUF_INIT(1 << 20), b2 = BC_BUF_INIT(1 << 20);
	struct bc_pathmap pm, pm2;
	struct bc_strv v;
	char err[BC_ERRLEN], *m;
	const char *d = "/home/a/App/x.o: /home/a/App/x.c /home/a/App/in\\ c/y.h \\\n /usr/include/stdio.h /home/a/AppOther/z.h\n";

	words("clang -ffile-prefix-map=/home/a/App/=/src -fdebug-prefix-map=/home/a/My App=/m -c x.c", &v);
	bc_pathmap_init(&pm, v.v, v.n);
	ck_assert(bc_pathmap_active(&pm));
	ck_assert_uint_eq(pm.old.n, 2);
	ck_assert_str_eq(pm.old.v[0], "/home/a/App");
	/* whole components only */
	m = bc_pathmap_path(&pm, "/home/a/App/x.c");
	ck_assert_str_eq(m, "\0010\001/x.c");
	free(m);
	ck_assert_ptr_null(bc_pathmap_path(&pm, "/home/a/AppOther/x.c"));
	/* words: joined options, map words, system paths */
	m = bc_pathmap_word(&pm, "-I/home/a/App/inc");
	ck_assert_str_eq(m, "-I\0010\001/inc");
	free(m);
	m = bc_pathmap_word(&pm, "-ffile-prefix-map=/home/a/App/=/src");
	ck_assert_str_eq(m, "-ffile-prefix-map=\0010\001=/src");
	free(m);
	ck_assert_ptr_null(bc_pathmap_word(&pm, "-I/usr/include/x"));
	ck_assert_ptr_null(bc_pathmap_word(&pm, "-O2"));
	ck_assert(bc_pathmap_active(&pm));
	/* a mapped prefix inside a -D value: exact */
	ck_assert_ptr_null(bc_pathmap_word(&pm, "-DROOT=\"/home/a/App\""));
	ck_assert(!bc_pathmap_active(&pm));
	ck_assert_ptr_nonnull(strstr(pm.exact, "-DROOT"));
	bc_pathmap_free(&pm);
	/* an absolute path no map covers: exact, naming it */
	bc_pathmap_init(&pm, v.v, v.n);
	ck_assert_ptr_null(bc_pathmap_word(&pm, "-I/opt/x"));
	ck_assert_ptr_nonnull(strstr(pm.exact, "/opt/x"));
	bc_pathmap_free(&pm);
	bc_strv_free(&v);
	/* no map, or compressed debug sections: exact */
	words("gcc -g -c x.c", &v);
	bc_pathmap_init(&pm, v.v, v.n);
	ck_assert(!bc_pathmap_active(&pm));
	bc_pathmap_free(&pm);
	bc_strv_free(&v);
	words("gcc -gz -ffile-prefix-map=/a/b=/s -c x.c", &v);
	bc_pathmap_init(&pm, v.v, v.n);
	ck_assert(!bc_pathmap_active(&pm));
	bc_pathmap_free(&pm);
	bc_strv_free(&v);

	/* a .d: tokens in, another checkout's prefix out, make escapes */
	words("gcc -ffile-prefix-map=/home/a/App=/src -c x.c", &v);
	bc_pathmap_init(&pm, v.v, v.n);
	bc_strv_free(&v);
	words("gcc -ffile-prefix-map=/Users/bob/w/App=/src -c x.c", &v);
	bc_pathmap_init(&pm2, v.v, v.n);
	bc_strv_free(&v);
	ck_assert_int_eq(bc_pathmap_tokenize(&pm, 1, d, strlen(d), &b, err),
	    BC_OK);
	ck_assert_ptr_null(memmem(bc_buf_data(&b), bc_buf_len(&b),
	    "/home/a/App/", 12));
	ck_assert_ptr_nonnull(memmem(bc_buf_data(&b), bc_buf_len(&b),
	    "/home/a/AppOther/z.h", 20));
	ck_assert_int_eq(bc_pathmap_detokenize(&pm2, 1, bc_buf_data(&b),
	    bc_buf_len(&b), &b2, err), BC_OK);
	ck_assert_ptr_nonnull(memmem(bc_buf_data(&b2), bc_buf_len(&b2),
	    "/Users/bob/w/App/in\\ c/y.h", 26));
	/* round trip with the storer's own maps */
	bc_buf_reset(&b2);
	ck_assert_int_eq(bc_pathmap_detokenize(&pm, 1, bc_buf_data(&b),
	    bc_buf_len(&b), &b2, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b2), strlen(d));
	ck_assert(memcmp(bc_buf_data(&b2), d, strlen(d)) == 0);
	/* a token naming no map, a truncated token: refused */
	bc_buf_reset(&b2);
	ck_assert_int_eq(bc_pathmap_detokenize(&pm, 0, "a\0017\001b", 5, &b2,
	    err), BC_ERR_CORRUPT);
	ck_assert_int_eq(bc_pathmap_detokenize(&pm, 0, "a\0010", 3, &b2, err),
	    BC_ERR_CORRUPT);
	/* text holding the token byte is not tokenized */
	ck_assert_int_eq(bc_pathmap_tokenize(&pm, 0, "\001", 1, &b2, err),
	    BC_ERR_INVAL);
	/* leaks: as written and as a symbol spells it */
	ck_assert_ptr_nonnull(bc_pathmap_leak(&pm, NULL, "xx/home/a/App/y", 15));
	ck_assert_ptr_nonnull(bc_pathmap_leak(&pm, NULL, "_GLOBAL__home_a_App_x", 21));
	ck_assert_ptr_null(bc_pathmap_leak(&pm, NULL, "/src/x.c", 8));
	ck_assert_ptr_nonnull(bc_pathmap_leak(&pm, "/tmp/root", "a/tmp/root/b", 12));
	bc_pathmap_free(&pm);
	bc_pathmap_free(&pm2);
	bc_buf_free(&b);
	bc_buf_free(&b2);
}
END_TEST

/* pump key of a two-file job at checkout dir (with maps of it) */
static void
mapped_key(const char *dir, const char *extra, int exact, char *out,
    char **why)
{
	struct bc_cache_pump_ent e[3];
	struct bc_cache_pump_in in;
	struct bc_strv v;
	uint8_t h1[BC_HASH_LEN], h2[BC_HASH_LEN];
	char *src = xasprintf("%s/src/a.c", dir), *hdr =
	    xasprintf("%s/inc/a.h", dir), *line;

	line = xasprintf("clang -g -ffile-prefix-map=%s=/s -I%s/inc %s -c %s "
	    "-o %s/out/a.o -MD -MT %s/out/a.o", dir, dir, extra, src, dir, dir);
	words(line, &v);
	bc_hash_bytes("int a;\n", 7, h1);
	bc_hash_bytes("int b;\n", 7, h2);
	memset(e, 0, sizeof(e));
	e[0].name = src;
	e[0].kind = BC_CACHE_PUMP_FILE;
	e[0].hash = h1;
	e[1].name = hdr;
	e[1].kind = BC_CACHE_PUMP_FILE;
	e[1].hash = h2;
	e[2].name = "/usr/include";
	e[2].kind = BC_CACHE_PUMP_LINK;
	e[2].target = "../x/usr/include";
	memset(&in, 0, sizeof(in));
	in.identity = "id";
	in.argv = v.v;
	in.argc = v.n;
	in.cwd = dir;
	in.ents = e;
	in.n = 3;
	in.exact = exact;
	bc_cache_pump_key_paths(&in, out, why);
	bc_strv_free(&v);
	free(src);
	free(hdr);
	free(line);
}

START_TEST(test_pump_key_mapped)
{
	char a[BC_HASH_HEXLEN + 1], b[BC_HASH_HEXLEN + 1], *why;

	mapped_key("/home/alice/App", "", 0, a, &why);
	ck_assert_ptr_null(why);
	mapped_key("/Users/bob/Code/App", "", 0, b, &why);
	ck_assert_ptr_null(why);
	ck_assert_str_eq(a, b);		/* two checkouts share */
	/* the exact keys differ, and differ from the mapped one */
	mapped_key("/home/alice/App", "", 1, a, &why);
	ck_assert_ptr_nonnull(why);
	free(why);
	mapped_key("/Users/bob/Code/App", "", 1, b, &why);
	free(why);
	ck_assert_str_ne(a, b);
	/* other flags still split */
	mapped_key("/home/alice/App", "-O2", 0, a, NULL);
	mapped_key("/Users/bob/Code/App", "", 0, b, NULL);
	ck_assert_str_ne(a, b);
	/* an unmapped -I: exact, naming it */
	mapped_key("/home/alice/App", "-I/home/alice/lib", 0, a, &why);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "/home/alice/lib"));
	free(why);
	/* a system -I: still mapped */
	mapped_key("/home/alice/App", "-I/usr/include/glib", 0, a, &why);
	ck_assert_ptr_null(why);
	mapped_key("/Users/bob/Code/App", "-I/usr/include/glib", 0, b, NULL);
	ck_assert_str_eq(a, b);
}
END_TEST

START_TEST(test_pump_key)
{
	char base[BC_HASH_HEXLEN + 1], other[BC_HASH_HEXLEN + 1];
	struct bc_cache_pump_ent t;
	struct pk k;
	static const char *const same_args[] = {
		"gcc -O2 -c hello.c -o other/hello.o",
		"gcc -O2 -c hello.c -oxyz.o",
		"/usr/bin/gcc -O2 -c hello.c -o hello.o",
		"gcc -O2 -c hello.c -o hello.o -MF a.d",
		NULL
	};
	static const char *const split_args[] = {
		"gcc -O0 -c hello.c -o hello.o",
		"gcc -O2 -DX -c hello.c -o hello.o",
		"gcc -O2 -Iinc -c hello.c -o hello.o",
		"g++ -O2 -c hello.c -o hello.o",
		"gcc -O2 -c hello.c -o hello.o -g",
		/* a .d is wanted: its shape and target are in the key */
		"gcc -O2 -c hello.c -o hello.o -MD -MT hello.o",
		NULL
	};
	size_t i;

	pk_at(&k, "/home/a/src", NULL, base);
	ck_assert(bc_hash_is_hex(base));

	/* another working copy, no debug info: shared */
	pk_at(&k, "/work/b/project", NULL, other);
	ck_assert_str_eq(base, other);
	/* ... also with -g0 last */
	pk_at(&k, "/work/b/project", "gcc -O2 -g -g0 -c hello.c -o hello.o", other);
	pk_at(&k, "/home/a/src", "gcc -O2 -g -g0 -c hello.c -o hello.o", base);
	ck_assert_str_eq(base, other);
	/* with -g the working directory splits it */
	pk_at(&k, "/home/a/src", "gcc -O2 -g -c hello.c -o hello.o", base);
	pk_at(&k, "/work/b/project", "gcc -O2 -g -c hello.c -o hello.o", other);
	ck_assert_str_ne(base, other);
	/* ... but the same directory with -g shares */
	pk_at(&k, "/home/a/src", "gcc -O2 -g -c hello.c -o obj/hello.o", other);
	ck_assert_str_eq(base, other);

	pk_at(&k, "/home/a/src", NULL, base);
	/* manifest order does not matter */
	t = k.e[0];
	k.e[0] = k.e[3];
	k.e[3] = t;
	t = k.e[1];
	k.e[1] = k.e[4];
	k.e[4] = t;
	pk_key(&k, other);
	ck_assert_str_eq(base, other);
	/* output names do not split it */
	for (i = 0; same_args[i] != NULL; i++) {
		pk_base(&k, "/home/a/src");
		k.args = same_args[i];
		pk_key(&k, other);
		ck_assert_msg(strcmp(base, other) == 0, "split: %s",
		    same_args[i]);
	}
	for (i = 0; split_args[i] != NULL; i++) {
		pk_base(&k, "/home/a/src");
		k.args = split_args[i];
		pk_key(&k, other);
		ck_assert_msg(strcmp(base, other) != 0, "not split: %s",
		    split_args[i]);
	}
	/* file content */
	pk_base(&k, "/home/a/src");
	k.e[1].hash = H3;
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	/* a file's path below cwd */
	pk_base(&k, "/home/a/src");
	k.e[1].name = "/home/a/src/inc2/hello.h";
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	/* a file's path outside cwd */
	pk_base(&k, "/home/a/src");
	k.e[2].name = "/opt/lib2/include/lib.h";
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	/* ... also when the working copy moves: absolute stays absolute */
	pk_base(&k, "/work/b/project");
	k.e[2].name = "/opt/lib2/include/lib.h";
	pk_key(&k, base);
	ck_assert_str_eq(base, other);
	pk_at(&k, "/home/a/src", NULL, base);
	/* a link target, a link or a directory more or less */
	pk_base(&k, "/home/a/src");
	k.e[3].target = "../usr/include";
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	pk_base(&k, "/home/a/src");
	k.n = 4;
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	/* a file turned into a directory marker */
	pk_base(&k, "/home/a/src");
	k.e[2].kind = BC_CACHE_PUMP_DIR;
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	/* compiler identity */
	pk_base(&k, "/home/a/src");
	k.identity = "22222222222222222222222222222222"
	    "22222222222222222222222222222222";
	pk_key(&k, other);
	ck_assert_str_ne(base, other);
	/* never the plain key of the same words */
	{
		char plain[BC_HASH_HEXLEN + 1];

		key_of("gcc -O2 -c hello.c -o hello.o", "/home/a/src", 0, "",
		    ID, plain);
		ck_assert_str_ne(base, plain);
	}
}
END_TEST

START_TEST(test_pump_key_deps)
{
	char a[BC_HASH_HEXLEN + 1], b[BC_HASH_HEXLEN + 1];
	struct pk k;
	char *const d1[] = { "gcc", "-MD", "-c", "x.c", NULL };
	char *const d2[] = { "gcc", "-MMD", "-MF", "x.d", "-c", "x.c", NULL };
	char *const d3[] = { "gcc", "-D", "-MD", "-c", "x.c", NULL };
	char *const d4[] = { "gcc", "-MF", "x.d", "-c", "x.c", NULL };

	ck_assert_int_eq(bc_cache_pump_deps_wanted(d1, 4), 1);
	ck_assert_int_eq(bc_cache_pump_deps_wanted(d2, 6), 1);
	ck_assert_int_eq(bc_cache_pump_deps_wanted(d3, 5), 0);
	ck_assert_int_eq(bc_cache_pump_deps_wanted(d4, 5), 0);

	/* the .d file's name does not split the key, its target does */
	pk_at(&k, "/home/a/src", "gcc -O2 -MD -MF a.d -MT hello.o -c hello.c -o hello.o", a);
	k.args = "gcc -O2 -MD -MF obj/b.d -MT hello.o -c hello.c -o x.o";
	pk_key(&k, b);
	ck_assert_str_eq(a, b);
	k.args = "gcc -O2 -MD -MF a.d -MT other.o -c hello.c -o hello.o";
	pk_key(&k, b);
	ck_assert_str_ne(a, b);
	k.args = "gcc -O2 -MMD -MF a.d -MT hello.o -c hello.c -o hello.o";
	pk_key(&k, b);
	ck_assert_str_ne(a, b);
	k.args = "gcc -O2 -MD -MP -MF a.d -MT hello.o -c hello.c -o hello.o";
	pk_key(&k, b);
	ck_assert_str_ne(a, b);
	/* without -MT the output is the target */
	k.args = "gcc -O2 -MD -c hello.c -o hello.o";
	pk_key(&k, a);
	k.args = "gcc -O2 -MD -c hello.c -o other.o";
	pk_key(&k, b);
	ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(test_identity)
{
	char a[BC_HASH_HEXLEN + 1], b[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *c1 = fake_compiler("cc-one", "fakecc 1.0");
	char *c2 = fake_compiler("cc-two", "fakecc 2.0");
	char *memo = xasprintf("%s/memo", tmpd);

	ck_assert_int_eq(bc_mkdir_p(memo, 0700, err), BC_OK);
	ck_assert_int_eq(bc_cache_identity(c1, NULL, a, err), BC_OK);
	ck_assert(bc_hash_is_hex(a));
	ck_assert_int_eq(bc_cache_identity(c1, memo, b, err), BC_OK);
	ck_assert_str_eq(a, b);
	/* memoized: the same answer again */
	ck_assert_int_eq(bc_cache_identity(c1, memo, b, err), BC_OK);
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(bc_cache_identity(c2, memo, b, err), BC_OK);
	ck_assert_str_ne(a, b);
	/* a changed binary is noticed despite the memo */
	sleep(1);
	free(fake_compiler("cc-one", "fakecc 1.1"));
	ck_assert_int_eq(bc_cache_identity(c1, memo, b, err), BC_OK);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(bc_cache_identity("/nonexistent/cc", memo, b, err),
	    BC_ERR_NOENT);
	free(c1);
	free(c2);
	free(memo);
}
END_TEST

/* ----------------------------------------------------------------- blobs */

static void
fill_entry(struct bc_cache_entry *e, int seed, size_t objlen)
{
	size_t i;

	bc_cache_entry_init(e);
	ck_assert_int_eq(bc_buf_putf(&e->serr, "warning %d\n", seed), BC_OK);
	ck_assert_int_eq(bc_buf_putf(&e->sout, "out %d\n", seed), BC_OK);
	for (i = 0; i < objlen; i++)
		ck_assert_int_eq(bc_buf_put_u8(&e->obj,
		    (uint8_t)((i * 7 + (size_t)seed) % 251)), BC_OK);
	if (seed % 2 == 0)
		ck_assert_int_eq(bc_buf_put_str(&e->dia, "DIAG"), BC_OK);
	e->compile_ms = 1000 + seed;
}

static int
bufs_equal(const struct bc_buf *a, const struct bc_buf *b)
{
	return bc_buf_len(a) == bc_buf_len(b) && (bc_buf_len(a) == 0 ||
	    memcmp(bc_buf_data(a), bc_buf_data(b), bc_buf_len(a)) == 0);
}

static int
entries_equal(const struct bc_cache_entry *a, const struct bc_cache_entry *b)
{
	return bufs_equal(&a->serr, &b->serr) && bufs_equal(&a->sout, &b->sout)
	    && bufs_equal(&a->obj, &b->obj) && bufs_equal(&a->dia, &b->dia) &&
	    bufs_equal(&a->dotd, &b->dotd) && a->compile_ms == b->compile_ms &&
	    strcmp(a->origin, b->origin) == 0;
}

START_TEST(test_blob_roundtrip)
{
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];

	fill_entry(&e, 4, 5000);
	ck_assert_int_eq(bc_buf_put_str(&e.dotd, "x.o: x.c\n"), BC_OK);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_mem_eq(bc_buf_data(&blob), "BCCE\0\2\2\5", 8);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert(entries_equal(&e, &d));
	ck_assert_str_eq(d.origin, "");
	bc_cache_entry_free(&d);
	bc_buf_reset(&blob);

	/* the storer's origin goes with the blob (version 2) */
	memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert_str_eq(d.origin, "0123456789abcdef");
	ck_assert(entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	/* an origin that is not hex is corrupt, even with a good checksum */
	{
		uint8_t *m = xmalloc(bc_buf_len(&blob));
		struct bc_hash h;

		memcpy(m, bc_buf_data(&blob), bc_buf_len(&blob));
		m[BC_CACHE_HDR_LEN - 3] = 'G';
		bc_hash_init(&h);
		bc_hash_update(&h, m, BC_CACHE_HDR_LEN);
		bc_hash_update(&h, m + BC_CACHE_HDR_LEN + BC_HASH_LEN,
		    bc_buf_len(&blob) - BC_CACHE_HDR_LEN - BC_HASH_LEN);
		bc_hash_final(&h, m + BC_CACHE_HDR_LEN);
		bc_hash_free(&h);
		ck_assert_int_eq(bc_cache_blob_decode(m, bc_buf_len(&blob), &d,
		    err), BC_ERR_CORRUPT);
		ck_assert_ptr_nonnull(strstr(err, "origin"));
		free(m);
	}
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);

	/* a version 1 blob (no origin), as older daemons stored them, is
	 * still read */
	{
		size_t n, v1n;
		uint8_t *m;
		struct bc_hash h;

		fill_entry(&e, 2, 300);
		memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
		ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err),
		    BC_OK);
		n = bc_buf_len(&blob);
		v1n = n - (BC_CACHE_HDR_LEN - BC_CACHE_HDR_LEN_V1);
		m = xmalloc(n);
		memcpy(m, bc_buf_data(&blob), BC_CACHE_HDR_LEN_V1);
		m[5] = 1;
		memcpy(m + BC_CACHE_HDR_LEN_V1 + BC_HASH_LEN,
		    bc_buf_data(&blob) + BC_CACHE_HDR_LEN + BC_HASH_LEN,
		    n - BC_CACHE_HDR_LEN - BC_HASH_LEN);
		bc_hash_init(&h);
		bc_hash_update(&h, m, BC_CACHE_HDR_LEN_V1);
		bc_hash_update(&h, m + BC_CACHE_HDR_LEN_V1 + BC_HASH_LEN,
		    v1n - BC_CACHE_HDR_LEN_V1 - BC_HASH_LEN);
		bc_hash_final(&h, m + BC_CACHE_HDR_LEN_V1);
		bc_hash_free(&h);
		ck_assert_int_eq(bc_cache_blob_decode(m, v1n, &d, err), BC_OK);
		ck_assert_str_eq(d.origin, "");
		e.origin[0] = '\0';
		ck_assert(entries_equal(&e, &d));
		bc_cache_entry_free(&d);
		bc_cache_entry_free(&e);
		bc_buf_reset(&blob);
		free(m);
	}

	/* an all-empty entry has an empty payload */
	bc_cache_entry_init(&e);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&blob), BC_CACHE_HDR_LEN + BC_HASH_LEN);
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob),
	    bc_buf_len(&blob), &d, err), BC_OK);
	ck_assert(entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_buf_free(&blob);
}
END_TEST

START_TEST(test_blob_mutations)
{
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	uint8_t *m;
	size_t n, i;
	int bit;

	fill_entry(&e, 3, 700);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 3, &blob, err), BC_OK);
	n = bc_buf_len(&blob);
	m = xmalloc(n);
	/* every bit flip of every byte is caught */
	for (i = 0; i < n; i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(m, bc_buf_data(&blob), n);
			m[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(bc_cache_blob_decode(m, n, &d, err) != BC_OK,
			    "flip at %zu bit %d accepted", i, bit);
			bc_cache_entry_free(&d);
		}
	/* byte replacement */
	for (i = 0; i < n; i++) {
		memcpy(m, bc_buf_data(&blob), n);
		m[i] = (uint8_t)~m[i];
		ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err),
		    BC_ERR_CORRUPT);
		bc_cache_entry_free(&d);
	}
	/* truncation from both ends */
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob), i, &d,
		    err), BC_ERR_CORRUPT);
		bc_cache_entry_free(&d);
		ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob) + i + 1,
		    n - i - 1, &d, err), BC_ERR_CORRUPT);
		bc_cache_entry_free(&d);
	}
	/* bad magic and version are named */
	memcpy(m, bc_buf_data(&blob), n);
	m[0] = 'X';
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "magic"));
	memcpy(m, bc_buf_data(&blob), n);
	m[5] = 9;
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "version"));
	/* the original still decodes */
	ck_assert_int_eq(bc_cache_blob_decode(bc_buf_data(&blob), n, &d, err),
	    BC_OK);
	ck_assert(entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	free(m);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);
}
END_TEST

START_TEST(test_blob_limits)
{
	/* A header claiming a huge object is refused before allocating. */
	struct bc_cache_entry e, d;
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	char err[BC_ERRLEN];
	uint8_t *m;
	size_t n;

	fill_entry(&e, 1, 10);
	ck_assert_int_eq(bc_cache_blob_encode(&e, 1, &blob, err), BC_OK);
	n = bc_buf_len(&blob);
	m = xmalloc(n);
	memcpy(m, bc_buf_data(&blob), n);
	/* object size field: offset 8 + 2*8 */
	memset(m + 24, 0x7f, 8);
	ck_assert_int_eq(bc_cache_blob_decode(m, n, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "limit"));
	free(m);
	bc_cache_entry_free(&e);
	bc_buf_free(&blob);
}
END_TEST

/* ----------------------------------------------------------------- index */

static void
key_n(int i, char out[BC_HASH_HEXLEN + 1])
{
	uint8_t d[BC_HASH_LEN];
	char s[32];

	snprintf(s, sizeof(s), "key-%d", i);
	bc_hash_bytes(s, strlen(s), d);
	bc_hash_hex(d, sizeof(d), out);
}

static struct bc_cache *
open_cache(uint64_t max)
{
	struct bc_cache *c;
	char err[BC_ERRLEN], *dir = xasprintf("%s/cache", tmpd);

	ck_assert_msg(bc_cache_open(dir, max, &c, err) == BC_OK, "%s", err);
	free(dir);
	return c;
}

/* Flip the low bit of b's last byte (a damaged blob, and back). */
static void
flip_last(struct bc_buf *b)
{
	size_t at = bc_buf_len(b) - 1;
	uint8_t x = bc_buf_data(b)[at] ^ 1;

	ck_assert_int_eq(bc_buf_patch(b, at, &x, 1), BC_OK);
}

START_TEST(test_index_ops)
{
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e, d;
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p;
	struct stat sb;

	key_n(1, k);
	key_n(2, k2);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_NOENT);
	fill_entry(&e, 2, 3000);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert(bc_cache_has(c, k));
	ck_assert(!bc_cache_has(c, k2));
	p = bc_cache_blob_path(c, k);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_OK);
	ck_assert(entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_get(c, k, 0, &d, err), BC_OK);
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_get(c, "nothex", 1, &d, err), BC_ERR_INVAL);
	/* the blob alone, as a worker serving a hit reads it: the same
	 * sections, nothing counted; a missing or damaged blob is reported,
	 * not dropped (bc_cache_lookup does that) */
	{
		struct bc_cache_blob b;
		struct bc_buf raw = BC_BUF_INIT(BC_BUF_CEILING);

		bc_cache_blob_init(&b);
		ck_assert_int_eq(bc_cache_lookup_blob(c, k, &b, err), BC_OK);
		ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
		ck_assert(entries_equal(&e, &d));
		bc_cache_entry_free(&d);
		ck_assert_int_eq(bc_cache_lookup_blob(c, k2, &b, err),
		    BC_ERR_NOENT);
		ck_assert_int_eq(bc_read_file(p, BC_BUF_CEILING, &raw, err),
		    BC_OK);
		flip_last(&raw);
		ck_assert_int_eq(bc_write_file_atomic(p, bc_buf_data(&raw),
		    bc_buf_len(&raw), 0600, err), BC_OK);
		ck_assert_int_eq(bc_cache_lookup_blob(c, k, &b, err),
		    BC_ERR_CORRUPT);
		ck_assert_int_eq(stat(p, &sb), 0);	/* still there */
		flip_last(&raw);
		ck_assert_int_eq(bc_write_file_atomic(p, bc_buf_data(&raw),
		    bc_buf_len(&raw), 0600, err), BC_OK);
		bc_buf_free(&raw);
		bc_cache_blob_free(&b);
	}
	ck_assert_int_eq(bc_cache_count(c, "uncacheable:compile-error", 2),
	    BC_OK);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.stores, 1);
	ck_assert_uint_eq(s.entries, 1);
	ck_assert_uint_eq(s.stored_bytes, (uint64_t)sb.st_size);
	ck_assert_uint_eq(s.time_saved_ms, 1002);
	ck_assert_uint_eq(s.uncacheable, 2);
	ck_assert_uint_eq(s.nreasons, 1);
	ck_assert_str_eq(s.reasons[0].name, "compile-error");

	/* counters survive a reopen; zero resets them, entries stay */
	bc_cache_close(c);
	c = open_cache(0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.hits, 1);
	/* zero: the pages count from a baseline, the totals go on */
	ck_assert_int_eq(bc_cache_zero(c, err), BC_OK);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.entries, 1);
	ck_assert_int_gt(s.zeroed_at, 0);
	{
		struct bc_cache_stats base, since;

		ck_assert_int_eq(bc_cache_baseline(c, &base, err), BC_OK);
		ck_assert_uint_eq(base.hits, 1);
		ck_assert_uint_eq(base.uncacheable, 2);
		bc_cache_stats_since(&s, &base, &since);
		ck_assert_uint_eq(since.hits, 0);
		ck_assert_uint_eq(since.requests, 0);
		ck_assert_uint_eq(since.uncacheable, 0);
		ck_assert_uint_eq(since.reasons[0].value, 0);
		ck_assert_uint_eq(since.entries, 1);
		ck_assert_int_eq(since.zeroed_at, base.zeroed_at);
	}

	/* a flipped byte in the blob: caught, evicted, counted, a miss */
	{
		int fd = open(p, O_RDWR);
		uint8_t byte;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pread(fd, &byte, 1, sb.st_size - 5), 1);
		byte ^= 0x40;
		ck_assert_int_eq(pwrite(fd, &byte, 1, sb.st_size - 5), 1);
		close(fd);
	}
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_CORRUPT);
	ck_assert(!bc_cache_has(c, k));
	ck_assert_int_ne(stat(p, &sb), 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.corrupt, 1);
	ck_assert_uint_eq(s.misses, 2);	/* totals: one before the zero */
	ck_assert_uint_eq(s.entries, 0);
	ck_assert_uint_eq(s.stored_bytes, 0);

	/* a row whose blob vanished is a miss and is forgotten */
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_NOENT);
	ck_assert(!bc_cache_has(c, k));
	free(p);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* Set the last use of key to t (as the test of an age would). */
static void
set_last_used(const char *key, int64_t t)
{
	char *path = xasprintf("%s/cache/index.sqlite", tmpd), *sql;
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	sql = sqlite3_mprintf("UPDATE entries SET last_used=%lld WHERE "
	    "key='%q'", (long long)t, key);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_free(sql);
	sqlite3_close(db);
	free(path);
}

static int
blob_there(struct bc_cache *c, const char *key)
{
	char *p = bc_cache_blob_path(c, key);
	struct stat sb;
	int r = stat(p, &sb) == 0;

	free(p);
	return r;
}

/* Clear, evict-older-than and an operator's limit: more entries than a
 * batch, rows and blobs go together, the limit outlives a reopen and
 * overrides the size the cache is opened with. */
START_TEST(test_admin_ops)
{
	enum { N = BC_CACHE_ADMIN_BATCH + 44, OLD = 100 };
	static char k[N][BC_HASH_HEXLEN + 1];
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e;
	struct bc_cache_stats s;
	struct bc_cache_check chk;
	char err[BC_ERRLEN];
	uint64_t n, freed, one, before;
	int64_t now = (int64_t)time(NULL);
	int i;

	fill_entry(&e, 3, 500);
	for (i = 0; i < N; i++) {
		key_n(5000 + i, k[i]);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	}
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, N);
	one = s.stored_bytes / N;
	ck_assert_uint_eq(s.limit_set, 0);
	ck_assert_uint_eq(s.max_bytes, BC_CACHE_DEFAULT_SIZE);

	/* evict-older-than: exactly the old ones */
	for (i = 0; i < OLD; i++)
		set_last_used(k[i], now - 10 * 86400);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_int_le(s.oldest_used, now - 10 * 86400);
	ck_assert_int_eq(bc_cache_evict_older(c, now - 7 * 86400, &n, &freed,
	    err), BC_OK);
	ck_assert_uint_eq(n, OLD);
	ck_assert_uint_eq(freed, OLD * one);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(bc_cache_has(c, k[i]), i >= OLD);
		ck_assert_int_eq(blob_there(c, k[i]), i >= OLD);
	}
	ck_assert_int_eq(bc_cache_evict_older(c, now - 7 * 86400, &n, NULL,
	    err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, N - OLD);
	ck_assert_uint_eq(s.stored_bytes, (N - OLD) * one);
	ck_assert_uint_eq(s.evictions, OLD);

	/* an operator's limit: evicts down to it (LRU), persists */
	before = s.stored_bytes;
	ck_assert_int_eq(bc_cache_set_limit(c, 50 * one, &n, &freed, err),
	    BC_OK);
	ck_assert_uint_eq(n, N - OLD - 50);
	ck_assert_uint_eq(freed, before - 50 * one);
	ck_assert(bc_cache_has(c, k[N - 1]) && !bc_cache_has(c, k[OLD]));
	bc_cache_close(c);
	c = open_cache(1 << 30);	/* --cache-size 1G: the operator's wins */
	ck_assert_uint_eq(bc_cache_operator_limit(c), 50 * one);
	ck_assert_uint_eq(bc_cache_limit(c), 50 * one);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.limit_set, 1);
	ck_assert_uint_eq(s.max_bytes, 50 * one);
	ck_assert_uint_eq(s.entries, 50);
	{
		/* a store beyond it evicts to it */
		char nk[BC_HASH_HEXLEN + 1];

		key_n(9999, nk);
		ck_assert_int_eq(bc_cache_put(c, nk, &e, err), BC_OK);
		ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
		ck_assert_uint_eq(s.entries, 50);
		ck_assert(bc_cache_has(c, nk));
	}
	/* 0 forgets it: the size the cache was opened with again */
	ck_assert_int_eq(bc_cache_set_limit(c, 0, &n, NULL, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(bc_cache_operator_limit(c), 0);
	ck_assert_uint_eq(bc_cache_limit(c), 1 << 30);

	/* clear: every row and blob, counted as evictions */
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	before = s.evictions;
	ck_assert_int_eq(bc_cache_clear(c, &n, &freed, err), BC_OK);
	ck_assert_uint_eq(n, 50);
	ck_assert_uint_eq(freed, 50 * one);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 0);
	ck_assert_uint_eq(s.stored_bytes, 0);
	ck_assert_uint_eq(s.oldest_used, 0);
	ck_assert_uint_eq(s.evictions, before + 50);
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.bad_size + chk.corrupt, 0);
	for (i = 0; i < N; i++)
		ck_assert(!blob_there(c, k[i]));

	/* a clear cut short after a batch's blobs went (a crash): the rows
	 * left are misses, and the start-up reconciliation drops them */
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	for (i = 0; i < 2; i++) {
		char *p = bc_cache_blob_path(c, k[i]);

		ck_assert_int_eq(unlink(p), 0);
		free(p);
	}
	{
		struct bc_cache_entry d;

		ck_assert_int_eq(bc_cache_get(c, k[0], 1, &d, err),
		    BC_ERR_NOENT);
		bc_cache_entry_free(&d);
	}
	ck_assert_int_eq(bc_cache_reconcile(c, 1, 0, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows, 1);
	ck_assert_uint_eq(chk.entries, 2);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 2);
	ck_assert_uint_eq(s.stored_bytes, 2 * one);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

START_TEST(test_lru_eviction)
{
	struct bc_cache *c;
	struct bc_cache_entry e[6], d;
	struct bc_cache_stats s;
	char k[6][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	struct bc_buf blob = BC_BUF_INIT(BC_BUF_CEILING);
	uint64_t one;
	int i;

	for (i = 0; i < 6; i++) {
		key_n(100 + i, k[i]);
		/* incompressible-ish, all the same blob size */
		fill_entry(&e[i], 2 * i + 1, 1000);
	}
	ck_assert_int_eq(bc_cache_blob_encode(&e[0], 1, &blob, err), BC_OK);
	one = bc_buf_len(&blob);
	bc_buf_free(&blob);
	/* room for exactly three entries */
	c = open_cache(3 * one + one / 2);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(bc_cache_put(c, k[i], &e[i], err), BC_OK);
	/* use 0: now 1 is the least recently used */
	ck_assert_int_eq(bc_cache_get(c, k[0], 1, &d, err), BC_OK);
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_put(c, k[3], &e[3], err), BC_OK);
	ck_assert(bc_cache_has(c, k[0]));
	ck_assert(!bc_cache_has(c, k[1]));
	ck_assert(bc_cache_has(c, k[2]));
	ck_assert(bc_cache_has(c, k[3]));
	/* next victims: 2, then 0 */
	ck_assert_int_eq(bc_cache_put(c, k[4], &e[4], err), BC_OK);
	ck_assert(!bc_cache_has(c, k[2]));
	ck_assert(bc_cache_has(c, k[0]));
	ck_assert_int_eq(bc_cache_put(c, k[5], &e[5], err), BC_OK);
	ck_assert(!bc_cache_has(c, k[0]));
	ck_assert(bc_cache_has(c, k[3]) && bc_cache_has(c, k[4]) &&
	    bc_cache_has(c, k[5]));
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.evictions, 3);
	ck_assert_uint_eq(s.entries, 3);
	ck_assert_uint_le(s.stored_bytes, 3 * one + one / 2);
	/* evicted blobs are gone from disk */
	{
		char *p = bc_cache_blob_path(c, k[1]);
		struct stat sb;

		ck_assert_int_ne(stat(p, &sb), 0);
		free(p);
	}
	/* explicit eviction to one entry keeps the most recent */
	ck_assert_int_eq(bc_cache_evict(c, one + one / 2, NULL, err), BC_OK);
	ck_assert(!bc_cache_has(c, k[3]) && !bc_cache_has(c, k[4]) &&
	    bc_cache_has(c, k[5]));
	for (i = 0; i < 6; i++)
		bc_cache_entry_free(&e[i]);
	bc_cache_close(c);
}
END_TEST

/* A batch of rows that cannot be written leaves no blob behind. */
START_TEST(test_index_stored_fails)
{
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e;
	struct bc_cache_stored v[2];
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p;
	struct stat sb;

	fill_entry(&e, 4, 900);
	key_n(301, k);
	ck_assert_int_eq(bc_cache_put_blob(c, k, &e, 1, &v[0], err), BC_OK);
	p = bc_cache_blob_path(c, k);
	ck_assert_int_eq(stat(p, &sb), 0);
	v[1] = v[0];
	memcpy(v[1].key, "not-a-key", 10);
	ck_assert_int_eq(bc_cache_index_stored(c, v, 2, err), BC_ERR_INVAL);
	ck_assert_int_ne(stat(p, &sb), 0);
	ck_assert(!bc_cache_has(c, k));
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.store_errors, 2);
	ck_assert_uint_eq(s.stores, 0);
	ck_assert_uint_eq(s.misses, 0);
	ck_assert_uint_eq(s.stored_bytes, 0);
	free(p);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

START_TEST(test_reconcile)
{
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e;
	struct bc_cache_check chk;
	struct bc_cache_stats s;
	char k[4][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p, *orphan, *bad_orphan, *tmp;
	int i;

	fill_entry(&e, 6, 800);
	for (i = 0; i < 4; i++) {
		key_n(200 + i, k[i]);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	}
	/* row without blob */
	p = bc_cache_blob_path(c, k[0]);
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	/* blob without row: a copy under another valid name */
	p = bc_cache_blob_path(c, k[1]);
	{
		char nk[BC_HASH_HEXLEN + 1];
		struct bc_buf b = BC_BUF_INIT(1 << 20);

		key_n(999, nk);
		orphan = bc_cache_blob_path(c, nk);
		ck_assert_int_eq(bc_read_file(p, 1 << 20, &b, err), BC_OK);
		{
			char *dir = xstrdup(orphan);

			*strrchr(dir, '/') = '\0';
			ck_assert_int_eq(bc_mkdir_p(dir, 0700, err), BC_OK);
			tmp = xasprintf("%s/.tmp.%s.123", dir, nk);
			free(dir);
		}
		ck_assert_int_eq(bc_write_file_atomic(orphan, bc_buf_data(&b),
		    bc_buf_len(&b), 0600, err), BC_OK);
		ck_assert_int_eq(bc_write_file_atomic(tmp, "x", 1, 0600, err),
		    BC_OK);
		bc_buf_free(&b);
		/* and one that does not verify */
		key_n(998, nk);
		bad_orphan = bc_cache_blob_path(c, nk);
		{
			char *dir = xstrdup(bad_orphan);

			*strrchr(dir, '/') = '\0';
			ck_assert_int_eq(bc_mkdir_p(dir, 0700, err), BC_OK);
			free(dir);
		}
		ck_assert_int_eq(bc_write_file_atomic(bad_orphan,
		    "not a blob at all", 17, 0600, err), BC_OK);
	}
	free(p);
	/* a corrupt blob (same size, bad byte) */
	p = bc_cache_blob_path(c, k[2]);
	{
		int fd = open(p, O_RDWR);

		ck_assert_int_eq(pwrite(fd, "Z", 1, 70), 1);
		close(fd);
	}
	free(p);
	/* check only: counts, changes nothing */
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows, 1);
	ck_assert_uint_eq(chk.orphan_blobs, 2);
	ck_assert_uint_eq(chk.adopted, 0);
	ck_assert_uint_eq(chk.temp_files, 1);
	ck_assert_uint_eq(chk.corrupt, 1);
	ck_assert_uint_eq(chk.entries, 2);
	ck_assert(bc_cache_has(c, k[0]));
	/* repair: the blob without a row verifies, so it is indexed (a
	 * crash between a blob and its row, keeper.h) */
	ck_assert_int_eq(bc_cache_reconcile(c, 1, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.adopted, 1);
	ck_assert_uint_eq(chk.entries, 3);
	ck_assert(!bc_cache_has(c, k[0]));
	ck_assert(!bc_cache_has(c, k[2]));
	ck_assert(bc_cache_has(c, k[1]) && bc_cache_has(c, k[3]));
	{
		struct stat sb;
		char nk[BC_HASH_HEXLEN + 1];

		key_n(999, nk);
		ck_assert(bc_cache_has(c, nk));
		ck_assert_int_eq(stat(orphan, &sb), 0);
		ck_assert_int_ne(stat(bad_orphan, &sb), 0);
		ck_assert_int_ne(stat(tmp, &sb), 0);
	}
	/* now consistent */
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.corrupt + chk.bad_size, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 3);
	ck_assert_uint_eq(s.stored_bytes, chk.bytes);
	free(orphan);
	free(bad_orphan);
	free(tmp);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

START_TEST(test_inflight)
{
	struct bc_cache *c = open_cache(0);
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int fd, fd2, st;
	pid_t pid;

	key_n(7, k);
	ck_assert_int_eq(bc_cache_inflight_try(c, k, &fd, err), BC_OK);
	/* another process cannot take it (fcntl locks are per process) */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_cache *c2;

		if (bc_cache_open(bc_cache_dir(c), 0, &c2, err) != BC_OK)
			_exit(2);
		_exit(bc_cache_inflight_try(c2, k, &fd2, err) == BC_ERR_BUSY ?
		    0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	bc_cache_inflight_release(c, k, fd);
	ck_assert_int_eq(bc_cache_inflight_try(c, k, &fd2, err), BC_OK);
	bc_cache_inflight_release(c, k, fd2);
	bc_cache_close(c);
}
END_TEST


/* The lookup probe answers without the index: absent unless a blob
 * exists or another process is compiling the key. */
START_TEST(test_probe)
{
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e;
	char k[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	const char *dir = bc_cache_dir(c);
	int up[2], down[2], st;
	char x;
	pid_t pid;

	key_n(11, k);
	key_n(12, k2);
	ck_assert_int_eq(bc_cache_probe(dir, k), BC_CACHE_PROBE_ABSENT);
	fill_entry(&e, 3, 100);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	bc_cache_entry_free(&e);
	ck_assert_int_eq(bc_cache_probe(dir, k), BC_CACHE_PROBE_MAYBE);
	ck_assert_int_eq(bc_cache_probe(dir, k2), BC_CACHE_PROBE_ABSENT);
	/* a key another process compiles is "maybe": the lookup waits */
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_cache *c2;
		int fd;

		if (bc_cache_open(dir, 0, &c2, err) != BC_OK ||
		    bc_cache_inflight_try(c2, k2, &fd, err) != BC_OK)
			_exit(2);
		(void)!write(up[1], "l", 1);
		(void)!read(down[0], &x, 1);
		bc_cache_inflight_release(c2, k2, fd);
		(void)!write(up[1], "u", 1);
		(void)!read(down[0], &x, 1);
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &x, 1), 1);
	ck_assert_int_eq(bc_cache_probe(dir, k2), BC_CACHE_PROBE_MAYBE);
	/* another key on another byte is not held */
	ck_assert_int_eq(bc_cache_probe(dir, "ab" "00000000000000000000000000"
	    "000000000000000000000000000000000000"), BC_CACHE_PROBE_ABSENT);
	ck_assert_int_eq(write(down[1], "g", 1), 1);
	ck_assert_int_eq(read(up[0], &x, 1), 1);
	ck_assert_int_eq(bc_cache_probe(dir, k2), BC_CACHE_PROBE_ABSENT);
	ck_assert_int_eq(write(down[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a malformed key is "maybe": the full lookup says what is wrong */
	ck_assert_int_eq(bc_cache_probe(dir, "not-a-key"), BC_CACHE_PROBE_MAYBE);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	bc_cache_close(c);
}
END_TEST

/* A schema-1 cache (blobs/ab/cd/<key>) opens with its entries intact. */
START_TEST(test_migrate_v1)
{
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e, d;
	struct bc_cache_check chk;
	char k[4][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *dir = xstrdup(bc_cache_dir(c)), *p;
	sqlite3 *db;
	struct stat sb;
	int i;

	for (i = 0; i < 4; i++) {
		key_n(100 + i, k[i]);
		fill_entry(&e, i, 300 + (size_t)i);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
		bc_cache_entry_free(&e);
	}
	bc_cache_close(c);
	/* rewrite it as schema 1 left it */
	for (i = 0; i < 4; i++) {
		char *from = xasprintf("%s/blobs/%.2s/%s", dir, k[i], k[i]);
		char *sub = xasprintf("%s/blobs/%.2s/%.2s", dir, k[i], k[i] + 2);
		char *to = xasprintf("%s/%s", sub, k[i]);

		ck_assert_int_eq(bc_mkdir_p(sub, 0700, err), BC_OK);
		ck_assert_int_eq(rename(from, to), 0);
		free(from);
		free(sub);
		free(to);
	}
	p = xasprintf("%s/index.sqlite", dir);
	ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version=1", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	free(p);
	ck_assert_int_eq(bc_cache_open(dir, 0, &c, err), BC_OK);
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.corrupt + chk.bad_size, 0);
	ck_assert_uint_eq(chk.entries, 4);
	for (i = 0; i < 4; i++) {
		char *sub = xasprintf("%s/blobs/%.2s/%.2s", dir, k[i], k[i] + 2);

		fill_entry(&e, i, 300 + (size_t)i);
		ck_assert_int_eq(bc_cache_get(c, k[i], BC_CACHE_COUNT_ALL, &d,
		    err), BC_OK);
		ck_assert(entries_equal(&e, &d));
		bc_cache_entry_free(&e);
		bc_cache_entry_free(&d);
		ck_assert_int_ne(stat(sub, &sb), 0);	/* emptied, removed */
		free(sub);
	}
	bc_cache_close(c);
	free(dir);
}
END_TEST

/* A lazy handle opens the index on first use; put_miss counts the miss
 * with the store. */
START_TEST(test_lazy_put_miss)
{
	struct bc_cache *c;
	struct bc_cache_entry e;
	struct bc_cache_stats st;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *dir = xasprintf("%s/lazy", tmpd), *idx;
	struct stat sb;
	sqlite3 *db;

	key_n(21, k);
	ck_assert_int_eq(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	idx = xasprintf("%s/index.sqlite", dir);
	ck_assert_int_ne(stat(idx, &sb), 0);	/* not opened yet */
	ck_assert(!bc_cache_blob_exists(c, k));
	fill_entry(&e, 5, 200);
	ck_assert_int_eq(bc_cache_put_miss(c, k, &e, err), BC_OK);
	bc_cache_entry_free(&e);
	ck_assert(bc_cache_blob_exists(c, k));
	ck_assert_int_eq(bc_cache_stats(c, &st, err), BC_OK);
	ck_assert_uint_eq(st.stores, 1);
	ck_assert_uint_eq(st.requests, 1);
	ck_assert_uint_eq(st.misses, 1);
	ck_assert_uint_eq(st.hits, 0);
	bc_cache_close(c);
	/* an index from a newer boltccd: the lazy open succeeds, the first
	 * use says why it cannot go on */
	ck_assert_int_eq(sqlite3_open(idx, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	ck_assert_int_ne(bc_cache_stats(c, &st, err), BC_OK);
	ck_assert_ptr_nonnull(strstr(err, "newer"));
	bc_cache_close(c);
	ck_assert_int_eq(bc_cache_open(dir, 0, &c, err), BC_ERR_INVAL);
	free(idx);
	free(dir);
}
END_TEST

START_TEST(test_lookup_touch)
{
	struct bc_cache *c = open_cache(0);
	struct bc_cache_entry e, d;
	struct bc_cache_blob b;
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	key_n(42, k);
	fill_entry(&e, 8, 2000);
	bc_cache_blob_init(&b);
	ck_assert_int_eq(bc_cache_lookup(c, k, &b, err), BC_ERR_NOENT);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(bc_cache_lookup(c, k, &b, err), BC_OK);
	ck_assert_uint_eq(b.size[2], 2000);
	ck_assert_uint_gt(b.zlen[2], 0);
	ck_assert_uint_eq(b.zlen[4], 0);	/* no .d */
	ck_assert_int_eq(b.compile_ms, e.compile_ms);
	/* nothing counted until touched */
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 0);
	ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
	ck_assert(entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_cache_touch(c, k, BC_CACHE_COUNT_ALL, 1, b.compile_ms);
	bc_cache_touch(c, k, BC_CACHE_COUNT_HITS, 0, 0);	/* not counted */
	bc_cache_touch(c, k, BC_CACHE_COUNT_ALL, 0, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.time_saved_ms, (uint64_t)e.compile_ms);
	/* the stored frames go out on the wire as they are and come back
	 * as the entry */
	{
		struct bc_request req;
		struct bc_reply rep;
		struct bc_buf out = BC_BUF_INIT(BC_BUF_CEILING);
		const void *z[BC_CACHE_NSECT];
		int i;

		for (i = 0; i < BC_CACHE_NSECT; i++)
			z[i] = bc_buf_data(&b.data) + b.off[i];
		bc_request_init(&req);
		req.proto = BC_PROTO_BOLT;
		req.kind = BC_RQST_LOOKUP;
		ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z, b.zlen,
		    err), BC_OK);
		ck_assert_int_eq(bc_proto_parse_reply(&out, BC_PROTO_BOLT,
		    BC_RQST_LOOKUP, NULL, &rep, err), BC_OK);
		ck_assert(!rep.miss);
		ck_assert(bufs_equal(&rep.doto, &e.obj));
		ck_assert(bufs_equal(&rep.serr, &e.serr));
		ck_assert(bufs_equal(&rep.sout, &e.sout));
		ck_assert(bufs_equal(&rep.dia, &e.dia));
		ck_assert_uint_eq(bc_buf_len(&rep.dotd), 0);
		bc_reply_free(&rep);
		/* a compile reply has no DOTD */
		bc_buf_free(&out);
		req.kind = BC_RQST_COMPILE;
		ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z, b.zlen,
		    err), BC_OK);
		ck_assert_int_eq(bc_proto_parse_reply(&out, BC_PROTO_BOLT,
		    BC_RQST_COMPILE, NULL, &rep, err), BC_OK);
		ck_assert(bufs_equal(&rep.doto, &e.obj));
		ck_assert_uint_eq(bc_buf_avail(&out), 0);
		bc_reply_free(&rep);
		bc_buf_free(&out);
		/* never for distcc protocols */
		req.proto = 2;
		ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z, b.zlen,
		    err), BC_ERR_INVAL);
		bc_request_free(&req);
	}
	bc_cache_blob_free(&b);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* Build a request, parse it back, and mutate it: never a crash. */
static void
roundtrip_request(struct bc_request *req, struct bc_request *back)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20), in;
	struct bc_request m;
	char err[BC_ERRLEN];
	uint8_t *copy;
	size_t n, i;

	ck_assert_int_eq(bc_proto_write_request_head(&out, req, err), BC_OK);
	if (req->kind == BC_RQST_COMPILE)
		ck_assert_int_eq(bc_proto_write_doti(&out, req->proto, "x", 1,
		    err), BC_OK);
	n = bc_buf_len(&out);
	copy = xmalloc(n);
	memcpy(copy, bc_buf_data(&out), n);
	bc_buf_view(&in, copy, n);
	ck_assert_msg(bc_proto_parse_request(&in, NULL, back, err) == BC_OK,
	    "%s", err);
	for (i = 0; i < n; i++) {
		uint8_t *mm = xmalloc(n);

		memcpy(mm, copy, n);
		mm[i] ^= 0x41;
		bc_buf_view(&in, mm, n);
		(void)bc_proto_parse_request(&in, NULL, &m, err);
		bc_request_free(&m);
		bc_buf_view(&in, copy, i);
		ck_assert_int_ne(bc_proto_parse_request(&in, NULL, &m, err),
		    BC_OK);
		bc_request_free(&m);
		free(mm);
	}
	free(copy);
	bc_buf_free(&out);
}

START_TEST(test_proto_cache_requests)
{
	struct bc_request req, back;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	struct bc_buf out = BC_BUF_INIT(4096);

	key_n(5, k);
	/* lookup */
	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_LOOKUP;
	req.key = xstrdup(k);
	roundtrip_request(&req, &back);
	ck_assert_int_eq(back.kind, BC_RQST_LOOKUP);
	ck_assert_str_eq(back.key, k);
	bc_request_free(&back);
	/* a bad key is refused by the writer */
	req.key[0] = 'Z';
	ck_assert_int_eq(bc_proto_write_request_head(&out, &req, err),
	    BC_ERR_INVAL);
	bc_request_free(&req);
	/* zero */
	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_ZERO;
	roundtrip_request(&req, &back);
	ck_assert_int_eq(back.kind, BC_RQST_ZERO);
	bc_request_free(&back);
	bc_request_free(&req);
	/* compile with an identity: FLAG_IDENTITY set by the writer */
	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_COMPILE;
	req.flags = BC_FLAG_LOOKED_UP;
	req.cwd = xstrdup("/src");
	req.identity = xstrdup(k);
	bc_strv_push(&req.argv, "gcc");
	bc_strv_push(&req.argv, "-c");
	bc_strv_push(&req.argv, "x.c");
	roundtrip_request(&req, &back);
	ck_assert_str_eq(back.identity, k);
	ck_assert_uint_eq(back.flags, BC_FLAG_LOOKED_UP | BC_FLAG_IDENTITY);
	ck_assert_uint_eq(back.argv.n, 3);
	bc_request_free(&back);
	/* without identity the bit is cleared even if the caller set it */
	free(req.identity);
	req.identity = NULL;
	req.flags |= BC_FLAG_IDENTITY;
	roundtrip_request(&req, &back);
	ck_assert_ptr_null(back.identity);
	ck_assert_uint_eq(back.flags, BC_FLAG_LOOKED_UP);
	bc_request_free(&back);
	bc_request_free(&req);
	/* MISS reply */
	{
		struct bc_reply rep, r2;

		bc_request_init(&req);
		req.proto = BC_PROTO_BOLT;
		req.kind = BC_RQST_LOOKUP;
		bc_reply_init(&rep);
		rep.miss = 1;
		ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err),
		    BC_OK);
		ck_assert_mem_eq(bc_buf_data(&out), "BOLT00000001MISS00000000",
		    24);
		ck_assert_int_eq(bc_proto_parse_reply(&out, BC_PROTO_BOLT,
		    BC_RQST_LOOKUP, NULL, &r2, err), BC_OK);
		ck_assert(r2.miss);
		bc_reply_free(&r2);
		bc_reply_free(&rep);
		bc_request_free(&req);
	}
	bc_buf_free(&out);
}
END_TEST

static Suite *
cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT_SLOW);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_hash_vectors);
	tcase_add_test(tc, test_fnv1a_vectors);
	tcase_add_test(tc, test_key_same);
	tcase_add_test(tc, test_key_split);
	tcase_add_test(tc, test_key_inputs);
	tcase_add_test(tc, test_key_args_and_debug);
	tcase_add_test(tc, test_pump_key);
	tcase_add_test(tc, test_pathmap);
	tcase_add_test(tc, test_pump_key_mapped);
	tcase_add_test(tc, test_pump_key_deps);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_blob_roundtrip);
	tcase_add_test(tc, test_blob_mutations);
	tcase_add_test(tc, test_blob_limits);
	tcase_add_test(tc, test_index_ops);
	tcase_add_test(tc, test_lru_eviction);
	tcase_add_test(tc, test_admin_ops);
	tcase_add_test(tc, test_reconcile);
	tcase_add_test(tc, test_index_stored_fails);
	tcase_add_test(tc, test_inflight);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_lazy_put_miss);
	tcase_add_test(tc, test_migrate_v1);
	tcase_add_test(tc, test_lookup_touch);
	tcase_add_test(tc, test_proto_cache_requests);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cache_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
