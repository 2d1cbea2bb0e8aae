/*
 * jobplan.h - what a worker will run for a plain job: the client's argv
 * scanned and rewritten to the job's private dir (like distccd's scan).
 * Pure: no file is touched, nothing is run; unit-tested in
 * tests/unit/test_jobplan.c.  A pump job's plan comes from
 * bc_pump_job_plan (pump.h), in the same struct.
 */
#ifndef BC_JOBPLAN_H
#define BC_JOBPLAN_H

#include <stddef.h>

#include "common/util.h"

/* Inputs of the argv rewrite besides the argv itself. */
struct bc_jobplan_opts {
	int want_dia;		/* BOLT FLAG WANT_DIA */
	const char *cwd;	/* BOLT CDIR (client cwd) or NULL */
	const char *tmpdir;	/* the job dir (for gcc's prefix map) */
	int is_clang;
};

/* What the daemon will run, relative to the job dir. */
struct bc_jobplan {
	struct bc_strv argv;	/* argv[0] = compiler name as resolved */
	char *src_name;		/* where DOTI goes, e.g. "hello.i" */
	char *out_name;		/* "out.o" or "out.s" */
	char *dia_name;		/* "out.dia" or NULL */
	char *orig_src;		/* client's source argument (not escaped) */
};

void bc_jobplan_init(struct bc_jobplan *plan);
void bc_jobplan_free(struct bc_jobplan *plan);

/*
 * The daemon's argv scan (like distccd's): the argv must compile exactly
 * one source file (-c or -S); -o is replaced by the plan's out_name, the
 * source by src_name (preprocessed extension; -x LANG becomes
 * -x LANG-cpp-output), -M* dependency options are removed (the client made
 * the .d), --serialize-diagnostics is replaced (want_dia) or removed.
 * Debug-path options are appended for BOLT requests (cwd != NULL).
 * argv[0] of the result is name0.  BC_OK or BC_ERR_DENIED with why; on
 * an error plan is empty (bc_jobplan_free need not be called).
 */
int bc_jobplan_argv(char *const *argv, size_t argc, const char *name0,
    const struct bc_jobplan_opts *opts, struct bc_jobplan *plan, char *why);

#endif
