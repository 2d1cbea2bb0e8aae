/*
 * test_admin.c - operator requests on the stats port (daemon/admin.c):
 * the request-line parser (with a mutation loop), who may send them,
 * the answers, the cache operations through bc_admin_exec, the page
 * counters' baseline (daemon/stats.c), and the age and JSON helpers
 * (common/util.c).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "daemon/acl.h"
#include "daemon/admin.h"
#include "daemon/stats.h"
#include "tests/unit/unit.h"

static void
parse(const char *req, struct bc_admin_req *rq)
{
	bc_admin_parse(req, strlen(req), rq);
}

START_TEST(admin_parse_good)
{
	struct bc_admin_req rq;

	parse("POST /admin/cache/clear HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_CLEAR);
	parse("POST /admin/cache/limit?size=20G HTTP/1.1\r\nHost: h\r\n\r\n",
	    &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_LIMIT);
	ck_assert_uint_eq(rq.size, (uint64_t)20 << 30);
	parse("POST /admin/cache/limit?size=0 HTTP/1.0\n\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_LIMIT);
	ck_assert_uint_eq(rq.size, 0);
	parse("POST /admin/cache/evict?older-than=7d HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_EVICT);
	ck_assert_int_eq(rq.age, 7 * 86400);
	parse("POST /admin/cache/evict?older-than=90s&& HTTP/1.0\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_EVICT);
	ck_assert_int_eq(rq.age, 90);
	parse("POST /admin/cache/evict?older-than=30m", &rq);	/* partial */
	ck_assert_int_eq(rq.age, 1800);
	parse("POST /admin/cache/evict?older-than=12h HTTP/1.0\r\n", &rq);
	ck_assert_int_eq(rq.age, 12 * 3600);
	parse("POST /admin/stats/zero HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_ZERO);
	/* not admin: the stats pages, as before */
	parse("GET /stats.json HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_NONE);
	parse("GET /administrator HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_NONE);
	parse("", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_NONE);
	parse("hello", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_NONE);
	parse("POST /metrics HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(rq.op, BC_ADMIN_NONE);
	ck_assert_str_eq(bc_admin_op_name(BC_ADMIN_CLEAR), "clear");
}
END_TEST

static void
refused(const char *req, int status, const char *why_has)
{
	struct bc_admin_req rq;

	parse(req, &rq);
	ck_assert_msg(rq.op == BC_ADMIN_BAD, "%s: op %d", req, rq.op);
	ck_assert_msg(rq.status == status, "%s: %d", req, rq.status);
	ck_assert_msg(strstr(rq.why, why_has) != NULL, "%s: '%s'", req,
	    rq.why);
}

START_TEST(admin_parse_refused)
{
	char big[BC_MAX_HTTP_TARGET + 64];

	/* GET changes nothing */
	refused("GET /admin/cache/clear HTTP/1.0\r\n\r\n", 405, "GET never");
	refused("HEAD /admin/stats/zero HTTP/1.0\r\n\r\n", 405, "POST");
	refused("GET /admin HTTP/1.0\r\n\r\n", 405, "POST");
	refused("POST /admin/cache/drop HTTP/1.0\r\n", 404, "/admin/cache/drop");
	refused("POST /admin HTTP/1.0\r\n", 404, "no admin request");
	refused("POST /admin/cache/limit HTTP/1.0\r\n", 400,
	    "missing parameter size");
	refused("POST /admin/cache/limit?size=abc HTTP/1.0\r\n", 400,
	    "bad parameter size: 'abc'");
	refused("POST /admin/cache/limit?size=-5 HTTP/1.0\r\n", 400,
	    "bad parameter size");
	refused("POST /admin/cache/evict?older-than=7w HTTP/1.0\r\n", 400,
	    "bad parameter older-than: '7w'");
	refused("POST /admin/cache/evict?older-than=-1d HTTP/1.0\r\n", 400,
	    "bad parameter older-than");
	refused("POST /admin/cache/evict?age=7d HTTP/1.0\r\n", 400,
	    "unknown parameter 'age'");
	refused("POST /admin/cache/clear?x=1 HTTP/1.0\r\n", 400,
	    "unknown parameter 'x'");
	refused("POST /admin/cache/limit?size=1G&size=2G HTTP/1.0\r\n", 400,
	    "given twice");
	refused("POST /admin/cache/clear?&&&&&&&&&&&&& HTTP/1.0\r\n", 400,
	    "more than 8 parameters");
	memset(big, 'a', sizeof(big));
	memcpy(big, "POST /admin/cache/limit?size=", 29);
	big[sizeof(big) - 1] = '\0';
	refused(big, 400, "longer than 512");
	memset(big, 'a', sizeof(big));
	memcpy(big, "POST /admin/cache/limit?", 24);
	big[24 + BC_MAX_HTTP_PARAM + 1] = '\0';
	refused(big, 400, "longer than 64");
}
END_TEST

/* Truncations and byte changes of good requests: the parser always
 * answers something sane (the fuzz target does more of this). */
START_TEST(admin_parse_mutations)
{
	static const char *const seeds[] = {
		"POST /admin/cache/limit?size=20G HTTP/1.0\r\n\r\n",
		"POST /admin/cache/evict?older-than=7d HTTP/1.0\r\n\r\n",
		"POST /admin/stats/zero HTTP/1.0\r\n\r\n",
	};
	uint64_t x = 42;
	size_t s, i;

	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		size_t n = strlen(seeds[s]);
		char *m = xmalloc(n);

		for (i = 0; i < 3000; i++) {
			struct bc_admin_req rq;
			size_t len = i < n ? i : n;

			memcpy(m, seeds[s], n);
			if (i >= n) {
				x = x * 6364136223846793005ULL + 1;
				m[(x >> 33) % n] = (char)(x >> 17);
			}
			bc_admin_parse(m, len, &rq);
			ck_assert(rq.op >= BC_ADMIN_NONE &&
			    rq.op <= BC_ADMIN_ZERO);
			ck_assert(memchr(rq.why, '\0', sizeof(rq.why)) != NULL);
			if (rq.op == BC_ADMIN_BAD)
				ck_assert(rq.status == 400 || rq.status == 404 ||
				    rq.status == 405);
		}
		free(m);
	}
}
END_TEST

static int
peer_ok(const struct bc_acl *allow, const char *addr)
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;

	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (inet_pton(AF_INET, addr, &a4.sin_addr) == 1) {
		a4.sin_family = AF_INET;
		return bc_admin_peer_ok(allow, (struct sockaddr *)&a4,
		    sizeof(a4));
	}
	ck_assert_int_eq(inet_pton(AF_INET6, addr, &a6.sin6_addr), 1);
	a6.sin6_family = AF_INET6;
	return bc_admin_peer_ok(allow, (struct sockaddr *)&a6, sizeof(a6));
}

START_TEST(admin_peer)
{
	struct bc_acl allow;
	char err[BC_ERRLEN];

	bc_acl_init(&allow);
	ck_assert(peer_ok(&allow, "127.0.0.1"));
	ck_assert(peer_ok(&allow, "127.3.2.1"));
	ck_assert(peer_ok(&allow, "::1"));
	ck_assert(peer_ok(&allow, "::ffff:127.0.0.1"));
	ck_assert(peer_ok(NULL, "127.0.0.1"));
	ck_assert(!peer_ok(&allow, "10.0.0.5"));
	ck_assert(!peer_ok(NULL, "10.0.0.5"));
	ck_assert(!peer_ok(&allow, "fd00::5"));
	ck_assert(!peer_ok(&allow, "::ffff:10.0.0.5"));
	ck_assert_int_eq(bc_acl_add(&allow, "10.0.0.0/8", err), BC_OK);
	ck_assert_int_eq(bc_acl_add(&allow, "fd00::/64", err), BC_OK);
	ck_assert(peer_ok(&allow, "10.0.0.5"));
	ck_assert(peer_ok(&allow, "::ffff:10.0.0.5"));
	ck_assert(peer_ok(&allow, "fd00::5"));
	ck_assert(!peer_ok(&allow, "192.168.1.1"));
	ck_assert(!peer_ok(&allow, "fd01::5"));
	bc_acl_free(&allow);
}
END_TEST

START_TEST(admin_answers)
{
	struct bc_buf out = BC_BUF_INIT(1 << 16);
	const char *s;

	ck_assert_int_eq(bc_admin_error(403, "a \"quoted\" \\ reason\n\x01"
	    "caf\xc3\xa9\xff", &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert(bc_str_has_prefix(s, "HTTP/1.0 403 Forbidden\n"));
	ck_assert_ptr_nonnull(strstr(s, "\n\n{\"error\":\"a \\\"quoted\\\" "
	    "\\\\ reason\\n\\u0001caf\xc3\xa9\\ufffd\"}\n"));
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_admin_error(405, "use POST", &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	ck_assert_ptr_nonnull(strstr((const char *)bc_buf_data(&out),
	    "\nAllow: POST\n"));
	bc_buf_free(&out);
}
END_TEST

/* bc_admin_exec on a real cache: the answers say what was done. */
START_TEST(admin_exec)
{
	struct bc_buf out = BC_BUF_INIT(1 << 16);
	struct bc_admin_req rq;
	char err[BC_ERRLEN], *tmp, *dir;
	const char *s;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_admin-", &tmp, err),
	    BC_OK);
	dir = xasprintf("%s/cache", tmp);
	parse("POST /admin/cache/limit?size=1M HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(bc_admin_exec(&rq, dir, 0, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert(bc_str_has_prefix(s, "HTTP/1.0 200 OK\n"));
	ck_assert_ptr_nonnull(strstr(s, "\"limit_bytes\":1048576,"
	    "\"limit_set\":true"));
	bc_buf_reset(&out);
	parse("POST /admin/cache/clear HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(bc_admin_exec(&rq, dir, 0, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	ck_assert_ptr_nonnull(strstr((const char *)bc_buf_data(&out),
	    "{\"op\":\"clear\",\"cleared_entries\":0,\"freed_bytes\":0,"));
	bc_buf_reset(&out);
	parse("POST /admin/stats/zero HTTP/1.0\r\n\r\n", &rq);
	ck_assert_int_eq(bc_admin_exec(&rq, dir, 0, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	ck_assert_ptr_nonnull(strstr((const char *)bc_buf_data(&out),
	    "{\"op\":\"zero\",\"zeroed_at\":"));
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_admin_exec(&rq, NULL, 0, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	ck_assert(bc_str_has_prefix((const char *)bc_buf_data(&out),
	    "HTTP/1.0 409 "));
	bc_buf_free(&out);
	ck_assert_int_eq(bc_rmtree(tmp), BC_OK);
	free(dir);
	free(tmp);
}
END_TEST

/* Zero: the pages count from the baseline, /metrics keeps the totals. */
START_TEST(stats_zero_baseline)
{
	struct bc_stats st, pg;
	struct bc_stats_sys sys;
	struct bc_job_event ev;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	const char *s;

	memset(&sys, 0, sizeof(sys));
	bc_stats_init(&st, 2, 8, 1000);
	st.tcp_accept = 10;
	st.compile_ok = 7;
	st.cache_on = 1;
	st.cache.hits = 5;
	st.cache.misses = 5;
	st.cache.entries = 3;
	st.cache_base.hits = 4;
	st.cache_base.misses = 1;
	st.cache_base.zeroed_at = 1700000000;
	memset(&ev, 0, sizeof(ev));
	ev.kind = BC_EV_ZERO;
	bc_stats_event(&st, &ev, 2000);
	ck_assert_int_gt(st.zeroed_at, 0);
	st.tcp_accept += 2;
	st.compile_ok += 1;
	bc_stats_since_zero(&st, &pg);
	ck_assert_uint_eq(pg.tcp_accept, 2);
	ck_assert_uint_eq(pg.compile_ok, 1);
	ck_assert_uint_eq(pg.cache.hits, 1);
	ck_assert_uint_eq(pg.cache.misses, 4);
	ck_assert_uint_eq(pg.cache.entries, 3);
	ck_assert_int_eq(pg.cache.zeroed_at, 1700000000);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1",
	    "GET /stats.json HTTP/1.0\r\n\r\n", 28, 3000, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "\"dcc_tcp_accept\":2,"));
	ck_assert_ptr_nonnull(strstr(s, "\"hits\":1,"));
	ck_assert_ptr_nonnull(strstr(s, "\"hit_rate\":20.0,"));
	ck_assert_ptr_nonnull(strstr(s, "\"zeroed_at\":1700000000}"));
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1",
	    "GET /metrics HTTP/1.0\r\n\r\n", 25, 3000, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "\nboltccd_tcp_accept_total 12\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nboltccd_cache_hits_total 5\n"));
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_stats_http_response(&st, &sys, "/x", "1",
	    "GET / HTTP/1.0\r\n\r\n", 18, 3000, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	s = (const char *)bc_buf_data(&out);
	ck_assert_ptr_nonnull(strstr(s, "\ndcc_tcp_accept 2\n"));
	ck_assert_ptr_nonnull(strstr(s, "</distccstats>\n"
	    "boltccd_cache_entries 3\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nboltccd_zeroed_at "));
	bc_buf_free(&out);
}
END_TEST

START_TEST(parse_ages)
{
	int64_t a;

	ck_assert_int_eq(bc_parse_age("90", &a), BC_OK);
	ck_assert_int_eq(a, 90);
	ck_assert_int_eq(bc_parse_age("90s", &a), BC_OK);
	ck_assert_int_eq(a, 90);
	ck_assert_int_eq(bc_parse_age("2m", &a), BC_OK);
	ck_assert_int_eq(a, 120);
	ck_assert_int_eq(bc_parse_age("3h", &a), BC_OK);
	ck_assert_int_eq(a, 3 * 3600);
	ck_assert_int_eq(bc_parse_age("0d", &a), BC_OK);
	ck_assert_int_eq(a, 0);
	ck_assert_int_ne(bc_parse_age("", &a), BC_OK);
	ck_assert_int_ne(bc_parse_age("d", &a), BC_OK);
	ck_assert_int_ne(bc_parse_age("-1d", &a), BC_OK);
	ck_assert_int_ne(bc_parse_age("+1d", &a), BC_OK);
	ck_assert_int_ne(bc_parse_age("1w", &a), BC_OK);
	ck_assert_int_ne(bc_parse_age("1.5d", &a), BC_OK);
	ck_assert_int_ne(bc_parse_age("99999999999d", &a), BC_OK);
}
END_TEST

static Suite *
admin_suite(void)
{
	Suite *s = suite_create("admin");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(tc, admin_parse_good);
	tcase_add_test(tc, admin_parse_refused);
	tcase_add_test(tc, admin_parse_mutations);
	tcase_add_test(tc, admin_peer);
	tcase_add_test(tc, admin_answers);
	tcase_add_test(tc, admin_exec);
	tcase_add_test(tc, stats_zero_baseline);
	tcase_add_test(tc, parse_ages);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(admin_suite());
}
