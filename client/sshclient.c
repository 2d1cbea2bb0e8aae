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
#include "common/limits.h"
#include "common/log.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/exepath.h"
#include "client/remote.h"
#include "client/ssh.h"
#include "client/sshconf.h"

/* A helper request under way for a host (pending_set). */
struct pending {
	const struct bc_host *h;
	int ctl;
	char *command;
	char *label;
};
#define SSH_MAX_PENDING 16

/* The SSH client of this process, set up by main: its configuration
 * (bc_ssh_configure; it outlives every use here), the local user's home
 * and name from it, found when an SSH host is first resolved (user_env),
 * boltcc's argv[0] (to find the helper next to it) and the helper
 * requests under way. */
static struct {
	const struct bc_cconf *cfg;
	char *home, *luser;
	char *argv0;
	struct pending pend[SSH_MAX_PENDING];
} ssh;

/* ssh.cfg, or an empty environment before bc_ssh_configure. */
static const struct bc_cconf *
cfg(void)
{
	static const struct bc_cconf none = { .ssh_idle = -1,
	    .ssh_reuse_wait = -1 };

	return ssh.cfg != NULL ? ssh.cfg : &none;
}

/* The state dir ($DIR), NULL if unusable. */
static const char *
statedir(void)
{
	return cfg()->dir_ok ? cfg()->dir : NULL;
}

/* The local user's home and name, found only when an SSH host is
 * resolved: every boltcc start calls bc_ssh_configure, and getpwuid
 * (nsswitch, /etc/passwd) is not free when USER or HOME is unset, as in
 * Xcode's jobs. */
static void
user_env(void)
{
	const char *v = cfg()->home;
	struct passwd *pw = NULL;

	if (ssh.home != NULL)
		return;
	if (v == NULL || *v == '\0' || cfg()->user == NULL)
		pw = getpwuid(getuid());
	ssh.home = xstrdup(v != NULL && *v != '\0' ? v :
	    (pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : "/"));
	v = pw != NULL ? pw->pw_name : cfg()->user;
	ssh.luser = xstrdup(v != NULL ? v : "root");
}

void
bc_ssh_configure(const struct bc_cconf *c)
{
	free(ssh.home);
	free(ssh.luser);
	ssh.home = ssh.luser = NULL;	/* user_env(), when an SSH host is used */
	ssh.cfg = c;
}

void
bc_ssh_target_free(struct bc_ssh_target *t)
{
	size_t i;

	free(t->alias);
	free(t->hostname);
	free(t->user);
	free(t->command);
	free(t->mux_command);
	free(t->agent);
	bc_strv_free(&t->identities);
	bc_strv_free(&t->known_hosts);
	for (i = 0; i < t->njumps; i++)
		bc_ssh_target_free(&t->jumps[i]);
	free(t->jumps);
	memset(t, 0, sizeof(*t));
}

static void
target_init(struct bc_ssh_target *t)
{
	memset(t, 0, sizeof(*t));
	bc_strv_init(&t->identities);
	bc_strv_init(&t->known_hosts);
}

/* The settings for host name: the user's file (with its Includes), then
 * the system one. */
static int
load_config(const char *name, struct bc_sshcfg *c, char *err)
{
	struct bc_sshcfg_inc inc;
	char e2[BC_ERRLEN];
	char *dir = xasprintf("%s/.ssh", ssh.home);
	char *path = xasprintf("%s/config", dir);
	size_t i;
	int r;

	bc_sshcfg_init(c);
	memset(&inc, 0, sizeof(inc));
	inc.home = ssh.home;
	inc.dir = dir;
	r = bc_sshcfg_read(path, &inc, name, c, e2);
	if (r == BC_OK) {
		inc.dir = "/etc/ssh";
		inc.system = 1;
		r = bc_sshcfg_read("/etc/ssh/ssh_config", &inc, name, c, e2);
	}
	free(path);
	free(dir);
	for (i = 0; i < c->notes.n; i++)
		bc_debug("ssh config: %s", c->notes.v[i]);
	if (r != BC_OK) {
		bc_sshcfg_free(c);
		return bc_seterr(err, r, "ssh config: %s", e2);
	}
	return BC_OK;
}

