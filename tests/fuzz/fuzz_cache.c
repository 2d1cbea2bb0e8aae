/*
 * fuzz_cache.c - libFuzzer target for the cache's two readers of stored
 * bytes: the blob decoder (first byte even) and the direct-mode line
 * marker scanner of a .i (first byte odd).  With bit 1 of the first byte
 * set, the blob's checksum is recomputed before decoding, so mutations
 * of the header and frames get past it (a blob's checksum guards against
 * a bad disk, not an attacker: a writer of blobs writes good checksums).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store.h"
#include "client/direct.h"
#include "common/err.h"
#include "common/hash.h"
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
		const uint8_t *p = data + 1;
		size_t n = size - 1;
		uint8_t *copy = NULL;

		/* the header is version 1's or longer (version 2: origin) */
		size_t hl = n >= 6 && p[4] == 0 && p[5] == 1 ?
		    BC_CACHE_HDR_LEN_V1 : BC_CACHE_HDR_LEN;

		if ((data[0] & 2) != 0 && n >= hl + BC_HASH_LEN) {
			struct bc_hash h;

			copy = xmalloc(n);
			memcpy(copy, p, n);
			bc_hash_init(&h);
			bc_hash_update(&h, copy, hl);
			bc_hash_update(&h, copy + hl + BC_HASH_LEN,
			    n - hl - BC_HASH_LEN);
			bc_hash_final(&h, copy + hl);
			bc_hash_free(&h);
			p = copy;
		}
		(void)bc_cache_blob_decode(p, n, &e, err);
		bc_cache_entry_free(&e);
		free(copy);
	} else {
		struct bc_strv v = BC_STRV_INIT;

		bc_direct_markers(data + 1, size - 1, &v);
		bc_strv_free(&v);
	}
	return 0;
}
