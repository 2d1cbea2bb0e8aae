/*
 * test_wire.c - unit tests of distcc token framing and the fd-level
 * reader (io.c) with its timeouts.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/io.h"
#include "common/wire.h"
#include "tests/unit/unit.h"

/* The start of a real protocol-2 request (vectors/p2-request.bin). */
static const char golden[] =
    "DIST00000002ARGC00000005"
    "ARGV00000014x86_64-linux-gnu-gcc"
    "ARGV00000002-c"
    "ARGV00000007hello.c"
    "ARGV00000002-o"
    "ARGV00000007hello.o";

START_TEST(test_put_int)
{
	struct bc_buf b = BC_BUF_INIT(100);

	ck_assert_int_eq(bc_wire_put_int(&b, "DIST", 1), BC_OK);
	ck_assert_int_eq(bc_wire_put_int(&b, "STAT", 0xdeadBEEF), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 24);
	ck_assert_int_eq(memcmp(bc_buf_data(&b),
	    "DIST00000001STATdeadbeef", 24), 0);
	/* Tokens must be exactly 4 bytes. */
	ck_assert_int_eq(bc_wire_put_int(&b, "DIS", 1), BC_ERR_INVAL);
	ck_assert_int_eq(bc_wire_put_int(&b, "DISTX", 1), BC_ERR_INVAL);
	ck_assert_uint_eq(bc_buf_len(&b), 24);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_put_str_limit_is_atomic)
{
	struct bc_buf b = BC_BUF_INIT(20);

	ck_assert_int_eq(bc_wire_put_str(&b, "ARGV", "ab", 2), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 14);
	/* Header fits, body does not: nothing of it may remain. */
	ck_assert_int_eq(bc_wire_put_str(&b, "ARGV", "x", 1), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&b), 14);
	ck_assert_int_eq(bc_wire_put_str(&b, "ARGV", "", 0), BC_ERR_LIMIT);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_roundtrip)
{
	struct bc_buf b = BC_BUF_INIT(1 << 16), v;
	char tok[5];
	uint32_t val;
	char err[BC_ERRLEN];
	const uint8_t bin[] = { 0, 1, 2, 0xff, '\n' };

	ck_assert_int_eq(bc_wire_put_int(&b, "DIST", 2), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(&b, "ARGV", "-c", 2), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(&b, "DOTI", bin, sizeof(bin)), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(&b, "SERR", NULL, 0), BC_OK);

	ck_assert_int_eq(bc_wire_get_hdr(&b, NULL, tok, &val, err), BC_OK);
	ck_assert_str_eq(tok, "DIST");
	ck_assert_uint_eq(val, 2);
	ck_assert_int_eq(bc_wire_get_str(&b, "ARGV", 100, &v, err), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&v), 2);
	ck_assert_int_eq(memcmp(bc_buf_ptr(&v), "-c", 2), 0);
	ck_assert_int_eq(bc_wire_get_str(&b, "DOTI", 100, &v, err), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&v), sizeof(bin));
	ck_assert_int_eq(memcmp(bc_buf_ptr(&v), bin, sizeof(bin)), 0);
	ck_assert_int_eq(bc_wire_get_str(&b, "SERR", 0, &v, err), BC_OK);
	ck_assert_uint_eq(bc_buf_avail(&v), 0);
	ck_assert_uint_eq(bc_buf_avail(&b), 0);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_parse_dist)
{
	char tok[5], err[BC_ERRLEN];
	uint32_t val = 0;

	ck_assert_int_eq(bc_wire_parse_hdr((const uint8_t *)"DIST00000001",
	    tok, &val, err), BC_OK);
	ck_assert_str_eq(tok, "DIST");
	ck_assert_uint_eq(val, 1);
	/* Uppercase hex accepted on input. */
	ck_assert_int_eq(bc_wire_parse_hdr((const uint8_t *)"DOTIABCDEF09",
	    tok, &val, err), BC_OK);
	ck_assert_uint_eq(val, 0xabcdef09);
	ck_assert_int_eq(bc_wire_parse_hdr((const uint8_t *)"DOTIFFFFFFFF",
	    tok, &val, err), BC_OK);
	ck_assert_uint_eq(val, 0xffffffffu);
}
END_TEST

