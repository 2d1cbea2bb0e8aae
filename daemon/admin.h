/*
 * admin.h - operator requests on the stats port (doc/cache.md,
 * "Administration"):
 *
 *   POST /admin/cache/clear                 remove every cache entry
 *   POST /admin/cache/limit?size=SIZE       the cache's size limit, kept
 *                                           in its index (0: forget it)
 *   POST /admin/cache/evict?older-than=AGE  remove entries not used for
 *                                           AGE (s, m, h or d)
 *   POST /admin/stats/zero                  zero what the pages show
 *
 * GET (or any other method) of /admin/... changes nothing: 405.  Only a
 * peer on loopback (127.0.0.0/8, ::1) or in --admin-allow may send them
 * (403 otherwise, naming the reason); there is no other authentication.
 * Answers are JSON: 200 with what was done, 4xx with {"error": why}.
 *
 * The cache operations run in a short-lived child of the daemon
 * (bc_admin_spawn), which writes the whole HTTP answer to a pipe and
 * exits: the daemon's loop never waits for a long clear.
 */
#ifndef BC_ADMIN_H
#define BC_ADMIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/buf.h"
#include "acl.h"

enum bc_admin_op {
	BC_ADMIN_NONE = 0,	/* not an admin request: a stats page */
	BC_ADMIN_BAD,		/* refused: status and why say how */
	BC_ADMIN_CLEAR,
	BC_ADMIN_LIMIT,
	BC_ADMIN_EVICT,
	BC_ADMIN_ZERO,
};

struct bc_admin_req {
	enum bc_admin_op op;
	int status;		/* BC_ADMIN_BAD: 400, 404 or 405 */
	char why[160];		/* BC_ADMIN_BAD: the reason, printable */
	uint64_t size;		/* LIMIT: bytes, 0 = forget the limit */
	int64_t age;		/* EVICT: seconds */
};

/*
 * Parse the request line of the bytes a stats connection sent (at most
 * BC_MAX_HTTP_REQUEST; a partial request is parsed as far as it goes).
 * Always fills out: op NONE for anything that is not under /admin.
 */
void bc_admin_parse(const void *req, size_t n, struct bc_admin_req *out);

/* The name of an op for logs and answers ("clear", ...). */
const char *bc_admin_op_name(enum bc_admin_op op);

/* 1 if the peer may send admin requests: loopback or in allow. */
int bc_admin_peer_ok(const struct bc_acl *allow, const struct sockaddr *sa,
    socklen_t salen);

/* A whole HTTP/1.0 answer: status with the JSON body (one object). */
int bc_admin_answer(int status, const char *json, struct bc_buf *out);
/* An error answer: {"error":"<why>"} (why is escaped). */
int bc_admin_error(int status, const char *why, struct bc_buf *out);

/*
 * Do a cache request (CLEAR, LIMIT, EVICT, ZERO) on the cache in dir
 * opened with size limit size, and write the whole answer to out.
 */
int bc_admin_exec(const struct bc_admin_req *rq, const char *dir,
    uint64_t size, struct bc_buf *out);

/*
 * bc_admin_exec in a child process: *fd gets the read end of a pipe
 * (non-blocking, close-on-exec) that carries the answer and then EOF.
 * child_init (may be NULL) runs first in the child (close what it must
 * not hold).  The child's pid, or -1 with *fd -1.
 */
pid_t bc_admin_spawn(const struct bc_admin_req *rq, const char *dir,
    uint64_t size, void (*child_init)(void *), void *arg, int *fd);

#endif
