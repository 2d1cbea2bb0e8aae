/*
 * local.c - run the real compiler on this machine.
 *
 * The one rule that matters here: boltcc must never exec itself.  A
 * masquerade directory (a "gcc" symlink to boltcc early on PATH) would
 * otherwise make every compile recurse, so every PATH candidate is
 * resolved and compared with boltcc's own resolved path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/osdep.h"
#include "common/log.h"
#include "common/util.h"
#include "client/local.h"

static int
is_executable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	return access(path, X_OK) == 0;
}

static char *
resolve(const char *path)
{
	char *r = realpath(path, NULL);

	return r;
}

/* Join dir and name (an empty PATH entry means "."). */
static char *
path_join(const char *dir, size_t dirlen, const char *name)
{
	if (dirlen == 0)
		return xasprintf("./%s", name);
	return xasprintf("%.*s/%s", (int)dirlen, dir, name);
}

/*
 * Call fn for each PATH candidate of name; stop when fn returns nonzero
 * and hand back that candidate.
 */
static char *
path_search(const char *path_env, const char *name,
    int (*fn)(const char *cand, const void *arg), const void *arg)
{
	const char *p = path_env != NULL ? path_env : "/usr/local/bin:/usr/bin:/bin";

	for (;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon != NULL ? (size_t)(colon - p) : strlen(p);
		char *cand = path_join(p, len, name);

		if (is_executable_file(cand) && fn(cand, arg))
			return cand;
		free(cand);
		if (colon == NULL)
			break;
		p = colon + 1;
	}
	return NULL;
}

static int
accept_any(const char *cand, const void *arg)
{
	(void)cand;
	(void)arg;
	return 1;
}

static int
accept_not_self(const char *cand, const void *arg)
{
	return !bc_local_is_self(arg, cand);
}

void
bc_local_self_init(struct bc_self *self, const char *argv0,
    const char *path_env)
{
	self->paths[0] = NULL;
	self->paths[1] = NULL;
	if (argv0 != NULL && strchr(argv0, '/') != NULL) {
		self->paths[0] = resolve(argv0);
	} else if (argv0 != NULL && *argv0 != '\0') {
		char *cand = path_search(path_env, argv0, accept_any, NULL);

		if (cand != NULL) {
			self->paths[0] = resolve(cand);
			free(cand);
		}
	}
	self->paths[1] = bc_osdep_exe_path();
}

void
bc_local_self_free(struct bc_self *self)
{
	free(self->paths[0]);
	free(self->paths[1]);
	self->paths[0] = self->paths[1] = NULL;
}

int
bc_local_is_self(const struct bc_self *self, const char *path)
{
	char *r = resolve(path);
	int same = 0;
	size_t i;

	if (r == NULL)
		return 0;
	for (i = 0; i < 2; i++)
		if (self->paths[i] != NULL && strcmp(self->paths[i], r) == 0)
			same = 1;
	free(r);
	return same;
}

int
bc_local_find_compiler(const struct bc_self *self, const char *name,
    const char *path_env, char **out, char *err)
{
	char *cand;

	*out = NULL;
	if (name == NULL || *name == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "no compiler named");
	if (strchr(name, '/') != NULL) {
		if (!bc_local_is_self(self, name)) {
			*out = xstrdup(name);
			return BC_OK;
		}
		/* An explicit path to a masquerade link: look the name up. */
		name = bc_basename(name);
	}
	cand = path_search(path_env, name, accept_not_self, self);
	if (cand == NULL)
		return bc_seterr(err, BC_ERR_NOENT,
		    "cannot find the real compiler '%s' on PATH "
		    "(only boltcc itself is there)", name);
	*out = cand;
	return BC_OK;
}

char *
bc_local_clean_path(const struct bc_self *self, const char *name,
    const char *path_env)
{
	const char *p = path_env != NULL ? path_env : "";
	struct bc_buf out;
	char *res;
	int first = 1;

	if (strchr(name, '/') != NULL)
		name = bc_basename(name);
	bc_buf_init(&out, (size_t)1 << 20);
	for (;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon != NULL ? (size_t)(colon - p) : strlen(p);
		char *cand = path_join(p, len, name);
		int skip = is_executable_file(cand) &&
		    bc_local_is_self(self, cand);

		free(cand);
		if (!skip) {
			if (!first)
				(void)bc_buf_put(&out, ":", 1);
			(void)bc_buf_put(&out, p, len);
			first = 0;
		}
		if (colon == NULL)
			break;
		p = colon + 1;
	}
	res = xstrndup(bc_buf_len(&out) > 0 ? (const char *)bc_buf_data(&out) :
	    "", bc_buf_len(&out));
	bc_buf_free(&out);
	return res;
}

