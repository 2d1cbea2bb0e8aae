/*
 * test_rjob.c - the decisions of a distributed job (client/rjob.h) and
 * the hosts the caches are asked (client/jobcache.h), without a network:
 * the hosts are TEST-NET addresses (RFC 5737) that are never contacted;
 * slots, backoff marks and probe memory live in a private state dir.
 *
 *   the verdict when no host took the job (local by rule, the fallback
 *   and its counted reason, the error with DISTCC_FALLBACK=0); which
 *   wait statuses are the farm's failures; the protocol and pump choice
 *   per host, and when the local half may come before a slot; the order
 *   hosts are tried in; what a host failure counts, marks and remembers;
 *   the cache candidates.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/hosts.h"
#include "common/proto.h"
#include "common/util.h"
#include "client/cconf.h"
#include "client/cjob.h"
#include "client/cstats.h"
#include "client/hostsel.h"
#include "client/jobcache.h"
#include "client/remote.h"
#include "client/rjob.h"
#include "tests/unit/unit.h"

/* A wait status: exit code c, or killed by signal s. */
#define EXITED(c)	((uint32_t)((c) & 0xff) << 8)
#define KILLED(s)	((uint32_t)(s) & 0x7f)

/* ------------------------------------------------------------------ */
/* a job with a private state dir and a host list */

struct fx {
	char *dir;
	struct bc_cconf cfg;
	struct bc_cjob j;
	struct bc_rjob rj;
};

static void
fx_init(struct fx *f, const char *hosts)
{
	char err[BC_ERRLEN];

	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_rjob_", &f->dir,
	    err), BC_OK);
	f->cfg.dir = xstrdup(f->dir);
	f->cfg.dir_ok = 1;
	f->cfg.lockdir = xasprintf("%s/lock", f->dir);
	f->cfg.statedir = xasprintf("%s/state", f->dir);
	f->cfg.hitdir = xasprintf("%s/hits", f->dir);
	f->cfg.hosts_text = xstrdup(hosts);
	f->cfg.hosts_origin = xstrdup("test");
	f->cfg.hosts_boltopts = 1;
	f->cfg.fallback = 1;
	f->cfg.backoff_period = 60;
	f->cfg.io_timeout = 5;
	f->cfg.cache = 1;
	f->cfg.pump = 1;
	f->cfg.plain_debug = -1;
	bc_strv_init(&f->cfg.warnings);
	bc_cjob_init(&f->j, &f->cfg);
	f->j.plan.source = xstrdup("t.c");
	f->j.plan.output = xstrdup("t.o");
	bc_rjob_init(&f->rj, &f->j);
	ck_assert_int_eq(bc_rjob_start(&f->rj), BC_RJOB_GO);
	ck_assert_int_gt((long long)f->rj.hl.n, 0);
}

/* A second job of the same user: the same state dir, nothing tried. */
static void
fx_next_job(struct fx *f)
{
	bc_rjob_free(&f->rj);
	bc_rjob_init(&f->rj, &f->j);
	ck_assert_int_eq(bc_rjob_start(&f->rj), BC_RJOB_GO);
}

static void
fx_free(struct fx *f)
{
	bc_rjob_free(&f->rj);
	bc_cjob_free(&f->j);
	(void)bc_rmtree(f->dir);
	free(f->dir);
	bc_cconf_free(&f->cfg);
}

/* Host indexes in the order the job would try them (each attempt's slot
 * released, as after a failed attempt), then the end. */
