/*
 * test_fasthit.c - the daemon parent's own answers (daemon/fasthit.c):
 * a lookup of an absent key gets MISS; a lookup of a stored key gets the
 * stored result, byte for byte what the entry holds, and its TOUCH goes
 * to the keeper; anything the parent must not decide (a damaged blob, a
 * full keeper pipe, a reply over BC_MAX_FASTHIT_REPLY, trailing bytes,
 * a compile request, a pump request for a compiler or an option the
 * policy refuses) is left to a worker; a BOLT pump hit is served.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/proto.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "daemon/fasthit.h"
#include "daemon/keeper.h"
#include "daemon/policy.h"
#include "daemon/pumpx.h"
#include "tests/unit/unit.h"

static char tmpl[] = "/tmp/bc-fasthit.XXXXXX";
static char *dir;
static struct bc_policy policy;
static struct bc_job_conf conf;
static int keeper[2];

static void
setup(void)
{
	char e[BC_ERRLEN];
	int fl;

	strcpy(tmpl, "/tmp/bc-fasthit.XXXXXX");
	dir = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(dir);
	bc_policy_init(&policy);
	bc_policy_set_path(&policy, "/usr/bin:/bin");
	memset(&conf, 0, sizeof(conf));
	conf.policy = &policy;
	conf.cache_dir = dir;
	conf.event_fd = -1;
	conf.slot_fd = -1;
	ck_assert_int_eq(pipe(keeper), 0);
	fl = fcntl(keeper[1], F_GETFL);
	ck_assert_int_eq(fcntl(keeper[1], F_SETFL, fl | O_NONBLOCK), 0);
	conf.keeper_fd = keeper[1];
	(void)e;
}

static void
teardown(void)
{
	close(keeper[0]);
	close(keeper[1]);
	bc_policy_free(&policy);
	(void)bc_rmtree(dir);
}

static void
key_of(const char *s, char key[BC_HASH_HEXLEN + 1])
{
	uint8_t d[BC_HASH_LEN];

	bc_hash_bytes(s, strlen(s), d);
	bc_hash_hex(d, sizeof(d), key);
}

/* Store an entry whose object is n bytes of pattern (random-looking
 * bytes when noisy, so that zstd cannot shrink it). */
static void
store(const char *key, size_t n, int noisy)
{
	struct bc_cache *c;
	struct bc_cache_entry ce;
	char e[BC_ERRLEN];
	uint8_t *w;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i;

	ck_assert_int_eq(bc_cache_open(dir, 0, &c, e), BC_OK);
	bc_cache_entry_init(&ce);
	ck_assert_int_eq(bc_buf_put_str(&ce.serr, "a.c:1: warning: w\n"),
	    BC_OK);
	ck_assert_int_eq(bc_buf_reserve(&ce.obj, n, &w), BC_OK);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		w[i] = noisy ? (uint8_t)x : (uint8_t)(i % 7);
	}
	ck_assert_int_eq(bc_buf_commit(&ce.obj, n), BC_OK);
	ce.compile_ms = 42;
	ck_assert_msg(bc_cache_put(c, key, &ce, e) == BC_OK, "%s", e);
	bc_cache_entry_free(&ce);
	bc_cache_close(c);
}

static void
lookup_request(const char *key, struct bc_buf *out)
{
	struct bc_request req;
	char e[BC_ERRLEN];

	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_LOOKUP;
	req.key = xstrdup(key);
	ck_assert_int_eq(bc_proto_write_request_head(out, &req, e), BC_OK);
	bc_request_free(&req);
}

static enum bc_fasthit_kind
answer(struct bc_fasthit *fh, const struct bc_buf *in,
    struct bc_fasthit_answer *a)
{
	return bc_fasthit_answer(fh, &conf, "127.0.0.1:1", bc_buf_data(in),
	    bc_buf_len(in), a);
}

/* The reply in a as a client reads it. */
static void
read_reply(const struct bc_fasthit_answer *a, struct bc_reply *rep)
{
	struct bc_io io;
	char e[BC_ERRLEN];

	bc_io_init(&io, -1, -1, 0);
	bc_io_preload(&io, bc_buf_data(&a->out), bc_buf_len(&a->out));
	bc_reply_init(rep);
	ck_assert_msg(bc_proto_read_reply(&io, BC_PROTO_BOLT, BC_RQST_LOOKUP,
	    rep, e) == BC_OK, "%s", e);
	ck_assert_uint_eq(bc_io_preload_left(&io), 0);
}

