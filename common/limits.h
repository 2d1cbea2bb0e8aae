/*
 * limits.h - a named limit for every length and count a peer can send.
 * Checked before anything is allocated; buffers grow only as data arrives.
 */
#ifndef BC_LIMITS_H
#define BC_LIMITS_H

/* The build adds common/ with -iquote only, so <limits.h> is never this
 * file. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Hard ceiling of any bc_buf, whatever its own max says. */
#define BC_BUF_CEILING		((size_t)1 << 31)		/* 2 GiB */

/* Request (client -> daemon). */
#define BC_MAX_ARGC		4096		/* ARGC */
#define BC_MAX_ARG_LEN		(64 * 1024)	/* one ARGV string */
#define BC_MAX_ARGV_TOTAL	(1024 * 1024)	/* all ARGV strings together */
#define BC_MAX_PATH_LEN		4096		/* CDIR, NAME, LINK */
#define BC_MAX_PATH_MAPS	256		/* -f*-prefix-map= a key maps */
#define BC_MAX_DOTI		((size_t)512 << 20)	/* preprocessed source, uncompressed */
#define BC_MAX_WIRE_BODY	((size_t)512 << 20)	/* any compressed body on the wire */
#define BC_MAX_NFIL		20000		/* pump: file entries in one job */
#define BC_MAX_FILE		((size_t)64 << 20)	/* pump: one shipped file */
#define BC_MAX_JOB_BYTES	((size_t)1 << 30)	/* pump: all files of a job */
/* Pump: the names of a job's tree (common/pumpname.h, doc/pump.md). */
#define BC_MAX_PATH_COMPONENT	255		/* one component of a NAME or
						 * LINK target (NAME_MAX) */
#define BC_MAX_PATH_DEPTH	128		/* components of a NAME */
#define BC_MAX_PUMP_NODES	262144		/* names and their directories
						 * in one job's tree */
#define BC_MAX_LINK_HOPS	40		/* links met while following a
						 * LINK through the tree (the
						 * kernel's own limit) */

/* Reply (daemon -> client). */
#define BC_MAX_OBJECT		((size_t)1 << 30)	/* DOTO */
#define BC_MAX_STDERR		((size_t)16 << 20)	/* SERR */
#define BC_MAX_STDOUT		((size_t)16 << 20)	/* SOUT */
#define BC_MAX_DOTD		((size_t)16 << 20)	/* DOTD */
#define BC_MAX_DEPS_WORDS	200000		/* targets + deps of one .d
						 * (common/deps.c) */
#define BC_MAX_DIA		((size_t)64 << 20)	/* serialized diagnostics */
#define BC_MAX_MSG		4096		/* boltcc extension: error text */
#define BC_MAX_LOC_HOST		255		/* LOCATE HOST, LOCN: a host as the
						 * client lists it */

/* The bytes boltccd's parent reads of a new connection to see whether it
 * is a cache lookup it can answer itself (a BOLT LOOKUP is 100 bytes, a
 * LOOKUPF 140, a LOCATE at most 407 with its ORIG). */
#define BC_MAX_LOOKUP_PEEK	512

/* clang's serialized diagnostics (common/dia.c), BC_MAX_DIA bytes. */
#define BC_MAX_DIA_DEPTH	16	/* nested blocks (clang: 2, a diagnostic
					 * and its notes) */
#define BC_MAX_DIA_ABBREVS	64	/* DEFINE_ABBREVs in one file (clang: 7,
					 * all in BLOCKINFO) */
#define BC_MAX_DIA_ABBREV_OPS	32	/* operands of one abbreviation (clang:
					 * 11 at most) */

/* Stream multiplexing (common/mux.h: boltccd --mux and the SSH helper),
 * what this side announces and enforces. */
#define BC_MUX_MAX_PAYLOAD	(32 * 1024)	/* one frame's payload */
#define BC_MUX_MIN_PAYLOAD	1024		/* a peer announcing a smaller
						 * payload is refused */
#define BC_MUX_WINDOW		(256 * 1024)	/* bytes a peer may send on one
						 * stream before more credit */
#define BC_MUX_MIN_WINDOW	4096		/* a peer announcing a smaller
						 * window is refused */
#define BC_MUX_MAX_STREAMS	256		/* open streams, whatever is
						 * announced */
#define BC_MUX_MAX_REASON	256		/* RESET / GOAWAY text */
#define BC_MUX_OUTQ_HIGH	(512 * 1024)	/* queued output above which
						 * local fds are not read */
#define BC_MUX_MAX_CREDIT	((uint32_t)1 << 30)	/* credit total of one
							 * stream */

/* Stats / HTTP request read by the daemon. */
#define BC_MAX_HTTP_REQUEST	8192
/* Connections whose request is not whole yet, held by boltccd's parent
 * (daemon/intake.h): at most this many (fewer if RLIMIT_NOFILE says so,
 * keeping BC_INTAKE_FD_RESERVE descriptors for everything else), each
 * buffering at most BC_MAX_INTAKE_BYTES before a worker reads on. */
#define BC_MAX_INTAKE		16384
#define BC_INTAKE_FD_RESERVE	64
#define BC_MAX_INTAKE_BYTES	((size_t)1 << 20)
/* Paths whose existence one include scan remembers (preproc/search.c):
 * beyond this many it asks the file system every time. */