static int
push_expanded(struct bc_strv *out, const struct bc_strv *in,
    const struct bc_ssh_target *t, char *err)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		char *p = bc_sshcfg_expand(in->v[i], ssh.home, ssh.luser, t->user,
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

static int
strv_has_newline(const struct bc_strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (has_newline(sv->v[i]))
			return 1;
	return 0;
}

/* Keys: boltcc's own, then the config's, else ssh's defaults; then the
 * known-hosts files and the agent. */
static int
fill_auth(struct bc_ssh_target *t, const struct bc_sshcfg *c, char *err)
{
	static const char *const defs[] = { "id_ed25519", "id_ecdsa",
	    "id_rsa", NULL };
	size_t i;
	int r;

	if (cfg()->ssh_key != NULL)
		bc_strv_push(&t->identities, cfg()->ssh_key);
	r = push_expanded(&t->identities, &c->identity, t, err);
	if (r == BC_OK && c->identity.n == 0)
		for (i = 0; defs[i] != NULL; i++)
			bc_strv_push_owned(&t->identities,
			    xasprintf("%s/.ssh/%s", ssh.home, defs[i]));
	if (r == BC_OK && c->known_hosts.n > 0)
		r = push_expanded(&t->known_hosts, &c->known_hosts, t, err);
	else if (r == BC_OK) {
		bc_strv_push_owned(&t->known_hosts,
		    xasprintf("%s/.ssh/known_hosts", ssh.home));
		bc_strv_push_owned(&t->known_hosts,
		    xasprintf("%s/.ssh/known_hosts2", ssh.home));
	}
	if (r == BC_OK && c->global_known_hosts.n > 0)
		r = push_expanded(&t->known_hosts, &c->global_known_hosts, t,
		    err);
	else if (r == BC_OK) {
		bc_strv_push(&t->known_hosts, "/etc/ssh/ssh_known_hosts");
		bc_strv_push(&t->known_hosts, "/etc/ssh/ssh_known_hosts2");
	}
	if (r != BC_OK)
		return r;
	if (c->identities_only == 1 || (c->identity_agent != NULL &&
	    strcmp(c->identity_agent, "none") == 0))
		t->agent = NULL;
	else if (c->identity_agent != NULL &&
	    strcmp(c->identity_agent, "SSH_AUTH_SOCK") != 0)
		t->agent = bc_sshcfg_expand(c->identity_agent, ssh.home, ssh.luser,
		    t->user, t->hostname, NULL);
	else
		t->agent = cfg()->ssh_agent != NULL ?
		    xstrdup(cfg()->ssh_agent) : NULL;
	return BC_OK;
}

/*
 * The connection settings of host `name` (the target or a jump host) into
 * t, its config into c (for its proxy settings).  user and port (NULL /
 * 0: from the config) come from the host entry or the ProxyJump hop.
 */
static int
resolve_conn(const char *name, const char *user, int port, int timeout_ms,
    struct bc_ssh_target *t, struct bc_sshcfg *c, char *err)
{
	int r;

	target_init(t);
	r = load_config(name, c, err);
	if (r != BC_OK)
		return r;
	t->alias = xstrdup(name);
	t->hostname = xstrdup(c->hostname != NULL ? c->hostname : name);
	t->port = port > 0 ? port : (c->port > 0 ? c->port : 22);
	t->user = xstrdup(user != NULL && *user != '\0' ? user :
	    (c->user != NULL ? c->user : ssh.luser));
	t->strict = c->strict < 0 ? BC_SSH_STRICT_YES : c->strict;
	t->timeout_ms = c->connect_timeout > 0 ? c->connect_timeout * 1000 :
	    timeout_ms;
	if (t->timeout_ms <= 0)
		t->timeout_ms = 4000;
	r = fill_auth(t, c, err);
	if (r == BC_OK && (has_newline(t->alias) || has_newline(t->hostname) ||
	    has_newline(t->user) || has_newline(t->agent) ||
	    strv_has_newline(&t->identities) ||
	    strv_has_newline(&t->known_hosts)))
		r = bc_seterr(err, BC_ERR_INVAL, "line break in an ssh value "
		    "or path");
	if (r != BC_OK) {
		bc_sshcfg_free(c);
		bc_ssh_target_free(t);
	}
	return r;
}

static void
push_jump(struct bc_ssh_target *t, struct bc_ssh_target *hop)
{
	t->jumps = xrealloc(t->jumps, t->njumps + 1, sizeof(*t->jumps));
	t->jumps[t->njumps++] = *hop;
	memset(hop, 0, sizeof(*hop));
}

/*
 * t's ProxyJump (c is t's config): each hop resolved with its own
 * settings into t->jumps.  As ssh does (ssh -J a,b runs ssh -J a -W .. b,
 * and ssh -W .. a), only the first hop is reached through its own
 * config's ProxyJump, whose hops come in front; the others are reached
 * through the hop before them.  depth bounds that recursion.
 */
static int
resolve_jumps(struct bc_ssh_target *t, const struct bc_sshcfg *c,
    int timeout_ms, int depth, char *err)
{
	struct bc_sshcfg_hop hops[BC_MAX_SSH_JUMPS];
	char e2[BC_ERRLEN];
	size_t n, i, k;
	int r;

	if (c->proxy_command != NULL &&
	    strcasecmp(c->proxy_command, "none") != 0)
		return bc_seterr(err, BC_ERR_NOTSUP, "ssh: %s has a ProxyCommand "
		    "(%s), which boltcc does not support; use ProxyJump",
		    t->alias, c->proxy_where);
	if (c->proxy_jump == NULL)
		return BC_OK;
	r = bc_sshcfg_jump_parse(c->proxy_jump, hops, BC_MAX_SSH_JUMPS, &n,
	    e2);
	if (r != BC_OK)
		return bc_seterr(err, r, "ssh: %s: %s", c->proxy_where, e2);
	for (i = 0; i < n; i++) {
		struct bc_ssh_target h;
		struct bc_sshcfg hc;

		if (depth + t->njumps >= BC_MAX_SSH_JUMPS ||
		    strcmp(hops[i].host, t->alias) == 0)
			return bc_seterr(err, BC_ERR_LIMIT, "ssh: the ProxyJump "
			    "chain to %s is longer than %d hops or loops (%s, "
			    "ProxyJump %s)", t->alias, BC_MAX_SSH_JUMPS,
			    c->proxy_where, c->proxy_jump);
		r = resolve_conn(hops[i].host, hops[i].user, hops[i].port,
		    timeout_ms, &h, &hc, e2);
		if (r == BC_OK) {
			if (i == 0)
				r = resolve_jumps(&h, &hc, timeout_ms,
				    depth + 1, e2);
			bc_sshcfg_free(&hc);
		}
		if (r != BC_OK) {
			bc_ssh_target_free(&h);
			return bc_seterr(err, r, "ssh: jump host %s of %s "
			    "(ProxyJump at %s): %s", hops[i].host, t->alias,
			    c->proxy_where, e2);
		}
		for (k = 0; k < h.njumps; k++)
			push_jump(t, &h.jumps[k]);
		free(h.jumps);
		h.jumps = NULL;
		h.njumps = 0;
		push_jump(t, &h);
	}
	if (t->njumps > BC_MAX_SSH_JUMPS)
		return bc_seterr(err, BC_ERR_LIMIT, "ssh: the ProxyJump chain to "
		    "%s is longer than %d hops", t->alias, BC_MAX_SSH_JUMPS);
	return BC_OK;
}

int
bc_ssh_resolve(const struct bc_host *h, int timeout_ms,
    struct bc_ssh_target *t, char *err)
{
	struct bc_sshcfg c;
	int r;

	user_env();
	target_init(t);
	if (h->kind != BC_HOST_SSH || h->name == NULL)
		return bc_seterr(err, BC_ERR_INVAL, "not an SSH host");
	r = resolve_conn(h->name, h->user, 0, timeout_ms, t, &c, err);
	if (r != BC_OK)
		return r;
	r = resolve_jumps(t, &c, timeout_ms, 0, err);
	bc_sshcfg_free(&c);
	if (r != BC_OK) {
		bc_ssh_target_free(t);
		return r;
	}
	if (h->command != NULL && *h->command != '\0') {
		t->command = xasprintf("%s --inetd", h->command);
		t->mux_command = xasprintf("%s --mux", h->command);
	} else {
		t->command = xstrdup(BC_SSH_DEFAULT_COMMAND " --inetd");
		t->mux_command = xstrdup(BC_SSH_DEFAULT_COMMAND " --mux");
	}
	if (has_newline(t->command) || has_newline(t->mux_command)) {
		bc_ssh_target_free(t);
		return bc_seterr(err, BC_ERR_INVAL, "line break in an ssh "
		    "value");
	}
	return BC_OK;
}

/* The connection lines of t, each key prefixed with pfx. */
static void
encode_conn(struct bc_buf *b, const struct bc_ssh_target *t, const char *pfx)
{
	size_t i;

#define LINE(k, v) do { char *l_ = xasprintf("%s%s %s\n", pfx, k, v); \
	(void)bc_buf_put(b, l_, strlen(l_)); free(l_); } while (0)
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
	if (t->agent != NULL)
		LINE("agent", t->agent);
	for (i = 0; i < t->identities.n; i++)
		LINE("identity", t->identities.v[i]);
	for (i = 0; i < t->known_hosts.n; i++)
		LINE("known_hosts", t->known_hosts.v[i]);
#undef LINE
}

