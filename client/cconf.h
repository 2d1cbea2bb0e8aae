/*
 * cconf.h - the client's configuration, read from the environment once
 * at start-up into one struct that is passed around: cconf.c is the only
 * file of the client that calls getenv() (the daemon's is daemon/dconf.c;
 * common/ and preproc/ take what they need as parameters).
 *
 * Problems that only matter when a job would be distributed (a missing
 * explicitly-set state directory, a bad DISTCC_IO_TIMEOUT) are recorded
 * in `error` instead of failing the load, so local-only jobs still run.
 */
#ifndef BC_CCONF_H
#define BC_CCONF_H

#include <stdint.h>

#include "common/util.h"

/*
 * The environment variables that change what the compiler's
 * preprocessor reads or writes: direct mode hashes all of them
 * (client/direct.c), pump mode falls back when the include-path ones
 * (preproc/search.c) or the dependency-output ones (client/pump.c) are
 * set.
 */
enum bc_cppenv {
	BC_CPPENV_CPATH, BC_CPPENV_C_INCLUDE_PATH, BC_CPPENV_CPLUS_INCLUDE_PATH,
	BC_CPPENV_OBJC_INCLUDE_PATH, BC_CPPENV_OBJCPLUS_INCLUDE_PATH,
	BC_CPPENV_SOURCE_DATE_EPOCH, BC_CPPENV_GCC_EXEC_PREFIX,
	BC_CPPENV_COMPILER_PATH, BC_CPPENV_SDKROOT,
	BC_CPPENV_MACOSX_DEPLOYMENT_TARGET, BC_CPPENV_DEPENDENCIES_OUTPUT,
	BC_CPPENV_SUNPRO_DEPENDENCIES,
	BC_CPPENV_N
};
/* Their names, in enum order. */
extern const char *const bc_cppenv_names[BC_CPPENV_N];

struct bc_cconf {
	char *dir;		/* state dir ($BOLTCC_DIR, $DISTCC_DIR, ~/.boltcc) */
	const char *dir_var;	/* env var that named it, or NULL (default) */
	int dir_ok;		/* exists (or was created) as a directory */
	char *lockdir;		/* dir/lock */
	char *statedir;		/* dir/state */
	char *hitdir;		/* dir/hits: the local tier (hitcache.h) */

	char *hosts_text;	/* NULL = no host list anywhere */
	char *hosts_origin;	/* "BOLTCC_HOSTS", a file name, ... */
	int hosts_boltopts;	/* boltcc host options allowed */

	int fallback;		/* DISTCC_FALLBACK (default 1) */
	int skip_local_retry;	/* DISTCC_SKIP_LOCAL_RETRY present */
	int backoff_period;	/* DISTCC_BACKOFF_PERIOD seconds (60) */
	int io_timeout;		/* DISTCC_IO_TIMEOUT seconds (300) */
	int verbose;		/* DISTCC_VERBOSE */
	char *log_file;		/* DISTCC_LOG or NULL */
	int save_temps;		/* DISTCC_SAVE_TEMPS */
	int stats_port;		/* BOLTCC_STATS_PORT or 0 = by convention */
	int cache;		/* BOLTCC_CACHE (default 1): ask the hosts'
				 * artifact caches (doc/cache.md) */
	uint64_t local_cache_size;	/* BOLTCC_LOCAL_CACHE_SIZE (512M; 0:
				 * no local tier, client/hitcache.h) */
	int pump;		/* BOLTCC_PUMP (default 1): BOLT pump toward
				 * boltccd hosts not written ,plain */
	int plain_debug;	/* BOLTCC_PLAIN_DEBUG: 1 lets any job with
				 * debug info go out in plain mode, whose
				 * line table can differ from a local
				 * compile's (doc/fidelity.md); 0 or unset
				 * (-1): never */
	int safeguard;		/* started with _DISTCC_SAFEGUARD/BOLTCC_SAFEGUARD */
	char *path_env;		/* PATH (a default if unset) */
	int path_set;		/* PATH was set in the environment */
	char *cwd;		/* current directory, or NULL */
	char *config_file;	/* configuration file read (cfgfile.h), or NULL */

	/* The rest of the environment, for the modules that use it; NULL:
	 * unset (an empty value kept where the module told it apart). */
	char *home;		/* HOME (client/sshclient.c) */
	char *user;		/* USER */
	char *ssh_agent;	/* SSH_AUTH_SOCK, NULL if empty */
	char *ssh_key;		/* BOLTCC_SSH_KEY, NULL if empty */
	int ssh_idle;		/* BOLTCC_SSH_IDLE seconds, -1: unset or
				 * bad */
	int ssh_reuse_wait;	/* BOLTCC_SSH_REUSE_WAIT ms, -1: unset or
				 * bad */
	char *ssh_helper_log;	/* BOLTCC_SSH_HELPER_LOG, NULL if empty */
	char *developer_dir;	/* DEVELOPER_DIR, NULL if empty (xcode.h) */
	char *tmpdir;		/* TMPDIR (DISTCC_SAVE_TEMPS' directory) */
	char *cpp_env[BC_CPPENV_N];	/* enum bc_cppenv's values */

	char *error;		/* fatal for distributable jobs, or NULL */
	int error_exit;		/* exit code that goes with error */
	struct bc_strv warnings;/* printed once logging is set up */
};

/* Read the environment.  Never fails; see error/warnings. */
void bc_cconf_load(struct bc_cconf *c);
/* 1 if CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH or OBJC_INCLUDE_PATH is
 * set (bc_pp_search_build's cpath_env). */
int bc_cconf_cpath_env(const struct bc_cconf *c);
/* 1 if DEPENDENCIES_OUTPUT or SUNPRO_DEPENDENCIES is set: gcc appends to
 * that file with its own rules (pump mode falls back). */
int bc_cconf_deps_env(const struct bc_cconf *c);
void bc_cconf_free(struct bc_cconf *c);
/* Create dir/lock and dir/state (needs dir_ok).  BC_OK or error. */
int bc_cconf_make_dirs(const struct bc_cconf *c, char *err);
/*
 * The host list into hl (zeroed first; bc_hosts_free releases it).
 * BC_OK; BC_ERR_NOENT when none is configured (no list anywhere, or one
 * of only blanks and comments); BC_ERR_HOSTSPEC with err the parser's
 * message when the list (from c->hosts_origin) is bad.
 */
struct bc_hostlist;
int bc_cconf_hosts(const struct bc_cconf *c, struct bc_hostlist *hl,
    char *err);
/* The stats port of a host: BOLTCC_STATS_PORT, else 3633 for a host on
 * 3632, else the host's port + 1. */
struct bc_host;
int bc_cconf_stats_port(const struct bc_cconf *c, const struct bc_host *h);

#endif
