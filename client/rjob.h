/*
 * rjob.h - one compile through the farm (doc/ARCHITECTURE.md, "One
 * compile, end to end"), as a sequence of steps over one struct bc_rjob:
 *
 *   start         what a distributed job needs: an output, a good
 *                 configuration, the host list, the state dirs
 *   local half    once per job: the pump scan, or direct mode's lookup
 *                 and the preprocessor.  Before a slot is taken when
 *                 every host would get the same request
 *                 (bc_rjob_host_independent), else at the first host
 *                 that needs it
 *   try a host    a slot of the best host not tried yet
 *                 (bc_rjob_next_host); its protocol and mode (pump or
 *                 plain, decided in one place); the local half if not
 *                 done; the caches asked once (client/jobcache.h); send;
 *                 take the reply
 *   note failure  a host that failed is counted, backed off and
 *                 remembered (bc_rjob_note_failure); the next host
 *   fallback      no host left: a local compile, by rule or as the
 *                 farm's failure, or an error with DISTCC_FALLBACK=0
 *                 (bc_rjob_verdict)
 *
 * bc_rjob_run is the whole sequence; the other functions are its steps
 * and decisions, exposed for tests/unit/test_rjob.c.
 */
#ifndef BC_RJOB_H
#define BC_RJOB_H

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/hosts.h"
#include "client/cconf.h"
#include "client/cjob.h"
#include "client/hostsel.h"
#include "client/pump.h"

/* Why no host took the job so far: what the fallback says and counts. */
struct bc_rjob_tally {
	int host_failed;	/* a host failed: no answer, or a farm-side
				 * status (the compiler died, the daemon's
				 * own error) */
	int dia_skipped;	/* a host could not return the .dia */
	int pump_skipped;	/* a pump-only job met a host it cannot use */
	const char *no_host_why;	/* static: why no host was left
				 * ("no-usable-host", "no-free-slot") or
				 * the preprocessor failed ("cpp-run",
				 * "cpp-output") */
	const char *last_why;	/* static: the last host failure's reason */
	char *last_host;	/* its host, as written (malloc'd) */
	char last_err[BC_ERRLEN];	/* its detail */
};

/* The state of one distributed job, across the hosts it tries. */
struct bc_rjob {
	struct bc_cjob *job;
	struct bc_hostlist hl;
	unsigned char *tried;		/* hosts tried, by index in hl */
	struct bc_buf doti;		/* the preprocessed source (plain) */
	int local_done;			/* doti holds it */
	struct bc_cpump pump;		/* the scan (pump mode) */
	int pump_state;			/* bc_cpump_try's: 0 not scanned yet,
					 * 1 pump mode, -1 plain mode */
	int looked_up;			/* the caches were asked (once) */
	int inline_lookup;		/* the compile request asks the cache
					 * (FLAG_HIT_MARK): 1, then 2 once its
					 * answer is counted */
	char ident[BC_HASH_HEXLEN + 1];	/* compiler identity a plain
					 * request sends, "" none */
	struct bc_rjob_tally tally;
	int rc;				/* the exit code, once done */
};

/* What a step leaves to do. */
enum bc_rjob_step {
	BC_RJOB_GO,		/* go on (with this host) */
	BC_RJOB_NEXT,		/* try the next host */
	BC_RJOB_NO_HOST,	/* no host left: the fallback */
	BC_RJOB_DONE		/* the job is done, rc set */
};

/*
 * Distribute job j (classified as remote, client/args.h).  Returns the
 * process exit code (when it returns: a local compile execs).
 */
int bc_rjob_run(struct bc_cjob *j);

/* Empty state for job j (no I/O); bc_rjob_free releases it. */
void bc_rjob_init(struct bc_rjob *rj, struct bc_cjob *j);
void bc_rjob_free(struct bc_rjob *rj);

/*
 * The checks a distributed job needs, then the host list and the state
 * dirs.  BC_RJOB_GO, or BC_RJOB_DONE with rj->rc set (compiled locally:
 * no output to ship, no hosts; or an error: configuration, host list,
 * state dirs).
 */
