/*
 * test_pumpx.c - pump mode, client and BOLT extension: the BOLT pump
 * framing (round trip, limits, a mutation loop over a golden manifest),
 * the daemon's content store (hash verified before storing and when
 * reading, LRU trim), header-map rebasing, the client's scan result
 * (entry order, markers, hashes, fallbacks), and one job between the
 * client and a worker (the events the worker sends its parent).
 */
#include "config.h"

#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/proto.h"
#include "common/proto3x.h"
#include "common/wire.h"
#include "common/util.h"
#include "common/hosts.h"
#include "client/args.h"
#include "client/pump.h"
#include "client/pumpx.h"
#include "common/codec.h"
#include "common/io.h"
#include "daemon/pumpx.h"
#include "daemon/cas.h"
#include "daemon/job.h"
#include "daemon/policy.h"
#include "daemon/scratch.h"
#include "preproc/hmap.h"
#include "preproc/memo.h"
#include "tests/unit/unit.h"
#include <stdio.h>

static void
golden(struct bc_buf *out)
{
	struct bc_strv argv = BC_STRV_INIT;
	uint8_t h[BC_HASH_LEN];
	char err[BC_ERRLEN];

	bc_strv_push(&argv, "gcc");
	bc_strv_push(&argv, "-c");
	bc_strv_push(&argv, "a.c");
	bc_hash_bytes("int a;\n", 7, h);
	ck_assert_int_eq(bc_proto3x_write_head(out, 0, "/w", NULL, &argv, 3, err),
	    BC_OK);
	ck_assert_int_eq(bc_proto3x_write_hash(out, "/w/a.c", h, err), BC_OK);
	ck_assert_int_eq(bc_proto3x_write_link(out, "/usr/include",
	    "../../x/usr/include", err), BC_OK);
	ck_assert_int_eq(bc_proto3x_write_dir(out, "/w/inc", err), BC_OK);
	bc_strv_free(&argv);
}

START_TEST(test_roundtrip)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_request req;
	struct bc_proto3x_manifest m;
	uint8_t h[BC_HASH_LEN];
	char err[BC_ERRLEN];

	golden(&b);
	ck_assert_int_eq(bc_proto_parse_request(&b, NULL, &req, err), BC_OK);
	ck_assert_int_eq(req.proto, BC_PROTO_BOLT);
	ck_assert_int_eq(req.kind, BC_RQST_PUMP);
	ck_assert_str_eq(req.cwd, "/w");
	ck_assert_uint_eq(req.argv.n, 3);
	ck_assert_str_eq(req.argv.v[2], "a.c");
	ck_assert_int_eq(bc_proto3x_read_manifest(NULL, &b, NULL, &m, err),
	    BC_OK);
	ck_assert_uint_eq(m.n, 3);
	ck_assert_int_eq(m.v[0].kind, BC_PROTO3X_FILE);
	ck_assert_str_eq(m.v[0].name, "/w/a.c");
	bc_hash_bytes("int a;\n", 7, h);
	ck_assert(memcmp(m.v[0].hash, h, BC_HASH_LEN) == 0);
	ck_assert_int_eq(m.v[1].kind, BC_PROTO3X_LINK);
	ck_assert_str_eq(m.v[1].target, "../../x/usr/include");
	ck_assert_int_eq(m.v[2].kind, BC_PROTO3X_DIR);
	ck_assert_str_eq(m.v[2].name, "/w/inc");
	ck_assert_uint_eq(bc_buf_avail(&b), 0);
	bc_proto3x_manifest_free(&m);
	bc_request_free(&req);
	bc_buf_free(&b);
}
END_TEST

/* A cache hit: NEED 0 and the reply in one go, CHIT with the mark, the
 * stored .dia as DIAG after DOTD only when the client asked for one. */
