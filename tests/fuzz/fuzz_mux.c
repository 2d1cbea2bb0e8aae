/*
 * fuzz_mux.c - libFuzzer target for the stream-multiplexing codec and
 * engine (common/mux.c): the input is fed to a server-side engine as the
 * client's byte stream, in chunks whose sizes come from the first byte,
 * with OPEN served by a socketpair (the far end closed at once), so
 * greeting, frame parsing, flow control and stream bookkeeping all see
 * hostile bytes.  Also runs the bare frame parser over the input.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/mux.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
open_stream(struct bc_mux *m, struct bc_mux_stream *st, void *ctx, char *err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return BC_ERR_IO;
	close(sv[1]);
	st->fd = sv[0];
	return BC_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_buf b;
	struct bc_mux_frame f;
	struct bc_mux m;
	char err[BC_ERRLEN];
	size_t off, chunk;

	if (size < 1)
		return 0;
	bc_buf_view(&b, data + 1, size - 1);
	while (bc_mux_get_frame(&b, BC_MUX_MAX_PAYLOAD, &f, err) == BC_OK)
		;
	chunk = (size_t)data[0] + 1;
	bc_mux_init(&m, BC_MUX_ROLE_SERVER, 8, open_stream, NULL);
	for (off = 1; off < size && !m.failed; off += chunk) {
		uint8_t *p;
		size_t n = size - off < chunk ? size - off : chunk;
		size_t space = bc_mux_in_space(&m, &p);
		const uint8_t *op;

		if (n > space)
			n = space;
		if (n == 0)
			break;
		memcpy(p, data + off, n);
		if (bc_mux_input(&m, n, err) != BC_OK)
			break;
		(void)bc_mux_pump(&m);
		bc_mux_collect(&m);
		n = bc_mux_out(&m, &op);
		bc_mux_out_done(&m, n);
	}
	bc_mux_free(&m);
	return 0;
}
