/*
 * pumpname.c - the names of a pump job's file tree (see pumpname.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/pumpname.h"
#include "common/util.h"

#define SYSDIR_UPS 20		/* distcc's system-directory link */
#define NONE UINT32_MAX
#define ESC_LEN 256

struct bc_pump_node {
	char *comp;		/* one component, NUL-terminated */
	uint32_t len;
	uint32_t parent;	/* NONE for the root */
	uint32_t hash;
	uint32_t res;		/* a LINK's resolution (a node or NONE) */
	uint8_t kind;		/* enum bc_pump_kind */
	uint8_t state;		/* a LINK's resolution: 0 to do, 1 busy,
				 * 2 done */
	char *target;		/* a LINK's target */
};

static void
esc(const char *s, size_t n, char out[ESC_LEN])
{
	bc_log_escape(s, n, out, ESC_LEN);
}

static const char *
kind_name(int k)
{
	switch (k) {
	case BC_PUMP_FILE:
		return "file";
	case BC_PUMP_LINK:
	case BC_PUMP_SYSLINK:
		return "link";
	default:
		return "directory";
	}
}

/* ---- one name ------------------------------------------------------ */

/* Why component p (n bytes) is not canonical, or NULL. */
static const char *
comp_problem(const char *p, size_t n, size_t *bad)
{
	size_t i;

	if (n == 0)
		return "an empty component ('//' or a trailing '/')";
	if (n == 1 && p[0] == '.')
		return "a '.' component";
	if (n == 2 && p[0] == '.' && p[1] == '.')
		return "a '..' component";
	if (n > BC_MAX_PATH_COMPONENT)
		return "a component longer than the limit";
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c < 0x20 || c == 0x7f) {
			*bad = c;
			return "a control byte";
		}
	}
	return NULL;
}

int
bc_pump_name_check(const char *what, const char *name, size_t len,
    int allow_root, char *why)
{
	const char *p, *c, *end = name + len, *pb;
	char e[ESC_LEN];
	size_t depth = 0, bad = 0;

	if (len == 0)
		return bc_seterr(why, BC_ERR_DENIED, "%s is empty", what);
	if (len > BC_MAX_PATH_LEN)
		return bc_seterr(why, BC_ERR_LIMIT, "%s of %zu bytes exceeds "
		    "the limit of %d", what, len, BC_MAX_PATH_LEN);
	esc(name, len, e);
	if (memchr(name, '\0', len) != NULL)
		return bc_seterr(why, BC_ERR_DENIED, "%s '%s' holds a NUL byte",
		    what, e);
	if (name[0] != '/')
		return bc_seterr(why, BC_ERR_DENIED, "%s '%s' is not absolute",
		    what, e);
	if (len == 1)
		return allow_root ? BC_OK : bc_seterr(why, BC_ERR_DENIED,
		    "%s '/' names the root", what);
	for (p = name + 1;; p = c + 1) {
		for (c = p; c < end && *c != '/'; c++)
			;
		if ((pb = comp_problem(p, (size_t)(c - p), &bad)) != NULL) {
			if (bad != 0)
				return bc_seterr(why, BC_ERR_DENIED,
				    "%s '%s' holds a control byte (0x%02zx)",
				    what, e, bad);
			if ((size_t)(c - p) > BC_MAX_PATH_COMPONENT)
				return bc_seterr(why, BC_ERR_LIMIT, "%s '%s' "
				    "has a component of %zu bytes (the limit "
				    "is %d)", what, e, (size_t)(c - p),
				    BC_MAX_PATH_COMPONENT);
			return bc_seterr(why, BC_ERR_DENIED, "%s '%s' has %s",
			    what, e, pb);
		}
		if (++depth > BC_MAX_PATH_DEPTH)
			return bc_seterr(why, BC_ERR_LIMIT, "%s '%s' has more "
			    "than %d components", what, e, BC_MAX_PATH_DEPTH);
		if (c == end)
			break;
	}
	return BC_OK;
}

int
bc_pump_is_sysdir_link(const char *name, const char *target)
{
	size_t slashes = 0, ups, i;
	const char *p;

	if (name[0] != '/' || name[1] == '\0')
		return 0;
	for (p = name; *p != '\0'; p++)
		if (*p == '/')
			slashes++;
	ups = SYSDIR_UPS + slashes;
	for (i = 0; i < ups; i++)
		if (strncmp(target + 3 * i, "../", 3) != 0)
			return 0;
	return strcmp(target + 3 * ups, name + 1) == 0;
}

/* Depth of the directory holding name (checked, not "/"). */
static size_t
dir_depth(const char *name)
{
	size_t d = 0;

	for (; *name != '\0'; name++)
		d += *name == '/';
	return d - 1;
}

