/*
 * test_mux.c - unit tests of the stream-multiplexing codec and engine
 * (common/mux.c): greeting and frame round trips, every codec refusal,
 * a client and a server engine joined in memory relaying two streams
 * (one with a reader that does not read, which must not stall the
 * other), and hostile frames against the server engine.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "common/mux.h"
#include "tests/unit/unit.h"

static const struct bc_mux_hello good_hello = {
	BC_MUX_VERSION, BC_MUX_MAX_PAYLOAD, 8, BC_MUX_WINDOW
};

START_TEST(test_hello)
{
	struct bc_buf b = BC_BUF_INIT(100), v;
	struct bc_mux_hello h;
	char err[BC_ERRLEN];
	uint8_t raw[BC_MUX_HELLO_LEN];

	ck_assert_int_eq(bc_mux_put_hello(&b, &good_hello), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), BC_MUX_HELLO_LEN);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "BOLTMUX1", 8), 0);
	memcpy(raw, bc_buf_data(&b), sizeof(raw));
	/* every prefix is "need more", nothing consumed */
	for (size_t n = 0; n < sizeof(raw); n++) {
		bc_buf_view(&v, raw, n);
		ck_assert_int_eq(bc_mux_get_hello(&v, &h, err),
		    BC_ERR_TRUNCATED);
		ck_assert_uint_eq(bc_buf_avail(&v), n);
	}
	bc_buf_view(&v, raw, sizeof(raw));
	ck_assert_int_eq(bc_mux_get_hello(&v, &h, err), BC_OK);
	ck_assert_uint_eq(h.max_streams, 8);
	ck_assert_uint_eq(h.window, BC_MUX_WINDOW);
	ck_assert_uint_eq(bc_buf_avail(&v), 0);
	/* a distcc reply or a shell message is no greeting, at once */
	bc_buf_view(&v, "DONE0000", 8);
	ck_assert_int_eq(bc_mux_get_hello(&v, &h, err), BC_ERR_PROTO);
	bc_buf_view(&v, "usage", 5);
	ck_assert_int_eq(bc_mux_get_hello(&v, &h, err), BC_ERR_PROTO);
	raw[11] = 2;	/* version 2 */
	bc_buf_view(&v, raw, sizeof(raw));
	ck_assert_int_eq(bc_mux_get_hello(&v, &h, err), BC_ERR_NOTSUP);
	raw[11] = 1;
	memset(raw + 20, 0, 4);	/* window 0 */
	bc_buf_view(&v, raw, sizeof(raw));
	ck_assert_int_eq(bc_mux_get_hello(&v, &h, err), BC_ERR_NOTSUP);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_frames)
{
	struct bc_buf b = BC_BUF_INIT(1 << 20), v;
	struct bc_mux_frame f;
	char err[BC_ERRLEN];
	uint8_t raw[64];

	ck_assert_int_eq(bc_mux_put_frame(&b, BC_MUX_DATA, 7, "abc", 3), BC_OK);
	ck_assert_int_eq(bc_mux_put_frame(&b, BC_MUX_EOF, 7, NULL, 0), BC_OK);
	ck_assert_int_eq(bc_mux_put_frame(&b, BC_MUX_GOAWAY, 0, "x", 1), BC_OK);
	for (size_t n = 0; n < BC_MUX_HDR_LEN + 3; n++) {
		bc_buf_view(&v, bc_buf_data(&b), n);
		ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err),
		    BC_ERR_TRUNCATED);
		ck_assert_uint_eq(bc_buf_avail(&v), n);
	}
	bc_buf_view(&v, bc_buf_data(&b), bc_buf_len(&b));
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_OK);
	ck_assert_uint_eq(f.type, BC_MUX_DATA);
	ck_assert_uint_eq(f.stream, 7);
	ck_assert_uint_eq(f.len, 3);
	ck_assert_int_eq(memcmp(f.payload, "abc", 3), 0);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_OK);
	ck_assert_uint_eq(f.type, BC_MUX_EOF);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_OK);
	ck_assert_uint_eq(f.type, BC_MUX_GOAWAY);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_TRUNCATED);
	/* payload over the limit: refused from the header alone */
	ck_assert_int_eq(bc_mux_put_frame(&b, BC_MUX_DATA, 1, NULL,
	    BC_MUX_MAX_PAYLOAD + 1), BC_ERR_LIMIT);
	memset(raw, 0, sizeof(raw));
	raw[3] = 1;
	raw[5] = 0x10;	/* 1 MiB */
	raw[8] = BC_MUX_DATA;
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN);
	ck_assert_int_eq(bc_mux_get_frame(&v, BC_MUX_MAX_PAYLOAD, &f, err),
	    BC_ERR_LIMIT);
	raw[5] = 0;
	raw[8] = 9;	/* unknown type */
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_PROTO);
	raw[8] = BC_MUX_DATA;
	raw[10] = 1;	/* reserved */
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_PROTO);
	raw[10] = 0;
	raw[8] = BC_MUX_CREDIT;	/* CREDIT needs 4 bytes */
	raw[7] = 3;
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN + 3);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_PROTO);
	raw[8] = BC_MUX_OPEN;	/* OPEN has none */
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN + 3);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_PROTO);
	raw[7] = 0;
	raw[3] = 0;	/* stream 0 is for GOAWAY only */
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_PROTO);
	raw[8] = BC_MUX_GOAWAY;
	raw[3] = 5;
	bc_buf_view(&v, raw, BC_MUX_HDR_LEN);
	ck_assert_int_eq(bc_mux_get_frame(&v, 100, &f, err), BC_ERR_PROTO);
	bc_buf_free(&b);
}
END_TEST

