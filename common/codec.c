/*
 * codec.c - LZO1X-1 bodies as distcc sends them and zstd bodies for the
 * BOLT extension, both with a hard limit on the expanded size.
 *
 * LZO carries no size, so its output grows geometrically up to max_out
 * and fails with BC_ERR_LIMIT past it.  zstd frames must declare their
 * content size, which is checked before any allocation; the frame is then
 * decoded into exactly that capacity (no grow-and-retry).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <lzo/lzo1x.h>
#include <zstd.h>

#include "codec.h"
#include "err.h"
#include "limits.h"

/* Default level for bc_codec_compress(): fast, still far better than LZO. */
#define BC_ZSTD_LEVEL 3

static int lzo_ready;

static int
lzo_setup(char *err)
{
	if (!lzo_ready) {
		if (lzo_init() != LZO_E_OK)
			return bc_seterr(err, BC_ERR_INTERNAL,
			    "lzo_init failed (library/header mismatch)");
		lzo_ready = 1;
	}
	return BC_OK;
}

int
bc_lzo_compress(const void *in, size_t n, struct bc_buf *out, char *err)
{
	lzo_uint outlen;
	size_t bound;
	uint8_t *w;
	void *wrk;
	int r;

	if (n == 0)
		return BC_OK;	/* empty payload = empty body */
	if ((r = lzo_setup(err)) != BC_OK)
		return r;
	if (n > BC_BUF_CEILING)
		return bc_seterr(err, BC_ERR_LIMIT, "LZO input of %zu bytes "
		    "too large", n);
	/* Worst-case expansion of LZO1X for incompressible input. */
	bound = n + n / 16 + 64 + 3;
	if ((r = bc_buf_reserve(out, bound, &w)) != BC_OK)
		return bc_seterr(err, r, "cannot store LZO output: %s",
		    bc_strerror(r));
	if ((wrk = malloc(LZO1X_1_MEM_COMPRESS)) == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	outlen = (lzo_uint)bound;
	r = lzo1x_1_compress(in, (lzo_uint)n, w, &outlen, wrk);
	free(wrk);
	if (r != LZO_E_OK || outlen > bound)
		return bc_seterr(err, BC_ERR_INTERNAL,
		    "lzo1x_1_compress failed (%d)", r);
	(void)bc_buf_commit(out, (size_t)outlen);
	return BC_OK;
}

int
bc_lzo_decompress(const void *in, size_t n, size_t max_out,
    struct bc_buf *out, char *err)
{
	size_t room, limit, try;
	lzo_uint outlen;
	uint8_t *w;
	int r;

	if (n == 0)
		return BC_OK;	/* never run the decompressor on 0 bytes */
	if ((r = lzo_setup(err)) != BC_OK)
		return r;
	room = bc_buf_room(out);
	limit = max_out < room ? max_out : room;
	/* First guess: typical source text compresses about 3-4x. */
	try = n < SIZE_MAX / 4 ? n * 4 : SIZE_MAX;
	if (try < 4096)
		try = 4096;
	if (try > limit)
		try = limit;
	for (;;) {
		if (try > 0) {
			if ((r = bc_buf_reserve(out, try, &w)) != BC_OK)
				return bc_seterr(err, r, "cannot store LZO "
				    "output: %s", bc_strerror(r));
		} else
			w = NULL;
		outlen = (lzo_uint)try;
		r = lzo1x_decompress_safe(in, (lzo_uint)n, w, &outlen, NULL);
		if (r == LZO_E_OK) {
			if (outlen > try)
				return bc_seterr(err, BC_ERR_INTERNAL,
				    "LZO output overran its buffer");
			(void)bc_buf_commit(out, (size_t)outlen);
			return BC_OK;
		}
		if (r != LZO_E_OUTPUT_OVERRUN)
			break;
		if (try >= limit)
			return bc_seterr(err, BC_ERR_LIMIT, "LZO body of %zu "
			    "bytes expands beyond the limit of %zu bytes", n,
			    limit);
		try = try <= limit / 2 ? try * 2 : limit;
	}
	if (r == LZO_E_INPUT_OVERRUN)
		return bc_seterr(err, BC_ERR_CORRUPT, "LZO body of %zu bytes "
		    "is truncated", n);
	if (r == LZO_E_INPUT_NOT_CONSUMED)
		return bc_seterr(err, BC_ERR_CORRUPT, "LZO body of %zu bytes "
		    "has trailing garbage", n);
	return bc_seterr(err, BC_ERR_CORRUPT, "LZO body of %zu bytes is "
	    "corrupt (lzo error %d)", n, r);
}

int
bc_zstd_compress(const void *in, size_t n, int level, struct bc_buf *out,
    char *err)
{
	ZSTD_CCtx *cctx;
	size_t bound, z;
	uint8_t *w;
	int r;

	if (n == 0)
		return BC_OK;	/* empty payload = empty body */
	bound = ZSTD_compressBound(n);
	if (ZSTD_isError(bound) || bound == 0)
		return bc_seterr(err, BC_ERR_LIMIT, "zstd input of %zu bytes "
		    "too large", n);
	if ((r = bc_buf_reserve(out, bound, &w)) != BC_OK)
		return bc_seterr(err, r, "cannot store zstd output: %s",
		    bc_strerror(r));
	if ((cctx = ZSTD_createCCtx()) == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	/*
	 * The one-shot API writes the content size into the frame header;
	 * the checksum lets the receiver reject a corrupted frame instead
	 * of producing wrong object code.
	 */
	z = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(z))
		z = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	if (!ZSTD_isError(z))
		z = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(z))
		z = ZSTD_compress2(cctx, w, bound, in, n);
	ZSTD_freeCCtx(cctx);
	if (ZSTD_isError(z))
		return bc_seterr(err, BC_ERR_INTERNAL, "zstd compression "
		    "failed: %s", ZSTD_getErrorName(z));
	(void)bc_buf_commit(out, z);
	return BC_OK;
}