int
bc_pump_link_check(const char *name, const char *target, size_t len,
    enum bc_pump_kind *kind, char *why)
{
	char e[ESC_LEN], t[ESC_LEN], *copy;
	const char *p, *c, *end = target + len, *pb;
	size_t ups = 0, bad = 0, i;
	int downs = 0, r = BC_OK;

	esc(name, strlen(name), e);
	if (len == 0)
		return bc_seterr(why, BC_ERR_DENIED, "LINK '%s' has an empty "
		    "target", e);
	if (len > BC_MAX_PATH_LEN)
		return bc_seterr(why, BC_ERR_LIMIT, "LINK '%s': target of %zu "
		    "bytes exceeds the limit of %d", e, len, BC_MAX_PATH_LEN);
	esc(target, len, t);
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)target[i];

		if (ch < 0x20 || ch == 0x7f)
			return bc_seterr(why, BC_ERR_DENIED, "LINK '%s': target "
			    "'%s' holds a control byte (0x%02x)", e, t, ch);
	}
	copy = xstrndup(target, len);
	*kind = BC_PUMP_LINK;
	if (bc_pump_is_sysdir_link(name, copy)) {
		*kind = BC_PUMP_SYSLINK;
		free(copy);
		return BC_OK;
	}
	free(copy);
	if (target[0] == '/' && len == 1)
		return BC_OK;
	for (p = target + (target[0] == '/');; p = c + 1) {
		for (c = p; c < end && *c != '/'; c++)
			;
		if (target[0] != '/' && !downs && c - p == 2 && p[0] == '.' &&
		    p[1] == '.') {
			ups++;
		} else if ((pb = comp_problem(p, (size_t)(c - p), &bad)) !=
		    NULL) {
			r = bc_seterr(why, BC_ERR_DENIED, "LINK '%s': %s target "
			    "'%s' has %s (a target is canonical: '../' first, "
			    "then names)", e, target[0] == '/' ? "absolute" :
			    "relative", t, pb);
			break;
		} else {
			downs = 1;
		}
		if (c == end)
			break;
	}
	if (r == BC_OK && ups > dir_depth(name))
		r = bc_seterr(why, BC_ERR_DENIED, "LINK '%s': relative target "
		    "'%s' climbs out of the job's tree", e, t);
	return r;
}

/* ---- the set of names ---------------------------------------------- */

static uint32_t
node_hash(uint32_t parent, const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < 4; i++) {
		h ^= (parent >> (8 * i)) & 0xff;
		h *= 16777619u;
	}
	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 16777619u;
	}
	return h;
}

void
bc_pump_names_init(struct bc_pump_names *s)
{
	memset(s, 0, sizeof(*s));
}

void
bc_pump_names_free(struct bc_pump_names *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].comp);
		free(s->v[i].target);
	}
	free(s->v);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

static uint32_t
names_find(const struct bc_pump_names *s, uint32_t parent, const char *p,
    size_t n)
{
	uint32_t h = node_hash(parent, p, n), k;
	size_t i;

	if (s->nslot == 0)
		return NONE;
	for (i = h & (s->nslot - 1);; i = (i + 1) & (s->nslot - 1)) {
		if ((k = s->slot[i]) == 0)
			return NONE;
		k--;
		if (s->v[k].hash == h && s->v[k].parent == parent &&
		    s->v[k].len == n && memcmp(s->v[k].comp, p, n) == 0)
			return k;
	}
}

static void
names_slot(struct bc_pump_names *s, uint32_t k)
{
	size_t i;

	for (i = s->v[k].hash & (s->nslot - 1); s->slot[i] != 0;
	    i = (i + 1) & (s->nslot - 1))
		;
	s->slot[i] = k + 1;
}

static void
names_grow(struct bc_pump_names *s)
{
	size_t k;

	if (s->n + 1 > s->cap) {
		s->cap = s->cap == 0 ? 64 : s->cap * 2;
		s->v = xrealloc(s->v, s->cap, sizeof(*s->v));
	}
	if (2 * (s->n + 1) > s->nslot) {
		free(s->slot);
		s->nslot = s->nslot == 0 ? 128 : s->nslot * 2;
		s->slot = xcalloc(s->nslot, sizeof(*s->slot));
		for (k = 1; k < s->n; k++)	/* the root is never looked up */
			names_slot(s, (uint32_t)k);
	}
}

/* A new node, or NONE past BC_MAX_PUMP_NODES. */
static uint32_t
names_insert(struct bc_pump_names *s, uint32_t parent, const char *p,
    size_t n, int kind)
{
	struct bc_pump_node *v;
	uint32_t k;

	if (s->n >= BC_MAX_PUMP_NODES)
		return NONE;
	names_grow(s);
	k = (uint32_t)s->n++;
	v = &s->v[k];
	memset(v, 0, sizeof(*v));
	v->comp = xstrndup(p, n);
	v->len = (uint32_t)n;
	v->parent = parent;
	v->hash = node_hash(parent, p, n);
	v->res = NONE;
	v->kind = (uint8_t)kind;
	if (parent != NONE)
		names_slot(s, k);
	return k;
}

