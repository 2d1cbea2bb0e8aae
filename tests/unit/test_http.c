/*
 * test_http.c - the HTTP request line (common/http.c): a good line and
 * what follows its target; no method, a bad method or no space (not
 * HTTP); a method and a target at and over their limits; bytes outside
 * printable ASCII; and every prefix of a request, as a partial read
 * delivers it.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "common/err.h"
#include "common/http.h"
#include "common/limits.h"
#include "tests/unit/unit.h"

static char method[BC_MAX_HTTP_METHOD + 1];
static char target[BC_MAX_HTTP_TARGET + 1];

static int
line(const char *s, int *end)
{
	return bc_http_request_line(s, strlen(s), method, target, end);
}

START_TEST(t_good)
{
	int end;

	ck_assert_int_eq(line("GET /stats?fmt=json HTTP/1.1\r\nHost: x\r\n\r\n",
	    &end), BC_OK);
	ck_assert_str_eq(method, "GET");
	ck_assert_str_eq(target, "/stats?fmt=json");
	ck_assert_int_eq(end, ' ');
	/* HTTP/0.9 style: the line ends after the target */
	ck_assert_int_eq(line("POST /a\r\n", &end), BC_OK);
	ck_assert_str_eq(method, "POST");
	ck_assert_str_eq(target, "/a");
	ck_assert_int_eq(end, '\r');
	/* the bytes end with the target */
	ck_assert_int_eq(line("HEAD /", &end), BC_OK);
	ck_assert_str_eq(method, "HEAD");
	ck_assert_str_eq(target, "/");
	ck_assert_int_eq(end, -1);
}
END_TEST

START_TEST(t_not_http)
{
	static const char *const bad[] = {
		"", " / HTTP/1.1", "GET", "GET/ HTTP/1.1", "get / HTTP/1.1",
		"Get / HTTP/1.1", "GET\t/ HTTP/1.1", "G3T / HTTP/1.1",
		"\x16\x03\x01\x02\x00", "ARGC00000005", "\r\n",
	};
	size_t i;
	int end;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		end = 0;
		ck_assert_msg(line(bad[i], &end) == BC_ERR_PROTO,
		    "accepted \"%s\"", bad[i]);
		ck_assert_str_eq(target, "");
		ck_assert_int_eq(end, -1);
	}
}
END_TEST

START_TEST(t_method_limit)
{
	char req[BC_MAX_HTTP_METHOD + 16];
	int end;

	memset(req, 'M', BC_MAX_HTTP_METHOD);
	strcpy(req + BC_MAX_HTTP_METHOD, " /x HTTP/1.1");
	ck_assert_int_eq(line(req, &end), BC_OK);
	ck_assert_uint_eq(strlen(method), BC_MAX_HTTP_METHOD);
	ck_assert_str_eq(target, "/x");
	memset(req, 'M', BC_MAX_HTTP_METHOD + 1);
	strcpy(req + BC_MAX_HTTP_METHOD + 1, " /x HTTP/1.1");
	ck_assert_int_eq(line(req, &end), BC_ERR_PROTO);
}
END_TEST

START_TEST(t_target_limit)
{
	char req[BC_MAX_HTTP_TARGET + 32];
	int end;

	strcpy(req, "GET /");
	memset(req + 5, 'a', BC_MAX_HTTP_TARGET - 1);
	strcpy(req + 4 + BC_MAX_HTTP_TARGET, " HTTP/1.1\r\n");
	ck_assert_int_eq(line(req, &end), BC_OK);
	ck_assert_uint_eq(strlen(target), BC_MAX_HTTP_TARGET);
	ck_assert_int_eq(end, ' ');
	/* one byte more: BC_ERR_LIMIT, target holds the first bytes */
	strcpy(req, "GET /");
	memset(req + 5, 'a', BC_MAX_HTTP_TARGET);
	strcpy(req + 5 + BC_MAX_HTTP_TARGET, " HTTP/1.1\r\n");
	ck_assert_int_eq(line(req, &end), BC_ERR_LIMIT);
	ck_assert_uint_eq(strlen(target), BC_MAX_HTTP_TARGET);
	ck_assert_int_eq(target[0], '/');
	ck_assert_int_eq(target[BC_MAX_HTTP_TARGET - 1], 'a');
	/* over the limit even when the bytes end inside the target */
	req[5 + BC_MAX_HTTP_TARGET] = '\0';
	ck_assert_int_eq(line(req, &end), BC_ERR_LIMIT);
}
END_TEST

/* A byte a target may not hold ends it, and is what *end says. */
START_TEST(t_target_bytes)
{
	static const unsigned char stops[] = { 0x00, 0x09, 0x1f, 0x7f, 0x80,
	    0xff };
	char req[32];
	size_t i;
	int end;

	for (i = 0; i < sizeof(stops); i++) {
		memcpy(req, "GET /ab", 7);
		req[7] = (char)stops[i];
		memcpy(req + 8, "cd HTTP/1.1", 11);
		ck_assert_int_eq(bc_http_request_line(req, 19, method, target,
		    &end), BC_OK);
		ck_assert_str_eq(target, "/ab");
		ck_assert_int_eq(end, stops[i]);
	}
}
END_TEST

/* Every prefix of a request, as a read that stopped early gives it:
 * never more than the bytes say, never past n. */
START_TEST(t_prefixes)
{
	static const char req[] = "GET /stats HTTP/1.1\r\n";
	char copy[sizeof(req)];
	size_t n;
	int r, end;

	for (n = 0; n < sizeof(req); n++) {
		/* only n bytes of a heap-like copy, the rest poisoned */
		memset(copy, ' ', sizeof(copy));
		memcpy(copy, req, n);
		r = bc_http_request_line(copy, n, method, target, &end);
		if (n < 4) {		/* "GET " not complete */
			ck_assert_int_eq(r, BC_ERR_PROTO);
			continue;
		}
		ck_assert_int_eq(r, BC_OK);
		ck_assert_str_eq(method, "GET");
		ck_assert_uint_eq(strlen(target), (n < 10 ? n - 4 : 6));
		ck_assert_int_eq(strncmp(target, "/stats", strlen(target)),
		    0);
		ck_assert_int_eq(end, (n <= 10 ? -1 : ' '));
	}
}
END_TEST

static Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = bc_tcase("request_line", BC_TEST_TIMEOUT);

	tcase_add_test(tc, t_good);
	tcase_add_test(tc, t_not_http);
	tcase_add_test(tc, t_method_limit);
	tcase_add_test(tc, t_target_limit);
	tcase_add_test(tc, t_target_bytes);
	tcase_add_test(tc, t_prefixes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(http_suite());
}
