/*
 * test_args.c - argument classification (client/args.c); response files
 * (client/rsp.c) are test_rsp.c's.
 *
 * Table-driven: every case of vectors/checks/SUMMARY.txt section B (also
 * re-derived from the captured distcc logs at test time), the Xcode corpus
 * of spec/xcode-invocations.txt, and boltcc's own rules.  The spec data
 * is in tests/data ($BOLTCC_SRCDIR/tests/data, or found relative to this
 * file); a test whose data is missing fails.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/args.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/util.h"
#include "tests/unit/unit.h"

/* ---- helpers ------------------------------------------------------- */

static void
classify(const char *cmd, struct bc_plan *p)
{
	struct bc_strv av;
	char err[BC_ERRLEN];

	bc_unit_split_rsp(cmd, &av);
	bc_plan_init(p);
	ck_assert_int_eq(bc_args_classify(&av, p, err), BC_OK);
	bc_strv_free(&av);
}

static int
strv_has(const struct bc_strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

static int
strv_has_prefix(const struct bc_strv *sv, const char *pfx)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (bc_str_has_prefix(sv->v[i], pfx))
			return 1;
	return 0;
}

/* Directory holding spec/ (tests/data in the source tree), or NULL. */
static char *
shared_dir(void)
{
	const char *src = getenv("BOLTCC_SRCDIR");
	char *d;
	struct stat st;

	if (src != NULL) {
		d = xasprintf("%s/tests/data", src);
		if (stat(d, &st) == 0)
			return d;
		free(d);
	}
	if (__FILE__[0] == '/') {
		char *f = xstrdup(__FILE__);
		char *slash = strrchr(f, '/');

		*slash = '\0';
		d = xasprintf("%s/../data", f);
		free(f);
		if (stat(d, &st) == 0)
			return d;
		free(d);
	}
	return NULL;
}

static char *
slurp(const char *path)
{
	struct bc_buf b;
	char err[BC_ERRLEN];
	char *s;

	bc_buf_init(&b, 16 << 20);
	if (bc_read_file(path, 16 << 20, &b, err) != BC_OK) {
		bc_buf_free(&b);
		return NULL;
	}
	s = xmalloc(bc_buf_len(&b) + 1);
	if (bc_buf_len(&b) > 0)
		memcpy(s, bc_buf_data(&b), bc_buf_len(&b));
	s[bc_buf_len(&b)] = '\0';
	bc_buf_free(&b);
	return s;
}

/* Next line of a mutable text (newline replaced by NUL), or NULL. */
static char *
next_line(char **cur)
{
	char *s = *cur, *nl;

	if (s == NULL || *s == '\0')
		return NULL;
	nl = strchr(s, '\n');
	if (nl != NULL) {
		*nl = '\0';
		*cur = nl + 1;
	} else {
		*cur = s + strlen(s);
	}
	return s;
}

/* ---- table-driven classification ----------------------------------- */

struct acase {
	const char *cmd;
	int remote;
	const char *reason;
	const char *remote_argv;	/* joined, or NULL: not checked */
	const char *cpp_argv;		/* joined, or NULL: not checked */
	const char *output;		/* NULL: not checked */
	const char *dep_file;		/* NULL: no .d wanted (remote rows) */
	const char *lang;		/* NULL: not checked */
	int preprocessed;
};