START_TEST(test_hit_reply)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_buf z[5];
	struct bc_reply rep;
	const void *zp[5];
	size_t zn[5], k;
	const char *plain[5] = { "warning\n", "", "OBJ", "DIAG-bytes",
	    "o: a.c\n" };
	uint32_t *idx = NULL;
	char err[BC_ERRLEN], *msg = NULL;
	struct bc_io io;
	int fds[2], i, mark, wd, og;
	uint32_t flags;

	for (mark = 0; mark <= 7; mark++) {
		wd = (mark >> 1) & 1;
		og = mark >> 2;
		flags = ((mark & 1) ? BC_FLAG_HIT_MARK : 0) |
		    (wd ? BC_FLAG_WANT_DIA : 0) | (og ? BC_FLAG_ORIGIN : 0);
		for (i = 0; i < 5; i++) {
			bc_buf_init(&z[i], BC_BUF_CEILING);
			if (plain[i] != NULL && plain[i][0] != '\0')
				ck_assert_int_eq(bc_zstd_compress(plain[i],
				    strlen(plain[i]), 1, &z[i], err), BC_OK);
			zp[i] = bc_buf_data(&z[i]);
			zn[i] = bc_buf_len(&z[i]);
		}
		bc_buf_reset(&b);
		ck_assert_int_eq(bc_proto3x_write_hit(&b, flags,
		    "0123456789abcdef", zp, zn, err), BC_OK);
		ck_assert_int_eq(pipe(fds), 0);
		ck_assert(write(fds[1], bc_buf_data(&b), bc_buf_len(&b)) ==
		    (ssize_t)bc_buf_len(&b));
		close(fds[1]);
		bc_io_init(&io, fds[0], -1, 5000);
		ck_assert_int_eq(bc_proto3x_read_need(&io, 3, &idx, &k, &msg,
		    err), BC_OK);
		ck_assert_uint_eq(k, 0);
		bc_reply_init(&rep);
		rep.status = 1;
		ck_assert_int_eq(bc_proto3x_read_reply(&io, &rep, wd, &msg, err),
		    BC_OK);
		ck_assert_int_eq(rep.cache_hit, mark & 1);
		/* ORIG only after CHIT, only when asked for */
		ck_assert_int_eq(rep.has_origin, (mark & 1) && og);
		if (rep.has_origin)
			ck_assert_str_eq(rep.origin, "0123456789abcdef");
		ck_assert_uint_eq(rep.status, 0);
		ck_assert_uint_eq(bc_buf_len(&rep.serr), 8);
		ck_assert(memcmp(bc_buf_data(&rep.serr), "warning\n", 8) == 0);
		ck_assert_uint_eq(bc_buf_len(&rep.sout), 0);
		ck_assert_uint_eq(bc_buf_len(&rep.doto), 3);
		ck_assert_uint_eq(bc_buf_len(&rep.dotd), 7);
		ck_assert(memcmp(bc_buf_data(&rep.dotd), "o: a.c\n", 7) == 0);
		ck_assert_uint_eq(bc_buf_len(&rep.dia), wd ? 10 : 0);
		if (wd)
			ck_assert(memcmp(bc_buf_data(&rep.dia), "DIAG-bytes",
			    10) == 0);
		/* nothing after the last section */
		ck_assert_int_eq(read(fds[0], err, 1), 0);
		close(fds[0]);
		free(idx);
		bc_reply_free(&rep);
		for (i = 0; i < 5; i++)
			bc_buf_free(&z[i]);
	}
	bc_buf_free(&b);
}
END_TEST

/* A compile's reply: DIAG after DOTD when asked for, also on a failed
 * compile (Xcode reads the .dia then), and none otherwise. */
START_TEST(test_reply_dia)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_buf serr = BC_BUF_INIT(64), sout = BC_BUF_INIT(64);
	struct bc_buf doto = BC_BUF_INIT(64), dotd = BC_BUF_INIT(64);
	struct bc_buf dia = BC_BUF_INIT(64);
	struct bc_reply rep;
	uint32_t status;
	char err[BC_ERRLEN], *msg = NULL;
	struct bc_io io;
	int fds[2], i, wd;

	ck_assert_int_eq(bc_buf_put_str(&serr, "e.c:1: error\n"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&doto, "OBJ"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&dotd, "o: e.c\n"), BC_OK);
	ck_assert_int_eq(bc_buf_put_str(&dia, "DIA"), BC_OK);
	for (i = 0; i < 4; i++) {
		status = (i & 1) ? 256 : 0;
		wd = i >> 1;
		bc_buf_reset(&b);
		ck_assert_int_eq(bc_proto3x_write_reply(&b, status, &serr, &sout,
		    &doto, &dotd, wd ? &dia : NULL, err), BC_OK);
		ck_assert_int_eq(pipe(fds), 0);
		ck_assert(write(fds[1], bc_buf_data(&b), bc_buf_len(&b)) ==
		    (ssize_t)bc_buf_len(&b));
		close(fds[1]);
		bc_io_init(&io, fds[0], -1, 5000);
		bc_reply_init(&rep);
		ck_assert_int_eq(bc_proto3x_read_reply(&io, &rep, wd, &msg, err),
		    BC_OK);
		ck_assert_uint_eq(rep.status, status);
		ck_assert_int_eq(rep.cache_hit, 0);
		ck_assert_uint_eq(bc_buf_len(&rep.doto), status ? 0 : 3);
		ck_assert_uint_eq(bc_buf_len(&rep.dia), wd ? 3 : 0);
		ck_assert_int_eq(read(fds[0], err, 1), 0);
		close(fds[0]);
		bc_reply_free(&rep);
	}
	bc_buf_free(&b);
	bc_buf_free(&serr);
	bc_buf_free(&sout);
	bc_buf_free(&doto);
	bc_buf_free(&dotd);
	bc_buf_free(&dia);
}
END_TEST

