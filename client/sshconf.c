/*
 * sshconf.c - a bounded reader for the ssh_config(5) subset in sshconf.h.
 */
#include "config.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"
#include "client/sshconf.h"

void
bc_sshcfg_init(struct bc_sshcfg *c)
{
	memset(c, 0, sizeof(*c));
	bc_strv_init(&c->identity);
	bc_strv_init(&c->known_hosts);
	bc_strv_init(&c->global_known_hosts);
	bc_strv_init(&c->notes);
	c->identities_only = -1;
	c->strict = -1;
}

void
bc_sshcfg_free(struct bc_sshcfg *c)
{
	free(c->hostname);
	free(c->user);
	free(c->identity_agent);
	free(c->proxy_jump);
	free(c->proxy_command);
	free(c->proxy_where);
	bc_strv_free(&c->identity);
	bc_strv_free(&c->known_hosts);
	bc_strv_free(&c->global_known_hosts);
	bc_strv_free(&c->notes);
	bc_sshcfg_init(c);
}

/* Glob match with * and ? (ssh's match_pattern). */
static int
glob_match(const char *p, const char *s)
{
	const char *star = NULL, *ss = NULL;

	while (*s != '\0') {
		if (*p == '*') {
			star = p++;
			ss = s;
		} else if (*p == '?' || (*p != '\0' &&
		    (unsigned char)*p == (unsigned char)*s)) {
			p++;
			s++;
		} else if (star != NULL) {
			p = star + 1;
			s = ++ss;
		} else
			return 0;
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

int
bc_sshcfg_match_list(const char *list, const char *host)
{
	char pat[256];
	const char *p = list;
	int got = 0;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		int neg = 0;

		if (n > 0 && p[0] == '!') {
			neg = 1;
			p++;
			n--;
		}
		if (n > 0 && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			if (glob_match(pat, host)) {
				if (neg)
					return 0;	/* a negation vetoes */
				got = 1;
			}
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return got;
}

/*
 * Split one line into words: whitespace separated, "double quotes"
 * group, the first word may be "Key=Value".  Returns the word count or
 * -1 for an unterminated quote / too many words.
 */
static int
split_words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *out;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (n == 1 && *p == '=') {	/* "Key = Value" */
			p++;
			continue;
		}
		if (n >= max)
			return -1;
		out = p;
		w[n++] = out;
		while (*p != '\0' && *p != ' ' && *p != '\t') {
			if (*p == '"') {
				p++;
				while (*p != '\0' && *p != '"')
					*out++ = *p++;
				if (*p != '"')
					return -1;
				p++;
				continue;
			}
			if (n == 1 && *p == '=') {
				/* "Key=Value": split here */
				*out = '\0';
				p++;
				if (n >= max)
					return -1;
				out = p;
				w[n++] = out;
				continue;
			}
			*out++ = *p++;
		}
		if (*p != '\0')
			p++;
		*out = '\0';
	}
	return n;
}

static void
set_str(char **dst, const char *v)
{
	if (*dst == NULL)
		*dst = xstrdup(v);
}

static int
parse_bool(const char *v)
{
	if (strcasecmp(v, "yes") == 0 || strcasecmp(v, "true") == 0)
		return 1;
	if (strcasecmp(v, "no") == 0 || strcasecmp(v, "false") == 0)
		return 0;
	return -1;
}

static void
add_note(struct bc_sshcfg *c, char *msg)
{
	if (c->notes.n < 16)
		bc_strv_push_owned(&c->notes, msg);
	else
		free(msg);
}

/* One hop: [ssh://][user@]host[:port], host possibly [bracketed]. */
static int
jump_hop(const char *v, size_t len, struct bc_sshcfg_hop *h, char *err)
{
	char buf[600];
	char *host, *at, *port = NULL, *p;
	long long x;

	memset(h, 0, sizeof(*h));
	if (len >= 6 && strncasecmp(v, "ssh://", 6) == 0) {
		v += 6;
		len -= 6;
		if (len > 0 && v[len - 1] == '/')
			len--;
	}
	if (len == 0 || len >= sizeof(buf))
		return bc_seterr(err, BC_ERR_INVAL, "empty or too long hop");
	memcpy(buf, v, len);
	buf[len] = '\0';
	host = buf;
	at = strrchr(buf, '@');
	if (at != NULL) {
		*at = '\0';
		if (at == buf || strlen(buf) >= sizeof(h->user))
			return bc_seterr(err, BC_ERR_INVAL, "bad user in %s",
			    buf);
		snprintf(h->user, sizeof(h->user), "%s", buf);
		host = at + 1;
	}
	if (host[0] == '[') {
		p = strchr(host, ']');
		if (p == NULL || (p[1] != '\0' && p[1] != ':'))
			return bc_seterr(err, BC_ERR_INVAL, "bad [host] in %s",
			    host);
		*p = '\0';
		if (p[1] == ':')
			port = p + 2;
		host++;
	} else if ((p = strchr(host, ':')) != NULL) {
		*p = '\0';
		port = p + 1;
	}
	if (port != NULL) {
		if (bc_parse_int(port, 1, 65535, &x) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL, "bad port %s",
			    port);
		h->port = (int)x;
	}
	if (host[0] == '\0' || host[0] == '-' ||
	    strlen(host) >= sizeof(h->host))
		return bc_seterr(err, BC_ERR_INVAL, "bad host name %s", host);
	for (p = host; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == '/' || *p == '@' ||
		    *p == '%' || *p == '"' || *p == '\'' || *p == '\\' ||
		    (unsigned char)*p == 0x7f)
			return bc_seterr(err, BC_ERR_INVAL, "bad character in "
			    "host name %s", host);
	for (p = h->user; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == '/' || *p == ':' ||
		    (unsigned char)*p == 0x7f)
			return bc_seterr(err, BC_ERR_INVAL, "bad character in "
			    "user name %s", h->user);
	memmove(h->host, host, strlen(host) + 1);
	return BC_OK;
}

int
bc_sshcfg_jump_parse(const char *v, struct bc_sshcfg_hop *hops, size_t max,
    size_t *n, char *err)
{
	char e[BC_ERRLEN];

	*n = 0;
	if (strcasecmp(v, "none") == 0)
		return BC_OK;
	for (;;) {
		size_t len = strcspn(v, ",");

		if (*n >= max)
			return bc_seterr(err, BC_ERR_LIMIT, "ProxyJump: more "
			    "than %zu hops", max);
		if (jump_hop(v, len, &hops[*n], e) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL, "bad ProxyJump "
			    "value (%s): want [user@]host[:port][,...]", e);
		(*n)++;
		if (v[len] == '\0')
			return BC_OK;
		v += len + 1;
	}
}

/* ProxyJump / ProxyCommand: they compete, the first one seen wins. */
static int
apply_proxy(struct bc_sshcfg *c, char **w, int n, const char *where,
    char *err)
{
	struct bc_sshcfg_hop hops[BC_MAX_SSH_JUMPS];
	char e[BC_ERRLEN];
	size_t nh;
	int i;

	if (strcasecmp(w[0], "ProxyJump") == 0) {
		if (n != 2)
			return bc_seterr(err, BC_ERR_INVAL, "%s: ProxyJump takes "
			    "one value ([user@]host[:port][,...])", where);
		if (bc_sshcfg_jump_parse(w[1], hops, BC_MAX_SSH_JUMPS, &nh, e)
		    != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL, "%s: %s", where, e);
		if (c->proxy_jump == NULL && c->proxy_command == NULL) {
			c->proxy_jump = xstrdup(w[1]);
			c->proxy_where = xstrdup(where);
		}
		return BC_OK;
	}
	if (c->proxy_jump != NULL || c->proxy_command != NULL)
		return BC_OK;
	{
		struct bc_strv sv = BC_STRV_INIT;

		for (i = 1; i < n; i++)
			bc_strv_push(&sv, w[i]);
		c->proxy_command = bc_strv_join(&sv);
		bc_strv_free(&sv);
	}
	c->proxy_where = xstrdup(where);
	return BC_OK;
}

/* One keyword line inside an active block; where is "file:line". */
static int
apply(struct bc_sshcfg *c, char **w, int n, const char *where, char *err)
{
	const char *k = w[0];
	long long x;
	int i;

	if (n < 2)
		return bc_seterr(err, BC_ERR_INVAL, "%s: %s needs a value",
		    where, k);
	if (strcasecmp(k, "HostName") == 0)
		set_str(&c->hostname, w[1]);
	else if (strcasecmp(k, "User") == 0)
		set_str(&c->user, w[1]);
	else if (strcasecmp(k, "Port") == 0) {
		if (bc_parse_int(w[1], 1, 65535, &x) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL, "%s: bad port",
			    where);
		if (c->port == 0)
			c->port = (int)x;
	} else if (strcasecmp(k, "IdentityFile") == 0) {
		if (c->identity.n < BC_SSHCONF_MAX_FILES)
			bc_strv_push(&c->identity, w[1]);
	} else if (strcasecmp(k, "UserKnownHostsFile") == 0 ||
	    strcasecmp(k, "GlobalKnownHostsFile") == 0) {
		struct bc_strv *sv = strcasecmp(k, "UserKnownHostsFile") == 0 ?
		    &c->known_hosts : &c->global_known_hosts;

		if (sv->n == 0)
			for (i = 1; i < n && i <= BC_SSHCONF_MAX_FILES; i++)
				bc_strv_push(sv, w[i]);
	} else if (strcasecmp(k, "IdentitiesOnly") == 0) {
		int b = parse_bool(w[1]);

		if (b < 0)
			return bc_seterr(err, BC_ERR_INVAL,
			    "%s: IdentitiesOnly yes|no", where);
		if (c->identities_only < 0)
			c->identities_only = b;
	} else if (strcasecmp(k, "IdentityAgent") == 0) {
		set_str(&c->identity_agent, w[1]);
	} else if (strcasecmp(k, "StrictHostKeyChecking") == 0) {
		int s;

		if (parse_bool(w[1]) == 1 || strcasecmp(w[1], "ask") == 0)
			s = BC_SSH_STRICT_YES;
		else if (parse_bool(w[1]) == 0 || strcasecmp(w[1], "off") == 0)
			s = BC_SSH_STRICT_NO;
		else if (strcasecmp(w[1], "accept-new") == 0)
			s = BC_SSH_STRICT_ACCEPT_NEW;
		else
			return bc_seterr(err, BC_ERR_INVAL, "%s: "
			    "bad StrictHostKeyChecking value", where);
		if (c->strict < 0)
			c->strict = s;
	} else if (strcasecmp(k, "ConnectTimeout") == 0) {
		if (bc_parse_int(w[1], 0, 3600, &x) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL,
			    "%s: bad ConnectTimeout", where);
		if (c->connect_timeout == 0)
			c->connect_timeout = (int)x;
	} else if (strcasecmp(k, "ProxyJump") == 0 ||
	    strcasecmp(k, "ProxyCommand") == 0)
		return apply_proxy(c, w, n, where, err);
	return BC_OK;
}

/* --------------------------------------------------------------------- */
/* files and Include */

struct pstate {
	const struct bc_sshcfg_inc *inc;	/* NULL: Include not read */
	const char *host;
	struct bc_sshcfg *c;
};

static int parse_text(struct pstate *ps, const char *text, size_t len,
    const char *name, int depth, char *err);

/* Owned by the user or root and writable by nobody else, as ssh wants
 * (it refuses such a file: "Bad owner or permissions"). */
static int
check_perm(const char *path, char *err)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return BC_OK;	/* read_file says what is wrong */
	if ((st.st_uid != 0 && st.st_uid != getuid()) ||
	    (st.st_mode & 022) != 0)
		return bc_seterr(err, BC_ERR_DENIED, "%s: bad owner or "
		    "permissions (writable by another user; ssh refuses it "
		    "too)", path);
	return BC_OK;
}