static size_t
try_order(struct fx *f, size_t *order, size_t max)
{
	struct bc_slot slot = BC_SLOT_INIT;
	size_t n = 0;

	while (n <= max && bc_rjob_next_host(&f->rj, &slot) == BC_OK) {
		ck_assert_uint_lt(n, max);
		order[n++] = slot.host_index;
		bc_hostsel_release(&slot);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* the verdict */

START_TEST(verdict_by_tally)
{
	struct bc_rjob_tally t;
	const char *reason;

	memset(&t, 0, sizeof(t));
	t.no_host_why = "no-usable-host";
	/* nothing happened but no host: the fallback, why none */
	ck_assert_int_eq(bc_rjob_verdict(&t, 1, NULL, &reason),
	    BC_RJOB_FALLBACK);
	ck_assert_str_eq(reason, "no-usable-host");
	t.no_host_why = "cpp-run";
	ck_assert_int_eq(bc_rjob_verdict(&t, 1, NULL, &reason),
	    BC_RJOB_FALLBACK);
	ck_assert_str_eq(reason, "cpp-run");
	ck_assert_int_eq(bc_rjob_verdict(&t, 0, NULL, &reason), BC_RJOB_FAIL);
	ck_assert_ptr_null(reason);

	/* a pump-only job no host could take: local by rule, also with
	 * DISTCC_FALLBACK=0 */
	t.pump_skipped = 1;
	ck_assert_int_eq(bc_rjob_verdict(&t, 0, "coverage", &reason),
	    BC_RJOB_PUMP_ONLY);
	ck_assert_str_eq(reason, "coverage");
	ck_assert_int_eq(bc_rjob_verdict(&t, 1, "debug-info", &reason),
	    BC_RJOB_PUMP_ONLY);
	ck_assert_str_eq(reason, "debug-info");

	/* only hosts without a .dia: local, by the rule */
	t.pump_skipped = 0;
	t.dia_skipped = 1;
	ck_assert_int_eq(bc_rjob_verdict(&t, 1, NULL, &reason),
	    BC_RJOB_LOCAL);
	ck_assert_str_eq(reason, "serialize-diagnostics");
	ck_assert_int_eq(bc_rjob_verdict(&t, 0, NULL, &reason), BC_RJOB_FAIL);

	/* a host failed: its reason wins over every skip */
	t.pump_skipped = 1;
	t.host_failed = 1;
	t.last_why = "timeout";
	ck_assert_int_eq(bc_rjob_verdict(&t, 1, "coverage", &reason),
	    BC_RJOB_FALLBACK);
	ck_assert_str_eq(reason, "timeout");
	ck_assert_int_eq(bc_rjob_verdict(&t, 0, "coverage", &reason),
	    BC_RJOB_FAIL);
}
END_TEST

START_TEST(farm_failure_statuses)
{
	int c;

	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(0)), 0);
	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(1)), 0);
	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(99)), 0);
	for (c = BC_EXIT_FAILURE; c <= BC_EXIT_TIMEOUT; c++)
		ck_assert_int_eq(bc_rjob_farm_failure(EXITED(c)), 1);
	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(BC_EXIT_TIMEOUT + 1)),
	    0);
	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(127)), 0);
	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(128)), 1);
	ck_assert_int_eq(bc_rjob_farm_failure(EXITED(255)), 1);
	ck_assert_int_eq(bc_rjob_farm_failure(KILLED(9)), 1);
	ck_assert_int_eq(bc_rjob_farm_failure(KILLED(11)), 1);
	/* stopped, not exited: never the user's compile error */
	ck_assert_int_eq(bc_rjob_farm_failure(0x137f), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* protocol and mode */

START_TEST(proto_and_pump_per_host)
{
	struct bc_hostlist hl;
	struct bc_cconf cfg;
	char err[BC_ERRLEN];

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(bc_hosts_parse("192.0.2.1 192.0.2.2,lzo "
	    "192.0.2.3,cpp,lzo 192.0.2.4,bolt 192.0.2.5,bolt,plain "
	    "192.0.2.6,cpp,lzo,bolt", 1, &hl, err), BC_OK);
	ck_assert_uint_eq(hl.n, 6);
	/* stock daemons: 1 unless ,lzo (2), ,cpp,lzo (3, pump) */
	ck_assert_int_eq(bc_rjob_host_proto(&hl.v[0], 0), 1);
	ck_assert_int_eq(bc_rjob_host_proto(&hl.v[1], 0), 2);
	ck_assert_int_eq(bc_rjob_host_proto(&hl.v[2], 0), 3);
	/* a boltccd speaks BOLT, whatever the entry says */
	ck_assert_int_eq(bc_rjob_host_proto(&hl.v[0], 1), BC_PROTO_BOLT);
	ck_assert_int_eq(bc_rjob_host_proto(&hl.v[2], 1), BC_PROTO_BOLT);

	/* protocol 3 always wants pump mode; BOLT unless ,plain or
	 * BOLTCC_PUMP=0, where ,cpp still asks for it */
	cfg.pump = 1;
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[0], 1), 0);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[1], 2), 0);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[2], 3), 1);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[3], BC_PROTO_BOLT),
	    1);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[4], BC_PROTO_BOLT),
	    0);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[5], BC_PROTO_BOLT),
	    1);
	cfg.pump = 0;
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[2], 3), 1);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[3], BC_PROTO_BOLT),
	    0);
	ck_assert_int_eq(bc_rjob_wants_pump(&cfg, &hl.v[5], BC_PROTO_BOLT),
	    1);
	bc_hosts_free(&hl);
}
END_TEST

