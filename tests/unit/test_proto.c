/*
 * test_proto.c - job request/reply encoding: golden distcc 3.4 captures
 * (byte-for-byte both ways), the BOLT extension, hostile input and a
 * deterministic mutation loop.
 *
 * The captures are read from $BOLTCC_VECTORS, else
 * $BOLTCC_SRCDIR/tests/data/spec/vectors (in the repository, where the
 * integration tests look too).  Without them the golden tests fail.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/codec.h"
#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/proto.h"
#include "common/util.h"
#include "common/wire.h"
#include "tests/unit/unit.h"

static const char *const hello_argv[] = {
	"x86_64-linux-gnu-gcc", "-c", "hello.c", "-o", "hello.o", NULL
};

/* ---- helpers ---------------------------------------------------------- */

/* A preprocessed source for tests that need no capture. */
static const char synth_doti[] =
    "# 0 \"hello.c\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n"
    "# 1 \"hello.c\"\n# 1 \"hello.h\" 1\nint hello_answer(void);\n"
    "# 2 \"hello.c\" 2\nint hello_answer(void) { return 42; }\n"
    "int hello_twice(void) { return 2 * hello_answer(); }\n";

static int
is_vectors_dir(const char *dir)
{
	char path[1024];
	struct stat st;
	int n;

	n = snprintf(path, sizeof path, "%s/p1-request.bin", dir);
	return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0;
}

/* The capture directory, or NULL if there is none on this machine. */
static const char *
vectors_dir(void)
{
	static char path[1024];
	static const char *const rel[] = {
		"tests/data/spec/vectors",
	};
	const char *e;
	size_t i;
	int n;

	if ((e = getenv("BOLTCC_VECTORS")) != NULL)
		return is_vectors_dir(e) ? e : NULL;
	if ((e = getenv("BOLTCC_SRCDIR")) != NULL) {
		for (i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			n = snprintf(path, sizeof path, "%s/%s", e, rel[i]);
			if (n > 0 && (size_t)n < sizeof path &&
			    is_vectors_dir(path))
				return path;
		}
	}
	return NULL;
}

/* Golden tests need the captures (tests/data). */
#define NEED_VECTORS() do {						\
	if (vectors_dir() == NULL)					\
		ck_abort_msg("%s: captured vectors not found in "	\
		    "tests/data/spec/vectors (or $BOLTCC_VECTORS)",	\
		    __func__);						\
} while (0)

/* Load a capture; fails the test if it is missing. */
static void
load(const char *name, struct bc_buf *out)
{
	char path[1024], err[BC_ERRLEN];
	const char *dir = vectors_dir();
	int n, r;

	ck_assert_ptr_nonnull(dir);
	n = snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert(n > 0 && (size_t)n < sizeof path);
	bc_buf_init(out, 1 << 24);
	r = bc_read_file(path, 1 << 24, out, err);
	ck_assert_msg(r == BC_OK, "cannot read %s: %s", path, err);
}

/* A pipe holding bytes (all vectors fit in the pipe buffer), write end
 * closed so the reader sees EOF after them. */
static int
pipe_with(const void *p, size_t n)
{
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert(n < 65536);
	if (n > 0)
		ck_assert_int_eq((int)write(fds[1], p, n), (int)n);
	close(fds[1]);
	return fds[0];
}

static int
read_request_fd(const void *p, size_t n, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	struct bc_io io;
	int fd = pipe_with(p, n), r;

	bc_io_init(&io, fd, -1, 5000);
	r = bc_proto_read_request_lim(&io, lim, req, err);
	close(fd);
	return r;
}

static int
read_reply_fd(const void *p, size_t n, int proto, int kind,
    struct bc_reply *rep, char *err)
{
	struct bc_io io;
	int fd = pipe_with(p, n), r;

	bc_io_init(&io, fd, -1, 5000);
	r = bc_proto_read_reply(&io, proto, kind, rep, err);
	close(fd);
	return r;
}

static int
parse_bytes(const void *p, size_t n, const struct bc_proto_limits *lim,
    struct bc_request *req, char *err)
{
	struct bc_buf in;

	bc_buf_view(&in, p, n);
	return bc_proto_parse_request(&in, lim, req, err);
}

static void
assert_buf_eq(const struct bc_buf *a, const struct bc_buf *b)
{
	ck_assert_uint_eq(bc_buf_len(a), bc_buf_len(b));
	if (bc_buf_len(a) > 0)
		ck_assert(memcmp(bc_buf_data(a), bc_buf_data(b),
		    bc_buf_len(a)) == 0);
}

static void
assert_hello_argv(const struct bc_request *req)
{
	size_t i;

	ck_assert_uint_eq(req->argv.n, 5);
	for (i = 0; i < 5; i++)
		ck_assert_str_eq(req->argv.v[i], hello_argv[i]);
	ck_assert_ptr_null(req->argv.v[5]);
}

/* Append a hand-made packet. */
static void
put(struct bc_buf *b, const char *tok, uint32_t v)
{
	ck_assert_int_eq(bc_wire_put_int(b, tok, v), BC_OK);
}

static void
puts_(struct bc_buf *b, const char *tok, const void *p, size_t n)
{
	ck_assert_int_eq(bc_wire_put_str(b, tok, p, n), BC_OK);
}

/* A request encoded by our own writer. */
static void
encode_request(const struct bc_request *req, const void *doti, size_t n,
    struct bc_buf *out)
{
	char err[BC_ERRLEN];

	ck_assert_msg(bc_proto_write_request_head(out, req, err) == BC_OK,
	    "%s", err);
	ck_assert_msg(bc_proto_write_doti(out, req->proto, doti, n, err) ==
	    BC_OK, "%s", err);
}

static void
small_limits(struct bc_proto_limits *lim)
{
	bc_proto_limits_default(lim);
	lim->max_argc = 16;
	lim->max_arg_len = 256;
	lim->max_argv_total = 1024;
	lim->max_path_len = 128;
	lim->max_wire_body = 4096;
	lim->max_doti = 4096;
	lim->max_stderr = 4096;
	lim->max_stdout = 4096;
	lim->max_object = 4096;
	lim->max_dia = 4096;
	lim->max_msg = 256;
}

/* ---- golden requests -------------------------------------------------- */

/* The DOTI plaintext of p1-request.bin: the last 229 bytes. */
static void
p1_doti(struct bc_buf *cap, const uint8_t **p, size_t *n)
{
	ck_assert_uint_eq(bc_buf_len(cap), 363);
	*n = 0xe5;
	*p = bc_buf_data(cap) + bc_buf_len(cap) - *n;
	ck_assert(memcmp(*p - 12, "DOTI000000e5", 12) == 0);
}

START_TEST(golden_p1_request)
{
	struct bc_buf cap, out = BC_BUF_INIT(1 << 20);
	struct bc_request req, mine;
	char err[BC_ERRLEN];
	const uint8_t *doti;
	size_t n, i;

	NEED_VECTORS();

	load("p1-request.bin", &cap);
	p1_doti(&cap, &doti, &n);

	/* Parse from the network path. */
	ck_assert_msg(read_request_fd(bc_buf_data(&cap), bc_buf_len(&cap),
	    NULL, &req, err) == BC_OK, "%s", err);
	ck_assert_int_eq(req.proto, 1);
	ck_assert_int_eq(req.kind, BC_RQST_COMPILE);
	ck_assert_ptr_null(req.cwd);
	assert_hello_argv(&req);
	ck_assert_uint_eq(bc_buf_len(&req.doti), n);
	ck_assert(memcmp(bc_buf_data(&req.doti), doti, n) == 0);
	bc_request_free(&req);

	/* Parse from memory: same result, everything consumed. */
	{
		struct bc_buf in;

		bc_buf_view(&in, bc_buf_data(&cap), bc_buf_len(&cap));
		ck_assert_int_eq(bc_proto_parse_request(&in, NULL, &req, err),
		    BC_OK);
		ck_assert_uint_eq(bc_buf_avail(&in), 0);
		assert_hello_argv(&req);
		bc_request_free(&req);
	}

	/* Encode from scratch: byte-identical to the real client. */
	bc_request_init(&mine);
	mine.proto = 1;
	mine.kind = BC_RQST_COMPILE;
	for (i = 0; hello_argv[i] != NULL; i++)
		bc_strv_push(&mine.argv, hello_argv[i]);
	encode_request(&mine, doti, n, &out);
	ck_assert_uint_eq(bc_buf_len(&out), bc_buf_len(&cap));
	ck_assert(memcmp(bc_buf_data(&out), bc_buf_data(&cap),
	    bc_buf_len(&cap)) == 0);

	/* The head alone is the first 122 bytes (p1-timeline). */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 122);

	bc_request_free(&mine);
	bc_buf_free(&out);
	bc_buf_free(&cap);
}
END_TEST