/* --- engines joined in memory ------------------------------------------ */

static int worker_fd[16];
static int nworkers;

static int
srv_open(struct bc_mux *m, struct bc_mux_stream *st, void *ctx, char *err)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	st->fd = sv[0];
	worker_fd[nworkers++] = sv[1];
	return BC_OK;
}

/* Move out -> in between the two engines and pump, a few rounds. */
static int
shuttle(struct bc_mux *a, struct bc_mux *b, int rounds)
{
	char err[BC_ERRLEN];
	int r = BC_OK, i;

	for (i = 0; i < rounds && r == BC_OK; i++) {
		struct bc_mux *from = i % 2 ? b : a, *to = i % 2 ? a : b;
		const uint8_t *p;
		size_t n;

		(void)bc_mux_pump(from);
		while ((n = bc_mux_out(from, &p)) > 0 && r == BC_OK) {
			uint8_t *q;
			size_t space = bc_mux_in_space(to, &q);

			if (n > space)
				n = space;
			memcpy(q, p, n);
			bc_mux_out_done(from, n);
			r = bc_mux_input(to, n, err);
		}
		(void)bc_mux_pump(to);
	}
	return r;
}

static size_t
drain(int fd, char *buf, size_t max)
{
	size_t got = 0;
	ssize_t n;

	while (got < max && (n = recv(fd, buf + got, max - got,
	    MSG_DONTWAIT)) > 0)
		got += (size_t)n;
	return got;
}

