/*
 * test_statsview.c - `boltcc --stats`: the summary as a pure function of
 * the client's counters (client/statsview.h), its text and JSON, the
 * words after --stats / -s, and the JSON string escaper and number
 * grammar it prints with (common/json.h).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "client/cstats.h"
#include "client/statspage.h"
#include "client/statsview.h"
#include "tests/unit/unit.h"

/* ------------------------------------------------------------------ */
/* helpers */

/* cs from "name value" pairs, NULL-terminated. */
static void
counters(struct bc_cstats *cs, const char *const *nv)
{
	bc_cstats_init(cs);
	for (; nv[0] != NULL; nv += 2)
		bc_cstats_add(cs, nv[0], strtoll(nv[1], NULL, 10));
}

/* What fn printed to a FILE, as a string (freed by the caller). */
static char *
slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

static char *
summary_text(const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm)
{
	FILE *f = tmpfile();

	ck_assert_ptr_nonnull(f);
	bc_statsview_print_summary(f, s, farm);
	return slurp(f);
}

static char *
summary_json(const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm)
{
	FILE *f = tmpfile();

	ck_assert_ptr_nonnull(f);
	bc_statsview_print_summary_json(f, s, farm);
	return slurp(f);
}

/* A realistic mix: 980 hits (700 from the local tier), 254 misses,
 * 1010 remote compiles (4 compile errors retried locally), 300 local
 * ones (210 by rule, 90 fallbacks), 6 preprocessor errors, 2 failures
 * with DISTCC_FALLBACK=0. */
static const char *const mix[] = {
	"cache_lookups", "534",
	"cache_hits", "980",
	"cache_hits_local", "700",
	"cache_hits_other_checkout", "40",
	"cache_hits_direct", "300",
	"cache_misses", "254",
	"cache_skipped_by_reason:no-identity", "3",
	"jobs_remote_ok", "1000",
	"jobs_remote_error", "10",
	"jobs_remote_pump", "800",
	"jobs_pump", "1500",
	"jobs_local", "304",
	"local_by_reason:link", "200",
	"local_by_reason:conftest", "10",
	"local_by_reason:retry-after-error", "4",
	"fallback_by_reason:no-usable-host", "50",
	"fallback_by_reason:connect-refused", "40",
	"jobs_cpp_error", "6",
	"jobs_failed_no_fallback", "2",
	"host_failures", "45",
	"bytes_sent", "1288490189",
	"bytes_received", "3145728",
	NULL,
};

/* ------------------------------------------------------------------ */
/* the summary */

START_TEST(summary_mix)
{
	struct bc_cstats cs;
	struct bc_statsview_summary s;

	counters(&cs, mix);
	bc_statsview_summarize(&cs, &s);
	ck_assert_int_eq(s.hits, 980);
	ck_assert_int_eq(s.hits_local, 700);
	ck_assert_int_eq(s.hits_farm, 280);
	ck_assert_int_eq(s.hits_other_checkout, 40);
	ck_assert_int_eq(s.hits_direct, 300);
	ck_assert_int_eq(s.misses, 254);
	ck_assert_int_eq(s.cacheable, 1234);
	ck_assert_int_eq(s.remote, 1010);
	ck_assert_int_eq(s.remote_pump, 800);
	ck_assert_int_eq(s.remote_errors, 10);
	ck_assert_int_eq(s.retried_locally, 4);
	ck_assert_int_eq(s.local, 300);
	ck_assert_int_eq(s.local_rule, 210);
	ck_assert_int_eq(s.local_fallback, 90);
	ck_assert_int_eq(s.compiles, 1310);
	ck_assert_int_eq(s.failed_no_fallback, 2);
	ck_assert_int_eq(s.calls, 980 + 1310 + 6 + 2);
	ck_assert_int_eq(s.uncacheable, 2298 - 1234);
	ck_assert_int_eq(s.host_failures, 45);
	/* largest first; what no rule explains is no-cache-answer */
	ck_assert_uint_eq(s.uncacheable_by.n, 5);
	ck_assert_str_eq(s.uncacheable_by.v[0].name, "no-cache-answer");
	ck_assert_int_eq(s.uncacheable_by.v[0].n, 1064 - 219);
	ck_assert_str_eq(s.uncacheable_by.v[1].name, "link");
	ck_assert_int_eq(s.uncacheable_by.v[1].n, 200);
	ck_assert_str_eq(s.uncacheable_by.v[2].name, "conftest");
	ck_assert_str_eq(s.uncacheable_by.v[3].name, "preprocessor-error");
	ck_assert_int_eq(s.uncacheable_by.v[3].n, 6);
	ck_assert_str_eq(s.uncacheable_by.v[4].name, "no-identity");
	ck_assert_uint_eq(s.fallback_by.n, 2);
	ck_assert_str_eq(s.fallback_by.v[0].name, "no-usable-host");
	ck_assert_int_eq(s.fallback_by.v[0].n, 50);
	ck_assert_str_eq(s.fallback_by.v[1].name, "connect-refused");
	bc_statsview_free(&s);
	bc_cstats_free(&cs);
}
END_TEST