/* "alias", the command lines and the connection of the target, then per
 * jump host "jump ALIAS" and its connection as "j.KEY VALUE" lines. */
char *
bc_ssh_target_encode(const struct bc_ssh_target *t)
{
	struct bc_buf b;
	char *s, *l;
	size_t i;

	bc_buf_init(&b, BC_SSH_MAX_REQUEST * 4);
	l = xasprintf("alias %s\ncommand %s\n", t->alias, t->command);
	(void)bc_buf_put(&b, l, strlen(l));
	free(l);
	if (t->mux_command != NULL) {
		l = xasprintf("mux_command %s\n", t->mux_command);
		(void)bc_buf_put(&b, l, strlen(l));
		free(l);
	}
	encode_conn(&b, t, "");
	for (i = 0; i < t->njumps; i++) {
		l = xasprintf("jump %s\n", t->jumps[i].alias);
		(void)bc_buf_put(&b, l, strlen(l));
		free(l);
		encode_conn(&b, &t->jumps[i], "j.");
	}
	s = xstrndup((const char *)bc_buf_data(&b), bc_buf_len(&b));
	bc_buf_free(&b);
	return s;
}

/* One "key value" line's connection key into t: 1 if taken (v is then
 * owned by t or freed), 0 for an unknown key or a bad value. */
