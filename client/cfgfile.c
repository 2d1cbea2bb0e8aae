/*
 * cfgfile.c - read ~/.config/boltcc/config (or /etc/boltcc/config) into
 * the environment, below whatever the environment already says.  See
 * cfgfile.h for the file names and the syntax.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "client/cfgfile.h"
#include "common/limits.h"

#define SUGGEST_MAX_DISTANCE 2

/* Every variable the client reads that the file may set (cconf.c, the
 * SSH client, xcode.c); the man page's ENVIRONMENT lists them. */
static const char *const known_keys[] = {
	"BOLTCC_HOSTS", "BOLTCC_DIR", "BOLTCC_PUMP", "BOLTCC_PLAIN_DEBUG",
	"BOLTCC_CACHE", "BOLTCC_LOCAL_CACHE_SIZE", "BOLTCC_STATS_PORT",
	"BOLTCC_SSH_KEY", "BOLTCC_SSH_IDLE", "BOLTCC_SSH_REUSE_WAIT",
	"BOLTCC_SSH_HELPER_LOG",
	"DISTCC_HOSTS", "DISTCC_DIR", "DISTCC_FALLBACK",
	"DISTCC_SKIP_LOCAL_RETRY", "DISTCC_BACKOFF_PERIOD",
	"DISTCC_IO_TIMEOUT", "DISTCC_VERBOSE", "DISTCC_LOG",
	"DISTCC_SAVE_TEMPS", "DEVELOPER_DIR", NULL
};

/* distcc's own variables that boltcc does not use. */
static const char *const distcc_only_keys[] = {
	"DISTCC_SSH", "DISTCC_TCP_CORK", "DISTCC_TCP_DEFER_ACCEPT",
	"DISTCC_ENABLE_DISCREPANCY_EMAIL", "DISTCC_EMAILLOG_WHOM_TO_BLAME",
	"DISTCC_MAX_DISCREPANCY", "DISTCC_PRINCIPAL", "DISTCC_CMDLIST",
	"DISTCC_CMDLIST_NUMWORDS", "DISTCC_NO_REWRITE_CROSS",
	"DISTCC_NO_CROSS_REWRITE", "DISTCC_CLIENT_TMP",
	"DISTCC_EXCLUDE_FRESH_FILES", "DISTCC_PAUSE_TIME_MSEC", NULL
};

static int
in_list(const char *key, const char *const *list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strcmp(key, list[i]) == 0)
			return 1;
	return 0;
}

int
bc_cfgfile_key_known(const char *key)
{
	return in_list(key, known_keys);
}

const char *
bc_cfgfile_suggest(const char *key)
{
	const char *best = NULL;
	size_t i, d, bestd = SUGGEST_MAX_DISTANCE + 1;

	for (i = 0; known_keys[i] != NULL; i++)
		if ((d = bc_str_distance(key, known_keys[i],
		    SUGGEST_MAX_DISTANCE)) < bestd) {
			bestd = d;
			best = known_keys[i];
		}
	return best;
}

/* "NAME: why" for a name the file may set that boltcc does not read. */
static char *
unknown_key_msg(unsigned lineno, const char *key)
{
	const char *near = bc_cfgfile_suggest(key);

	if (in_list(key, distcc_only_keys))
		return xasprintf("line %u: %s: a distcc setting that boltcc "
		    "does not use", lineno, key);
	if (near != NULL)
		return xasprintf("line %u: %s: unknown setting; did you mean "
		    "%s?", lineno, key, near);
	return xasprintf("line %u: %s: unknown setting", lineno, key);
}

