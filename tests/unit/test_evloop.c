/*
 * test_evloop.c - unit tests of the event-loop interface (common/evloop.h):
 * readiness, write interest, timeouts and deadlines, dispatch order,
 * removal during dispatch.  Every wait that is meant to time out is
 * bounded by a few milliseconds; none depends on how long it took.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/evloop.h"
#include "common/io.h"
#include "tests/unit/unit.h"

#define MAX_CALLS 16

/* What the callbacks saw, in order. */
struct seen {
	int n;
	int fd[MAX_CALLS];
	short revents[MAX_CALLS];
	size_t tag[MAX_CALLS];
	struct bc_evloop *ev;	/* for the callbacks that remove */
	int remove_fd;		/* on_remove: the fd it removes, -1 none */
};

static void
on_event(void *arg, const struct bc_evloop_ev *e)
{
	struct seen *s = arg;

	ck_assert_int_lt(s->n, MAX_CALLS);
	ck_assert(e->revents != 0);
	s->fd[s->n] = e->fd;
	s->revents[s->n] = e->revents;
	s->tag[s->n] = e->tag;
	s->n++;
}

static void
on_remove(void *arg, const struct bc_evloop_ev *e)
{
	struct seen *s = arg;

	on_event(arg, e);
	if (s->remove_fd >= 0)
		bc_evloop_remove(s->ev, s->remove_fd);
}

static void
pair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

START_TEST(test_readiness)
{
	struct bc_evloop ev;
	struct seen s;
	int a[2], b[2];
	size_t ha, hb;

	memset(&s, 0, sizeof(s));
	pair(a);
	pair(b);
	ck_assert_int_eq(write(b[1], "x", 1), 1);
	bc_evloop_init(&ev);
	bc_evloop_begin(&ev);
	ha = bc_evloop_add_tag(&ev, a[0], POLLIN, on_event, &s, 7);
	hb = bc_evloop_add_tag(&ev, b[0], POLLIN, on_event, &s, 8);
	bc_evloop_timeout(&ev, 5000);
	ck_assert_int_eq(bc_evloop_wait(&ev), 1);
	ck_assert_int_eq(bc_evloop_revents(&ev, ha), 0);
	ck_assert(bc_evloop_revents(&ev, hb) & POLLIN);
	ck_assert_int_eq(bc_evloop_revents(&ev, 99), 0);
	bc_evloop_dispatch(&ev);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.fd[0], b[0]);
	ck_assert_uint_eq(s.tag[0], 8);
	ck_assert(s.revents[0] & POLLIN);

	/* both ready: called in the order they were added, not fd order */
	ck_assert_int_eq(write(a[1], "y", 1), 1);
	s.n = 0;
	bc_evloop_begin(&ev);
	bc_evloop_add_tag(&ev, b[0], POLLIN, on_event, &s, 1);
	bc_evloop_add(&ev, a[0], POLLIN, NULL, NULL);	/* wakes only */
	bc_evloop_add_tag(&ev, a[0], POLLIN, on_event, &s, 2);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 3);
	ck_assert_int_eq(s.n, 2);
	ck_assert_uint_eq(s.tag[0], 1);
	ck_assert_uint_eq(s.tag[1], 2);

	/* a hang-up is reported to an entry that asked for nothing */
	close(b[1]);
	s.n = 0;
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, a[1], 0, on_event, &s);
	bc_evloop_add(&ev, b[0], 0, on_event, &s);
	bc_evloop_timeout(&ev, 5000);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 1);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.fd[0], b[0]);
	ck_assert(s.revents[0] & POLLHUP);
	bc_evloop_free(&ev);
	close(a[0]);
	close(a[1]);
	close(b[0]);
}
END_TEST

