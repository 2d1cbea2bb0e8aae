/*
 * policy.h - which compilers and which compiler options a client may
 * have the daemon run (the CVE-2004-2687 defence, safe by default).
 *
 * Compiler name (argv[0]): a leading "/usr/bin/" or "/bin/" is dropped
 * (distcc compatibility).  What remains must be either
 *   - an absolute path the operator allowed exactly (--allow-compiler
 *     /abs/path), or
 *   - a bare name of [A-Za-z0-9._+-] (not "." or "..", not starting with
 *     '-') that is
 *       . a built-in name: cc c++ gcc g++ clang clang++, each optionally
 *         prefixed by a GNU triple "<arch>-<vendor>-<os>[-<env>]-" and
 *         optionally suffixed by a version "-N" or "-N.N", or
 *       . listed in a distcc masquerade dir (/usr/lib/distcc,
 *         /usr/local/lib/distcc), or
 *       . allowed with --allow-compiler NAME.
 * A bare name is then resolved through the daemon's search path to an
 * executable that is not boltcc/distcc itself, and run with execv.
 *
 * Options: anything that loads code into the compiler or makes it run
 * other programs or write files outside its job directory is refused
 * (see bc_policy_check_args).
 */
#ifndef BC_POLICY_H
#define BC_POLICY_H

#include "common/util.h"

struct bc_policy {
	struct bc_strv names;	/* extra allowed bare names */
	struct bc_strv paths;	/* allowed absolute paths */
	char *search_path;	/* PATH used to resolve bare names */
};

void bc_policy_init(struct bc_policy *p);
void bc_policy_free(struct bc_policy *p);

/* --allow-compiler NAME|/abs/path; BC_ERR_INVAL for anything else. */
int bc_policy_allow(struct bc_policy *p, const char *spec, char *err);
/* Add every valid name found in dir (masquerade dir); missing dir is fine.
 * Returns the number of names added. */
int bc_policy_add_dir(struct bc_policy *p, const char *dir);
/* Set the search path (copied); NULL = "/usr/local/bin:/usr/bin:/bin". */
void bc_policy_set_path(struct bc_policy *p, const char *path);

/* 1 if name (no directory) is one of the built-in compiler names. */
int bc_policy_builtin_name(const char *name);

/*
 * Decide whether argv0 may be run, without touching the file system.
 * On BC_OK, *name_out points into argv0 at the name to resolve (bare
 * name) or is argv0 itself (allowed absolute path).  BC_ERR_DENIED with
 * the reason in why (BC_ERRLEN) otherwise.
 */
int bc_policy_check_name(const struct bc_policy *p, const char *argv0,
    const char **name_out, char *why);
/*
 * check_name plus resolution: *path_out (malloc'd) is the program to
 * execv.  BC_ERR_DENIED or BC_ERR_COMPILER (not found) with reason.
 */
int bc_policy_resolve(const struct bc_policy *p, const char *argv0,
    char **path_out, char *why);

/* Refuse dangerous options; BC_OK or BC_ERR_DENIED with reason. */
int bc_policy_check_args(char *const *argv, size_t argc, char *why);

/* 1 if the compiler name (any form) is clang-family (clang, clang++...). */
int bc_policy_is_clang(const char *argv0);

#endif