START_TEST(golden_p2_request)
{
	struct bc_buf cap1, cap2, out = BC_BUF_INIT(1 << 20);
	struct bc_request req, mine;
	char err[BC_ERRLEN];
	const uint8_t *doti;
	size_t n, i;

	NEED_VECTORS();

	load("p1-request.bin", &cap1);
	load("p2-request.bin", &cap2);
	p1_doti(&cap1, &doti, &n);

	ck_assert_msg(read_request_fd(bc_buf_data(&cap2), bc_buf_len(&cap2),
	    NULL, &req, err) == BC_OK, "%s", err);
	ck_assert_int_eq(req.proto, 2);
	assert_hello_argv(&req);
	/* p2's DOTI is the LZO of p1's plaintext. */
	ck_assert_uint_eq(bc_buf_len(&req.doti), n);
	ck_assert(memcmp(bc_buf_data(&req.doti), doti, n) == 0);
	bc_request_free(&req);

	bc_request_init(&mine);
	mine.proto = 2;
	mine.kind = BC_RQST_COMPILE;
	for (i = 0; hello_argv[i] != NULL; i++)
		bc_strv_push(&mine.argv, hello_argv[i]);
	encode_request(&mine, doti, n, &out);
	assert_buf_eq(&out, &cap2);

	bc_request_free(&mine);
	bc_buf_free(&out);
	bc_buf_free(&cap1);
	bc_buf_free(&cap2);
}
END_TEST

/* Every other plain-mode request capture: parse, re-encode, identical. */
START_TEST(golden_other_requests)
{
	static const char *const names[] = {
		"p1-rejected-request.bin", "p2-clang-request.bin",
		"p2-error-request.bin", "p2-absinc-request.bin",
		"sink/p1-request.bin", "sink/p2-request.bin",
		"checks/B-dash-MD-MF-request.bin", "checks/B-dash-S-request.bin",
		"checks/B-no-dash-o-request.bin", "checks/B-plain-c-request.bin",
		"checks/B-preprocessed-request.bin",
		"checks/B-strip-args-request.bin", "checks/B-x-c-request.bin",
	};
	struct bc_buf cap, out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN];
	size_t i;

	NEED_VECTORS();

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		load(names[i], &cap);
		ck_assert_msg(read_request_fd(bc_buf_data(&cap),
		    bc_buf_len(&cap), NULL, &req, err) == BC_OK, "%s: %s",
		    names[i], err);
		ck_assert(req.proto == 1 || req.proto == 2);
		ck_assert(req.argv.n >= 2);
		bc_buf_reset(&out);
		encode_request(&req, bc_buf_data(&req.doti),
		    bc_buf_len(&req.doti), &out);
		ck_assert_msg(bc_buf_len(&out) == bc_buf_len(&cap) &&
		    memcmp(bc_buf_data(&out), bc_buf_data(&cap),
		    bc_buf_len(&cap)) == 0, "%s not reproduced", names[i]);
		bc_request_free(&req);
		bc_buf_free(&cap);
	}
	bc_buf_free(&out);
}
END_TEST

START_TEST(golden_p3_request_notsup)
{
	struct bc_buf cap;
	struct bc_request req;
	char err[BC_ERRLEN];

	NEED_VECTORS();

	/* Pump: the head (CDIR, ARGV) is read; NFIL is left for proto3. */
	load("p3-request.bin", &cap);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&cap), bc_buf_len(&cap),
	    NULL, &req, err), BC_OK);
	ck_assert_int_eq(req.proto, 3);
	ck_assert_str_eq(req.cwd, "/tmp/dccvec/src");
	ck_assert_uint_eq(req.argv.n, 5);
	bc_request_free(&req);
	bc_buf_free(&cap);
}
END_TEST

/* ---- golden replies --------------------------------------------------- */

struct golden_reply {
	const char *name;
	int proto;
	uint32_t status;
	size_t serr, sout, doto;	/* uncompressed lengths */
};

static const struct golden_reply golden_replies[] = {
	{ "p1-reply.bin", 1, 0, 0, 0, 1112 },
	{ "p2-reply.bin", 2, 0, 0, 0, 1112 },
	{ "p2-error-reply.bin", 2, 0x100, 102, 0, 0 },
	{ "p2-clang-reply.bin", 2, 0, 0, 0, (size_t)-1 },
	{ "p2-absinc-reply.bin", 2, 0, 0, 0, (size_t)-1 },
	{ "checks/D11-upper-reply.bin", 1, 0, 0, 0, 1112 },
	{ "checks/D11-emptyarg-reply.bin", 1, 0x100, 0xa9, 0, 0 },
	{ "checks/D3-replay-p1.bin", 1, 0, 0, 0, 1112 },
};

START_TEST(golden_reply_roundtrip)
{
	const struct golden_reply *g = &golden_replies[_i];
	struct bc_buf cap, out = BC_BUF_INIT(1 << 22);
	struct bc_request req;
	struct bc_reply rep;
	char err[BC_ERRLEN];

	NEED_VECTORS();

	load(g->name, &cap);
	ck_assert_msg(read_reply_fd(bc_buf_data(&cap), bc_buf_len(&cap),
	    g->proto, BC_RQST_COMPILE, &rep, err) == BC_OK, "%s: %s",
	    g->name, err);
	ck_assert_int_eq(rep.proto, g->proto);
	ck_assert_uint_eq(rep.status, g->status);
	ck_assert_uint_eq(bc_buf_len(&rep.serr), g->serr);
	ck_assert_uint_eq(bc_buf_len(&rep.sout), g->sout);
	if (g->doto != (size_t)-1)
		ck_assert_uint_eq(bc_buf_len(&rep.doto), g->doto);
	else
		ck_assert(bc_buf_len(&rep.doto) > 0);
	if (bc_buf_len(&rep.doto) > 0)
		ck_assert(memcmp(bc_buf_data(&rep.doto), "\177ELF", 4) == 0);

	bc_request_init(&req);
	req.proto = g->proto;
	req.kind = BC_RQST_COMPILE;
	ck_assert_msg(bc_proto_write_reply(&out, &req, &rep, err) == BC_OK,
	    "%s", err);
	ck_assert_msg(bc_buf_len(&out) == bc_buf_len(&cap) &&
	    memcmp(bc_buf_data(&out), bc_buf_data(&cap), bc_buf_len(&cap)) ==
	    0, "%s not reproduced", g->name);

	bc_reply_free(&rep);
	bc_buf_free(&out);
	bc_buf_free(&cap);
}
END_TEST

START_TEST(golden_reply_p1_vs_p2_object)
{
	struct bc_buf c1, c2;
	struct bc_reply r1, r2;
	char err[BC_ERRLEN];

	NEED_VECTORS();

	load("p1-reply.bin", &c1);
	load("p2-reply.bin", &c2);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&c1), bc_buf_len(&c1), 1,
	    BC_RQST_COMPILE, &r1, err), BC_OK);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&c2), bc_buf_len(&c2), 2,
	    BC_RQST_COMPILE, &r2, err), BC_OK);
	/* Same object once the LZO is undone. */
	assert_buf_eq(&r1.doto, &r2.doto);
	bc_reply_free(&r1);
	bc_reply_free(&r2);
	bc_buf_free(&c1);
	bc_buf_free(&c2);
}
END_TEST

START_TEST(golden_reply_errors)
{
	struct bc_buf cap;
	struct bc_reply rep;
	char err[BC_ERRLEN];

	NEED_VECTORS();

	/* DIST 0 answered DONE 0: not a reply to protocol 1. */
	load("checks/D11-dist0-reply.bin", &cap);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&cap), bc_buf_len(&cap), 1,
	    BC_RQST_COMPILE, &rep, err), BC_ERR_PROTO);
	bc_buf_free(&cap);

	/* p1 reply read as protocol 2. */
	load("p1-reply.bin", &cap);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&cap), bc_buf_len(&cap), 2,
	    BC_RQST_COMPILE, &rep, err), BC_ERR_PROTO);
	bc_buf_free(&cap);

	/* Whitelist refusal: no reply at all. */
	load("p1-rejected-reply.bin", &cap);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&cap), bc_buf_len(&cap), 1,
	    BC_RQST_COMPILE, &rep, err), BC_ERR_EOF);
	bc_buf_free(&cap);

	/* Pump replies are not supported (yet). */
	load("p3-error-reply.bin", &cap);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&cap), bc_buf_len(&cap), 3,
	    BC_RQST_COMPILE, &rep, err), BC_ERR_NOTSUP);
	bc_buf_free(&cap);
}
END_TEST

/* Every proper prefix of a reply is a clean truncation error. */
START_TEST(golden_reply_truncated)
{
	struct bc_buf cap;
	struct bc_reply rep;
	char err[BC_ERRLEN];
	size_t k;
	int r;

	NEED_VECTORS();

	load("p2-error-reply.bin", &cap);
	for (k = 0; k < bc_buf_len(&cap); k++) {
		r = read_reply_fd(bc_buf_data(&cap), k, 2, BC_RQST_COMPILE,
		    &rep, err);
		ck_assert_int_eq(r, k == 0 ? BC_ERR_EOF : BC_ERR_TRUNCATED);
		ck_assert_uint_eq(bc_buf_len(&rep.serr), 0);
	}
	bc_buf_free(&cap);
}
END_TEST

