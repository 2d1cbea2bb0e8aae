/*
 * scratch.c - the daemon's scratch directory and the sweep of job dirs
 * left by dead workers (see scratch.h).
 *
 * The sweep only touches entries directly under the scratch dir that
 * match the job dir pattern, carry this euid in their name, are real
 * directories (not symlinks) owned by this euid, and whose worker pid is
 * gone (kill(pid, 0) fails with ESRCH).  Removal goes through openat /
 * unlinkat relative to directory fds opened with O_NOFOLLOW, so a
 * symlink inside a job dir is unlinked, never followed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/err.h"
#include "common/osdep.h"
#include "common/util.h"
#include "scratch.h"

#define JOB_PREFIX	"boltccd."
#define JOB_SUFFIX_LEN	6	/* mkdtemp's XXXXXX */

static char *scratch_dir;
static const char *scratch_from;

/* dir without trailing slashes (but "/" stays "/") */
static char *
trimmed(const char *d)
{
	size_t l = strlen(d);

	while (l > 1 && d[l - 1] == '/')
		l--;
	return xstrndup(d, l);
}

int
bc_scratch_init(const char *opt, const char *tmpdir, char *err)
{
	const char *t = tmpdir, *m;
	struct stat st;

	free(scratch_dir);
	scratch_dir = NULL;
	if (opt != NULL) {
		if (opt[0] != '/' || stat(opt, &st) != 0 ||
		    !S_ISDIR(st.st_mode) || access(opt, W_OK | X_OK) != 0)
			return bc_seterr(err, BC_ERR_INVAL, "--tmp-dir: '%s' "
			    "is not an absolute path to a writable directory",
			    opt);
		scratch_dir = trimmed(opt);
		scratch_from = "--tmp-dir";
	} else if (t != NULL && t[0] != '\0') {
		scratch_dir = trimmed(t);
		scratch_from = "TMPDIR";
	} else if ((m = bc_osdep_memdir()) != NULL) {
		scratch_dir = xstrdup(m);
		scratch_from = "tmpfs";
	} else {
		scratch_dir = xstrdup("/tmp");
		scratch_from = "/tmp";
	}
	return BC_OK;
}

const char *
bc_scratch_dir(void)
{
	if (scratch_dir == NULL)
		(void)bc_scratch_init(NULL, NULL, NULL);
	return scratch_dir;
}

const char *
bc_scratch_origin(void)
{
	(void)bc_scratch_dir();
	return scratch_from;
}

int
bc_scratch_mkjob(char **out, char *err)
{
	char *t = xasprintf("%s/" JOB_PREFIX "%lu.%ld.XXXXXX",
	    bc_scratch_dir(), (unsigned long)geteuid(), (long)getpid());
	int e;

	*out = NULL;
	if (mkdtemp(t) == NULL) {
		e = errno;
		bc_seterr(err, BC_ERR_IO, "cannot create job directory %s: %s",
		    t, strerror(e));
		free(t);
		return BC_ERR_IO;
	}
	*out = t;
	return BC_OK;
}

/* Decimal number of 1..19 digits at *p, advanced past it. */
static int
number(const char **p, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long n = 0;
	int digits = 0;

	while (*s >= '0' && *s <= '9') {
		if (++digits > 19)
			return 0;
		n = n * 10 + (unsigned long long)(*s - '0');
		s++;
	}
	if (digits == 0)
		return 0;
	*p = s;
	*v = n;
	return 1;
}

int
bc_scratch_parse_name(const char *name, unsigned long *uid, long *pid)
{
	unsigned long long u, p;
	const char *s = name;
	int i;

	if (strncmp(s, JOB_PREFIX, sizeof(JOB_PREFIX) - 1) != 0)
		return 0;
	s += sizeof(JOB_PREFIX) - 1;
	if (!number(&s, &u) || *s++ != '.' || !number(&s, &p) || *s++ != '.')
		return 0;
	for (i = 0; i < JOB_SUFFIX_LEN; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9')))
			return 0;
	}
	if (s[JOB_SUFFIX_LEN] != '\0' || u > (unsigned long long)(uid_t)-1 ||
	    p == 0 || p > 0x7fffffffULL)
		return 0;
	*uid = (unsigned long)u;
	*pid = (long)p;
	return 1;
}

/* rm -rf of name in the directory dfd, never following a symlink.
 * 0 when gone, -1 if something stayed. */
static int
remove_at(int dfd, const char *name, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = -1, pass;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR || errno == ELOOP || errno == EMLINK)
			return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ?
			    0 : -1;
		return -1;
	}
	if (depth >= BC_SCRATCH_MAX_DEPTH) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	/* a compiler may leave a directory without write permission */
	if (fstat(fd, &st) == 0 && (st.st_mode & S_IRWXU) != S_IRWXU)
		(void)fchmod(fd, st.st_mode | S_IRWXU);
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	for (pass = 0; pass < 3; pass++) {
		rc = 0;
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			/* a non-directory is unlinked by the failed open
			 * (no d_type: not everywhere; sweeps are rare) */
			if (remove_at(dirfd(d), de->d_name, depth + 1) != 0)
				rc = -1;
		}
		if (rc != 0)
			break;
		if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			break;
		rc = -1;
		if (errno != ENOTEMPTY && errno != EEXIST)
			break;
		rewinddir(d);	/* an entry the listing missed */
	}
	closedir(d);
	return rc;
}

int
bc_scratch_sweep(const char *dir, unsigned *removed, char *err)
{
	struct bc_strv stale = BC_STRV_INIT;
	unsigned long me = (unsigned long)geteuid(), uid;
	struct dirent *de;
	struct stat st;
	size_t i;
	DIR *d;
	long pid;
	int dfd, r = BC_OK;

	if (removed != NULL)
		*removed = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || (d = fdopendir(dfd)) == NULL) {
		int e = errno;

		if (dfd >= 0)
			close(dfd);
		return bc_seterr(err, BC_ERR_IO, "cannot read %s: %s", dir,
		    strerror(e));
	}
	while ((de = readdir(d)) != NULL) {
		if (!bc_scratch_parse_name(de->d_name, &uid, &pid) ||
		    uid != me || (pid_t)pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;	/* alive, or not ours to judge */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)
		    != 0 || !S_ISDIR(st.st_mode) || st.st_uid != (uid_t)me)
			continue;
		bc_strv_push(&stale, de->d_name);
	}
	for (i = 0; i < stale.n; i++) {
		if (remove_at(dirfd(d), stale.v[i], 0) == 0) {
			if (removed != NULL)
				(*removed)++;
		} else if (r == BC_OK)
			r = bc_seterr(err, BC_ERR_IO, "cannot remove all of "
			    "%s/%s: %s", dir, stale.v[i], strerror(errno));
	}
	closedir(d);
	bc_strv_free(&stale);
	return r;
}
