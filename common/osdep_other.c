/*
 * osdep_other.c - the portable fallback of osdep.h, for every system
 * without an implementation of its own (Linux has osdep_linux.c, macOS
 * osdep_darwin.c).  POSIX only: where POSIX has no answer it says "don't
 * know / none", so callers keep their defaults.  It is also linked into
 * a unit test on Linux (tests/unit/test_osdep.c), so it stays compiled.
 */
#include "config.h"

#include <stddef.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "osdep.h"

int
bc_osdep_is_memfs(const char *path)
{
	(void)path;
	return 0;
}

const char *
bc_osdep_memdir(void)
{
	return NULL;
}

void
bc_osdep_defer_accept(int fd)
{
	(void)fd;
}

/* SO_KEEPALIVE is POSIX; the tuning options only where the headers have
 * them (the BSDs have TCP_KEEPIDLE, TCP_KEEPINTVL and TCP_KEEPCNT). */
void
bc_osdep_tcp_liveness(int fd, int idle_s, int intvl_s, int cnt,
    int user_timeout_ms)
{
	int one = 1;

	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
#ifdef TCP_KEEPIDLE
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s,
	    sizeof(idle_s));
#endif
#ifdef TCP_KEEPINTVL
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl_s,
	    sizeof(intvl_s));
#endif
#ifdef TCP_KEEPCNT
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
#endif
	(void)idle_s;
	(void)intvl_s;
	(void)cnt;
	(void)user_timeout_ms;
}

/* getpeereid(3) is not POSIX; the BSDs have it, glibc does not
 * (configure checks). */
int
bc_osdep_peer_uid(int fd, uid_t *uid)
{
#ifdef HAVE_GETPEEREID
	gid_t gid;

	return getpeereid(fd, uid, &gid) == 0 ? 0 : -1;
#else
	(void)fd;
	(void)uid;
	return -1;
#endif
}

char *
bc_osdep_exe_path(void)
{
	return NULL;
}

int64_t
bc_osdep_maxrss_kb(const struct rusage *ru)
{
	return (int64_t)ru->ru_maxrss;
}

long
bc_osdep_runnable(void)
{
	return -1;
}
