/*
 * stats.c - counters and the stats page (see stats.h).
 *
 * The text page reproduces distccd 3.4's field names, order and LF line
 * endings (spec/vectors/stats-page.txt) so existing scrapers keep working;
 * JSON and Prometheus forms carry the same counters plus boltccd's own.
 * The counters are one list, BC_STATS_COUNTERS (stats.h), which `rows`
 * turns into a table every page walks; /stats.json is written with
 * bc_jsonw.  tests/data/stats/ pins the three pages byte for byte.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/http.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "common/osdep.h"
#include "ident.h"
#include "stats.h"

_Static_assert(sizeof(struct bc_job_event) <= BC_JOB_EVENT_MAX,
    "a worker's event must be written atomically on every system");

void
bc_stats_init(struct bc_stats *st, int jobs, int queue, int64_t now_ms)
{
	memset(st, 0, sizeof(*st));
	st->max_kids = jobs;
	st->queue = queue;
	st->start_ms = now_ms;
	st->last_tick_ms = now_ms;
	st->ring_sec = now_ms / 1000;
}

void
bc_stats_free(struct bc_stats *st)
{
	free(st->job);
	st->job = NULL;
	st->njob = st->capjob = 0;
}

static void
copy_field(char *dst, size_t dstlen, const char *src)
{
	size_t n = strnlen(src, dstlen - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

const char *
bc_stats_mode_name(int mode)
{
	switch (mode) {
	case BC_MODE_PLAIN: return "plain";
	case BC_MODE_PUMP: return "pump";
	case BC_MODE_BOLT: return "bolt";
	case BC_MODE_BOLT_PUMP: return "bolt-pump";
	case BC_MODE_LOOKUP: return "lookup";
	default: return "-";
	}
}

const char *
bc_stats_state_name(int state)
{
	switch (state) {
	case BC_JOB_QUEUED: return "queued";
	case BC_JOB_COMPILING: return "compiling";
	case BC_JOB_SENDING: return "sending";
	default: return "reading";
	}
}

static struct bc_stats_job *
job_find(struct bc_stats *st, int32_t pid)
{
	size_t i;

	for (i = 0; i < st->njob; i++)
		if (st->job[i].pid == pid)
			return &st->job[i];
	return NULL;
}

void
bc_stats_job_begin(struct bc_stats *st, int32_t pid, const char *peer,
    int64_t now_ms)
{
	struct bc_stats_job *j;

	if (job_find(st, pid) != NULL)
		return;
	if (st->njob == st->capjob) {
		st->capjob = st->capjob == 0 ? 16 : st->capjob * 2;
		st->job = xrealloc(st->job, st->capjob, sizeof(*st->job));
	}
	j = &st->job[st->njob++];
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->state = BC_JOB_READING;
	j->start_ms = now_ms;
	copy_field(j->peer, sizeof(j->peer), peer != NULL ? peer : "");
}

void
bc_stats_job_end(struct bc_stats *st, int32_t pid)
{
	struct bc_stats_job *j = job_find(st, pid);

	if (j != NULL)
		*j = st->job[--st->njob];
}

/* A worker's state change, on its row. */
static void
job_event(struct bc_stats *st, const struct bc_job_event *ev, int64_t now_ms)
{
	struct bc_stats_job *j = job_find(st, ev->pid);

	if (j == NULL)
		return;
	switch (ev->kind) {
	case BC_EV_JOB:
		j->state = BC_JOB_QUEUED;
		j->mode = ev->mode;
		copy_field(j->compiler, sizeof(j->compiler), ev->compiler);
		copy_field(j->file, sizeof(j->file), ev->file);
		break;
	case BC_EV_SLOT_START:
		j->state = BC_JOB_COMPILING;
		j->slot_ms = now_ms;
		break;
	case BC_EV_SLOT_END:
		j->state = BC_JOB_SENDING;
		break;
	case BC_EV_DONE:
		bc_stats_job_end(st, ev->pid);
		break;
	default:
		break;
	}
}

/* Advance the ring to the second `sec`, zeroing seconds skipped. */
static void
ring_advance(struct bc_stats *st, int64_t sec)
{
	int64_t s;

	if (sec <= st->ring_sec)
		return;
	if (sec - st->ring_sec >= BC_STATS_WINDOW) {
		memset(st->done_ring, 0, sizeof(st->done_ring));
		memset(st->hit_ring, 0, sizeof(st->hit_ring));
		memset(st->miss_ring, 0, sizeof(st->miss_ring));
	} else
		for (s = st->ring_sec + 1; s <= sec; s++) {
			st->done_ring[s % BC_STATS_WINDOW] = 0;
			st->hit_ring[s % BC_STATS_WINDOW] = 0;
			st->miss_ring[s % BC_STATS_WINDOW] = 0;
		}
	st->ring_sec = sec;
}

