/*
 * ident.c - the daemon's compiler identities for its stats (ident.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cache/key.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/ident.h"

#define IDENT_TIMEOUT_MS	10000
#define IDENT_MAX_OUT		4096

static void
copy_clean(char *dst, size_t dstlen, const char *src, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && src[i] != '\n' && src[i] != '\0' &&
	    k + 1 < dstlen; i++) {
		unsigned char c = (unsigned char)src[i];

		if (c == '\r')
			continue;
		dst[k++] = (c < 0x20 || c > 0x7e || c == '"' || c == '\\') ?
		    '_' : (char)c;
	}
	while (k > 0 && dst[k - 1] == ' ')
		k--;
	dst[k] = '\0';
}

/* stdout of argv, at most IDENT_MAX_OUT bytes; length or -1. */
static ssize_t
run_capture(char *const argv[], char *buf, size_t buflen)
{
	return bc_io_run_capture(argv[0], argv, "C", IDENT_TIMEOUT_MS, buf,
	    buflen);
}

void
bc_ident_first_line(char *const argv[], char *out, size_t outlen)
{
	char buf[IDENT_MAX_OUT];
	ssize_t n = run_capture(argv, buf, sizeof(buf));

	out[0] = '\0';
	if (n > 0)
		copy_clean(out, outlen, buf, (size_t)n);
}

static int
is_exec(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static void
add_compiler(struct bc_ident *id, const struct bc_policy *pol,
    const char *name)
{
	char why[BC_ERRLEN], e[BC_ERRLEN], hex[BC_HASH_HEXLEN + 1];
	char *path = NULL, *real;
	size_t i;

	if (id->n >= BC_IDENT_MAX ||
	    bc_policy_resolve(pol, name, &path, why) != BC_OK)
		return;
	real = realpath(path, NULL);
	for (i = 0; i < id->n; i++)
		if (strcmp(id->c[i].path, real != NULL ? real : path) == 0)
			goto out;	/* cc -> gcc: one entry */
	{
		struct bc_ident_compiler *c = &id->c[id->n];
		char *const argv[] = { path, (char *)"--version", NULL };

		copy_clean(c->name, sizeof(c->name), name, strlen(name));
		copy_clean(c->path, sizeof(c->path), real != NULL ? real : path,
		    strlen(real != NULL ? real : path));
		bc_ident_first_line(argv, c->version, sizeof(c->version));
		c->identity[0] = '\0';
		if (bc_cache_identity(path, NULL, hex, e) == BC_OK)
			copy_clean(c->identity, sizeof(c->identity), hex, 16);
		if (c->version[0] != '\0')
			id->n++;
	}
out:
	free(real);
	free(path);
}

static void
xcode_info(struct bc_ident *id)
{
	char line[128];
	char *const xb[] = { (char *)"/usr/bin/xcodebuild", (char *)"-version",
	    NULL };
	char *const sdk[] = { (char *)"/usr/bin/xcrun",
	    (char *)"--show-sdk-build-version", NULL };
	char buf[IDENT_MAX_OUT];
	ssize_t n;

	if (is_exec(xb[0]) && (n = run_capture(xb, buf, sizeof(buf) - 1)) > 0) {
		const char *b;

		buf[n] = '\0';
		copy_clean(id->xcode, sizeof(id->xcode), buf, (size_t)n);
		if ((b = strstr(buf, "Build version ")) != NULL)
			copy_clean(id->xcode_build, sizeof(id->xcode_build),
			    b + 14, strlen(b + 14));
	}
	if (is_exec(sdk[0])) {
		bc_ident_first_line(sdk, line, sizeof(line));
		copy_clean(id->sdk_build, sizeof(id->sdk_build), line,
		    strlen(line));
	}
}

void
bc_ident_collect(struct bc_ident *id, const struct bc_policy *pol)
{
	/* The usual drivers (not every name of a masquerade dir: each
	 * costs a --version run and a hash of the binary) and the
	 * operator's --allow-compiler paths. */
	static const char *const common_names[] = { "cc", "c++", "gcc", "g++",
	    "clang", "clang++", NULL };
	size_t i;

	memset(id, 0, sizeof(*id));
	for (i = 0; common_names[i] != NULL; i++)
		add_compiler(id, pol, common_names[i]);
	for (i = 0; i < pol->paths.n; i++)
		add_compiler(id, pol, pol->paths.v[i]);
	xcode_info(id);
	for (i = 0; i < id->n; i++)
		bc_info("compiler %s: %s (%s)", id->c[i].name,
		    id->c[i].version, id->c[i].path);
	if (id->xcode[0] != '\0')
		bc_info("%s build %s, SDK build %s", id->xcode, id->xcode_build,
		    id->sdk_build[0] != '\0' ? id->sdk_build : "unknown");
}

void
bc_ident_render_json(const struct bc_ident *id, struct bc_jsonw *w)
{
	size_t i;

	bc_jsonw_key(w, "compilers");
	bc_jsonw_arr(w);
	for (i = 0; i < id->n; i++) {
		bc_jsonw_obj(w);
		bc_jsonw_key(w, "name");
		bc_jsonw_str(w, id->c[i].name);
		bc_jsonw_key(w, "path");
		bc_jsonw_str(w, id->c[i].path);
		bc_jsonw_key(w, "version");
		bc_jsonw_str(w, id->c[i].version);
		bc_jsonw_key(w, "identity");
		bc_jsonw_str(w, id->c[i].identity);
		bc_jsonw_obj_end(w);
	}
	bc_jsonw_arr_end(w);
	bc_jsonw_key(w, "xcode");
	bc_jsonw_obj(w);
	bc_jsonw_key(w, "version");
	bc_jsonw_str(w, id->xcode);
	bc_jsonw_key(w, "build");
	bc_jsonw_str(w, id->xcode_build);
	bc_jsonw_key(w, "sdk_build");
	bc_jsonw_str(w, id->sdk_build);
	bc_jsonw_obj_end(w);
}

int
bc_ident_render_metrics(const struct bc_ident *id, struct bc_buf *out)
{
	size_t i;
	int r;

	r = bc_buf_putf(out, "# HELP boltccd_compiler_info Compilers this "
	    "daemon runs (first line of --version).\n"
	    "# TYPE boltccd_compiler_info gauge\n");
	for (i = 0; r == BC_OK && i < id->n; i++)
		r = bc_buf_putf(out, "boltccd_compiler_info{name=\"%s\","
		    "path=\"%s\",version=\"%s\",identity=\"%s\"} 1\n",
		    id->c[i].name, id->c[i].path, id->c[i].version,
		    id->c[i].identity);
	if (r == BC_OK && id->xcode[0] != '\0')
		r = bc_buf_putf(out, "# HELP boltccd_xcode_info Xcode and SDK "
		    "build of this worker.\n# TYPE boltccd_xcode_info gauge\n"
		    "boltccd_xcode_info{version=\"%s\",build=\"%s\","
		    "sdk_build=\"%s\"} 1\n", id->xcode, id->xcode_build,
		    id->sdk_build);
	return r;
}
