/*
 * test_reconcile.c - unit tests of making the cache's index and blob
 * files agree (cache/reconcile.c): rows without blobs, blobs without rows
 * (adopted when they verify), temp and misnamed files, blobs of the wrong
 * size or failing verification, eviction to the limit at the end, and a
 * blob that cannot be read.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

START_TEST(test_reconcile)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	struct bc_cache_check chk;
	struct bc_cache_stats s;
	char k[4][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p, *orphan, *bad_orphan, *tmp;
	int i;

	ct_fill_entry(&e, 6, 800);
	for (i = 0; i < 4; i++) {
		ct_key(200 + i, k[i]);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	}
	/* row without blob */
	p = bc_cache_blob_path(c, k[0]);
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	/* blob without row: a copy under another valid name */
	p = bc_cache_blob_path(c, k[1]);
	{
		char nk[BC_HASH_HEXLEN + 1];
		struct bc_buf b = BC_BUF_INIT(1 << 20);

		ct_key(999, nk);
		orphan = bc_cache_blob_path(c, nk);
		ck_assert_int_eq(bc_read_file(p, 1 << 20, &b, err), BC_OK);
		{
			char *dir = xstrdup(orphan);

			*strrchr(dir, '/') = '\0';
			ck_assert_int_eq(bc_mkdir_p(dir, 0700, err), BC_OK);
			tmp = xasprintf("%s/.tmp.%s.123", dir, nk);
			free(dir);
		}
		ck_assert_int_eq(bc_write_file_atomic(orphan, bc_buf_data(&b),
		    bc_buf_len(&b), 0600, err), BC_OK);
		ck_assert_int_eq(bc_write_file_atomic(tmp, "x", 1, 0600, err),
		    BC_OK);
		bc_buf_free(&b);
		/* and one that does not verify */
		ct_key(998, nk);
		bad_orphan = bc_cache_blob_path(c, nk);
		{
			char *dir = xstrdup(bad_orphan);

			*strrchr(dir, '/') = '\0';
			ck_assert_int_eq(bc_mkdir_p(dir, 0700, err), BC_OK);
			free(dir);
		}
		ck_assert_int_eq(bc_write_file_atomic(bad_orphan,
		    "not a blob at all", 17, 0600, err), BC_OK);
	}
	free(p);
	/* a corrupt blob (same size, bad byte) */
	p = bc_cache_blob_path(c, k[2]);
	{
		int fd = open(p, O_RDWR);

		ck_assert_int_eq(pwrite(fd, "Z", 1, 70), 1);
		close(fd);
	}
	free(p);
	/* check only: counts, changes nothing */
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows, 1);
	ck_assert_uint_eq(chk.orphan_blobs, 2);
	ck_assert_uint_eq(chk.adopted, 0);
	ck_assert_uint_eq(chk.temp_files, 1);
	ck_assert_uint_eq(chk.corrupt, 1);
	ck_assert_uint_eq(chk.entries, 2);
	ck_assert(bc_cache_has(c, k[0]));
	/* repair: the blob without a row verifies, so it is indexed (a
	 * crash between a blob and its row, keeper.h) */
	ck_assert_int_eq(bc_cache_reconcile(c, 1, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.adopted, 1);
	ck_assert_uint_eq(chk.entries, 3);
	ck_assert(!bc_cache_has(c, k[0]));
	ck_assert(!bc_cache_has(c, k[2]));
	ck_assert(bc_cache_has(c, k[1]) && bc_cache_has(c, k[3]));
	{
		struct stat sb;
		char nk[BC_HASH_HEXLEN + 1];

		ct_key(999, nk);
		ck_assert(bc_cache_has(c, nk));
		ck_assert_int_eq(stat(orphan, &sb), 0);
		ck_assert_int_ne(stat(bad_orphan, &sb), 0);
		ck_assert_int_ne(stat(tmp, &sb), 0);
	}
	/* now consistent */
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 1, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.orphan_rows + chk.orphan_blobs + chk.temp_files +
	    chk.corrupt + chk.bad_size, 0);
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 3);
	ck_assert_uint_eq(s.stored_bytes, chk.bytes);
	free(orphan);
	free(bad_orphan);
	free(tmp);
	bc_cache_entry_free(&e);
	bc_cache_close(c);
}
END_TEST

/* Write p (n bytes) as the file name in key's blob directory. */
static char *
put_file(struct bc_cache *c, const char *dirkey, const char *name,
    const void *p, size_t n)
{
	char err[BC_ERRLEN], *blob = bc_cache_blob_path(c, dirkey), *path;

	*strrchr(blob, '/') = '\0';
	path = xasprintf("%s/%s", blob, name);
	ck_assert_int_eq(bc_write_file_atomic(path, p, n, 0600, err), BC_OK);
	free(blob);
	return path;
}

/* A blob replaced by a valid blob of another size; a valid blob under a
 * name that does not belong in its directory; junk; then eviction down to
 * a limit below what is left. */
