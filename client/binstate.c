/*
 * binstate.c - distcc-compatible state files (see binstate.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/binstate.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"

static void
set_name(char *dst, size_t n, const char *s)
{
	size_t k = s != NULL ? strnlen(s, n - 1) : 0;

	memset(dst, 0, n);
	if (k > 0)
		memcpy(dst, s, k);
}

int
bc_binstate_note(const char *statedir, int phase, const char *file,
    const char *host, int slot)
{
	struct bc_binstate st;
	char path[4096], tmp[4096];
	int fd, n;

	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	st.magic = BC_BINSTATE_MAGIC;
	st.cpid = (unsigned long)getpid();
	set_name(st.file, sizeof(st.file), file != NULL ?
	    bc_basename(file) : NULL);
	set_name(st.host, sizeof(st.host), host);
	st.slot = slot;
	st.curr_phase = phase;
	n = snprintf(path, sizeof(path), "%s/binstate_%ld", statedir,
	    (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(path))
		return BC_ERR_LIMIT;
	/* a whole record or none: a monitor may read it any time */
	n = snprintf(tmp, sizeof(tmp), "%s/tmp_binstate_%ld", statedir,
	    (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return BC_ERR_LIMIT;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return BC_ERR_IO;
	if (write(fd, &st, sizeof(st)) != (ssize_t)sizeof(st)) {
		close(fd);
		(void)unlink(tmp);
		return BC_ERR_IO;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		(void)unlink(tmp);
		return BC_ERR_IO;
	}
	return BC_OK;
}

void
bc_binstate_clear(const char *statedir)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/binstate_%ld", statedir,
	    (long)getpid());

	if (n > 0 && (size_t)n < sizeof(path))
		(void)unlink(path);
}

int
bc_binstate_read(const char *path, struct bc_binstate *out, char *err)
{
	struct bc_buf b;
	int r;

	bc_buf_init(&b, sizeof(*out) + 1);
	r = bc_read_file(path, sizeof(*out), &b, err);
	if (r == BC_OK && bc_buf_len(&b) != sizeof(*out))
		r = bc_seterr(err, BC_ERR_PROTO, "%s: %zu bytes, not a state "
		    "record of %zu", path, bc_buf_len(&b), sizeof(*out));
	if (r == BC_OK) {
		memcpy(out, bc_buf_data(&b), sizeof(*out));
		if (out->magic != BC_BINSTATE_MAGIC ||
		    out->struct_size != sizeof(*out))
			r = bc_seterr(err, BC_ERR_PROTO, "%s: wrong magic or "
			    "size", path);
		out->file[sizeof(out->file) - 1] = '\0';
		out->host[sizeof(out->host) - 1] = '\0';
		out->next = NULL;
	}
	bc_buf_free(&b);
	return r;
}
