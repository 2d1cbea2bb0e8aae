/*
 * hostsel.c - host choice and slot locks shared through $DIR/lock/.
 *
 * The choice is bc_hostsel_choose(): the host where the job is expected
 * to finish soonest, from each host's free slots (fcntl F_GETLK on the
 * slot files) and observed job time (perf_* files); with no history all
 * hosts look equal and slots fill breadth-first as in distcc.  Waiters
 * sleep on a FIFO that every release writes to.  Unlike distcc 3.4 the
 * wait for a free slot is bounded, and a list with no usable host is
 * reported to the caller (which compiles locally) instead of waiting
 * forever.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "common/limits.h"

#define PICK_SLEEP_MIN_MS 1	/* wait ladder: 1 ms doubling ... */
#define PICK_SLEEP_MAX_MS 50	/* ... to 50 ms, between FIFO wakeups */
#define LOCAL_SLEEP_MIN_MS 10	/* bc_hostsel_local_slot's ladder */
#define LOCAL_SLEEP_MAX_MS 500
#define HOSTSEL_MAX_RACES 8	/* lost slot races before sleeping */
#define HOSTSEL_PERF_MAX_US (3600LL * 1000000)	/* one hour */

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
	return bc_hostsel_backoff_mark_why(lockdir, h, NULL);
}

