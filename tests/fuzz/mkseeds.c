/*
 * mkseeds.c - writes the seed corpora of the fuzz targets
 * (tests/fuzz/seeds/<target>/) with the project's own encoders, so the
 * binary seeds are valid by construction.  Built by `make check` (so it
 * keeps compiling) but run only by hand when the formats change:
 *
 *   make tests/fuzz/mkseeds && tests/fuzz/mkseeds $SRCDIR/tests/fuzz/seeds
 *
 * The protocol 1/2 seeds of fuzz_proto are copies of captured distcc
 * transcripts from the shared spec vectors; with the spec directory as a
 * second argument they are copied from there, else left as they are.
 * zstd output may differ between libzstd versions; the seeds need only be
 * valid, not identical.  Keep every seed small (a few KiB at most): the
 * replays mutate each one hundreds of times in every `make check`.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/store.h"
#include "common/buf.h"
#include "common/codec.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/mux.h"
#include "common/proto.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "common/wire.h"

#define SEED_MAX (64 * 1024)

static const char *outdir;
static const char *specdir;
static int failed;

static void
die_on(int r, const char *what, const char *err)
{
	if (r != BC_OK) {
		fprintf(stderr, "mkseeds: %s: %s\n", what, err);
		exit(1);
	}
}

static void
put_file(const char *target, const char *name, const void *p, size_t n)
{
	char dir[2048], path[4096];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s", outdir, target);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkseeds: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) ||
	    fclose(f) != 0) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void
put_buf(const char *target, const char *name, const struct bc_buf *b)
{
	put_file(target, name, bc_buf_data(b), bc_buf_len(b));
}

static void
put_text(const char *target, const char *name, const char *s)
{
	put_file(target, name, s, strlen(s));
}

/* A selector byte, then the bytes of b. */
static void
put_sel(const char *target, const char *name, uint8_t sel,
    const struct bc_buf *b)
{
	struct bc_buf o;

	bc_buf_init(&o, SEED_MAX);
	(void)bc_buf_put_u8(&o, sel);
	(void)bc_buf_put(&o, bc_buf_data(b), bc_buf_len(b));
	put_buf(target, name, &o);
	bc_buf_free(&o);
}

