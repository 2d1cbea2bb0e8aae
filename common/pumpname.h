/*
 * pumpname.h - the names of a pump job's file tree, checked before
 * anything is written (distcc protocol 3 and BOLT pump alike;
 * doc/pump.md, "What the daemon refuses").
 *
 * A NAME is an absolute client path: '/', then components separated by
 * one '/', none empty, ".", "..", longer than BC_MAX_PATH_COMPONENT, or
 * holding a control byte (0x01-0x1f, 0x7f) or a NUL; at most
 * BC_MAX_PATH_LEN bytes and BC_MAX_PATH_DEPTH components.  The clients
 * send canonical paths (distcc's include server and boltcc's scanner
 * normalise them), so anything else is ambiguous or hostile: refused.
 *
 * A LINK target is one of
 *  - distcc's system-directory link for NAME /a/b: exactly
 *    "../" x (20 + slashes in NAME) + "a/b", the host's own /a/b;
 *  - absolute: taken under the job's root, canonical like a NAME (no
 *    ".", "..", empty component), "/" alone allowed;
 *  - relative: k "../" first (k at most the link's depth: it stays in the
 *    root), then canonical components without "." or "..", so the climb
 *    only crosses real directories of the tree.
 *
 * The set of names (struct bc_pump_names) refuses an entry named twice, an
 * entry below a FILE or a LINK, and a FILE or LINK where a directory is
 * (because an earlier entry is below it, or a DIRM named it).  Once every
 * entry is in, bc_pump_names_resolve follows each absolute and relative
 * LINK through the tree and refuses one that leads into a
 * system-directory link (out of the tree by another way), or a loop.
 */
#ifndef BC_PUMPNAME_H
#define BC_PUMPNAME_H

#include <stddef.h>
#include <stdint.h>

enum bc_pump_kind {
	BC_PUMP_DIR_IMPLIED = 0,	/* a directory, may already be there
					 * (a parent of an entry, CDIR) */
	BC_PUMP_DIR,			/* DIRM: a directory entry */
	BC_PUMP_FILE,
	BC_PUMP_LINK,			/* absolute or relative target */
	BC_PUMP_SYSLINK			/* distcc's system-directory link */
};

/* BC_OK, or BC_ERR_DENIED / BC_ERR_LIMIT with why saying what is wrong
 * with name (len bytes; NUL bytes inside are refused).  what names the
 * entry in the message ("NAME", "CDIR", ...).  allow_root: "/" is
 * accepted (CDIR, DIRM). */
int bc_pump_name_check(const char *what, const char *name, size_t len,
    int allow_root, char *why);

/* BC_OK with *kind BC_PUMP_SYSLINK or BC_PUMP_LINK, or an error with why,
 * for the link NAME name (checked already) -> target (len bytes). */
int bc_pump_link_check(const char *name, const char *target, size_t len,
    enum bc_pump_kind *kind, char *why);

/* 1 if target is distcc's system-directory link for name. */
int bc_pump_is_sysdir_link(const char *name, const char *target);

struct bc_pump_node;

struct bc_pump_names {
	struct bc_pump_node *v;	/* v[0] is the root */
	size_t n, cap;
	uint32_t *slot;		/* open addressing: node index + 1 */
	size_t nslot;
};

void bc_pump_names_init(struct bc_pump_names *s);
void bc_pump_names_free(struct bc_pump_names *s);

/*
 * Check one entry and add it: name (len bytes) of kind BC_PUMP_FILE,
 * BC_PUMP_LINK (target, tlen bytes; the kind becomes BC_PUMP_SYSLINK
 * for distcc's form), BC_PUMP_DIR (a DIRM; "/" is accepted) or
 * BC_PUMP_DIR_IMPLIED (CDIR: must be a directory, may already be one).
 * *kind_out (may be NULL) gets the kind recorded.  BC_OK, or an error
 * with why naming the problem and the (escaped) name.
 */
int bc_pump_names_add(struct bc_pump_names *s, const char *name, size_t len,
    enum bc_pump_kind kind, const char *target, size_t tlen,
    enum bc_pump_kind *kind_out, char *why);

/* Follow every absolute and relative LINK through the tree (after the
 * last entry): BC_OK, or BC_ERR_DENIED when one leads into a
 * system-directory link or links loop or nest deeper than
 * BC_MAX_LINK_HOPS. */
int bc_pump_names_resolve(struct bc_pump_names *s, char *why);

#endif
