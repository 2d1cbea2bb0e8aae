/*
 * cjob.h - one compile as boltcc sees it: the user's command, its plan
 * (client/args.h), the counters it adds up, its temp files; and what
 * every path of a compile ends in: exec'ing the real compiler here, or
 * writing a remote result out and replaying its messages.
 *
 * client/main.c fills a job and classifies it; client/rjob.c sends it
 * to the farm; client/jobcache.c asks the caches for it.
 */
#ifndef BC_CJOB_H
#define BC_CJOB_H

#include <stdint.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/proto.h"
#include "common/util.h"
#include "cache/key.h"
#include "client/args.h"
#include "client/cconf.h"
#include "client/cstats.h"
#include "client/direct.h"
#include "client/local.h"

/* Everything one compile needs. */
struct bc_cjob {
	struct bc_cconf *cfg;
	struct bc_self self;
	char *compiler_path;		/* the real compiler to exec */
	struct bc_strv exec_argv;	/* the user's argv, for local runs */
	struct bc_strv argv;		/* argv to classify (argv[0] = name) */
	struct bc_plan plan;
	struct bc_cstats stats;
	char *tmpdir;			/* private temp dir, or NULL */
	char *ipath;			/* preprocessed output (save-temps) */
	char *cpp_err_path;		/* preprocessor stderr (save-temps) */
	struct bc_buf cpp_err;		/* preprocessor stderr */
	/* artifact cache (doc/cache.md) */
	int ident_state;		/* 0 not yet, 1 known, -1 failed */
	char ident[BC_HASH_HEXLEN + 1];	/* compiler identity */
	char cache_key[BC_HASH_HEXLEN + 1];	/* "" = not computed */
	char missed_key[BC_HASH_HEXLEN + 1];	/* looked up in vain */
	/* bc_cache_origin of the working directory ("" until
	 * bc_cjob_origin): a hit's ORIG tells whether another checkout
	 * stored the entry */
	char origin[BC_CACHE_ORIGIN_LEN + 1];
	struct bc_direct direct;	/* direct mode manifest */
	int64_t cpp_start;		/* when cpp started (seconds) */
	int binstate;			/* wrote a distccmon record */
};

/* An empty job of configuration cfg; bc_cjob_free releases it. */
void bc_cjob_init(struct bc_cjob *j, struct bc_cconf *cfg);
void bc_cjob_free(struct bc_cjob *j);

/* Append the job's counters to $DIR/stats (once; best effort). */
void bc_cjob_commit_stats(struct bc_cjob *j);
/* distccmon's record of this job: compiling on host (binstate.h). */
void bc_cjob_note_state(struct bc_cjob *j, const char *host, int slot);

/*
 * The working directory's origin (cache/key.h), computed when a cache
 * lookup first needs it: a job that stays local never hashes it.
 */
const char *bc_cjob_origin(struct bc_cjob *j);
/* 1 if the compiler's identity is known (computed, or read from its
 * memo, once; a failure is counted and logged once). */
int bc_cjob_identity(struct bc_cjob *j);

/*
 * Replace this process with the real compiler and the user's argv,
 * counters written and temp files removed first.  Returns only when the
 * exec failed: the exit code.
 */
int bc_cjob_exec_local(struct bc_cjob *j);
/* Run locally because of `reason` (classification or a local-only rule):
 * counted as jobs_local and local_by_reason:<reason>; as exec_local. */
int bc_cjob_run_local(struct bc_cjob *j, const char *reason);
/* Exec the compiler holding a local slot (waits for one, bounded; the
 * lock is held until the compiler exits).  As exec_local. */
int bc_cjob_exec_in_local_slot(struct bc_cjob *j, int localslots);
/* Local compile after the farm failed or was unusable, under a local
 * slot: counted as jobs_local and fallback_by_reason:<reason>. */
int bc_cjob_run_fallback(struct bc_cjob *j, const char *reason,
    int localslots);

/*
 * Run the preprocessor, its output read through a pipe into doti and its
 * stderr into j->cpp_err (no temp files: DISTCC_SAVE_TEMPS writes them
 * to a kept temp dir afterwards).  Its wait status goes to *st.
 */
int bc_cjob_preprocess(struct bc_cjob *j, struct bc_buf *doti, int *st,
    char *err);

/* Write the object (and .dia) of a successful remote compile or hit. */
int bc_cjob_write_outputs(struct bc_cjob *j, const struct bc_reply *rep,
    char *err);
/* Show a remote result's messages: the preprocessor's stderr, then the
 * compiler's stderr and stdout. */
void bc_cjob_replay(const struct bc_cjob *j, const struct bc_reply *rep);
/* Write b to a new file at path, by temp file and rename, with the
 * mode a local compile's output gets (0666 less the umask). */
int bc_cjob_write_file(const char *path, const struct bc_buf *b, char *err);
/* Write b to stderr (messages recorded or received for the user). */
void bc_cjob_put_stderr(const struct bc_buf *b);

#endif