START_TEST(pump_only_hosts)
{
	/* BOLT pump gives the local object, coverage or debug info */
	ck_assert_int_eq(bc_rjob_pump_gives_local("coverage", 1,
	    BC_PROTO_BOLT), 1);
	ck_assert_int_eq(bc_rjob_pump_gives_local("debug-info", 1,
	    BC_PROTO_BOLT), 1);
	/* a boltccd compiling a .i does not */
	ck_assert_int_eq(bc_rjob_pump_gives_local("coverage", 0,
	    BC_PROTO_BOLT), 0);
	ck_assert_int_eq(bc_rjob_pump_gives_local("debug-info", 0,
	    BC_PROTO_BOLT), 0);
	/* a stock distccd: debug info as distcc's own, never coverage */
	ck_assert_int_eq(bc_rjob_pump_gives_local("debug-info", 0, 2), 1);
	ck_assert_int_eq(bc_rjob_pump_gives_local("debug-info", 1, 3), 1);
	ck_assert_int_eq(bc_rjob_pump_gives_local("coverage", 1, 3), 0);
	ck_assert_int_eq(bc_rjob_pump_gives_local("profile-use", 0, 1), 0);
}
END_TEST

/* bc_rjob_host_independent for a host list: -1 no, else proto*2+pump */
static int
independent(const char *hosts, int pump, int dia, int probed_bolt)
{
	struct fx f;
	size_t i;
	int proto = -1, pu = -1, r;

	fx_init(&f, hosts);
	f.cfg.pump = pump;
	if (dia)
		f.j.plan.dia_file = xstrdup("t.dia");
	for (i = 0; probed_bolt >= 0 && i < f.rj.hl.n; i++)
		bc_remote_probe_remember(f.cfg.statedir, &f.rj.hl.v[i],
		    probed_bolt);
	r = bc_rjob_host_independent(&f.rj, &proto, &pu) ? proto * 2 + pu :
	    -1;
	fx_free(&f);
	return r;
}

#define BOLT_PUMP	(BC_PROTO_BOLT * 2 + 1)
#define BOLT_PLAIN	(BC_PROTO_BOLT * 2)

