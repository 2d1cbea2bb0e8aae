/*
 * hostsel.c - host choice and slot locks shared through $DIR/lock/.
 *
 * Breadth-first over slot indices so load spreads over hosts and earlier
 * hosts are preferred, as distcc does.  Unlike distcc 3.4 the wait for a
 * free slot is bounded, and a list with no usable host is reported to the
 * caller (which compiles locally) instead of waiting forever.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/io.h"
#include "common/log.h"
#include "common/util.h"
#include "client/hostsel.h"

#define PICK_SLEEP_MIN_MS 10
#define PICK_SLEEP_MAX_MS 500

/* Copy s into out replacing anything outside [A-Za-z0-9._-] by '_'. */
static void
sanitize(const char *s, char *out, size_t outlen)
{
	size_t i = 0;

	for (; *s != '\0' && i + 1 < outlen; s++) {
		char c = *s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_')
			out[i++] = c;
		else
			out[i++] = '_';
	}
	out[i] = '\0';
}

static int
fmt_ok(int n, size_t outlen)
{
	return n >= 0 && (size_t)n < outlen ? BC_OK : BC_ERR_LIMIT;
}

int
bc_hostsel_host_key(const struct bc_host *h, char *out, size_t outlen)
{
	char name[256];

	sanitize(h->name != NULL ? h->name : "localhost", name, sizeof(name));
	if (h->kind == BC_HOST_TCP)
		return fmt_ok(snprintf(out, outlen, "%s_%d", name, h->port),
		    outlen);
	return fmt_ok(snprintf(out, outlen, "%s", name), outlen);
}

int
bc_hostsel_lock_name(const struct bc_host *h, int slot, char *out,
    size_t outlen)
{
	char name[256];

	if (h == NULL || h->kind == BC_HOST_LOCAL)
		return fmt_ok(snprintf(out, outlen, "cpu_localhost_%d", slot),
		    outlen);
	sanitize(h->name, name, sizeof(name));
	if (h->kind == BC_HOST_SSH)
		return fmt_ok(snprintf(out, outlen, "cpu_ssh_%s_%d", name,
		    slot), outlen);
	return fmt_ok(snprintf(out, outlen, "cpu_tcp_%s_%d_%d", name,
	    h->port, slot), outlen);
}

int
bc_hostsel_backoff_name(const struct bc_host *h, char *out, size_t outlen)
{
	char name[256];

	sanitize(h->name != NULL ? h->name : "localhost", name, sizeof(name));
	if (h->kind == BC_HOST_SSH)
		return fmt_ok(snprintf(out, outlen, "backoff_ssh_%s_0", name),
		    outlen);
	return fmt_ok(snprintf(out, outlen, "backoff_tcp_%s_%d_0", name,
	    h->port), outlen);
}

static int
backoff_path(const char *lockdir, const struct bc_host *h, char *out,
    size_t outlen)
{
	char name[512];

	if (bc_hostsel_backoff_name(h, name, sizeof(name)) != BC_OK)
		return BC_ERR_LIMIT;
	return fmt_ok(snprintf(out, outlen, "%s/%s", lockdir, name), outlen);
}

int
bc_hostsel_backoff_mark(const char *lockdir, const struct bc_host *h)
{
	char path[4096];
	int fd;

	if (backoff_path(lockdir, h, path, sizeof(path)) != BC_OK)
		return BC_ERR_LIMIT;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return BC_ERR_IO;
	if (write(fd, "x", 1) != 1) {
		close(fd);
		return BC_ERR_IO;
	}
	close(fd);
	/* O_TRUNC of an existing file may not move mtime: make it now. */
	(void)utimensat(AT_FDCWD, path, NULL, 0);
	return BC_OK;
}

void
bc_hostsel_backoff_clear(const char *lockdir, const struct bc_host *h)
{
	char path[4096];

	if (backoff_path(lockdir, h, path, sizeof(path)) == BC_OK)
		(void)unlink(path);
}

int
bc_hostsel_backed_off(const char *lockdir, const struct bc_host *h,
    int period)
{
	char path[4096];
	struct stat st;
	time_t now;

	if (period <= 0)
		return 0;
	if (backoff_path(lockdir, h, path, sizeof(path)) != BC_OK)
		return 0;
	if (stat(path, &st) != 0)
		return 0;
	now = time(NULL);
	return st.st_mtime + (time_t)period > now;
}

/* Try to lock one slot file: 1 taken by us, 0 busy, <0 error. */
static int
try_lock(const char *lockdir, const char *name, int cloexec, int *fd_out)
{
	char path[4096];
	struct flock fl;
	int fd;

	*fd_out = -1;
	if (fmt_ok(snprintf(path, sizeof(path), "%s/%s", lockdir, name),
	    sizeof(path)) != BC_OK)
		return BC_ERR_LIMIT;
	fd = open(path, O_WRONLY | O_CREAT | (cloexec ? O_CLOEXEC : 0), 0600);
	if (fd < 0)
		return BC_ERR_IO;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0;
	fl.l_len = 0;
	if (fcntl(fd, F_SETLK, &fl) == 0) {
		*fd_out = fd;
		return 1;
	}
	close(fd);
	if (errno == EAGAIN || errno == EACCES)
		return 0;
	return BC_ERR_IO;
}

