/*
 * osdep.c - OS-specific probes (see osdep.h).
 */
#include "config.h"

#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#include <linux/magic.h>
#endif

#include "osdep.h"

#ifdef __linux__
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
#else
/* Portable fallback: no known memory file system. */
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
#endif
