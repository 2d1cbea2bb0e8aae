/*
 * pump.h - boltcc's pump mode: the include closure found by the scanner
 * (preproc/) is shipped instead of a preprocessed source, so the client
 * never runs the preprocessor for the job.
 *
 * Toward a stock distccd (host ",cpp,lzo") the request is distcc protocol
 * 3 as a stock pump client sends it (spec distcc-protocol.md 4.2, 7.2):
 * CDIR, the full argv (+ "-MT <output>" when a .d is wanted and no
 * -MT/-MQ was given), NFIL, then NAME+FILE for the source and each
 * header (LZO; a "#line 1" prefix for files reached through an absolute
 * path), NAME+LINK "../"x(20+slashes)+dir for the compiler's default
 * directories, and an empty forcing_technique_271828 file for every
 * directory that must exist.  The reply carries DOTD (the .d).
 *
 * Toward boltccd (",cpp" on a BOLT host) the BOLT pump request is used
 * instead (doc/PROTOCOL.md): manifest of names and SHA-256 first, only
 * the files the daemon does not hold are sent, zstd bodies.
 *
 * Where the scanner cannot be exact, bc_cpump_prepare returns
 * BC_ERR_NOTSUP with a static reason and the job goes to plain mode.
 */
#ifndef BC_CLIENT_PUMP_H
#define BC_CLIENT_PUMP_H

#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"
#include "common/hash.h"
#include "common/hosts.h"
#include "common/proto.h"
#include "common/util.h"
#include "client/args.h"
#include "client/remote.h"

#define BC_CPUMP_MARKER "forcing_technique_271828"

enum bc_cpump_kind { BC_CPUMP_FILE = 0, BC_CPUMP_LINK, BC_CPUMP_MARKER_FILE };

struct bc_cpump_ent {
	char *name;		/* absolute client path (NAME) */
	int kind;		/* enum bc_cpump_kind */
	int line_prefix;	/* protocol 3: "#line 1" first (reached via an
				 * absolute path) */
	char *target;		/* LINK target */
	int has_hash;		/* hash of the file contents is known */
	uint8_t hash[BC_HASH_LEN];
};

struct bc_cpump {
	char *cwd;
	struct bc_strv argv;		/* ARGV as sent */
	struct bc_cpump_ent *v;
	size_t n, cap;
	size_t nfiles;			/* source + headers */
	uint64_t scan_us;		/* time spent scanning */
	uint64_t memo_hits, memo_misses;
	uint64_t hash_hits, hash_misses;
	int dep_wanted;
	char *dep_file;
	int dep_style;			/* enum bc_deps_style, 0 = keep */
	int hashed;			/* hashes filled (for_bolt) */
	uint32_t flags;			/* BOLT pump FLAG (cache bits) */
	const char *identity;		/* CMPI to send (cache used), or NULL */
	struct bc_cstats *stats;	/* counters of the job, or NULL */
	const char *statedir;		/* heartbeat memory (remote.h) */
};

void bc_cpump_init(struct bc_cpump *p);
void bc_cpump_free(struct bc_cpump *p);

/*
 * Scan the job.  argv: the user's command (argv[0] the compiler as
 * named, response files not yet expanded); compiler_path: the real
 * compiler (asked once for its default directories, remembered in
 * statedir); for_bolt: the request goes to a boltccd (header maps and
 * absolute -F are then allowed; a stock distccd cannot rewrite them).
 * BC_OK, or BC_ERR_NOTSUP with *fallback a static reason, or another
 * error (with *fallback also set, to "scan-error").
 */
int bc_cpump_prepare(struct bc_cpump *p, const struct bc_plan *plan,
    const struct bc_strv *argv, const char *compiler_path, const char *cwd,
    const char *statedir, int for_bolt, const char **fallback, char *err);

/* Encode the whole protocol-3 request. */
int bc_cpump_encode_p3(const struct bc_cpump *p, struct bc_buf *out,
    char *err);

/*
 * The start of either exchange (protocol 3 here, the BOLT pump in
 * pumpx.c): encode the request into out, connect to h, *io on *fd with
 * io_timeout_ms.  BC_OK, or the error with out freed and *why "encode"
 * (our own encoding: a file changed since the scan) or the connect's.
 */
typedef int (*bc_cpump_encoder)(const struct bc_cpump *p,
    struct bc_buf *out, char *err);
int bc_cpump_open(const struct bc_cpump *p, bc_cpump_encoder encode,
    const struct bc_host *h, int connect_timeout_ms, int io_timeout_ms,
    struct bc_buf *out, int *fd, struct bc_io *io, const char **why,
    char *err);

/*
 * Run the job on h.  proto 3: distcc protocol 3; BC_PROTO_BOLT: the BOLT
 * pump request.  On BC_OK rep holds the reply (rep->dotd the .d text
 * when status == 0).  Errors are farm failures, *why a short reason.
 */
int bc_cpump_compile(struct bc_cpump *p, const struct bc_host *h, int proto,
    int connect_timeout_ms, int io_timeout_ms, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err);

/* Write the .d of a successful job where the compiler would have. */
int bc_cpump_write_deps(const struct bc_cpump *p, const struct bc_reply *rep,
    char *err);

/*
 * Scan once per job (*state 0 -> 1 usable, -1 plain mode), counting
 * pump_scans, pump_scan_us, pump_memo_hits/misses and
 * pump_fallback_by_reason:<reason>.  1 if pump mode can be used.
 */
struct bc_cstats;
int bc_cpump_try(struct bc_cpump *p, int *state, const struct bc_plan *plan,
    const struct bc_strv *argv, const char *compiler_path, const char *cwd,
    const char *statedir, int for_bolt, struct bc_cstats *stats);


#endif
