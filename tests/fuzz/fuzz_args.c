/*
 * fuzz_args.c - libFuzzer target for argument classification: the input
 * is split on NUL bytes into argv (argv[0] first), classified, and the
 * plan printed as JSON.  The first half of the input is also run through
 * the response-file splitter.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/args.h"
#include "common/err.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_strv av = BC_STRV_INIT, words = BC_STRV_INIT;
	struct bc_plan plan;
	char err[BC_ERRLEN];
	const char *p = (const char *)data;
	size_t start = 0, i;
	char *json;

	if (size > 64 * 1024)
		return 0;
	for (i = 0; i <= size; i++) {
		if (i == size || p[i] == '\0') {
			if (i > start || i < size)
				bc_strv_push_owned(&av,
				    xstrndup(p + start, i - start));
			start = i + 1;
		}
	}
	bc_plan_init(&plan);
	if (bc_args_classify(&av, &plan, err) != BC_OK)
		abort();
	if (plan.reason == NULL || plan.detail == NULL)
		abort();
	if (plan.remote && (plan.source == NULL || plan.output == NULL ||
	    plan.remote_argv.n < 4 ||
	    (!plan.preprocessed && plan.cpp_argv.n < 2)))
		abort();
	json = bc_plan_to_json(&plan);
	for (i = 0; json[i] != '\0'; i++)
		if ((unsigned char)json[i] < 0x20)
			abort();
	free(json);
	bc_plan_free(&plan);
	bc_strv_free(&av);

	if (bc_args_split_rsp(p, size / 2, &words, err) != BC_OK)
		abort();
	bc_strv_free(&words);
	return 0;
}
