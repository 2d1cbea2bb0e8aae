/*
 * main.c - the boltcc client: invocation mode, client-only options
 * (--stats in client/statscmd.c), and the life of one compile
 * (classify, choose a host, preprocess locally, send, write the
 * outputs, or fall back to a local compile).
 *
 * Exit status: the compiler's, or one of distcc's codes (exitcode.h) for
 * boltcc's own failures.  A farm failure never fails the build unless
 * DISTCC_FALLBACK=0.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "cache/key.h"
#include "client/hitcache.h"
#include "common/exitcode.h"
#include "common/hash.h"
#include "common/hosts.h"
#include "common/io.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "client/args.h"
#include "client/cacheadm.h"
#include "client/cconf.h"
#include "client/cstats.h"
#include "client/hostsel.h"
#include "client/local.h"
#include "client/direct.h"
#include "client/binstate.h"
#include "client/lookup.h"
#include "client/monitor.h"
#include "client/remote.h"
#include "client/pump.h"
#include "client/pumpx.h"
#include "client/ssh.h"
#include "client/statscmd.h"
#include "client/xcode.h"

/* Everything one compile needs. */
struct job {
	struct bc_cconf *cfg;
	struct bc_self self;
	char *compiler_path;		/* the real compiler to exec */
	struct bc_strv exec_argv;	/* the user's argv, for local runs */
	struct bc_strv argv;		/* argv to classify (argv[0] = name) */
	struct bc_plan plan;
	struct bc_cstats stats;
	char *tmpdir;			/* private temp dir, or NULL */
	char *ipath;			/* preprocessed output (save-temps) */
	char *cpp_err_path;		/* preprocessor stderr (save-temps) */
	struct bc_buf cpp_err;		/* preprocessor stderr */
	/* artifact cache (doc/cache.md) */
	int ident_state;		/* 0 not yet, 1 known, -1 failed */
	char ident[BC_HASH_HEXLEN + 1];	/* compiler identity */
	char cache_key[BC_HASH_HEXLEN + 1];	/* "" = not computed */
	char missed_key[BC_HASH_HEXLEN + 1];	/* looked up in vain */
	/* bc_cache_origin of the working directory ("" until job_origin):
	 * a hit's ORIG tells whether another checkout stored the entry */
	char origin[BC_CACHE_ORIGIN_LEN + 1];
	struct bc_direct direct;	/* direct mode manifest */
	int64_t cpp_start;		/* when cpp started (seconds) */
	int binstate;			/* wrote a distccmon record */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: boltcc COMPILER [ARGS...]     compile, distributed if possible\n"
	    "       boltcc [ARGS...]              same, with the compiler cc\n"
	    "       COMPILER [ARGS...]            when installed as a masquerade link\n"
	    "       boltcc --explain COMPILER ARGS...  show what would happen (JSON)\n"
	    "       boltcc --show-hosts [--json]  each host and its state\n"
	    "       boltcc -j                     print the total number of slots\n"
	    "       boltcc --stats|-s [-v] [--json]  statistics (-v: raw too)\n"
	    "       boltcc --zero-stats           reset this client's counters\n"
	    "       boltcc --monitor [--once]     the farm live, in the terminal\n"
	    "       boltcc --monitor --web [ADDR:]PORT   ... as a web page\n"
	    "       boltcc --cache [--json]       each host's cache and the local tier\n"
	    "       boltcc --cache clear [--local] [HOST...]\n"
	    "       boltcc --cache limit SIZE [HOST...]\n"
	    "       boltcc --cache evict-older-than AGE [--local] [HOST...]\n"
	    "                                     administer the caches (loopback\n"
	    "                                     or --admin-allow on the daemon)\n"
	    "       boltcc --version | --help | -h\n"
	    "\n"
	    "In the second form the first ARG is a compiler option or a file;\n"
	    "a first ARG starting with -- that neither boltcc nor gcc/clang\n"
	    "knows is an error (exit 101), not passed to cc.\n"
	    "\n"
	    "Hosts come from BOLTCC_HOSTS, DISTCC_HOSTS, $DIR/hosts or\n"
	    "/etc/distcc/hosts; $DIR is BOLTCC_DIR, DISTCC_DIR or ~/.boltcc.\n"
	    "See boltcc(1).\n");
}

/* --------------------------------------------------------------------- */
/* small helpers */

static int
is_source_or_object(const char *arg)
{
	static const char *const exts[] = {
		".c", ".cc", ".cpp", ".cxx", ".cp", ".c++", ".C", ".i", ".ii",
		".m", ".mm", ".mi", ".mii", ".M", ".s", ".S", ".o", ".a",
		".so", ".dylib", NULL,
	};
	const char *ext = bc_extension(arg);
	size_t i;

	for (i = 0; exts[i] != NULL; i++)
		if (strcmp(ext, exts[i]) == 0)
			return 1;
	return 0;
}

static void
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

static void
replay_buf(const struct bc_buf *b, int fd)
{
	if (bc_buf_len(b) > 0)
		write_all(fd, bc_buf_data(b), bc_buf_len(b));
}

static int
output_mode(void)
{
	mode_t um = umask(0);

	umask(um);
	return (int)(0666 & ~um);
}

/* s as a JSON string (common/json.h). */
static void
json_str(FILE *f, const char *s)
{
	bc_json_fput_str(f, s);
}

/* --------------------------------------------------------------------- */
/* job life cycle */

static void
job_init(struct job *j, struct bc_cconf *cfg)
{
	memset(j, 0, sizeof(*j));
	j->cfg = cfg;
	bc_strv_init(&j->exec_argv);
	bc_strv_init(&j->argv);
	bc_plan_init(&j->plan);
	bc_cstats_init(&j->stats);
	bc_buf_init(&j->cpp_err, BC_MAX_STDERR);
}

/* The working directory's origin (cache/key.h), computed when a cache
 * lookup first needs it: a job that stays local never hashes it. */
static const char *
job_origin(struct job *j)
{
	if (j->origin[0] == '\0')
		bc_cache_origin(j->cfg->cwd, j->origin);
	return j->origin;
}

static void
job_cleanup_temps(struct job *j)
{
	if (j->tmpdir != NULL) {
		if (j->cfg->save_temps)
			bc_info("keeping temporary files in %s", j->tmpdir);
		else
			(void)bc_rmtree(j->tmpdir);
	}
	free(j->tmpdir);
	free(j->ipath);
	free(j->cpp_err_path);
	j->tmpdir = j->ipath = j->cpp_err_path = NULL;
}

static void
job_free(struct job *j)
{
	job_cleanup_temps(j);
	free(j->compiler_path);
	bc_strv_free(&j->exec_argv);
	bc_strv_free(&j->argv);
	bc_plan_free(&j->plan);
	bc_cstats_free(&j->stats);
	bc_local_self_free(&j->self);
	bc_direct_free(&j->direct);
	bc_buf_free(&j->cpp_err);
}

static void
job_commit_stats(struct job *j)
{
	char err[BC_ERRLEN];

	if (!j->cfg->dir_ok || j->stats.n == 0)
		return;
	if (bc_cstats_commit(j->cfg->dir, &j->stats, err) != BC_OK)
		bc_debug("cannot update client stats: %s", err);
	bc_cstats_free(&j->stats);
}

/* distccmon's record of this job: compiling on host (binstate.h). */
static void
job_note_state(struct job *j, const char *host, int slot)
{
	if (!j->cfg->dir_ok || j->plan.source == NULL)
		return;
	if (bc_binstate_note(j->cfg->statedir, BC_PHASE_COMPILE,
	    j->plan.source, host, slot) == BC_OK)
		j->binstate = 1;
}

/*
 * Replace this process with the real compiler and the user's argv.
 * Counters are written first; temp files are removed.
 */
static int
job_exec_local(struct job *j)
{
	char err[BC_ERRLEN];

	/* the compiler keeps this pid: distccmon drops the record when it
	 * exits */
	job_note_state(j, "localhost", 0);
	job_commit_stats(j);
	job_cleanup_temps(j);
	fflush(stdout);
	fflush(stderr);
	bc_local_exec(j->compiler_path, j->exec_argv.v, err);
	fprintf(stderr, "boltcc: error: %s\n", err);
	return errno == ENOENT ? BC_EXIT_COMPILER_MISSING : BC_EXIT_FAILURE;
}

/* Run locally because of `reason` (classification or a local-only rule). */
static int
run_local(struct job *j, const char *reason)
{
	bc_debug("compiling locally: %s", reason);
	bc_cstats_add(&j->stats, "jobs_local", 1);
	bc_cstats_add2(&j->stats, "local_by_reason", reason, 1);
	return job_exec_local(j);
}

