/*
 * jobrun.c - a job's waiting and its compile, in a worker: a compile
 * slot (an fcntl lock on one byte of the shared slot file, released by
 * the kernel when the worker dies), the compiler started in a process
 * group of its own led by a sentinel (compgroup.h), with cwd = the job
 * dir and relative names; meanwhile the client is watched (a reset, a
 * BEAT that cannot be written: gone; a half-close: the job goes on) and
 * the deadline and SIGTERM are kept.  Shared with job.c and compcache.c
 * through job_int.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP
#include <spawn.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/log.h"
#include "common/osdep.h"
#include "common/proto.h"
#include "common/util.h"
#include "common/wire.h"
#include "compgroup.h"
#include "job_int.h"
#include "pumpx.h"

static void
drain_fd(int fd)
{
	char tmp[64];

	while (read(fd, tmp, sizeof(tmp)) > 0)
		;
}

/*
 * FLAG_HEARTBEAT: send BEAT 0 if one is due (doc/PROTOCOL.md).  Only
 * called while no reply byte has been written.  Returns 1 if the client
 * is gone.
 */
int
bc_jobrun_beat(struct job *j)
{
	struct bc_io io;
	char hdr[BC_HDR_LEN + 1], e[BC_ERRLEN];
	int64_t now;

	if (j->beat_next <= 0 || (now = bc_now_ms()) < j->beat_next)
		return 0;
	j->beat_next = now + BC_BEAT_INTERVAL_MS;
	(void)snprintf(hdr, sizeof(hdr), "BEAT%08x", 0u);
	bc_io_init(&io, j->rfd, j->wfd, j->conf->io_timeout_ms);
	io.deadline_ms = j->deadline;
	io.idle_name = j->lim_io;
	io.deadline_name = j->lim_job;
	if (bc_io_write_full(&io, hdr, BC_HDR_LEN, e) == BC_OK)
		return 0;
	(void)snprintf(j->gone, sizeof(j->gone), "heartbeat not sent: %.400s", e);
	return 1;
}

/*
 * Wait up to ms for the client or a signal.  Returns 1 if the client is
 * gone (an error on its socket, or a BEAT that could not be written;
 * j->gone says which), 0 otherwise.
 *
 * EOF is not "gone": a client may shut down its sending side once its
 * request is complete (distcc clients may), and then waits for the
 * reply.  EOF only ends the watching (j->client_eof) and the job goes
 * on.  The price: a client that closed its socket entirely looks the
 * same from here until something is written to it, so its compile runs
 * to the end (bounded by --job-timeout) and the reply's write fails
 * (EPIPE/ECONNRESET: CLI_DISCONNECT); with FLAG_HEARTBEAT the next BEAT
 * finds out within seconds (doc/PROTOCOL.md).  A reset (the client's
 * machine said so) is gone at once.  Stray bytes after the request are
 * discarded.
 */
int
bc_jobrun_watch(struct job *j, int ms)
{
	struct pollfd p[2];
	int n;

	if (bc_jobrun_beat(j))
		return 1;
	p[0].fd = j->watch_rfd && !j->client_eof ? j->rfd : -1;
	p[0].events = POLLIN;
	p[0].revents = 0;
	p[1].fd = j->sig_rd;
	p[1].events = POLLIN;
	p[1].revents = 0;
	n = poll(p, 2, ms);
	if (n <= 0)
		return 0;
	if (p[1].revents != 0)
		drain_fd(j->sig_rd);
	if (p[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
		char tmp[4096];
		ssize_t r = read(j->rfd, tmp, sizeof(tmp));

		if (r == 0) {
			j->client_eof = 1;
			bc_debug("client %s: shut down its sending side "
			    "(half-close); the job goes on", j->peer);
		} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
			(void)snprintf(j->gone, sizeof(j->gone),
			    "connection error: %s", strerror(errno));
			return 1;
		}
	}
	return 0;
}

