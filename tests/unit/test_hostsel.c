/*
 * test_hostsel.c - the scheduling decision (bc_hostsel_choose) as a pure
 * function, the per-host job-time records, and waiters woken by a
 * release.  Slot-lock mechanics are in test_client.c.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "common/hosts.h"
#include "common/io.h"
#include "common/util.h"
#include "client/hostsel.h"
#include "tests/unit/unit.h"

#define MS 1000	/* est_us of 1 ms */

/* c[i] = { usable, slots, busy, est_us } */
#define H(u, s, b, e) { (u), (s), (b), (int64_t)(e) }

START_TEST(choose_no_history_is_breadth_first)
{
	/* equal, unknown hosts: least loaded (busy/slots), then list order */
	struct bc_hostsel_cand c[3] = {
		H(1, 2, 0, 0), H(1, 2, 0, 0), H(1, 4, 0, 0)
	};

	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 0);
	c[0].busy = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 1);
	c[1].busy = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 2);
	c[2].busy = 1;		/* 1/4 < 1/2 */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 2);
	c[2].busy = 2;		/* 2/4 == 1/2: list order */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 0);
	c[0].busy = 2;
	c[1].busy = 2;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 2);
	c[2].busy = 4;		/* every slot busy: wait */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), BC_HOSTSEL_WAIT);
}
END_TEST

START_TEST(choose_none_usable)
{
	struct bc_hostsel_cand c[2] = { H(0, 2, 0, 0), H(0, 4, 0, 0) };

	ck_assert_int_eq(bc_hostsel_choose(c, 2, -1, 0), BC_HOSTSEL_NONE);
	ck_assert_int_eq(bc_hostsel_choose(c, 0, -1, 0), BC_HOSTSEL_NONE);
	c[1].usable = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 2, -1, 0), 1);
	c[1].slots = 0;		/* a host with no slots is not usable */
	ck_assert_int_eq(bc_hostsel_choose(c, 2, -1, 0), BC_HOSTSEL_NONE);
}
END_TEST

START_TEST(choose_fastest_free)
{
	/* B is 3x faster than A and C: it wins while it has a slot */
	struct bc_hostsel_cand c[3] = {
		H(1, 2, 0, 600 * MS), H(1, 2, 0, 200 * MS), H(1, 2, 0, 600 * MS)
	};

	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 1);
	c[1].busy = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 1);
	/* B full, nobody queued: waiting ~50 ms + 200 ms beats 600 ms */
	c[1].busy = 2;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), BC_HOSTSEL_WAIT);
	/* many waiters ahead: B frees 1 slot per 100 ms, 10 ahead = 1 s +
	 * 200 ms > 600 ms: take the slow host (the first of equals) */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 10), 0);
	c[0].busy = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 10), 2);
	/* within 5%: equal, least loaded wins */
	c[0].est_us = 610 * MS;
	c[0].busy = 0;
	c[2].busy = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 10), 0);
}
END_TEST

START_TEST(choose_small_differences_never_wait)
{
	/* measured times differ by noise (here 1.4x): a free slot is used
	 * rather than left idle while the job waits for a "faster" host */
	struct bc_hostsel_cand c[3] = {
		H(1, 2, 2, 200 * MS), H(1, 2, 2, 210 * MS), H(1, 2, 1, 280 * MS)
	};

	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 2);
	c[2].est_us = 310 * MS;	/* 1.55x: now waiting is worth it */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), BC_HOSTSEL_WAIT);
}
END_TEST

START_TEST(choose_unknown_host_gets_work)
{
	/* a host with no history counts as the mean of the known ones: a
	 * host added mid-build (or just out of backoff) is used */
	struct bc_hostsel_cand c[3] = {
		H(1, 2, 2, 200 * MS), H(1, 2, 2, 400 * MS), H(1, 2, 0, 0)
	};

	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 2);
	/* and it is preferred over a known-slow free host */
	c[1].busy = 0;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, -1, 0), 2);
}
END_TEST

