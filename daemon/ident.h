/*
 * ident.h - which compilers this boltccd runs, for its stats: the first
 * line of `COMPILER --version` and the cache identity (cache/key.h) of
 * cc, c++, gcc, g++, clang, clang++ and every --allow-compiler path
 * that resolves (one entry per binary), and on
 * macOS the Xcode version/build (`xcodebuild -version`) and the SDK build
 * (`xcrun --show-sdk-build-version`).  A worker whose clang or SDK build
 * differs from the clients' is visible in /stats.json ("compilers",
 * "xcode") and /metrics (boltccd_compiler_info, boltccd_xcode_info).
 *
 * Collected once at start-up by the parent (bounded output, 10 s per
 * command); the stats renderers only read it.
 */
#ifndef BC_IDENT_H
#define BC_IDENT_H

#include <stddef.h>

#include "common/buf.h"
#include "common/json.h"
#include "daemon/policy.h"

#define BC_IDENT_MAX	16

struct bc_ident_compiler {
	char name[64];		/* as named: "clang", "/opt/x/bin/clang" */
	char path[256];		/* resolved path */
	char version[160];	/* first line of --version, printable */
	char identity[17];	/* first 16 hex of the cache identity or "" */
};

struct bc_ident {
	struct bc_ident_compiler c[BC_IDENT_MAX];
	size_t n;
	char xcode[64];		/* "Xcode 16.2" or "" */
	char xcode_build[32];	/* "16C5032a" or "" */
	char sdk_build[32];	/* "24C94" or "" */
};

void bc_ident_collect(struct bc_ident *id, const struct bc_policy *pol);

/*
 * Run argv (argv[0] an absolute path), return the first line of its
 * stdout in out (printable ASCII only, truncated to outlen-1); "" when
 * it failed.  Used by collect; exposed for the unit test.
 */
void bc_ident_first_line(char *const argv[], char *out, size_t outlen);

/* "compilers":[...],"xcode":{...}: members of the object w is in. */
void bc_ident_render_json(const struct bc_ident *id, struct bc_jsonw *w);
/* Prometheus info metrics. */
int bc_ident_render_metrics(const struct bc_ident *id, struct bc_buf *out);

#endif
