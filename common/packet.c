/*
 * packet.c - single packets, read for the protocol-3 code and written
 * for every protocol: see packet.h.
 */
#include "config.h"

#include <stdint.h>

#include "common/codec.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/packet.h"
#include "common/wire.h"

int
bc_packet_put_int(struct bc_buf *out, const char *tok, uint32_t v, char *err)
{
	int r;

	if ((r = bc_wire_put_int(out, tok, v)) != BC_OK)
		return bc_seterr(err, r, "cannot encode %s", tok);
	return BC_OK;
}

int
bc_packet_put_str(struct bc_buf *out, const char *tok, const void *p,
    size_t n, char *err)
{
	int r;

	if (n > UINT32_MAX)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "%s body of %zu bytes is too large for the wire", tok, n);
	if ((r = bc_wire_put_str(out, tok, p, n)) != BC_OK)
		return bc_seterr(err, r, "cannot encode %zu-byte %s", n, tok);
	return BC_OK;
}

int
bc_packet_put_bulk(struct bc_buf *out, const char *tok, enum bc_comp comp,
    int level, const void *p, size_t n, char *err)
{
	struct bc_buf z;
	char sub[BC_ERRLEN];
	int r;

	if (n == 0)
		return bc_packet_put_int(out, tok, 0, err);
	if (comp == BC_COMP_NONE)
		return bc_packet_put_str(out, tok, p, n, err);
	bc_buf_init(&z, BC_MAX_WIRE_BODY);
	sub[0] = '\0';
	if (comp == BC_COMP_LZO)
		r = bc_lzo_compress(p, n, &z, sub);
	else
		r = bc_zstd_compress(p, n, level, &z, sub);
	if (r != BC_OK)
		r = bc_seterr(err, r, "compressing %s: %s", tok, sub);
	else
		r = bc_packet_put_str(out, tok, bc_buf_data(&z), bc_buf_len(&z),
		    err);
	bc_buf_free(&z);
	return r;
}

int
bc_packet_rd_hdr(struct bc_io *io, struct bc_buf *in, const char *expect,
    char tok[5], uint32_t *val, char *err)
{
	if (io != NULL)
		return bc_io_read_hdr(io, expect, tok, val, err);
	if (bc_buf_avail(in) < BC_HDR_LEN)
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "input ends before a %s header", expect ? expect : "packet");
	return bc_wire_get_hdr(in, expect, tok, val, err);
}

int
bc_packet_rd_body(struct bc_io *io, struct bc_buf *in, const char *tok,
    uint32_t len, size_t max, struct bc_buf *out, char *err)
{
	const uint8_t *p;

	bc_buf_reset(out);
	if ((size_t)len > max)
		return bc_seterr(err, BC_ERR_LIMIT,
		    "%s of %lu bytes exceeds the limit of %zu", tok,
		    (unsigned long)len, max);
	if (len == 0)
		return BC_OK;
	if (io != NULL) {
		int r = bc_io_read_body(io, len, max, out, err);

		return r == BC_ERR_EOF ? bc_seterr(err, BC_ERR_TRUNCATED,
		    "peer closed inside %s", tok) : r;
	}
	if (bc_buf_peek(in, len, &p) != BC_OK)
		return bc_seterr(err, BC_ERR_TRUNCATED,
		    "input ends inside the %s body", tok);
	(void)bc_buf_skip(in, len);
	if (bc_buf_put(out, p, len) != BC_OK)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	return BC_OK;
}
