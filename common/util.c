/*
 * util.c - program-level helpers: dying allocators, string vectors, atomic
 * file output, temp directories, path and integer parsing helpers.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "util.h"

static void
oom(void)
{
	static const char msg[] = "boltcc: out of memory\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(105);	/* BC_EXIT_OUT_OF_MEMORY */
}

void *
xmalloc(size_t n)
{
	void *p;

	if (n == 0)
		n = 1;
	if ((p = malloc(n)) == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = calloc(nmemb, size)) == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t nmemb, size_t size)
{
	void *q;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if (nmemb > SIZE_MAX / size)
		oom();
	if ((q = realloc(p, nmemb * size)) == NULL)
		oom();
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;
	const char *nul = memchr(s, '\0', n);

	if (nul != NULL)
		n = (size_t)(nul - s);
	if (n == SIZE_MAX)
		oom();
	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	(void)vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* --- string vectors ---------------------------------------------------- */

void
bc_strv_init(struct bc_strv *sv)
{
	sv->v = NULL;
	sv->n = 0;
	sv->cap = 0;
}

static void
strv_grow(struct bc_strv *sv, size_t extra)
{
	size_t ncap;

	if (sv->n + extra + 1 <= sv->cap)
		return;
	ncap = sv->cap < 8 ? 8 : sv->cap;
	while (ncap < sv->n + extra + 1) {
		if (ncap > SIZE_MAX / 2)
			oom();
		ncap *= 2;
	}
	sv->v = xrealloc(sv->v, ncap, sizeof(*sv->v));
	sv->cap = ncap;
}

void
bc_strv_push_owned(struct bc_strv *sv, char *s)
{
	strv_grow(sv, 1);
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
bc_strv_push(struct bc_strv *sv, const char *s)
{
	bc_strv_push_owned(sv, xstrdup(s));
}

void
bc_strv_pushv(struct bc_strv *sv, char *const *v, size_t n)
{
	size_t i;

	strv_grow(sv, n);
	for (i = 0; i < n; i++)
		bc_strv_push(sv, v[i]);
	if (sv->v == NULL)
		strv_grow(sv, 0);
}

void
bc_strv_insert(struct bc_strv *sv, size_t at, const char *s)
{
	if (at > sv->n)
		abort();
	strv_grow(sv, 1);
	memmove(&sv->v[at + 1], &sv->v[at], (sv->n - at + 1) * sizeof(*sv->v));
	sv->v[at] = xstrdup(s);
	sv->n++;
}

void
bc_strv_remove(struct bc_strv *sv, size_t at)
{
	if (at >= sv->n)
		abort();
	free(sv->v[at]);
	memmove(&sv->v[at], &sv->v[at + 1], (sv->n - at) * sizeof(*sv->v));
	sv->n--;
}

void
bc_strv_copy(struct bc_strv *dst, const struct bc_strv *src)
{
	bc_strv_init(dst);
	strv_grow(dst, src->n);
	if (src->n > 0)
		bc_strv_pushv(dst, src->v, src->n);
	else
		dst->v[0] = NULL;
}

void
bc_strv_free(struct bc_strv *sv)
{
	size_t i;

	if (sv->v != NULL) {
		for (i = 0; i < sv->n; i++)
			free(sv->v[i]);
		free(sv->v);
	}
	bc_strv_init(sv);
}

static int
needs_quote(const char *s)
{
	const char *p;

	if (*s == '\0')
		return 1;
	for (p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-_./=+,:@%^", c) != NULL)
			continue;
		return 1;
	}
	return 0;
}

char *
bc_strv_join(const struct bc_strv *sv)
{
	size_t i, len = 1;
	const char *p;
	char *out, *o;

	for (i = 0; i < sv->n; i++) {
		/* worst case: every char is ' -> '\'' (4 bytes), plus quotes */
		size_t l = strlen(sv->v[i]);

		if (l > (SIZE_MAX - len) / 4 - 4)
			oom();
		len += 4 * l + 3;
	}
	out = o = xmalloc(len);
	for (i = 0; i < sv->n; i++) {
		if (i > 0)
			*o++ = ' ';
		if (!needs_quote(sv->v[i])) {
			size_t l = strlen(sv->v[i]);

			memcpy(o, sv->v[i], l);
			o += l;
			continue;
		}
		*o++ = '\'';
		for (p = sv->v[i]; *p != '\0'; p++) {
			if (*p == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else
				*o++ = *p;
		}
		*o++ = '\'';
	}
	*o = '\0';
	return out;
}

/* --- files ------------------------------------------------------------- */

static int
write_all(int fd, const void *p, size_t n)
{
	const uint8_t *s = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_via_temp(const char *path, const void *p, size_t n,
    int mode, int replace, char *err);

/* Write all of p into the existing special file at path. */
static int
write_into(const char *path, const void *p, size_t n, char *err)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), e;

	if (fd < 0 || write_all(fd, p, n) < 0) {
		e = errno;
		if (fd >= 0)
			(void)close(fd);
		return bc_seterr(err, BC_ERR_IO, "cannot write %s: %s", path,
		    strerror(e));
	}
	if (close(fd) < 0)
		return bc_seterr(err, BC_ERR_IO, "cannot write %s: %s", path,
		    strerror(errno));
	return BC_OK;
}

int
bc_write_file_atomic(const char *path, const void *p, size_t n, int mode,
    char *err)
{
	return write_via_temp(path, p, n, mode, 0, err);
}

int
bc_write_output(const char *path, const void *p, size_t n, int mode,
    char *err)
{
	return write_via_temp(path, p, n, mode, 1, err);
}

static int
write_via_temp(const char *path, const void *p, size_t n, int mode,
    int replace, char *err)
{
	struct stat st;
	const char *base = bc_basename(path);
	size_t dirlen = (size_t)(base - path);
	char *tmp;
	mode_t um;
	int fd, e;

	if (*base == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "bad output path '%s'", path);
	/* A device, a FIFO or a socket (-o /dev/null) is written into, as
	 * the compiler would: never replaced by a regular file. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_into(path, p, n, err);
	tmp = xasprintf("%.*s.%s.tmpXXXXXX", (int)dirlen, path, base);
	if ((fd = mkstemp(tmp)) < 0) {
		e = errno;
		free(tmp);
		return bc_seterr(err, BC_ERR_IO, "cannot create temp file for "
		    "%s: %s", path, strerror(e));
	}
	/* mkstemp makes 0600; apply the requested mode filtered by umask. */
	um = umask(0);
	(void)umask(um);
	if (write_all(fd, p, n) < 0) {
		e = errno;
		goto fail;
	}
	if (fchmod(fd, (mode_t)mode & ~um) < 0) {
		e = errno;
		goto fail;
	}
	if (close(fd) < 0) {
		e = errno;
		fd = -1;
		goto fail;
	}
	fd = -1;
	/* A rename over an existing file makes ext4 (auto_da_alloc) start
	 * writing the new file's data out at once, inside rename: a third
	 * of a cache hit's time here.  A compile's old output is replaced
	 * anyway; without it for a moment, never a partial file.  Only a
	 * regular file: never a device such as /dev/null. */
	if (replace && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		(void)unlink(path);
	if (rename(tmp, path) < 0) {
		e = errno;
		goto fail;
	}
	free(tmp);
	return BC_OK;
fail:
	if (fd >= 0)
		(void)close(fd);
	(void)unlink(tmp);
	free(tmp);
	return bc_seterr(err, BC_ERR_IO, "cannot write %s: %s", path,
	    strerror(e));
}

int
bc_read_file(const char *path, size_t max, struct bc_buf *out, char *err)
{
	struct stat st;
	uint8_t *w;
	size_t total = 0, start = bc_buf_len(out);
	ssize_t r;
	int fd, e, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		e = errno;
		return bc_seterr(err, e == ENOENT ? BC_ERR_NOENT : BC_ERR_IO,
		    "cannot open %s: %s", path, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		(void)close(fd);
		return bc_seterr(err, BC_ERR_IO, "cannot stat %s: %s", path,
		    strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		(void)close(fd);
		return bc_seterr(err, BC_ERR_INVAL, "%s is not a regular file",
		    path);
	}
	if ((uintmax_t)st.st_size > max) {
		(void)close(fd);
		return bc_seterr(err, BC_ERR_LIMIT, "%s is too large "
		    "(%jd bytes, limit %zu)", path, (intmax_t)st.st_size, max);
	}
	for (;;) {
		size_t want = 65536;

		if (total == max) {
			/* File grew past max while reading? Probe one byte. */
			uint8_t c;

			r = read(fd, &c, 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r > 0) {
				rc = bc_seterr(err, BC_ERR_LIMIT,
				    "%s is too large (limit %zu)", path, max);
				goto fail;
			}
			if (r < 0) {
				e = errno;
				rc = bc_seterr(err, BC_ERR_IO, "cannot read "
				    "%s: %s", path, strerror(e));
				goto fail;
			}
			break;
		}
		if (want > max - total)
			want = max - total;
		if ((rc = bc_buf_reserve(out, want, &w)) != BC_OK) {
			rc = bc_seterr(err, rc, "cannot read %s: %s", path,
			    bc_strerror(rc));
			goto fail;
		}
		r = read(fd, w, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			rc = bc_seterr(err, BC_ERR_IO, "cannot read %s: %s",
			    path, strerror(e));
			goto fail;
		}
		if (r == 0)
			break;
		(void)bc_buf_commit(out, (size_t)r);
		total += (size_t)r;
	}
	(void)close(fd);
	return BC_OK;
fail:
	(void)close(fd);
	bc_buf_truncate(out, start);
	return rc;
}

int
bc_mkdir_p(const char *path, int mode, char *err)
{
	struct stat st;
	char *copy, *p;
	int e;

	if (*path == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "empty directory name");
	/* the common case on every client start: it exists (one stat
	 * instead of a mkdir and a stat per component) */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return BC_OK;
	copy = xstrdup(path);
	for (p = copy + 1; ; p++) {
		int last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(copy, (mode_t)mode) < 0) {
			e = errno;
			if (e != EEXIST || stat(copy, &st) < 0 ||
			    !S_ISDIR(st.st_mode)) {
				if (e == EEXIST)
					e = ENOTDIR;
				bc_seterr(err, e == ENOENT ? BC_ERR_NOENT :
				    BC_ERR_IO, "cannot create directory %s: %s",
				    copy, strerror(e));
				free(copy);
				return e == ENOENT ? BC_ERR_NOENT : BC_ERR_IO;
			}
		}
		if (last)
			break;
		*p = '/';
		while (p[1] == '/')
			p++;
	}
	free(copy);
	return BC_OK;
}

int
bc_mkdtemp(const char *tmpdir, const char *prefix, char **out, char *err)
{
	char *t;
	size_t l;
	int e;

	*out = NULL;
	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	l = strlen(tmpdir);
	while (l > 1 && tmpdir[l - 1] == '/')
		l--;
	t = xasprintf("%.*s/%sXXXXXX", (int)l, tmpdir,
	    prefix != NULL ? prefix : "boltcc-");
	if (mkdtemp(t) == NULL) {
		e = errno;
		bc_seterr(err, BC_ERR_IO, "cannot create temp directory %s: %s",
		    t, strerror(e));
		free(t);
		return BC_ERR_IO;
	}
	*out = t;
	return BC_OK;
}

static int
rmtree_at(const char *path, int depth)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	char *sub;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
	if (depth > 256)
		return -1;
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = xasprintf("%s/%s", path, de->d_name);
		if (rmtree_at(sub, depth + 1) < 0)
			rc = -1;
		free(sub);
	}
	(void)closedir(d);
	if (rmdir(path) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int
bc_rmtree(const char *path)
{
	return rmtree_at(path, 0) < 0 ? BC_ERR_IO : BC_OK;
}

/* --- strings ----------------------------------------------------------- */

const char *
bc_basename(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash != NULL ? slash + 1 : s;
}

const char *
bc_extension(const char *s)
{
	const char *base = bc_basename(s);
	const char *dot = strrchr(base, '.');

	if (dot == NULL || dot == base)
		return "";
	return dot;
}

int
bc_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int
bc_str_has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

int
bc_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || min > max)
		return BC_ERR_INVAL;
	/* strtoll accepts leading space; we do not. */
	if (!((*s >= '0' && *s <= '9') || *s == '-' || *s == '+'))
		return BC_ERR_INVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0')
		return BC_ERR_INVAL;
	if (errno == ERANGE || v < min || v > max)
		return BC_ERR_LIMIT;
	*out = v;
	return BC_OK;
}

int
bc_parse_size(const char *s, uint64_t min, uint64_t *out)
{
	char num[32];
	size_t n = s != NULL ? strlen(s) : 0;
	unsigned shift = 0;
	long long v;
	int r;

	if (n == 0 || n >= sizeof(num))
		return BC_ERR_INVAL;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: break;
	}
	if (shift != 0)
		num[n - 1] = '\0';
	if ((r = bc_parse_int(num, 0, (1LL << 50) >> shift, &v)) != BC_OK)
		return r;
	if (((uint64_t)v << shift) < min)
		return BC_ERR_LIMIT;
	*out = (uint64_t)v << shift;
	return BC_OK;
}

