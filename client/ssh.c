/*
 * ssh.c - resolving SSH host entries and opening libssh2 sessions:
 * host key check against known_hosts, public key authentication.
 * The helper process and the client side of it are in sshmux.c.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh2.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/io.h"
#include "common/log.h"
#include "common/util.h"
#include "client/ssh.h"
#include "client/sshconf.h"

struct bc_ssh_sess {
	int fd;
	LIBSSH2_SESSION *s;
};

/* Set by bc_ssh_configure (main); read by resolve. */
static char *g_home, *g_luser, *g_agent, *g_key;
char *bc_ssh_g_statedir;
int bc_ssh_g_idle = BC_SSH_IDLE_SEC;
char *bc_ssh_g_helper_log;

void
bc_ssh_configure(const char *statedir)
{
	const char *v;
	struct passwd *pw = NULL;
	long long x;

	free(g_home);
	free(g_luser);
	free(g_agent);
	free(g_key);
	free(bc_ssh_g_statedir);
	free(bc_ssh_g_helper_log);
	v = getenv("HOME");
	if (v == NULL || *v == '\0' || getenv("USER") == NULL)
		pw = getpwuid(getuid());	/* only when needed: costs */
	g_home = xstrdup(v != NULL && *v != '\0' ? v :
	    (pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : "/"));
	v = pw != NULL ? pw->pw_name : getenv("USER");
	g_luser = xstrdup(v != NULL ? v : "root");
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

	if (g_home == NULL)
		bc_ssh_configure(NULL);
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
	if (h->command != NULL && *h->command != '\0')
		t->command = xasprintf("%s --inetd", h->command);
	else
		t->command = xstrdup(BC_SSH_DEFAULT_COMMAND " --inetd");
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
	    has_newline(t->command) || has_newline(t->agent)))
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
/* fingerprints and host keys */

void
bc_ssh_fingerprint(const unsigned char *h, char *out, size_t outlen)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char b[64];
	size_t i, o = 0;

	/* 32 bytes -> 43 base64 characters, no padding (ssh's format) */
	for (i = 0; i < 32; i += 3) {
		unsigned v = (unsigned)h[i] << 16;

		if (i + 1 < 32)
			v |= (unsigned)h[i + 1] << 8;
		if (i + 2 < 32)
			v |= h[i + 2];
		b[o++] = tab[(v >> 18) & 63];
		b[o++] = tab[(v >> 12) & 63];
		if (i + 1 < 32)
			b[o++] = tab[(v >> 6) & 63];
		if (i + 2 < 32)
			b[o++] = tab[v & 63];
	}
	b[o] = '\0';
	snprintf(out, outlen, "SHA256:%s", b);
}

static const char *
key_type_name(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "ssh-rsa";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "ssh-dss";
#ifdef LIBSSH2_HOSTKEY_TYPE_ECDSA_256
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ecdsa-sha2-nistp521";
#endif
#ifdef LIBSSH2_HOSTKEY_TYPE_ED25519
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ssh-ed25519";
#endif
	default:
		return "unknown";
	}
}

static int
knownhost_mask(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
#ifdef LIBSSH2_HOSTKEY_TYPE_ECDSA_256
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
#endif
#ifdef LIBSSH2_HOSTKEY_TYPE_ED25519
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
#endif
	default:
		return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	}
}

/* The host key algorithms known_hosts has for this host, first (as ssh
 * orders them), so the check compares like with like. */
