/*
 * test_ssh.c - the ~/.ssh/config subset (client/sshconf.c): Host
 * patterns, first value wins, IdentityFile accumulation, token expansion,
 * limits and a mutation loop; the helper request codec and ssh's SHA256
 * fingerprint format (client/ssh.c).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>	/* mkdtemp: <stdlib.h> on glibc, <unistd.h> on macOS */

#include "common/err.h"
#include "common/hosts.h"
#include "common/log.h"
#include "common/util.h"
#include "client/ssh.h"
#include "client/sshconf.h"

static const char golden[] =
    "# a comment\n"
    "Host build-*  !build-old\n"
    "  HostName 10.1.2.3\n"
    "  Port 2222\n"
    "  User builder\n"
    "  IdentityFile ~/.ssh/id_build\n"
    "  IdentityFile %d/keys/%r@%h\n"
    "  UserKnownHostsFile ~/.ssh/kh1 \"/etc/with space/kh2\"\n"
    "  StrictHostKeyChecking accept-new\n"
    "Host *\n"
    "  Port=22\n"
    "  User = nobody\n"
    "  IdentitiesOnly yes\n"
    "  ConnectTimeout 7\n"
    "Match host foo\n"
    "  User matched\n";

static int
parse(const char *text, const char *host, struct bc_sshcfg *c)
{
	char err[BC_ERRLEN];

	bc_sshcfg_init(c);
	return bc_sshcfg_parse(text, strlen(text), host, c, err);
}

START_TEST(t_golden)
{
	struct bc_sshcfg c;

	ck_assert_int_eq(parse(golden, "build-7", &c), BC_OK);
	ck_assert_str_eq(c.hostname, "10.1.2.3");
	ck_assert_int_eq(c.port, 2222);		/* first value wins */
	ck_assert_str_eq(c.user, "builder");
	ck_assert_uint_eq(c.identity.n, 2);
	ck_assert_str_eq(c.identity.v[0], "~/.ssh/id_build");
	ck_assert_uint_eq(c.known_hosts.n, 2);
	ck_assert_str_eq(c.known_hosts.v[1], "/etc/with space/kh2");
	ck_assert_int_eq(c.strict, BC_SSH_STRICT_ACCEPT_NEW);
	ck_assert_int_eq(c.identities_only, 1);
	ck_assert_int_eq(c.connect_timeout, 7);
	ck_assert_uint_eq(c.notes.n, 1);	/* Match skipped */
	bc_sshcfg_free(&c);

	/* negated pattern: only Host * applies */
	ck_assert_int_eq(parse(golden, "build-old", &c), BC_OK);
	ck_assert_ptr_null(c.hostname);
	ck_assert_int_eq(c.port, 22);
	ck_assert_str_eq(c.user, "nobody");
	ck_assert_uint_eq(c.identity.n, 0);
	ck_assert_int_eq(c.strict, -1);
	bc_sshcfg_free(&c);
}
END_TEST

START_TEST(t_patterns)
{
	ck_assert_int_eq(bc_sshcfg_match_list("a*,b?", "abc"), 1);
	ck_assert_int_eq(bc_sshcfg_match_list("a*,b?", "bc"), 1);
	ck_assert_int_eq(bc_sshcfg_match_list("a*,b?", "bcd"), 0);
	ck_assert_int_eq(bc_sshcfg_match_list("*,!secret", "secret"), 0);
	ck_assert_int_eq(bc_sshcfg_match_list("*.lan", "x.lan"), 1);
	ck_assert_int_eq(bc_sshcfg_match_list("*.lan", "x.lan.org"), 0);
	ck_assert_int_eq(bc_sshcfg_match_list("", "x"), 0);
	ck_assert_int_eq(bc_sshcfg_match_list("**?*", "x"), 1);
}
END_TEST

START_TEST(t_expand)
{
	char err[BC_ERRLEN];
	char *s;

	s = bc_sshcfg_expand("~/.ssh/id_%r_%h_%u%%", "/home/me", "me", "root",
	    "box", err);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "/home/me/.ssh/id_root_box_me%");
	free(s);
	s = bc_sshcfg_expand("%d/x", "/h", "u", "r", "b", err);
	ck_assert_str_eq(s, "/h/x");
	free(s);
	ck_assert_ptr_null(bc_sshcfg_expand("%C", "/h", "u", "r", "b", err));
	ck_assert_ptr_nonnull(strstr(err, "%C"));
	ck_assert_ptr_null(bc_sshcfg_expand("%", "/h", "u", "r", "b", err));
	{
		char big[5000];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		ck_assert_ptr_null(bc_sshcfg_expand(big, "/h", "u", "r", "b",
		    err));
	}
}
END_TEST

