/*
 * cstats.h - the client's counters, shared by all boltcc processes using
 * one state dir: $DIR/stats holds "name value" lines; a name may repeat
 * and its values add up.  A job accumulates its deltas in memory and
 * commits them once: one appending write(2) under an exclusive fcntl()
 * lock on the file (readers take a shared one); past 16 KiB the file is
 * rewritten (temp file + rename) with one line per name under the lock.
 *
 * Names: jobs_remote_ok, jobs_remote_error (compile error on a host),
 * jobs_remote_pump (of those two, in pump mode; jobs_pump counts every
 * pump request, cache hits and failed attempts included),
 * jobs_local, jobs_cpp_error, jobs_failed_no_fallback,
 * local_by_reason:<reason> (run locally by rule), fallback_by_reason:<reason>
 * (local because the farm failed), host_failures,
 * host_failure_by_reason:<reason>, faults by kind (tests/cluster/README.md):
 * fault_timeouts (a host silent past a limit, a connect timed out),
 * fault_conn_reset (closed or reset mid-job), fault_connect (refused),
 * retries_other_host (done remotely after a failed host), bytes_sent,
 * bytes_received,
 * probe_bolt, probe_distcc, probe_failed; artifact cache (doc/cache.md):
 * cache_lookups, cache_hits (every hit, the local tier's included),
 * cache_hits_local (the local tier, client/hitcache.h),
 * cache_hits_other_checkout, cache_hits_direct, cache_misses,
 * cache_skipped_by_reason:<reason>, local_cache_corrupt; pump mode
 * (client/pump.c): pump_* counters.  boltcc --stats sums them up
 * (client/statsview.h).
 */
#ifndef BC_CSTATS_H
#define BC_CSTATS_H

#include <stddef.h>
#include "common/limits.h"


struct bc_cstat {
	char *name;
	long long value;
};

struct bc_cstats {
	struct bc_cstat *v;
	size_t n;
	size_t cap;
};

void bc_cstats_init(struct bc_cstats *s);
void bc_cstats_free(struct bc_cstats *s);
/* Add delta to name (created at 0); characters outside [!-~] become '_'. */
void bc_cstats_add(struct bc_cstats *s, const char *name, long long delta);
/* Add "prefix:reason". */
void bc_cstats_add2(struct bc_cstats *s, const char *prefix,
    const char *reason, long long delta);
long long bc_cstats_get(const struct bc_cstats *s, const char *name);

/* Append deltas to dir/stats (compacting it now and then). */
int bc_cstats_commit(const char *dir, const struct bc_cstats *delta,
    char *err);
/* Read dir/stats (missing file = empty). */
int bc_cstats_load(const char *dir, struct bc_cstats *out, char *err);
/* Reset all counters. */
int bc_cstats_zero(const char *dir, char *err);

#endif
