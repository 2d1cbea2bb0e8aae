/*
 * ssh.c - opening libssh2 sessions for the SSH helper (boltcc-ssh): host
 * key check against known_hosts, public key authentication, channels.
 * Resolving host entries is boltcc's side (sshclient.c); the helper's
 * loop is sshmux.c.
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

/* Handshake, host key check and authentication of t on the connected
 * socket fd, which the session owns from then on (closed on failure). */
static int
sess_start(const struct bc_ssh_target *t, int fd, struct bc_ssh_sess **out,
    char *err)
{
	struct bc_ssh_sess *ss;
	LIBSSH2_KNOWNHOSTS *kh;
	size_t i;
	int r;

	*out = NULL;
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

static int
sess_open_direct(const struct bc_ssh_target *t, struct bc_ssh_sess **out,
    char *err)
{
	int fd = -1, r;

	*out = NULL;
	r = bc_io_connect_tcp(t->hostname, t->port, t->timeout_ms, &fd, err);
	if (r != BC_OK)
		return r;
	return sess_start(t, fd, out, err);
}

/* Hop k (t->njumps: t itself) failed with e2: say which. */
static int
hop_failed(const struct bc_ssh_target *t, size_t k, int r, const char *e2,
    char *err)
{
	const char *m = strncmp(e2, "ssh: ", 5) == 0 ? e2 + 5 : e2;

	if (k < t->njumps)
		return bc_seterr(err, r, "ssh: jump host %s (hop %zu of %zu to "
		    "%s): %s", t->jumps[k].alias, k + 1, t->njumps, t->alias,
		    m);
	return bc_seterr(err, r, "%s (through jump host %s)", e2,
	    t->jumps[k - 1].alias);
}

int
bc_ssh_sess_open(const struct bc_ssh_target *t, struct bc_ssh_sess **out,
    char *err)
{
	struct bc_ssh_sess *cur;
	char e2[BC_ERRLEN];
	size_t k;
	int fd, r;

	*out = NULL;
	if (t->njumps == 0)
		return sess_open_direct(t, out, err);
	r = sess_open_direct(&t->jumps[0], &cur, e2);
	if (r != BC_OK)
		return hop_failed(t, 0, r, e2, err);
	for (k = 1; k <= t->njumps; k++) {
		const struct bc_ssh_target *next = k < t->njumps ?
		    &t->jumps[k] : t;

		/* cur belongs to the tunnel now, also on failure */
		r = bc_ssh_tunnel(cur, t->jumps[k - 1].alias, next, &fd, err);
		if (r != BC_OK)
			return r;
		r = sess_start(next, fd, &cur, e2);
		if (r != BC_OK)
			return hop_failed(t, k, r, e2, err);
	}
	*out = cur;
	return BC_OK;
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
