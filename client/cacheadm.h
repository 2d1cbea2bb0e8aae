/*
 * cacheadm.h - `boltcc --cache`: the farm's artifact caches and the
 * client's local tier, seen and administered from the client
 * (doc/cache.md, "Administration"):
 *
 *   boltcc --cache [--json]                     each boltccd's cache and
 *                                               the local tier
 *   boltcc --cache clear [--local] [HOST...]    remove every entry
 *   boltcc --cache limit SIZE [HOST...]         a daemon's size limit
 *   boltcc --cache evict-older-than AGE [--local] [HOST...]
 *
 * The requests go to each host's stats port (POST /admin/..., see
 * daemon/admin.h); a daemon accepts them from loopback and its
 * --admin-allow addresses only.  Without HOST: every boltccd host of the
 * host list; --local: the local tier only.
 */
#ifndef BC_CACHEADM_H
#define BC_CACHEADM_H

#include "client/cconf.h"

/* argv: the arguments after "--cache"; the exit code. */
int bc_cacheadm_main(const struct bc_cconf *cfg, int argc, char **argv);

#endif
