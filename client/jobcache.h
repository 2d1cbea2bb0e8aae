/*
 * jobcache.h - asking the caches for one job (doc/cache.md), the step of
 * a remote job (client/rjob.c) before it is sent: the local tier
 * (client/hitcache.h) first, then the key's owner among the BOLT hosts,
 * which knows where its keys went, then every BOLT host when the owner
 * cannot tell (client/lookup.h).  Three ways to know the key: from the
 * preprocessed source (plain mode), from the pump scan's manifest (pump
 * mode), or from direct mode's manifest without preprocessing at all
 * (client/direct.h).
 *
 * A hit is written out like a remote result (object, .dia, .d, the
 * messages) and counted; host failures met on the way get backoff marks.
 */
#ifndef BC_JOBCACHE_H
#define BC_JOBCACHE_H

#include <sys/types.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/hosts.h"
#include "common/proto.h"
#include "client/cjob.h"
#include "client/pump.h"

/*
 * Hosts whose artifact cache can be asked: BOLT hosts (declared, or
 * learned by the probe) that are usable now (not ,down, ,auth or backed
 * off).  A malloc'd array of hl->n flags (at least one byte).
 */
unsigned char *bc_jobcache_candidates(const struct bc_cjob *j,
    const struct bc_hostlist *hl);

/*
 * Plain mode: the key of the preprocessed source doti.  `here`: the host
 * the job goes to.  Returns 1 with *rc set if a hit was written out (or
 * writing it failed); 0 to compile, with ident (the compiler identity,
 * "" if unknown), *owner (the key's owner among the BOLT hosts, -1 if
 * none) and *inl (1: the one cache to ask is `here`'s, so the compile
 * request asks it, FLAG_HIT_MARK) set.
 */
int bc_jobcache_plain(struct bc_cjob *j, const struct bc_hostlist *hl,
    const struct bc_buf *doti, size_t here, char ident[BC_HASH_HEXLEN + 1],
    ssize_t *owner, int *inl, int *rc);

/*
 * BOLT pump mode: the key is computed from the scan's manifest (names and
 * content hashes, cache/key.h) exactly as the daemon will compute it, so
 * nothing is preprocessed.  Sets p->identity and p->flags for the pump
 * request.  As bc_jobcache_plain.
 */
int bc_jobcache_pump(struct bc_cjob *j, const struct bc_hostlist *hl,
    struct bc_cpump *p, size_t here, ssize_t *owner, int *inl, int *rc);

/*
 * Direct mode: if the manifest of this exact command says which files
 * the preprocessor read and none changed, ask for the recorded key
 * without preprocessing (a miss is remembered in j->missed_key, so the
 * plain lookup that follows does not ask again).  Returns 1 with *rc set
 * if the job is done.
 */
int bc_jobcache_direct(struct bc_cjob *j, const struct bc_hostlist *hl,
    int *rc);

/* Keep a successful result of key in the local tier (best effort). */
void bc_jobcache_put_local(struct bc_cjob *j, const char *key,
    const struct bc_reply *rep);
/* Count a hit, and whether another working directory stored its entry
 * (the daemon's ORIG, asked for with FLAG_ORIGIN). */
void bc_jobcache_count_hit(struct bc_cjob *j, const struct bc_reply *rep);
/* After a good result from a preprocessed job: write the direct mode
 * manifest (what the preprocessor read, the key, its .d and stderr). */
void bc_jobcache_record_direct(struct bc_cjob *j, const struct bc_buf *doti);

#endif
