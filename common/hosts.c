/*
 * hosts.c - host-list parser: distcc 3.4's DISTCC_HOSTS grammar (spec
 * distcc-protocol.md section 10) plus boltcc's ,bolt and ,distcc options.
 *
 * The whole list is rejected on the first bad entry, as distcc does; the
 * message names the entry and the problem.  Deliberate differences from
 * distcc 3.4: a bad --localslots value, an unknown "--" option and a host
 * name that starts with '-' are errors instead of being taken as host
 * names (a name starting with '-' would reach ssh as an option).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "hosts.h"
#include "limits.h"
#include "util.h"

#define ENTRY_SHOW 80		/* bytes of an entry quoted in messages */

struct opts {
	int lzo, cpp, down, auth, plain;
	char *auth_name;
	enum bc_host_bolt bolt;
};

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Characters that may appear in a host name, user name (outside []). */
static int
name_char_ok(unsigned char c)
{
	if (c <= 0x20 || c == 0x7f)
		return 0;
	if (c >= 0x80)
		return 1;
	return strchr("/:,@[]#\\\"'`$;|&<>()*?{}", c) == NULL;
}

static int
check_name(const char *tok, const char *what, const char *s, size_t n,
    char *err)
{
	size_t i;

	if (n == 0)
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": empty %s", ENTRY_SHOW, tok,
		    what);
	if (s[0] == '-')
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": %s must not start with '-'",
		    ENTRY_SHOW, tok, what);
	for (i = 0; i < n; i++)
		if (!name_char_ok((unsigned char)s[i]))
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": invalid character in "
			    "%s", ENTRY_SHOW, tok, what);
	return BC_OK;
}

/* Digits at *pp (no sign), value in [min,max]; advances *pp. */
static int
parse_num(const char **pp, long min, long max, long *out)
{
	const char *p = *pp;
	long v = 0;

	if (!is_digit((unsigned char)*p))
		return -1;
	while (is_digit((unsigned char)*p)) {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -1;
		p++;
	}
	if (v < min)
		return -1;
	*pp = p;
	*out = v;
	return 0;
}

/* "/N" at *pp. */
static int
parse_slots(const char *tok, const char **pp, int *limit, char *err)
{
	const char *p = *pp + 1;
	long v;

	if (parse_num(&p, 1, BC_MAX_HOST_SLOTS, &v) != 0 ||
	    (*p != '\0' && *p != ':' && *p != ','))
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": bad slot count after '/' "
		    "(must be 1..%d)", ENTRY_SHOW, tok, BC_MAX_HOST_SLOTS);
	*limit = (int)v;
	*pp = p;
	return BC_OK;
}

/* ":PORT" at *pp; the port must be followed by end, '/' or ','. */
static int
parse_port(const char *tok, const char **pp, int *port, char *err)
{
	const char *p = *pp + 1;
	long v;

	if (parse_num(&p, 1, 65535, &v) != 0 ||
	    (*p != '\0' && *p != '/' && *p != ','))
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": invalid tcp port (must be "
		    "1..65535)", ENTRY_SHOW, tok);
	*port = (int)v;
	*pp = p;
	return BC_OK;
}

