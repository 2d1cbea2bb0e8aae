/*
 * sshclient.c - the boltcc side of SSH hosts: resolving host entries
 * against ~/.ssh/config, and asking the per-user helper (the separate
 * boltcc-ssh executable, sshmux.c) for a connection.  Nothing here links
 * libssh2, so boltcc does not load it (or libcrypto, libz) at every
 * start; the helper is exec'd only when an SSH host is used.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/io.h"
#include "common/log.h"
#include "common/util.h"
#include "client/exepath.h"
#include "client/remote.h"
#include "client/ssh.h"
#include "client/sshconf.h"

/* Set by bc_ssh_configure (main); read by resolve. */
static char *g_home, *g_luser, *g_agent, *g_key;
static char *bc_ssh_g_statedir;
static int bc_ssh_g_idle = BC_SSH_IDLE_SEC;
static char *bc_ssh_g_helper_log;

/* The local user's home and name, found only when an SSH host is
 * resolved: every boltcc start calls bc_ssh_configure, and getpwuid
 * (nsswitch, /etc/passwd) is not free when USER or HOME is unset, as in
 * Xcode's jobs. */
static void
user_env(void)
{
	const char *v = getenv("HOME");
	struct passwd *pw = NULL;

	if (g_home != NULL)
		return;
	if (v == NULL || *v == '\0' || getenv("USER") == NULL)
		pw = getpwuid(getuid());
	g_home = xstrdup(v != NULL && *v != '\0' ? v :
	    (pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : "/"));
	v = pw != NULL ? pw->pw_name : getenv("USER");
	g_luser = xstrdup(v != NULL ? v : "root");
}

void
bc_ssh_configure(const char *statedir)
{
	const char *v;
	long long x;

	free(g_home);
	free(g_luser);
	g_home = g_luser = NULL;	/* user_env(), when an SSH host is used */
	free(g_agent);
	free(g_key);
	free(bc_ssh_g_statedir);
	free(bc_ssh_g_helper_log);
	v = getenv("SSH_AUTH_SOCK");
	g_agent = v != NULL && *v != '\0' ? xstrdup(v) : NULL;
	v = getenv("BOLTCC_SSH_KEY");
	g_key = v != NULL && *v != '\0' ? xstrdup(v) : NULL;
	v = getenv("BOLTCC_SSH_IDLE");
	if (v != NULL && bc_parse_int(v, 0, 86400, &x) == BC_OK)
		bc_ssh_g_idle = (int)x;
	v = getenv("BOLTCC_SSH_HELPER_LOG");
	bc_ssh_g_helper_log = v != NULL && *v != '\0' ? xstrdup(v) : NULL;
	bc_ssh_g_statedir = statedir != NULL ? xstrdup(statedir) : NULL;
}

void
bc_ssh_target_free(struct bc_ssh_target *t)
{
	free(t->alias);
	free(t->hostname);
	free(t->user);
	free(t->command);
	free(t->mux_command);
	free(t->agent);
	bc_strv_free(&t->identities);
	bc_strv_free(&t->known_hosts);
	memset(t, 0, sizeof(*t));
}

static int
read_config(const char *path, const char *alias, struct bc_sshcfg *c,
    char *err)
{
	struct bc_buf b;
	char e2[BC_ERRLEN];
	int r;

	bc_buf_init(&b, BC_SSHCONF_MAX_BYTES);
	r = bc_read_file(path, BC_SSHCONF_MAX_BYTES, &b, e2);
	if (r == BC_ERR_NOENT || (r != BC_OK && access(path, F_OK) != 0)) {
		bc_buf_free(&b);
		return BC_OK;
	}
	if (r == BC_OK)
		r = bc_sshcfg_parse((const char *)bc_buf_data(&b),
		    bc_buf_len(&b), alias, c, e2);
	bc_buf_free(&b);
	if (r != BC_OK)
		return bc_seterr(err, r, "%s: %s", path, e2);
	return BC_OK;
}

static int
push_expanded(struct bc_strv *out, const struct bc_strv *in,
    const struct bc_ssh_target *t, char *err)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		char *p = bc_sshcfg_expand(in->v[i], g_home, g_luser, t->user,
		    t->hostname, err);

		if (p == NULL)
			return BC_ERR_INVAL;
		bc_strv_push_owned(out, p);
	}
	return BC_OK;
}

static int
has_newline(const char *s)
{
	return s != NULL && strpbrk(s, "\r\n") != NULL;
}

