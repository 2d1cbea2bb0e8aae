/*
 * stats.h - job counters of the daemon and the stats HTTP endpoint.
 *
 * Workers send one fixed-size bc_job_event per state change over a pipe
 * to the parent (records are smaller than PIPE_BUF, so each write is
 * atomic); the parent folds them into struct bc_stats and serves them on
 * the stats port as distccd's text page (GET / and anything else), as
 * JSON (GET /stats.json) and as Prometheus text (GET /metrics).
 */
#ifndef BC_STATS_H
#define BC_STATS_H

#include <stdint.h>
#include <sys/types.h>

#include "cache/store.h"
#include "common/buf.h"

struct bc_ident;

enum bc_event_kind {
	BC_EV_SLOT_START = 1,	/* worker took a compile slot */
	BC_EV_SLOT_END = 2,	/* worker released its slot */
	BC_EV_DONE = 3,		/* worker finished the connection */
	BC_EV_LOCATION = 4,	/* LOCATE: key's location is now loc */
	BC_EV_JOB = 5,		/* request read: file, compiler, mode known */
	BC_EV_ZERO = 6,		/* an operator zeroed the counters (BOLT ZERO) */
};

/* How a job came (the monitor shows it). */
enum bc_job_mode {
	BC_MODE_UNKNOWN = 0,
	BC_MODE_PLAIN,		/* distcc protocol 1 or 2: a .i */
	BC_MODE_PUMP,		/* distcc protocol 3: source and headers */
	BC_MODE_BOLT,		/* BOLT, preprocessed */
	BC_MODE_BOLT_PUMP,	/* BOLT pump (content-addressed files) */
	BC_MODE_LOOKUP,		/* BOLT cache lookup */
};

/* What the cache did for a job (DONE), for the hit-rate history. */
enum bc_ev_cache {
	BC_EV_CACHE_NONE = 0,
	BC_EV_CACHE_HIT,
	BC_EV_CACHE_MISS,	/* compiled, and stored or tried to */
};

enum bc_outcome {
	BC_OUT_OK = 0,		/* compiler exited 0 */
	BC_OUT_COMPILE_ERROR,	/* compiler exited non-zero or crashed */
	BC_OUT_TIMEOUT,		/* --job-timeout expired */
	BC_OUT_DISCONNECT,	/* client went away during the compile */
	BC_OUT_BAD_REQ,		/* framing / protocol error */
	BC_OUT_OTHER,		/* refused by policy, internal error... */
	BC_OUT_HELLO,		/* BOLT hello, not a job */
};

/*
 * One record of the worker -> parent pipe.  It must stay within 512
 * bytes, POSIX's smallest PIPE_BUF (macOS's), for writes to be atomic.
 */
struct bc_job_event {
	int32_t kind;		/* enum bc_event_kind */
	int32_t outcome;	/* enum bc_outcome (DONE only) */
	int32_t pid;
	int32_t mode;		/* enum bc_job_mode (JOB, DONE) */
	int32_t cache;		/* enum bc_ev_cache (DONE) */
	int32_t pad;
	int64_t ms;		/* whole job time (DONE) */
	int64_t rss_kb;		/* compiler max RSS in KiB, 0 unknown */
	union {
		struct {
			char compiler[64];	/* escaped, NUL-terminated */
			char file[128];		/* source base name, as sent
						 * (any bytes but NUL) */
		};
		struct {
			char key[65];	/* LOCATION: the key (64 hex) */
			char loc[256];	/* LOCATION: the host ("" = forget) */
		};
	};
};
#define BC_JOB_EVENT_MAX 512

/* A job the daemon has now, for the stats pages and the monitor. */
enum bc_job_state {
	BC_JOB_READING = 0,	/* connected, request being read */
	BC_JOB_QUEUED,		/* waiting for a compile slot */
	BC_JOB_COMPILING,	/* holding a slot */
	BC_JOB_SENDING,		/* compiled, answering */
};

#define BC_STATS_PEER_LEN 64

struct bc_stats_job {
	int32_t pid;
	int state;		/* enum bc_job_state */
	int mode;		/* enum bc_job_mode */
	int64_t start_ms;	/* accepted */
	int64_t slot_ms;	/* took its slot (COMPILING, SENDING) */
	char peer[BC_STATS_PEER_LEN];
	char compiler[64];
	char file[128];
};