int
bc_parse_age(const char *s, int64_t *out)
{
	char num[32];
	size_t n = s != NULL ? strlen(s) : 0;
	long long v, unit = 1;
	int r;

	if (n == 0 || n >= sizeof(num))
		return BC_ERR_INVAL;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default: unit = 0; break;
	}
	if (unit != 0)
		num[n - 1] = '\0';
	else
		unit = 1;
	if (num[0] == '-' || num[0] == '+')
		return BC_ERR_INVAL;
	if ((r = bc_parse_int(num, 0, BC_MAX_AGE_SEC / unit, &v)) != BC_OK)
		return r;
	*out = (int64_t)(v * unit);
	return BC_OK;
}

int
bc_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	if (n > INT_MAX)
		return INT_MAX;
	return (int)n;
}

int
bc_time_rfc3339(time_t sec, int msec, char *out, size_t outlen)
{
	char date[32], zone[8], frac[8] = "";
	struct tm tm;
	int n;

	if (outlen > 0)
		out[0] = '\0';
	if (localtime_r(&sec, &tm) == NULL ||
	    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0 ||
	    strftime(zone, sizeof(zone), "%z", &tm) != 5)
		return BC_ERR_LIMIT;
	if (msec >= 0)
		(void)snprintf(frac, sizeof(frac), ".%03d", msec % 1000);
	/* strftime's %z is "+hhmm"; RFC 3339 wants "+hh:mm". */
	n = snprintf(out, outlen, "%s%s%.3s:%.2s", date, frac, zone, zone + 3);
	if (n < 0 || (size_t)n >= outlen) {
		if (outlen > 0)
			out[0] = '\0';
		return BC_ERR_LIMIT;
	}
	return BC_OK;
}