int
bc_ssh_resolve(const struct bc_host *h, int timeout_ms,
    struct bc_ssh_target *t, char *err)
{
	struct bc_sshcfg c;
	char *path;
	size_t i;
	int r;

	user_env();
	memset(t, 0, sizeof(*t));
	bc_strv_init(&t->identities);
	bc_strv_init(&t->known_hosts);
	if (h->kind != BC_HOST_SSH || h->name == NULL)
		return bc_seterr(err, BC_ERR_INVAL, "not an SSH host");
	bc_sshcfg_init(&c);
	path = xasprintf("%s/.ssh/config", g_home);
	r = read_config(path, h->name, &c, err);
	free(path);
	if (r == BC_OK)
		r = read_config("/etc/ssh/ssh_config", h->name, &c, err);
	if (r != BC_OK) {
		bc_sshcfg_free(&c);
		return r;
	}
	for (i = 0; i < c.notes.n; i++)
		bc_debug("ssh config: %s", c.notes.v[i]);
	t->alias = xstrdup(h->name);
	t->hostname = xstrdup(c.hostname != NULL ? c.hostname : h->name);
	t->port = c.port > 0 ? c.port : 22;
	t->user = xstrdup(h->user != NULL && *h->user != '\0' ? h->user :
	    (c.user != NULL ? c.user : g_luser));
	if (h->command != NULL && *h->command != '\0') {
		t->command = xasprintf("%s --inetd", h->command);
		t->mux_command = xasprintf("%s --mux", h->command);
	} else {
		t->command = xstrdup(BC_SSH_DEFAULT_COMMAND " --inetd");
		t->mux_command = xstrdup(BC_SSH_DEFAULT_COMMAND " --mux");
	}
	t->strict = c.strict < 0 ? BC_SSH_STRICT_YES : c.strict;
	t->timeout_ms = c.connect_timeout > 0 ? c.connect_timeout * 1000 :
	    timeout_ms;
	if (t->timeout_ms <= 0)
		t->timeout_ms = 4000;
	/* keys: boltcc's own, then the config's, else ssh's defaults */
	if (g_key != NULL)
		bc_strv_push(&t->identities, g_key);
	r = push_expanded(&t->identities, &c.identity, t, err);
	if (r == BC_OK && c.identity.n == 0) {
		static const char *const defs[] = { "id_ed25519", "id_ecdsa",
		    "id_rsa", NULL };

		for (i = 0; defs[i] != NULL; i++)
			bc_strv_push_owned(&t->identities,
			    xasprintf("%s/.ssh/%s", g_home, defs[i]));
	}
	if (r == BC_OK && c.known_hosts.n > 0)
		r = push_expanded(&t->known_hosts, &c.known_hosts, t, err);
	else if (r == BC_OK) {
		bc_strv_push_owned(&t->known_hosts,
		    xasprintf("%s/.ssh/known_hosts", g_home));
		bc_strv_push_owned(&t->known_hosts,
		    xasprintf("%s/.ssh/known_hosts2", g_home));
	}
	if (r == BC_OK && c.global_known_hosts.n > 0)
		r = push_expanded(&t->known_hosts, &c.global_known_hosts, t,
		    err);
	else if (r == BC_OK) {
		bc_strv_push(&t->known_hosts, "/etc/ssh/ssh_known_hosts");
		bc_strv_push(&t->known_hosts, "/etc/ssh/ssh_known_hosts2");
	}
	if (r == BC_OK) {
		if (c.identities_only == 1 || (c.identity_agent != NULL &&
		    strcmp(c.identity_agent, "none") == 0))
			t->agent = NULL;
		else if (c.identity_agent != NULL &&
		    strcmp(c.identity_agent, "SSH_AUTH_SOCK") != 0)
			t->agent = bc_sshcfg_expand(c.identity_agent, g_home,
			    g_luser, t->user, t->hostname, NULL);
		else
			t->agent = g_agent != NULL ? xstrdup(g_agent) : NULL;
	}
	bc_sshcfg_free(&c);
	if (r == BC_OK && (has_newline(t->hostname) || has_newline(t->user) ||
	    has_newline(t->command) || has_newline(t->mux_command) ||
	    has_newline(t->agent)))
		r = bc_seterr(err, BC_ERR_INVAL, "line break in an ssh value");
	for (i = 0; r == BC_OK && i < t->identities.n; i++)
		if (has_newline(t->identities.v[i]))
			r = bc_seterr(err, BC_ERR_INVAL, "line break in a path");
	for (i = 0; r == BC_OK && i < t->known_hosts.n; i++)
		if (has_newline(t->known_hosts.v[i]))
			r = bc_seterr(err, BC_ERR_INVAL, "line break in a path");
	if (r != BC_OK)
		bc_ssh_target_free(t);
	return r;
}

