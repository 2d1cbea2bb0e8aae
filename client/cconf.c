/*
 * cconf.c - read the client's environment once.
 *
 * distcc's variables keep their meaning (spec distcc-protocol.md 8.8):
 * booleans accept only 0/1 (anything else = default, with a warning),
 * DISTCC_SKIP_LOCAL_RETRY is a presence test, DISTCC_IO_TIMEOUT <= 0 is
 * an error.  Unlike distcc, a missing explicitly-set state dir is an
 * error that says so, not a silent local build.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/hosts.h"
#include "common/limits.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/cfgfile.h"
#include "client/hitcache.h"

#define DEFAULT_BACKOFF 60
#define DEFAULT_IO_TIMEOUT 300
#define SYSTEM_HOSTS_FILE "/etc/distcc/hosts"

const char *const bc_cppenv_names[BC_CPPENV_N] = {
	"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
	"OBJCPLUS_INCLUDE_PATH", "SOURCE_DATE_EPOCH", "GCC_EXEC_PREFIX",
	"COMPILER_PATH", "SDKROOT", "MACOSX_DEPLOYMENT_TARGET",
	"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"
};

/* A copy of the variable's value, or NULL when unset (or, with
 * nonempty, empty). */
static char *
env_dup(const char *name, int nonempty)
{
	const char *v = getenv(name);

	if (v == NULL || (nonempty && *v == '\0'))
		return NULL;
	return xstrdup(v);
}

static void
set_error(struct bc_cconf *c, int code, char *msg)
{
	if (c->error != NULL) {	/* keep the first */
		free(msg);
		return;
	}
	c->error = msg;
	c->error_exit = code;
}

static int
env_bool(struct bc_cconf *c, const char *name, int def)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0')
		return def;
	if (strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "1") == 0)
		return 1;
	bc_strv_push_owned(&c->warnings, xasprintf("%s='%s' is not 0 or 1; "
	    "using the default (%d)", name, v, def));
	return def;
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void
load_dir(struct bc_cconf *c)
{
	const char *v;
	char err[BC_ERRLEN];

	if ((v = getenv("BOLTCC_DIR")) != NULL && *v != '\0')
		c->dir_var = "BOLTCC_DIR";
	else if ((v = getenv("DISTCC_DIR")) != NULL && *v != '\0')
		c->dir_var = "DISTCC_DIR";
	if (c->dir_var != NULL) {
		c->dir = xstrdup(v);
		c->dir_ok = is_dir(c->dir);
		if (!c->dir_ok)
			set_error(c, BC_EXIT_BAD_ARGUMENTS, xasprintf(
			    "%s=%s does not exist or is not a directory; "
			    "create it or unset %s", c->dir_var, c->dir,
			    c->dir_var));
	} else {
		const char *home = getenv("HOME");

		if (home == NULL || *home == '\0') {
			/* Xcode runs -cc1 jobs with an empty environment. */
			struct passwd *pw = getpwuid(getuid());

			home = pw != NULL && pw->pw_dir != NULL ?
			    pw->pw_dir : "/tmp";
		}
		c->dir = xasprintf("%s/.boltcc", home);
		c->dir_ok = bc_mkdir_p(c->dir, 0700, err) == BC_OK;
		if (!c->dir_ok)
			set_error(c, BC_EXIT_IO_ERROR, xasprintf(
			    "cannot create %s: %s", c->dir, err));
	}
	c->lockdir = xasprintf("%s/lock", c->dir);
	c->statedir = xasprintf("%s/state", c->dir);
	c->hitdir = xasprintf("%s/hits", c->dir);
}

static int
read_text(const char *path, char **out)
{
	struct bc_buf b;
	int r;

	*out = NULL;
	bc_buf_init(&b, BC_MAX_HOSTLIST_LEN);
	r = bc_read_file(path, BC_MAX_HOSTLIST_LEN, &b, NULL);
	if (r == BC_OK) {
		size_t n = bc_buf_len(&b);
		char *s = xmalloc(n + 1);

		if (n > 0)
			memcpy(s, bc_buf_data(&b), n);
		s[n] = '\0';
		*out = s;
	}
	bc_buf_free(&b);
	return r;
}

