/*
 * test_hosts.c - host-list grammar: every verified row of spec
 * distcc-protocol.md section 10 and vectors/checks/SUMMARY.txt section A,
 * boltcc's own options, limits, round trips and a mutation loop.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/hosts.h"
#include "common/limits.h"
#include "common/util.h"
#include "tests/unit/unit.h"

#define REJ (-1)	/* expected: rejected */

struct row {
	const char *text;
	int bolt_opts;
	int nhosts;		/* REJ = whole list rejected */
	int total;		/* -j */
	/* first host */
	enum bc_host_kind kind;
	const char *name;
	int port;
	int limit;
	int protocol;
	const char *user;
	const char *command;
	int down;
	const char *describe;
	const char *errpart;	/* for rejected rows: part of the message */
};

static const struct row rows[] = {
	/* SUMMARY.txt A, in order */
	{ "localhost", 0, 1, 2, BC_HOST_LOCAL, "localhost", 0, 2, 1, NULL,
	    NULL, 0, "localhost", NULL },
	{ "localhost/3", 0, 1, 3, BC_HOST_LOCAL, "localhost", 0, 3, 1, NULL,
	    NULL, 0, "localhost/3", NULL },
	{ "127.0.0.1", 0, 1, 4, BC_HOST_TCP, "127.0.0.1", 3632, 4, 1, NULL,
	    NULL, 0, "127.0.0.1", NULL },
	{ "127.0.0.1:4000", 0, 1, 4, BC_HOST_TCP, "127.0.0.1", 4000, 4, 1,
	    NULL, NULL, 0, "127.0.0.1:4000", NULL },
	{ "127.0.0.1:4000/7", 0, 1, 7, BC_HOST_TCP, "127.0.0.1", 4000, 7, 1,
	    NULL, NULL, 0, "127.0.0.1:4000/7", NULL },
	{ "127.0.0.1/7:4000", 0, 1, 7, BC_HOST_TCP, "127.0.0.1", 4000, 7, 1,
	    NULL, NULL, 0, "127.0.0.1:4000/7", NULL },
	{ "127.0.0.1=7", 0, 1, 4, BC_HOST_TCP, "127.0.0.1=7", 3632, 4, 1,
	    NULL, NULL, 0, "127.0.0.1=7", NULL },
	{ "box/2,lzo", 0, 1, 2, BC_HOST_TCP, "box", 3632, 2, 2, NULL, NULL, 0,
	    "box/2,lzo", NULL },
	{ "box,cpp,lzo", 0, 1, 4, BC_HOST_TCP, "box", 3632, 4, 3, NULL, NULL,
	    0, "box,cpp,lzo", NULL },
	{ "box,lzo,cpp", 0, 1, 4, BC_HOST_TCP, "box", 3632, 4, 3, NULL, NULL,
	    0, "box,cpp,lzo", NULL },
	{ "box,cpp", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "requires compression" },
	{ "box,zstd", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unrecognized option ',zstd'" },
	{ "@box", 0, 1, 4, BC_HOST_SSH, "box", 0, 4, 1, NULL, NULL, 0, "@box",
	    NULL },
	{ "user@box/5:/opt/bin/distccd,lzo", 0, 1, 5, BC_HOST_SSH, "box", 0,
	    5, 2, "user", "/opt/bin/distccd", 0,
	    "user@box/5:/opt/bin/distccd,lzo", NULL },
	{ "[::1]:4000/3", 0, 1, 3, BC_HOST_TCP, "::1", 4000, 3, 1, NULL, NULL,
	    0, "[::1]:4000/3", NULL },
	{ "localhost:4000", 0, 1, 4, BC_HOST_TCP, "localhost", 4000, 4, 1,
	    NULL, NULL, 0, "localhost:4000", NULL },
	{ "localhost,lzo", 0, 1, 4, BC_HOST_TCP, "localhost", 3632, 4, 2, NULL,
	    NULL, 0, "localhost,lzo", NULL },
	{ "--randomize a b c", 0, 3, 12, BC_HOST_TCP, NULL, 3632, 4, 1, NULL,
	    NULL, 0, NULL, NULL },
	{ "--localslots=3 --localslots_cpp=9 a/2", 0, 1, 2, BC_HOST_TCP, "a",
	    3632, 2, 1, NULL, NULL, 0, "a/2", NULL },
	{ "a # comment b", 0, 1, 4, BC_HOST_TCP, "a", 3632, 4, 1, NULL, NULL, 0,
	    "a", NULL },
	{ "a/0", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "bad slot count" },
	{ "box,down", 0, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL, NULL, 1,
	    "box,down", NULL },
	{ "box:notaport", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "invalid tcp port" },
	{ "", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL, "no hosts" },

	/* more of the grammar */
	{ "--localslots/5 --localslots_cpp/6 a", 0, 1, 4, BC_HOST_TCP, "a",
	    3632, 4, 1, NULL, NULL, 0, "a", NULL },
	{ "+zeroconf", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "zeroconf not supported" },
	/* found by fuzz_hosts: "+zeroconf/4" was taken for a host named
	 * "+zeroconf", which then did not parse again */
	{ "+zeroconf/4", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "zeroconf not supported" },
	{ "a +box", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "cannot start with '+'" },
	{ "box,auth", 0, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL, NULL, 0,
	    "box,auth", NULL },
	{ "box,auth=svc", 0, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL, NULL,
	    0, "box,auth=svc", NULL },
	{ "box:65535", 0, 1, 4, BC_HOST_TCP, "box", 65535, 4, 1, NULL, NULL, 0,
	    "box:65535", NULL },
	{ "box:3632/4", 0, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL, NULL, 0,
	    "box", NULL },
	{ "box:0", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "invalid tcp port" },
	{ "box:65536", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "invalid tcp port" },
	{ "box:4000x", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "invalid tcp port" },
	{ "box:", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "invalid tcp port" },
	{ "box/3:4000/2", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unexpected text" },
	{ "box/1001", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "bad slot count" },
	{ "box/x", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "bad slot count" },
	{ "localhost/0", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "bad slot count" },
	{ "localhost/3,lzo", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "bad slot count" },
	{ "[::1", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "missing ']'" },
	{ "[]:4000", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "empty address" },
	{ "[--local]", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "must hold an IPv6 address" },
	{ "[box]:4000", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "must hold an IPv6 address" },
	{ "[::1]x", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unexpected text after ']'" },
	{ "[fe80::1%eth0]/2,lzo", 0, 1, 2, BC_HOST_TCP, "fe80::1%eth0", 3632, 2,
	    2, NULL, NULL, 0, "[fe80::1%eth0]/2,lzo", NULL },
	{ ":4000", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "empty host name" },
	{ "box,", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "empty option" },
	{ "-oProxyCommand=x", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unknown option" },
	{ "@-oProxyCommand=x", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0,
	    NULL, "must not start with '-'" },
	{ "-l@box", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unknown option" },
	{ "box;rm", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "invalid character" },
	{ "user@box:", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "empty ssh command" },
	{ "user@box:cmd", 0, 1, 4, BC_HOST_SSH, "box", 0, 4, 1, "user", "cmd",
	    0, "user@box:cmd", NULL },
	{ "u@[::1]/2,cpp,lzo", 0, 1, 2, BC_HOST_SSH, "::1", 0, 2, 3, "u", NULL,
	    0, "u@[::1]/2,cpp,lzo", NULL },
	{ "   \n\t # only a comment\n", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL,
	    0, NULL, "no hosts" },
	{ "--randomize", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "no hosts" },
	{ "--localslots=abc a", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0,
	    NULL, "--localslots needs a value" },
	{ "--localslots a", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "--localslots needs a value" },
	{ "--jobs=3 a", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unknown option" },
	{ "a#b c", 0, 1, 4, BC_HOST_TCP, "a", 3632, 4, 1, NULL, NULL, 0, "a",
	    NULL },
	{ "a\nb\tc\r\nd", 0, 4, 16, BC_HOST_TCP, "a", 3632, 4, 1, NULL, NULL, 0,
	    "a", NULL },
	{ "# header\nh1 h2/3 localhost/2 @s # trailing\n", 0, 4, 13,
	    BC_HOST_TCP, "h1", 3632, 4, 1, NULL, NULL, 0, "h1", NULL },
	{ "good box,cpp", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "\"box,cpp\"" },

	/* boltcc options */
	{ "box,bolt", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "BOLTCC_HOSTS" },
	{ "box,distcc", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "boltcc-only option" },
	{ "box,bolt", 1, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL, NULL, 0,
	    "box,bolt", NULL },
	{ "box:4000/8,lzo,distcc", 1, 1, 8, BC_HOST_TCP, "box", 4000, 8, 2,
	    NULL, NULL, 0, "box:4000/8,lzo,distcc", NULL },
	{ "box,bolt,distcc", 1, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "contradict" },
	{ "box,bolt,bolt", 1, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL, NULL,
	    0, "box,bolt", NULL },
	{ "u@box,bolt", 1, 1, 4, BC_HOST_SSH, "box", 0, 4, 1, "u", NULL, 0,
	    "u@box,bolt", NULL },
	{ "box,zstd", 1, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "unrecognized option" },
	/* ,plain: plain mode toward a boltccd (pump is the default) */
	{ "box,plain", 0, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0, NULL,
	    "boltcc-only option" },
	{ "box,bolt,plain", 1, 1, 4, BC_HOST_TCP, "box", 3632, 4, 1, NULL,
	    NULL, 0, "box,plain,bolt", NULL },
	{ "box/2,plain", 1, 1, 2, BC_HOST_TCP, "box", 3632, 2, 1, NULL,
	    NULL, 0, "box/2,plain", NULL },
	{ "box,cpp,lzo,plain", 1, REJ, 0, 0, NULL, 0, 0, 0, NULL, NULL, 0,
	    NULL, "contradict" },
};

static void
check_row(const struct row *r)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN] = "";
	int rc;

	rc = bc_hosts_parse(r->text, r->bolt_opts, &hl, err);
	if (r->nhosts == REJ) {
		ck_assert_msg(rc == BC_ERR_HOSTSPEC, "'%s': rc %d, want reject",
		    r->text, rc);
		ck_assert_msg(strstr(err, r->errpart) != NULL,
		    "'%s': error '%s' lacks '%s'", r->text, err, r->errpart);
		ck_assert_uint_eq(hl.n, 0);
		ck_assert_ptr_null(hl.v);
		return;
	}
	ck_assert_msg(rc == BC_OK, "'%s': rc %d (%s)", r->text, rc, err);
	ck_assert_msg(hl.n == (size_t)r->nhosts, "'%s': %zu hosts", r->text,
	    hl.n);
	ck_assert_int_eq(bc_hosts_total_slots(&hl), r->total);
	ck_assert_int_eq(hl.v[0].kind, r->kind);
	if (r->name != NULL)
		ck_assert_str_eq(hl.v[0].name, r->name);
	ck_assert_int_eq(hl.v[0].port, r->port);
	ck_assert_int_eq(hl.v[0].limit, r->limit);
	ck_assert_int_eq(hl.v[0].protocol, r->protocol);
	if (r->user != NULL)
		ck_assert_str_eq(hl.v[0].user, r->user);
	else
		ck_assert_ptr_null(hl.v[0].user);
	if (r->command != NULL)
		ck_assert_str_eq(hl.v[0].command, r->command);
	else
		ck_assert_ptr_null(hl.v[0].command);
	ck_assert_int_eq(hl.v[0].down, r->down);
	if (r->describe != NULL) {
		char *d = bc_host_describe(&hl.v[0]);

		ck_assert_str_eq(d, r->describe);
		free(d);
	}
	bc_hosts_free(&hl);
	ck_assert_uint_eq(hl.n, 0);
}

START_TEST(test_rows)
{
	check_row(&rows[_i]);
}
END_TEST

/* Every accepted row: describe() parses back to the same host. */
START_TEST(test_roundtrip)
{
	const struct row *r = &rows[_i];
	struct bc_hostlist hl, hl2;
	char err[BC_ERRLEN];
	size_t i;

	if (r->nhosts == REJ)
		return;
	ck_assert_int_eq(bc_hosts_parse(r->text, r->bolt_opts, &hl, err),
	    BC_OK);
	for (i = 0; i < hl.n; i++) {
		char *d = bc_host_describe(&hl.v[i]);
		char *d2;

		ck_assert_msg(bc_hosts_parse(d, r->bolt_opts, &hl2, err) ==
		    BC_OK, "'%s' -> '%s': %s", r->text, d, err);
		ck_assert_uint_eq(hl2.n, 1);
		ck_assert_int_eq(hl2.v[0].kind, hl.v[i].kind);
		ck_assert_int_eq(hl2.v[0].port, hl.v[i].port);
		ck_assert_int_eq(hl2.v[0].limit, hl.v[i].limit);
		ck_assert_int_eq(hl2.v[0].protocol, hl.v[i].protocol);
		ck_assert_int_eq(hl2.v[0].down, hl.v[i].down);
		ck_assert_int_eq(hl2.v[0].auth, hl.v[i].auth);
		ck_assert_int_eq((int)hl2.v[0].bolt, (int)hl.v[i].bolt);
		ck_assert_str_eq(hl2.v[0].name, hl.v[i].name);
		d2 = bc_host_describe(&hl2.v[0]);
		ck_assert_str_eq(d, d2);
		free(d);
		free(d2);
		bc_hosts_free(&hl2);
	}
	bc_hosts_free(&hl);
}
END_TEST

START_TEST(test_fields)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_hosts_parse("--localslots=3 --localslots_cpp=9 a/2",
	    0, &hl, err), BC_OK);
	ck_assert_int_eq(hl.localslots, 3);
	ck_assert_int_eq(hl.localslots_cpp, 9);
	ck_assert_int_eq(hl.randomize, 0);
	ck_assert_str_eq(hl.v[0].spec, "a/2");
	bc_hosts_free(&hl);

	ck_assert_int_eq(bc_hosts_parse("a", 0, &hl, err), BC_OK);
	ck_assert_int_eq(hl.localslots, BC_DEFAULT_LOCALSLOTS);
	ck_assert_int_eq(hl.localslots_cpp, BC_DEFAULT_LOCALSLOTS_CPP);
	ck_assert_int_eq((int)hl.v[0].bolt, BC_BOLT_UNKNOWN);
	ck_assert_int_eq(hl.v[0].auth, 0);
	ck_assert_ptr_null(hl.v[0].auth_name);
	bc_hosts_free(&hl);

	ck_assert_int_eq(bc_hosts_parse("box,auth=svc,lzo,down", 0, &hl, err),
	    BC_OK);
	ck_assert_int_eq(hl.v[0].auth, 1);
	ck_assert_str_eq(hl.v[0].auth_name, "svc");
	ck_assert_int_eq(hl.v[0].protocol, 2);
	ck_assert_int_eq(hl.v[0].down, 1);
	ck_assert_str_eq(hl.v[0].spec, "box,auth=svc,lzo,down");
	bc_hosts_free(&hl);

	ck_assert_int_eq(bc_hosts_parse("box,bolt", 1, &hl, err), BC_OK);
	ck_assert_int_eq((int)hl.v[0].bolt, BC_BOLT_YES);
	bc_hosts_free(&hl);
	ck_assert_int_eq(bc_hosts_parse("box,distcc", 1, &hl, err), BC_OK);
	ck_assert_int_eq((int)hl.v[0].bolt, BC_BOLT_NO);
	bc_hosts_free(&hl);

	/* NULL text */
	ck_assert_int_eq(bc_hosts_parse(NULL, 0, &hl, err), BC_ERR_HOSTSPEC);
	ck_assert_uint_eq(hl.n, 0);
	/* freeing an empty / freed list is harmless */
	bc_hosts_free(&hl);
	bc_hosts_free(NULL);
}
END_TEST

START_TEST(test_randomize)
{
	static const char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	int round, moved = 0;

	for (round = 0; round < 20; round++) {
		unsigned seen = 0;
		size_t i, j;

		ck_assert_int_eq(bc_hosts_parse("--randomize a b c d e f g h",
		    0, &hl, err), BC_OK);
		ck_assert_int_eq(hl.randomize, 1);
		ck_assert_uint_eq(hl.n, 8);
		ck_assert_int_eq(bc_hosts_total_slots(&hl), 32);
		for (i = 0; i < hl.n; i++)
			for (j = 0; j < 8; j++)
				if (strcmp(hl.v[i].name, names[j]) == 0) {
					seen |= 1u << j;
					if (i != j)
						moved = 1;
				}
		ck_assert_uint_eq(seen, 0xff);
		bc_hosts_free(&hl);
	}
	/* 20 shuffles of 8 all being the identity: p = (1/40320)^20 */
	ck_assert_int_eq(moved, 1);
}
END_TEST

START_TEST(test_limits)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	size_t n = (size_t)BC_MAX_HOSTS + 1, i;
	char *text = xmalloc(n * 2 + 1);
	char *big;

	for (i = 0; i < n; i++) {
		text[2 * i] = 'h';
		text[2 * i + 1] = ' ';
	}
	text[2 * n] = '\0';
	ck_assert_int_eq(bc_hosts_parse(text, 0, &hl, err), BC_ERR_HOSTSPEC);
	ck_assert_ptr_nonnull(strstr(err, "more than"));
	text[2 * (n - 1)] = '\0';	/* exactly BC_MAX_HOSTS */
	ck_assert_int_eq(bc_hosts_parse(text, 0, &hl, err), BC_OK);
	ck_assert_uint_eq(hl.n, BC_MAX_HOSTS);
	ck_assert_int_eq(bc_hosts_total_slots(&hl), 4 * BC_MAX_HOSTS);
	bc_hosts_free(&hl);
	free(text);

	big = xmalloc(BC_MAX_HOSTLIST_LEN + 2);
	memset(big, ' ', BC_MAX_HOSTLIST_LEN + 1);
	big[0] = 'h';
	big[BC_MAX_HOSTLIST_LEN + 1] = '\0';
	ck_assert_int_eq(bc_hosts_parse(big, 0, &hl, err), BC_ERR_HOSTSPEC);
	ck_assert_ptr_nonnull(strstr(err, "longer than"));
	big[BC_MAX_HOSTLIST_LEN] = '\0';
	ck_assert_int_eq(bc_hosts_parse(big, 0, &hl, err), BC_OK);
	bc_hosts_free(&hl);
	free(big);

	/* a long entry is quoted in the message, truncated */
	big = xmalloc(5000);
	memset(big, 'x', 4990);
	memcpy(big + 4990, ",zstd", 6);
	ck_assert_int_eq(bc_hosts_parse(big, 0, &hl, err), BC_ERR_HOSTSPEC);
	ck_assert(strlen(err) < BC_ERRLEN);
	free(big);
}
END_TEST

static void
mutate_check(const char *text, int opts)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	int rc;
	size_t i;

	err[0] = '\0';
	rc = bc_hosts_parse(text, opts, &hl, err);
	if (rc != BC_OK) {
		ck_assert_int_eq(rc, BC_ERR_HOSTSPEC);
		ck_assert(err[0] != '\0');
		ck_assert_uint_eq(hl.n, 0);
		return;
	}
	ck_assert_uint_ge(hl.n, 1);
	for (i = 0; i < hl.n; i++) {
		char *d = bc_host_describe(&hl.v[i]);
		struct bc_hostlist h2;

		ck_assert_msg(bc_hosts_parse(d, opts, &h2, err) == BC_OK,
		    "describe '%s' of '%s' does not parse: %s", d, text, err);
		bc_hosts_free(&h2);
		free(d);
	}
	bc_hosts_free(&hl);
}

