/*
 * key.h - cache keys and compiler identities, shared by boltcc (which
 * asks for a key) and boltccd (which computes the key itself from what it
 * received before it stores or serves anything).  doc/cache.md lists what
 * is and is not in the key.
 *
 * key = SHA-256 over, in order, each field NUL-terminated:
 *   "boltcc-cache-key-v1", the compiler identity (hex), the request flags
 *   that change outputs, the normalized argv (argc, then each word), the
 *   debug directory marker, and the preprocessed input (length, bytes).
 *
 * Normalization (bc_cache_key_args): argv[0] becomes its basename (the
 * identity covers the binary); -o FILE / -oFILE, -MF/-MT/-MQ/-MJ and
 * their values, -MD -MMD -MP -MG and --serialize-diagnostics FILE are
 * dropped (they name outputs; the daemon replaces or removes them too);
 * every other word stays, in order, values of options that take one
 * included.
 */
#ifndef BC_CACHE_KEY_H
#define BC_CACHE_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/util.h"

/* Request flags that change what a compile returns (BOLT FLAG bits). */
#define BC_CACHE_KEY_FLAGS_MASK 0x1u	/* BC_FLAG_WANT_DIA */

struct bc_cache_key_in {
	const char *identity;	/* compiler identity, hex */
	char *const *argv;	/* the argv as sent on the wire */
	size_t argc;
	/* BOLT CDIR (the daemon maps its temp dir to it in debug info), or
	 * NULL for a distcc request (no mapping).  Only hashed when the argv
	 * enables debug info. */
	const char *cdir;
	uint32_t flags;		/* request flags; masked with ..._MASK */
	const void *doti;	/* preprocessed input */
	size_t doti_len;
};

/* Append the normalized argv to out. */
void bc_cache_key_args(char *const *argv, size_t argc, struct bc_strv *out);
/* 1 if the argv enables debug info (a -g option other than -g0 wins
 * last), 0 otherwise. */
int bc_cache_key_debug(char *const *argv, size_t argc);
/* The key as 64 lowercase hex digits. */
void bc_cache_key(const struct bc_cache_key_in *in,
    char out[BC_HASH_HEXLEN + 1]);

/*
 * Pump keys (BOLT pump requests, doc/cache.md "Pump keys"): SHA-256 over
 * "boltcc-pump-key-v1", the compiler identity, the masked flags, the
 * normalized argv (as bc_cache_key_args), the .d shape when one is wanted
 * (-MD/-MMD, -MP, -MG and the -MT/-MQ targets, which are written into the
 * .d; without -MT/-MQ the output name, which the daemon uses as target),
 * the working directory only when the argv enables debug info, then every
 * manifest entry as (kind, path, SHA-256 or link target) sorted, paths
 * below the working directory relative to it, others absolute.
 */
enum bc_cache_pump_kind {
	BC_CACHE_PUMP_FILE = 0,	/* hash */
	BC_CACHE_PUMP_LINK = 1,	/* target */
	BC_CACHE_PUMP_DIR = 2	/* a directory that must exist */
};

struct bc_cache_pump_ent {
	const char *name;	/* absolute client path */
	int kind;		/* enum bc_cache_pump_kind */
	const uint8_t *hash;	/* FILE: BC_HASH_LEN bytes */
	const char *target;	/* LINK */
	/* FILE that is a header map: the digest of its entries with their
	 * paths mapped (bc_hmap_digest with bc_pathmap_path), or NULL.
	 * Used in place of hash when the key is mapped. */
	const uint8_t *mhash;
};

struct bc_cache_pump_in {
	const char *identity;	/* compiler identity, hex */
	char *const *argv;	/* the argv as sent on the wire */
	size_t argc;
	const char *cwd;	/* CDIR, absolute */
	uint32_t flags;		/* masked with BC_CACHE_KEY_FLAGS_MASK */
	const struct bc_cache_pump_ent *ents;	/* manifest, any order */
	size_t n;
	int exact;		/* keep paths as written even if mappable */
};

/*
 * The length of the option part if arg is a path prefix map with its
 * value joined (-ffile-prefix-map=, -fdebug-prefix-map=,
 * -fmacro-prefix-map=, -fcoverage-prefix-map=), else 0.  A pump compile
 * adds a twin of each map for the tree it re-creates (daemon/pump.c), so
 * pump keys of argvs with maps carry a marker of that (objects stored
 * before the twins existed had the maps unapplied).
 */
size_t bc_cache_key_prefix_map_opt(const char *arg);
/* 1 if the argv asks for a .d (-MD or -MMD): then the .d is stored. */
int bc_cache_pump_deps_wanted(char *const *argv, size_t argc);
/* The pump key as 64 lowercase hex digits. */
void bc_cache_pump_key(const struct bc_cache_pump_in *in,
    char out[BC_HASH_HEXLEN + 1]);
/*
 * The same, saying how it treated paths: *exact_why NULL when the key is
 * mapped (cache/pathmap.h: every path of the job under a prefix map or a
 * system directory, so checkouts at other places share it), else why it
 * is exact (malloc'd: "no path prefix map", or the first path no map
 * covers).
 */
void bc_cache_pump_key_paths(const struct bc_cache_pump_in *in,
    char out[BC_HASH_HEXLEN + 1], char **exact_why);

/* What bc_cache_pump_key_paths would say of an argv run in cwd, from
 * the command alone (boltcc --explain): NULL for mapped, else why the key
 * is exact (malloc'd).  The files the scan finds can still make it
 * exact (a header outside every map). */
char *bc_cache_key_paths_argv(char *const *argv, size_t argc,
    const char *cwd);

/*
 * Compiler identity: SHA-256 over the output of `COMPILER --version`
 * (run as its resolved real path, LC_ALL=C) and the SHA-256 of the
 * resolved binary.  With memo_dir != NULL the result is remembered in
 * memo_dir/compiler-identity_<hash of path>, valid while the binary's
 * device, inode, size, mtime and ctime are unchanged.
 * BC_OK, or BC_ERR_NOENT / BC_ERR_COMPILER / BC_ERR_IO with err.
 */
int bc_cache_identity(const char *compiler_path, const char *memo_dir,
    char out[BC_HASH_HEXLEN + 1], char *err);

/* A client directory as the cache records who stored an entry (and the
 * wire's ORIG, common/proto.h): the first BC_CACHE_ORIGIN_LEN hex digits
 * of its SHA-256 ("" for NULL or ""). */
#define BC_CACHE_ORIGIN_LEN 16
void bc_cache_origin(const char *dir, char out[BC_CACHE_ORIGIN_LEN + 1]);

#endif
