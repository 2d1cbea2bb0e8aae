/*
 * json.h - JSON text for what boltcc and boltccd print: a string from any
 * bytes, and whether a value read from a peer is a JSON number.
 *
 * Strings (RFC 8259 section 7): '"' and '\\' are escaped, and so are the
 * control characters U+0000-U+001F and U+007F (\n, \r and \t by name,
 * the others as \u00XX).  Valid UTF-8 passes through unchanged.  A byte
 * that does not start or continue a valid UTF-8 sequence (a stray
 * continuation byte, a truncated sequence, an overlong form, a
 * surrogate, a code point past U+10FFFF, 0xF5-0xFF) becomes U+FFFD
 * (written \ufffd), one per byte, as a UTF-8 decoder shows it: the text
 * is always valid JSON and valid UTF-8, and a file name that is not
 * UTF-8 stays recognisable.
 */
#ifndef BC_JSON_H
#define BC_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "common/buf.h"

/* Called with each piece of the escaped text, in order. */
typedef void bc_json_sink(void *ctx, const char *p, size_t n);

/* s (n bytes, NULs included) as a JSON string, quotes included. */
void bc_json_escape(const char *s, size_t n, bc_json_sink *put, void *ctx);
/* The same, appended to out: BC_OK, or BC_ERR_LIMIT when out is full. */
int bc_json_put_str(struct bc_buf *out, const char *s);
/* The same, written to f. */
void bc_json_fput_str(FILE *f, const char *s);
/* 1 if s is exactly a JSON number (RFC 8259 section 6: -?int frac? exp?,
 * no leading zeros, no '+', no spaces, no NaN or Infinity). */
int bc_json_is_number(const char *s);

#endif
