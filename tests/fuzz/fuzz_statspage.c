/*
 * fuzz_statspage.c - the readers of a farm host's text stats pages
 * (client/statspage.c), which `boltcc --stats` and `--monitor` run on
 * what a host's stats port sent.  First byte even: the rest is a text
 * page (distccd's <distccstats> block); odd: a /metrics page (its
 * boltccd_cache_* lines).  Every key is non-empty, as many keys as
 * values, no line break in either, none longer than the input.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/statspage.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const struct bc_strv *keys, const struct bc_strv *vals, size_t size,
    int text)
{
	size_t i;
	double v;

	if (keys->n != vals->n)
		abort();
	for (i = 0; i < keys->n; i++) {
		size_t kn = strlen(keys->v[i]), vn = strlen(vals->v[i]);

		if (kn == 0 || strchr(keys->v[i], '\n') != NULL ||
		    strchr(vals->v[i], '\n') != NULL || vn > size)
			abort();
		/* a text key ends at the first space; a reason's key has
		 * "uncacheable:" added */
		if (text && (strchr(keys->v[i], ' ') != NULL || kn > size))
			abort();
		v = -1;
		if (bc_statspage_num(keys, vals, keys->v[i], &v) == 0 &&
		    v != -1)
			abort();	/* untouched when not a number */
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_strv keys = BC_STRV_INIT, vals = BC_STRV_INIT;
	int text;

	if (size == 0)
		return 0;
	text = (data[0] & 1) == 0;
	if (text)
		bc_statspage_parse(data + 1, size - 1, &keys, &vals);
	else
		(void)bc_statspage_cache_metrics(data + 1, size - 1, &keys,
		    &vals);
	check(&keys, &vals, size, text);
	bc_strv_free(&keys);
	bc_strv_free(&vals);
	return 0;
}
