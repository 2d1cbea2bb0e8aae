/*
 * direct.h - the client's direct mode for the artifact cache: remember,
 * per compile command, which files the preprocessor read and their
 * content hashes, plus the cache key that came out.  Next time, if every
 * one of those files still has the same content, the key is known
 * without running the preprocessor, and a farm lookup is the whole job.
 *
 * A manifest lives in $DIR/state/direct/<ab>/<mkey>, where mkey is a
 * SHA-256 over the compiler identity, the working directory (only when
 * the argv enables debug info, as in the cache key), the preprocessor and
 * remote argv, and the environment variables that steer the
 * preprocessor.  Relative file names recorded are resolved again in the
 * directory a later command runs in, so their contents are what is
 * checked.  The files come from the line markers of the .i.  No
 * manifest is written when a file is younger than 2 seconds (it may still
 * change within the mtime granularity), cannot be read, or uses __DATE__,
 * __TIME__ or __TIMESTAMP__.  See doc/cache.md ("Direct mode").
 */
#ifndef BC_DIRECT_H
#define BC_DIRECT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/util.h"
#include "common/limits.h"


struct bc_direct {
	char mkey[BC_HASH_HEXLEN + 1];
	char *path;		/* manifest file; NULL = direct mode off */
};

/* Compute the manifest key and path (statedir NULL = off); cpp_env:
 * the values of the preprocessor's environment in enum bc_cppenv order
 * (cconf.h: NULL = unset; cpp_env NULL: all unset), hashed in. */
void bc_direct_init(struct bc_direct *d, const char *statedir,
    const char *identity, const char *cwd, const struct bc_strv *cpp_argv,
    const struct bc_strv *remote_argv, char *const *cpp_env);
void bc_direct_free(struct bc_direct *d);

/*
 * BC_OK: every recorded file is unchanged; key, the .d the preprocessor
 * wrote (dotd, may be empty) and its stderr (cpperr) are filled.
 * BC_ERR_NOENT: no manifest or something changed.
 */
int bc_direct_get(const struct bc_direct *d, char key[BC_HASH_HEXLEN + 1],
    struct bc_buf *dotd, struct bc_buf *cpperr);

/* Record a manifest for key from the .i's line markers (relative names
 * resolve against the current directory).  start_sec: when the
 * preprocessor started (files newer than start_sec - 2 are refused). */
int bc_direct_put(const struct bc_direct *d, const char *key,
    const uint8_t *doti, size_t n, const struct bc_buf *dotd,
    const struct bc_buf *cpperr, int64_t start_sec, char *err);

/* The distinct file names of the line markers of a .i, in order of
 * appearance (pseudo names like <built-in> and directories skipped). */
void bc_direct_markers(const uint8_t *doti, size_t n, struct bc_strv *out);

#endif