/* A hit or a miss in the history (a lookup's DONE is a HELLO). */
static void
count_cache(struct bc_stats *st, int cache, int64_t now_ms)
{
	int64_t sec = now_ms / 1000;

	if (cache != BC_EV_CACHE_HIT && cache != BC_EV_CACHE_MISS)
		return;
	ring_advance(st, sec);
	if (sec < st->ring_sec - BC_STATS_WINDOW + 1)
		return;
	if (cache == BC_EV_CACHE_HIT)
		st->hit_ring[sec % BC_STATS_WINDOW]++;
	else
		st->miss_ring[sec % BC_STATS_WINDOW]++;
}

void
bc_stats_event(struct bc_stats *st, const struct bc_job_event *ev,
    int64_t now_ms)
{
	char file[sizeof(ev->file)], comp[sizeof(ev->compiler)];

	job_event(st, ev, now_ms);
	if (ev->kind == BC_EV_ZERO)
		bc_stats_zero(st, (int64_t)time(NULL));
	if (ev->kind != BC_EV_DONE)
		return;
	count_cache(st, ev->cache, now_ms);
	copy_field(file, sizeof(file), ev->file);
	copy_field(comp, sizeof(comp), ev->compiler);
	switch (ev->outcome) {
	case BC_OUT_OK:
		st->compile_ok++;
		if (ev->ms > st->longest_ms || st->longest_file[0] == '\0') {
			st->longest_ms = ev->ms;
			copy_field(st->longest_file, sizeof(st->longest_file),
			    file);
			copy_field(st->longest_compiler,
			    sizeof(st->longest_compiler), comp);
		}
		break;
	case BC_OUT_COMPILE_ERROR: st->compile_error++; break;
	case BC_OUT_TIMEOUT: st->compile_timeout++; break;
	case BC_OUT_DISCONNECT: st->cli_disconnect++; break;
	case BC_OUT_BAD_REQ: st->rej_bad_req++; break;
	case BC_OUT_HELLO: st->hello++; return;
	default: st->other++; break;
	}
	if (ev->rss_kb > st->max_rss_kb) {
		st->max_rss_kb = ev->rss_kb;
		copy_field(st->max_rss_name, sizeof(st->max_rss_name), comp);
	}
	if (ev->outcome == BC_OUT_OK || ev->outcome == BC_OUT_COMPILE_ERROR ||
	    ev->outcome == BC_OUT_TIMEOUT) {
		int64_t sec = now_ms / 1000;

		ring_advance(st, sec);
		if (sec >= st->ring_sec - BC_STATS_WINDOW + 1)
			st->done_ring[sec % BC_STATS_WINDOW]++;
	}
}

/* The list of stats.h as a table the pages walk. */
enum { ROW_COUNTER, ROW_GAUGE };

struct row {
	int kind;		/* ROW_COUNTER (uint64_t), ROW_GAUGE (int) */
	int page;		/* on distccd's text page (as key) */
	const char *key;	/* /stats.json */
	const char *metric;	/* /metrics, after "boltccd_"; NULL none */
	const char *help;
	size_t off;		/* in struct bc_stats */
	size_t base;		/* in struct bc_stats_base (counters) */
};

#define ROW_C(f, page, key, metric, help) { ROW_COUNTER, page, key, \
	metric, help, offsetof(struct bc_stats, f), \
	offsetof(struct bc_stats_base, f) },
#define ROW_G(f, key, metric, help) { ROW_GAUGE, 0, key, metric, help, \
	offsetof(struct bc_stats, f), 0 },
static const struct row rows[] = { BC_STATS_COUNTERS(ROW_C, ROW_G) };
#undef ROW_C
#undef ROW_G
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static uint64_t *
row_u64(struct bc_stats *st, const struct row *w)
{
	return (uint64_t *)(void *)((char *)st + w->off);
}

static uint64_t *
row_base(struct bc_stats *st, const struct row *w)
{
	return (uint64_t *)(void *)((char *)&st->base + w->base);
}

/* A row's value: a counter's as a uint64_t, a gauge's as an int. */
static uint64_t
row_count(const struct bc_stats *st, const struct row *w)
{
	uint64_t v;

	memcpy(&v, (const char *)st + w->off, sizeof(v));
	return v;
}

