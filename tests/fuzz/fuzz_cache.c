/*
 * fuzz_cache.c - libFuzzer target for the cache's two readers of stored
 * bytes: the blob decoder (first byte even) and the direct-mode line
 * marker scanner of a .i (first byte odd).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cache/store.h"
#include "client/direct.h"
#include "common/err.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[BC_ERRLEN];

	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		struct bc_cache_entry e;

		(void)bc_cache_blob_decode(data + 1, size - 1, &e, err);
		bc_cache_entry_free(&e);
	} else {
		struct bc_strv v = BC_STRV_INIT;

		bc_direct_markers(data + 1, size - 1, &v);
		bc_strv_free(&v);
	}
	return 0;
}
