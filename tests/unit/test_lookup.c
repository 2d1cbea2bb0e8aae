/*
 * test_lookup.c - cache lookups on the farm (client/lookup.c) without a
 * network: the key's owner by rendezvous hashing (the rule of lookup.h,
 * stable under reordering and under removing another host, spread over
 * the hosts); a host's name in LOCATE; failed hosts noted in stats and
 * backoff marks; and a fan-out to fake daemons on loopback, which decode
 * what was sent (LOOKUP, or LOOKUPF with the origin) and answer MISS or
 * a hit, with a dead host among them.
 */
#include "config.h"

#include <check.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/cstats.h"
#include "client/hostsel.h"
#include "client/lookup.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/hosts.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/proto.h"
#include "common/util.h"
#include "tests/unit/unit.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ORIGIN "00112233aabbccdd"

static struct bc_hostlist hl;

static void
parse(const char *text)
{
	char err[BC_ERRLEN];

	memset(&hl, 0, sizeof(hl));
	ck_assert_msg(bc_hosts_parse(text, 1, &hl, err) == BC_OK, "%s", err);
}

/* The rule of lookup.h, independently: highest SHA-256(key, name, port). */
static ssize_t
owner_by_rule(const struct bc_hostlist *l, const unsigned char *cand,
    const char *key)
{
	uint8_t best[BC_HASH_LEN], d[BC_HASH_LEN];
	ssize_t o = -1;
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct bc_hash h;
		char port[16];

		if (!cand[i])
			continue;
		snprintf(port, sizeof(port), "%d", l->v[i].port);
		bc_hash_init(&h);
		bc_hash_update_str(&h, key);
		bc_hash_update_str(&h, l->v[i].name);
		bc_hash_update_str(&h, port);
		bc_hash_final(&h, d);
		if (o < 0 || memcmp(d, best, sizeof(d)) > 0) {
			memcpy(best, d, sizeof(d));
			o = (ssize_t)i;
		}
	}
	return o;
}

START_TEST(t_owner)
{
	unsigned char cand[4] = { 1, 1, 1, 1 }, none[4] = { 0, 0, 0, 0 };
	unsigned count[4] = { 0, 0, 0, 0 };
	struct bc_hostlist rev;
	char key[32];
	int k;
	size_t i;

	parse("h0,bolt h1:4000,bolt h2,bolt h3:3633,bolt");
	/* h3:3633 is h3 on the default port: still a host of its own */
	ck_assert_int_eq(bc_lookup_owner(&hl, none, KEY), -1);
	memset(&rev, 0, sizeof(rev));
	for (k = 0; k < 1000; k++) {
		ssize_t o, o2;
		unsigned char c2[4];

		snprintf(key, sizeof(key), "key%d", k);
		o = bc_lookup_owner(&hl, cand, key);
		ck_assert_int_ge(o, 0);
		ck_assert_int_eq(o, owner_by_rule(&hl, cand, key));
		count[o]++;
		/* removing another host keeps the owner */
		memcpy(c2, cand, sizeof(c2));
		c2[(o + 1) % 4] = 0;
		ck_assert_int_eq(bc_lookup_owner(&hl, c2, key), o);
		/* removing the owner moves the key to the next best */
		memcpy(c2, cand, sizeof(c2));
		c2[o] = 0;
		o2 = bc_lookup_owner(&hl, c2, key);
		ck_assert_int_ge(o2, 0);
		ck_assert_int_ne(o2, o);
		ck_assert_int_eq(o2, owner_by_rule(&hl, c2, key));
		/* a single candidate owns everything */
		memset(c2, 0, sizeof(c2));
		c2[k % 4] = 1;
		ck_assert_int_eq(bc_lookup_owner(&hl, c2, key), k % 4);
	}
	/* every host owns a fair share (expected 250 each) */
	for (i = 0; i < 4; i++)
		ck_assert_msg(count[i] > 150, "host %zu owns %u of 1000", i,
		    count[i]);
	bc_hosts_free(&hl);

	/* the same hosts in another order: the same host owns each key */
	parse("h3:3633,bolt h2,bolt h1:4000,bolt h0,bolt");
	rev = hl;
	parse("h0,bolt h1:4000,bolt h2,bolt h3:3633,bolt");
	for (k = 0; k < 100; k++) {
		ssize_t a, b;

		snprintf(key, sizeof(key), "key%d", k);
		a = bc_lookup_owner(&hl, cand, key);
		b = bc_lookup_owner(&rev, cand, key);
		ck_assert_str_eq(hl.v[a].name, rev.v[b].name);
		ck_assert_int_eq(hl.v[a].port, rev.v[b].port);
	}
	bc_hosts_free(&rev);
	bc_hosts_free(&hl);
}
END_TEST