int
bc_jobrun_take_slot(struct job *j, char *why)
{
	const struct bc_job_conf *c = j->conf;
	int start, i;

	if (c->slot_fd < 0 || c->jobs <= 0)
		return BC_OK;
	start = (int)(getpid() % c->jobs);
	for (;;) {
		for (i = 0; i < c->jobs; i++) {
			struct flock fl;
			int s = (start + i) % c->jobs;

			memset(&fl, 0, sizeof(fl));
			fl.l_type = F_WRLCK;
			fl.l_whence = SEEK_SET;
			fl.l_start = s;
			fl.l_len = 1;
			if (fcntl(c->slot_fd, F_SETLK, &fl) == 0) {
				j->slot = s;
				return BC_OK;
			}
		}
		if (bc_job_term)
			return bc_seterr(why, BC_ERR_BUSY, "daemon shutting "
			    "down (SIGTERM) while the job waited for a compile "
			    "slot");
		if (bc_now_ms() >= j->deadline)
			return bc_seterr(why, BC_ERR_TIMEOUT, "%s passed while "
			    "the job waited for a compile slot (all %d busy)",
			    j->lim_job, c->jobs);
		if (bc_jobrun_watch(j, 5 + (int)(getpid() % 11)))
			return bc_seterr(why, BC_ERR_EOF, "client gone (%s) "
			    "while the job waited for a compile slot",
			    j->gone);
	}
}

void
bc_jobrun_release_slot(struct job *j)
{
	struct flock fl;

	if (j->slot < 0)
		return;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_UNLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = j->slot;
	fl.l_len = 1;
	(void)fcntl(j->conf->slot_fd, F_SETLK, &fl);
	j->slot = -1;
}

static int
open_out(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);

	free(p);
	return fd;
}

/* In the compiler child, which joins process group pgid: never
 * returns. */
static void
exec_compiler(const struct job *j, pid_t pgid, const char *path,
    char *const *argv)
{
	int in, fo, fe, s;
	sigset_t none;

	(void)setpgid(0, pgid);
	for (s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void)signal(s, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir(j->pump_cwd != NULL ? j->pump_cwd : j->dir) != 0)
		_exit(BC_EXIT_IO_ERROR);
	in = open("/dev/null", O_RDONLY);
	fo = open_out(j->dir, "stdout");
	fe = open_out(j->dir, "stderr");
	if (in < 0 || fo < 0 || fe < 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 ||
	    dup2(fe, 2) < 0)
		_exit(BC_EXIT_IO_ERROR);
	/* cc1/as temporaries go to the job dir (scratch.h), removed with it */
	if (setenv("_DISTCC_SAFEGUARD", "1", 1) != 0 ||
	    setenv("TMPDIR", j->dir, 1) != 0)
		_exit(BC_EXIT_OUT_OF_MEMORY);
	execv(path, argv);
	{
		char msg[256];
		int n = snprintf(msg, sizeof(msg),
		    "boltccd: cannot execute %s: %s\n", path, strerror(errno));

		if (n > 0)
			(void)write(2, msg, (size_t)n < sizeof(msg) ?
			    (size_t)n : sizeof(msg) - 1);
	}
	_exit(BC_EXIT_COMPILER_MISSING);
}

#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP
extern char **environ;

/*
 * What exec_compiler does, with posix_spawn: no copy of the worker's
 * page tables (glibc spawns with CLONE_VM|CLONE_VFORK), about 0.3 ms of
 * CPU per compile.  Returns the pid, or -1 with errno (the caller then
 * reports it as exec_compiler would: exit 110 and a message on stderr).
 */
