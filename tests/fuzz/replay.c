/*
 * replay.c - a main() for the fuzz targets when they are not linked with
 * libFuzzer, so that every `make check` (normal and ASan+UBSan builds)
 * exercises each parser with its seed corpus and deterministic mutations
 * of it.  Linked with one target's unchanged LLVMFuzzerTestOneInput into
 * tests/fuzz/replay_<target>; the target name comes from
 * -DBC_REPLAY_TARGET="name", the default seed directory from
 * $BOLTCC_SRCDIR (or the configured source tree) + tests/fuzz/seeds/name.
 *
 * Usage:  replay_<target> [DIR]     seeds, mutations, random inputs
 *         replay_<target> FILE...   each file once, as is (reproducer)
 *
 * Inputs, in order: every seed as is; per seed, every truncation from the
 * end and from the start (sampled for long seeds), single bit flips of
 * every bit (sampled for long seeds), then BOLTCC_REPLAY_ITERS random
 * mutations (bit/byte changes, chunk delete/duplicate/insert, splices with
 * another seed, stacks of these); then BOLTCC_REPLAY_RANDOM inputs built
 * from nothing or from seed fragments.  All randomness comes from one
 * splitmix64 stream seeded by BOLTCC_REPLAY_SEED (printed), so a run is
 * reproducible.  Each input is copied into a malloc'd block of exactly its
 * size, so that ASan reports any read past its end.
 *
 * Exit 0 if every call returned.  A crash, abort, sanitizer report or hang
 * (BOLTCC_REPLAY_TIMEOUT seconds per input) saves the input as
 * replay_<target>-crash-N.bin in BOLTCC_REPLAY_OUT (default: the current
 * directory) and fails.  In ASan builds, an input that leaves memory
 * allocated gets a leak check, so a leak is saved as its input too.
 * See tests/fuzz/README.md.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef BC_REPLAY_TARGET
#error "compile with -DBC_REPLAY_TARGET='\"name\"'"
#endif
#ifndef BC_REPLAY_SRCDIR
#define BC_REPLAY_SRCDIR "."
#endif

#if defined(__SANITIZE_ADDRESS__)
#define REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_ASAN 1
#endif
#endif

#ifdef REPLAY_ASAN
/* sanitizer runtime interface (sanitizer/common_interface_defs.h,
 * sanitizer/lsan_interface.h), declared here to need no headers */
void __sanitizer_set_death_callback(void (*)(void));
int __sanitizer_install_malloc_and_free_hooks(
    void (*)(const volatile void *, size_t), void (*)(const volatile void *));