static int
parse_options(const char *tok, const char *p, int boltcc_opts,
    struct opts *o, char *err)
{
	memset(o, 0, sizeof(*o));
	while (*p == ',') {
		const char *s = p + 1;
		const char *e = strchr(s, ',');
		size_t n = e != NULL ? (size_t)(e - s) : strlen(s);

		if (n == 3 && memcmp(s, "lzo", 3) == 0)
			o->lzo = 1;
		else if (n == 3 && memcmp(s, "cpp", 3) == 0)
			o->cpp = 1;
		else if (n == 4 && memcmp(s, "down", 4) == 0)
			o->down = 1;
		else if (n == 4 && memcmp(s, "auth", 4) == 0)
			o->auth = 1;
		else if (n > 5 && memcmp(s, "auth=", 5) == 0) {
			int r = check_name(tok, "auth name", s + 5, n - 5,
			    err);
			if (r != BC_OK) {
				free(o->auth_name);
				return r;
			}
			o->auth = 1;
			free(o->auth_name);
			o->auth_name = xstrndup(s + 5, n - 5);
		} else if (n == 5 && memcmp(s, "plain", 5) == 0) {
			if (!boltcc_opts) {
				free(o->auth_name);
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": ',plain' is a "
				    "boltcc-only option: put it in "
				    "BOLTCC_HOSTS", ENTRY_SHOW, tok);
			}
			o->plain = 1;	/* boltccd: no pump by default */
		} else if ((n == 4 && memcmp(s, "bolt", 4) == 0) ||
		    (n == 6 && memcmp(s, "distcc", 6) == 0)) {
			enum bc_host_bolt b = n == 4 ? BC_BOLT_YES : BC_BOLT_NO;

			if (!boltcc_opts) {
				free(o->auth_name);
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": ',%.*s' is a "
				    "boltcc-only option: put it in "
				    "BOLTCC_HOSTS, not DISTCC_HOSTS or a "
				    "distcc hosts file (distcc would reject "
				    "the whole list)", ENTRY_SHOW, tok,
				    (int)n, s);
			}
			if (o->bolt != BC_BOLT_UNKNOWN && o->bolt != b) {
				free(o->auth_name);
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": ',bolt' and "
				    "',distcc' contradict each other",
				    ENTRY_SHOW, tok);
			}
			o->bolt = b;
		} else {
			free(o->auth_name);
			if (n == 0)
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": empty option "
				    "after ','", ENTRY_SHOW, tok);
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": unrecognized option "
			    "',%.*s'", ENTRY_SHOW, tok, (int)(n > 40 ? 40 : n),
			    s);
		}
		p = s + n;
	}
	if (*p != '\0') {
		free(o->auth_name);
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": unexpected text \"%.*s\"",
		    ENTRY_SHOW, tok, 40, p);
	}
	if (o->cpp && o->plain) {
		free(o->auth_name);
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": ',cpp' (pump mode) and "
		    "',plain' contradict each other", ENTRY_SHOW, tok);
	}
	if (o->cpp && !o->lzo) {
		free(o->auth_name);
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": pump mode (',cpp') requires "
		    "compression (',lzo')", ENTRY_SHOW, tok);
	}
	return BC_OK;
}

static void
apply_options(struct bc_host *h, struct opts *o)
{
	h->protocol = o->cpp ? 3 : o->lzo ? 2 : 1;
	h->down = o->down;
	h->auth = o->auth;
	h->auth_name = o->auth_name;
	o->auth_name = NULL;
	h->bolt = o->bolt;
	h->plain = o->plain;
}

/* Host part at *pp: "[v6]" or a name up to one of ":/,".  */
static int
parse_hostname(const char *tok, const char **pp, char **name, char *err)
{
	const char *p = *pp;
	const char *s, *e;
	int r;

	if (*p == '[') {
		size_t i;

		s = p + 1;
		e = strchr(s, ']');
		if (e == NULL)
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": missing ']'",
			    ENTRY_SHOW, tok);
		if (e == s)
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": empty address in []",
			    ENTRY_SHOW, tok);
		if (memchr(s, ':', (size_t)(e - s)) == NULL || s[0] == '-')
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": [] must hold an IPv6 "
			    "address", ENTRY_SHOW, tok);
		for (i = 0; s + i < e; i++) {
			unsigned char c = (unsigned char)s[i];

			if (!(is_digit(c) || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z') || c == ':' || c == '.' ||
			    c == '%' || c == '_' || c == '-'))
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": invalid "
				    "character in IPv6 address", ENTRY_SHOW,
				    tok);
		}
		p = e + 1;
		if (*p != '\0' && *p != ':' && *p != '/' && *p != ',')
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": unexpected text after "
			    "']'", ENTRY_SHOW, tok);
	} else {
		s = p;
		e = s + strcspn(s, ":/,");
		r = check_name(tok, "host name", s, (size_t)(e - s), err);
		if (r != BC_OK)
			return r;
		p = e;
	}
	*name = xstrndup(s, (size_t)(e - s));
	*pp = p;
	return BC_OK;
}

