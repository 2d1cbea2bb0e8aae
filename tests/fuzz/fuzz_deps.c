/*
 * fuzz_deps.c - libFuzzer target for bc_deps_parse and the writers.
 * Whatever parses is written in both styles; a written .d must parse again
 * to the same words, and re-writing it in its style changes nothing.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/deps.h"
#include "common/err.h"
#include "common/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same_words(const struct bc_deps *a, const struct bc_deps *b)
{
	size_t i;

	if (a->ntargets != b->ntargets || a->ndeps != b->ndeps ||
	    a->phony != b->phony)
		abort();
	for (i = 0; i < a->ntargets + a->ndeps; i++) {
		const struct bc_deps_word *x = i < a->ntargets ?
		    &a->targets[i] : &a->deps[i - a->ntargets];
		const struct bc_deps_word *y = i < b->ntargets ?
		    &b->targets[i] : &b->deps[i - b->ntargets];

		if (x->len != y->len || memcmp(bc_buf_data(&a->text) + x->off,
		    bc_buf_data(&b->text) + y->off, x->len) != 0)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_deps d, d2;
	struct bc_buf out, again;
	char err[BC_ERRLEN];
	int style;

	if (size > ((size_t)1 << 20))
		return 0;
	bc_deps_init(&d);
	bc_deps_init(&d2);
	if (bc_deps_parse(&d, data, size, err) == BC_OK) {
		for (style = BC_DEPS_GCC; style <= BC_DEPS_CLANG; style++) {
			bc_buf_init(&out, BC_MAX_DOTD);
			bc_buf_init(&again, BC_MAX_DOTD);
			if (bc_deps_write(&d, style, &out, err) != BC_OK)
				abort();
			d.phony_blank = style == BC_DEPS_CLANG;
			/* words that look like ':' or end in one are legal
			 * in the input's deps but not re-parseable */
			if (bc_deps_parse(&d2, bc_buf_data(&out),
			    bc_buf_len(&out), err) == BC_OK) {
				same_words(&d, &d2);
				if (bc_deps_write(&d2, style, &again, err) !=
				    BC_OK || bc_buf_len(&again) !=
				    bc_buf_len(&out) || memcmp(bc_buf_data(&again),
				    bc_buf_data(&out), bc_buf_len(&out)) != 0)
					abort();
			}
			bc_buf_free(&out);
			bc_buf_free(&again);
		}
	}
	(void)bc_deps_detect(data, size);
	bc_deps_free(&d);
	bc_deps_free(&d2);
	return 0;
}