int __lsan_do_recoverable_leak_check(void);
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * UBSan findings must fail the run even where recovery was compiled in,
 * and must reach the SIGABRT handler below (GCC's libubsan does not call
 * ASan's death callback).  Read by the UBSan runtime; harmless without.
 */
const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

#define REPLAY_NAME		"replay_" BC_REPLAY_TARGET
#define REPLAY_DEFAULT_SEED	0x626f6c7463632d66ULL	/* "boltcc-f" */
#define REPLAY_DEFAULT_ITERS	500	/* random mutations per seed */
#define REPLAY_DEFAULT_RANDOM	500	/* inputs not from one seed */
#define REPLAY_DEFAULT_TIMEOUT	30	/* seconds per input */
#define REPLAY_MAX_SEEDS	256
#define REPLAY_MAX_SEED_LEN	(1024 * 1024)
#define REPLAY_SHORT		96	/* all truncations, flips up to */
#define REPLAY_SAMPLES		96	/* ... else this many of each */
#define REPLAY_MAX_CHUNK	64	/* bytes inserted, deleted, ... */
#define REPLAY_MAX_RANDOM_LEN	1024
#define REPLAY_MAX_LEAK_CHECKS	32	/* per run (heap scans) */

struct seed {
	char *name;
	uint8_t *data;
	size_t len;
};

static struct seed seeds[REPLAY_MAX_SEEDS];
static size_t nseeds;

/* The input being run, for the crash handlers. */
static const uint8_t *volatile cur_data;
static volatile size_t cur_len;
static const char *volatile cur_seed;
static const char *volatile cur_what;
static volatile unsigned long cur_index;
static volatile sig_atomic_t saving;
static uint64_t run_seed;
static const char *out_dir = ".";	/* NULL: do not save */
static unsigned long ninputs;
#ifdef REPLAY_ASAN
/*
 * Leaks: allocations minus frees while the target runs.  An input that
 * leaves more allocated than it found gets a leak check right away; as
 * every earlier input was balanced or checked, a leak found then is this
 * input's.  (A leak that frees as much as it allocates is still caught
 * by LSan at exit, but not attributed to an input.)
 */
static volatile int counting;
static volatile long live_delta;
static unsigned leak_checks;

static void
on_malloc(const volatile void *p, size_t n)
{
	if (counting)
		live_delta++;
}

static void
on_free(const volatile void *p)
{
	if (counting)
		live_delta--;
}
#endif

/* --- splitmix64 ---------------------------------------------------------- */

static uint64_t rng;

static uint64_t
rnd(void)
{
	uint64_t z;

	rng += 0x9e3779b97f4a7c15ULL;
	z = rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, n); n > 0 */
static size_t
rnd_below(size_t n)
{
	return (size_t)(rnd() % n);
}

/* --- crash reporting (async-signal-safe) --------------------------------- */

static void
say(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void
fmt_ulong(char *out, size_t outlen, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0 && n < sizeof(tmp));
	for (i = 0; i < n && i + 1 < outlen; i++)
		out[i] = tmp[n - 1 - i];
	out[i] = '\0';
}

static void
append(char *dst, size_t dstlen, const char *s)
{
	size_t n = strlen(dst);

	while (*s != '\0' && n + 1 < dstlen)
		dst[n++] = *s++;
	dst[n] = '\0';
}

/* Save the current input and say how to reproduce it. */
static void
save_current(const char *why)
{
	char path[4096], num[24];
	const uint8_t *p = cur_data;
	size_t left = cur_len;
	int fd;

	if (saving)
		return;
	saving = 1;
	say("\n" REPLAY_NAME ": ");
	say(why);
	if (p == NULL) {
		say(" outside any input (after all inputs returned)\n");
		return;
	}
	fmt_ulong(num, sizeof(num), cur_index);
	say(" on input #");
	say(num);
	say(" (");
	say(cur_what);
	if (cur_seed != NULL) {
		say(" of seed ");
		say(cur_seed);
	}
	fmt_ulong(num, sizeof(num), (unsigned long)cur_len);
	say(", ");
	say(num);
	say(" bytes)\n");
	if (out_dir == NULL)
		return;
	path[0] = '\0';
	append(path, sizeof(path), out_dir);
	append(path, sizeof(path), "/" REPLAY_NAME "-crash-");
	fmt_ulong(num, sizeof(num), cur_index);
	append(path, sizeof(path), num);
	append(path, sizeof(path), ".bin");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		say(REPLAY_NAME ": cannot write ");
		say(path);
		say("\n");
		return;
	}
	while (left > 0) {
		ssize_t w = write(fd, p, left);

		if (w <= 0)
			break;
		p += w;
		left -= (size_t)w;
	}
	close(fd);
	say(REPLAY_NAME ": input saved; reproduce with: tests/fuzz/"
	    REPLAY_NAME " ");
	say(path);
	say("\n");
}

static void
on_signal(int sig)
{
	save_current(sig == SIGALRM ? "TIMEOUT" : "CRASH (signal)");
	if (sig == SIGALRM)
		sig = SIGABRT;
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

#ifdef REPLAY_ASAN
static void
on_sanitizer_death(void)
{
	save_current("sanitizer report");
}
#endif

static void
catch_signals(void)
{
	struct sigaction sa;
#ifdef REPLAY_ASAN
	/* ASan reports SEGV/BUS/FPE itself and then calls the callback */
	static const int sigs[] = { SIGABRT, SIGALRM };

	__sanitizer_set_death_callback(on_sanitizer_death);
	(void)__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#else
	static const int sigs[] = { SIGABRT, SIGALRM, SIGSEGV, SIGBUS,
	    SIGFPE, SIGILL };
#endif
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* --- running one input --------------------------------------------------- */

static unsigned timeout_s = REPLAY_DEFAULT_TIMEOUT;

static void
run_one(const uint8_t *data, size_t len, const char *seed, const char *what)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL) {
		fprintf(stderr, REPLAY_NAME ": out of memory\n");
		exit(99);
	}
	if (len > 0)
		memcpy(copy, data, len);
	cur_index = ninputs++;
	cur_seed = seed;
	cur_what = what;
	cur_len = len;
	cur_data = copy;
	if (timeout_s > 0)
		alarm(timeout_s);
#ifdef REPLAY_ASAN
	live_delta = 0;
	counting = 1;
#endif
	(void)LLVMFuzzerTestOneInput(copy, len);
#ifdef REPLAY_ASAN
	counting = 0;
	if (live_delta > 0 && leak_checks < REPLAY_MAX_LEAK_CHECKS) {
		if (++leak_checks == REPLAY_MAX_LEAK_CHECKS)
			fprintf(stderr, REPLAY_NAME ": %d inputs kept memory; "
			    "leaks are left to the check at exit\n",
			    REPLAY_MAX_LEAK_CHECKS);
		if (__lsan_do_recoverable_leak_check() != 0) {
			save_current("LEAK");
			exit(1);
		}
	}
#endif
	cur_data = NULL;
	free(copy);
}

