/*
 * err.c - descriptions of the BC_ERR_* codes and the bc_seterr() helper
 * that fills a caller-supplied message buffer.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "err.h"

static const char *const err_names[] = {
	"success",				/* BC_OK */
	"internal error",			/* BC_ERR_INTERNAL */
	"out of memory",			/* BC_ERR_ALLOC */
	"limit exceeded",			/* BC_ERR_LIMIT */
	"protocol error",			/* BC_ERR_PROTO */
	"truncated input",			/* BC_ERR_TRUNCATED */
	"I/O error",				/* BC_ERR_IO */
	"timed out",				/* BC_ERR_TIMEOUT */
	"connection closed by peer",		/* BC_ERR_EOF */
	"corrupt data",				/* BC_ERR_CORRUPT */
	"invalid argument",			/* BC_ERR_INVAL */
	"access denied",			/* BC_ERR_DENIED */
	"no such file or entry",		/* BC_ERR_NOENT */
	"busy",					/* BC_ERR_BUSY */
	"bad host list",			/* BC_ERR_HOSTSPEC */
	"compiler could not be run",		/* BC_ERR_COMPILER */
	"not supported",			/* BC_ERR_NOTSUP */
};

const char *
bc_strerror(int r)
{
	size_t i;

	if (r > 0)
		return "unknown error";
	i = (size_t)-(long)r;
	if (i >= sizeof(err_names) / sizeof(err_names[0]))
		return "unknown error";
	return err_names[i];
}

int
bc_seterr(char *err, int r, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return r;
	va_start(ap, fmt);
	/* Truncation is acceptable: the message is advisory. */
	(void)vsnprintf(err, BC_ERRLEN, fmt, ap);
	va_end(ap);
	return r;
}