static void
prefer_known_types(LIBSSH2_SESSION *s, LIBSSH2_KNOWNHOSTS *kh)
{
	struct libssh2_knownhost *e = NULL;
	char pref[256];
	size_t o = 0;
	int seen = 0;

	pref[0] = '\0';
	while (libssh2_knownhost_get(kh, &e, e) == 0) {
		const char *n = NULL;

		switch (e->typemask & LIBSSH2_KNOWNHOST_KEY_MASK) {
#ifdef LIBSSH2_KNOWNHOST_KEY_ED25519
		case LIBSSH2_KNOWNHOST_KEY_ED25519:
			n = "ssh-ed25519";
			break;
#endif
		case LIBSSH2_KNOWNHOST_KEY_ECDSA_256:
			n = "ecdsa-sha2-nistp256";
			break;
		case LIBSSH2_KNOWNHOST_KEY_ECDSA_384:
			n = "ecdsa-sha2-nistp384";
			break;
		case LIBSSH2_KNOWNHOST_KEY_ECDSA_521:
			n = "ecdsa-sha2-nistp521";
			break;
		case LIBSSH2_KNOWNHOST_KEY_SSHRSA:
			n = "rsa-sha2-512,rsa-sha2-256,ssh-rsa";
			break;
		default:
			break;
		}
		if (n == NULL || strstr(pref, n) != NULL)
			continue;
		if (o + strlen(n) + 2 >= sizeof(pref))
			break;
		o += (size_t)snprintf(pref + o, sizeof(pref) - o, "%s%s",
		    seen++ ? "," : "", n);
	}
	if (seen == 0)
		return;
	/* then whatever else libssh2 supports, for a clear mismatch */
	if (o + 40 < sizeof(pref) && strstr(pref, "ssh-ed25519") == NULL)
		o += (size_t)snprintf(pref + o, sizeof(pref) - o,
		    ",ssh-ed25519");
	if (o + 40 < sizeof(pref) && strstr(pref, "nistp256") == NULL)
		o += (size_t)snprintf(pref + o, sizeof(pref) - o,
		    ",ecdsa-sha2-nistp256");
	if (o + 40 < sizeof(pref) && strstr(pref, "rsa-sha2-512") == NULL)
		(void)snprintf(pref + o, sizeof(pref) - o,
		    ",rsa-sha2-512,rsa-sha2-256");
	if (libssh2_session_method_pref(s, LIBSSH2_METHOD_HOSTKEY, pref) != 0)
		bc_debug("ssh: host key preference %s not accepted", pref);
}

static const char *
sess_errmsg(LIBSSH2_SESSION *s)
{
	char *m = NULL;

	(void)libssh2_session_last_error(s, &m, NULL, 0);
	return m != NULL ? m : "unknown error";
}

static void
host_label(const struct bc_ssh_target *t, char *out, size_t n)
{
	if (t->port == 22)
		snprintf(out, n, "%s", t->hostname);
	else
		snprintf(out, n, "[%s]:%d", t->hostname, t->port);
}