/* Exec the compiler holding a local slot (waits for one, bounded). */
static int
exec_in_local_slot(struct job *j, int localslots)
{
	struct bc_slot slot = BC_SLOT_INIT;
	char err[BC_ERRLEN];

	if (j->cfg->dir_ok &&
	    bc_hostsel_local_slot(j->cfg->lockdir, localslots > 0 ?
	    localslots : BC_DEFAULT_LOCALSLOTS,
	    (int64_t)j->cfg->io_timeout * 1000, &slot, err) != BC_OK)
		bc_debug("running without a local slot: %s", err);
	/* The slot's lock fd survives exec: held until the compiler exits. */
	return job_exec_local(j);
}

/* Local compile after the farm failed or was unusable, under a local slot. */
static int
run_fallback(struct job *j, const char *reason, int localslots)
{
	bc_cstats_add(&j->stats, "jobs_local", 1);
	bc_cstats_add2(&j->stats, "fallback_by_reason", reason, 1);
	return exec_in_local_slot(j, localslots);
}

/*
 * Run the preprocessor, its output read through a pipe into doti and its
 * stderr into j->cpp_err (no temp files: DISTCC_SAVE_TEMPS writes them
 * to a kept temp dir afterwards).  Its wait status goes to *st.
 */
static int
run_cpp(struct job *j, struct bc_buf *doti, int *st, char *err)
{
	int r;

	if (bc_log_get_level() >= BC_LOG_DEBUG) {
		char *s = bc_strv_join(&j->plan.cpp_argv);

		bc_debug("preprocessing: %s", s);
		free(s);
	}
	bc_buf_reset(doti);
	bc_buf_reset(&j->cpp_err);
	r = bc_local_capture(j->compiler_path, j->plan.cpp_argv.v, doti,
	    &j->cpp_err, st, err);
	if (j->cfg->save_temps && j->tmpdir == NULL &&
	    bc_mkdtemp("boltcc_", &j->tmpdir, NULL) == BC_OK) {
		j->ipath = xasprintf("%s/%s", j->tmpdir,
		    j->plan.lang != NULL && strstr(j->plan.lang, "++") != NULL ?
		    "source.ii" : "source.i");
		j->cpp_err_path = xasprintf("%s/cpp.stderr", j->tmpdir);
		(void)bc_write_file_atomic(j->ipath, bc_buf_data(doti),
		    bc_buf_len(doti), 0600, NULL);
		(void)bc_write_file_atomic(j->cpp_err_path,
		    bc_buf_data(&j->cpp_err), bc_buf_len(&j->cpp_err), 0600,
		    NULL);
	}
	return r;
}

static int
contains(const uint8_t *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	return n >= k && memmem(p, n, needle, k) != NULL;
}

/* The wire protocol toward h, a boltccd or not (bolt). */
static int
host_proto(const struct bc_host *h, int bolt)
{
	/* ,cpp,lzo: pump (3) when the scan allows (client/pump.c) */
	return bolt ? BC_PROTO_BOLT : h->protocol == 1 ? 1 :
	    h->protocol == 3 ? 3 : 2;
}

/* Whether a job toward h in proto wants pump mode: protocol 3, or BOLT
 * pump on a boltccd (the default unless ",plain" or BOLTCC_PUMP=0). */
static int
wants_pump(const struct bc_cconf *cfg, const struct bc_host *h, int proto)
{
	return proto == 3 || (proto == BC_PROTO_BOLT && (h->protocol == 3 ||
	    (cfg->pump && !h->plain)));
}

/* Pick the wire protocol for a host (probing it once if needed). */
static int
choose_proto(struct job *j, const struct bc_host *h, int *proto, char *err)
{
	int bolt = -1, r;

	if (h->bolt == BC_BOLT_YES)
		bolt = 1;
	else if (h->bolt == BC_BOLT_NO)
		bolt = 0;
	else {
		bolt = bc_remote_probe_cached(j->cfg->statedir, h);
		if (bolt < 0) {
			r = bc_remote_probe(h, BC_CONNECT_TIMEOUT_MS,
			    j->cfg->io_timeout * 1000, &bolt, err);
			if (r != BC_OK) {
				bc_cstats_add(&j->stats, "probe_failed", 1);
				return r;
			}
			bc_cstats_add(&j->stats, bolt ? "probe_bolt" :
			    "probe_distcc", 1);
			bc_remote_probe_remember(j->cfg->statedir, h, bolt);
		}
	}
	*proto = host_proto(h, bolt);
	return BC_OK;
}

static int
status_is_farm_failure(uint32_t status)
{
	int code;

	if (WIFSIGNALED(status) || !WIFEXITED(status))
		return 1;
	code = WEXITSTATUS(status);
	/* >= 128: the compiler died; 100..118: distcc/boltcc's own codes
	 * for daemon-side failures (compiler missing, I/O, timeout). */
	return code >= 128 || (code >= BC_EXIT_FAILURE &&
	    code <= BC_EXIT_TIMEOUT);
}

/* Write the outputs of a successful remote compile. */
static int
write_outputs(struct job *j, const struct bc_reply *rep, char *err)
{
	int mode = output_mode(), r;

	r = bc_write_file_atomic(j->plan.output, bc_buf_data(&rep->doto),
	    bc_buf_len(&rep->doto), mode, err);
	if (r != BC_OK)
		return r;
	if (j->plan.dia_file != NULL && bc_buf_len(&rep->dia) > 0) {
		r = bc_write_file_atomic(j->plan.dia_file,
		    bc_buf_data(&rep->dia), bc_buf_len(&rep->dia), mode, err);
		if (r != BC_OK)
			return r;
	}
	return BC_OK;
}

static void
replay_reply(struct job *j, const struct bc_reply *rep)
{
	replay_buf(&j->cpp_err, STDERR_FILENO);
	if (bc_buf_len(&rep->serr) > 0)
		write_all(STDERR_FILENO, bc_buf_data(&rep->serr),
		    bc_buf_len(&rep->serr));
	if (bc_buf_len(&rep->sout) > 0) {
		fflush(stdout);
		write_all(STDOUT_FILENO, bc_buf_data(&rep->sout),
		    bc_buf_len(&rep->sout));
	}
}

static const char *
describe_no_host(const char *why)
{
	if (strcmp(why, "no-free-slot") == 0)
		return "every host slot stayed busy";
	if (strcmp(why, "no-usable-host") == 0)
		return "no usable host (all down, backed off or failed)";
	return why;
}

static const char *
host_label(const struct bc_host *h)
{
	return h->spec != NULL ? h->spec : (h->name != NULL ? h->name : "?");
}

/* After a good result from a preprocessed job: write the direct mode
 * manifest (what the preprocessor read, the key, its .d and stderr). */
static void
direct_record(struct job *j, const struct bc_buf *doti)
{
	struct bc_buf dotd = BC_BUF_INIT(BC_MAX_DOTD);
	struct bc_buf cpperr = BC_BUF_INIT(BC_MAX_STDERR);
	char err[BC_ERRLEN];

	if (j->direct.path == NULL || j->cache_key[0] == '\0')
		return;
	if (j->plan.dep_wanted && j->plan.dep_file != NULL &&
	    bc_read_file(j->plan.dep_file, BC_MAX_DOTD, &dotd, NULL) != BC_OK)
		goto out;
	(void)bc_buf_put(&cpperr, bc_buf_data(&j->cpp_err),
	    bc_buf_len(&j->cpp_err));
	if (bc_direct_put(&j->direct, j->cache_key, bc_buf_data(doti),
	    bc_buf_len(doti), &dotd, &cpperr, j->cpp_start, err) != BC_OK)
		bc_debug("no direct mode manifest: %s", err);
out:
	bc_buf_free(&dotd);
	bc_buf_free(&cpperr);
}

/* The compiler's identity, computed (or read from its memo) once. */
static int
job_identity(struct job *j)
{
	char err[BC_ERRLEN];

	if (j->ident_state == 0) {
		j->ident_state = bc_cache_identity(j->compiler_path,
		    j->cfg->statedir, j->ident, err) == BC_OK ? 1 : -1;
		if (j->ident_state < 0) {
			bc_info("no cache lookup: %s", err);
			j->ident[0] = '\0';
			bc_cstats_add2(&j->stats, "cache_skipped_by_reason",
			    "no-identity", 1);
		}
	}
	return j->ident_state > 0;
}

/* Hosts whose artifact cache can be asked: BOLT hosts (declared or
 * learned by the probe) that are usable now. */
static unsigned char *
cache_candidates(const struct job *j, const struct bc_hostlist *hl)
{
	unsigned char *cand = xcalloc(hl->n > 0 ? hl->n : 1, 1);
	size_t i;

	for (i = 0; i < hl->n; i++) {
		const struct bc_host *h = &hl->v[i];

		if (h->kind == BC_HOST_LOCAL || h->down || h->auth ||
		    h->limit <= 0 || h->bolt == BC_BOLT_NO)
			continue;
		if (h->bolt != BC_BOLT_YES &&
		    bc_remote_probe_cached(j->cfg->statedir, h) != 1)
			continue;
		if (bc_hostsel_backed_off(j->cfg->lockdir, h,
		    j->cfg->backoff_period))
			continue;
		cand[i] = 1;
	}
	return cand;
}