/* One file at depth (0: a top-level one).  Missing: nothing to do. */
static int
read_file(struct pstate *ps, const char *path, const char *from, int depth,
    char *err)
{
	struct bc_buf b;
	struct stat st;
	char e2[BC_ERRLEN];
	int r;

	if (depth > BC_MAX_SSH_INCLUDE_DEPTH)
		return bc_seterr(err, BC_ERR_LIMIT, "%s: Include of %s nested "
		    "more than %d deep (does a file include itself?)", from,
		    path, BC_MAX_SSH_INCLUDE_DEPTH);
	if (stat(path, &st) != 0)
		return BC_OK;
	if (S_ISDIR(st.st_mode)) {
		add_note(ps->c, xasprintf("%s: %s is a directory; not read",
		    from, path));
		return BC_OK;
	}
	if (++ps->c->files > BC_MAX_SSH_INCLUDE_FILES)
		return bc_seterr(err, BC_ERR_LIMIT, "%s: more than %d ssh "
		    "config files to read (Include)", from,
		    BC_MAX_SSH_INCLUDE_FILES);
	if ((depth > 0 || (ps->inc != NULL && !ps->inc->system)) &&
	    (r = check_perm(path, err)) != BC_OK)
		return r;
	bc_buf_init(&b, BC_SSHCONF_MAX_BYTES);
	r = bc_read_file(path, BC_SSHCONF_MAX_BYTES, &b, e2);
	if (r == BC_ERR_NOENT) {
		bc_buf_free(&b);
		return BC_OK;
	}
	if (r != BC_OK) {
		bc_buf_free(&b);
		return bc_seterr(err, r, "%s: %s", from, e2);
	}
	r = parse_text(ps, (const char *)bc_buf_data(&b), bc_buf_len(&b),
	    path, depth, err);
	bc_buf_free(&b);
	return r;
}

