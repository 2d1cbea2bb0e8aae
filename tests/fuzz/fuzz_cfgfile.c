/*
 * fuzz_cfgfile.c - the client's configuration file parser.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/util.h"
#include "client/cfgfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_strv k = BC_STRV_INIT, v = BC_STRV_INIT, w = BC_STRV_INIT;
	char err[BC_ERRLEN];

	(void)bc_cfgfile_parse((const char *)data, size, &k, &v, &w, err);
	bc_strv_free(&k);
	bc_strv_free(&v);
	bc_strv_free(&w);
	return 0;
}
