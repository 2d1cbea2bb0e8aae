/*
 * test_blobdir.c - unit tests of where the cache's blobs live
 * (cache/blobdir.c): paths, publishing by temp file and rename (never a
 * temp file left, never half a blob), existence, the directories walked,
 * and the move from schema 1's blobs/ab/cd/<key>.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

/* Names in dir, sorted, space-separated. */
static char *
names(const char *dir)
{
	struct bc_strv v = BC_STRV_INIT;
	struct dirent *f;
	DIR *d = opendir(dir);
	char *s;
	size_t i, j;

	ck_assert_ptr_nonnull(d);
	while ((f = readdir(d)) != NULL)
		if (strcmp(f->d_name, ".") != 0 && strcmp(f->d_name, "..") != 0)
			bc_strv_push(&v, f->d_name);
	closedir(d);
	for (i = 1; i < v.n; i++)
		for (j = i; j > 0 && strcmp(v.v[j - 1], v.v[j]) > 0; j--) {
			char *t = v.v[j];

			v.v[j] = v.v[j - 1];
			v.v[j - 1] = t;
		}
	s = xstrdup("");
	for (i = 0; i < v.n; i++) {
		char *t = xasprintf("%s%s%s", s, i > 0 ? " " : "", v.v[i]);

		free(s);
		s = t;
	}
	bc_strv_free(&v);
	return s;
}

static void
assert_names(const char *dir, const char *want)
{
	char *s = names(dir);

	ck_assert_msg(strcmp(s, want) == 0, "%s: \"%s\", want \"%s\"", dir, s,
	    want);
	free(s);
}

START_TEST(test_blobdir_paths)
{
	struct bc_cache *c = ct_open(0);
	char k[BC_HASH_HEXLEN + 1];
	char *p, *want;

	ct_key(1, k);
	p = bc_cache_blob_path(c, k);
	want = xasprintf("%s/cache/blobs/%.2s/%s", ct_tmpd, k, k);
	ck_assert_str_eq(p, want);
	free(p);
	p = bc_blobdir_path("/x/blobs", k);
	free(want);
	want = xasprintf("/x/blobs/%.2s/%s", k, k);
	ck_assert_str_eq(p, want);
	free(p);
	free(want);
	bc_cache_close(c);
}
END_TEST

/* A blob is published whole, over an older one, into a directory made
 * if need be; a failure leaves neither the blob nor a temp file. */
START_TEST(test_blobdir_write)
{
	struct bc_buf b = BC_BUF_INIT(1 << 20), r = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN];
	char *dir = xasprintf("%s/d/ab", ct_tmpd);
	char *path = xasprintf("%s/abcd", dir), *bad;
	size_t i;

	for (i = 0; i < 100000; i++)
		ck_assert_int_eq(bc_buf_put_u8(&b, (uint8_t)(i * 13)), BC_OK);
	ck_assert_int_eq(bc_blobdir_write(path, &b, err), BC_OK);
	ck_assert_int_eq(bc_read_file(path, 1 << 20, &r, err), BC_OK);
	ck_assert(ct_bufs_equal(&b, &r));
	assert_names(dir, "abcd");
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_buf_put_str(&b, "second"), BC_OK);
	ck_assert_int_eq(bc_blobdir_write(path, &b, err), BC_OK);
	bc_buf_reset(&r);
	ck_assert_int_eq(bc_read_file(path, 1 << 20, &r, err), BC_OK);
	ck_assert(ct_bufs_equal(&b, &r));
	assert_names(dir, "abcd");
	/* the target is a directory: the rename fails, the temp file goes */
	bad = xasprintf("%s/dirhere", dir);
	ck_assert_int_eq(mkdir(bad, 0700), 0);
	ck_assert_int_eq(bc_blobdir_write(bad, &b, err), BC_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err, "publishing"));
	assert_names(dir, "abcd dirhere");
	free(bad);
	/* its directory cannot be made (a file is in the way) */
	bad = xasprintf("%s/abcd/x/y", dir);
	ck_assert_int_ne(bc_blobdir_write(bad, &b, err), BC_OK);
	assert_names(dir, "abcd dirhere");
	free(bad);
	bc_buf_free(&b);
	bc_buf_free(&r);
	free(path);
	free(dir);
}
END_TEST

