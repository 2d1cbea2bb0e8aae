/*
 * local.h - running the real compiler on this machine: finding it on
 * PATH without ever finding boltcc itself (masquerade links), exec'ing it
 * in place with the user's argv, and running the preprocessor with its
 * stdout and stderr captured into files.
 */
#ifndef BC_LOCAL_H
#define BC_LOCAL_H

/* What "boltcc itself" resolves to (realpath), to be skipped on PATH. */
struct bc_self {
	char *paths[2];		/* malloc'd realpaths or NULL */
};

/*
 * Fill self from argv[0] (searched on path_env when it has no '/') and,
 * where the OS says so, the running executable.  Never fails: unknown
 * entries stay NULL.  bc_local_self_free() releases them.
 */
void bc_local_self_init(struct bc_self *self, const char *argv0,
    const char *path_env);
void bc_local_self_free(struct bc_self *self);
/* 1 if path resolves to boltcc itself. */
int bc_local_is_self(const struct bc_self *self, const char *path);

/*
 * Find the real compiler.  A name containing '/' is used as is unless it
 * is boltcc itself, in which case its basename is searched on PATH.  The
 * PATH search skips every entry that is boltcc itself (masquerade
 * directories).  *out is malloc'd.  BC_ERR_NOENT with a message if none.
 */
int bc_local_find_compiler(const struct bc_self *self, const char *name,
    const char *path_env, char **out, char *err);

/*
 * PATH without the directories whose entry `name` is boltcc itself, so
 * the real compiler (which may look itself up on PATH, as gcc does with
 * argv[0]) and its children never meet a masquerade link.  malloc'd.
 */
char *bc_local_clean_path(const struct bc_self *self, const char *name,
    const char *path_env);

/* execv(path, argv) in place.  Returns only on failure (BC_ERR_COMPILER). */
int bc_local_exec(const char *path, char *const argv[], char *err);

/*
 * Run path with argv (posix_spawn, SIGPIPE default), its stdout and stderr
 * read through pipes into out and errout (each bounded by its max), and
 * wait.  *status is the raw wait status; a compiler that cannot be started
 * is status 127 with the reason in errout, as a shell would.  More output
 * than out's max is BC_ERR_LIMIT (the child is still waited for); stderr
 * beyond errout's max is dropped.
 */
struct bc_buf;
int bc_local_capture(const char *path, char *const argv[], struct bc_buf *out,
    struct bc_buf *errout, int *status, char *err);

/*
 * fork + execv(path, argv) with stdout to out_fd and stderr to err_fd
 * (each -1 = inherit), and wait.  *status is the raw wait status.
 */
int bc_local_run(const char *path, char *const argv[], int out_fd,
    int err_fd, int *status, char *err);

/* Map a wait status to a process exit code (128+signal for signals). */
int bc_local_exit_code(int status);

#endif