static int
row_gauge(const struct bc_stats *st, const struct row *w)
{
	int v;

	memcpy(&v, (const char *)st + w->off, sizeof(v));
	return v;
}

void
bc_stats_zero(struct bc_stats *st, int64_t unix_now)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (rows[i].kind == ROW_COUNTER)
			*row_base(st, &rows[i]) = *row_u64(st, &rows[i]);
	st->zeroed_at = unix_now;
}

void
bc_stats_since_zero(const struct bc_stats *st, struct bc_stats *out)
{
	size_t i;

	*out = *st;
	for (i = 0; i < NROWS; i++) {
		uint64_t v, b;

		if (rows[i].kind != ROW_COUNTER)
			continue;
		v = *row_u64(out, &rows[i]);
		b = *row_base(out, &rows[i]);
		*row_u64(out, &rows[i]) = v > b ? v - b : 0;
	}
	if (st->cache_on)
		bc_cache_stats_since(&st->cache, &st->cache_base, &out->cache);
}

void
bc_stats_tick(struct bc_stats *st, int64_t now_ms)
{
	static const double period_s[3] = { 60.0, 300.0, 900.0 };
	double dt = (double)(now_ms - st->last_tick_ms) / 1000.0;
	int i;

	if (dt <= 0)
		return;
	for (i = 0; i < 3; i++) {
		/* linear approximation of exp decay; exact enough at 1 s */
		double a = dt / period_s[i];

		if (a > 1.0)
			a = 1.0;
		st->avg_kids[i] += a * ((double)st->running - st->avg_kids[i]);
	}
	st->last_tick_ms = now_ms;
	ring_advance(st, now_ms / 1000);
}

/* The sum of ring over the seconds [from, to]. */
static uint64_t
ring_sum(const struct bc_stats *st, const uint32_t *ring, int64_t from,
    int64_t to)
{
	uint64_t sum = 0;
	int64_t s;

	for (s = from; s <= to; s++) {
		if (s > st->ring_sec || s <= st->ring_sec - BC_STATS_WINDOW)
			continue;
		sum += ring[((s % BC_STATS_WINDOW) + BC_STATS_WINDOW) %
		    BC_STATS_WINDOW];
	}
	return sum;
}

uint64_t
bc_stats_recent(const struct bc_stats *st, int secs, int64_t now_ms)
{
	int64_t now_s = now_ms / 1000;

	if (secs > BC_STATS_WINDOW)
		secs = BC_STATS_WINDOW;
	return ring_sum(st, st->done_ring, now_s - secs + 1, now_s);
}

void
bc_stats_sample_sys(struct bc_stats_sys *sys, const struct bc_stats *st,
    const char *tmpdir)
{
	struct statvfs vfs;
	long runnable;

	memset(sys, 0, sizeof(*sys));
	if (getloadavg(sys->load, 3) != 3)
		sys->load[0] = sys->load[1] = sys->load[2] = -1;
	sys->current_load = st->running;
	/* runnable entities where the OS tells (Linux), else running jobs */
	if ((runnable = bc_osdep_runnable()) >= 0)
		sys->current_load = runnable;
	sys->procstate_d = 0;
	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	if (statvfs(tmpdir, &vfs) == 0)
		sys->free_mb = (long long)((unsigned long long)vfs.f_bavail *
		    (unsigned long long)vfs.f_frsize / (1024ULL * 1024ULL));
	else
		sys->free_mb = -1;
}

/*
 * The jobs now, after distccd's block (which stays byte for byte
 * distccd's): "job STATE SECONDS MODE CLIENT COMPILER FILE", the file
 * escaped as in the log; no block when there is no job.
 */
static int
render_jobs_text(const struct bc_stats *st, int64_t now_ms,
    struct bc_buf *out)
{
	char file[4 * sizeof(st->job[0].file)];
	size_t i;
	int r;

	if (st->njob == 0)
		return BC_OK;
	r = bc_buf_put_str(out, "<boltccjobs>\n");
	for (i = 0; r == BC_OK && i < st->njob; i++) {
		const struct bc_stats_job *j = &st->job[i];

		bc_log_escape(j->file, strlen(j->file), file, sizeof(file));
		r = bc_buf_putf(out, "job %s %.1f %s %s %s %s\n",
		    bc_stats_state_name(j->state),
		    (double)(now_ms - j->start_ms) / 1000.0,
		    bc_stats_mode_name(j->mode),
		    j->peer[0] != '\0' ? j->peer : "-",
		    j->compiler[0] != '\0' ? j->compiler : "-",
		    file[0] != '\0' ? file : "-");
	}
	if (r == BC_OK)
		r = bc_buf_put_str(out, "</boltccjobs>\n");
	return r;
}

