/*
 * fuzz_proto.c - libFuzzer target for the job request and reply parsers.
 *
 * The input is parsed from memory (bc_proto_parse_request, the same code
 * the daemon runs over a socket) with small limits so that limit paths
 * and decompression bombs are reached quickly; the same bytes are then
 * parsed as a reply of each protocol, as the client would.  Good seeds:
 * the *-request.bin and *-reply.bin captures in the protocol vectors.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
small_limits(struct bc_proto_limits *lim)
{
	bc_proto_limits_default(lim);
	lim->max_argc = 64;
	lim->max_arg_len = 1024;
	lim->max_argv_total = 8192;
	lim->max_path_len = 512;
	lim->max_wire_body = 1 << 16;
	lim->max_doti = 1 << 18;
	lim->max_stderr = 1 << 16;
	lim->max_stdout = 1 << 16;
	lim->max_object = 1 << 18;
	lim->max_dia = 1 << 16;
	lim->max_msg = 1024;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int protos[] = { 1, 2, BC_PROTO_BOLT };
	struct bc_proto_limits lim;
	struct bc_request req;
	struct bc_reply rep;
	struct bc_buf in;
	char err[BC_ERRLEN];
	size_t i;

	small_limits(&lim);
	bc_buf_view(&in, data, size);
	if (bc_proto_parse_request(&in, &lim, &req, err) == BC_OK) {
		/* A successful parse must hold what the limits allow. */
		if (req.kind == BC_RQST_COMPILE && (req.argv.n == 0 ||
		    req.argv.n > lim.max_argc || req.argv.v[req.argv.n] != NULL
		    || bc_buf_len(&req.doti) > lim.max_doti))
			abort();
		bc_request_free(&req);
	}

	for (i = 0; i < sizeof protos / sizeof protos[0]; i++) {
		bc_buf_view(&in, data, size);
		if (bc_proto_parse_reply(&in, protos[i], i == 2 && size % 2 ?
		    BC_RQST_HELLO : BC_RQST_COMPILE, &lim, &rep, err) ==
		    BC_OK && rep.status != 0 && bc_buf_len(&rep.doto) != 0)
			abort();
		bc_reply_free(&rep);
	}
	/* ... and as the answer to a LOCATE (a LOOKUP's replies, or LOCN) */
	bc_buf_view(&in, data, size);
	if (bc_proto_parse_reply(&in, BC_PROTO_BOLT, BC_RQST_LOCATE, &lim,
	    &rep, err) == BC_OK && ((rep.locn != NULL && (!rep.miss ||
	    rep.locn[0] == '\0' || strlen(rep.locn) > BC_MAX_LOC_HOST)) ||
	    rep.status != 0))
		abort();
	bc_reply_free(&rep);
	return 0;
}
