/*
 * statspage.h - reading the text pages of a farm host's stats port, as
 * boltcc fetches them: the "key value" lines of distccd's (and
 * boltccd's) page, and the boltccd_cache_* lines of boltccd's /metrics.
 * `boltcc --stats` shows both; `boltcc --monitor` takes what it needs
 * of a distccd's page (boltccd's /stats.json goes through common/json).
 *
 * The bytes are a peer's: they are read through a bc_buf view, never
 * past n; the caller's fetch limit bounds n and so every count.  The
 * page ends at a NUL byte if it has one.  Keys and values are pushed as
 * C strings (copies) onto the caller's vectors, which it frees.
 */
#ifndef BC_STATSPAGE_H
#define BC_STATSPAGE_H

#include <stddef.h>

#include "common/util.h"

/*
 * The "key value" lines of page (n bytes: an HTTP response, or only its
 * body): after the headers (the first blank line), between
 * <distccstats> and </distccstats> when those are there.  A line's key
 * ends at its first space, the value is the rest of the line (a CR
 * before the LF dropped); a line with no space, or starting with one,
 * is skipped.
 */
void bc_statspage_parse(const void *page, size_t n, struct bc_strv *keys,
    struct bc_strv *vals);
/*
 * The cache counters of a /metrics page: "boltccd_cache_<name>[_total]
 * VALUE" lines (VALUE after the last space) become name -> VALUE, and
 * boltccd_cache_uncacheable_total{reason="R"} becomes "uncacheable:R";
 * a line with no space, or no name after the prefix, is skipped.
 * Returns 1 if a counter other than the reasons was found (the host has
 * a cache), else 0.
 */
int bc_statspage_cache_metrics(const void *page, size_t n,
    struct bc_strv *keys, struct bc_strv *vals);
/*
 * The value of key (its first occurrence) as a number, the leading part
 * strtod reads: 1 and *v set, or 0 (no such key, or no number at the
 * start of its value) with *v untouched.
 */
int bc_statspage_num(const struct bc_strv *keys, const struct bc_strv *vals,
    const char *key, double *v);

#endif