static int
parse_tcp(const char *tok, int boltcc_opts, struct bc_host *h, char *err)
{
	const char *p = tok;
	struct opts o;
	int r;

	h->kind = BC_HOST_TCP;
	h->port = BC_DEFAULT_PORT;
	h->limit = BC_DEFAULT_REMOTE_SLOTS;
	if ((r = parse_hostname(tok, &p, &h->name, err)) != BC_OK)
		return r;
	if (*p == ':') {
		if ((r = parse_port(tok, &p, &h->port, err)) != BC_OK)
			return r;
		if (*p == '/' && (r = parse_slots(tok, &p, &h->limit, err)) !=
		    BC_OK)
			return r;
	} else if (*p == '/') {
		/* old order: HOST/N:PORT */
		if ((r = parse_slots(tok, &p, &h->limit, err)) != BC_OK)
			return r;
		if (*p == ':' && (r = parse_port(tok, &p, &h->port, err)) !=
		    BC_OK)
			return r;
	}
	if ((r = parse_options(tok, p, boltcc_opts, &o, err)) != BC_OK)
		return r;
	apply_options(h, &o);
	return BC_OK;
}

/* [USER]@HOST[/N][:COMMAND]OPTIONS */
static int
parse_ssh(const char *tok, int boltcc_opts, struct bc_host *h, char *err)
{
	const char *at = strchr(tok, '@');
	const char *p;
	struct opts o;
	int r;

	h->kind = BC_HOST_SSH;
	h->port = 0;
	h->limit = BC_DEFAULT_REMOTE_SLOTS;
	if (at != tok) {
		r = check_name(tok, "user name", tok, (size_t)(at - tok), err);
		if (r != BC_OK)
			return r;
		h->user = xstrndup(tok, (size_t)(at - tok));
	}
	p = at + 1;
	if ((r = parse_hostname(tok, &p, &h->name, err)) != BC_OK)
		return r;
	if (*p == '/' && (r = parse_slots(tok, &p, &h->limit, err)) != BC_OK)
		return r;
	if (*p == ':') {
		size_t n = strcspn(p + 1, ",");
		size_t i;

		if (n == 0)
			return bc_seterr(err, BC_ERR_HOSTSPEC,
			    "host list entry \"%.*s\": empty ssh command "
			    "after ':'", ENTRY_SHOW, tok);
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)p[1 + i];

			if (c < 0x20 || c == 0x7f)
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": invalid "
				    "character in ssh command", ENTRY_SHOW,
				    tok);
		}
		h->command = xstrndup(p + 1, n);
		p += 1 + n;
	}
	if ((r = parse_options(tok, p, boltcc_opts, &o, err)) != BC_OK)
		return r;
	apply_options(h, &o);
	return BC_OK;
}

/* "--localslots=N", "--localslots/N" (and _cpp); 1 if tok matched. */
static int
parse_localslots(const char *tok, const char *opt, int *val, int *r,
    char *err)
{
	size_t n = strlen(opt);
	const char *p;
	long v;

	if (strncmp(tok, opt, n) != 0)
		return 0;
	p = tok + n;
	if ((*p != '=' && *p != '/') || (p++, parse_num(&p, 1, BC_MAX_HOST_SLOTS,
	    &v) != 0) || *p != '\0') {
		*r = bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": %s needs a value 1..%d "
		    "(\"%s=N\")", ENTRY_SHOW, tok, opt, BC_MAX_HOST_SLOTS, opt);
		return 1;
	}
	*val = (int)v;
	*r = BC_OK;
	return 1;
}