/* Copy a captured transcript from the spec vectors (optional). */
static int
read_vector(const char *name, struct bc_buf *out)
{
	char path[4096], err[BC_ERRLEN];

	if (specdir == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/vectors/%s", specdir, name);
	if (bc_read_file(path, SEED_MAX, out, err) != BC_OK) {
		fprintf(stderr, "mkseeds: %s\n", err);
		failed = 1;
		return -1;
	}
	return 0;
}

static void
argv_of(struct bc_strv *v, const char *const *args)
{
	bc_strv_init(v);
	for (; *args != NULL; args++)
		bc_strv_push(v, *args);
}

static const char hello_i[] =
    "# 0 \"hello.c\"\n"
    "# 0 \"<built-in>\"\n"
    "# 0 \"<command-line>\"\n"
    "# 1 \"/usr/include/stdc-predef.h\" 1 3 4\n"
    "# 0 \"<command-line>\" 2\n"
    "# 1 \"hello.c\"\n"
    "# 1 \"hello.h\" 1\n"
    "int hello(void);\n"
    "# 2 \"hello.c\" 2\n"
    "int hello(void) { return 42; }\n";

static const char hello_d[] = "hello.o: hello.c hello.h\n";

/* --- fuzz_wire: byte 0 picks the body limit (x16), then tokens ----------- */

static void
seeds_wire(void)
{
	static const char *const args[] = { "gcc", "-c", "hello.c", "-o",
	    "hello.o", NULL };
	struct bc_buf b, v;
	size_t i;

	bc_buf_init(&b, SEED_MAX);
	(void)bc_wire_put_int(&b, "DIST", 1);
	(void)bc_wire_put_int(&b, "ARGC", 5);
	for (i = 0; args[i] != NULL; i++)
		(void)bc_wire_put_str(&b, "ARGV", args[i], strlen(args[i]));
	(void)bc_wire_put_str(&b, "DOTI", hello_i, 64);
	put_sel("wire", "dist1-request", 0xff, &b);
	put_sel("wire", "dist1-request-limit16", 0x01, &b);

	bc_buf_reset(&b);
	(void)bc_wire_put_int(&b, "DONE", 1);
	(void)bc_wire_put_int(&b, "STAT", 0);
	(void)bc_wire_put_str(&b, "SERR", "", 0);
	(void)bc_wire_put_str(&b, "SOUT", "", 0);
	(void)bc_wire_put_str(&b, "DOTO", "\x7f" "ELF\x02\x01\x01", 7);
	put_sel("wire", "dist1-reply", 0x10, &b);

	bc_buf_reset(&b);
	(void)bc_wire_put_int(&b, "BOLT", 1);
	(void)bc_wire_put_str(&b, "EROR", "compiler not allowed", 20);
	(void)bc_wire_put_str(&b, "INFO", "boltccd 1.0", 11);
	(void)bc_wire_put_str(&b, "CDIR", "/tmp/b", 6);
	put_sel("wire", "bolt-tokens", 0x02, &b);

	/* uppercase hex, a zero-length body, then a truncated body */
	bc_buf_reset(&b);
	(void)bc_buf_put_str(&b, "ARGV0000000AHELLOWORLDSERR00000000"
	    "CDIR000000FF/short");
	put_sel("wire", "hex-and-truncated", 0x20, &b);

	bc_buf_init(&v, SEED_MAX);
	if (read_vector("p2-request.bin", &v) == 0)
		put_sel("wire", "p2-request", 0x80, &v);
	bc_buf_free(&v);
	bc_buf_free(&b);
}

/* --- fuzz_codec: byte 0 even = LZO, odd = zstd --------------------------- */

static void
seeds_codec(void)
{
	struct bc_buf z;
	char err[BC_ERRLEN], big[4096];
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = "int x;\n"[i % 7];

	bc_buf_init(&z, SEED_MAX);
	die_on(bc_lzo_compress(hello_i, sizeof(hello_i) - 1, &z, err), "lzo",
	    err);
	put_sel("codec", "lzo-text", 0x00, &z);
	bc_buf_reset(&z);
	die_on(bc_lzo_compress(big, sizeof(big), &z, err), "lzo", err);
	put_sel("codec", "lzo-repetitive", 0x02, &z);
	bc_buf_reset(&z);
	die_on(bc_lzo_compress("x", 1, &z, err), "lzo", err);
	put_sel("codec", "lzo-one-byte", 0x00, &z);

	bc_buf_reset(&z);
	die_on(bc_zstd_compress(hello_i, sizeof(hello_i) - 1, 3, &z, err),
	    "zstd", err);
	put_sel("codec", "zstd-text", 0x01, &z);
	bc_buf_reset(&z);
	die_on(bc_zstd_compress(big, sizeof(big), 19, &z, err), "zstd", err);
	put_sel("codec", "zstd-repetitive", 0x03, &z);
	bc_buf_reset(&z);
	die_on(bc_zstd_compress("x", 1, 1, &z, err), "zstd", err);
	put_sel("codec", "zstd-one-byte", 0x01, &z);
	bc_buf_free(&z);
}

/* --- fuzz_proto: requests and replies of protocols 1, 2 and BOLT --------- */

static void
seeds_proto(void)
{
	static const char *const args[] = { "cc", "-O2", "-DNAME=\"x y\"",
	    "-c", "hello.c", "-o", "hello.o", NULL };
	static const char *const vectors[] = { "p1-request.bin",
	    "p1-reply.bin", "p2-request.bin", "p2-reply.bin",
	    "p2-error-reply.bin", "p2-clang-request.bin", NULL };
	static const char key[] =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct bc_request req;
	struct bc_reply rep;
	struct bc_buf b;
	char err[BC_ERRLEN];
	size_t i;

	bc_buf_init(&b, SEED_MAX);
	for (i = 0; vectors[i] != NULL; i++) {
		bc_buf_reset(&b);
		if (read_vector(vectors[i], &b) == 0)
			put_buf("proto", vectors[i], &b);
	}

	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_COMPILE;
	req.flags = BC_FLAG_WANT_DIA | BC_FLAG_HIT_MARK;
	req.cwd = xstrdup("/home/u/src");
	req.identity = xstrdup(key);
	bc_strv_free(&req.argv);
	argv_of(&req.argv, args);
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "request", err);
	die_on(bc_proto_write_doti(&b, req.proto, hello_i,
	    sizeof(hello_i) - 1, err), "doti", err);
	put_buf("proto", "bolt-compile-request", &b);

	/* the same request in protocols 1 and 2 from our writer */
	req.proto = 2;
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "request", err);
	die_on(bc_proto_write_doti(&b, req.proto, hello_i,
	    sizeof(hello_i) - 1, err), "doti", err);
	put_buf("proto", "dist2-request", &b);

	/* replies to it: BOLT success with diagnostics, BOLT failure */
	req.proto = BC_PROTO_BOLT;
	bc_reply_init(&rep);
	rep.proto = BC_PROTO_BOLT;
	(void)bc_buf_put_str(&rep.serr, "hello.c:1:1: warning: x [-Wx]\n");
	(void)bc_buf_put(&rep.doto, "\x7f" "ELF\x02\x01\x01\0\0\0", 10);
	(void)bc_buf_put(&rep.dia, "DIA\0\1\2", 6);
	bc_buf_reset(&b);
	die_on(bc_proto_write_reply(&b, &req, &rep, err), "reply", err);
	put_buf("proto", "bolt-reply", &b);
	bc_reply_free(&rep);
	bc_reply_init(&rep);
	rep.proto = BC_PROTO_BOLT;
	rep.status = 1 << 8;
	(void)bc_buf_put_str(&rep.serr, "hello.c:1: error: expected ';'\n");
	bc_buf_reset(&b);
	die_on(bc_proto_write_reply(&b, &req, &rep, err), "reply", err);
	put_buf("proto", "bolt-reply-failed", &b);
	bc_reply_free(&rep);

	bc_buf_reset(&b);
	die_on(bc_proto_write_error(&b, "busy: queue full", err), "eror", err);
	put_buf("proto", "bolt-error", &b);

	/* hello (odd length so fuzz_proto reads the BOLT reply as HELLO) */
	bc_request_free(&req);
	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_HELLO;
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "hello", err);
	put_buf("proto", "bolt-hello-request", &b);
	bc_buf_reset(&b);
	die_on(bc_proto_write_info(&b, "boltccd 1.0 cache=on", err), "info",
	    err);
	if (bc_buf_len(&b) % 2 == 0)
		die_on(bc_buf_put_u8(&b, '\n'), "info", "full");
	put_buf("proto", "bolt-info", &b);

	/* cache lookup and its two answers */
	req.kind = BC_RQST_LOOKUP;
	req.key = xstrdup(key);
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "lookup", err);
	put_buf("proto", "bolt-lookup-request", &b);
	bc_reply_init(&rep);
	rep.proto = BC_PROTO_BOLT;
	rep.miss = 1;
	bc_buf_reset(&b);
	die_on(bc_proto_write_reply(&b, &req, &rep, err), "miss", err);
	put_buf("proto", "bolt-lookup-miss", &b);
	rep.miss = 0;
	(void)bc_buf_put(&rep.doto, "\x7f" "ELF", 4);
	(void)bc_buf_put_str(&rep.dotd, hello_d);
	bc_buf_reset(&b);
	die_on(bc_proto_write_reply(&b, &req, &rep, err), "hit", err);
	put_buf("proto", "bolt-lookup-hit", &b);
	bc_reply_free(&rep);
	/* a lookup at the key's owner and its redirect */
	req.kind = BC_RQST_LOCATE;
	req.loc_host = xstrdup("10.0.0.2:3632");
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "locate", err);
	put_buf("proto", "bolt-locate-request", &b);
	bc_reply_init(&rep);
	rep.proto = BC_PROTO_BOLT;
	rep.locn = xstrdup("10.0.0.3:3632");
	bc_buf_reset(&b);
	die_on(bc_proto_write_reply(&b, &req, &rep, err), "locn", err);
	put_buf("proto", "bolt-locate-locn", &b);
	bc_reply_free(&rep);
	/* FLAG_ORIGIN: the client's origin in a LOCATE and a LOOKUPF, the
	 * storer's in a hit */
	req.flags = BC_FLAG_ORIGIN;
	req.origin = xstrdup("0123456789abcdef");
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "locate origin",
	    err);
	put_buf("proto", "bolt-locate-origin-request", &b);
	req.kind = BC_RQST_LOOKUPF;
	bc_buf_reset(&b);
	die_on(bc_proto_write_request_head(&b, &req, err), "lookupf", err);
	put_buf("proto", "bolt-lookupf-request", &b);
	{
		const void *z[5] = { NULL, NULL, NULL, NULL, NULL };
		size_t zn[5] = { 0, 0, 0, 0, 0 };

		bc_buf_reset(&b);
		die_on(bc_proto_write_reply_zstd(&b, &req, "fedcba9876543210",
		    z, zn, err), "hit origin", err);
		put_buf("proto", "bolt-lookup-hit-origin", &b);
	}
	bc_request_free(&req);
	bc_buf_free(&b);
}