int
bc_hostsel_backoff_mark_why(const char *lockdir, const struct bc_host *h,
    const char *why)
{
	char path[4096], text[BC_MAX_BACKOFF_REASON + 1];
	size_t n = 0;
	int fd;

	if (backoff_path(lockdir, h, path, sizeof(path)) != BC_OK)
		return BC_ERR_LIMIT;
	/* The reason as one line of printable ASCII; without one the mark
	 * holds a single "x", as before (distcc reads only the mtime). */
	for (; why != NULL && why[n] != '\0' && n < BC_MAX_BACKOFF_REASON; n++)
		text[n] = why[n] >= 0x20 && why[n] < 0x7f ? why[n] : ' ';
	if (n > 0)
		text[n++] = '\n';
	else
		text[n++] = 'x';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return BC_ERR_IO;
	if (write(fd, text, n) != (ssize_t)n) {
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

int
bc_hostsel_backoff_info(const char *lockdir, const struct bc_host *h,
    int period, time_t *until, char *why, size_t whylen)
{
	char path[4096], text[BC_MAX_BACKOFF_REASON + 2];
	struct stat st;
	ssize_t n;
	int fd;

	*until = 0;
	if (whylen > 0)
		why[0] = '\0';
	if (!bc_hostsel_backed_off(lockdir, h, period) ||
	    backoff_path(lockdir, h, path, sizeof(path)) != BC_OK ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return 0;
	}
	*until = st.st_mtime + (time_t)period;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	/* A reason is one line ending in '\n' ("x": none recorded). */
	if (n > 1 && text[n - 1] == '\n' && whylen > 0) {
		size_t i, len = (size_t)n - 1;

		for (i = 0; i < len; i++)
			if (text[i] < 0x20 || text[i] >= 0x7f)
				text[i] = ' ';
		if (len >= whylen)
			len = whylen - 1;
		memcpy(why, text, len);
		why[len] = '\0';
	}
	return 1;
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

/* a is clearly (more than 5%) faster than b */
static int
faster(int64_t a, int64_t b)
{
	return a * 100 < b * 95;
}

ssize_t
bc_hostsel_choose(const struct bc_hostsel_cand *c, size_t n, ssize_t owner,
    int ahead)
{
	int64_t sum = 0, dflt, tbest = 0, tfast = 0;
	double rate = 0;
	size_t i, known = 0, nusable = 0;
	ssize_t best = -1;

	for (i = 0; i < n; i++) {
		if (!c[i].usable || c[i].slots <= 0)
			continue;
		nusable++;
		if (c[i].est_us > 0) {
			sum += c[i].est_us;
			known++;
		}
	}
	if (nusable == 0)
		return BC_HOSTSEL_NONE;
	dflt = known > 0 ? sum / (int64_t)known : 1;
	if (dflt <= 0)
		dflt = 1;
#define EST(k) (c[k].est_us > 0 ? c[k].est_us : dflt)
	for (i = 0; i < n; i++) {
		int64_t t;

		if (!c[i].usable || c[i].slots <= 0 || c[i].busy >= c[i].slots)
			continue;
		t = EST(i);
		if (best < 0 || faster(t, tbest) ||
		    (!faster(tbest, t) && (int64_t)c[i].busy * c[best].slots <
		    (int64_t)c[best].busy * c[i].slots)) {
			best = (ssize_t)i;
			tbest = t;
		}
	}
	if (best < 0)
		return BC_HOSTSEL_WAIT;
	if (owner >= 0 && (size_t)owner < n && c[owner].usable &&
	    c[owner].busy < c[owner].slots && EST(owner) * 2 <= tbest * 3)
		return owner;
	/* Busy hosts much (1.5x) faster than the best free one: how soon
	 * would one of them take this job, and finish it?  Not for small
	 * differences: a job that waits leaves the free slot idle unless
	 * another process comes, and job times measured under load are
	 * noisy. */
	for (i = 0; i < n; i++) {
		int64_t t;

		if (!c[i].usable || c[i].slots <= 0 ||
		    EST(i) * 3 > tbest * 2)
			continue;
		t = EST(i);
		rate += (double)c[i].slots / (double)t;
		if (tfast == 0 || t < tfast)
			tfast = t;
	}
	if (rate > 0 && (double)(ahead > 0 ? ahead : 0) / rate +
	    1.0 / rate + (double)tfast < (double)tbest)
		return BC_HOSTSEL_WAIT;
	return best;
#undef EST
}

static int
perf_path(const char *lockdir, const struct bc_host *h, char *out,
    size_t outlen)
{
	char key[512];

	if (bc_hostsel_host_key(h, key, sizeof(key)) != BC_OK)
		return BC_ERR_LIMIT;
	return fmt_ok(snprintf(out, outlen, "%s/perf_%s_%s", lockdir,
	    h->kind == BC_HOST_SSH ? "ssh" : h->kind == BC_HOST_TCP ? "tcp" :
	    "local", key), outlen);
}

int64_t
bc_hostsel_perf_get(const char *lockdir, const struct bc_host *h)
{
	char path[4096];
	struct bc_buf b;
	struct stat st;
	long long v = 0;
	char *s = NULL;

	if (perf_path(lockdir, h, path, sizeof(path)) != BC_OK)
		return 0;
	if (stat(path, &st) != 0 ||
	    st.st_mtime + BC_HOSTSEL_PERF_STALE_SEC < time(NULL))
		return 0;
	bc_buf_init(&b, BC_MAX_HOSTSEL_PERF);
	if (bc_read_file(path, BC_MAX_HOSTSEL_PERF, &b, NULL) == BC_OK &&
	    bc_buf_len(&b) > 1 &&
	    bc_buf_data(&b)[bc_buf_len(&b) - 1] == '\n' &&
	    bc_buf_dup_cstr(&b, &s) == BC_OK) {
		s[strlen(s) - 1] = '\0';	/* the newline */
		if (bc_parse_int(s, 1, HOSTSEL_PERF_MAX_US, &v) != BC_OK)
			v = 0;
	}
	free(s);
	bc_buf_free(&b);
	return (int64_t)v;
}

void
bc_hostsel_observe(const char *lockdir, const struct bc_host *h, int64_t us)
{
	char path[4096], text[32];
	int64_t old, v;
	int n, fd;

	if (h == NULL || h->kind == BC_HOST_LOCAL || us <= 0)
		return;
	if (us > HOSTSEL_PERF_MAX_US)
		us = HOSTSEL_PERF_MAX_US;
	if (perf_path(lockdir, h, path, sizeof(path)) != BC_OK)
		return;
	old = bc_hostsel_perf_get(lockdir, h);
	/* EWMA, weight 1/4 on the new sample: a host that turns slow (or
	 * fast) shows within a few jobs */
	v = old > 0 ? old + (us - old) / 4 : us;
	if (v <= 0)
		v = 1;
	n = snprintf(text, sizeof(text), "%lld\n", (long long)v);
	if (n <= 0 || (size_t)n >= sizeof(text))
		return;
	/* Rewritten in place, not by temp file + rename: a new inode per
	 * job cost about 1 ms on a journaling disk, on every job.  A reader
	 * racing the write sees a torn or unparsable number at worst, which
	 * bc_hostsel_perf_get takes as "no history": this is a hint. */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || pwrite(fd, text, (size_t)n, 0) != (ssize_t)n ||
	    ftruncate(fd, (off_t)n) != 0)
		bc_debug("cannot record job time of %s: %s", h->spec,
		    strerror(errno));
	if (fd >= 0)
		close(fd);
}

int
bc_hostsel_owner_ok(const char *lockdir, const struct bc_host *to,
    const struct bc_host *from)
{
	int64_t tt, tf;

	if (to == NULL || from == NULL || to->kind == BC_HOST_LOCAL ||
	    from->kind == BC_HOST_LOCAL)
		return 1;
	tt = bc_hostsel_perf_get(lockdir, to);
	tf = bc_hostsel_perf_get(lockdir, from);
	return tt <= 0 || tf <= 0 || tt * 2 <= tf * 3;
}

/* 1 when another process holds slot file name, 0 free, <0 error.  With
 * create 0 a missing file is a free slot (nothing is written). */
static int
slot_busy(const char *lockdir, const char *name, int create)
{
	char path[4096];
	struct flock fl;
	int fd, r;

	if (fmt_ok(snprintf(path, sizeof(path), "%s/%s", lockdir, name),
	    sizeof(path)) != BC_OK)
		return BC_ERR_LIMIT;
	fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (fd < 0 && !create && errno == ENOENT)
		return 0;
	if (fd < 0)
		return BC_ERR_IO;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	r = fcntl(fd, F_GETLK, &fl);
	close(fd);
	if (r != 0)
		return BC_ERR_IO;
	return fl.l_type != F_UNLCK;
}

/*
 * The wake FIFO: waiters poll its read end, bc_hostsel_release writes a
 * byte.  The waiter also holds a write end, so that a FIFO whose last
 * writer closed does not report POLLHUP forever.
 */
static int
wake_path(const char *lockdir, char *path, size_t size)
{
	return lockdir != NULL && fmt_ok(snprintf(path, size, "%s/wake",
	    lockdir), size) == BC_OK;
}

struct waiter {
	int rfd, wfd;		/* wake FIFO ends, -1 = none */
	int qfd;		/* $lockdir/waiters with our byte lock */
	int ahead;		/* our byte's offset: waiters before us */
};

static void
waiter_open(struct waiter *w, const char *lockdir)
{
	char path[4096], wake[4096];
	struct stat st;
	int k;

	if (!wake_path(lockdir, wake, sizeof(wake)))
		return;
	if (w->rfd < 0) {
		if (mkfifo(wake, 0600) != 0 && errno != EEXIST)
			return;
		if (lstat(wake, &st) != 0 || !S_ISFIFO(st.st_mode))
			return;
		w->rfd = open(wake, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (w->rfd >= 0)
			w->wfd = open(wake, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	}
	if (w->qfd >= 0 || fmt_ok(snprintf(path, sizeof(path), "%s/waiters",
	    lockdir), sizeof(path)) != BC_OK)
		return;
	w->qfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (w->qfd < 0)
		return;
	for (k = 0; k < BC_MAX_HOSTSEL_WAITERS; k++) {
		struct flock fl;

		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		fl.l_start = k;
		fl.l_len = 1;
		if (fcntl(w->qfd, F_SETLK, &fl) == 0)
			break;
	}
	w->ahead = k;
}

static void
waiter_close(struct waiter *w)
{
	if (w->rfd >= 0)
		close(w->rfd);
	if (w->wfd >= 0)
		close(w->wfd);
	if (w->qfd >= 0)
		close(w->qfd);
	w->rfd = w->wfd = w->qfd = -1;
	w->ahead = 0;
}

/*
 * Sleep until this waiter is handed a release, or ms pass.  Each release
 * writes one byte and each waiter takes at most one: poll wakes every
 * waiter, but only the one that reads the byte scans the slots again;
 * the others sleep on (a release must not make N waiters scan the hosts'
 * lock files N times: measured, that cost 3 ms of CPU per job with 8
 * waiters).
 */
static int
waiter_sleep(struct waiter *w, int ms)
{
	struct pollfd pfd;
	int64_t end = bc_now_ms() + ms, left = ms;
	char b;

	if (w->rfd < 0) {
		bc_sleep_ms(ms);
		return 0;
	}
	while (left > 0) {
		pfd.fd = w->rfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)left) <= 0)
			return 0;	/* time is up (or a signal) */
		if ((pfd.revents & POLLIN) != 0) {
			if (read(w->rfd, &b, 1) == 1)
				return 1;	/* ours: look at the slots */
		} else if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) {
			bc_sleep_ms((int)left);	/* a FIFO that cannot wait */
			return 0;
		}
		left = end - bc_now_ms();
	}
	return 0;
}

