/*
 * buf.c - the bounds-checked byte buffer (see buf.h).
 *
 * Growth is geometric but clamped to the buffer's max; every getter checks
 * the length before touching the cursor so a failed get consumes nothing.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "limits.h"

static void
buf_check(const struct bc_buf *b)
{
	/* Internal corruption is a bug, never input: crash loudly. */
	if (b == NULL || b->off > b->len ||
	    (!b->readonly && b->len > b->cap) ||
	    (b->len > 0 && b->data == NULL))
		abort();
}

static size_t
buf_max(const struct bc_buf *b)
{
	return b->max < BC_BUF_CEILING ? b->max : BC_BUF_CEILING;
}

void
bc_buf_init(struct bc_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->off = 0;
	b->cap = 0;
	b->max = max < BC_BUF_CEILING ? max : BC_BUF_CEILING;
	b->readonly = 0;
}

void
bc_buf_view(struct bc_buf *b, const void *p, size_t n)
{
	/* The cast drops const; readonly guarantees we never write. */
	b->data = (uint8_t *)(uintptr_t)p;
	b->len = p == NULL ? 0 : n;
	b->off = 0;
	b->cap = 0;
	b->max = b->len;
	b->readonly = 1;
}

void
bc_buf_free(struct bc_buf *b)
{
	if (b == NULL)
		return;
	if (!b->readonly)
		free(b->data);
	b->data = NULL;
	b->len = 0;
	b->off = 0;
	b->cap = 0;
	b->readonly = 0;
}

void
bc_buf_reset(struct bc_buf *b)
{
	buf_check(b);
	if (b->readonly) {
		/* A view has no storage to keep; become an empty view. */
		b->data = NULL;
		b->max = 0;
	}
	b->len = 0;
	b->off = 0;
}

size_t
bc_buf_avail(const struct bc_buf *b)
{
	buf_check(b);
	return b->len - b->off;
}

const uint8_t *
bc_buf_ptr(const struct bc_buf *b)
{
	buf_check(b);
	if (b->data == NULL)
		return NULL;
	return b->data + b->off;
}

const uint8_t *
bc_buf_data(const struct bc_buf *b)
{
	buf_check(b);
	return b->data;
}

size_t
bc_buf_len(const struct bc_buf *b)
{
	buf_check(b);
	return b->len;
}

size_t
bc_buf_max(const struct bc_buf *b)
{
	buf_check(b);
	return buf_max(b);
}

size_t
bc_buf_room(const struct bc_buf *b)
{
	size_t max;

	buf_check(b);
	if (b->readonly)
		return 0;
	max = buf_max(b);
	return max > b->len ? max - b->len : 0;
}

int
bc_buf_set_max(struct bc_buf *b, size_t max)
{
	buf_check(b);
	if (b->readonly)
		return BC_ERR_INVAL;
	if (max > BC_BUF_CEILING)
		max = BC_BUF_CEILING;
	if (max < b->len)
		return BC_ERR_LIMIT;
	b->max = max;
	return BC_OK;
}

void
bc_buf_truncate(struct bc_buf *b, size_t n)
{
	buf_check(b);
	if (n >= b->len)
		return;
	b->len = n;
	if (b->off > n)
		b->off = n;
}

int
bc_buf_patch(struct bc_buf *b, size_t at, const void *p, size_t n)
{
	buf_check(b);
	if (b->readonly || at > b->len || n > b->len - at)
		return BC_ERR_INVAL;
	if (n > 0)
		memmove(b->data + at, p, n);
	return BC_OK;
}

void
bc_buf_compact(struct bc_buf *b)
{
	buf_check(b);
	if (b->off == 0)
		return;
	if (b->readonly) {
		/* a view just starts later */
		b->data += b->off;
		b->len -= b->off;
		b->max = b->len;
		b->off = 0;
		return;
	}
	if (b->off < b->len)
		memmove(b->data, b->data + b->off, b->len - b->off);
	b->len -= b->off;
	b->off = 0;
}

int
bc_buf_reserve(struct bc_buf *b, size_t n, uint8_t **out)
{
	size_t need, ncap, max;
	uint8_t *p;

	buf_check(b);
	if (out != NULL)
		*out = NULL;
	if (b->readonly)
		return BC_ERR_INVAL;
	max = buf_max(b);
	if (n > max || b->len > max - n)
		return BC_ERR_LIMIT;
	need = b->len + n;
	if (need > b->cap) {
		ncap = b->cap < 256 ? 256 : b->cap;
		while (ncap < need) {
			if (ncap > max / 2) {
				ncap = max;
				break;
			}
			ncap *= 2;
		}
		if (ncap > max)
			ncap = max;
		if (ncap < need)
			ncap = need;
		if (ncap == 0)
			ncap = 1;	/* max == 0: avoid realloc(p, 0) */
		p = realloc(b->data, ncap);
		if (p == NULL)
			return BC_ERR_ALLOC;
		b->data = p;
		b->cap = ncap;
	}
	if (out != NULL)
		*out = b->data == NULL ? NULL : b->data + b->len;
	return BC_OK;
}

int
bc_buf_commit(struct bc_buf *b, size_t n)
{
	buf_check(b);
	if (b->readonly || n > b->cap - b->len)
		abort();	/* committing more than reserved is a bug */
	b->len += n;
	return BC_OK;
}

int
bc_buf_put(struct bc_buf *b, const void *p, size_t n)
{
	uint8_t *w;
	int r;

	if (n == 0)
		return BC_OK;
	if ((r = bc_buf_reserve(b, n, &w)) != BC_OK)
		return r;
	memcpy(w, p, n);
	b->len += n;
	return BC_OK;
}