static void
host_clear(struct bc_host *h)
{
	free(h->spec);
	free(h->name);
	free(h->user);
	free(h->command);
	free(h->auth_name);
	memset(h, 0, sizeof(*h));
}

static int
parse_entry(const char *tok, int boltcc_opts, struct bc_hostlist *hl,
    char *err)
{
	struct bc_host h;
	int r;

	if (strcmp(tok, "--randomize") == 0) {
		hl->randomize = 1;
		return BC_OK;
	}
	if (parse_localslots(tok, "--localslots_cpp", &hl->localslots_cpp,
	    &r, err))
		return r;
	if (parse_localslots(tok, "--localslots", &hl->localslots, &r, err))
		return r;
	if (tok[0] == '-')
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": unknown option", ENTRY_SHOW,
		    tok);
	if (strncmp(tok, "+zeroconf", 9) == 0)
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": zeroconf not supported",
		    ENTRY_SHOW, tok);
	if (tok[0] == '+')	/* distcc's only such entry is +zeroconf */
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list entry \"%.*s\": unknown entry (a host name "
		    "cannot start with '+')", ENTRY_SHOW, tok);

	if (hl->n >= BC_MAX_HOSTS)
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list has more than %d hosts", BC_MAX_HOSTS);

	memset(&h, 0, sizeof(h));
	if (strcmp(tok, "localhost") == 0 ||
	    strncmp(tok, "localhost/", 10) == 0) {
		/* Exactly "localhost" or "localhost/N": run locally. */
		const char *p = tok + 9;

		h.kind = BC_HOST_LOCAL;
		h.limit = BC_DEFAULT_LOCAL_SLOTS;
		h.protocol = 1;
		if (*p == '/') {
			long v;

			p++;
			if (parse_num(&p, 1, BC_MAX_HOST_SLOTS, &v) != 0 ||
			    *p != '\0')
				return bc_seterr(err, BC_ERR_HOSTSPEC,
				    "host list entry \"%.*s\": bad slot "
				    "count (\"localhost/N\", N 1..%d)",
				    ENTRY_SHOW, tok, BC_MAX_HOST_SLOTS);
			h.limit = (int)v;
		}
		h.name = xstrdup("localhost");
		r = BC_OK;
	} else if (strchr(tok, '@') != NULL) {
		r = parse_ssh(tok, boltcc_opts, &h, err);
	} else {
		r = parse_tcp(tok, boltcc_opts, &h, err);
	}
	if (r != BC_OK) {
		host_clear(&h);
		return r;
	}
	h.spec = xstrdup(tok);
	hl->v = xrealloc(hl->v, hl->n + 1, sizeof(*hl->v));
	hl->v[hl->n++] = h;
	return BC_OK;
}

static uint64_t
rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void
shuffle(struct bc_hostlist *hl)
{
	static uint64_t calls;
	uint64_t s = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^
	    (uint64_t)(uintptr_t)hl ^ (++calls * 0x9E3779B97F4A7C15ULL);
	size_t i;

	if (s == 0)
		s = 1;
	for (i = hl->n; i > 1; i--) {
		size_t j = (size_t)(rng_next(&s) % i);
		struct bc_host t = hl->v[i - 1];

		hl->v[i - 1] = hl->v[j];
		hl->v[j] = t;
	}
}

