/*
 * fakecc.c - a test compiler for scale runs of the farm (never installed).
 *
 * It behaves like a compiler as far as distribution is concerned, spends a
 * set time per compile and writes a deterministic object, so that many
 * hosts x slots can be simulated on a small machine.  A daemon runs it
 * only when allowlisted explicitly: boltccd --allow-compiler fakecc with
 * the directory of fakecc on the daemon's PATH (the client sends the
 * basename, as for every compiler); stock distccd needs a symlink
 * /usr/lib/distcc/fakecc -> the binary.
 *
 *   fakecc --version            one stable line, exit 0
 *   fakecc [flags] -E x.c [-o x.i]
 *                               "preprocess": the source text, unchanged,
 *                               preceded by a line "# fakecc-ms: N" when
 *                               -DFAKECC_MS=N is in argv (so the time
 *                               survives the trip to a host: the remote
 *                               argv has no -D).  #include is NOT
 *                               followed: each source stands alone.
 *   fakecc [flags] -c x.c|x.i [-o x.o]
 *                               "compile": sleep, then write the object.
 *
 * The time of one compile, in milliseconds, is the first of: -DFAKECC_MS=N
 * in argv, a "fakecc-ms: N" marker in the (preprocessed) source, the
 * environment variable FAKECC_MS, else 0; multiplied by FAKECC_SLOWDOWN
 * (a decimal factor, e.g. 2.5; set it in a daemon's environment to
 * simulate a slow host).  The time is slept, so 64 simulated slots fit
 * on two cores; FAKECC_BURN=1 spins the CPU instead.  FAKECC_TRACE=FILE
 * appends "START END" (monotonic microseconds) of each compile's time.
 *
 * The object is "FAKECC-OBJECT 1\n" followed by the SHA-256 (hex) of the
 * preprocessed text and a line of SHA-256 of the code-generation flags
 * (arguments starting with -O -g -f -m -std= -W, except -Wp, -Wl, and
 * the -f*-prefix-map= a daemon adds; these are the ones a remote compile
 * sees too), so a local and a farm
 * compile of the same job give identical bytes.  -MD/-MMD with -MF writes
 * a one-line .d ("target: source").  A source containing the marker
 * "fakecc-error" fails with a gcc-style diagnostic and status 1.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"

#define FAKECC_VERSION "fakecc 1.0 (boltcc test compiler)"
#define FAKECC_MAX_SOURCE (64L * 1024 * 1024)	/* bytes of one source */
#define FAKECC_MAX_MS 3600000LL			/* one hour */
#define FAKECC_MARKER "fakecc-ms:"

struct fakecc_args {
	int dash_E, dash_c, dep, version;
	const char *input, *output, *mf, *mt;
	long long ms_arg;		/* -DFAKECC_MS=N, -1 if absent */
	struct bc_hash flags;		/* code-generation flags */
};

static int
codegen_flag(const char *a)
{
	if (bc_str_has_prefix(a, "-Wp,") || bc_str_has_prefix(a, "-Wl,") ||
	    strstr(a, "-prefix-map=") != NULL)
		return 0;
	return bc_str_has_prefix(a, "-O") || bc_str_has_prefix(a, "-g") ||
	    bc_str_has_prefix(a, "-f") || bc_str_has_prefix(a, "-m") ||
	    bc_str_has_prefix(a, "-std=") || bc_str_has_prefix(a, "-W");
}

/* Options whose value is the next argument and is not a file we read. */
static int
takes_value(const char *a)
{
	static const char *const v[] = {
		"-D", "-U", "-I", "-include", "-isystem", "-iquote",
		"-idirafter", "-imacros", "-x", "-MQ", "-MT", "-MF",
		"--serialize-diagnostics", "-target", "-arch", NULL
	};
	size_t i;

	for (i = 0; v[i] != NULL; i++)
		if (strcmp(a, v[i]) == 0)
			return 1;
	return 0;
}