START_TEST(test_reject_bad_hex)
{
	static const char *const bad[] = {
		"DIST0000000g", "DIST 0000001", "DIST-0000001", "DIST+0000001",
		"DIST0x000001", "DIST0000000\n", ("DIST\0" "0000001"),
		"DIST00000 01", "DISTxxxxxxxx",
	};
	char tok[5], err[BC_ERRLEN];
	uint32_t val = 42;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(bc_wire_parse_hdr((const uint8_t *)bad[i],
		    tok, &val, err), BC_ERR_PROTO);
		ck_assert_uint_eq(val, 42);
		ck_assert(err[0] != '\0');
	}
}
END_TEST

START_TEST(test_short_and_mismatch)
{
	struct bc_buf b, v;
	char tok[5], err[BC_ERRLEN];
	uint32_t val;

	bc_buf_view(&b, "DIST0000", 8);
	ck_assert_int_eq(bc_wire_get_hdr(&b, NULL, tok, &val, err),
	    BC_ERR_TRUNCATED);
	ck_assert_uint_eq(bc_buf_avail(&b), 8);

	bc_buf_view(&b, "ARGC00000001", 12);
	ck_assert_int_eq(bc_wire_get_hdr(&b, "ARGV", tok, &val, err),
	    BC_ERR_PROTO);
	ck_assert_ptr_nonnull(strstr(err, "ARGV"));
	ck_assert_ptr_nonnull(strstr(err, "ARGC00000001"));
	ck_assert_uint_eq(bc_buf_avail(&b), 12);

	/* Body longer than the limit: LIMIT, nothing consumed. */
	bc_buf_view(&b, "ARGV00000005hello", 17);
	ck_assert_int_eq(bc_wire_get_str(&b, "ARGV", 4, &v, err),
	    BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_avail(&b), 17);
	/* Body shorter than claimed: TRUNCATED, nothing consumed. */
	bc_buf_view(&b, "ARGV00000006hello", 17);
	ck_assert_int_eq(bc_wire_get_str(&b, "ARGV", 100, &v, err),
	    BC_ERR_TRUNCATED);
	ck_assert_uint_eq(bc_buf_avail(&b), 17);
	ck_assert_uint_eq(bc_buf_avail(&v), 0);
	/* Claimed length near 4 GiB must not overflow anything. */
	bc_buf_view(&b, "DOTIffffffffabc", 15);
	ck_assert_int_eq(bc_wire_get_str(&b, "DOTI", (size_t)-1, &v, err),
	    BC_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_escape)
{
	char out[64];
	const uint8_t hostile[] = { 'o', 'k', '\n', 'E', 'R', 'R', 0x1b, '[',
	    0x00, 0xff, '\\', '\r' };

	bc_wire_escape(hostile, sizeof(hostile), out, sizeof(out));
	ck_assert_str_eq(out, "ok\\nERR\\x1b[\\x00\\xff\\\\\\x0d");
	ck_assert_ptr_null(strchr(out, '\n'));
	/* Truncation never cuts an escape in half and always terminates. */
	bc_wire_escape(hostile, sizeof(hostile), out, 4);
	ck_assert_str_eq(out, "ok");
	bc_wire_escape(hostile, sizeof(hostile), out, 1);
	ck_assert_str_eq(out, "");
	bc_wire_escape("", 0, out, sizeof(out));
	ck_assert_str_eq(out, "");
}
END_TEST

/* Parse the golden request completely; the oracle for the mutation loop. */
static int
parse_request(const uint8_t *p, size_t n)
{
	struct bc_buf b, v;
	char err[BC_ERRLEN];
	uint32_t val, argc, i;
	int r;

	bc_buf_view(&b, p, n);
	if ((r = bc_wire_get_hdr(&b, "DIST", NULL, &val, err)) != BC_OK)
		return r;
	if (val != 2)
		return BC_ERR_PROTO;
	if ((r = bc_wire_get_hdr(&b, "ARGC", NULL, &argc, err)) != BC_OK)
		return r;
	if (argc > 100)
		return BC_ERR_LIMIT;
	for (i = 0; i < argc; i++) {
		if ((r = bc_wire_get_str(&b, "ARGV", 1000, &v, err)) != BC_OK)
			return r;
		/* Touch every byte so ASan sees any overread. */
		if (bc_buf_avail(&v) > 0 && memchr(bc_buf_ptr(&v), 0,
		    bc_buf_avail(&v)) != NULL)
			return BC_ERR_PROTO;
	}
	if (bc_buf_avail(&b) != 0)
		return BC_ERR_PROTO;
	return BC_OK;
}

START_TEST(test_mutations)
{
	size_t n = sizeof(golden) - 1, i, k;
	uint8_t *m;
	int r, bit;

	ck_assert_int_eq(parse_request((const uint8_t *)golden, n), BC_OK);
	/* Truncations from either end: a fresh allocation each time so
	 * ASan catches reads past the end. */
	for (k = 1; k <= n; k++) {
		m = malloc(n - k + 1);
		memcpy(m, golden, n - k);
		ck_assert_int_lt(parse_request(m, n - k), 0);
		memcpy(m, golden + k, n - k);
		ck_assert_int_lt(parse_request(m, n - k), 0);
		free(m);
	}
	/* Bit flips and byte substitutions: any result is fine except a
	 * crash, and an error must be a real error code. */
	m = malloc(n);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(m, golden, n);
			m[i] ^= (uint8_t)(1u << bit);
			r = parse_request(m, n);
			ck_assert(r == BC_OK || (r < 0 && r >= BC_ERR_NOTSUP));
		}
		for (k = 0; k < 4; k++) {
			static const uint8_t sub[] = { 0x00, 0xff, 'F', '9' };

			memcpy(m, golden, n);
			m[i] = sub[k];
			r = parse_request(m, n);
			ck_assert(r <= 0);
		}
	}
	free(m);
}
END_TEST

