/*
 * test_monitor.c - boltcc --monitor's parts: the JSON reader
 * (common/json.h), a host read from a boltccd's /stats.json, the view
 * (widths, cut names, hostile bytes), the snapshot's JSON, the web
 * server's request line, and distcc's state files (client/binstate.h).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/binstate.h"
#include "client/monitor.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/util.h"
#include "tests/unit/unit.h"

static int
parse(struct bc_json *d, const char *text, char *err)
{
	return bc_json_parse(d, text, strlen(text), err);
}

START_TEST(json_reads_documents)
{
	struct bc_json d;
	char err[BC_ERRLEN];
	size_t a, k;

	ck_assert_int_eq(parse(&d, " {\"a\": [1, -2.5e3, true, false, null, "
	    "\"x\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}, \"c\": \"\"} ", err),
	    BC_OK);
	ck_assert_int_eq(bc_json_type(&d, 0), BC_JSON_OBJECT);
	ck_assert_uint_eq(d.v[0].count, 3);
	a = bc_json_get(&d, 0, "a");
	ck_assert_int_eq(bc_json_type(&d, a), BC_JSON_ARRAY);
	ck_assert_uint_eq(d.v[a].count, 6);
	k = d.v[a].first;
	ck_assert(d.v[k].num == 1.0);
	k = d.v[k].next;
	ck_assert(d.v[k].num == -2500.0);
	k = d.v[d.v[k].next].next;	/* false */
	ck_assert_int_eq(d.v[k].type, BC_JSON_FALSE);
	k = d.v[d.v[k].next].next;
	ck_assert_str_eq(d.v[k].str, "x\xc3\xa9\xf0\x9f\x98\x80\n");
	ck_assert_uint_eq(d.v[k].next, BC_JSON_NONE);
	ck_assert_int_eq(bc_json_type(&d, bc_json_get(&d, 0, "b")),
	    BC_JSON_OBJECT);
	ck_assert_str_eq(bc_json_str(&d, 0, "c", "none"), "");
	ck_assert_str_eq(bc_json_str(&d, 0, "nope", "none"), "none");
	ck_assert(bc_json_num(&d, 0, "a", 7.0) == 7.0);	/* not a number */
	ck_assert_uint_eq(bc_json_get(&d, a, "x"), BC_JSON_NONE);
	bc_json_free(&d);
}
END_TEST

/* Every broken document fails whole, saying where. */
START_TEST(json_refuses_bad_documents)
{
	static const char *const bad[] = {
		"", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}",
		"[01]", "[1.]", "[.5]", "[-]", "[1e]", "[+1]", "tru", "nul",
		"\"abc", "\"a\\x\"", "\"\\u12\"", "\"\\u0000\"",
		"\"\\udc00\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "[1] 2",
		"{\"a\":1}}", "\"tab\there\"", "[NaN]", "[Infinity]",
		NULL
	};
	struct bc_json d;
	char err[BC_ERRLEN];
	size_t i;

	for (i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		ck_assert_msg(parse(&d, bad[i], err) != BC_OK, "accepted: %s",
		    bad[i]);
		ck_assert_msg(strstr(err, "at byte") != NULL, "%s: %s",
		    bad[i], err);
		bc_json_free(&d);
	}
}
END_TEST

/* Depth, strings and nodes are bounded. */
START_TEST(json_limits)
{
	struct bc_json d;
	char err[BC_ERRLEN], *s;
	size_t i, n;

	n = BC_MAX_JSON_DEPTH + 2;
	s = xcalloc(2 * n + 1, 1);
	for (i = 0; i < n; i++) {
		s[i] = '[';
		s[2 * n - 1 - i] = ']';
	}
	ck_assert_int_ne(parse(&d, s, err), BC_OK);
	ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));
	bc_json_free(&d);
	free(s);
	s = xcalloc(BC_MAX_JSON_STRING + 8, 1);
	s[0] = '"';
	memset(s + 1, 'a', BC_MAX_JSON_STRING + 1);
	s[BC_MAX_JSON_STRING + 2] = '"';
	ck_assert_int_ne(parse(&d, s, err), BC_OK);
	ck_assert_ptr_nonnull(strstr(err, "string too long"));
	bc_json_free(&d);
	free(s);
	n = BC_MAX_JSON_NODES + 1;
	s = xcalloc(2 * n + 2, 1);
	s[0] = '[';
	for (i = 0; i < n; i++) {
		s[1 + 2 * i] = '0';
		s[2 + 2 * i] = i + 1 < n ? ',' : ']';
	}
	ck_assert_int_ne(parse(&d, s, err), BC_OK);
	ck_assert_ptr_nonnull(strstr(err, "too many values"));
	bc_json_free(&d);
	free(s);
}
END_TEST

