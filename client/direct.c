/*
 * direct.c - direct mode manifests (see direct.h).
 *
 * Manifest text (one record per line, paths last so they may hold
 * spaces; a name with a newline is never recorded):
 *   boltcc-manifest-v2
 *   key <64 hex>
 *   file <64 hex sha256> <size> <stamp> <path>   (repeated)
 * where stamp is "<dev>.<ino>.<mtime ns>.<ctime ns>": while a file's
 * size and stamp are unchanged its content is taken as unchanged (ctime
 * cannot be set back by a user; files younger than 2 s are never
 * recorded), otherwise the content is hashed again and compared.
 *   dotd <n>\n<n bytes>\n
 *   cpperr <n>\n<n bytes>\n
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/osdep.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/util.h"
#include "cache/key.h"
#include "client/cconf.h"
#include "client/direct.h"

#define MAGIC "boltcc-manifest-v2\n"

void
bc_direct_init(struct bc_direct *d, const char *statedir,
    const char *identity, const char *cwd, const struct bc_strv *cpp_argv,
    const struct bc_strv *remote_argv, char *const *cpp_env)
{
	struct bc_hash h;
	size_t i;

	d->mkey[0] = '\0';
	d->path = NULL;
	if (statedir == NULL || identity == NULL || identity[0] == '\0' ||
	    cwd == NULL)
		return;
	bc_hash_init(&h);
	bc_hash_update_str(&h, "boltcc-direct-v1");
	bc_hash_update_str(&h, identity);
	/* Like the cache key: the directory matters when debug info names
	 * it; otherwise relative names in the manifest are resolved and
	 * hashed again in whatever directory the command runs. */
	bc_hash_update_str(&h, bc_cache_key_debug(remote_argv->v,
	    remote_argv->n) ? cwd : "");
	bc_hash_update_str(&h, "cpp");
	for (i = 0; i < cpp_argv->n; i++)
		bc_hash_update_str(&h, cpp_argv->v[i]);
	bc_hash_update_str(&h, "remote");
	for (i = 0; i < remote_argv->n; i++)
		bc_hash_update_str(&h, remote_argv->v[i]);
	bc_hash_update_str(&h, "env");
	/* the environment that changes what the preprocessor produces */
	for (i = 0; i < BC_CPPENV_N; i++) {
		const char *v = cpp_env != NULL ? cpp_env[i] : NULL;

		bc_hash_update_str(&h, bc_cppenv_names[i]);
		bc_hash_update_str(&h, v != NULL ? v : "\001unset");
	}
	bc_hash_final_hex(&h, d->mkey);
	d->path = xasprintf("%s/direct/%.2s/%s", statedir, d->mkey, d->mkey);
}

void
bc_direct_free(struct bc_direct *d)
{
	free(d->path);
	d->path = NULL;
	d->mkey[0] = '\0';
}

/* The identity of a file version as far as stat() can tell. */
static void
file_stamp(const struct stat *st, char *out, size_t n)
{
	snprintf(out, n, "%llu.%llu.%lld.%lld",
	    (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
	    (long long)bc_osdep_mtime_ns(st), (long long)bc_osdep_ctime_ns(st));
}

/* Hash a file's content; -1 if it cannot be read. */
static int
hash_file(const char *path, char out[BC_HASH_HEXLEN + 1], int64_t *size,
    int64_t *mtime, char *stamp, size_t stamplen)
{
	struct bc_hash h;
	struct stat st;
	uint8_t buf[65536];
	int64_t total = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > BC_DIRECT_MAX_HEADER) {
		close(fd);
		return -1;
	}
	bc_hash_init(&h);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		bc_hash_update(&h, buf, (size_t)n);
		total += n;
	}
	close(fd);
	if (n < 0) {
		bc_hash_free(&h);
		return -1;
	}
	bc_hash_final_hex(&h, out);
	*size = total;
	if (mtime != NULL)
		*mtime = (int64_t)st.st_mtime;
	if (stamp != NULL)
		file_stamp(&st, stamp, stamplen);
	return 0;
}

/* 1 if the file uses a macro whose value changes with time. */
static int
uses_time_macros(const char *path)
{
	static const char *const m[] = { "__DATE__", "__TIME__",
	    "__TIMESTAMP__", NULL };
	struct bc_buf b;
	int found = 0, i;

	bc_buf_init(&b, BC_DIRECT_MAX_HEADER);
	if (bc_read_file(path, BC_DIRECT_MAX_HEADER, &b, NULL) != BC_OK) {
		bc_buf_free(&b);
		return 1;
	}
	for (i = 0; m[i] != NULL && !found; i++)
		found = bc_buf_len(&b) > 0 && memmem(bc_buf_data(&b),
		    bc_buf_len(&b), m[i], strlen(m[i])) != NULL;
	bc_buf_free(&b);
	return found;
}

