/*
 * admin.c - operator requests on the stats port (admin.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/http.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/util.h"
#include "acl.h"
#include "admin.h"

#define STR_(x) #x
#define STR_LIMIT(x) STR_(x)

/* The requests, their one parameter (NULL: none). */
static const struct {
	const char *path;
	enum bc_admin_op op;
	const char *param;
} routes[] = {
	{ "/admin/cache/clear", BC_ADMIN_CLEAR, NULL },
	{ "/admin/cache/limit", BC_ADMIN_LIMIT, "size" },
	{ "/admin/cache/evict", BC_ADMIN_EVICT, "older-than" },
	{ "/admin/stats/zero", BC_ADMIN_ZERO, NULL },
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

const char *
bc_admin_op_name(enum bc_admin_op op)
{
	switch (op) {
	case BC_ADMIN_CLEAR: return "clear";
	case BC_ADMIN_LIMIT: return "limit";
	case BC_ADMIN_EVICT: return "evict";
	case BC_ADMIN_ZERO: return "zero";
	case BC_ADMIN_BAD: return "refused";
	default: return "none";
	}
}

static void refuse(struct bc_admin_req *out, int status, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
refuse(struct bc_admin_req *out, int status, const char *fmt, ...)
{
	va_list ap;

	out->op = BC_ADMIN_BAD;
	out->status = status;
	va_start(ap, fmt);
	(void)vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

/* "/admin", "/admin/..." or "/admin?..." */
static int
is_admin_path(const char *t)
{
	return bc_str_has_prefix(t, "/admin") &&
	    (t[6] == '\0' || t[6] == '/' || t[6] == '?');
}

/* The parameter value of a route's request: size or age. */
static void
set_param(struct bc_admin_req *out, const char *name, const char *v)
{
	if (out->op == BC_ADMIN_LIMIT) {
		if (bc_parse_size(v, 0, &out->size) != BC_OK)
			refuse(out, 400, "bad parameter size: '%s' is not a "
			    "size like 500M or 20G (0: back to --cache-size)",
			    v);
	} else if (out->op == BC_ADMIN_EVICT) {
		if (bc_parse_age(v, &out->age) != BC_OK)
			refuse(out, 400, "bad parameter older-than: '%s' is "
			    "not an age like 90s, 30m, 12h or 7d", v);
	} else
		refuse(out, 400, "unknown parameter '%s'", name);
}

/* One "name=value" of the query into name and val; -1 (refused) if
 * either is longer than BC_MAX_HTTP_PARAM. */
static int
get_pair(struct bc_buf *q, char *name, char *val, struct bc_admin_req *out)
{
	size_t k = 0, v = 0;
	uint8_t c = 0;

	while (bc_buf_get_u8(q, &c) == BC_OK && c != '=' && c != '&') {
		if (k == BC_MAX_HTTP_PARAM) {
			refuse(out, 400, "a parameter name is longer than %s "
			    "bytes", STR_LIMIT(BC_MAX_HTTP_PARAM));
			return -1;
		}
		name[k++] = (char)c;
	}
	name[k] = '\0';
	while (c == '=' && bc_buf_get_u8(q, &c) == BC_OK && c != '&') {
		if (v == BC_MAX_HTTP_PARAM) {
			refuse(out, 400, "parameter %s: value too long", name);
			return -1;
		}
		val[v++] = (char)c;
		c = '=';
	}
	val[v] = '\0';
	return 0;
}

/* name=value&... for the route's one parameter. */
static void
parse_query(struct bc_buf *q, const char *param, struct bc_admin_req *out)
{
	char name[BC_MAX_HTTP_PARAM + 1], val[BC_MAX_HTTP_PARAM + 1];
	int n, seen = 0;

	for (n = 0; bc_buf_avail(q) > 0 && out->op != BC_ADMIN_BAD; n++) {
		if (n == BC_MAX_HTTP_PARAMS)
			refuse(out, 400, "more than %s parameters",
			    STR_LIMIT(BC_MAX_HTTP_PARAMS));
		else if (get_pair(q, name, val, out) != 0)
			break;
		else if (name[0] == '\0' && val[0] == '\0')
			continue;	/* "&&" */
		else if (param == NULL || strcmp(name, param) != 0)
			refuse(out, 400, "unknown parameter '%s'", name);
		else if (seen++)
			refuse(out, 400, "parameter %s given twice", name);
		else
			set_param(out, name, val);
	}
	if (out->op != BC_ADMIN_BAD && param != NULL && !seen)
		refuse(out, 400, "missing parameter %s", param);
}

void
bc_admin_parse(const void *req, size_t n, struct bc_admin_req *out)
{
	char method[BC_MAX_HTTP_METHOD + 1], target[BC_MAX_HTTP_TARGET + 1];
	struct bc_buf q;
	const char *qm;
	size_t i, len;
	int r, end;

	memset(out, 0, sizeof(*out));
	out->op = BC_ADMIN_NONE;
	r = bc_http_request_line(req, n, method, target, &end);
	if (r == BC_ERR_PROTO)
		return;		/* not HTTP: the text page, as distccd */
	if (!is_admin_path(target))
		return;
	if (r == BC_ERR_LIMIT) {
		refuse(out, 400, "request target longer than %s bytes",
		    STR_LIMIT(BC_MAX_HTTP_TARGET));
		return;
	}
	if (strcmp(method, "POST") != 0) {
		refuse(out, 405, "%s never changes anything: admin requests "
		    "are POST", method);
		return;
	}
	qm = strchr(target, '?');
	len = qm != NULL ? (size_t)(qm - target) : strlen(target);
	for (i = 0; i < NROUTES; i++)
		if (strlen(routes[i].path) == len &&
		    memcmp(routes[i].path, target, len) == 0)
			break;
	if (i == NROUTES) {
		target[len] = '\0';
		refuse(out, 404, "no admin request %s (see boltccd(8))",
		    target);
		return;
	}
	out->op = routes[i].op;
	if (qm != NULL)
		bc_buf_view(&q, qm + 1, strlen(qm + 1));
	else
		bc_buf_view(&q, "", 0);
	parse_query(&q, routes[i].param, out);
}

int
bc_admin_peer_ok(const struct bc_acl *allow, const struct sockaddr *sa,
    socklen_t salen)
{
	struct bc_acl lo;
	int ok;

	bc_acl_init(&lo);
	bc_acl_add_loopback(&lo);
	ok = bc_acl_match(&lo, sa, salen) ||
	    (allow != NULL && bc_acl_match(allow, sa, salen));
	bc_acl_free(&lo);
	return ok;
}

static const char *
status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	default: return "Internal Server Error";
	}
}

int
bc_admin_answer(int status, const char *json, struct bc_buf *out)
{
	return bc_buf_putf(out, "HTTP/1.0 %d %s\nContent-Type: "
	    "application/json\nConnection: close\n%s\n%s\n", status,
	    status_text(status), status == 405 ? "Allow: POST\n" : "", json);
}

int
bc_admin_error(int status, const char *why, struct bc_buf *out)
{
	struct bc_buf j = BC_BUF_INIT(4096);
	struct bc_jsonw w;
	int r;

	bc_jsonw_init(&w, &j);
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "error");
	bc_jsonw_str(&w, why);
	bc_jsonw_obj_end(&w);
	r = bc_jsonw_end(&w);
	if (r == BC_OK)
		r = bc_buf_put_u8(&j, '\0');
	if (r == BC_OK)
		r = bc_admin_answer(status, (const char *)bc_buf_data(&j), out);
	bc_buf_free(&j);
	return r;
}

