/*
 * cachetest.c - the shared fixture of the cache's unit tests
 * (cachetest.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"

char *ct_tmpd;

void
ct_setup(void)
{
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_cache-", &ct_tmpd,
	    err), BC_OK);
}

void
ct_teardown(void)
{
	ck_assert_int_eq(bc_rmtree(ct_tmpd), BC_OK);
	free(ct_tmpd);
	ct_tmpd = NULL;
}

void
ct_fill_entry(struct bc_cache_entry *e, int seed, size_t objlen)
{
	size_t i;

	bc_cache_entry_init(e);
	ck_assert_int_eq(bc_buf_putf(&e->serr, "warning %d\n", seed), BC_OK);
	ck_assert_int_eq(bc_buf_putf(&e->sout, "out %d\n", seed), BC_OK);
	for (i = 0; i < objlen; i++)
		ck_assert_int_eq(bc_buf_put_u8(&e->obj,
		    (uint8_t)((i * 7 + (size_t)seed) % 251)), BC_OK);
	if (seed % 2 == 0)
		ck_assert_int_eq(bc_buf_put_str(&e->dia, "DIAG"), BC_OK);
	e->compile_ms = 1000 + seed;
}

int
ct_bufs_equal(const struct bc_buf *a, const struct bc_buf *b)
{
	return bc_buf_len(a) == bc_buf_len(b) && (bc_buf_len(a) == 0 ||
	    memcmp(bc_buf_data(a), bc_buf_data(b), bc_buf_len(a)) == 0);
}

int
ct_entries_equal(const struct bc_cache_entry *a,
    const struct bc_cache_entry *b)
{
	return ct_bufs_equal(&a->serr, &b->serr) &&
	    ct_bufs_equal(&a->sout, &b->sout) &&
	    ct_bufs_equal(&a->obj, &b->obj) &&
	    ct_bufs_equal(&a->dia, &b->dia) &&
	    ct_bufs_equal(&a->dotd, &b->dotd) &&
	    a->compile_ms == b->compile_ms && strcmp(a->origin, b->origin) == 0;
}

void
ct_key(int i, char out[BC_HASH_HEXLEN + 1])
{
	uint8_t d[BC_HASH_LEN];
	char s[32];

	snprintf(s, sizeof(s), "key-%d", i);
	bc_hash_bytes(s, strlen(s), d);
	bc_hash_hex(d, sizeof(d), out);
}

struct bc_cache *
ct_open(uint64_t max)
{
	struct bc_cache *c;
	char err[BC_ERRLEN], *dir = xasprintf("%s/cache", ct_tmpd);

	ck_assert_msg(bc_cache_open(dir, max, &c, err) == BC_OK, "%s", err);
	free(dir);
	return c;
}

int
ct_blob_there(struct bc_cache *c, const char *key)
{
	char *p = bc_cache_blob_path(c, key);
	struct stat sb;
	int r = stat(p, &sb) == 0;

	free(p);
	return r;
}

void
ct_set_last_used(const char *key, int64_t t)
{
	char *path = xasprintf("%s/cache/index.sqlite", ct_tmpd), *sql;
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	sql = sqlite3_mprintf("UPDATE entries SET last_used=%lld WHERE "
	    "key='%q'", (long long)t, key);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_free(sql);
	sqlite3_close(db);
	free(path);
}

void
ct_resum(uint8_t *blob, size_t n)
{
	struct bc_hash h;

	ck_assert_uint_ge(n, BC_CACHE_HDR_LEN + BC_HASH_LEN);
	bc_hash_init(&h);
	bc_hash_update(&h, blob, BC_CACHE_HDR_LEN);
	bc_hash_update(&h, blob + BC_CACHE_HDR_LEN + BC_HASH_LEN,
	    n - BC_CACHE_HDR_LEN - BC_HASH_LEN);
	bc_hash_final(&h, blob + BC_CACHE_HDR_LEN);
	bc_hash_free(&h);
}
