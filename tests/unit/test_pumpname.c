/*
 * test_pumpname.c - the names of a pump job's tree (common/pumpname.h):
 * one name, one link target, the set of names (duplicates, a file and a
 * directory of the same name, entries below a link), links followed
 * through the tree, and a BOLT pump manifest checked as a whole.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/proto3x.h"
#include "common/pumpname.h"
#include "common/util.h"
#include "tests/unit/unit.h"

static char why[BC_ERRLEN];

static int
name_ok(const char *n)
{
	why[0] = '\0';
	return bc_pump_name_check("NAME", n, strlen(n), 0, why);
}

/* BC_OK and the kind, or the error. */
static int
link_ok(const char *name, const char *target, enum bc_pump_kind *k)
{
	enum bc_pump_kind dummy;

	why[0] = '\0';
	return bc_pump_link_check(name, target, strlen(target),
	    k != NULL ? k : &dummy, why);
}

static int
why_has(const char *s)
{
	return strstr(why, s) != NULL;
}

static char *
sysdir_target(const char *name)
{
	size_t slashes = 0, i;
	const char *p;
	char *t = xstrdup("");

	for (p = name; *p != '\0'; p++)
		slashes += *p == '/';
	for (i = 0; i < 20 + slashes; i++) {
		char *n = xasprintf("%s../", t);

		free(t);
		t = n;
	}
	p = t;
	t = xasprintf("%s%s", p, name + 1);
	free((char *)p);
	return t;
}

START_TEST(test_name_good)
{
	char deep[BC_MAX_PATH_DEPTH * 2 + 1], comp[BC_MAX_PATH_COMPONENT + 2];
	size_t i;

	ck_assert_int_eq(name_ok("/a"), BC_OK);
	ck_assert_int_eq(name_ok("/usr/lib/gcc/x86_64-linux-gnu/12/include"),
	    BC_OK);
	ck_assert_int_eq(name_ok("/tmp/src/forcing_technique_271828"), BC_OK);
	ck_assert_int_eq(name_ok("/a/.hidden/..x/x../...h"), BC_OK);
	ck_assert_int_eq(name_ok("/caf\xc3\xa9/\xff.h"), BC_OK);	/* bytes */
	for (i = 0; i < BC_MAX_PATH_DEPTH; i++)
		memcpy(deep + 2 * i, "/d", 2);
	deep[2 * BC_MAX_PATH_DEPTH] = '\0';
	ck_assert_int_eq(name_ok(deep), BC_OK);
	comp[0] = '/';
	memset(comp + 1, 'x', BC_MAX_PATH_COMPONENT);
	comp[BC_MAX_PATH_COMPONENT + 1] = '\0';
	ck_assert_int_eq(name_ok(comp), BC_OK);
	/* the root: for CDIR and DIRM only */
	ck_assert_int_eq(bc_pump_name_check("CDIR", "/", 1, 1, why), BC_OK);
}
END_TEST

START_TEST(test_name_hostile)
{
	char deep[BC_MAX_PATH_DEPTH * 2 + 3], comp[BC_MAX_PATH_COMPONENT + 3];
	char *big;
	size_t i;

	ck_assert_int_eq(name_ok("/a/../b"), BC_ERR_DENIED);
	ck_assert(why_has("'..' component"));
	ck_assert_int_eq(name_ok("/a/b/.."), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/.."), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/a/./b"), BC_ERR_DENIED);
	ck_assert(why_has("'.' component"));
	ck_assert_int_eq(name_ok("/a/."), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("a/b"), BC_ERR_DENIED);
	ck_assert(why_has("not absolute"));
	ck_assert_int_eq(name_ok(""), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/"), BC_ERR_DENIED);
	ck_assert(why_has("names the root"));
	ck_assert_int_eq(name_ok("//a"), BC_ERR_DENIED);
	ck_assert(why_has("empty component"));
	ck_assert_int_eq(name_ok("/a//b"), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/a/b/"), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/a\nb"), BC_ERR_DENIED);
	ck_assert(why_has("control byte (0x0a)"));
	ck_assert(why_has("'/a\\nb'"));		/* escaped in the message */
	ck_assert_int_eq(name_ok("/a\x1b[31m"), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/a\x7f"), BC_ERR_DENIED);
	ck_assert_int_eq(name_ok("/a\tb"), BC_ERR_DENIED);
	ck_assert_int_eq(bc_pump_name_check("NAME", "/a\0b", 4, 0, why),
	    BC_ERR_DENIED);
	ck_assert(why_has("NUL byte"));
	for (i = 0; i <= BC_MAX_PATH_DEPTH; i++)
		memcpy(deep + 2 * i, "/d", 2);
	deep[2 * (BC_MAX_PATH_DEPTH + 1)] = '\0';
	ck_assert_int_eq(name_ok(deep), BC_ERR_LIMIT);
	ck_assert(why_has("more than 128 components"));
	comp[0] = '/';
	memset(comp + 1, 'x', BC_MAX_PATH_COMPONENT + 1);
	comp[BC_MAX_PATH_COMPONENT + 2] = '\0';
	ck_assert_int_eq(name_ok(comp), BC_ERR_LIMIT);
	ck_assert(why_has("component of 256 bytes"));
	big = xmalloc(BC_MAX_PATH_LEN + 2);
	big[0] = '/';
	for (i = 1; i <= BC_MAX_PATH_LEN; i++)
		big[i] = i % 100 == 0 ? '/' : 'x';
	big[BC_MAX_PATH_LEN + 1] = '\0';
	ck_assert_int_eq(name_ok(big), BC_ERR_LIMIT);
	ck_assert(why_has("exceeds the limit of 4096"));
	free(big);
}
END_TEST

