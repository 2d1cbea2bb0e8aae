/*
 * xcode.c - find the clang of the Xcode that is building (see xcode.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/util.h"
#include "client/args.h"
#include "client/xcode.h"

#define XCRUN_PATH	"/usr/bin/xcrun"
#define XCRUN_MAX_OUT	4096

static const char *const toolchain_dirs[] = {
	"Toolchains/XcodeDefault.xctoolchain/usr/bin",	/* Xcode.app */
	"usr/bin",					/* CommandLineTools */
	NULL
};

static int
is_exec_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(p, X_OK) == 0;
}

static int
is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void
bc_xcode_env_default(struct bc_xcode_env *env, const char *developer_dir)
{
	const char *d = developer_dir;

	env->developer_dir = d != NULL && *d != '\0' ? d : NULL;
	env->xcrun = is_exec_file(XCRUN_PATH) ? XCRUN_PATH : NULL;
}

const char *
bc_xcode_tool_for(const char *name)
{
	static const char *const c[] = { "clang", "cc", "gcc", NULL };
	static const char *const cxx[] = { "clang++", "c++", "g++", NULL };
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; c[i] != NULL; i++)
		if (strcmp(name, c[i]) == 0)
			return "clang";
	for (i = 0; cxx[i] != NULL; i++)
		if (strcmp(name, cxx[i]) == 0)
			return "clang++";
	return NULL;
}

char *
bc_xcode_devdir_of_sysroot(const char *sysroot)
{
	static const char *const marks[] = {
		"/Contents/Developer/",
		"/Library/Developer/CommandLineTools/",
		NULL
	};
	size_t i;

	if (sysroot == NULL || sysroot[0] != '/')
		return NULL;
	for (i = 0; marks[i] != NULL; i++) {
		const char *m = strstr(sysroot, marks[i]);

		if (m != NULL) {
			/* up to and without the trailing slash */
			return xstrndup(sysroot, (size_t)(m - sysroot) +
			    strlen(marks[i]) - 1);
		}
	}
	return NULL;
}

const char *
bc_xcode_sysroot_arg(const struct bc_strv *argv)
{
	const char *found = NULL;
	size_t i;

	/* The last one wins, as in the driver. */
	for (i = 1; i < argv->n; i++) {
		const char *a = argv->v[i];

		if (strcmp(a, "-isysroot") == 0 && i + 1 < argv->n)
			found = argv->v[++i];
		else if (strncmp(a, "-isysroot", 9) == 0 && a[9] != '\0')
			found = a + 9;
		else if (strncmp(a, "--sysroot=", 10) == 0)
			found = a + 10;
	}
	return found;
}

/* The compiler below developer dir d, or NULL; appends tried paths. */
static char *
in_devdir(const struct bc_self *self, const char *d, const char *tool,
    struct bc_strv *tried)
{
	char *dev = NULL;
	size_t i;

	/* DEVELOPER_DIR may name the .app itself. */
	if (d == NULL || d[0] != '/')
		return NULL;
	dev = xasprintf("%s/Contents/Developer", d);
	if (!is_dir(dev)) {
		free(dev);
		dev = xstrdup(d);
	}
	for (i = 0; toolchain_dirs[i] != NULL; i++) {
		char *p = xasprintf("%s/%s/%s", dev, toolchain_dirs[i], tool);

		if (is_exec_file(p) && !bc_local_is_self(self, p)) {
			free(dev);
			return p;
		}
		bc_strv_push_owned(tried, p);
	}
	free(dev);
	return NULL;
}

/* `xcrun -f tool`: its one line of output, or NULL. */
static char *
ask_xcrun(const char *xcrun, const char *tool)
{
	char buf[XCRUN_MAX_OUT];
	char *const argv[] = { (char *)"xcrun", (char *)"-f", (char *)tool,
	    NULL };
	ssize_t got;
	size_t n;

	got = bc_io_run_capture(xcrun, argv, NULL, 0, buf, sizeof(buf) - 1);
	if (got < 0 || (size_t)got >= sizeof(buf) - 1)
		return NULL;
	n = (size_t)got;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
	    buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (n == 0 || buf[0] != '/' || memchr(buf, '\n', n) != NULL)
		return NULL;
	return xstrdup(buf);
}

int
bc_xcode_find_compiler(const struct bc_self *self,
    const struct bc_strv *argv, const struct bc_xcode_env *env, char **out,
    const char **how, char *err)
{
	struct bc_strv ex = BC_STRV_INIT, tried = BC_STRV_INIT;
	const char *tool, *sysroot;
	char *dev, *p = NULL, *list;
	char e2[BC_ERRLEN];
	int any = 0;

	*out = NULL;
	*how = NULL;
	if (argv->n == 0 || strchr(argv->v[0], '/') != NULL ||
	    (tool = bc_xcode_tool_for(argv->v[0])) == NULL)
		return bc_seterr(err, BC_ERR_NOENT, "not a clang-family name");

	if (env->developer_dir != NULL) {
		any = 1;
		p = in_devdir(self, env->developer_dir, tool, &tried);
		*how = "DEVELOPER_DIR";
	}
	if (p == NULL) {
		/* -isysroot may sit in an Xcode 16 @file. */
		if (bc_args_expand_rsp(argv, &ex, e2) != BC_OK)
			bc_strv_copy(&ex, argv);
		sysroot = bc_xcode_sysroot_arg(&ex);
		dev = bc_xcode_devdir_of_sysroot(sysroot);
		if (dev != NULL) {
			any = 1;
			p = in_devdir(self, dev, tool, &tried);
			*how = "-isysroot";
			free(dev);
		}
	}
	if (p == NULL && env->xcrun != NULL) {
		any = 1;
		p = ask_xcrun(env->xcrun, tool);
		if (p != NULL && (!is_exec_file(p) || bc_local_is_self(self, p))) {
			bc_strv_push_owned(&tried, p);
			p = NULL;
		}
		*how = "xcrun";
		if (p == NULL)
			bc_strv_push_owned(&tried, xasprintf("xcrun -f %s",
			    tool));
	}
	bc_strv_free(&ex);
	if (p != NULL) {
		bc_strv_free(&tried);
		*out = p;
		return BC_OK;
	}
	*how = NULL;
	if (!any) {
		bc_strv_free(&tried);
		return bc_seterr(err, BC_ERR_NOENT, "not an Xcode build");
	}
	list = bc_strv_join(&tried);
	bc_seterr(err, BC_ERR_NOENT, "no %s of the building Xcode (tried %s)",
	    tool, list);
	free(list);
	bc_strv_free(&tried);
	return BC_ERR_NOENT;
}

int
bc_xcode_resolve(const struct bc_self *self, const struct bc_strv *argv,
    const char *developer_dir, char **out)
{
	struct bc_xcode_env env;
	const char *how;
	char err[BC_ERRLEN];
	int r;

	bc_xcode_env_default(&env, developer_dir);
	r = bc_xcode_find_compiler(self, argv, &env, out, &how, err);
	if (r == BC_OK)
		bc_debug("compiler of the building Xcode (%s): %s", how, *out);
	else if (argv->n > 0 && bc_xcode_tool_for(argv->v[0]) != NULL &&
	    strcmp(err, "not an Xcode build") != 0)
		bc_warn("%s; searching PATH for %s", err, argv->v[0]);
	return r;
}