START_TEST(host_independent_lists)
{
	const char *bb = "192.0.2.1,bolt 192.0.2.2/4,bolt";
	const char *dd = "192.0.2.1,distcc,lzo 192.0.2.2,distcc,lzo";

	ck_assert_int_eq(independent(bb, 1, 0, -1), BOLT_PUMP);
	ck_assert_int_eq(independent(bb, 0, 0, -1), BOLT_PLAIN);
	ck_assert_int_eq(independent(bb, 1, 1, -1), BOLT_PUMP);
	ck_assert_int_eq(independent(dd, 1, 0, -1), 2 * 2 + 0);
	ck_assert_int_eq(independent("192.0.2.1,distcc,cpp,lzo "
	    "192.0.2.2,distcc,cpp,lzo", 1, 0, -1), 3 * 2 + 1);
	/* a stock distccd cannot return a .dia: as the hosts come */
	ck_assert_int_eq(independent(dd, 1, 1, -1), -1);
	/* different requests */
	ck_assert_int_eq(independent("192.0.2.1,bolt 192.0.2.2,bolt,plain",
	    1, 0, -1), -1);
	ck_assert_int_eq(independent("192.0.2.1,bolt 192.0.2.2,bolt,plain",
	    0, 0, -1), BOLT_PLAIN);
	ck_assert_int_eq(independent("192.0.2.1,bolt 192.0.2.2,distcc", 1, 0,
	    -1), -1);
	ck_assert_int_eq(independent("192.0.2.1,distcc 192.0.2.2,distcc,lzo",
	    1, 0, -1), -1);
	/* localhost runs here */
	ck_assert_int_eq(independent("192.0.2.1,bolt localhost", 1, 0, -1),
	    -1);
	/* not known yet: probed first */
	ck_assert_int_eq(independent("192.0.2.1 192.0.2.2", 1, 0, -1), -1);
	ck_assert_int_eq(independent("192.0.2.1 192.0.2.2", 1, 0, 1),
	    BOLT_PUMP);
	ck_assert_int_eq(independent("192.0.2.1,lzo 192.0.2.2,lzo", 1, 0, 0),
	    2 * 2 + 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* hosts in turn, and their failures */

START_TEST(hosts_tried_in_order)
{
	struct fx f;
	size_t order[8];

	fx_init(&f, "192.0.2.1,bolt 192.0.2.2/2,bolt 192.0.2.3,bolt,down "
	    "192.0.2.4,bolt");
	/* equal, unknown hosts: list order, each once, never ,down */
	ck_assert_uint_eq(try_order(&f, order, 8), 3);
	ck_assert_uint_eq(order[0], 0);
	ck_assert_uint_eq(order[1], 1);
	ck_assert_uint_eq(order[2], 3);
	ck_assert_str_eq(f.rj.tally.no_host_why, "no-usable-host");
	ck_assert_int_eq(f.rj.tried[0] && f.rj.tried[1] && !f.rj.tried[2] &&
	    f.rj.tried[3], 1);
	/* the next job starts over */
	fx_next_job(&f);
	ck_assert_uint_eq(try_order(&f, order, 8), 3);
	ck_assert_uint_eq(order[0], 0);
	fx_free(&f);
}
END_TEST

START_TEST(failure_counted_marked_remembered)
{
	struct fx f;
	size_t order[8];
	char err[BC_ERRLEN], why[256];
	const struct bc_host *h;
	time_t until;

	fx_init(&f, "192.0.2.1,bolt 192.0.2.2/2,bolt 192.0.2.4,bolt");
	h = &f.rj.hl.v[1];
	snprintf(err, sizeof(err), "connection refused");
	bc_rjob_note_failure(&f.rj, h, BC_ERR_IO, "connect", err);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats, "host_failures"), 1);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats, "fault_connect"), 1);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats,
	    "host_failure_by_reason:connect"), 1);
	ck_assert_int_eq(f.rj.tally.host_failed, 1);
	ck_assert_str_eq(f.rj.tally.last_why, "connect");
	ck_assert_str_eq(f.rj.tally.last_host, "192.0.2.2/2,bolt");
	ck_assert_str_eq(f.rj.tally.last_err, "connection refused");
	/* marked with its reason, for --show-hosts */
	ck_assert_int_eq(bc_hostsel_backoff_info(f.cfg.lockdir, h, 60, &until,
	    why, sizeof(why)), 1);
	ck_assert_str_eq(why, "connect: connection refused");
	ck_assert_int_eq(bc_hostsel_backed_off(f.cfg.lockdir, &f.rj.hl.v[0],
	    60), 0);

	/* the next job does not try it */
	fx_next_job(&f);
	ck_assert_uint_eq(try_order(&f, order, 8), 2);
	ck_assert_uint_eq(order[0], 0);
	ck_assert_uint_eq(order[1], 2);

	/* the last failure is the one the fallback names */
	snprintf(err, sizeof(err), "no reply in 5 s");
	bc_rjob_note_failure(&f.rj, &f.rj.hl.v[0], BC_ERR_TIMEOUT, "timeout",
	    err);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats, "fault_timeouts"), 1);
	ck_assert_str_eq(f.rj.tally.last_host, "192.0.2.1,bolt");
	ck_assert_str_eq(f.rj.tally.last_why, "timeout");
	fx_free(&f);
}
END_TEST

START_TEST(failure_without_mark)
{
	struct fx f;
	char err[BC_ERRLEN];
	size_t i;

	fx_init(&f, "192.0.2.1,bolt 192.0.2.2,bolt 192.0.2.3,bolt");
	/* a boltccd that refused only this job (policy, busy) is alive */
	snprintf(err, sizeof(err), "compiler not allowed");
	bc_rjob_note_failure(&f.rj, &f.rj.hl.v[0], BC_ERR_DENIED, "refused",
	    err);
	snprintf(err, sizeof(err), "queue full");
	bc_rjob_note_failure(&f.rj, &f.rj.hl.v[1], BC_ERR_BUSY, "refused",
	    err);
	/* DISTCC_BACKOFF_PERIOD=0: never a mark */
	f.cfg.backoff_period = 0;
	snprintf(err, sizeof(err), "reset");
	bc_rjob_note_failure(&f.rj, &f.rj.hl.v[2], BC_ERR_EOF, "eof", err);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(bc_hostsel_backed_off(f.cfg.lockdir,
		    &f.rj.hl.v[i], 60), 0);
	/* counted all the same */
	ck_assert_int_eq(bc_cstats_get(&f.j.stats, "host_failures"), 3);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats,
	    "host_failure_by_reason:refused"), 2);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats, "fault_conn_reset"), 1);
	ck_assert_int_eq(bc_cstats_get(&f.j.stats, "fault_connect"), 0);
	fx_free(&f);
}
END_TEST

