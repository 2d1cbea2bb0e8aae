/*
 * scan.h - include closure of one translation unit for pump mode.
 *
 * Starting from the source and the -include/-imacros files, follows every
 * include-like directive (whatever the #if around it) through the search
 * model.  Headers found in the compiler's default directories are not
 * shipped and not followed (the server has its own, distcc's rule).
 * Where the result could be wrong the scan stops with BC_ERR_NOTSUP and a
 * static fallback reason: "computed-include", "unreadable-file",
 * "too-many-files", and the reasons of bc_pp_search_build.
 */
#ifndef BC_PP_SCAN_H
#define BC_PP_SCAN_H

#include <stddef.h>
#include "common/util.h"
#include "preproc/memo.h"
#include "preproc/search.h"
#include "common/limits.h"


struct bc_pp_result {
	struct bc_strv files;	/* absolute, normalized client paths */
	struct bc_strv spelled;	/* the path as the compiler would open it */
	int *via_abs;		/* per file: reached through an absolute path */
	struct bc_strv dirs;	/* directories that must exist (absolute) */
	size_t system_hits;	/* includes resolved in default dirs */
	const char *fallback;	/* static reason when BC_ERR_NOTSUP */
};

void bc_pp_result_init(struct bc_pp_result *r);
void bc_pp_result_free(struct bc_pp_result *r);

/* Absolute, lexically normalized form of path (relative to cwd).  Each
 * directory that a ".." steps out of is appended to need_dirs (if not
 * NULL), because the server must have it as a real directory. */
char *bc_pp_abspath(const char *cwd, const char *path,
    struct bc_strv *need_dirs);

/*
 * Scan source (as named on the command line) compiled in cwd with search
 * model s.  memo may be NULL (no memo).  BC_OK, BC_ERR_NOTSUP with
 * res->fallback, or another error.
 */
int bc_pp_scan(const struct bc_pp_search *s, const char *cwd,
    const char *source, struct bc_pp_memo *memo, struct bc_pp_result *res,
    char *err);

#endif
