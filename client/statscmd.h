/*
 * statscmd.h - the client's statistics commands: `boltcc --stats` (or
 * `-s`) [-v] [--json], the page of client/statsview.h, and
 * `boltcc --zero-stats`, which resets this client's counters only (the
 * farm's are an operator's: boltccd --zero-stats, doc/cache.md).
 */
#ifndef BC_STATSCMD_H
#define BC_STATSCMD_H

#include "client/cconf.h"

/* 1 if words are only -v, --verbose, --json: "boltcc -s" followed by
 * them is --stats (ccache's -s); "boltcc -s foo.c" is "cc -s foo.c". */
int bc_statscmd_is_stats(int nwords, char **words);
/* --stats / -s; words: what follows.  The exit code. */
int bc_statscmd_main(const struct bc_cconf *cfg, int nwords, char **words);
/* --zero-stats.  The exit code. */
int bc_statscmd_zero(const struct bc_cconf *cfg);

#endif
