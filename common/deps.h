/*
 * deps.h - parse a make-style dependency file (.d) and write it back
 * wrapped exactly as gcc or clang would have.
 *
 * In pump mode the compiler runs under a private root, so the column
 * wrapping of its .d was decided while the paths still carried the root
 * prefix.  After the prefix is stripped the list is re-wrapped here, so the
 * bytes match a local compile's .d.
 *
 * Words are kept in their escaped (make) form, as the compiler wrote them.
 * The input is peer data (the daemon's compiler or a stock distccd reply):
 * parsing is bounded by BC_MAX_DOTD bytes and BC_MAX_DEPS_WORDS words.
 * Only the shape compilers produce is accepted: one rule "targets: deps",
 * optionally followed by -MP phony rules "dep:" for every dependency but
 * the first; anything else is BC_ERR_INVAL (the caller keeps the bytes).
 */
#ifndef BC_DEPS_H
#define BC_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "limits.h"	/* BC_MAX_DOTD, BC_MAX_DEPS_WORDS */

enum bc_deps_style {
	BC_DEPS_GCC = 1,	/* libcpp mkdeps: 72 columns, escaped widths */
	BC_DEPS_CLANG = 2	/* clang DependencyFile: 75 columns */
};

struct bc_deps_word {
	size_t off, len;	/* into text, escaped form */
};

struct bc_deps {
	struct bc_buf text;		/* the words' bytes */
	struct bc_deps_word *targets;
	size_t ntargets;
	struct bc_deps_word *deps;
	size_t ndeps;
	size_t cap;			/* of targets and deps each */
	int phony;			/* -MP rules were present */
	int phony_blank;		/* they were separated by blank lines */
};

void bc_deps_init(struct bc_deps *d);
void bc_deps_free(struct bc_deps *d);

/* Parse n bytes of a .d; BC_OK, BC_ERR_INVAL (not a compiler's shape),
 * BC_ERR_LIMIT or BC_ERR_ALLOC.  d is reset first. */
int bc_deps_parse(struct bc_deps *d, const uint8_t *p, size_t n, char *err);

/* Append d to out in the given style; BC_OK or a bc_buf error. */
int bc_deps_write(const struct bc_deps *d, int style, struct bc_buf *out,
    char *err);

/*
 * The style that reproduces the n bytes at p exactly (gcc tried first), or
 * 0 if neither does (or they do not parse).
 */
int bc_deps_detect(const uint8_t *p, size_t n);

/*
 * Re-wrap the .d in *dotd in the given style, in place.  On any error
 * *dotd is left unchanged and the error returned.
 */
int bc_deps_rewrap(struct bc_buf *dotd, int style, char *err);

/* Style for a compiler as named or found (path or bare name): clang when
 * its name (or, for cc/c++, the name it resolves to; a bare name is
 * looked up on path, a PATH value, NULL: not looked up) contains
 * "clang", else gcc. */
int bc_deps_style_for(const char *compiler, const char *path);

#endif