START_TEST(t_errors)
{
	struct bc_sshcfg c;
	char err[BC_ERRLEN];
	char *big;

	ck_assert_int_eq(parse("Host x\n Port 0\n", "x", &c), BC_ERR_INVAL);
	bc_sshcfg_free(&c);
	/* not applied to another host: no error for its lines */
	ck_assert_int_eq(parse("Host x\n Port 0\n", "y", &c), BC_OK);
	bc_sshcfg_free(&c);
	ck_assert_int_eq(parse("Host\n", "x", &c), BC_ERR_INVAL);
	bc_sshcfg_free(&c);
	ck_assert_int_eq(parse("User \"open\n", "x", &c), BC_ERR_INVAL);
	bc_sshcfg_free(&c);
	ck_assert_int_eq(parse("StrictHostKeyChecking maybe\n", "x", &c),
	    BC_ERR_INVAL);
	bc_sshcfg_free(&c);
	ck_assert_int_eq(parse("StrictHostKeyChecking no\n", "x", &c), BC_OK);
	ck_assert_int_eq(c.strict, BC_SSH_STRICT_NO);
	bc_sshcfg_free(&c);
	bc_sshcfg_init(&c);
	ck_assert_int_eq(bc_sshcfg_parse("User a\0b\n", 9, "x", &c, err),
	    BC_ERR_INVAL);
	bc_sshcfg_free(&c);
	big = xmalloc(BC_SSHCONF_MAX_LINE + 10);
	memset(big, 'a', BC_SSHCONF_MAX_LINE + 9);
	big[BC_SSHCONF_MAX_LINE + 9] = '\0';
	ck_assert_int_eq(parse(big, "x", &c), BC_ERR_LIMIT);
	bc_sshcfg_free(&c);
	free(big);
	bc_sshcfg_init(&c);
	ck_assert_int_eq(bc_sshcfg_parse("", BC_SSHCONF_MAX_BYTES + 1, "x", &c,
	    err), BC_ERR_LIMIT);
	bc_sshcfg_free(&c);
}
END_TEST

/* Deterministic mutations of the golden file: a clean result, no crash. */
START_TEST(t_mutations)
{
	size_t n = strlen(golden), i, k;
	char *m = xmalloc(n + 1);
	struct bc_sshcfg c;
	char err[BC_ERRLEN];
	static const char flips[] = { '"', '=', '\n', '\0', ' ', '%', '!',
	    '*', '#', '\t' };

	for (i = 0; i < n; i++) {
		for (k = 0; k < sizeof(flips) + 8; k++) {
			int r;

			memcpy(m, golden, n + 1);
			if (k < sizeof(flips))
				m[i] = flips[k];
			else
				m[i] = (char)(m[i] ^ (1 << (k - sizeof(flips))));
			bc_sshcfg_init(&c);
			r = bc_sshcfg_parse(m, n, "build-1", &c, err);
			ck_assert(r == BC_OK || r == BC_ERR_INVAL ||
			    r == BC_ERR_LIMIT);
			bc_sshcfg_free(&c);
		}
		/* truncation from both ends */
		bc_sshcfg_init(&c);
		(void)bc_sshcfg_parse(golden, i, "build-1", &c, err);
		bc_sshcfg_free(&c);
		bc_sshcfg_init(&c);
		(void)bc_sshcfg_parse(golden + i, n - i, "build-1", &c, err);
		bc_sshcfg_free(&c);
	}
	free(m);
}
END_TEST

START_TEST(t_fingerprint)
{
	unsigned char h[32];
	char fp[80];
	size_t i;

	for (i = 0; i < 32; i++)
		h[i] = (unsigned char)i;
	bc_ssh_fingerprint(h, fp, sizeof(fp));
	/* base64 of 00 01 .. 1f without padding */
	ck_assert_str_eq(fp,
	    "SHA256:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8");
}
END_TEST