START_TEST(summary_empty)
{
	struct bc_cstats cs;
	struct bc_statsview_summary s;

	bc_cstats_init(&cs);
	bc_statsview_summarize(&cs, &s);
	ck_assert_int_eq(s.calls, 0);
	ck_assert_int_eq(s.cacheable, 0);
	ck_assert_int_eq(s.uncacheable, 0);
	ck_assert_uint_eq(s.uncacheable_by.n, 0);
	ck_assert_uint_eq(s.fallback_by.n, 0);
	ck_assert(bc_statsview_percent(0, 0) == 0.0);
	bc_statsview_free(&s);
}
END_TEST

/* A hand-edited or half-written file: nothing negative comes out, the
 * local tier is never more than the hits. */
START_TEST(summary_inconsistent)
{
	static const char *const odd[] = {
		"cache_hits", "3",
		"cache_hits_local", "9",
		"cache_misses", "-5",
		"jobs_local", "1",
		"local_by_reason:retry-after-error", "4",
		"fallback_by_reason:x", "-2",
		NULL,
	};
	struct bc_cstats cs;
	struct bc_statsview_summary s;

	counters(&cs, odd);
	bc_statsview_summarize(&cs, &s);
	ck_assert_int_eq(s.hits_local, 3);
	ck_assert_int_eq(s.hits_farm, 0);
	ck_assert_int_eq(s.misses, 0);
	ck_assert_int_eq(s.local, 0);
	ck_assert_int_eq(s.local_fallback, 0);
	ck_assert_uint_eq(s.fallback_by.n, 0);
	ck_assert_int_ge(s.uncacheable, 0);
	ck_assert_int_eq(s.calls, 3);
	bc_statsview_free(&s);
	bc_cstats_free(&cs);
}
END_TEST

START_TEST(summary_percent)
{
	char b[32];

	snprintf(b, sizeof(b), "%.1f", bc_statsview_percent(980, 1234));
	ck_assert_str_eq(b, "79.4");
	snprintf(b, sizeof(b), "%.1f", bc_statsview_percent(1, 3));
	ck_assert_str_eq(b, "33.3");
	snprintf(b, sizeof(b), "%.1f", bc_statsview_percent(2, 3));
	ck_assert_str_eq(b, "66.7");
	snprintf(b, sizeof(b), "%.1f", bc_statsview_percent(5, 5));
	ck_assert_str_eq(b, "100.0");
	ck_assert(bc_statsview_percent(3, 0) == 0.0);
}
END_TEST

START_TEST(summary_text_lines)
{
	struct bc_cstats cs;
	struct bc_statsview_summary s;
	struct bc_statsview_farm farm = { 3, 2, 1, 0 };
	char *t;

	counters(&cs, mix);
	bc_statsview_summarize(&cs, &s);
	t = summary_text(&s, &farm);
	ck_assert_msg(strstr(t, "Cacheable calls:            1234 /    2298 "
	    "(53.7%)\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n  Hits:                      980 /    1234 "
	    "(79.4%)\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n    local tier:              700\n") !=
	    NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n    farm:                    280  (other "
	    "checkout: 40)\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n  Misses:                    254 /    1234 "
	    "(20.6%)\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n  link:                      200\n") !=
	    NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n  Remote:                   1010 /    1310 "
	    "(77.1%)  pump mode: 800\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n    compile errors:           10  "
	    "(retried locally: 4)\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\n      no-usable-host:         50\n") !=
	    NULL, "%s", t);
	ck_assert_msg(strstr(t, "\nSent / received:         1.2 GiB / 3.0 "
	    "MiB\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\nFarm:                    3 hosts: 2 "
	    "answered, 1 unavailable\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "cache_lookups") == NULL, "raw counter: %s",
	    t);
	free(t);
	t = summary_text(&s, NULL);
	ck_assert_msg(strstr(t, "no hosts configured") != NULL, "%s", t);
	free(t);
	bc_statsview_free(&s);
	bc_cstats_free(&cs);
}
END_TEST