/* The client's key from its scan result equals the daemon's from the
 * manifest it receives (markers become DIRM entries on the wire). */
START_TEST(test_key_agrees)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_request req;
	struct bc_proto3x_manifest m;
	struct bc_cpump p;
	char err[BC_ERRLEN], kc[BC_HASH_HEXLEN + 1], kd[BC_HASH_HEXLEN + 1];
	uint8_t h[BC_HASH_LEN];
	const char *id = "ab";

	bc_cpump_init(&p);
	p.cwd = xstrdup("/w");
	bc_strv_push(&p.argv, "gcc");
	bc_strv_push(&p.argv, "-c");
	bc_strv_push(&p.argv, "a.c");
	p.n = p.cap = 3;
	p.v = xcalloc(3, sizeof(*p.v));
	bc_hash_bytes("int a;\n", 7, h);
	p.v[0].name = xstrdup("/w/a.c");
	p.v[0].kind = BC_CPUMP_FILE;
	p.v[0].has_hash = 1;
	memcpy(p.v[0].hash, h, BC_HASH_LEN);
	p.v[1].name = xstrdup("/usr/include");
	p.v[1].kind = BC_CPUMP_LINK;
	p.v[1].target = xstrdup("../../x/usr/include");
	p.v[2].name = xstrdup("/w/inc/" BC_CPUMP_MARKER);
	p.v[2].kind = BC_CPUMP_MARKER_FILE;
	ck_assert_int_eq(bc_cpumpx_key(&p, id, kc), BC_OK);
	golden(&b);	/* the same entries as the wire carries them */
	ck_assert_int_eq(bc_proto_parse_request(&b, NULL, &req, err), BC_OK);
	ck_assert_int_eq(bc_proto3x_read_manifest(NULL, &b, NULL, &m, err),
	    BC_OK);
	ck_assert_int_eq(bc_pumpx_key(&m, &req, id, NULL, 0, kd, NULL), 0);
	ck_assert_str_eq(kc, kd);
	/* a file without its hash cannot be keyed */
	p.v[0].has_hash = 0;
	ck_assert_int_ne(bc_cpumpx_key(&p, id, kc), BC_OK);
	bc_proto3x_manifest_free(&m);
	bc_request_free(&req);
	bc_cpump_free(&p);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_limits)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_proto3_limits lim;
	struct bc_proto3x_manifest m;
	char err[BC_ERRLEN];

	bc_proto3_limits_default(&lim);
	lim.max_nfil = 2;
	(void)bc_wire_put_int(&b, "NFIL", 3);
	ck_assert_int_eq(bc_proto3x_read_manifest(NULL, &b, &lim, &m, err),
	    BC_ERR_LIMIT);
	bc_buf_reset(&b);
	/* a HASH that is not 32 bytes */
	(void)bc_wire_put_int(&b, "NFIL", 1);
	(void)bc_wire_put_str(&b, "NAME", "/a", 2);
	(void)bc_wire_put_str(&b, "HASH", "abc", 3);
	ck_assert_int_eq(bc_proto3x_read_manifest(NULL, &b, NULL, &m, err),
	    BC_ERR_PROTO);
	bc_buf_reset(&b);
	/* NUL inside a name */
	(void)bc_wire_put_int(&b, "NFIL", 1);
	(void)bc_wire_put_str(&b, "NAME", "/a\0b", 4);
	(void)bc_wire_put_int(&b, "DIRM", 0);
	ck_assert_int_eq(bc_proto3x_read_manifest(NULL, &b, NULL, &m, err),
	    BC_ERR_PROTO);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_body)
{
	struct bc_buf b = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_buf plain = BC_BUF_INIT(BC_MAX_FILE);
	struct bc_proto3_limits lim;
	char text[5000], err[BC_ERRLEN];

	memset(text, 'x', sizeof(text));
	ck_assert_int_eq(bc_proto3x_write_body(&b, text, sizeof(text), err),
	    BC_OK);
	ck_assert_int_eq(bc_proto3x_write_body(&b, "", 0, err), BC_OK);
	ck_assert_uint_lt(bc_buf_len(&b), 200);	/* compressed */
	ck_assert_int_eq(bc_proto3x_read_body(NULL, &b, NULL, &plain, err),
	    BC_OK);
	ck_assert_uint_eq(bc_buf_len(&plain), sizeof(text));
	ck_assert_int_eq(bc_proto3x_read_body(NULL, &b, NULL, &plain, err),
	    BC_OK);
	ck_assert_uint_eq(bc_buf_len(&plain), 0);
	/* a body that expands past the per-file limit */
	bc_proto3_limits_default(&lim);
	lim.max_file = 100;
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_proto3x_write_body(&b, text, sizeof(text), err),
	    BC_OK);
	ck_assert_int_ne(bc_proto3x_read_body(NULL, &b, &lim, &plain, err),
	    BC_OK);
	bc_buf_free(&b);
	bc_buf_free(&plain);
}
END_TEST