START_TEST(t_target_codec)
{
	struct bc_ssh_target t, u;
	char err[BC_ERRLEN];
	char *enc;

	memset(&t, 0, sizeof(t));
	t.alias = xstrdup("farm");
	t.hostname = xstrdup("127.0.0.1");
	t.port = 2022;
	t.user = xstrdup("me");
	t.command = xstrdup("/opt/boltccd --inetd");
	t.strict = BC_SSH_STRICT_NO;
	t.timeout_ms = 1500;
	bc_strv_init(&t.identities);
	bc_strv_init(&t.known_hosts);
	bc_strv_push(&t.identities, "/k/a");
	bc_strv_push(&t.identities, "/k/b c");
	bc_strv_push(&t.known_hosts, "/kh");
	enc = bc_ssh_target_encode(&t);
	ck_assert_int_eq(bc_ssh_target_decode(enc, strlen(enc), &u, err),
	    BC_OK);
	ck_assert_str_eq(u.hostname, "127.0.0.1");
	ck_assert_int_eq(u.port, 2022);
	ck_assert_str_eq(u.command, "/opt/boltccd --inetd");
	ck_assert_ptr_null(u.agent);
	ck_assert_uint_eq(u.identities.n, 2);
	ck_assert_str_eq(u.identities.v[1], "/k/b c");
	ck_assert_int_eq(u.strict, BC_SSH_STRICT_NO);
	ck_assert_int_eq(u.timeout_ms, 1500);
	bc_ssh_target_free(&u);
	/* every truncation: clean error or success, no crash */
	{
		size_t n = strlen(enc), i;

		for (i = 0; i < n; i++) {
			if (bc_ssh_target_decode(enc, i, &u, err) == BC_OK)
				bc_ssh_target_free(&u);
		}
	}
	ck_assert_int_eq(bc_ssh_target_decode("port 99999\n", 11, &u, err),
	    BC_ERR_PROTO);
	free(enc);
	bc_ssh_target_free(&t);
}
END_TEST

START_TEST(t_resolve)
{
	struct bc_hostlist hl;
	struct bc_ssh_target t;
	char err[BC_ERRLEN];
	char dir[] = "/tmp/bc_test_ssh_XXXXXX";
	char *p;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	p = xasprintf("%s/.ssh", dir);
	ck_assert_int_eq(bc_mkdir_p(p, 0700, err), BC_OK);
	free(p);
	p = xasprintf("%s/.ssh/config", dir);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "Host farm\n HostName 127.0.0.9\n Port 2200\n User cfg\n"
	    " IdentityFile ~/.ssh/k1\n StrictHostKeyChecking no\n"
	    " IdentityAgent none\n");
	fclose(f);
	free(p);
	setenv("HOME", dir, 1);
	unsetenv("BOLTCC_SSH_KEY");
	bc_ssh_configure(NULL);
	ck_assert_int_eq(bc_hosts_parse("@farm/2:/opt/boltccd", 0, &hl, err),
	    BC_OK);
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[0], 3000, &t, err), BC_OK);
	ck_assert_str_eq(t.hostname, "127.0.0.9");
	ck_assert_int_eq(t.port, 2200);
	ck_assert_str_eq(t.user, "cfg");
	ck_assert_str_eq(t.command, "/opt/boltccd --inetd");
	ck_assert_int_eq(t.strict, BC_SSH_STRICT_NO);
	ck_assert_ptr_null(t.agent);
	ck_assert_uint_ge(t.identities.n, 1);
	p = xasprintf("%s/.ssh/k1", dir);
	ck_assert_str_eq(t.identities.v[0], p);
	free(p);
	bc_ssh_target_free(&t);
	bc_hosts_free(&hl);
	/* the host entry's user wins over the config; default command */
	ck_assert_int_eq(bc_hosts_parse("alice@other", 0, &hl, err), BC_OK);
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[0], 3000, &t, err), BC_OK);
	ck_assert_str_eq(t.user, "alice");
	ck_assert_str_eq(t.hostname, "other");
	ck_assert_int_eq(t.port, 22);
	ck_assert_str_eq(t.command, "boltccd --inetd");
	ck_assert_int_eq(t.strict, BC_SSH_STRICT_YES);
	bc_ssh_target_free(&t);
	bc_hosts_free(&hl);
	(void)bc_rmtree(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ssh");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	bc_log_silence();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_golden);
	tcase_add_test(tc, t_patterns);
	tcase_add_test(tc, t_expand);
	tcase_add_test(tc, t_errors);
	tcase_add_test(tc, t_mutations);
	tcase_add_test(tc, t_fingerprint);
	tcase_add_test(tc, t_target_codec);
	tcase_add_test(tc, t_resolve);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
