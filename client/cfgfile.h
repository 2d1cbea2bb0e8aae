/*
 * cfgfile.h - the client's configuration file.
 *
 * Xcode does not export build settings to its compile tasks (and runs
 * explicit-module jobs with an empty environment), so boltcc also reads
 * the variables it takes from the environment from a file:
 *
 *   $BOLTCC_CONFIG                     if set (must exist)
 *   $XDG_CONFIG_HOME/boltcc/config     or ~/.config/boltcc/config
 *   /etc/boltcc/config                 when there is no user file
 *
 * Syntax, one setting a line (a shell-compatible subset):
 *
 *   # comment
 *   BOLTCC_HOSTS = 10.0.0.2/8,bolt localhost/2
 *   export DISTCC_IO_TIMEOUT=600
 *   DISTCC_LOG='/tmp/boltcc log'
 *
 * Keys are the client's variables: BOLTCC_* and DISTCC_* (not the
 * recursion guards or BOLTCC_CONFIG) and DEVELOPER_DIR.  A variable set
 * in the environment always wins over the file.
 */
#ifndef BC_CFGFILE_H
#define BC_CFGFILE_H

#include <stddef.h>

#include "common/util.h"

#define BC_CFG_MAX_SIZE		(64 * 1024)	/* bytes of one file */
#define BC_CFG_MAX_LINE		4096		/* bytes of one line */
#define BC_CFG_MAX_ENTRIES	256		/* settings in one file */

#define BC_CFG_SYSTEM_FILE	"/etc/boltcc/config"

/* 1 if the file may set this variable. */
int bc_cfgfile_key_ok(const char *key);
/* 1 if boltcc reads this variable (a key_ok name it does not read is
 * still set, with a warning: a misspelt BOLTCC_HOST does nothing). */
int bc_cfgfile_key_known(const char *key);
/* The known name closest to key (edit distance at most 2), or NULL. */
const char *bc_cfgfile_suggest(const char *key);

/*
 * Parse text (not NUL-terminated, n bytes).  Appends the settings in
 * file order to keys/vals (a key given twice: the last one counts when
 * applied) and one message per ignored line, and per BOLTCC_ or DISTCC_
 * name boltcc does not read, to warnings ("line N: why"; an unknown name
 * with the closest known one when it is near: "line 3: BOLTCC_HOST:
 * unknown setting; did you mean BOLTCC_HOSTS?").
 * Returns BC_OK, or an error (and nothing appended) when the text is
 * larger than BC_CFG_MAX_SIZE or holds a NUL byte.
 */
int bc_cfgfile_parse(const char *text, size_t n, struct bc_strv *keys,
    struct bc_strv *vals, struct bc_strv *warnings, char *err);

/*
 * Which file to read, from the values of BOLTCC_CONFIG, XDG_CONFIG_HOME
 * and HOME (each may be NULL) and the system file name: candidates in
 * order (the first that exists is read).  *explicit_ is 1 when
 * BOLTCC_CONFIG named the only candidate.  Appends malloc'd strings.
 */
void bc_cfgfile_candidates(const char *boltcc_config, const char *xdg,
    const char *home, const char *system_file, struct bc_strv *out,
    int *explicit_);

/*
 * Find, read and apply the configuration file: every setting whose
 * variable is not already in the environment is setenv()'d.  The file
 * is found from the values of BOLTCC_CONFIG, XDG_CONFIG_HOME and HOME
 * (cconf.c reads them; each may be NULL; no HOME: the user database's).
 * Problems (unreadable explicit file, bad lines) become warnings.
 * *path_out is the file read (malloc'd) or NULL.
 */
void bc_cfgfile_apply(const char *boltcc_config, const char *xdg,
    const char *home, struct bc_strv *warnings, char **path_out);

#endif