START_TEST(choose_owner_affinity)
{
	struct bc_hostsel_cand c[3] = {
		H(1, 2, 0, 200 * MS), H(1, 2, 0, 200 * MS), H(1, 2, 0, 200 * MS)
	};

	/* the key's owner wins when it has a free slot */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 2, 0), 2);
	c[2].busy = 1;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 2, 0), 2);
	/* ... not when it is full */
	c[2].busy = 2;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 2, 0), 0);
	/* ... nor when it is more than 1.5x slower than the best */
	c[2].busy = 0;
	c[2].est_us = 400 * MS;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 2, 0), 0);
	c[2].est_us = 280 * MS;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 2, 0), 2);
	/* an unusable owner (backed off) is ignored */
	c[2].usable = 0;
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 2, 0), 0);
	/* out-of-range owner is ignored */
	ck_assert_int_eq(bc_hostsel_choose(c, 3, 7, 0), 0);
}
END_TEST

START_TEST(choose_skips_unusable)
{
	/* a backed-off fast host neither wins nor makes us wait */
	struct bc_hostsel_cand c[2] = {
		H(0, 4, 0, 100 * MS), H(1, 1, 0, 900 * MS)
	};

	ck_assert_int_eq(bc_hostsel_choose(c, 2, -1, 0), 1);
	c[0].usable = 1;
	c[0].busy = 4;
	ck_assert_int_eq(bc_hostsel_choose(c, 2, -1, 0), BC_HOSTSEL_WAIT);
}
END_TEST

/* A simulated farm: jobs of equal work on hosts of different speed,
 * always given to the choice; the slow host must get fewer jobs. */
START_TEST(choose_simulated_farm)
{
	struct bc_hostsel_cand c[3] = {
		H(1, 2, 0, 200 * MS), H(1, 4, 0, 200 * MS), H(1, 2, 0, 800 * MS)
	};
	int64_t done_at[3][4];
	int count[3] = { 0, 0, 0 };
	int64_t now = 0;
	int job, i, k;

	memset(done_at, 0, sizeof(done_at));
	for (job = 0; job < 300; job++) {
		ssize_t ch;

		for (;;) {
			for (i = 0; i < 3; i++) {
				c[i].busy = 0;
				for (k = 0; k < c[i].slots; k++)
					if (done_at[i][k] > now)
						c[i].busy++;
			}
			ch = bc_hostsel_choose(c, 3, -1, 0);
			if (ch >= 0)
				break;
			ck_assert_int_eq(ch, BC_HOSTSEL_WAIT);
			now += MS;	/* wait 1 ms */
		}
		for (k = 0; k < c[ch].slots; k++)
			if (done_at[ch][k] <= now)
				break;
		ck_assert_int_lt(k, c[ch].slots);
		done_at[ch][k] = now + c[ch].est_us;
		count[ch]++;
	}
	/* host 1 (4 fast slots) does the most, the slow host the least */
	ck_assert_int_gt(count[1], count[0]);
	ck_assert_int_lt(count[2], count[0]);
	ck_assert_int_gt(count[0] + count[1], 250);
}
END_TEST

static char *
mk_lockdir(void)
{
	char *d = NULL, err[BC_ERRLEN];

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "hostsel-", &d, err),
	    BC_OK);
	return d;
}