/* What the cache holds after an operation: "entries":N,... */
static void
after_totals(struct bc_cache *c, struct bc_jsonw *w)
{
	struct bc_cache_stats s;

	if (bc_cache_stats(c, &s, NULL) != BC_OK)
		return;
	bc_jsonw_key(w, "entries");
	bc_jsonw_uint(w, s.entries);
	bc_jsonw_key(w, "stored_bytes");
	bc_jsonw_uint(w, s.stored_bytes);
	bc_jsonw_key(w, "limit_bytes");
	bc_jsonw_uint(w, s.max_bytes);
	bc_jsonw_key(w, "limit_set");
	bc_jsonw_bool(w, s.limit_set);
}

/* The operation itself; its JSON appended to json. */
static int
exec_op(const struct bc_admin_req *rq, struct bc_cache *c,
    struct bc_buf *json, char *err)
{
	static const char *const name[] = {
		[BC_ADMIN_CLEAR] = "clear", [BC_ADMIN_EVICT] = "evict",
		[BC_ADMIN_LIMIT] = "limit", [BC_ADMIN_ZERO] = "zero",
	};
	struct bc_jsonw w;
	uint64_t n = 0, freed = 0;
	int r;

	switch (rq->op) {
	case BC_ADMIN_CLEAR:
		r = bc_cache_clear(c, &n, &freed, err);
		break;
	case BC_ADMIN_EVICT:
		r = bc_cache_evict_older(c, (int64_t)time(NULL) - rq->age, &n,
		    &freed, err);
		break;
	case BC_ADMIN_LIMIT:
		r = bc_cache_set_limit(c, rq->size, &n, &freed, err);
		break;
	case BC_ADMIN_ZERO:
		r = bc_cache_zero(c, err);
		break;
	default:
		return bc_seterr(err, BC_ERR_INVAL, "not a cache request");
	}
	if (r != BC_OK)
		return r;
	bc_jsonw_init(&w, json);
	bc_jsonw_obj(&w);
	bc_jsonw_key(&w, "op");
	bc_jsonw_str(&w, name[rq->op]);
	if (rq->op == BC_ADMIN_ZERO) {
		bc_jsonw_key(&w, "zeroed_at");
		bc_jsonw_int(&w, (long long)time(NULL));
	} else {
		if (rq->op == BC_ADMIN_EVICT) {
			bc_jsonw_key(&w, "older_than_sec");
			bc_jsonw_int(&w, (long long)rq->age);
		}
		bc_jsonw_key(&w, rq->op == BC_ADMIN_CLEAR ?
		    "cleared_entries" : "evicted_entries");
		bc_jsonw_uint(&w, n);
		bc_jsonw_key(&w, "freed_bytes");
		bc_jsonw_uint(&w, freed);
		after_totals(c, &w);
	}
	bc_jsonw_obj_end(&w);
	if ((r = bc_jsonw_end(&w)) == BC_OK)
		r = bc_buf_put_u8(json, '\0');
	return r != BC_OK ? bc_seterr(err, r, "the answer does not fit") : r;
}