START_TEST(test_reconcile_sizes_names_limit)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e, big;
	struct bc_cache_check chk;
	struct bc_cache_stats s;
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	char k[6][BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *p, *wrongdir, *junk;
	uint64_t one;
	int i;

	ct_fill_entry(&e, 6, 800);
	ct_fill_entry(&big, 7, 5000);
	for (i = 0; i < 6; i++) {
		ct_key(400 + i, k[i]);
		ck_assert_int_eq(bc_cache_put(c, k[i], &e, err), BC_OK);
	}
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	one = s.stored_bytes / 6;
	/* k[0]'s blob replaced by a valid one of another size */
	ck_assert_int_eq(bc_cache_blob_encode(&big, 1, &b, err), BC_OK);
	p = bc_cache_blob_path(c, k[0]);
	ck_assert_int_eq(bc_write_file_atomic(p, bc_buf_data(&b),
	    bc_buf_len(&b), 0600, err), BC_OK);
	free(p);
	/* k[1]'s blob copied into a directory its name does not start
	 * with: not adopted, removed */
	{
		struct bc_buf raw = BC_BUF_INIT(1 << 20);
		char dirkey[BC_HASH_HEXLEN + 1];

		p = bc_cache_blob_path(c, k[1]);
		ck_assert_int_eq(bc_read_file(p, 1 << 20, &raw, err), BC_OK);
		free(p);
		memcpy(dirkey, k[1], sizeof(dirkey));
		dirkey[1] = dirkey[1] == '0' ? '1' : '0';
		wrongdir = put_file(c, dirkey, k[1], bc_buf_data(&raw),
		    bc_buf_len(&raw));
		bc_buf_free(&raw);
	}
	junk = put_file(c, k[2], "README", "x", 1);
	ck_assert_int_eq(bc_cache_reconcile(c, 0, 0, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.bad_size, 1);
	ck_assert_uint_eq(chk.orphan_blobs, 2);
	ck_assert_uint_eq(chk.entries, 5);
	ck_assert_uint_eq(chk.bytes, 5 * one);
	ck_assert(bc_cache_has(c, k[0]) && ct_blob_there(c, k[0]));
	/* repair, and evict to room for three */
	bc_cache_close(c);
	c = ct_open(3 * one + one / 2);
	ck_assert_int_eq(bc_cache_reconcile(c, 1, 0, &chk, err), BC_OK);
	ck_assert_uint_eq(chk.bad_size, 1);
	ck_assert_uint_eq(chk.adopted, 0);
	ck_assert_uint_eq(chk.evicted, 2);
	ck_assert_uint_eq(chk.entries, 3);
	ck_assert_uint_eq(chk.bytes, 3 * one);
	ck_assert(!bc_cache_has(c, k[0]) && !ct_blob_there(c, k[0]));
	ck_assert(!bc_cache_has(c, k[1]) && !bc_cache_has(c, k[2]));
	for (i = 3; i < 6; i++)
		ck_assert(bc_cache_has(c, k[i]) && ct_blob_there(c, k[i]));
	{
		struct stat sb;

		ck_assert_int_ne(stat(wrongdir, &sb), 0);
		ck_assert_int_ne(stat(junk, &sb), 0);
	}
	ck_assert_int_eq(bc_cache_stats(c, &s, err), BC_OK);
	ck_assert_uint_eq(s.entries, 3);
	ck_assert_uint_eq(s.stored_bytes, 3 * one);
	free(wrongdir);
	free(junk);
	bc_buf_free(&b);
	bc_cache_entry_free(&e);
	bc_cache_entry_free(&big);
	bc_cache_close(c);
}
END_TEST

/* A blob of the right size that cannot be read (no descriptor left for
 * it) fails its verification like a bad one: counted, nothing else. */
START_TEST(test_reconcile_unreadable)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int i, st;
	pid_t pid;

	ct_fill_entry(&e, 9, 300);
	for (i = 0; i < 2; i++) {
		ct_key(500 + i, k);
		ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	}
	bc_cache_entry_free(&e);
	bc_cache_close(c);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_cache_check chk;
		struct bc_cache_stats s;
		struct rlimit rl;

		c = ct_open(0);
		if (bc_cache_stats(c, &s, err) != BC_OK || s.entries != 2)
			_exit(2);
		rl.rlim_cur = rl.rlim_max = 64;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(3);
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		if (bc_cache_reconcile(c, 0, 1, &chk, err) != BC_OK)
			_exit(4);
		_exit(chk.corrupt == 2 && chk.entries == 0 ? 0 : 5);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "child: %s %d", WIFEXITED(st) ? "exit" : "signal",
	    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}
END_TEST

static Suite *
reconcile_suite(void)
{
	Suite *s = suite_create("reconcile");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.15 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_reconcile);
	tcase_add_test(tc, test_reconcile_sizes_names_limit);
	tcase_add_test(tc, test_reconcile_unreadable);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(reconcile_suite());
}
