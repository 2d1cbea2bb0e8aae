/*
 * osdep_linux.c - the Linux implementation of osdep.h (built only on
 * Linux; osdep_other.c is the portable fallback).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

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