static pid_t
spawn_compiler(const struct job *j, pid_t pgid, const char *path,
    char *const *argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	char *po = xasprintf("%s/stdout", j->dir);
	char *pe = xasprintf("%s/stderr", j->dir);
	pid_t pid = -1;
	int e;

	/* this worker process exists for this one job; cc1/as temporaries
	 * go to the job dir (scratch.h), removed with it */
	if (setenv("_DISTCC_SAFEGUARD", "1", 1) != 0 ||
	    setenv("TMPDIR", j->dir, 1) != 0) {
		free(po);
		free(pe);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	sigemptyset(&none);
	e = posix_spawn_file_actions_addchdir_np(&fa, j->pump_cwd != NULL ?
	    j->pump_cwd : j->dir);
	if (e == 0)
		e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
		    O_RDONLY, 0);
	if (e == 0)
		e = posix_spawn_file_actions_addopen(&fa, 1, po,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (e == 0)
		e = posix_spawn_file_actions_addopen(&fa, 2, pe,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (e == 0)
		e = posix_spawnattr_setsigdefault(&at, &all);
	if (e == 0)
		e = posix_spawnattr_setsigmask(&at, &none);
	if (e == 0)
		e = posix_spawnattr_setpgroup(&at, pgid);
	if (e == 0)
		e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
		    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
	if (e == 0)
		e = posix_spawn(&pid, path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(po);
	free(pe);
	if (e != 0) {
		errno = e;
		return -1;
	}
	return pid;
}
#endif

/* Start the compiler in group g; its pid, or -1 with *outcome set (and
 * *status and why as the failure needs). */
static pid_t
start_compiler(struct job *j, const struct bc_compgroup *g, const char *path,
    char *const *argv, int *status, int *outcome, char *why)
{
	pid_t pid;

#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP
	pid = spawn_compiler(j, g->pgid, path, argv);
	if (pid < 0) {
		char msg[256];
		int fd, n, e = errno;

		if (e == ENOMEM || e == EAGAIN) {
			bc_seterr(why, BC_ERR_IO, "spawn: %s", strerror(e));
			*outcome = BC_OUT_OTHER;
			return -1;
		}
		/* as exec_compiler reports a failed exec */
		fd = open_out(j->dir, "stderr");
		n = snprintf(msg, sizeof(msg),
		    "boltccd: cannot execute %s: %s\n", path, strerror(e));
		if (fd >= 0 && n > 0)
			(void)write(fd, msg, (size_t)n < sizeof(msg) ?
			    (size_t)n : sizeof(msg) - 1);
		if (fd >= 0)
			close(fd);
		*status = W_EXITCODE(BC_EXIT_COMPILER_MISSING, 0);
		*outcome = BC_OUT_COMPILE_ERROR;
		return -1;
	}
	(void)exec_compiler;
#else
	pid = fork();
	if (pid < 0) {
		bc_seterr(why, BC_ERR_IO, "fork: %s", strerror(errno));
		*outcome = BC_OUT_OTHER;
		return -1;
	}
	if (pid == 0)
		exec_compiler(j, g->pgid, path, argv);
#endif
	(void)setpgid(pid, g->pgid);	/* as the child does: no race */
	return pid;
}

/*
 * Run the compiler and wait.  *status gets the wait status; returns the
 * outcome (OK/COMPILE_ERROR/TIMEOUT/DISCONNECT/OTHER).  The compile runs
 * in a process group led by its sentinel (compgroup.h), so that it dies
 * with this worker, however the worker dies.
 */
int
bc_jobrun_compile(struct job *j, const char *path, char *const *argv,
    int *status, char *why)
{
	struct bc_compgroup g;
	struct rusage ru;
	pid_t pid, w;
	int st = 0, outcome = -1;
	int64_t t0 = bc_now_ms();

	if (bc_compgroup_start(&g, why) != BC_OK)
		return BC_OUT_OTHER;
	if ((pid = start_compiler(j, &g, path, argv, status, &outcome,
	    why)) < 0) {
		bc_compgroup_end(&g);
		return outcome;
	}
	/* while the compiler runs: keep what the client sent for later jobs */
	bc_pumpx_store_received(&j->received, j->conf->cache_dir);
	for (;;) {
		int64_t now, left;

		memset(&ru, 0, sizeof(ru));
		w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			bc_seterr(why, BC_ERR_IO, "wait: %s", strerror(errno));
			outcome = BC_OUT_OTHER;
			break;
		}
		now = bc_now_ms();
		if (bc_job_term) {
			bc_seterr(why, BC_ERR_BUSY, "daemon shutting down "
			    "(SIGTERM): compile killed after %lld ms",
			    (long long)(now - t0));
			outcome = BC_OUT_OTHER;
			break;
		}
		if (now >= j->deadline) {
			bc_seterr(why, BC_ERR_TIMEOUT, "%s passed: compile "
			    "killed after %lld ms", j->lim_job,
			    (long long)(now - t0));
			outcome = BC_OUT_TIMEOUT;
			break;
		}
		left = j->deadline - now;
		if (bc_jobrun_watch(j, left > 1000 ? 1000 : (int)left)) {
			bc_seterr(why, BC_ERR_EOF, "client gone (%s): compile "
			    "killed after %lld ms", j->gone,
			    (long long)(bc_now_ms() - t0));
			outcome = BC_OUT_DISCONNECT;
			break;
		}
	}
	/* what is left of the compile: all of it when it is ended early,
	 * the compiler's leftovers when it exited */
	bc_compgroup_end(&g);
	if (outcome >= 0) {
		(void)kill(pid, SIGKILL);	/* if it left the group */
		while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
			;
		*status = outcome == BC_OUT_TIMEOUT ?
		    W_EXITCODE(BC_EXIT_TIMEOUT, 0) :
		    W_EXITCODE(BC_EXIT_IO_ERROR, 0);
		return outcome;
	}
	j->rss_kb = bc_osdep_maxrss_kb(&ru);
	*status = st;
	return st == 0 ? BC_OUT_OK : BC_OUT_COMPILE_ERROR;
}