/* Past the top reasons the rest is one line. */
START_TEST(summary_text_many_reasons)
{
	struct bc_cstats cs;
	struct bc_statsview_summary s;
	char name[64], *t;
	int i;

	bc_cstats_init(&cs);
	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "local_by_reason:r%02d", i);
		bc_cstats_add(&cs, name, 100 - i);
		bc_cstats_add(&cs, "jobs_local", 100 - i);
	}
	bc_statsview_summarize(&cs, &s);
	ck_assert_uint_eq(s.uncacheable_by.n, 12);
	t = summary_text(&s, NULL);
	ck_assert_msg(strstr(t, "  r07:") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "  r08:") == NULL, "%s", t);
	/* r08..r11: 92 + 91 + 90 + 89 */
	ck_assert_msg(strstr(t, "  4 other reasons:           362\n") != NULL,
	    "%s", t);
	free(t);
	bc_statsview_free(&s);
	bc_cstats_free(&cs);
}
END_TEST

START_TEST(summary_json_numbers)
{
	struct bc_cstats cs;
	struct bc_statsview_summary s;
	struct bc_statsview_farm farm = { 3, 2, 1, 0 };
	char *j;

	counters(&cs, mix);
	bc_statsview_summarize(&cs, &s);
	j = summary_json(&s, &farm);
	ck_assert_msg(j[0] == '{' && j[strlen(j) - 1] == '}', "%s", j);
	ck_assert_msg(strstr(j, "\"calls\":2298,") != NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"hit_rate_percent\":79.4,") != NULL, "%s",
	    j);
	ck_assert_msg(strstr(j, "\"cacheable_percent\":53.7,") != NULL, "%s",
	    j);
	ck_assert_msg(strstr(j, "\"hits_local_tier\":700,") != NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"uncacheable_by_reason\":{\"no-cache-answer\""
	    ":845,\"link\":200,") != NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"compiles_local_fallback_by_reason\":{"
	    "\"no-usable-host\":50,\"connect-refused\":40}") != NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"farm\":{\"hosts\":3,\"answered\":2,"
	    "\"unavailable\":1,\"not_asked\":0}}") != NULL, "%s", j);
	/* no key shadows a counter's name */
	ck_assert_msg(strstr(j, "\"cache_hits\"") == NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"jobs_local\"") == NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"host_failures\"") == NULL, "%s", j);
	ck_assert_msg(strstr(j, "\"bytes_sent\"") == NULL, "%s", j);
	free(j);
	j = summary_json(&s, NULL);
	ck_assert_msg(strstr(j, "\"farm\":null}") != NULL, "%s", j);
	free(j);
	bc_statsview_free(&s);
	bc_cstats_free(&cs);
}
END_TEST

START_TEST(args_words)
{
	struct bc_statsview_opts o;
	char err[BC_ERRLEN];
	char *a[] = { "-v", "--json", NULL };
	char *b[] = { "--verbose", NULL };
	char *c[] = { "-v", "foo.c", NULL };

	ck_assert_int_eq(bc_statsview_args(0, a, &o, err), BC_OK);
	ck_assert(!o.json && !o.verbose);
	ck_assert_int_eq(bc_statsview_args(2, a, &o, err), BC_OK);
	ck_assert(o.json && o.verbose);
	ck_assert_int_eq(bc_statsview_args(1, b, &o, err), BC_OK);
	ck_assert(!o.json && o.verbose);
	ck_assert_int_eq(bc_statsview_args(2, c, &o, err), BC_ERR_INVAL);
	ck_assert_msg(strstr(err, "foo.c") != NULL, "%s", err);
}
END_TEST

/* ------------------------------------------------------------------ */
/* JSON text (common/json.h) */

static char *
esc(const char *s, size_t n)
{
	FILE *f = tmpfile();
	char *c = malloc(n + 1);

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(c);
	memcpy(c, s, n);
	c[n] = '\0';
	bc_json_fput_str(f, c);
	free(c);
	return slurp(f);
}

#define ESC_EQ(in, want) do { \
	char *got_ = esc(in, sizeof(in) - 1); \
	ck_assert_msg(strcmp(got_, want) == 0, "%s -> %s, not %s", #in, \
	    got_, want); \
	free(got_); \
} while (0)

