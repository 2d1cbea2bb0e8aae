/*
 * hostsel.h - choosing a host and holding one of its slots, shared by
 * every boltcc process of a user through lock files in $DIR/lock/
 * (distcc's scheme, spec distcc-protocol.md 8.6):
 *
 *   cpu_tcp_<host>_<port>_<slot>   a remote TCP slot
 *   cpu_ssh_<host>_<slot>          a remote SSH slot
 *   cpu_localhost_<slot>           a local slot (fallbacks, "localhost")
 *   backoff_tcp_<host>_<port>_0    the host failed recently
 *
 * A slot is taken while its file has an exclusive fcntl() lock; the lock
 * disappears with the process, so a crash never leaks a slot.  Host
 * names are sanitized to [A-Za-z0-9._-] in file names.
 */
#ifndef BC_HOSTSEL_H
#define BC_HOSTSEL_H

#include <stdint.h>
#include "common/hosts.h"

struct bc_slot {
	int fd;				/* locked file, -1 = none */
	const struct bc_host *host;	/* NULL for a plain local slot */
	int index;			/* slot number */
	size_t host_index;		/* position in the host list */
};
#define BC_SLOT_INIT { -1, NULL, 0, 0 }

/*
 * Pick a host and lock one of its slots.  Order: slot index 0 of every
 * host in list order, then index 1, ...; hosts with tried[i] != 0, ,down,
 * ,auth or a fresh backoff mark are skipped.  When every candidate slot
 * is busy, sleep (10 ms doubling to 500 ms) and retry for up to
 * max_wait_ms.  lockdir is $DIR/lock (must exist).
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

/* Release a slot (closing the file drops the lock); safe on empty slots. */
void bc_hostsel_release(struct bc_slot *s);

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

#endif
