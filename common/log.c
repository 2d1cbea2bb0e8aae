/*
 * log.c - the one logging sink: stderr, an appended file, or nothing.
 *
 * Each line is formatted completely in memory and written with a single
 * write(2) so lines from concurrent processes sharing the file (O_APPEND)
 * never interleave.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

#define LOG_LINE_MAX 4096

static char log_progname[64] = "boltcc";
static enum bc_log_level log_level = BC_LOG_WARN;
static int log_fd = STDERR_FILENO;	/* -1 = silenced */
static int log_owned;			/* log_fd is a file we opened */
static char *log_path;

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

		copy_str(log_progname, sizeof(log_progname),
		    slash != NULL ? slash + 1 : progname);
	}
	log_level = level;
}

void
bc_log_set_level(enum bc_log_level level)
{
	log_level = level;
}

enum bc_log_level
bc_log_get_level(void)
{
	return log_level;
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
	if (log_owned && log_fd >= 0)
		(void)close(log_fd);
	log_owned = 0;
}

int
bc_log_open(const char *path, char *err)
{
	char *copy;
	int fd;

	if (path == NULL) {
		log_close_owned();
		free(log_path);
		log_path = NULL;
		log_fd = STDERR_FILENO;
		return BC_OK;
	}
	if ((copy = strdup(path)) == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	if ((fd = log_open_fd(path, err)) < 0) {
		free(copy);
		return fd;
	}
	log_close_owned();
	free(log_path);
	log_path = copy;
	log_fd = fd;
	log_owned = 1;
	return BC_OK;
}

int
bc_log_reopen(char *err)
{
	int fd;

	if (log_path == NULL || !log_owned)
		return BC_OK;
	if ((fd = log_open_fd(log_path, err)) < 0)
		return fd;	/* keep writing to the old file */
	log_close_owned();
	log_fd = fd;
	log_owned = 1;
	return BC_OK;
}

void
bc_log_silence(void)
{
	log_close_owned();
	log_fd = -1;
}

void
bc_log_msg(enum bc_log_level level, const char *func, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;
	size_t len, off;
	ssize_t w;
	int n, saved_errno = errno;
	unsigned lv = (unsigned)level;

	if (log_fd < 0 || level > log_level)
		return;
	if (lv >= sizeof(level_names) / sizeof(level_names[0]))
		lv = BC_LOG_DEBUG;
	n = snprintf(line, sizeof(line), "%s[%ld] (%s) %s: ", log_progname,
	    (long)getpid(), func != NULL ? func : "?", level_names[lv]);
	if (n < 0)
		goto out;
	len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	va_start(ap, fmt);
	n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	va_end(ap);
	if (n < 0)
		goto out;
	len += (size_t)n;
	if (len > sizeof(line) - 2) {
		/* Truncated: mark it and keep room for the newline. */
		len = sizeof(line) - 5;
		memcpy(line + len, "...", 3);
		len += 3;
	}
	line[len++] = '\n';
	/* One write per line; only retry on EINTR or a short write. */
	off = 0;
	while (off < len) {
		w = write(log_fd, line + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
out:
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
