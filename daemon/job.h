/*
 * job.h - one client connection in a worker process: read the request
 * with deadlines, check it against the policy, rewrite the argv to the
 * job's private temp dir, take a compile slot, run the compiler (no
 * shell, own process group, deadline, killed if the client's connection
 * fails; a half-close after the request is the end of its sending),
 * reply, clean up, report to the parent.
 */
#ifndef BC_JOB_H
#define BC_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/proto.h"
#include "common/util.h"
#include "acl.h"
#include "locdir.h"
#include "policy.h"
#include "stats.h"

struct bc_job_conf {
	const struct bc_policy *policy;
	int jobs;		/* compile slots = bytes 0..jobs-1 of slot_fd */
	int slot_fd;		/* lock file shared by all workers, -1 = none */
	int event_fd;		/* pipe to the parent, -1 = none */
	int io_timeout_ms;	/* per blocking read/write */
	int request_timeout_ms;	/* to receive the whole request */
	int job_timeout_ms;	/* whole job incl. waiting for a slot */
	const char *version;	/* for BOLT hello replies */
	const char *cache_dir;	/* artifact cache (cache/store.h); NULL = off */
	const struct bc_locdir *locdir;	/* the parent's key locations (a
					 * snapshot in a worker), or NULL */
	uint64_t cache_max;	/* --cache-size in bytes */
	int keeper_fd;		/* the cache keeper's pipe (keeper.h), -1 none:
				 * a worker writes its stores' rows itself */
	const struct bc_acl *admin_allow;	/* --admin-allow (or NULL):
					 * who besides loopback may ZERO */
};

/* The limits that can end a job, named in its messages. */
enum bc_job_limit {
	BC_LIMIT_REQUEST,	/* --request-timeout: receiving the request */
	BC_LIMIT_JOB,		/* --job-timeout: the whole job */
	BC_LIMIT_IO,		/* --io-timeout: one read or write */
	BC_LIMIT_REPLY		/* --job-timeout again, from the reply's start */
};

/*
 * The name of a limit for log lines and client messages (pure), e.g.
 * "request timeout (--request-timeout 120 s)": which limit, its option
 * and its value (ms shown as seconds when whole).  out gets at most n
 * bytes, always terminated.
 */
void bc_job_limit_name(enum bc_job_limit which, int ms, char *out, size_t n);

/* Serve one connection (rfd/wfd may be the same socket); peer is a
 * printable label for logs.  Never exits the process. */
void bc_job_serve(const struct bc_job_conf *conf, int rfd, int wfd,
    const char *peer);
/* The same, with the first npre bytes of the connection read already
 * (by the parent: daemon/intake.h); pre must stay valid. */
void bc_job_serve_from(const struct bc_job_conf *conf, int rfd, int wfd,
    const char *peer, const void *pre, size_t npre);

/*
 * The answer to a lookup (LOOKUP, LOOKUPF or LOCATE) of a key this
 * daemon does not have: MISS, or for LOCATE the host conf->locdir names
 * (LOCN); rec->key is set when the key's location changes (the caller
 * records rec), else "".  BC_OK or an error with e.
 */
int bc_job_write_absent(const struct bc_job_conf *conf,
    const struct bc_request *req, struct bc_buf *out,
    struct bc_cache_loc *rec, char *e);

/* A job's end in the log, as every worker says it (the outcome, the
 * compiler's wait status, the time, the compiler and the source). */
void bc_job_log_end(const char *peer, int outcome, int status, int ret,
    int64_t ms, const char *compiler, const char *file);

/* A source's base name for the log (escaped, into file) and for the
 * stats (as sent, cut at a character boundary, into raw). */
void bc_job_name_src(const char *src, char *file, size_t filen, char *raw,
    size_t rawn);

#endif
