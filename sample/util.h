/* util.h - small helpers shared by the calculator's modules. */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>

/* arena.c: all nodes come from one fixed pool, freed all at once */
void *arena_alloc(size_t n);
void arena_reset(void);
size_t arena_used(void);

/* strbuf.c: bounded string building that never overflows */
struct strbuf {
	char *p;
	size_t len, cap;
};
void sb_init(struct strbuf *sb, char *p, size_t cap);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_putnum(struct strbuf *sb, long long v);

void set_err(char *err, size_t errlen, const char *msg, const char *detail);

#endif