void
bc_direct_markers(const uint8_t *p, size_t n, struct bc_strv *out)
{
	size_t i = 0, k;

	while (i < n) {
		size_t end = i;

		while (end < n && p[end] != '\n')
			end++;
		/* # <digits> "<name>" [flags] */
		if (end - i > 4 && p[i] == '#' && p[i + 1] == ' ' &&
		    p[i + 2] >= '0' && p[i + 2] <= '9') {
			size_t j = i + 2;

			while (j < end && p[j] >= '0' && p[j] <= '9')
				j++;
			if (j + 1 < end && p[j] == ' ' && p[j + 1] == '"') {
				char *name = xmalloc(end - j);
				size_t len = 0;
				int ok = 0;

				for (j += 2; j < end; j++) {
					if (p[j] == '\\' && j + 1 < end) {
						name[len++] = (char)p[++j];
						continue;
					}
					if (p[j] == '"') {
						ok = 1;
						break;
					}
					name[len++] = (char)p[j];
				}
				name[len] = '\0';
				if (ok && len > 0 && name[0] != '<' &&
				    !bc_str_has_suffix(name, "//") &&
				    memchr(name, '\0', len) == NULL) {
					for (k = 0; k < out->n; k++)
						if (strcmp(out->v[k], name) == 0)
							break;
					if (k == out->n)
						bc_strv_push(out, name);
				}
				free(name);
			}
		}
		i = end + 1;
	}
}