static int
parse_args(int argc, char **argv, struct fakecc_args *fa)
{
	int i;

	memset(fa, 0, sizeof(*fa));
	fa->ms_arg = -1;
	bc_hash_init(&fa->flags);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *d = NULL;

		if (strcmp(a, "--version") == 0) {
			fa->version = 1;
		} else if (strcmp(a, "-E") == 0) {
			fa->dash_E = 1;
		} else if (strcmp(a, "-c") == 0) {
			fa->dash_c = 1;
		} else if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0) {
			fa->dep = 1;
		} else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
			fa->output = argv[++i];
		} else if (bc_str_has_prefix(a, "-o") && a[2] != '\0') {
			fa->output = a + 2;
		} else if (strcmp(a, "-MF") == 0 && i + 1 < argc) {
			fa->mf = argv[++i];
		} else if ((strcmp(a, "-MT") == 0 || strcmp(a, "-MQ") == 0) &&
		    i + 1 < argc) {
			fa->mt = argv[++i];
		} else if (strcmp(a, "-D") == 0 && i + 1 < argc) {
			d = argv[++i];
		} else if (bc_str_has_prefix(a, "-D")) {
			d = a + 2;
		} else if (takes_value(a) && i + 1 < argc) {
			i++;
		} else if (a[0] == '-' && a[1] != '\0') {
			if (codegen_flag(a)) {
				bc_hash_update_str(&fa->flags, a);
				bc_hash_update(&fa->flags, "\n", 1);
			}
		} else {
			if (fa->input != NULL) {
				fprintf(stderr, "fakecc: error: more than one "
				    "input (%s, %s)\n", fa->input, a);
				return 1;
			}
			fa->input = a;
		}
		if (d != NULL && bc_str_has_prefix(d, "FAKECC_MS=") &&
		    bc_parse_int(d + 10, 0, FAKECC_MAX_MS, &fa->ms_arg)
		    != BC_OK) {
			fprintf(stderr, "fakecc: error: bad %s\n", d);
			return 1;
		}
	}
	return 0;
}

/* The "preprocessed" text of the input: marker line + source bytes. */
static int
preprocess(const struct fakecc_args *fa, struct bc_buf *out)
{
	char err[BC_ERRLEN];
	struct bc_buf src;
	const char *ext = bc_extension(fa->input);
	int already = ext != NULL && (strcmp(ext, ".i") == 0 ||
	    strcmp(ext, ".ii") == 0);

	bc_buf_init(&src, FAKECC_MAX_SOURCE);
	if (bc_read_file(fa->input, FAKECC_MAX_SOURCE, &src, err) != BC_OK) {
		fprintf(stderr, "fakecc: error: %s\n", err);
		bc_buf_free(&src);
		return 1;
	}
	if (!already && fa->ms_arg >= 0 &&
	    bc_buf_putf(out, "# " FAKECC_MARKER " %lld\n", fa->ms_arg)
	    != BC_OK) {
		bc_buf_free(&src);
		return 1;
	}
	if (bc_buf_put(out, bc_buf_data(&src), bc_buf_len(&src)) != BC_OK) {
		bc_buf_free(&src);
		return 1;
	}
	bc_buf_free(&src);
	return 0;
}

/* Find a bounded byte string in a buffer (the text may hold NULs). */
static const uint8_t *
find(const uint8_t *p, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; k <= n && i <= n - k; i++)
		if (memcmp(p + i, needle, k) == 0)
			return p + i;
	return NULL;
}

