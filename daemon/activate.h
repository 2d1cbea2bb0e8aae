/*
 * activate.h - listening sockets handed over by a service manager.
 *
 *   systemd:  LISTEN_PID (must be this process), LISTEN_FDS (count, fds
 *             start at 3), LISTEN_FDNAMES (colon-separated names from the
 *             units' FileDescriptorName=); see contrib/systemd/.
 *   launchd:  launch_activate_socket("Listeners") and ("Stats") on macOS;
 *             see contrib/xcode/.
 *
 * A socket named "stats" (either manager) serves the stats page; any
 * other is a job listener, unless its local port equals --stats-port.
 * Without a manager nothing is returned and boltccd binds its own.
 */
#ifndef BC_ACTIVATE_H
#define BC_ACTIVATE_H

#include <stddef.h>

#define BC_ACTIVATE_MAX	16

/* systemd's variables as read at start (dconf.h), NULL = unset. */
struct bc_activate_env {
	char *listen_pid;	/* LISTEN_PID */
	char *listen_fds;	/* LISTEN_FDS */
	char *listen_fdnames;	/* LISTEN_FDNAMES */
};

struct bc_activated {
	int fd;
	int is_stats;
	char name[64];
};

/*
 * Parse systemd's variables (values as strings, NULL = unset) for
 * process `pid`.  Fills out (up to max) and *n; BC_OK with *n == 0 when
 * they do not apply (unset, or meant for another process); an error for
 * malformed values.  Pure: touches no fd.
 */
int bc_activate_parse_systemd(const char *listen_pid, const char *listen_fds,
    const char *listen_fdnames, long pid, struct bc_activated *out,
    size_t max, size_t *n, char *err);

/*
 * launch_activate_socket(3): the fds of socket group `name` of the
 * plist (malloc'd array, caller frees), 0, or ESRCH (not started by
 * launchd), ENOENT (no such group), another errno.
 */
typedef int (*bc_activate_get_fn)(const char *name, int **fds, size_t *cnt);

/*
 * launchd's groups "Listeners" (job sockets) and "Stats" (stats page),
 * asked of `get` (launch_activate_socket on macOS; the unit tests pass
 * a stand-in, so this half is tested on every system).  BC_OK with
 * *n == 0 when not started by launchd; on error every fd received is
 * closed or in out[0..*n).
 */
int bc_activate_from_groups(bc_activate_get_fn get, struct bc_activated *out,
    size_t max, size_t *n, char *err);

/*
 * The sockets of whichever manager started us (launchd first on macOS,
 * then systemd, from env: the LISTEN_* values read at start; NULL: none).
 * Checks each fd is a listening stream socket, sets it non-blocking and
 * close-on-exec, decides is_stats (name "stats", or local port ==
 * stats_port), and unsets LISTEN_* in the environment so children do
 * not see them.  BC_OK with *n == 0 when not socket-activated.
 */
int bc_activate_sockets(const struct bc_activate_env *env, int stats_port,
    struct bc_activated *out, size_t max, size_t *n, char *err);

#endif