START_TEST(test_blobdir_exists)
{
	struct bc_cache *c = ct_open(0);
	struct bc_buf b = BC_BUF_INIT(64);
	char k[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p, *sub;

	ct_key(1, k);
	ct_key(2, k2);
	ck_assert(!bc_cache_blob_exists(c, k));
	ck_assert(!bc_cache_blob_exists(c, "nothex"));
	ck_assert_int_eq(bc_buf_put_str(&b, "blob"), BC_OK);
	p = bc_cache_blob_path(c, k);
	ck_assert_int_eq(bc_blobdir_write(p, &b, err), BC_OK);
	ck_assert(bc_cache_blob_exists(c, k));
	bc_blobdir_unlink(c, k);
	ck_assert(!bc_cache_blob_exists(c, k));
	bc_blobdir_unlink(c, k);	/* gone already: nothing happens */
	free(p);
	/* a stat that fails for another reason than absence: "maybe" */
	sub = xasprintf("%s/cache/blobs/%.2s", ct_tmpd, k2);
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_int_eq(bc_write_file_atomic(sub, "x", 1, 0600, err), BC_OK);
	ck_assert(bc_cache_blob_exists(c, k2));
	free(sub);
	bc_buf_free(&b);
	bc_cache_close(c);
}
END_TEST

static void
count_dir(struct bc_cache *c, const char *dir, void *arg)
{
	(void)c;
	(void)dir;
	(*(int *)arg)++;
}

/* Only the directories named by two lowercase hex digits are walked. */
START_TEST(test_blobdir_each)
{
	struct bc_cache *c = ct_open(0);
	const char *extra[] = { "zz", "AB", "abc", "0g", "a" };
	char *p;
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		p = xasprintf("%s/cache/blobs/%s", ct_tmpd, extra[i]);
		ck_assert_int_eq(mkdir(p, 0700), 0);
		free(p);
	}
	p = xasprintf("%s/cache/blobs/7f", ct_tmpd);
	ck_assert_int_eq(rmdir(p), 0);
	free(p);
	bc_blobdir_each(c, count_dir, &n);
	ck_assert_int_eq(n, 255);
	bc_cache_close(c);
}
END_TEST

/* Schema 1's blobs/ab/cd/<key> move to blobs/ab/<key>; what is not a
 * blob there goes, and so do the emptied directories and schema 1's
 * in-flight directory. */
START_TEST(test_blobdir_migrate)
{
	struct bc_cache *c = ct_open(0);
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *ab, *cd, *p, *want;
	struct stat sb;

	ct_key(5, k);
	ab = xasprintf("%s/cache/blobs/%.2s", ct_tmpd, k);
	cd = xasprintf("%s/%.2s", ab, k + 2);
	ck_assert_int_eq(mkdir(cd, 0700), 0);
	p = xasprintf("%s/%s", cd, k);
	ck_assert_int_eq(bc_write_file_atomic(p, "blob", 4, 0600, err), BC_OK);
	free(p);
	p = xasprintf("%s/junk", cd);
	ck_assert_int_eq(bc_write_file_atomic(p, "j", 1, 0600, err), BC_OK);
	free(p);
	/* a directory schema 1 would not have made is left alone */
	p = xasprintf("%s/zz", ab);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	p = xasprintf("%s/zz/keep", ab);
	ck_assert_int_eq(bc_write_file_atomic(p, "k", 1, 0600, err), BC_OK);
	free(p);
	p = xasprintf("%s/cache/inflight", ct_tmpd);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	bc_blobdir_migrate_v1(c);
	ck_assert_int_ne(stat(p, &sb), 0);
	free(p);
	want = xasprintf("%s zz", k);
	assert_names(ab, want);
	ck_assert(bc_cache_blob_exists(c, k));
	p = xasprintf("%s/zz", ab);
	assert_names(p, "keep");
	free(p);
	/* again: nothing left to move */
	bc_blobdir_migrate_v1(c);
	assert_names(ab, want);
	free(want);
	free(ab);
	free(cd);
	bc_cache_close(c);
}
END_TEST

static Suite *
blobdir_suite(void)
{
	Suite *s = suite_create("blobdir");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.15 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_blobdir_paths);
	tcase_add_test(tc, test_blobdir_write);
	tcase_add_test(tc, test_blobdir_exists);
	tcase_add_test(tc, test_blobdir_each);
	tcase_add_test(tc, test_blobdir_migrate);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(blobdir_suite());
}
