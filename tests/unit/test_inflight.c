/*
 * test_inflight.c - unit tests of the in-flight locks and the lookup
 * probe (cache/inflight.c): one process per key at a time, the lock gone
 * with its holder, and the probe's answer without the index.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "tests/unit/cachetest.h"
#include "tests/unit/unit.h"

START_TEST(test_inflight)
{
	struct bc_cache *c = ct_open(0);
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int fd, fd2, st;
	pid_t pid;

	ct_key(7, k);
	ck_assert_int_eq(bc_cache_inflight_try(c, k, &fd, err), BC_OK);
	/* another process cannot take it (fcntl locks are per process) */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_cache *c2;

		if (bc_cache_open(bc_cache_dir(c), 0, &c2, err) != BC_OK)
			_exit(2);
		_exit(bc_cache_inflight_try(c2, k, &fd2, err) == BC_ERR_BUSY ?
		    0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	bc_cache_inflight_release(c, k, fd);
	ck_assert_int_eq(bc_cache_inflight_try(c, k, &fd2, err), BC_OK);
	bc_cache_inflight_release(c, k, fd2);
	bc_cache_close(c);
}
END_TEST

/* The lookup probe answers without the index: absent unless a blob
 * exists or another process is compiling the key. */
START_TEST(test_probe)
{
	struct bc_cache *c = ct_open(0);
	struct bc_cache_entry e;
	char k[BC_HASH_HEXLEN + 1], k2[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	const char *dir = bc_cache_dir(c);
	int up[2], down[2], st;
	char x;
	pid_t pid;

	ct_key(11, k);
	ct_key(12, k2);
	ck_assert_int_eq(bc_cache_probe(dir, k), BC_CACHE_PROBE_ABSENT);
	ct_fill_entry(&e, 3, 100);
	ck_assert_int_eq(bc_cache_put(c, k, &e, err), BC_OK);
	bc_cache_entry_free(&e);
	ck_assert_int_eq(bc_cache_probe(dir, k), BC_CACHE_PROBE_MAYBE);
	ck_assert_int_eq(bc_cache_probe(dir, k2), BC_CACHE_PROBE_ABSENT);
	/* a key another process compiles is "maybe": the lookup waits */
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_cache *c2;
		int fd;

		if (bc_cache_open(dir, 0, &c2, err) != BC_OK ||
		    bc_cache_inflight_try(c2, k2, &fd, err) != BC_OK)
			_exit(2);
		(void)!write(up[1], "l", 1);
		(void)!read(down[0], &x, 1);
		bc_cache_inflight_release(c2, k2, fd);
		(void)!write(up[1], "u", 1);
		(void)!read(down[0], &x, 1);
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &x, 1), 1);
	ck_assert_int_eq(bc_cache_probe(dir, k2), BC_CACHE_PROBE_MAYBE);
	/* another key on another byte is not held */
	ck_assert_int_eq(bc_cache_probe(dir, "ab" "00000000000000000000000000"
	    "000000000000000000000000000000000000"), BC_CACHE_PROBE_ABSENT);
	ck_assert_int_eq(write(down[1], "g", 1), 1);
	ck_assert_int_eq(read(up[0], &x, 1), 1);
	ck_assert_int_eq(bc_cache_probe(dir, k2), BC_CACHE_PROBE_ABSENT);
	ck_assert_int_eq(write(down[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a malformed key is "maybe": the full lookup says what is wrong */
	ck_assert_int_eq(bc_cache_probe(dir, "not-a-key"), BC_CACHE_PROBE_MAYBE);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	bc_cache_close(c);
}
END_TEST

/* A lock dies with its holder; a bad key is refused; releasing nothing
 * does nothing. */
START_TEST(test_inflight_holder_dies)
{
	struct bc_cache *c = ct_open(0);
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int up[2], fd, st;
	char x;
	pid_t pid;

	ct_key(8, k);
	ck_assert_int_eq(bc_cache_inflight_try(c, "nothex", &fd, err),
	    BC_ERR_INVAL);
	ck_assert_int_eq(fd, -1);
	bc_cache_inflight_release(c, k, -1);
	ck_assert_int_eq(pipe(up), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_cache *c2;
		int fd2;

		if (bc_cache_open_lazy(bc_cache_dir(c), 0, &c2, err) != BC_OK ||
		    bc_cache_inflight_try(c2, k, &fd2, err) != BC_OK)
			_exit(2);
		(void)!write(up[1], "l", 1);
		pause();	/* killed while holding it */
		_exit(3);
	}
	ck_assert_int_eq(read(up[0], &x, 1), 1);
	ck_assert_int_eq(bc_cache_inflight_try(c, k, &fd, err), BC_ERR_BUSY);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
	ck_assert_int_eq(bc_cache_inflight_try(c, k, &fd, err), BC_OK);
	bc_cache_inflight_release(c, k, fd);
	close(up[0]);
	close(up[1]);
	bc_cache_close(c);
}
END_TEST

/* A cache that never had a lock file: nobody is compiling anything. */
START_TEST(test_probe_no_lockfile)
{
	struct bc_cache *c;
	char k[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	char *dir = xasprintf("%s/fresh", ct_tmpd), *lock;
	struct stat sb;

	ck_assert_int_eq(bc_cache_open_lazy(dir, 0, &c, err), BC_OK);
	lock = xasprintf("%s/" BC_CACHE_LOCKFILE, dir);
	ck_assert_int_ne(stat(lock, &sb), 0);
	ct_key(3, k);
	ck_assert_int_eq(bc_cache_probe(dir, k), BC_CACHE_PROBE_ABSENT);
	ck_assert_int_ne(stat(lock, &sb), 0);	/* the probe made none */
	bc_cache_close(c);
	free(lock);
	free(dir);
}
END_TEST

static Suite *
inflight_suite(void)
{
	Suite *s = suite_create("inflight");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, ct_setup, ct_teardown);
	/* the longest test takes 0.2 s under ASan on 2 busy cores */
	tcase_add_test(tc, test_inflight);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_inflight_holder_dies);
	tcase_add_test(tc, test_probe_no_lockfile);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(inflight_suite());
}