int
bc_direct_put(const struct bc_direct *d, const char *key,
    const uint8_t *doti, size_t n, const struct bc_buf *dotd,
    const struct bc_buf *cpperr, int64_t start_sec, char *err)
{
	struct bc_strv files = BC_STRV_INIT;
	struct bc_buf m;
	char *dir, *slash;
	size_t i;
	int r = BC_OK;

	if (d->path == NULL || !bc_hash_is_hex(key))
		return bc_seterr(err, BC_ERR_INVAL, "direct mode off");
	bc_direct_markers(doti, n, &files);
	if (files.n == 0 || files.n > BC_DIRECT_MAX_FILES) {
		bc_strv_free(&files);
		return bc_seterr(err, BC_ERR_NOTSUP, "no usable line markers");
	}
	bc_buf_init(&m, BC_DIRECT_MAX_MANIFEST);
	r = bc_buf_putf(&m, MAGIC "key %s\n", key);
	for (i = 0; r == BC_OK && i < files.n; i++) {
		char hex[BC_HASH_HEXLEN + 1], stamp[128];
		int64_t size, mtime;

		if (strchr(files.v[i], '\n') != NULL ||
		    hash_file(files.v[i], hex, &size, &mtime, stamp,
		    sizeof(stamp)) != 0) {
			r = bc_seterr(err, BC_ERR_NOTSUP, "cannot hash %s",
			    files.v[i]);
			break;
		}
		if (mtime >= start_sec - 2) {
			r = bc_seterr(err, BC_ERR_NOTSUP, "%s is too new",
			    files.v[i]);
			break;
		}
		if (uses_time_macros(files.v[i])) {
			r = bc_seterr(err, BC_ERR_NOTSUP,
			    "%s uses __DATE__/__TIME__", files.v[i]);
			break;
		}
		r = bc_buf_putf(&m, "file %s %lld %s %s\n", hex, (long long)size,
		    stamp, files.v[i]);
	}
	if (r == BC_OK)
		r = bc_buf_putf(&m, "dotd %zu\n", bc_buf_len(dotd));
	if (r == BC_OK)
		r = bc_buf_put(&m, bc_buf_data(dotd), bc_buf_len(dotd));
	if (r == BC_OK)
		r = bc_buf_putf(&m, "\ncpperr %zu\n", bc_buf_len(cpperr));
	if (r == BC_OK)
		r = bc_buf_put(&m, bc_buf_data(cpperr), bc_buf_len(cpperr));
	if (r == BC_OK)
		r = bc_buf_put_str(&m, "\n");
	bc_strv_free(&files);
	if (r != BC_OK) {
		bc_buf_free(&m);
		return r;
	}
	dir = xstrdup(d->path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	r = bc_mkdir_p(dir, 0700, err);
	free(dir);
	if (r == BC_OK)
		r = bc_write_file_atomic(d->path, bc_buf_data(&m), bc_buf_len(&m),
		    0600, err);
	bc_buf_free(&m);
	return r;
}

/* Next line of the manifest (without its newline) as [*p, *p + *len). */
static int
next_line(struct bc_buf *b, const char **p, size_t *len)
{
	struct bc_buf line;

	if (bc_buf_get_until(b, '\n', &line) != BC_OK)
		return BC_ERR_TRUNCATED;
	*p = (const char *)bc_buf_ptr(&line);
	*len = bc_buf_avail(&line);
	return BC_OK;
}

/* "<word> <n>\n<n bytes>\n" into out. */
static int
get_blob(struct bc_buf *b, const char *word, struct bc_buf *out)
{
	const char *p;
	size_t len, wl = strlen(word);
	long long n;
	char num[32];
	const uint8_t *data;

	if (next_line(b, &p, &len) != BC_OK || len <= wl + 1 ||
	    len - wl - 1 >= sizeof(num) || memcmp(p, word, wl) != 0 ||
	    p[wl] != ' ')
		return BC_ERR_CORRUPT;
	memcpy(num, p + wl + 1, len - wl - 1);
	num[len - wl - 1] = '\0';
	if (bc_parse_int(num, 0, (long long)BC_DIRECT_MAX_MANIFEST, &n) != BC_OK ||
	    bc_buf_peek(b, (size_t)n + 1, &data) != BC_OK || data[n] != '\n')
		return BC_ERR_CORRUPT;
	if (bc_buf_put(out, data, (size_t)n) != BC_OK)
		return BC_ERR_LIMIT;
	return bc_buf_skip(b, (size_t)n + 1);
}

int
bc_direct_get(const struct bc_direct *d, char key[BC_HASH_HEXLEN + 1],
    struct bc_buf *dotd, struct bc_buf *cpperr)
{
	struct bc_buf b;
	const char *p;
	size_t len;
	int r = BC_ERR_NOENT, nfiles = 0;

	key[0] = '\0';
	if (d->path == NULL)
		return BC_ERR_NOENT;
	bc_buf_init(&b, BC_DIRECT_MAX_MANIFEST);
	if (bc_read_file(d->path, BC_DIRECT_MAX_MANIFEST, &b, NULL) != BC_OK)
		goto out;
	if (next_line(&b, &p, &len) != BC_OK || len + 1 != strlen(MAGIC) ||
	    memcmp(p, MAGIC, len) != 0)
		goto out;
	if (next_line(&b, &p, &len) != BC_OK || len != 4 + BC_HASH_HEXLEN ||
	    memcmp(p, "key ", 4) != 0)
		goto out;
	memcpy(key, p + 4, BC_HASH_HEXLEN);
	key[BC_HASH_HEXLEN] = '\0';
	if (!bc_hash_is_hex(key))
		goto out;
	for (;;) {
		char want[BC_HASH_HEXLEN + 1], got[BC_HASH_HEXLEN + 1];
		char stamp[128];
		char *path, *sp, *sp2;
		long long size;
		int64_t gsize;
		struct stat st;

		if (bc_buf_avail(&b) < 5 || memcmp(bc_buf_ptr(&b), "file ", 5)
		    != 0)
			break;
		if (next_line(&b, &p, &len) != BC_OK ||
		    len < 5 + BC_HASH_HEXLEN + 3)
			goto out;
		memcpy(want, p + 5, BC_HASH_HEXLEN);
		want[BC_HASH_HEXLEN] = '\0';
		path = xstrndup(p + 5 + BC_HASH_HEXLEN + 1,
		    len - 5 - BC_HASH_HEXLEN - 1);
		sp = strchr(path, ' ');
		if (sp == NULL) {
			free(path);
			goto out;
		}
		*sp = '\0';
		sp2 = strchr(sp + 1, ' ');
		if (sp2 == NULL || bc_parse_int(path, 0, (long long)BC_DIRECT_MAX_HEADER,
		    &size) != BC_OK) {
			free(path);
			goto out;
		}
		*sp2 = '\0';
		/* unchanged by stat: trust the recorded hash */
		if (stat(sp2 + 1, &st) == 0 && S_ISREG(st.st_mode) &&
		    (long long)st.st_size == size) {
			file_stamp(&st, stamp, sizeof(stamp));
			if (strcmp(stamp, sp + 1) == 0) {
				free(path);
				nfiles++;
				continue;
			}
		}
		if (hash_file(sp2 + 1, got, &gsize, NULL, NULL, 0) != 0 ||
		    gsize != size || strcmp(want, got) != 0) {
			free(path);
			goto out;	/* changed: preprocess again */
		}
		free(path);
		nfiles++;
	}
	if (nfiles == 0 || get_blob(&b, "dotd", dotd) != BC_OK ||
	    get_blob(&b, "cpperr", cpperr) != BC_OK || bc_buf_avail(&b) != 0)
		goto out;	/* anything after the last blob: not ours */
	r = BC_OK;
out:
	if (r != BC_OK) {
		key[0] = '\0';
		bc_buf_reset(dotd);
		bc_buf_reset(cpperr);
	}
	bc_buf_free(&b);
	return r;
}
