/*
 * test_store.c - unit tests of getting and putting cache entries
 * (cache/store.c): hits, misses, damaged and vanished blobs, the two
 * halves of a lookup (blob, then touch) and of a store (blob, then row),
 * a batch of rows that cannot be written, lazy handles, origins.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/proto.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

#include <sqlite3.h>

START_TEST(test_get_put)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e, d;
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p;
	struct stat sb;

	ct_key(1, k);
	ct_key(2, k2);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_NOENT);
	ct_fill_entry(&e, 2, 3000);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert(bc_cache_has(c, k));
	ck_assert(!bc_cache_has(c, k2));
	p = bc_cache_blob_path(c, k);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_get(c, k, 0, &d, err), BC_OK);
	bc_cache_entry_free(&d);
	ck_assert_int_eq(bc_cache_get(c, "nothex", 1, &d, err), BC_ERR_INVAL);
	/* the blob alone, as a worker serving a hit reads it: the same
	 * sections, nothing counted; a missing or damaged blob is reported,
	 * not dropped (bc_cache_lookup does that) */
	{
		struct bc_cache_blob b;
		struct bc_buf raw = BC_BUF_INIT(BC_BUF_CEILING);

		bc_cache_blob_init(&b);
		ck_assert_int_eq(bc_cache_lookup_blob(c, k, &b, err), BC_OK);
		ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
		ck_assert(ct_entries_equal(&e, &d));
		bc_cache_entry_free(&d);
		ck_assert_int_eq(bc_cache_lookup_blob(c, k2, &b, err),
		    BC_ERR_NOENT);
		ck_assert_int_eq(bc_cache_lookup_blob(c, "nothex", &b, err),
		    BC_ERR_INVAL);
		ck_assert_int_eq(bc_read_file(p, BC_BUF_CEILING, &raw, err),
		    BC_OK);
		((uint8_t *)raw.data)[bc_buf_len(&raw) - 1] ^= 1;
		ck_assert_int_eq(bc_write_file_atomic(p, bc_buf_data(&raw),
		    bc_buf_len(&raw), 0600, err), BC_OK);
		ck_assert_int_eq(bc_cache_lookup_blob(c, k, &b, err),
		    BC_ERR_CORRUPT);
		ck_assert_ptr_nonnull(strstr(err, "checksum"));
		ck_assert_int_eq(stat(p, &sb), 0);	/* still there */
		((uint8_t *)raw.data)[bc_buf_len(&raw) - 1] ^= 1;
		ck_assert_int_eq(bc_write_file_atomic(p, bc_buf_data(&raw),
		    bc_buf_len(&raw), 0600, err), BC_OK);
		bc_buf_free(&raw);
		bc_cache_blob_free(&b);
	}
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.stores, 1);
	ck_assert_uint_eq(s.entries, 1);
	ck_assert_uint_eq(s.stored_bytes, (uint64_t)sb.st_size);
	ck_assert_uint_eq(s.time_saved_ms, 1002);

	/* a flipped byte in the blob: caught, evicted, counted, a miss */
	{
		int fd = open(p, O_RDWR);
		uint8_t byte;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pread(fd, &byte, 1, sb.st_size - 5), 1);
		byte ^= 0x40;
		ck_assert_int_eq(pwrite(fd, &byte, 1, sb.st_size - 5), 1);
		close(fd);
	}
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_CORRUPT);
	ck_assert(!bc_cache_has(c, k));
	ck_assert_int_ne(stat(p, &sb), 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.corrupt, 1);
	ck_assert_uint_eq(s.misses, 2);
	ck_assert_uint_eq(s.entries, 0);
	ck_assert_uint_eq(s.stored_bytes, 0);

	/* a row whose blob vanished is a miss and is forgotten */
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_NOENT);
	ck_assert_ptr_nonnull(strstr(err, "blob missing"));
	ck_assert(!bc_cache_has(c, k));

	/* a blob of another length than its row says (cut short on disk)
	 * is corrupt, and goes with its row */
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(truncate(p, sb.st_size - 1), 0);
	ck_assert_int_eq(bc_cache_get(c, k, 1, &d, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "index says"));
	ck_assert(!bc_cache_has(c, k));
	ck_assert_int_ne(stat(p, &sb), 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.corrupt, 2);
	ck_assert_uint_eq(s.stored_bytes, 0);
	free(p);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* A batch of rows that cannot be written leaves no blob behind. */
