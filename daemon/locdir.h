/*
 * locdir.h - where the keys a daemon owns were compiled (doc/cache.md,
 * "Locations").
 *
 * A client asks only a key's owner (LOCATE) and tells it where it will
 * compile the job on a miss; the owner remembers that host for the key
 * and sends the next client there (LOCN) instead of making every client
 * ask every host.  A location is a hint: the host it names serves only
 * what it compiled itself, and a wrong hint costs one lookup that
 * misses, after which the client replaces it.
 *
 * The directory lives in boltccd's parent (it answers most LOCATEs
 * without a worker), bounded: BC_LOCDIR_SLOTS keys by their first 16
 * bytes (a collision, 2^-64 per pair, only gives a wrong hint), at most
 * BC_LOCDIR_HOSTS distinct host names; a full neighbourhood overwrites
 * its oldest slot.  It is kept across restarts in the cache index
 * (cache/store.h, bc_cache_loc_*), written by the cache keeper.
 */
#ifndef BC_LOCDIR_H
#define BC_LOCDIR_H

#include <stddef.h>
#include <stdint.h>

#include "common/limits.h"

#define BC_LOCDIR_SLOTS (1u << 18)	/* keys remembered (6 MiB) */
#define BC_LOCDIR_HOSTS 1024		/* distinct host names */
#define BC_LOCDIR_PROBE 8		/* slots searched per key */

struct bc_locdir_slot;

struct bc_locdir {
	struct bc_locdir_slot *v;	/* BC_LOCDIR_SLOTS, NULL until a put */
	char **hosts;			/* interned names, index + 1 in slots */
	size_t nhosts;
	uint32_t tick;			/* age of puts, for overwriting */
};

void bc_locdir_init(struct bc_locdir *d);
void bc_locdir_free(struct bc_locdir *d);

/* The host recorded for key (64 hex digits), or NULL. */
const char *bc_locdir_get(const struct bc_locdir *d, const char *key);

/* Record host for key; "" forgets the key.  Returns 0, or -1 if key is
 * not 64 hex digits, host is too long or the host table is full. */
int bc_locdir_put(struct bc_locdir *d, const char *key, const char *host);

/*
 * The answer to a LOCATE of key that missed this daemon's cache, from
 * client_host (where the client will compile, "" = here) and flags
 * (BC_LOCATE_*): returns the host to send the client to (LOCN), or NULL
 * for MISS.  *record is set to 1 when the directory should now say
 * client_host for key (the caller does the put, in the parent).
 */
const char *bc_locdir_decide(const struct bc_locdir *d, const char *key,
    const char *client_host, uint32_t flags, int *record);

#endif