/* --- fuzz_hosts ---------------------------------------------------------- */

static void
seeds_hosts(void)
{
	put_text("hosts", "localhost", "localhost/3");
	put_text("hosts", "tcp-forms", "127.0.0.1 127.0.0.1:4000/7 "
	    "127.0.0.1/7:4000 127.0.0.1=7");
	put_text("hosts", "options", "box/2,lzo box,cpp,lzo box,lzo,cpp "
	    "down.example,down gss.example,auth=host");
	put_text("hosts", "ssh", "@box user@box/5:/opt/bin/distccd,lzo");
	put_text("hosts", "ipv6", "[::1]:4000/3 [fe80::1%eth0]/2");
	put_text("hosts", "localslots", "--randomize --localslots=3 "
	    "--localslots_cpp/9 a/2 b c");
	put_text("hosts", "boltcc-opts", "build-1/8,bolt build-2:3700,distcc "
	    "localhost/2");
	put_text("hosts", "file", "# hosts file\n"
	    "localhost/2   # the local machine\n"
	    "10.0.0.2/8,lzo\n\t10.0.0.3:3632/4,cpp,lzo\n");
	/* rejected lists (all or nothing) */
	put_text("hosts", "rejected-zeroconf", "+zeroconf a");
	put_text("hosts", "rejected-forms", "box,cpp a/0 box:notaport");
	put_text("hosts", "tcp-localhost", "localhost:4000 localhost,lzo");
}