char *
bc_ssh_target_encode(const struct bc_ssh_target *t)
{
	struct bc_buf b;
	char *s;
	size_t i;

	bc_buf_init(&b, BC_SSH_MAX_REQUEST * 4);
#define LINE(k, v) do { char *l_ = xasprintf("%s %s\n", k, v); \
	(void)bc_buf_put(&b, l_, strlen(l_)); free(l_); } while (0)
	LINE("alias", t->alias);
	LINE("hostname", t->hostname);
	{
		char p[16];

		snprintf(p, sizeof(p), "%d", t->port);
		LINE("port", p);
		snprintf(p, sizeof(p), "%d", t->strict);
		LINE("strict", p);
		snprintf(p, sizeof(p), "%d", t->timeout_ms);
		LINE("timeout", p);
	}
	LINE("user", t->user);
	LINE("command", t->command);
	if (t->mux_command != NULL)
		LINE("mux_command", t->mux_command);
	if (t->agent != NULL)
		LINE("agent", t->agent);
	for (i = 0; i < t->identities.n; i++)
		LINE("identity", t->identities.v[i]);
	for (i = 0; i < t->known_hosts.n; i++)
		LINE("known_hosts", t->known_hosts.v[i]);
#undef LINE
	s = xstrndup((const char *)bc_buf_data(&b), bc_buf_len(&b));
	bc_buf_free(&b);
	return s;
}

int
bc_ssh_target_decode(const char *text, size_t len, struct bc_ssh_target *t,
    char *err)
{
	size_t pos = 0;
	long long x;

	memset(t, 0, sizeof(*t));
	bc_strv_init(&t->identities);
	bc_strv_init(&t->known_hosts);
	t->port = 22;
	t->timeout_ms = 4000;
	while (pos < len) {
		const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
		const char *sp;
		size_t ll = nl != NULL ? (size_t)(nl - l) : len - pos;
		char *v;

		pos += ll + 1;
		if (ll == 0)
			continue;
		sp = memchr(l, ' ', ll);
		if (sp == NULL || memchr(l, '\0', ll) != NULL)
			goto bad;
		v = xstrndup(sp + 1, ll - (size_t)(sp + 1 - l));
#define KEY(k) ((size_t)(sp - l) == strlen(k) && memcmp(l, k, strlen(k)) == 0)
#define SET(f) do { free(t->f); t->f = v; v = NULL; } while (0)
		if (KEY("alias"))
			SET(alias);
		else if (KEY("hostname"))
			SET(hostname);
		else if (KEY("user"))
			SET(user);
		else if (KEY("command"))
			SET(command);
		else if (KEY("mux_command"))
			SET(mux_command);
		else if (KEY("agent"))
			SET(agent);
		else if (KEY("identity") && t->identities.n < 32) {
			bc_strv_push_owned(&t->identities, v);
			v = NULL;
		} else if (KEY("known_hosts") && t->known_hosts.n < 32) {
			bc_strv_push_owned(&t->known_hosts, v);
			v = NULL;
		} else if (KEY("port") && bc_parse_int(v, 1, 65535, &x) == BC_OK)
			t->port = (int)x;
		else if (KEY("strict") && bc_parse_int(v, 0, 2, &x) == BC_OK)
			t->strict = (int)x;
		else if (KEY("timeout") &&
		    bc_parse_int(v, 1, 3600000, &x) == BC_OK)
			t->timeout_ms = (int)x;
		else {
			free(v);
			goto bad;
		}
#undef KEY
#undef SET
		free(v);
	}
	if (t->alias == NULL || t->hostname == NULL || t->user == NULL ||
	    t->command == NULL)
		goto bad;
	return BC_OK;
bad:
	bc_ssh_target_free(t);
	return bc_seterr(err, BC_ERR_PROTO, "bad ssh helper request");
}

/* --------------------------------------------------------------------- */
/* client side */

struct pending {
	const struct bc_host *h;
	int ctl;
	char *command;
	char *label;
};
static struct pending g_pend[16];