int
bc_zstd_decompress(const void *in, size_t n, size_t max_out,
    struct bc_buf *out, char *err)
{
	unsigned long long declared;
	size_t csize, z, size;
	uint8_t *w, dummy;
	int r;

	if (n == 0)
		return BC_OK;
	declared = ZSTD_getFrameContentSize(in, n);
	if (declared == ZSTD_CONTENTSIZE_ERROR)
		return bc_seterr(err, BC_ERR_CORRUPT, "zstd body of %zu bytes "
		    "is not a valid frame", n);
	if (declared == ZSTD_CONTENTSIZE_UNKNOWN)
		return bc_seterr(err, BC_ERR_CORRUPT, "zstd frame does not "
		    "declare its content size");
	if (declared > max_out)
		return bc_seterr(err, BC_ERR_LIMIT, "zstd frame declares %llu "
		    "bytes, limit is %zu", declared, max_out);
	size = (size_t)declared;
	csize = ZSTD_findFrameCompressedSize(in, n);
	if (ZSTD_isError(csize))
		return bc_seterr(err, BC_ERR_CORRUPT, "zstd body of %zu bytes "
		    "is corrupt: %s", n, ZSTD_getErrorName(csize));
	if (csize != n)
		return bc_seterr(err, BC_ERR_CORRUPT, "zstd body holds %zu "
		    "bytes after its frame", n - csize);
	if (size > 0) {
		if ((r = bc_buf_reserve(out, size, &w)) != BC_OK)
			return bc_seterr(err, r, "cannot store zstd output of "
			    "%zu bytes: %s", size, bc_strerror(r));
	} else
		w = &dummy;
	z = ZSTD_decompress(w, size, in, n);
	if (ZSTD_isError(z))
		return bc_seterr(err, BC_ERR_CORRUPT, "zstd body is corrupt: "
		    "%s", ZSTD_getErrorName(z));
	if (z != size)
		return bc_seterr(err, BC_ERR_CORRUPT, "zstd frame expanded to "
		    "%zu bytes, declared %zu", z, size);
	if (size > 0)
		(void)bc_buf_commit(out, size);
	return BC_OK;
}

int
bc_codec_compress(enum bc_comp kind, const void *in, size_t n,
    struct bc_buf *out, char *err)
{
	int r;

	switch (kind) {
	case BC_COMP_NONE:
		if ((r = bc_buf_put(out, in, n)) != BC_OK)
			return bc_seterr(err, r, "cannot store body: %s",
			    bc_strerror(r));
		return BC_OK;
	case BC_COMP_LZO:
		return bc_lzo_compress(in, n, out, err);
	case BC_COMP_ZSTD:
		return bc_zstd_compress(in, n, BC_ZSTD_LEVEL, out, err);
	}
	return bc_seterr(err, BC_ERR_INVAL, "unknown compression %d",
	    (int)kind);
}

int
bc_codec_decompress(enum bc_comp kind, const void *in, size_t n,
    size_t max_out, struct bc_buf *out, char *err)
{
	int r;

	switch (kind) {
	case BC_COMP_NONE:
		if (n > max_out)
			return bc_seterr(err, BC_ERR_LIMIT, "body of %zu bytes "
			    "exceeds limit %zu", n, max_out);
		if ((r = bc_buf_put(out, in, n)) != BC_OK)
			return bc_seterr(err, r, "cannot store body: %s",
			    bc_strerror(r));
		return BC_OK;
	case BC_COMP_LZO:
		return bc_lzo_decompress(in, n, max_out, out, err);
	case BC_COMP_ZSTD:
		return bc_zstd_decompress(in, n, max_out, out, err);
	}
	return bc_seterr(err, BC_ERR_INVAL, "unknown compression %d",
	    (int)kind);
}
