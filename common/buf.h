/*
 * buf.h - the one bounds-checked byte buffer used by every parser.
 *
 * A bc_buf owns a growable byte array (or is a read-only view of bytes it
 * does not own).  Bytes are appended at the end and consumed from a read
 * cursor.  Every buffer has a maximum size fixed at init, never above
 * BC_BUF_CEILING; an append that would exceed it fails with BC_ERR_LIMIT
 * and leaves the buffer unchanged.  Getters check bounds before they
 * consume anything: on failure nothing is consumed.
 *
 * Ownership: bc_buf_free() releases owned memory; views free nothing.
 * Internal corruption (cursor past end) aborts: it is a bug, not input.
 *
 * The fields are visible only so that a bc_buf can live on the stack or
 * in a struct: everything else uses the functions below, never the
 * fields (doc/ARCHITECTURE.md, "Errors, limits, logging").
 */
#ifndef BC_BUF_H
#define BC_BUF_H

#include <stddef.h>
#include <stdint.h>

struct bc_buf {
	uint8_t *data;		/* storage; NULL until first growth */
	size_t len;		/* bytes written */
	size_t off;		/* read cursor, off <= len */
	size_t cap;		/* allocated bytes (0 for views) */
	size_t max;		/* maximum len */
	int readonly;		/* view over foreign bytes */
};

#define BC_BUF_INIT(maxsize) { NULL, 0, 0, 0, (maxsize), 0 }

/* Initialise an empty owned buffer that may hold at most max bytes. */
void bc_buf_init(struct bc_buf *b, size_t max);
/* Initialise a read-only view of n bytes at p (not copied, not freed). */
void bc_buf_view(struct bc_buf *b, const void *p, size_t n);
/* Free owned storage and reset to empty (keeps max). */
void bc_buf_free(struct bc_buf *b);
/* Forget contents, keep storage. */
void bc_buf_reset(struct bc_buf *b);

/* Unread bytes (len - off) and a pointer to them (may be NULL if 0). */
size_t bc_buf_avail(const struct bc_buf *b);
const uint8_t *bc_buf_ptr(const struct bc_buf *b);
/* All written bytes from the start, ignoring the cursor. */
const uint8_t *bc_buf_data(const struct bc_buf *b);
size_t bc_buf_len(const struct bc_buf *b);
/* The maximum length (never above BC_BUF_CEILING), and the bytes that
 * may still be appended before it is reached (0 for a view). */
size_t bc_buf_max(const struct bc_buf *b);
size_t bc_buf_room(const struct bc_buf *b);
/*
 * Change the maximum (clamped to BC_BUF_CEILING): BC_OK, BC_ERR_INVAL for
 * a view, or BC_ERR_LIMIT if the buffer already holds more (unchanged).
 */
int bc_buf_set_max(struct bc_buf *b, size_t max);

/*
 * Make room for n more bytes and return a pointer to the write area in
 * *out.  The bytes count only after bc_buf_commit(b, k), k <= n.
 * Returns BC_OK, BC_ERR_LIMIT (len + n > max) or BC_ERR_ALLOC.
 */
int bc_buf_reserve(struct bc_buf *b, size_t n, uint8_t **out);
int bc_buf_commit(struct bc_buf *b, size_t n);

/*
 * Drop the written bytes past n: what an encoder appended after
 * n = bc_buf_len(b) before it failed.  A cursor past n moves back to n.
 * Nothing changes if n >= bc_buf_len(b); the storage is kept.
 */
void bc_buf_truncate(struct bc_buf *b, size_t n);
/*
 * Overwrite the n written bytes at offset at (counted from the start, as
 * in bc_buf_data; p may point into b itself): BC_OK, or BC_ERR_INVAL for
 * a view or at + n past the length (nothing written).
 */
int bc_buf_patch(struct bc_buf *b, size_t at, const void *p, size_t n);
/*
 * Discard the consumed bytes: the unread ones move to the front and the
 * cursor to 0, so the room the consumed ones took is free again.
 */
void bc_buf_compact(struct bc_buf *b);

/* Append bytes; BC_OK, BC_ERR_LIMIT or BC_ERR_ALLOC. */
int bc_buf_put(struct bc_buf *b, const void *p, size_t n);
int bc_buf_put_u8(struct bc_buf *b, uint8_t v);
int bc_buf_put_u32be(struct bc_buf *b, uint32_t v);
int bc_buf_put_u64be(struct bc_buf *b, uint64_t v);
int bc_buf_put_str(struct bc_buf *b, const char *s);	/* no NUL */
int bc_buf_putf(struct bc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Consume bytes; BC_OK or BC_ERR_TRUNCATED (nothing consumed). */
int bc_buf_get(struct bc_buf *b, void *out, size_t n);
int bc_buf_get_u8(struct bc_buf *b, uint8_t *v);
int bc_buf_get_u32be(struct bc_buf *b, uint32_t *v);
int bc_buf_get_u64be(struct bc_buf *b, uint64_t *v);
int bc_buf_skip(struct bc_buf *b, size_t n);
/* Point *p at the next n unread bytes without consuming them. */
int bc_buf_peek(const struct bc_buf *b, size_t n, const uint8_t **p);
/* Consume n bytes and return them as a read-only view in *view. */
int bc_buf_get_view(struct bc_buf *b, size_t n, struct bc_buf *view);
/*
 * Consume the bytes up to and including the first delim and return the
 * ones before it as a read-only view in *view: BC_OK, or
 * BC_ERR_TRUNCATED when no unread byte is delim (nothing consumed,
 * *view empty).
 */
int bc_buf_get_until(struct bc_buf *b, uint8_t delim, struct bc_buf *view);
/* The unread byte k places past the cursor, or -1 past the end; nothing
 * is consumed (a scanner's lookahead). */
int bc_buf_at(const struct bc_buf *b, size_t k);
/*
 * The bytes consumed so far (the cursor), and back to such a mark: a
 * parser that finds the whole item is not there yet un-reads its header.
 * A mark past the cursor aborts (a bug); marks do not survive
 * bc_buf_compact, bc_buf_reset or bc_buf_truncate below them.
 */
size_t bc_buf_tell(const struct bc_buf *b);
void bc_buf_rewind(struct bc_buf *b, size_t mark);

/*
 * Return a NUL-terminated copy of the unread bytes (malloc'd, caller
 * frees) in *out; BC_ERR_INVAL if they contain a NUL byte.
 */
int bc_buf_dup_cstr(const struct bc_buf *b, char **out);

/* Move the contents of src into dst (dst freed first); src becomes empty. */
void bc_buf_move(struct bc_buf *dst, struct bc_buf *src);

#endif
