/*
 * blob.h - the cache's blob format: one compile's result (stderr, stdout,
 * object, .dia, .d) as zstd frames under a SHA-256 checksum.  Pure
 * encoding and verification, no files: the daemon's store (store.h) and
 * the client's local tier (client/hitcache.h) keep their blobs in it.
 * See doc/cache.md, "Blob format".
 *
 * Grammar (all integers big-endian):
 *   blob     = header checksum payload
 *   header   = magic "BCCE" | version u16 (2) | comp u8 (2 = zstd) |
 *              nsect u8 (5) | size u64 x 5 (stderr, stdout, object, dia,
 *              dotd; uncompressed) | zlen u64 x 5 (compressed) |
 *              compile_ms u64 | payload_len u64 (= sum of zlen) |
 *              origin (16 lowercase hex digits, or 16 NULs: unknown)
 *   checksum = SHA-256 over header || payload (32 bytes)
 *   payload  = for each section in that order: nothing if its size is 0
 *              (then zlen is 0), else one zstd frame of zlen bytes that
 *              declares its content size = size
 * Version 1 has no origin (a 104-byte header); both versions are read,
 * version 2 is written.  A reader checks every size against its limit
 * (limits.h) before it allocates, the checksum, and that each frame spans
 * exactly zlen bytes and declares exactly its size; a full decode also
 * expands each frame and checks the result.  Any mismatch is
 * BC_ERR_CORRUPT.  Frames per section let a hit go out on the BOLT wire
 * as stored, without decompressing and compressing again.
 */
#ifndef BC_CACHE_BLOB_H
#define BC_CACHE_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/hash.h"
#include "cache/key.h"	/* BC_CACHE_ORIGIN_LEN, bc_cache_origin */

/* Version 2 adds the storer's origin (16 bytes) to version 1's header;
 * both are read. */
#define BC_CACHE_BLOB_VERSION 2
#define BC_CACHE_HDR_LEN_V1 104
#define BC_CACHE_HDR_LEN 120
#define BC_CACHE_NSECT 5
/* The shortest valid blob: a version 1 header and its checksum. */
#define BC_CACHE_BLOB_MIN (BC_CACHE_HDR_LEN_V1 + BC_HASH_LEN)

/* What a hit must reproduce. */
struct bc_cache_entry {
	struct bc_buf serr;
	struct bc_buf sout;
	struct bc_buf obj;
	struct bc_buf dia;
	struct bc_buf dotd;
	int64_t compile_ms;	/* how long the original compile took */
	/* the storing client's origin, "" when unknown */
	char origin[BC_CACHE_ORIGIN_LEN + 1];
};

void bc_cache_entry_init(struct bc_cache_entry *e);
void bc_cache_entry_free(struct bc_cache_entry *e);

/* A verified blob as stored: the compressed frame of each section. */
struct bc_cache_blob {
	struct bc_buf data;		/* the whole blob */
	uint64_t size[BC_CACHE_NSECT];	/* uncompressed sizes */
	size_t off[BC_CACHE_NSECT];	/* each frame in data (zlen 0: none) */
	size_t zlen[BC_CACHE_NSECT];
	int64_t compile_ms;
	int64_t created;		/* the index row's (for touch/drop) */
	char origin[BC_CACHE_ORIGIN_LEN + 1];	/* the storer's, or "" */
};

void bc_cache_blob_init(struct bc_cache_blob *b);
void bc_cache_blob_free(struct bc_cache_blob *b);
/* Verify a blob (structure, checksum, frame sizes) without expanding;
 * b is filled on BC_OK (data copied). */
int bc_cache_blob_check(const void *p, size_t n, struct bc_cache_blob *b,
    char *err);

/* Encode an entry as a blob (appended to out); level = zstd level. */
int bc_cache_blob_encode(const struct bc_cache_entry *e, int level,
    struct bc_buf *out, char *err);
/* Decode and verify a blob; e is (re)initialised and filled on BC_OK,
 * left empty on error (BC_ERR_CORRUPT, BC_ERR_LIMIT or BC_ERR_ALLOC). */
int bc_cache_blob_decode(const void *p, size_t n, struct bc_cache_entry *e,
    char *err);
/* Expand a verified blob into an entry. */
int bc_cache_blob_expand(const struct bc_cache_blob *b,
    struct bc_cache_entry *e, char *err);

#endif