#define BC_STATS_WINDOW 900	/* seconds of completion history (15 min) */
#define BC_STATS_HISTORY_STEP 10	/* seconds per point of /stats.json's history */
#define BC_STATS_HISTORY_STEPS (BC_STATS_WINDOW / BC_STATS_HISTORY_STEP)

/*
 * The daemon's counters, one line each; stats.c renders the pages from
 * this list, so a new counter is a line here and its ++ where it
 * happens.
 *
 *   C(field, page, key, metric, help): a counter, uint64_t field of
 *	struct bc_stats, never going down; the text page and /stats.json
 *	count from an operator's zero (struct bc_stats_base), /metrics
 *	shows the total.  page: 1 if distccd's text page has it (as key;
 *	the page is distccd's, a new counter never goes there).
 *   G(field, key, metric, help): a gauge, int field, a value now.
 *
 * key is the /stats.json member, metric the /metrics name after
 * "boltccd_" (NULL: not there), help its HELP line.  The order is
 * /stats.json's and the text page's; /metrics lists counters, then
 * gauges (stats.c, metrics_row, has the one exception).
 */
#define BC_STATS_COUNTERS(C, G) \
	C(tcp_accept, 1, "dcc_tcp_accept", "tcp_accept_total", \
	    "Accepted job connections.") \
	C(rej_bad_req, 1, "dcc_rej_bad_req", "rejected_bad_request_total", \
	    "Requests with protocol errors.") \
	C(rej_overload, 1, "dcc_rej_overload", "rejected_overload_total", \
	    "Connections refused: queue full.") \
	C(rej_acl, 0, "dcc_rej_acl", "rejected_acl_total", \
	    "Connections denied by --allow.") \
	C(compile_ok, 1, "dcc_compile_ok", "compile_ok_total", \
	    "Compiles that exited 0.") \
	C(compile_error, 1, "dcc_compile_error", "compile_error_total", \
	    "Compiles that failed.") \
	C(compile_timeout, 1, "dcc_compile_timeout", "compile_timeout_total", \
	    "Compiles killed at --job-timeout.") \
	C(cli_disconnect, 1, "dcc_cli_disconnect", "client_disconnect_total", \
	    "Jobs whose client went away.") \
	C(other, 1, "dcc_other", "other_total", \
	    "Jobs refused by policy or failed otherwise.") \
	C(hello, 0, "hello", NULL, \
	    "BOLT hellos and cache lookups (not jobs).") \
	C(lookup_fast, 0, "lookup_fast", NULL, \
	    "Lookups the parent answered itself (a miss, no worker).") \
	C(hit_fast, 0, "hit_fast", NULL, \
	    "Cache hits the parent served itself (no worker).") \
	G(intake_reading, "connections_reading", "connections_reading", \
	    "Connections whose request is not whole yet (no worker).") \
	G(intake_waiting, "requests_waiting", "requests_waiting", \
	    "Whole requests waiting for a worker.") \
	C(intake_dropped, 0, "connections_dropped", \
	    "connections_dropped_total", "Connections dropped before their " \
	    "request was whole: the most silent at a bound.") \
	C(intake_expired, 0, "requests_expired", "requests_expired_total", \
	    "Connections whose request was not whole by --request-timeout.")

/* struct fields from the list */
#define BC_STATS_FIELD_C(f, page, key, metric, help) uint64_t f;
#define BC_STATS_FIELD_G(f, key, metric, help) int f;
#define BC_STATS_FIELD_NONE(f, key, metric, help)