int
bc_cfgfile_key_ok(const char *key)
{
	if (strcmp(key, "DEVELOPER_DIR") == 0)
		return 1;
	/* The recursion guards are boltcc's own business, and the file
	 * cannot redirect itself. */
	if (strcmp(key, "BOLTCC_SAFEGUARD") == 0 ||
	    strcmp(key, "BOLTCC_CONFIG") == 0)
		return 0;
	return (strncmp(key, "BOLTCC_", 7) == 0 && key[7] != '\0') ||
	    (strncmp(key, "DISTCC_", 7) == 0 && key[7] != '\0');
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int
key_char(char c, int first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
		return 1;
	return !first && c >= '0' && c <= '9';
}

/* The rest of a line after a value: only blanks or a comment. */
static int
rest_ok(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p == end || *p == '#';
}

/*
 * Parse one line [p, end) (no newline).  Returns 1 with *key and *val
 * malloc'd, 0 for a blank/comment line, -1 with *why set for a bad one.
 */
static int
parse_line(const char *p, const char *end, char **key, char **val,
    const char **why)
{
	const char *k;
	size_t klen;
	struct bc_buf v;

	*key = *val = NULL;
	while (p < end && is_space(*p))
		p++;
	if (p == end || *p == '#')
		return 0;
	if ((size_t)(end - p) > 7 && memcmp(p, "export", 6) == 0 &&
	    is_space(p[6])) {
		p += 7;
		while (p < end && is_space(*p))
			p++;
	}
	k = p;
	while (p < end && key_char(*p, p == k))
		p++;
	klen = (size_t)(p - k);
	if (klen == 0) {
		*why = "expected NAME = value";
		return -1;
	}
	if (klen > BC_MAX_CFG_KEY) {
		*why = "name too long";
		return -1;
	}
	while (p < end && is_space(*p))
		p++;
	if (p == end || *p != '=') {
		*why = "expected '=' after the name";
		return -1;
	}
	p++;
	while (p < end && is_space(*p))
		p++;

	bc_buf_init(&v, BC_CFG_MAX_LINE);
	if (p < end && *p == '\'') {
		const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));

		if (q == NULL) {
			*why = "unterminated '";
			goto bad;
		}
		(void)bc_buf_put(&v, p + 1, (size_t)(q - p - 1));
		p = q + 1;
	} else if (p < end && *p == '"') {
		p++;
		for (;;) {
			if (p == end) {
				*why = "unterminated \"";
				goto bad;
			}
			if (*p == '"')
				break;
			if (*p == '\\' && p + 1 < end && (p[1] == '"' ||
			    p[1] == '\\' || p[1] == '$' || p[1] == '`'))
				p++;
			(void)bc_buf_put(&v, p, 1);
			p++;
		}
		p++;
	} else {
		/* Unquoted: to the end of the line or a " #" comment. */
		const char *s = p, *e = p;

		while (p < end && !(*p == '#' && p > s && is_space(p[-1])))
			p++;
		e = p;
		while (e > s && is_space(e[-1]))
			e--;
		(void)bc_buf_put(&v, s, (size_t)(e - s));
		p = end;
	}
	if (!rest_ok(p, end)) {
		*why = "text after the quoted value";
		goto bad;
	}
	*key = xstrndup(k, klen);
	*val = xstrndup(bc_buf_len(&v) > 0 ? (const char *)bc_buf_data(&v) :
	    "", bc_buf_len(&v));
	bc_buf_free(&v);
	return 1;
bad:
	bc_buf_free(&v);
	return -1;
}

int
bc_cfgfile_parse(const char *text, size_t n, struct bc_strv *keys,
    struct bc_strv *vals, struct bc_strv *warnings, char *err)
{
	const char *p = text, *end = text + n;
	unsigned lineno = 0;
	size_t count = 0;

	if (n > BC_CFG_MAX_SIZE)
		return bc_seterr(err, BC_ERR_LIMIT, "configuration file larger "
		    "than %d bytes", BC_CFG_MAX_SIZE);
	if (n > 0 && memchr(text, '\0', n) != NULL)
		return bc_seterr(err, BC_ERR_PROTO, "configuration file holds a "
		    "NUL byte (not a text file)");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl != NULL ? nl : end;
		const char *why = NULL;
		char *key, *val;
		int r;

