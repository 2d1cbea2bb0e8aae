/*
 * fuzz_wire.c - libFuzzer target for the distcc token decoder: reads
 * headers and string bodies from the input, viewed as a bc_buf, until an
 * error or the end.  The first byte picks the body limit so both the
 * LIMIT and the TRUNCATED paths are reached.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_buf b, v;
	char tok[5], err[BC_ERRLEN], esc[256];
	const uint8_t *p;
	uint32_t val;
	size_t max;
	volatile uint8_t sink = 0;

	if (size < 1)
		return 0;
	max = (size_t)data[0] * 16;
	bc_buf_view(&b, data + 1, size - 1);
	while (bc_buf_avail(&b) > 0) {
		/* Alternate between a bare header and a string packet using
		 * the token found in the stream itself. */
		if (bc_buf_peek(&b, BC_HDR_LEN, &p) != BC_OK) {
			(void)bc_wire_get_hdr(&b, NULL, tok, &val, err);
			break;
		}
		memcpy(tok, p, BC_TOKEN_LEN);
		tok[BC_TOKEN_LEN] = '\0';
		if (strlen(tok) == BC_TOKEN_LEN && (p[0] & 1)) {
			if (bc_wire_get_str(&b, tok, max, &v, err) != BC_OK)
				break;
			bc_wire_escape(bc_buf_ptr(&v), bc_buf_avail(&v), esc,
			    sizeof(esc));
			if (bc_buf_avail(&v) > 0)
				sink ^= bc_buf_ptr(&v)[bc_buf_avail(&v) - 1];
		} else if (bc_wire_get_hdr(&b, NULL, tok, &val, err) != BC_OK)
			break;
	}
	(void)sink;
	return 0;
}