struct bc_stats {
	/* the counters and gauges above (intake's: connections before
	 * their request is whole, intake.h; set by the server) */
	BC_STATS_COUNTERS(BC_STATS_FIELD_C, BC_STATS_FIELD_G)
	int64_t longest_ms;
	char longest_file[128];
	char longest_compiler[64];
	int64_t max_rss_kb;
	char max_rss_name[64];
	int max_kids;		/* --jobs */
	int queue;		/* --queue */
	int running;		/* workers holding a slot (set by the server) */
	int workers;		/* all worker processes */
	double avg_kids[3];	/* 1, 5, 15 min moving averages of running */
	int64_t last_tick_ms;
	int64_t start_ms;
	/* completions per second, ring indexed by (second % WINDOW) */
	uint32_t done_ring[BC_STATS_WINDOW];
	uint32_t hit_ring[BC_STATS_WINDOW];	/* cache hits per second */
	uint32_t miss_ring[BC_STATS_WINDOW];	/* cache misses per second */
	int64_t ring_sec;	/* newest second written into the rings */
	/* the jobs now, one per worker process */
	struct bc_stats_job *job;
	size_t njob, capjob;
	/* artifact cache counters, refreshed from its index per request:
	 * totals, and the baseline of the last zero (bc_cache_baseline) */
	int cache_on;
	struct bc_cache_stats cache;
	struct bc_cache_stats cache_base;
	/* the daemon's counters when an operator last zeroed them (the
	 * pages show the difference; /metrics the totals), at zeroed_at
	 * (unix seconds, 0 never) */
	struct bc_stats_base {
		BC_STATS_COUNTERS(BC_STATS_FIELD_C, BC_STATS_FIELD_NONE)
	} base;
	int64_t zeroed_at;
	/* compiler identities (ident.h), set by the server; NULL = none */
	const struct bc_ident *ident;
};

/* Host values that the text page shows, sampled at request time. */
struct bc_stats_sys {
	double load[3];		/* getloadavg, -1 unknown */
	long current_load;	/* runnable processes */
	long procstate_d;
	long long free_mb;	/* free space of TMPDIR, -1 unknown */
};

void bc_stats_init(struct bc_stats *st, int jobs, int queue, int64_t now_ms);
void bc_stats_free(struct bc_stats *st);
/* A worker started for a connection from peer; it left (reaped). */
void bc_stats_job_begin(struct bc_stats *st, int32_t pid, const char *peer,
    int64_t now_ms);
void bc_stats_job_end(struct bc_stats *st, int32_t pid);
/* The name of a mode or a state, as the pages show it. */
const char *bc_stats_mode_name(int mode);
const char *bc_stats_state_name(int state);
/* Fold a worker event in. */
void bc_stats_event(struct bc_stats *st, const struct bc_job_event *ev,
    int64_t now_ms);
/* An operator's zero: the pages count from now (bc_stats_base); the
 * totals, which /metrics shows, go on. */
void bc_stats_zero(struct bc_stats *st, int64_t unix_now);
/* The counters the pages show: st minus its baselines (the daemon's and
 * the cache's) into out. */
void bc_stats_since_zero(const struct bc_stats *st, struct bc_stats *out);
/* Update the moving averages; call about once a second. */
void bc_stats_tick(struct bc_stats *st, int64_t now_ms);
/* Jobs finished in the last `secs` seconds (secs <= BC_STATS_WINDOW). */
uint64_t bc_stats_recent(const struct bc_stats *st, int secs, int64_t now_ms);
/* Fill sys from the host (load average, free space of tmpdir). */
void bc_stats_sample_sys(struct bc_stats_sys *sys, const struct bc_stats *st,
    const char *tmpdir);

/* Bodies (appended to out). argv0 is shown on distccd's "argv" line. */
int bc_stats_render_text(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *argv0, int64_t now_ms,
    struct bc_buf *out);
int bc_stats_render_json(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *version, int64_t now_ms,
    struct bc_buf *out);
int bc_stats_render_metrics(const struct bc_stats *st,
    const struct bc_stats_sys *sys, int64_t now_ms, struct bc_buf *out);
/*
 * A whole HTTP/1.0 response for the request bytes req (possibly partial
 * or empty: anything that is not a GET of /stats.json or /metrics gets
 * the text page, as distccd does).  The text page and JSON show the
 * counters since the last zero (bc_stats_since_zero), /metrics the
 * totals: Prometheus counters never go backwards.
 */
int bc_stats_http_response(const struct bc_stats *st,
    const struct bc_stats_sys *sys, const char *argv0, const char *version,
    const void *req, size_t reqlen, int64_t now_ms, struct bc_buf *out);

#endif
