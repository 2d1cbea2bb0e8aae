/*
 * log.h - the one logging facility.
 *
 * Lines go to one sink (stderr, a file, or nothing), prefixed with the
 * program name, pid, level and function.  Peer-supplied bytes must be
 * passed through bc_log_escape() (or %s of bc_wire_escape output) so a
 * hostile peer cannot forge log lines.  Modules never write to stderr
 * directly; only main() and user-facing client output do.
 */
#ifndef BC_LOG_H
#define BC_LOG_H

#include <stddef.h>

enum bc_log_level {
	BC_LOG_ERROR = 0,
	BC_LOG_WARN = 1,
	BC_LOG_INFO = 2,
	BC_LOG_DEBUG = 3,
};

/* progname is copied; level is the most verbose level emitted. */
void bc_log_init(const char *progname, enum bc_log_level level);
void bc_log_set_level(enum bc_log_level level);
enum bc_log_level bc_log_get_level(void);
/* Log to this file (appending); NULL = stderr.  Returns BC_OK or error. */
int bc_log_open(const char *path, char *err);
/* Reopen the same file (SIGHUP); no-op for stderr. */
int bc_log_reopen(char *err);
/* Disable all output (tests of pure library code). */
void bc_log_silence(void);

void bc_log_msg(enum bc_log_level level, const char *func, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/* Escape arbitrary bytes into printable ASCII (\xNN, \n, \\) in out. */
void bc_log_escape(const void *p, size_t n, char *out, size_t outlen);

#define bc_error(...) bc_log_msg(BC_LOG_ERROR, __func__, __VA_ARGS__)
#define bc_warn(...) bc_log_msg(BC_LOG_WARN, __func__, __VA_ARGS__)
#define bc_info(...) bc_log_msg(BC_LOG_INFO, __func__, __VA_ARGS__)
#define bc_debug(...) bc_log_msg(BC_LOG_DEBUG, __func__, __VA_ARGS__)

#endif
