/*
 * evloop.c - one iteration of an event loop over poll(2) (see evloop.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/evloop.h"
#include "common/io.h"
#include "common/util.h"

void
bc_evloop_init(struct bc_evloop *ev)
{
	ev->pfd = NULL;
	ev->src = NULL;
	ev->n = ev->cap = 0;
	bc_evloop_begin(ev);
}

void
bc_evloop_free(struct bc_evloop *ev)
{
	free(ev->pfd);
	free(ev->src);
	bc_evloop_init(ev);
}

void
bc_evloop_begin(struct bc_evloop *ev)
{
	ev->n = 0;
	ev->next = 0;
	ev->dispatching = 0;
	ev->timeout_ms = -1;
	ev->deadline = INT64_MAX;
}

size_t
bc_evloop_add(struct bc_evloop *ev, int fd, short events, bc_evloop_fn *fn,
    void *arg)
{
	return bc_evloop_add_tag(ev, fd, events, fn, arg, 0);
}

size_t
bc_evloop_add_tag(struct bc_evloop *ev, int fd, short events,
    bc_evloop_fn *fn, void *arg, size_t tag)
{
	if (ev->n == ev->cap) {
		ev->cap = ev->cap == 0 ? 16 : ev->cap * 2;
		ev->pfd = xrealloc(ev->pfd, ev->cap, sizeof(*ev->pfd));
		ev->src = xrealloc(ev->src, ev->cap, sizeof(*ev->src));
	}
	ev->pfd[ev->n].fd = fd;
	ev->pfd[ev->n].events = events;
	ev->pfd[ev->n].revents = 0;
	ev->src[ev->n].fn = fn;
	ev->src[ev->n].arg = arg;
	ev->src[ev->n].tag = tag;
	return ev->n++;
}

void
bc_evloop_timeout(struct bc_evloop *ev, int ms)
{
	if (ms >= 0 && (ev->timeout_ms < 0 || ms < ev->timeout_ms))
		ev->timeout_ms = ms;
}

void
bc_evloop_deadline(struct bc_evloop *ev, int64_t at_ms)
{
	if (at_ms < ev->deadline)
		ev->deadline = at_ms;
}

/* poll's timeout: the shorter of the relative one and the deadline's. */
static int
wait_ms(const struct bc_evloop *ev)
{
	int ms = ev->timeout_ms;

	if (ev->deadline != INT64_MAX) {
		int64_t left = ev->deadline - bc_now_ms();

		if (left < 0)
			left = 0;
		if (left > INT_MAX)
			left = INT_MAX;
		if (ms < 0 || left < ms)
			ms = (int)left;
	}
	return ms;
}

int
bc_evloop_wait(struct bc_evloop *ev)
{
	size_t i;
	int r;

	ev->next = 0;
	for (i = 0; i < ev->n; i++)
		ev->pfd[i].revents = 0;
	r = poll(ev->pfd, (nfds_t)ev->n, wait_ms(ev));
	if (r < 0) {
		int e = errno;

		for (i = 0; i < ev->n; i++)
			ev->pfd[i].revents = 0;
		errno = e;
		return e == EINTR ? 0 : -1;
	}
	return r;
}

void
bc_evloop_dispatch(struct bc_evloop *ev)
{
	/* ev->next, not a local: bc_evloop_remove() looks past it */
	ev->dispatching = 1;
	for (ev->next = 0; ev->next < ev->n; ev->next++) {
		const struct bc_evloop_src *src = &ev->src[ev->next];
		struct bc_evloop_ev e;

		if (ev->pfd[ev->next].revents == 0 || src->fn == NULL)
			continue;
		e.fd = ev->pfd[ev->next].fd;
		e.revents = ev->pfd[ev->next].revents;
		e.tag = src->tag;
		src->fn(src->arg, &e);
	}
	ev->dispatching = 0;
}

int
bc_evloop_run_once(struct bc_evloop *ev)
{
	int r = bc_evloop_wait(ev);

	if (r >= 0)
		bc_evloop_dispatch(ev);
	return r;
}

short
bc_evloop_revents(const struct bc_evloop *ev, size_t h)
{
	return h < ev->n ? ev->pfd[h].revents : 0;
}

void
bc_evloop_remove(struct bc_evloop *ev, int fd)
{
	size_t i;

	for (i = ev->dispatching ? ev->next + 1 : 0; i < ev->n; i++)
		if (ev->pfd[i].fd == fd)
			ev->pfd[i].revents = 0;
}