START_TEST(json_escape_ascii)
{
	ESC_EQ("plain", "\"plain\"");
	ESC_EQ("", "\"\"");
	ESC_EQ("a\"b\\c", "\"a\\\"b\\\\c\"");
	ESC_EQ("\n\r\t", "\"\\n\\r\\t\"");
	ESC_EQ("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	ESC_EQ("\x1b[31m", "\"\\u001b[31m\"");
}
END_TEST

START_TEST(json_escape_utf8)
{
	/* valid UTF-8 passes through, 2, 3 and 4 bytes, U+10FFFF */
	ESC_EQ("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	ESC_EQ("\xe2\x82\xac", "\"\xe2\x82\xac\"");
	ESC_EQ("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	ESC_EQ("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
	ESC_EQ("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");
	/* every byte of an invalid sequence is one U+FFFD */
	ESC_EQ("\xff", "\"\\ufffd\"");
	ESC_EQ("a\x80z", "\"a\\ufffdz\"");
	ESC_EQ("caf\xe9", "\"caf\\ufffd\"");		/* Latin-1 */
	ESC_EQ("\xc3", "\"\\ufffd\"");			/* truncated */
	ESC_EQ("\xe2\x82", "\"\\ufffd\\ufffd\"");
	ESC_EQ("\xc0\xaf", "\"\\ufffd\\ufffd\"");		/* overlong */
	ESC_EQ("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	ESC_EQ("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ESC_EQ("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* surrogate */
	ESC_EQ("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ESC_EQ("\xf5\x80", "\"\\ufffd\\ufffd\"");
	/* a bad byte does not swallow the valid character after it */
	ESC_EQ("\xc3\xc3\xa9", "\"\\ufffd\xc3\xa9\"");
	ESC_EQ("\xe2\x82\"", "\"\\ufffd\\ufffd\\\"\"");
}
END_TEST

struct sink_buf {
	char s[256];
	size_t n;
};

static void
sink(void *ctx, const char *p, size_t n)
{
	struct sink_buf *b = ctx;

	ck_assert_uint_lt(b->n + n, sizeof(b->s));
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = '\0';
}

START_TEST(json_escape_nul_and_buf)
{
	struct sink_buf sb = { "", 0 };
	struct bc_buf b = BC_BUF_INIT(8);

	bc_json_escape("a\0b", 3, sink, &sb);
	ck_assert_str_eq(sb.s, "\"a\\u0000b\"");
	/* into a bc_buf, and BC_ERR_LIMIT when it is full */
	ck_assert_int_eq(bc_json_put_str(&b, "x\"y"), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 6);
	ck_assert(memcmp(bc_buf_data(&b), "\"x\\\"y\"", 6) == 0);
	ck_assert_int_eq(bc_json_put_str(&b, "long"), BC_ERR_LIMIT);
	bc_buf_free(&b);
}
END_TEST

START_TEST(json_number_grammar)
{
	static const char *const yes[] = { "0", "-0", "7", "12", "1.5",
	    "0.25", "1e3", "1E+3", "-1.25e-7", "123456789012345678901", NULL };
	static const char *const no[] = { "", "-", "01", "+1", "1.", ".5",
	    "1e", "1e+", "nan", "NaN", "inf", "+Inf", " 1", "1 ", "0x10",
	    "1,5", "12 34", "1..2", "--1", "true", NULL };
	size_t i;

	for (i = 0; yes[i] != NULL; i++)
		ck_assert_msg(bc_json_is_number(yes[i]), "%s", yes[i]);
	for (i = 0; no[i] != NULL; i++)
		ck_assert_msg(!bc_json_is_number(no[i]), "%s", no[i]);
}
END_TEST

/* A host's text page: headers skipped, the block's lines only, a CR
 * dropped, lines without a key skipped, the page cut at a NUL; and the
 * cache lines of /metrics. */
START_TEST(statspage_text_and_metrics)
{
	static const char page[] = "HTTP/1.0 200 OK\r\nX: y z\r\n\r\n"
	    "argv /d\n<distccstats>\ndcc_tcp_accept 5\r\n dcc_lead 1\n"
	    "nospace\n\ndcc_max_RSS_name (cc1 plus)\ndcc_x 7abc\n"
	    "</distccstats>\nafter 1\n";
	static const char metrics[] = "HTTP/1.0 200 OK\n\n# HELP "
	    "boltccd_cache_hits_total Hits.\nboltccd_cache_hits_total 4\r\n"
	    "boltccd_cache_uncacheable_total{reason=\"a b\"} 2\n"
	    "boltccd_cache_uncacheable_total{reason=\"open 3\n"
	    "boltccd_cache_entries\nboltccd_jobs 2\nxboltccd_cache_y 1\n"
	    "boltccd_cache_ 5\n"
	    "boltccd_cache_max_bytes 1e3";
	static const char reason_only[] =
	    "boltccd_cache_uncacheable_total{reason=\"r\"} 1\n";
	struct bc_strv k = BC_STRV_INIT, v = BC_STRV_INIT;
	double d = -1;

	bc_statspage_parse(page, sizeof(page) - 1, &k, &v);
	ck_assert_uint_eq(k.n, 3);
	ck_assert_uint_eq(v.n, 3);
	ck_assert_str_eq(k.v[0], "dcc_tcp_accept");
	ck_assert_str_eq(v.v[0], "5");
	ck_assert_str_eq(k.v[1], "dcc_max_RSS_name");
	ck_assert_str_eq(v.v[1], "(cc1 plus)");
	ck_assert(bc_statspage_num(&k, &v, "dcc_x", &d) == 1 && d == 7);
	ck_assert(bc_statspage_num(&k, &v, "dcc_max_RSS_name", &d) == 0 &&
	    d == 7);
	ck_assert(bc_statspage_num(&k, &v, "after", &d) == 0);
	bc_strv_free(&k);
	bc_strv_free(&v);
	/* no headers, no tags; a NUL ends the page */
	bc_statspage_parse("a 1\nb 2\0c 3\n", 12, &k, &v);
	ck_assert_uint_eq(k.n, 2);
	ck_assert_str_eq(v.v[1], "2");
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_statspage_parse(NULL, 0, &k, &v);
	ck_assert_uint_eq(k.n, 0);

	ck_assert_int_eq(bc_statspage_cache_metrics(metrics,
	    sizeof(metrics) - 1, &k, &v), 1);
	ck_assert_uint_eq(k.n, 3);
	ck_assert_str_eq(k.v[0], "hits");
	ck_assert_str_eq(v.v[0], "4");
	ck_assert_str_eq(k.v[1], "uncacheable:a b");
	ck_assert_str_eq(v.v[1], "2");
	ck_assert_str_eq(k.v[2], "max_bytes");
	ck_assert(bc_statspage_num(&k, &v, "max_bytes", &d) == 1 &&
	    d == 1000);
	bc_strv_free(&k);
	bc_strv_free(&v);
	ck_assert_int_eq(bc_statspage_cache_metrics(reason_only,
	    strlen(reason_only), &k, &v), 0);
	ck_assert_uint_eq(k.n, 1);
	bc_strv_free(&k);
	bc_strv_free(&v);
}
END_TEST

START_TEST(json_values_from_pages)
{
	static const char *const in[] = { "12", "0.75", "NaN", "0.1 0.2 0.3",
	    "caf\xe9\x01" };
	struct bc_buf b = BC_BUF_INIT(4096);
	struct bc_jsonw w;
	size_t i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		if (i > 0)
			ck_assert_int_eq(bc_buf_put_u8(&b, ' '), BC_OK);
		bc_jsonw_init(&w, &b);
		bc_statsview_json_value(&w, in[i]);
		ck_assert_int_eq(bc_jsonw_end(&w), BC_OK);
	}
	ck_assert_int_eq(bc_buf_put_u8(&b, 0), BC_OK);
	ck_assert_str_eq((const char *)bc_buf_data(&b), "12 0.75 \"NaN\" "
	    "\"0.1 0.2 0.3\" \"caf\\ufffd\\u0001\"");
	bc_buf_free(&b);
}
END_TEST

static Suite *
statsview_suite(void)
{
	Suite *s = suite_create("statsview");
	TCase *tc;

	tc = bc_tcase("summary", BC_TEST_TIMEOUT);
	tcase_add_test(tc, summary_mix);
	tcase_add_test(tc, statspage_text_and_metrics);
	tcase_add_test(tc, summary_empty);
	tcase_add_test(tc, summary_inconsistent);
	tcase_add_test(tc, summary_percent);
	tcase_add_test(tc, summary_text_lines);
	tcase_add_test(tc, summary_text_many_reasons);
	tcase_add_test(tc, summary_json_numbers);
	tcase_add_test(tc, args_words);
	suite_add_tcase(s, tc);

	tc = bc_tcase("json", BC_TEST_TIMEOUT);
	tcase_add_test(tc, json_escape_ascii);
	tcase_add_test(tc, json_escape_utf8);
	tcase_add_test(tc, json_escape_nul_and_buf);
	tcase_add_test(tc, json_number_grammar);
	tcase_add_test(tc, json_values_from_pages);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(statsview_suite());
}
