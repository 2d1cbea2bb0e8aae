/*
 * util.h - program-level helpers: allocation that dies on OOM, string
 * vectors, atomic file output, temp directories, small path helpers.
 *
 * x*alloc functions are for program-level code only (client/daemon
 * mains and their job logic); library layers (buf, wire, codec, cache,
 * preproc parsers) return BC_ERR_ALLOC instead.
 */
#ifndef BC_UTIL_H
#define BC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "buf.h"

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* asprintf that dies on OOM. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A NULL-terminated, growable vector of malloc'd strings. */
struct bc_strv {
	char **v;	/* v[n] == NULL always (when v != NULL) */
	size_t n;
	size_t cap;
};
#define BC_STRV_INIT { NULL, 0, 0 }
void bc_strv_init(struct bc_strv *sv);
void bc_strv_push(struct bc_strv *sv, const char *s);	/* copies s */
void bc_strv_push_owned(struct bc_strv *sv, char *s);	/* takes s */
void bc_strv_pushv(struct bc_strv *sv, char *const *v, size_t n);
void bc_strv_insert(struct bc_strv *sv, size_t at, const char *s);
void bc_strv_remove(struct bc_strv *sv, size_t at);
void bc_strv_copy(struct bc_strv *dst, const struct bc_strv *src);
void bc_strv_free(struct bc_strv *sv);
/* Join with spaces, shell-quoting words that need it (for logs). */
char *bc_strv_join(const struct bc_strv *sv);

/*
 * Atomic output: write all of p to a temp file in path's directory, fsync
 * optional, then rename over path.  On any failure the temp file is
 * removed and path is untouched.  mode as for open(2).  An existing
 * device, FIFO or socket at path (-o /dev/null) is written into instead,
 * never replaced.
 */
int bc_write_file_atomic(const char *path, const void *p, size_t n,
    int mode, char *err);
/* The same for a compile's output (object, .d, .dia), which replaces an
 * older one: the older one is removed just before the rename (a rename
 * over an existing file costs ext4 an immediate write-out). */
int bc_write_output(const char *path, const void *p, size_t n, int mode,
    char *err);
/* Read a whole regular file of at most max bytes into out. */
int bc_read_file(const char *path, size_t max, struct bc_buf *out, char *err);

/* mkdir -p with mode; BC_OK if it already exists as a directory. */
int bc_mkdir_p(const char *path, int mode, char *err);
/* Make a private temp dir "<tmpdir>/<prefix>XXXXXX", mode 0700; tmpdir
 * is TMPDIR's value as the caller read it (NULL or "": /tmp); *out is
 * malloc'd. */
int bc_mkdtemp(const char *tmpdir, const char *prefix, char **out,
    char *err);
/* rm -rf of a directory tree we created (does not follow symlinks). */
int bc_rmtree(const char *path);

/* Last path component (pointer into s), and extension incl. '.' or "". */
const char *bc_basename(const char *s);
const char *bc_extension(const char *s);
int bc_str_has_prefix(const char *s, const char *prefix);
/* 1 if the n bytes at p contain the string s. */
int bc_memstr(const void *p, size_t n, const char *s);
int bc_str_has_suffix(const char *s, const char *suffix);

/* Parse a decimal integer in [min,max] from all of s (strtonum-like). */
int bc_parse_int(const char *s, long long min, long long max, long long *out);
/* A size: a decimal number of bytes with an optional K, M, G or T suffix
 * (powers of 1024), at least min and at most 2^50; BC_ERR_INVAL or
 * BC_ERR_LIMIT otherwise. */
int bc_parse_size(const char *s, uint64_t min, uint64_t *out);
/* An age: a decimal number with an optional unit s, m, h or d (seconds
 * without one), at most BC_MAX_AGE_SEC; *out in seconds.  BC_ERR_INVAL
 * or BC_ERR_LIMIT otherwise. */
#define BC_MAX_AGE_SEC (100LL * 365 * 86400)
int bc_parse_age(const char *s, int64_t *out);
/* Numbers for people, one convention on every page: bytes as "512 B",
 * "1.5 MiB"; seconds as "12.3 s", "4.5 min", "2.0 h"; a part of a whole
 * as "82.3%", or "-" when the whole is 0. */
void bc_human_bytes(double b, char *out, size_t n);
void bc_human_secs(double s, char *out, size_t n);
void bc_human_percent(double part, double whole, char *out, size_t n);

/* Number of online CPUs (at least 1). */
int bc_ncpus(void);

/*
 * RFC 3339 local time with the UTC offset into out, e.g.
 * "2026-12-05T13:45:01.123+01:00" (msec 0..999) or, with msec < 0,
 * "2026-12-05T13:45:01+01:00".  BC_OK, or BC_ERR_LIMIT (out too short,
 * BC_TIME_RFC3339_LEN is always enough) with out "".
 */
#define BC_TIME_RFC3339_LEN 40
int bc_time_rfc3339(time_t sec, int msec, char *out, size_t outlen);

/*
 * Edit distance (insertions, deletions, substitutions; byte-wise) of a
 * and b, counted up to max: any result above max is max + 1.  For "did
 * you mean" hints; strings longer than 64 bytes are max + 1 away.
 */
size_t bc_str_distance(const char *a, const char *b, size_t max);

#endif