/* The fuzz target's sandbox: under inc->jail and no "..". */
static int
in_jail(const char *jail, const char *path)
{
	size_t n = strlen(jail);

	return strncmp(path, jail, n) == 0 && path[n] == '/' &&
	    strstr(path, "..") == NULL;
}

/* One Include argument: a path or glob pattern. */
static int
include_one(struct pstate *ps, const char *arg, const char *where,
    int depth, char *err)
{
	const struct bc_sshcfg_inc *inc = ps->inc;
	char path[4096];
	glob_t g;
	size_t i;
	int k, r;

	if (arg[0] == '~') {
		if (inc->system)
			return bc_seterr(err, BC_ERR_INVAL, "%s: Include %s: "
			    "~ is not allowed in the system file", where, arg);
		if (arg[1] != '/' && arg[1] != '\0')
			return bc_seterr(err, BC_ERR_INVAL, "%s: Include %s: "
			    "only ~/ is supported, not ~user", where, arg);
		k = snprintf(path, sizeof(path), "%s%s", inc->home, arg + 1);
	} else if (arg[0] != '/')
		k = snprintf(path, sizeof(path), "%s/%s", inc->dir, arg);
	else
		k = snprintf(path, sizeof(path), "%s", arg);
	if (k < 0 || (size_t)k >= sizeof(path))
		return bc_seterr(err, BC_ERR_LIMIT, "%s: Include path too "
		    "long", where);
	if (inc->jail != NULL && !in_jail(inc->jail, path)) {
		add_note(ps->c, xasprintf("%s: Include %s is outside %s; not "
		    "read", where, path, inc->jail));
		return BC_OK;
	}
	memset(&g, 0, sizeof(g));
	r = glob(path, 0, NULL, &g);
	if (r == GLOB_NOMATCH) {
		globfree(&g);
		return BC_OK;	/* as ssh: no file is no error */
	}
	if (r != 0) {
		globfree(&g);
		return bc_seterr(err, BC_ERR_IO, "%s: Include %s: glob failed",
		    where, path);
	}
	r = BC_OK;
	for (i = 0; i < g.gl_pathc && r == BC_OK; i++)
		r = read_file(ps, g.gl_pathv[i], where, depth + 1, err);
	globfree(&g);
	return r;
}