int
bc_stats_render_text(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *argv0, int64_t now_ms,
    struct bc_buf *out)
{
	char longest[4 * sizeof(st->longest_file)];
	size_t i;
	int r;

	bc_log_escape(st->longest_file, strlen(st->longest_file), longest,
	    sizeof(longest));
	r = bc_buf_putf(out, "argv %s\n<distccstats>\n", argv0);
	for (i = 0; r == BC_OK && i < NROWS; i++)
		if (rows[i].page)
			r = bc_buf_putf(out, "%s %llu\n", rows[i].key,
			    (unsigned long long)row_count(st, &rows[i]));
	if (r == BC_OK)
		r = bc_buf_putf(out,
		    "dcc_longest_job %s\n"
		    "dcc_longest_job_compiler %s\n"
		    "dcc_longest_job_time_msecs %lld\n"
		    "dcc_max_kids %d\n"
		    "dcc_avg_kids1 %d\n"
		    "dcc_avg_kids2 %d\n"
		    "dcc_avg_kids3 %d\n"
		    "dcc_current_load %ld\n"
		    "dcc_load1 %.2f\n"
		    "dcc_load2 %.2f\n"
		    "dcc_load3 %.2f\n"
		    "dcc_num_compiles1 %llu\n"
		    "dcc_num_compiles2 %llu\n"
		    "dcc_num_compiles3 %llu\n"
		    "dcc_num_procstate_D %ld\n"
		    "dcc_max_RSS %lld\n"
		    "dcc_max_RSS_name (%s)\n"
		    "dcc_io_rate -1\n"
		    "dcc_free_space %lld MB\n"
		    "</distccstats>\n",
		    longest, st->longest_compiler,
		    (long long)st->longest_ms,
		    st->max_kids,
		    (int)st->avg_kids[0], (int)st->avg_kids[1],
		    (int)st->avg_kids[2],
		    sys->current_load,
		    sys->load[0], sys->load[1], sys->load[2],
		    (unsigned long long)bc_stats_recent(st, 60, now_ms),
		    (unsigned long long)bc_stats_recent(st, 300, now_ms),
		    (unsigned long long)bc_stats_recent(st, 900, now_ms),
		    sys->procstate_d,
		    (long long)st->max_rss_kb, st->max_rss_name,
		    sys->free_mb);
	if (r == BC_OK)
		r = render_jobs_text(st, now_ms, out);
	return r;
}

/* Hit rate in percent of lookups (0 when there were none). */
static double
hit_rate(const struct bc_cache_stats *c)
{
	uint64_t n = c->hits + c->misses;

	return n == 0 ? 0.0 : 100.0 * (double)c->hits / (double)n;
}

/* "cache":{...} (or "cache":null with the cache off). */
static void
render_cache_json(const struct bc_stats *st, struct bc_jsonw *w)
{
	const struct bc_cache_stats *c = &st->cache;
	int64_t now = (int64_t)time(NULL);
	size_t i;

	bc_jsonw_key(w, "cache");
	if (!st->cache_on) {
		bc_jsonw_null(w);
		return;
	}
	bc_jsonw_obj(w);
	bc_jsonw_key(w, "requests");
	bc_jsonw_uint(w, c->requests);
	bc_jsonw_key(w, "hits");
	bc_jsonw_uint(w, c->hits);
	bc_jsonw_key(w, "hits_other_checkout");
	bc_jsonw_uint(w, c->hits_other_checkout);
	bc_jsonw_key(w, "misses");
	bc_jsonw_uint(w, c->misses);
	bc_jsonw_key(w, "hit_rate");
	bc_jsonw_fixed(w, hit_rate(c), 1);
	bc_jsonw_key(w, "stores");
	bc_jsonw_uint(w, c->stores);
	bc_jsonw_key(w, "store_errors");
	bc_jsonw_uint(w, c->store_errors);
	bc_jsonw_key(w, "evictions");
	bc_jsonw_uint(w, c->evictions);
	bc_jsonw_key(w, "corrupt");
	bc_jsonw_uint(w, c->corrupt);
	bc_jsonw_key(w, "identity_mismatch");
	bc_jsonw_uint(w, c->identity_mismatch);
	bc_jsonw_key(w, "time_saved_ms");
	bc_jsonw_uint(w, c->time_saved_ms);
	bc_jsonw_key(w, "entries");
	bc_jsonw_uint(w, c->entries);
	bc_jsonw_key(w, "stored_bytes");
	bc_jsonw_uint(w, c->stored_bytes);
	bc_jsonw_key(w, "max_bytes");
	bc_jsonw_uint(w, c->max_bytes);
	bc_jsonw_key(w, "uncacheable");
	bc_jsonw_uint(w, c->uncacheable);
	bc_jsonw_key(w, "uncacheable_by_reason");
	bc_jsonw_obj(w);
	for (i = 0; i < c->nreasons; i++) {
		bc_jsonw_key(w, c->reasons[i].name);
		bc_jsonw_uint(w, c->reasons[i].value);
	}
	bc_jsonw_obj_end(w);
	bc_jsonw_key(w, "limit_bytes");
	bc_jsonw_uint(w, c->max_bytes);
	bc_jsonw_key(w, "limit_set");
	bc_jsonw_bool(w, c->limit_set);
	bc_jsonw_key(w, "oldest_age_sec");
	bc_jsonw_int(w, c->entries > 0 && c->oldest_used > 0 &&
	    now > c->oldest_used ? now - c->oldest_used : 0);
	bc_jsonw_key(w, "zeroed_at");
	bc_jsonw_int(w, c->zeroed_at);
	bc_jsonw_obj_end(w);
}