/* ---- distcc requests: hostile input ----------------------------------- */

START_TEST(dist_versions)
{
	static const struct {
		uint32_t v;
		int r;
		const char *msg;
	} cases[] = {
		{ 0, BC_ERR_PROTO, "protocol version 0 is not supported" },
		{ 4, BC_ERR_PROTO, "unknown distcc protocol version 4" },
		{ 0xffffffff, BC_ERR_PROTO,
		    "unknown distcc protocol version 4294967295" },
	};
	struct bc_buf b = BC_BUF_INIT(4096);
	struct bc_request req;
	char err[BC_ERRLEN];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bc_buf_reset(&b);
		put(&b, "DIST", cases[i].v);
		put(&b, "ARGC", 1);
		puts_(&b, "ARGV", "cc", 2);
		put(&b, "DOTI", 0);
		ck_assert_int_eq(read_request_fd(bc_buf_data(&b),
		    bc_buf_len(&b), NULL, &req, err), cases[i].r);
		ck_assert_str_eq(err, cases[i].msg);
		ck_assert_uint_eq(req.argv.n, 0);
		ck_assert_int_eq(req.proto, 0);
	}
	bc_buf_free(&b);
}
END_TEST

START_TEST(bad_first_token)
{
	static const char *const inputs[] = {
		"GET / HTTP/1.1\r\n\r\n",
		"dist00000001",
		"DISTANCE0001",
		"BOLTzzzzzzzz",
		"\x00\x01\x02\x03\xff\xfe\xfd\xfc\x80\x81\x82\x83",
	};
	struct bc_request req;
	char err[BC_ERRLEN];
	size_t i;

	for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		size_t n = i == 4 ? 12 : strlen(inputs[i]);

		ck_assert_int_eq(read_request_fd(inputs[i], n, NULL, &req,
		    err), BC_ERR_PROTO);
		ck_assert(strlen(err) > 0);
	}
	/* The message shows the bytes received, escaped. */
	read_request_fd(inputs[0], strlen(inputs[0]), NULL, &req, err);
	ck_assert_ptr_nonnull(strstr(err, "GET / HTTP"));
	read_request_fd(inputs[4], 12, NULL, &req, err);
	ck_assert_ptr_null(memchr(err, '\x01', strlen(err)));
	ck_assert_ptr_null(strchr(err, '\xff'));
	/* Empty connection: EOF, not a protocol error. */
	ck_assert_int_eq(read_request_fd("", 0, NULL, &req, err), BC_ERR_EOF);
	/* Short first header. */
	ck_assert_int_eq(read_request_fd("DIST0000", 8, NULL, &req, err),
	    BC_ERR_TRUNCATED);
	ck_assert_int_eq(parse_bytes("DIST0000", 8, NULL, &req, err),
	    BC_ERR_TRUNCATED);
}
END_TEST

START_TEST(argc_limits)
{
	struct bc_buf b = BC_BUF_INIT(4096);
	struct bc_request req;
	char err[BC_ERRLEN];

	/* 0xffffffff: rejected from the header alone, nothing follows. */
	put(&b, "DIST", 1);
	put(&b, "ARGC", 0xffffffff);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_ERR_LIMIT);
	ck_assert_ptr_nonnull(strstr(err, "4294967295"));
	ck_assert_uint_eq(req.argv.n, 0);

	bc_buf_reset(&b);
	put(&b, "DIST", 2);
	put(&b, "ARGC", BC_MAX_ARGC + 1);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_LIMIT);

	/* A big but allowed ARGC with nothing after it: truncation, and
	 * nothing was allocated for the missing strings. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", BC_MAX_ARGC);
	puts_(&b, "ARGV", "cc", 2);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_ERR_TRUNCATED);
	ck_assert_uint_eq(req.argv.n, 0);
	ck_assert_ptr_null(req.argv.v);

	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 0);
	put(&b, "DOTI", 0);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_PROTO);
	bc_buf_free(&b);
}
END_TEST

START_TEST(argv_limits)
{
	struct bc_proto_limits lim;
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN], big[300];
	int i;

	/* Length near 2^32: limit error before any body is read. */
	put(&b, "DIST", 1);
	put(&b, "ARGC", 1);
	put(&b, "ARGV", 0xfffffff0);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_ERR_LIMIT);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_LIMIT);

	/* One over BC_MAX_ARG_LEN. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 1);
	put(&b, "ARGV", BC_MAX_ARG_LEN + 1);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_LIMIT);

	/* Per-string and total limits with small limits. */
	small_limits(&lim);
	memset(big, 'a', sizeof big);
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 2);
	puts_(&b, "ARGV", "cc", 2);
	puts_(&b, "ARGV", big, 257);
	put(&b, "DOTI", 0);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);

	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 5);
	for (i = 0; i < 5; i++)
		puts_(&b, "ARGV", big, 250);	/* 1250 > 1024 in total */
	put(&b, "DOTI", 0);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);
	ck_assert_uint_eq(req.argv.n, 0);

	/* Exactly at the limits: fine. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 4);
	for (i = 0; i < 4; i++)
		puts_(&b, "ARGV", big, 256);
	put(&b, "DOTI", 0);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_OK);
	ck_assert_uint_eq(req.argv.n, 4);
	ck_assert_uint_eq(strlen(req.argv.v[3]), 256);
	bc_request_free(&req);

	/* ARGC over a small limit. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 17);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);
	bc_buf_free(&b);
}
END_TEST

START_TEST(argv_nul_and_empty)
{
	struct bc_buf b = BC_BUF_INIT(4096);
	struct bc_request req;
	char err[BC_ERRLEN];

	/* Empty argument: allowed (distcc passes it on). */
	put(&b, "DIST", 1);
	put(&b, "ARGC", 3);
	puts_(&b, "ARGV", "cc", 2);
	put(&b, "ARGV", 0);
	puts_(&b, "ARGV", "x.c", 3);
	puts_(&b, "DOTI", "int x;\n", 7);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_OK);
	ck_assert_uint_eq(req.argv.n, 3);
	ck_assert_str_eq(req.argv.v[1], "");
	ck_assert_str_eq(req.argv.v[2], "x.c");
	ck_assert_uint_eq(bc_buf_len(&req.doti), 7);
	bc_request_free(&req);

	/* Embedded NUL: cannot reach execve intact. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 2);
	puts_(&b, "ARGV", "cc", 2);
	puts_(&b, "ARGV", "-c\0x", 4);
	put(&b, "DOTI", 0);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_ERR_PROTO);
	ck_assert_ptr_nonnull(strstr(err, "NUL"));
	ck_assert_uint_eq(req.argv.n, 0);

	/* Uppercase hex is accepted (D11). */
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_buf_put_str(&b,
	    "DIST00000001ARGC00000001ARGV0000000Acccccccccc"
	    "DOTI0000000Aaaaaaaaaaa"), BC_OK);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_OK);
	ck_assert_uint_eq(strlen(req.argv.v[0]), 10);
	ck_assert_uint_eq(bc_buf_len(&req.doti), 10);
	bc_request_free(&req);

	/* Wrong token in sequence. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGX", "cc", 2);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_PROTO);
	ck_assert_ptr_nonnull(strstr(err, "ARGX"));
	bc_buf_free(&b);
}
END_TEST

START_TEST(doti_limits)
{
	struct bc_proto_limits lim;
	struct bc_buf b = BC_BUF_INIT(1 << 20), z = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN];
	uint8_t *zeros;
	int r;

	small_limits(&lim);
	zeros = calloc(1, 65536);
	ck_assert_ptr_nonnull(zeros);

	/* LZO body that expands past max_doti. */
	ck_assert_int_eq(bc_lzo_compress(zeros, 65536, &z, err), BC_OK);
	ck_assert(bc_buf_len(&z) < 4096);
	put(&b, "DIST", 2);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	puts_(&b, "DOTI", bc_buf_data(&z), bc_buf_len(&z));
	r = read_request_fd(bc_buf_data(&b), bc_buf_len(&b), &lim, &req, err);
	ck_assert_msg(r == BC_ERR_LIMIT, "%d %s", r, err);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);
	/* With the default limits it is fine. */
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&req.doti), 65536);
	bc_request_free(&req);

	/* Compressed length over max_wire_body: rejected from the header. */
	bc_buf_reset(&b);
	put(&b, "DIST", 2);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	put(&b, "DOTI", 4097);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);
	/* Protocol 1 raw body over max_doti. */
	bc_buf_reset(&b);
	put(&b, "DIST", 1);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	put(&b, "DOTI", 0xffffffff);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_ERR_LIMIT);

	/* Garbage LZO. */
	bc_buf_reset(&b);
	put(&b, "DIST", 2);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	puts_(&b, "DOTI", "\xff\xff\xff\xff\xff\xff", 6);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(err, "DOTI"));

	/* Empty DOTI in protocol 2 is length 0 (never a 3-byte block). */
	bc_buf_reset(&b);
	put(&b, "DIST", 2);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	put(&b, "DOTI", 0);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&req.doti), 0);
	bc_request_free(&req);
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_proto_write_doti(&b, 2, "", 0, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 12);
	ck_assert(memcmp(bc_buf_data(&b), "DOTI00000000", 12) == 0);

	free(zeros);
	bc_buf_free(&z);
	bc_buf_free(&b);
}
END_TEST