#define DISTANCE_MAX_LEN 64

size_t
bc_str_distance(const char *a, const char *b, size_t max)
{
	size_t row[DISTANCE_MAX_LEN + 1], la = strlen(a), lb = strlen(b);
	size_t i, j;

	if (la > DISTANCE_MAX_LEN || lb > DISTANCE_MAX_LEN ||
	    (la > lb ? la - lb : lb - la) > max)
		return max + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], best;

		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			diag = up;
			row[j] = v;
			if (v < best)
				best = v;
		}
		if (best > max)
			return max + 1;
	}
	return row[lb] > max ? max + 1 : row[lb];
}

int
bc_memstr(const void *p, size_t n, const char *s)
{
	const char *c = p;
	size_t k = strlen(s), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(c + i, s, k) == 0)
			return 1;
	return 0;
}

void
bc_human_bytes(double b, char *out, size_t n)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;

	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(out, n, i == 0 ? "%.0f %s" : "%.1f %s", b, u[i]);
}

void
bc_human_secs(double s, char *out, size_t n)
{
	if (s < 120)
		snprintf(out, n, "%.1f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.1f min", s / 60);
	else
		snprintf(out, n, "%.1f h", s / 3600);
}

void
bc_human_percent(double part, double whole, char *out, size_t n)
{
	if (whole > 0)
		snprintf(out, n, "%.1f%%", 100.0 * part / whole);
	else
		snprintf(out, n, "-");
}
