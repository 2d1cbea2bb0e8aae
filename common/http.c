/*
 * http.c - an HTTP request line (see http.h).
 */
#include "config.h"

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/http.h"
#include "common/limits.h"

/*
 * Consume bytes into out (NUL-terminated) while accept(c) holds, at most
 * max of them: the length, or max + 1 if there were more (out then holds
 * the first max).
 */
static size_t
take(struct bc_buf *in, int (*accept)(int c), char *out, size_t max)
{
	size_t k = 0;
	uint8_t c;

	while (bc_buf_avail(in) > 0 && accept(*bc_buf_ptr(in))) {
		(void)bc_buf_get_u8(in, &c);
		if (k == max) {
			out[k] = '\0';
			return max + 1;
		}
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return k;
}

static int
is_method_char(int c)
{
	return c >= 'A' && c <= 'Z';
}

/* What a request target may hold: printable ASCII but space. */
static int
is_target_char(int c)
{
	return c > 0x20 && c < 0x7f;
}

int
bc_http_request_line(const void *req, size_t n, char method[],
    char target[], int *end)
{
	struct bc_buf in;
	size_t len;
	uint8_t c;

	bc_buf_view(&in, req, n);
	target[0] = '\0';
	*end = -1;
	if (take(&in, is_method_char, method, BC_MAX_HTTP_METHOD) >
	    BC_MAX_HTTP_METHOD || method[0] == '\0' ||
	    bc_buf_get_u8(&in, &c) != BC_OK || c != ' ')
		return BC_ERR_PROTO;
	len = take(&in, is_target_char, target, BC_MAX_HTTP_TARGET);
	if (len > BC_MAX_HTTP_TARGET)
		return BC_ERR_LIMIT;
	if (bc_buf_avail(&in) > 0)
		*end = *bc_buf_ptr(&in);
	return BC_OK;
}
