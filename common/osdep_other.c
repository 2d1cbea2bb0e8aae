/*
 * osdep_other.c - the portable fallback of osdep.h (macOS and every
 * system without an implementation of its own): no memory file system is
 * known, so callers keep their on-disk defaults.
 */
#include "config.h"

#include <stddef.h>

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