static void
sleep_ms(int ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int
usable(const struct bc_hostlist *hl, size_t i, const char *lockdir,
    const unsigned char *tried, int backoff_period)
{
	const struct bc_host *h = &hl->v[i];

	if (tried != NULL && tried[i])
		return 0;
	if (h->down || h->auth || h->limit <= 0)
		return 0;
	if (h->kind != BC_HOST_LOCAL &&
	    bc_hostsel_backed_off(lockdir, h, backoff_period)) {
		bc_debug("host %s is backed off", h->spec);
		return 0;
	}
	return 1;
}

int
bc_hostsel_pick(const struct bc_hostlist *hl, const char *lockdir,
    const unsigned char *tried, int backoff_period, int64_t max_wait_ms,
    struct bc_slot *out, char *err)
{
	int64_t start = bc_now_ms();
	int delay = PICK_SLEEP_MIN_MS;
	unsigned char *cand;

	out->fd = -1;
	out->host = NULL;
	if (hl->n == 0)
		return bc_seterr(err, BC_ERR_NOENT, "empty host list");
	cand = xcalloc(hl->n, 1);
	for (;;) {
		int maxlimit = 0, any = 0, idx;
		size_t i;

		for (i = 0; i < hl->n; i++) {
			cand[i] = (unsigned char)usable(hl, i, lockdir, tried,
			    backoff_period);
			if (cand[i]) {
				any = 1;
				if (hl->v[i].limit > maxlimit)
					maxlimit = hl->v[i].limit;
			}
		}
		if (!any) {
			free(cand);
			return bc_seterr(err, BC_ERR_NOENT,
			    "no usable host (all down, backed off or tried)");
		}
		for (idx = 0; idx < maxlimit; idx++) {
			for (i = 0; i < hl->n; i++) {
				char name[512];
				int fd, r;

				if (!cand[i] || idx >= hl->v[i].limit)
					continue;
				if (bc_hostsel_lock_name(&hl->v[i], idx, name,
				    sizeof(name)) != BC_OK)
					continue;
				/* localhost slots may be held across exec */
				r = try_lock(lockdir, name,
				    hl->v[i].kind != BC_HOST_LOCAL, &fd);
				if (r < 0) {
					int e = errno;

					free(cand);
					return bc_seterr(err, BC_ERR_IO,
					    "cannot lock %s/%s: %s", lockdir,
					    name, strerror(e));
				}
				if (r == 1) {
					out->fd = fd;
					out->host = &hl->v[i];
					out->index = idx;
					out->host_index = i;
					free(cand);
					bc_debug("took slot %s", name);
					return BC_OK;
				}
			}
		}
		if (bc_now_ms() - start >= max_wait_ms) {
			free(cand);
			return bc_seterr(err, BC_ERR_BUSY,
			    "no free slot after %lld ms",
			    (long long)max_wait_ms);
		}
		sleep_ms(delay);
		delay *= 2;
		if (delay > PICK_SLEEP_MAX_MS)
			delay = PICK_SLEEP_MAX_MS;
	}
}

int
bc_hostsel_local_slot(const char *lockdir, int nslots, int64_t max_wait_ms,
    struct bc_slot *out, char *err)
{
	int64_t start = bc_now_ms();
	int delay = PICK_SLEEP_MIN_MS;

	out->fd = -1;
	out->host = NULL;
	if (nslots <= 0)
		nslots = 1;
	for (;;) {
		int i;

		for (i = 0; i < nslots; i++) {
			char name[64];
			int fd, r;

			if (bc_hostsel_lock_name(NULL, i, name, sizeof(name))
			    != BC_OK)
				continue;
			r = try_lock(lockdir, name, 0, &fd);
			if (r < 0)
				return bc_seterr(err, BC_ERR_IO,
				    "cannot lock %s/%s: %s", lockdir, name,
				    strerror(errno));
			if (r == 1) {
				out->fd = fd;
				out->index = i;
				return BC_OK;
			}
		}
		if (bc_now_ms() - start >= max_wait_ms)
			return bc_seterr(err, BC_ERR_BUSY,
			    "no free local slot after %lld ms",
			    (long long)max_wait_ms);
		sleep_ms(delay);
		delay *= 2;
		if (delay > PICK_SLEEP_MAX_MS)
			delay = PICK_SLEEP_MAX_MS;
	}
}

void
bc_hostsel_release(struct bc_slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->host = NULL;
}