/* --- io.c over socketpairs -------------------------------------------- */

static void
mkpair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

START_TEST(test_io_roundtrip)
{
	struct bc_io a, b;
	struct bc_buf out = BC_BUF_INIT(1 << 20), body = BC_BUF_INIT(1 << 20);
	char tok[5], err[BC_ERRLEN];
	uint32_t val;
	int sv[2];

	mkpair(sv);
	bc_io_init(&a, sv[0], sv[0], 1000);
	bc_io_init(&b, sv[1], sv[1], 1000);
	ck_assert_int_eq(bc_wire_put_int(&out, "DIST", 1), BC_OK);
	ck_assert_int_eq(bc_wire_put_str(&out, "ARGV", "gcc", 3), BC_OK);
	ck_assert_int_eq(bc_io_write_buf(&a, &out, err), BC_OK);
	ck_assert_uint_eq(a.bytes_out, 27);
	ck_assert_int_eq(bc_io_read_hdr(&b, "DIST", tok, &val, err), BC_OK);
	ck_assert_uint_eq(val, 1);
	ck_assert_int_eq(bc_io_read_hdr(&b, "ARGV", tok, &val, err), BC_OK);
	ck_assert_uint_eq(val, 3);
	ck_assert_int_eq(bc_io_read_body(&b, val, 100, &body, err), BC_OK);
	ck_assert_int_eq(memcmp(bc_buf_data(&body), "gcc", 3), 0);
	ck_assert_uint_eq(b.bytes_in, 27);
	close(sv[0]);
	close(sv[1]);
	bc_buf_free(&out);
	bc_buf_free(&body);
}
END_TEST

START_TEST(test_io_hdr_mismatch)
{
	struct bc_io b;
	char tok[5], err[BC_ERRLEN];
	uint32_t val;
	int sv[2];

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 1000);
	ck_assert_int_eq(write(sv[0], "EROR0000000a\n", 13), 13);
	ck_assert_int_eq(bc_io_read_hdr(&b, "STAT", tok, &val, err),
	    BC_ERR_PROTO);
	ck_assert_ptr_nonnull(strstr(err, "STAT"));
	ck_assert_ptr_nonnull(strstr(err, "EROR0000000a"));
	/* Non-hex value with the right token. */
	ck_assert_int_eq(write(sv[0], "STAT0000zz00", 12), 12);
	close(sv[0]);
	{
		char one;

		ck_assert_int_eq(read(sv[1], &one, 1), 1);	/* the '\n' */
	}
	ck_assert_int_eq(bc_io_read_hdr(&b, "STAT", tok, &val, err),
	    BC_ERR_PROTO);
	/* Then EOF. */
	ck_assert_int_eq(bc_io_read_hdr(&b, "STAT", tok, &val, err),
	    BC_ERR_EOF);
	close(sv[1]);
}
END_TEST

START_TEST(test_io_eof_vs_truncated)
{
	struct bc_io b;
	char buf[16], err[BC_ERRLEN];
	int sv[2];

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 1000);
	close(sv[0]);
	ck_assert_int_eq(bc_io_read_full(&b, buf, 4, err), BC_ERR_EOF);
	close(sv[1]);

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 1000);
	ck_assert_int_eq(write(sv[0], "ab", 2), 2);
	close(sv[0]);
	ck_assert_int_eq(bc_io_read_full(&b, buf, 4, err), BC_ERR_TRUNCATED);
	close(sv[1]);
}
END_TEST

