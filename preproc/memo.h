/*
 * memo.h - what the scanner remembers across compiles: for each file,
 * its include directives (and, once asked for, the SHA-256 of its
 * contents), keyed by absolute path and valid only while the file's
 * identity and change stamps are the same (dev, inode, size, mtime and
 * ctime in nanoseconds).  One file under the state dir, loaded whole,
 * merged and written back under an fcntl lock by temp file and rename;
 * bounded in entries (least recently used dropped first).
 */
#ifndef BC_PP_MEMO_H
#define BC_PP_MEMO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "common/limits.h"	/* BC_PP_MEMO_MAX_*, BC_PP_MAX_SOURCE */
#include "preproc/lex.h"

struct bc_pp_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct bc_pp_mentry {
	char *path;
	struct bc_pp_stamp st;
	int64_t used;		/* unix seconds of last use */
	int has_hash;
	uint8_t hash[32];
	struct bc_pp_dirs dirs;
	int fresh;		/* added or touched by this process */
};

struct bc_pp_memo {
	struct bc_pp_mentry **tab;	/* open addressing, NULL = empty */
	size_t cap, n;
	char *file;			/* NULL = in-memory only */
	int dirty;
	uint64_t hits, misses;
	uint64_t hash_hits, hash_misses;
};

/* Seconds between updates of an entry's last-use stamp. */
#define BC_PP_MEMO_USED_GRAIN 3600

void bc_pp_stamp_of(const struct stat *sb, struct bc_pp_stamp *st);

/* Load file (missing = empty memo; a corrupt file is ignored). */
int bc_pp_memo_open(struct bc_pp_memo *m, const char *file, char *err);
/* Merge into the file under its lock and write it back if dirty. */
int bc_pp_memo_save(struct bc_pp_memo *m, char *err);
void bc_pp_memo_close(struct bc_pp_memo *m);

/*
 * Directives of the file at abspath (stat'ed here; lexed on a miss).
 * *dirs points into the memo (valid until close).  BC_ERR_NOENT /
 * BC_ERR_IO if it cannot be read.
 */
int bc_pp_memo_dirs(struct bc_pp_memo *m, const char *abspath,
    const struct bc_pp_dirs **dirs, char *err);

/*
 * SHA-256 of the contents of the file at abspath: the remembered one if
 * its stamps are unchanged, else read and hashed (and remembered when the
 * memo has an entry for the same stamps, i.e. after bc_pp_memo_dirs).
 */
int bc_pp_memo_hash(struct bc_pp_memo *m, const char *abspath,
    uint8_t out[32], char *err);

/* Serialize / parse the memo body (tests, fuzzing). */
int bc_pp_memo_parse(struct bc_pp_memo *m, const char *p, size_t n);

#endif
