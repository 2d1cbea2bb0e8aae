/*
 * selftest.h - `boltccd --self-test`: whether this install can serve
 * compile jobs, told by doing on this machine, with this binary, the work
 * a job does.  Checks, in order:
 *
 *   sha256    the hash primitive (CommonCrypto on macOS, OpenSSL
 *             elsewhere) against the FIPS 180-2 vectors
 *   compiler  the compiler a client's job names (default "cc"), resolved
 *             as the daemon resolves it (policy.h), run with the argv the
 *             daemon would run (job.h) on a tiny preprocessed C file in a
 *             private dir in the scratch dir (scratch.h)
 *   cache     the --cache-dir given, without changing it (it may be a
 *             running daemon's), and an entry stored and read back in a
 *             throwaway cache (cache/store.h)
 *   service   this executable started as a daemon on 127.0.0.1 with a
 *             throwaway cache, sent the same job as a distcc protocol-1
 *             client, its object compared with the local compile's
 *             (byte-identical at -g0), its /stats.json read, stopped
 *             with SIGTERM
 */
#ifndef BC_SELFTEST_H
#define BC_SELFTEST_H

#include <stdint.h>
#include <stdio.h>

#include "common/util.h"
#include "policy.h"

/* Limit of each step: a compile, the daemon's start, the job, the stats
 * page, the daemon's stop. */
#define BC_SELFTEST_STEP_MS 10000

struct bc_selftest_conf {
	const char *argv0;	/* boltccd's argv[0]: this executable, where
				 * the OS cannot tell (osdep.h) */
	const struct bc_policy *policy;	/* the daemon's allowlist and search
					 * path, set up as for serving */
	const struct bc_strv *allow;	/* --allow-compiler specs, passed on
					 * to the test daemon */
	const char *compiler;	/* what a client's job names; NULL = "cc" */
	const char *cache_dir;	/* --cache-dir as given, or NULL */
	int no_cache;		/* --no-cache */
	uint64_t cache_size;	/* --cache-size in bytes (0 = default) */
};

/*
 * Run the checks, printing "ok   NAME: what was done" or "FAIL NAME:
 * reason" for each, then a summary line, to out.  The scratch dir must
 * be chosen (bc_scratch_init).  Returns the number of checks that failed
 * (0: this install can serve).  Every file it makes is removed and every
 * process it starts is stopped before it returns, on every path; SIGINT,
 * SIGTERM and SIGHUP end the run early (and cleanly) while it runs.
 */
int bc_selftest_run(const struct bc_selftest_conf *conf, FILE *out);

#endif
