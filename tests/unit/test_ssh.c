/*
 * test_ssh.c - the ~/.ssh/config subset (client/sshconf.c): Host
 * patterns, first value wins, IdentityFile accumulation, token expansion,
 * limits and a mutation loop; Include (globs, nesting, in Host blocks,
 * the depth limit, missing files, errors naming file:line, permissions);
 * ProxyJump values and their resolution into hops (sshclient.c); the
 * helper request codec and ssh's SHA256 fingerprint format (client/ssh.c).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>	/* mkdtemp: <stdlib.h> on glibc, <unistd.h> on macOS */

#include "common/err.h"
#include "common/hosts.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/ssh.h"
#include "client/sshconf.h"
#include "tests/unit/unit.h"

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
	static struct bc_cconf sc;	/* bc_ssh_configure keeps it */
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
	memset(&sc, 0, sizeof(sc));	/* HOME=dir, no BOLTCC_SSH_KEY */
	sc.home = dir;
	sc.user = getenv("USER");
	sc.ssh_idle = -1;
	bc_ssh_configure(&sc);
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


/* Write dir/name (parents made) with text. */
static void
put(const char *dir, const char *name, const char *text)
{
	char err[BC_ERRLEN];
	char *p = xasprintf("%s/%s", dir, name), *slash;
	FILE *f;

	slash = strrchr(p, '/');
	*slash = '\0';
	ck_assert_int_eq(bc_mkdir_p(p, 0700, err), BC_OK);
	*slash = '/';
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(p, 0600), 0);
	free(p);
}

/* Read dir/.ssh/config for host with Include relative to dir/.ssh. */
static int
read_cfg(const char *dir, const char *file, const char *host,
    struct bc_sshcfg *c, char *err)
{
	struct bc_sshcfg_inc inc;
	char *ssh = xasprintf("%s/.ssh", dir);
	char *p = xasprintf("%s/%s", ssh, file);
	int r;

	memset(&inc, 0, sizeof(inc));
	inc.home = dir;
	inc.dir = ssh;
	bc_sshcfg_init(c);
	r = bc_sshcfg_read(p, &inc, host, c, err);
	free(p);
	free(ssh);
	return r;
}

START_TEST(t_include)
{
	char dir[] = "/tmp/bc_test_sshinc_XXXXXX";
	char err[BC_ERRLEN];
	struct bc_sshcfg c;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, ".ssh/config",
	    "Include conf.d/*.conf\n"
	    "Host farm\n"
	    "  Include farm.inc\n"
	    "  StrictHostKeyChecking no\n"	/* after the include: still farm */
	    "Host other\n"
	    "  Include other.inc\n"
	    "Host *\n"
	    "  Include ~/abs.conf /no/such/file.conf missing-*.conf\n");
	/* read in lexical order: 10 before 20; a directory is skipped */
	put(dir, ".ssh/conf.d/20-b.conf", "Host farm\n  User from-b\n"
	    "  Port 2201\nHost *\n  ConnectTimeout 9\n");
	put(dir, ".ssh/conf.d/10-a.conf", "Host farm\n  User from-a\n");
	put(dir, ".ssh/conf.d/sub.conf/x", "User never\n");
	put(dir, ".ssh/conf.d/30-c.txt", "User never\n");
	/* an included file starts outside any block and leaves the
	 * includer's block as it was */
	put(dir, ".ssh/farm.inc", "HostName 10.0.0.5\nHost nomatch\n"
	    "  User nomatch\n");
	put(dir, ".ssh/other.inc", "IdentityFile /other\n");
	put(dir, "abs.conf", "Host farm\n  IdentityFile ~/.ssh/id_abs\n");

	ck_assert_int_eq(read_cfg(dir, "config", "farm", &c, err), BC_OK);
	ck_assert_str_eq(c.user, "from-a");
	ck_assert_int_eq(c.port, 2201);
	ck_assert_int_eq(c.connect_timeout, 9);
	ck_assert_str_eq(c.hostname, "10.0.0.5");
	ck_assert_int_eq(c.strict, BC_SSH_STRICT_NO);
	ck_assert_uint_eq(c.identity.n, 1);
	ck_assert_str_eq(c.identity.v[0], "~/.ssh/id_abs");
	/* config, 10-a, 20-b, farm.inc, abs.conf */
	ck_assert_int_eq(c.files, 5);
	bc_sshcfg_free(&c);

	/* Include in a Host block: only read when the block matches */
	ck_assert_int_eq(read_cfg(dir, "config", "other", &c, err), BC_OK);
	ck_assert_ptr_null(c.hostname);
	ck_assert_ptr_null(c.user);
	ck_assert_uint_eq(c.identity.n, 1);
	ck_assert_str_eq(c.identity.v[0], "/other");
	ck_assert_int_eq(c.strict, -1);
	bc_sshcfg_free(&c);

	/* a missing top-level file is no error either */
	ck_assert_int_eq(read_cfg(dir, "nope", "farm", &c, err), BC_OK);
	ck_assert_int_eq(c.files, 0);
	bc_sshcfg_free(&c);

	/* without file context (bc_sshcfg_parse) Include is noted only */
	ck_assert_int_eq(parse("Include /etc/passwd\n", "x", &c), BC_OK);
	ck_assert_uint_eq(c.notes.n, 1);
	ck_assert_int_eq(c.files, 0);
	bc_sshcfg_free(&c);
	(void)bc_rmtree(dir);
}
END_TEST

