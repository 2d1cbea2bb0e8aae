/*
 * wire.h - distcc token framing (spec distcc-protocol.md section 2).
 *
 * A packet is a 4-letter token, 8 hex digits (a 32-bit value, lowercase on
 * output, either case on input) and, for string and bulk tokens, exactly
 * that many body bytes.  These functions encode into and decode from a
 * bc_buf; fd-level reading with deadlines is in io.h.
 */
#ifndef BC_WIRE_H
#define BC_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"

#define BC_TOKEN_LEN 4
#define BC_HDR_LEN 12

/* Append a 12-byte header "TOKNxxxxxxxx". */
int bc_wire_put_int(struct bc_buf *b, const char *tok, uint32_t val);
/* Append a header whose value is n, then the n body bytes. */
int bc_wire_put_str(struct bc_buf *b, const char *tok, const void *p, size_t n);

/*
 * Parse a 12-byte header from raw bytes: tok_out gets the 4 token bytes
 * plus NUL.  BC_ERR_PROTO if the hex part is not exactly 8 hex digits.
 */
int bc_wire_parse_hdr(const uint8_t hdr[BC_HDR_LEN], char tok_out[5],
    uint32_t *val, char *err);

/* Consume a header from b; if expect != NULL the token must equal it. */
int bc_wire_get_hdr(struct bc_buf *b, const char *expect, char tok_out[5],
    uint32_t *val, char *err);
/* Consume a header with token tok and a body of at most max bytes, as a view. */
int bc_wire_get_str(struct bc_buf *b, const char *tok, size_t max,
    struct bc_buf *view, char *err);

/* Escape up to n bytes of peer data for logging into out (outlen bytes). */
void bc_wire_escape(const void *p, size_t n, char *out, size_t outlen);

#endif