START_TEST(t_host_name)
{
	char n[BC_MAX_LOC_HOST + 2], *text, *big;

	parse("build1:4000,bolt @farm2,bolt alice@farm3,bolt");
	ck_assert_int_eq(bc_lookup_host_name(&hl.v[0], n, sizeof(n)), BC_OK);
	ck_assert_str_eq(n, "build1:4000");
	ck_assert_int_eq(bc_lookup_host_name(&hl.v[1], n, sizeof(n)), BC_OK);
	ck_assert_str_eq(n, "ssh:farm2");
	ck_assert_int_eq(bc_lookup_host_name(&hl.v[2], n, sizeof(n)), BC_OK);
	ck_assert_str_eq(n, "ssh:farm3");
	/* the caller's buffer too small */
	ck_assert_int_eq(bc_lookup_host_name(&hl.v[0], n, 5), BC_ERR_LIMIT);
	bc_hosts_free(&hl);
	/* a name over BC_MAX_LOC_HOST */
	big = xmalloc(BC_MAX_LOC_HOST + 1);
	memset(big, 'a', BC_MAX_LOC_HOST);
	big[BC_MAX_LOC_HOST] = '\0';
	text = xasprintf("%s,bolt", big);
	parse(text);
	ck_assert_int_eq(bc_lookup_host_name(&hl.v[0], n, sizeof(n)),
	    BC_ERR_LIMIT);
	bc_hosts_free(&hl);
	free(text);
	free(big);
}
END_TEST

START_TEST(t_note_failed)
{
	char tmpl[] = "/tmp/bc-lookup.XXXXXX", *dir;
	struct bc_lookup_result res;
	struct bc_cstats st;
	char why[256];
	time_t until;

	dir = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(dir);
	parse("dead,bolt hung,bolt closed,bolt fine,bolt");
	memset(&res, 0, sizeof(res));
	res.hit_host = -1;
	res.nfailed = 3;
	res.failed[0] = 0;
	res.failed_r[0] = BC_ERR_NOENT;
	res.failed[1] = 1;
	res.failed_r[1] = BC_ERR_TIMEOUT;
	res.failed[2] = 2;
	res.failed_r[2] = BC_ERR_EOF;
	bc_cstats_init(&st);
	bc_lookup_note_failed(&hl, &res, dir, 60, &st);
	ck_assert_int_eq(bc_cstats_get(&st, "host_failures"), 3);
	ck_assert_int_eq(bc_cstats_get(&st,
	    "host_failure_by_reason:lookup-connect"), 1);
	ck_assert_int_eq(bc_cstats_get(&st,
	    "host_failure_by_reason:lookup-timeout"), 1);
	ck_assert_int_eq(bc_cstats_get(&st,
	    "host_failure_by_reason:lookup-io"), 1);
	ck_assert_int_eq(bc_cstats_get(&st, "fault_connect"), 1);
	/* dead and hung hosts are backed off, with the reason */
	ck_assert_int_eq(bc_hostsel_backoff_info(dir, &hl.v[0], 60, &until,
	    why, sizeof(why)), 1);
	ck_assert_ptr_nonnull(strstr(why, "cannot connect"));
	ck_assert_int_eq(bc_hostsel_backoff_info(dir, &hl.v[1], 60, &until,
	    why, sizeof(why)), 1);
	ck_assert_ptr_nonnull(strstr(why, "no answer"));
	/* one that accepted and closed is alive; the fine one untouched */
	ck_assert_int_eq(bc_hostsel_backed_off(dir, &hl.v[2], 60), 0);
	ck_assert_int_eq(bc_hostsel_backed_off(dir, &hl.v[3], 60), 0);
	bc_cstats_free(&st);
	/* no backoff period: no marks; no stats: nothing counted */
	bc_hostsel_backoff_clear(dir, &hl.v[0]);
	bc_lookup_note_failed(&hl, &res, dir, 0, NULL);
	ck_assert_int_eq(bc_hostsel_backed_off(dir, &hl.v[0], 60), 0);
	bc_hosts_free(&hl);
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
}
END_TEST

