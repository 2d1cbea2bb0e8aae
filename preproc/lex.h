/*
 * lex.h - the directive lexer of the pump-mode include scanner.
 *
 * Finds every #include, #include_next, #import and __has_include /
 * __has_include_next in a source file, whatever the surrounding #if says
 * (the scanner over-approximates).  Comments, string and character
 * literals, C++ raw strings, pp-numbers with digit separators and
 * backslash-newline continuations are handled so that text inside them is
 * never taken for a directive.  "#include MACRO" is reported as computed
 * (with the macro's name); object-like #defines are reported too, so the
 * scanner can resolve such includes.
 * Never touches the file system; input is any bytes.
 */
#ifndef BC_PP_LEX_H
#define BC_PP_LEX_H

#include <stddef.h>
#include "common/limits.h"

enum bc_pp_kind {
	BC_PP_INCLUDE = 1,	/* #include */
	BC_PP_INCLUDE_NEXT,	/* #include_next */
	BC_PP_IMPORT,		/* #import (ObjC; also accepted by gcc) */
	BC_PP_HAS_INCLUDE,	/* __has_include(...) in #if/#elif */
	BC_PP_HAS_INCLUDE_NEXT,	/* __has_include_next(...) */
	BC_PP_DEFINE,		/* #define NAME (object-like; see below) */
};

struct bc_pp_dir {
	int kind;		/* enum bc_pp_kind */
	int angled;		/* <name> rather than "name" */
	int computed;		/* the operand is not a literal header name */
	unsigned line;		/* 1-based physical line of the '#' */
	char *name;		/* spelling between the delimiters; for a
				 * computed include the macro's name when the
				 * operand is one identifier, else NULL; for
				 * BC_PP_DEFINE "NAME header" (a header-name
				 * value, angled as an include) or "NAME"
				 * with computed set (any other value) */
};

struct bc_pp_dirs {
	struct bc_pp_dir *v;
	size_t n;
	size_t cap;
};


void bc_pp_dirs_init(struct bc_pp_dirs *d);
void bc_pp_dirs_free(struct bc_pp_dirs *d);

/*
 * Lex n bytes at p and append the include-like directives to out.
 * BC_OK, BC_ERR_ALLOC, or BC_ERR_LIMIT (too many directives).  Malformed
 * text is never an error (the compiler will say what is wrong).
 */
int bc_pp_lex(const char *p, size_t n, struct bc_pp_dirs *out, char *err);

#endif
