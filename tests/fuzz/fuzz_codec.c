/*
 * fuzz_codec.c - libFuzzer target for bounded decompression: the first
 * byte chooses LZO1X (even) or zstd (odd); the rest is the body,
 * decompressed with a 1 MiB output limit.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/buf.h"
#include "common/codec.h"
#include "common/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t max_out = (size_t)1 << 20;
	struct bc_buf out;
	char err[BC_ERRLEN];
	enum bc_comp kind;
	int r;

	if (size < 1)
		return 0;
	kind = (data[0] & 1) ? BC_COMP_ZSTD : BC_COMP_LZO;
	bc_buf_init(&out, max_out);
	r = bc_codec_decompress(kind, data + 1, size - 1, max_out, &out, err);
	if (r != BC_OK && r != BC_ERR_CORRUPT && r != BC_ERR_LIMIT)
		abort();
	if (bc_buf_len(&out) > max_out || (r != BC_OK && bc_buf_len(&out)))
		abort();
	bc_buf_free(&out);
	return 0;
}
