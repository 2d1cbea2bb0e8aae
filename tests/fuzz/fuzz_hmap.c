/*
 * fuzz_hmap.c - header-map parser and lookups on arbitrary bytes.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "preproc/hmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "a.h", "Foo.h", "MyLib/Bar.h",
	    "", "x" };
	struct bc_hmap m;
	size_t i;
	char *out;

	if (bc_hmap_load_mem(&m, data, size, NULL) != 0)
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		out = NULL;
		(void)bc_hmap_lookup(&m, keys[i], &out);
		free(out);
	}
	bc_hmap_free(&m);
	return 0;
}
