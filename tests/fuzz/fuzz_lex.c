/*
 * fuzz_lex.c - the pump scanner's directive lexer on arbitrary bytes.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "preproc/lex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_pp_dirs d;

	bc_pp_dirs_init(&d);
	(void)bc_pp_lex((const char *)data, size, &d, NULL);
	bc_pp_dirs_free(&d);
	return 0;
}
