/*
 * fuzz_json.c - libFuzzer target for the JSON reader (common/json.c),
 * which reads the stats pages of the farm's hosts in boltcc --monitor.
 * A parse either fails with a message or gives a tree whose links stay
 * inside the node array, whose counts match the links, whose members all
 * have names and whose strings are NUL-terminated within the limit.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json.h"
#include "common/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_tree(const struct bc_json *doc)
{
	size_t i, k, n;

	if (doc->n == 0 || doc->n > BC_MAX_JSON_NODES)
		abort();
	for (i = 0; i < doc->n; i++) {
		const struct bc_json_node *v = &doc->v[i];

		if (v->type == BC_JSON_STRING &&
		    (v->str == NULL || strlen(v->str) > BC_MAX_JSON_STRING))
			abort();
		if (v->type != BC_JSON_ARRAY && v->type != BC_JSON_OBJECT)
			continue;
		for (n = 0, k = v->first; k != BC_JSON_NONE;
		    k = doc->v[k].next, n++) {
			if (k <= i || k >= doc->n)
				abort();
			if ((v->type == BC_JSON_OBJECT) !=
			    (doc->v[k].key != NULL))
				abort();
			if (v->type == BC_JSON_OBJECT &&
			    bc_json_get(doc, i, doc->v[k].key) == BC_JSON_NONE)
				abort();
		}
		if (n != v->count)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_json doc;
	char err[BC_ERRLEN];

	err[0] = '\0';
	if (bc_json_parse(&doc, data, size, err) == BC_OK)
		check_tree(&doc);
	else if (err[0] == '\0')
		abort();	/* a failure always says why */
	bc_json_free(&doc);
	return 0;
}