static const char stats_page[] =
    "{\"version\":\"0.1\",\"jobs\":4,\"queue\":8,\"running\":2,\"queued\":1,"
    "\"dcc_compile_ok\":40,\"dcc_compile_error\":2,"
    "\"cache\":{\"hits\":30,\"misses\":10,\"time_saved_ms\":125000,"
    "\"entries\":12,\"stored_bytes\":4096},"
    "\"active_jobs\":[{\"pid\":1,\"state\":\"compiling\",\"mode\":\"bolt-pump\","
    "\"seconds\":3.5,\"client\":\"10.0.0.2:5000\",\"compiler\":\"clang\","
    "\"file\":\"Vi\\u00e9w\\u0007Controller_with_a_rather_long_name.m\"},"
    "{\"pid\":2,\"state\":\"queued\",\"mode\":\"plain\",\"seconds\":0.2,"
    "\"client\":\"10.0.0.3:5001\",\"compiler\":\"gcc\",\"file\":\"b.c\"}],"
    "\"throughput\":{\"jobs_per_second\":1.25,\"hit_rate\":null},"
    "\"history\":{\"step_seconds\":10,\"done\":[1,2,3],\"hits\":[0,1,2],"
    "\"misses\":[1,0,0]}}";

/* The writer: commas and colons where they belong, strings escaped,
 * errors sticky, and what it writes reads back. */
START_TEST(json_writer)
{
	struct bc_buf out = BC_BUF_INIT(4096), tiny = BC_BUF_INIT(8);
	struct bc_jsonw w;
	struct bc_json d;
	char err[BC_ERRLEN];
	int i;

	bc_jsonw_init(&w, &out);
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "a");
	bc_jsonw_int(&w, -3);
	bc_jsonw_key(&w, "b\"");
	bc_jsonw_arr(&w);
	bc_jsonw_uint(&w, 18446744073709551615ULL);
	bc_jsonw_str(&w, "x\n\xff");
	bc_jsonw_obj(&w);
	bc_jsonw_obj_end(&w);
	bc_jsonw_arr(&w);
	bc_jsonw_arr_end(&w);
	bc_jsonw_bool(&w, 1);
	bc_jsonw_null(&w);
	bc_jsonw_arr_end(&w);
	bc_jsonw_key(&w, "c");
	bc_jsonw_fixed(&w, 2.0 / 3.0, 2);
	bc_jsonw_key(&w, "d");
	bc_jsonw_bool(&w, 0);
	bc_jsonw_key(&w, "e");
	bc_jsonw_number(&w, "-0.5e3");
	bc_jsonw_obj_end(&w);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	ck_assert_str_eq((const char *)bc_buf_data(&out), "{\"a\":-3,\"b\\\"\":"
	    "[18446744073709551615,\"x\\n\\ufffd\",{},[],true,null],"
	    "\"c\":0.67,\"d\":false,\"e\":-0.5e3}");
	ck_assert_int_eq(bc_json_parse(&d, bc_buf_data(&out),
	    bc_buf_len(&out) - 1, err), BC_OK);
	ck_assert(bc_json_num(&d, 0, "c", 0) == 0.67);
	bc_json_free(&d);

	/* misuse: a value where a key belongs, a key outside an object,
	 * a close too many, something left open */
	bc_buf_reset(&out);
	bc_jsonw_init(&w, &out);
	bc_jsonw_obj(&w);
	bc_jsonw_int(&w, 1);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	bc_jsonw_init(&w, &out);
	bc_jsonw_key(&w, "k");
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	bc_jsonw_init(&w, &out);
	bc_jsonw_arr_end(&w);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	bc_jsonw_init(&w, &out);
	bc_jsonw_arr(&w);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	bc_jsonw_init(&w, &out);
	bc_jsonw_number(&w, "NaN");	/* not a JSON number */
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	bc_jsonw_init(&w, &out);
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "k");
	bc_jsonw_obj_end(&w);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	bc_jsonw_init(&w, &out);
	for (i = 0; i <= BC_JSONW_DEPTH; i++)
		bc_jsonw_arr(&w);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_INVAL);
	/* a full buffer: the first error stays */
	bc_jsonw_init(&w, &tiny);
	bc_jsonw_arr(&w);
	bc_jsonw_str(&w, "far too long for eight bytes");
	bc_jsonw_arr_end(&w);
	ck_assert_int_eq(bc_jsonw_end(&w), BC_ERR_LIMIT);
	bc_buf_free(&out);
	bc_buf_free(&tiny);
}
END_TEST

