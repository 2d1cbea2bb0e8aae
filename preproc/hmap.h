/*
 * hmap.h - reader of clang header maps (.hmap), format as in the spec
 * (xcode.md section 4): 24-byte header with byte order given by the
 * magic, power-of-two bucket array of (key, prefix, suffix) string-table
 * offsets, case-insensitive keys hashed as sum(tolower(c) * 13) with
 * linear probing.  Every offset is bounds-checked; a bad bucket is a miss.
 */
#ifndef BC_PP_HMAP_H
#define BC_PP_HMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/limits.h"	/* BC_HMAP_MAX_SIZE */

struct bc_hmap {
	struct bc_buf file;	/* the whole file (owned) */
	int swap;		/* integers are big-endian */
	uint32_t strtab;	/* string table offset */
	uint32_t nbuckets;
};

/* 1 if the first bytes look like a header map (either byte order). */
int bc_hmap_is_hmap(const void *p, size_t n);
/* Parse a map from n bytes at p (copied).  BC_ERR_CORRUPT if invalid. */
int bc_hmap_load_mem(struct bc_hmap *m, const void *p, size_t n, char *err);
/* Read and parse a file. */
int bc_hmap_load(struct bc_hmap *m, const char *path, char *err);
void bc_hmap_free(struct bc_hmap *m);
/*
 * Look up a spelling: BC_OK with *out = malloc'd prefix+suffix, or
 * BC_ERR_NOENT (miss, or a hit whose strings are out of bounds), or
 * BC_ERR_ALLOC.
 */
int bc_hmap_lookup(const struct bc_hmap *m, const char *key, char **out);

/*
 * The same map with prefix put in front of every absolute value (a pump
 * server's copy, whose headers live under its root); same bucket count and
 * positions, little-endian.  Appended to out.
 */
int bc_hmap_rebase(const struct bc_hmap *m, const char *prefix,
    struct bc_buf *out, char *err);

/*
 * A digest of the map's meaning with its absolute values passed through
 * map (which returns a malloc'd replacement or NULL to keep the value):
 * SHA-256 over the bucket count and each used bucket's index, key and
 * value.  Two maps whose values differ only by mapped prefixes have the
 * same digest (a mapped pump key, cache/pathmap.h).
 */
void bc_hmap_digest(const struct bc_hmap *m, char *(*map)(void *ctx,
    const char *path), void *ctx, uint8_t out[32]);
/* bc_hmap_digest of n bytes at p with the paths through pm's maps:
 * BC_OK, or BC_ERR_NOENT when the bytes are not a valid header map. */
struct bc_pathmap;
int bc_hmap_mapped_digest(const void *p, size_t n,
    const struct bc_pathmap *pm, uint8_t out[32]);

#endif