/* --- mutations ----------------------------------------------------------- */

struct mbuf {
	uint8_t *p;
	size_t len, cap;
};

static void
mbuf_reserve(struct mbuf *m, size_t len)
{
	if (len <= m->cap)
		return;
	m->cap = len + 256;
	m->p = realloc(m->p, m->cap);
	if (m->p == NULL) {
		fprintf(stderr, REPLAY_NAME ": out of memory\n");
		exit(99);
	}
}

static void
mbuf_set(struct mbuf *m, const uint8_t *p, size_t len)
{
	mbuf_reserve(m, len);
	if (len > 0)
		memcpy(m->p, p, len);
	m->len = len;
}

/* Insert n bytes at off (src may be NULL: filled by the caller). */
static uint8_t *
mbuf_open(struct mbuf *m, size_t off, size_t n)
{
	mbuf_reserve(m, m->len + n);
	memmove(m->p + off + n, m->p + off, m->len - off);
	m->len += n;
	return m->p + off;
}

static const uint8_t special[] = { 0x00, 0xff, 0x7f, 0x80, 0x01, 0x20,
    '\n', '\\', '"', ':', '0', 'f' };

/* A mutated copy of seed s (other: for splices); returns the op name. */
static const char *
mutate_once(struct mbuf *m, size_t s)
{
	const struct seed *o;
	size_t off, n, i;
	uint8_t *p;

	switch (rnd_below(m->len > 0 ? 10 : 2)) {
	case 0:	/* insert random bytes */
		n = 1 + rnd_below(REPLAY_MAX_CHUNK);
		p = mbuf_open(m, rnd_below(m->len + 1), n);
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)rnd();
		return "random insert";
	case 1:	/* splice: a prefix of this seed + a suffix of another */
		o = &seeds[rnd_below(nseeds)];
		if (o == &seeds[s] && nseeds > 1)
			o = &seeds[(s + 1) % nseeds];
		off = rnd_below(m->len + 1);
		n = rnd_below(o->len + 1);
		m->len = off;
		p = mbuf_open(m, off, o->len - n);
		if (o->len - n > 0)
			memcpy(p, o->data + n, o->len - n);
		return "splice";
	case 2:	/* one bit */
		m->p[rnd_below(m->len)] ^= (uint8_t)(1u << rnd_below(8));
		return "bit flip";
	case 3:	/* one byte to a value parsers care about */
		m->p[rnd_below(m->len)] = special[rnd_below(sizeof(special))];
		return "byte set";
	case 4:	/* one byte to anything */
		m->p[rnd_below(m->len)] = (uint8_t)rnd();
		return "random byte";
	case 5:	/* small arithmetic (lengths, counts, hex digits) */
		off = rnd_below(m->len);
		m->p[off] = (uint8_t)(m->p[off] + 1 + rnd_below(8) -
		    (rnd() & 1 ? 0 : 9));
		return "byte add";
	case 6:	/* delete a chunk */
		off = rnd_below(m->len);
		n = 1 + rnd_below(m->len - off < REPLAY_MAX_CHUNK ?
		    m->len - off : REPLAY_MAX_CHUNK);
		memmove(m->p + off, m->p + off + n, m->len - off - n);
		m->len -= n;
		return "chunk delete";
	case 7:	/* duplicate a chunk in place */
		off = rnd_below(m->len);
		n = 1 + rnd_below(m->len - off < REPLAY_MAX_CHUNK ?
		    m->len - off : REPLAY_MAX_CHUNK);
		p = mbuf_open(m, off, n);
		memcpy(p, p + n, n);
		return "chunk duplicate";
	case 8:	/* copy a chunk of the input elsewhere */
		off = rnd_below(m->len);
		n = 1 + rnd_below(m->len - off < REPLAY_MAX_CHUNK ?
		    m->len - off : REPLAY_MAX_CHUNK);
		i = rnd_below(m->len + 1);
		p = mbuf_open(m, i, n);
		memmove(p, m->p + (off >= i ? off + n : off), n);
		return "chunk copy";
	default: /* a run of one special byte */
		n = 1 + rnd_below(16);
		i = special[rnd_below(sizeof(special))];
		off = rnd_below(m->len);
		if (n > m->len - off)
			n = m->len - off;
		memset(m->p + off, (int)i, n);
		return "byte run";
	}
}