/* ---- our own encodings (no captures needed) --------------------------- */

static void
dist_request(struct bc_request *req, int proto)
{
	size_t i;

	bc_request_init(req);
	req->proto = proto;
	req->kind = BC_RQST_COMPILE;
	for (i = 0; hello_argv[i] != NULL; i++)
		bc_strv_push(&req->argv, hello_argv[i]);
}

static void
encode_synth(int proto, struct bc_buf *out);

/* Every proper prefix (network path) is EOF or TRUNCATED. */
START_TEST(request_truncated_fd)
{
	struct bc_buf cap = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN];
	size_t k;

	encode_synth(2, &cap);
	for (k = 0; k < bc_buf_len(&cap); k++) {
		ck_assert_int_eq(read_request_fd(bc_buf_data(&cap), k, NULL,
		    &req, err), k == 0 ? BC_ERR_EOF : BC_ERR_TRUNCATED);
		ck_assert_uint_eq(req.argv.n, 0);
	}
	bc_buf_free(&cap);
}
END_TEST


static void
bolt_request(struct bc_request *req, int kind)
{
	size_t i;

	bc_request_init(req);
	req->proto = BC_PROTO_BOLT;
	req->kind = kind;
	if (kind != BC_RQST_COMPILE)
		return;
	req->flags = BC_FLAG_WANT_DIA;
	req->cwd = xstrdup("/home/dev/proj");
	for (i = 0; hello_argv[i] != NULL; i++)
		bc_strv_push(&req->argv, hello_argv[i]);
}

/* A whole compile request of protocol 1, 2 or BOLT with synth_doti. */
static void
encode_synth(int proto, struct bc_buf *out)
{
	struct bc_request req;

	if (proto == BC_PROTO_BOLT)
		bolt_request(&req, BC_RQST_COMPILE);
	else
		dist_request(&req, proto);
	encode_request(&req, synth_doti, sizeof synth_doti - 1, out);
	bc_request_free(&req);
}

START_TEST(dist_request_roundtrip)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN];
	int proto;

	for (proto = 1; proto <= 2; proto++) {
		bc_buf_reset(&out);
		encode_synth(proto, &out);
		ck_assert(memcmp(bc_buf_data(&out), proto == 1 ?
		    "DIST00000001ARGC00000005ARGV00000014" :
		    "DIST00000002ARGC00000005ARGV00000014", 36) == 0);
		ck_assert_msg(read_request_fd(bc_buf_data(&out),
		    bc_buf_len(&out), NULL, &req, err) == BC_OK, "%s", err);
		ck_assert_int_eq(req.proto, proto);
		assert_hello_argv(&req);
		ck_assert_uint_eq(bc_buf_len(&req.doti), sizeof synth_doti - 1);
		ck_assert(memcmp(bc_buf_data(&req.doti), synth_doti,
		    sizeof synth_doti - 1) == 0);
		bc_request_free(&req);
	}
	/* Protocol 1 DOTI is raw, protocol 2 is not. */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_doti(&out, 1, "abc", 3, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 15);
	ck_assert(memcmp(bc_buf_data(&out), "DOTI00000003abc", 15) == 0);
	bc_buf_free(&out);
}
END_TEST

/* ---- BOLT ------------------------------------------------------------- */

START_TEST(bolt_request_roundtrip)
{
	struct bc_buf out = BC_BUF_INIT(1 << 22);
	struct bc_request mine, req;
	char err[BC_ERRLEN];
	const void *doti = synth_doti;
	size_t n = sizeof synth_doti - 1;

	bolt_request(&mine, BC_RQST_COMPILE);
	encode_request(&mine, doti, n, &out);
	ck_assert(memcmp(bc_buf_data(&out),
	    "BOLT00000001RQST00000001FLAG00000001CDIR0000000e/home/dev/proj"
	    "ARGC00000005ARGV00000014x86_64-linux-gnu-gcc", 106) == 0);

	ck_assert_msg(read_request_fd(bc_buf_data(&out), bc_buf_len(&out),
	    NULL, &req, err) == BC_OK, "%s", err);
	ck_assert_int_eq(req.proto, BC_PROTO_BOLT);
	ck_assert_int_eq(req.kind, BC_RQST_COMPILE);
	ck_assert_uint_eq(req.flags, BC_FLAG_WANT_DIA);
	ck_assert_str_eq(req.cwd, "/home/dev/proj");
	assert_hello_argv(&req);
	ck_assert_uint_eq(bc_buf_len(&req.doti), n);
	ck_assert(memcmp(bc_buf_data(&req.doti), doti, n) == 0);
	bc_request_free(&req);

	/* Hello: two packets. */
	bc_request_free(&mine);
	bolt_request(&mine, BC_RQST_HELLO);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 24);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001RQST00000002", 24)
	    == 0);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&out), bc_buf_len(&out),
	    NULL, &req, err), BC_OK);
	ck_assert_int_eq(req.proto, BC_PROTO_BOLT);
	ck_assert_int_eq(req.kind, BC_RQST_HELLO);
	ck_assert_uint_eq(req.argv.n, 0);
	bc_request_free(&req);

	bc_request_free(&mine);
	bc_buf_free(&out);
}
END_TEST

/* LOCATE (doc/PROTOCOL.md): request bytes, round trip, its three answers,
 * and the limits on HOST / LOCN. */
START_TEST(bolt_locate)
{
	static const char key[] = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	struct bc_buf out = BC_BUF_INIT(1 << 20), in;
	struct bc_request mine, req;
	struct bc_reply rep, got;
	char err[BC_ERRLEN], big[300];

	bc_request_init(&mine);
	mine.proto = BC_PROTO_BOLT;
	mine.kind = BC_RQST_LOCATE;
	mine.key = xstrdup(key);
	mine.flags = BC_LOCATE_REPLACE;
	mine.loc_host = xstrdup("10.0.0.2:3632");
	ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 24 + 12 + 64 + 12 + 12 + 13);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001RQST00000006"
	    "CKEY00000040", 36) == 0);
	ck_assert(memcmp(bc_buf_data(&out) + 100, "FLAG00000001"
	    "HOST0000000d10.0.0.2:3632", 37) == 0);
	/* the kind from the first 24 bytes (the daemon's parent) */
	ck_assert_int_eq(bc_proto_bolt_kind(bc_buf_data(&out), 24),
	    BC_RQST_LOCATE);
	ck_assert_int_eq(bc_proto_bolt_kind(bc_buf_data(&out), 23), -1);
	ck_assert_int_eq(bc_proto_bolt_kind("BOLT00000001RQST00000001", 24),
	    BC_RQST_COMPILE);
	ck_assert_int_eq(bc_proto_bolt_kind("BOLT00000001RQST00000009", 24),
	    -1);
	ck_assert_int_eq(bc_proto_bolt_kind("BOLT00000002RQST00000003", 24),
	    -1);
	ck_assert_int_eq(bc_proto_bolt_kind("DIST00000001ARGC00000002", 24),
	    -1);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_proto_parse_request(&in, NULL, &req, err), BC_OK);
	ck_assert_int_eq(req.kind, BC_RQST_LOCATE);
	ck_assert_str_eq(req.key, key);
	ck_assert_uint_eq(req.flags, BC_LOCATE_REPLACE);
	ck_assert_str_eq(req.loc_host, "10.0.0.2:3632");
	ck_assert_uint_eq(bc_buf_avail(&in), 0);
	bc_request_free(&req);
	/* every truncation is an error, never a shorter request */
	{
		size_t cut;

		for (cut = 0; cut < bc_buf_len(&out); cut++) {
			bc_buf_view(&in, bc_buf_data(&out), cut);
			ck_assert_int_ne(bc_proto_parse_request(&in, NULL, &req,
			    err), BC_OK);
			bc_request_free(&req);
		}
	}
	/* HOST over the limit: refused by the writer and the reader */
	memset(big, 'h', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	free(mine.loc_host);
	mine.loc_host = xstrdup(big);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err),
	    BC_ERR_LIMIT);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_buf_putf(&out, "BOLT00000001RQST00000006CKEY"
	    "00000040%sFLAG00000000HOST%08zx%s", key, strlen(big), big),
	    BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_ne(bc_proto_parse_request(&in, NULL, &req, err), BC_OK);
	bc_request_free(&req);
	free(mine.loc_host);
	mine.loc_host = NULL;	/* none: an empty HOST */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err), BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_proto_parse_request(&in, NULL, &req, err), BC_OK);
	ck_assert_str_eq(req.loc_host, "");
	bc_request_free(&req);

	/* LOCN */
	bc_reply_init(&rep);
	rep.proto = BC_PROTO_BOLT;
	rep.locn = xstrdup("10.0.0.3:3632");
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply(&out, &mine, &rep, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 12 + 12 + 13);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001LOCN0000000d"
	    "10.0.0.3:3632", 37) == 0);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_proto_parse_reply(&in, BC_PROTO_BOLT,
	    BC_RQST_LOCATE, NULL, &got, err), BC_OK);
	ck_assert(got.miss);
	ck_assert_str_eq(got.locn, "10.0.0.3:3632");
	bc_reply_free(&got);
	/* a LOOKUP never gets a LOCN; an empty LOCN is malformed */
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_ne(bc_proto_parse_reply(&in, BC_PROTO_BOLT,
	    BC_RQST_LOOKUP, NULL, &got, err), BC_OK);
	bc_reply_free(&got);
	bc_buf_view(&in, "BOLT00000001LOCN00000000", 24);
	ck_assert_int_ne(bc_proto_parse_reply(&in, BC_PROTO_BOLT,
	    BC_RQST_LOCATE, NULL, &got, err), BC_OK);
	bc_reply_free(&got);
	/* MISS */
	free(rep.locn);
	rep.locn = NULL;
	rep.miss = 1;
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply(&out, &mine, &rep, err), BC_OK);
	bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
	ck_assert_int_eq(bc_proto_parse_reply(&in, BC_PROTO_BOLT,
	    BC_RQST_LOCATE, NULL, &got, err), BC_OK);
	ck_assert(got.miss);
	ck_assert_ptr_null(got.locn);
	bc_reply_free(&got);
	bc_reply_free(&rep);
	bc_request_free(&mine);
	bc_buf_free(&out);
}
END_TEST

