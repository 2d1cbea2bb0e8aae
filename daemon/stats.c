/*
 * stats.c - counters and the stats page (see stats.h).
 *
 * The text page reproduces distccd 3.4's field names, order and LF line
 * endings (spec/vectors/stats-page.txt) so existing scrapers keep working;
 * JSON and Prometheus forms carry the same counters plus boltccd's own.
 */
#include "config.h"

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
#include "common/util.h"
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

#define BASE_FIELDS(X) X(tcp_accept) X(rej_acl) X(rej_bad_req) \
	X(rej_overload) X(compile_ok) X(compile_error) X(compile_timeout) \
	X(cli_disconnect) X(other) X(hello) X(lookup_fast) X(hit_fast) \
	X(intake_dropped) X(intake_expired)

void
bc_stats_zero(struct bc_stats *st, int64_t unix_now)
{
#define X(f) st->base.f = st->f;
	BASE_FIELDS(X)
#undef X
	st->zeroed_at = unix_now;
}

void
bc_stats_since_zero(const struct bc_stats *st, struct bc_stats *out)
{
	*out = *st;
#define X(f) out->f = st->f > st->base.f ? st->f - st->base.f : 0;
	BASE_FIELDS(X)
#undef X
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
	int r;

	bc_log_escape(st->longest_file, strlen(st->longest_file), longest,
	    sizeof(longest));
	r = bc_buf_putf(out,
	    "argv %s\n"
	    "<distccstats>\n"
	    "dcc_tcp_accept %llu\n"
	    "dcc_rej_bad_req %llu\n"
	    "dcc_rej_overload %llu\n"
	    "dcc_compile_ok %llu\n"
	    "dcc_compile_error %llu\n"
	    "dcc_compile_timeout %llu\n"
	    "dcc_cli_disconnect %llu\n"
	    "dcc_other %llu\n"
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
	    argv0,
	    (unsigned long long)st->tcp_accept,
	    (unsigned long long)st->rej_bad_req,
	    (unsigned long long)st->rej_overload,
	    (unsigned long long)st->compile_ok,
	    (unsigned long long)st->compile_error,
	    (unsigned long long)st->compile_timeout,
	    (unsigned long long)st->cli_disconnect,
	    (unsigned long long)st->other,
	    longest, st->longest_compiler,
	    (long long)st->longest_ms,
	    st->max_kids,
	    (int)st->avg_kids[0], (int)st->avg_kids[1], (int)st->avg_kids[2],
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

/* ,"cache":{...} (or "cache":null with the cache off). */
static int
render_cache_json(const struct bc_stats *st, struct bc_buf *out)
{
	const struct bc_cache_stats *c = &st->cache;
	size_t i;
	int r;

	if (!st->cache_on)
		return bc_buf_putf(out, ",\"cache\":null");
	r = bc_buf_putf(out, ",\"cache\":{\"requests\":%llu,\"hits\":%llu,"
	    "\"hits_other_checkout\":%llu,\"misses\":%llu,\"hit_rate\":%.1f,\"stores\":%llu,"
	    "\"store_errors\":%llu,\"evictions\":%llu,\"corrupt\":%llu,"
	    "\"identity_mismatch\":%llu,\"time_saved_ms\":%llu,"
	    "\"entries\":%llu,\"stored_bytes\":%llu,\"max_bytes\":%llu,"
	    "\"uncacheable\":%llu,\"uncacheable_by_reason\":{",
	    (unsigned long long)c->requests, (unsigned long long)c->hits,
	    (unsigned long long)c->hits_other_checkout,
	    (unsigned long long)c->misses, hit_rate(c),
	    (unsigned long long)c->stores,
	    (unsigned long long)c->store_errors,
	    (unsigned long long)c->evictions, (unsigned long long)c->corrupt,
	    (unsigned long long)c->identity_mismatch,
	    (unsigned long long)c->time_saved_ms,
	    (unsigned long long)c->entries,
	    (unsigned long long)c->stored_bytes,
	    (unsigned long long)c->max_bytes,
	    (unsigned long long)c->uncacheable);
	for (i = 0; r == BC_OK && i < c->nreasons; i++) {
		r = bc_buf_putf(out, "%s", i > 0 ? "," : "");
		if (r == BC_OK)
			r = bc_json_put_str(out, c->reasons[i].name);
		if (r == BC_OK)
			r = bc_buf_putf(out, ":%llu",
			    (unsigned long long)c->reasons[i].value);
	}
	if (r == BC_OK)
		r = bc_buf_putf(out, "},\"limit_bytes\":%llu,\"limit_set\":%s,"
		    "\"oldest_age_sec\":%lld,\"zeroed_at\":%lld}",
		    (unsigned long long)c->max_bytes,
		    c->limit_set ? "true" : "false",
		    (long long)(c->entries > 0 && c->oldest_used > 0 &&
		    (int64_t)time(NULL) > c->oldest_used ?
		    (int64_t)time(NULL) - c->oldest_used : 0),
		    (long long)c->zeroed_at);
	return r;
}

/* ,"active_jobs":[...]: one object per worker, oldest first. */
static int
render_jobs_json(const struct bc_stats *st, int64_t now_ms,
    struct bc_buf *out)
{
	size_t i, k, *order = xcalloc(st->njob + 1, sizeof(*order));
	int r = bc_buf_put_str(out, ",\"active_jobs\":[");

	for (i = 0; i < st->njob; i++) {	/* insertion sort by start */
		for (k = i; k > 0 &&
		    st->job[order[k - 1]].start_ms > st->job[i].start_ms; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	for (i = 0; r == BC_OK && i < st->njob; i++) {
		const struct bc_stats_job *j = &st->job[order[i]];

		r = bc_buf_putf(out, "%s{\"pid\":%ld,\"state\":\"%s\","
		    "\"mode\":\"%s\",\"seconds\":%.1f,"
		    "\"compile_seconds\":%.1f,\"client\":", i > 0 ? "," : "",
		    (long)j->pid, bc_stats_state_name(j->state),
		    bc_stats_mode_name(j->mode),
		    (double)(now_ms - j->start_ms) / 1000.0,
		    j->slot_ms > 0 && j->state >= BC_JOB_COMPILING ?
		    (double)(now_ms - j->slot_ms) / 1000.0 : 0.0);
		if (r == BC_OK)
			r = bc_json_put_str(out, j->peer);
		if (r == BC_OK)
			r = bc_buf_put_str(out, ",\"compiler\":");
		if (r == BC_OK)
			r = bc_json_put_str(out, j->compiler);
		if (r == BC_OK)
			r = bc_buf_put_str(out, ",\"file\":");
		if (r == BC_OK)
			r = bc_json_put_str(out, j->file);
		if (r == BC_OK)
			r = bc_buf_put_u8(out, '}');
	}
	free(order);
	if (r == BC_OK)
		r = bc_buf_put_u8(out, ']');
	return r;
}

/* One history series: BC_STATS_HISTORY_STEPS sums of STEP seconds,
 * oldest first, the last one ending now. */
static int
render_series(const struct bc_stats *st, const uint32_t *ring,
    const char *name, int64_t now_ms, struct bc_buf *out)
{
	int64_t now_s = now_ms / 1000, from;
	int i, r = bc_buf_putf(out, ",\"%s\":[", name);

	for (i = BC_STATS_HISTORY_STEPS - 1; r == BC_OK && i >= 0; i--) {
		from = now_s - (int64_t)(i + 1) * BC_STATS_HISTORY_STEP + 1;
		r = bc_buf_putf(out, "%s%llu",
		    i == BC_STATS_HISTORY_STEPS - 1 ? "" : ",",
		    (unsigned long long)ring_sum(st, ring, from,
		    from + BC_STATS_HISTORY_STEP - 1));
	}
	if (r == BC_OK)
		r = bc_buf_put_u8(out, ']');
	return r;
}

/*
 * ,"throughput":{...} over the last minute (a hit rate only when there
 * were lookups: null otherwise) and ,"history":{...} of the last 15
 * minutes for the monitor's charts.
 */
static int
render_recent_json(const struct bc_stats *st, int64_t now_ms,
    struct bc_buf *out)
{
	int64_t now_s = now_ms / 1000;
	uint64_t done = ring_sum(st, st->done_ring, now_s - 59, now_s);
	uint64_t hits = ring_sum(st, st->hit_ring, now_s - 59, now_s);
	uint64_t misses = ring_sum(st, st->miss_ring, now_s - 59, now_s);
	int r = bc_buf_putf(out, ",\"throughput\":{\"jobs_per_second\":%.2f,"
	    "\"hits\":%llu,\"misses\":%llu,\"hit_rate\":", (double)done /
	    60.0, (unsigned long long)hits, (unsigned long long)misses);

	if (r == BC_OK)
		r = hits + misses > 0 ? bc_buf_putf(out, "%.1f}",
		    100.0 * (double)hits / (double)(hits + misses)) :
		    bc_buf_put_str(out, "null}");
	if (r == BC_OK)
		r = bc_buf_putf(out, ",\"history\":{\"step_seconds\":%d",
		    BC_STATS_HISTORY_STEP);
	if (r == BC_OK)
		r = render_series(st, st->done_ring, "done", now_ms, out);
	if (r == BC_OK)
		r = render_series(st, st->hit_ring, "hits", now_ms, out);
	if (r == BC_OK)
		r = render_series(st, st->miss_ring, "misses", now_ms, out);
	if (r == BC_OK)
		r = bc_buf_put_u8(out, '}');
	return r;
}

int
bc_stats_render_json(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *version, int64_t now_ms,
    struct bc_buf *out)
{
	int r;

	r = bc_buf_putf(out, "{\"version\":");
	if (r == BC_OK)
		r = bc_json_put_str(out, version);
	if (r == BC_OK)
		r = bc_buf_putf(out,
		    ",\"jobs\":%d,\"queue\":%d,\"running\":%d,\"queued\":%d,"
		    "\"uptime_sec\":%lld,"
		    "\"dcc_tcp_accept\":%llu,\"dcc_rej_bad_req\":%llu,"
		    "\"dcc_rej_overload\":%llu,\"dcc_rej_acl\":%llu,"
		    "\"dcc_compile_ok\":%llu,"
		    "\"dcc_compile_error\":%llu,\"dcc_compile_timeout\":%llu,"
		    "\"dcc_cli_disconnect\":%llu,\"dcc_other\":%llu,"
		    "\"hello\":%llu,\"lookup_fast\":%llu,\"hit_fast\":%llu,"
		    "\"connections_reading\":%d,\"requests_waiting\":%d,"
		    "\"connections_dropped\":%llu,\"requests_expired\":%llu,"
		    "\"dcc_longest_job\":",
		    st->max_kids, st->queue, st->running,
		    st->workers > st->running ? st->workers - st->running : 0,
		    (long long)((now_ms - st->start_ms) / 1000),
		    (unsigned long long)st->tcp_accept,
		    (unsigned long long)st->rej_bad_req,
		    (unsigned long long)st->rej_overload,
		    (unsigned long long)st->rej_acl,
		    (unsigned long long)st->compile_ok,
		    (unsigned long long)st->compile_error,
		    (unsigned long long)st->compile_timeout,
		    (unsigned long long)st->cli_disconnect,
		    (unsigned long long)st->other,
		    (unsigned long long)st->hello,
		    (unsigned long long)st->lookup_fast,
		    (unsigned long long)st->hit_fast,
		    st->intake_reading, st->intake_waiting,
		    (unsigned long long)st->intake_dropped,
		    (unsigned long long)st->intake_expired);
	if (r == BC_OK)
		r = bc_json_put_str(out, st->longest_file);
	if (r == BC_OK)
		r = bc_buf_putf(out, ",\"dcc_longest_job_compiler\":");
	if (r == BC_OK)
		r = bc_json_put_str(out, st->longest_compiler);
	if (r == BC_OK)
		r = bc_buf_putf(out,
		    ",\"dcc_longest_job_time_msecs\":%lld,\"dcc_max_kids\":%d,"
		    "\"dcc_avg_kids1\":%.2f,\"dcc_avg_kids2\":%.2f,"
		    "\"dcc_avg_kids3\":%.2f,\"dcc_current_load\":%ld,"
		    "\"dcc_load1\":%.2f,\"dcc_load2\":%.2f,\"dcc_load3\":%.2f,"
		    "\"dcc_num_compiles1\":%llu,\"dcc_num_compiles2\":%llu,"
		    "\"dcc_num_compiles3\":%llu,\"dcc_num_procstate_D\":%ld,"
		    "\"dcc_max_RSS\":%lld,\"dcc_max_RSS_name\":",
		    (long long)st->longest_ms, st->max_kids,
		    st->avg_kids[0], st->avg_kids[1], st->avg_kids[2],
		    sys->current_load, sys->load[0], sys->load[1], sys->load[2],
		    (unsigned long long)bc_stats_recent(st, 60, now_ms),
		    (unsigned long long)bc_stats_recent(st, 300, now_ms),
		    (unsigned long long)bc_stats_recent(st, 900, now_ms),
		    sys->procstate_d, (long long)st->max_rss_kb);
	if (r == BC_OK)
		r = bc_json_put_str(out, st->max_rss_name);
	if (r == BC_OK)
		r = bc_buf_putf(out, ",\"zeroed_at\":%lld",
		    (long long)st->zeroed_at);
	if (r == BC_OK)
		r = render_cache_json(st, out);
	if (r == BC_OK)
		r = render_jobs_json(st, now_ms, out);
	if (r == BC_OK)
		r = render_recent_json(st, now_ms, out);
	if (r == BC_OK && st->ident != NULL)
		r = bc_ident_render_json(st->ident, out);
	if (r == BC_OK)
		r = bc_buf_putf(out,
		    ",\"dcc_io_rate\":-1,\"dcc_free_space_mb\":%lld}\n",
		    sys->free_mb);
	return r;
}

static int
metric(struct bc_buf *out, const char *name, const char *type,
    const char *help, double v)
{
	return bc_buf_putf(out, "# HELP boltccd_%s %s\n# TYPE boltccd_%s %s\n"
	    "boltccd_%s %.17g\n", name, help, name, type, name, v);
}

int
bc_stats_render_metrics(const struct bc_stats *st,
    const struct bc_stats_sys *sys, int64_t now_ms, struct bc_buf *out)
{
	int r = BC_OK;

#define C(n, h, v) if (r == BC_OK) r = metric(out, n, "counter", h, (double)(v))
#define G(n, h, v) if (r == BC_OK) r = metric(out, n, "gauge", h, (double)(v))
	C("tcp_accept_total", "Accepted job connections.", st->tcp_accept);
	C("rejected_acl_total", "Connections denied by --allow.", st->rej_acl);
	C("rejected_bad_request_total", "Requests with protocol errors.",
	    st->rej_bad_req);
	C("rejected_overload_total", "Connections refused: queue full.",
	    st->rej_overload);
	C("compile_ok_total", "Compiles that exited 0.", st->compile_ok);
	C("compile_error_total", "Compiles that failed.", st->compile_error);
	C("compile_timeout_total", "Compiles killed at --job-timeout.",
	    st->compile_timeout);
	C("client_disconnect_total", "Jobs whose client went away.",
	    st->cli_disconnect);
	C("other_total", "Jobs refused by policy or failed otherwise.",
	    st->other);
	C("connections_dropped_total", "Connections dropped before their "
	    "request was whole: the most silent at a bound.",
	    st->intake_dropped);
	C("requests_expired_total", "Connections whose request was not "
	    "whole by --request-timeout.", st->intake_expired);
	G("connections_reading", "Connections whose request is not whole "
	    "yet (no worker).", st->intake_reading);
	G("requests_waiting", "Whole requests waiting for a worker.",
	    st->intake_waiting);
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
		size_t i;

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
