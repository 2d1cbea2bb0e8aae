/*
 * fuzz_hosts.c - libFuzzer target for bc_hosts_parse (both option modes).
 * Every accepted entry must describe itself in text that parses again.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/hosts.h"
#include "common/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_hostlist hl, h2;
	char err[BC_ERRLEN];
	char *text;
	int opts;
	size_t i;

	if (size > BC_MAX_HOSTLIST_LEN + 16)
		return 0;
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';	/* an embedded NUL just ends the list */
	for (opts = 0; opts <= 1; opts++) {
		int r = bc_hosts_parse(text, opts, &hl, err);

		if (r != BC_OK) {
			if (r != BC_ERR_HOSTSPEC || hl.n != 0 || hl.v != NULL)
				abort();
			continue;
		}
		if (hl.n == 0 || bc_hosts_total_slots(&hl) <= 0)
			abort();
		for (i = 0; i < hl.n; i++) {
			char *d = bc_host_describe(&hl.v[i]);

			if (bc_hosts_parse(d, opts, &h2, err) != BC_OK ||
			    h2.n != 1 || h2.v[0].limit != hl.v[i].limit ||
			    h2.v[0].kind != hl.v[i].kind)
				abort();
			bc_hosts_free(&h2);
			free(d);
		}
		bc_hosts_free(&hl);
	}
	free(text);
	return 0;
}