START_TEST(bolt_request_hostile)
{
	struct bc_proto_limits lim;
	struct bc_buf b = BC_BUF_INIT(1 << 20), z = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN], path[200];
	uint8_t *zeros;

	put(&b, "BOLT", 2);
	put(&b, "RQST", 2);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_NOTSUP);
	/* The protocol survives the failure: the daemon answers EROR. */
	ck_assert_int_eq(req.proto, BC_PROTO_BOLT);
	ck_assert_ptr_nonnull(strstr(err, "BOLT version 2"));

	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 9);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_NOTSUP);

	/* Relative, empty and NUL-carrying CDIR. */
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	puts_(&b, "CDIR", "src/x", 5);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_PROTO);
	ck_assert_ptr_null(req.cwd);
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	put(&b, "CDIR", 0);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_PROTO);
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	puts_(&b, "CDIR", "/a\0b", 4);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_PROTO);
	/* CDIR over the path limit. */
	small_limits(&lim);
	memset(path, 'p', sizeof path);
	path[0] = '/';
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	puts_(&b, "CDIR", path, 129);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	put(&b, "CDIR", BC_MAX_PATH_LEN + 1);
	ck_assert_int_eq(read_request_fd(bc_buf_data(&b), bc_buf_len(&b),
	    NULL, &req, err), BC_ERR_LIMIT);

	/* zstd DOTI that declares more than max_doti. */
	zeros = calloc(1, 65536);
	ck_assert_ptr_nonnull(zeros);
	ck_assert_int_eq(bc_zstd_compress(zeros, 65536, 3, &z, err), BC_OK);
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	puts_(&b, "CDIR", "/", 1);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	puts_(&b, "DOTI", bc_buf_data(&z), bc_buf_len(&z));
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), &lim,
	    &req, err), BC_ERR_LIMIT);
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&req.doti), 65536);
	ck_assert_str_eq(req.cwd, "/");
	bc_request_free(&req);
	/* LZO in a BOLT request is not zstd. */
	bc_buf_reset(&z);
	ck_assert_int_eq(bc_lzo_compress(zeros, 65536, &z, err), BC_OK);
	bc_buf_reset(&b);
	put(&b, "BOLT", 1);
	put(&b, "RQST", 1);
	put(&b, "FLAG", 0);
	puts_(&b, "CDIR", "/", 1);
	put(&b, "ARGC", 1);
	puts_(&b, "ARGV", "cc", 2);
	puts_(&b, "DOTI", bc_buf_data(&z), bc_buf_len(&z));
	ck_assert_int_eq(parse_bytes(bc_buf_data(&b), bc_buf_len(&b), NULL,
	    &req, err), BC_ERR_CORRUPT);

	free(zeros);
	bc_buf_free(&z);
	bc_buf_free(&b);
}
END_TEST

static void
fill_reply(struct bc_reply *rep, uint32_t status)
{
	static const char obj[] = "\177ELF object bytes object bytes";
	size_t i;

	bc_reply_init(rep);
	rep->status = status;
	ck_assert_int_eq(bc_buf_put_str(&rep->serr, "warning: x\n"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&rep->sout, "out\n"), BC_OK);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(bc_buf_put(&rep->doto, obj, sizeof obj),
		    BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&rep->dia, "DIAG"), BC_OK);
}

START_TEST(bolt_reply_roundtrip)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	struct bc_reply rep, got;
	char err[BC_ERRLEN];

	bolt_request(&req, BC_RQST_COMPILE);
	fill_reply(&rep, 0);
	ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err), BC_OK);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001STAT00000000SERR",
	    28) == 0);
	ck_assert_msg(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err) == BC_OK, "%s", err);
	ck_assert_uint_eq(got.status, 0);
	assert_buf_eq(&got.serr, &rep.serr);
	assert_buf_eq(&got.sout, &rep.sout);
	assert_buf_eq(&got.doto, &rep.doto);
	assert_buf_eq(&got.dia, &rep.dia);
	bc_reply_free(&got);
	bc_reply_free(&rep);

	/* Failure: DOTO is empty on the wire whatever the daemon holds. */
	fill_reply(&rep, 0x100);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err), BC_OK);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_OK);
	ck_assert_uint_eq(got.status, 0x100);
	ck_assert_uint_eq(bc_buf_len(&got.doto), 0);
	assert_buf_eq(&got.serr, &rep.serr);
	assert_buf_eq(&got.dia, &rep.dia);
	bc_reply_free(&got);
	bc_reply_free(&rep);

	/* Hello. */
	bc_request_free(&req);
	bolt_request(&req, BC_RQST_HELLO);
	bc_reply_init(&rep);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err), BC_OK);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_HELLO, &got, err), BC_OK);
	ck_assert_str_eq(got.info, "boltccd " PACKAGE_VERSION);
	bc_reply_free(&got);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_info(&out, "boltccd 9.9", err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&out), 35);
	ck_assert(memcmp(bc_buf_data(&out),
	    "BOLT00000001INFO0000000bboltccd 9.9", 35) == 0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_HELLO, &got, err), BC_OK);
	ck_assert_str_eq(got.info, "boltccd 9.9");
	bc_reply_free(&got);
	/* A stock distccd closes silently on the hello. */
	ck_assert_int_eq(read_reply_fd("", 0, BC_PROTO_BOLT, BC_RQST_HELLO,
	    &got, err), BC_ERR_EOF);

	bc_request_free(&req);
	bc_buf_free(&out);
}
END_TEST

/* FLAG_HEARTBEAT: BEAT 0 packets before the reply are skipped and
 * counted, and the first one lowers the reader's idle limit. */