START_TEST(fallback_after_failures)
{
	struct fx f;
	size_t order[8];
	char err[BC_ERRLEN];
	const char *reason;
	size_t i, n;

	/* every host fails in turn: the fallback names the last one */
	fx_init(&f, "192.0.2.1,bolt 192.0.2.2,bolt");
	n = try_order(&f, order, 8);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < n; i++) {
		snprintf(err, sizeof(err), "host %zu", i);
		bc_rjob_note_failure(&f.rj, &f.rj.hl.v[order[i]], BC_ERR_IO,
		    i == 0 ? "connect" : "eof", err);
	}
	ck_assert_int_eq(bc_rjob_verdict(&f.rj.tally, 1, NULL, &reason),
	    BC_RJOB_FALLBACK);
	ck_assert_str_eq(reason, "eof");
	ck_assert_str_eq(f.rj.tally.last_err, "host 1");
	/* and the next job finds no host at all */
	fx_next_job(&f);
	ck_assert_uint_eq(try_order(&f, order, 8), 0);
	ck_assert_int_eq(bc_rjob_verdict(&f.rj.tally, 1, NULL, &reason),
	    BC_RJOB_FALLBACK);
	ck_assert_str_eq(reason, "no-usable-host");
	fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the caches asked */

START_TEST(cache_candidates)
{
	struct fx f;
	unsigned char *cand;

	fx_init(&f, "192.0.2.1,bolt 192.0.2.2,distcc 192.0.2.3,bolt,down "
	    "192.0.2.4 192.0.2.5,bolt localhost 192.0.2.6,bolt");
	ck_assert_uint_eq(f.rj.hl.n, 7);
	(void)bc_hostsel_backoff_mark(f.cfg.lockdir, &f.rj.hl.v[4]);
	cand = bc_jobcache_candidates(&f.j, &f.rj.hl);
	ck_assert_int_eq(cand[0], 1);
	ck_assert_int_eq(cand[1], 0);	/* a stock distccd has no cache */
	ck_assert_int_eq(cand[2], 0);	/* ,down */
	ck_assert_int_eq(cand[3], 0);	/* not known to be a boltccd */
	ck_assert_int_eq(cand[4], 0);	/* backed off */
	ck_assert_int_eq(cand[5], 0);	/* localhost */
	ck_assert_int_eq(cand[6], 1);
	free(cand);
	/* a probe found a boltccd; the backoff ended */
	bc_remote_probe_remember(f.cfg.statedir, &f.rj.hl.v[3], 1);
	bc_hostsel_backoff_clear(f.cfg.lockdir, &f.rj.hl.v[4]);
	cand = bc_jobcache_candidates(&f.j, &f.rj.hl);
	ck_assert_int_eq(cand[3], 1);
	ck_assert_int_eq(cand[4], 1);
	free(cand);
	/* DISTCC_BACKOFF_PERIOD=0: marks do not count */
	(void)bc_hostsel_backoff_mark(f.cfg.lockdir, &f.rj.hl.v[0]);
	f.cfg.backoff_period = 0;
	cand = bc_jobcache_candidates(&f.j, &f.rj.hl);
	ck_assert_int_eq(cand[0], 1);
	free(cand);
	fx_free(&f);
}
END_TEST

static Suite *
rjob_suite(void)
{
	Suite *s = suite_create("rjob");
	TCase *tc = bc_tcase("decisions", BC_TEST_TIMEOUT);

	tcase_add_test(tc, verdict_by_tally);
	tcase_add_test(tc, farm_failure_statuses);
	tcase_add_test(tc, proto_and_pump_per_host);
	tcase_add_test(tc, pump_only_hosts);
	suite_add_tcase(s, tc);
	/* a few hundred small files in a temp dir per test: generous for
	 * ASan on a busy machine */
	tc = bc_tcase("state", BC_TEST_TIMEOUT_SLOW);
	tcase_add_test(tc, host_independent_lists);
	tcase_add_test(tc, hosts_tried_in_order);
	tcase_add_test(tc, failure_counted_marked_remembered);
	tcase_add_test(tc, failure_without_mark);
	tcase_add_test(tc, fallback_after_failures);
	tcase_add_test(tc, cache_candidates);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(rjob_suite());
}
