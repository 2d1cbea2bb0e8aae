/*
 * keeper.h - the cache keeper: one process (started by daemon/server.c)
 * that keeps the cache index open for the daemon's lifetime and writes
 * what the parent and the workers send it, a batch per transaction.
 *
 * Records go down one pipe, one write() each; a record is smaller than
 * PIPE_BUF, so writes from many processes never interleave.  The parent
 * sends key locations (a hint: dropped when the pipe is full); a worker
 * sends the row of a blob it stored, and writes the row itself when the
 * record cannot be sent, so no store is lost to a full pipe.  SYNC is
 * answered (its seq, on a second pipe) once every record sent before it
 * is committed: a stats page waits for it (at most a second, without
 * blocking the daemon's loop), so the counters it shows include every
 * store that was sent.
 */
#ifndef BOLTCC_DAEMON_KEEPER_H
#define BOLTCC_DAEMON_KEEPER_H

#include <stdint.h>

#include "cache/store.h"

#define BC_KEEP_LOC 1		/* u.loc: a key's location (the parent) */
#define BC_KEEP_STORED 2	/* u.stored: the row of a stored blob */
#define BC_KEEP_SYNC 3		/* answer seq when all before are written */
#define BC_KEEP_TOUCH 4		/* u.touch: a hit a worker served */

/* A hit (or miss) to count, and a hit's LRU refresh: what
 * bc_cache_touch_from does, done by the keeper so that a worker serving
 * a hit never opens the index. */
struct bc_keeper_touch {
	char key[BC_HASH_HEXLEN + 1];
	char origin[BC_CACHE_ORIGIN_LEN + 1];	/* the requester's, or "" */
	int32_t count;		/* BC_CACHE_COUNT_* */
	int32_t hit;
	int64_t compile_ms;
};

struct bc_keeper_rec {
	uint32_t kind;
	uint32_t seq;		/* BC_KEEP_SYNC */
	union {
		struct bc_cache_loc loc;
		struct bc_cache_stored stored;
		struct bc_keeper_touch touch;
	} u;
};

#define BC_KEEPER_BATCH 64	/* records per read, at most */

/* One record, one write: 0 sent, -1 not (pipe full or keeper gone, fd
 * non-blocking; the caller decides). */
int bc_keeper_send(int fd, const struct bc_keeper_rec *r);

/* A worker's store: the row of a blob written with bc_cache_put_blob
 * goes to the keeper on fd, or into the index here when it cannot be
 * sent (fd < 0, pipe full, keeper gone).  As bc_cache_index_stored. */
int bc_keeper_store_row(int fd, struct bc_cache *c,
    const struct bc_cache_stored *row, char *err);

/* A bc_cache_touch_from as a record to the keeper on fd, nothing else:
 * 0 sent, -1 not (as bc_keeper_send).  The parent's fast path uses it
 * alone and leaves a hit it cannot count to a worker. */
int bc_keeper_touch_send(int fd, const char *key, int count, int hit,
    int64_t compile_ms, const char *origin);
/* A worker's bc_cache_touch_from: sent to the keeper on fd
 * (bc_keeper_touch_send), or done here (c, opening its index) when it
 * cannot be sent. */
void bc_keeper_touch(int fd, struct bc_cache *c, const char *key, int count,
    int hit, int64_t compile_ms, const char *origin);

/* The keeper's loop: records from rfd until EOF (every writer closed),
 * SYNC answers to ackfd. */
void bc_keeper_run(struct bc_cache *c, int rfd, int ackfd);

/* Ask for an answer (seq) once every record sent so far is written:
 * 0 sent, -1 not (as bc_keeper_send). */
int bc_keeper_sync(int fd, uint32_t seq);
/* Read the answers waiting on ackfd (non-blocking): 1 with *last set to
 * the newest, 0 none yet, -1 the keeper is gone. */
int bc_keeper_acks(int ackfd, uint32_t *last);
/* seq a answered by answer b (sequence numbers wrap) */
#define BC_KEEPER_DONE(a, b) ((int32_t)((b) - (a)) >= 0)

#endif
