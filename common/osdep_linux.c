/*
 * osdep_linux.c - the Linux implementation of osdep.h (built only on
 * Linux; osdep_darwin.c is macOS's, osdep_other.c the portable fallback).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "common/util.h"
#include "osdep.h"

int
bc_osdep_is_memfs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) != 0)
		return 0;
	return sf.f_type == TMPFS_MAGIC;
}

const char *
bc_osdep_memdir(void)
{
	static const char shm[] = "/dev/shm";

	if (bc_osdep_is_memfs(shm) && access(shm, W_OK | X_OK) == 0)
		return shm;
	return NULL;
}

void
bc_osdep_defer_accept(int fd)
{
	int sec = 1;	/* then the connection is reported without data */

	(void)setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &sec, sizeof(sec));
}

void
bc_osdep_tcp_liveness(int fd, int idle_s, int intvl_s, int cnt,
    int user_timeout_ms)
{
	int one = 1;
	unsigned int ut = user_timeout_ms > 0 ? (unsigned int)user_timeout_ms : 0;

	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s,
	    sizeof(idle_s));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl_s,
	    sizeof(intvl_s));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
}

int
bc_osdep_peer_uid(int fd, uid_t *uid)
{
	struct ucred uc;
	socklen_t ul = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) != 0)
		return -1;
	*uid = uc.uid;
	return 0;
}

char *
bc_osdep_exe_path(void)
{
	char buf[PATH_MAX];

	if (realpath("/proc/self/exe", buf) == NULL)
		return NULL;
	return xstrdup(buf);
}

int64_t
bc_osdep_maxrss_kb(const struct rusage *ru)
{
	return (int64_t)ru->ru_maxrss;
}

long
bc_osdep_runnable(void)
{
	char line[128];
	const char *p;
	FILE *f;
	long n = -1;

	if ((f = fopen("/proc/loadavg", "r")) == NULL)
		return -1;
	/* "0.50 0.40 0.30 3/812 12345": the 4th field's numerator */
	if (fgets(line, sizeof(line), f) != NULL) {
		int fields = 0;

		for (p = line; *p != '\0' && fields < 3; p++)
			if (*p == ' ')
				fields++;
		if (fields == 3) {
			char *end;
			long v = strtol(p, &end, 10);

			if (end != p && *end == '/')
				n = v;
		}
	}
	fclose(f);
	return n;
}