START_TEST(test_link_targets)
{
	enum bc_pump_kind k;
	char *t;

	/* distcc's system-directory link, exactly */
	t = sysdir_target("/usr/include");
	ck_assert_int_eq(link_ok("/usr/include", t, &k), BC_OK);
	ck_assert_int_eq(k, BC_PUMP_SYSLINK);
	ck_assert_int_eq(link_ok("/usr/lib", t, &k), BC_ERR_DENIED);
	free(t);
	/* absolute: canonical, under the root */
	ck_assert_int_eq(link_ok("/a/l", "/a/b.h", &k), BC_OK);
	ck_assert_int_eq(k, BC_PUMP_LINK);
	ck_assert_int_eq(link_ok("/a/l", "/", &k), BC_OK);
	ck_assert_int_eq(link_ok("/a/l", "/../../etc", NULL), BC_ERR_DENIED);
	ck_assert(why_has("'..' component"));
	ck_assert_int_eq(link_ok("/a/l", "/a/x/../b.h", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/l", "/a/./b.h", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/l", "//etc", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/l", "/etc/", NULL), BC_ERR_DENIED);
	/* relative: '../' first, no deeper than the link */
	ck_assert_int_eq(link_ok("/a/b/l", "x.h", &k), BC_OK);
	ck_assert_int_eq(k, BC_PUMP_LINK);
	ck_assert_int_eq(link_ok("/a/b/l", "../x/y.h", NULL), BC_OK);
	ck_assert_int_eq(link_ok("/a/b/l", "../../x.h", NULL), BC_OK);
	ck_assert_int_eq(link_ok("/a/b/l", "../..", NULL), BC_OK);
	ck_assert_int_eq(link_ok("/a/b/l", "../../../x.h", NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("climbs out"));
	ck_assert_int_eq(link_ok("/l", "../x", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/b/l", "x/../y.h", NULL), BC_ERR_DENIED);
	ck_assert(why_has("'..' component"));
	ck_assert_int_eq(link_ok("/a/b/l", "up/../../../../etc", NULL),
	    BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/b/l", ".", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/b/l", "./x", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/b/l", "../", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/b/l", "x//y", NULL), BC_ERR_DENIED);
	ck_assert_int_eq(link_ok("/a/b/l", "", NULL), BC_ERR_DENIED);
	ck_assert(why_has("empty target"));
	ck_assert_int_eq(link_ok("/a/b/l", "x\ny", NULL), BC_ERR_DENIED);
	ck_assert(why_has("control byte"));
	/* distcc's form, one '../' short or long: relative, climbing out */
	t = sysdir_target("/usr/include");
	ck_assert_int_eq(link_ok("/usr/include", t + 3, NULL), BC_ERR_DENIED);
	free(t);
}
END_TEST

static int
add(struct bc_pump_names *s, const char *name, enum bc_pump_kind k,
    const char *target)
{
	why[0] = '\0';
	return bc_pump_names_add(s, name, strlen(name), k, target,
	    target != NULL ? strlen(target) : 0, NULL, why);
}

START_TEST(test_names_set)
{
	struct bc_pump_names s;
	char *t = sysdir_target("/usr/include");

	bc_pump_names_init(&s);
	ck_assert_int_eq(add(&s, "/src/a.c", BC_PUMP_FILE, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/src/inc/h.h", BC_PUMP_FILE, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/src/forcing_technique_271828",
	    BC_PUMP_FILE, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/usr/include", BC_PUMP_LINK, t), BC_OK);
	ck_assert_int_eq(add(&s, "/src/inc", BC_PUMP_DIR, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/", BC_PUMP_DIR, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/src", BC_PUMP_DIR_IMPLIED, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/src/inc", BC_PUMP_DIR_IMPLIED, NULL),
	    BC_OK);
	ck_assert_int_eq(add(&s, "/new/cwd", BC_PUMP_DIR_IMPLIED, NULL),
	    BC_OK);
	/* duplicates, same or other contents: the set has no contents */
	ck_assert_int_eq(add(&s, "/src/a.c", BC_PUMP_FILE, NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("named twice (duplicate file)"));
	ck_assert_int_eq(add(&s, "/usr/include", BC_PUMP_LINK, t),
	    BC_ERR_DENIED);
	ck_assert(why_has("duplicate link"));
	ck_assert_int_eq(add(&s, "/src/inc", BC_PUMP_DIR, NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("duplicate directory"));
	ck_assert_int_eq(add(&s, "/src/a.c", BC_PUMP_LINK, "inc/h.h"),
	    BC_ERR_DENIED);
	ck_assert(why_has("as a file and as a link"));
	/* a file and a directory of the same name, both orders */
	ck_assert_int_eq(add(&s, "/src/a.c/x", BC_PUMP_FILE, NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("is below '/src/a.c', a file"));
	ck_assert_int_eq(add(&s, "/src", BC_PUMP_FILE, NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("is a file and a directory"));
	ck_assert_int_eq(add(&s, "/src/inc", BC_PUMP_FILE, NULL),
	    BC_ERR_DENIED);		/* a DIRM named it */
	ck_assert(why_has("as a directory and as a file"));
	ck_assert_int_eq(add(&s, "/src", BC_PUMP_LINK, "x"), BC_ERR_DENIED);
	ck_assert_int_eq(add(&s, "/src/a.c", BC_PUMP_DIR, NULL),
	    BC_ERR_DENIED);
	ck_assert_int_eq(add(&s, "/src/a.c", BC_PUMP_DIR_IMPLIED, NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("CDIR '/src/a.c' is a file in the tree"));
	/* nothing below a link */
	ck_assert_int_eq(add(&s, "/usr/include/x.h", BC_PUMP_FILE, NULL),
	    BC_ERR_DENIED);
	ck_assert(why_has("a LINK"));
	ck_assert_int_eq(add(&s, "/usr/include/x", BC_PUMP_DIR, NULL),
	    BC_ERR_DENIED);
	ck_assert_int_eq(add(&s, "/usr/include/x", BC_PUMP_DIR_IMPLIED, NULL),
	    BC_ERR_DENIED);
	/* the checks of one name and of a target come first */
	ck_assert_int_eq(add(&s, "/src/../a", BC_PUMP_FILE, NULL),
	    BC_ERR_DENIED);
	ck_assert_int_eq(add(&s, "/src/l", BC_PUMP_LINK, "../../x"),
	    BC_ERR_DENIED);
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_OK);
	bc_pump_names_free(&s);
	free(t);
}
END_TEST

START_TEST(test_names_resolve)
{
	struct bc_pump_names s;
	char *t = sysdir_target("/sys/x");

	/* links inside the tree, chained, dangling: fine */
	bc_pump_names_init(&s);
	ck_assert_int_eq(add(&s, "/a/b/h.h", BC_PUMP_FILE, NULL), BC_OK);
	ck_assert_int_eq(add(&s, "/a/l1", BC_PUMP_LINK, "b"), BC_OK);
	ck_assert_int_eq(add(&s, "/c/l2", BC_PUMP_LINK, "../a/l1/h.h"), BC_OK);
	ck_assert_int_eq(add(&s, "/c/l3", BC_PUMP_LINK, "/c/l2"), BC_OK);
	ck_assert_int_eq(add(&s, "/c/l4", BC_PUMP_LINK, "nothing/here"),
	    BC_OK);
	ck_assert_int_eq(add(&s, "/c/l5", BC_PUMP_LINK, "l2/below/a/file"),
	    BC_OK);
	ck_assert_int_eq(add(&s, "/c/root", BC_PUMP_LINK, "/"), BC_OK);
	ck_assert_int_eq(add(&s, "/sys/x", BC_PUMP_LINK, t), BC_OK);
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_OK);
	bc_pump_names_free(&s);

	/* into a system-directory link, directly or through another link,
	 * whatever the order of the entries */
	bc_pump_names_init(&s);
	ck_assert_int_eq(add(&s, "/a/s.h", BC_PUMP_LINK, "../sys/x/secret"),
	    BC_OK);
	ck_assert_int_eq(add(&s, "/sys/x", BC_PUMP_LINK, t), BC_OK);
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_ERR_DENIED);
	ck_assert(why_has("LINK '/a/s.h' leads into '/sys/x'"));
	bc_pump_names_free(&s);

	bc_pump_names_init(&s);
	ck_assert_int_eq(add(&s, "/sys/x", BC_PUMP_LINK, t), BC_OK);
	ck_assert_int_eq(add(&s, "/a/up", BC_PUMP_LINK, "/sys"), BC_OK);
	ck_assert_int_eq(add(&s, "/b/s.h", BC_PUMP_LINK, "/a/up/x/passwd"),
	    BC_OK);
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_ERR_DENIED);
	ck_assert(why_has("leads into '/sys/x'"));
	bc_pump_names_free(&s);

	bc_pump_names_init(&s);
	ck_assert_int_eq(add(&s, "/sys/x", BC_PUMP_LINK, t), BC_OK);
	ck_assert_int_eq(add(&s, "/a/l", BC_PUMP_LINK, "/sys/x"), BC_OK);
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_ERR_DENIED);
	bc_pump_names_free(&s);

	/* a loop */
	bc_pump_names_init(&s);
	ck_assert_int_eq(add(&s, "/a/l1", BC_PUMP_LINK, "l2/x"), BC_OK);
	ck_assert_int_eq(add(&s, "/a/l2", BC_PUMP_LINK, "l1/y"), BC_OK);
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_ERR_DENIED);
	ck_assert(why_has("loop"));
	bc_pump_names_free(&s);
	free(t);
}
END_TEST

START_TEST(test_names_chain_limit)
{
	struct bc_pump_names s;
	char name[32], target[32];
	int i;

	/* /l0 -> l1 -> ... -> l<n>: followed up to BC_MAX_LINK_HOPS */
	bc_pump_names_init(&s);
	for (i = 0; i < BC_MAX_LINK_HOPS + 5; i++) {
		snprintf(name, sizeof(name), "/l%d", i);
		snprintf(target, sizeof(target), "l%d", i + 1);
		ck_assert_int_eq(add(&s, name, BC_PUMP_LINK, target), BC_OK);
	}
	ck_assert_int_eq(bc_pump_names_resolve(&s, why), BC_ERR_DENIED);
	ck_assert(why_has("too many links"));
	bc_pump_names_free(&s);
}
END_TEST

static void
ent(struct bc_proto3x_manifest *m, const char *name, int kind,
    const char *target)
{
	struct bc_proto3x_ent *e;

	m->v = xrealloc(m->v, m->n + 1, sizeof(*m->v));
	e = &m->v[m->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->kind = kind;
	e->target = target != NULL ? xstrdup(target) : NULL;
}

START_TEST(test_manifest_check)
{
	struct bc_proto3x_manifest m = { NULL, 0 };
	char *t = sysdir_target("/usr/include");

	ent(&m, "/src/a.c", BC_PROTO3X_FILE, NULL);
	ent(&m, "/src/inc/h.h", BC_PROTO3X_FILE, NULL);
	ent(&m, "/usr/include", BC_PROTO3X_LINK, t);
	ent(&m, "/src/inc", BC_PROTO3X_DIR, NULL);
	ent(&m, "/", BC_PROTO3X_DIR, NULL);
	ck_assert_int_eq(bc_proto3x_manifest_check(&m, "/src", why), BC_OK);
	ck_assert_int_eq(bc_proto3x_manifest_check(&m, "/src/a.c", why),
	    BC_ERR_DENIED);
	ck_assert_int_eq(bc_proto3x_manifest_check(&m, "/src/../x", why),
	    BC_ERR_DENIED);
	ck_assert_int_eq(bc_proto3x_manifest_check(&m, "/usr/include/x", why),
	    BC_ERR_DENIED);
	ent(&m, "/src/inc/h.h", BC_PROTO3X_FILE, NULL);
	ck_assert_int_eq(bc_proto3x_manifest_check(&m, "/src", why),
	    BC_ERR_DENIED);
	ck_assert(why_has("named twice"));
	bc_proto3x_manifest_free(&m);
	free(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pumpname");
	TCase *t = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(t, test_name_good);
	tcase_add_test(t, test_name_hostile);
	tcase_add_test(t, test_link_targets);
	tcase_add_test(t, test_names_set);
	tcase_add_test(t, test_names_resolve);
	tcase_add_test(t, test_names_chain_limit);
	tcase_add_test(t, test_manifest_check);
	suite_add_tcase(s, t);
	return bc_unit_run(s);
}