/* --- fuzz_args: argv split on NUL ---------------------------------------- */

static void
put_argv(const char *name, const char *const *args)
{
	struct bc_buf b;

	bc_buf_init(&b, SEED_MAX);
	for (; *args != NULL; args++) {
		(void)bc_buf_put_str(&b, *args);
		if (args[1] != NULL)
			(void)bc_buf_put_u8(&b, 0);
	}
	put_buf("args", name, &b);
	bc_buf_free(&b);
}

static void
seeds_args(void)
{
	static const char *const gcc[] = { "gcc", "-c", "hello.c", "-o",
	    "hello.o", NULL };
	static const char *const gcc_md[] = { "x86_64-linux-gnu-gcc-12",
	    "-O2", "-g", "-Wall", "-Iinclude", "-I", "/opt/inc",
	    "-DVERSION=\"1.0\"", "-MD", "-MF", "obj/a.d", "-MT", "obj/a.o",
	    "-c", "src/a.c", "-o", "obj/a.o", NULL };
	static const char *const clang[] = { "clang++", "-std=c++17",
	    "-target", "x86_64-pc-linux-gnu", "-fPIC", "-include", "pch.h",
	    "-x", "c++", "-c", "w.cc", "-fcolor-diagnostics", "-o", "w.o",
	    NULL };
	static const char *const xcode[] = {
	    "/Applications/Xcode.app/Contents/Developer/Toolchains/"
	    "XcodeDefault.xctoolchain/usr/bin/clang", "-x", "objective-c",
	    "-target", "arm64-apple-macos13.0", "-fmessage-length=0",
	    "-fdiagnostics-show-note-include-stack", "-fmodules",
	    "-fmodules-cache-path=/Users/u/DerivedData/ModuleCache.noindex",
	    "-Wno-trigraphs", "-Werror=non-modular-include-in-framework-module",
	    "-isysroot", "/Applications/Xcode.app/Contents/Developer/Platforms/"
	    "MacOSX.platform/Developer/SDKs/MacOSX14.0.sdk",
	    "-iquote", "/Users/u/B/App-generated-files.hmap",
	    "-I", "/Users/u/B/App-own-target-headers.hmap",
	    "-ivfsoverlay", "/Users/u/B/all-product-headers.yaml",
	    "@/Users/u/B/Objects-normal/arm64/abc-common-args.resp",
	    "-MMD", "-MT", "dependencies", "-MF", "/Users/u/B/main.d",
	    "--serialize-diagnostics", "/Users/u/B/main.dia",
	    "-c", "/Users/u/src/main.m", "-o", "/Users/u/B/main.o",
	    "-index-unit-output-path", "/App.build/Debug/main.o", NULL };
	static const char *const local_pre[] = { "cc", "-E", "a.c", NULL };
	static const char *const link[] = { "cc", "-o", "prog", "a.o", "b.o",
	    "-lm", NULL };
	static const char *const multi[] = { "gcc", "-c", "a.c", "b.c", NULL };
	static const char *const rsp[] = { "gcc", "@args.rsp", "-c", "x.c",
	    NULL };
	static const char *const preproc[] = { "gcc", "-fpreprocessed", "-c",
	    "hello.i", "-o", "hello.o", NULL };
	static const char *const asm_[] = { "cc", "-S", "-march=native",
	    "a.c", NULL };
	/* the first half also feeds the response-file splitter */
	static const char *const quoting[] = { "cc", "-c", "'a b.c'",
	    "\"-DX=\\\"y\\\"\"", "c\\ d", "-o", "o.o", NULL };

	put_argv("gcc", gcc);
	put_argv("gcc-md", gcc_md);
	put_argv("clang-cxx", clang);
	put_argv("xcode-clang", xcode);
	put_argv("preprocess-only", local_pre);
	put_argv("link", link);
	put_argv("two-sources", multi);
	put_argv("response-file", rsp);
	put_argv("preprocessed", preproc);
	put_argv("assembly", asm_);
	put_argv("quoting", quoting);
}

