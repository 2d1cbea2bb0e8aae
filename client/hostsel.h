/*
 * hostsel.h - choosing a host and holding one of its slots, shared by
 * every boltcc process of a user through lock files in $DIR/lock/
 * (distcc's scheme, spec distcc-protocol.md 8.6):
 *
 *   cpu_tcp_<host>_<port>_<slot>   a remote TCP slot
 *   cpu_ssh_<host>_<slot>          a remote SSH slot
 *   cpu_localhost_<slot>           a local slot (fallbacks, "localhost")
 *   backoff_tcp_<host>_<port>_0    the host failed recently (mtime; the
 *                                  content: why, one line, or "x")
 *
 * A slot is taken while its file has an exclusive fcntl() lock; the lock
 * disappears with the process, so a crash never leaks a slot.  Host
 * names are sanitized to [A-Za-z0-9._-] in file names.
 */
#ifndef BC_HOSTSEL_H
#define BC_HOSTSEL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "common/hosts.h"

struct bc_slot {
	int fd;				/* locked file, -1 = none */
	const struct bc_host *host;	/* NULL for a plain local slot */
	int index;			/* slot number */
	size_t host_index;		/* position in the host list */
	const char *lockdir;		/* whose waiters its release wakes
					 * (bc_hostsel_pick's), or NULL */
};
#define BC_SLOT_INIT { -1, NULL, 0, 0, NULL }

/*
 * One host as the scheduler sees it (input of bc_hostsel_choose).
 */
struct bc_hostsel_cand {
	int usable;		/* not down, not backed off, not tried */
	int slots;		/* its limit */
	int busy;		/* slots held now by any process of the user */
	int64_t est_us;		/* observed job time (EWMA), 0 = unknown */
};

#define BC_HOSTSEL_WAIT	(-1)	/* bc_hostsel_choose: wait for a slot */
#define BC_HOSTSEL_NONE	(-2)	/* bc_hostsel_choose: no usable host */

/*
 * The scheduling decision, a pure function.  Each usable host's expected
 * job time is its est_us (unknown: the mean of the known ones, so a new
 * host gets work).  Among hosts with a free slot the one with the lowest
 * expected time wins (within 5%: the least loaded, busy/slots, then list
 * order, so equal hosts fill breadth-first as in distcc).  The key's
 * owner (owner >= 0) wins when it has a free slot and is at most 1.5x
 * slower than that.  If hosts at least 1.5x faster than the best free
 * one are all busy, waiting for them is chosen when it is expected to
 * finish sooner: they free slots at sum(slots/est) per unit of time and
 * `ahead` other waiters come first.  Returns a host index, BC_HOSTSEL_WAIT
 * or BC_HOSTSEL_NONE.
 */
ssize_t bc_hostsel_choose(const struct bc_hostsel_cand *c, size_t n,
    ssize_t owner, int ahead);

/*
 * Pick a host with bc_hostsel_choose and lock one of its slots (the
 * lowest free index).  Hosts with tried[i] != 0, ,down, ,auth or a fresh
 * backoff mark are not usable.  While waiting, the process sleeps on the
 * FIFO $lockdir/wake, which bc_hostsel_release writes to, with a timeout
 * of 1 ms doubling to 50 ms (for slots freed by a crash or an exec'd
 * local compiler), for up to max_wait_ms in all; a waiter holds a byte
 * lock in $lockdir/waiters whose offset is its place in the queue.
 * lockdir is $DIR/lock (must exist).
 * Returns BC_OK, BC_ERR_NOENT (no candidate host at all) or BC_ERR_BUSY
 * (waited max_wait_ms).  A "localhost" entry's slot is inherited across
 * exec (no close-on-exec) so it stays taken while an exec'd compiler runs.
 */
int bc_hostsel_pick(const struct bc_hostlist *hl, const char *lockdir,
    const unsigned char *tried, int backoff_period, int64_t max_wait_ms,
    struct bc_slot *out, char *err);

/*
 * Lock one of nslots local slots (cpu_localhost_N), waiting up to
 * max_wait_ms.  The lock fd is inherited across exec so the slot stays
 * taken while an exec'd compiler runs.  BC_OK or BC_ERR_BUSY.
 */
int bc_hostsel_local_slot(const char *lockdir, int nslots,
    int64_t max_wait_ms, struct bc_slot *out, char *err);

/* Release a slot (closing the file drops the lock) and wake processes
 * waiting for one; safe on empty slots. */
void bc_hostsel_release(struct bc_slot *s);

/*
 * Per-host observed job time: an EWMA of the durations of successful
 * remote jobs (request sent to reply read), in $lockdir/perf_<kind>_<host
 * key>, replaced by temp file + rename (a lost update among concurrent
 * clients only loses one sample).  Values older than
 * BC_HOSTSEL_PERF_STALE_SEC are ignored, so a host that was slow gets
 * measured again.  get returns 0 when unknown.
 */
#define BC_HOSTSEL_PERF_STALE_SEC 120
void bc_hostsel_observe(const char *lockdir, const struct bc_host *h,
    int64_t us);
int64_t bc_hostsel_perf_get(const char *lockdir, const struct bc_host *h);

/*
 * May a job move from host `from` (where it holds a slot) to the key's
 * owner `to`?  Yes unless both have recorded job times and the owner's
 * is more than 1.5x that of `from`: the affinity rule of
 * bc_hostsel_choose, for the move after the cache lookup.
 */
int bc_hostsel_owner_ok(const char *lockdir, const struct bc_host *to,
    const struct bc_host *from);

/* File name (no directory) of a host's backoff mark or slot lock. */
int bc_hostsel_backoff_name(const struct bc_host *h, char *out, size_t outlen);
int bc_hostsel_lock_name(const struct bc_host *h, int slot, char *out,
    size_t outlen);
/* Sanitized "<host>_<port>" for state file names. */
int bc_hostsel_host_key(const struct bc_host *h, char *out, size_t outlen);

/* Backoff marks: touch, remove, and test "younger than period seconds". */
int bc_hostsel_backoff_mark(const char *lockdir, const struct bc_host *h);
void bc_hostsel_backoff_clear(const char *lockdir, const struct bc_host *h);
int bc_hostsel_backed_off(const char *lockdir, const struct bc_host *h,
    int period);
/* A mark that records why (one line, at most 240 bytes kept, printable
 * ASCII), for --show-hosts; why NULL or "" records none. */
int bc_hostsel_backoff_mark_why(const char *lockdir, const struct bc_host *h,
    const char *why);
/*
 * 1 if h is backed off (as bc_hostsel_backed_off), with *until the end of
 * its backoff and why the recorded reason ("" when none); else 0.
 */
int bc_hostsel_backoff_info(const char *lockdir, const struct bc_host *h,
    int period, time_t *until, char *why, size_t whylen);

/* Slots of h held right now by any process of the user (0..limit), or
 * an error; creates no lock file. */
int bc_hostsel_busy_slots(const char *lockdir, const struct bc_host *h);

#endif