START_TEST(test_index_stored_fails)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	struct bc_cache_stored v[2];
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p;
	struct stat sb;

	ct_fill_entry(&e, 4, 900);
	ct_key(301, k);
	ck_assert_int_eq(bc_cache_put_blob(c, k, &e, 1, &v[0], err), BC_OK);
	p = bc_cache_blob_path(c, k);
	ck_assert_int_eq(stat(p, &sb), 0);
	v[1] = v[0];
	memcpy(v[1].key, "not-a-key", 10);
	ck_assert_int_eq(bc_cache_index_stored(c, v, 2, err), BC_ERR_INVAL);
	ck_assert_int_ne(stat(p, &sb), 0);
	ck_assert(!bc_cache_has(c, k));
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.store_errors, 2);
	ck_assert_uint_eq(s.stores, 0);
	ck_assert_uint_eq(s.misses, 0);
	ck_assert_uint_eq(s.stored_bytes, 0);
	/* nor does a bad key make a blob */
	ck_assert_int_eq(bc_cache_put_blob(c, "nothex", &e, 0, &v[0], err),
	    BC_ERR_INVAL);
	free(p);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* The halves of a store: a blob whose row is still on its way is served
 * (verified like any other), and the row, when it comes, counts the store
 * and the miss. */
START_TEST(test_put_halves)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e, d;
	struct bc_cache_stored rec;
	struct bc_cache_blob b;
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	struct stat sb;
	char *p;

	ct_key(77, k);
	ct_fill_entry(&e, 6, 1200);
	memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
	ck_assert_int_eq(bc_cache_put_blob(c, k, &e, 1, &rec, err), BC_OK);
	ck_assert_str_eq(rec.key, k);
	p = bc_cache_blob_path(c, k);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(rec.size, (int64_t)sb.st_size);
	ck_assert_int_eq(rec.osize, (int64_t)(bc_buf_len(&e.serr) +
	    bc_buf_len(&e.sout) + bc_buf_len(&e.obj) + bc_buf_len(&e.dia)));
	ck_assert_int_eq(rec.compile_ms, e.compile_ms);
	ck_assert_int_eq(rec.miss, 1);
	ck_assert_str_eq(rec.origin, "0123456789abcdef");
	ck_assert(!bc_cache_has(c, k));
	bc_cache_blob_init(&b);
	ck_assert_int_eq(bc_cache_lookup(c, k, &b, err), BC_OK);
	ck_assert_int_eq(b.created, 0);	/* no row yet */
	ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_cache_blob_free(&b);

	ck_assert_int_eq(bc_cache_index_stored(c, &rec, 1, err), BC_OK);
	ck_assert(bc_cache_has(c, k));
	ck_assert_int_eq(bc_cache_lookup(c, k, &b, err), BC_OK);
	ck_assert_int_eq(b.created, rec.created);
	bc_cache_blob_free(&b);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.stores, 1);
	ck_assert_uint_eq(s.requests, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.stored_bytes, (uint64_t)sb.st_size);
	/* the same key stored again replaces the row, not the total */
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 1);
	ck_assert_uint_eq(s.stored_bytes, (uint64_t)sb.st_size);
	/* an empty batch writes nothing */
	ck_assert_int_eq(bc_cache_index_stored(c, &rec, 0, err), BC_OK);
	free(p);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* A lazy handle opens the index on first use; put_miss counts the miss
 * with the store. */