/* The client path of node k, malloc'd. */
static char *
names_path(const struct bc_pump_names *s, uint32_t k)
{
	size_t n = 0, o;
	uint32_t i;
	char *out;

	for (i = k; i != 0 && i != NONE; i = s->v[i].parent)
		n += 1 + s->v[i].len;
	if (n == 0)
		return xstrdup("/");
	out = xmalloc(n + 1);
	out[n] = '\0';
	o = n;
	for (i = k; i != 0 && i != NONE; i = s->v[i].parent) {
		o -= s->v[i].len;
		memcpy(out + o, s->v[i].comp, s->v[i].len);
		out[--o] = '/';
	}
	return out;
}

/* The escaped client path of node k. */
static void
names_esc(const struct bc_pump_names *s, uint32_t k, char out[ESC_LEN])
{
	char *p = names_path(s, k);

	esc(p, strlen(p), out);
	free(p);
}

/* The last component of name (checked, not "/") in *lp, *ll; the node
 * of its directory, created as needed; NONE with why set on a clash. */
static uint32_t
names_parent(struct bc_pump_names *s, const char *name, size_t len,
    const char *e, const char **lp, size_t *ll, char *why)
{
	const char *p = name + 1, *c, *end = name + len;
	uint32_t cur = 0, ch;
	char pe[ESC_LEN];

	for (;; p = c + 1) {
		for (c = p; c < end && *c != '/'; c++)
			;
		if (c == end)
			break;
		ch = names_find(s, cur, p, (size_t)(c - p));
		if (ch == NONE) {
			ch = names_insert(s, cur, p, (size_t)(c - p),
			    BC_PUMP_DIR_IMPLIED);
			if (ch == NONE) {
				bc_seterr(why, BC_ERR_LIMIT, "'%s': the tree "
				    "has more than %d names and directories",
				    e, BC_MAX_PUMP_NODES);
				return NONE;
			}
		} else if (s->v[ch].kind == BC_PUMP_FILE) {
			names_esc(s, ch, pe);
			bc_seterr(why, BC_ERR_DENIED, "'%s' is below '%s', a "
			    "file", e, pe);
			return NONE;
		} else if (s->v[ch].kind == BC_PUMP_LINK ||
		    s->v[ch].kind == BC_PUMP_SYSLINK) {
			names_esc(s, ch, pe);
			bc_seterr(why, BC_ERR_DENIED, "'%s' is below '%s', a "
			    "LINK (nothing is written through a link)", e, pe);
			return NONE;
		}
		cur = ch;
	}
	*lp = p;
	*ll = (size_t)(end - p);
	return cur;
}

int
bc_pump_names_add(struct bc_pump_names *s, const char *name, size_t len,
    enum bc_pump_kind kind, const char *target, size_t tlen,
    enum bc_pump_kind *kind_out, char *why)
{
	const char *what = kind == BC_PUMP_DIR_IMPLIED ? "CDIR" :
	    kind == BC_PUMP_DIR ? "DIRM" : "NAME", *lp;
	int isdir = kind == BC_PUMP_DIR || kind == BC_PUMP_DIR_IMPLIED, r;
	char e[ESC_LEN];
	uint32_t dir, k;
	size_t ll;