int
bc_hosts_parse(const char *text, int boltcc_opts, struct bc_hostlist *out,
    char *err)
{
	const char *p;
	size_t len;
	int r = BC_OK;

	memset(out, 0, sizeof(*out));
	out->localslots = BC_DEFAULT_LOCALSLOTS;
	out->localslots_cpp = BC_DEFAULT_LOCALSLOTS_CPP;
	if (text == NULL)
		return bc_seterr(err, BC_ERR_HOSTSPEC, "no host list");
	len = strlen(text);
	if (len > BC_MAX_HOSTLIST_LEN)
		return bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list is longer than %d bytes", BC_MAX_HOSTLIST_LEN);

	p = text;
	while (*p != '\0') {
		size_t n;
		char *tok;

		if (is_space((unsigned char)*p)) {
			p++;
			continue;
		}
		if (*p == '#') {
			while (*p != '\0' && *p != '\n')
				p++;
			continue;
		}
		n = 0;
		while (p[n] != '\0' && !is_space((unsigned char)p[n]) &&
		    p[n] != '#')
			n++;
		tok = xstrndup(p, n);
		r = parse_entry(tok, boltcc_opts, out, err);
		free(tok);
		if (r != BC_OK)
			break;
		p += n;
	}
	if (r == BC_OK && out->n == 0)
		r = bc_seterr(err, BC_ERR_HOSTSPEC,
		    "host list contains no hosts; can't distribute work");
	if (r != BC_OK) {
		bc_hosts_free(out);
		return r;
	}
	if (out->randomize)
		shuffle(out);
	return BC_OK;
}

void
bc_hosts_free(struct bc_hostlist *hl)
{
	size_t i;

	if (hl == NULL)
		return;
	for (i = 0; i < hl->n; i++)
		host_clear(&hl->v[i]);
	free(hl->v);
	hl->v = NULL;
	hl->n = 0;
}

/*
 * distcc -j counts every entry, ,down and ,auth hosts included (verified:
 * "box,down" gives 4); --localslots* are not counted.
 */
int
bc_hosts_total_slots(const struct bc_hostlist *hl)
{
	size_t i;
	int sum = 0;

	for (i = 0; i < hl->n; i++)
		sum += hl->v[i].limit;
	return sum;
}

const char *
bc_host_label(const struct bc_host *h)
{
	return h->spec != NULL ? h->spec : (h->name != NULL ? h->name : "?");
}

char *
bc_host_describe(const struct bc_host *h)
{
	const char *lb = "", *rb = "";
	char port[16] = "", slots[16] = "";
	const char *proto;
	const char *bolt;

	if (h->kind == BC_HOST_LOCAL) {
		if (h->limit != BC_DEFAULT_LOCAL_SLOTS)
			return xasprintf("localhost/%d", h->limit);
		return xstrdup("localhost");
	}
	if (h->name != NULL && strchr(h->name, ':') != NULL) {
		lb = "[";
		rb = "]";
	}
	if (h->limit != BC_DEFAULT_REMOTE_SLOTS)
		snprintf(slots, sizeof(slots), "/%d", h->limit);
	proto = h->protocol == 3 ? ",cpp,lzo" : h->protocol == 2 ? ",lzo" : "";
	bolt = h->bolt == BC_BOLT_YES ? (h->plain ? ",plain,bolt" : ",bolt") :
	    h->bolt == BC_BOLT_NO ? ",distcc" : h->plain ? ",plain" : "";
	if (h->kind == BC_HOST_SSH)
		return xasprintf("%s@%s%s%s%s%s%s%s%s%s%s%s%s",
		    h->user != NULL ? h->user : "", lb, h->name, rb, slots,
		    h->command != NULL ? ":" : "",
		    h->command != NULL ? h->command : "", proto,
		    h->down ? ",down" : "", h->auth ? ",auth" : "",
		    h->auth_name != NULL ? "=" : "",
		    h->auth_name != NULL ? h->auth_name : "", bolt);
	if (h->port != BC_DEFAULT_PORT)
		snprintf(port, sizeof(port), ":%d", h->port);
	return xasprintf("%s%s%s%s%s%s%s%s%s%s%s", lb, h->name, rb, port,
	    slots, proto, h->down ? ",down" : "", h->auth ? ",auth" : "",
	    h->auth_name != NULL ? "=" : "",
	    h->auth_name != NULL ? h->auth_name : "", bolt);
}
