/*
 * exepath.c - the running executable's path (see exepath.h).
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/osdep.h"
#include "common/util.h"
#include "client/exepath.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static char *
resolved(const char *p)
{
	char buf[PATH_MAX];

	if (p == NULL || realpath(p, buf) == NULL)
		return NULL;
	return xstrdup(buf);
}

/* argv0 on path (PATH's value), as execvp would find it. */
static char *
path_lookup(const char *argv0, const char *path)
{
	const char *p, *e;

	if (path == NULL || *path == '\0')
		return NULL;
	for (p = path; ; p = e + 1) {
		char *cand;

		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		cand = e > p ? xasprintf("%.*s/%s", (int)(e - p), p, argv0) :
		    xasprintf("./%s", argv0);
		if (access(cand, X_OK) == 0) {
			char *r = resolved(cand);

			free(cand);
			return r;
		}
		free(cand);
		if (*e == '\0')
			return NULL;
	}
}

char *
bc_exe_path(const char *argv0, const char *path)
{
	char *p = bc_osdep_exe_path();

	if (p != NULL)
		return p;
	if (argv0 == NULL || *argv0 == '\0')
		return NULL;
	if (strchr(argv0, '/') != NULL)
		return resolved(argv0);
	return path_lookup(argv0, path);
}
