/*
 * compgroup.h - the process group a compile runs in, and its sentinel.
 *
 * A compiler runs in a process group of its own, so that the end of a
 * job (its timeout, its client gone, the daemon's SIGTERM) kills the
 * whole compile with one kill(-pgid): the driver and what it started
 * (gcc's cc1 and as, a wrapper's children).  Being outside the daemon's
 * process group, that group would survive a SIGKILL of the daemon's
 * whole group and run on for nobody; killing the driver alone would not
 * help either (gcc's driver leaves cc1 running on SIGTERM, SIGHUP and
 * SIGKILL, and PR_SET_PDEATHSIG is not inherited by the driver's
 * children).
 *
 * So the group's leader is a sentinel: a child the worker forks for the
 * compile, which blocks reading a pipe whose only write end the worker
 * holds (close-on-exec: no compiler inherits it).  When the worker dies,
 * however it dies, the read ends in EOF and the sentinel kills its group,
 * itself included.  Plain POSIX (fork, setpgid, a pipe, kill), so the
 * same on Linux, macOS and elsewhere, and without a race: the sentinel
 * exists before the compiler, so a worker that dies at any point after
 * bc_compgroup_start leaves no compile behind.  The cost is one fork of
 * the worker per compile; the sentinel never runs after its read.
 */
#ifndef BC_COMPGROUP_H
#define BC_COMPGROUP_H

#include <sys/types.h>

struct bc_compgroup {
	pid_t pgid;	/* the sentinel's pid, the group's id; -1 none */
	int hold;	/* the pipe's write end, held by the worker; -1 none */
};

/* Fork the sentinel, leader of a new process group; the compiler then
 * joins it (setpgid(0, g->pgid), or posix_spawnattr_setpgroup).  BC_OK,
 * or BC_ERR_IO with err (g is then empty, and bc_compgroup_end does
 * nothing). */
int bc_compgroup_start(struct bc_compgroup *g, char *err);

/* The compile is over (or is being ended): kill what is left of the
 * group with SIGKILL, the sentinel included, and reap the sentinel.
 * While it is not reaped, its pid and so the group's id cannot be
 * anyone else's. */
void bc_compgroup_end(struct bc_compgroup *g);

#endif