START_TEST(test_io_read_body_limits)
{
	struct bc_io b;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN];
	int sv[2];

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 200);
	ck_assert_int_eq(write(sv[0], "0123456789", 10), 10);
	/* Over the limit: refused before reading or allocating anything. */
	ck_assert_int_eq(bc_io_read_body(&b, 0xffffffffu, 100, &out, err),
	    BC_ERR_LIMIT);
	ck_assert_uint_eq(out.cap, 0);
	ck_assert_uint_eq(b.bytes_in, 0);
	/* A huge claim within max grows only as bytes arrive. */
	close(sv[0]);
	ck_assert_int_eq(bc_io_read_body(&b, 0x10000000u, (size_t)-1, &out,
	    err), BC_ERR_TRUNCATED);
	ck_assert_uint_eq(bc_buf_len(&out), 0);	/* rolled back */
	ck_assert_uint_le(out.cap, 1 << 17);
	ck_assert_uint_eq(b.bytes_in, 10);
	/* Output buffer's own max applies too. */
	bc_buf_free(&out);
	close(sv[1]);

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 200);
	bc_buf_init(&out, 4);
	ck_assert_int_eq(write(sv[0], "0123456789", 10), 10);
	ck_assert_int_eq(bc_io_read_body(&b, 10, 100, &out, err),
	    BC_ERR_LIMIT);
	bc_buf_free(&out);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_io_idle_timeout)
{
	struct bc_io b;
	char buf[4], err[BC_ERRLEN];
	int64_t t0, dt;
	int sv[2];

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 150);
	t0 = bc_now_ms();
	ck_assert_int_eq(bc_io_read_full(&b, buf, 4, err), BC_ERR_TIMEOUT);
	dt = bc_now_ms() - t0;
	ck_assert_int_ge(dt, 140);
	ck_assert_int_lt(dt, 2000);
	ck_assert_ptr_nonnull(strstr(err, "idle"));
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* A writer that sends one byte every 50 ms: never idle for long, but the
 * whole-job deadline must still stop it. */
START_TEST(test_io_deadline_trickle)
{
	struct bc_io b;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN];
	int64_t t0, dt;
	pid_t pid;
	int sv[2], st;

	mkpair(sv);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int i;

		close(sv[1]);
		for (i = 0; i < 200; i++) {
			if (write(sv[0], "x", 1) != 1)
				_exit(0);
			usleep(50000);
		}
		_exit(0);
	}
	close(sv[0]);
	bc_io_init(&b, sv[1], sv[1], 300);
	t0 = bc_now_ms();
	b.deadline_ms = t0 + 400;
	ck_assert_int_eq(bc_io_read_body(&b, 1000, 1000, &out, err),
	    BC_ERR_TIMEOUT);
	dt = bc_now_ms() - t0;
	ck_assert_int_ge(dt, 390);
	ck_assert_int_lt(dt, 3000);
	ck_assert_ptr_nonnull(strstr(err, "deadline"));
	ck_assert_uint_gt(b.bytes_in, 2);
	/* Already expired deadline: immediate timeout. */
	ck_assert_int_eq(bc_io_read_body(&b, 10, 1000, &out, err),
	    BC_ERR_TIMEOUT);
	close(sv[1]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	bc_buf_free(&out);
}
END_TEST

/* An idle limit shorter than the deadline ends the wait, and says so:
 * poll's overshoot must not hand the wait over to the deadline. */
