/*
 * json.h - a reader for the JSON that boltccd's stats port serves.
 *
 * The document is parsed from a bc_buf view into a flat array of nodes
 * (node 0 is the root); each container links to its first child and each
 * child to its next sibling by index.  Strings are decoded to UTF-8
 * (a \u0000 is refused: names stay C strings).  Input is a peer's: every
 * count and length is bounded (BC_MAX_JSON_* in limits.h) and any
 * syntax error fails the whole document with a message naming the byte
 * offset.
 */
#ifndef BC_JSON_H
#define BC_JSON_H

#include <stddef.h>

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
/* 1 if s is a number as JSON's grammar spells it. */
int bc_json_number_ok(const char *s);
/* The type of node i (BC_JSON_NULL for NONE). */
int bc_json_type(const struct bc_json *doc, size_t i);

/* The length of the valid UTF-8 sequence at p (n bytes left, n > 0),
 * 0 if there is none (overlong forms, surrogates, > U+10FFFF). */
size_t bc_utf8_seq(const unsigned char *p, size_t n);
/* Append s as a JSON string: valid UTF-8 as it is, control characters
 * as \u00XX, each byte of an invalid sequence as U+FFFD. */
struct bc_buf;
int bc_json_put_str(struct bc_buf *out, const char *s);

#endif