static void
load_hosts(struct bc_cconf *c)
{
	const char *v;
	char *path;

	/* An empty BOLTCC_HOSTS counts as unset, as an empty BOLTCC_DIR
	 * does, so it cannot hide DISTCC_HOSTS. */
	if ((v = getenv("BOLTCC_HOSTS")) != NULL && v[0] != '\0') {
		c->hosts_text = xstrdup(v);
		c->hosts_origin = xstrdup("BOLTCC_HOSTS");
		c->hosts_boltopts = 1;
		return;
	}
	if ((v = getenv("DISTCC_HOSTS")) != NULL) {
		c->hosts_text = xstrdup(v);
		c->hosts_origin = xstrdup("DISTCC_HOSTS");
		return;
	}
	if (c->dir_ok) {
		path = xasprintf("%s/hosts", c->dir);
		if (read_text(path, &c->hosts_text) == BC_OK) {
			c->hosts_origin = path;
			/* A boltcc state dir is boltcc's own: its options are
			 * fine there; a DISTCC_DIR is shared with distcc. */
			c->hosts_boltopts = c->dir_var == NULL ||
			    strcmp(c->dir_var, "BOLTCC_DIR") == 0;
			return;
		}
		free(path);
	}
	if (read_text(SYSTEM_HOSTS_FILE, &c->hosts_text) == BC_OK)
		c->hosts_origin = xstrdup(SYSTEM_HOSTS_FILE);
}

static int
env_int(struct bc_cconf *c, const char *name, long long min, long long max,
    int def, int *bad)
{
	const char *v = getenv(name);
	long long x;

	*bad = 0;
	if (v == NULL || *v == '\0')
		return def;
	if (bc_parse_int(v, min, max, &x) != BC_OK) {
		*bad = 1;
		bc_strv_push_owned(&c->warnings, xasprintf("%s='%s' is not a "
		    "number in [%lld, %lld]", name, v, min, max));
		return def;
	}
	return (int)x;
}

/* A size (500M, 2G, 0 = off); a bad one is warned about, def used. */
static uint64_t
env_size(struct bc_cconf *c, const char *name, uint64_t def)
{
	const char *v = getenv(name);
	uint64_t x;

	if (v == NULL || *v == '\0')
		return def;
	if (bc_parse_size(v, 0, &x) != BC_OK) {
		bc_strv_push_owned(&c->warnings, xasprintf("%s='%s' is not a "
		    "size like 500M or 2G (0: off); using the default", name,
		    v));
		return def;
	}
	return x;
}

void
bc_cconf_load(struct bc_cconf *c)
{
	const char *v;
	char cwd[4096];
	long long x;
	size_t i;
	int bad;

	memset(c, 0, sizeof(*c));
	bc_strv_init(&c->warnings);
	/* The file first: it only sets what the environment does not. */
	bc_cfgfile_apply(getenv("BOLTCC_CONFIG"), getenv("XDG_CONFIG_HOME"),
	    getenv("HOME"), &c->warnings, &c->config_file);

	c->safeguard = getenv("_DISTCC_SAFEGUARD") != NULL ||
	    getenv("BOLTCC_SAFEGUARD") != NULL;
	v = getenv("PATH");
	c->path_set = v != NULL;
	c->path_env = xstrdup(v != NULL ? v : "/usr/local/bin:/usr/bin:/bin");
	if (getcwd(cwd, sizeof(cwd)) != NULL)
		c->cwd = xstrdup(cwd);

	c->verbose = env_bool(c, "DISTCC_VERBOSE", 0);
	v = getenv("DISTCC_LOG");
	if (v != NULL && *v != '\0')
		c->log_file = xstrdup(v);
	c->fallback = env_bool(c, "DISTCC_FALLBACK", 1);
	c->save_temps = env_bool(c, "DISTCC_SAVE_TEMPS", 0);
	c->skip_local_retry = getenv("DISTCC_SKIP_LOCAL_RETRY") != NULL;
	c->backoff_period = env_int(c, "DISTCC_BACKOFF_PERIOD", 0, 86400 * 365,
	    DEFAULT_BACKOFF, &bad);
	c->io_timeout = env_int(c, "DISTCC_IO_TIMEOUT", -1000000000LL,
	    86400 * 7, DEFAULT_IO_TIMEOUT, &bad);
	if (bad || c->io_timeout <= 0) {
		set_error(c, BC_EXIT_BAD_ARGUMENTS, xasprintf(
		    "DISTCC_IO_TIMEOUT must be a positive number of seconds"));
		c->io_timeout = DEFAULT_IO_TIMEOUT;
	}
	c->stats_port = env_int(c, "BOLTCC_STATS_PORT", 1, 65535, 0, &bad);
	c->cache = env_bool(c, "BOLTCC_CACHE", 1);
	c->local_cache_size = env_size(c, "BOLTCC_LOCAL_CACHE_SIZE",
	    BC_HITCACHE_DEFAULT_SIZE);
	c->pump = env_bool(c, "BOLTCC_PUMP", 1);
	c->plain_debug = env_bool(c, "BOLTCC_PLAIN_DEBUG", -1);

	c->home = env_dup("HOME", 0);
	c->user = env_dup("USER", 0);
	c->ssh_agent = env_dup("SSH_AUTH_SOCK", 1);
	c->ssh_key = env_dup("BOLTCC_SSH_KEY", 1);
	c->ssh_idle = -1;	/* a bad value is ignored, as it always was */
	if ((v = getenv("BOLTCC_SSH_IDLE")) != NULL &&
	    bc_parse_int(v, 0, 86400, &x) == BC_OK)
		c->ssh_idle = (int)x;
	c->ssh_reuse_wait = -1;
	if ((v = getenv("BOLTCC_SSH_REUSE_WAIT")) != NULL &&
	    bc_parse_int(v, 0, 600000, &x) == BC_OK)
		c->ssh_reuse_wait = (int)x;
	c->ssh_helper_log = env_dup("BOLTCC_SSH_HELPER_LOG", 1);
	c->developer_dir = env_dup("DEVELOPER_DIR", 1);
	c->tmpdir = env_dup("TMPDIR", 0);
	for (i = 0; i < BC_CPPENV_N; i++)
		c->cpp_env[i] = env_dup(bc_cppenv_names[i], 0);

	load_dir(c);
	load_hosts(c);
}

