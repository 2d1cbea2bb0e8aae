/*
 * sshconf.c - a bounded reader for the ssh_config(5) subset in sshconf.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
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

/* One keyword line inside an active block. */
static int
apply(struct bc_sshcfg *c, char **w, int n, int lineno, char *err)
{
	const char *k = w[0];
	long long x;
	int i;

	if (n < 2)
		return bc_seterr(err, BC_ERR_INVAL,
		    "ssh config line %d: %s needs a value", lineno, k);
	if (strcasecmp(k, "HostName") == 0)
		set_str(&c->hostname, w[1]);
	else if (strcasecmp(k, "User") == 0)
		set_str(&c->user, w[1]);
	else if (strcasecmp(k, "Port") == 0) {
		if (bc_parse_int(w[1], 1, 65535, &x) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL,
			    "ssh config line %d: bad port", lineno);
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
			    "ssh config line %d: IdentitiesOnly yes|no", lineno);
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
			return bc_seterr(err, BC_ERR_INVAL, "ssh config line %d: "
			    "bad StrictHostKeyChecking value", lineno);
		if (c->strict < 0)
			c->strict = s;
	} else if (strcasecmp(k, "ConnectTimeout") == 0) {
		if (bc_parse_int(w[1], 0, 3600, &x) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL,
			    "ssh config line %d: bad ConnectTimeout", lineno);
		if (c->connect_timeout == 0)
			c->connect_timeout = (int)x;
	}
	return BC_OK;
}

int
bc_sshcfg_parse(const char *text, size_t len, const char *host,
    struct bc_sshcfg *c, char *err)
{
	char line[BC_SSHCONF_MAX_LINE + 1];
	char *w[BC_SSHCONF_MAX_ARGS];
	size_t pos = 0;
	int lineno = 0, active = 1, n, i;

	if (len > BC_SSHCONF_MAX_BYTES)
		return bc_seterr(err, BC_ERR_LIMIT, "ssh config over %d bytes",
		    BC_SSHCONF_MAX_BYTES);
	while (pos < len) {
		size_t e = pos, ll;

		while (e < len && text[e] != '\n')
			e++;
		ll = e - pos;
		lineno++;
		if (ll > BC_SSHCONF_MAX_LINE)
			return bc_seterr(err, BC_ERR_LIMIT,
			    "ssh config line %d is too long", lineno);
		if (memchr(text + pos, '\0', ll) != NULL)
			return bc_seterr(err, BC_ERR_INVAL,
			    "ssh config line %d: NUL byte", lineno);
		memcpy(line, text + pos, ll);
		line[ll] = '\0';
		pos = e < len ? e + 1 : e;
		if (ll > 0 && line[ll - 1] == '\r')
			line[ll - 1] = '\0';
		n = split_words(line, w, BC_SSHCONF_MAX_ARGS);
		if (n < 0)
			return bc_seterr(err, BC_ERR_INVAL, "ssh config line %d: "
			    "unterminated quote or too many words", lineno);
		if (n == 0)
			continue;
		if (strcasecmp(w[0], "Host") == 0) {
			int pos_hit = 0, neg_hit = 0;

			if (n < 2)
				return bc_seterr(err, BC_ERR_INVAL,
				    "ssh config line %d: Host needs a pattern",
				    lineno);
			for (i = 1; i < n; i++) {
				const char *p = w[i];

				if (p[0] == '!') {
					if (bc_sshcfg_match_list(p + 1, host))
						neg_hit = 1;
				} else if (bc_sshcfg_match_list(p, host))
					pos_hit = 1;
			}
			active = pos_hit && !neg_hit;
			continue;
		}
		if (strcasecmp(w[0], "Match") == 0) {
			if (c->notes.n < 16)
				bc_strv_push_owned(&c->notes, xasprintf(
				    "line %d: Match blocks are not supported; "
				    "skipped", lineno));
			active = 0;
			continue;
		}
		if (!active)
			continue;
		if (strcasecmp(w[0], "Include") == 0) {
			if (c->notes.n < 16)
				bc_strv_push_owned(&c->notes, xasprintf(
				    "line %d: Include is not supported; "
				    "ignored", lineno));
			continue;
		}
		if (apply(c, w, n, lineno, err) != BC_OK)
			return BC_ERR_INVAL;
	}
	return BC_OK;
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