int
bc_admin_exec(const struct bc_admin_req *rq, const char *dir, uint64_t size,
    struct bc_buf *out)
{
	struct bc_cache *c;
	struct bc_buf json = BC_BUF_INIT(4096);
	char err[BC_ERRLEN];
	int r;

	if (dir == NULL)
		return bc_admin_error(409, "this daemon has no cache "
		    "(--no-cache)", out);
	if ((r = bc_cache_open(dir, size, &c, err)) == BC_OK) {
		r = exec_op(rq, c, &json, err);
		bc_cache_close(c);
	}
	r = r != BC_OK ? bc_admin_error(500, err, out) :
	    bc_admin_answer(200, (const char *)bc_buf_data(&json), out);
	bc_buf_free(&json);
	return r;
}

static void
write_whole(int fd, const struct bc_buf *b)
{
	const uint8_t *p = bc_buf_data(b);
	size_t left = bc_buf_len(b);

	while (left > 0) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		left -= (size_t)w;
	}
}

pid_t
bc_admin_spawn(const struct bc_admin_req *rq, const char *dir, uint64_t size,
    void (*child_init)(void *), void *arg, int *fd)
{
	int p[2];
	pid_t pid;

	*fd = -1;
	if (pipe(p) != 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		struct bc_buf out = BC_BUF_INIT(64 * 1024);
		struct sigaction sa;

		close(p[0]);
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = SIG_DFL;
		(void)sigaction(SIGTERM, &sa, NULL);
		(void)sigaction(SIGINT, &sa, NULL);
		(void)sigaction(SIGHUP, &sa, NULL);
		(void)sigaction(SIGCHLD, &sa, NULL);
		if (child_init != NULL)
			child_init(arg);
		(void)bc_admin_exec(rq, dir, size, &out);
		write_whole(p[1], &out);
		_exit(0);
	}
	close(p[1]);
	(void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	*fd = p[0];
	return pid;
}