static int
include_line(struct pstate *ps, char **w, int n, const char *where,
    int depth, char *err)
{
	int i, r;

	if (n < 2)
		return bc_seterr(err, BC_ERR_INVAL, "%s: Include needs a path",
		    where);
	if (ps->inc == NULL || ps->inc->home == NULL) {
		add_note(ps->c, xasprintf("%s: Include not read (no files "
		    "here)", where));
		return BC_OK;
	}
	for (i = 1; i < n; i++) {
		r = include_one(ps, w[i], where, depth, err);
		if (r != BC_OK)
			return r;
	}
	return BC_OK;
}

/* A Host line: the block applies if a pattern matches and no negated
 * one does. */
static int
host_line(const struct pstate *ps, char **w, int n, const char *where,
    int *active, char *err)
{
	int pos_hit = 0, neg_hit = 0, i;

	if (n < 2)
		return bc_seterr(err, BC_ERR_INVAL, "%s: Host needs a "
		    "pattern", where);
	for (i = 1; i < n; i++) {
		const char *p = w[i];

		if (p[0] == '!') {
			if (bc_sshcfg_match_list(p + 1, ps->host))
				neg_hit = 1;
		} else if (bc_sshcfg_match_list(p, ps->host))
			pos_hit = 1;
	}
	*active = pos_hit && !neg_hit;
	return BC_OK;
}

static int
conf_line(struct pstate *ps, char **w, int n, const char *where, int depth,
    int *active, char *err)
{
	if (strcasecmp(w[0], "Host") == 0)
		return host_line(ps, w, n, where, active, err);
	if (strcasecmp(w[0], "Match") == 0) {
		add_note(ps->c, xasprintf("%s: Match blocks are not "
		    "supported; skipped", where));
		*active = 0;
		return BC_OK;
	}
	if (!*active)
		return BC_OK;
	if (strcasecmp(w[0], "Include") == 0)
		return include_line(ps, w, n, where, depth, err);
	return apply(ps->c, w, n, where, err);
}

