/*
 * lookup.c - cache lookups on the farm (see lookup.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "client/cstats.h"
#include "client/hostsel.h"
#include "client/lookup.h"
#include "client/remote.h"
#include "client/ssh.h"

ssize_t
bc_lookup_owner(const struct bc_hostlist *hl, const unsigned char *cand,
    const char *key)
{
	uint8_t best[BC_HASH_LEN], d[BC_HASH_LEN];
	ssize_t owner = -1;
	size_t i;

	for (i = 0; i < hl->n; i++) {
		const struct bc_host *h = &hl->v[i];
		struct bc_hash hs;
		char port[16];

		if (!cand[i])
			continue;
		snprintf(port, sizeof(port), "%d", h->port);
		bc_hash_init(&hs);
		bc_hash_update_str(&hs, key);
		bc_hash_update_str(&hs, h->name != NULL ? h->name : "");
		bc_hash_update_str(&hs, port);
		bc_hash_final(&hs, d);
		if (owner < 0 || memcmp(d, best, sizeof(d)) > 0) {
			memcpy(best, d, sizeof(d));
			owner = (ssize_t)i;
		}
	}
	return owner;
}

static void
note_failed(struct bc_lookup_result *res, size_t host, int r)
{
	if (res->nfailed >= BC_LOOKUP_MAX_FAILED)
		return;
	res->failed[res->nfailed] = host;
	res->failed_r[res->nfailed] = r;
	res->nfailed++;
}

void
bc_lookup_note_failed(const struct bc_hostlist *hl,
    const struct bc_lookup_result *res, const char *lockdir,
    int backoff_period, struct bc_cstats *stats)
{
	size_t i;

	for (i = 0; i < res->nfailed; i++) {
		const struct bc_host *h = &hl->v[res->failed[i]];
		int r = res->failed_r[i];
		const char *why = r == BC_ERR_NOENT ? "lookup-connect" :
		    r == BC_ERR_TIMEOUT ? "lookup-timeout" : "lookup-io";
		const char *fc = r == BC_ERR_NOENT ? "fault_connect" :
		    bc_remote_fault_counter(r, NULL);

		/* A daemon that accepted and then closed is alive: most often
		 * it refused over its --jobs + --queue limit while many
		 * clients looked up at once.  A backoff mark would take it
		 * out of a busy build for a whole period; its compile
		 * connection decides instead. */
		bc_info("cache lookup: %s failed (%s)%s", h->spec, why,
		    r == BC_ERR_NOENT || r == BC_ERR_TIMEOUT ?
		    ": backing off" : "");
		if (backoff_period > 0 && (r == BC_ERR_NOENT ||
		    r == BC_ERR_TIMEOUT))
			(void)bc_hostsel_backoff_mark_why(lockdir, h,
			    r == BC_ERR_NOENT ? "cache lookup: cannot connect" :
			    "cache lookup: no answer in time");
		if (stats == NULL)
			continue;
		bc_cstats_add(stats, "host_failures", 1);
		bc_cstats_add2(stats, "host_failure_by_reason", why, 1);
		if (fc != NULL)
			bc_cstats_add(stats, fc, 1);
	}
}

/* A daemon answers a lookup at once: a slow answer costs more than a
 * miss, and a hung host must not hold the job. */
static int
lookup_timeout(int io_timeout_ms)
{
	return io_timeout_ms <= 0 || io_timeout_ms > BC_LOOKUP_IO_TIMEOUT_MS ?
	    BC_LOOKUP_IO_TIMEOUT_MS : io_timeout_ms;
}

/* The bytes of a LOOKUP (host NULL) or LOCATE of key; with the client's
 * origin (not "") they ask who stored a hit (FLAG_ORIGIN; a LOOKUP is
 * then a LOOKUPF). */
static int
encode_lookup(const char *key, const char *host, uint32_t flags,
    const char *origin, struct bc_buf *out, char *err)
{
	struct bc_request req;
	int r;

	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = host != NULL ? BC_RQST_LOCATE : BC_RQST_LOOKUP;
	req.key = xstrdup(key);
	req.flags = flags;
	if (host != NULL)
		req.loc_host = xstrdup(host);
	if (origin != NULL && origin[0] != '\0') {
		req.flags |= BC_FLAG_ORIGIN;
		req.origin = xstrdup(origin);
		if (host == NULL)
			req.kind = BC_RQST_LOOKUPF;
	}
	r = bc_proto_write_request_head(out, &req, err);
	bc_request_free(&req);
	return r;
}

