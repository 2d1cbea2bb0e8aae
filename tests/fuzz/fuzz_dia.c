/*
 * fuzz_dia.c - libFuzzer target for the .dia blob rewriter (common/dia.c).
 * The input is a clang serialized diagnostics file.  Rewritten with every
 * blob kept it must come back byte for byte, or fail with BC_ERR_CORRUPT
 * or BC_ERR_LIMIT leaving the output empty; rewritten with a byte added
 * to every blob it must succeed only if the identity did, and what it
 * writes must itself rewrite as itself.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/dia.h"
#include "common/err.h"
#include "common/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
keep(void *ctx, const void *blob, size_t n, struct bc_buf *out, char *err)
{
	return bc_buf_put(out, blob, n);
}

static int
grow(void *ctx, const void *blob, size_t n, struct bc_buf *out, char *err)
{
	int r;

	if ((r = bc_buf_put(out, blob, n)) != BC_OK)
		return r;
	return bc_buf_put_u8(out, '+');
}

/* A rewrite either worked or failed cleanly with nothing appended. */
static int
rewrite(const uint8_t *p, size_t n, bc_dia_blob_fn fn, struct bc_buf *out)
{
	char err[BC_ERRLEN];
	int r;

	err[0] = '\0';
	r = bc_dia_rewrite(p, n, fn, NULL, out, err);
	if (r != BC_OK && ((r != BC_ERR_CORRUPT && r != BC_ERR_LIMIT) ||
	    err[0] == '\0' || bc_buf_len(out) != 0))
		abort();
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_buf out, grown, again;
	int ok;

	if (size > ((size_t)1 << 20))
		return 0;
	bc_buf_init(&out, BC_MAX_DIA);
	bc_buf_init(&grown, BC_MAX_DIA);
	bc_buf_init(&again, BC_MAX_DIA);
	ok = rewrite(data, size, keep, &out) == BC_OK;
	if (ok && (bc_buf_len(&out) != size ||
	    memcmp(bc_buf_data(&out), data, size) != 0))
		abort();
	if (rewrite(data, size, grow, &grown) == BC_OK) {
		if (!ok || rewrite(bc_buf_data(&grown), bc_buf_len(&grown),
		    keep, &again) != BC_OK ||
		    bc_buf_len(&again) != bc_buf_len(&grown) ||
		    memcmp(bc_buf_data(&again), bc_buf_data(&grown),
		    bc_buf_len(&grown)) != 0)
			abort();
	}
	bc_buf_free(&out);
	bc_buf_free(&grown);
	bc_buf_free(&again);
	return 0;
}
