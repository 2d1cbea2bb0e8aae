/*
 * json.c - JSON strings from any bytes, and the JSON number grammar
 * (see json.h).
 */
#include "config.h"

#include <string.h>

#include "common/err.h"
#include "common/json.h"

/*
 * Length of the valid UTF-8 sequence at s (n bytes left), 0 if the byte
 * at s does not start one (RFC 3629 section 4: no overlong forms, no
 * surrogates, nothing past U+10FFFF).
 */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void
bc_json_escape(const char *s, size_t n, bc_json_sink *put, void *ctx)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, len;

	put(ctx, "\"", 1);
	while (i < n) {
		const char *esc = NULL;
		char ctl[7];

		len = utf8_len(u + i, n - i);
		if (len > 1 || (len == 1 && u[i] >= 0x20 && u[i] != 0x7f &&
		    u[i] != '"' && u[i] != '\\')) {
			i += len;	/* passes through: extend the run */
			run += len;
			continue;
		}
		if (run > 0)
			put(ctx, s + i - run, run);
		run = 0;
		if (len == 0)
			esc = "\\ufffd";
		else if (u[i] == '"')
			esc = "\\\"";
		else if (u[i] == '\\')
			esc = "\\\\";
		else if (u[i] == '\n')
			esc = "\\n";
		else if (u[i] == '\r')
			esc = "\\r";
		else if (u[i] == '\t')
			esc = "\\t";
		else {
			memcpy(ctl, "\\u00", 4);
			ctl[4] = hex[u[i] >> 4];
			ctl[5] = hex[u[i] & 15];
			ctl[6] = '\0';
			esc = ctl;
		}
		put(ctx, esc, strlen(esc));
		i++;
	}
	if (run > 0)
		put(ctx, s + i - run, run);
	put(ctx, "\"", 1);
}

struct buf_sink {
	struct bc_buf *out;
	int r;
};

static void
buf_put(void *ctx, const char *p, size_t n)
{
	struct buf_sink *b = ctx;

	if (b->r == BC_OK)
		b->r = bc_buf_put(b->out, p, n);
}

int
bc_json_put_str(struct bc_buf *out, const char *s)
{
	struct buf_sink b = { out, BC_OK };

	bc_json_escape(s, strlen(s), buf_put, &b);
	return b.r;
}

static void
file_put(void *ctx, const char *p, size_t n)
{
	(void)fwrite(p, 1, n, (FILE *)ctx);
}

void
bc_json_fput_str(FILE *f, const char *s)
{
	bc_json_escape(s, strlen(s), file_put, f);
}

static const char *
digits(const char *p)
{
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

int
bc_json_is_number(const char *s)
{
	const char *p = s, *q;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		p = digits(p);
	else
		return 0;
	if (*p == '.') {
		q = digits(p + 1);
		if (q == p + 1)
			return 0;
		p = q;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		q = digits(p);
		if (q == p)
			return 0;
		p = q;
	}
	return *p == '\0';
}