enum bc_rjob_step bc_rjob_start(struct bc_rjob *rj);

/*
 * A slot of the best host not tried yet (bc_hostsel_pick: the fastest
 * expected, equal hosts in list order; ,down, ,auth and backed-off hosts
 * never), marked tried.  BC_OK; otherwise no host is left and
 * rj->tally.no_host_why says why.
 */
int bc_rjob_next_host(struct bc_rjob *rj, struct bc_slot *slot);

/*
 * A failed exchange with h (r, why, err from the probe, bc_remote_compile
 * or a pump compile; an SSH host's own account replaces them): counted
 * (host_failures, the fault kind, host_failure_by_reason:<why>), h
 * marked backed off with the reason unless DISTCC_BACKOFF_PERIOD is 0 or
 * h refused only this job (BC_ERR_DENIED, BC_ERR_BUSY), and remembered
 * for the fallback's message.
 */
void bc_rjob_note_failure(struct bc_rjob *rj, const struct bc_host *h,
    int r, const char *why, char *err);

/* What happens when no host took the job. */
enum bc_rjob_verdict {
	BC_RJOB_PUMP_ONLY,	/* a pump-only job no host could take in pump
				 * mode, none failed: local as a job that is
				 * not distributable, whatever
				 * DISTCC_FALLBACK says */
	BC_RJOB_FAIL,		/* DISTCC_FALLBACK=0: no local compile */
	BC_RJOB_LOCAL,		/* only hosts that cannot return a .dia:
				 * local, counted as local_by_reason */
	BC_RJOB_FALLBACK	/* the farm failed or was unusable: local,
				 * counted as fallback_by_reason */
};

/*
 * The verdict from the tally (fallback: DISTCC_FALLBACK; pump_only: the
 * plan's), a pure function.  *reason is the reason the local compile is
 * counted under (the last failure's, or why no host was left), NULL for
 * BC_RJOB_FAIL.
 */
enum bc_rjob_verdict bc_rjob_verdict(const struct bc_rjob_tally *t,
    int fallback, const char *pump_only, const char **reason);

/*
 * 1 if a remote compile's wait status is the farm's failure, not the
 * user's compile error: a signal, an exit of 128 or more (the compiler
 * died), or distcc's own codes for daemon-side failures (100..118).
 */
int bc_rjob_farm_failure(uint32_t status);

/* The wire protocol toward h, a boltccd (bolt) or not: BC_PROTO_BOLT,
 * 1, 2, or 3 (",cpp,lzo": pump mode when the scan allows). */
int bc_rjob_host_proto(const struct bc_host *h, int bolt);
/* Whether a job toward h in proto wants pump mode: protocol 3, or BOLT
 * pump on a boltccd (the default unless ",plain" or BOLTCC_PUMP=0). */
int bc_rjob_wants_pump(const struct bc_cconf *cfg, const struct bc_host *h,
    int proto);

/*
 * Whether the job's local half can be done before a slot is taken:
 * every host of the list would get the same request (all known BOLT
 * hosts, or all known stock distccd hosts, with the same pump choice,
 * and no "localhost"; a .dia wanted only from BOLT hosts).  Sets *proto
 * and *pump (pump mode wanted) then.
 */
int bc_rjob_host_independent(const struct bc_rjob *rj, int *proto,
    int *pump);

/*
 * For a job that may leave only in pump mode (plan.pump_only): 1 if it
 * may go to a host of protocol proto (pumping: in pump mode).  A
 * boltccd's BOLT pump gives the local object, coverage or debug info; a
 * boltccd compiling a .i does not.  A stock distccd's debug info names
 * its own temp dir in any mode, as with distcc itself, so "debug-info"
 * does not keep jobs from stock daemons (doc/fidelity.md); coverage does
 * (its mapping would name the temp tree).
 */
int bc_rjob_pump_gives_local(const char *pump_only, int pumping, int proto);

#endif
