/*
 * fuzz_pathmap.c - libFuzzer target for the stored-path tokens
 * (cache/pathmap.c).  The input is a stored stderr or .d: turning its
 * tokens into a command's prefixes either works or fails with
 * BC_ERR_CORRUPT; text that tokenizes must come back byte for byte with
 * the same maps (raw and make-escaped), and must then hold no prefix at
 * the start of a path.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/pathmap.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const argv[] = {
		(char *)"clang", (char *)"-ffile-prefix-map=/home/a/App=/src",
		(char *)"-fdebug-prefix-map=/home/a/My App/=/m",
		(char *)"-fmacro-prefix-map=rel=/x", (char *)"-c",
		(char *)"x.c", NULL
	};
	struct bc_pathmap pm;
	struct bc_buf t, back;
	char err[BC_ERRLEN];
	int esc, r;

	if (size > ((size_t)1 << 20))
		return 0;
	bc_pathmap_init(&pm, argv, 6);
	for (esc = 0; esc < 2; esc++) {
		bc_buf_init(&t, BC_MAX_DOTD);
		bc_buf_init(&back, BC_MAX_DOTD);
		r = bc_pathmap_detokenize(&pm, esc, data, size, &t, err);
		if (r != BC_OK && r != BC_ERR_CORRUPT && r != BC_ERR_LIMIT)
			abort();
		bc_buf_reset(&t);
		r = bc_pathmap_tokenize(&pm, esc, data, size, &t, err);
		if (r == BC_OK) {
			if (bc_pathmap_detokenize(&pm, esc, bc_buf_data(&t),
			    bc_buf_len(&t), &back, err) != BC_OK ||
			    bc_buf_len(&back) != size ||
			    (size > 0 && memcmp(bc_buf_data(&back), data,
			    size) != 0))
				abort();
		} else if (r != BC_ERR_INVAL && r != BC_ERR_LIMIT)
			abort();
		bc_buf_free(&t);
		bc_buf_free(&back);
	}
	(void)bc_pathmap_leak(&pm, "/tmp/root", data, size);
	bc_pathmap_free(&pm);
	return 0;
}
