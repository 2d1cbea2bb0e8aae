/*
 * wire.c - encoding and decoding of distcc token headers
 * ("TOKN" + 8 hex digits) and string/bulk bodies in a bc_buf.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "wire.h"

static int
hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
bc_wire_put_int(struct bc_buf *b, const char *tok, uint32_t val)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t h[BC_HDR_LEN];
	int i;

	if (tok == NULL || strlen(tok) != BC_TOKEN_LEN)
		return BC_ERR_INVAL;
	memcpy(h, tok, BC_TOKEN_LEN);
	for (i = 0; i < 8; i++)
		h[BC_TOKEN_LEN + i] = (uint8_t)hex[(val >> (28 - 4 * i)) & 0xf];
	return bc_buf_put(b, h, sizeof(h));
}

int
bc_wire_put_str(struct bc_buf *b, const char *tok, const void *p, size_t n)
{
	size_t start = bc_buf_len(b);
	int r;

	if (n > UINT32_MAX)
		return BC_ERR_LIMIT;
	if ((r = bc_wire_put_int(b, tok, (uint32_t)n)) != BC_OK)
		return r;
	if ((r = bc_buf_put(b, p, n)) != BC_OK) {
		/* Roll back the header: all or nothing. */
		bc_buf_truncate(b, start);
		return r;
	}
	return BC_OK;
}

int
bc_wire_parse_hdr(const uint8_t hdr[BC_HDR_LEN], char tok_out[5],
    uint32_t *val, char *err)
{
	char esc[BC_HDR_LEN * 4 + 1];
	uint32_t v = 0;
	int i, h;

	for (i = 0; i < 8; i++) {
		if ((h = hexval(hdr[BC_TOKEN_LEN + i])) < 0) {
			bc_wire_escape(hdr, BC_HDR_LEN, esc, sizeof(esc));
			return bc_seterr(err, BC_ERR_PROTO,
			    "bad packet header \"%s\": value is not 8 hex "
			    "digits", esc);
		}
		v = v << 4 | (uint32_t)h;
	}
	if (tok_out != NULL) {
		memcpy(tok_out, hdr, BC_TOKEN_LEN);
		tok_out[BC_TOKEN_LEN] = '\0';
	}
	if (val != NULL)
		*val = v;
	return BC_OK;
}

int
bc_wire_get_hdr(struct bc_buf *b, const char *expect, char tok_out[5],
    uint32_t *val, char *err)
{
	char esc[BC_HDR_LEN * 4 + 1], tok[5];
	const uint8_t *p;
	uint32_t v;
	int r;

	if (bc_buf_peek(b, BC_HDR_LEN, &p) != BC_OK) {
		bc_wire_escape(bc_buf_ptr(b), bc_buf_avail(b), esc,
		    sizeof(esc));
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "truncated packet header%s%s (\"%s\", %zu bytes)",
		    expect != NULL ? " for " : "",
		    expect != NULL ? expect : "", esc, bc_buf_avail(b));
	}
	if (expect != NULL && (strlen(expect) != BC_TOKEN_LEN ||
	    memcmp(p, expect, BC_TOKEN_LEN) != 0)) {
		bc_wire_escape(p, BC_HDR_LEN, esc, sizeof(esc));
		return bc_seterr(err, BC_ERR_PROTO,
		    "expected token %s, got \"%s\"", expect, esc);
	}
	if ((r = bc_wire_parse_hdr(p, tok, &v, err)) != BC_OK)
		return r;
	(void)bc_buf_skip(b, BC_HDR_LEN);
	if (tok_out != NULL)
		memcpy(tok_out, tok, sizeof(tok));
	if (val != NULL)
		*val = v;
	return BC_OK;
}

int
bc_wire_get_str(struct bc_buf *b, const char *tok, size_t max,
    struct bc_buf *view, char *err)
{
	size_t mark = bc_buf_tell(b);
	uint32_t n;
	int r;

	bc_buf_view(view, NULL, 0);
	if ((r = bc_wire_get_hdr(b, tok, NULL, &n, err)) != BC_OK)
		return r;
	if (tok == NULL)
		tok = "packet";
	if (n > max) {
		bc_buf_rewind(b, mark);
		return bc_seterr(err, BC_ERR_LIMIT,
		    "%s body of %lu bytes exceeds limit %zu", tok,
		    (unsigned long)n, max);
	}
	if (bc_buf_get_view(b, n, view) != BC_OK) {
		bc_buf_rewind(b, mark);
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "%s body truncated: %lu bytes claimed, %zu available", tok,
		    (unsigned long)n, bc_buf_avail(b) - BC_HDR_LEN);
	}
	return BC_OK;
}

void
bc_wire_escape(const void *p, size_t n, char *out, size_t outlen)
{
	bc_log_escape(p, n, out, outlen);
}