static size_t
keeper_records(void)
{
	struct bc_keeper_rec r;
	size_t n = 0;
	int fl = fcntl(keeper[0], F_GETFL);

	(void)fcntl(keeper[0], F_SETFL, fl | O_NONBLOCK);
	while (read(keeper[0], &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		ck_assert_uint_eq(r.kind, BC_KEEP_TOUCH);
		ck_assert_int_eq(r.u.touch.hit, 1);
		ck_assert_int_eq(r.u.touch.count, BC_CACHE_COUNT_ALL);
		n++;
	}
	return n;
}

START_TEST(absent_key_is_a_miss)
{
	struct bc_fasthit fh;
	struct bc_fasthit_answer a;
	struct bc_buf in = BC_BUF_INIT(4096);
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1];

	bc_fasthit_init(&fh);
	bc_fasthit_answer_init(&a);
	key_of("absent", key);
	lookup_request(key, &in);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_ABSENT);
	read_reply(&a, &rep);
	ck_assert_int_eq(rep.miss, 1);
	ck_assert_str_eq(a.rec.key, "");
	ck_assert_uint_eq(keeper_records(), 0);
	bc_reply_free(&rep);
	bc_buf_free(&in);
	bc_fasthit_answer_free(&a);
	bc_fasthit_free(&fh);
}
END_TEST

START_TEST(stored_key_is_served_whole)
{
	struct bc_fasthit fh;
	struct bc_fasthit_answer a;
	struct bc_buf in = BC_BUF_INIT(4096);
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1];
	size_t i;

	bc_fasthit_init(&fh);
	bc_fasthit_answer_init(&a);
	key_of("present", key);
	store(key, 100000, 1);
	lookup_request(key, &in);
	for (i = 0; i < 3; i++) {	/* the cache handle is kept */
		ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_HIT);
		read_reply(&a, &rep);
		ck_assert_int_eq(rep.miss, 0);
		ck_assert_uint_eq(WEXITSTATUS(rep.status), 0);
		ck_assert_uint_eq(bc_buf_len(&rep.doto), 100000);
		ck_assert_uint_eq(bc_buf_len(&rep.serr), 18);
		ck_assert(memcmp(bc_buf_data(&rep.serr), "a.c:1: warning: w\n",
		    18) == 0);
		bc_reply_free(&rep);
		ck_assert_int_eq(a.ev.kind, BC_EV_DONE);
		ck_assert_int_eq(a.ev.outcome, BC_OUT_OK);
		ck_assert_int_eq(a.ev.cache, BC_EV_CACHE_HIT);
		ck_assert_int_eq(a.ev.mode, BC_MODE_LOOKUP);
		ck_assert_str_eq(a.ev.compiler, "lookup");
		ck_assert_int_eq(strncmp(a.ev.file, key, 16), 0);
	}
	ck_assert_uint_eq(keeper_records(), 3);
	bc_buf_free(&in);
	bc_fasthit_answer_free(&a);
	bc_fasthit_free(&fh);
}
END_TEST

/* Flip one byte of key's blob file. */
static void
damage(const char *key)
{
	char *p = xasprintf("%s/blobs/%.2s/%s", dir, key, key);
	FILE *f = fopen(p, "r+b");
	long n;
	int c;

	ck_assert_msg(f != NULL, "%s", p);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_eq(fseek(f, n / 2, SEEK_SET), 0);
	c = fgetc(f);
	ck_assert_int_eq(fseek(f, n / 2, SEEK_SET), 0);
	fputc(c ^ 0x40, f);
	fclose(f);
	free(p);
}

START_TEST(left_to_a_worker)
{
	struct bc_fasthit fh;
	struct bc_fasthit_answer a;
	struct bc_buf in = BC_BUF_INIT(BC_MAX_LOOKUP_PEEK * 4);
	struct bc_keeper_rec r;
	char key[BC_HASH_HEXLEN + 1], big[BC_HASH_HEXLEN + 1];
	size_t n;

	bc_fasthit_init(&fh);
	bc_fasthit_answer_init(&a);
	key_of("damaged", key);
	store(key, 5000, 0);
	lookup_request(key, &in);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_HIT);
	ck_assert_uint_eq(keeper_records(), 1);
	/* trailing bytes: a second request, or garbage */
	ck_assert_int_eq(bc_buf_put(&in, "xyz", 3), BC_OK);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	ck_assert_uint_eq(bc_buf_len(&a.out), 0);
	/* a full keeper pipe: the count must not be lost */
	bc_buf_reset(&in);
	lookup_request(key, &in);
	memset(&r, 0, sizeof(r));
	r.kind = BC_KEEP_TOUCH;
	n = 0;
	while (bc_keeper_send(keeper[1], &r) == 0)
		n++;
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	while (read(keeper[0], &r, sizeof(r)) == (ssize_t)sizeof(r) &&
	    --n > 0)
		;
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_HIT);
	ck_assert_uint_eq(keeper_records(), 1);
	/* a damaged blob: a worker's, which drops and counts it */
	damage(key);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	ck_assert_uint_eq(keeper_records(), 0);
	/* a reply over BC_MAX_FASTHIT_REPLY */
	key_of("big", big);
	store(big, BC_MAX_FASTHIT_REPLY + 4096, 1);
	bc_buf_reset(&in);
	lookup_request(big, &in);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	ck_assert_uint_eq(keeper_records(), 0);
	/* a compile request, a protocol 2 request, not a request */
	bc_buf_reset(&in);
	ck_assert_int_eq(bc_buf_put_str(&in, "DIST00000002ARGC00000001"),
	    BC_OK);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	bc_buf_reset(&in);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	bc_buf_free(&in);
	bc_fasthit_answer_free(&a);
	bc_fasthit_free(&fh);
}
END_TEST