START_TEST(monitor_reads_a_host)
{
	struct bc_mon_host h;
	char err[BC_ERRLEN];

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(bc_monitor_parse_json(&h, stats_page,
	    strlen(stats_page), err), BC_OK);
	ck_assert_int_eq(h.slots, 4);
	ck_assert_int_eq(h.running, 2);
	ck_assert_int_eq(h.queued, 1);
	ck_assert(h.done == 42.0);
	ck_assert(h.jobs_per_sec == 1.25);
	ck_assert_int_eq(h.cache, 1);
	ck_assert(h.hits == 30.0 && h.misses == 10.0 && h.saved_s == 125.0);
	ck_assert_int_eq(h.step_s, 10);
	/* right-aligned: the newest point last */
	ck_assert(h.hist_done[BC_MON_HISTORY - 1] == 3.0);
	ck_assert(h.hist_done[BC_MON_HISTORY - 3] == 1.0);
	ck_assert(h.hist_done[0] == 0.0);
	ck_assert(h.hist_hits[BC_MON_HISTORY - 1] == 2.0);
	ck_assert_uint_eq(h.njob, 2);
	ck_assert_str_eq(h.job[0].state, "compiling");
	ck_assert_str_eq(h.job[0].mode, "bolt-pump");
	ck_assert_str_eq(h.job[0].file,
	    "Vi\xc3\xa9w\aController_with_a_rather_long_name.m");
	ck_assert_str_eq(h.job[1].client, "10.0.0.3:5001");
	free(h.job);
	/* not an object; not JSON */
	memset(&h, 0, sizeof(h));
	ck_assert_int_ne(bc_monitor_parse_json(&h, "[1]", 3, err), BC_OK);
	ck_assert_int_ne(bc_monitor_parse_json(&h, "<html>", 6, err), BC_OK);
	ck_assert_uint_eq(h.njob, 0);
}
END_TEST

/* Columns are characters: a cut never splits UTF-8, a control byte is
 * '?', nothing passes the width. */
START_TEST(monitor_view_fits)
{
	struct bc_farm farm;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN], *text, *line, *save = NULL;
	int lines = 0;

	memset(&farm, 0, sizeof(farm));
	farm.at = 1000;
	farm.n = 2;
	farm.host = xcalloc(2, sizeof(*farm.host));
	snprintf(farm.host[0].spec, sizeof(farm.host[0].spec),
	    "mini-1.local:3632/4");
	farm.host[0].reachable = 1;
	ck_assert_int_eq(bc_monitor_parse_json(&farm.host[0], stats_page,
	    strlen(stats_page), err), BC_OK);
	snprintf(farm.host[1].spec, sizeof(farm.host[1].spec), "mini-2");
	farm.host[1].state = BC_MON_DOWN;
	snprintf(farm.host[1].why, sizeof(farm.host[1].why), "cannot "
	    "connect to mini-2:3633: Connection refused\x1b[2J");
	ck_assert_int_eq(bc_monitor_render(&farm, 80, 0, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	text = xstrdup((const char *)bc_buf_data(&out));
	if (getenv("BC_SHOW") != NULL)
		fputs(text, stderr);
	ck_assert_ptr_nonnull(strstr(text, "\nmini-1.local:3632/4    up       "
	    "[####....] 2/4        42   1.25  75.0%   2.1 min\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n    Vi\xc3\xa9w?Controller_with_a_"
	    "rather_ compiling    3.5 s  bolt-pump 10.0.0.2:5000\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmini-2                 down\n"
	    "    cannot connect to mini-2:3633: Connection refused?[2J\n"));
	ck_assert_ptr_null(strchr(text, '\x1b'));
	ck_assert_ptr_nonnull(strstr(text, "farm: slots 2/4 busy, 1.25 "
	    "jobs/s, cache hits 75.0%, time saved 2.1 min\n"));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		size_t cols = 0, i;

		for (i = 0; line[i] != '\0'; i++)
			cols += ((unsigned char)line[i] & 0xc0) != 0x80;
		ck_assert_msg(cols <= 80, "%zu columns: %s", cols, line);
		lines++;
	}
	free(text);
	/* a short terminal: at most that many lines */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_monitor_render(&farm, 40, 5, &out), BC_OK);
	ck_assert_int_eq(bc_buf_put_u8(&out, 0), BC_OK);
	text = (char *)bc_buf_data(&out);
	{
		int n = 0;
		char *p;

		for (p = text; *p != '\0'; p++)
			n += *p == '\n';
		ck_assert_int_eq(n, 5);
	}
	ck_assert_int_gt(lines, 5);
	/* the snapshot's JSON parses back */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_monitor_render_json(&farm, &out), BC_OK);
	{
		struct bc_json d;
		size_t hosts, h0, jobs;

		ck_assert_int_eq(bc_json_parse(&d, bc_buf_data(&out),
		    bc_buf_len(&out), err), BC_OK);
		hosts = bc_json_get(&d, 0, "hosts");
		ck_assert_uint_eq(d.v[hosts].count, 2);
		h0 = d.v[hosts].first;
		ck_assert_str_eq(bc_json_str(&d, h0, "state", ""), "up");
		jobs = bc_json_get(&d, h0, "jobs");
		ck_assert_uint_eq(d.v[jobs].count, 2);
		ck_assert_str_eq(bc_json_str(&d, d.v[jobs].first, "file", ""),
		    "Vi\xc3\xa9w\aController_with_a_rather_long_name.m");
		ck_assert_str_eq(bc_json_str(&d, d.v[h0].next, "why", ""),
		    farm.host[1].why);
		bc_json_free(&d);
	}
	bc_buf_free(&out);
	bc_farm_free(&farm);
}
END_TEST

