/*
 * unit.c - the helpers the check test programs share (unit.h).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "client/args.h"
#include "common/err.h"
#include "common/util.h"
#include "tests/unit/unit.h"

int
bc_unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

void
bc_unit_split_rsp(const char *cmd, struct bc_strv *sv)
{
	char err[BC_ERRLEN];

	bc_strv_init(sv);
	ck_assert_int_eq(bc_args_split_rsp(cmd, strlen(cmd), sv, err), BC_OK);
}

char *
bc_unit_join(const struct bc_strv *sv)
{
	size_t i, len = 1;
	char *s;

	for (i = 0; i < sv->n; i++)
		len += strlen(sv->v[i]) + 1;
	s = xmalloc(len);
	s[0] = '\0';
	len = 0;
	for (i = 0; i < sv->n; i++) {
		size_t n = strlen(sv->v[i]);

		if (i > 0)
			s[len++] = ' ';
		memcpy(s + len, sv->v[i], n);
		len += n;
		s[len] = '\0';
	}
	return s;
}