#define BC_PP_MAX_EXISTS_MEMO	8192
/* A reply boltccd's parent sends itself (a cache hit, daemon/fasthit.h):
 * at most this large (a larger one is a worker's), and at most
 * BC_MAX_FASTHIT_PENDING bytes of such replies not yet sent in all. */
#define BC_MAX_FASTHIT_REPLY	((size_t)4 << 20)
#define BC_MAX_FASTHIT_PENDING	((size_t)64 << 20)
/* A stats page read by the client's monitor, and the JSON in it. */
#define BC_MAX_STATS_PAGE	(1024 * 1024)
#define BC_MAX_JSON_DEPTH	32
#define BC_MAX_JSON_NODES	65536
#define BC_MAX_JSON_STRING	4096
/* Its request line, as the admin parser reads it (daemon/admin.c). */
#define BC_MAX_HTTP_METHOD	16	/* bytes of the method token */
#define BC_MAX_HTTP_TARGET	512	/* bytes of the path and query */
#define BC_MAX_HTTP_PARAMS	8	/* name=value pairs in the query */
#define BC_MAX_HTTP_PARAM	64	/* bytes of one name or value */

/* Client side. */
#define BC_MAX_RSP_DEPTH	16		/* nested @file */
#define BC_MAX_RSP_SIZE		((size_t)4 << 20)	/* one response file */
#define BC_MAX_HOSTS		1024		/* entries in a host list */
#define BC_MAX_HOSTLIST_LEN	(256 * 1024)	/* bytes of host list text */
#define BC_MAX_HOST_SLOTS	1000		/* /N of one host entry */
#define BC_MAX_CFG_KEY		64		/* a key in a config file */
/* Files in the client's state dir, which other jobs write. */
#define BC_CSTATS_MAX_ENTRIES	512		/* lines of a counters file */
#define BC_CSTATS_MAX_FILE	(64 * 1024)	/* a counters file */
#define BC_MAX_HOSTSEL_WAITERS	4096		/* queue places in
						 * $lockdir/waiters */
#define BC_MAX_HOSTSEL_PERF	32		/* bytes of a perf_* file */
#define BC_MAX_BACKOFF_REASON	240		/* bytes of a backoff mark's
						 * reason */
#define BC_HITCACHE_MAX_ENTRIES	1000000		/* local tier entries the trim
						 * looks at (about 20 GiB of
						 * 20 KiB objects) */
/* Direct mode's manifests (client/direct.c). */
#define BC_DIRECT_MAX_MANIFEST	((size_t)8 << 20)	/* one manifest */
#define BC_DIRECT_MAX_FILES	20000		/* files one manifest names */
#define BC_DIRECT_MAX_HEADER	((size_t)64 << 20)	/* one recorded file */
/* Pages a daemon sends the client's commands. */
#define BC_MAX_STATSVIEW_PAGE	(64 * 1024)	/* a stats page for --stats */
#define BC_MAX_ADMIN_REPLY	(256 * 1024)	/* an admin reply (--cache) */
#define BC_MAX_SELFTEST_REPLY	((size_t)1 << 20)	/* a stats page during
							 * --selftest (a few
							 * KiB in practice) */
/* BEATs read before one reply; the job deadline bounds them anyway. */
#define BC_MAX_BEATS		1000000

/* ~/.ssh/config (client/sshconf.c) and SSH hosts (client/ssh.c). */
#define BC_MAX_SSH_INCLUDE_DEPTH 16	/* nested Include (OpenSSH: 16) */
#define BC_MAX_SSH_INCLUDE_FILES 256	/* files read to resolve one host */
#define BC_MAX_SSH_JUMPS	8	/* ProxyJump hops in front of a host */
#define BC_MAX_SSH_IDENTITIES	32	/* identity files of one host in a
					 * helper request (client/sshclient.c) */
#define BC_MAX_SSH_KNOWN_HOSTS	32	/* known_hosts files of one host in a
					 * helper request */
#define BC_SSHCONF_MAX_BYTES	(256 * 1024)	/* one config file */
#define BC_SSHCONF_MAX_LINE	4096
#define BC_SSHCONF_MAX_ARGS	64		/* words on one line */
#define BC_SSHCONF_MAX_FILES	16		/* identity / known-hosts files */
#define BC_SSH_MAX_REQUEST	16384		/* a request to the helper */
#define BC_SSH_MAX_STDERR	2048		/* remote stderr kept for messages */

/* Pump mode's include scanner (preproc/): the files it reads itself. */
#define BC_PP_MAX_SOURCE	((size_t)64 << 20)	/* one source or header
							 * file */
#define BC_HMAP_MAX_SIZE	((size_t)64 << 20)	/* one header map */
#define BC_PP_MEMO_MAX_FILE	((size_t)128 << 20)	/* the scan memo file
							 * ($DIR/state/ppmemo) */
#define BC_PP_MEMO_MAX_ENTRIES	100000		/* files in the scan memo */
#define BC_PP_MAX_DIRS		100000		/* directives in one file */
#define BC_PP_MAX_NAME		4096		/* one header name */
#define BC_PP_MAX_CLOSURE	20000		/* files one scan finds */
/* Pump files a daemon stores after the compile instead of at once
 * (daemon/pumpx.c). */
#define BC_PUMPX_DEFER_MAX	((size_t)32 << 20)

#endif