static int
decode_conn(struct bc_ssh_target *t, const char *k, size_t kl, char *v)
{
	long long x;

#define KEY(s) (kl == strlen(s) && memcmp(k, s, kl) == 0)
#define SET(f) do { free(t->f); t->f = v; } while (0)
	if (KEY("hostname"))
		SET(hostname);
	else if (KEY("user"))
		SET(user);
	else if (KEY("agent"))
		SET(agent);
	else if (KEY("identity") && t->identities.n < BC_MAX_SSH_IDENTITIES)
		bc_strv_push_owned(&t->identities, v);
	else if (KEY("known_hosts") &&
	    t->known_hosts.n < BC_MAX_SSH_KNOWN_HOSTS)
		bc_strv_push_owned(&t->known_hosts, v);
	else if (KEY("port") && bc_parse_int(v, 1, 65535, &x) == BC_OK) {
		t->port = (int)x;
		free(v);
	} else if (KEY("strict") && bc_parse_int(v, 0, 2, &x) == BC_OK) {
		t->strict = (int)x;
		free(v);
	} else if (KEY("timeout") &&
	    bc_parse_int(v, 1, 3600000, &x) == BC_OK) {
		t->timeout_ms = (int)x;
		free(v);
	} else
		return 0;
#undef KEY
#undef SET
	return 1;
}

static void
decode_defaults(struct bc_ssh_target *t)
{
	target_init(t);
	t->port = 22;
	t->timeout_ms = 4000;
}

/* One "key value" line: 1 if taken, 0 if not (unknown key, bad value,
 * no space, a NUL byte). */
static int
decode_line(struct bc_ssh_target *t, struct bc_buf *line)
{
	struct bc_buf key;
	const char *k;
	size_t kl;
	char *v;

	if (memchr(bc_buf_ptr(line), '\0', bc_buf_avail(line)) != NULL ||
	    bc_buf_get_until(line, ' ', &key) != BC_OK)
		return 0;
	k = (const char *)bc_buf_ptr(&key);
	kl = bc_buf_avail(&key);
	v = xstrndup((const char *)bc_buf_ptr(line), bc_buf_avail(line));
	if (kl == 5 && memcmp(k, "alias", 5) == 0) {
		free(t->alias);
		t->alias = v;
	} else if (kl == 7 && memcmp(k, "command", 7) == 0) {
		free(t->command);
		t->command = v;
	} else if (kl == 11 && memcmp(k, "mux_command", 11) == 0) {
		free(t->mux_command);
		t->mux_command = v;
	} else if (kl == 4 && memcmp(k, "jump", 4) == 0) {
		struct bc_ssh_target h;

		if (t->njumps >= BC_MAX_SSH_JUMPS) {
			free(v);
			return 0;
		}
		decode_defaults(&h);
		h.alias = v;
		push_jump(t, &h);
	} else if (kl > 2 && memcmp(k, "j.", 2) == 0) {
		if (t->njumps == 0 || !decode_conn(&t->jumps[t->njumps - 1],
		    k + 2, kl - 2, v)) {
			free(v);
			return 0;
		}
	} else if (!decode_conn(t, k, kl, v)) {
		free(v);
		return 0;
	}
	return 1;
}

