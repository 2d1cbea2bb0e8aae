/*
 * activate.c - take listening sockets from systemd or launchd (see
 * activate.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef __APPLE__
#include <launch.h>
#endif

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/activate.h"

#define SD_LISTEN_FDS_START 3

int
bc_activate_parse_systemd(const char *listen_pid, const char *listen_fds,
    const char *listen_fdnames, long pid, struct bc_activated *out,
    size_t max, size_t *n, char *err)
{
	long long p, cnt;
	const char *names = listen_fdnames;
	size_t i;

	*n = 0;
	if (listen_pid == NULL || listen_fds == NULL)
		return BC_OK;
	if (bc_parse_int(listen_pid, 1, 0x7fffffffLL, &p) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "bad LISTEN_PID '%.32s'",
		    listen_pid);
	if (p != pid)
		return BC_OK;	/* meant for another process */
	if (bc_parse_int(listen_fds, 0, 0x7fffffffLL, &cnt) != BC_OK)
		return bc_seterr(err, BC_ERR_INVAL, "bad LISTEN_FDS '%.32s'",
		    listen_fds);
	if ((unsigned long long)cnt > max)
		return bc_seterr(err, BC_ERR_LIMIT, "LISTEN_FDS=%lld: more than "
		    "%zu sockets", cnt, max);
	for (i = 0; i < (size_t)cnt; i++) {
		out[i].fd = SD_LISTEN_FDS_START + (int)i;
		out[i].is_stats = 0;
		out[i].name[0] = '\0';
		if (names != NULL) {
			size_t len = strcspn(names, ":");

			if (len >= sizeof(out[i].name))
				return bc_seterr(err, BC_ERR_LIMIT, "LISTEN_FDNAMES "
				    "entry longer than %zu bytes",
				    sizeof(out[i].name) - 1);
			memcpy(out[i].name, names, len);
			out[i].name[len] = '\0';
			names = names[len] == ':' ? names + len + 1 : NULL;
		}
		out[i].is_stats = strcmp(out[i].name, "stats") == 0;
	}
	*n = (size_t)cnt;
	return BC_OK;
}

static int
local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -1;
}

static int
check_listener(int fd, char *err)
{
	int type = 0, on = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
		return bc_seterr(err, BC_ERR_INVAL, "activation fd %d is not a "
		    "socket: %s", fd, strerror(errno));
	if (type != SOCK_STREAM)
		return bc_seterr(err, BC_ERR_INVAL, "activation fd %d is not a "
		    "stream socket", fd);
#ifdef SO_ACCEPTCONN
	len = sizeof(on);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && !on)
		return bc_seterr(err, BC_ERR_INVAL, "activation fd %d is not "
		    "listening (Accept=yes units are not supported)", fd);
#endif
	(void)on;
	return BC_OK;
}

int
bc_activate_from_groups(bc_activate_get_fn get, struct bc_activated *out,
    size_t max, size_t *n, char *err)
{
	static const char *const groups[] = { "Listeners", "Stats", NULL };
	size_t g, k;

	*n = 0;
	for (g = 0; groups[g] != NULL; g++) {
		int *fds = NULL;
		size_t cnt = 0;
		int r = get(groups[g], &fds, &cnt);

		if (r == ESRCH)
			return BC_OK;	/* not started by launchd */
		if (r == ENOENT)
			continue;	/* no such group in the plist */
		if (r != 0)
			return bc_seterr(err, BC_ERR_IO, "launch_activate_socket"
			    "(%s): %s", groups[g], strerror(r));
		for (k = 0; k < cnt; k++) {
			if (*n >= max) {
				for (; k < cnt; k++)
					(void)close(fds[k]);
				free(fds);
				return bc_seterr(err, BC_ERR_LIMIT, "launchd "
				    "passed more than %zu sockets", max);
			}
			out[*n].fd = fds[k];
			out[*n].is_stats = g == 1;
			snprintf(out[*n].name, sizeof(out[*n].name), "%s",
			    g == 1 ? "stats" : groups[g]);
			(*n)++;
		}
		free(fds);
	}
	return BC_OK;
}

int
bc_activate_sockets(const struct bc_activate_env *env, int stats_port,
    struct bc_activated *out, size_t max, size_t *n, char *err)
{
	size_t i;
	int r;

	*n = 0;
#ifdef __APPLE__
	r = bc_activate_from_groups(launch_activate_socket, out, max, n, err);
	if (r != BC_OK)
		return r;
#endif
	if (*n == 0) {
		r = env == NULL ? BC_OK : bc_activate_parse_systemd(
		    env->listen_pid, env->listen_fds, env->listen_fdnames,
		    (long)getpid(), out, max, n, err);
		(void)unsetenv("LISTEN_PID");
		(void)unsetenv("LISTEN_FDS");
		(void)unsetenv("LISTEN_FDNAMES");
		if (r != BC_OK)
			return r;
	}
	for (i = 0; i < *n; i++) {
		int fl;

		r = check_listener(out[i].fd, err);
		if (r != BC_OK)
			return r;
		if (!out[i].is_stats && stats_port > 0 &&
		    local_port(out[i].fd) == stats_port)
			out[i].is_stats = 1;
		fl = fcntl(out[i].fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(out[i].fd, F_SETFL, fl | O_NONBLOCK);
		(void)fcntl(out[i].fd, F_SETFD, FD_CLOEXEC);
		bc_info("socket from the service manager: fd %d%s%s%s",
		    out[i].fd, out[i].name[0] != '\0' ? " (" : "",
		    out[i].name, out[i].name[0] != '\0' ? ")" : "");
	}
	return BC_OK;
}
