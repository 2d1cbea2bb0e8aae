/* arena.c - a fixed memory pool for syntax tree nodes. */
#include <stdio.h>
#include <stdlib.h>
#include "util.h"

#define ARENA_SIZE (64 * 1024)

static _Alignas(16) unsigned char pool[ARENA_SIZE];
static size_t used;

void *arena_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > ARENA_SIZE - used) {
		fputs("calc: expression too large\n", stderr);
		exit(2);
	}
	p = pool + used;
	used += n;
	return p;
}

void arena_reset(void)
{
	used = 0;
}

size_t arena_used(void)
{
	return used;
}