START_TEST(test_mutation)
{
	struct bc_buf g = BC_BUF_INIT(BC_BUF_CEILING);
	struct bc_request req;
	const uint8_t *p;
	uint8_t *c;
	size_t n, i, cut;
	int bit;

	golden(&g);
	n = bc_buf_len(&g);
	p = bc_buf_data(&g);
	c = xmalloc(n);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 9; bit++) {
			struct bc_buf in;
			struct bc_proto3x_manifest m;
			char err[BC_ERRLEN];

			memcpy(c, p, n);
			if (bit < 8)
				c[i] ^= (uint8_t)(1u << bit);
			else
				c[i] = (uint8_t)~c[i];
			bc_buf_view(&in, c, n);
			if (bc_proto_parse_request(&in, NULL, &req, err) ==
			    BC_OK && req.kind == BC_RQST_PUMP) {
				int r = bc_proto3x_read_manifest(NULL, &in, NULL,
				    &m, err);

				if (r == BC_OK)
					bc_proto3x_manifest_free(&m);
				else
					ck_assert_uint_eq(m.n, 0);
			}
			bc_request_free(&req);
		}
	}
	for (cut = 1; cut < n; cut++) {
		struct bc_buf in;
		struct bc_proto3x_manifest m;
		char err[BC_ERRLEN];
		int r;

		/* truncated at the end */
		bc_buf_view(&in, p, n - cut);
		if (bc_proto_parse_request(&in, NULL, &req, err) == BC_OK) {
			r = bc_proto3x_read_manifest(NULL, &in, NULL, &m, err);
			ck_assert_int_ne(r, BC_OK);
		}
		bc_request_free(&req);
		/* truncated at the start */
		bc_buf_view(&in, p + cut, n - cut);
		(void)bc_proto_parse_request(&in, NULL, &req, err);
		bc_request_free(&req);
		bc_buf_view(&in, p + cut, n - cut);
		if (bc_proto3x_read_manifest(NULL, &in, NULL, &m, err) == BC_OK)
			bc_proto3x_manifest_free(&m);
	}
	free(c);
	bc_buf_free(&g);
}
END_TEST