static void
pending_set(const struct bc_host *h, int ctl, const struct bc_ssh_target *t)
{
	size_t i, slot = 0;

	for (i = 0; i < 16; i++)
		if (g_pend[i].h == h || g_pend[i].h == NULL) {
			slot = i;
			break;
		}
	if (i == 16)
		slot = 0;
	if (g_pend[slot].h != NULL) {
		if (g_pend[slot].ctl >= 0)
			close(g_pend[slot].ctl);
		free(g_pend[slot].command);
		free(g_pend[slot].label);
	}
	g_pend[slot].h = h;
	g_pend[slot].ctl = ctl;
	g_pend[slot].command = xstrdup(t->command);
	g_pend[slot].label = xasprintf("%s@%s", t->user, t->alias);
}

static void
close_fds_from(int lo, int keep1, int keep2)
{
	long max = sysconf(_SC_OPEN_MAX);
	int fd;

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lo; fd < (int)max; fd++)
		if (fd != keep1 && fd != keep2)
			(void)close(fd);
}

static char *g_argv0;

void
bc_ssh_set_argv0(const char *argv0)
{
	free(g_argv0);
	g_argv0 = argv0 != NULL ? xstrdup(argv0) : NULL;
}

/* The helper executable: next to boltcc itself (a build tree, or both in
 * one directory), else where `make install` put it. */
static char *
helper_exe(char *err)
{
	char *self = bc_exe_path(g_argv0), *p = NULL, *slash;

	if (self != NULL && (slash = strrchr(self, '/')) != NULL) {
		*slash = '\0';
		p = xasprintf("%s/%s", self, BC_SSH_HELPER_NAME);
		if (access(p, X_OK) != 0) {
			free(p);
			p = NULL;
		}
	}
	free(self);
	if (p != NULL)
		return p;
	p = xasprintf("%s/%s", BC_SSH_HELPER_DIR, BC_SSH_HELPER_NAME);
	if (access(p, X_OK) == 0)
		return p;
	bc_seterr(err, BC_ERR_NOENT, "ssh: the helper %s is neither next to "
	    "boltcc nor at %s", BC_SSH_HELPER_NAME, p);
	free(p);
	return NULL;
}

/* Fork twice so the helper is nobody's child, exec boltcc-ssh: serving
 * $DIR/ssh (dir) or just the control socket ctl_child (as fd 3). */
static int
spawn(const char *exe, const char *dir, int ctl_child, int ctl_parent)
{
	char idle[32];
	const char *argv[10];
	pid_t pid, p2;
	int st, k = 0, nul;

	snprintf(idle, sizeof(idle), "%d", dir != NULL ? bc_ssh_g_idle : 0);
	argv[k++] = exe;
	argv[k++] = "--idle";
	argv[k++] = idle;
	if (bc_ssh_g_helper_log != NULL) {
		argv[k++] = "--log";
		argv[k++] = bc_ssh_g_helper_log;
	}
	if (dir != NULL) {
		argv[k++] = "--dir";
		argv[k++] = dir;
	} else {
		argv[k++] = "--fd";
		argv[k++] = "3";
	}
	argv[k] = NULL;
	pid = fork();
	if (pid < 0)
		return BC_ERR_IO;
	if (pid == 0) {
		(void)setsid();
		p2 = fork();
		if (p2 != 0)
			_exit(p2 < 0 ? 1 : 0);
		if (ctl_parent >= 0)
			close(ctl_parent);
		if (ctl_child >= 0) {
			if (ctl_child != 3 && dup2(ctl_child, 3) != 3)
				_exit(1);
			(void)fcntl(3, F_SETFD, 0);
		}
		close_fds_from(ctl_child >= 0 ? 4 : 3, -1, -1);
		nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			(void)dup2(nul, 0);
			(void)dup2(nul, 1);
			(void)dup2(nul, 2);
			if (nul > 2)
				close(nul);
		}
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return BC_OK;
}

static int
helper_dir(char *out, size_t n)
{
	struct stat st;
	char e[BC_ERRLEN];
	int k;

	if (bc_ssh_g_statedir == NULL)
		return BC_ERR_NOENT;
	k = snprintf(out, n, "%s/ssh", bc_ssh_g_statedir);
	if (k < 0 || (size_t)k >= n)
		return BC_ERR_LIMIT;
	if (bc_mkdir_p(out, 0700, e) != BC_OK)
		return BC_ERR_IO;
	if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid())
		return BC_ERR_DENIED;
	if ((st.st_mode & 077) != 0 && chmod(out, 0700) != 0)
		return BC_ERR_DENIED;
	return BC_OK;
}

