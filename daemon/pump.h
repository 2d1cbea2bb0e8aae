/*
 * pump.h - the daemon side of pump mode (distcc protocol 3): the client's
 * files laid out under a private root with strict validation, the argv
 * rewritten so the compile reads them there while the object, the .d
 * file and diagnostics name the client's paths, and the .d fixed up.
 *
 * Tree rules (common/pumpname.h, doc/pump.md "What the daemon refuses"):
 * every entry is checked before the file system is touched (canonical
 * absolute NAME, checked LINK target, no name twice, nothing below a file
 * or a link); parent directories are created one by one with O_NOFOLLOW,
 * so nothing is ever written through a link; an existing entry is never
 * replaced.  Absolute link targets are taken under the root (as distccd
 * does); distcc's system-directory link is made only to a directory of
 * this host.
 */
#ifndef BC_PUMP_H
#define BC_PUMP_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/io.h"
#include "common/proto.h"
#include "common/pumpname.h"
#include "common/util.h"
#include "job.h"
#include "jobplan.h"

struct bc_pump_tree {
	char *root;		/* absolute, no trailing slash */
	int rootfd;
	size_t nfiles, nlinks;
	struct bc_pump_names names;	/* every entry so far, checked */
};

/* Create root (must not exist) and open it. */
int bc_pump_tree_open(struct bc_pump_tree *t, const char *root, char *why);
void bc_pump_tree_close(struct bc_pump_tree *t);
/* bc_proto3_entry_fn: ctx is the tree. */
int bc_pump_tree_add(void *ctx, const char *name, int is_link,
    const uint8_t *data, size_t len, char *why);
/* mkdir -p of a client directory inside the tree (for CDIR: it may be
 * there already, as a directory). */
int bc_pump_tree_mkdir(struct bc_pump_tree *t, const char *dir, char *why);
/* The same for a BOLT DIRM entry (an entry: named once). */
int bc_pump_tree_dirm(struct bc_pump_tree *t, const char *dir, char *why);
/* After the last entry and CDIR: every LINK followed through the tree
 * (bc_pump_names_resolve).  BC_OK or an error with why. */
int bc_pump_tree_finish(struct bc_pump_tree *t, char *why);

struct bc_pump_plan {
	struct bc_strv argv;	/* what runs (argv[0] = name0) */
	char *out_path;		/* absolute, in jobdir */
	char *deps_path;	/* absolute, in jobdir */
	char *orig_src;
};

void bc_pump_plan_free(struct bc_pump_plan *p);

/*
 * Rewrite a pump argv: absolute paths of the source and of -I, -iquote,
 * -isystem, -idirafter, -include, -imacros, -F, -iframework, -iprefix,
 * -iwithprefix(before) get the root prepended; -o goes to jobdir/out.o
 * (or .s); -MF goes to jobdir/deps.d, -MMD is added unless -MD/-MMD is
 * there, -MT <client output> is added unless -MT/-MQ is there; and
 * -ffile-prefix-map=<root>= maps every path in debug info, __FILE__ and
 * diagnostics back to the client's; a user's -f*-prefix-map=OLD=NEW with
 * an absolute OLD gets a twin <root>OLD=NEW after it, so the user's maps
 * still apply to the files under the root.  BC_ERR_DENIED with why otherwise.
 */
int bc_pump_plan_argv(char *const *argv, size_t argc, const char *name0,
    const char *root, const char *jobdir, struct bc_pump_plan *p, char *why);

/* Take "<root>" off every "<root>/..." in b (a compiler's messages
 * name the files of the tree as it saw them). */
void bc_pump_strip_root(const char *root, struct bc_buf *b);
/* The same for every file name and message of clang's serialized
 * diagnostics (common/dia.h): dia rewritten in place. */
int bc_pump_strip_root_dia(const char *root, struct bc_buf *dia, char *err);
/* Remove every "<root>" prefix from a dependency file's text. */
void bc_pump_fix_deps(const char *root, struct bc_buf *deps);

/*
 * Job glue (daemon/job.c): after the protocol-3 head, make the job dir
 * (*dir, set even on failure so the caller removes it), read the files
 * into <dir>/root, create the client's working directory there.
 * *root and *cwd are malloc'd.
 */
int bc_pump_receive(struct bc_io *io, const struct bc_request *req,
    char **dir, char **root, char **cwd, char *why);
/* bc_pump_plan_argv into a job plan (out_name relative to the job dir);
 * want_dia (a BOLT client's FLAG WANT_DIA, clang only): clang writes
 * <jobdir>/out.dia (plan->dia_name). */
int bc_pump_job_plan(char *const *argv, size_t argc, const char *name0,
    const char *root, const char *jobdir, int want_dia,
    struct bc_jobplan *plan, char *why);
/* Read <jobdir>/deps.d (if the compile succeeded) into deps, with the
 * root removed and the lines re-wrapped: the DOTD of both pump replies. */
void bc_pump_read_deps(const char *jobdir, const char *root,
    const struct bc_reply *rep, struct bc_buf *deps);
/* The protocol-3 reply, with <jobdir>/deps.d fixed up as DOTD. */
int bc_pump_write_reply(struct bc_buf *out, const char *jobdir,
    const char *root, const struct bc_reply *rep, char *err);

#endif