int
bc_ssh_target_decode(const char *text, size_t len, struct bc_ssh_target *t,
    char *err)
{
	struct bc_buf in, line;
	size_t i;

	decode_defaults(t);
	bc_buf_view(&in, text, len);
	while (bc_buf_avail(&in) > 0) {
		/* a line, the last one maybe without its newline */
		if (bc_buf_get_until(&in, '\n', &line) != BC_OK)
			(void)bc_buf_get_view(&in, bc_buf_avail(&in), &line);
		if (bc_buf_avail(&line) > 0 && !decode_line(t, &line))
			goto bad;
	}
	if (t->alias == NULL || t->hostname == NULL || t->user == NULL ||
	    t->command == NULL)
		goto bad;
	for (i = 0; i < t->njumps; i++)
		if (t->jumps[i].hostname == NULL || t->jumps[i].user == NULL)
			goto bad;
	return BC_OK;
bad:
	bc_ssh_target_free(t);
	return bc_seterr(err, BC_ERR_PROTO, "bad ssh helper request");
}

/* --------------------------------------------------------------------- */
/* client side */


static void
pending_set(const struct bc_host *h, int ctl, const struct bc_ssh_target *t)
{
	size_t i, slot = 0;

	for (i = 0; i < SSH_MAX_PENDING; i++)
		if (ssh.pend[i].h == h || ssh.pend[i].h == NULL) {
			slot = i;
			break;
		}
	if (i == SSH_MAX_PENDING)
		slot = 0;
	if (ssh.pend[slot].h != NULL) {
		if (ssh.pend[slot].ctl >= 0)
			close(ssh.pend[slot].ctl);
		free(ssh.pend[slot].command);
		free(ssh.pend[slot].label);
	}
	ssh.pend[slot].h = h;
	ssh.pend[slot].ctl = ctl;
	ssh.pend[slot].command = xstrdup(t->command);
	ssh.pend[slot].label = xasprintf("%s@%s", t->user, t->alias);
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

void
bc_ssh_set_argv0(const char *argv0)
{
	free(ssh.argv0);
	ssh.argv0 = argv0 != NULL ? xstrdup(argv0) : NULL;
}

/* The helper executable: next to boltcc itself (a build tree, or both in
 * one directory), else where `make install` put it. */
static char *
helper_exe(char *err)
{
	char *self = bc_exe_path(ssh.argv0, cfg()->path_env), *p = NULL, *slash;

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
	char idle[32], wait[32];
	const char *argv[12];
	pid_t pid, p2;
	int st, k = 0, nul;

	snprintf(idle, sizeof(idle), "%d", dir == NULL ? 0 :
	    cfg()->ssh_idle >= 0 ? cfg()->ssh_idle : BC_SSH_IDLE_SEC);
	snprintf(wait, sizeof(wait), "%d", cfg()->ssh_reuse_wait >= 0 ?
	    cfg()->ssh_reuse_wait : BC_SSH_REUSE_WAIT_MS);
	argv[k++] = exe;
	argv[k++] = "--idle";
	argv[k++] = idle;
	argv[k++] = "--reuse-wait";
	argv[k++] = wait;
	if (cfg()->ssh_helper_log != NULL) {
		argv[k++] = "--log";
		argv[k++] = cfg()->ssh_helper_log;
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

	if (statedir() == NULL)
		return BC_ERR_NOENT;
	k = snprintf(out, n, "%s/ssh", statedir());
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
	    statedir() == NULL ||
	    bc_remote_probe_cached(statedir(), h) != 1)) {
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
	for (i = 0; i < SSH_MAX_PENDING; i++)
		if (ssh.pend[i].h == h && ssh.pend[i].ctl >= 0)
			p = &ssh.pend[i];
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