static int
connect_unix(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/* A control connection: the shared helper (started if needed), else a
 * private one. */
static int
helper_connect(int allow_shared, int *shared, char *err)
{
	char dir[3072], sock[3200];
	char *exe;
	int sv[2], fd, i;

	*shared = 0;
	if (allow_shared && helper_dir(dir, sizeof(dir)) == BC_OK &&
	    (size_t)snprintf(sock, sizeof(sock), "%s/helper.sock", dir) <
	    sizeof(sock) && strlen(sock) < sizeof(((struct sockaddr_un *)0)->
	    sun_path)) {
		fd = connect_unix(sock);
		if (fd >= 0) {
			*shared = 1;
			return fd;
		}
	} else
		allow_shared = 0;
	exe = helper_exe(err);
	if (exe == NULL)
		return -1;
	if (allow_shared && spawn(exe, dir, -1, -1) == BC_OK) {
		for (i = 0; i < 400; i++) {
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			fd = connect_unix(sock);
			if (fd >= 0) {
				*shared = 1;
				free(exe);
				return fd;
			}
			nanosleep(&ts, NULL);
		}
		bc_debug("ssh: no shared helper at %s; using a private one",
		    sock);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		free(exe);
		bc_seterr(err, BC_ERR_IO, "ssh: socketpair: %s",
		    strerror(errno));
		return -1;
	}
	if (spawn(exe, NULL, sv[1], sv[0]) != BC_OK) {
		close(sv[0]);
		close(sv[1]);
		free(exe);
		bc_seterr(err, BC_ERR_IO, "ssh: cannot start the ssh helper: "
		    "%s", strerror(errno));
		return -1;
	}
	free(exe);
	close(sv[1]);
	(void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	return sv[0];
}

/* Read one line (and maybe an fd) from ctl within deadline. */
static int
read_line(int ctl, char *line, size_t n, int *fd, int64_t deadline)
{
	size_t o = 0;

	for (;;) {
		struct pollfd p;
		struct msghdr mh;
		struct iovec iov;
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} u;
		struct cmsghdr *cm;
		char ch;
		ssize_t r;
		int64_t left = deadline - bc_now_ms();

		if (left <= 0)
			return BC_ERR_TIMEOUT;
		p.fd = ctl;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = &ch;
		iov.iov_len = 1;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.b;
		mh.msg_controllen = sizeof(u.b);
		r = recvmsg(ctl, &mh, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return BC_ERR_EOF;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
		    cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS && fd != NULL) {
				if (*fd >= 0)
					close(*fd);
				memcpy(fd, CMSG_DATA(cm), sizeof(int));
			}
		if (ch == '\n') {
			line[o] = '\0';
			return BC_OK;
		}
		if (o + 1 < n)
			line[o++] = ch;
	}
}

int
bc_ssh_connect_host(const struct bc_host *h, int timeout_ms, int *fd_out,
    char *err)
{
	struct bc_ssh_target t;
	char line[BC_ERRLEN + 64];
	char *req;
	int r, ctl, shared, dfd, attempt;

	*fd_out = -1;
	if (h->kind == BC_HOST_TCP)
		return bc_io_connect_tcp(h->name != NULL ? h->name : "localhost",
		    h->port, timeout_ms, fd_out, err);
	if (h->kind != BC_HOST_SSH)
		return bc_seterr(err, BC_ERR_NOTSUP, "host %s: not a remote "
		    "host", h->spec);
	r = bc_ssh_resolve(h, timeout_ms, &t, err);
	if (r != BC_OK)
		return r;
	/* One multiplexed channel per session for a host known to be
	 * boltccd (declared ,bolt or learned by the probe); a channel per
	 * job running --inetd otherwise (stock distccd, or not probed yet). */
	if (h->bolt != BC_BOLT_YES && (h->bolt == BC_BOLT_NO ||
	    bc_ssh_g_statedir == NULL ||
	    bc_remote_probe_cached(bc_ssh_g_statedir, h) != 1)) {
		free(t.mux_command);
		t.mux_command = NULL;
	}
	{
		char *body = bc_ssh_target_encode(&t);

		req = xasprintf("BCSSH 1\n%s\n", body);
		free(body);
	}
	r = BC_ERR_IO;
	for (attempt = 0; attempt < 2; attempt++) {
		struct bc_io io;
		long long code;

		dfd = -1;
		ctl = helper_connect(1, &shared, err);
		if (ctl < 0) {
			r = BC_ERR_IO;
			break;
		}
		bc_io_init(&io, ctl, ctl, timeout_ms * 3 + 2000);
		r = bc_io_write_full(&io, req, strlen(req), err);
		if (r == BC_OK)
			r = read_line(ctl, line, sizeof(line), &dfd,
			    bc_now_ms() + (int64_t)t.timeout_ms * 4 + 2000);
		if ((r == BC_ERR_EOF || r == BC_ERR_IO) && shared &&
		    attempt == 0) {
			/* the helper was exiting: once more, a fresh one */
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			close(ctl);
			if (dfd >= 0)
				close(dfd);
			nanosleep(&ts, NULL);
			continue;
		}
		if (r != BC_OK) {
			close(ctl);
			if (dfd >= 0)
				close(dfd);
			bc_seterr(err, r, "ssh: no answer from the ssh helper "
			    "for %s (%s)", h->spec, bc_strerror(r));
			break;
		}
		if (strcmp(line, "OK") == 0 && dfd >= 0) {
			(void)fcntl(dfd, F_SETFD, FD_CLOEXEC);
			pending_set(h, ctl, &t);
			*fd_out = dfd;
			r = BC_OK;
			break;
		}
		close(ctl);
		if (dfd >= 0)
			close(dfd);
		if (strncmp(line, "ERR ", 4) == 0) {
			char *sp = strchr(line + 4, ' ');

			if (sp != NULL)
				*sp = '\0';
			r = bc_parse_int(line + 4, 1, 100, &code) == BC_OK ?
			    -(int)code : BC_ERR_IO;
			bc_seterr(err, r, "%s", sp != NULL ? sp + 1 :
			    "ssh helper error");
		} else
			r = bc_seterr(err, BC_ERR_PROTO, "ssh: bad answer "
			    "from the ssh helper");
		break;
	}
	free(req);
	bc_ssh_target_free(&t);
	return r;
}

int
bc_ssh_explain(const struct bc_host *h, char *err)
{
	char line[BC_SSH_MAX_STDERR * 2 + 64];
	struct pending *p = NULL;
	long long st;
	int r, ret = 0;
	size_t i;

	if (h == NULL || h->kind != BC_HOST_SSH)
		return 0;
	for (i = 0; i < 16; i++)
		if (g_pend[i].h == h && g_pend[i].ctl >= 0)
			p = &g_pend[i];
	if (p == NULL)
		return 0;
	r = read_line(p->ctl, line, sizeof(line), NULL, bc_now_ms() + 3000);
	if (r != BC_OK) {
		ret = 0;
	} else if (strncmp(line, "LOST ", 5) == 0) {
		bc_seterr(err, BC_ERR_IO, "ssh: %s: connection lost: %s",
		    p->label, line + 5);
		ret = 1;
	} else if (strncmp(line, "EXIT ", 5) == 0) {
		char *a = line + 5, *b = strchr(a, ' '), *c;

		if (b != NULL) {
			*b++ = '\0';
			c = strchr(b, ' ');
			if (c != NULL)
				*c++ = '\0';
			if (bc_parse_int(a, -1000000, 1000000, &st) != BC_OK)
				st = -1;
			if (strcmp(b, "-") != 0) {
				bc_seterr(err, BC_ERR_IO, "ssh: remote command "
				    "`%s` on %s killed by signal %s: %s",
				    p->command, p->label, b,
				    c != NULL ? c : "");
				ret = 1;
			} else if (st == 126 || st == 127) {
				bc_seterr(err, BC_ERR_NOENT, "ssh: remote "
				    "command `%s` could not be run on %s (exit "
				    "%lld: missing or not executable): %s",
				    p->command, p->label, st,
				    c != NULL ? c : "");
				ret = 2;
			} else if (st != 0) {
				bc_seterr(err, BC_ERR_IO, "ssh: remote command "
				    "`%s` on %s exited with status %lld: %s",
				    p->command, p->label, st,
				    c != NULL ? c : "");
				ret = 1;
			}
		}
	}
	close(p->ctl);
	p->ctl = -1;
	return ret;
}