START_TEST(perf_records)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	char *dir = mk_lockdir(), *p;
	struct timeval tv[2];
	int64_t v;
	int fd;

	memset(&hl, 0, sizeof(hl));
	ck_assert_int_eq(bc_hosts_parse("hosta:4000/2 hostb/2", 1, &hl, err),
	    BC_OK);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 0);
	bc_hostsel_observe(dir, &hl.v[0], 200000);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 200000);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[1]), 0);
	/* EWMA moves a quarter of the way */
	bc_hostsel_observe(dir, &hl.v[0], 600000);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 300000);
	for (int i = 0; i < 30; i++)
		bc_hostsel_observe(dir, &hl.v[0], 600000);
	v = bc_hostsel_perf_get(dir, &hl.v[0]);
	ck_assert_int_gt(v, 590000);
	ck_assert_int_le(v, 600000);
	/* nonsense samples are ignored */
	bc_hostsel_observe(dir, &hl.v[0], 0);
	bc_hostsel_observe(dir, &hl.v[0], -5);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), v);

	/* a stale record is unknown */
	p = xasprintf("%s/perf_tcp_hosta_4000", dir);
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= BC_HOSTSEL_PERF_STALE_SEC + 10;
	tv[1] = tv[0];
	ck_assert_int_eq(utimes(p, tv), 0);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 0);
	/* damaged records are unknown, never a crash */
	fd = open(p, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "12x\n", 4), 4);
	close(fd);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 0);
	fd = open(p, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "123", 3), 3);	/* no newline */
	close(fd);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 0);
	fd = open(p, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "99999999999999999999999999999999999\n",
	    36), 36);					/* too long */
	close(fd);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 0);
	/* and a fresh sample starts over */
	bc_hostsel_observe(dir, &hl.v[0], 1000);
	ck_assert_int_eq(bc_hostsel_perf_get(dir, &hl.v[0]), 1000);
	free(p);
	bc_hosts_free(&hl);
	bc_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(owner_move_rule)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	char *dir = mk_lockdir();

	memset(&hl, 0, sizeof(hl));
	ck_assert_int_eq(bc_hosts_parse("owner/2 here/2 localhost/2", 1, &hl,
	    err), BC_OK);
	/* no records: move */
	ck_assert_int_eq(bc_hostsel_owner_ok(dir, &hl.v[0], &hl.v[1]), 1);
	bc_hostsel_observe(dir, &hl.v[1], 200000);
	ck_assert_int_eq(bc_hostsel_owner_ok(dir, &hl.v[0], &hl.v[1]), 1);
	bc_hostsel_observe(dir, &hl.v[0], 290000);	/* 1.45x */
	ck_assert_int_eq(bc_hostsel_owner_ok(dir, &hl.v[0], &hl.v[1]), 1);
	ck_assert_int_eq(bc_hostsel_owner_ok(dir, &hl.v[1], &hl.v[0]), 1);
	bc_hostsel_observe(dir, &hl.v[0], 900000);	/* 290 -> 442.5 ms */
	ck_assert_int_eq(bc_hostsel_owner_ok(dir, &hl.v[0], &hl.v[1]), 0);
	/* localhost has no record: never blocks a move */
	ck_assert_int_eq(bc_hostsel_owner_ok(dir, &hl.v[0], &hl.v[2]), 1);
	bc_hosts_free(&hl);
	bc_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(pick_prefers_fast_host)
{
	struct bc_hostlist hl;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN];
	char *dir = mk_lockdir();

	memset(&hl, 0, sizeof(hl));
	ck_assert_int_eq(bc_hosts_parse("slow/2 fast/2", 1, &hl, err), BC_OK);
	/* no history: list order */
	ck_assert_int_eq(bc_hostsel_pick(&hl, dir, NULL, 60, 0, &s, err),
	    BC_OK);
	ck_assert_uint_eq(s.host_index, 0);
	bc_hostsel_release(&s);
	bc_hostsel_observe(dir, &hl.v[0], 900000);
	bc_hostsel_observe(dir, &hl.v[1], 100000);
	ck_assert_int_eq(bc_hostsel_pick(&hl, dir, NULL, 60, 0, &s, err),
	    BC_OK);
	ck_assert_uint_eq(s.host_index, 1);
	ck_assert_int_eq(s.index, 0);
	bc_hostsel_release(&s);
	bc_hosts_free(&hl);
	bc_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * A release wakes waiters through the FIFO $lockdir/wake (their timer
 * only covers crashes): a child holds the only slot and releases it with
 * bc_hostsel_release while staying alive; a byte arrives on the FIFO and
 * the slot is ours.
 */