static long long
marker_ms(const struct bc_buf *text)
{
	const uint8_t *p = bc_buf_data(text);
	size_t n = bc_buf_len(text);
	const uint8_t *m = find(p, n, FAKECC_MARKER);
	long long v = 0;

	if (m == NULL)
		return -1;
	m += strlen(FAKECC_MARKER);
	while (m < p + n && *m == ' ')
		m++;
	while (m < p + n && *m >= '0' && *m <= '9' && v < FAKECC_MAX_MS)
		v = v * 10 + (*m++ - '0');
	return v;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
spend(long long ms)
{
	const char *sd = getenv("FAKECC_SLOWDOWN");
	const char *burn = getenv("FAKECC_BURN");
	double f = 1.0, total, end;

	if (sd != NULL && *sd != '\0') {
		char *e;
		double v = strtod(sd, &e);

		if (*e == '\0' && v > 0 && v < 1000)
			f = v;
	}
	total = (double)ms * f / 1000.0;
	if (total <= 0)
		return;
	end = now_s() + total;
	if (burn != NULL && strcmp(burn, "1") == 0) {
		volatile unsigned long x = 0;

		while (now_s() < end)
			for (int i = 0; i < 10000; i++)
				x += (unsigned long)i;
		(void)x;	/* read: clang warns of a sum set but unused */
		return;
	}
	for (;;) {
		double left = end - now_s();
		struct timespec ts;

		if (left <= 0)
			break;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		if (nanosleep(&ts, NULL) != 0 && errno != EINTR)
			break;
	}
}

/* FAKECC_TRACE=FILE: append "START END" (CLOCK_MONOTONIC, microseconds)
 * of the time spent, one write, so tests can see how many compiles
 * overlapped on a host. */
static void
trace(double t0, double t1)
{
	const char *path = getenv("FAKECC_TRACE");
	char line[64];
	int fd, n;

	if (path == NULL || *path == '\0')
		return;
	n = snprintf(line, sizeof(line), "%lld %lld\n",
	    (long long)(t0 * 1e6), (long long)(t1 * 1e6));
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

/* Default output: the source's basename with .o, in the cwd. */
static char *
default_output(const char *input)
{
	const char *b = bc_basename(input);
	const char *dot = strrchr(b, '.');
	size_t n = dot != NULL ? (size_t)(dot - b) : strlen(b);

	return xasprintf("%.*s.o", (int)n, b);
}

static int
write_out(const char *path, const void *p, size_t n)
{
	char err[BC_ERRLEN];

	if (bc_write_file_atomic(path, p, n, 0644, err) != BC_OK) {
		fprintf(stderr, "fakecc: error: %s\n", err);
		return 1;
	}
	return 0;
}

static int
write_deps(const struct fakecc_args *fa, const char *target)
{
	char *d;
	int r;

	if (!fa->dep || fa->mf == NULL)
		return 0;
	d = xasprintf("%s: %s\n", fa->mt != NULL ? fa->mt : target,
	    fa->input);
	r = write_out(fa->mf, d, strlen(d));
	free(d);
	return r;
}

static int
compile(struct fakecc_args *fa, const struct bc_buf *text)
{
	const char *env = getenv("FAKECC_MS");
	char th[BC_HASH_HEXLEN + 1], fh[BC_HASH_HEXLEN + 1];
	struct bc_hash h;
	long long ms = fa->ms_arg;
	char *obj, *out;
	double t0;
	int r;

	if (find(bc_buf_data(text), bc_buf_len(text), "fakecc-error")) {
		fprintf(stderr, "%s:1:1: error: fakecc-error marker\n",
		    fa->input);
		return 1;
	}
	if (ms < 0)
		ms = marker_ms(text);
	if (ms < 0 && env != NULL &&
	    bc_parse_int(env, 0, FAKECC_MAX_MS, &ms) != BC_OK)
		ms = -1;
	t0 = now_s();
	spend(ms > 0 ? ms : 0);
	trace(t0, now_s());

	bc_hash_init(&h);
	bc_hash_update(&h, bc_buf_data(text), bc_buf_len(text));
	bc_hash_final_hex(&h, th);
	bc_hash_free(&h);
	bc_hash_final_hex(&fa->flags, fh);
	obj = xasprintf("FAKECC-OBJECT 1\n%s\n%s\n", th, fh);
	out = fa->output != NULL ? xstrdup(fa->output) :
	    default_output(fa->input);
	r = write_out(out, obj, strlen(obj));
	if (r == 0)
		r = write_deps(fa, out);
	free(obj);
	free(out);
	return r;
}

int
main(int argc, char **argv)
{
	struct fakecc_args fa;
	struct bc_buf text;
	int r;

	if (parse_args(argc, argv, &fa) != 0) {
		bc_hash_free(&fa.flags);
		return 1;
	}
	if (fa.version) {
		printf("%s\n", FAKECC_VERSION);
		bc_hash_free(&fa.flags);
		return 0;
	}
	if (fa.input == NULL || (!fa.dash_E && !fa.dash_c)) {
		fprintf(stderr, "fakecc: error: usage: fakecc [flags] -E|-c "
		    "SOURCE [-o OUT] (linking is not simulated)\n");
		bc_hash_free(&fa.flags);
		return 1;
	}
	bc_buf_init(&text, FAKECC_MAX_SOURCE + 64);
	r = preprocess(&fa, &text);
	if (r == 0 && fa.dash_E) {
		if (fa.output != NULL)
			r = write_out(fa.output, bc_buf_data(&text),
			    bc_buf_len(&text));
		else if (fwrite(bc_buf_data(&text), 1, bc_buf_len(&text),
		    stdout) != bc_buf_len(&text) || fflush(stdout) != 0)
			r = 1;
		if (r == 0)
			r = write_deps(&fa, fa.output != NULL ? fa.output :
			    "-");
	} else if (r == 0) {
		r = compile(&fa, &text);
	}
	bc_buf_free(&text);
	bc_hash_free(&fa.flags);
	return r;
}