/* Copy line number lineno starting at *pos into line. */
static int
next_line(const char *text, size_t len, size_t *pos, char *line,
    const char *where, char *err)
{
	size_t e = *pos, ll;

	while (e < len && text[e] != '\n')
		e++;
	ll = e - *pos;
	if (ll > BC_SSHCONF_MAX_LINE)
		return bc_seterr(err, BC_ERR_LIMIT, "%s: line too long",
		    where);
	if (memchr(text + *pos, '\0', ll) != NULL)
		return bc_seterr(err, BC_ERR_INVAL, "%s: NUL byte", where);
	memcpy(line, text + *pos, ll);
	line[ll] = '\0';
	*pos = e < len ? e + 1 : e;
	if (ll > 0 && line[ll - 1] == '\r')
		line[ll - 1] = '\0';
	return BC_OK;
}

static int
parse_text(struct pstate *ps, const char *text, size_t len, const char *name,
    int depth, char *err)
{
	char line[BC_SSHCONF_MAX_LINE + 1];
	char *w[BC_SSHCONF_MAX_ARGS];
	char where[300];
	size_t pos = 0;
	int lineno = 0, active = 1, n, r;

	if (len > BC_SSHCONF_MAX_BYTES)
		return bc_seterr(err, BC_ERR_LIMIT, "%s: over %d bytes", name,
		    BC_SSHCONF_MAX_BYTES);
	while (pos < len) {
		snprintf(where, sizeof(where), "%.280s:%d", name, ++lineno);
		r = next_line(text, len, &pos, line, where, err);
		if (r != BC_OK)
			return r;
		n = split_words(line, w, BC_SSHCONF_MAX_ARGS);
		if (n < 0)
			return bc_seterr(err, BC_ERR_INVAL, "%s: unterminated "
			    "quote or too many words", where);
		if (n == 0)
			continue;
		r = conf_line(ps, w, n, where, depth, &active, err);
		if (r != BC_OK)
			return r;
	}
	return BC_OK;
}

int
bc_sshcfg_parse_named(const char *text, size_t len, const char *name,
    const struct bc_sshcfg_inc *inc, const char *host, struct bc_sshcfg *c,
    char *err)
{
	struct pstate ps;

	ps.inc = inc;
	ps.host = host;
	ps.c = c;
	return parse_text(&ps, text, len, name, 0, err);
}

int
bc_sshcfg_parse(const char *text, size_t len, const char *host,
    struct bc_sshcfg *c, char *err)
{
	return bc_sshcfg_parse_named(text, len, "ssh config", NULL, host, c,
	    err);
}

int
bc_sshcfg_read(const char *path, const struct bc_sshcfg_inc *inc,
    const char *host, struct bc_sshcfg *c, char *err)
{
	struct pstate ps;

	ps.inc = inc;
	ps.host = host;
	ps.c = c;
	return read_file(&ps, path, path, 0, err);
}

char *
bc_sshcfg_expand(const char *v, const char *home, const char *luser,
    const char *ruser, const char *host, char *err)
{
	char out[4096];
	size_t o = 0;
	const char *p = v;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		size_t hl = strlen(home);

		if (hl >= sizeof(out))
			goto toolong;
		memcpy(out, home, hl);
		o = hl;
		p++;
	}
	for (; *p != '\0'; p++) {
		const char *ins = NULL;
		char one[2] = { 0, 0 };
		size_t il;

		if (*p != '%') {
			one[0] = *p;
			ins = one;
		} else {
			p++;
			switch (*p) {
			case '%':
				ins = "%";
				break;
			case 'd':
				ins = home;
				break;
			case 'u':
				ins = luser;
				break;
			case 'r':
				ins = ruser;
				break;
			case 'h':
				ins = host;
				break;
			default:
				bc_seterr(err, BC_ERR_INVAL, "unsupported token "
				    "%%%c in %s", *p != '\0' ? *p : '?', v);
				return NULL;
			}
		}
		il = strlen(ins);
		if (o + il >= sizeof(out))
			goto toolong;
		memcpy(out + o, ins, il);
		o += il;
	}
	out[o] = '\0';
	return xstrdup(out);
toolong:
	bc_seterr(err, BC_ERR_LIMIT, "expanded path too long: %s", v);
	return NULL;
}
