/*
 * scratch.h - the daemon's scratch directory: where every job dir (the
 * request, the pump tree, the compiler's outputs and, through TMPDIR,
 * its temporaries) lives while a job runs, and the compile slots' lock
 * file (server.c): every file the daemon makes for a while goes there.
 *
 * Chosen once at start: --tmp-dir, else $TMPDIR, else a writable
 * memory file system (common/osdep.h: /dev/shm on Linux), else /tmp.
 * Job dirs are named boltccd.<uid>.<worker pid>.XXXXXX so the dirs of a
 * worker that died without cleaning up (SIGKILL, OOM killer) can be
 * found and removed by bc_scratch_sweep.
 */
#ifndef BC_SCRATCH_H
#define BC_SCRATCH_H

/* How often the daemon's parent sweeps (besides at start and after a
 * worker died from a signal). */
#define BC_SCRATCH_SWEEP_MS	(5 * 60 * 1000)
/* Deepest directory level a sweep descends to (each level holds an fd);
 * a deeper tree is left in place and logged. */
#define BC_SCRATCH_MAX_DEPTH	256

/* Choose the scratch dir: opt (--tmp-dir; NULL = not given), tmpdir
 * (TMPDIR's value as dconf.h read it; NULL = unset) or the defaults
 * above.  BC_OK, or BC_ERR_INVAL with err when the dir given with
 * --tmp-dir is not an absolute path to a writable directory. */
int bc_scratch_init(const char *opt, const char *tmpdir, char *err);
/* The chosen dir (the defaults without TMPDIR if bc_scratch_init was not
 * called), and where the choice came from ("--tmp-dir", "TMPDIR",
 * "tmpfs", "/tmp").  The daemon's compile slot lock file is there too
 * (server.c). */
const char *bc_scratch_dir(void);
const char *bc_scratch_origin(void);
/* Create this process's job dir "<dir>/boltccd.<uid>.<pid>.XXXXXX", mode
 * 0700; *out is malloc'd. */
int bc_scratch_mkjob(char **out, char *err);
/* 1 if name is a job dir name; its uid and pid in *uid, *pid. */
int bc_scratch_parse_name(const char *name, unsigned long *uid, long *pid);
/* Remove the job dirs directly under dir that belong to this euid and
 * whose worker pid no longer exists; never follows a symlink.  Number
 * removed in *removed (may be NULL).  BC_OK, or BC_ERR_IO if dir could
 * not be read or some stale dir not fully removed (err says which). */
int bc_scratch_sweep(const char *dir, unsigned *removed, char *err);

#endif
