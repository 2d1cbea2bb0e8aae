/*
 * fuzz_pumpx.c - the BOLT pump manifest and a FILE body on arbitrary
 * bytes (daemon side of common/proto3x.h), and the manifest's names
 * checked as the daemon does (common/pumpname.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/limits.h"
#include "common/proto3x.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_proto3_limits lim;
	struct bc_proto3x_manifest m;
	struct bc_buf in, plain;

	bc_proto3_limits_default(&lim);
	lim.max_file = 1 << 20;
	bc_buf_view(&in, data, size);
	if (bc_proto3x_read_manifest(NULL, &in, &lim, &m, NULL) == 0) {
		(void)bc_proto3x_manifest_check(&m, "/src", NULL);
		bc_proto3x_manifest_free(&m);
	}
	bc_buf_init(&plain, lim.max_file);
	(void)bc_proto3x_read_body(NULL, &in, &lim, &plain, NULL);
	bc_buf_free(&plain);
	return 0;
}
