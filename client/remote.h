/*
 * remote.h - one job on one host: connect, send the request (distcc
 * protocol 1/2 or BOLT), read the whole reply.  Also the one-time BOLT
 * probe that tells a boltccd from a stock distccd, remembered in
 * $DIR/state/probe_<host>_<port> for an hour.
 *
 * Every failure returned here is a farm failure (the caller tries
 * another host or compiles locally); a compile error is a successful
 * call with a nonzero rep->status.
 */
#ifndef BC_REMOTE_H
#define BC_REMOTE_H

#include <stdint.h>
#include "common/hosts.h"
#include "common/proto.h"
#include "common/util.h"

#define BC_CONNECT_TIMEOUT_MS 4000
#define BC_PROBE_TTL_SEC 3600
#define BC_PROBE_IO_TIMEOUT_MS 10000	/* HELLO is answered at once */

struct bc_remote_job {
	const struct bc_host *host;
	int proto;			/* 1, 2 or BC_PROTO_BOLT */
	const struct bc_strv *argv;	/* remote argv */
	const char *cwd;		/* sent as CDIR (BOLT only) */
	uint32_t flags;			/* BOLT FLAG bits */
	const char *identity;		/* BOLT CMPI (compiler identity hex)
					 * or NULL */
	const void *doti;		/* preprocessed source */
	size_t doti_len;
	int connect_timeout_ms;
	int io_timeout_ms;
	const char *statedir;		/* remembers which BOLT hosts send
					 * heartbeats (NULL: no memory) */
};

struct bc_remote_counts {
	uint64_t sent;
	uint64_t received;
};

/*
 * Run the job.  On BC_OK rep holds the reply (status may be nonzero).
 * On error, *why is a short static reason ("connect", "timeout", "eof",
 * "protocol", "refused", "io") and err the detail.
 *
 * A BOLT compile asks for heartbeats (FLAG_HEARTBEAT): once the daemon
 * sent a BEAT, silence longer than BC_BEAT_TIMEOUT_MS fails the job; a
 * host that sent them before ($DIR/state/beat_<host>, an hour) gets that
 * short limit from the first byte, so a hung daemon is noticed quickly
 * without cutting long compiles.  A daemon that ignores the flag keeps
 * the normal DISTCC_IO_TIMEOUT.
 */
int bc_remote_compile(const struct bc_remote_job *job, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err);

/*
 * Send a BOLT hello.  *is_bolt = 1 if a boltccd answered, 0 if the peer
 * closed or answered something else (a stock distccd).  A connection
 * that cannot be made, or a peer silent past the IO timeout, is an error
 * (a host failure) and must not be remembered.
 */
int bc_remote_probe(const struct bc_host *h, int connect_timeout_ms,
    int io_timeout_ms, int *is_bolt, char *err);

/*
 * The remembered probe answer: 1 bolt, 0 distcc, -1 unknown or stale.
 */
int bc_remote_probe_cached(const char *statedir, const struct bc_host *h);
void bc_remote_probe_remember(const char *statedir, const struct bc_host *h,
    int is_bolt);

/*
 * Heartbeat memory ($DIR/state/beat_<host>): 1 the host sent BEATs
 * within the last half hour, 2 within the hour, 0 not known to.
 */
int bc_remote_beat_known(const char *statedir, const struct bc_host *h);
void bc_remote_beat_remember(const char *statedir, const struct bc_host *h);

/*
 * Connect to h (TCP, or a channel of an SSH session, client/ssh.h); on
 * failure *why is "connect-timeout" or "connect".
 */
int bc_remote_connect(const struct bc_host *h, int connect_timeout_ms,
    int *fd, const char **why, char *err);

/* Static short reason for a BC_ERR_* code of a failed exchange. */
const char *bc_remote_reason(int r);

/*
 * The client stats counter for a failed exchange (r, *why from
 * bc_remote_compile or a probe): "fault_timeouts" (a host silent past a
 * limit, or a connect that timed out), "fault_conn_reset" (closed or
 * reset mid-job), "fault_connect" (refused/unreachable), or NULL (a
 * refusal, a protocol error, our own encoding).
 */
const char *bc_remote_fault_counter(int r, const char *why);

#endif
