/*
 * cachetest.h - what the unit tests of cache/ share: a private temp dir
 * per test (ct_setup/ct_teardown as a checked fixture), entries with
 * known contents, keys, and a cache opened in the temp dir.
 */
#ifndef BC_TEST_CACHETEST_H
#define BC_TEST_CACHETEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/hash.h"
#include "cache/store.h"

/* The current test's temp dir (removed by ct_teardown). */
extern char *ct_tmpd;

void ct_setup(void);
void ct_teardown(void);

/* An entry whose sections depend on seed: stderr, stdout, an object of
 * objlen bytes, a .dia for even seeds; no .d; compile_ms 1000 + seed. */
void ct_fill_entry(struct bc_cache_entry *e, int seed, size_t objlen);
int ct_bufs_equal(const struct bc_buf *a, const struct bc_buf *b);
int ct_entries_equal(const struct bc_cache_entry *a,
    const struct bc_cache_entry *b);
/* The i-th test key: SHA-256 of "key-<i>", as hex. */
void ct_key(int i, char out[BC_HASH_HEXLEN + 1]);
/* The cache in ct_tmpd/cache, opened with limit max (0: default). */
struct bc_cache *ct_open(uint64_t max);
/* 1 if key's blob file exists. */
int ct_blob_there(struct bc_cache *c, const char *key);
/* Set the last use of key's row in ct_tmpd/cache to t (as an age would). */
void ct_set_last_used(const char *key, int64_t t);
/* Recompute a blob's checksum in place (after a deliberate change), for
 * a version 2 blob of n bytes. */
void ct_resum(uint8_t *blob, size_t n);

#endif