START_TEST(t_include_errors)
{
	char dir[] = "/tmp/bc_test_sshinc_XXXXXX";
	char err[BC_ERRLEN];
	struct bc_sshcfg_inc inc;
	struct bc_sshcfg c;
	char *p;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* a file including itself: the depth limit, naming the file */
	put(dir, ".ssh/self.conf", "# loops\nInclude self.conf\n");
	ck_assert_int_eq(read_cfg(dir, "self.conf", "x", &c, err),
	    BC_ERR_LIMIT);
	ck_assert_ptr_nonnull(strstr(err, "self.conf:2"));
	ck_assert_ptr_nonnull(strstr(err, "nested more than 16 deep"));
	ck_assert_int_eq(c.files, BC_MAX_SSH_INCLUDE_DEPTH + 1);
	bc_sshcfg_free(&c);

	/* a chain of exactly BC_MAX_SSH_INCLUDE_DEPTH includes is fine */
	{
		int i;

		for (i = 0; i < BC_MAX_SSH_INCLUDE_DEPTH; i++) {
			char name[32], text[64];

			snprintf(name, sizeof(name), ".ssh/d%d", i);
			snprintf(text, sizeof(text), "Include d%d\n", i + 1);
			put(dir, name, text);
		}
		put(dir, ".ssh/d16", "User deep\n");
		ck_assert_int_eq(read_cfg(dir, "d0", "x", &c, err), BC_OK);
		ck_assert_str_eq(c.user, "deep");
		bc_sshcfg_free(&c);
		put(dir, ".ssh/d16", "Include d17\n");
		put(dir, ".ssh/d17", "User deeper\n");
		ck_assert_int_eq(read_cfg(dir, "d0", "x", &c, err),
		    BC_ERR_LIMIT);
		ck_assert_ptr_nonnull(strstr(err, "d16:1"));
		bc_sshcfg_free(&c);
	}

	/* an error in an included file names that file and line */
	put(dir, ".ssh/top", "Host *\n  Include bad.conf\n");
	put(dir, ".ssh/bad.conf", "User ok\nPort 0\n");
	ck_assert_int_eq(read_cfg(dir, "top", "x", &c, err), BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad.conf:2: bad port"));
	bc_sshcfg_free(&c);
	put(dir, ".ssh/top", "User x\nInclude\n");
	ck_assert_int_eq(read_cfg(dir, "top", "x", &c, err), BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "/.ssh/top:2: Include needs"));
	bc_sshcfg_free(&c);
	put(dir, ".ssh/top", "Include ~other/x\n");
	ck_assert_int_eq(read_cfg(dir, "top", "x", &c, err), BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "top:1"));
	bc_sshcfg_free(&c);

	/* an included file others can write is refused, as ssh does */
	put(dir, ".ssh/top", "Include open.conf\n");
	put(dir, ".ssh/open.conf", "User x\n");
	p = xasprintf("%s/.ssh/open.conf", dir);
	ck_assert_int_eq(chmod(p, 0666), 0);
	free(p);
	ck_assert_int_eq(read_cfg(dir, "top", "x", &c, err), BC_ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err, "open.conf: bad owner or "
	    "permissions"));
	bc_sshcfg_free(&c);

	/* the system file: no ~ */
	memset(&inc, 0, sizeof(inc));
	inc.home = dir;
	inc.dir = dir;
	inc.system = 1;
	put(dir, "sys", "Include ~/x\n");
	p = xasprintf("%s/sys", dir);
	bc_sshcfg_init(&c);
	ck_assert_int_eq(bc_sshcfg_read(p, &inc, "x", &c, err), BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "sys:1"));
	bc_sshcfg_free(&c);
	free(p);

	/* the fuzz target's jail: nothing outside it is read */
	put(dir, ".ssh/top", "Include /etc/passwd ../sys d16\n");
	memset(&inc, 0, sizeof(inc));
	p = xasprintf("%s/.ssh", dir);
	inc.home = dir;
	inc.dir = p;
	inc.jail = p;
	bc_sshcfg_init(&c);
	{
		char *top = xasprintf("%s/top", p);

		ck_assert_int_eq(bc_sshcfg_read(top, &inc, "x", &c, err),
		    BC_OK);
		free(top);
	}
	ck_assert_uint_eq(c.notes.n, 2);
	ck_assert_int_eq(c.files, 3);	/* top, d16, d17 */
	ck_assert_str_eq(c.user, "deeper");
	bc_sshcfg_free(&c);
	free(p);
	(void)bc_rmtree(dir);
}
END_TEST

