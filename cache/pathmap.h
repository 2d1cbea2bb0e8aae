/*
 * pathmap.h - path prefix maps as cache keys see them (doc/cache.md,
 * "Keys across checkouts").
 *
 * A command that maps its checkout with -ffile-prefix-map=OLD=NEW (or
 * -fdebug-prefix-map + -fmacro-prefix-map) makes objects that do not name
 * OLD.  When every absolute path of the job lies under such an OLD or
 * under a system directory, a pump key writes each path under OLD_i as
 * the token "\1<i>\1" + the rest, so two checkouts at different places
 * share the key.  The outputs that do name the user's paths (the .d,
 * stderr) are stored with the storer's OLDs turned into the same tokens
 * and turned back into the requester's own OLDs when served.
 *
 * Both sides compute all of this from the argv, the working directory and
 * the manifest alone, so the client's key and the daemon's agree.
 */
#ifndef BC_CACHE_PATHMAP_H
#define BC_CACHE_PATHMAP_H

#include <stddef.h>

#include "common/util.h"

struct bc_buf;

struct bc_pathmap {
	struct bc_strv old;	/* each map's OLD, argv order, no trailing
				 * '/'; "" for a map that cannot map (a
				 * relative OLD) */
	struct bc_strv sys;	/* directories whose paths stay as written */
	char *exact;		/* why the key stays exact (malloc'd), or
				 * NULL while paths can be mapped */
};

/* Read the maps and the system directories of argv.  With no usable map
 * the key is exact ("no path prefix map"). */
void bc_pathmap_init(struct bc_pathmap *pm, char *const *argv, size_t argc);
void bc_pathmap_free(struct bc_pathmap *pm);
/* 1 when keys use mapped paths (maps present and nothing kept the key
 * exact yet). */
int bc_pathmap_active(const struct bc_pathmap *pm);
/* Keep the key exact, saying why (the first reason stays). */
void bc_pathmap_set_exact(struct bc_pathmap *pm, const char *why,
    const char *what);

/* The mapped form of an absolute path (malloc'd), or NULL if no map
 * covers it. */
char *bc_pathmap_path(const struct bc_pathmap *pm, const char *path);
/* 1 if an absolute path lies under a system directory. */
int bc_pathmap_is_system(const struct bc_pathmap *pm, const char *path);
/*
 * A path the outputs may name (the working directory, a manifest entry):
 * its mapped form (malloc'd), or NULL when it stays as written (a system
 * path); an absolute path that is neither makes the key exact.
 */
char *bc_pathmap_need(struct bc_pathmap *pm, const char *path);
/*
 * One argv word as the key sees it: the mapped word (malloc'd) or NULL to
 * keep it.  A word with an absolute path that no map covers (outside the
 * system directories), or that holds an OLD anywhere but at the start of
 * a path, makes the key exact.
 */
char *bc_pathmap_word(struct bc_pathmap *pm, const char *word);

/*
 * Outputs.  make_escaped: the text is a .d (paths written with make's
 * escapes).  Tokenize: each OLD at the start of a path becomes its token;
 * BC_ERR_INVAL if the text already holds a token byte.  Detokenize: each
 * token becomes this command's OLD; BC_ERR_CORRUPT for a token naming no
 * map.  Appended to out.
 */
int bc_pathmap_tokenize(const struct bc_pathmap *pm, int make_escaped,
    const void *in, size_t n, struct bc_buf *out, char *err);
int bc_pathmap_detokenize(const struct bc_pathmap *pm, int make_escaped,
    const void *in, size_t n, struct bc_buf *out, char *err);
/* The same for clang's serialized diagnostics (common/dia.h): each file
 * name and message of the .dia in turn (an empty input stays empty). */
int bc_pathmap_tokenize_dia(const struct bc_pathmap *pm, const void *in,
    size_t n, struct bc_buf *out, char *err);
int bc_pathmap_detokenize_dia(const struct bc_pathmap *pm, const void *in,
    size_t n, struct bc_buf *out, char *err);
/* The first OLD (or extra, when not NULL) that n bytes at p contain as
 * written or as a symbol name would spell it, or NULL. */
const char *bc_pathmap_leak(const struct bc_pathmap *pm, const char *extra,
    const void *p, size_t n);

#endif