/* --- fuzz_cache: byte 0 even = blob (bit 1: checksum recomputed), odd = .i */

static void
seeds_cache(void)
{
	struct bc_cache_entry e;
	struct bc_buf b, t;
	char err[BC_ERRLEN];

	bc_buf_init(&b, SEED_MAX);
	bc_cache_entry_init(&e);
	(void)bc_buf_put_str(&e.serr, "hello.c:3:5: warning: unused [-Wx]\n");
	(void)bc_buf_put(&e.obj, "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0",
	    16);
	(void)bc_buf_put_str(&e.dotd, hello_d);
	e.compile_ms = 1234;
	die_on(bc_cache_blob_encode(&e, 3, &b, err), "blob", err);
	put_sel("cache", "blob", 0x00, &b);
	/* the same with its checksum recomputed after each mutation */
	put_sel("cache", "blob-resum", 0x02, &b);
	bc_cache_entry_free(&e);

	bc_cache_entry_init(&e);
	bc_buf_reset(&b);
	die_on(bc_cache_blob_encode(&e, 1, &b, err), "blob", err);
	put_sel("cache", "blob-empty", 0x02, &b);
	bc_cache_entry_free(&e);

	bc_cache_entry_init(&e);
	(void)bc_buf_put_str(&e.sout, "note\n");
	(void)bc_buf_put(&e.dia, "DIA\0", 4);
	(void)bc_buf_put(&e.obj, "o", 1);
	bc_buf_reset(&b);
	die_on(bc_cache_blob_encode(&e, 1, &b, err), "blob", err);
	put_sel("cache", "blob-sout-dia", 0x00, &b);
	put_sel("cache", "blob-sout-dia-resum", 0x06, &b);
	bc_cache_entry_free(&e);

	bc_buf_init(&t, SEED_MAX);
	(void)bc_buf_put_str(&t, hello_i);
	put_sel("cache", "doti-gcc", 0x01, &t);
	bc_buf_reset(&t);
	(void)bc_buf_put_str(&t, "# 1 \"/src/a b.c\"\n"
	    "# 1 \"<built-in>\" 1\n# 1 \"<built-in>\" 3\n"
	    "# 1 \"/usr/include/stdio.h\" 1 3 4\n"
	    "#line 7 \"x\\\"y.h\"\nint a;\n# 12 \"/src/a b.c\" 2\n");
	put_sel("cache", "doti-clang", 0x03, &t);
	bc_buf_free(&t);
	bc_buf_free(&b);
}

/* --- fuzz_lex: C sources ------------------------------------------------- */

static void
seeds_lex(void)
{
	put_text("lex", "includes.c",
	    "#include <stdio.h>\n"
	    "#include \"hello.h\"\n"
	    "  #  include   <sys/types.h>  // trailing\n"
	    "#include_next <limits.h>\n"
	    "#import \"Foo/Foo.h\"\n"
	    "#define HDR \"cfg.h\"\n"
	    "#include HDR\n"
	    "#define CAT(a, b) <a##b.h>\n"
	    "#include CAT(std, int)\n"
	    "int main(void) { return 0; }\n");
	put_text("lex", "conditionals.c",
	    "#ifndef GUARD_H\n#define GUARD_H\n"
	    "#if defined(__linux__) && __GNUC__ >= 4\n"
	    "# include <features.h>\n"
	    "#elif __has_include(<os.h>)\n#include <os.h>\n"
	    "#else\n#error \"no os\"\n#endif\n"
	    "#ifdef X\n#undef X\n#endif\n"
	    "#pragma once\n#pragma GCC system_header\n"
	    "#line 40 \"gen.c\"\n#endif /* GUARD_H */\n");
	put_text("lex", "comments-strings.c",
	    "/* #include \"not-this.h\" */\n"
	    "const char *s = \"#include \\\"nor-this.h\\\"\";\n"
	    "char c = '\"';\n"
	    "// #include <no.h> \\\n   still a comment\n"
	    "#define LONG_MACRO(x) \\\n\tdo { \\\n\t\t(x)++; \\\n"
	    "\t} while (0)\n"
	    "/* multi\n * line\n */ #include \"after-comment.h\"\n"
	    "#include /* c */ <between.h>\n"
	    "R\"raw(#include <raw.h>)raw\";\n");
	put_text("lex", "crlf.c",
	    "#include \"a.h\"\r\n#if 1\r\n#include <b.h>\r\n#endif\r\n"
	    "?\?=include <trigraph.h>\n%:include <digraph.h>\n"
	    "#include\n#include <unterminated.h\n#include \"open");
}

/* --- fuzz_hmap ----------------------------------------------------------- */