/* A fake boltccd on loopback: serves nconn connections, reporting each
 * request it decoded ("<kind> <key> <origin or ->") on a pipe, and
 * answers MISS, or a hit with SERR "hit" when hit is set. */
struct fake {
	int port;
	pid_t pid;
	int report;		/* read end */
};

static void
fake_serve(int l, int w, int nconn, int hit)
{
	int i;

	alarm(20);
	for (i = 0; i < nconn; i++) {
		struct bc_request req;
		struct bc_reply rep;
		struct bc_buf out;
		struct bc_io io;
		char e[BC_ERRLEN];
		int fd = accept(l, NULL, NULL);

		if (fd < 0)
			_exit(2);
		bc_io_init(&io, fd, fd, 5000);
		bc_request_init(&req);
		if (bc_proto_read_request(&io, &req, e) != BC_OK) {
			dprintf(w, "error %s\n", e);
			_exit(3);
		}
		dprintf(w, "%d %s %s\n", req.kind, req.key ? req.key : "-",
		    req.origin ? req.origin : "-");
		bc_reply_init(&rep);
		rep.proto = BC_PROTO_BOLT;
		if (hit)
			(void)bc_buf_put_str(&rep.serr, "hit");
		else
			rep.miss = 1;
		bc_buf_init(&out, 1 << 20);
		if (bc_proto_write_reply(&out, &req, &rep, e) != BC_OK ||
		    bc_io_write_buf(&io, &out, e) != BC_OK)
			_exit(4);
		bc_buf_free(&out);
		close(fd);
	}
	_exit(0);
}

/* A listening socket on 127.0.0.1 (its port in *port). */
static int
listen_lo(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(l, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 8), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return l;
}

static void
fake_start(struct fake *f, int nconn, int hit)
{
	int l = listen_lo(&f->port), p[2];

	ck_assert_int_eq(pipe(p), 0);
	f->pid = fork();
	ck_assert_int_ge(f->pid, 0);
	if (f->pid == 0) {
		close(p[0]);
		fake_serve(l, p[1], nconn, hit);
	}
	close(p[1]);
	close(l);
	f->report = p[0];
}