int
bc_buf_put_u8(struct bc_buf *b, uint8_t v)
{
	return bc_buf_put(b, &v, 1);
}

int
bc_buf_put_u32be(struct bc_buf *b, uint32_t v)
{
	uint8_t x[4];

	x[0] = (uint8_t)(v >> 24);
	x[1] = (uint8_t)(v >> 16);
	x[2] = (uint8_t)(v >> 8);
	x[3] = (uint8_t)v;
	return bc_buf_put(b, x, sizeof(x));
}

int
bc_buf_put_u64be(struct bc_buf *b, uint64_t v)
{
	uint8_t x[8];
	int i;

	for (i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (56 - 8 * i));
	return bc_buf_put(b, x, sizeof(x));
}

int
bc_buf_put_str(struct bc_buf *b, const char *s)
{
	return bc_buf_put(b, s, strlen(s));
}

int
bc_buf_putf(struct bc_buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	uint8_t *w;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return BC_ERR_INVAL;
	if ((size_t)n < sizeof(small))
		return bc_buf_put(b, small, (size_t)n);
	/* Long output: format directly into reserved space (+1 for NUL). */
	if ((r = bc_buf_reserve(b, (size_t)n + 1, &w)) != BC_OK)
		return r;
	va_start(ap, fmt);
	r = vsnprintf((char *)w, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (r != n)
		return BC_ERR_INTERNAL;
	b->len += (size_t)n;
	return BC_OK;
}

int
bc_buf_get(struct bc_buf *b, void *out, size_t n)
{
	buf_check(b);
	if (n > b->len - b->off)
		return BC_ERR_TRUNCATED;
	if (n > 0) {
		if (out != NULL)
			memcpy(out, b->data + b->off, n);
		b->off += n;
	}
	return BC_OK;
}

int
bc_buf_get_u8(struct bc_buf *b, uint8_t *v)
{
	return bc_buf_get(b, v, 1);
}

int
bc_buf_get_u32be(struct bc_buf *b, uint32_t *v)
{
	uint8_t x[4];
	int r;

	if ((r = bc_buf_get(b, x, sizeof(x))) != BC_OK)
		return r;
	*v = (uint32_t)x[0] << 24 | (uint32_t)x[1] << 16 |
	    (uint32_t)x[2] << 8 | (uint32_t)x[3];
	return BC_OK;
}

int
bc_buf_get_u64be(struct bc_buf *b, uint64_t *v)
{
	uint8_t x[8];
	uint64_t acc = 0;
	int i, r;

	if ((r = bc_buf_get(b, x, sizeof(x))) != BC_OK)
		return r;
	for (i = 0; i < 8; i++)
		acc = acc << 8 | x[i];
	*v = acc;
	return BC_OK;
}

int
bc_buf_skip(struct bc_buf *b, size_t n)
{
	return bc_buf_get(b, NULL, n);
}

int
bc_buf_peek(const struct bc_buf *b, size_t n, const uint8_t **p)
{
	buf_check(b);
	*p = NULL;
	if (n > b->len - b->off)
		return BC_ERR_TRUNCATED;
	*p = b->data == NULL ? NULL : b->data + b->off;
	return BC_OK;
}

int
bc_buf_get_view(struct bc_buf *b, size_t n, struct bc_buf *view)
{
	buf_check(b);
	if (n > b->len - b->off) {
		bc_buf_view(view, NULL, 0);
		return BC_ERR_TRUNCATED;
	}
	bc_buf_view(view, b->data == NULL ? NULL : b->data + b->off, n);
	b->off += n;
	return BC_OK;
}

int
bc_buf_get_until(struct bc_buf *b, uint8_t delim, struct bc_buf *view)
{
	const uint8_t *p, *e;
	size_t n;

	buf_check(b);
	n = b->len - b->off;
	p = n > 0 ? b->data + b->off : NULL;
	if (p == NULL || (e = memchr(p, delim, n)) == NULL) {
		bc_buf_view(view, NULL, 0);
		return BC_ERR_TRUNCATED;
	}
	bc_buf_view(view, p, (size_t)(e - p));
	b->off += (size_t)(e - p) + 1;
	return BC_OK;
}

int
bc_buf_at(const struct bc_buf *b, size_t k)
{
	buf_check(b);
	if (k >= b->len - b->off)
		return -1;
	return b->data[b->off + k];
}

size_t
bc_buf_tell(const struct bc_buf *b)
{
	buf_check(b);
	return b->off;
}

void
bc_buf_rewind(struct bc_buf *b, size_t mark)
{
	buf_check(b);
	if (mark > b->off)
		abort();	/* not a mark of this cursor: a bug */
	b->off = mark;
}

int
bc_buf_dup_cstr(const struct bc_buf *b, char **out)
{
	size_t n;
	char *s;

	buf_check(b);
	*out = NULL;
	n = b->len - b->off;
	if (n > 0 && memchr(b->data + b->off, '\0', n) != NULL)
		return BC_ERR_INVAL;
	if ((s = malloc(n + 1)) == NULL)
		return BC_ERR_ALLOC;
	if (n > 0)
		memcpy(s, b->data + b->off, n);
	s[n] = '\0';
	*out = s;
	return BC_OK;
}

void
bc_buf_move(struct bc_buf *dst, struct bc_buf *src)
{
	if (dst == src)
		return;
	bc_buf_free(dst);
	*dst = *src;
	src->data = NULL;
	src->len = 0;
	src->off = 0;
	src->cap = 0;
	src->readonly = 0;
}