START_TEST(test_cas)
{
	struct bc_cas cas;
	struct bc_buf b = BC_BUF_INIT(BC_MAX_FILE);
	uint8_t h[BC_HASH_LEN], h2[BC_HASH_LEN];
	char *dir, *p, hex[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	static char big[4096];
	int i;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "castest_", &dir, NULL),
	    BC_OK);
	ck_assert_int_eq(bc_cas_open(&cas, dir, 10000, err), BC_OK);
	bc_hash_bytes("hello", 5, h);
	ck_assert_int_eq(bc_cas_get(&cas, h, &b, 100, err), BC_ERR_NOENT);
	/* a lying client: contents that do not hash to the address */
	ck_assert_int_eq(bc_cas_put(&cas, h, "hellO", 5, err),
	    BC_ERR_CORRUPT);
	ck_assert_int_eq(bc_cas_get(&cas, h, &b, 100, err), BC_ERR_NOENT);
	ck_assert_int_eq(bc_cas_put(&cas, h, "hello", 5, err), BC_OK);
	ck_assert_int_eq(bc_cas_get(&cas, h, &b, 100, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 5);
	ck_assert(memcmp(bc_buf_data(&b), "hello", 5) == 0);
	/* damaged on disk: removed and reported missing */
	bc_hash_hex(h, BC_HASH_LEN, hex);
	p = xasprintf("%s/pumpfiles/%.2s/%s", dir, hex, hex);
	ck_assert_int_eq(bc_write_file_atomic(p, "jello", 5, 0600, NULL),
	    BC_OK);
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_cas_get(&cas, h, &b, 100, err), BC_ERR_NOENT);
	ck_assert_int_ne(access(p, F_OK), 0);
	/* trim: 4 files of 4 KiB in a 10000-byte store, oldest go first */
	for (i = 0; i < 4; i++) {
		struct timeval tv[2];
		char *fp;

		memset(big, 'a' + i, sizeof(big));
		bc_hash_bytes(big, sizeof(big), h2);
		ck_assert_int_eq(bc_cas_put(&cas, h2, big, sizeof(big), err),
		    BC_OK);
		bc_hash_hex(h2, BC_HASH_LEN, hex);
		fp = xasprintf("%s/pumpfiles/%.2s/%s", dir, hex, hex);
		tv[0].tv_sec = tv[1].tv_sec = 1000000 + i * 100;
		tv[0].tv_usec = tv[1].tv_usec = 0;
		ck_assert_int_eq(utimes(fp, tv), 0);
		free(fp);
	}
	bc_cas_trim(&cas, 1);
	memset(big, 'a', sizeof(big));
	bc_hash_bytes(big, sizeof(big), h2);
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_cas_get(&cas, h2, &b, sizeof(big), err),
	    BC_ERR_NOENT);
	memset(big, 'd', sizeof(big));
	bc_hash_bytes(big, sizeof(big), h2);
	ck_assert_int_eq(bc_cas_get(&cas, h2, &b, sizeof(big), err), BC_OK);
	bc_cas_close(&cas);
	free(p);
	(void)bc_rmtree(dir);
	free(dir);
	bc_buf_free(&b);
}
END_TEST

static void
le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t
hkey(const char *k)
{
	uint32_t h = 0;

	for (; *k != '\0'; k++)
		h += (uint32_t)((*k >= 'A' && *k <= 'Z') ? *k + 32 : *k) * 13;
	return h;
}

START_TEST(test_hmap_rebase)
{
	/* two entries: Foo.h -> /a/ + Foo.h, Baz.h -> "" + MyLib/Bar.h */
	uint8_t m[24 + 8 * 12 + 64];
	static const char tab[] = "\0Foo.h\0/a/\0Baz.h\0\0MyLib/Bar.h";
	struct bc_hmap map, re;
	struct bc_buf out = BC_BUF_INIT(1 << 20);
	char *v = NULL, err[BC_ERRLEN];
	uint32_t so = 24 + 8 * 12, i;

	memset(m, 0, sizeof(m));
	memcpy(m, "pamh", 4);
	m[4] = 1;
	le32(m + 8, so);
	le32(m + 12, 2);
	le32(m + 16, 8);
	memcpy(m + so, tab, sizeof(tab));
	i = hkey("Foo.h") & 7;
	le32(m + 24 + i * 12, 1);
	le32(m + 24 + i * 12 + 4, 7);
	le32(m + 24 + i * 12 + 8, 1);
	i = hkey("Baz.h") & 7;
	while (m[24 + i * 12] != 0)
		i = (i + 1) & 7;
	le32(m + 24 + i * 12, 11);
	le32(m + 24 + i * 12 + 4, 17);
	le32(m + 24 + i * 12 + 8, 18);
	ck_assert_int_eq(bc_hmap_load_mem(&map, m, so + sizeof(tab), err),
	    BC_OK);
	ck_assert_int_eq(bc_hmap_lookup(&map, "foo.H", &v), BC_OK);
	ck_assert_str_eq(v, "/a/Foo.h");
	free(v);
	ck_assert_int_eq(bc_hmap_rebase(&map, "/R/root", &out, err), BC_OK);
	ck_assert_int_eq(bc_hmap_load_mem(&re, bc_buf_data(&out),
	    bc_buf_len(&out), err), BC_OK);
	ck_assert_int_eq(bc_hmap_lookup(&re, "Foo.h", &v), BC_OK);
	ck_assert_str_eq(v, "/R/root/a/Foo.h");
	free(v);
	ck_assert_int_eq(bc_hmap_lookup(&re, "BAZ.h", &v), BC_OK);
	ck_assert_str_eq(v, "MyLib/Bar.h");	/* relative: unchanged */
	free(v);
	ck_assert_int_eq(bc_hmap_lookup(&re, "Nope.h", &v), BC_ERR_NOENT);
	bc_hmap_free(&map);
	bc_hmap_free(&re);
	bc_buf_free(&out);
}
END_TEST

