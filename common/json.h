/*
 * json.h - JSON text for what boltcc and boltccd print: a string from any
 * bytes, whether a value read from a peer is a JSON number, a writer of
 * whole documents (commas handled); and a reader for the JSON that
 * boltccd's stats port serves (the monitor).
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
/* The length of the valid UTF-8 sequence at s (n > 0 bytes left): 1 for
 * ASCII, 0 if the byte at s starts no valid sequence. */
size_t bc_utf8_len(const unsigned char *s, size_t n);

/*
 * The writer: a JSON document appended to a bc_buf, commas and the
 * key/value colon written for the caller.  Errors are sticky: after the
 * first failure (the buffer full: BC_ERR_LIMIT; nesting past
 * BC_JSONW_DEPTH or a value where a key belongs: BC_ERR_INVAL) every
 * call does nothing, and bc_jsonw_end returns it, so a writer calls
 * bc_jsonw_* in a row and checks once.  Keys are written in the order of
 * the calls.  Nothing is buffered: what a caller appends to the bc_buf
 * itself between calls lands in place (the writer still thinks the
 * container holds what it wrote).
 *
 *	struct bc_jsonw w;
 *
 *	bc_jsonw_init(&w, out);
 *	bc_jsonw_obj(&w);
 *	bc_jsonw_key(&w, "jobs");
 *	bc_jsonw_int(&w, 4);
 *	bc_jsonw_obj_end(&w);
 *	return bc_jsonw_end(&w);		-> {"jobs":4}
 */
#define BC_JSONW_DEPTH 16

struct bc_jsonw {
	struct bc_buf *out;
	int r;			/* BC_OK or the first error */
	int depth;		/* containers open */
	int key;		/* a key was written, its value is next */
	unsigned char some[BC_JSONW_DEPTH];	/* per level: has a member */
	unsigned char obj[BC_JSONW_DEPTH];	/* per level: an object */
};

void bc_jsonw_init(struct bc_jsonw *w, struct bc_buf *out);
void bc_jsonw_obj(struct bc_jsonw *w);
void bc_jsonw_obj_end(struct bc_jsonw *w);
void bc_jsonw_arr(struct bc_jsonw *w);
void bc_jsonw_arr_end(struct bc_jsonw *w);
/* A member's name (escaped as bc_json_put_str does). */
void bc_jsonw_key(struct bc_jsonw *w, const char *key);
/* Values: a string from any bytes (NUL-terminated), integers, a number
 * with a fixed count of decimals ("%.*f"), true/false, null. */
void bc_jsonw_str(struct bc_jsonw *w, const char *s);
void bc_jsonw_int(struct bc_jsonw *w, long long v);
void bc_jsonw_uint(struct bc_jsonw *w, unsigned long long v);
void bc_jsonw_fixed(struct bc_jsonw *w, double v, int decimals);
/* A number as written, when s is exactly one (bc_json_is_number);
 * BC_ERR_INVAL otherwise (a caller with any text checks first). */
void bc_jsonw_number(struct bc_jsonw *w, const char *s);
void bc_jsonw_bool(struct bc_jsonw *w, int v);
void bc_jsonw_null(struct bc_jsonw *w);
/* BC_OK, or the first error (BC_ERR_INVAL also when a container or a
 * key is still open). */
int bc_jsonw_end(const struct bc_jsonw *w);

/*
 * The reader: the document is parsed into a flat array of nodes (node 0
 * is the root); each container links to its first child and each child
 * to its next sibling by index.  Strings are decoded to UTF-8 (a \u0000
 * is refused: names stay C strings).  Input is a peer's: every count and
 * length is bounded (BC_MAX_JSON_* in limits.h) and any syntax error
 * fails the whole document with a message naming the byte offset.
 */
enum bc_json_type {
	BC_JSON_NULL = 0,
	BC_JSON_FALSE,
	BC_JSON_TRUE,
	BC_JSON_NUMBER,
	BC_JSON_STRING,
	BC_JSON_ARRAY,
	BC_JSON_OBJECT,
};

#define BC_JSON_NONE ((size_t)-1)

struct bc_json_node {
	int type;		/* enum bc_json_type */
	char *key;		/* the member's name in an object, else NULL */
	char *str;		/* STRING */
	double num;		/* NUMBER */
	size_t first;		/* ARRAY, OBJECT: first child, or NONE */
	size_t next;		/* next sibling, or NONE */
	size_t count;		/* ARRAY, OBJECT: children */
};

struct bc_json {
	struct bc_json_node *v;
	size_t n, cap;
};

/* Parse the n bytes at p into doc (bc_json_free it in every case). */
int bc_json_parse(struct bc_json *doc, const void *p, size_t n, char *err);
void bc_json_free(struct bc_json *doc);

/* The member key of object node i, or NONE (also when i is NONE or not
 * an object). */
size_t bc_json_get(const struct bc_json *doc, size_t i, const char *key);
/* Values of member key of object i, or dflt when absent or of another
 * type. */
double bc_json_num(const struct bc_json *doc, size_t i, const char *key,
    double dflt);
const char *bc_json_str(const struct bc_json *doc, size_t i,
    const char *key, const char *dflt);
/* The type of node i (BC_JSON_NULL for NONE). */
int bc_json_type(const struct bc_json *doc, size_t i);

#endif