START_TEST(pick_woken_by_release)
{
	struct bc_hostlist hl;
	struct bc_slot s = BC_SLOT_INIT;
	char err[BC_ERRLEN], c = 0;
	char *dir = mk_lockdir();
	int up[2], down[2], st, rfd, wfd;
	struct pollfd pfd;
	struct stat sb;
	char *fifo;
	pid_t pid;

	memset(&hl, 0, sizeof(hl));
	ck_assert_int_eq(bc_hosts_parse("onlyhost/1", 1, &hl, err), BC_OK);
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bc_slot cs = BC_SLOT_INIT;
		char e2[BC_ERRLEN];

		close(down[1]);
		close(up[0]);
		c = bc_hostsel_pick(&hl, dir, NULL, 60, 0, &cs, e2) == BC_OK ?
		    'y' : 'n';
		if (write(up[1], &c, 1) != 1)
			_exit(2);
		if (read(down[0], &c, 1) != 1)	/* "release now" */
			_exit(2);
		bc_hostsel_release(&cs);
		(void)!read(down[0], &c, 1);	/* stay alive until EOF */
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &c, 1), 1);
	ck_assert_int_eq(c, 'y');
	ck_assert_int_eq(bc_hostsel_pick(&hl, dir, NULL, 60, 0, &s, err),
	    BC_ERR_BUSY);
	fifo = xasprintf("%s/wake", dir);
	/* a pick that may not wait does not make the FIFO ... */
	ck_assert_int_ne(lstat(fifo, &sb), 0);
	ck_assert_int_eq(bc_hostsel_pick(&hl, dir, NULL, 60, 20, &s, err),
	    BC_ERR_BUSY);
	/* ... one that waited did; listen on it as a waiter does */
	ck_assert_int_eq(lstat(fifo, &sb), 0);
	ck_assert_int_eq(S_ISFIFO(sb.st_mode), 1);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	wfd = open(fifo, O_WRONLY | O_NONBLOCK);
	ck_assert_int_ge(wfd, 0);
	ck_assert_int_eq(write(down[1], "r", 1), 1);
	pfd.fd = rfd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 10000), 1);	/* not a timeout */
	ck_assert_int_eq(read(rfd, &c, 1), 1);
	ck_assert_int_eq(c, 'w');
	close(rfd);
	close(wfd);
	free(fifo);
	ck_assert_int_eq(bc_hostsel_pick(&hl, dir, NULL, 60, 10000, &s, err),
	    BC_OK);
	ck_assert_int_eq(s.index, 0);
	bc_hostsel_release(&s);
	close(down[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WIFEXITED(st) && WEXITSTATUS(st) == 0, 1);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	bc_hosts_free(&hl);
	bc_rmtree(dir);
	free(dir);
}
END_TEST

static Suite *
hostsel_suite(void)
{
	Suite *s = suite_create("hostsel");
	TCase *tc = bc_tcase("choose", BC_TEST_TIMEOUT);

	tcase_add_test(tc, choose_no_history_is_breadth_first);
	tcase_add_test(tc, choose_none_usable);
	tcase_add_test(tc, choose_fastest_free);
	tcase_add_test(tc, choose_small_differences_never_wait);
	tcase_add_test(tc, choose_unknown_host_gets_work);
	tcase_add_test(tc, choose_owner_affinity);
	tcase_add_test(tc, choose_skips_unusable);
	tcase_add_test(tc, choose_simulated_farm);
	suite_add_tcase(s, tc);
	tc = bc_tcase("files", BC_TEST_TIMEOUT);
	tcase_add_test(tc, perf_records);
	tcase_add_test(tc, owner_move_rule);
	tcase_add_test(tc, pick_prefers_fast_host);
	tcase_add_test(tc, pick_woken_by_release);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(hostsel_suite());
}