static void
wake_waiters(const char *lockdir)
{
	char wake[4096];
	int fd;

	if (!wake_path(lockdir, wake, sizeof(wake)))
		return;
	/* ENXIO: nobody waits */
	fd = open(wake, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)!write(fd, "w", 1);
	close(fd);
}

/* Lock the lowest free slot of host i: 1 taken, 0 all busy, <0 error. */
static int
take_slot(const struct bc_hostlist *hl, size_t i, const char *lockdir,
    struct bc_slot *out, char *err)
{
	const struct bc_host *h = &hl->v[i];
	int idx;

	for (idx = 0; idx < h->limit; idx++) {
		char name[512];
		int fd, r;

		if (bc_hostsel_lock_name(h, idx, name, sizeof(name)) != BC_OK)
			continue;
		/* localhost slots may be held across exec */
		r = try_lock(lockdir, name, h->kind != BC_HOST_LOCAL, &fd);
		if (r < 0)
			return bc_seterr(err, BC_ERR_IO, "cannot lock %s/%s: %s",
			    lockdir, name, strerror(errno));
		if (r == 1) {
			out->fd = fd;
			out->host = h;
			out->index = idx;
			out->host_index = i;
			bc_debug("took slot %s", name);
			return 1;
		}
	}
	return 0;
}