		lineno++;
		if (le > p && le[-1] == '\r')
			le--;
		if ((size_t)(le - p) > BC_CFG_MAX_LINE) {
			bc_strv_push_owned(warnings, xasprintf("line %u: longer "
			    "than %d bytes, ignored", lineno, BC_CFG_MAX_LINE));
			p = nl != NULL ? nl + 1 : end;
			continue;
		}
		r = parse_line(p, le, &key, &val, &why);
		p = nl != NULL ? nl + 1 : end;
		if (r == 0)
			continue;
		if (r < 0) {
			bc_strv_push_owned(warnings, xasprintf("line %u: %s, "
			    "ignored", lineno, why));
			continue;
		}
		if (!bc_cfgfile_key_ok(key)) {
			const char *near = bc_cfgfile_suggest(key);

			bc_strv_push_owned(warnings, xasprintf("line %u: %s is "
			    "not a boltcc setting, ignored%s%s%s", lineno, key,
			    near != NULL ? "; did you mean " : "",
			    near != NULL ? near : "", near != NULL ? "?" : ""));
			free(key);
			free(val);
			continue;
		}
		/* Still applied: harmless if nothing reads it, and a name
		 * missing from known_keys keeps working. */
		if (!bc_cfgfile_key_known(key))
			bc_strv_push_owned(warnings, unknown_key_msg(lineno,
			    key));
		if (count >= BC_CFG_MAX_ENTRIES) {
			bc_strv_push_owned(warnings, xasprintf("line %u: more "
			    "than %d settings, ignored", lineno,
			    BC_CFG_MAX_ENTRIES));
			free(key);
			free(val);
			continue;
		}
		bc_strv_push_owned(keys, key);
		bc_strv_push_owned(vals, val);
		count++;
	}
	return BC_OK;
}

void
bc_cfgfile_candidates(const char *boltcc_config, const char *xdg,
    const char *home, const char *system_file, struct bc_strv *out,
    int *explicit_)
{
	*explicit_ = 0;
	if (boltcc_config != NULL && *boltcc_config != '\0') {
		bc_strv_push(out, boltcc_config);
		*explicit_ = 1;
		return;
	}
	/* XDG: only an absolute XDG_CONFIG_HOME counts. */
	if (xdg != NULL && xdg[0] == '/')
		bc_strv_push_owned(out, xasprintf("%s/boltcc/config", xdg));
	else if (home != NULL && home[0] == '/')
		bc_strv_push_owned(out, xasprintf("%s/.config/boltcc/config",
		    home));
	if (system_file != NULL)
		bc_strv_push(out, system_file);
}

void
bc_cfgfile_apply(const char *boltcc_config, const char *xdg,
    const char *home, struct bc_strv *warnings, char **path_out)
{
	struct bc_strv cand = BC_STRV_INIT, keys = BC_STRV_INIT,
	    vals = BC_STRV_INIT, w = BC_STRV_INIT;
	struct bc_buf b;
	char err[BC_ERRLEN];
	int explicit_, r = BC_ERR_NOENT;
	size_t i;

	*path_out = NULL;
	if (home == NULL || *home == '\0') {
		/* Xcode's -cc1 jobs run with an empty environment. */
		struct passwd *pw = getpwuid(getuid());

		home = pw != NULL ? pw->pw_dir : NULL;
	}
	bc_cfgfile_candidates(boltcc_config, xdg, home, BC_CFG_SYSTEM_FILE,
	    &cand, &explicit_);
	bc_buf_init(&b, BC_CFG_MAX_SIZE);
	for (i = 0; i < cand.n; i++) {
		struct stat st;

		if (!explicit_ && stat(cand.v[i], &st) != 0 && errno == ENOENT)
			continue;
		bc_buf_reset(&b);
		r = bc_read_file(cand.v[i], BC_CFG_MAX_SIZE, &b, err);
		if (r != BC_OK) {
			bc_strv_push_owned(warnings, xasprintf("configuration "
			    "file %s not read: %s", cand.v[i], err));
			break;
		}
		*path_out = xstrdup(cand.v[i]);
		break;
	}
	if (*path_out != NULL) {
		r = bc_cfgfile_parse((const char *)bc_buf_data(&b),
		    bc_buf_len(&b), &keys, &vals, &w, err);
		if (r != BC_OK)
			bc_strv_push_owned(warnings, xasprintf("%s: %s",
			    *path_out, err));
		for (i = 0; i < w.n; i++)
			bc_strv_push_owned(warnings, xasprintf("%s %s",
			    *path_out, w.v[i]));
		/* Last setting of a key wins: apply in reverse with
		 * overwrite off, so the first applied (the last line) stays;
		 * the environment, already set (even to ""), always stays. */
		for (i = keys.n; i > 0; i--)
			(void)setenv(keys.v[i - 1], vals.v[i - 1], 0);
	}
	bc_buf_free(&b);
	bc_strv_free(&cand);
	bc_strv_free(&keys);
	bc_strv_free(&vals);
	bc_strv_free(&w);
}
