/*
 * statspage.c - the text pages of a host's stats port, read through
 * bc_buf views (see statspage.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "client/statspage.h"

#define CACHE_PREFIX "boltccd_cache_"
#define REASON_PREFIX "uncacheable_total{reason=\""

/* Consume the bytes up to and including the first s: 1, or 0 when s is
 * not there (nothing consumed). */
static int
skip_past(struct bc_buf *b, const char *s)
{
	size_t mark = bc_buf_tell(b), n = strlen(s);
	const uint8_t *p;

	while (bc_buf_peek(b, n, &p) == BC_OK) {
		if (memcmp(p, s, n) == 0)
			return bc_buf_skip(b, n) == BC_OK;
		(void)bc_buf_skip(b, 1);
	}
	bc_buf_rewind(b, mark);
	return 0;
}

/* 1 if the unread bytes of b start with s (then consumed), else 0. */
static int
take_prefix(struct bc_buf *b, const char *s)
{
	size_t n = strlen(s);
	const uint8_t *p;

	if (bc_buf_peek(b, n, &p) != BC_OK || memcmp(p, s, n) != 0)
		return 0;
	return bc_buf_skip(b, n) == BC_OK;
}

/* The unread bytes before the first s (all of them without one) as a
 * view; b is left past s. */
static void
take_until(struct bc_buf *b, const char *s, struct bc_buf *view)
{
	const uint8_t *start = bc_buf_ptr(b);
	size_t avail = bc_buf_avail(b);

	if (skip_past(b, s))
		bc_buf_view(view, start, avail - bc_buf_avail(b) - strlen(s));
	else {
		bc_buf_view(view, start, avail);
		(void)bc_buf_skip(b, avail);
	}
}

/* The next line of b (without its LF, or the rest without one, and
 * without a CR before the LF) in *line; 0 at the end. */
static int
next_line(struct bc_buf *b, struct bc_buf *line)
{
	size_t n;

	if (bc_buf_avail(b) == 0)
		return 0;
	if (bc_buf_get_until(b, '\n', line) != BC_OK) {
		bc_buf_view(line, bc_buf_ptr(b), bc_buf_avail(b));
		(void)bc_buf_skip(b, bc_buf_avail(b));
	}
	n = bc_buf_avail(line);
	if (n > 0 && bc_buf_at(line, n - 1) == '\r')
		bc_buf_view(line, bc_buf_ptr(line), n - 1);
	return 1;
}

/* The unread bytes of v as a C string, pushed (v holds no NUL: the
 * page was cut at its first). */
static void
push_view(struct bc_strv *sv, const struct bc_buf *v)
{
	char *s;

	if (bc_buf_dup_cstr(v, &s) != BC_OK)
		abort();	/* a NUL in a page cut at its first NUL */
	bc_strv_push_owned(sv, s);
}

/* The page up to its first NUL. */
static void
page_view(struct bc_buf *b, const void *page, size_t n)
{
	const void *nul = page != NULL && n > 0 ? memchr(page, '\0', n) : NULL;

	if (page == NULL)
		n = 0;
	else if (nul != NULL)
		n = (size_t)((const char *)nul - (const char *)page);
	bc_buf_view(b, page, n);
}

void
bc_statspage_parse(const void *page, size_t n, struct bc_strv *keys,
    struct bc_strv *vals)
{
	struct bc_buf in, body, line, key;

	page_view(&in, page, n);
	if (!skip_past(&in, "\r\n\r\n"))
		(void)skip_past(&in, "\n\n");
	(void)skip_past(&in, "<distccstats>");
	take_until(&in, "</distccstats>", &body);
	while (next_line(&body, &line)) {
		if (bc_buf_get_until(&line, ' ', &key) != BC_OK ||
		    bc_buf_avail(&key) == 0)
			continue;
		push_view(keys, &key);
		push_view(vals, &line);
	}
}

int
bc_statspage_cache_metrics(const void *page, size_t n,
    struct bc_strv *keys, struct bc_strv *vals)
{
	struct bc_buf in, line, name, reason;
	const uint8_t *p;
	size_t k, sp, len;
	int found = 0;

	page_view(&in, page, n);
	while (next_line(&in, &line)) {
		if (!take_prefix(&line, CACHE_PREFIX))
			continue;
		/* the value: after the last space */
		len = bc_buf_avail(&line);
		for (sp = len, k = 0; k < len; k++)
			if (bc_buf_at(&line, k) == ' ')
				sp = k;
		if (sp == len || sp == 0)
			continue;	/* no value, or no name */
		bc_buf_view(&name, bc_buf_ptr(&line), sp);
		(void)bc_buf_skip(&line, sp + 1);
		if (take_prefix(&name, REASON_PREFIX)) {
			char *r;

			if (bc_buf_get_until(&name, '"', &reason) != BC_OK)
				continue;
			if (bc_buf_dup_cstr(&reason, &r) != BC_OK)
				abort();
			bc_strv_push_owned(keys, xasprintf("uncacheable:%s",
			    r));
			free(r);
			push_view(vals, &line);
			continue;
		}
		len = bc_buf_avail(&name);
		if (len > 6 && bc_buf_peek(&name, len, &p) == BC_OK &&
		    memcmp(p + len - 6, "_total", 6) == 0)
			bc_buf_view(&name, p, len - 6);
		push_view(keys, &name);
		push_view(vals, &line);
		found = 1;
	}
	return found;
}

int
bc_statspage_num(const struct bc_strv *keys, const struct bc_strv *vals,
    const char *key, double *v)
{
	size_t i;
	char *end;
	double d;

	for (i = 0; i < keys->n && i < vals->n; i++) {
		if (strcmp(keys->v[i], key) != 0)
			continue;
		d = strtod(vals->v[i], &end);
		if (end == vals->v[i])
			return 0;
		*v = d;
		return 1;
	}
	return 0;
}