void
bc_cconf_free(struct bc_cconf *c)
{
	size_t i;

	free(c->dir);
	free(c->lockdir);
	free(c->statedir);
	free(c->hitdir);
	free(c->hosts_text);
	free(c->hosts_origin);
	free(c->log_file);
	free(c->path_env);
	free(c->cwd);
	free(c->config_file);
	free(c->home);
	free(c->user);
	free(c->ssh_agent);
	free(c->ssh_key);
	free(c->ssh_helper_log);
	free(c->developer_dir);
	free(c->tmpdir);
	for (i = 0; i < BC_CPPENV_N; i++)
		free(c->cpp_env[i]);
	free(c->error);
	bc_strv_free(&c->warnings);
	memset(c, 0, sizeof(*c));
}

int
bc_cconf_cpath_env(const struct bc_cconf *c)
{
	return c->cpp_env[BC_CPPENV_CPATH] != NULL ||
	    c->cpp_env[BC_CPPENV_C_INCLUDE_PATH] != NULL ||
	    c->cpp_env[BC_CPPENV_CPLUS_INCLUDE_PATH] != NULL ||
	    c->cpp_env[BC_CPPENV_OBJC_INCLUDE_PATH] != NULL;
}

int
bc_cconf_deps_env(const struct bc_cconf *c)
{
	return c->cpp_env[BC_CPPENV_DEPENDENCIES_OUTPUT] != NULL ||
	    c->cpp_env[BC_CPPENV_SUNPRO_DEPENDENCIES] != NULL;
}

int
bc_cconf_make_dirs(const struct bc_cconf *c, char *err)
{
	int r;

	if (!c->dir_ok)
		return bc_seterr(err, BC_ERR_NOENT, "%s does not exist", c->dir);
	r = bc_mkdir_p(c->lockdir, 0700, err);
	if (r == BC_OK)
		r = bc_mkdir_p(c->statedir, 0700, err);
	return r;
}

/* 1 if the host list text s holds only blanks and comments. */
static int
hosts_text_empty(const char *s)
{
	while (*s != '\0') {
		if (*s == '#') {
			while (*s != '\0' && *s != '\n')
				s++;
			continue;
		}
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return 0;
		s++;
	}
	return 1;
}

int
bc_cconf_hosts(const struct bc_cconf *c, struct bc_hostlist *hl, char *err)
{
	memset(hl, 0, sizeof(*hl));
	if (c->hosts_text == NULL || hosts_text_empty(c->hosts_text))
		return bc_seterr(err, BC_ERR_NOENT, "no hosts configured");
	if (bc_hosts_parse(c->hosts_text, c->hosts_boltopts, hl, err) != BC_OK)
		return BC_ERR_HOSTSPEC;
	return BC_OK;
}

int
bc_cconf_stats_port(const struct bc_cconf *c, const struct bc_host *h)
{
	if (c->stats_port > 0)
		return c->stats_port;
	if (h->port == BC_DEFAULT_PORT)
		return BC_DEFAULT_STATS_PORT;
	return h->port < 65535 ? h->port + 1 : BC_DEFAULT_STATS_PORT;
}