START_TEST(test_write_interest)
{
	struct bc_evloop ev;
	struct seen s;
	char blk[4096];
	int sv[2], fl, filled = 0;

	memset(&s, 0, sizeof(s));
	memset(blk, 'z', sizeof(blk));
	pair(sv);
	bc_evloop_init(&ev);
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLOUT, on_event, &s);
	bc_evloop_add(&ev, sv[1], POLLIN, on_event, &s);	/* nothing yet */
	ck_assert_int_eq(bc_evloop_run_once(&ev), 1);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.fd[0], sv[0]);
	ck_assert(s.revents[0] & POLLOUT);

	/* full: no longer writable, the wait times out */
	fl = fcntl(sv[0], F_GETFL);
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, fl | O_NONBLOCK), 0);
	while (write(sv[0], blk, sizeof(blk)) > 0 && ++filled < 100000)
		;
	ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
	s.n = 0;
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLOUT, on_event, &s);
	bc_evloop_timeout(&ev, 10);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 0);
	ck_assert_int_eq(s.n, 0);
	bc_evloop_free(&ev);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_timeouts)
{
	struct bc_evloop ev;
	struct seen s;
	int sv[2];
	int64_t t0;

	memset(&s, 0, sizeof(s));
	pair(sv);
	bc_evloop_init(&ev);

	/* the shortest timeout wins; a negative one is ignored */
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLIN, on_event, &s);
	bc_evloop_timeout(&ev, 60000);
	bc_evloop_timeout(&ev, -1);
	bc_evloop_timeout(&ev, 5);
	bc_evloop_timeout(&ev, 30000);
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_evloop_run_once(&ev), 0);
	ck_assert_int_lt(bc_now_ms() - t0, 30000);
	ck_assert_int_eq(s.n, 0);

	/* the earliest deadline wins over a longer timeout; one in the
	 * past returns at once */
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLIN, on_event, &s);
	bc_evloop_timeout(&ev, 60000);
	bc_evloop_deadline(&ev, bc_now_ms() + 60000);
	bc_evloop_deadline(&ev, bc_now_ms() - 1000);
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_evloop_run_once(&ev), 0);
	ck_assert_int_lt(bc_now_ms() - t0, 30000);

	/* a deadline alone bounds a wait that has no timeout */
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLIN, on_event, &s);
	bc_evloop_deadline(&ev, bc_now_ms() + 5);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 0);

	/* begin forgets the last iteration's timeout: ready data, no wait */
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLIN, on_event, &s);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 1);
	ck_assert_int_eq(s.n, 1);

	/* nothing registered, a timeout: a sleep */
	bc_evloop_begin(&ev);
	bc_evloop_timeout(&ev, 1);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 0);
	bc_evloop_free(&ev);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_remove_during_dispatch)
{
	struct bc_evloop ev;
	struct seen s;
	int a[2], b[2], c[2];

	memset(&s, 0, sizeof(s));
	pair(a);
	pair(b);
	pair(c);
	ck_assert_int_eq(write(a[1], "x", 1), 1);
	ck_assert_int_eq(write(b[1], "x", 1), 1);
	ck_assert_int_eq(write(c[1], "x", 1), 1);
	bc_evloop_init(&ev);
	s.ev = &ev;

	/* a's callback removes b's (later) entries: b is not called, c is */
	s.remove_fd = b[0];
	bc_evloop_begin(&ev);
	bc_evloop_add_tag(&ev, a[0], POLLIN, on_remove, &s, 1);
	bc_evloop_add_tag(&ev, b[0], POLLIN, on_event, &s, 2);
	bc_evloop_add_tag(&ev, b[0], POLLIN, on_event, &s, 3);
	bc_evloop_add_tag(&ev, c[0], POLLIN, on_event, &s, 4);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 4);
	ck_assert_int_eq(s.n, 2);
	ck_assert_uint_eq(s.tag[0], 1);
	ck_assert_uint_eq(s.tag[1], 4);

	/* removing an entry already called, or its own, changes nothing
	 * for the others */
	s.n = 0;
	s.remove_fd = a[0];
	bc_evloop_begin(&ev);
	bc_evloop_add_tag(&ev, a[0], POLLIN, on_event, &s, 1);
	bc_evloop_add_tag(&ev, c[0], POLLIN, on_remove, &s, 2);
	bc_evloop_add_tag(&ev, b[0], POLLIN, on_event, &s, 3);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 3);
	ck_assert_int_eq(s.n, 3);
	ck_assert_uint_eq(s.tag[2], 3);

	/* between the wait and the dispatch: every entry of the fd */
	s.n = 0;
	bc_evloop_begin(&ev);
	bc_evloop_add_tag(&ev, a[0], POLLIN, on_event, &s, 1);
	bc_evloop_add_tag(&ev, b[0], POLLIN, on_event, &s, 2);
	ck_assert_int_eq(bc_evloop_wait(&ev), 2);
	bc_evloop_remove(&ev, a[0]);
	ck_assert_int_eq(bc_evloop_revents(&ev, 0), 0);
	bc_evloop_dispatch(&ev);
	ck_assert_int_eq(s.n, 1);
	ck_assert_uint_eq(s.tag[0], 2);
	bc_evloop_free(&ev);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(c[0]);
	close(c[1]);
}
END_TEST

/* Many entries: the arrays grow, and every one is dispatched once. */
START_TEST(test_many)
{
	struct bc_evloop ev;
	struct seen s;
	int sv[2], i, calls = 0;
	size_t h = 0;

	memset(&s, 0, sizeof(s));
	pair(sv);
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	bc_evloop_init(&ev);
	bc_evloop_begin(&ev);
	for (i = 0; i < 1000; i++)
		h = bc_evloop_add_tag(&ev, sv[0], POLLIN, NULL, NULL,
		    (size_t)i);
	ck_assert_uint_eq(h, 999);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 1000);
	for (i = 0; i < 1000; i++)
		calls += (bc_evloop_revents(&ev, (size_t)i) & POLLIN) != 0;
	ck_assert_int_eq(calls, 1000);
	bc_evloop_free(&ev);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

static void
on_alarm(int sig)
{
	(void)sig;
}

/* A signal that interrupts the wait: 0, nothing ready, no error. */
START_TEST(test_eintr)
{
	struct bc_evloop ev;
	struct sigaction sa;
	struct seen s;
	int sv[2];

	memset(&s, 0, sizeof(s));
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_alarm;
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	pair(sv);
	bc_evloop_init(&ev);
	bc_evloop_begin(&ev);
	bc_evloop_add(&ev, sv[0], POLLIN, on_event, &s);
	bc_evloop_timeout(&ev, 20000);
	alarm(1);
	ck_assert_int_eq(bc_evloop_run_once(&ev), 0);
	ck_assert_int_eq(errno, EINTR);
	ck_assert_int_eq(s.n, 0);
	bc_evloop_free(&ev);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

static Suite *
evloop_suite(void)
{
	Suite *s = suite_create("evloop");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);
	TCase *slow = bc_tcase("signal", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(tc, test_readiness);
	tcase_add_test(tc, test_write_interest);
	tcase_add_test(tc, test_timeouts);
	tcase_add_test(tc, test_remove_during_dispatch);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	tcase_add_test(slow, test_eintr);
	suite_add_tcase(s, slow);
	return s;
}

int
main(void)
{
	return bc_unit_run(evloop_suite());
}
