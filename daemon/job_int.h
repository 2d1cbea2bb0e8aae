/*
 * job_int.h - what the files of a worker's job share and nothing else
 * includes: the job's state, and each file's functions for the others,
 * grouped by the file that defines them.  The interface is job.h.
 */
#ifndef BC_JOB_INT_H
#define BC_JOB_INT_H

#include <signal.h>
#include <stdint.h>

#include "cache/key.h"
#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/proto.h"
#include "daemon/pumpx.h"
#include "common/proto3x.h"
#include "job.h"

/* One connection in a worker, from its accept to its end (finish). */
struct job {
	const struct bc_job_conf *conf;
	const char *peer;
	int rfd, wfd;
	int watch_rfd;		/* 1 if rfd is a socket: an error = client
				 * gone */
	int client_eof;		/* the client shut down its sending side */
	char gone[BC_ERRLEN];	/* why the client counts as gone */
	/* the limits by name, for messages (bc_job_limit_name) */
	char lim_req[96], lim_job[96], lim_io[96], lim_reply[96];
	int sig_rd;
	int64_t t0;
	int64_t deadline;
	int slot;		/* held slot byte, -1 none */
	char *dir;		/* job temp dir */
	char *pump_root, *pump_cwd;	/* pump: file tree, compile cwd */
	char compiler[64];
	char file[128];		/* escaped, for the log */
	char src[128];		/* the source's base name, for the monitor */
	int mode;		/* enum bc_job_mode */
	int cache_res;		/* enum bc_ev_cache */
	char errhead[512];	/* a failed compile: its stderr's first lines,
				 * escaped, for the log */
	int64_t rss_kb;
	struct bc_cache *cache;	/* open for this job, or NULL */
	char key[BC_HASH_HEXLEN + 1];	/* cache key ("" = none) */
	/* a BOLT pump key across checkouts (cache/pathmap.h): key_mapped,
	 * and the key with the paths as written, used when the outputs name
	 * a mapped prefix after all; key_deferred: a header map's contents
	 * were needed for the key, which waits for the files */
	char key_exact[BC_HASH_HEXLEN + 1];
	int key_mapped, key_deferred, pump_fetched;
	char origin[BC_CACHE_ORIGIN_LEN + 1];	/* the client's directory */
	char identity[BC_HASH_HEXLEN + 1];
	int inflight_fd;	/* held in-flight lock on key, -1 none */
	int miss_pending;	/* a miss not counted yet
				 * (bc_compcache_before) */
	struct bc_io *io;	/* the request's connection */
	int64_t beat_next;	/* FLAG_HEARTBEAT: next BEAT due, 0 off */
	struct bc_proto3x_manifest pm;	/* BOLT pump: the manifest */
	struct bc_pumpx_received received;	/* its files, to store */
	int named;		/* BC_EV_JOB sent (job_named) */
};

#ifndef W_EXITCODE
#define W_EXITCODE(ret, sig) ((ret) << 8 | (sig))
#endif

/* job.c: the worker */

/* Set by SIGTERM: the daemon is going down. */
extern volatile sig_atomic_t bc_job_term;
/* Write all of b to the client within the reply's deadline. */
int bc_job_write_all(struct job *j, const struct bc_buf *b, char *why);

/* jobrun.c: the job's waiting and its compile */

/* FLAG_HEARTBEAT: send BEAT 0 if one is due (j->beat_next); only while
 * no reply byte has been written.  1 if the client is gone. */
int bc_jobrun_beat(struct job *j);
/* Wait up to ms for the client or a signal; 1 if the client is gone
 * (j->gone says why), 0 otherwise.  Sends a BEAT when one is due. */
int bc_jobrun_watch(struct job *j, int ms);
/* Wait for a compile slot: BC_OK held (or no slots configured); else
 * an error with why (SIGTERM, the job's deadline, the client gone). */
int bc_jobrun_take_slot(struct job *j, char *why);
void bc_jobrun_release_slot(struct job *j);
/* Run the compiler at path with argv in the job dir (or the pump tree's
 * cwd) and wait: *status the wait status; returns the outcome (OK,
 * COMPILE_ERROR, TIMEOUT, DISCONNECT, OTHER with why). */
int bc_jobrun_compile(struct job *j, const char *path, char *const *argv,
    int *status, char *why);

/* compcache.c: the artifact cache around a compile (doc/cache.md) */

/* The cache opened for this job (once): BC_OK, or off (no cache dir,
 * or it cannot be used: a warning, once). */
int bc_compcache_open(struct job *j);
/* A BOLT pump job's keys from its manifest (j->key, j->key_exact;
 * j->key_deferred while a header map's contents are missing). */
void bc_compcache_pump_keys(struct job *j, const struct bc_request *req);
/* This daemon's identity of the compiler at path, the request's key.
 * BC_ERR_DENIED (why) if the client named another identity; any other
 * problem only leaves the job uncached (j->key ""). */
int bc_compcache_prepare(struct job *j, const struct bc_request *req,
    const char *path, char *why);
/* Reply with a cached result, in the request's protocol. */
int bc_compcache_send_blob(struct job *j, const struct bc_request *req,
    const struct bc_cache_blob *b, char *why);
/* Wait for the in-flight lock on j->key and take it: BC_OK held,
 * BC_ERR_EOF client gone, another error not held. */
int bc_compcache_take_inflight(struct job *j, char *why);
/* Before compiling: 1 answered from the cache, 0 to compile (holding
 * the in-flight lock when possible), -1 the client went away. */
int bc_compcache_before(struct job *j, const struct bc_request *req,
    char *why);
/* After a compile was replied: store its result (rep's sections). */
void bc_compcache_after(struct job *j, const struct bc_request *req,
    const struct bc_reply *rep, int64_t ms);

#endif
