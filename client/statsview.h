/*
 * statsview.h - `boltcc --stats` (`-s`): the client's counters
 * (client/cstats.h) as a summary for people, in ccache's spirit, then
 * the artifact cache table of the farm's hosts; the raw counters and
 * each host's raw stats page with `-v`; all of it as JSON with --json.
 *
 * The summary is a pure function of the counters (bc_statsview_summarize)
 * and its figures are defined in boltcc(1), STATISTICS:
 *   hits       = cache_hits (the local tier's hits, cache_hits_local,
 *                are counted in it too; direct mode's, cache_hits_direct,
 *                as well)
 *   cacheable  = hits + cache_misses
 *   remote     = jobs_remote_ok + jobs_remote_error (a host compiled it;
 *                a compile error retried locally stays remote)
 *   local      = jobs_local - local_by_reason:retry-after-error
 *   calls      = hits + remote + local + jobs_cpp_error
 *                + jobs_failed_no_fallback
 *   uncacheable = calls - cacheable
 * Rates are percent of the line's "/ whole", printed with one decimal
 * (0 when the whole is 0; "-" in the text).
 */
#ifndef BC_STATSVIEW_H
#define BC_STATSVIEW_H

#include <stddef.h>
#include <stdio.h>

#include "common/err.h"
#include "common/hosts.h"
#include "common/json.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/cstats.h"

struct bc_statsview_opts {
	int json;		/* --json */
	int verbose;		/* -v, --verbose: raw counters too */
};

/* A count by reason, largest first (ties by name). */
struct bc_statsview_reason {
	char *name;
	long long n;
};

struct bc_statsview_reasons {
	struct bc_statsview_reason *v;
	size_t n;
};

struct bc_statsview_summary {
	long long calls;
	long long cacheable;
	long long hits;
	long long hits_local;		/* the local tier */
	long long hits_farm;		/* hits - hits_local */
	long long hits_other_checkout;	/* farm hits another checkout stored */
	long long hits_direct;		/* found without preprocessing */
	long long misses;
	long long uncacheable;
	/* local_by_reason (but retry-after-error), cache_skipped_by_reason,
	 * "preprocessor-error" (jobs_cpp_error) and "no-cache-answer" (the
	 * rest: stock distccd hosts, the cache off, no host) */
	struct bc_statsview_reasons uncacheable_by;
	long long compiles;		/* remote + local */
	long long remote;
	long long remote_pump;		/* of remote: in pump mode */
	long long remote_errors;	/* of remote: the compiler failed */
	long long retried_locally;	/* of remote_errors */
	long long local;
	long long local_rule;		/* of local: by rule */
	long long local_fallback;	/* of local: the farm failed */
	struct bc_statsview_reasons fallback_by;
	long long failed_no_fallback;	/* DISTCC_FALLBACK=0 */
	long long host_failures;	/* failed attempts on a host */
	long long bytes_sent;
	long long bytes_received;
};

/* The farm's hosts as --stats saw them. */
struct bc_statsview_farm {
	long long hosts;		/* in the host list */
	long long answered;		/* TCP hosts whose stats page answered */
	long long unavailable;		/* TCP hosts whose page did not */
	long long not_asked;		/* SSH hosts, localhost */
};

/* Parse the words after --stats / -s: any of -v, --verbose, --json.
 * BC_OK, or BC_ERR_INVAL naming the first other word in err. */
int bc_statsview_args(int argc, char **argv, struct bc_statsview_opts *o,
    char *err);

/* The summary of counters cs (pure); free with bc_statsview_free. */
void bc_statsview_summarize(const struct bc_cstats *cs,
    struct bc_statsview_summary *s);
void bc_statsview_free(struct bc_statsview_summary *s);
/* 100 * part / whole, 0 when whole <= 0. */
double bc_statsview_percent(long long part, long long whole);

/* The summary as text lines (farm NULL: no host list) to out. */
void bc_statsview_print_summary(FILE *out,
    const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm);
/* The summary as a JSON object, the next value of w (json.h). */
void bc_statsview_summary_json(struct bc_jsonw *w,
    const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm);
/* The same as a document of its own (no newline) to out. */
void bc_statsview_print_summary_json(FILE *out,
    const struct bc_statsview_summary *s,
    const struct bc_statsview_farm *farm);
/* A value read from a host's page, the next value of w: a JSON number
 * when it is one as written (json.h), else a JSON string. */
void bc_statsview_json_value(struct bc_jsonw *w, const char *v);

/*
 * The whole --stats page to stdout: the counters of cfg's state dir, and
 * the hosts of hl (NULL: no host list) asked over their stats ports.
 * BC_OK; BC_ERR_INVAL (err set) without a state dir.
 */
int bc_statsview_show(const struct bc_cconf *cfg,
    const struct bc_hostlist *hl, const struct bc_statsview_opts *o,
    char *err);

#endif