START_TEST(bolt_reply_beats)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20), wire = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	struct bc_reply rep, got;
	struct bc_io io;
	char err[BC_ERRLEN];
	int fd;

	bolt_request(&req, BC_RQST_COMPILE);
	fill_reply(&rep, 0);
	ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err), BC_OK);
	ck_assert_int_eq(bc_buf_put(&wire, "BEAT00000000BEAT00000000"
	    "BEAT00000000", 36), BC_OK);
	ck_assert_int_eq(bc_buf_put(&wire, bc_buf_data(&out),
	    bc_buf_len(&out)), BC_OK);
	fd = pipe_with(bc_buf_data(&wire), bc_buf_len(&wire));
	bc_io_init(&io, fd, -1, 50000);
	io.beat_timeout_ms = 7000;
	ck_assert_msg(bc_proto_read_reply(&io, BC_PROTO_BOLT, BC_RQST_COMPILE,
	    &got, err) == BC_OK, "%s", err);
	close(fd);
	ck_assert_uint_eq(got.beats, 3);
	ck_assert_int_eq(io.io_timeout_ms, 7000);
	assert_buf_eq(&got.doto, &rep.doto);
	bc_reply_free(&got);
	/* without BEATs the limit stays */
	fd = pipe_with(bc_buf_data(&out), bc_buf_len(&out));
	bc_io_init(&io, fd, -1, 50000);
	io.beat_timeout_ms = 7000;
	ck_assert_int_eq(bc_proto_read_reply(&io, BC_PROTO_BOLT,
	    BC_RQST_COMPILE, &got, err), BC_OK);
	close(fd);
	ck_assert_uint_eq(got.beats, 0);
	ck_assert_int_eq(io.io_timeout_ms, 50000);
	bc_reply_free(&got);
	/* a BEAT with a value, a BEAT in a hello reply: protocol errors */
	bc_buf_reset(&wire);
	ck_assert_int_eq(bc_buf_put(&wire, "BEAT00000001", 12), BC_OK);
	ck_assert_int_eq(bc_buf_put(&wire, bc_buf_data(&out),
	    bc_buf_len(&out)), BC_OK);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&wire), bc_buf_len(&wire),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_PROTO);
	ck_assert_int_eq(read_reply_fd("BEAT00000000BOLT00000001INFO00000000",
	    36, BC_PROTO_BOLT, BC_RQST_HELLO, &got, err), BC_ERR_PROTO);
	/* EOF after a BEAT is a plain EOF (the host died between beats) */
	ck_assert_int_eq(read_reply_fd("BEAT00000000", 12, BC_PROTO_BOLT,
	    BC_RQST_COMPILE, &got, err), BC_ERR_EOF);
	/* the io-level reader used by the pump */
	fd = pipe_with("BEAT00000000BEAT00000000NEED00000002", 36);
	{
		char tok[5];
		uint32_t v;

		bc_io_init(&io, fd, -1, 50000);
		io.beat_timeout_ms = 3000;
		ck_assert_int_eq(bc_io_read_hdr_beat(&io, "NEED", tok, &v, err),
		    BC_OK);
		ck_assert_uint_eq(v, 2);
		ck_assert_uint_eq(io.beats, 2);
		ck_assert_int_eq(io.io_timeout_ms, 3000);
	}
	close(fd);
	fd = pipe_with("BEAT00000000STAT00000000", 24);
	{
		char tok[5];
		uint32_t v;

		bc_io_init(&io, fd, -1, 50000);
		ck_assert_int_eq(bc_io_read_hdr_beat(&io, "NEED", tok, &v, err),
		    BC_ERR_PROTO);
	}
	close(fd);
	bc_reply_free(&rep);
	bc_request_free(&req);
	bc_buf_free(&out);
	bc_buf_free(&wire);
}
END_TEST

/* FLAG_HIT_MARK: a reply served from the cache starts with CHIT 0. */
START_TEST(bolt_reply_chit)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	struct bc_reply got;
	const void *z[5] = { NULL, NULL, NULL, NULL, NULL };
	size_t zn[5] = { 0, 0, 0, 0, 0 };
	char err[BC_ERRLEN];

	bolt_request(&req, BC_RQST_COMPILE);
	ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z, zn, err),
	    BC_OK);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001STAT00000000", 24) ==
	    0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_OK);
	ck_assert_int_eq(got.cache_hit, 0);
	bc_reply_free(&got);

	req.flags |= BC_FLAG_HIT_MARK;
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, NULL, z, zn, err),
	    BC_OK);
	ck_assert(memcmp(bc_buf_data(&out),
	    "BOLT00000001CHIT00000000STAT00000000SERR00000000", 48) == 0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_OK);
	ck_assert_int_eq(got.cache_hit, 1);
	ck_assert_uint_eq(got.status, 0);
	bc_reply_free(&got);

	/* CHIT only before STAT, only with value 0, only for a compile */
	ck_assert_int_eq(read_reply_fd("BOLT00000001CHIT00000001STAT00000000",
	    36, BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_PROTO);
	bc_reply_free(&got);
	ck_assert_int_eq(read_reply_fd("BOLT00000001CHIT00000000CHIT00000000",
	    36, BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_PROTO);
	bc_reply_free(&got);
	ck_assert_int_eq(read_reply_fd("BOLT00000001CHIT00000000", 24,
	    BC_PROTO_BOLT, BC_RQST_LOOKUP, &got, err), BC_ERR_PROTO);
	bc_reply_free(&got);

	bc_request_free(&req);
	bc_buf_free(&out);
}
END_TEST

/* FLAG_ORIGIN (doc/PROTOCOL.md "Origins"): LOCATE and LOOKUPF carry the
 * client's origin; a hit names the storer's (empty when unknown) after
 * CHIT (compile) or first (lookup); bad ORIGs are refused. */
START_TEST(bolt_origin)
{
	static const char key[] = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	struct bc_buf out = BC_BUF_INIT(1 << 20), in;
	struct bc_request mine, req;
	struct bc_reply got;
	const void *z[5] = { NULL, NULL, NULL, NULL, NULL };
	size_t zn[5] = { 0, 0, 0, 0, 0 }, cut;
	char err[BC_ERRLEN];
	int kind;

	for (kind = BC_RQST_LOCATE; kind <= BC_RQST_LOOKUPF; kind++) {
		bc_request_init(&mine);
		mine.proto = BC_PROTO_BOLT;
		mine.kind = kind;
		mine.key = xstrdup(key);
		mine.flags = BC_FLAG_ORIGIN;
		mine.origin = xstrdup("00112233aabbccdd");
		if (kind == BC_RQST_LOCATE)
			mine.loc_host = xstrdup("h:1");
		bc_buf_reset(&out);
		ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err),
		    BC_OK);
		ck_assert(memcmp(bc_buf_data(&out) + bc_buf_len(&out) - 28,
		    "ORIG0000001000112233aabbccdd", 28) == 0);
		ck_assert_int_eq(bc_proto_bolt_kind(bc_buf_data(&out), 24),
		    kind);
		bc_buf_view(&in, bc_buf_data(&out), bc_buf_len(&out));
		ck_assert_int_eq(bc_proto_parse_request(&in, NULL, &req, err),
		    BC_OK);
		ck_assert_int_eq(req.kind, kind);
		ck_assert_str_eq(req.origin, "00112233aabbccdd");
		ck_assert_uint_eq(bc_buf_avail(&in), 0);
		bc_request_free(&req);
		for (cut = 0; cut < bc_buf_len(&out); cut++) {
			bc_buf_view(&in, bc_buf_data(&out), cut);
			ck_assert_int_ne(bc_proto_parse_request(&in, NULL, &req,
			    err), BC_OK);
			bc_request_free(&req);
		}
		/* an ORIG that is not 16 lowercase hex digits */
		{
			uint8_t *m = xmalloc(bc_buf_len(&out));

			memcpy(m, bc_buf_data(&out), bc_buf_len(&out));
			m[bc_buf_len(&out) - 1] = 'X';
			bc_buf_view(&in, m, bc_buf_len(&out));
			ck_assert_int_eq(bc_proto_parse_request(&in, NULL, &req,
			    err), BC_ERR_PROTO);
			bc_request_free(&req);
			free(m);
		}
		/* no origin, no flag: refused when writing */
		free(mine.origin);
		mine.origin = NULL;
		bc_buf_reset(&out);
		ck_assert_int_eq(bc_proto_write_request_head(&out, &mine, err),
		    BC_ERR_INVAL);
		bc_request_free(&mine);
	}

	/* hits: a lookup's ORIG first, a compile's after CHIT */
	bolt_request(&req, BC_RQST_COMPILE);
	req.flags |= BC_FLAG_HIT_MARK | BC_FLAG_ORIGIN;
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req,
	    "0123456789abcdef", z, zn, err), BC_OK);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001CHIT00000000"
	    "ORIG000000100123456789abcdefSTAT00000000", 64) == 0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_OK);
	ck_assert_int_eq(got.cache_hit, 1);
	ck_assert_int_eq(got.has_origin, 1);
	ck_assert_str_eq(got.origin, "0123456789abcdef");
	bc_reply_free(&got);
	/* an unknown storer: empty ORIG */
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req, "", z, zn, err),
	    BC_OK);
	ck_assert(memcmp(bc_buf_data(&out) + 24, "ORIG00000000STAT", 16) == 0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_OK);
	ck_assert_int_eq(got.has_origin, 1);
	ck_assert_str_eq(got.origin, "");
	bc_reply_free(&got);
	/* without the flag, no ORIG */
	req.flags &= ~(uint32_t)BC_FLAG_ORIGIN;
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req,
	    "0123456789abcdef", z, zn, err), BC_OK);
	ck_assert(memcmp(bc_buf_data(&out) + 24, "STAT", 4) == 0);
	bc_request_free(&req);
	bolt_request(&req, BC_RQST_LOOKUPF);
	req.flags = BC_FLAG_ORIGIN;
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_reply_zstd(&out, &req,
	    "0123456789abcdef", z, zn, err), BC_OK);
	ck_assert(memcmp(bc_buf_data(&out), "BOLT00000001"
	    "ORIG000000100123456789abcdefSTAT00000000", 52) == 0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_LOOKUPF, &got, err), BC_OK);
	ck_assert_str_eq(got.origin, "0123456789abcdef");
	bc_reply_free(&got);
	bc_request_free(&req);
	/* bad ORIGs in replies */
	ck_assert_int_eq(read_reply_fd("BOLT00000001ORIG000000030ab"
	    "STAT00000000", 39, BC_PROTO_BOLT, BC_RQST_LOOKUP, &got, err),
	    BC_ERR_PROTO);
	bc_reply_free(&got);
	ck_assert_int_eq(read_reply_fd("BOLT00000001ORIG000000100123456789"
	    "ABCDEFSTAT00000000", 52, BC_PROTO_BOLT, BC_RQST_LOOKUP, &got,
	    err), BC_ERR_PROTO);
	bc_reply_free(&got);
	ck_assert_int_eq(read_reply_fd("BOLT00000001ORIG00000000ORIG00000000"
	    "STAT00000000", 48, BC_PROTO_BOLT, BC_RQST_LOOKUP, &got, err),
	    BC_ERR_PROTO);
	bc_reply_free(&got);
	bc_buf_free(&out);
}
END_TEST