/* accept-new: append the key to the first known_hosts file. */
static void
remember_host_key(const struct bc_ssh_target *t, LIBSSH2_KNOWNHOSTS *kh,
    const char *key, size_t klen, int type)
{
	char label[512], line[8192];
	size_t ll = 0;
	struct libssh2_knownhost *added = NULL;
	FILE *f;

	if (t->known_hosts.n == 0)
		return;
	host_label(t, label, sizeof(label));
	if (libssh2_knownhost_addc(kh, label, NULL, key, klen, NULL, 0,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    knownhost_mask(type), &added) != 0 ||
	    libssh2_knownhost_writeline(kh, added, line, sizeof(line), &ll,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
		return;
	f = fopen(t->known_hosts.v[0], "a");
	if (f == NULL)
		return;
	(void)fwrite(line, 1, ll, f);
	fclose(f);
	bc_info("ssh: added %s to %s (StrictHostKeyChecking accept-new)",
	    label, t->known_hosts.v[0]);
}

static int
check_host_key(const struct bc_ssh_target *t, LIBSSH2_SESSION *s,
    char *err)
{
	LIBSSH2_KNOWNHOSTS *kh = libssh2_knownhost_init(s);
	struct libssh2_knownhost *found = NULL;
	const char *key;
	const unsigned char *hash;
	char fp[80], label[512];
	size_t klen, i;
	int type, r, loaded = 0;

	if (kh == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "ssh: knownhost_init");
	for (i = 0; i < t->known_hosts.n; i++)
		if (access(t->known_hosts.v[i], R_OK) == 0 &&
		    libssh2_knownhost_readfile(kh, t->known_hosts.v[i],
		    LIBSSH2_KNOWNHOST_FILE_OPENSSH) >= 0)
			loaded++;
	key = libssh2_session_hostkey(s, &klen, &type);
	hash = (const unsigned char *)libssh2_hostkey_hash(s,
	    LIBSSH2_HOSTKEY_HASH_SHA256);
	if (key == NULL || hash == NULL) {
		libssh2_knownhost_free(kh);
		return bc_seterr(err, BC_ERR_PROTO, "ssh: %s:%d sent no host "
		    "key", t->hostname, t->port);
	}
	bc_ssh_fingerprint(hash, fp, sizeof(fp));
	host_label(t, label, sizeof(label));
	r = libssh2_knownhost_checkp(kh, t->hostname, t->port, key, klen,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    knownhost_mask(type), &found);
	if (r == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
		libssh2_knownhost_free(kh);
		return BC_OK;
	}
	if (r == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
		libssh2_knownhost_free(kh);
		return bc_seterr(err, BC_ERR_DENIED, "ssh: HOST KEY MISMATCH "
		    "for %s (%s): the %s key %s is not the one in known_hosts "
		    "(%s); refusing to connect", t->alias, label,
		    key_type_name(type), fp, t->known_hosts.n > 0 ?
		    t->known_hosts.v[0] : "none");
	}
	if (r == LIBSSH2_KNOWNHOST_CHECK_NOTFOUND &&
	    t->strict != BC_SSH_STRICT_YES) {
		bc_info("ssh: accepting unknown %s key %s of %s "
		    "(StrictHostKeyChecking %s)", key_type_name(type), fp, label,
		    t->strict == BC_SSH_STRICT_NO ? "no" : "accept-new");
		if (t->strict == BC_SSH_STRICT_ACCEPT_NEW)
			remember_host_key(t, kh, key, klen, type);
		libssh2_knownhost_free(kh);
		return BC_OK;
	}
	libssh2_knownhost_free(kh);
	return bc_seterr(err, BC_ERR_DENIED, "ssh: host key of %s (%s) is not "
	    "known: %s %s is in none of %zu known_hosts file(s) (%s); add it "
	    "(ssh-keyscan, or connect once with ssh) and retry",
	    t->alias, label, key_type_name(type), fp, t->known_hosts.n,
	    loaded > 0 ? "read" : "none readable");
}

/* --------------------------------------------------------------------- */
/* authentication */

static int
auth_agent(const struct bc_ssh_target *t, LIBSSH2_SESSION *s,
    struct bc_strv *tried)
{
	LIBSSH2_AGENT *a;
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	int ok = 0;

	if (t->agent == NULL)
		return 0;
	a = libssh2_agent_init(s);
	if (a == NULL)
		return 0;
	libssh2_agent_set_identity_path(a, t->agent);
	if (libssh2_agent_connect(a) != 0) {
		bc_debug("ssh: no agent at %s", t->agent);
		libssh2_agent_free(a);
		return 0;
	}
	bc_strv_push(tried, "agent");
	if (libssh2_agent_list_identities(a) == 0) {
		while (libssh2_agent_get_identity(a, &id, prev) == 0) {
			if (libssh2_agent_userauth(a, t->user, id) == 0) {
				ok = 1;
				break;
			}
			prev = id;
		}
	}
	libssh2_agent_disconnect(a);
	libssh2_agent_free(a);
	return ok;
}

static int
auth_files(const struct bc_ssh_target *t, LIBSSH2_SESSION *s,
    struct bc_strv *tried)
{
	size_t i;

	for (i = 0; i < t->identities.n; i++) {
		const char *k = t->identities.v[i];
		char *pub;
		int r;

		if (access(k, R_OK) != 0)
			continue;
		pub = xasprintf("%s.pub", k);
		r = libssh2_userauth_publickey_fromfile_ex(s, t->user,
		    (unsigned)strlen(t->user), access(pub, R_OK) == 0 ? pub :
		    NULL, k, NULL);
		free(pub);
		bc_strv_push(tried, k);
		if (r == 0)
			return 1;
		bc_debug("ssh: key %s: %s", k, sess_errmsg(s));
		if (r == LIBSSH2_ERROR_SOCKET_SEND || r == LIBSSH2_ERROR_TIMEOUT
		    || r == LIBSSH2_ERROR_SOCKET_DISCONNECT)
			return -1;
	}
	return 0;
}

static int
authenticate(const struct bc_ssh_target *t, LIBSSH2_SESSION *s, char *err)
{
	struct bc_strv tried = BC_STRV_INIT;
	char *list, *what;
	int r;

	list = libssh2_userauth_list(s, t->user, (unsigned)strlen(t->user));
	if (list == NULL) {
		if (libssh2_userauth_authenticated(s))
			return BC_OK;
		return bc_seterr(err, BC_ERR_DENIED, "ssh: %s@%s: cannot list "
		    "authentication methods: %s", t->user, t->alias,
		    sess_errmsg(s));
	}
	if (strstr(list, "publickey") == NULL)
		return bc_seterr(err, BC_ERR_DENIED, "ssh: %s@%s offers no "
		    "public key authentication (only %s); boltcc never uses "
		    "passwords", t->user, t->alias, list);
	if (auth_agent(t, s, &tried))
		r = 1;
	else
		r = auth_files(t, s, &tried);
	if (r == 1) {
		bc_strv_free(&tried);
		return BC_OK;
	}
	what = tried.n > 0 ? bc_strv_join(&tried) : xstrdup("no agent, no "
	    "readable key file");
	bc_seterr(err, r < 0 ? BC_ERR_IO : BC_ERR_DENIED, "ssh: %s@%s: "
	    "public key authentication refused (tried %s)", t->user, t->alias,
	    what);
	free(what);
	bc_strv_free(&tried);
	return r < 0 ? BC_ERR_IO : BC_ERR_DENIED;
}

/* --------------------------------------------------------------------- */

int
bc_ssh_sess_open(const struct bc_ssh_target *t, struct bc_ssh_sess **out,
    char *err)
{
	struct bc_ssh_sess *ss;
	LIBSSH2_KNOWNHOSTS *kh;
	size_t i;
	int fd = -1, r;

	*out = NULL;
	r = bc_io_connect_tcp(t->hostname, t->port, t->timeout_ms, &fd, err);
	if (r != BC_OK)
		return r;
	ss = xcalloc(1, sizeof(*ss));
	ss->fd = fd;
	ss->s = libssh2_session_init();
	if (ss->s == NULL) {
		close(fd);
		free(ss);
		return bc_seterr(err, BC_ERR_ALLOC, "ssh: session_init");
	}
	libssh2_session_set_blocking(ss->s, 1);
	libssh2_session_set_timeout(ss->s, t->timeout_ms);
	kh = libssh2_knownhost_init(ss->s);
	if (kh != NULL) {
		for (i = 0; i < t->known_hosts.n; i++)
			if (access(t->known_hosts.v[i], R_OK) == 0)
				(void)libssh2_knownhost_readfile(kh,
				    t->known_hosts.v[i],
				    LIBSSH2_KNOWNHOST_FILE_OPENSSH);
		prefer_known_types(ss->s, kh);
		libssh2_knownhost_free(kh);
	}
	if (libssh2_session_handshake(ss->s, fd) != 0) {
		r = bc_seterr(err, BC_ERR_IO, "ssh: handshake with %s:%d "
		    "failed: %s", t->hostname, t->port, sess_errmsg(ss->s));
		goto fail;
	}
	r = check_host_key(t, ss->s, err);
	if (r != BC_OK)
		goto fail;
	r = authenticate(t, ss->s, err);
	if (r != BC_OK)
		goto fail;
	*out = ss;
	return BC_OK;
fail:
	bc_ssh_sess_close(ss, 1);
	return r;
}

int
bc_ssh_sess_exec(struct bc_ssh_sess *ss, const char *command, int timeout_ms,
    void **channel, char *err)
{
	LIBSSH2_CHANNEL *ch;

	*channel = NULL;
	libssh2_session_set_blocking(ss->s, 1);
	libssh2_session_set_timeout(ss->s, timeout_ms);
	ch = libssh2_channel_open_session(ss->s);
	if (ch == NULL)
		return bc_seterr(err, BC_ERR_IO, "ssh: cannot open a channel: "
		    "%s", sess_errmsg(ss->s));
	if (libssh2_channel_exec(ch, command) != 0) {
		bc_seterr(err, BC_ERR_IO, "ssh: cannot run `%s`: %s", command,
		    sess_errmsg(ss->s));
		libssh2_channel_free(ch);
		return BC_ERR_IO;
	}
	libssh2_session_set_blocking(ss->s, 0);
	*channel = ch;
	return BC_OK;
}

void
bc_ssh_sess_close(struct bc_ssh_sess *ss, int polite)
{
	if (ss == NULL)
		return;
	if (ss->s != NULL) {
		if (polite) {
			libssh2_session_set_blocking(ss->s, 1);
			libssh2_session_set_timeout(ss->s, 500);
			(void)libssh2_session_disconnect(ss->s, "bye");
		}
		libssh2_session_free(ss->s);
	}
	if (ss->fd >= 0)
		close(ss->fd);
	free(ss);
}

int
bc_ssh_sess_fd(const struct bc_ssh_sess *ss)
{
	return ss->fd;
}

void *
bc_ssh_sess_handle(const struct bc_ssh_sess *ss)
{
	return ss->s;
}
