/*
 * keeper.c - the cache keeper's records and loop (keeper.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "keeper.h"

_Static_assert(sizeof(struct bc_keeper_rec) <= PIPE_BUF,
    "a keeper record must be written atomically");

int
bc_keeper_send(int fd, const struct bc_keeper_rec *r)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = write(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*r) ? 0 : -1;
}

int
bc_keeper_store_row(int fd, struct bc_cache *c,
    const struct bc_cache_stored *row, char *err)
{
	struct bc_keeper_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BC_KEEP_STORED;
	r.u.stored = *row;
	if (bc_keeper_send(fd, &r) == 0)
		return BC_OK;
	return bc_cache_index_stored(c, row, 1, err);
}

int
bc_keeper_touch_send(int fd, const char *key, int count, int hit,
    int64_t compile_ms, const char *origin)
{
	struct bc_keeper_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BC_KEEP_TOUCH;
	snprintf(r.u.touch.key, sizeof(r.u.touch.key), "%s", key);
	snprintf(r.u.touch.origin, sizeof(r.u.touch.origin), "%s",
	    origin != NULL ? origin : "");
	r.u.touch.count = count;
	r.u.touch.hit = hit;
	r.u.touch.compile_ms = compile_ms;
	return bc_keeper_send(fd, &r);
}

void
bc_keeper_touch(int fd, struct bc_cache *c, const char *key, int count,
    int hit, int64_t compile_ms, const char *origin)
{
	if (bc_keeper_touch_send(fd, key, count, hit, compile_ms, origin) != 0)
		bc_cache_touch_from(c, key, count, hit, compile_ms, origin);
}

struct batch {
	struct bc_cache_loc loc[BC_KEEPER_BATCH];
	struct bc_cache_stored st[BC_KEEPER_BATCH];
	struct bc_keeper_touch tc[BC_KEEPER_BATCH];
	size_t nloc, nst, ntc;
};

static void
flush(struct bc_cache *c, struct batch *b)
{
	char e[BC_ERRLEN];
	size_t i;

	/* said once (a failing index fails every batch); each time at
	 * debug level; the blobs stay and the next start indexes them */
	if (b->nloc > 0 && bc_cache_loc_put(c, b->loc, b->nloc, e) != BC_OK) {
		bc_warn_once("cache: cannot record key locations: %s", e);
		bc_debug("cache: recording %zu key locations: %s", b->nloc, e);
	}
	if (b->nst > 0 && bc_cache_index_stored(c, b->st, b->nst, e) != BC_OK) {
		bc_warn_once("cache: cannot index stored blobs (they are "
		    "indexed at the next start): %s", e);
		bc_debug("cache: indexing %zu stored blobs: %s", b->nst, e);
	}
	/* after the rows: a hit on a blob stored in this batch finds it */
	for (i = 0; i < b->ntc; i++)
		bc_cache_touch_from(c, b->tc[i].key, b->tc[i].count,
		    b->tc[i].hit, b->tc[i].compile_ms,
		    b->tc[i].origin[0] != '\0' ? b->tc[i].origin : NULL);
	b->nloc = b->nst = b->ntc = 0;
}

static void
answer(int ackfd, uint32_t seq)
{
	ssize_t n;

	do
		n = write(ackfd, &seq, sizeof(seq));
	while (n < 0 && errno == EINTR);
}

static volatile sig_atomic_t stop_asked;

static void
on_term(int sig)
{
	(void)sig;
	stop_asked = 1;
}

void
bc_keeper_run(struct bc_cache *c, int rfd, int ackfd)
{
	static struct bc_keeper_rec v[BC_KEEPER_BATCH];
	static struct batch b;
	struct sigaction sa;
	size_t have = 0;

	/* SIGTERM (a service manager stops the whole group): write what
	 * was sent, then exit; the rows of stored blobs are not dropped. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term;
	(void)sigaction(SIGTERM, &sa, NULL);
	for (;;) {
		size_t i, whole;
		ssize_t n;

		if (stop_asked) {
			int fl = fcntl(rfd, F_GETFL);

			if (fl >= 0)
				(void)fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
		}
		n = read(rfd, (char *)v + have, sizeof(v) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* EOF; or EAGAIN once stopping: all read */
		have += (size_t)n;
		whole = have / sizeof(v[0]);
		for (i = 0; i < whole; i++) {
			const struct bc_keeper_rec *r = &v[i];

			switch (r->kind) {
			case BC_KEEP_LOC:
				b.loc[b.nloc++] = r->u.loc;
				b.loc[b.nloc - 1].key[BC_HASH_HEXLEN] = '\0';
				b.loc[b.nloc - 1].host[BC_MAX_LOC_HOST] = '\0';
				break;
			case BC_KEEP_STORED:
				b.st[b.nst++] = r->u.stored;
				b.st[b.nst - 1].key[BC_HASH_HEXLEN] = '\0';
				break;
			case BC_KEEP_TOUCH:
				b.tc[b.ntc++] = r->u.touch;
				b.tc[b.ntc - 1].key[BC_HASH_HEXLEN] = '\0';
				b.tc[b.ntc - 1].origin[BC_CACHE_ORIGIN_LEN] =
				    '\0';
				break;
			case BC_KEEP_SYNC:
				flush(c, &b);
				answer(ackfd, r->seq);
				break;
			default:
				bc_warn("cache keeper: unknown record %u",
				    (unsigned)r->kind);
				break;
			}
		}
		flush(c, &b);
		/* the start of a record cut by the buffer's end */
		have -= whole * sizeof(v[0]);
		if (have > 0)
			memmove(v, (char *)v + whole * sizeof(v[0]), have);
	}
	flush(c, &b);
}

int
bc_keeper_sync(int fd, uint32_t seq)
{
	struct bc_keeper_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BC_KEEP_SYNC;
	r.seq = seq;
	return bc_keeper_send(fd, &r);
}

int
bc_keeper_acks(int ackfd, uint32_t *last)
{
	uint32_t v[64];
	int got = 0;

	for (;;) {
		ssize_t n = read(ackfd, v, sizeof(v));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return got;
		if (n <= 0)
			return -1;	/* EOF: the keeper is gone */
		/* answers are written whole (4 bytes, atomic) */
		if ((size_t)n < sizeof(v[0]))
			return got;
		*last = v[(size_t)n / sizeof(v[0]) - 1];
		got = 1;
	}
}
