/* env.c - variables: a small open-addressing hash table. */
#include <string.h>
#include "calc.h"

#define ENV_SIZE 64

struct var {
	char name[32];
	num_t value;
	int used;
};

static struct var table[ENV_SIZE];
static size_t count;

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static struct var *slot(const char *name)
{
	unsigned i = hash(name) % ENV_SIZE, k;

	for (k = 0; k < ENV_SIZE; k++, i = (i + 1) % ENV_SIZE)
		if (!table[i].used || strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

int env_get(const char *name, num_t *out)
{
	struct var *v = slot(name);

	if (!v || !v->used)
		return -1;
	*out = v->value;
	return 0;
}

void env_set(const char *name, num_t value)
{
	struct var *v = slot(name);
	size_t n = strlen(name);

	if (!v)
		return;
	if (!v->used) {
		if (n >= sizeof v->name)
			n = sizeof v->name - 1;
		memcpy(v->name, name, n);
		v->name[n] = '\0';
		v->used = 1;
		count++;
	}
	v->value = value;
}

size_t env_count(void)
{
	return count;
}
