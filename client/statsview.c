/*
 * statsview.c - `boltcc --stats`: the summary of the client's counters,
 * the farm's artifact cache table, the raw counters with -v, and JSON
 * (see statsview.h; the figures are defined in boltcc(1)).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hosts.h"
#include "common/io.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/util.h"
#include "client/statspage.h"
#include "client/statsview.h"
#include "common/limits.h"

#define STATSVIEW_TIMEOUT_MS 2000
/* the text's label column, and how many reasons a list shows */
#define STATSVIEW_LABEL 24
#define STATSVIEW_TOP 8

/* ------------------------------------------------------------------ */
/* arguments */

int
bc_statsview_args(int argc, char **argv, struct bc_statsview_opts *o,
    char *err)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if (strcmp(argv[i], "-v") == 0 ||
		    strcmp(argv[i], "--verbose") == 0)
			o->verbose = 1;
		else
			return bc_seterr(err, BC_ERR_INVAL, "unexpected %s",
			    argv[i]);
	}
	return BC_OK;
}

/* ------------------------------------------------------------------ */
/* the summary: a pure function of the counters */

double
bc_statsview_percent(long long part, long long whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

static long long
nonneg(long long v)
{
	return v > 0 ? v : 0;
}

static void
reasons_add(struct bc_statsview_reasons *r, const char *name, long long n)
{
	size_t i;

	if (n <= 0)
		return;
	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0) {
			r->v[i].n += n;
			return;
		}
	r->v = xrealloc(r->v, r->n + 1, sizeof(*r->v));
	r->v[r->n].name = xstrdup(name);
	r->v[r->n].n = n;
	r->n++;
}

