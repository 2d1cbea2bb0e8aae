/*
 * err.h - the one error-code scheme of boltcc.
 *
 * Every library-level function returns BC_OK (0) or one of the negative
 * BC_ERR_* codes below.  A human-readable detail goes into a caller
 * supplied buffer of BC_ERRLEN bytes (parameter named `err`, may be NULL),
 * filled with bc_seterr().  Mapping to process exit codes happens only in
 * main() (see exitcode.h).
 */
#ifndef BC_ERR_H
#define BC_ERR_H

#include <stddef.h>

#define BC_ERRLEN 512

enum bc_err {
	BC_OK = 0,
	BC_ERR_INTERNAL = -1,	/* broken invariant inside boltcc */
	BC_ERR_ALLOC = -2,	/* out of memory */
	BC_ERR_LIMIT = -3,	/* a length or count exceeds a named limit */
	BC_ERR_PROTO = -4,	/* peer violated the protocol */
	BC_ERR_TRUNCATED = -5,	/* input ended before the structure did */
	BC_ERR_IO = -6,		/* a system call failed */
	BC_ERR_TIMEOUT = -7,	/* an I/O or job deadline passed */
	BC_ERR_EOF = -8,	/* peer closed the connection */
	BC_ERR_CORRUPT = -9,	/* compressed data or a stored blob is invalid */
	BC_ERR_INVAL = -10,	/* bad argument, option or configuration */
	BC_ERR_DENIED = -11,	/* refused by policy (ACL, allowlist) */
	BC_ERR_NOENT = -12,	/* no such file, host or entry */
	BC_ERR_BUSY = -13,	/* no free slot or queue full */
	BC_ERR_HOSTSPEC = -14,	/* bad host list */
	BC_ERR_COMPILER = -15,	/* the compiler could not be run */
	BC_ERR_NOTSUP = -16,	/* peer or host does not support this */
};

/* Static description of an error code; never NULL. */
const char *bc_strerror(int r);

/*
 * Write a formatted message into err (BC_ERRLEN bytes) if err is not NULL.
 * Always returns r, so callers can write `return bc_seterr(err, r, ...)`.
 */
int bc_seterr(char *err, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