/* The key a daemon computes for the BOLT pump request in (n bytes) with
 * the compiler at path (as daemon/compcache.c's bc_compcache_prepare does). */
static void
pump_key(const struct bc_buf *in, const char *path,
    char key[BC_HASH_HEXLEN + 1])
{
	struct bc_request req;
	struct bc_proto3x_manifest m;
	struct bc_io io;
	char ident[BC_HASH_HEXLEN + 1], e[BC_ERRLEN];

	bc_io_init(&io, -1, -1, 0);
	bc_io_preload(&io, bc_buf_data(in), bc_buf_len(in));
	bc_request_init(&req);
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(bc_proto_read_request(&io, &req, e), BC_OK);
	ck_assert_msg(bc_pumpx_read(&io, &req, &m, e) == BC_OK, "%s", e);
	ck_assert_msg(bc_cache_identity(path, NULL, ident, e) == BC_OK, "%s",
	    e);
	ck_assert_int_eq(bc_pumpx_key(&m, &req, ident, dir, 0, key, NULL), 0);
	bc_proto3x_manifest_free(&m);
	bc_request_free(&req);
}

static void
pump_request(struct bc_buf *in, const char *const *argv, size_t argc)
{
	struct bc_strv av = BC_STRV_INIT;
	uint8_t h[BC_HASH_LEN];
	char e[BC_ERRLEN];
	size_t k;

	for (k = 0; k < argc; k++)
		bc_strv_push(&av, argv[k]);
	bc_hash_bytes("int a;\n", 7, h);
	bc_buf_reset(in);
	ck_assert_int_eq(bc_proto3x_write_head(in, 0, "/w", NULL, &av, 2, e),
	    BC_OK);
	ck_assert_int_eq(bc_proto3x_write_hash(in, "/w/a.c", h, e), BC_OK);
	ck_assert_int_eq(bc_proto3x_write_dir(in, "/w", e), BC_OK);
	bc_strv_free(&av);
}

/* A BOLT pump hit is served; the same request for a compiler or with an
 * option the policy refuses, or cut short, is a worker's (which says
 * why), even when a blob is stored under the key it would have. */
START_TEST(pump_hit_and_refusals)
{
	static const char *const good[] = { "cc", "-O2", "-c", "a.c" };
	static const char *const env[] = { "env", "-O2", "-c", "a.c" };
	static const char *const plugin[] = { "cc", "-fplugin=x.so", "-c",
	    "a.c" };
	struct bc_fasthit fh;
	struct bc_fasthit_answer a;
	struct bc_buf in = BC_BUF_INIT(1 << 16);
	char key[BC_HASH_HEXLEN + 1], *cc;
	char e[BC_ERRLEN];

	bc_fasthit_init(&fh);
	bc_fasthit_answer_init(&a);
	ck_assert_msg(bc_policy_resolve(&policy, "cc", &cc, e) == BC_OK, "%s",
	    e);
	pump_request(&in, good, 4);
	pump_key(&in, cc, key);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);	/* not yet */
	store(key, 3000, 0);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_HIT);
	ck_assert_int_eq(a.ev.mode, BC_MODE_BOLT_PUMP);
	ck_assert_str_eq(a.ev.file, "a.c");
	ck_assert_str_eq(a.ev.compiler, "cc");
	ck_assert_uint_eq(keeper_records(), 1);
	/* cut short: never whole, a worker's */
	ck_assert_int_eq(bc_fasthit_answer(&fh, &conf, "127.0.0.1:1",
	    bc_buf_data(&in), bc_buf_len(&in) - 5, &a), BC_FAST_NONE);
	/* a refused option: the key would be another, so store that one */
	pump_request(&in, plugin, 4);
	pump_key(&in, cc, key);
	store(key, 3000, 0);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	/* a refused compiler */
	pump_request(&in, env, 4);
	pump_key(&in, "/usr/bin/env", key);
	store(key, 3000, 0);
	ck_assert_int_eq(answer(&fh, &in, &a), BC_FAST_NONE);
	ck_assert_uint_eq(keeper_records(), 0);
	free(cc);
	bc_buf_free(&in);
	bc_fasthit_answer_free(&a);
	bc_fasthit_free(&fh);
}
END_TEST

static Suite *
fasthit_suite(void)
{
	Suite *s = suite_create("fasthit");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT_SLOW);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, absent_key_is_a_miss);
	tcase_add_test(tc, stored_key_is_served_whole);
	tcase_add_test(tc, left_to_a_worker);
	tcase_add_test(tc, pump_hit_and_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(fasthit_suite());
}