/* All inputs derived from seed s. */
static void
run_seed_batch(size_t s, unsigned long iters)
{
	const struct seed *sd = &seeds[s];
	struct mbuf m = { NULL, 0, 0 };
	size_t i, k, bits;
	unsigned long it;
	const char *what;

	/* truncations: all for short seeds, else sampled */
	if (sd->len <= REPLAY_SHORT) {
		for (i = 0; i < sd->len; i++) {
			run_one(sd->data, i, sd->name, "truncated end");
			run_one(sd->data + sd->len - i, i, sd->name,
			    "truncated start");
		}
	} else {
		for (k = 0; k < REPLAY_SAMPLES; k++) {
			i = rnd_below(sd->len);
			run_one(sd->data, i, sd->name, "truncated end");
			i = rnd_below(sd->len);
			run_one(sd->data + sd->len - i, i, sd->name,
			    "truncated start");
		}
	}
	/* single bit flips: all for short seeds, else sampled */
	bits = sd->len * 8;
	for (k = 0; k < bits && (sd->len <= REPLAY_SHORT ||
	    k < REPLAY_SAMPLES); k++) {
		i = sd->len <= REPLAY_SHORT ? k : rnd_below(bits);
		mbuf_set(&m, sd->data, sd->len);
		m.p[i / 8] ^= (uint8_t)(1u << (i % 8));
		run_one(m.p, m.len, sd->name, "bit flip");
	}
	/* random mutations, one or a stack of two to four */
	for (it = 0; it < iters; it++) {
		mbuf_set(&m, sd->data, sd->len);
		what = mutate_once(&m, s);
		if (rnd_below(4) == 0) {
			for (k = 1 + rnd_below(3); k > 0; k--)
				(void)mutate_once(&m, s);
			what = "stacked mutations";
		}
		if (m.len > REPLAY_MAX_SEED_LEN)
			m.len = REPLAY_MAX_SEED_LEN;
		run_one(m.p, m.len, sd->name, what);
	}
	free(m.p);
}

/* Inputs from nothing: random bytes, seed bytes, seed fragments. */
static void
run_random_batch(unsigned long count)
{
	struct mbuf m = { NULL, 0, 0 };
	unsigned long it;
	size_t len, i, n, tries;
	const struct seed *o;
	const char *what;

	for (it = 0; it < count; it++) {
		len = rnd_below(rnd_below(4) == 0 ? REPLAY_MAX_RANDOM_LEN : 64);
		mbuf_reserve(&m, len + REPLAY_MAX_CHUNK);
		m.len = 0;
		switch (it % 4) {
		case 0:
		case 3:	/* half of them purely random */
			for (i = 0; i < len; i++)
				m.p[i] = (uint8_t)rnd();
			m.len = len;
			what = "random bytes";
			break;
		case 1:	/* bytes drawn from the seeds' alphabet */
			for (i = 0; i < len; i++) {
				o = &seeds[rnd_below(nseeds)];
				m.p[i] = o->len > 0 ?
				    o->data[rnd_below(o->len)] : 0;
			}
			m.len = len;
			what = "seed-alphabet bytes";
			break;
		default: /* fragments of seeds, concatenated */
			for (tries = 0; m.len < len && tries < 4096; tries++) {
				o = &seeds[rnd_below(nseeds)];
				if (o->len == 0)
					continue;
				i = rnd_below(o->len);
				n = 1 + rnd_below(o->len - i < 16 ?
				    o->len - i : 16);
				mbuf_reserve(&m, m.len + n);
				memcpy(m.p + m.len, o->data + i, n);
				m.len += n;
			}
			what = "seed fragments";
			break;
		}
		run_one(m.p, m.len, NULL, what);
	}
	free(m.p);
}


/* --- seeds --------------------------------------------------------------- */