START_TEST(monweb_request_line)
{
	char path[64];
	int st;

#define REQ(s) bc_monweb_request_path(s, strlen(s), path, sizeof(path), &st)
	ck_assert_int_eq(REQ("GET / HTTP/1.1\r\n"), 0);
	ck_assert_str_eq(path, "/");
	ck_assert_int_eq(REQ("GET /farm.json?t=1 HTTP/1.0\r\n"), 0);
	ck_assert_str_eq(path, "/farm.json");
	ck_assert_int_eq(REQ("POST / HTTP/1.1\r\n"), -1);
	ck_assert_int_eq(st, 405);
	ck_assert_int_eq(REQ("DELETE /x HTTP/1.1\r\n"), -1);
	ck_assert_int_eq(st, 405);
	ck_assert_int_eq(REQ("GET farm.json HTTP/1.0\r\n"), -1);
	ck_assert_int_eq(st, 400);
	ck_assert_int_eq(REQ("GET /a\x01 HTTP/1.0\r\n"), -1);
	ck_assert_int_eq(REQ("GET /unfinished"), -1);
	ck_assert_int_eq(REQ("\x16\x03\x01 TLS hello"), -1);
	ck_assert_int_eq(st, 400);
	ck_assert_int_eq(REQ("GET /" "0123456789012345678901234567890123456789"
	    "0123456789012345678901234567890123456789 HTTP/1.0\r\n"), -1);
#undef REQ
}
END_TEST

/* distcc's record, byte for byte the struct it reads; removed at the end. */
START_TEST(binstate_round_trip)
{
	char dir[] = "/tmp/bc-test-binstate.XXXXXX", *path;
	struct bc_binstate st;
	char err[BC_ERRLEN];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(bc_binstate_note(dir, BC_PHASE_COMPILE,
	    "/src/dir/main.c", "mini-1.local", 3), BC_OK);
	path = xasprintf("%s/binstate_%ld", dir, (long)getpid());
	ck_assert_int_eq(bc_binstate_read(path, &st, err), BC_OK);
	ck_assert_uint_eq(st.struct_size, sizeof(st));
	ck_assert_uint_eq(st.magic, 0x44494800UL);
	ck_assert_uint_eq(st.cpid, (unsigned long)getpid());
	ck_assert_str_eq(st.file, "main.c");
	ck_assert_str_eq(st.host, "mini-1.local");
	ck_assert_int_eq(st.slot, 3);
	ck_assert_int_eq(st.curr_phase, 5);	/* DCC_PHASE_COMPILE */
	bc_binstate_clear(dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* a short or foreign file is refused with its name */
	ck_assert_int_eq(bc_write_file_atomic(path, "xyz", 3, 0644, err),
	    BC_OK);
	ck_assert_int_ne(bc_binstate_read(path, &st, err), BC_OK);
	ck_assert_ptr_nonnull(strstr(err, "not a state record"));
	(void)unlink(path);
	free(path);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("monitor");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(tc, json_reads_documents);
	tcase_add_test(tc, json_refuses_bad_documents);
	tcase_add_test(tc, json_limits);
	tcase_add_test(tc, json_writer);
	tcase_add_test(tc, monitor_reads_a_host);
	tcase_add_test(tc, monitor_view_fits);
	tcase_add_test(tc, monweb_request_line);
	tcase_add_test(tc, binstate_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(suite());
}
