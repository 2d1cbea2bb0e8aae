/*
 * dia.h - rewrite the strings of clang's serialized diagnostics (.dia,
 * clang --serialize-diagnostics FILE).
 *
 * A .dia is an LLVM bitstream: "DIAG", a BLOCKINFO block with the
 * abbreviations of the META and DIAG blocks, a META block, then one DIAG
 * block per diagnostic (its notes nested inside).  Every string of the
 * file - file names, diagnostic texts, flag and category names, fix-it
 * texts - is a blob, and the record operand just before each blob is its
 * length.
 *
 * bc_dia_rewrite() copies every element of the stream bit for bit and
 * hands each blob to a callback that appends its replacement; where the
 * blob's length changes, the scalar Fixed or VBR operand just before the
 * blob, when it equals the old length, becomes the new one (a VBR
 * written minimally, as LLVM writes it; a Fixed one that cannot hold the
 * new length fails with BC_ERR_LIMIT), and every enclosing block's length
 * word is recomputed.  The result is byte for byte what clang writes for
 * those strings; with a callback that keeps every blob it is the input.
 *
 * The input is checked as it is read: a truncated or inconsistent stream
 * (bad magic, undefined abbreviation, bad operand encoding, a block
 * length that does not match its content, nonzero padding, anything after
 * the last block, ...) fails with BC_ERR_CORRUPT; nesting, abbreviation
 * counts and the input size beyond their limits (common/limits.h,
 * BC_MAX_DIA*) with BC_ERR_LIMIT.  Memory is bounded: one fixed-size
 * context plus the caller's output and one blob's replacement.
 */
#ifndef BC_DIA_H
#define BC_DIA_H

#include <stddef.h>

struct bc_buf;

/*
 * Called for each blob, in file order, with its n bytes: append the
 * replacement to out (the same bytes to keep it; out starts empty and
 * holds at most BC_MAX_DIA bytes).  Return BC_OK or a negative BC_ERR_*
 * code with a message in err (BC_ERRLEN bytes), which fails the rewrite.
 */
typedef int (*bc_dia_blob_fn)(void *ctx, const void *blob, size_t n,
    struct bc_buf *out, char *err);

/*
 * Append to out the .dia of n bytes at in (at most BC_MAX_DIA) with every
 * blob replaced by what fn makes of it.  out is the caller's owned buffer,
 * usually bc_buf_init(&out, BC_MAX_DIA); growing past its max fails with
 * BC_ERR_LIMIT.  On failure out is as it was on entry and err says why.
 */
int bc_dia_rewrite(const void *in, size_t n, bc_dia_blob_fn fn, void *ctx,
    struct bc_buf *out, char *err);

#endif