/* After asking hosts: back off the ones that failed, count the bytes. */
static void
lookup_done(struct job *j, const struct bc_hostlist *hl,
    const struct bc_lookup_result *res)
{
	bc_lookup_note_failed(hl, res, j->cfg->lockdir,
	    j->cfg->backoff_period, &j->stats);
	bc_cstats_add(&j->stats, "bytes_sent", (long long)res->sent);
	bc_cstats_add(&j->stats, "bytes_received", (long long)res->received);
}

/*
 * Ask the key's owner, which knows where its keys went (doc/cache.md,
 * "Locations"), telling it the job goes to host `at` (-1: not chosen
 * yet) if nobody has it; every candidate only when the owner cannot tell.
 * Host failures are noted and the bytes counted.  BC_OK: a hit in rep.
 */
static int
ask_farm(struct job *j, const struct bc_hostlist *hl, unsigned char *cand,
    ssize_t owner, ssize_t at, const char *key, struct bc_reply *rep,
    struct bc_lookup_result *res, char *err)
{
	int r;

	r = bc_lookup_locate(hl, cand, (size_t)owner, at, key, job_origin(j),
	    BC_CONNECT_TIMEOUT_MS, j->cfg->io_timeout * 1000, rep, res, err);
	if (r == BC_ERR_NOTSUP) {
		bc_debug("cache: %.16s: %s; asking every host", key, err);
		if (res->nfailed > 0)
			cand[owner] = 0;	/* it just failed */
		lookup_done(j, hl, res);
		r = bc_lookup_fanout(hl, cand, owner, key, job_origin(j),
		    BC_CONNECT_TIMEOUT_MS, j->cfg->io_timeout * 1000, rep, res,
		    err);
	}
	lookup_done(j, hl, res);
	return r;
}

/*
 * The routing shared by every cache lookup of a job with this key: finds
 * the key's owner among the BOLT hosts (*owner, -1 if none), and when the
 * only cache to ask is the host the job goes to (`here`), says so (*inl:
 * the compile request itself asks, FLAG_HIT_MARK).  Otherwise asks the
 * farm (ask_farm).  Returns 1 with *rep and *res filled on a
 * hit; 0 for no lookup, an inline one, or a miss (counted).
 */
static int
lookup_route(struct job *j, const struct bc_hostlist *hl, const char *key,
    size_t here, ssize_t *owner, int *inl, struct bc_reply *rep,
    struct bc_lookup_result *res)
{
	char err[BC_ERRLEN];
	unsigned char *cand = cache_candidates(j, hl);
	size_t i, ncand = 0;
	int r;

	*owner = bc_lookup_owner(hl, cand, key);
	if (*owner < 0 || strcmp(key, j->missed_key) == 0) {
		/* no BOLT host, or direct mode asked for this key already */
		free(cand);
		return 0;
	}
	bc_cstats_add(&j->stats, "cache_lookups", 1);
	for (i = 0; i < hl->n; i++)
		ncand += cand[i];
	if (ncand == 1 && (size_t)*owner == here) {
		/* The one cache to ask is the host the job goes to: the
		 * compile request asks it (FLAG_HIT_MARK), which saves a
		 * connection and a round trip on every miss. */
		free(cand);
		*inl = 1;
		return 0;
	}
	r = ask_farm(j, hl, cand, *owner, (ssize_t)here, key, rep, res, err);
	free(cand);
	if (r != BC_OK) {
		bc_debug("cache: %.16s: %s", key, err);
		bc_cstats_add(&j->stats, "cache_misses", 1);
		return 0;
	}
	return 1;
}

/*
 * The local tier (client/hitcache.h): the outputs of key for this very
 * command in this directory, if this machine kept them.  1 with rep
 * filled (initialised here) on a hit.
 */