/* A usable host with a slot free in this scan? */
static int
any_free(const struct bc_hostsel_cand *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].usable && c[i].busy < c[i].slots)
			return 1;
	return 0;
}

/* One bc_hostsel_pick: its hosts, its scan of them, its place in the
 * queue of waiters. */
struct pick {
	const struct bc_hostlist *hl;
	const char *lockdir;
	const unsigned char *tried;
	int backoff_period;
	int64_t start, max_wait_ms;
	struct bc_hostsel_cand *cand;	/* the last scan, one per host */
	struct waiter w;
	int delay;		/* ms of the next sleep (the wait ladder) */
	int handed;		/* the last sleep ended with a release */
};

/* Host i's candidate: usable, its slots, how many are busy, the job
 * time observed there. */
static int
pick_scan_host(struct pick *p, size_t i, char *err)
{
	const struct bc_host *h = &p->hl->v[i];
	struct bc_hostsel_cand *c = &p->cand[i];
	int idx, b;

	c->usable = usable(p->hl, i, p->lockdir, p->tried, p->backoff_period);
	c->slots = h->limit;
	c->busy = 0;
	c->est_us = 0;
	if (!c->usable)
		return BC_OK;
	for (idx = 0; idx < h->limit; idx++) {
		char name[512];

		if (bc_hostsel_lock_name(h, idx, name, sizeof(name)) != BC_OK)
			continue;
		if ((b = slot_busy(p->lockdir, name, 1)) < 0)
			return bc_seterr(err, BC_ERR_IO,
			    "cannot lock %s/%s: %s", p->lockdir, name,
			    strerror(errno));
		c->busy += b;
	}
	if (h->kind != BC_HOST_LOCAL)
		c->est_us = bc_hostsel_perf_get(p->lockdir, h);
	return BC_OK;
}

static int
pick_scan(struct pick *p, char *err)
{
	size_t i;
	int r;

	for (i = 0; i < p->hl->n; i++)
		if ((r = pick_scan_host(p, i, err)) != BC_OK)
			return r;
	return BC_OK;
}

/* bc_hostsel_choose over the scan; a pick that would wait, and may,
 * first takes a place in the queue and chooses again from there. */
static ssize_t
pick_choose(struct pick *p)
{
	ssize_t choice = bc_hostsel_choose(p->cand, p->hl->n, -1, p->w.ahead);

	if (choice == BC_HOSTSEL_WAIT && p->w.qfd < 0 && p->max_wait_ms > 0) {
		/* take a place in the queue, then decide again */
		waiter_open(&p->w, p->lockdir);
		if (p->w.qfd >= 0)
			choice = bc_hostsel_choose(p->cand, p->hl->n, -1,
			    p->w.ahead);
	}
	return choice;
}