START_TEST(test_engine_relay)
{
	struct bc_mux cl, sv;
	struct bc_mux_stream *s1, *s2;
	char err[BC_ERRLEN], buf[4096];
	int a[2], b[2];
	static char big[3 * BC_MUX_WINDOW];
	size_t sent = 0, got;

	nworkers = 0;
	bc_mux_init(&cl, BC_MUX_ROLE_CLIENT, 16, NULL, NULL);
	bc_mux_init(&sv, BC_MUX_ROLE_SERVER, 4, srv_open, NULL);
	ck_assert_int_eq(shuttle(&cl, &sv, 2), BC_OK);
	ck_assert_int_eq(bc_mux_peer_streams(&cl), 4);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	(void)fcntl(a[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(b[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(a[1], F_SETFL, O_NONBLOCK);
	ck_assert_int_eq(bc_mux_open(&cl, a[0], &s1, err), BC_OK);
	ck_assert_int_eq(bc_mux_open(&cl, b[0], &s2, err), BC_OK);
	ck_assert_int_eq(shuttle(&cl, &sv, 2), BC_OK);
	ck_assert_int_eq(nworkers, 2);
	/* stream 1's worker floods; its client end (a[1]) never reads */
	(void)fcntl(worker_fd[0], F_SETFL, O_NONBLOCK);
	memset(big, 'x', sizeof(big));
	/* stream 2: a request and a reply, while stream 1 is stuck */
	ck_assert_int_eq(write(b[1], "request", 7), 7);
	for (int i = 0; i < 50; i++) {
		ssize_t w = send(worker_fd[0], big + sent, sizeof(big) - sent,
		    MSG_DONTWAIT);

		if (w > 0)
			sent += (size_t)w;
		ck_assert_int_eq(shuttle(&cl, &sv, 4), BC_OK);
	}
	got = drain(worker_fd[1], buf, sizeof(buf));
	ck_assert_uint_eq(got, 7);
	ck_assert_int_eq(memcmp(buf, "request", 7), 0);
	ck_assert_int_eq(write(worker_fd[1], "reply", 5), 5);
	close(worker_fd[1]);	/* the worker exits */
	shutdown(b[1], SHUT_WR);	/* the client is done sending */
	ck_assert_int_eq(shuttle(&cl, &sv, 10), BC_OK);
	got = drain(b[1], buf, sizeof(buf));
	ck_assert_uint_eq(got, 5);
	ck_assert_int_eq(memcmp(buf, "reply", 5), 0);
	ck_assert_int_eq(recv(b[1], buf, 1, MSG_DONTWAIT), 0);	/* EOF */
	ck_assert_int_eq(s2->done, 1);
	ck_assert_int_eq(s2->reset, 0);
	/* stream 1: never more than a window buffered per side */
	ck_assert_int_eq(s1->done, 0);
	ck_assert_uint_le(bc_buf_avail(&s1->in), BC_MUX_WINDOW);
	ck_assert_uint_le(bc_buf_avail(&cl.out), BC_MUX_OUTQ_HIGH +
	    BC_MUX_MAX_PAYLOAD + 64);
	ck_assert_uint_le(bc_buf_avail(&sv.out), BC_MUX_OUTQ_HIGH +
	    BC_MUX_MAX_PAYLOAD + 64);
	/* reading it now lets it finish */
	got = 0;
	close(worker_fd[0]);
	for (int i = 0; i < 200 && !s1->done; i++) {
		got += drain(a[1], big, sizeof(big));
		if (i == 100)
			shutdown(a[1], SHUT_WR);
		ck_assert_int_eq(shuttle(&cl, &sv, 4), BC_OK);
	}
	got += drain(a[1], big, sizeof(big));
	ck_assert_uint_eq(got, sent);
	bc_mux_collect(&cl);
	ck_assert_uint_eq(bc_mux_active(&cl), 0);
	close(a[1]);
	close(b[1]);
	bc_mux_free(&cl);
	bc_mux_free(&sv);
}
END_TEST

/* Feed raw frames to a server engine that has seen a good greeting. */
static int
feed(struct bc_mux *m, struct bc_buf *raw)
{
	char err[BC_ERRLEN];
	uint8_t *p;
	size_t n = bc_buf_avail(raw), space = bc_mux_in_space(m, &p);
	int r;

	ck_assert_uint_le(n, space);
	memcpy(p, bc_buf_ptr(raw), n);
	r = bc_mux_input(m, n, err);
	bc_buf_reset(raw);
	return r;
}

START_TEST(test_engine_hostile)
{
	struct bc_mux sv;
	struct bc_buf raw = BC_BUF_INIT(1 << 20);
	static uint8_t junk[BC_MUX_MAX_PAYLOAD];
	int i;

	nworkers = 0;
	bc_mux_init(&sv, BC_MUX_ROLE_SERVER, 2, srv_open, NULL);
	(void)bc_mux_put_hello(&raw, &good_hello);
	ck_assert_int_eq(feed(&sv, &raw), BC_OK);
	/* too many streams: the third is reset, the connection lives */
	for (i = 1; i <= 3; i++)
		(void)bc_mux_put_frame(&raw, BC_MUX_OPEN, (uint32_t)i, NULL, 0);
	ck_assert_int_eq(feed(&sv, &raw), BC_OK);
	ck_assert_uint_eq(bc_mux_active(&sv), 2);
	ck_assert_uint_eq(sv.resets_sent, 1);
	/* data past the window resets that stream only */
	for (i = 0; i < BC_MUX_WINDOW / BC_MUX_MAX_PAYLOAD + 1; i++) {
		(void)bc_mux_put_frame(&raw, BC_MUX_DATA, 1, junk, sizeof(junk));
		ck_assert_int_eq(feed(&sv, &raw), BC_OK);
	}
	ck_assert_uint_eq(bc_mux_active(&sv), 1);
	ck_assert_uint_eq(sv.resets_sent, 2);
	/* late frames for the reset stream are ignored */
	(void)bc_mux_put_frame(&raw, BC_MUX_DATA, 1, "x", 1);
	ck_assert_int_eq(feed(&sv, &raw), BC_OK);
	ck_assert_uint_eq(sv.ignored, 1);
	/* data after end of data resets stream 2 */
	(void)bc_mux_put_frame(&raw, BC_MUX_EOF, 2, NULL, 0);
	(void)bc_mux_put_frame(&raw, BC_MUX_DATA, 2, "x", 1);
	ck_assert_int_eq(feed(&sv, &raw), BC_OK);
	ck_assert_uint_eq(sv.resets_sent, 3);
	ck_assert_int_eq(sv.failed, 0);
	/* a reused stream id fails the connection, with a GOAWAY */
	(void)bc_mux_put_frame(&raw, BC_MUX_OPEN, 2, NULL, 0);
	ck_assert_int_eq(feed(&sv, &raw), BC_ERR_PROTO);
	ck_assert_int_eq(sv.failed, 1);
	ck_assert_ptr_nonnull(strstr(sv.why, "reused"));
	bc_mux_free(&sv);

	/* unknown stream, credit overflow: connection errors */
	bc_mux_init(&sv, BC_MUX_ROLE_SERVER, 2, srv_open, NULL);
	(void)bc_mux_put_hello(&raw, &good_hello);
	(void)bc_mux_put_frame(&raw, BC_MUX_DATA, 9, "x", 1);
	ck_assert_int_eq(feed(&sv, &raw), BC_ERR_PROTO);
	ck_assert_ptr_nonnull(strstr(sv.why, "unknown stream"));
	bc_mux_free(&sv);
	bc_mux_init(&sv, BC_MUX_ROLE_SERVER, 2, srv_open, NULL);
	(void)bc_mux_put_hello(&raw, &good_hello);
	(void)bc_mux_put_frame(&raw, BC_MUX_OPEN, 1, NULL, 0);
	(void)bc_mux_put_frame(&raw, BC_MUX_CREDIT, 1, "\xff\xff\xff\xff", 4);
	ck_assert_int_eq(feed(&sv, &raw), BC_ERR_PROTO);
	bc_mux_free(&sv);
	/* no greeting */
	bc_mux_init(&sv, BC_MUX_ROLE_SERVER, 2, srv_open, NULL);
	(void)bc_buf_put(&raw, "DIST00000001ARGC00000002", 24);
	ck_assert_int_eq(feed(&sv, &raw), BC_ERR_PROTO);
	bc_mux_free(&sv);
	for (i = 0; i < nworkers; i++)
		close(worker_fd[i]);
	bc_buf_free(&raw);
}
END_TEST

/* Random bytes after a good greeting never crash the engine. */
START_TEST(test_engine_mutations)
{
	struct bc_buf raw = BC_BUF_INIT(1 << 20);
	unsigned seed = 12345;
	int it, i;

	for (it = 0; it < 300; it++) {
		struct bc_mux sv;

		nworkers = 0;
		bc_mux_init(&sv, BC_MUX_ROLE_SERVER, 4, srv_open, NULL);
		(void)bc_mux_put_hello(&raw, &good_hello);
		for (i = 1; i <= 3; i++) {
			(void)bc_mux_put_frame(&raw, BC_MUX_OPEN, (uint32_t)i,
			    NULL, 0);
			(void)bc_mux_put_frame(&raw, BC_MUX_DATA, (uint32_t)i,
			    "hello", 5);
		}
		(void)bc_mux_put_frame(&raw, BC_MUX_CREDIT, 2, "\0\0\1\0", 4);
		(void)bc_mux_put_frame(&raw, BC_MUX_EOF, 3, NULL, 0);
		for (i = 0; i < 4; i++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = BC_MUX_HELLO_LEN + (seed >> 8) %
			    (bc_buf_len(&raw) - BC_MUX_HELLO_LEN);
			uint8_t x = bc_buf_data(&raw)[at] ^
			    (uint8_t)(1u << ((seed >> 4) & 7));

			ck_assert_int_eq(bc_buf_patch(&raw, at, &x, 1), BC_OK);
		}
		(void)feed(&sv, &raw);
		(void)bc_mux_pump(&sv);
		bc_mux_collect(&sv);
		bc_mux_free(&sv);
		for (i = 0; i < nworkers; i++)
			close(worker_fd[i]);
	}
	bc_buf_free(&raw);
}
END_TEST

static Suite *
mux_suite(void)
{
	Suite *s = suite_create("mux");
	TCase *tc = bc_tcase("codec", BC_TEST_TIMEOUT);
	TCase *te = bc_tcase("engine", BC_TEST_TIMEOUT);

	tcase_add_test(tc, test_hello);
	tcase_add_test(tc, test_frames);
	suite_add_tcase(s, tc);
	tcase_add_test(te, test_engine_relay);
	tcase_add_test(te, test_engine_hostile);
	tcase_add_test(te, test_engine_mutations);
	suite_add_tcase(s, te);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	bc_log_silence();
	return bc_unit_run(mux_suite());
}
