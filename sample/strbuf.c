/* strbuf.c - bounded string building and error messages. */
#include <string.h>
#include "util.h"

void sb_init(struct strbuf *sb, char *p, size_t cap)
{
	sb->p = p;
	sb->len = 0;
	sb->cap = cap;
	if (cap)
		p[0] = '\0';
}

void sb_putc(struct strbuf *sb, char c)
{
	if (sb->len + 1 < sb->cap) {
		sb->p[sb->len++] = c;
		sb->p[sb->len] = '\0';
	}
}

void sb_puts(struct strbuf *sb, const char *s)
{
	while (*s)
		sb_putc(sb, *s++);
}

void sb_putnum(struct strbuf *sb, long long v)
{
	char tmp[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		sb_putc(sb, '-');
	while (n)
		sb_putc(sb, tmp[--n]);
}

void set_err(char *err, size_t errlen, const char *msg, const char *detail)
{
	struct strbuf sb;

	sb_init(&sb, err, errlen);
	sb_puts(&sb, msg);
	if (detail && *detail) {
		sb_puts(&sb, " '");
		sb_puts(&sb, detail);
		sb_putc(&sb, '\'');
	}
}