/* Wait before the next scan: until handed a release or the ladder's
 * delay passes (at most what is left of max_wait_ms, at least 1 ms). */
static void
pick_sleep(struct pick *p)
{
	int64_t left;
	int ms;

	waiter_open(&p->w, p->lockdir);
	left = p->max_wait_ms - (bc_now_ms() - p->start);
	ms = left < p->delay ? (int)(left > 0 ? left : 1) : p->delay;
	if (p->handed && any_free(p->cand, p->hl->n)) {
		/* handed a release, but we wait for a faster host: pass
		 * the free slot on to the next waiter, and sleep by the
		 * clock this once */
		wake_waiters(p->lockdir);
		bc_sleep_ms(ms);
		p->handed = 0;
	} else
		p->handed = waiter_sleep(&p->w, ms);
	p->delay *= 2;
	if (p->delay > PICK_SLEEP_MAX_MS)
		p->delay = PICK_SLEEP_MAX_MS;
}

int
bc_hostsel_pick(const struct bc_hostlist *hl, const char *lockdir,
    const unsigned char *tried, int backoff_period, int64_t max_wait_ms,
    struct bc_slot *out, char *err)
{
	struct pick p = {
		.hl = hl, .lockdir = lockdir, .tried = tried,
		.backoff_period = backoff_period, .start = bc_now_ms(),
		.max_wait_ms = max_wait_ms, .w = { -1, -1, -1, 0 },
		.delay = PICK_SLEEP_MIN_MS,
	};
	ssize_t choice;
	int r, t, races = 0;

	out->fd = -1;
	out->host = NULL;
	out->lockdir = lockdir;
	if (hl->n == 0)
		return bc_seterr(err, BC_ERR_NOENT, "empty host list");
	p.cand = xcalloc(hl->n, sizeof(*p.cand));
	for (;;) {
		if ((r = pick_scan(&p, err)) != BC_OK)
			break;
		choice = pick_choose(&p);
		if (choice == BC_HOSTSEL_NONE) {
			r = bc_seterr(err, BC_ERR_NOENT,
			    "no usable host (all down, backed off or tried)");
			break;
		}
		if (choice >= 0) {
			t = take_slot(hl, (size_t)choice, lockdir, out, err);
			if (t != 0) {
				r = t < 0 ? t : BC_OK;	/* 1: taken */
				break;
			}
			/* another process was quicker: look again */
			if (++races < HOSTSEL_MAX_RACES)
				continue;
		}
		races = 0;
		if (bc_now_ms() - p.start >= max_wait_ms) {
			r = bc_seterr(err, BC_ERR_BUSY,
			    "no free slot after %lld ms",
			    (long long)max_wait_ms);
			break;
		}
		pick_sleep(&p);
	}
	waiter_close(&p.w);
	free(p.cand);
	return r;
}

int
bc_hostsel_busy_slots(const char *lockdir, const struct bc_host *h)
{
	int idx, b, busy = 0;

	for (idx = 0; idx < h->limit; idx++) {
		char name[512];

		if (bc_hostsel_lock_name(h, idx, name, sizeof(name)) != BC_OK)
			continue;
		if ((b = slot_busy(lockdir, name, 0)) < 0)
			return b;
		busy += b;
	}
	return busy;
}

int
bc_hostsel_local_slot(const char *lockdir, int nslots, int64_t max_wait_ms,
    struct bc_slot *out, char *err)
{
	int64_t start = bc_now_ms();
	int delay = LOCAL_SLEEP_MIN_MS;

	out->fd = -1;
	out->host = NULL;
	out->lockdir = NULL;	/* host slots' waiters need not wake */
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
		bc_sleep_ms(delay);
		delay *= 2;
		if (delay > LOCAL_SLEEP_MAX_MS)
			delay = LOCAL_SLEEP_MAX_MS;
	}
}

void
bc_hostsel_release(struct bc_slot *s)
{
	if (s->fd >= 0) {
		close(s->fd);
		wake_waiters(s->lockdir);
	}
	s->fd = -1;
	s->host = NULL;
}
