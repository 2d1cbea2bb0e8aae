/*
 * log.h - the one logging facility.
 *
 * Lines go to one sink (stderr, a file, or nothing):
 *
 *   2026-12-05T13:45:01.123+01:00 boltccd[4711] WARN: message
 *   2026-12-05T13:45:01.125+01:00 boltccd[4711] DEBUG: (function) message
 *
 * The RFC 3339 local time starts every line written to a file, and every
 * line written to stderr once bc_log_stamp_stderr(1) asked for it (the
 * daemon; the client's stderr is the user's terminal).  Only debug lines
 * name the C function.  Peer-supplied bytes must be
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

/* Start lines written to stderr with the time too (files always are). */
void bc_log_stamp_stderr(int on);

void bc_log_msg(enum bc_log_level level, const char *func, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/*
 * Once-only messages, for a condition that would otherwise be logged on
 * every compile (a full cache disk, an unusable store): the first one
 * from a call site (site: "file:line") is logged at its level with a
 * note that repeats are logged at debug level only; later ones are debug
 * lines.  A message not shown at the current level does not use up the
 * site.  The table of sites said is the process's own, unless
 * bc_log_share_once() made it shared with every child forked after it
 * (the daemon: once per daemon, not per worker).  At most
 * BC_LOG_ONCE_SITES sites are remembered; beyond that every message is
 * logged.
 */
#define BC_LOG_ONCE_SITES 128
void bc_log_msg_once(enum bc_log_level level, const char *site,
    const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* 1 the first time key is asked for (per the table above), else 0. */
int bc_log_once(const char *key);
/* Share the table with children forked from now on.  BC_OK or error. */
int bc_log_share_once(char *err);

/* Escape arbitrary bytes into printable ASCII (\xNN, \n, \\) in out. */
void bc_log_escape(const void *p, size_t n, char *out, size_t outlen);

#define bc_error(...) bc_log_msg(BC_LOG_ERROR, __func__, __VA_ARGS__)
#define bc_warn(...) bc_log_msg(BC_LOG_WARN, __func__, __VA_ARGS__)
#define bc_info(...) bc_log_msg(BC_LOG_INFO, __func__, __VA_ARGS__)
#define bc_debug(...) bc_log_msg(BC_LOG_DEBUG, __func__, __VA_ARGS__)

#define BC_LOG_STR_(x) #x
#define BC_LOG_STR(x) BC_LOG_STR_(x)
#define BC_LOG_SITE __FILE__ ":" BC_LOG_STR(__LINE__)
#define bc_warn_once(...) \
	bc_log_msg_once(BC_LOG_WARN, BC_LOG_SITE, __func__, __VA_ARGS__)
#define bc_info_once(...) \
	bc_log_msg_once(BC_LOG_INFO, BC_LOG_SITE, __func__, __VA_ARGS__)

#endif