/* Deterministic mutations of a golden list: clean result, never a crash. */
START_TEST(test_mutations)
{
	static const char golden[] = "a/2,lzo user@b/3:/bin/d,cpp,lzo "
	    "[::1]:3/4 localhost/5 --localslots=2 c:4000,down,auth=x,bolt "
	    "# end";
	size_t n = sizeof(golden) - 1, i;
	char buf[sizeof(golden)];
	int bit, opts, total = 0;

	for (opts = 0; opts <= 1; opts++) {
		for (i = 0; i < n; i++) {
			for (bit = 0; bit < 8; bit++) {
				memcpy(buf, golden, sizeof(golden));
				buf[i] = (char)(buf[i] ^ (1 << bit));
				if (buf[i] == '\0')
					buf[i] = '\1';
				mutate_check(buf, opts);
				total++;
			}
			memcpy(buf, golden, sizeof(golden));
			buf[i] = (char)(0xff - (unsigned char)buf[i]);
			mutate_check(buf, opts);
			/* truncation from the end and from the start */
			memcpy(buf, golden, sizeof(golden));
			buf[i] = '\0';
			mutate_check(buf, opts);
			mutate_check(golden + i, opts);
			total += 3;
		}
	}
	ck_assert_int_gt(total, 1000);
}
END_TEST

static Suite *
hosts_suite(void)
{
	Suite *s = suite_create("hosts");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_loop_test(tc, test_rows, 0, (int)(sizeof(rows) /
	    sizeof(rows[0])));
	tcase_add_loop_test(tc, test_roundtrip, 0, (int)(sizeof(rows) /
	    sizeof(rows[0])));
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_randomize);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_mutations);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(hosts_suite());
}
