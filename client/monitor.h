/*
 * monitor.h - the farm as it is now, for boltcc --monitor.
 *
 * bc_monitor_sample() asks every TCP host of the host list for its
 * /stats.json (boltccd) or its text page (distccd) and reads this
 * client's backoff marks; the result is a bc_farm snapshot that the
 * terminal view (bc_monitor_render), the web page (monweb.c) and
 * --monitor --once all show.
 */
#ifndef BC_MONITOR_H
#define BC_MONITOR_H

#include <stddef.h>
#include <time.h>

#include "client/cconf.h"
#include "common/buf.h"
#include "common/hosts.h"

#define BC_MON_HISTORY 90	/* points of a host's history (10 s each) */

enum bc_mon_state {
	BC_MON_UP = 0,		/* boltccd answered */
	BC_MON_DISTCCD,		/* a distccd answered (no job list) */
	BC_MON_DOWN,		/* no answer from its stats port */
	BC_MON_BACKOFF,		/* this client backs off from it */
	BC_MON_NOSTATS,		/* an SSH host: no stats port to ask */
};

struct bc_mon_job {
	char state[16];		/* reading, queued, compiling, sending */
	char mode[16];
	char client[64];
	char compiler[64];
	char file[128];		/* UTF-8 */
	double secs;
};

struct bc_mon_host {
	char spec[128];
	int state;		/* enum bc_mon_state */
	int reachable;		/* its stats page answered */
	char why[160];		/* DOWN, BACKOFF: the reason */
	time_t backoff_until;
	int slots, running, queued;
	double done;		/* compiles finished since start */
	double jobs_per_sec;	/* last minute */
	int cache;		/* has a cache */
	double hits, misses, saved_s, entries, bytes;
	double hist_done[BC_MON_HISTORY];
	double hist_hits[BC_MON_HISTORY];
	double hist_misses[BC_MON_HISTORY];
	int step_s;		/* seconds per history point, 0 none */
	struct bc_mon_job *job;
	size_t njob;
};

/* A job of this machine's boltcc (or distcc) processes, from their
 * state files (binstate.h). */
struct bc_mon_mine {
	long pid;
	char file[128];
	char host[128];
};

struct bc_farm {
	struct bc_mon_host *host;
	size_t n;
	struct bc_mon_mine *mine;
	size_t nmine;
	time_t at;
};

/* A snapshot of every host of hl. */
void bc_monitor_sample(const struct bc_cconf *cfg,
    const struct bc_hostlist *hl, struct bc_farm *farm);
void bc_farm_free(struct bc_farm *farm);
/* Fill host from a boltccd's /stats.json body (BC_OK or a parse error). */
int bc_monitor_parse_json(struct bc_mon_host *host, const void *p, size_t n,
    char *err);

/* The view as lines of at most width columns (at most height lines,
 * 0 = no limit), each ending in '\n'. */
int bc_monitor_render(const struct bc_farm *farm, int width, int height,
    struct bc_buf *out);
/* The snapshot as JSON, for the web page. */
int bc_monitor_render_json(const struct bc_farm *farm, struct bc_buf *out);

/* boltcc --monitor [--once] [--web [ADDR:]PORT] (the words after
 * --monitor): the exit status. */
int bc_monitor_main(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    int argc, char **argv);
/* 1 once a signal or q asked the monitor to stop. */
int bc_monitor_stopped(void);
/* The path of a GET request line (monweb.c): 0, or -1 with the HTTP
 * status of the refusal (400, 405) in *status. */
int bc_monweb_request_path(const char *req, size_t n, char *path,
    size_t len, int *status);
/* The web page's server (monweb.c); returns the exit status. */
int bc_monweb_serve(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    const char *addr, int port);

#endif