START_TEST(bolt_reply_eror)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	struct bc_reply got;
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_proto_write_error(&out, "compiler not allowed",
	    err), BC_OK);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_DENIED);
	ck_assert_str_eq(got.errmsg, "compiler not allowed");
	ck_assert_ptr_nonnull(strstr(err, "compiler not allowed"));
	bc_reply_free(&got);
	ck_assert_ptr_null(got.errmsg);

	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_error(&out, "busy: queue full", err),
	    BC_OK);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_HELLO, &got, err), BC_ERR_BUSY);
	ck_assert_str_eq(got.errmsg, "busy: queue full");
	bc_reply_free(&got);

	/* Unexpected token after BOLT. */
	bc_buf_reset(&out);
	put(&out, "BOLT", 1);
	put(&out, "INFO", 0);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_PROTO);
	/* A BOLT request answered in distcc framing. */
	bc_buf_reset(&out);
	put(&out, "DONE", 1);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_PROTO);
	/* Oversized message. */
	bc_buf_reset(&out);
	put(&out, "BOLT", 1);
	put(&out, "EROR", BC_MAX_MSG + 1);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out),
	    BC_PROTO_BOLT, BC_RQST_COMPILE, &got, err), BC_ERR_LIMIT);
	ck_assert_ptr_null(got.errmsg);
	bc_buf_free(&out);
}
END_TEST

/* ---- distcc replies --------------------------------------------------- */

START_TEST(dist_reply_rules)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	struct bc_reply rep, got;
	char err[BC_ERRLEN];
	int proto;

	for (proto = 1; proto <= 2; proto++) {
		/* status != 0: DOTO00000000 regardless of content. */
		bc_request_init(&req);
		req.proto = proto;
		req.kind = BC_RQST_COMPILE;
		fill_reply(&rep, 0x100);
		bc_buf_reset(&out);
		ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err),
		    BC_OK);
		ck_assert(bc_buf_len(&out) > 24);
		ck_assert(memcmp(bc_buf_data(&out) + bc_buf_len(&out) - 12,
		    "DOTO00000000", 12) == 0);
		ck_assert(memcmp(bc_buf_data(&out), proto == 1 ?
		    "DONE00000001STAT00000100" : "DONE00000002STAT00000100",
		    24) == 0);
		ck_assert_int_eq(read_reply_fd(bc_buf_data(&out),
		    bc_buf_len(&out), proto, BC_RQST_COMPILE, &got, err),
		    BC_OK);
		assert_buf_eq(&got.serr, &rep.serr);
		assert_buf_eq(&got.sout, &rep.sout);
		ck_assert_uint_eq(bc_buf_len(&got.doto), 0);
		bc_reply_free(&got);
		bc_reply_free(&rep);

		/* Success round trip, and no DIAG in distcc framing. */
		fill_reply(&rep, 0);
		bc_buf_reset(&out);
		ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err),
		    BC_OK);
		ck_assert_int_eq(read_reply_fd(bc_buf_data(&out),
		    bc_buf_len(&out), proto, BC_RQST_COMPILE, &got, err),
		    BC_OK);
		assert_buf_eq(&got.doto, &rep.doto);
		ck_assert_uint_eq(bc_buf_len(&got.dia), 0);
		bc_reply_free(&got);
		bc_reply_free(&rep);
		bc_request_free(&req);
	}

	/* A server that sends an object with a failure status (spec 5.2). */
	bc_buf_reset(&out);
	put(&out, "DONE", 1);
	put(&out, "STAT", 0x100);
	put(&out, "SERR", 0);
	put(&out, "SOUT", 0);
	puts_(&out, "DOTO", "\177ELF", 4);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out), 1,
	    BC_RQST_COMPILE, &got, err), BC_ERR_PROTO);
	/* SERR over the limit, from the header. */
	bc_buf_reset(&out);
	put(&out, "DONE", 1);
	put(&out, "STAT", 0);
	put(&out, "SERR", (uint32_t)BC_MAX_STDERR + 1);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out), 1,
	    BC_RQST_COMPILE, &got, err), BC_ERR_LIMIT);
	/* DOTO over the wire limit (compressed, protocol 2). */
	bc_buf_reset(&out);
	put(&out, "DONE", 2);
	put(&out, "STAT", 0);
	put(&out, "SERR", 0);
	put(&out, "SOUT", 0);
	put(&out, "DOTO", 0xffffffff);
	ck_assert_int_eq(read_reply_fd(bc_buf_data(&out), bc_buf_len(&out), 2,
	    BC_RQST_COMPILE, &got, err), BC_ERR_LIMIT);
	bc_buf_free(&out);
}
END_TEST

START_TEST(writer_errors)
{
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_buf_put_str(&out, "keep"), BC_OK);
	bc_request_init(&req);
	req.proto = 3;
	req.kind = BC_RQST_COMPILE;
	bc_strv_push(&req.argv, "cc");
	ck_assert_int_eq(bc_proto_write_request_head(&out, &req, err),
	    BC_ERR_NOTSUP);
	req.proto = 7;
	ck_assert_int_eq(bc_proto_write_request_head(&out, &req, err),
	    BC_ERR_INVAL);
	/* BOLT compile needs an absolute cwd; nothing is left behind. */
	req.proto = BC_PROTO_BOLT;
	ck_assert_int_eq(bc_proto_write_request_head(&out, &req, err),
	    BC_ERR_INVAL);
	req.cwd = xstrdup("rel");
	ck_assert_int_eq(bc_proto_write_request_head(&out, &req, err),
	    BC_ERR_INVAL);
	ck_assert_uint_eq(bc_buf_len(&out), 4);
	bc_request_free(&req);
	/* Empty argv. */
	bc_request_init(&req);
	req.proto = 1;
	req.kind = BC_RQST_COMPILE;
	ck_assert_int_eq(bc_proto_write_request_head(&out, &req, err),
	    BC_ERR_INVAL);
	ck_assert_uint_eq(bc_buf_len(&out), 4);
	bc_request_free(&req);
	/* Output buffer too small: rolled back. */
	{
		struct bc_buf tiny = BC_BUF_INIT(20);

		bc_request_init(&req);
		req.proto = 1;
		req.kind = BC_RQST_COMPILE;
		bc_strv_push(&req.argv, "cc");
		ck_assert_int_eq(bc_proto_write_request_head(&tiny, &req, err),
		    BC_ERR_LIMIT);
		ck_assert_uint_eq(bc_buf_len(&tiny), 0);
		bc_request_free(&req);
		bc_buf_free(&tiny);
	}
	ck_assert_int_eq(bc_proto_write_doti(&out, 9, "x", 1, err),
	    BC_ERR_INVAL);
	/* An overlong error message is cut to BC_MAX_MSG. */
	{
		char *msg = malloc(BC_MAX_MSG + 100);
		struct bc_reply got;

		ck_assert_ptr_nonnull(msg);
		memset(msg, 'm', BC_MAX_MSG + 99);
		msg[BC_MAX_MSG + 99] = '\0';
		bc_buf_reset(&out);
		ck_assert_int_eq(bc_proto_write_error(&out, msg, err), BC_OK);
		ck_assert_int_eq(read_reply_fd(bc_buf_data(&out),
		    bc_buf_len(&out), BC_PROTO_BOLT, BC_RQST_COMPILE, &got,
		    err), BC_ERR_DENIED);
		ck_assert_uint_eq(strlen(got.errmsg), BC_MAX_MSG);
		bc_reply_free(&got);
		free(msg);
	}
	bc_buf_free(&out);
}
END_TEST

/* ---- mutation loop ---------------------------------------------------- */

static int
clean_error(int r)
{
	return r == BC_ERR_PROTO || r == BC_ERR_TRUNCATED || r == BC_ERR_EOF ||
	    r == BC_ERR_LIMIT || r == BC_ERR_CORRUPT || r == BC_ERR_NOTSUP;
}

static unsigned long mutations_run;