	if (kind_out != NULL)
		*kind_out = kind;
	if ((r = bc_pump_name_check(what, name, len, isdir, why)) != BC_OK)
		return r;
	if (kind == BC_PUMP_LINK && (r = bc_pump_link_check(name, target,
	    tlen, &kind, why)) != BC_OK)
		return r;
	if (kind_out != NULL)
		*kind_out = kind;
	if (s->n == 0)
		(void)names_insert(s, NONE, "", 0, BC_PUMP_DIR);
	if (len == 1)
		return BC_OK;	/* "/": the root is a directory */
	esc(name, len, e);
	if ((dir = names_parent(s, name, len, e, &lp, &ll, why)) == NONE)
		return BC_ERR_DENIED;
	k = names_find(s, dir, lp, ll);
	if (k == NONE) {
		if ((k = names_insert(s, dir, lp, ll, kind)) == NONE)
			return bc_seterr(why, BC_ERR_LIMIT, "'%s': the tree has "
			    "more than %d names and directories", e,
			    BC_MAX_PUMP_NODES);
		if (kind == BC_PUMP_LINK || kind == BC_PUMP_SYSLINK)
			s->v[k].target = xstrndup(target, tlen);
		return BC_OK;
	}
	if (isdir && s->v[k].kind == BC_PUMP_DIR_IMPLIED) {
		s->v[k].kind = (uint8_t)kind;
		return BC_OK;
	}
	if (kind == BC_PUMP_DIR_IMPLIED && s->v[k].kind == BC_PUMP_DIR)
		return BC_OK;
	if (s->v[k].kind == BC_PUMP_DIR_IMPLIED)
		return bc_seterr(why, BC_ERR_DENIED, "%s '%s' is a %s and a "
		    "directory (of an earlier entry)", what, e,
		    kind_name(kind));
	if (kind == BC_PUMP_DIR_IMPLIED)
		return bc_seterr(why, BC_ERR_DENIED, "CDIR '%s' is a %s in "
		    "the tree, not a directory", e, kind_name(s->v[k].kind));
	if (s->v[k].kind != kind && !(s->v[k].kind == BC_PUMP_LINK &&
	    kind == BC_PUMP_SYSLINK) && !(s->v[k].kind == BC_PUMP_SYSLINK &&
	    kind == BC_PUMP_LINK))
		return bc_seterr(why, BC_ERR_DENIED, "%s '%s' is named twice, "
		    "as a %s and as a %s", what, e, kind_name(s->v[k].kind),
		    kind_name(kind));
	return bc_seterr(why, BC_ERR_DENIED, "%s '%s' is named twice "
	    "(duplicate %s)", what, e, kind_name(kind));
}

/* ---- links through the tree ---------------------------------------- */

static int resolve_link(struct bc_pump_names *s, uint32_t k, int hops,
    char *why);

/*
 * Walk target (canonical, checked) from directory node cur: *out is the
 * node reached, or NONE where the path leaves the names (not in the
 * tree: nothing there, or a component below a file).  Refused when the
 * walk enters a system-directory link.  link is the link walked for.
 */
static int
walk_target(struct bc_pump_names *s, uint32_t link, uint32_t cur,
    const char *target, int hops, uint32_t *out, char *why)
{
	const char *p = target, *c;
	char le[ESC_LEN], ce[ESC_LEN];
	uint32_t ch;
	int r;

	*out = NONE;
	if (*p == '/') {
		cur = 0;
		p++;
	}
	for (; *p != '\0'; p = *c == '/' ? c + 1 : c) {
		for (c = p; *c != '\0' && *c != '/'; c++)
			;
		if (c - p == 2 && p[0] == '.' && p[1] == '.') {
			cur = s->v[cur].parent;
			if (cur == NONE) {
				names_esc(s, link, le);
				return bc_seterr(why, BC_ERR_DENIED, "LINK '%s' "
				    "climbs out of the job's tree", le);
			}
			continue;
		}
		if ((ch = names_find(s, cur, p, (size_t)(c - p))) == NONE)
			return BC_OK;
		switch (s->v[ch].kind) {
		case BC_PUMP_SYSLINK:
			names_esc(s, link, le);
			names_esc(s, ch, ce);
			return bc_seterr(why, BC_ERR_DENIED, "LINK '%s' leads "
			    "into '%s', a system-directory link (out of the "
			    "job's tree)", le, ce);
		case BC_PUMP_LINK:
			if ((r = resolve_link(s, ch, hops + 1, why)) != BC_OK)
				return r;
			if ((ch = s->v[ch].res) == NONE)
				return BC_OK;
			break;
		case BC_PUMP_FILE:
			if (*c != '\0')
				return BC_OK;	/* not a directory */
			break;
		default:
			break;
		}
		cur = ch;
	}
	*out = cur;
	return BC_OK;
}

static int
resolve_link(struct bc_pump_names *s, uint32_t k, int hops, char *why)
{
	struct bc_pump_node *v = &s->v[k];
	char le[ESC_LEN];
	uint32_t res;
	int r;

	if (v->state == 2)
		return BC_OK;
	if (v->state == 1 || hops > BC_MAX_LINK_HOPS) {
		names_esc(s, k, le);
		return bc_seterr(why, BC_ERR_DENIED, "LINK '%s' %s", le,
		    v->state == 1 ? "is part of a loop of links" :
		    "is reached through too many links");
	}
	v->state = 1;
	r = walk_target(s, k, v->parent, v->target, hops, &res, why);
	v = &s->v[k];
	v->state = 2;
	v->res = res;
	return r;
}

int
bc_pump_names_resolve(struct bc_pump_names *s, char *why)
{
	size_t k;
	int r;

	for (k = 1; k < s->n; k++)
		if (s->v[k].kind == BC_PUMP_LINK &&
		    (r = resolve_link(s, (uint32_t)k, 0, why)) != BC_OK)
			return r;
	return BC_OK;
}