static int
read_file(const char *path, uint8_t **data, size_t *len)
{
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > REPLAY_MAX_SEED_LEN) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	*data = malloc((size_t)st.st_size + 1);
	if (*data == NULL) {
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		r = read(fd, *data + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return 0;
}

static int
cmp_seed(const void *a, const void *b)
{
	return strcmp(((const struct seed *)a)->name,
	    ((const struct seed *)b)->name);
}

static void
load_seeds(const char *dir)
{
	struct dirent *de;
	char *path;
	size_t n;
	DIR *d;

	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, REPLAY_NAME ": seed directory %s: %s\n", dir,
		    strerror(errno));
		exit(99);
	}
	while ((de = readdir(d)) != NULL) {
		struct seed *sd;

		if (de->d_name[0] == '.')
			continue;
		if (nseeds == REPLAY_MAX_SEEDS) {
			fprintf(stderr, REPLAY_NAME ": more than %d seeds\n",
			    REPLAY_MAX_SEEDS);
			exit(99);
		}
		sd = &seeds[nseeds];
		n = strlen(dir) + strlen(de->d_name) + 2;
		if ((path = malloc(n)) == NULL)
			exit(99);
		snprintf(path, n, "%s/%s", dir, de->d_name);
		if (read_file(path, &sd->data, &sd->len) != 0) {
			fprintf(stderr, REPLAY_NAME ": %s: %s\n", path,
			    strerror(errno));
			exit(99);
		}
		free(path);
		sd->name = strdup(de->d_name);
		if (sd->name == NULL)
			exit(99);
		nseeds++;
	}
	closedir(d);
	if (nseeds == 0) {
		fprintf(stderr, REPLAY_NAME ": no seeds in %s\n", dir);
		exit(99);
	}
	qsort(seeds, nseeds, sizeof(seeds[0]), cmp_seed);
}

static unsigned long long
env_num(const char *name, unsigned long long def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0') {
		fprintf(stderr, REPLAY_NAME ": bad %s=%s\n", name, s);
		exit(99);
	}
	return v;
}

/* --- main ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	char dirbuf[4096];
	const char *dir, *src;
	unsigned long iters, nrandom;
	struct stat st;
	size_t s;
	struct timespec t0, t1;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_signals();
	timeout_s = (unsigned)env_num("BOLTCC_REPLAY_TIMEOUT",
	    REPLAY_DEFAULT_TIMEOUT);
	if (getenv("BOLTCC_REPLAY_OUT") != NULL)
		out_dir = getenv("BOLTCC_REPLAY_OUT");

	/* reproducer mode: each named file once */
	if (argc > 1 && stat(argv[1], &st) == 0 && !S_ISDIR(st.st_mode)) {
		for (i = 1; i < argc; i++) {
			uint8_t *data;
			size_t len;

			if (read_file(argv[i], &data, &len) != 0) {
				fprintf(stderr, REPLAY_NAME ": %s: %s\n",
				    argv[i], strerror(errno));
				return 99;
			}
			printf(REPLAY_NAME ": running %s (%zu bytes)\n",
			    argv[i], len);
			out_dir = NULL;	/* it is saved already */
			run_one(data, len, NULL, argv[i]);
			free(data);
		}
		printf(REPLAY_NAME ": %d input(s) returned\n", argc - 1);
		return 0;
	}

	if (argc > 1)
		dir = argv[1];
	else {
		src = getenv("BOLTCC_SRCDIR");
		if (src == NULL || *src == '\0')
			src = BC_REPLAY_SRCDIR;
		snprintf(dirbuf, sizeof(dirbuf), "%s/tests/fuzz/seeds/%s",
		    src, BC_REPLAY_TARGET);
		dir = dirbuf;
	}
	load_seeds(dir);
	run_seed = (uint64_t)env_num("BOLTCC_REPLAY_SEED", REPLAY_DEFAULT_SEED);
	iters = (unsigned long)env_num("BOLTCC_REPLAY_ITERS",
	    REPLAY_DEFAULT_ITERS);
	nrandom = (unsigned long)env_num("BOLTCC_REPLAY_RANDOM",
	    REPLAY_DEFAULT_RANDOM);
	printf(REPLAY_NAME ": %zu seeds from %s; BOLTCC_REPLAY_SEED=0x%llx "
	    "BOLTCC_REPLAY_ITERS=%lu BOLTCC_REPLAY_RANDOM=%lu\n", nseeds, dir,
	    (unsigned long long)run_seed, iters, nrandom);
	rng = run_seed;

	for (s = 0; s < nseeds; s++)
		run_one(seeds[s].data, seeds[s].len, seeds[s].name, "as is");
	for (s = 0; s < nseeds; s++)
		run_seed_batch(s, iters);
	run_random_batch(nrandom);
	alarm(0);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf(REPLAY_NAME ": %lu inputs, all returned (%.2f s)\n", ninputs,
	    (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
#ifdef REPLAY_ASAN
	printf(REPLAY_NAME ": %u inputs kept memory and were leak-checked\n",
	    leak_checks);
#endif
	for (s = 0; s < nseeds; s++) {
		free(seeds[s].name);
		free(seeds[s].data);
	}
	return 0;
}
