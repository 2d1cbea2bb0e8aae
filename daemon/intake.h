/*
 * intake.h - connections whose request is not whole yet, held by the
 * daemon's parent.
 *
 * A connection costs a descriptor, not a worker, until its request is
 * whole: the parent reads it (non-blocking) into a buffer, and only a
 * whole request (or a large one whose bytes keep coming: past
 * BC_MAX_INTAKE_BYTES) is handed to a worker, which reads those bytes
 * first (bc_io_preload).  The table is bounded: BC_MAX_INTAKE, lowered
 * to what RLIMIT_NOFILE allows, in all and three quarters of it per
 * client address; at a bound the connection that sent nothing for the
 * longest goes, not the newcomer.  A connection whose request is not
 * whole after --request-timeout goes too, and the log says so.
 */
#ifndef BC_INTAKE_H
#define BC_INTAKE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define BC_INTAKE_PEER_LEN 80

struct bc_intake_conn {
	int fd;
	char peer[BC_INTAKE_PEER_LEN];	/* address:port, for the log */
	char addr[BC_INTAKE_PEER_LEN];	/* address, for its bound */
	struct bc_buf in;		/* what arrived so far */
	int64_t t_accept, t_last;	/* accepted; last bytes in */
	int ready;			/* whole, waits for a worker */
	int sending;			/* in is the parent's reply, sent up
					 * to sent (bc_intake_reply) */
	size_t sent;
};

struct bc_intake {
	struct bc_intake_conn *v;
	size_t n, cap;
	size_t max_total, max_per_addr;
	size_t pending;		/* bytes of replies not sent yet */
};

/* Bounds from the descriptors this process may open (RLIMIT_NOFILE's
 * soft limit; at most BC_MAX_INTAKE). */
void bc_intake_init(struct bc_intake *t);
void bc_intake_free(struct bc_intake *t);

/*
 * Take an accepted connection (fd made non-blocking).  If a bound is
 * reached first, the stalled connection that has been silent longest
 * (of that address, or of all) is dropped and logged; *dropped counts
 * them.
 */
void bc_intake_add(struct bc_intake *t, int fd, const char *peer,
    const char *addr, int64_t now, unsigned *dropped);
/* Drop the oldest stalled connection (accept ran out of descriptors):
 * 1 if there was one. */
int bc_intake_drop_oldest(struct bc_intake *t, const char *why);

/*
 * Read what connection i has sent.  1: its request is whole now (or
 * large and still coming): ready; 0: more to come; -1: it closed or
 * failed before that (removed, logged at debug level).
 */
int bc_intake_read(struct bc_intake *t, size_t i, int64_t now);

/* The limits on a request's reading (boltccd's options). */
struct bc_intake_limits {
	int request_ms, request_sec;	/* --request-timeout: since accept */
	int io_ms, io_sec;		/* --io-timeout: since the last bytes */
};
/* Cut off the connections whose request is not whole in time, saying
 * which limit (and telling a BOLT client), and those whose reply made
 * no progress for --io-timeout: their count. */
unsigned bc_intake_expire(struct bc_intake *t, int64_t now,
    const struct bc_intake_limits *lim);

/* Remove entry i; its fd is closed unless keep_fd (handed to a worker).
 * The buffer stays valid in a child forked before this. */
void bc_intake_remove(struct bc_intake *t, size_t i, int keep_fd);

/*
 * Answer connection i with the reply in out (taken; the parent's own
 * answer, daemon/fasthit.h): what the socket takes now is sent at once,
 * the rest when it is writable (bc_intake_write), bounded by
 * --io-timeout; the connection is closed after the last byte.
 */
void bc_intake_reply(struct bc_intake *t, size_t i, struct bc_buf *out,
    int64_t now);
/* Send more of connection i's reply: 1 all sent (removed), 0 more to
 * send, -1 the client is gone (removed, logged). */
int bc_intake_write(struct bc_intake *t, size_t i, int64_t now);

/* The oldest ready connection, or (size_t)-1. */
size_t bc_intake_next_ready(const struct bc_intake *t);

/*
 * Is the request in p (n bytes) whole?  BC_OK: yes (a DIST request with
 * its DOTI or its protocol-3 files; a BOLT request with its manifest
 * when it is a pump job); BC_ERR_TRUNCATED or BC_ERR_EOF: not yet; any
 * other error: it never will be (a worker answers it, saying why).
 */
int bc_intake_whole(const uint8_t *p, size_t n, char *err);

#endif
