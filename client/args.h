/*
 * args.h - argument classification for boltcc: is this compiler command
 * distributable, and if so, what runs locally (the preprocessor) and what
 * the daemon runs.  Rules: distcc 3.4's (spec distcc-protocol.md 8.4,
 * 8.5) plus Xcode's (spec xcode.md sections 1.2, 2 and 7).
 *
 * Classification never touches the file system or runs anything, so
 * `boltcc --explain` works without the compiler or the files.
 */
#ifndef BC_ARGS_H
#define BC_ARGS_H

#include "common/util.h"

struct bc_plan {
	int remote;		/* 1 = distribute, 0 = run locally unmodified */
	const char *reason;	/* static short reason, e.g. "link", "-E",
				 * "conftest", "distributable" */
	char *detail;		/* malloc'd human-readable explanation */

	char *compiler;		/* argv[0] as given */
	char *source;		/* the one source file */
	char *output;		/* object (or .s) path; derived if no -o */
	const char *lang;	/* "c", "c++", "objective-c", "objective-c++" */
	int preprocessed;	/* source is already .i/.ii/.mi/.mii */
	int dash_S;		/* -S instead of -c */
	int modules;		/* -fmodules given (stripped remotely): the
				 * runner must compile locally if the .i
				 * still has @import or "#pragma clang
				 * module import" */

	const char *pump_only;	/* "coverage", "profile-use" (client/args.c)
				 * or "debug-info" (client/main.c): the job
				 * may leave only in
				 * BOLT pump mode (the worker compiles the
				 * real files), else it runs locally with
				 * this reason; NULL: any mode */

	/* From the environment, not argv: set by client/main.c from the
	 * configuration after classifying (0 in a plan classified alone). */
	int env_cpath;		/* CPATH or an *_INCLUDE_PATH is set
				 * (bc_cconf_cpath_env): the scanner falls
				 * back */
	int env_deps;		/* DEPENDENCIES_OUTPUT or
				 * SUNPRO_DEPENDENCIES is set
				 * (bc_cconf_deps_env): pump mode falls
				 * back */

	int dep_wanted;		/* -MD/-MMD present */
	char *dep_file;		/* where the .d goes (explicit or derived) */
	char *dia_file;		/* --serialize-diagnostics path or NULL */
	char *profile_file;	/* -fprofile-instr-use's profile (pump mode
				 * ships it) or NULL */

	/* Local preprocessor command: writes the .i to stdout, and the .d
	 * (with -MF/-MT made explicit) exactly as a local compile would. */
	struct bc_strv cpp_argv;
	/* Argv for the daemon (protocols 1/2 and BOLT): preprocessor-only
	 * and Xcode-only options removed, source and -o as the user named
	 * them (the daemon substitutes its own paths). */
	struct bc_strv remote_argv;
};

void bc_plan_init(struct bc_plan *p);
void bc_plan_free(struct bc_plan *p);

/*
 * Expand @file response files (GNU quoting, as gcc/clang and Xcode 16
 * write them), recursively up to BC_MAX_RSP_DEPTH.  A file that cannot be
 * read is left as the literal argument, as gcc does.
 */
int bc_args_expand_rsp(const struct bc_strv *in, struct bc_strv *out,
    char *err);
/* Split response-file text into words (GNU rules). */
int bc_args_split_rsp(const char *text, size_t n, struct bc_strv *out,
    char *err);

/*
 * Classify argv (argv->v[0] is the compiler, @files already expanded).
 * Always fills plan->remote/reason; returns BC_OK, or an error only for
 * allocation failure.  plan is (re)initialised here: free a previous plan
 * with bc_plan_free() before reusing it.
 */
int bc_args_classify(const struct bc_strv *argv, struct bc_plan *plan,
    char *err);

/*
 * 1 if a, a word starting with "--", is a long option of the gcc or clang
 * driver: a name they know, alone or with "=value" (--std=c99, --output,
 * --sysroot=/x, --param, --help=warnings, the --cuda-*, --print-* ...
 * families).  "boltcc --word ..." with any other --word is an error, not
 * an implied "cc --word ...".
 */
int bc_args_is_driver_long_option(const char *a);

/* Print the plan as one JSON object line (for --explain). */
char *bc_plan_to_json(const struct bc_plan *p);
/* s as a JSON string, quotes included (malloc'd; "null" for NULL). */
char *bc_args_json_str(const char *s);

#endif