START_TEST(t_jump_parse)
{
	struct bc_sshcfg_hop h[BC_MAX_SSH_JUMPS];
	struct bc_sshcfg c;
	char err[BC_ERRLEN];
	size_t n;

	ck_assert_int_eq(bc_sshcfg_jump_parse("bastion", h, 8, &n, err),
	    BC_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(h[0].host, "bastion");
	ck_assert_str_eq(h[0].user, "");
	ck_assert_int_eq(h[0].port, 0);
	ck_assert_int_eq(bc_sshcfg_jump_parse("alice@b1:2222,ssh://bob@b2:23,"
	    "[::1]:2022,me@[fe80::1]", h, 8, &n, err), BC_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(h[0].user, "alice");
	ck_assert_str_eq(h[0].host, "b1");
	ck_assert_int_eq(h[0].port, 2222);
	ck_assert_str_eq(h[1].user, "bob");
	ck_assert_str_eq(h[1].host, "b2");
	ck_assert_int_eq(h[1].port, 23);
	ck_assert_str_eq(h[2].host, "::1");
	ck_assert_int_eq(h[2].port, 2022);
	ck_assert_str_eq(h[3].user, "me");
	ck_assert_str_eq(h[3].host, "fe80::1");
	ck_assert_int_eq(bc_sshcfg_jump_parse("none", h, 8, &n, err), BC_OK);
	ck_assert_uint_eq(n, 0);
	{
		static const char *const bad[] = { "", "a,,b", "a,", ",a",
		    "a:0", "a:70000", "a:x", "@a", "a@", "-oProxyCommand=x",
		    "a b", "a/b", "[a", "[a]x", "ssh://", NULL };
		size_t i;

		for (i = 0; bad[i] != NULL; i++)
			ck_assert_msg(bc_sshcfg_jump_parse(bad[i], h, 8, &n,
			    err) == BC_ERR_INVAL, "accepted %s", bad[i]);
	}
	ck_assert_int_eq(bc_sshcfg_jump_parse("a,b,c,d,e,f,g,h,i", h, 8, &n,
	    err), BC_ERR_LIMIT);

	/* in a config: first of ProxyJump / ProxyCommand wins */
	ck_assert_int_eq(parse("Host farm\n ProxyJump u@bastion:2\n"
	    " ProxyCommand nc %h %p\n ProxyJump other\n", "farm", &c), BC_OK);
	ck_assert_str_eq(c.proxy_jump, "u@bastion:2");
	ck_assert_ptr_null(c.proxy_command);
	ck_assert_str_eq(c.proxy_where, "ssh config:2");
	bc_sshcfg_free(&c);
	ck_assert_int_eq(parse("ProxyCommand ssh -W %h:%p b\nProxyJump x\n",
	    "farm", &c), BC_OK);
	ck_assert_str_eq(c.proxy_command, "ssh -W %h:%p b");
	ck_assert_ptr_null(c.proxy_jump);
	bc_sshcfg_free(&c);
	bc_sshcfg_init(&c);
	ck_assert_int_eq(bc_sshcfg_parse("User x\nProxyJump a,,b\n", 22, "x",
	    &c, err), BC_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(err, "ssh config:2: bad ProxyJump"));
	bc_sshcfg_free(&c);
	ck_assert_int_eq(parse("ProxyJump a b\n", "x", &c), BC_ERR_INVAL);
	bc_sshcfg_free(&c);
}
END_TEST

START_TEST(t_resolve_jump)
{
	static struct bc_cconf sc;	/* bc_ssh_configure keeps it */
	struct bc_hostlist hl;
	struct bc_ssh_target t, u;
	char err[BC_ERRLEN];
	char dir[] = "/tmp/bc_test_sshjump_XXXXXX";
	char *enc, *p;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, ".ssh/config",
	    "Host farm\n"
	    "  HostName 127.0.0.9\n"
	    "  Port 2200\n"
	    "  ProxyJump jumper@bastion:2022,hop2\n"
	    "Host bastion\n"
	    "  HostName 10.9.9.9\n"
	    "  User bob\n"
	    "  IdentityFile ~/.ssh/kb\n"
	    "  UserKnownHostsFile ~/.ssh/kh_b\n"
	    "  ProxyJump outer\n"	/* the first hop's own: in front */
	    "Host hop2\n"
	    "  Port 2300\n"
	    "  ProxyJump ignored\n"	/* not the first hop: ignored */
	    "Host outer\n"
	    "  HostName 10.8.8.8\n"
	    "  StrictHostKeyChecking accept-new\n"
	    "Host pc\n"
	    "  ProxyCommand nc %h %p\n"
	    "Host viapc\n"
	    "  ProxyJump pc\n"
	    "Host loop\n"
	    "  ProxyJump loop2\n"
	    "Host loop2\n"
	    "  ProxyJump loop\n"
	    "Host off\n"
	    "  ProxyJump none\n"
	    "  ProxyCommand nc %h %p\n"
	    "Host *\n"
	    "  User dflt\n");
	memset(&sc, 0, sizeof(sc));	/* HOME=dir, no BOLTCC_SSH_KEY */
	sc.home = dir;
	sc.user = getenv("USER");
	sc.ssh_idle = -1;
	bc_ssh_configure(&sc);
	ck_assert_int_eq(bc_hosts_parse("@farm @pc @viapc @loop @off", 0, &hl,
	    err), BC_OK);
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[0], 3000, &t, err), BC_OK);
	ck_assert_str_eq(t.hostname, "127.0.0.9");
	ck_assert_int_eq(t.port, 2200);
	ck_assert_uint_eq(t.njumps, 3);
	ck_assert_str_eq(t.jumps[0].alias, "outer");
	ck_assert_str_eq(t.jumps[0].hostname, "10.8.8.8");
	ck_assert_int_eq(t.jumps[0].port, 22);
	ck_assert_str_eq(t.jumps[0].user, "dflt");
	ck_assert_int_eq(t.jumps[0].strict, BC_SSH_STRICT_ACCEPT_NEW);
	ck_assert_str_eq(t.jumps[1].alias, "bastion");
	ck_assert_str_eq(t.jumps[1].hostname, "10.9.9.9");
	ck_assert_int_eq(t.jumps[1].port, 2022);
	ck_assert_str_eq(t.jumps[1].user, "jumper");
	p = xasprintf("%s/.ssh/kb", dir);
	ck_assert_str_eq(t.jumps[1].identities.v[0], p);
	free(p);
	p = xasprintf("%s/.ssh/kh_b", dir);
	ck_assert_str_eq(t.jumps[1].known_hosts.v[0], p);
	free(p);
	ck_assert_ptr_null(t.jumps[1].command);
	ck_assert_str_eq(t.jumps[2].alias, "hop2");
	ck_assert_str_eq(t.jumps[2].hostname, "hop2");
	ck_assert_int_eq(t.jumps[2].port, 2300);
	ck_assert_uint_eq(t.jumps[2].njumps, 0);

	/* the helper request carries the hops */
	enc = bc_ssh_target_encode(&t);
	ck_assert_int_eq(bc_ssh_target_decode(enc, strlen(enc), &u, err),
	    BC_OK);
	ck_assert_uint_eq(u.njumps, 3);
	ck_assert_str_eq(u.jumps[1].alias, "bastion");
	ck_assert_str_eq(u.jumps[1].user, "jumper");
	ck_assert_int_eq(u.jumps[1].port, 2022);
	ck_assert_int_eq(u.jumps[0].strict, BC_SSH_STRICT_ACCEPT_NEW);
	ck_assert_uint_eq(u.jumps[1].identities.n, t.jumps[1].identities.n);
	ck_assert_str_eq(u.hostname, "127.0.0.9");
	ck_assert_str_eq(u.command, t.command);
	bc_ssh_target_free(&u);
	{
		size_t n = strlen(enc), i;

		for (i = 0; i < n; i++)
			if (bc_ssh_target_decode(enc, i, &u, err) == BC_OK)
				bc_ssh_target_free(&u);
	}
	free(enc);
	ck_assert_int_eq(bc_ssh_target_decode("j.port 22\n", 10, &u, err),
	    BC_ERR_PROTO);
	bc_ssh_target_free(&t);

	/* ProxyCommand: refused, naming where it is */
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[1], 3000, &t, err),
	    BC_ERR_NOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "ProxyCommand"));
	ck_assert_ptr_nonnull(strstr(err, "config:18"));
	/* ... also on the first jump host */
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[2], 3000, &t, err),
	    BC_ERR_NOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "jump host pc of viapc"));
	/* a loop ends at the limit */
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[3], 3000, &t, err),
	    BC_ERR_LIMIT);
	/* ProxyJump none: direct, and it beats a later ProxyCommand */
	ck_assert_int_eq(bc_ssh_resolve(&hl.v[4], 3000, &t, err), BC_OK);
	ck_assert_uint_eq(t.njumps, 0);
	bc_ssh_target_free(&t);
	bc_hosts_free(&hl);
	(void)bc_rmtree(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ssh");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	bc_log_silence();
	tcase_add_test(tc, t_golden);
	tcase_add_test(tc, t_patterns);
	tcase_add_test(tc, t_expand);
	tcase_add_test(tc, t_errors);
	tcase_add_test(tc, t_mutations);
	tcase_add_test(tc, t_fingerprint);
	tcase_add_test(tc, t_target_codec);
	tcase_add_test(tc, t_resolve);
	tcase_add_test(tc, t_include);
	tcase_add_test(tc, t_include_errors);
	tcase_add_test(tc, t_jump_parse);
	tcase_add_test(tc, t_resolve_jump);
	suite_add_tcase(s, tc);
	return bc_unit_run(s);
}
