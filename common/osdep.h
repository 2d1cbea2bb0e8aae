/*
 * osdep.h - small OS-specific probes behind one portable interface.
 *
 * Each function has a Linux (or other OS) implementation and a portable
 * fallback that answers "don't know / none", so callers never need
 * #ifdefs of their own.
 */
#ifndef BC_OSDEP_H
#define BC_OSDEP_H

/* 1 if path is on a memory-backed file system (Linux: tmpfs, checked with
 * statfs), 0 if not or unknown (the portable fallback always says 0). */
int bc_osdep_is_memfs(const char *path);

/* A writable memory-backed directory for short-lived scratch files
 * (Linux: /dev/shm when it is tmpfs and writable), or NULL if there is
 * none or the OS has no known one. */
const char *bc_osdep_memdir(void);

/* Ask the kernel to report a connection on listening socket fd only once
 * its first bytes arrived (Linux: TCP_DEFER_ACCEPT), so that a request
 * that fits in one packet can be read at accept.  Every protocol on the
 * job port has the client speak first.  The fallback does nothing; either
 * way the caller must cope with a connection that has no data yet. */
void bc_osdep_defer_accept(int fd);

#endif
