/*
 * osdep_darwin.c - the macOS implementation of osdep.h (built only on
 * Darwin; osdep_linux.c is Linux's, osdep_other.c the portable fallback).
 *
 * What macOS lacks, and what stands in (doc/macos.md):
 *   TCP_DEFER_ACCEPT   none (SO_ACCEPTFILTER is FreeBSD's): not deferred
 *   TCP_KEEPIDLE       TCP_KEEPALIVE (same meaning, seconds)
 *   TCP_USER_TIMEOUT   TCP_RXT_CONNDROPTIME (seconds of retransmission)
 *   SO_PEERCRED        getpeereid(3)
 *   /proc/self/exe     _NSGetExecutablePath(3)
 *   /proc/loadavg      getloadavg(3) for the averages; no runnable count
 *   statfs f_type      f_fstypename (the numbers are not stable on macOS)
 *   ru_maxrss in KiB   ru_maxrss is in bytes
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>
#include <mach-o/dyld.h>

#include "common/util.h"
#include "osdep.h"

int
bc_osdep_is_memfs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) != 0)
		return 0;
	return strcmp(sf.f_fstypename, "tmpfs") == 0;
}

const char *
bc_osdep_memdir(void)
{
	return NULL;	/* a stock macOS mounts no memory file system */
}

void
bc_osdep_defer_accept(int fd)
{
	(void)fd;
}

void
bc_osdep_tcp_liveness(int fd, int idle_s, int intvl_s, int cnt,
    int user_timeout_ms)
{
	int one = 1;
	int drop_s = user_timeout_ms > 0 ? (user_timeout_ms + 999) / 1000 : 0;

	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPALIVE, &idle_s,
	    sizeof(idle_s));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl_s,
	    sizeof(intvl_s));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	if (drop_s > 0)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_RXT_CONNDROPTIME,
		    &drop_s, sizeof(drop_s));
}

int
bc_osdep_peer_uid(int fd, uid_t *uid)
{
	gid_t gid;

	return getpeereid(fd, uid, &gid) == 0 ? 0 : -1;
}

char *
bc_osdep_exe_path(void)
{
	char buf[PATH_MAX], real[PATH_MAX];
	uint32_t n = sizeof(buf);

	if (_NSGetExecutablePath(buf, &n) != 0 || realpath(buf, real) == NULL)
		return NULL;
	return xstrdup(real);
}

int64_t
bc_osdep_maxrss_kb(const struct rusage *ru)
{
	return (int64_t)ru->ru_maxrss / 1024;
}

long
bc_osdep_runnable(void)
{
	return -1;
}
