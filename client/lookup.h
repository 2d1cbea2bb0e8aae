/*
 * lookup.h - asking the hosts' artifact caches before shipping a job
 * (doc/cache.md).  Each cache key has an owner among the BOLT hosts of
 * the list (rendezvous hashing: the highest SHA-256(key, host:port)), so
 * every client with the same host list sends a job to the same daemon
 * when it can.  A busy owner means another daemon compiles (and stores)
 * the job, so the owner keeps a directory of where its keys went: a
 * client asks the owner (LOCATE) and, if told, the host that has the key.
 * When the owner cannot tell, every BOLT host is asked at once: the
 * requests go out together, the replies are read owner first, and the
 * first hit wins.  The inputs are never sent for a lookup.
 */
#ifndef BC_LOOKUP_H
#define BC_LOOKUP_H

#include <stddef.h>
#include <sys/types.h>

#include "common/hosts.h"
#include "common/proto.h"

/* Per-step limit for reading a lookup answer (a lower DISTCC_IO_TIMEOUT
 * wins): a daemon answers at once, a hung one must not hold the job. */
#define BC_LOOKUP_IO_TIMEOUT_MS 5000

/* Host index of the owner of key among hosts with cand[i] != 0, or -1. */
ssize_t bc_lookup_owner(const struct bc_hostlist *hl,
    const unsigned char *cand, const char *key);

#define BC_LOOKUP_MAX_FAILED 8	/* failed hosts noted per lookup */

struct bc_lookup_result {
	size_t asked;		/* hosts the lookup reached */
	ssize_t hit_host;	/* host index of the hit, -1 = miss */
	unsigned long long sent, received;	/* bytes */
	/* hosts that could not be asked or did not answer (dead, cut off,
	 * hung), for bc_lookup_note_failed */
	size_t nfailed;
	size_t failed[BC_LOOKUP_MAX_FAILED];
	int failed_r[BC_LOOKUP_MAX_FAILED];	/* BC_ERR_* */
};

/*
 * Ask every candidate host (owner first) for key; origin: the client's
 * (cache/key.h bc_cache_origin, "" none), so a hit says whether another
 * working directory stored it (rep->origin).  BC_OK with rep filled
 * and res->hit_host >= 0 on a hit; BC_ERR_NOENT when every host missed
 * or could not be asked (a failed host is only logged: the compile that
 * follows handles host failures).
 */
int bc_lookup_fanout(const struct bc_hostlist *hl, const unsigned char *cand,
    ssize_t owner, const char *key, const char *origin, int connect_timeout_ms,
    int io_timeout_ms, struct bc_reply *rep, struct bc_lookup_result *res,
    char *err);

/*
 * Ask only the key's owner (LOCATE, doc/cache.md "Locations"), telling it
 * the host at index `at` will compile the job if nobody has it (at ==
 * owner or < 0: the owner itself).  The owner answers a hit, MISS, or the
 * host that has (or is compiling) the key, which is then asked with a
 * LOOKUP; if that host misses, the owner is told to record `at` instead.
 * BC_OK with rep and res->hit_host on a hit; BC_ERR_NOENT on a miss;
 * BC_ERR_NOTSUP when the owner cannot answer LOCATE (an older boltccd,
 * or it failed: noted in res) or names a host that is not a candidate of
 * this list: then ask every host (bc_lookup_fanout).
 */
int bc_lookup_locate(const struct bc_hostlist *hl, const unsigned char *cand,
    size_t owner, ssize_t at, const char *key, const char *origin,
    int connect_timeout_ms,
    int io_timeout_ms, struct bc_reply *rep, struct bc_lookup_result *res,
    char *err);

/* A host's name in LOCATE and LOCN: "name:port" (TCP), "ssh:name". */
int bc_lookup_host_name(const struct bc_host *h, char *out, size_t outlen);

/*
 * After a fan-out: give each host that failed a backoff mark (so the
 * next jobs neither ask nor send to it) and count the fault in stats
 * (host_failures, host_failure_by_reason:lookup-<reason>, fault_*).
 * A dead or hung host would otherwise cost every job a lookup timeout.
 */
struct bc_cstats;
void bc_lookup_note_failed(const struct bc_hostlist *hl,
    const struct bc_lookup_result *res, const char *lockdir,
    int backoff_period, struct bc_cstats *stats);

#endif
