/*
 * osdep.h - small OS-specific facilities behind one portable interface.
 *
 * Three implementations, one chosen by configure:
 *   osdep_linux.c   Linux (statfs magic numbers, TCP_DEFER_ACCEPT,
 *                   TCP_USER_TIMEOUT, SO_PEERCRED, /proc)
 *   osdep_darwin.c  macOS (statfs f_fstypename, TCP_KEEPALIVE,
 *                   TCP_RXT_CONNDROPTIME, getpeereid,
 *                   _NSGetExecutablePath)
 *   osdep_other.c   the portable fallback: POSIX only, answering
 *                   "don't know / none" where POSIX has no answer.
 * Callers never need #ifdefs of their own.  doc/macos.md lists what
 * differs and why.
 */
#ifndef BC_OSDEP_H
#define BC_OSDEP_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/socket.h>

/* The send(2) flag that keeps a write to a closed peer from raising
 * SIGPIPE (Linux: MSG_NOSIGNAL).  macOS has no such flag (SO_NOSIGPIPE
 * is per socket); there it is 0, and what matters is that every boltcc
 * program ignores SIGPIPE (they all do, at start). */
#ifdef MSG_NOSIGNAL
#define BC_MSG_NOSIGNAL MSG_NOSIGNAL
#else
#define BC_MSG_NOSIGNAL 0
#endif

/* 1 if path is on a memory-backed file system (Linux: tmpfs by statfs
 * magic; macOS: an f_fstypename of "tmpfs"), 0 if not or unknown. */
int bc_osdep_is_memfs(const char *path);

/* A writable memory-backed directory for short-lived scratch files
 * (Linux: /dev/shm when it is tmpfs and writable), or NULL if there is
 * none or the OS has no known one (macOS has none by default). */
const char *bc_osdep_memdir(void);

/* Ask the kernel to report a connection on listening socket fd only once
 * its first bytes arrived (Linux: TCP_DEFER_ACCEPT), so that a request
 * that fits in one packet can be read at accept.  Every protocol on the
 * job port has the client speak first.  Elsewhere (macOS has no
 * counterpart) it does nothing; either way the caller must cope with a
 * connection that has no data yet. */
void bc_osdep_defer_accept(int fd);

/*
 * Keepalive on a connected TCP socket: the first probe after idle_s idle
 * seconds, then every intvl_s, cnt unanswered probes end the connection;
 * and an error once sent data stays unacknowledged for user_timeout_ms
 * (Linux: TCP_USER_TIMEOUT; macOS: TCP_RXT_CONNDROPTIME, whole seconds,
 * rounded up; the fallback: only what <netinet/tcp.h> defines).  Best
 * effort: failures are ignored, the socket stays usable.
 */
void bc_osdep_tcp_liveness(int fd, int idle_s, int intvl_s, int cnt,
    int user_timeout_ms);

/* The uid of the process at the other end of connected AF_UNIX socket
 * fd into *uid (Linux: SO_PEERCRED; macOS and the fallback: getpeereid).
 * 0, or -1 if the OS cannot tell. */
int bc_osdep_peer_uid(int fd, uid_t *uid);

/* Absolute, symlink-resolved path of the running executable (malloc'd),
 * or NULL if the OS cannot tell (Linux: /proc/self/exe; macOS:
 * _NSGetExecutablePath; the fallback: NULL). */
char *bc_osdep_exe_path(void);

/* A child's peak resident set from its rusage, in KiB (ru_maxrss is KiB
 * on Linux and the BSDs, bytes on macOS). */
int64_t bc_osdep_maxrss_kb(const struct rusage *ru);

/* Runnable scheduling entities now (Linux: the numerator of the 4th
 * field of /proc/loadavg), or -1 if the OS does not tell (macOS, the
 * fallback).  The load averages themselves come from getloadavg(3),
 * which every supported system has. */
long bc_osdep_runnable(void);

/* Modification and status-change times of a stat result in nanoseconds
 * since the epoch (struct stat's st_mtim on Linux and POSIX 2008,
 * st_mtimespec on macOS; whole seconds where neither exists). */
static inline int64_t
bc_osdep_ns(int64_t sec, long nsec)
{
	return sec * 1000000000LL + nsec;
}
#if defined(HAVE_STRUCT_STAT_ST_MTIM_TV_NSEC)
#define bc_osdep_mtime_ns(sb) \
	bc_osdep_ns((int64_t)(sb)->st_mtim.tv_sec, (long)(sb)->st_mtim.tv_nsec)
#define bc_osdep_ctime_ns(sb) \
	bc_osdep_ns((int64_t)(sb)->st_ctim.tv_sec, (long)(sb)->st_ctim.tv_nsec)
#elif defined(HAVE_STRUCT_STAT_ST_MTIMESPEC_TV_NSEC)
#define bc_osdep_mtime_ns(sb) bc_osdep_ns((int64_t)(sb)->st_mtimespec.tv_sec, \
	(long)(sb)->st_mtimespec.tv_nsec)
#define bc_osdep_ctime_ns(sb) bc_osdep_ns((int64_t)(sb)->st_ctimespec.tv_sec, \
	(long)(sb)->st_ctimespec.tv_nsec)
#else
#define bc_osdep_mtime_ns(sb) bc_osdep_ns((int64_t)(sb)->st_mtime, 0)
#define bc_osdep_ctime_ns(sb) bc_osdep_ns((int64_t)(sb)->st_ctime, 0)
#endif

#endif