/* Parse one mutated request: a clean error, or a sane request. */
static void
try_request(const uint8_t *p, size_t n, const struct bc_proto_limits *lim)
{
	struct bc_request req;
	char err[BC_ERRLEN];
	int r;

	err[0] = '\0';
	r = parse_bytes(p, n, lim, &req, err);
	mutations_run++;
	if (r != BC_OK) {
		ck_assert_msg(clean_error(r), "unexpected result %d (%s)", r,
		    err);
		ck_assert_msg(err[0] != '\0', "error %d without message", r);
		ck_assert_uint_eq(req.argv.n, 0);
		ck_assert_ptr_null(req.cwd);
		ck_assert_uint_eq(bc_buf_len(&req.doti), 0);
		ck_assert(req.proto == 0 || req.proto == 1 ||
		    req.proto == 2 || req.proto == 3 ||
		    req.proto == BC_PROTO_BOLT);
		return;
	}
	ck_assert(req.proto == 1 || req.proto == 2 || req.proto == 3 ||
	    req.proto == BC_PROTO_BOLT);
	if (req.kind == BC_RQST_COMPILE) {
		ck_assert(req.argv.n >= 1);
		ck_assert_ptr_null(req.argv.v[req.argv.n]);
		ck_assert(bc_buf_len(&req.doti) <= lim->max_doti);
	}
	bc_request_free(&req);
}

static void
try_reply(const uint8_t *p, size_t n, int proto, int kind,
    const struct bc_proto_limits *lim)
{
	struct bc_buf in;
	struct bc_reply rep;
	char err[BC_ERRLEN];
	int r;

	bc_buf_view(&in, p, n);
	r = bc_proto_parse_reply(&in, proto, kind, lim, &rep, err);
	mutations_run++;
	if (r != BC_OK)
		ck_assert_msg(clean_error(r) || r == BC_ERR_DENIED ||
		    r == BC_ERR_BUSY, "unexpected result %d (%s)", r, err);
	else if (rep.status != 0)
		ck_assert_uint_eq(bc_buf_len(&rep.doto), 0);
	bc_reply_free(&rep);
}

struct mut_ctx {
	const struct bc_proto_limits *lim;
	int reply, proto, kind;
};

static void
try_one(const uint8_t *p, size_t n, const struct mut_ctx *c)
{
	if (c->reply)
		try_reply(p, n, c->proto, c->kind, c->lim);
	else
		try_request(p, n, c->lim);
}

/* Bit flips, byte replacements and truncation from both ends. */
static void
mutate_all(const uint8_t *orig, size_t n, const struct mut_ctx *c)
{
	static const uint8_t repl[] = { 0x00, 0xff, '0', 'f', 'F', 'g', ' ' };
	uint8_t *m = malloc(n);
	size_t i, j;
	int bit;

	ck_assert_ptr_nonnull(m);
	memcpy(m, orig, n);
	try_one(m, n, c);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit++) {
			m[i] ^= (uint8_t)(1u << bit);
			try_one(m, n, c);
			m[i] = orig[i];
		}
		for (j = 0; j < sizeof repl; j++) {
			m[i] = repl[j];
			try_one(m, n, c);
			m[i] = orig[i];
		}
		m[i] = (uint8_t)(orig[i] + 1);
		try_one(m, n, c);
		m[i] = orig[i];
	}
	for (i = 0; i <= n; i++) {
		try_one(orig, i, c);		/* keep a prefix */
		try_one(orig + i, n - i, c);	/* drop a prefix */
	}
	free(m);
}

START_TEST(mutate_requests)
{
	static const char *const names[] = {
		"p1-request.bin", "p2-request.bin", "p2-error-request.bin",
	};
	static const int protos[] = { 1, 2, BC_PROTO_BOLT };
	struct bc_proto_limits small, dflt;
	struct mut_ctx c = { NULL, 0, 0, 0 };
	struct bc_buf cap, out = BC_BUF_INIT(1 << 20);
	size_t i;

	small_limits(&small);
	bc_proto_limits_default(&dflt);
	for (i = 0; vectors_dir() != NULL &&
	    i < sizeof names / sizeof names[0]; i++) {
		load(names[i], &cap);
		c.lim = &dflt;
		mutate_all(bc_buf_data(&cap), bc_buf_len(&cap), &c);
		c.lim = &small;
		mutate_all(bc_buf_data(&cap), bc_buf_len(&cap), &c);
		bc_buf_free(&cap);
	}
	/* Our own encodings of the three protocols. */
	for (i = 0; i < sizeof protos / sizeof protos[0]; i++) {
		bc_buf_reset(&out);
		encode_synth(protos[i], &out);
		c.lim = &dflt;
		mutate_all(bc_buf_data(&out), bc_buf_len(&out), &c);
		c.lim = &small;
		mutate_all(bc_buf_data(&out), bc_buf_len(&out), &c);
	}
	bc_buf_free(&out);
	ck_assert_msg(mutations_run > 30000, "only %lu mutations",
	    mutations_run);
}
END_TEST

START_TEST(mutate_replies)
{
	struct bc_proto_limits small, dflt;
	struct mut_ctx c = { NULL, 1, 0, BC_RQST_COMPILE };
	struct bc_buf cap, out = BC_BUF_INIT(1 << 20);
	struct bc_request req;
	struct bc_reply rep;
	char err[BC_ERRLEN];

	small_limits(&small);
	bc_proto_limits_default(&dflt);
	c.proto = 2;
	if (vectors_dir() != NULL) {
		load("p2-error-reply.bin", &cap);
		c.lim = &dflt;
		mutate_all(bc_buf_data(&cap), bc_buf_len(&cap), &c);
		bc_buf_free(&cap);
		load("p2-clang-reply.bin", &cap);
		c.lim = &small;
		mutate_all(bc_buf_data(&cap), bc_buf_len(&cap), &c);
		bc_buf_free(&cap);
	}

	/* Our own protocol 2 reply, then BOLT. */
	dist_request(&req, 2);
	fill_reply(&rep, 0);
	ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err), BC_OK);
	c.lim = &dflt;
	mutate_all(bc_buf_data(&out), bc_buf_len(&out), &c);
	bc_request_free(&req);
	bc_buf_reset(&out);

	bolt_request(&req, BC_RQST_COMPILE);
	ck_assert_int_eq(bc_proto_write_reply(&out, &req, &rep, err), BC_OK);
	c.proto = BC_PROTO_BOLT;
	c.lim = &dflt;
	mutate_all(bc_buf_data(&out), bc_buf_len(&out), &c);
	bc_buf_reset(&out);
	ck_assert_int_eq(bc_proto_write_error(&out, "busy: x", err), BC_OK);
	mutate_all(bc_buf_data(&out), bc_buf_len(&out), &c);
	bc_reply_free(&rep);
	bc_request_free(&req);
	bc_buf_free(&out);
}
END_TEST

static Suite *
proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *golden = bc_tcase("golden", BC_TEST_TIMEOUT);
	TCase *hostile = bc_tcase("hostile", BC_TEST_TIMEOUT);
	TCase *bolt = bc_tcase("bolt", BC_TEST_TIMEOUT);
	TCase *mut = bc_tcase("mutation", BC_TEST_TIMEOUT_SLOW);

	tcase_add_test(golden, golden_p1_request);
	tcase_add_test(golden, golden_p2_request);
	tcase_add_test(golden, golden_other_requests);
	tcase_add_test(golden, golden_p3_request_notsup);
	tcase_add_loop_test(golden, golden_reply_roundtrip, 0,
	    (int)(sizeof golden_replies / sizeof golden_replies[0]));
	tcase_add_test(golden, golden_reply_p1_vs_p2_object);
	tcase_add_test(golden, golden_reply_errors);
	tcase_add_test(golden, golden_reply_truncated);
	suite_add_tcase(s, golden);

	tcase_add_test(hostile, dist_versions);
	tcase_add_test(hostile, bad_first_token);
	tcase_add_test(hostile, argc_limits);
	tcase_add_test(hostile, argv_limits);
	tcase_add_test(hostile, argv_nul_and_empty);
	tcase_add_test(hostile, doti_limits);
	tcase_add_test(hostile, request_truncated_fd);
	tcase_add_test(hostile, dist_request_roundtrip);
	tcase_add_test(hostile, dist_reply_rules);
	tcase_add_test(hostile, writer_errors);
	suite_add_tcase(s, hostile);

	tcase_add_test(bolt, bolt_request_roundtrip);
	tcase_add_test(bolt, bolt_locate);
	tcase_add_test(bolt, bolt_request_hostile);
	tcase_add_test(bolt, bolt_reply_roundtrip);
	tcase_add_test(bolt, bolt_reply_eror);
	tcase_add_test(bolt, bolt_reply_chit);
	tcase_add_test(bolt, bolt_origin);
	tcase_add_test(bolt, bolt_reply_beats);
	suite_add_tcase(s, bolt);

	tcase_add_test(mut, mutate_requests);
	tcase_add_test(mut, mutate_replies);
	suite_add_tcase(s, mut);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return bc_unit_run(proto_suite());
}