static int
reason_cmp(const void *a, const void *b)
{
	const struct bc_statsview_reason *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void
reasons_sort(struct bc_statsview_reasons *r)
{
	if (r->n > 1)
		qsort(r->v, r->n, sizeof(*r->v), reason_cmp);
}

static void
reasons_free(struct bc_statsview_reasons *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static long long
reasons_sum(const struct bc_statsview_reasons *r)
{
	long long t = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		t += r->v[i].n;
	return t;
}

/* Every "prefix:reason" counter of cs into r (but `except`); their sum. */
static long long
collect(const struct bc_cstats *cs, const char *prefix, const char *except,
    struct bc_statsview_reasons *r)
{
	size_t i, pl = strlen(prefix);
	long long t = 0;

	for (i = 0; i < cs->n; i++) {
		const char *name = cs->v[i].name;

		if (strncmp(name, prefix, pl) != 0 || name[pl] != ':' ||
		    (except != NULL && strcmp(name + pl + 1, except) == 0))
			continue;
		t += nonneg(cs->v[i].value);
		if (r != NULL)
			reasons_add(r, name + pl + 1, cs->v[i].value);
	}
	return t;
}

static long long
get(const struct bc_cstats *cs, const char *name)
{
	return nonneg(bc_cstats_get(cs, name));
}

static void
summarize_cache(const struct bc_cstats *cs, struct bc_statsview_summary *s)
{
	s->hits = get(cs, "cache_hits");
	s->hits_local = get(cs, "cache_hits_local");
	if (s->hits_local > s->hits)	/* counted in cache_hits too */
		s->hits_local = s->hits;
	s->hits_farm = s->hits - s->hits_local;
	s->hits_other_checkout = get(cs, "cache_hits_other_checkout");
	s->hits_direct = get(cs, "cache_hits_direct");
	s->misses = get(cs, "cache_misses");
	s->cacheable = s->hits + s->misses;
}

static void
summarize_jobs(const struct bc_cstats *cs, struct bc_statsview_summary *s)
{
	long long ok = get(cs, "jobs_remote_ok");

	s->remote_errors = get(cs, "jobs_remote_error");
	s->remote = ok + s->remote_errors;
	s->remote_pump = get(cs, "jobs_remote_pump");
	s->retried_locally = bc_cstats_get(cs,
	    "local_by_reason:retry-after-error");
	s->retried_locally = nonneg(s->retried_locally);
	s->local_rule = collect(cs, "local_by_reason", "retry-after-error",
	    NULL);
	s->local_fallback = collect(cs, "fallback_by_reason", NULL,
	    &s->fallback_by);
	reasons_sort(&s->fallback_by);
	s->local = nonneg(get(cs, "jobs_local") - s->retried_locally);
	s->compiles = s->remote + s->local;
	s->failed_no_fallback = get(cs, "jobs_failed_no_fallback");
	s->host_failures = get(cs, "host_failures");
	s->bytes_sent = get(cs, "bytes_sent");
	s->bytes_received = get(cs, "bytes_received");
}

/* Why calls asked no cache: the local rules, the skipped lookups, the
 * preprocessor's errors, the rest as "no-cache-answer". */
static void
summarize_uncacheable(const struct bc_cstats *cs,
    struct bc_statsview_summary *s)
{
	long long listed;

	s->uncacheable = nonneg(s->calls - s->cacheable);
	(void)collect(cs, "local_by_reason", "retry-after-error",
	    &s->uncacheable_by);
	(void)collect(cs, "cache_skipped_by_reason", NULL, &s->uncacheable_by);
	reasons_add(&s->uncacheable_by, "preprocessor-error",
	    get(cs, "jobs_cpp_error"));
	listed = reasons_sum(&s->uncacheable_by);
	if (s->uncacheable > listed)
		reasons_add(&s->uncacheable_by, "no-cache-answer",
		    s->uncacheable - listed);
	reasons_sort(&s->uncacheable_by);
}

void
bc_statsview_summarize(const struct bc_cstats *cs,
    struct bc_statsview_summary *s)
{
	memset(s, 0, sizeof(*s));
	summarize_cache(cs, s);
	summarize_jobs(cs, s);
	s->calls = s->hits + s->compiles + get(cs, "jobs_cpp_error") +
	    s->failed_no_fallback;
	summarize_uncacheable(cs, s);
}

void
bc_statsview_free(struct bc_statsview_summary *s)
{
	reasons_free(&s->uncacheable_by);
	reasons_free(&s->fallback_by);
}

/* ------------------------------------------------------------------ */
/* numbers for people */

/* ------------------------------------------------------------------ */
/* the summary as text */

/* "label:" at indent, padded to the label column. */
static void
put_label(FILE *out, int indent, const char *label)
{
	int w = STATSVIEW_LABEL - indent - 1;

	fprintf(out, "%*s%s:%*s", indent, "", label,
	    (int)strlen(label) < w ? w - (int)strlen(label) : 0, "");
}

/* A count, and with whole >= 0 its share: "n / whole (p%)". */
static void
put_row(FILE *out, int indent, const char *label, long long n,
    long long whole)
{
	char pct[16];

	put_label(out, indent, label);
	fprintf(out, " %7lld", n);
	if (whole >= 0) {
		bc_human_percent((double)n, (double)whole, pct, sizeof(pct));
		fprintf(out, " / %7lld (%s)", whole, pct);
	}
}

static void
put_reasons(FILE *out, int indent, const struct bc_statsview_reasons *r)
{
	long long rest = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (i >= STATSVIEW_TOP) {
			rest += r->v[i].n;
			continue;
		}
		put_row(out, indent, r->v[i].name, r->v[i].n, -1);
		fputc('\n', out);
	}
	if (rest > 0) {
		char label[48];

		snprintf(label, sizeof(label), "%zu other reasons",
		    r->n - STATSVIEW_TOP);
		put_row(out, indent, label, rest, -1);
		fputc('\n', out);
	}
}

static void
print_cache_part(FILE *out, const struct bc_statsview_summary *s)
{
	put_row(out, 0, "Cacheable calls", s->cacheable, s->calls);
	fputc('\n', out);
	put_row(out, 2, "Hits", s->hits, s->cacheable);
	fputc('\n', out);
	put_row(out, 4, "local tier", s->hits_local, -1);
	fputc('\n', out);
	put_row(out, 4, "farm", s->hits_farm, -1);
	fprintf(out, "  (other checkout: %lld)\n", s->hits_other_checkout);
	put_row(out, 4, "direct mode", s->hits_direct, -1);
	fputc('\n', out);
	put_row(out, 2, "Misses", s->misses, s->cacheable);
	fputc('\n', out);
	put_row(out, 0, "Uncacheable calls", s->uncacheable, s->calls);
	fputc('\n', out);
	put_reasons(out, 2, &s->uncacheable_by);
}

static void
print_jobs_part(FILE *out, const struct bc_statsview_summary *s)
{
	put_row(out, 0, "Compiles", s->compiles, -1);
	fputc('\n', out);
	put_row(out, 2, "Remote", s->remote, s->compiles);
	fprintf(out, "  pump mode: %lld\n", s->remote_pump);
	if (s->remote_errors > 0) {
		put_row(out, 4, "compile errors", s->remote_errors, -1);
		fprintf(out, "  (retried locally: %lld)\n",
		    s->retried_locally);
	}
	put_row(out, 2, "Local", s->local, s->compiles);
	fputc('\n', out);
	put_row(out, 4, "by rule", s->local_rule, -1);
	fputc('\n', out);
	put_row(out, 4, "fallback", s->local_fallback, -1);
	fputc('\n', out);
	put_reasons(out, 6, &s->fallback_by);
	if (s->failed_no_fallback > 0) {
		put_row(out, 0, "Failed, no fallback", s->failed_no_fallback,
		    -1);
		fputc('\n', out);
	}
}

void
bc_statsview_print_summary(FILE *out, const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm)
{
	char sent[32], recv[32];

	print_cache_part(out, s);
	print_jobs_part(out, s);
	put_row(out, 0, "Failed host attempts", s->host_failures, -1);
	fputc('\n', out);
	bc_human_bytes((double)s->bytes_sent, sent, sizeof(sent));
	bc_human_bytes((double)s->bytes_received, recv, sizeof(recv));
	put_label(out, 0, "Sent / received");
	fprintf(out, " %s / %s\n", sent, recv);
	put_label(out, 0, "Farm");
	if (farm == NULL)
		fprintf(out, " no hosts configured\n");
	else {
		fprintf(out, " %lld host%s: %lld answered, %lld unavailable",
		    farm->hosts, farm->hosts == 1 ? "" : "s", farm->answered,
		    farm->unavailable);
		if (farm->not_asked > 0)
			fprintf(out, ", %lld not asked (ssh, localhost)",
			    farm->not_asked);
		fputc('\n', out);
	}
}

/* ------------------------------------------------------------------ */
/* the summary as JSON */

static void
json_count(struct bc_jsonw *w, const char *key, long long n)
{
	bc_jsonw_key(w, key);
	bc_jsonw_int(w, n);
}

static void
json_percent(struct bc_jsonw *w, const char *key, long long part,
    long long whole)
{
	bc_jsonw_key(w, key);
	bc_jsonw_fixed(w, bc_statsview_percent(part, whole), 1);
}

static void
json_reasons(struct bc_jsonw *w, const char *key,
    const struct bc_statsview_reasons *r)
{
	size_t i;

	bc_jsonw_key(w, key);
	bc_jsonw_obj(w);
	for (i = 0; i < r->n; i++)
		json_count(w, r->v[i].name, r->v[i].n);
	bc_jsonw_obj_end(w);
}

/* The names differ from the counters' (a script looking a counter up by
 * name anywhere in the document finds the counter). */
void
bc_statsview_summary_json(struct bc_jsonw *w,
    const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm)
{
	bc_jsonw_obj(w);
	json_count(w, "calls", s->calls);
	json_count(w, "cacheable_calls", s->cacheable);
	json_percent(w, "cacheable_percent", s->cacheable, s->calls);
	json_count(w, "hits", s->hits);
	json_percent(w, "hit_rate_percent", s->hits, s->cacheable);
	json_count(w, "hits_local_tier", s->hits_local);
	json_count(w, "hits_farm", s->hits_farm);
	json_count(w, "hits_farm_other_checkout", s->hits_other_checkout);
	json_count(w, "hits_direct_mode", s->hits_direct);
	json_count(w, "misses", s->misses);
	json_percent(w, "miss_rate_percent", s->misses, s->cacheable);
	json_count(w, "uncacheable_calls", s->uncacheable);
	json_percent(w, "uncacheable_percent", s->uncacheable, s->calls);
	json_reasons(w, "uncacheable_by_reason", &s->uncacheable_by);
	json_count(w, "compiles", s->compiles);
	json_count(w, "compiles_remote", s->remote);
	json_percent(w, "compiles_remote_percent", s->remote, s->compiles);
	json_count(w, "compiles_remote_pump", s->remote_pump);
	json_count(w, "compiles_remote_errors", s->remote_errors);
	json_count(w, "compiles_retried_locally", s->retried_locally);
	json_count(w, "compiles_local", s->local);
	json_percent(w, "compiles_local_percent", s->local, s->compiles);
	json_count(w, "compiles_local_by_rule", s->local_rule);
	json_count(w, "compiles_local_fallback", s->local_fallback);
	json_reasons(w, "compiles_local_fallback_by_reason", &s->fallback_by);
	json_count(w, "failed_no_fallback", s->failed_no_fallback);
	json_count(w, "failed_host_attempts", s->host_failures);
	json_count(w, "sent_bytes", s->bytes_sent);
	json_count(w, "received_bytes", s->bytes_received);
	bc_jsonw_key(w, "farm");
	if (farm == NULL)
		bc_jsonw_null(w);
	else {
		bc_jsonw_obj(w);
		json_count(w, "hosts", farm->hosts);
		json_count(w, "answered", farm->answered);
		json_count(w, "unavailable", farm->unavailable);
		json_count(w, "not_asked", farm->not_asked);
		bc_jsonw_obj_end(w);
	}
	bc_jsonw_obj_end(w);
}

/* A document written with bc_jsonw to out, with a newline when nl: BC_OK,
 * or the writer's error (nothing written then). */
static int
json_flush(FILE *out, const struct bc_jsonw *w, int nl)
{
	int r = bc_jsonw_end(w);

	if (r != BC_OK)
		return r;
	(void)fwrite(bc_buf_data(w->out), 1, bc_buf_len(w->out), out);
	if (nl)
		fputc('\n', out);
	return BC_OK;
}

void
bc_statsview_print_summary_json(FILE *out,
    const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_jsonw w;

	bc_jsonw_init(&w, &b);
	bc_statsview_summary_json(&w, s, farm);
	(void)json_flush(out, &w, 0);
	bc_buf_free(&b);
}

void
bc_statsview_json_value(struct bc_jsonw *w, const char *v)
{
	if (bc_json_is_number(v))
		bc_jsonw_number(w, v);
	else
		bc_jsonw_str(w, v);
}

/* ------------------------------------------------------------------ */
/* the hosts' stats pages */

struct host_stats {
	int asked;		/* a TCP host: its stats port was asked */
	int ok;			/* stats page fetched */
	int cache;		/* boltccd cache counters present */
	int port;
	char err[BC_ERRLEN];
	struct bc_strv keys, vals;	/* distcc text page */
	struct bc_strv ckeys, cvals;	/* cache counters */
};

static void
host_fetch(const struct bc_cconf *cfg, const struct bc_host *h,
    struct host_stats *hs)
{
	struct bc_buf page;

	memset(hs, 0, sizeof(*hs));
	if (h->kind != BC_HOST_TCP)
		return;
	hs->asked = 1;
	hs->port = bc_cconf_stats_port(cfg, h);
	bc_buf_init(&page, BC_MAX_STATSVIEW_PAGE);
	if (bc_io_http_get(h->name, hs->port, "/", STATSVIEW_TIMEOUT_MS, &page,
	    hs->err) == BC_OK) {
		hs->ok = 1;
		bc_statspage_parse(bc_buf_data(&page), bc_buf_len(&page),
		    &hs->keys, &hs->vals);
	}
	bc_buf_free(&page);
	if (!hs->ok)
		return;
	bc_buf_init(&page, BC_MAX_STATSVIEW_PAGE);
	if (bc_io_http_get(h->name, hs->port, "/metrics", STATSVIEW_TIMEOUT_MS,
	    &page, NULL) == BC_OK)
		hs->cache = bc_statspage_cache_metrics(bc_buf_data(&page),
		    bc_buf_len(&page), &hs->ckeys, &hs->cvals);
	bc_buf_free(&page);
}

static void
host_free(struct host_stats *hs)
{
	bc_strv_free(&hs->keys);
	bc_strv_free(&hs->vals);
	bc_strv_free(&hs->ckeys);
	bc_strv_free(&hs->cvals);
}

static double
kv_num(const struct bc_strv *keys, const struct bc_strv *vals,
    const char *name)
{
	double v = 0;

	(void)bc_statspage_num(keys, vals, name, &v);
	return v;
}

static void
farm_count(const struct bc_hostlist *hl, const struct host_stats *hs,
    struct bc_statsview_farm *farm)
{
	size_t i;

	memset(farm, 0, sizeof(*farm));
	for (i = 0; i < hl->n; i++) {
		farm->hosts++;
		if (!hs[i].asked)
			farm->not_asked++;
		else if (hs[i].ok)
			farm->answered++;
		else
			farm->unavailable++;
	}
}

/* ------------------------------------------------------------------ */
/* the page */

/* The table's columns, from a host's cache counters. */
enum { C_REQ, C_HITS, C_MISSES, C_ENTRIES, C_BYTES, C_EVICT, C_CORRUPT,
	C_SAVED, C_N };

static void
print_cache_row(const char *label, const double v[C_N])
{
	char b[32], t[32], rate[16];

	bc_human_bytes(v[C_BYTES], b, sizeof(b));
	bc_human_secs(v[C_SAVED], t, sizeof(t));
	bc_human_percent(v[C_HITS], v[C_HITS] + v[C_MISSES], rate, sizeof(rate));
	printf("  %-26s %9.0f %8.0f %8.0f %8s %8.0f %11s %8.0f %8.0f %10s\n",
	    label, v[C_REQ], v[C_HITS], v[C_MISSES], rate, v[C_ENTRIES], b,
	    v[C_EVICT], v[C_CORRUPT], t);
}

static void
print_cache_table(const struct bc_hostlist *hl, const struct host_stats *hs)
{
	static const char *const col[C_N] = { "requests", "hits", "misses",
	    "entries", "stored_bytes", "evictions", "corrupt",
	    "time_saved_seconds" };
	double tot[C_N] = { 0 }, v[C_N];
	size_t i, k;

	printf("\nartifact cache on the farm\n"
	    "  %-26s %9s %8s %8s %8s %8s %11s %8s %8s %10s\n", "host",
	    "requests", "hits", "misses", "hit rate", "entries", "stored",
	    "evicted", "corrupt", "time saved");
	for (i = 0; i < hl->n; i++) {
		if (!hs[i].asked)
			continue;
		if (!hs[i].ok || !hs[i].cache) {
			printf("  %-26s %s\n", hl->v[i].spec, !hs[i].ok ?
			    "unavailable" : "no cache (distccd or --no-cache)");
			continue;
		}
		for (k = 0; k < C_N; k++) {
			v[k] = kv_num(&hs[i].ckeys, &hs[i].cvals, col[k]);
			tot[k] += v[k];
		}
		print_cache_row(hl->v[i].spec, v);
	}
	print_cache_row("total", tot);
}

static void
print_raw(const struct bc_cconf *cfg, const struct bc_cstats *cs,
    const struct bc_hostlist *hl, const struct host_stats *hs)
{
	size_t i, k;

	printf("\nclient counters (%s/stats)\n", cfg->dir);
	if (cs->n == 0)
		printf("  (none yet)\n");
	for (i = 0; i < cs->n; i++)
		printf("  %-40s %lld\n", cs->v[i].name, cs->v[i].value);
	for (i = 0; hl != NULL && i < hl->n; i++) {
		if (!hs[i].asked)
			continue;
		printf("\nhost %s (stats port %d)\n", hl->v[i].spec,
		    hs[i].port);
		if (!hs[i].ok)
			printf("  unavailable: %s\n", hs[i].err);
		for (k = 0; k < hs[i].keys.n; k++)
			printf("  %-40s %s\n", hs[i].keys.v[k],
			    hs[i].vals.v[k]);
		for (k = 0; k < hs[i].ckeys.n; k++)
			printf("  cache_%-34s %s\n", hs[i].ckeys.v[k],
			    hs[i].cvals.v[k]);
	}
}

static void
json_kv(struct bc_jsonw *w, const struct bc_strv *keys,
    const struct bc_strv *vals)
{
	size_t k;

	bc_jsonw_obj(w);
	for (k = 0; k < keys->n; k++) {
		bc_jsonw_key(w, keys->v[k]);
		bc_statsview_json_value(w, vals->v[k]);
	}
	bc_jsonw_obj_end(w);
}

static void
json_host(struct bc_jsonw *w, const struct bc_host *h,
    const struct host_stats *hs)
{
	bc_jsonw_obj(w);
	bc_jsonw_key(w, "host");
	bc_jsonw_str(w, h->spec);
	bc_jsonw_key(w, "stats_port");
	bc_jsonw_int(w, hs->port);
	bc_jsonw_key(w, "ok");
	bc_jsonw_bool(w, hs->ok);
	if (!hs->ok) {
		bc_jsonw_key(w, "error");
		bc_jsonw_str(w, hs->err);
	} else {
		bc_jsonw_key(w, "stats");
		json_kv(w, &hs->keys, &hs->vals);
		bc_jsonw_key(w, "cache");
		if (hs->cache)
			json_kv(w, &hs->ckeys, &hs->cvals);
		else
			bc_jsonw_null(w);
	}
	bc_jsonw_obj_end(w);
}

/* {"client":{"dir","counters"},"hosts":[...],"summary":{...}}: the first
 * two as before the summary existed.  BC_OK, or BC_ERR_LIMIT when the
 * document would not fit in memory's ceiling (nothing printed). */
static int
print_json(const struct bc_cconf *cfg, const struct bc_cstats *cs,
    const struct bc_hostlist *hl, const struct host_stats *hs,
    const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_jsonw w;
	size_t i;
	int r;

	bc_jsonw_init(&w, &b);
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "client");
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "dir");
	bc_jsonw_str(&w, cfg->dir);
	bc_jsonw_key(&w, "counters");
	bc_jsonw_obj(&w);
	for (i = 0; i < cs->n; i++)
		json_count(&w, cs->v[i].name, cs->v[i].value);
	bc_jsonw_obj_end(&w);
	bc_jsonw_obj_end(&w);
	bc_jsonw_key(&w, "hosts");
	bc_jsonw_arr(&w);
	for (i = 0; hl != NULL && i < hl->n; i++)
		if (hs[i].asked)
			json_host(&w, &hl->v[i], &hs[i]);
	bc_jsonw_arr_end(&w);
	bc_jsonw_key(&w, "summary");
	bc_statsview_summary_json(&w, s, farm);
	bc_jsonw_obj_end(&w);
	r = json_flush(stdout, &w, 1);
	bc_buf_free(&b);
	return r;
}