/* Wait for the fake; what it reported (nconn lines), in out. */
static void
fake_end(struct fake *f, char *out, size_t outlen)
{
	size_t n = 0;
	ssize_t k;
	int st;

	while (n + 1 < outlen && (k = read(f->report, out + n,
	    outlen - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(f->report);
	ck_assert_int_eq(waitpid(f->pid, &st, 0), f->pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "fake daemon: status %d, said %s", st, out);
}

/* A port nobody listens on. */
static int
dead_port(void)
{
	int port, l = listen_lo(&port);

	close(l);
	return port;
}

START_TEST(t_fanout_miss)
{
	struct fake a, b;
	struct bc_lookup_result res;
	struct bc_reply rep;
	unsigned char cand[3] = { 1, 1, 1 };
	char err[BC_ERRLEN], said[512], *text, *want;

	signal(SIGPIPE, SIG_IGN);
	fake_start(&a, 1, 0);
	fake_start(&b, 1, 0);
	text = xasprintf("127.0.0.1:%d,bolt 127.0.0.1:%d,bolt "
	    "127.0.0.1:%d,bolt", a.port, dead_port(), b.port);
	parse(text);
	free(text);
	ck_assert_int_eq(bc_lookup_fanout(&hl, cand, 2, KEY, "", 2000, 2000,
	    &rep, &res, err), BC_ERR_NOENT);
	ck_assert_int_eq(res.hit_host, -1);
	ck_assert_uint_eq(res.asked, 2);
	ck_assert_uint_eq(res.nfailed, 1);
	ck_assert_uint_eq(res.failed[0], 1);
	ck_assert_int_eq(res.failed_r[0], BC_ERR_NOENT);
	ck_assert_uint_gt(res.sent, 0);
	ck_assert_uint_gt(res.received, 0);
	want = xasprintf("%d %s -\n", BC_RQST_LOOKUP, KEY);
	fake_end(&a, said, sizeof(said));
	ck_assert_str_eq(said, want);
	fake_end(&b, said, sizeof(said));
	ck_assert_str_eq(said, want);
	free(want);
	bc_hosts_free(&hl);

	/* with the client's origin: LOOKUPF carrying it */
	fake_start(&a, 1, 0);
	fake_start(&b, 1, 0);
	text = xasprintf("127.0.0.1:%d,bolt 127.0.0.1:%d,bolt", a.port,
	    b.port);
	parse(text);
	free(text);
	ck_assert_int_eq(bc_lookup_fanout(&hl, cand, 0, KEY, ORIGIN, 2000,
	    2000, &rep, &res, err), BC_ERR_NOENT);
	ck_assert_uint_eq(res.asked, 2);
	ck_assert_uint_eq(res.nfailed, 0);
	want = xasprintf("%d %s %s\n", BC_RQST_LOOKUPF, KEY, ORIGIN);
	fake_end(&a, said, sizeof(said));
	ck_assert_str_eq(said, want);
	fake_end(&b, said, sizeof(said));
	ck_assert_str_eq(said, want);
	free(want);
	bc_hosts_free(&hl);
}
END_TEST

START_TEST(t_fanout_hit)
{
	struct fake a, b;
	struct bc_lookup_result res;
	struct bc_reply rep;
	unsigned char cand[2] = { 1, 1 };
	char err[BC_ERRLEN], said[512], *text;

	signal(SIGPIPE, SIG_IGN);
	fake_start(&a, 1, 1);
	fake_start(&b, 1, 0);
	text = xasprintf("127.0.0.1:%d,bolt 127.0.0.1:%d,bolt", a.port,
	    b.port);
	parse(text);
	free(text);
	/* the owner misses, the other host hits */
	ck_assert_int_eq(bc_lookup_fanout(&hl, cand, 1, KEY, "", 2000, 2000,
	    &rep, &res, err), BC_OK);
	ck_assert_int_eq(res.hit_host, 0);
	ck_assert_int_eq(rep.miss, 0);
	ck_assert_uint_eq(bc_buf_len(&rep.serr), 3);
	ck_assert_int_eq(memcmp(bc_buf_data(&rep.serr), "hit", 3), 0);
	bc_reply_free(&rep);
	fake_end(&a, said, sizeof(said));
	fake_end(&b, said, sizeof(said));

	/* a host that is no candidate is not asked */
	fake_start(&a, 1, 1);
	fake_start(&b, 0, 0);
	bc_hosts_free(&hl);
	text = xasprintf("127.0.0.1:%d,bolt 127.0.0.1:%d,bolt", a.port,
	    b.port);
	parse(text);
	free(text);
	cand[1] = 0;
	ck_assert_int_eq(bc_lookup_fanout(&hl, cand, -1, KEY, "", 2000, 2000,
	    &rep, &res, err), BC_OK);
	ck_assert_uint_eq(res.asked, 1);
	ck_assert_int_eq(res.hit_host, 0);
	bc_reply_free(&rep);
	fake_end(&a, said, sizeof(said));
	fake_end(&b, said, sizeof(said));
	ck_assert_str_eq(said, "");
	bc_hosts_free(&hl);
}
END_TEST

static Suite *
lookup_suite(void)
{
	Suite *s = suite_create("lookup");
	TCase *tc = bc_tcase("pure", BC_TEST_TIMEOUT);
	TCase *tf = bc_tcase("fanout", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(tc, t_owner);
	tcase_add_test(tc, t_host_name);
	tcase_add_test(tc, t_note_failed);
	suite_add_tcase(s, tc);
	tcase_add_test(tf, t_fanout_miss);
	tcase_add_test(tf, t_fanout_hit);
	suite_add_tcase(s, tf);
	return s;
}

int
main(void)
{
	return bc_unit_run(lookup_suite());
}
