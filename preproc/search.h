/*
 * search.h - the header search-path model of gcc and clang.
 *
 * Order for #include "x": the includer's directory, then -iquote dirs,
 * then the angled chain.  Angled chain (#include <x>): -I and -F in
 * command-line order, -isystem and -iframework, the compiler's default
 * directories, -idirafter.  An -I or -iquote entry that is a header map
 * (.hmap, magic checked) is looked up as a map at that position.  A
 * framework entry resolves <Fw/Hdr.h> to Fw.framework/Headers/Hdr.h, then
 * PrivateHeaders.  #include_next continues after the entry where the
 * includer was found.  -I=dir and -isystem=dir are taken under the
 * sysroot.  The compiler's default directories come from
 * "CC -E -v -x LANG [flags] /dev/null", asked once per compiler identity
 * (path, inode, size, mtime) and relevant flags and remembered in
 * statedir.
 */
#ifndef BC_PP_SEARCH_H
#define BC_PP_SEARCH_H

#include <stddef.h>
#include "common/util.h"
#include "preproc/hmap.h"

enum bc_pp_ent_kind { BC_PP_ENT_DIR = 0, BC_PP_ENT_HMAP, BC_PP_ENT_FRAMEWORK };

struct bc_pp_ent {
	char *path;		/* as given (relative to cwd, or absolute) */
	int kind;		/* enum bc_pp_ent_kind */
	int sysdef;		/* a compiler default directory (not shipped) */
	struct bc_hmap *hmap;	/* BC_PP_ENT_HMAP */
};

struct bc_pp_search {
	struct bc_pp_ent *v;
	size_t n, cap;
	size_t quote_end;	/* [0, quote_end) are -iquote entries */
	struct bc_strv sysdirs;	/* compiler default dirs, as printed */
	struct bc_strv forced;	/* -include / -imacros files, in order */
	struct bc_strv user_dirs; /* -I/-iquote/... dirs that must exist */
	char *sysroot;
	char *lang;		/* c, c++, objective-c, objective-c++ */
	struct bc_strv query;	/* flags passed to the default-dir query */
	struct bc_strv defines;	/* -D operands ("NAME" or "NAME=value") */
	/* which candidate files exist, asked once per run (an include is
	 * probed again from every header that names it): bc_pp_resolve's,
	 * at most BC_PP_MAX_EXISTS_MEMO paths; NULL: none */
	struct bc_pp_exists *exists;
};

void bc_pp_search_init(struct bc_pp_search *s);
void bc_pp_search_free(struct bc_pp_search *s);

/*
 * Build the search model from a compiler argv (argv[0] the compiler as
 * invoked, compiler_path its resolved path, NULL = do not ask it: no
 * default dirs).  lang as classified.  cpath_env: CPATH,
 * C_INCLUDE_PATH, CPLUS_INCLUDE_PATH or OBJC_INCLUDE_PATH is set in the
 * compiler's environment (the caller read it), which the model does not
 * follow: "cpath-env".  Returns BC_OK; or BC_ERR_NOTSUP
 * with *fallback set to a static reason ("ivfsoverlay", "option:<...>"
 * kept short, "cpath-env", "default-dirs") when the model would not be
 * exact; other errors for allocation / system failures.
 */
int bc_pp_search_build(struct bc_pp_search *s, char *const *argv, size_t argc,
    const char *lang, const char *compiler_path, const char *statedir,
    int cpath_env, const char **fallback, char *err);

/* Parse the stderr of "cc -E -v": append dirs to out (frameworks get a
 * trailing "(framework)" marker stripped and flag set via fw). */
int bc_pp_parse_verbose(const char *text, size_t n, struct bc_strv *dirs,
    struct bc_strv *fwdirs);

/* Append entries directly (tests). */
void bc_pp_search_add(struct bc_pp_search *s, const char *path, int kind,
    int sysdef, int quote);

/*
 * Resolve an include spelling.  includer_dir: directory of the including
 * file (for quoted includes; NULL = none).  from: for #include_next the
 * index after which to continue (-1 = plain include).  On BC_OK *out is
 * the malloc'd path (relative or absolute as the search built it) and
 * *idx the entry (-1 for the includer's directory or an absolute name).
 * BC_ERR_NOENT if not found.
 */
int bc_pp_resolve(const struct bc_pp_search *s, const char *name, int angled,
    const char *includer_dir, long from, char **out, long *idx);

/* 1 if a regular file exists at path. */
int bc_pp_file_exists(const char *path);

#endif