/* "active_jobs":[...]: one object per worker, oldest first. */
static void
render_jobs_json(const struct bc_stats *st, int64_t now_ms,
    struct bc_jsonw *w)
{
	size_t i, k, *order = xcalloc(st->njob + 1, sizeof(*order));

	for (i = 0; i < st->njob; i++) {	/* insertion sort by start */
		for (k = i; k > 0 &&
		    st->job[order[k - 1]].start_ms > st->job[i].start_ms; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	bc_jsonw_key(w, "active_jobs");
	bc_jsonw_arr(w);
	for (i = 0; i < st->njob; i++) {
		const struct bc_stats_job *j = &st->job[order[i]];

		bc_jsonw_obj(w);
		bc_jsonw_key(w, "pid");
		bc_jsonw_int(w, j->pid);
		bc_jsonw_key(w, "state");
		bc_jsonw_str(w, bc_stats_state_name(j->state));
		bc_jsonw_key(w, "mode");
		bc_jsonw_str(w, bc_stats_mode_name(j->mode));
		bc_jsonw_key(w, "seconds");
		bc_jsonw_fixed(w, (double)(now_ms - j->start_ms) / 1000.0, 1);
		bc_jsonw_key(w, "compile_seconds");
		bc_jsonw_fixed(w, j->slot_ms > 0 &&
		    j->state >= BC_JOB_COMPILING ?
		    (double)(now_ms - j->slot_ms) / 1000.0 : 0.0, 1);
		bc_jsonw_key(w, "client");
		bc_jsonw_str(w, j->peer);
		bc_jsonw_key(w, "compiler");
		bc_jsonw_str(w, j->compiler);
		bc_jsonw_key(w, "file");
		bc_jsonw_str(w, j->file);
		bc_jsonw_obj_end(w);
	}
	bc_jsonw_arr_end(w);
	free(order);
}

/* One history series: BC_STATS_HISTORY_STEPS sums of STEP seconds,
 * oldest first, the last one ending now. */
static void
render_series(const struct bc_stats *st, const uint32_t *ring,
    const char *name, int64_t now_ms, struct bc_jsonw *w)
{
	int64_t now_s = now_ms / 1000, from;
	int i;

	bc_jsonw_key(w, name);
	bc_jsonw_arr(w);
	for (i = BC_STATS_HISTORY_STEPS - 1; i >= 0; i--) {
		from = now_s - (int64_t)(i + 1) * BC_STATS_HISTORY_STEP + 1;
		bc_jsonw_uint(w, ring_sum(st, ring, from,
		    from + BC_STATS_HISTORY_STEP - 1));
	}
	bc_jsonw_arr_end(w);
}

/*
 * "throughput":{...} over the last minute (a hit rate only when there
 * were lookups: null otherwise) and "history":{...} of the last 15
 * minutes for the monitor's charts.
 */
static void
render_recent_json(const struct bc_stats *st, int64_t now_ms,
    struct bc_jsonw *w)
{
	int64_t now_s = now_ms / 1000;
	uint64_t done = ring_sum(st, st->done_ring, now_s - 59, now_s);
	uint64_t hits = ring_sum(st, st->hit_ring, now_s - 59, now_s);
	uint64_t misses = ring_sum(st, st->miss_ring, now_s - 59, now_s);

	bc_jsonw_key(w, "throughput");
	bc_jsonw_obj(w);
	bc_jsonw_key(w, "jobs_per_second");
	bc_jsonw_fixed(w, (double)done / 60.0, 2);
	bc_jsonw_key(w, "hits");
	bc_jsonw_uint(w, hits);
	bc_jsonw_key(w, "misses");
	bc_jsonw_uint(w, misses);
	bc_jsonw_key(w, "hit_rate");
	if (hits + misses > 0)
		bc_jsonw_fixed(w, 100.0 * (double)hits /
		    (double)(hits + misses), 1);
	else
		bc_jsonw_null(w);
	bc_jsonw_obj_end(w);
	bc_jsonw_key(w, "history");
	bc_jsonw_obj(w);
	bc_jsonw_key(w, "step_seconds");
	bc_jsonw_int(w, BC_STATS_HISTORY_STEP);
	render_series(st, st->done_ring, "done", now_ms, w);
	render_series(st, st->hit_ring, "hits", now_ms, w);
	render_series(st, st->miss_ring, "misses", now_ms, w);
	bc_jsonw_obj_end(w);
}

/* A member of the top object, a number with a fixed count of decimals. */
static void
json_fixed(struct bc_jsonw *w, const char *key, double v, int decimals)
{
	bc_jsonw_key(w, key);
	bc_jsonw_fixed(w, v, decimals);
}

static void
json_int(struct bc_jsonw *w, const char *key, long long v)
{
	bc_jsonw_key(w, key);
	bc_jsonw_int(w, v);
}

int
bc_stats_render_json(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *version, int64_t now_ms,
    struct bc_buf *out)
{
	struct bc_jsonw w;
	size_t i;

	bc_jsonw_init(&w, out);
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "version");
	bc_jsonw_str(&w, version);
	json_int(&w, "jobs", st->max_kids);
	json_int(&w, "queue", st->queue);
	json_int(&w, "running", st->running);
	json_int(&w, "queued",
	    st->workers > st->running ? st->workers - st->running : 0);
	json_int(&w, "uptime_sec", (now_ms - st->start_ms) / 1000);
	for (i = 0; i < NROWS; i++) {
		bc_jsonw_key(&w, rows[i].key);
		if (rows[i].kind == ROW_COUNTER)
			bc_jsonw_uint(&w, row_count(st, &rows[i]));
		else
			bc_jsonw_int(&w, row_gauge(st, &rows[i]));
	}
	bc_jsonw_key(&w, "dcc_longest_job");
	bc_jsonw_str(&w, st->longest_file);
	bc_jsonw_key(&w, "dcc_longest_job_compiler");
	bc_jsonw_str(&w, st->longest_compiler);
	json_int(&w, "dcc_longest_job_time_msecs", st->longest_ms);
	json_int(&w, "dcc_max_kids", st->max_kids);
	json_fixed(&w, "dcc_avg_kids1", st->avg_kids[0], 2);
	json_fixed(&w, "dcc_avg_kids2", st->avg_kids[1], 2);
	json_fixed(&w, "dcc_avg_kids3", st->avg_kids[2], 2);
	json_int(&w, "dcc_current_load", sys->current_load);
	json_fixed(&w, "dcc_load1", sys->load[0], 2);
	json_fixed(&w, "dcc_load2", sys->load[1], 2);
	json_fixed(&w, "dcc_load3", sys->load[2], 2);
	bc_jsonw_key(&w, "dcc_num_compiles1");
	bc_jsonw_uint(&w, bc_stats_recent(st, 60, now_ms));
	bc_jsonw_key(&w, "dcc_num_compiles2");
	bc_jsonw_uint(&w, bc_stats_recent(st, 300, now_ms));
	bc_jsonw_key(&w, "dcc_num_compiles3");
	bc_jsonw_uint(&w, bc_stats_recent(st, 900, now_ms));
	json_int(&w, "dcc_num_procstate_D", sys->procstate_d);
	json_int(&w, "dcc_max_RSS", st->max_rss_kb);
	bc_jsonw_key(&w, "dcc_max_RSS_name");
	bc_jsonw_str(&w, st->max_rss_name);
	json_int(&w, "zeroed_at", st->zeroed_at);
	render_cache_json(st, &w);
	render_jobs_json(st, now_ms, &w);
	render_recent_json(st, now_ms, &w);
	if (st->ident != NULL)
		bc_ident_render_json(st->ident, &w);
	json_int(&w, "dcc_io_rate", -1);
	json_int(&w, "dcc_free_space_mb", sys->free_mb);
	bc_jsonw_obj_end(&w);
	if (bc_jsonw_end(&w) != BC_OK)
		return bc_jsonw_end(&w);
	return bc_buf_put_u8(out, '\n');
}

static int
metric(struct bc_buf *out, const char *name, const char *type,
    const char *help, double v)
{
	return bc_buf_putf(out, "# HELP boltccd_%s %s\n# TYPE boltccd_%s %s\n"
	    "boltccd_%s %.17g\n", name, help, name, type, name, v);
}

/*
 * The table's rows in /metrics' order (into order; their count is
 * returned): the counters, then the gauges.  One exception:
 * rejected_acl_total has been second since it came (the JSON has
 * dcc_rej_acl after distccd's rejections), and stays there so that the
 * page does not change.
 */
static size_t
metrics_order(const struct row *order[NROWS])
{
	size_t acl = offsetof(struct bc_stats, rej_acl), n = 0, k;
	int kind;

	for (k = 0; k < NROWS; k++)
		if (k == 0 || rows[k].off == acl)
			order[n++] = &rows[k];
	for (kind = ROW_COUNTER; kind <= ROW_GAUGE; kind++)
		for (k = 1; k < NROWS; k++)
			if (rows[k].kind == kind && rows[k].off != acl)
				order[n++] = &rows[k];
	return n;
}

int
bc_stats_render_metrics(const struct bc_stats *st,
    const struct bc_stats_sys *sys, int64_t now_ms, struct bc_buf *out)
{
	const struct row *order[NROWS];
	size_t i, nrows = metrics_order(order);
	int r = BC_OK;

	for (i = 0; r == BC_OK && i < nrows; i++) {
		const struct row *w = order[i];

		if (w->metric != NULL)
			r = metric(out, w->metric, w->kind == ROW_COUNTER ?
			    "counter" : "gauge", w->help,
			    w->kind == ROW_COUNTER ? (double)row_count(st, w) :
			    (double)row_gauge(st, w));
	}
	/* the values that are no field of the table: settings, figures
	 * computed now, the cache's counters (cache/store.h) */
#define C(n, h, v) if (r == BC_OK) r = metric(out, n, "counter", h, (double)(v))
#define G(n, h, v) if (r == BC_OK) r = metric(out, n, "gauge", h, (double)(v))
	G("jobs", "Compile slots (--jobs).", st->max_kids);
	G("queue", "Queued connections allowed beyond --jobs (--queue).",
	    st->queue);
	G("running", "Compiles running now.", st->running);
	G("queued", "Connections waiting or being read now.",
	    st->workers > st->running ? st->workers - st->running : 0);
	G("longest_job_seconds", "Slowest successful job.",
	    (double)st->longest_ms / 1000.0);
	G("max_rss_kibibytes", "Largest compiler resident set seen.",
	    st->max_rss_kb);
	G("compiles_last_minute", "Jobs finished in the last 60 s.",
	    bc_stats_recent(st, 60, now_ms));
	G("load1", "1-minute load average.", sys->load[0]);
	G("free_space_mebibytes", "Free space in TMPDIR.", sys->free_mb);
	G("uptime_seconds", "Seconds since start.",
	    (double)(now_ms - st->start_ms) / 1000.0);
	if (st->cache_on) {
		const struct bc_cache_stats *c = &st->cache;

		C("cache_requests_total", "Cache lookups and checked jobs.",
		    c->requests);
		C("cache_hits_total", "Jobs answered from the cache.", c->hits);
		C("cache_hits_other_checkout_total", "Hits on entries another "
		    "working directory stored.", c->hits_other_checkout);
		C("cache_misses_total", "Cache lookups that missed.",
		    c->misses);
		C("cache_stores_total", "Results stored.", c->stores);
		C("cache_store_errors_total",
		    "Results that could not be stored (compile succeeded).",
		    c->store_errors);
		C("cache_evictions_total", "Entries evicted (LRU).",
		    c->evictions);
		C("cache_corrupt_total", "Blobs that failed verification.",
		    c->corrupt);
		C("cache_identity_mismatch_total",
		    "Jobs refused: client compiler differs.",
		    c->identity_mismatch);
		C("cache_time_saved_seconds_total",
		    "Original compile time of every hit.",
		    (double)c->time_saved_ms / 1000.0);
		G("cache_entries", "Entries in the cache.", c->entries);
		G("cache_stored_bytes", "Bytes of blobs on disk.",
		    c->stored_bytes);
		G("cache_max_bytes", "Cache size limit (--cache-size).",
		    c->max_bytes);
		G("cache_hit_ratio", "Hits / (hits + misses).",
		    hit_rate(c) / 100.0);
		if (r == BC_OK && c->nreasons > 0)
			r = bc_buf_putf(out, "# HELP boltccd_cache_uncacheable_"
			    "total Jobs not stored, by reason.\n# TYPE "
			    "boltccd_cache_uncacheable_total counter\n");
		for (i = 0; r == BC_OK && i < c->nreasons; i++) {
			char esc[96];
			size_t k, n = 0;

			for (k = 0; c->reasons[i].name[k] != '\0' &&
			    n + 2 < sizeof(esc); k++) {
				char ch = c->reasons[i].name[k];

				esc[n++] = (ch == '"' || ch == '\\' ||
				    ch == '\n') ? '_' : ch;
			}
			esc[n] = '\0';
			r = bc_buf_putf(out, "boltccd_cache_uncacheable_total"
			    "{reason=\"%s\"} %llu\n", esc,
			    (unsigned long long)c->reasons[i].value);
		}
	}
#undef C
#undef G
	if (r == BC_OK && st->ident != NULL)
		r = bc_ident_render_metrics(st->ident, out);
	return r;
}

/* After distccd's block: the cache's size and limit, when and whether
 * the counters were zeroed (nothing when neither applies, so the page
 * stays distccd's byte for byte). */
static int
render_text_extra(const struct bc_stats *st, struct bc_buf *out)
{
	char when[BC_TIME_RFC3339_LEN];
	int r = BC_OK;

	if (st->cache_on)
		r = bc_buf_putf(out, "boltccd_cache_entries %llu\n"
		    "boltccd_cache_stored_bytes %llu\n"
		    "boltccd_cache_limit_bytes %llu%s\n",
		    (unsigned long long)st->cache.entries,
		    (unsigned long long)st->cache.stored_bytes,
		    (unsigned long long)st->cache.max_bytes,
		    st->cache.limit_set ? " (set by an operator)" : "");
	if (r == BC_OK && st->zeroed_at > 0 &&
	    bc_time_rfc3339((time_t)st->zeroed_at, -1, when, sizeof(when)) ==
	    BC_OK)
		r = bc_buf_putf(out, "boltccd_zeroed_at %s\n", when);
	return r;
}

/* The path of "GET <path>[?query] ...", "" for anything else. */
static void
request_path(const char *req, size_t n, char *path, size_t pathlen)
{
	char method[BC_MAX_HTTP_METHOD + 1], target[BC_MAX_HTTP_TARGET + 1];
	int end;

	path[0] = '\0';
	if (bc_http_request_line(req, n, method, target, &end) != BC_OK ||
	    strcmp(method, "GET") != 0)
		return;
	target[strcspn(target, "?")] = '\0';
	if (strlen(target) < pathlen)
		memcpy(path, target, strlen(target) + 1);
}

int
bc_stats_http_response(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *argv0, const char *version,
    const void *req, size_t reqlen, int64_t now_ms, struct bc_buf *out)
{
	char path[64];
	struct bc_stats *pg = xmalloc(sizeof(*pg));
	int r;

	bc_stats_since_zero(st, pg);	/* what the pages show */
	request_path(req, reqlen, path, sizeof(path));
	if (strcmp(path, "/stats.json") == 0) {
		r = bc_buf_put_str(out, "HTTP/1.0 200 OK\nContent-Type: "
		    "application/json\nConnection: close\n\n");
		if (r == BC_OK)
			r = bc_stats_render_json(pg, sys, version, now_ms, out);
	} else if (strcmp(path, "/metrics") == 0) {
		r = bc_buf_put_str(out, "HTTP/1.0 200 OK\nContent-Type: "
		    "text/plain; version=0.0.4\nConnection: close\n\n");
		if (r == BC_OK)
			r = bc_stats_render_metrics(st, sys, now_ms, out);
	} else {
		r = bc_buf_put_str(out, "HTTP/1.0 200 OK\nContent-Type: "
		    "text/plain\nConnection: close\n\n");
		if (r == BC_OK)
			r = bc_stats_render_text(pg, sys, argv0, now_ms, out);
		if (r == BC_OK)
			r = render_text_extra(pg, out);
	}
	free(pg);
	return r;
}
