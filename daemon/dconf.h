/*
 * dconf.h - boltccd's configuration: its command line (one option table
 * drives parsing and --help) and the environment variables it reads,
 * both read once at start into one struct that main passes down.
 * dconf.c is the only file of the daemon that calls getenv() (the
 * client's is client/cconf.c).
 *
 * The environment:
 *   TMPDIR            the scratch dir's default (scratch.h), which also
 *                     holds the compile slots' lock file (server.c)
 *   DISTCCD_PATH      where bare compiler names are looked up (policy.h);
 *   PATH              when DISTCCD_PATH is unset or empty
 *   XDG_CACHE_HOME    the default --cache-dir: $XDG_CACHE_HOME/boltccd,
 *   HOME              else ~/.cache/boltccd (root: /var/cache/boltccd)
 *   LISTEN_PID        systemd socket activation (activate.h)
 *   LISTEN_FDS
 *   LISTEN_FDNAMES
 * The compiler's own environment is the daemon's, with TMPDIR set to the
 * job dir (job.c), not read here.
 */
#ifndef BC_DCONF_H
#define BC_DCONF_H

#include "common/log.h"
#include "common/util.h"
#include "activate.h"
#include "server.h"

struct bc_dconf {
	struct bc_server_conf sc;	/* what the server runs with */

	/* the rest of the command line */
	int mode_set;
	int jobs_set, queue_set;
	char *log_file;			/* --log-file */
	int log_stderr;			/* --log-stderr */
	enum bc_log_level level;	/* --log-level */
	int allow_given;		/* --allow (else loopback only) */
	int no_cache;			/* --no-cache */
	int cache_check;		/* --cache-check */
	char *tmp_dir;			/* --tmp-dir, or NULL */
	int cache_dir_given;		/* --cache-dir */
	int self_test;			/* --self-test */
	char *self_test_cc;		/* --self-test-compiler */
	struct bc_strv allow_compiler;	/* --allow-compiler as given */
	const char *admin_op;	/* --zero-stats, --cache-admin OP */
	const char *admin_value;	/* its SIZE or AGE */
	int admin_need_value;

	/* the environment (NULL: unset) */
	char *tmpdir;			/* TMPDIR */
	char *compiler_path;		/* DISTCCD_PATH, else PATH */
	char *xdg_cache_home;		/* XDG_CACHE_HOME */
	char *home;			/* HOME */
	struct bc_activate_env activation;	/* LISTEN_* */
};

/*
 * Defaults, the environment, then the command line (argv[1..]) and what
 * follows from it (--queue's and --cache-dir's defaults).  --help and
 * --version print and exit.  BC_OK, or BC_ERR_INVAL with err naming the
 * option; d is to be freed either way.
 */
int bc_dconf_load(struct bc_dconf *d, int argc, char **argv, char *err);
void bc_dconf_free(struct bc_dconf *d);

/* The default --cache-dir for uid from XDG_CACHE_HOME's and HOME's
 * values (NULL: unset), malloc'd, or NULL when there is none. */
char *bc_dconf_default_cache_dir(unsigned long uid, const char *xdg,
    const char *home);

#endif
