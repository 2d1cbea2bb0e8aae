/*
 * fasthit.h - whole requests the daemon's parent answers itself, with no
 * worker process: a lookup of a key the cache cannot have (most of a
 * farm's lookups miss: a client asks every host), and a cache hit, of a
 * BOLT lookup or of a BOLT pump request, the incremental build's hot path
 * (doc/cache.md, "Where a hit's time goes").
 *
 * The parent never waits and never opens the cache's index here: a hit
 * is a blob read and verified (its checksum covers every byte), a reply
 * built from its stored frames, and a TOUCH record for the cache keeper
 * (which counts the hit and refreshes its LRU place).  Anything else (a
 * missing, damaged or in-flight entry, a refusal, a key that needs a
 * header map's contents, a full keeper pipe, a large reply) is left to
 * a worker, which decides it as it always did: an answer given here is
 * always the one a worker would give.
 */
#ifndef BC_FASTHIT_H
#define BC_FASTHIT_H

#include <stddef.h>

#include "cache/store.h"
#include "common/buf.h"
#include "job.h"
#include "stats.h"

struct bc_fasthit {
	struct bc_cache *cache;	/* opened lazily; blob files only */
	char *identity_memo;	/* <cache dir>/identity (cache/key.h) */
	int disabled;		/* the cache directory could not be used */
};

enum bc_fasthit_kind {
	BC_FAST_NONE,		/* for a worker */
	BC_FAST_ABSENT,		/* a lookup's MISS or LOCN */
	BC_FAST_HIT		/* a cached result */
};

struct bc_fasthit_answer {
	enum bc_fasthit_kind kind;
	struct bc_buf out;		/* the reply, for the caller to send */
	struct bc_cache_loc rec;	/* ABSENT: a key's new location, or
					 * rec.key "" */
	struct bc_job_event ev;		/* HIT: the job's end, for the stats */
};

void bc_fasthit_init(struct bc_fasthit *fh);
void bc_fasthit_free(struct bc_fasthit *fh);
void bc_fasthit_answer_init(struct bc_fasthit_answer *a);
void bc_fasthit_answer_free(struct bc_fasthit_answer *a);

/*
 * The whole request in (n bytes, from peer): an answer in a (kind not
 * NONE: the caller sends a->out, closes, counts a->ev or records
 * a->rec), or BC_FAST_NONE: a worker serves it.  A hit is logged as a
 * worker logs it and its TOUCH record is sent to conf->keeper_fd before
 * this returns.
 */
enum bc_fasthit_kind bc_fasthit_answer(struct bc_fasthit *fh,
    const struct bc_job_conf *conf, const char *peer, const void *in,
    size_t n, struct bc_fasthit_answer *a);

#endif
