/*
 * fuzz_admin.c - the stats port's admin request parser (daemon/admin.c):
 * the input is the bytes a stats connection sent.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "daemon/admin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_admin_req rq;
	struct bc_buf out = BC_BUF_INIT(64 * 1024);

	bc_admin_parse(data, size, &rq);
	if (rq.op < BC_ADMIN_NONE || rq.op > BC_ADMIN_ZERO)
		abort();
	if (memchr(rq.why, '\0', sizeof(rq.why)) == NULL)
		abort();
	if (rq.op == BC_ADMIN_BAD) {
		if (rq.status != 400 && rq.status != 404 && rq.status != 405)
			abort();
		/* the reason goes back to the peer as JSON */
		if (bc_admin_error(rq.status, rq.why, &out) != 0)
			abort();
	}
	bc_buf_free(&out);
	return 0;
}
