/*
 * fuzz_memo.c - libFuzzer target for the pump scanner's two readers of
 * saved state: the include memo ($DIR/state/ppmemo, first byte even)
 * and a compiler's -E -v search list (first byte odd).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "preproc/memo.h"
#include "preproc/search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		struct bc_pp_memo m;

		(void)bc_pp_memo_open(&m, NULL, NULL);
		(void)bc_pp_memo_parse(&m, (const char *)data + 1, size - 1);
		bc_pp_memo_close(&m);
	} else {
		struct bc_strv dirs = BC_STRV_INIT, fw = BC_STRV_INIT;

		(void)bc_pp_parse_verbose((const char *)data + 1, size - 1,
		    &dirs, &fw);
		bc_strv_free(&dirs);
		bc_strv_free(&fw);
	}
	return 0;
}
