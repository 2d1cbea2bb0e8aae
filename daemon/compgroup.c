/*
 * compgroup.c - a compile's process group and its sentinel (see
 * compgroup.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "compgroup.h"

/* In the sentinel (a fork of a worker): only async-signal-safe calls.
 * It keeps the worker's other descriptors for its short life; it never
 * uses them, and it dies with the compile.  Only EOF means the worker is
 * gone: on a read error it leaves the compile unguarded rather than
 * killing a compile whose worker waits for it. */
static void
sentinel(int rd)
{
	char c;
	ssize_t n;

	(void)setpgid(0, 0);
	do
		n = read(rd, &c, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	if (n == 0)
		(void)kill(0, SIGKILL);
	_exit(0);
}

int
bc_compgroup_start(struct bc_compgroup *g, char *err)
{
	int p[2], e;
	pid_t pid;

	g->pgid = -1;
	g->hold = -1;
	if (pipe(p) != 0)
		return bc_seterr(err, BC_ERR_IO, "pipe for the compile's "
		    "sentinel: %s", strerror(errno));
	(void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(p[1], F_SETFD, FD_CLOEXEC);
	if ((pid = fork()) < 0) {
		e = errno;
		close(p[0]);
		close(p[1]);
		return bc_seterr(err, BC_ERR_IO, "fork of the compile's "
		    "sentinel: %s", strerror(e));
	}
	if (pid == 0) {
		close(p[1]);
		sentinel(p[0]);
	}
	close(p[0]);
	(void)setpgid(pid, pid);	/* as the child does: no race */
	g->pgid = pid;
	g->hold = p[1];
	return BC_OK;
}

void
bc_compgroup_end(struct bc_compgroup *g)
{
	int st;

	if (g->pgid > 0) {
		(void)kill(-g->pgid, SIGKILL);
		(void)kill(g->pgid, SIGKILL);	/* if it had no group yet */
		while (waitpid(g->pgid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (g->hold >= 0)
		close(g->hold);
	g->pgid = -1;
	g->hold = -1;
}