int
bc_statsview_show(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    const struct bc_statsview_opts *o, char *err)
{
	struct bc_cstats cs;
	struct bc_statsview_summary s;
	struct bc_statsview_farm farm;
	struct host_stats *hs = NULL;
	char lerr[BC_ERRLEN];
	size_t i, nh = hl != NULL ? hl->n : 0;
	int r = BC_OK;

	if (!cfg->dir_ok)
		return bc_seterr(err, BC_ERR_INVAL, "%s", cfg->error != NULL ?
		    cfg->error : "no state directory");
	bc_cstats_init(&cs);
	if (bc_cstats_load(cfg->dir, &cs, lerr) != BC_OK)
		fprintf(stderr, "boltcc: warning: %s\n", lerr);
	hs = xcalloc(nh > 0 ? nh : 1, sizeof(*hs));
	for (i = 0; i < nh; i++)
		host_fetch(cfg, &hl->v[i], &hs[i]);
	if (hl != NULL)
		farm_count(hl, hs, &farm);
	bc_statsview_summarize(&cs, &s);
	if (o->json)
		r = print_json(cfg, &cs, hl, hs, &s, hl != NULL ? &farm :
		    NULL);
	else {
		bc_statsview_print_summary(stdout, &s, hl != NULL ? &farm :
		    NULL);
		if (hl != NULL && farm.answered + farm.unavailable > 0)
			print_cache_table(hl, hs);
		if (o->verbose)
			print_raw(cfg, &cs, hl, hs);
	}
	fflush(stdout);
	bc_statsview_free(&s);
	for (i = 0; i < nh; i++)
		host_free(&hs[i]);
	free(hs);
	bc_cstats_free(&cs);
	if (r != BC_OK)
		return bc_seterr(err, r, "the JSON document: %s",
		    bc_strerror(r));
	return BC_OK;
}