static void
put(const char *path, const char *text)
{
	ck_assert_int_eq(bc_write_file_atomic(path, text, strlen(text), 0644,
	    NULL), BC_OK);
}

START_TEST(test_prepare)
{
	struct bc_strv argv = BC_STRV_INIT;
	struct bc_plan plan;
	struct bc_cpump p;
	char *dir, *src, *cwd, err[BC_ERRLEN];
	uint8_t h[BC_HASH_LEN];
	const char *fb;
	size_t i;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "cpump_", &dir, NULL),
	    BC_OK);
	src = xasprintf("%s/src", dir);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	cwd = xasprintf("%s/src/inc", dir);
	ck_assert_int_eq(mkdir(cwd, 0755), 0);
	free(cwd);
	cwd = xasprintf("%s/src/z.h", dir);
	put(cwd, "#define Z 1\n");
	free(cwd);
	cwd = xasprintf("%s/src/inc/a.h", dir);
	put(cwd, "#include \"../z.h\"\n");
	free(cwd);
	cwd = xasprintf("%s/src/m.c", dir);
	put(cwd, "#include \"a.h\"\nint m = Z;\n");
	free(cwd);
	cwd = src;
	ck_assert_int_eq(chdir(cwd), 0);

	bc_strv_push(&argv, "gcc");
	bc_strv_push(&argv, "-Iinc");
	bc_strv_push(&argv, "-MD");
	bc_strv_push(&argv, "-c");
	bc_strv_push(&argv, "m.c");
	ck_assert_int_eq(bc_args_classify(&argv, &plan, err), BC_OK);
	ck_assert(plan.remote);
	bc_cpump_init(&p);
	ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &argv, NULL, cwd, NULL,
	    1, &fb, err), BC_OK);
	/* ARGV: full command, -o and -MT added */
	ck_assert_uint_eq(p.argv.n, 9);
	ck_assert_str_eq(p.argv.v[5], "-o");
	ck_assert_str_eq(p.argv.v[6], "m.o");
	ck_assert_str_eq(p.argv.v[7], "-MT");
	ck_assert_str_eq(p.argv.v[8], "m.o");
	ck_assert(p.dep_wanted);
	ck_assert_str_eq(p.dep_file, "m.d");
	/* source first, then headers sorted */
	ck_assert_uint_eq(p.nfiles, 3);
	ck_assert(bc_str_has_suffix(p.v[0].name, "/src/m.c"));
	ck_assert(bc_str_has_suffix(p.v[1].name, "/src/inc/a.h"));
	ck_assert(bc_str_has_suffix(p.v[2].name, "/src/z.h"));
	bc_hash_bytes("#define Z 1\n", 12, h);
	ck_assert(p.v[2].has_hash);
	ck_assert(memcmp(p.v[2].hash, h, BC_HASH_LEN) == 0);
	/* markers: the cwd, -Iinc, and inc (left by "..") */
	for (i = p.nfiles; i < p.n; i++)
		ck_assert_int_eq(p.v[i].kind, BC_CPUMP_MARKER_FILE);
	ck_assert_uint_ge(p.n - p.nfiles, 2);
	ck_assert_uint_eq(p.flags, 0);
	bc_cpump_free(&p);
	bc_plan_free(&plan);

	/* Xcode's .dia, index store and stat cache never leave the
	 * client: the .dia is asked for with FLAG WANT_DIA (not toward a
	 * stock distccd); a profile for -fprofile-instr-use is shipped */
	{
		struct bc_strv x = BC_STRV_INIT;
		static const char *const xa[] = { "clang", "-Iinc",
		    "--serialize-diagnostics", "/x/m.dia", "-index-store-path",
		    "/x/idx", "-ivfsstatcache", "/x/sc", "-fprofile-instr-use="
		    "p.profdata", "-c", "m.c", NULL };
		char *joined;

		put("p.profdata", "profile bytes");
		for (i = 0; xa[i] != NULL; i++)
			bc_strv_push(&x, xa[i]);
		ck_assert_int_eq(bc_args_classify(&x, &plan, err), BC_OK);
		ck_assert_str_eq(plan.pump_only, "profile-use");
		bc_cpump_init(&p);
		ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &x, NULL, cwd,
		    NULL, 1, &fb, err), BC_OK);
		joined = bc_strv_join(&p.argv);
		ck_assert_str_eq(joined, "clang -Iinc "
		    "-fprofile-instr-use=p.profdata -c m.c -o m.o");
		free(joined);
		ck_assert_uint_eq(p.flags, BC_FLAG_WANT_DIA);
		for (i = 0; i < p.nfiles; i++)
			if (bc_str_has_suffix(p.v[i].name, "/src/p.profdata"))
				break;
		ck_assert_uint_lt(i, p.nfiles);
		bc_cpump_free(&p);
		bc_cpump_init(&p);
		ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &x, NULL, cwd,
		    NULL, 0, &fb, err), BC_ERR_NOTSUP);
		ck_assert_str_eq(fb, "serialize-diagnostics");
		bc_cpump_free(&p);
		/* a profile that is not a file: no pump mode */
		(void)unlink("p.profdata");
		bc_cpump_init(&p);
		ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &x, NULL, cwd,
		    NULL, 1, &fb, err), BC_ERR_NOTSUP);
		ck_assert_str_eq(fb, "profile-not-a-file");
		bc_cpump_free(&p);
		bc_plan_free(&plan);
		bc_strv_free(&x);
	}

	/* computed include: plain mode, by reason */
	put("m.c", "#define H A_H\n#include H\n");
	ck_assert_int_eq(bc_args_classify(&argv, &plan, err), BC_OK);
	bc_cpump_init(&p);
	ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &argv, NULL, cwd, NULL,
	    0, &fb, err), BC_ERR_NOTSUP);
	ck_assert_str_eq(fb, "computed-include");
	bc_cpump_free(&p);
	bc_plan_free(&plan);

	/* a header map: fine for boltccd, not for a stock distccd */
	put("m.c", "#include \"a.h\"\n");
	{
		static const char hm[] = "pamh\1\0\0\0\x24\0\0\0\0\0\0\0"
		    "\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

		ck_assert_int_eq(bc_write_file_atomic("x.hmap", hm,
		    sizeof(hm), 0644, NULL), BC_OK);
	}
	bc_strv_push(&argv, "-Ix.hmap");
	ck_assert_int_eq(bc_args_classify(&argv, &plan, err), BC_OK);
	bc_cpump_init(&p);
	ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &argv, NULL, cwd, NULL,
	    0, &fb, err), BC_ERR_NOTSUP);
	ck_assert_str_eq(fb, "header-map");
	bc_cpump_free(&p);
	bc_cpump_init(&p);
	ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &argv, NULL, cwd, NULL,
	    1, &fb, err), BC_OK);
	for (i = 0; i < p.nfiles; i++)
		if (bc_str_has_suffix(p.v[i].name, "/x.hmap"))
			break;
	ck_assert_uint_lt(i, p.nfiles);	/* the map itself is shipped */
	bc_cpump_free(&p);
	bc_plan_free(&plan);

	ck_assert_int_eq(chdir("/"), 0);
	bc_strv_free(&argv);
	(void)bc_rmtree(dir);
	free(dir);
	free(src);
}
END_TEST

