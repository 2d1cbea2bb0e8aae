/*
 * codec.h - LZO1X-1 (as distcc sends it) and zstd, with hard output limits.
 *
 * LZO: one raw lzo1x_1 block, no header, no size; an empty payload is a
 * body of length 0 (never a 3-byte empty block) in both directions.  The
 * receiver does not know the expanded size: decompression grows its
 * output up to max_out and fails with BC_ERR_LIMIT beyond it.
 *
 * zstd: one frame that must declare its content size; the size is checked
 * against max_out before anything is allocated and the frame must expand
 * to exactly that size.  An empty payload is also a body of length 0.
 *
 * Output is appended to `out` (whose own max also applies).
 */
#ifndef BC_CODEC_H
#define BC_CODEC_H

#include <stddef.h>
#include "buf.h"

enum bc_comp { BC_COMP_NONE = 0, BC_COMP_LZO = 1, BC_COMP_ZSTD = 2 };

int bc_lzo_compress(const void *in, size_t n, struct bc_buf *out, char *err);
int bc_lzo_decompress(const void *in, size_t n, size_t max_out,
    struct bc_buf *out, char *err);
int bc_zstd_compress(const void *in, size_t n, int level, struct bc_buf *out,
    char *err);
int bc_zstd_decompress(const void *in, size_t n, size_t max_out,
    struct bc_buf *out, char *err);

/* Dispatch on kind; BC_COMP_NONE copies. */
int bc_codec_compress(enum bc_comp kind, const void *in, size_t n,
    struct bc_buf *out, char *err);
int bc_codec_decompress(enum bc_comp kind, const void *in, size_t n,
    size_t max_out, struct bc_buf *out, char *err);

#endif