int
bc_local_exec(const char *path, char *const argv[], char *err)
{
	execv(path, argv);
	return bc_seterr(err, BC_ERR_COMPILER, "cannot run %s: %s", path,
	    strerror(errno));
}

int
bc_local_run(const char *path, char *const argv[], int out_fd, int err_fd,
    int *status, char *err)
{
	pid_t pid, w;

	*status = 0;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return bc_seterr(err, BC_ERR_IO, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0)
			_exit(127);
		if (err_fd >= 0 && dup2(err_fd, STDERR_FILENO) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execv(path, argv);
		/* Report through the (possibly redirected) stderr. */
		{
			char msg[BC_ERRLEN];
			int n = snprintf(msg, sizeof(msg),
			    "boltcc: cannot run %s: %s\n", path,
			    strerror(errno));

			if (n > 0) {
				size_t len = (size_t)n < sizeof(msg) ?
				    (size_t)n : sizeof(msg) - 1;
				ssize_t wr = write(STDERR_FILENO, msg, len);

				(void)wr;
			}
		}
		_exit(127);
	}
	do {
		w = waitpid(pid, status, 0);
	} while (w < 0 && errno == EINTR);
	if (w < 0)
		return bc_seterr(err, BC_ERR_IO, "waitpid: %s", strerror(errno));
	return BC_OK;
}

extern char **environ;

static int
cloexec_pipe(int p[2])
{
	if (pipe(p) != 0)
		return -1;
	(void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* Read what is there from fd into b; 1 at EOF.  Bytes beyond b's max
 * are read and dropped (*over set), so the child never blocks. */
static int
drain(int fd, struct bc_buf *b, int *over)
{
	uint8_t tmp[16384], *dst;
	ssize_t n;
	size_t room;

	room = bc_buf_room(b);
	if (room > 0 && bc_buf_reserve(b, room < 65536 ? room : 65536,
	    &dst) == BC_OK) {
		n = read(fd, dst, room < 65536 ? room : 65536);
		if (n > 0)
			(void)bc_buf_commit(b, (size_t)n);
	} else
		n = read(fd, tmp, sizeof(tmp));
	if (n > 0 && room == 0)
		*over = 1;
	if (n == 0)
		return 1;
	if (n < 0 && errno != EINTR && errno != EAGAIN)
		return 1;
	return 0;
}

int
bc_local_capture(const char *path, char *const argv[], struct bc_buf *out,
    struct bc_buf *errout, int *status, char *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	int po[2], pe[2], e, over = 0, dummy = 0;
	struct pollfd pf[2];
	pid_t pid, w;

	*status = 0;
	if (cloexec_pipe(po) != 0)
		return bc_seterr(err, BC_ERR_IO, "pipe: %s", strerror(errno));
	if (cloexec_pipe(pe) != 0) {
		e = errno;
		close(po[0]);
		close(po[1]);
		return bc_seterr(err, BC_ERR_IO, "pipe: %s", strerror(e));
	}
	fflush(stdout);
	fflush(stderr);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, po[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, pe[1], STDERR_FILENO);
	posix_spawnattr_init(&at);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&pid, path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (e != 0) {
		close(po[0]);
		close(pe[0]);
		if (e == ENOMEM || e == EAGAIN)
			return bc_seterr(err, BC_ERR_IO, "cannot start %s: %s",
			    path, strerror(e));
		(void)bc_buf_putf(errout, "boltcc: cannot run %s: %s\n", path,
		    strerror(e));
		*status = 127 << 8;
		return BC_OK;
	}
	pf[0].fd = po[0];
	pf[1].fd = pe[0];
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		int i;

		pf[0].events = pf[1].events = POLLIN;
		pf[0].revents = pf[1].revents = 0;
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || pf[i].revents == 0)
				continue;
			if (drain(pf[i].fd, i == 0 ? out : errout,
			    i == 0 ? &over : &dummy)) {
				close(pf[i].fd);
				pf[i].fd = -1;
			}
		}
	}
	if (pf[0].fd >= 0)
		close(pf[0].fd);
	if (pf[1].fd >= 0)
		close(pf[1].fd);
	do {
		w = waitpid(pid, status, 0);
	} while (w < 0 && errno == EINTR);
	if (w < 0)
		return bc_seterr(err, BC_ERR_IO, "waitpid: %s", strerror(errno));
	if (over)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "preprocessed output larger than %zu bytes",
		    bc_buf_max(out));
	return BC_OK;
}

int
bc_local_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
