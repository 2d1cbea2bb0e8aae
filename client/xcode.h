/*
 * xcode.h - which clang to run when boltcc is Xcode's CC (or a
 * masquerade link named clang/cc): the clang of the Xcode that is
 * building, never the /usr/bin shim and never boltcc itself.
 *
 * With C_COMPILER_LAUNCHER=boltcc, Xcode passes the absolute path of its
 * own clang as argv[1]: that path is used exactly and this module is not
 * involved.  For a bare compiler name of the clang family (clang,
 * clang++, cc, c++, gcc, g++) the Developer directory is taken from, in
 * order:
 *
 *   1. $DEVELOPER_DIR (Xcode sets it for its build tasks; an .app path or
 *      its Contents/Developer),
 *   2. the -isysroot SDK, which lies inside the Developer directory of the
 *      Xcode that is building (…/Contents/Developer/Platforms/… or
 *      /Library/Developer/CommandLineTools/SDKs/…),
 *   3. `xcrun -f clang` (honours xcode-select and TOOLCHAINS), only where
 *      xcrun exists (macOS),
 *
 * and the compiler is Toolchains/XcodeDefault.xctoolchain/usr/bin/<tool>
 * or usr/bin/<tool> (Command Line Tools) below it.  Without any of these
 * (Linux, a plain gcc build) the caller searches PATH as usual.
 */
#ifndef BC_XCODE_H
#define BC_XCODE_H

#include "common/util.h"
#include "client/local.h"

struct bc_xcode_env {
	const char *developer_dir;	/* $DEVELOPER_DIR or NULL */
	const char *xcrun;		/* xcrun to ask, or NULL = don't */
};

/* From DEVELOPER_DIR's value (developer_dir, NULL or "": unset; the
 * client's configuration has it) and the platform (xcrun only if it
 * exists). */
void bc_xcode_env_default(struct bc_xcode_env *env,
    const char *developer_dir);

/* "clang" or "clang++" for a clang-family driver name, else NULL. */
const char *bc_xcode_tool_for(const char *name);

/*
 * The Developer directory an SDK path lies in (malloc'd), or NULL:
 * "/X.app/Contents/Developer/Platforms/P/Developer/SDKs/S.sdk" gives
 * "/X.app/Contents/Developer"; "/Library/Developer/CommandLineTools/SDKs/
 * S.sdk" gives "/Library/Developer/CommandLineTools".
 */
char *bc_xcode_devdir_of_sysroot(const char *sysroot);

/* The -isysroot value of an (expanded) argv, or NULL (not a copy). */
const char *bc_xcode_sysroot_arg(const struct bc_strv *argv);

/*
 * The compiler for argv->v[0] (a bare name) as described above.  BC_OK
 * with *out malloc'd and *how a static description ("DEVELOPER_DIR",
 * "-isysroot", "xcrun"); BC_ERR_NOENT when this is not an Xcode build or
 * none of the candidates exists (err says which were tried).
 */
int bc_xcode_find_compiler(const struct bc_self *self,
    const struct bc_strv *argv, const struct bc_xcode_env *env, char **out,
    const char **how, char *err);

/*
 * What main() calls for every invocation: bc_xcode_find_compiler() with
 * the environment's settings (developer_dir: DEVELOPER_DIR's value, or
 * NULL), logged.  BC_ERR_NOENT = search PATH.
 */
int bc_xcode_resolve(const struct bc_self *self, const struct bc_strv *argv,
    const char *developer_dir, char **out);

#endif