static int
local_get(struct job *j, const char *key, struct bc_reply *rep)
{
	char lkey[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int r;

	if (j->cfg->local_cache_size == 0 || j->cfg->cwd == NULL)
		return 0;
	bc_hitcache_key(key, j->cfg->cwd, &j->argv, lkey);
	bc_reply_init(rep);
	r = bc_hitcache_get(j->cfg->hitdir, lkey, rep, err);
	if (r == BC_OK) {
		bc_debug("local cache hit %.16s for %s", key, j->plan.source);
		bc_cstats_add(&j->stats, "cache_hits_local", 1);
		return 1;
	}
	bc_reply_free(rep);
	if (r == BC_ERR_CORRUPT) {
		bc_warn("%s", err);
		bc_cstats_add(&j->stats, "local_cache_corrupt", 1);
	}
	return 0;
}

/* Keep a successful result of key in the local tier (best effort). */
static void
local_put(struct job *j, const char *key, const struct bc_reply *rep)
{
	char lkey[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	if (j->cfg->local_cache_size == 0 || j->cfg->cwd == NULL ||
	    key[0] == '\0' || rep->status != 0)
		return;
	bc_hitcache_key(key, j->cfg->cwd, &j->argv, lkey);
	if (bc_hitcache_put(j->cfg->hitdir, j->cfg->local_cache_size, lkey,
	    rep, err) != BC_OK)
		bc_debug("local cache: %s", err);
}

/* Count a hit, and whether another working directory stored its entry
 * (the daemon's ORIG, asked for with FLAG_ORIGIN). */
static void
count_hit(struct job *j, const struct bc_reply *rep)
{
	bc_cstats_add(&j->stats, "cache_hits", 1);
	if (rep->has_origin && rep->origin[0] != '\0' &&
	    strcmp(rep->origin, job_origin(j)) != 0)
		bc_cstats_add(&j->stats, "cache_hits_other_checkout", 1);
}

/*
 * A hit whose outputs were written (r, err: how that went): replay its
 * messages, count it, free rep; *rc is the job's exit code, also
 * returned.
 */
static int
hit_done(struct job *j, struct bc_reply *rep, int r, const char *err,
    int *rc)
{
	if (r != BC_OK) {
		bc_reply_free(rep);
		fprintf(stderr, "boltcc: error: %s\n", err);
		return *rc = BC_EXIT_IO_ERROR;
	}
	replay_reply(j, rep);
	count_hit(j, rep);
	bc_reply_free(rep);
	return *rc = 0;
}

/*
 * Ask the farm's caches for this job (doc/cache.md).  Returns 1 with *rc
 * set if a hit was written out (or writing it failed); 0 to compile,
 * with ident (the compiler identity, "" if unknown) and *owner (the
 * key's owner among the BOLT hosts, -1 if none) set.
 */
static int
cache_lookup(struct job *j, const struct bc_hostlist *hl,
    const struct bc_buf *doti, size_t here, char ident[BC_HASH_HEXLEN + 1],
    ssize_t *owner, int *inl, int *rc)
{
	struct bc_cache_key_in in;
	struct bc_lookup_result res;
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];

	*owner = -1;
	*inl = 0;
	ident[0] = '\0';
	if (!job_identity(j))
		return 0;
	memcpy(ident, j->ident, sizeof(j->ident));
	memset(&in, 0, sizeof(in));
	in.identity = ident;
	in.argv = j->plan.remote_argv.v;
	in.argc = j->plan.remote_argv.n;
	in.cdir = j->cfg->cwd;
	in.flags = j->plan.dia_file != NULL ? BC_FLAG_WANT_DIA : 0;
	in.doti = bc_buf_data(doti);
	in.doti_len = bc_buf_len(doti);
	bc_cache_key(&in, key);
	memcpy(j->cache_key, key, sizeof(key));
	if (local_get(j, key, &rep)) {
		if (hit_done(j, &rep, write_outputs(j, &rep, err), err, rc) ==
		    0)
			direct_record(j, doti);
		return 1;
	}
	if (!lookup_route(j, hl, key, here, owner, inl, &rep, &res))
		return 0;
	if (j->plan.dia_file != NULL && bc_buf_len(&rep.dia) == 0) {
		bc_reply_free(&rep);
		bc_cstats_add(&j->stats, "cache_misses", 1);
		return 0;
	}
	bc_debug("cache hit %.16s on %s for %s", key,
	    host_label(&hl->v[res.hit_host]), j->plan.source);
	local_put(j, key, &rep);
	if (hit_done(j, &rep, write_outputs(j, &rep, err), err, rc) == 0)
		direct_record(j, doti);
	return 1;
}

/*
 * cache_lookup for a BOLT pump job: the key is computed from the scan's
 * manifest (names and content hashes, cache/key.h) exactly as the daemon
 * will compute it, so nothing is preprocessed.  Sets p->flags for the
 * pump request.  Returns 1 with *rc set if a hit was written out.
 */
static int
pump_lookup(struct job *j, const struct bc_hostlist *hl, struct bc_cpump *p,
    size_t here, ssize_t *owner, int *inl, int *rc)
{
	struct bc_lookup_result res;
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	int r;

	*owner = -1;
	*inl = 0;
	if (!job_identity(j) || bc_cpumpx_key(p, j->ident, key) != BC_OK)
		return 0;
	memcpy(j->cache_key, key, sizeof(key));
	if (local_get(j, key, &rep)) {
		r = write_outputs(j, &rep, err);
		if (r == BC_OK)
			r = bc_cpump_write_deps(p, &rep, err);
		(void)hit_done(j, &rep, r, err, rc);
		return 1;
	}
	p->identity = j->ident;	/* the daemon refuses a different compiler */
	r = lookup_route(j, hl, key, here, owner, inl, &rep, &res);
	/* the pump request asks itself (inline) or says it was asked */
	p->flags = (p->flags & BC_FLAG_WANT_DIA) | (*inl ? BC_FLAG_HIT_MARK |
	    BC_FLAG_ORIGIN : *owner >= 0 ? BC_FLAG_LOOKED_UP : 0);
	if (!r)
		return 0;
	bc_debug("cache hit %.16s (pump) on %s for %s", key,
	    host_label(&hl->v[res.hit_host]), j->plan.source);
	r = bc_cpumpx_unmap(p, &rep, err);
	if (r == BC_OK)
		r = write_outputs(j, &rep, err);
	if (r == BC_OK)
		r = bc_cpump_write_deps(p, &rep, err);
	if (r == BC_OK)
		local_put(j, key, &rep);
	(void)hit_done(j, &rep, r, err, rc);
	return 1;
}

/*
 * Direct mode: if the manifest of this exact command says which files the
 * preprocessor read and none changed, ask the farm for the recorded key
 * without preprocessing.  Returns 1 with *rc set if the job is done.
 */
static int
direct_lookup(struct job *j, const struct bc_hostlist *hl, int *rc)
{
	struct bc_buf dotd = BC_BUF_INIT(BC_MAX_DOTD);
	struct bc_buf cpperr = BC_BUF_INIT(BC_MAX_STDERR);
	struct bc_lookup_result res;
	struct bc_reply rep;
	char key[BC_HASH_HEXLEN + 1], err[BC_ERRLEN];
	unsigned char *cand;
	ssize_t owner;
	int r, done = 0;

	if (!job_identity(j) || j->cfg->cwd == NULL)
		return 0;
	bc_direct_init(&j->direct, j->cfg->statedir, j->ident, j->cfg->cwd,
	    &j->plan.cpp_argv, &j->plan.remote_argv);
	if (bc_direct_get(&j->direct, key, &dotd, &cpperr) != BC_OK ||
	    (j->plan.dia_file != NULL && bc_buf_len(&cpperr) > 0))
		goto out;
	if (local_get(j, key, &rep))
		goto hit;
	cand = cache_candidates(j, hl);
	owner = bc_lookup_owner(hl, cand, key);
	if (owner < 0) {
		free(cand);
		goto out;
	}
	bc_cstats_add(&j->stats, "cache_lookups", 1);
	r = ask_farm(j, hl, cand, owner, -1, key, &rep, &res, err);
	free(cand);
	if (r != BC_OK || (j->plan.dia_file != NULL &&
	    bc_buf_len(&rep.dia) == 0)) {
		if (r == BC_OK)
			bc_reply_free(&rep);
		bc_cstats_add(&j->stats, "cache_misses", 1);
		memcpy(j->missed_key, key, sizeof(key));
		goto out;
	}
	bc_debug("cache hit %.16s (direct) for %s", key, j->plan.source);
	local_put(j, key, &rep);
hit:
	done = 1;
	r = write_outputs(j, &rep, err);
	if (r == BC_OK && j->plan.dep_wanted && j->plan.dep_file != NULL &&
	    bc_buf_len(&dotd) > 0)
		r = bc_write_file_atomic(j->plan.dep_file, bc_buf_data(&dotd),
		    bc_buf_len(&dotd), output_mode(), err);
	if (r == BC_OK && bc_buf_len(&cpperr) > 0)	/* the preprocessor's */
		write_all(STDERR_FILENO, bc_buf_data(&cpperr),
		    bc_buf_len(&cpperr));
	if (hit_done(j, &rep, r, err, rc) == 0)
		bc_cstats_add(&j->stats, "cache_hits_direct", 1);
out:
	bc_buf_free(&dotd);
	bc_buf_free(&cpperr);
	return done;
}

/* After a miss: move the job to the key's owner if it has a free slot
 * now (and is not much slower), so that the next client finds the result
 * where it looks first. */
static void
prefer_owner(struct job *j, const struct bc_hostlist *hl, size_t owner,
    unsigned char *tried, struct bc_slot *slot)
{
	struct bc_slot os = BC_SLOT_INIT;
	unsigned char *only = xcalloc(hl->n, 1);
	char err[BC_ERRLEN];

	memset(only, 1, hl->n);
	only[owner] = 0;
	if (bc_hostsel_owner_ok(j->cfg->lockdir, &hl->v[owner], slot->host) &&
	    bc_hostsel_pick(hl, j->cfg->lockdir, only, j->cfg->backoff_period,
	    0, &os, err) == BC_OK) {
		bc_debug("sending to the key's owner %s", host_label(os.host));
		tried[slot->host_index] = 0;
		bc_hostsel_release(slot);
		*slot = os;
		tried[owner] = 1;
	}
	free(only);
}

/*
 * Plain mode's local half: run the preprocessor into doti.  Returns 0
 * to go on; 1 when the job is done here (*rc set: the user's cpp error,
 * or compiled locally); -1 when the preprocessor could not be run
 * (*why: compile locally).
 */
static int
prepare_plain(struct job *j, struct bc_buf *doti, int *rc, const char **why)
{
	char err[BC_ERRLEN];
	int r, st;

	j->cpp_start = (int64_t)time(NULL);
	r = run_cpp(j, doti, &st, err);
	if (r != BC_OK) {
		bc_warn(r == BC_ERR_LIMIT ? "cannot read preprocessed output: "
		    "%s" : "cannot run the preprocessor: %s", err);
		*why = r == BC_ERR_LIMIT ? "cpp-output" : "cpp-run";
		return -1;
	}
	if (st != 0) {
		/* The user's error, not the farm's. */
		replay_buf(&j->cpp_err, STDERR_FILENO);
		bc_cstats_add(&j->stats, "jobs_cpp_error", 1);
		*rc = bc_local_exit_code(st);
		return 1;
	}
	if (contains(bc_buf_data(doti), bc_buf_len(doti), "@import") ||
	    contains(bc_buf_data(doti), bc_buf_len(doti),
	    "#pragma clang module import")) {
		*rc = run_local(j, "modules");
		return 1;
	}
	if (j->plan.dia_file != NULL && bc_buf_len(&j->cpp_err) > 0) {
		/* The .dia would miss the preprocessor's diagnostics. */
		*rc = run_local(j, "cpp-diagnostics");
		return 1;
	}
	return 0;
}

/*
 * Plain mode's local half of a job sent in proto: direct mode's lookup
 * (toward a boltccd with the cache on, when the farm was not asked yet:
 * `direct`), then the preprocessor.  As prepare_plain; 1 also for a
 * direct-mode hit, written out.
 */
static int
local_half(struct job *j, const struct bc_hostlist *hl, int proto,
    int direct, struct bc_buf *doti, int *rc, const char **why)
{
	if (direct && proto == BC_PROTO_BOLT && j->cfg->cache &&
	    direct_lookup(j, hl, rc))
		return 1;
	return prepare_plain(j, doti, rc, why);
}

/*
 * Whether this job's local half can be done before a slot is taken: when
 * every host of the list would get the same request (all known BOLT
 * hosts, or all known stock distccd hosts, with the same pump choice, and
 * no "localhost"), the preprocessor or the include scan, and direct
 * mode's lookup, do not depend on the host.  Done first, they overlap
 * the other jobs' compiles instead of holding a slot idle, and a direct
 * hit needs no slot at all.  Sets *proto and *pump (pump mode wanted).
 */
static int
host_independent(const struct job *j, const struct bc_hostlist *hl,
    int *proto, int *pump)
{
	size_t i, n = 0;

	for (i = 0; i < hl->n; i++) {
		const struct bc_host *h = &hl->v[i];
		int bolt, pr, pu;

		if (h->kind != BC_HOST_TCP && h->kind != BC_HOST_SSH)
			return 0;	/* localhost (or unknown): as it comes */
		bolt = h->bolt == BC_BOLT_YES ? 1 : h->bolt == BC_BOLT_NO ?
		    0 : bc_remote_probe_cached(j->cfg->statedir, h);
		if (bolt < 0 || (!bolt && j->plan.dia_file != NULL))
			return 0;	/* probed first; .dia: see run_remote */
		pr = host_proto(h, bolt);
		pu = wants_pump(j->cfg, h, pr);
		if (n++ > 0 && (pr != *proto || pu != *pump))
			return 0;
		*proto = pr;
		*pump = pu;
	}
	return n > 0;
}

/* The distributed path.  Returns the process exit code. */
/* 1 if the target is an Apple platform: -target/--target naming apple,
 * -arch, or no target at all on a Mac. */
static int
apple_target(const struct bc_strv *argv)
{
	size_t i;
	int explicit = 0;

	for (i = 1; i < argv->n; i++) {
		const char *a = argv->v[i], *t = NULL;

		if ((strcmp(a, "-target") == 0 || strcmp(a, "--target") == 0) &&
		    i + 1 < argv->n)
			t = argv->v[++i];
		else if (bc_str_has_prefix(a, "--target="))
			t = a + 9;
		else if (strcmp(a, "-arch") == 0)
			return 1;
		if (t != NULL) {
			explicit = 1;
			if (strstr(t, "apple") != NULL)
				return 1;
		}
	}
#ifdef __APPLE__
	return !explicit;
#else
	(void)explicit;
	return 0;
#endif
}

/*
 * 1 if a plain-mode compile (of the .i) gives other debug info than the
 * local compile (doc/fidelity.md): the column numbers of gcc and clang
 * move on a line that holds a macro expansion (not with
 * -gno-column-info); clang's DWARF 5 line table has an MD5 per file,
 * which a .i cannot carry (DWARF 5 is clang 14's default except for
 * Apple targets, which get 4).
 */
static int
plain_debug_differs(const struct bc_plan *plan, const struct bc_strv *argv)
{
	size_t i;
	int dwarf = 0, columns = 1;

	if (!bc_cache_key_debug(plan->remote_argv.v, plan->remote_argv.n))
		return 0;
	for (i = 1; i < argv->n; i++) {
		const char *a = argv->v[i];

		if (strcmp(a, "-gno-column-info") == 0)
			columns = 0;
		else if (strcmp(a, "-gcolumn-info") == 0)
			columns = 1;
		else if (bc_str_has_prefix(a, "-gdwarf-") && a[8] >= '2' &&
		    a[8] <= '5' && a[9] == '\0')
			dwarf = a[8] - '0';
	}
	if (columns || strstr(bc_basename(plan->compiler), "clang") == NULL)
		return columns;
	if (dwarf == 0)
		dwarf = apple_target(argv) ? 4 : 5;
	return dwarf >= 5;
}

/*
 * For a job that may leave only in pump mode (plan.pump_only): 1 if it
 * may go to a host of protocol proto (pumping: in pump mode).  A boltccd's
 * BOLT pump gives the local object, coverage or debug info.  A boltccd
 * compiling a .i does not (plain_debug_differs).  A stock distccd's debug
 * info names its own temp dir in any mode, as with distcc itself, so
 * "debug-info" does not keep jobs from stock daemons (doc/fidelity.md);
 * coverage does (its mapping would name the temp tree).
 */
static int
pump_gives_local(const struct job *j, int pumping, int proto)
{
	if (pumping && proto == BC_PROTO_BOLT)
		return 1;
	return proto != BC_PROTO_BOLT &&
	    strcmp(j->plan.pump_only, "debug-info") == 0;
}

static int
run_remote(struct job *j)
{
	struct bc_cconf *cfg = j->cfg;
	struct bc_hostlist hl;
	struct bc_buf doti;
	unsigned char *tried = NULL;
	char err[BC_ERRLEN];
	const char *last_why = NULL;
	char *last_host = NULL;
	char last_err[BC_ERRLEN];
	int cpp_done = 0, host_failed = 0, dia_skipped = 0, rc = -1, r;
	int pump_skipped = 0;	/* a pump-only job met a host it can't use */
	int looked_up = 0, inline_lookup = 0, eproto = 0, epump = 0;
	struct bc_cpump pump;	/* pump mode (client/pump.c) */
	int pump_state = 0;
	char ident[BC_HASH_HEXLEN + 1];
	ssize_t owner = -1;
	const char *no_host_why = "no-usable-host";

	if (j->plan.output == NULL || j->plan.source == NULL)
		return run_local(j, "no-output");
	if (cfg->error != NULL) {
		fprintf(stderr, "boltcc: error: %s (not compiling %s)\n",
		    cfg->error, j->plan.source != NULL ? j->plan.source : "");
		return cfg->error_exit;
	}
	r = bc_cconf_hosts(cfg, &hl, err);
	if (r == BC_ERR_NOENT) {
		if (!cfg->fallback) {
			fprintf(stderr, "boltcc: error: no hosts configured "
			    "(BOLTCC_HOSTS, DISTCC_HOSTS, %s/hosts, "
			    "/etc/distcc/hosts) and DISTCC_FALLBACK=0\n",
			    cfg->dir);
			return BC_EXIT_NO_HOSTS;
		}
		bc_warn("no hosts configured (set BOLTCC_HOSTS or "
		    "DISTCC_HOSTS); compiling %s locally", j->plan.source);
		return run_local(j, "no-hosts");
	}
	if (r != BC_OK) {
		fprintf(stderr, "boltcc: error: bad host list in %s: %s\n",
		    cfg->hosts_origin, err);
		return BC_EXIT_BAD_HOSTSPEC;
	}
	r = bc_cconf_make_dirs(cfg, err);
	if (r != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		bc_hosts_free(&hl);
		return BC_EXIT_IO_ERROR;
	}
	bc_buf_init(&doti, BC_MAX_DOTI);
	last_err[0] = '\0';
	tried = xcalloc(hl.n > 0 ? hl.n : 1, 1);
	bc_cpump_init(&pump);

	if (host_independent(j, &hl, &eproto, &epump) &&
	    !(epump && bc_cpump_try(&pump, &pump_state, &j->plan, &j->argv,
	    j->compiler_path, cfg->cwd, cfg->statedir,
	    eproto == BC_PROTO_BOLT, &j->stats))) {
		/* plain mode, whichever host: the local half before a slot */
		if (j->plan.pump_only != NULL &&
		    !pump_gives_local(j, 0, eproto)) {
			rc = run_local(j, j->plan.pump_only);
			goto out;
		}
		r = local_half(j, &hl, eproto, 1, &doti, &rc, &no_host_why);
		if (r > 0)
			goto out;
		if (r < 0)
			goto no_host;
		cpp_done = 1;
	}

	for (;;) {
		struct bc_slot slot = BC_SLOT_INIT;
		struct bc_remote_job rj;
		struct bc_remote_counts counts;
		struct bc_reply rep;
		const struct bc_host *h;
		const char *why = NULL;
		int proto = 1, pumping = 0;
		int64_t sent_at;	/* job time for host choice */

		r = bc_hostsel_pick(&hl, cfg->lockdir, tried,
		    cfg->backoff_period, (int64_t)cfg->io_timeout * 1000,
		    &slot, err);
		if (r != BC_OK) {
			no_host_why = r == BC_ERR_BUSY ? "no-free-slot" :
			    "no-usable-host";
			bc_debug("%s", err);
			break;
		}
		h = slot.host;
		tried[slot.host_index] = 1;

		if (h->kind == BC_HOST_LOCAL) {
			/* "localhost" in the list: run here, in its slot. */
			bc_cstats_add(&j->stats, "jobs_local", 1);
			bc_cstats_add2(&j->stats, "local_by_reason",
			    "localhost", 1);
			rc = job_exec_local(j);
			bc_hostsel_release(&slot);
			goto out;
		}
		if (h->kind != BC_HOST_TCP && h->kind != BC_HOST_SSH) {
			bc_info("skipping %s: not a TCP or SSH host",
			    host_label(h));
			bc_hostsel_release(&slot);
			continue;
		}
		r = choose_proto(j, h, &proto, err);
		if (r != BC_OK) {
			why = "probe-connect";
			goto host_failure;
		}
		if (j->plan.dia_file != NULL && proto != BC_PROTO_BOLT) {
			/* A stock distccd cannot return a .dia. */
			bc_info("skipping %s for %s: --serialize-diagnostics "
			    "needs a boltccd", host_label(h), j->plan.source);
			dia_skipped = 1;
			bc_hostsel_release(&slot);
			continue;
		}

		/* pump mode when wanted and the scanner allows, else plain
		 * mode for this job */
		pumping = wants_pump(cfg, h, proto) && bc_cpump_try(&pump,
		    &pump_state, &j->plan, &j->argv, j->compiler_path, cfg->cwd,
		    cfg->statedir, proto == BC_PROTO_BOLT, &j->stats);
		if (proto == 3 && !pumping)
			proto = 2;
		if (j->plan.pump_only != NULL &&
		    !pump_gives_local(j, pumping, proto)) {
			/* only a pump compile gives the local object */
			bc_info("skipping %s for %s: %s needs pump mode there",
			    host_label(h), j->plan.source, j->plan.pump_only);
			pump_skipped = 1;
			bc_hostsel_release(&slot);
			continue;
		}
		if (!cpp_done && !pumping) {
			r = local_half(j, &hl, proto, !looked_up, &doti, &rc,
			    &no_host_why);
			if (r != 0)
				bc_hostsel_release(&slot);
			if (r > 0)
				goto out;
			if (r < 0)
				break;
			cpp_done = 1;
		}

		if (!looked_up && proto == BC_PROTO_BOLT && cfg->cache) {
			looked_up = 1;
			ident[0] = '\0';
			if (pumping ? pump_lookup(j, &hl, &pump,
			    slot.host_index, &owner, &inline_lookup, &rc) :
			    cache_lookup(j, &hl, &doti, slot.host_index, ident,
			    &owner, &inline_lookup, &rc)) {
				bc_hostsel_release(&slot);
				goto out;
			}
			if (owner >= 0 && (size_t)owner != slot.host_index &&
			    !tried[owner])
				prefer_owner(j, &hl, (size_t)owner, tried, &slot);
			h = slot.host;
		}

		memset(&rj, 0, sizeof(rj));
		rj.host = h;
		rj.proto = proto;
		rj.argv = &j->plan.remote_argv;
		rj.cwd = cfg->cwd;
		rj.flags = j->plan.dia_file != NULL ? BC_FLAG_WANT_DIA : 0;
		if (looked_up && ident[0] != '\0') {
			rj.identity = ident;
			rj.flags |= inline_lookup ? BC_FLAG_HIT_MARK |
			    BC_FLAG_ORIGIN : BC_FLAG_LOOKED_UP;
		}
		rj.doti = bc_buf_data(&doti);
		rj.doti_len = bc_buf_len(&doti);
		rj.connect_timeout_ms = BC_CONNECT_TIMEOUT_MS;
		rj.io_timeout_ms = cfg->io_timeout * 1000;
		rj.statedir = cfg->statedir;
		bc_reply_init(&rep);
		job_note_state(j, h->name, slot.index);
		sent_at = bc_now_ms();
		r = pumping ? bc_cpump_compile(&pump, h, proto,
		    rj.connect_timeout_ms, rj.io_timeout_ms, &rep, &counts,
		    &why, err) : bc_remote_compile(&rj, &rep, &counts, &why, err);
		if (pumping)
			bc_cstats_add(&j->stats, "jobs_pump", 1);
		bc_hostsel_release(&slot);
		bc_cstats_add(&j->stats, "bytes_sent", (long long)counts.sent);
		bc_cstats_add(&j->stats, "bytes_received",
		    (long long)counts.received);
		if (r != BC_OK) {
			bc_reply_free(&rep);
			goto host_failure;
		}
		if (rep.status == 0 && j->plan.dia_file != NULL &&
		    bc_buf_len(&rep.dia) == 0) {
			/* clang always writes a non-empty .dia: the host did
			 * not make one, and Xcode needs it. */
			bc_info("%s returned no diagnostics file for %s",
			    host_label(h), j->plan.source);
			bc_reply_free(&rep);
			dia_skipped = 1;
			continue;
		}
		if (inline_lookup == 1) {
			/* the compile request was the lookup: count it once */
			inline_lookup = 2;
			if (rep.cache_hit)
				count_hit(j, &rep);
			else
				bc_cstats_add(&j->stats, "cache_misses", 1);
		}
		if (rep.status == 0) {
			r = write_outputs(j, &rep, err);
			if (r == BC_OK && pumping)
				r = bc_cpump_write_deps(&pump, &rep, err);
			if (r == BC_OK && proto == BC_PROTO_BOLT && looked_up)
				local_put(j, j->cache_key, &rep);
			if (r != BC_OK) {
				bc_reply_free(&rep);
				fprintf(stderr, "boltcc: error: %s\n", err);
				rc = BC_EXIT_IO_ERROR;
				goto out;
			}
			replay_reply(j, &rep);
			bc_hostsel_backoff_clear(cfg->lockdir, h);
			if (!rep.cache_hit) {
				bc_cstats_add(&j->stats, "jobs_remote_ok", 1);
				if (pumping)
					bc_cstats_add(&j->stats,
					    "jobs_remote_pump", 1);
				if (host_failed)	/* after a fault */
					bc_cstats_add(&j->stats,
					    "retries_other_host", 1);
				bc_hostsel_observe(cfg->lockdir, h,
				    (bc_now_ms() - sent_at) * 1000);
			}
			bc_reply_free(&rep);
			if (proto == BC_PROTO_BOLT && looked_up && !pumping)
				direct_record(j, &doti);
			rc = 0;
			goto out;
		}
		if (status_is_farm_failure(rep.status)) {
			char esc[200];
			size_t n = bc_buf_len(&rep.serr);

			bc_log_escape(bc_buf_data(&rep.serr), n < 150 ? n : 150,
			    esc, sizeof(esc));
			bc_seterr(err, BC_ERR_COMPILER,
			    "remote status 0x%x: %s", (unsigned)rep.status,
			    esc);
			why = WIFSIGNALED(rep.status) ? "remote-signal" :
			    "remote-daemon-error";
			bc_reply_free(&rep);
			/* The host answered: no backoff, but try another. */
			host_failed = 1;
			free(last_host);
			last_host = xstrdup(host_label(h));
			last_why = why;
			snprintf(last_err, sizeof(last_err), "%s", err);
			bc_cstats_add2(&j->stats, "host_failure_by_reason", why,
			    1);
			bc_info("%s on %s: %s", j->plan.source, host_label(h),
			    err);
			continue;
		}
		/* A genuine compile error. */
		bc_hostsel_backoff_clear(cfg->lockdir, h);
		bc_cstats_add(&j->stats, "jobs_remote_error", 1);
		if (pumping)
			bc_cstats_add(&j->stats, "jobs_remote_pump", 1);
		if (cfg->skip_local_retry) {
			/* Xcode reads the .dia on failure too (xcode.md 7.6). */
			if (j->plan.dia_file != NULL &&
			    bc_buf_len(&rep.dia) > 0 &&
			    bc_write_file_atomic(j->plan.dia_file,
			    bc_buf_data(&rep.dia), bc_buf_len(&rep.dia),
			    output_mode(), err) != BC_OK)
				bc_warn("%s", err);
			replay_reply(j, &rep);
			rc = bc_local_exit_code((int)rep.status);
			bc_reply_free(&rep);
			goto out;
		}
		bc_reply_free(&rep);
		/* Only the local compiler's messages are shown. */
		bc_cstats_add(&j->stats, "jobs_local", 1);
		bc_cstats_add2(&j->stats, "local_by_reason", "retry-after-error",
		    1);
		rc = exec_in_local_slot(j, hl.localslots);
		goto out;

host_failure:
		host_failed = 1;
		if (bc_ssh_explain(h, err) > 0)	/* ssh: the remote side's why */
			why = "ssh-remote-command";
		bc_cstats_add(&j->stats, "host_failures", 1);
		if (bc_remote_fault_counter(r, why) != NULL)
			bc_cstats_add(&j->stats, bc_remote_fault_counter(r,
			    why), 1);
		bc_cstats_add2(&j->stats, "host_failure_by_reason", why, 1);
		/* A boltccd that refused this one job (EROR: policy, busy)
		 * is alive and serves other jobs: no backoff mark. */
		if (cfg->backoff_period > 0 && r != BC_ERR_DENIED &&
		    r != BC_ERR_BUSY) {
			char *mark = xasprintf("%s%s%s", why,
			    err[0] != '\0' ? ": " : "", err);

			(void)bc_hostsel_backoff_mark_why(cfg->lockdir, h,
			    mark);
			free(mark);
		}
		free(last_host);
		last_host = xstrdup(host_label(h));
		last_why = why;
		snprintf(last_err, sizeof(last_err), "%s", err);
		bc_info("failed to distribute %s to %s: %s (%s)",
		    j->plan.source, host_label(h), why, err);
		bc_hostsel_release(&slot);
	}

no_host:
	/* A pump-only job no host could take runs locally, as a job that
	 * is not distributable does, whatever DISTCC_FALLBACK says. */
	if (pump_skipped && !host_failed) {
		rc = run_local(j, j->plan.pump_only);
		goto out;
	}
	/* No host left: local fallback (or not, with DISTCC_FALLBACK=0). */
	if (!cfg->fallback) {
		if (host_failed)
			fprintf(stderr, "boltcc: error: failed to distribute %s "
			    "to %s: %s; not compiling locally "
			    "(DISTCC_FALLBACK=0)\n", j->plan.source, last_host,
			    last_err[0] != '\0' ? last_err : last_why);
		else
			fprintf(stderr, "boltcc: error: cannot distribute %s: "
			    "%s; not compiling locally (DISTCC_FALLBACK=0)\n",
			    j->plan.source, dia_skipped ?
			    "--serialize-diagnostics needs a boltccd host" :
			    describe_no_host(no_host_why));
		bc_cstats_add(&j->stats, "jobs_failed_no_fallback", 1);
		rc = BC_EXIT_NO_HOSTS;
		goto out;
	}
	if (host_failed)
		fprintf(stderr, "boltcc: warning: failed to distribute %s to "
		    "%s: %s; compiling locally\n", j->plan.source, last_host,
		    last_err[0] != '\0' ? last_err : last_why);
	else
		bc_info("no host available for %s (%s); compiling locally",
		    j->plan.source, no_host_why);
	if (dia_skipped && !host_failed)
		rc = run_local(j, "serialize-diagnostics");
	else
		rc = run_fallback(j, host_failed ? last_why : no_host_why,
		    hl.localslots);
out:
	if (j->binstate)
		bc_binstate_clear(cfg->statedir);
	bc_cpump_free(&pump);
	free(tried);
	free(last_host);
	bc_buf_free(&doti);
	bc_hosts_free(&hl);
	return rc;
}

/* --------------------------------------------------------------------- */
/* client-only options */

/* The host list for --show-hosts, -j and --monitor (each says why there
 * is none). */
static int
load_hosts(const struct bc_cconf *cfg, struct bc_hostlist *hl)
{
	char err[BC_ERRLEN];
	int r = bc_cconf_hosts(cfg, hl, err);

	if (r == BC_ERR_NOENT)
		fprintf(stderr, "boltcc: no hosts configured (set "
		    "BOLTCC_HOSTS or DISTCC_HOSTS)\n");
	else if (r != BC_OK)
		fprintf(stderr, "boltcc: error: bad host list in %s: %s\n",
		    cfg->hosts_origin, err);
	return r;
}

/* One host's state for --show-hosts (see boltcc(1)). */
struct host_state {
	const char *kind;	/* tcp, ssh, localhost */
	int busy;		/* slots held now, -1 unknown */
	const char *server;	/* boltccd, distccd, local; NULL: unknown */
	const char *known_by;	/* "declared", "probed" or NULL */
	const char *state;	/* up, backoff, down, unusable */
	char until[BC_TIME_RFC3339_LEN];	/* backoff end, local time */
	char why[256];		/* backoff reason, "" if none recorded */
};

static void
host_state_get(const struct bc_cconf *cfg, const struct bc_host *h,
    struct host_state *st)
{
	time_t until;
	int probe;

	memset(st, 0, sizeof(*st));
	st->kind = h->kind == BC_HOST_LOCAL ? "localhost" :
	    h->kind == BC_HOST_SSH ? "ssh" : "tcp";
	st->busy = cfg->dir_ok ? bc_hostsel_busy_slots(cfg->lockdir, h) : -1;
	if (st->busy < 0)
		st->busy = -1;
	if (h->kind == BC_HOST_LOCAL)
		st->server = "local";
	else if (h->bolt != BC_BOLT_UNKNOWN) {
		st->server = h->bolt == BC_BOLT_YES ? "boltccd" : "distccd";
		st->known_by = "declared";
	} else if ((probe = bc_remote_probe_cached(cfg->statedir, h)) >= 0) {
		st->server = probe == 1 ? "boltccd" : "distccd";
		st->known_by = "probed";
	}
	st->state = "up";
	if (h->down)
		st->state = "down";
	else if (h->auth)
		st->state = "unusable";
	else if (h->kind != BC_HOST_LOCAL && cfg->dir_ok &&
	    bc_hostsel_backoff_info(cfg->lockdir, h, cfg->backoff_period,
	    &until, st->why, sizeof(st->why))) {
		st->state = "backoff";
		(void)bc_time_rfc3339(until, -1, st->until, sizeof(st->until));
	}
}

static void
show_host_line(const char *spec, int width, const struct bc_host *h,
    const struct host_state *st)
{
	char slots[32], server[64];

	if (st->busy >= 0)
		snprintf(slots, sizeof(slots), "%d/%d", st->busy, h->limit);
	else
		snprintf(slots, sizeof(slots), "?/%d", h->limit);
	if (st->known_by != NULL)
		snprintf(server, sizeof(server), "%s (%s)", st->server,
		    st->known_by);
	else
		snprintf(server, sizeof(server), "%s", st->server != NULL ?
		    st->server : "not probed");
	printf("%-*s  %-9s  slots %-5s  %-18s  ", width, spec, st->kind, slots,
	    server);
	if (strcmp(st->state, "backoff") == 0)
		printf("backoff until %s%s%s%s\n", st->until,
		    st->why[0] != '\0' ? " (" : "", st->why,
		    st->why[0] != '\0' ? ")" : "");
	else if (strcmp(st->state, "down") == 0)
		printf("down (,down)\n");
	else if (strcmp(st->state, "unusable") == 0)
		printf("unusable (,auth is not supported)\n");
	else
		printf("up\n");
}

static void
json_str_or_null(const char *s)
{
	if (s != NULL)
		json_str(stdout, s);
	else
		fputs("null", stdout);
}

static void
show_host_json(const char *spec, const struct bc_host *h,
    const struct host_state *st, int first)
{
	printf("%s{\"spec\":", first ? "" : ",");
	json_str(stdout, spec);
	printf(",\"kind\":\"%s\",\"slots\":%d,\"slots_used\":", st->kind,
	    h->limit);
	if (st->busy >= 0)
		printf("%d", st->busy);
	else
		printf("null");
	printf(",\"server\":");
	json_str_or_null(st->server);
	printf(",\"known_by\":");
	json_str_or_null(st->known_by);
	printf(",\"state\":\"%s\"", st->state);
	if (strcmp(st->state, "backoff") == 0) {
		printf(",\"backoff_until\":");
		json_str(stdout, st->until);
		printf(",\"backoff_reason\":");
		json_str_or_null(st->why[0] != '\0' ? st->why : NULL);
	}
	printf("}");
}

/* --show-hosts [--json]: one line (or object) per host with its state. */
static int
opt_show_hosts(const struct bc_cconf *cfg, int as_json)
{
	struct bc_hostlist hl;
	struct host_state st;
	char **specs;
	size_t i;
	int width = 0, r = load_hosts(cfg, &hl);

	if (r != BC_OK)
		return r == BC_ERR_NOENT ? BC_EXIT_NO_HOSTS :
		    BC_EXIT_BAD_HOSTSPEC;
	specs = xcalloc(hl.n, sizeof(*specs));
	for (i = 0; i < hl.n; i++) {
		specs[i] = bc_host_describe(&hl.v[i]);
		if ((int)strlen(specs[i]) > width)
			width = (int)strlen(specs[i]);
	}
	if (as_json)
		printf("{\"hosts\":[");
	for (i = 0; i < hl.n; i++) {
		host_state_get(cfg, &hl.v[i], &st);
		if (as_json)
			show_host_json(specs[i], &hl.v[i], &st, i == 0);
		else
			show_host_line(specs[i], width, &hl.v[i], &st);
		free(specs[i]);
	}
	if (as_json)
		printf("]}\n");
	free(specs);
	bc_hosts_free(&hl);
	return 0;
}

static int
opt_slots(const struct bc_cconf *cfg)
{
	struct bc_hostlist hl;
	int r = load_hosts(cfg, &hl);

	if (r != BC_OK)
		return r == BC_ERR_NOENT ? BC_EXIT_NO_HOSTS :
		    BC_EXIT_BAD_HOSTSPEC;
	printf("%d\n", bc_hosts_total_slots(&hl));
	bc_hosts_free(&hl);
	return 0;
}

/* Build the argv to classify from words that follow "boltcc". */
static void
argv_from_words(char **words, int n, struct bc_strv *out)
{
	int i = 0;

	if (n == 0 || words[0][0] == '-' || is_source_or_object(words[0]))
		bc_strv_push(out, "cc");	/* implicit */
	for (; i < n; i++)
		bc_strv_push(out, words[i]);
}

/* --explain: "key_paths" mapped or exact (with why) for a remote job, as
 * a pump key of the command (argv) would be, added at the end of the
 * plan's JSON object. */
static void
explain_key_paths(const struct bc_plan *plan, const struct bc_strv *argv,
    char **json)
{
	char cwd[PATH_MAX], *why, *esc, *nj;
	size_t n;

	if (*json == NULL || !plan->remote || (n = strlen(*json)) < 2 ||
	    (*json)[n - 1] != '}' || getcwd(cwd, sizeof(cwd)) == NULL)
		return;
	why = bc_cache_key_paths_argv(argv->v, argv->n, cwd);
	esc = bc_args_json_str(why);
	(*json)[n - 1] = '\0';
	nj = why == NULL ? xasprintf("%s,\"key_paths\":\"mapped\"}", *json) :
	    xasprintf("%s,\"key_paths\":\"exact\",\"key_paths_why\":%s}",
	    *json, esc);
	free(*json);
	*json = nj;
	free(esc);
	free(why);
}

static int
opt_explain(char **words, int n)
{
	struct bc_strv in = BC_STRV_INIT, ex = BC_STRV_INIT;
	struct bc_plan plan;
	char err[BC_ERRLEN];
	char *json;
	int r;

	if (n == 0) {
		fprintf(stderr, "boltcc: --explain needs a compiler command\n");
		return BC_EXIT_BAD_ARGUMENTS;
	}
	argv_from_words(words, n, &in);
	bc_plan_init(&plan);
	r = bc_args_expand_rsp(&in, &ex, err);
	if (r == BC_OK)
		r = bc_args_classify(&ex, &plan, err);
	if (r != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		bc_strv_free(&in);
		bc_strv_free(&ex);
		bc_plan_free(&plan);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	json = bc_plan_to_json(&plan);
	explain_key_paths(&plan, &ex, &json);
	printf("%s\n", json != NULL ? json : "{}");
	free(json);
	bc_plan_free(&plan);
	bc_strv_free(&in);
	bc_strv_free(&ex);
	return 0;
}

/* boltcc --monitor: the farm live (client/monitor.c). */
static int
opt_monitor(const struct bc_cconf *cfg, int argc, char **argv)
{
	struct bc_hostlist hl;
	int rc;

	if (load_hosts(cfg, &hl) != BC_OK)
		memset(&hl, 0, sizeof(hl));	/* the view says: no hosts */
	rc = bc_monitor_main(cfg, &hl, argc, argv);
	bc_hosts_free(&hl);
	return rc;
}

/*
 * argv[1] starts with "--" and is neither boltcc's option nor the gcc or
 * clang driver's: an error (distcc would run "cc --word"), with the
 * closest of boltcc's options when one is near (a typo).
 */
static int
unknown_option(const char *a)
{
	static const char *const mine[] = { "--help", "--version",
	    "--show-hosts", "--explain", "--stats", "--zero-stats", "--cache",
	    "--monitor", NULL };
	const char *near = NULL;
	size_t i, d, best = 3;

	for (i = 0; mine[i] != NULL; i++)
		if ((d = bc_str_distance(a, mine[i], 2)) < best) {
			best = d;
			near = mine[i];
		}
	if (near != NULL)
		fprintf(stderr, "boltcc: unknown option %s (did you mean %s? "
		    "see boltcc --help)\n", a, near);
	else
		fprintf(stderr, "boltcc: unknown option %s (see boltcc "
		    "--help)\n", a);
	return BC_EXIT_BAD_ARGUMENTS;
}

/* 1 and *rc set if argv[1] was a client-only option (or an unknown one). */
static int
client_option(const struct bc_cconf *cfg, int argc, char **argv, int *rc)
{
	const char *a = argv[1];

	if (strcmp(a, "--help") == 0 || (strcmp(a, "-h") == 0 && argc == 2)) {
		usage(stdout);
		*rc = 0;
	} else if (strcmp(a, "--version") == 0) {
		printf("boltcc %s\n", PACKAGE_VERSION);
		*rc = 0;
	} else if (strcmp(a, "--show-hosts") == 0) {
		int as_json = argc > 2 && strcmp(argv[2], "--json") == 0;

		if (argc > 2 + as_json) {
			fprintf(stderr, "boltcc: usage: --show-hosts "
			    "[--json]\n");
			*rc = BC_EXIT_BAD_ARGUMENTS;
		} else
			*rc = opt_show_hosts(cfg, as_json);
	} else if (strcmp(a, "-j") == 0 && argc == 2) {
		*rc = opt_slots(cfg);
	} else if (strcmp(a, "--explain") == 0) {
		*rc = opt_explain(argv + 2, argc - 2);
	} else if (strcmp(a, "--stats") == 0 || (strcmp(a, "-s") == 0 &&
	    bc_statscmd_is_stats(argc - 2, argv + 2))) {
		*rc = bc_statscmd_main(cfg, argc - 2, argv + 2);
	} else if (strcmp(a, "--zero-stats") == 0) {
		*rc = bc_statscmd_zero(cfg);
	} else if (strcmp(a, "--monitor") == 0) {
		*rc = opt_monitor(cfg, argc - 2, argv + 2);
	} else if (strcmp(a, "--cache") == 0) {
		*rc = bc_cacheadm_main(cfg, argc - 2, argv + 2);
	} else if (bc_str_has_prefix(a, "--") && a[2] != '\0' &&
	    !bc_args_is_driver_long_option(a)) {
		*rc = unknown_option(a);
	} else
		return 0;
	return 1;
}

/* --------------------------------------------------------------------- */

static void
setup_log(const struct bc_cconf *cfg)
{
	char err[BC_ERRLEN];
	size_t i;

	bc_log_init("boltcc", cfg->verbose ? BC_LOG_DEBUG :
	    (cfg->log_file != NULL ? BC_LOG_INFO : BC_LOG_WARN));
	if (cfg->log_file != NULL && bc_log_open(cfg->log_file, err) != BC_OK)
		fprintf(stderr, "boltcc: warning: %s\n", err);
	for (i = 0; i < cfg->warnings.n; i++)
		bc_warn("%s", cfg->warnings.v[i]);
}

int
main(int argc, char **argv)
{
	struct bc_cconf cfg;
	struct job j;
	char err[BC_ERRLEN];
	const char *base;
	int masquerade, rc, i;

	signal(SIGPIPE, SIG_IGN);
	bc_cconf_load(&cfg);
	setup_log(&cfg);
	bc_ssh_configure(cfg.dir_ok ? cfg.dir : NULL);
	bc_ssh_set_argv0(argc > 0 ? argv[0] : NULL);	/* finds boltcc-ssh */
	job_init(&j, &cfg);
	bc_local_self_init(&j.self, argc > 0 ? argv[0] : NULL, cfg.path_env);

	base = argc > 0 ? bc_basename(argv[0]) : "boltcc";
	masquerade = strstr(base, "boltcc") == NULL;

	if (masquerade) {
		bc_strv_push(&j.argv, base);
		for (i = 1; i < argc; i++)
			bc_strv_push(&j.argv, argv[i]);
	} else {
		if (argc < 2) {
			usage(stderr);
			rc = BC_EXIT_BAD_ARGUMENTS;
			goto done;
		}
		if (client_option(&cfg, argc, argv, &rc))
			goto done;
		argv_from_words(argv + 1, argc - 1, &j.argv);
	}

	/* CC=boltcc under Xcode: the building Xcode's clang (xcode.h). */
	rc = bc_xcode_resolve(&j.self, &j.argv, &j.compiler_path);
	if (rc != BC_OK)
		rc = bc_local_find_compiler(&j.self, j.argv.v[0],
		    cfg.path_env, &j.compiler_path, err);
	if (rc != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		rc = BC_EXIT_COMPILER_MISSING;
		goto done;
	}
	if (strchr(j.argv.v[0], '/') != NULL &&
	    bc_local_is_self(&j.self, j.argv.v[0])) {
		/* "boltcc /path/to/masquerade/gcc": the compiler is gcc. */
		char *name = xstrdup(bc_basename(j.argv.v[0]));

		free(j.argv.v[0]);
		j.argv.v[0] = name;
		masquerade = 1;
	}
	{
		char *clean = bc_local_clean_path(&j.self, j.argv.v[0],
		    cfg.path_env);

		/* Also when PATH is unset (Xcode's -cc1 jobs): gcc needs
		 * one to find itself from a bare argv[0]. */
		if (strcmp(clean, cfg.path_env) != 0 ||
		    !cfg.path_set) {
			bc_debug("PATH without masquerade dirs: %s", clean);
			setenv("PATH", clean, 1);
		}
		free(clean);
	}
	/* The argv the real compiler gets locally: the user's own words; in
	 * masquerade argv[0] was our link, so name the real compiler. */
	bc_strv_copy(&j.exec_argv, &j.argv);
	if (masquerade) {
		free(j.exec_argv.v[0]);
		j.exec_argv.v[0] = xstrdup(j.compiler_path);
	}

	if (cfg.safeguard) {
		/* Called by a compiler we started (or a loop of wrappers):
		 * never distribute, never recurse. */
		bc_debug("recursion guard set: running %s locally",
		    j.compiler_path);
		rc = job_exec_local(&j);
		goto done;
	}
	setenv("_DISTCC_SAFEGUARD", "1", 1);
	setenv("BOLTCC_SAFEGUARD", "1", 1);

	{
		struct bc_strv ex = BC_STRV_INIT;

		rc = bc_args_expand_rsp(&j.argv, &ex, err);
		if (rc == BC_OK)
			rc = bc_args_classify(&ex, &j.plan, err);
		bc_strv_free(&ex);
		if (rc != BC_OK) {
			bc_warn("cannot classify the command (%s); compiling "
			    "locally", err);
			rc = run_local(&j, "classify-error");
			goto done;
		}
	}
	if (!j.plan.remote) {
		rc = run_local(&j, j.plan.reason != NULL ? j.plan.reason :
		    "local");
		goto done;
	}
	/* debug info from a .i that would differ from the local compile's:
	 * the job leaves only in pump mode (doc/fidelity.md) */
	if (j.plan.pump_only == NULL && !j.plan.preprocessed &&
	    cfg.plain_debug != 1 && plain_debug_differs(&j.plan, &j.argv))
		j.plan.pump_only = "debug-info";
	rc = run_remote(&j);
	job_commit_stats(&j);
done:
	job_free(&j);
	bc_cconf_free(&cfg);
	return rc;
}
