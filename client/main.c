/*
 * main.c - the boltcc client: the invocation mode (masquerade link or
 * "boltcc COMPILER ..."), the client-only options (--show-hosts, -j,
 * --explain; --stats in client/statscmd.c, --cache in client/cacheadm.c,
 * --monitor in client/monitor.c), and the compile path up to the farm:
 * find the real compiler, classify the command (client/args.c), then
 * compile locally or hand the job to client/rjob.c.
 *
 * Exit status: the compiler's, or one of distcc's codes (exitcode.h) for
 * boltcc's own failures.  A farm failure never fails the build unless
 * DISTCC_FALLBACK=0.
 */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/hosts.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "cache/key.h"
#include "client/args.h"
#include "client/cacheadm.h"
#include "client/cconf.h"
#include "client/cjob.h"
#include "client/hostsel.h"
#include "client/local.h"
#include "client/monitor.h"
#include "client/remote.h"
#include "client/rjob.h"
#include "client/ssh.h"
#include "client/statscmd.h"
#include "client/xcode.h"

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

/* s as a JSON string (common/json.h). */
static void
json_str(FILE *f, const char *s)
{
	bc_json_fput_str(f, s);
}

/* --------------------------------------------------------------------- */
/* the compile path: what leaves only in pump mode */

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

/*
 * The real compiler for j->argv (the building Xcode's clang, or the
 * first on PATH that is not boltcc), PATH without masquerade dirs for it
 * and its children, and the argv it gets when run here.  BC_OK, or the
 * exit code after the message.
 */
static int
find_compiler(struct bc_cjob *j, int masquerade)
{
	const struct bc_cconf *cfg = j->cfg;
	char err[BC_ERRLEN], *clean;
	int r;

	/* CC=boltcc under Xcode: the building Xcode's clang (xcode.h). */
	r = bc_xcode_resolve(&j->self, &j->argv, cfg->developer_dir,
	    &j->compiler_path);
	if (r != BC_OK)
		r = bc_local_find_compiler(&j->self, j->argv.v[0],
		    cfg->path_env, &j->compiler_path, err);
	if (r != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		return BC_EXIT_COMPILER_MISSING;
	}
	if (strchr(j->argv.v[0], '/') != NULL &&
	    bc_local_is_self(&j->self, j->argv.v[0])) {
		/* "boltcc /path/to/masquerade/gcc": the compiler is gcc. */
		char *name = xstrdup(bc_basename(j->argv.v[0]));

		free(j->argv.v[0]);
		j->argv.v[0] = name;
		masquerade = 1;
	}
	clean = bc_local_clean_path(&j->self, j->argv.v[0], cfg->path_env);
	/* Also when PATH is unset (Xcode's -cc1 jobs): gcc needs one to
	 * find itself from a bare argv[0]. */
	if (strcmp(clean, cfg->path_env) != 0 || !cfg->path_set) {
		bc_debug("PATH without masquerade dirs: %s", clean);
		setenv("PATH", clean, 1);
	}
	free(clean);
	/* The argv the real compiler gets locally: the user's own words; in
	 * masquerade argv[0] was our link, so name the real compiler. */
	bc_strv_copy(&j->exec_argv, &j->argv);
	if (masquerade) {
		free(j->exec_argv.v[0]);
		j->exec_argv.v[0] = xstrdup(j->compiler_path);
	}
	return BC_OK;
}

/*
 * The compile: locally when called by a compiler boltcc started, or
 * when the command is not distributable; else through the farm
 * (client/rjob.c).  The exit code (a local compile execs).
 */
static int
compile(struct bc_cjob *j)
{
	struct bc_strv ex = BC_STRV_INIT;
	char err[BC_ERRLEN];
	int r;

	if (j->cfg->safeguard) {
		/* Called by a compiler we started (or a loop of wrappers):
		 * never distribute, never recurse. */
		bc_debug("recursion guard set: running %s locally",
		    j->compiler_path);
		return bc_cjob_exec_local(j);
	}
	setenv("_DISTCC_SAFEGUARD", "1", 1);
	setenv("BOLTCC_SAFEGUARD", "1", 1);

	r = bc_args_expand_rsp(&j->argv, &ex, err);
	if (r == BC_OK)
		r = bc_args_classify(&ex, &j->plan, err);
	bc_strv_free(&ex);
	if (r != BC_OK) {
		bc_warn("cannot classify the command (%s); compiling locally",
		    err);
		return bc_cjob_run_local(j, "classify-error");
	}
	if (!j->plan.remote)
		return bc_cjob_run_local(j, j->plan.reason != NULL ?
		    j->plan.reason : "local");
	/* debug info from a .i that would differ from the local compile's:
	 * the job leaves only in pump mode (doc/fidelity.md) */
	if (j->plan.pump_only == NULL && !j->plan.preprocessed &&
	    j->cfg->plain_debug != 1 && plain_debug_differs(&j->plan, &j->argv))
		j->plan.pump_only = "debug-info";
	/* what the environment makes pump mode's scan inexact (pump.c) */
	j->plan.env_cpath = bc_cconf_cpath_env(j->cfg);
	j->plan.env_deps = bc_cconf_deps_env(j->cfg);
	r = bc_rjob_run(j);
	bc_cjob_commit_stats(j);
	return r;
}

int
main(int argc, char **argv)
{
	struct bc_cconf cfg;
	struct bc_cjob j;
	const char *base;
	int masquerade, rc, i;

	signal(SIGPIPE, SIG_IGN);
	bc_cconf_load(&cfg);
	setup_log(&cfg);
	bc_ssh_configure(&cfg);
	bc_ssh_set_argv0(argc > 0 ? argv[0] : NULL);	/* finds boltcc-ssh */
	bc_cjob_init(&j, &cfg);
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
	rc = find_compiler(&j, masquerade);
	if (rc == BC_OK)
		rc = compile(&j);
done:
	bc_cjob_free(&j);
	bc_cconf_free(&cfg);
	return rc;
}
