/*
 * log.c - the one logging sink: stderr, an appended file, or nothing.
 *
 * Each line is formatted completely in memory and written with a single
 * write(2) so lines from concurrent processes sharing the file (O_APPEND)
 * never interleave.  Once-only messages remember their call sites in a
 * small open-addressing table of 64-bit hashes, claimed by compare and
 * swap, so that a table in shared memory (bc_log_share_once) needs no
 * lock between the daemon's workers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "hash.h"
#include "log.h"
#include "util.h"

#define LOG_LINE_MAX 4096

/* The process's one logger: set up by main, read by every module. */
static struct {
	char progname[64];
	enum bc_log_level level;
	int fd;			/* -1 = silenced */
	int owned;		/* fd is a file we opened */
	char *path;
	int stamp_err;		/* stamp lines to stderr too */
	_Atomic uint64_t once_own[BC_LOG_ONCE_SITES];
	_Atomic uint64_t *once_tab;	/* once_own or a shared table */
} lg = {
	.progname = "boltcc",
	.level = BC_LOG_WARN,
	.fd = STDERR_FILENO,
	.once_tab = lg.once_own,
};

static const char *const level_names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

static void
copy_str(char *dst, size_t dstlen, const char *src)
{
	size_t n = strlen(src);

	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void
bc_log_init(const char *progname, enum bc_log_level level)
{
	if (progname != NULL) {
		const char *slash = strrchr(progname, '/');

		copy_str(lg.progname, sizeof(lg.progname),
		    slash != NULL ? slash + 1 : progname);
	}
	lg.level = level;
}

void
bc_log_set_level(enum bc_log_level level)
{
	lg.level = level;
}

enum bc_log_level
bc_log_get_level(void)
{
	return lg.level;
}

static int
log_open_fd(const char *path, char *err)
{
	int fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return bc_seterr(err, BC_ERR_IO, "cannot open log file %s: %s",
		    path, strerror(errno));
	return fd;
}

static void
log_close_owned(void)
{
	if (lg.owned && lg.fd >= 0)
		(void)close(lg.fd);
	lg.owned = 0;
}

int
bc_log_open(const char *path, char *err)
{
	char *copy;
	int fd;

	if (path == NULL) {
		log_close_owned();
		free(lg.path);
		lg.path = NULL;
		lg.fd = STDERR_FILENO;
		return BC_OK;
	}
	if ((copy = strdup(path)) == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	if ((fd = log_open_fd(path, err)) < 0) {
		free(copy);
		return fd;
	}
	log_close_owned();
	free(lg.path);
	lg.path = copy;
	lg.fd = fd;
	lg.owned = 1;
	return BC_OK;
}

int
bc_log_reopen(char *err)
{
	int fd;

	if (lg.path == NULL || !lg.owned)
		return BC_OK;
	if ((fd = log_open_fd(lg.path, err)) < 0)
		return fd;	/* keep writing to the old file */
	log_close_owned();
	lg.fd = fd;
	lg.owned = 1;
	return BC_OK;
}

void
bc_log_silence(void)
{
	log_close_owned();
	lg.fd = -1;
}

void
bc_log_stamp_stderr(int on)
{
	lg.stamp_err = on;
}

/* "2026-12-05T13:45:01.123+01:00 " at line, if this sink is stamped. */
static size_t
log_stamp(char *line, size_t len)
{
	struct timespec ts;
	char t[BC_TIME_RFC3339_LEN];
	int n;

	if (!lg.owned && !lg.stamp_err)
		return 0;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0 ||
	    bc_time_rfc3339(ts.tv_sec, (int)(ts.tv_nsec / 1000000), t,
	    sizeof(t)) != BC_OK)
		return 0;
	n = snprintf(line, len, "%s ", t);
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

static void
log_write(const char *line, size_t len)
{
	size_t off = 0;
	ssize_t w;

	/* One write per line; only retry on EINTR or a short write. */
	while (off < len) {
		w = write(lg.fd, line + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
}

static void log_vmsg(enum bc_log_level, const char *, const char *,
    const char *, va_list) __attribute__((format(printf, 4, 0)));

/* Format and write one line; note (or NULL) follows the message. */
static void
log_vmsg(enum bc_log_level level, const char *func, const char *note,
    const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	size_t len;
	int n;
	unsigned lv = (unsigned)level;

	if (lv >= sizeof(level_names) / sizeof(level_names[0]))
		lv = BC_LOG_DEBUG;
	len = log_stamp(line, sizeof(line));
	/* Function names are for developers: debug lines only. */
	if (lv == BC_LOG_DEBUG)
		n = snprintf(line + len, sizeof(line) - len,
		    "%s[%ld] %s: (%s) ", lg.progname, (long)getpid(),
		    level_names[lv], func != NULL ? func : "?");
	else
		n = snprintf(line + len, sizeof(line) - len, "%s[%ld] %s: ",
		    lg.progname, (long)getpid(), level_names[lv]);
	if (n < 0)
		return;
	len += (size_t)n < sizeof(line) - len ? (size_t)n :
	    sizeof(line) - len - 1;
	n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	if (n < 0)
		return;
	len += (size_t)n;
	if (note != NULL && len < sizeof(line)) {
		n = snprintf(line + len, sizeof(line) - len, "%s", note);
		if (n > 0)
			len += (size_t)n;
	}
	if (len > sizeof(line) - 2) {
		/* Truncated: mark it and keep room for the newline. */
		len = sizeof(line) - 5;
		memcpy(line + len, "...", 3);
		len += 3;
	}
	line[len++] = '\n';
	log_write(line, len);
}

void
bc_log_msg(enum bc_log_level level, const char *func, const char *fmt, ...)
{
	va_list ap;
	int saved_errno = errno;

	if (lg.fd < 0 || level > lg.level)
		return;
	va_start(ap, fmt);
	log_vmsg(level, func, NULL, fmt, ap);
	va_end(ap);
	errno = saved_errno;
}

/* FNV-1a of key; never 0, the table's "free". */
static uint64_t
once_hash(const char *key)
{
	uint64_t h = bc_fnv1a_str(BC_FNV1A_BASIS, key);

	return h != 0 ? h : 1;
}

int
bc_log_once(const char *key)
{
	uint64_t h = once_hash(key);
	size_t i, at = (size_t)(h % BC_LOG_ONCE_SITES);

	for (i = 0; i < BC_LOG_ONCE_SITES; i++) {
		_Atomic uint64_t *slot = &lg.once_tab[(at + i) %
		    BC_LOG_ONCE_SITES];
		uint64_t cur = atomic_load(slot);

		if (cur == 0) {
			if (atomic_compare_exchange_strong(slot, &cur, h))
				return 1;
			/* another process claimed it: cur is its key */
		}
		if (cur == h)
			return 0;
	}
	return 1;	/* table full: say it rather than hide it */
}

int
bc_log_share_once(char *err)
{
	_Atomic uint64_t *tab;
	size_t i;

	if (lg.once_tab != lg.once_own)
		return BC_OK;
	tab = mmap(NULL, sizeof(lg.once_own), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANON, -1, 0);
	if (tab == MAP_FAILED)
		return bc_seterr(err, BC_ERR_IO, "mmap: %s", strerror(errno));
	for (i = 0; i < BC_LOG_ONCE_SITES; i++)
		atomic_store(&tab[i], atomic_load(&lg.once_own[i]));
	lg.once_tab = tab;
	return BC_OK;
}

void
bc_log_msg_once(enum bc_log_level level, const char *site, const char *func,
    const char *fmt, ...)
{
	va_list ap;
	int saved_errno = errno, first;

	if (lg.fd < 0)
		return;
	if (level <= lg.level) {
		first = bc_log_once(site);
		if (!first)
			level = BC_LOG_DEBUG;
	} else
		first = 0;
	if (level > lg.level)
		return;
	va_start(ap, fmt);
	log_vmsg(level, func, first ? " (said once; repeats are logged at "
	    "debug level)" : NULL, fmt, ap);
	va_end(ap);
	errno = saved_errno;
}

void
bc_log_escape(const void *p, size_t n, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = p;
	size_t i, o = 0;
	char tmp[4];
	size_t tl;

	if (outlen == 0)
		return;
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '\n') {
			tmp[0] = '\\';
			tmp[1] = 'n';
			tl = 2;
		} else if (c == '\\') {
			tmp[0] = '\\';
			tmp[1] = '\\';
			tl = 2;
		} else if (c >= 0x20 && c < 0x7f) {
			tmp[0] = (char)c;
			tl = 1;
		} else {
			tmp[0] = '\\';
			tmp[1] = 'x';
			tmp[2] = hex[c >> 4];
			tmp[3] = hex[c & 0xf];
			tl = 4;
		}
		/* Never emit half an escape sequence. */
		if (o + tl >= outlen)
			break;
		memcpy(out + o, tmp, tl);
		o += tl;
	}
	out[o] = '\0';
}