START_TEST(test_io_idle_before_deadline)
{
	struct bc_io b;
	char buf[4], err[BC_ERRLEN];
	int64_t t0, dt;
	int sv[2];

	mkpair(sv);
	bc_io_init(&b, sv[1], sv[1], 150);
	b.idle_name = "I/O timeout (--io-timeout, 150 ms)";
	b.deadline_name = "job timeout (--job-timeout 3 s)";
	t0 = bc_now_ms();
	b.deadline_ms = t0 + 3000;
	ck_assert_int_eq(bc_io_read_full(&b, buf, 4, err), BC_ERR_TIMEOUT);
	dt = bc_now_ms() - t0;
	ck_assert_int_ge(dt, 140);
	ck_assert_int_lt(dt, 1500);
	ck_assert_str_eq(err, "I/O timeout (--io-timeout, 150 ms): no progress "
	    "for 150 ms while reading (0 bytes received, 0 sent)");
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* The wording of each limit (pure). */
START_TEST(test_io_timeout_wording)
{
	struct bc_io b;
	char err[BC_ERRLEN];

	bc_io_init(&b, -1, -1, 60000);
	b.bytes_in = 40;
	b.bytes_out = 3;
	ck_assert_int_eq(bc_io_timeout_err(&b, 1, "reading", err),
	    BC_ERR_TIMEOUT);
	ck_assert_str_eq(err, "whole-job deadline passed while reading "
	    "(40 bytes received, 3 sent)");
	bc_io_timeout_err(&b, 0, "writing", err);
	ck_assert_str_eq(err, "idle timeout: no progress for 60000 ms while "
	    "writing (40 bytes received, 3 sent)");
	b.deadline_name = "request timeout (--request-timeout 120 s)";
	b.idle_name = "I/O timeout (--io-timeout 60 s)";
	bc_io_timeout_err(&b, 1, "reading", err);
	ck_assert_str_eq(err, "request timeout (--request-timeout 120 s) "
	    "passed while reading (40 bytes received, 3 sent)");
	bc_io_timeout_err(&b, 0, "reading", err);
	ck_assert_str_eq(err, "I/O timeout (--io-timeout 60 s): no progress "
	    "for 60000 ms while reading (40 bytes received, 3 sent)");
}
END_TEST

START_TEST(test_io_connect)
{
	char err[BC_ERRLEN];
	int fd = 123, r;

	/* Port 1 on loopback is closed: a clean error naming host:port. */
	r = bc_io_connect_tcp("127.0.0.1", 1, 1000, &fd, err);
	ck_assert_int_lt(r, 0);
	ck_assert_int_eq(fd, -1);
	ck_assert_ptr_nonnull(strstr(err, "127.0.0.1:1"));
	ck_assert_int_eq(bc_io_connect_tcp("127.0.0.1", 0, 1000, &fd, err),
	    BC_ERR_INVAL);
	ck_assert_int_eq(bc_io_connect_tcp("127.0.0.1", 70000, 1000, &fd,
	    err), BC_ERR_INVAL);
}
END_TEST

START_TEST(test_io_connect_ok)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	char err[BC_ERRLEN];
	int lfd, fd = -1, afd, one = 0;
	socklen_t ol = sizeof(one);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = 0;
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	ck_assert_int_eq(bc_io_connect_tcp("localhost", ntohs(sin.sin_port),
	    2000, &fd, err) == BC_OK || bc_io_connect_tcp("127.0.0.1",
	    ntohs(sin.sin_port), 2000, &fd, err) == BC_OK, 1);
	ck_assert_int_ge(fd, 0);
	/* Back in blocking mode, with Nagle off. */
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, &ol),
	    0);
	ck_assert_int_ne(one, 0);
	afd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(afd, 0);
	ck_assert_int_eq(write(fd, "DIST00000001", 12), 12);
	{
		struct bc_io io;
		char tok[5];
		uint32_t val;

		bc_io_init(&io, afd, afd, 1000);
		ck_assert_int_eq(bc_io_read_hdr(&io, "DIST", tok, &val, err),
		    BC_OK);
		ck_assert_uint_eq(val, 1);
	}
	close(afd);
	close(fd);
	close(lfd);
	/* IPv6 literal (refused or unsupported): named with brackets. */
	ck_assert_int_lt(bc_io_connect_tcp("::1", 1, 500, &fd, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "[::1]:1"));
}
END_TEST

static Suite *
wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = bc_tcase("wire", BC_TEST_TIMEOUT);
	TCase *tio = bc_tcase("io", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(tc, test_put_int);
	tcase_add_test(tc, test_put_str_limit_is_atomic);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_parse_dist);
	tcase_add_test(tc, test_reject_bad_hex);
	tcase_add_test(tc, test_short_and_mismatch);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_mutations);
	suite_add_tcase(s, tc);

	tcase_add_test(tio, test_io_roundtrip);
	tcase_add_test(tio, test_io_hdr_mismatch);
	tcase_add_test(tio, test_io_eof_vs_truncated);
	tcase_add_test(tio, test_io_read_body_limits);
	tcase_add_test(tio, test_io_idle_timeout);
	tcase_add_test(tio, test_io_deadline_trickle);
	tcase_add_test(tio, test_io_idle_before_deadline);
	tcase_add_test(tio, test_io_timeout_wording);
	tcase_add_test(tio, test_io_connect);
	tcase_add_test(tio, test_io_connect_ok);
	suite_add_tcase(s, tio);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return bc_unit_run(wire_suite());
}
