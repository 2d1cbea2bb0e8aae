/*
 * unit.h - what every check test program shares: how long one test may
 * run, how a program runs its suite, and the helpers more than one test
 * file needs (unit.c, linked into every test program as
 * tests/unit/libunit.a).
 *
 * check's default (4 s a test) is for a quiet machine: under ASan on a
 * busy 2-core machine a test that takes 0.13 s alone once ran out of it.
 * Every test bounds its work by counts (iterations, inputs, simulated
 * time), never by the clock, so a limit only has to catch a hang and can
 * be generous.  Each test case takes the tier of its slowest test, as
 * measured under ASan on an idle machine, with a margin of about 100x
 * for load.  CK_TIMEOUT_MULTIPLIER still scales them.
 */
#ifndef BC_TEST_UNIT_H
#define BC_TEST_UNIT_H

#include <check.h>

#include "common/util.h"

#define BC_TEST_TIMEOUT		30	/* s: every test under 0.1 s alone
					 * under ASan */
#define BC_TEST_TIMEOUT_SLOW	180	/* s: tests up to 2 s alone under
					 * ASan (mutation loops, forks, sqlite,
					 * real timers) */

/* A test case whose tests may each run timeout seconds. */
static inline TCase *
bc_tcase(const char *name, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	return tc;
}

/* Run suite s (and free it): main's exit status, EXIT_SUCCESS when every
 * test passed, else EXIT_FAILURE. */
int bc_unit_run(Suite *s);

/* sv (initialised here) from the @file text cmd, as bc_args_split_rsp
 * splits it; the test fails if that does not succeed. */
void bc_unit_split_rsp(const char *cmd, struct bc_strv *sv);
/* sv's words joined by single spaces, no quoting, for exact comparisons
 * ("" for an empty vector).  The caller frees it. */
char *bc_unit_join(const struct bc_strv *sv);

#endif
