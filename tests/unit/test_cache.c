/*
 * test_cache.c - unit tests of cache keys (cache/key.c: which argv changes
 * split the key and which do not, pump keys, the .d shape), path prefix
 * maps (cache/pathmap.c), compiler identity, SHA-256, and the cache's
 * requests on the BOLT wire.  The store's files have their own tests:
 * test_blob, test_blobdir, test_index, test_store, test_evict,
 * test_reconcile, test_counters, test_locations, test_inflight.
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
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

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
	char *p = xasprintf("%s/%s", ct_tmpd, name);
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
	char *memo = xasprintf("%s/memo", ct_tmpd);

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

	ct_key(5, k);
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

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	tcase_set_timeout(tc, 60);
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
	tcase_add_test(tc, test_proto_cache_requests);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(cache_suite());
}