/*
 * A BOLT pump job compiled by a worker (daemon/job.c) for the client's
 * own code (bc_cpumpx_compile): the manifest, the files asked for, the
 * reply.  The parent hears of the job once (one BC_EV_JOB, named after
 * the source), then its slot and its end.
 */
START_TEST(test_worker_events)
{
	struct bc_strv argv = BC_STRV_INIT;
	struct bc_hostlist hl;
	struct bc_remote_counts counts;
	struct bc_policy pol;
	struct bc_job_conf conf;
	struct bc_job_event ev;
	struct bc_reply rep;
	struct bc_plan plan;
	struct bc_cpump p;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char *dir, *spec, *cache, err[BC_ERRLEN];
	const char *fb, *why;
	int ls, evp[2], status, njob = 0, ndone = 0, nslot = 0;
	pid_t pid;

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "cpumpw_", &dir, NULL),
	    BC_OK);
	ck_assert_int_eq(chdir(dir), 0);
	put("w.c", "int w = 1;\n");
	ls = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(ls, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(ls, 1), 0);
	ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
	ck_assert_int_eq(pipe(evp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = accept(ls, NULL, NULL);

		close(evp[0]);
		if (fd < 0)
			_exit(1);
		/* the job dir, the file store and the cache: all in dir */
		if (bc_scratch_init(dir, NULL, err) != BC_OK)
			_exit(1);
		cache = xasprintf("%s/cache", dir);
		bc_policy_init(&pol);
		bc_policy_set_path(&pol, "/usr/bin:/bin");
		memset(&conf, 0, sizeof(conf));
		conf.policy = &pol;
		conf.cache_dir = cache;
		conf.slot_fd = -1;
		conf.keeper_fd = -1;
		conf.event_fd = evp[1];
		conf.io_timeout_ms = 20000;
		conf.request_timeout_ms = 20000;
		conf.job_timeout_ms = 60000;
		conf.version = "test";
		bc_job_serve(&conf, fd, fd, "test");
		_exit(0);
	}
	close(ls);
	close(evp[1]);

	bc_strv_push(&argv, "gcc");
	bc_strv_push(&argv, "-c");
	bc_strv_push(&argv, "w.c");
	ck_assert_int_eq(bc_args_classify(&argv, &plan, err), BC_OK);
	bc_cpump_init(&p);
	ck_assert_int_eq(bc_cpump_prepare(&p, &plan, &argv, NULL, dir, NULL,
	    1, &fb, err), BC_OK);
	spec = xasprintf("127.0.0.1:%d,bolt", (int)ntohs(sa.sin_port));
	ck_assert_int_eq(bc_hosts_parse(spec, 1, &hl, err), BC_OK);
	bc_reply_init(&rep);
	ck_assert_msg(bc_cpumpx_compile(&p, &hl.v[0], 20000, 20000, &rep,
	    &counts, &why, err) == BC_OK, "%s: %s", why, err);
	ck_assert_uint_eq(rep.status, 0);
	ck_assert_uint_gt(bc_buf_len(&rep.doto), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	while (read(evp[0], &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
		switch (ev.kind) {
		case BC_EV_JOB:
			njob++;
			ck_assert_int_eq(ev.mode, BC_MODE_BOLT_PUMP);
			ck_assert_str_eq(ev.file, "w.c");
			ck_assert_int_eq(ndone + nslot, 0);
			break;
		case BC_EV_SLOT_START:
			nslot++;
			break;
		case BC_EV_DONE:
			ndone++;
			ck_assert_int_eq(ev.outcome, BC_OUT_OK);
			break;
		default:
			break;
		}
	}
	close(evp[0]);
	ck_assert_int_eq(njob, 1);
	ck_assert_int_eq(nslot, 1);
	ck_assert_int_eq(ndone, 1);

	bc_reply_free(&rep);
	bc_hosts_free(&hl);
	free(spec);
	bc_cpump_free(&p);
	bc_plan_free(&plan);
	bc_strv_free(&argv);
	ck_assert_int_eq(chdir("/"), 0);
	(void)bc_rmtree(dir);
	free(dir);
}
END_TEST

/* A record without a hash whose text has a space 64 bytes after the "-"
 * (a path of 58 bytes, then "D 1 ...") must not be read as a hash. */
START_TEST(test_memo_nohash_record)
{
	struct bc_pp_memo m;
	char text[256], path[59];
	int n;

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[58] = '\0';
	n = snprintf(text, sizeof(text), "boltcc-ppmemo 2\n"
	    "F 1 2 3 4 5 6 - 1 %s\nD 1 0 0 1 a.h\n", path);
	ck_assert(n > 0 && (size_t)n < sizeof(text));
	ck_assert_int_eq(bc_pp_memo_open(&m, NULL, NULL), BC_OK);
	ck_assert_int_eq(bc_pp_memo_parse(&m, text, (size_t)n), BC_OK);
	ck_assert_uint_eq(m.n, 1);
	bc_pp_memo_close(&m);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("pumpx");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_hit_reply);
	tcase_add_test(tc, test_reply_dia);
	tcase_add_test(tc, test_key_agrees);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_body);
	tcase_add_test(tc, test_mutation);
	tcase_add_test(tc, test_cas);
	tcase_add_test(tc, test_hmap_rebase);
	tcase_add_test(tc, test_prepare);
	tcase_add_test(tc, test_memo_nohash_record);
	suite_add_tcase(s, tc);
	tc = bc_tcase("worker", BC_TEST_TIMEOUT_SLOW);
	tcase_add_test(tc, test_worker_events);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(suite());
}