START_TEST(test_lazy_put_miss)
{
	struct bc_cache *c;
	struct bc_cache_entry e;
	struct bc_cache_stats st;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *dir = xasprintf("%s/lazy", ct_tmpd), *idx;
	struct stat sb;

	ct_key(21, k);
	ck_assert_int_eq(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	idx = xasprintf("%s/index.sqlite", dir);
	ck_assert_int_ne(stat(idx, &sb), 0);	/* not opened yet */
	ck_assert(!bc_cache_blob_exists(c, k));
	ct_fill_entry(&e, 5, 200);
	ck_assert_int_eq(bc_cache_put_miss(c, k, &e, err), BC_OK);
	bc_cache_entry_free(&e);
	ck_assert(bc_cache_blob_exists(c, k));
	ck_assert_int_eq(bc_cache_stats(c, &st, err), BC_OK);
	ck_assert_uint_eq(st.stores, 1);
	ck_assert_uint_eq(st.requests, 1);
	ck_assert_uint_eq(st.misses, 1);
	ck_assert_uint_eq(st.hits, 0);
	bc_cache_close(c);
	free(idx);
	free(dir);
}
END_TEST

START_TEST(test_lookup_touch)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e, d;
	struct bc_cache_blob b;
	struct bc_cache_stats s;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	ct_key(42, k);
	ct_fill_entry(&e, 8, 2000);
	bc_cache_blob_init(&b);
	ck_assert_int_eq(bc_cache_lookup(c, k, &b, err), BC_ERR_NOENT);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	ck_assert_int_eq(bc_cache_lookup(c, k, &b, err), BC_OK);
	ck_assert_uint_eq(b.size[2], 2000);
	ck_assert_uint_gt(b.zlen[2], 0);
	ck_assert_uint_eq(b.zlen[4], 0);	/* no .d */
	ck_assert_int_eq(b.compile_ms, e.compile_ms);
	/* nothing counted until touched */
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 0);
	ck_assert_int_eq(bc_cache_blob_expand(&b, &d, err), BC_OK);
	ck_assert(ct_entries_equal(&e, &d));
	bc_cache_entry_free(&d);
	bc_cache_touch(c, k, BC_CACHE_COUNT_ALL, 1, b.compile_ms);
	bc_cache_touch(c, k, BC_CACHE_COUNT_HITS, 0, 0);	/* not counted */
	bc_cache_touch(c, k, BC_CACHE_COUNT_ALL, 0, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.misses, 1);
	ck_assert_uint_eq(s.time_saved_ms, (uint64_t)e.compile_ms);
	/* a hit touched with COUNT_NONE refreshes, counts nothing */
	bc_cache_touch(c, k, BC_CACHE_COUNT_NONE, 1, b.compile_ms);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.requests, 2);
	ck_assert_uint_eq(s.hits, 1);
	/* the stored frames go out on the wire as they are and come back
	 * as the entry */
	{
		struct bc_request req;
		struct bc_reply rep;
		struct bc_buf out = BC_BUF_INIT(BC_BUF_CEILING);
		const void *z[BC_CACHE_NSECT];
		int i;

		for (i = 0; i < BC_CACHE_NSECT; i++)
			z[i] = bc_buf_data(&b.data) + b.off[i];
		bc_request_init(&req);
		req.proto = BC_PROTO_BOLT;
		req.kind = BC_RQST_LOOKUP;
		ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z,
		    b.zlen, err), BC_OK);
		ck_assert_int_eq(bc_proto_parse_reply(&out, BC_PROTO_BOLT,
		    BC_RQST_LOOKUP, NULL, &rep, err), BC_OK);
		ck_assert(!rep.miss);
		ck_assert(ct_bufs_equal(&rep.doto, &e.obj));
		ck_assert(ct_bufs_equal(&rep.serr, &e.serr));
		ck_assert(ct_bufs_equal(&rep.sout, &e.sout));
		ck_assert(ct_bufs_equal(&rep.dia, &e.dia));
		ck_assert_uint_eq(bc_buf_len(&rep.dotd), 0);
		bc_reply_free(&rep);
		/* a compile reply has no DOTD */
		bc_buf_free(&out);
		req.kind = BC_RQST_COMPILE;
		ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z,
		    b.zlen, err), BC_OK);
		ck_assert_int_eq(bc_proto_parse_reply(&out, BC_PROTO_BOLT,
		    BC_RQST_COMPILE, NULL, &rep, err), BC_OK);
		ck_assert(ct_bufs_equal(&rep.doto, &e.obj));
		ck_assert_uint_eq(bc_buf_avail(&out), 0);
		bc_reply_free(&rep);
		bc_buf_free(&out);
		/* never for distcc protocols */
		req.proto = 2;
		ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z,
		    b.zlen, err), BC_ERR_INVAL);
		bc_request_free(&req);
	}
	bc_cache_blob_free(&b);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* Read the LRU position of key's row. */
static int64_t
seq_of(const char *key)
{
	char *path = xasprintf("%s/cache/index.sqlite", ct_tmpd), *sql;
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	sql = sqlite3_mprintf("SELECT seq FROM entries WHERE key='%q'", key);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
	    SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	sqlite3_close(db);
	free(path);
	return v;
}

/* A hit moves its entry to the most recent LRU position; a hit asked from
 * another checkout than the storer's is counted as such. */
START_TEST(test_touch_origin)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	struct bc_cache_stats s;
	char k1[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	ct_key(1, k1);
	ct_key(2, k2);
	ct_fill_entry(&e, 2, 100);
	memcpy(e.origin, "0123456789abcdef", sizeof(e.origin));
	ck_assert_int_eq(bc_cache_put(c, k1, &e, err), BC_OK);
	ck_assert_int_eq(bc_cache_put(c, k2, &e, err), BC_OK);
	ck_assert_int_lt(seq_of(k1), seq_of(k2));
	bc_cache_touch_from(c, k1, BC_CACHE_COUNT_ALL, 1, 5,
	    "0123456789abcdef");
	ck_assert_int_gt(seq_of(k1), seq_of(k2));
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.hits_other_checkout, 0);
	bc_cache_touch_from(c, k2, BC_CACHE_COUNT_ALL, 1, 5,
	    "fedcba9876543210");
	bc_cache_touch_from(c, k2, BC_CACHE_COUNT_ALL, 1, 5, NULL);
	bc_cache_touch_from(c, k2, BC_CACHE_COUNT_ALL, 1, 5, "");
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.hits, 4);
	ck_assert_uint_eq(s.hits_other_checkout, 1);
	ck_assert_uint_eq(s.time_saved_ms, 20);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.1 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_get_put);
	tcase_add_test(tc, test_index_stored_fails);
	tcase_add_test(tc, test_put_halves);
	tcase_add_test(tc, test_lazy_put_miss);
	tcase_add_test(tc, test_lookup_touch);
	tcase_add_test(tc, test_touch_origin);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(store_suite());
}