/* Connect to host i and send out: the connection, or -1 with the failure
 * noted in res. */
static int
send_lookup(const struct bc_hostlist *hl, size_t i, const struct bc_buf *out,
    int connect_timeout_ms, int io_timeout_ms, struct bc_lookup_result *res)
{
	const struct bc_host *h = &hl->v[i];
	struct bc_io io;
	char e[BC_ERRLEN];
	int fd = -1, r;

	if ((r = bc_ssh_connect_host(h, connect_timeout_ms, &fd, e))
	    != BC_OK) {
		bc_debug("cache lookup on %s: %s", h->spec, e);
		note_failed(res, i, r == BC_ERR_TIMEOUT ? BC_ERR_TIMEOUT :
		    BC_ERR_NOENT);
		return -1;
	}
	bc_io_init(&io, fd, fd, io_timeout_ms);
	if ((r = bc_io_write_buf(&io, out, e)) != BC_OK) {
		bc_debug("cache lookup on %s: %s", h->spec, e);
		note_failed(res, i, r);
		close(fd);
		return -1;
	}
	res->sent += io.bytes_out;
	res->asked++;
	return fd;
}

/* Read host i's answer on fd (then closed).  A failure is noted in res,
 * except a refusal, which is an answer (an older daemon). */
static int
read_lookup(const struct bc_hostlist *hl, size_t i, int fd, int kind,
    int io_timeout_ms, struct bc_reply *rep, struct bc_lookup_result *res)
{
	struct bc_io io;
	char e[BC_ERRLEN];
	int r;

	bc_io_init(&io, fd, fd, io_timeout_ms);
	r = bc_proto_read_reply(&io, BC_PROTO_BOLT, kind, rep, e);
	res->received += io.bytes_in;
	close(fd);
	if (r != BC_OK) {
		bc_debug("cache lookup on %s: %s", hl->v[i].spec, e);
		if (r != BC_ERR_DENIED && r != BC_ERR_BUSY)
			note_failed(res, i, r);
	}
	return r;
}

int
bc_lookup_fanout(const struct bc_hostlist *hl, const unsigned char *cand,
    ssize_t owner, const char *key, const char *origin, int connect_timeout_ms,
    int io_timeout_ms, struct bc_reply *rep, struct bc_lookup_result *res,
    char *err)
{
	struct bc_buf out;
	size_t *order, n = 0, i;
	int *fds, r;

	io_timeout_ms = lookup_timeout(io_timeout_ms);
	memset(res, 0, sizeof(*res));
	res->hit_host = -1;
	bc_reply_init(rep);
	bc_buf_init(&out, 256);
	if ((r = encode_lookup(key, NULL, 0, origin, &out, err)) != BC_OK) {
		bc_buf_free(&out);
		return r;
	}
	order = xcalloc(hl->n + 1, sizeof(*order));
	fds = xcalloc(hl->n + 1, sizeof(*fds));
	if (owner >= 0 && cand[owner])
		order[n++] = (size_t)owner;
	for (i = 0; i < hl->n; i++)
		if (cand[i] && (ssize_t)i != owner)
			order[n++] = i;
	/* Send every request first: the daemons look up in parallel. */
	for (i = 0; i < n; i++)
		fds[i] = send_lookup(hl, order[i], &out, connect_timeout_ms,
		    io_timeout_ms, res);
	bc_buf_free(&out);
	r = BC_ERR_NOENT;
	for (i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (r == BC_OK) {	/* already hit: drop the others */
			close(fds[i]);
			continue;
		}
		bc_reply_free(rep);
		if (read_lookup(hl, order[i], fds[i], BC_RQST_LOOKUP,
		    io_timeout_ms, rep, res) != BC_OK)
			continue;
		if (rep->miss) {
			bc_debug("cache miss on %s", hl->v[order[i]].spec);
			continue;
		}
		res->hit_host = (ssize_t)order[i];
		r = BC_OK;
	}
	free(order);
	free(fds);
	if (r != BC_OK) {
		bc_reply_free(rep);
		return bc_seterr(err, BC_ERR_NOENT, "not in the cache of %zu "
		    "host(s)", res->asked);
	}
	return BC_OK;
}

