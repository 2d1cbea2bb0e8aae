/*
 * evloop.h - the one event-loop interface of the daemon's parent, the
 * mux daemon and the SSH helper: each iteration registers what it waits
 * for, waits, and handles what is ready.
 *
 *	bc_evloop_begin(&ev);
 *	bc_evloop_add(&ev, fd, POLLIN, on_read, conn);	(each source)
 *	bc_evloop_deadline(&ev, conn->deadline);	(the earliest wins)
 *	if (bc_evloop_wait(&ev) < 0) ... poll failed, errno says why
 *	bc_evloop_dispatch(&ev);			(callbacks, in order)
 *
 * Registrations last one iteration: bc_evloop_begin() forgets them, so a
 * loop states its interest afresh from its own state each time round
 * and nothing has to be unregistered when a connection goes away.
 * Dispatch calls the callbacks of the ready entries in the order they
 * were added, so a loop orders its sources by the order it registers
 * them.  An entry without a callback only wakes the wait (the caller
 * handles it unconditionally, or reads bc_evloop_revents()).  An entry
 * added with events 0 still reports POLLERR and POLLHUP.
 *
 * poll(2) underneath; the fields are visible only so that a loop can
 * live in a struct: callers use the functions, never the fields.
 */
#ifndef BC_EVLOOP_H
#define BC_EVLOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* What a ready entry's callback is told besides its arg. */
struct bc_evloop_ev {
	int fd;
	short revents;		/* what poll reported, never 0 */
	size_t tag;		/* the caller's, from bc_evloop_add_tag() */
};

typedef void bc_evloop_fn(void *arg, const struct bc_evloop_ev *e);

struct bc_evloop_src {
	bc_evloop_fn *fn;	/* NULL: the entry only wakes the wait */
	void *arg;
	size_t tag;
};

struct bc_evloop {
	struct pollfd *pfd;	/* this iteration's entries, in order */
	struct bc_evloop_src *src;	/* their callbacks */
	size_t n, cap;
	int timeout_ms;		/* the shortest relative timeout, -1 none */
	int64_t deadline;	/* the earliest absolute one, INT64_MAX none */
	size_t next;		/* dispatch: the entry being called */
	int dispatching;
};

/* An empty loop; bc_evloop_free() releases its arrays. */
void bc_evloop_init(struct bc_evloop *ev);
void bc_evloop_free(struct bc_evloop *ev);

/* Start an iteration: no entries, no timeout (a wait without any blocks
 * until an entry is ready). */
void bc_evloop_begin(struct bc_evloop *ev);

/*
 * Wait for events (POLLIN, POLLOUT, or 0 for errors and hang-ups only) on
 * fd; the dispatch calls fn(arg, e) if any happened (fn may be NULL), e
 * with the fd, what happened and the tag (0 from bc_evloop_add(); an
 * index into the caller's table, say, where arg is the table's owner).
 * Returns the entry's handle for bc_evloop_revents().  An fd may be
 * added more than once; each entry is its own.
 */
size_t bc_evloop_add(struct bc_evloop *ev, int fd, short events,
    bc_evloop_fn *fn, void *arg);
size_t bc_evloop_add_tag(struct bc_evloop *ev, int fd, short events,
    bc_evloop_fn *fn, void *arg, size_t tag);

/* Wake after ms milliseconds at the latest (ms < 0 ignored; the
 * shortest of several wins). */
void bc_evloop_timeout(struct bc_evloop *ev, int ms);
/* Wake at the bc_now_ms() time at_ms at the latest (the earliest of
 * several wins; a time already past makes the wait return at once). */
void bc_evloop_deadline(struct bc_evloop *ev, int64_t at_ms);

/*
 * Wait until an entry is ready or the timeout or deadline comes:
 * returns how many entries are ready, 0 on time-out or when a signal
 * interrupted the wait (no entry ready then), or -1 with errno set if
 * poll failed otherwise.
 */
int bc_evloop_wait(struct bc_evloop *ev);

/* Call the callbacks of the ready entries, in the order they were added.
 * A callback may bc_evloop_remove() entries not yet called. */
void bc_evloop_dispatch(struct bc_evloop *ev);

/* bc_evloop_wait() and, unless it failed, bc_evloop_dispatch(): as
 * bc_evloop_wait(). */
int bc_evloop_run_once(struct bc_evloop *ev);

/* What the last wait reported for entry h (0 if not ready or h unknown). */
short bc_evloop_revents(const struct bc_evloop *ev, size_t h);

/* Removal: fd's entries not yet dispatched in this iteration will not be
 * (all of them between the wait and the dispatch; during the dispatch
 * those after the running callback's).  A callback that closes an fd
 * whose number may come back at once calls this first. */
void bc_evloop_remove(struct bc_evloop *ev, int fd);

#endif