static const struct acase cases[] = {
	/* SUMMARY.txt section B, in order (argv[0] gcc: the rewrite to
	 * x86_64-linux-gnu-gcc is the runner's business) */
	{ "gcc -c hello.c -o hello.o", 1, "distributable",
	    "gcc -c hello.c -o hello.o", "gcc hello.c -E", "hello.o", NULL,
	    "c", 0 },
	{ "gcc -c hello.c", 1, "distributable",
	    "gcc -c hello.c -o hello.o", "gcc hello.c -E", "hello.o", NULL,
	    "c", 0 },
	/* distcc sends -S remotely; boltcc runs it locally (issue rule) */
	{ "gcc -S hello.c -o hello.s", 0, "-S", NULL, NULL, "hello.s", NULL,
	    "c", 0 },
	{ "gcc -E hello.c -o hello.i2", 0, "-E", NULL, NULL, NULL, NULL, NULL,
	    0 },
	{ "gcc -M hello.c", 0, "-M", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -MD -MF hello.d -c hello.c -o hello.o", 1, "distributable",
	    "gcc -c hello.c -o hello.o",
	    "gcc -MD -MF hello.d hello.c -E -MQ hello.o", "hello.o", "hello.d",
	    "c", 0 },
	{ "gcc -march=native -c hello.c -o hello.o", 0, "-march=native", NULL,
	    NULL, NULL, NULL, NULL, 0 },
	{ "gcc -flto -c hello.c -o hello.o", 0, "-flto", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc --coverage -c hello.c -o hello.o", 0, "coverage", NULL, NULL,
	    NULL, NULL, NULL, 0 },
	{ "gcc -x assembler-with-cpp -c hello.c -o hello.o", 0, "language",
	    NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -x c -c hello.c -o hello.o", 1, "distributable",
	    "gcc -x cpp-output -c hello.c -o hello.o", "gcc -x c hello.c -E",
	    "hello.o", NULL, "c", 0 },
	{ "gcc hello.c -o hello", 0, "link", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c hello.c broken.c", 0, "multiple inputs", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -c hello.c -o -", 0, "output to stdout", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -c conftest.c -o conftest.o", 0, "conftest", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -c foo.s -o foo.o", 0, "assembler source", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -Wa,-adhln -c hello.c -o hello.o", 0, "-Wa listing", NULL, NULL,
	    NULL, NULL, NULL, 0 },
	{ "gcc -specs=foo.specs -c hello.c -o hello.o", 0, "-specs", NULL,
	    NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c hello.i -o hello.o", 1, "distributable",
	    "gcc -c hello.i -o hello.o", "", "hello.o", NULL, "c", 1 },
	{ "gcc -DFOO=1 -I. -include hello.h -MD -MF x.d -MMD -MF y.d -L/x -lm "
	    "-c hello.c -o hello.o", 1, "distributable",
	    "gcc -c hello.c -o hello.o",
	    "gcc -DFOO=1 -I. -include hello.h -MD -MF x.d -MMD -MF y.d -L/x "
	    "-lm hello.c -E -MQ hello.o", "hello.o", "y.d", "c", 0 },

	/* compiler path */
	{ "/usr/bin/gcc -c a.c", 1, "distributable", "gcc -c a.c -o a.o",
	    "/usr/bin/gcc a.c -E", "a.o", NULL, "c", 0 },
	/* local-only modes */
	{ "clang -cc1 -triple x86_64 -emit-obj -o a.o a.c", 0,
	    "clang -cc1 frontend job", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "clang --analyze -c a.m -o a.plist", 0, "--analyze", NULL, NULL,
	    NULL, NULL, NULL, 0 },
	{ "clang -fsyntax-only -c a.c", 0, "-fsyntax-only", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "clang -v -E -dM -arch arm64 -isysroot /SDK -x objective-c -c "
	    "/dev/null", 0, "-E", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c a.c -MM", 0, "-MM", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc", 0, "no arguments", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -### -c a.c", 0, "-###", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc --version", 0, "query", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c a.c -print-file-name=x", 0, "query", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -dumpmachine", 0, "query", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -v", 0, "link", NULL, NULL, NULL, NULL, NULL, 0 },
	/* precompiled headers */
	{ "clang -x objective-c-header -c Prefix.pch -o X.pch.pch", 0,
	    "precompiled header", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -x c++-header -c a.hpp", 0, "precompiled header", NULL, NULL,
	    NULL, NULL, NULL, 0 },
	{ "gcc -c foo.h", 0, "precompiled header", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -c a.c -o a.h.gch", 0, "precompiled header", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	/* machine- and profile-dependent */
	{ "gcc -mtune=native -c a.c", 0, "-mtune=native", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -mcpu=native -c a.c", 0, "-mcpu=native", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "clang -flto=thin -c a.c", 0, "-flto", NULL, NULL, NULL, NULL, NULL,
	    0 },
	{ "gcc -fprofile-arcs -c a.c", 0, "coverage", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -ftest-coverage -c a.c", 0, "coverage", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -fprofile-generate=/p -c a.c", 0, "coverage", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -fprofile-use -c a.c", 0, "coverage", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -fauto-profile=x -c a.c", 0, "coverage", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -fprofile-correction -c a.c", 0, "coverage", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -frepo -c a.c", 0, "coverage", NULL, NULL, NULL, NULL, NULL, 0 },
	/* clang source-based coverage: remote, in BOLT pump mode only
	 * (test_args_pump_only), and so is profile use (the profile is
	 * shipped with the headers) */
	{ "clang -fprofile-instr-generate -fcoverage-mapping -c a.c", 1,
	    "distributable", "clang -fprofile-instr-generate -fcoverage-mapping "
	    "-c a.c -o a.o", "clang -fprofile-instr-generate -fcoverage-mapping "
	    "a.c -E", "a.o", NULL, "c", 0 },
	{ "clang -fprofile-instr-use=x.profdata -c a.c", 1, "distributable",
	    "clang -fprofile-instr-use=x.profdata -c a.c -o a.o",
	    "clang -fprofile-instr-use=x.profdata a.c -E", "a.o", NULL, "c",
	    0 },
	{ "gcc -fplugin=/x.so -c a.c", 0, "-fplugin", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -drtl -c a.c", 0, "-dr", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -save-temps=obj -c a.c", 0, "-save-temps", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -fdump-tree-all -c a.c", 0, "-fdump", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "clang -Xclang -ast-dump -c a.c", 0, "-Xclang", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -gsplit-dwarf -c a.c", 0, "extra output file", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "gcc -Wa,--MD,x.d -c a.c", 0, "-Wa listing", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	/* harmless -Wa is kept */
	{ "gcc -Wa,--noexecstack -c a.c -o a.o", 1, "distributable",
	    "gcc -Wa,--noexecstack -c a.c -o a.o", NULL, "a.o", NULL, "c", 0 },
	/* inputs */
	{ "gcc -c tmp.conftest.c", 0, "conftest", NULL, NULL, NULL, NULL, NULL,
	    0 },
	{ "gcc -c sub/conftest.cpp", 0, "conftest", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -c myconftest.c", 1, "distributable", NULL, NULL, "myconftest.o",
	    NULL, "c", 0 },
	{ "gcc -c a.S", 0, "assembler source", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c a.sx", 0, "assembler source", NULL, NULL, NULL, NULL, NULL,
	    0 },
	{ "gcc -c a.f90", 0, "unknown input", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c a.c b.o", 0, "multiple inputs", NULL, NULL, NULL, NULL, NULL,
	    0 },
	{ "gcc -c", 0, "no input", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -x c -c -", 0, "stdin input", NULL, NULL, NULL, NULL, NULL, 0 },
	{ "gcc -c a.c -o", 0, "bad arguments", NULL, NULL, NULL, NULL, NULL,
	    0 },
	{ "gcc -c a.c @missing.rsp", 0, "response file", NULL, NULL, NULL, NULL,
	    NULL, 0 },
	{ "gcc -c a.c -o a.o -o b.o", 0, "multiple outputs", NULL, NULL, NULL,
	    NULL, NULL, 0 },
	{ "clang -arch x86_64 -arch arm64 -c a.c -o a.o", 0, "multiple -arch",
	    NULL, NULL, NULL, NULL, NULL, 0 },
	{ "clang -arch arm64 -c a.c -o a.o", 1, "distributable",
	    "clang -arch arm64 -c a.c -o a.o", "clang -arch arm64 a.c -E",
	    "a.o", NULL, "c", 0 },
	{ "gcc -x c -c a.c -x none b.o", 0, "multiple inputs", NULL, NULL,
	    NULL, NULL, NULL, 0 },
	{ "gcc -x c -c notes.txt", 1, "distributable",
	    "gcc -x cpp-output -c notes.txt -o notes.o", NULL, "notes.o", NULL,
	    "c", 0 },
	/* languages by extension */
	{ "g++ -c a.cc", 1, "distributable", NULL, NULL, "a.o", NULL, "c++", 0 },
	{ "g++ -c a.cpp", 1, "distributable", NULL, NULL, NULL, NULL, "c++", 0 },
	{ "g++ -c a.cxx", 1, "distributable", NULL, NULL, NULL, NULL, "c++", 0 },
	{ "g++ -c a.cp", 1, "distributable", NULL, NULL, NULL, NULL, "c++", 0 },
	{ "g++ -c a.c++", 1, "distributable", NULL, NULL, NULL, NULL, "c++", 0 },
	{ "g++ -c a.C", 1, "distributable", NULL, NULL, NULL, NULL, "c++", 0 },
	{ "g++ -c a.CPP", 1, "distributable", NULL, NULL, NULL, NULL, "c++", 0 },
	{ "g++ -c a.ii", 1, "distributable", "g++ -c a.ii -o a.o", "", NULL,
	    NULL, "c++", 1 },
	{ "clang -c a.m", 1, "distributable", NULL, NULL, NULL, NULL,
	    "objective-c", 0 },
	{ "clang -c a.mi", 1, "distributable", NULL, "", NULL, NULL,
	    "objective-c", 1 },
	{ "clang -c a.mm", 1, "distributable", NULL, NULL, NULL, NULL,
	    "objective-c++", 0 },
	{ "clang -c a.M", 1, "distributable", NULL, NULL, NULL, NULL,
	    "objective-c++", 0 },
	{ "clang -c a.mii", 1, "distributable", NULL, "", NULL, NULL,
	    "objective-c++", 1 },
	/* -x rewriting */
	{ "clang -x objective-c++ -c a.mm -o a.o", 1, "distributable",
	    "clang -x objective-c++-cpp-output -c a.mm -o a.o",
	    "clang -x objective-c++ a.mm -E", "a.o", NULL, "objective-c++", 0 },
	{ "clang -x objective-c -c a.m -o a.o", 1, "distributable",
	    "clang -x objective-c-cpp-output -c a.m -o a.o", NULL, NULL, NULL,
	    "objective-c", 0 },
	{ "g++ -xc++ -c a.cc", 1, "distributable",
	    "g++ -x c++-cpp-output -c a.cc -o a.o", "g++ -xc++ a.cc -E", NULL,
	    NULL, "c++", 0 },
	{ "gcc -x cpp-output -c a.i -o a.o", 1, "distributable",
	    "gcc -x cpp-output -c a.i -o a.o", "", NULL, NULL, "c", 1 },
	/* outputs */
	{ "gcc -c a.c -oobj/a.o", 1, "distributable", "gcc -c a.c -o obj/a.o",
	    "gcc a.c -E", "obj/a.o", NULL, "c", 0 },
	{ "gcc -c src/a.c", 1, "distributable", "gcc -c src/a.c -o a.o", NULL,
	    "a.o", NULL, "c", 0 },
	/* dependency files (spec 11, trap 14) */
	{ "gcc -MMD -c src/a.c -o obj/a.o", 1, "distributable",
	    "gcc -c src/a.c -o obj/a.o",
	    "gcc -MMD src/a.c -E -MF obj/a.d -MQ obj/a.o", "obj/a.o", "obj/a.d",
	    "c", 0 },
	{ "gcc -MD -c src/a.c", 1, "distributable", "gcc -c src/a.c -o a.o",
	    "gcc -MD src/a.c -E -MF a.d -MQ a.o", "a.o", "a.d", "c", 0 },
	{ "gcc -MD -MT tgt -c a.c -o out", 1, "distributable",
	    "gcc -c a.c -o out", "gcc -MD -MT tgt a.c -E -MF out.d", "out",
	    "out.d", "c", 0 },
	{ "gcc -MD -MQ tgt -MFx.d -c a.c -o o.dir/out.o", 1, "distributable",
	    "gcc -c a.c -o o.dir/out.o", "gcc -MD -MQ tgt -MFx.d a.c -E",
	    "o.dir/out.o", "x.d", "c", 0 },
	{ "gcc -Wp,-MD,.a.o.d -c a.c -o obj/a.o", 1, "distributable",
	    "gcc -c a.c -o obj/a.o", "gcc -MD -MF .a.o.d a.c -E -MQ obj/a.o",
	    "obj/a.o", ".a.o.d", "c", 0 },
	{ "gcc -Wp,-MMD,dep.d -c a.c", 1, "distributable", "gcc -c a.c -o a.o",
	    "gcc -MMD -MF dep.d a.c -E -MQ a.o", "a.o", "dep.d", "c", 0 },
	{ "gcc -Wp,-D_FORTIFY_SOURCE=2 -c a.c -o a.o", 1, "distributable",
	    "gcc -c a.c -o a.o", "gcc -Wp,-D_FORTIFY_SOURCE=2 a.c -E", "a.o",
	    NULL, "c", 0 },
	{ "gcc -MD -MP -MG -c a.c", 1, "distributable", "gcc -c a.c -o a.o",
	    "gcc -MD -MP -MG a.c -E -MF a.d -MQ a.o", NULL, "a.d", "c", 0 },
	{ "gcc -MD -c a.i -o a.o", 1, "distributable", "gcc -c a.i -o a.o", "",
	    NULL, NULL, "c", 1 },
	/* stripping (spec 8.5 and xcode.md 7 rule 4) */
	{ "clang -target arm64-apple-ios -isysroot /SDK --sysroot=/s -iquote q "
	    "-isystem s -isystemfoo -idirafter d -F fw -Ffw2 -iframework f3 "
	    "-I inc -Iinc2 -D X -DY -U Z -UW -include p.h -imacros m.h "
	    "-iprefix p -iwithprefix w -iwithprefixbefore wb -c a.c -o a.o", 1,
	    "distributable",
	    "clang -target arm64-apple-ios -isysroot /SDK --sysroot=/s -c a.c "
	    "-o a.o", NULL, NULL, NULL, "c", 0 },
	{ "clang -Xanalyzer -analyzer-disable-all-checks -mllvm -x -c a.c -o "
	    "a.o", 1, "distributable",
	    "clang -Xanalyzer -analyzer-disable-all-checks -mllvm -x -c a.c -o "
	    "a.o", NULL, NULL, NULL, "c", 0 },
	{ "clang++ -stdlib=libc++ -nostdinc -nostdinc++ -undef -Xpreprocessor "
	    "-foo -Wl,-z,now -L/lib -l m -c a.cc -o a.o", 1, "distributable",
	    "clang++ -c a.cc -o a.o", NULL, NULL, NULL, "c++", 0 },
	{ "clang -fmodules -fmodules-cache-path=/x -fmodule-map-file=/m "
	    "-gmodules -fbuild-session-file=/s "
	    "-fmodules-validate-once-per-build-session "
	    "-fmodules-prune-interval=1 -fmodules-prune-after=2 "
	    "-fmodule-name=M -fcxx-modules -c a.m -o a.o", 1, "distributable",
	    "clang -fmodule-name=M -fcxx-modules -c a.m -o a.o",
	    "clang -fmodules -fmodules-cache-path=/x -fmodule-map-file=/m "
	    "-gmodules -fbuild-session-file=/s "
	    "-fmodules-validate-once-per-build-session "
	    "-fmodules-prune-interval=1 -fmodules-prune-after=2 "
	    "-fmodule-name=M -fcxx-modules a.m -E", "a.o", NULL,
	    "objective-c", 0 },
	{ "clang -x objective-c -ivfsstatcache s.cache -fmessage-length=0 "
	    "-fcolor-diagnostics -index-store-path /idx -ivfsoverlay v.yaml "
	    "-MMD -MT dependencies -MF /o/a.d --serialize-diagnostics /o/a.dia "
	    "-c /src/a.m -o /o/a.o -index-unit-output-path /a.o", 1,
	    "distributable",
	    "clang -x objective-c-cpp-output -fmessage-length=0 "
	    "-fcolor-diagnostics -c /src/a.m -o /o/a.o",
	    "clang -x objective-c -fmessage-length=0 -fcolor-diagnostics "
	    "-ivfsoverlay v.yaml -MMD -MT dependencies -MF /o/a.d /src/a.m -E",
	    "/o/a.o", "/o/a.d", "objective-c", 0 },
};

START_TEST(test_cases)
{
	const struct acase *c = &cases[_i];
	struct bc_plan p;
	char *s;

	classify(c->cmd, &p);
	ck_assert_msg(p.remote == c->remote, "'%s': remote=%d (%s: %s)",
	    c->cmd, p.remote, p.reason, p.detail);
	ck_assert_msg(strcmp(p.reason, c->reason) == 0,
	    "'%s': reason '%s', want '%s'", c->cmd, p.reason, c->reason);
	ck_assert_ptr_nonnull(p.detail);
	ck_assert_ptr_nonnull(p.compiler);
	if (c->remote_argv != NULL) {
		s = bc_unit_join(&p.remote_argv);
		ck_assert_msg(strcmp(s, c->remote_argv) == 0,
		    "'%s': remote_argv '%s'", c->cmd, s);
		free(s);
	}
	if (c->cpp_argv != NULL) {
		s = bc_unit_join(&p.cpp_argv);
		ck_assert_msg(strcmp(s, c->cpp_argv) == 0,
		    "'%s': cpp_argv '%s'", c->cmd, s);
		free(s);
	}
	if (c->output != NULL) {
		ck_assert_ptr_nonnull(p.output);
		ck_assert_str_eq(p.output, c->output);
	}
	if (c->lang != NULL) {
		ck_assert_ptr_nonnull(p.lang);
		ck_assert_str_eq(p.lang, c->lang);
		ck_assert_int_eq(p.preprocessed, c->preprocessed);
	}
	if (c->remote) {
		ck_assert_ptr_nonnull(p.source);
		ck_assert_ptr_nonnull(p.output);
		/* the daemon always finds an explicit -o */
		ck_assert(strv_has(&p.remote_argv, "-o"));
		ck_assert(strv_has(&p.remote_argv, p.source));
		if (!p.preprocessed) {
			ck_assert_str_eq(p.cpp_argv.v[0], p.compiler);
			ck_assert(strv_has(&p.cpp_argv, "-E"));
			ck_assert(!strv_has(&p.cpp_argv, "-c"));
			ck_assert(!strv_has(&p.cpp_argv, "-o"));
		} else {
			ck_assert_uint_eq(p.cpp_argv.n, 0);
		}
		if (c->dep_file != NULL) {
			ck_assert_int_eq(p.dep_wanted, 1);
			ck_assert_str_eq(p.dep_file, c->dep_file);
		} else {
			ck_assert_int_eq(p.dep_wanted, 0);
		}
	} else {
		ck_assert_uint_eq(p.remote_argv.n, 0);
		ck_assert_uint_eq(p.cpp_argv.n, 0);
	}
	bc_plan_free(&p);
	ck_assert_ptr_null(p.compiler);
}
END_TEST

/* clang source-based coverage may leave only in BOLT pump mode */
START_TEST(test_pump_only)
{
	struct bc_plan p;
	char *json;

	classify("clang -O1 -fprofile-instr-generate -fcoverage-mapping -g "
	    "-c a.c -o a.o", &p);
	ck_assert_int_eq(p.remote, 1);
	ck_assert_str_eq(p.pump_only, "coverage");
	ck_assert(strv_has(&p.remote_argv, "-fprofile-instr-generate"));
	ck_assert(strv_has(&p.remote_argv, "-fcoverage-mapping"));
	json = bc_plan_to_json(&p);
	ck_assert_ptr_nonnull(strstr(json, "\"pump_only\":\"coverage\""));
	free(json);
	bc_plan_free(&p);

	classify("clang -fprofile-instr-generate=/tmp/p-%p.profraw -c a.c", &p);
	ck_assert_int_eq(p.remote, 1);
	ck_assert_str_eq(p.pump_only, "coverage");
	bc_plan_free(&p);

	classify("clang -fcoverage-mapping -c a.c", &p);
	ck_assert_str_eq(p.pump_only, "coverage");
	bc_plan_free(&p);

	/* any mode */
	classify("clang -O2 -g -c a.c", &p);
	ck_assert_int_eq(p.remote, 1);
	ck_assert_ptr_null(p.pump_only);
	json = bc_plan_to_json(&p);
	ck_assert_ptr_nonnull(strstr(json, "\"pump_only\":null"));
	free(json);
	bc_plan_free(&p);

	/* profile use: pump only, with the profile's path (the last one;
	 * the bare option reads default.profdata) */
	classify("clang -fprofile-instr-use=x -fprofile-instr-use=y.prof "
	    "-c a.c", &p);
	ck_assert_int_eq(p.remote, 1);
	ck_assert_str_eq(p.pump_only, "profile-use");
	ck_assert_str_eq(p.profile_file, "y.prof");
	bc_plan_free(&p);
	classify("clang -fprofile-instr-use -c a.c", &p);
	ck_assert_str_eq(p.profile_file, "default.profdata");
	bc_plan_free(&p);
	/* a local rule wins over pump-only: still local */
	classify("clang -fprofile-instr-generate -fprofile-use=x "
	    "-c a.c", &p);
	ck_assert_int_eq(p.remote, 0);
	ck_assert_str_eq(p.reason, "coverage");
	bc_plan_free(&p);
	classify("gcc --coverage -fprofile-instr-generate -c a.c", &p);
	ck_assert_int_eq(p.remote, 0);
	bc_plan_free(&p);
	classify("clang -fprofile-instr-generate -fcoverage-mapping -S a.c",
	    &p);
	ck_assert_int_eq(p.remote, 0);
	ck_assert_str_eq(p.reason, "-S");
	bc_plan_free(&p);
}
END_TEST

START_TEST(test_plan_fields)
{
	struct bc_plan p;

	classify("clang -fmodules -c a.m --serialize-diagnostics a.dia", &p);
	ck_assert_int_eq(p.remote, 1);
	ck_assert_int_eq(p.modules, 1);
	ck_assert_str_eq(p.dia_file, "a.dia");
	ck_assert(!strv_has(&p.remote_argv, "a.dia"));
	ck_assert(!strv_has(&p.cpp_argv, "a.dia"));
	bc_plan_free(&p);

	classify("gcc -c a.c", &p);
	ck_assert_int_eq(p.modules, 0);
	ck_assert_ptr_null(p.dia_file);
	ck_assert_int_eq(p.dash_S, 0);
	bc_plan_free(&p);

	classify("gcc -S a.c", &p);
	ck_assert_int_eq(p.dash_S, 1);
	ck_assert_str_eq(p.output, "a.s");
	bc_plan_free(&p);

	/* a plan that was not initialised, and one that was freed */
	memset(&p, 0x5a, sizeof(p));
	{
		struct bc_strv av;
		char err[BC_ERRLEN];

		bc_unit_split_rsp("gcc -c b.c -o b.o", &av);
		ck_assert_int_eq(bc_args_classify(&av, &p, err), BC_OK);
		ck_assert_str_eq(p.source, "b.c");
		bc_plan_free(&p);
		ck_assert_int_eq(bc_args_classify(&av, &p, err), BC_OK);
		ck_assert_str_eq(p.output, "b.o");
		bc_strv_free(&av);
	}
	bc_plan_free(&p);

	/* empty argv */
	{
		struct bc_strv av = BC_STRV_INIT;
		char err[BC_ERRLEN];

		bc_plan_init(&p);
		ck_assert_int_eq(bc_args_classify(&av, &p, err), BC_OK);
		ck_assert_int_eq(p.remote, 0);
		ck_assert_str_eq(p.reason, "no arguments");
		bc_plan_free(&p);
	}
}
END_TEST

/* ---- JSON ----------------------------------------------------------- */

START_TEST(test_json)
{
	struct bc_plan p;
	struct bc_strv av = BC_STRV_INIT;
	char err[BC_ERRLEN];
	char *j;

	classify("gcc -c hello.c", &p);
	j = bc_plan_to_json(&p);
	ck_assert_str_eq(j, "{\"mode\":\"remote\",\"reason\":\"distributable\","
	    "\"detail\":\"compile hello.c to hello.o remotely\","
	    "\"compiler\":\"gcc\",\"source\":\"hello.c\",\"output\":\"hello.o\","
	    "\"lang\":\"c\",\"preprocessed\":false,\"modules\":false,"
	    "\"pump_only\":null,\"remote_argv\":[\"gcc\",\"-c\",\"hello.c\",\"-o\",\"hello.o\"],"
	    "\"cpp_argv\":[\"gcc\",\"hello.c\",\"-E\"],\"dep_file\":null,"
	    "\"dia_file\":null}");
	free(j);
	bc_plan_free(&p);

	classify("gcc hello.c -o hello", &p);
	j = bc_plan_to_json(&p);
	ck_assert_ptr_nonnull(strstr(j, "{\"mode\":\"local\",\"reason\":\"link\","));
	ck_assert_ptr_nonnull(strstr(j, "\"remote_argv\":[],\"cpp_argv\":[]"));
	free(j);
	bc_plan_free(&p);

	classify("gcc -MD -c a.c", &p);
	j = bc_plan_to_json(&p);
	ck_assert_ptr_nonnull(strstr(j, "\"dep_file\":\"a.d\""));
	free(j);
	bc_plan_free(&p);

	/* escaping: quotes, backslash, control bytes; UTF-8 passes */
	bc_strv_push(&av, "gcc");
	bc_strv_push(&av, "-DX=\"a\\b\"\n\t\r\x01\x1f\x7f\xc3\xa9");
	bc_strv_push(&av, "-c");
	bc_strv_push(&av, "a.c");
	bc_plan_init(&p);
	ck_assert_int_eq(bc_args_classify(&av, &p, err), BC_OK);
	j = bc_plan_to_json(&p);
	ck_assert_msg(strstr(j, "\"-DX=\\\"a\\\\b\\\"\\n\\t\\r\\u0001\\u001f"
	    "\\u007f\xc3\xa9\"") != NULL, "%s", j);
	free(j);
	bc_plan_free(&p);
	bc_strv_free(&av);

	/* a plan that was only initialised */
	bc_plan_init(&p);
	j = bc_plan_to_json(&p);
	ck_assert_ptr_nonnull(strstr(j, "\"compiler\":null"));
	free(j);
	bc_plan_free(&p);
}
END_TEST

/* ---- SUMMARY.txt B, re-derived from the captured distcc logs -------- */

START_TEST(test_summary_b_vectors)
{
	char *dir = shared_dir();
	char *summary, *line, *cur;
	int in_b = 0, checked = 0;

	if (dir == NULL) {
		ck_abort_msg("test_summary_b_vectors: "
		    "shared spec dir not found (the spec data is in tests/data)");
	}
	{
		char *path = xasprintf("%s/spec/vectors/checks/SUMMARY.txt",
		    dir);

		summary = slurp(path);
		free(path);
	}
	if (summary == NULL) {
		ck_abort_msg("test_summary_b_vectors: "
		    "no SUMMARY.txt (the spec data is in tests/data)");
	}
	cur = summary;
	while ((line = next_line(&cur)) != NULL) {
		char name[64], *logp, *log, *cmd, *nl, *res;
		const char *rm;
		size_t nlen;
		int want_remote;
		struct bc_plan p;

		if (strncmp(line, "== B.", 5) == 0) {
			in_b = 1;
			continue;
		}
		if (strncmp(line, "== C.", 5) == 0)
			break;
		if (!in_b || (rm = strstr(line, " remote=")) == NULL)
			continue;
		nlen = strcspn(line, " ");
		ck_assert_uint_lt(nlen, sizeof(name));
		memcpy(name, line, nlen);
		name[nlen] = '\0';
		want_remote = rm[8] == '1';

		logp = xasprintf("%s/spec/vectors/checks/B-%s.log", dir, name);
		log = slurp(logp);
		ck_assert_msg(log != NULL, "missing %s", logp);
		free(logp);
		cmd = strstr(log, "scanning arguments: ");
		ck_assert_ptr_nonnull(cmd);
		cmd += strlen("scanning arguments: ");
		nl = strchr(cmd, '\n');
		if (nl != NULL)
			*nl = '\0';
		classify(cmd, &p);
		if (strcmp(name, "dash-S") == 0)
			want_remote = 0;	/* boltcc: -S runs locally */
		ck_assert_msg(p.remote == want_remote, "B %s '%s': remote=%d "
		    "(%s)", name, cmd, p.remote, p.reason);
		res = strstr(line, "result: ");
		if (want_remote && res != NULL) {
			struct bc_strv want;
			char *w, *got;
			size_t i;

			res += strlen("result: ");
			w = strstr(res, " Warning:");
			if (w != NULL)
				*w = '\0';
			bc_unit_split_rsp(res, &want);
			/* argv[0]: distcc's rewrite; -x: boltcc's rewrite */
			free(want.v[0]);
			want.v[0] = xstrdup(p.remote_argv.v[0]);
			for (i = 0; i + 1 < want.n; i++)
				if (strcmp(want.v[i], "-x") == 0 &&
				    strcmp(want.v[i + 1], "c") == 0) {
					free(want.v[i + 1]);
					want.v[i + 1] = xstrdup("cpp-output");
				}
			w = bc_unit_join(&want);
			got = bc_unit_join(&p.remote_argv);
			ck_assert_msg(strcmp(w, got) == 0, "B %s: remote_argv "
			    "'%s', distcc sent '%s'", name, got, w);
			free(w);
			free(got);
			bc_strv_free(&want);
		}
		bc_plan_free(&p);
		free(log);
		checked++;
	}
	ck_assert_int_eq(checked, 20);
	free(summary);
	free(dir);
}
END_TEST

/* The exact ARGV of the captured strip-args request. */
START_TEST(test_strip_args_request)
{
	char *dir = shared_dir();
	char *path, *txt, *log, *cmd, *nl, *q;
	struct bc_strv want = BC_STRV_INIT;
	struct bc_plan p;
	size_t i;

	if (dir == NULL) {
		ck_abort_msg("test_strip_args_request: "
		    "shared spec dir not found (the spec data is in tests/data)");
	}
	path = xasprintf("%s/spec/vectors/checks/B-strip-args-request.txt",
	    dir);
	txt = slurp(path);
	free(path);
	path = xasprintf("%s/spec/vectors/checks/B-strip-args.log", dir);
	log = slurp(path);
	free(path);
	ck_assert_ptr_nonnull(txt);
	ck_assert_ptr_nonnull(log);

	for (q = txt; (q = strstr(q, "    body: '")) != NULL; ) {
		char *end;

		q += strlen("    body: '");
		end = strchr(q, '\'');
		ck_assert_ptr_nonnull(end);
		bc_strv_push_owned(&want, xstrndup(q, (size_t)(end - q)));
		q = end;
	}
	ck_assert_uint_eq(want.n, 5);
	ck_assert_str_eq(want.v[0], "x86_64-linux-gnu-gcc");

	cmd = strstr(log, "scanning arguments: ");
	ck_assert_ptr_nonnull(cmd);
	cmd += strlen("scanning arguments: ");
	nl = strchr(cmd, '\n');
	*nl = '\0';
	ck_assert_ptr_nonnull(strstr(cmd, "-include hello.h"));
	classify(cmd, &p);
	ck_assert_int_eq(p.remote, 1);
	ck_assert_uint_eq(p.remote_argv.n, want.n);
	ck_assert_str_eq(p.remote_argv.v[0], "gcc");
	for (i = 1; i < want.n; i++)
		ck_assert_str_eq(p.remote_argv.v[i], want.v[i]);
	bc_plan_free(&p);
	bc_strv_free(&want);
	free(txt);
	free(log);
	free(dir);
}
END_TEST

/* ---- Xcode corpus --------------------------------------------------- */

static const char *const xcode_banned_exact[] = {
	"-index-store-path", "-index-unit-output-path", "-ivfsstatcache",
	"-ivfsoverlay", "-iquote", "-include", "--serialize-diagnostics",
	"-MF", "-MT", "-MMD", "-MD", "-iframework", "-fmodules", "-gmodules",
	"-isystem", NULL
};
static const char *const xcode_banned_prefix[] = {
	"-I", "-F", "-D", "@", "-fmodules-cache-path=", "-fbuild-session-file=",
	"-fmodule-map-file=", "-fmodules-", NULL
};

struct xblock {
	int num;
	char step[32];
	char *resp_file;
	char *resp_content;	/* NULL: not printed in the log */
	char *line;
};

static void
xblock_clear(struct xblock *b)
{
	free(b->resp_file);
	free(b->resp_content);
	free(b->line);
	memset(b, 0, sizeof(*b));
}

static int
arg_value(const struct bc_strv *sv, const char *opt, const char **val)
{
	size_t i;

	for (i = 0; i + 1 < sv->n; i++)
		if (strcmp(sv->v[i], opt) == 0) {
			*val = sv->v[i + 1];
			return 1;
		}
	return 0;
}

static void
check_xblock(const struct xblock *b, const char *tmpd, int *nremote,
    int *nlocal)
{
	struct bc_strv raw, av = BC_STRV_INIT;
	struct bc_plan p;
	char err[BC_ERRLEN];
	const char *want_reason = NULL, *v, *dia;
	char *rsp_path = NULL;
	size_t i;
	int coverage;

	bc_unit_split_rsp(b->line, &raw);
	ck_assert_uint_gt(raw.n, 10);
	if (b->resp_file != NULL) {
		char *arg = xasprintf("@%s", b->resp_file);
		const char *body = b->resp_content != NULL ? b->resp_content : "";

		rsp_path = xasprintf("%s/block%d.resp", tmpd, b->num);
		ck_assert_int_eq(bc_write_file_atomic(rsp_path, body,
		    strlen(body), 0644, err), BC_OK);
		for (i = 0; i < raw.n; i++)
			if (strcmp(raw.v[i], arg) == 0) {
				free(raw.v[i]);
				raw.v[i] = xasprintf("@%s", rsp_path);
			}
		free(arg);
	}
	ck_assert_int_eq(bc_args_expand_rsp(&raw, &av, err), BC_OK);
	ck_assert(!strv_has_prefix(&av, "@"));
	if (b->resp_content != NULL)
		ck_assert_uint_gt(av.n, raw.n);

	bc_plan_init(&p);
	ck_assert_int_eq(bc_args_classify(&av, &p, err), BC_OK);

	/* gcc-style coverage stays local; clang's source-based coverage
	 * goes out, in BOLT pump mode only */
	coverage = strv_has(&av, "-fprofile-arcs") ||
	    strv_has(&av, "-ftest-coverage");
	if (strv_has_prefix(&av, "-fprofile-instr-generate") &&
	    strcmp(b->step, "ProcessPCH") != 0 && !coverage)
		ck_assert_msg(p.remote == 1 && p.pump_only != NULL &&
		    strcmp(p.pump_only, "coverage") == 0, "block %d: coverage "
		    "line: remote=%d (%s), pump_only %s", b->num, p.remote,
		    p.reason, p.pump_only != NULL ? p.pump_only : "NULL");
	if (strcmp(b->step, "ProcessPCH") == 0)
		want_reason = "precompiled header";
	else if (coverage)
		want_reason = "coverage";
	else
		ck_assert_str_eq(b->step, "CompileC");

	if (want_reason != NULL) {
		ck_assert_msg(p.remote == 0 && strcmp(p.reason, want_reason) == 0,
		    "block %d: remote=%d reason '%s', want local '%s'", b->num,
		    p.remote, p.reason, want_reason);
		(*nlocal)++;
		goto out;
	}
	ck_assert_msg(p.remote == 1, "block %d: local (%s: %s)", b->num,
	    p.reason, p.detail);
	(*nremote)++;
	for (i = 0; i < p.remote_argv.n; i++) {
		const char *a = p.remote_argv.v[i];
		size_t k;

		if (i > 0 && (strcmp(p.remote_argv.v[i - 1], "-o") == 0 ||
		    strcmp(p.remote_argv.v[i - 1], "-isysroot") == 0 ||
		    strcmp(p.remote_argv.v[i - 1], "-Xanalyzer") == 0 ||
		    strcmp(p.remote_argv.v[i - 1], "-c") == 0))
			continue;	/* a value, not an option */
		for (k = 0; xcode_banned_exact[k] != NULL; k++)
			ck_assert_msg(strcmp(a, xcode_banned_exact[k]) != 0,
			    "block %d: remote_argv has %s", b->num, a);
		for (k = 0; xcode_banned_prefix[k] != NULL; k++)
			ck_assert_msg(!bc_str_has_prefix(a,
			    xcode_banned_prefix[k]),
			    "block %d: remote_argv has %s", b->num, a);
	}
	/* -x LANG became -x LANG-cpp-output */
	ck_assert(arg_value(&p.remote_argv, "-x", &v));
	ck_assert_msg(bc_str_has_suffix(v, "cpp-output"), "block %d: -x %s",
	    b->num, v);
	/* source and output as the user named them */
	ck_assert(arg_value(&av, "-c", &v));
	ck_assert_str_eq(p.source, v);
	ck_assert(arg_value(&p.remote_argv, "-c", &v));
	ck_assert_str_eq(p.source, v);
	ck_assert(arg_value(&av, "-o", &v));
	ck_assert_str_eq(p.output, v);
	ck_assert(arg_value(&p.remote_argv, "-o", &v));
	ck_assert_str_eq(p.output, v);
	/* -isysroot / -target survive */
	if (strv_has(&av, "-isysroot"))
		ck_assert(strv_has(&p.remote_argv, "-isysroot"));
	if (strv_has(&av, "-target"))
		ck_assert(strv_has(&p.remote_argv, "-target"));
	/* the local -E keeps -MMD -MT dependencies -MF, drops the rest */
	ck_assert_str_eq(p.cpp_argv.v[p.cpp_argv.n - 1], "-E");
	ck_assert(strv_has(&p.cpp_argv, "-MMD"));
	ck_assert(arg_value(&p.cpp_argv, "-MT", &v));
	ck_assert_str_eq(v, "dependencies");
	ck_assert(!strv_has(&p.cpp_argv, "-MQ"));
	ck_assert(arg_value(&av, "-MF", &v));
	ck_assert_int_eq(p.dep_wanted, 1);
	ck_assert_str_eq(p.dep_file, v);
	for (i = 0; i < p.cpp_argv.n; i++) {
		const char *a = p.cpp_argv.v[i];

		ck_assert(strcmp(a, "-c") != 0 && strcmp(a, "-o") != 0 &&
		    strcmp(a, "--serialize-diagnostics") != 0 &&
		    strcmp(a, "-index-store-path") != 0 &&
		    strcmp(a, "-index-unit-output-path") != 0 &&
		    strcmp(a, "-ivfsstatcache") != 0 && a[0] != '@');
	}
	ck_assert(arg_value(&av, "--serialize-diagnostics", &dia));
	ck_assert_str_eq(p.dia_file, dia);
	ck_assert_int_eq(p.modules, strv_has(&av, "-fmodules"));
out:
	bc_plan_free(&p);
	bc_strv_free(&av);
	bc_strv_free(&raw);
	if (rsp_path != NULL) {
		unlink(rsp_path);
		free(rsp_path);
	}
}

START_TEST(test_xcode_corpus)
{
	char *dir = shared_dir();
	char *path, *text, *line, *cur, *tmpd;
	struct xblock b;
	char err[BC_ERRLEN];
	int nblocks = 0, nremote = 0, nlocal = 0, nresp = 0;

	if (dir == NULL) {
		ck_abort_msg("test_xcode_corpus: "
		    "shared spec dir not found (the spec data is in tests/data)");
	}
	path = xasprintf("%s/spec/xcode-invocations.txt", dir);
	text = slurp(path);
	free(path);
	free(dir);
	if (text == NULL) {
		ck_abort_msg("test_xcode_corpus: "
		    "no xcode-invocations.txt (the spec data is in tests/data)");
	}
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_args-", &tmpd, err),
	    BC_OK);
	memset(&b, 0, sizeof(b));
	cur = text;
	while ((line = next_line(&cur)) != NULL) {
		if (line[0] == '\0')
			continue;
		if (strncmp(line, "# [", 3) == 0) {
			xblock_clear(&b);
			b.num = (int)strtol(line + 3, NULL, 10);
		} else if (strncmp(line, "# step: ", 8) == 0) {
			size_t n = strcspn(line + 8, " |");

			ck_assert_uint_lt(n, sizeof(b.step));
			memcpy(b.step, line + 8, n);
			b.step[n] = '\0';
		} else if (strncmp(line, "# resp-file: ", 13) == 0) {
			b.resp_file = xstrdup(line + 13);
		} else if (strncmp(line, "# resp-content: ", 16) == 0) {
			if (line[16] != '(') {
				b.resp_content = xstrdup(line + 16);
				nresp++;
			}
		} else if (line[0] != '#' && b.num > 0) {
			b.line = xstrdup(line);
			check_xblock(&b, tmpd, &nremote, &nlocal);
			nblocks++;
			xblock_clear(&b);
		}
	}
	xblock_clear(&b);
	fprintf(stderr, "test_xcode_corpus: %d blocks (%d remote, %d local, "
	    "%d with response-file content)\n", nblocks, nremote, nlocal,
	    nresp);
	ck_assert_int_ge(nblocks, 24);
	ck_assert_int_ge(nremote, 20);
	ck_assert_int_ge(nresp, 6);
	ck_assert_int_eq(bc_rmtree(tmpd), BC_OK);
	free(tmpd);
	free(text);
}
END_TEST

/* Mutated command lines: classification never fails, plans are sane. */
START_TEST(test_classify_mutations)
{
	static const char golden[] = "clang -x objective-c -target arm64 "
	    "-MMD -MT dependencies -MF a.d --serialize-diagnostics a.dia "
	    "-Wp,-MD,b.d -I inc -c /src/a.m -o /o/a.o -fmodules";
	struct bc_strv words = BC_STRV_INIT;
	char err[BC_ERRLEN];
	size_t w, drop;

	bc_unit_split_rsp(golden, &words);
	/* drop each word, and each pair of words, in turn */
	for (drop = 0; drop < words.n * words.n; drop++) {
		struct bc_strv av = BC_STRV_INIT;
		struct bc_plan p;
		char *j;

		for (w = 0; w < words.n; w++)
			if (w != drop / words.n && w != drop % words.n)
				bc_strv_push(&av, words.v[w]);
		bc_plan_init(&p);
		ck_assert_int_eq(bc_args_classify(&av, &p, err), BC_OK);
		ck_assert_ptr_nonnull(p.reason);
		ck_assert_ptr_nonnull(p.detail);
		if (p.remote) {
			ck_assert_ptr_nonnull(p.source);
			ck_assert_ptr_nonnull(p.output);
			ck_assert_uint_gt(p.remote_argv.n, 3);
		}
		j = bc_plan_to_json(&p);
		ck_assert(j[0] == '{' && j[strlen(j) - 1] == '}');
		free(j);
		bc_plan_free(&p);
		bc_strv_free(&av);
	}
	bc_strv_free(&words);
}
END_TEST

/* The implicit "boltcc --opt ..." form: which --words are the driver's. */
START_TEST(test_driver_long_option)
{
	static const char *const yes[] = {
		"--std=c99", "--std", "--sysroot=/x", "--sysroot", "--param",
		"--output", "--output=x.o", "--help", "--help=warnings",
		"--target=arm64-apple-macos13", "--print-search-dirs",
		"--print-prog-name=ld", "--cuda-path=/c",
		"--offload-arch=gfx90a",
		"--serialize-diagnostics", "--coverage", "--analyze",
		"--driver-mode=g++", "--warn-unused", "--verbose", "--version",
		NULL
	};
	static const char *const no[] = {
		"--frobnicate", "--show-host", "--stat", "--", "-", "-c",
		"-std=c99", "--stdx", "--outputs", "--sysroots=/x", "--zero",
		"std=c99", "", "---std", NULL
	};
	size_t i;

	for (i = 0; yes[i] != NULL; i++)
		ck_assert_msg(bc_args_is_driver_long_option(yes[i]), "%s",
		    yes[i]);
	for (i = 0; no[i] != NULL; i++)
		ck_assert_msg(!bc_args_is_driver_long_option(no[i]), "%s",
		    no[i]);
}
END_TEST

static Suite *
args_suite(void)
{
	Suite *s = suite_create("args");
	TCase *tc = bc_tcase("classify", BC_TEST_TIMEOUT);

	tcase_add_loop_test(tc, test_cases, 0,
	    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_plan_fields);
	tcase_add_test(tc, test_pump_only);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_summary_b_vectors);
	tcase_add_test(tc, test_strip_args_request);
	tcase_add_test(tc, test_xcode_corpus);
	tcase_add_test(tc, test_classify_mutations);
	tcase_add_test(tc, test_driver_long_option);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return bc_unit_run(args_suite());
}