int
bc_lookup_host_name(const struct bc_host *h, char *out, size_t outlen)
{
	int n;

	if (h->kind == BC_HOST_TCP)
		n = snprintf(out, outlen, "%s:%d", h->name != NULL ? h->name :
		    "", h->port);
	else
		n = snprintf(out, outlen, "ssh:%s", h->name != NULL ? h->name :
		    "");
	return n > 0 && (size_t)n < outlen && (size_t)n <= BC_MAX_LOC_HOST ?
	    BC_OK : BC_ERR_LIMIT;
}

/* A LOOKUP (host NULL) or LOCATE of key at host i and its answer. */
static int
ask_one(const struct bc_hostlist *hl, size_t i, const char *key,
    const char *host, uint32_t flags, const char *origin,
    int connect_timeout_ms,
    int io_timeout_ms, struct bc_reply *rep, struct bc_lookup_result *res,
    char *err)
{
	struct bc_buf out;
	int fd, r;

	bc_reply_init(rep);
	bc_buf_init(&out, 512);
	if ((r = encode_lookup(key, host, flags, origin, &out, err)) !=
	    BC_OK) {
		bc_buf_free(&out);
		return r;
	}
	fd = send_lookup(hl, i, &out, connect_timeout_ms, io_timeout_ms, res);
	bc_buf_free(&out);
	if (fd < 0)
		return bc_seterr(err, BC_ERR_NOENT, "%s: no connection",
		    hl->v[i].spec);
	return read_lookup(hl, i, fd, host != NULL ? BC_RQST_LOCATE :
	    BC_RQST_LOOKUP, io_timeout_ms, rep, res);
}

static ssize_t
host_named(const struct bc_hostlist *hl, const unsigned char *cand,
    const char *name)
{
	char n[BC_MAX_LOC_HOST + 2];
	size_t i;

	for (i = 0; i < hl->n; i++)
		if (cand[i] && bc_lookup_host_name(&hl->v[i], n, sizeof(n))
		    == BC_OK && strcmp(n, name) == 0)
			return (ssize_t)i;
	return -1;
}

int
bc_lookup_locate(const struct bc_hostlist *hl, const unsigned char *cand,
    size_t owner, ssize_t at, const char *key, const char *origin,
    int connect_timeout_ms,
    int io_timeout_ms, struct bc_reply *rep, struct bc_lookup_result *res,
    char *err)
{
	char name[BC_MAX_LOC_HOST + 2];
	ssize_t there;
	int r;

	io_timeout_ms = lookup_timeout(io_timeout_ms);
	memset(res, 0, sizeof(*res));
	res->hit_host = -1;
	name[0] = '\0';
	if (at >= 0 && (size_t)at != owner && bc_lookup_host_name(&hl->v[at],
	    name, sizeof(name)) != BC_OK)
		name[0] = '\0';
	r = ask_one(hl, owner, key, name, 0, origin, connect_timeout_ms,
	    io_timeout_ms, rep, res, err);
	if (r != BC_OK) {	/* failed (noted), or an older boltccd */
		bc_reply_free(rep);
		return bc_seterr(err, BC_ERR_NOTSUP, "%s: no LOCATE answer",
		    hl->v[owner].spec);
	}
	if (!rep->miss) {
		res->hit_host = (ssize_t)owner;
		return BC_OK;
	}
	if (rep->locn == NULL) {
		bc_reply_free(rep);
		return bc_seterr(err, BC_ERR_NOENT, "not in the farm's caches");
	}
	there = host_named(hl, cand, rep->locn);
	bc_debug("cache: %.16s is on %s per its owner", key, rep->locn);
	bc_reply_free(rep);
	if (there < 0 || (size_t)there == owner)
		return bc_seterr(err, BC_ERR_NOTSUP, "the owner names a host "
		    "not in this list");
	if (ask_one(hl, (size_t)there, key, NULL, 0, origin,
	    connect_timeout_ms,
	    io_timeout_ms, rep, res, err) == BC_OK && !rep->miss) {
		res->hit_host = there;
		return BC_OK;
	}
	bc_reply_free(rep);
	/* The location was wrong (evicted, failed, gone): record ours. */
	if (ask_one(hl, owner, key, name, BC_LOCATE_REPLACE, origin,
	    connect_timeout_ms,
	    io_timeout_ms, rep, res, err) == BC_OK && !rep->miss) {
		res->hit_host = (ssize_t)owner;	/* stored meanwhile */
		return BC_OK;
	}
	bc_reply_free(rep);
	return bc_seterr(err, BC_ERR_NOENT, "not on %s, where its owner "
	    "placed it", hl->v[there].spec);
}