static void
w32(uint8_t *p, uint32_t v, int be)
{
	int i;

	for (i = 0; i < 4; i++)
		p[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

static void
w16(uint8_t *p, uint16_t v, int be)
{
	p[be ? 1 : 0] = (uint8_t)v;
	p[be ? 0 : 1] = (uint8_t)(v >> 8);
}

struct hmap_ent {
	const char *key, *prefix, *suffix;
};

static uint32_t
hmap_hash(const char *k)
{
	uint32_t h = 0;

	for (; *k != '\0'; k++) {
		unsigned char c = (unsigned char)*k;

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		h += (uint32_t)c * 13u;
	}
	return h;
}

/* A header map as in the spec (shared/spec/xcode.md section 4). */
static void
make_hmap(const char *name, const struct hmap_ent *ents, size_t n,
    uint32_t nb, int be)
{
	uint8_t buf[2048];
	size_t tab, tlen = 1, i, maxval = 0;
	uint32_t h, b;

	memset(buf, 0, sizeof(buf));
	tab = 24 + (size_t)nb * 12;
	for (i = 0; i < n; i++) {
		const char *s[3] = { ents[i].key, ents[i].prefix,
		    ents[i].suffix };
		int j;

		h = hmap_hash(ents[i].key);
		for (b = h & (nb - 1); ; b = (b + 1) & (nb - 1)) {
			uint8_t *bk = buf + 24 + (size_t)b * 12;

			if (bk[0] == 0 && bk[1] == 0 && bk[2] == 0 &&
			    bk[3] == 0)
				break;
		}
		for (j = 0; j < 3; j++) {
			w32(buf + 24 + (size_t)b * 12 + 4 * (size_t)j,
			    (uint32_t)tlen, be);
			memcpy(buf + tab + tlen, s[j], strlen(s[j]) + 1);
			tlen += strlen(s[j]) + 1;
		}
		if (strlen(s[1]) + strlen(s[2]) > maxval)
			maxval = strlen(s[1]) + strlen(s[2]);
	}
	w32(buf, 0x686D6170u, be);
	w16(buf + 4, 1, be);
	w16(buf + 6, 0, be);
	w32(buf + 8, (uint32_t)tab, be);
	w32(buf + 12, (uint32_t)n, be);
	w32(buf + 16, nb, be);
	w32(buf + 20, (uint32_t)maxval, be);
	put_file("hmap", name, buf, tab + tlen);
}

static void
seeds_hmap(void)
{
	static const struct hmap_ent xcode[] = {
		{ "a.h", "/Users/u/src/", "a.h" },
		{ "Foo.h", "MyLib/", "Foo.h" },
		{ "MyLib/Foo.h", "/Users/u/src/MyLib/", "Foo.h" },
		{ "MyLib/Bar.h", "/Users/u/src/MyLib/include/", "Bar.h" },
	};
	static const struct hmap_ent one[] = { { "x", "/", "x" } };

	make_hmap("xcode-le", xcode, 4, 8, 0);
	make_hmap("xcode-be", xcode, 4, 8, 1);
	make_hmap("one-bucket", one, 1, 1, 0);
	make_hmap("empty-16", one, 0, 16, 0);
}

/* --- fuzz_pumpx: NFIL, the entries, then one FILE body ------------------- */

static void
seeds_pumpx(void)
{
	static const char *const args[] = { "gcc", "-c", "hello.c", "-o",
	    "hello.o", NULL };
	struct bc_strv av;
	struct bc_buf b, m;
	uint8_t hash[BC_HASH_LEN];
	char err[BC_ERRLEN];

	argv_of(&av, args);
	bc_buf_init(&b, SEED_MAX);
	bc_buf_init(&m, SEED_MAX);
	die_on(bc_proto3x_write_head(&b, 0, "/home/u/src", NULL, &av, 4, err), "head",
	    err);
	/* the head ends with the 12-byte NFIL header */
	(void)bc_buf_put(&m, bc_buf_data(&b) + bc_buf_len(&b) - 12, 12);
	bc_hash_bytes(hello_i, sizeof(hello_i) - 1, hash);
	die_on(bc_proto3x_write_hash(&m, "/home/u/src/hello.c", hash, err),
	    "hash", err);
	die_on(bc_proto3x_write_hash(&m, "/home/u/src/hello.h", hash, err),
	    "hash", err);
	die_on(bc_proto3x_write_link(&m, "/home/u/src/inc", "../inc2", err),
	    "link", err);
	die_on(bc_proto3x_write_dir(&m, "/home/u/src/inc2", err), "dir", err);
	die_on(bc_proto3x_write_body(&m, hello_i, sizeof(hello_i) - 1, err),
	    "body", err);
	put_buf("pumpx", "manifest-4-and-body", &m);

	bc_buf_reset(&b);
	bc_buf_reset(&m);
	die_on(bc_proto3x_write_head(&b, 0, "/", NULL, &av, 0, err), "head", err);
	(void)bc_buf_put(&m, bc_buf_data(&b) + bc_buf_len(&b) - 12, 12);
	die_on(bc_proto3x_write_body(&m, "", 0, err), "body", err);
	put_buf("pumpx", "manifest-0-empty-body", &m);

	bc_buf_reset(&b);
	bc_buf_reset(&m);
	die_on(bc_proto3x_write_head(&b, 0, "/", NULL, &av, 1, err), "head", err);
	(void)bc_buf_put(&m, bc_buf_data(&b) + bc_buf_len(&b) - 12, 12);
	die_on(bc_proto3x_write_link(&m, "/usr/include/x.h", "/abs/x.h", err),
	    "link", err);
	die_on(bc_proto3x_write_body(&m, "#define X 1\n", 12, err), "body",
	    err);
	put_buf("pumpx", "manifest-link", &m);
	bc_buf_free(&b);
	bc_buf_free(&m);
	bc_strv_free(&av);
}

/* --- fuzz_sshconfig: ssh config text; also the helper's target lines ----- */

static void
seeds_sshconfig(void)
{
	put_text("sshconfig", "config",
	    "# ~/.ssh/config\n"
	    "Host build-*.lan !build-9.lan\n"
	    "    HostName 10.0.0.%h\n"
	    "    User builder\n"
	    "    Port 2222\n"
	    "    IdentityFile ~/.ssh/id_ed25519\n"
	    "    IdentityFile \"~/.ssh/key with space\"\n"
	    "    UserKnownHostsFile ~/.ssh/known_hosts.d/%h\n"
	    "    StrictHostKeyChecking accept-new\n"
	    "    ConnectTimeout 5\n"
	    "Host *\n"
	    "    IdentityAgent SSH_AUTH_SOCK\n"
	    "    ServerAliveInterval 30\n");
	put_text("sshconfig", "config-equals",
	    "Host=build-1.lan\nHostname=build1.example.com\nuser = root\n"
	    "port=22\nStrictHostKeyChecking=no\n"
	    "Match host build-1.lan\n  User other\n"
	    "Include ~/.ssh/config.d/*\n\tIdentitiesOnly yes\r\n");

	/* Include: the files fuzz_sshconfig.c puts in its sandbox */
	put_text("sshconfig", "include",
	    "Include a.conf d/*.conf ~/.ssh/missing-*\n"
	    "Host build-1.lan other\n"
	    "  Include \"d/1.conf\" /etc/passwd ../x\n"
	    "Host nomatch\n  Include self.conf\n"
	    "Host *\n  User last\n");
	put_text("sshconfig", "include-self", "Host *\n  Include self.conf\n");
	put_text("sshconfig", "proxyjump",
	    "Host build-*\n  ProxyJump alice@bastion:2222,ssh://b2,[::1]:22\n"
	    "  ProxyCommand ssh -W %h:%p x\nHost *\n  ProxyJump none\n");

	/* the helper's request (bc_ssh_target_encode's key value lines) */
	put_text("sshconfig", "helper-target",
	    "alias build-1.lan\nhostname 10.0.0.1\nport 2222\nstrict 1\n"
	    "timeout 5000\nuser builder\ncommand boltccd --inetd\n"
	    "agent /run/user/1000/ssh-agent.sock\n"
	    "identity /home/u/.ssh/id_ed25519\n"
	    "known_hosts /home/u/.ssh/known_hosts\n");
	put_text("sshconfig", "helper-target-jump",
	    "alias farm\ncommand boltccd --inetd\nmux_command boltccd --mux\n"
	    "hostname 10.0.0.1\nport 22\nstrict 0\ntimeout 4000\n"
	    "user builder\nidentity /home/u/.ssh/id_ed25519\n"
	    "jump bastion\nj.hostname 192.0.2.1\nj.port 2022\nj.strict 2\n"
	    "j.timeout 4000\nj.user jumper\nj.known_hosts /home/u/kh\n"
	    "jump hop2\nj.hostname hop2\nj.user u\n");
}

/* --- fuzz_deps: .d files ------------------------------------------------- */

static void
seeds_deps(void)
{
	put_text("deps", "gcc-mmd",
	    "o.o: main.c a.h with\\ space.h dollar$$sign.h hash\\#mark.h \\\n"
	    " dir\\ one/b\\\\\\ c.h m.h\n");
	put_text("deps", "gcc-mp",
	    "obj/hello.o: hello.c hello.h /usr/include/stdio.h\n"
	    "\n"
	    "hello.h:\n"
	    "\n"
	    "/usr/include/stdio.h:\n");
	put_text("deps", "clang-mp",
	    "obj/hello.o: hello.c hello.h \\\n"
	    "  /usr/include/stdio.h\n"
	    "hello.h:\n"
	    "/usr/include/stdio.h:\n");
	put_text("deps", "multi-target",
	    "a.o b.o: x.c \\\n  y.h\nc.o: z.c\n");
	put_text("deps", "crlf", "a.o: a.c \\\r\n b.h\r\n");
}

/* --- fuzz_pathmap: stored stderr and .d with path tokens --------------- */

static void
seeds_pathmap(void)
{
	put_text("pathmap", "dotd-tokens",
	    "\0011\001/obj/x.o: \0010\001/x.c \0011\001/in\\ c/y.h \\\n"
	    " /usr/include/stdio.h\n");
	put_text("pathmap", "dotd-plain",
	    "/home/a/App/x.o: /home/a/App/x.c /home/a/My\\ App/y.h\n");
	put_text("pathmap", "stderr",
	    "/home/a/App/x.c:7:13: warning: unused variable 'u'\n"
	    "In file included from /home/a/My App/m.h:1:\n");
	put_text("pathmap", "bad-token", "a\0019\001b \0010");
}

/* --- fuzz_cfgfile -------------------------------------------------------- */

static void
seeds_cfgfile(void)
{
	put_text("cfgfile", "config",
	    "# boltcc configuration\n"
	    "BOLTCC_HOSTS = 10.0.0.2/8,bolt localhost/2\n"
	    "export DISTCC_IO_TIMEOUT=600\n"
	    "DISTCC_LOG='/tmp/boltcc log'\n"
	    "DISTCC_DIR=\"$HOME/.distcc\"\n"
	    "\n"
	    "   # indented comment\n"
	    "DEVELOPER_DIR=/Applications/Xcode.app/Contents/Developer\n");
	put_text("cfgfile", "rejected",
	    "PATH=/bin\nBOLTCC_CONFIG=/etc/x\n=novalue\nBOLTCC_HOSTS\n"
	    "DISTCC_HOSTS=\"unterminated\nBOLTCC_VERBOSE=1 # trailing\n"
	    "export  BOLTCC_X='a'\"b\"c\\ d\r\n");
}

/* --- fuzz_mux: byte 0 = chunk size - 1, then the client's byte stream ---- */

static void
seeds_mux(void)
{
	static const struct bc_mux_hello hello = { BC_MUX_VERSION,
	    BC_MUX_MAX_PAYLOAD, 8, BC_MUX_WINDOW };
	uint8_t credit[4] = { 0, 0, 0x10, 0 };
	struct bc_buf b;

	bc_buf_init(&b, SEED_MAX);
	(void)bc_mux_put_hello(&b, &hello);
	put_sel("mux", "hello-only", 0xff, &b);
	(void)bc_mux_put_frame(&b, BC_MUX_OPEN, 1, NULL, 0);
	(void)bc_mux_put_frame(&b, BC_MUX_DATA, 1, "DIST00000001ARGC00000001",
	    24);
	(void)bc_mux_put_frame(&b, BC_MUX_CREDIT, 1, credit, 4);
	(void)bc_mux_put_frame(&b, BC_MUX_EOF, 1, NULL, 0);
	(void)bc_mux_put_frame(&b, BC_MUX_OPEN, 2, NULL, 0);
	(void)bc_mux_put_frame(&b, BC_MUX_RESET, 2, "client gave up", 14);
	(void)bc_mux_put_frame(&b, BC_MUX_OPEN, 3, NULL, 0);
	(void)bc_mux_put_frame(&b, BC_MUX_DATA, 3, "x", 1);
	put_sel("mux", "streams", 0xff, &b);
	put_sel("mux", "streams-chunk7", 0x06, &b);
	(void)bc_mux_put_frame(&b, BC_MUX_GOAWAY, 0, "helper exiting", 14);
	put_sel("mux", "streams-goaway", 0x1f, &b);
	bc_buf_free(&b);
}

int
main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mkseeds SEEDDIR [SPECDIR]\n");
		return 2;
	}
	outdir = argv[1];
	specdir = argc > 2 ? argv[2] : NULL;
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkseeds: %s: %s\n", outdir, strerror(errno));
		return 1;
	}
	seeds_wire();
	seeds_codec();
	seeds_proto();
	seeds_hosts();
	seeds_args();
	seeds_cache();
	seeds_lex();
	seeds_hmap();
	seeds_pumpx();
	seeds_sshconfig();
	seeds_deps();
	seeds_pathmap();
	seeds_cfgfile();
	seeds_mux();
	return failed;
}
