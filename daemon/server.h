/*
 * server.h - the daemon's listener: one poll() loop over the job and
 * stats sockets, a self-pipe for signals and the workers' event pipe.
 *
 * The parent never parses job data: it accepts, checks --allow, and
 * forks a worker per connection (job.c) while running + queued workers
 * stay below jobs + queue; beyond that the connection is closed and
 * counted as dcc_rej_overload.  Compile slots are fcntl locks on a
 * private file the workers share, so a crashed worker frees its slot.
 * The only peer bytes the parent reads are bounded stats requests.
 */
#ifndef BC_SERVER_H
#define BC_SERVER_H

#include "common/util.h"
#include "acl.h"
#include "job.h"
#include "policy.h"

struct bc_activate_env;

enum bc_run_mode {
	BC_MODE_FOREGROUND = 0,	/* default; --no-detach */
	BC_MODE_DAEMON,		/* --daemon: fork into the background */
	BC_MODE_INETD,		/* --inetd: one connection on fd 0/1 */
	BC_MODE_MUX,		/* --mux: many streams on fd 0/1 (muxd.c) */
};

struct bc_server_conf {
	enum bc_run_mode mode;
	struct bc_strv listen;	/* addresses; empty = all (0.0.0.0 and ::) */
	int port;
	int stats_port;		/* 0 = off */
	struct bc_acl acl;
	struct bc_acl admin_allow;	/* --admin-allow: besides loopback,
					 * who may send admin requests */
	int jobs;
	int queue;
	char *pid_file;
	int grace_sec;		/* SIGTERM: wait this long for workers */
	struct bc_policy policy;
	int io_timeout_sec;
	int job_timeout_sec;
	int request_timeout_sec;
	const char *argv0;	/* shown on the stats page */
	char *cache_dir;	/* artifact cache; NULL = --no-cache */
	uint64_t cache_size;	/* --cache-size in bytes */
	const struct bc_activate_env *activation; /* systemd's LISTEN_*
				 * (dconf.h), or NULL */
};

/* The daemon's listening sockets (job and stats ports). */
#define BC_MAX_LISTENERS 32
struct bc_listeners {
	struct {
		int fd;		/* -1 once closed */
		int is_stats;
		char label[80];	/* "ADDR port N" or "activated fd N" */
	} v[BC_MAX_LISTENERS];
	int n;
};

/* Bind every listener (job and stats) into ls (empty before); BC_OK or
 * BC_ERR_IO with message.  Separate from run so bind errors reach the
 * terminal before --daemon. */
int bc_server_bind(const struct bc_server_conf *conf, struct bc_listeners *ls,
    char *err);
/* Close them (in the children that must not hold them, and at the end). */
void bc_listeners_close(struct bc_listeners *ls);
/* Run the loop on ls until SIGTERM/SIGINT; returns the process exit
 * code. */
int bc_server_run(const struct bc_server_conf *conf, struct bc_listeners *ls);
/* --inetd: serve fd 0/1 once; returns the process exit code. */
int bc_server_inetd(const struct bc_server_conf *conf);
/* The job settings of --inetd and --mux workers (compile slots shared by
 * the user's stdio daemons through a lock file in the scratch dir,
 * scratch.h). */
void bc_server_stdio_jobconf(const struct bc_server_conf *conf,
    struct bc_job_conf *jc);
/* --mux: serve job streams on fd 0/1 (doc/PROTOCOL.md); exit code. */
int bc_server_mux(const struct bc_server_conf *conf);

#endif
