/*
 * rsp.c - @file response files, split and expanded the way gcc
 * (libiberty buildargv) and clang (TokenizeGNUCommandLine) do it:
 *
 *   - whitespace separates words;
 *   - a backslash makes the next character literal, everywhere, also
 *     inside single and double quotes (both compilers do this; verified
 *     with gcc 12 and clang 14: '-DB=x\y' gives B=xy);
 *   - '...' and "..." group characters, the quotes themselves vanish;
 *     '' is an empty word;
 *   - an unterminated quote ends at the end of the text; a NUL byte ends
 *     the text (gcc reads the file as a C string).
 *
 * Expansion is recursive up to BC_MAX_RSP_DEPTH.  A relative @file inside
 * a response file is looked up next to the including file first (clang's
 * rule), then relative to the working directory (gcc's rule).  A file that
 * cannot be opened, or is not a regular file, stays a literal argument, as
 * in gcc; the classifier then keeps the job local.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/args.h"
#include "err.h"
#include "limits.h"
#include "util.h"

/* Whole-expansion budgets (a file that names itself twice doubles). */
#define RSP_MAX_FILES	1024
#define RSP_MAX_TOTAL	((size_t)64 << 20)
#define RSP_MAX_ARGS	((size_t)1 << 18)

struct rsp_state {
	size_t files;
	size_t bytes;
};

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

int
bc_args_split_rsp(const char *text, size_t n, struct bc_strv *out, char *err)
{
	char *word;
	size_t i = 0;

	(void)err;
	if (text == NULL)
		n = 0;
	word = xmalloc(n + 1);
	for (;;) {
		size_t w = 0;
		int squote = 0, dquote = 0, started = 0;

		while (i < n && text[i] != '\0' && is_space((unsigned char)text[i]))
			i++;
		if (i >= n || text[i] == '\0')
			break;
		while (i < n && text[i] != '\0') {
			char c = text[i];

			if (!squote && !dquote && is_space((unsigned char)c))
				break;
			i++;
			started = 1;
			if (c == '\\') {
				if (i < n && text[i] != '\0')
					word[w++] = text[i++];
			} else if (squote) {
				if (c == '\'')
					squote = 0;
				else
					word[w++] = c;
			} else if (dquote) {
				if (c == '"')
					dquote = 0;
				else
					word[w++] = c;
			} else if (c == '\'') {
				squote = 1;
			} else if (c == '"') {
				dquote = 1;
			} else {
				word[w++] = c;
			}
		}
		if (started) {
			word[w] = '\0';
			bc_strv_push(out, word);
		}
	}
	free(word);
	return BC_OK;
}

/*
 * Read a response file.  BC_OK with *text (NUL-terminated), BC_ERR_NOENT
 * if it cannot be used (caller keeps the argument literal), BC_ERR_LIMIT
 * if it is too large.
 */
static int
read_rsp(const char *path, char **text, size_t *len, char *err)
{
	struct stat st;
	char *p;
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return BC_ERR_NOENT;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return BC_ERR_NOENT;
	}
	if (st.st_size < 0 || (unsigned long long)st.st_size >
	    (unsigned long long)BC_MAX_RSP_SIZE) {
		close(fd);
		return bc_seterr(err, BC_ERR_LIMIT,
		    "response file %s is larger than %zu bytes", path,
		    BC_MAX_RSP_SIZE);
	}
	/* One byte more than the limit detects a file that grew. */
	p = xmalloc((size_t)st.st_size + 2);
	for (;;) {
		size_t cap = (size_t)st.st_size + 1;
		ssize_t r;

		if (got >= cap)
			break;
		r = read(fd, p + got, cap - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(p);
			close(fd);
			return BC_ERR_NOENT;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got > (size_t)st.st_size) {
		free(p);
		return bc_seterr(err, BC_ERR_LIMIT,
		    "response file %s changed while being read", path);
	}
	p[got] = '\0';
	*text = p;
	*len = got;
	return BC_OK;
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return NULL;
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static int expand_list(char *const *v, size_t n, int depth,
    const char *basedir, struct bc_strv *out, struct rsp_state *st,
    char *err);

static int
expand_one(const char *arg, int depth, const char *basedir,
    struct bc_strv *out, struct rsp_state *st, char *err)
{
	const char *name = arg + 1;
	char *path = NULL, *text = NULL, *dir;
	struct bc_strv words = BC_STRV_INIT;
	size_t len = 0;
	int r;

	r = BC_ERR_NOENT;
	if (basedir != NULL && name[0] != '/') {
		path = xasprintf("%s/%s", basedir, name);
		r = read_rsp(path, &text, &len, err);
		if (r == BC_ERR_NOENT) {
			free(path);
			path = NULL;
		}
	}
	if (r == BC_ERR_NOENT) {
		path = xstrdup(name);
		r = read_rsp(path, &text, &len, err);
	}
	if (r == BC_ERR_NOENT) {
		free(path);
		bc_strv_push(out, arg);
		return BC_OK;
	}
	if (r != BC_OK) {
		free(path);
		return r;
	}
	if (depth >= BC_MAX_RSP_DEPTH) {
		r = bc_seterr(err, BC_ERR_LIMIT,
		    "response files nested deeper than %d (at %s)",
		    BC_MAX_RSP_DEPTH, path);
		goto out;
	}
	st->files++;
	st->bytes += len;
	if (st->files > RSP_MAX_FILES || st->bytes > RSP_MAX_TOTAL) {
		r = bc_seterr(err, BC_ERR_LIMIT,
		    "response files too many or too large in total (at %s)",
		    path);
		goto out;
	}
	bc_args_split_rsp(text, len, &words, err);
	dir = dir_of(path);
	r = expand_list(words.v, words.n, depth + 1, dir, out, st, err);
	free(dir);
out:
	bc_strv_free(&words);
	free(text);
	free(path);
	return r;
}

static int
expand_list(char *const *v, size_t n, int depth, const char *basedir,
    struct bc_strv *out, struct rsp_state *st, char *err)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		if (out->n >= RSP_MAX_ARGS)
			return bc_seterr(err, BC_ERR_LIMIT,
			    "more than %zu arguments after response-file "
			    "expansion", RSP_MAX_ARGS);
		if (v[i][0] == '@' && v[i][1] != '\0') {
			r = expand_one(v[i], depth, basedir, out, st, err);
			if (r != BC_OK)
				return r;
		} else {
			bc_strv_push(out, v[i]);
		}
	}
	return BC_OK;
}

int
bc_args_expand_rsp(const struct bc_strv *in, struct bc_strv *out, char *err)
{
	struct rsp_state st = { 0, 0 };
	int r;

	if (in->n == 0)
		return BC_OK;
	bc_strv_push(out, in->v[0]);	/* the compiler is never expanded */
	r = expand_list(in->v + 1, in->n - 1, 0, NULL, out, &st, err);
	if (r != BC_OK) {
		bc_strv_free(out);
		bc_strv_init(out);
	}
	return r;
}
