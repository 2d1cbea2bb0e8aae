/*
 * test_osdep.c - unit tests of osdep.h.  Built twice: test_osdep checks
 * the implementation this system's configure chose (osdep_linux.c on
 * Linux), test_osdep_other links the portable fallback osdep_other.c
 * instead (-DTEST_OSDEP_OTHER), so the fallback keeps compiling and
 * keeps its promises here even though no supported system ships it.
 * On a Mac test_osdep checks osdep_darwin.c (the cross build compiles
 * it, `make check` on a Mac runs it).  A function missing from one implementation is a link error of
 * test_osdep_other: libcommon.a's osdep object would be pulled in next to
 * osdep_other.o.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/io.h"
#include "common/osdep.h"
#include "common/util.h"
#include "tests/unit/unit.h"

/* which implementation is linked (the expectations differ) */
#if defined(__linux__) && !defined(TEST_OSDEP_OTHER)
#define LINUX_IMPL 1
#else
#define LINUX_IMPL 0
#endif
#if defined(__APPLE__) && !defined(TEST_OSDEP_OTHER)
#define DARWIN_IMPL 1
#else
#define DARWIN_IMPL 0
#endif

START_TEST(test_stat_ns)
{
	char *dir, *f;
	char err[BC_ERRLEN];
	struct timespec ts[2];
	struct stat sb;
	int fd;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_osdep-", &dir, err),
	    BC_OK);
	f = xasprintf("%s/f", dir);
	fd = open(f, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ts[0].tv_sec = ts[1].tv_sec = 1700000000;
	ts[0].tv_nsec = ts[1].tv_nsec = 123456789;
	ck_assert_int_eq(utimensat(AT_FDCWD, f, ts, 0), 0);
	ck_assert_int_eq(stat(f, &sb), 0);
#if defined(HAVE_STRUCT_STAT_ST_MTIM_TV_NSEC) || \
    defined(HAVE_STRUCT_STAT_ST_MTIMESPEC_TV_NSEC)
	ck_assert(bc_osdep_mtime_ns(&sb) == 1700000000123456789LL);
#else
	ck_assert(bc_osdep_mtime_ns(&sb) == 1700000000000000000LL);
#endif
	/* the change time is now-ish and at least the second part agrees */
	ck_assert(bc_osdep_ctime_ns(&sb) / 1000000000LL == (int64_t)sb.st_ctime);
	ck_assert(bc_osdep_ns(-1, 5) == -999999995LL);
	unlink(f);
	free(f);
	ck_assert_int_eq(bc_rmtree(dir), BC_OK);
	free(dir);
}
END_TEST

START_TEST(test_memfs)
{
	const char *m = bc_osdep_memdir();

	ck_assert_int_eq(bc_osdep_is_memfs("/nonexistent-boltcc-path"), 0);
#if LINUX_IMPL
	/* /dev/shm is tmpfs on every Debian machine; if not, NULL is right */
	if (m != NULL) {
		ck_assert_str_eq(m, "/dev/shm");
		ck_assert_int_eq(bc_osdep_is_memfs(m), 1);
	}
	ck_assert_int_eq(bc_osdep_is_memfs("/proc"), 0);
#else
	ck_assert_ptr_null(m);
	ck_assert_int_eq(bc_osdep_is_memfs("/dev/shm"), 0);
#endif
}
END_TEST

static int
getint(int fd, int level, int opt)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, level, opt, &v, &l) != 0)
		return -1;
	return v;
}

START_TEST(test_tcp_liveness)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(getint(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
	bc_osdep_tcp_liveness(fd, 7, 3, 4, 15500);
	ck_assert_int_ne(getint(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
#ifdef TCP_KEEPINTVL
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_KEEPINTVL), 3);
#endif
#ifdef TCP_KEEPCNT
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_KEEPCNT), 4);
#endif
#ifdef TCP_KEEPIDLE
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7);
#endif
#ifdef TCP_USER_TIMEOUT
	/* only Linux's implementation knows it; the fallback leaves it */
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_USER_TIMEOUT),
	    LINUX_IMPL ? 15500 : 0);
#endif
#if DARWIN_IMPL
	/* macOS: the idle time is TCP_KEEPALIVE, the user timeout whole
	 * seconds of TCP_RXT_CONNDROPTIME, rounded up */
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_KEEPALIVE), 7);
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_RXT_CONNDROPTIME), 16);
#endif
	/* a second call replaces the values */
	bc_osdep_tcp_liveness(fd, 9, 2, 3, 1000);
#ifdef TCP_KEEPIDLE
	ck_assert_int_eq(getint(fd, IPPROTO_TCP, TCP_KEEPIDLE), 9);
#endif
	close(fd);
}
END_TEST

START_TEST(test_peer_uid)
{
	int sv[2], nul;
	uid_t u = (uid_t)-1;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
#if LINUX_IMPL || DARWIN_IMPL || defined(HAVE_GETPEEREID)
	ck_assert_int_eq(bc_osdep_peer_uid(sv[0], &u), 0);
	ck_assert_uint_eq(u, getuid());
#else
	ck_assert_int_eq(bc_osdep_peer_uid(sv[0], &u), -1);
#endif
	/* not a socket */
	nul = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(nul, 0);
	ck_assert_int_eq(bc_osdep_peer_uid(nul, &u), -1);
	close(nul);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_exe_path)
{
	char *p = bc_osdep_exe_path();

#if LINUX_IMPL || DARWIN_IMPL
	ck_assert_ptr_nonnull(p);
	ck_assert(p[0] == '/');
	ck_assert_ptr_nonnull(strstr(p, "test_osdep"));
#else
	ck_assert_ptr_null(p);
#endif
	free(p);
}
END_TEST

START_TEST(test_rusage_runnable)
{
	struct rusage ru;
	long n = bc_osdep_runnable();

	memset(&ru, 0, sizeof(ru));
	ru.ru_maxrss = 2048;
	/* KiB on Linux and in the fallback, bytes on macOS */
	ck_assert(bc_osdep_maxrss_kb(&ru) == (DARWIN_IMPL ? 2 : 2048));
#if LINUX_IMPL
	ck_assert_int_ge(n, 1);		/* this process is running */
#else
	ck_assert_int_eq(n, -1);
#endif
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("osdep");
	TCase *tc = bc_tcase("osdep", BC_TEST_TIMEOUT);

	tcase_add_test(tc, test_stat_ns);
	tcase_add_test(tc, test_memfs);
	tcase_add_test(tc, test_tcp_liveness);
	tcase_add_test(tc, test_peer_uid);
	tcase_add_test(tc, test_exe_path);
	tcase_add_test(tc, test_rusage_runnable);
	suite_add_tcase(s, tc);
	return bc_unit_run(s);
}
