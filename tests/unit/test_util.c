/*
 * test_util.c - unit tests of util.c (string vectors, atomic writes, temp
 * dirs, parsing helpers), err.c and log.c.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/sysmacros.h>	/* makedev */
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "tests/unit/unit.h"

static char *tmpd;

static void
setup(void)
{
	char err[BC_ERRLEN];

	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_util-", &tmpd, err),
	    BC_OK);
}

static void
teardown(void)
{
	ck_assert_int_eq(bc_rmtree(tmpd), BC_OK);
	free(tmpd);
	tmpd = NULL;
}

static size_t
count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

START_TEST(test_strv)
{
	struct bc_strv a = BC_STRV_INIT, b;
	char *const more[] = { "x", "y" };

	bc_strv_push(&a, "gcc");
	bc_strv_push(&a, "-c");
	bc_strv_push_owned(&a, xstrdup("hello.c"));
	ck_assert_uint_eq(a.n, 3);
	ck_assert_ptr_null(a.v[3]);
	bc_strv_insert(&a, 1, "-O2");
	bc_strv_insert(&a, 4, "-o");	/* at the end */
	bc_strv_insert(&a, 0, "ccache");
	ck_assert_uint_eq(a.n, 6);
	ck_assert_str_eq(a.v[0], "ccache");
	ck_assert_str_eq(a.v[1], "gcc");
	ck_assert_str_eq(a.v[2], "-O2");
	ck_assert_str_eq(a.v[5], "-o");
	ck_assert_ptr_null(a.v[6]);
	bc_strv_remove(&a, 0);
	bc_strv_remove(&a, 4);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_str_eq(a.v[0], "gcc");
	ck_assert_str_eq(a.v[3], "hello.c");
	ck_assert_ptr_null(a.v[4]);
	bc_strv_pushv(&a, more, 2);
	ck_assert_uint_eq(a.n, 6);
	ck_assert_str_eq(a.v[5], "y");

	bc_strv_copy(&b, &a);
	ck_assert_uint_eq(b.n, a.n);
	ck_assert_ptr_ne(b.v[0], a.v[0]);
	ck_assert_str_eq(b.v[2], "-c");
	ck_assert_ptr_null(b.v[b.n]);
	bc_strv_free(&a);
	ck_assert_ptr_null(a.v);
	ck_assert_uint_eq(a.n, 0);
	ck_assert_str_eq(b.v[5], "y");
	bc_strv_free(&b);

	/* Copy of an empty vector is a valid empty NULL-terminated vector. */
	bc_strv_init(&a);
	bc_strv_copy(&b, &a);
	ck_assert_uint_eq(b.n, 0);
	ck_assert_ptr_nonnull(b.v);
	ck_assert_ptr_null(b.v[0]);
	bc_strv_free(&b);
	/* Many pushes. */
	{
		int i;
		char num[16];

		for (i = 0; i < 1000; i++) {
			snprintf(num, sizeof(num), "%d", i);
			bc_strv_push(&a, num);
		}
		ck_assert_uint_eq(a.n, 1000);
		ck_assert_str_eq(a.v[999], "999");
		ck_assert_ptr_null(a.v[1000]);
		bc_strv_free(&a);
	}
}
END_TEST

START_TEST(test_strv_join)
{
	struct bc_strv a = BC_STRV_INIT;
	char *s;

	s = bc_strv_join(&a);
	ck_assert_str_eq(s, "");
	free(s);
	bc_strv_push(&a, "gcc");
	bc_strv_push(&a, "-DX=\"a b\"");
	bc_strv_push(&a, "it's");
	bc_strv_push(&a, "");
	bc_strv_push(&a, "-I/usr/include");
	bc_strv_push(&a, "$HOME;rm");
	s = bc_strv_join(&a);
	ck_assert_str_eq(s, "gcc '-DX=\"a b\"' 'it'\\''s' '' -I/usr/include "
	    "'$HOME;rm'");
	free(s);
	bc_strv_free(&a);
}
END_TEST

START_TEST(test_atomic_write)
{
	char err[BC_ERRLEN], *path, *bad;
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	struct stat st;
	mode_t old;

	path = xasprintf("%s/out.o", tmpd);
	ck_assert_int_eq(bc_write_file_atomic(path, "first", 5, 0644, err),
	    BC_OK);
	ck_assert_int_eq(bc_read_file(path, 100, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 5);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "first", 5), 0);
	/* Replaces the target; no temp file remains. */
	old = umask(022);
	ck_assert_int_eq(bc_write_file_atomic(path, "second!", 7, 0666, err),
	    BC_OK);
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);	/* 0666 & ~022 */
	bc_buf_reset(&b);
	ck_assert_int_eq(bc_read_file(path, 100, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 7);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "second!", 7), 0);
	ck_assert_uint_eq(count_entries(tmpd), 1);

	/* Failure: target is a directory -> rename fails, temp removed,
	 * directory untouched. */
	bad = xasprintf("%s/adir", tmpd);
	ck_assert_int_eq(mkdir(bad, 0755), 0);
	ck_assert_int_eq(bc_write_file_atomic(bad, "x", 1, 0644, err),
	    BC_ERR_IO);
	ck_assert(err[0] != '\0');
	ck_assert_uint_eq(count_entries(tmpd), 2);
	ck_assert_int_eq(stat(bad, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	free(bad);
	/* Failure: directory missing. */
	bad = xasprintf("%s/nodir/x.o", tmpd);
	ck_assert_int_eq(bc_write_file_atomic(bad, "x", 1, 0644, err),
	    BC_ERR_IO);
	free(bad);
	/* Empty content. */
	ck_assert_int_eq(bc_write_file_atomic(path, "", 0, 0600, err), BC_OK);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_uint_eq(count_entries(tmpd), 2);
	free(path);
	bc_buf_free(&b);
}
END_TEST

/* A compile's output: replaces a regular file (and a symlink, as the
 * temp-and-rename always did); a FIFO or a device (-o /dev/null) is
 * written into and stays what it is. */
START_TEST(test_write_output)
{
	char err[BC_ERRLEN], *path, *fifo, *dev, buf[16];
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	struct stat st;
	pid_t pid;
	int status, fd;
	ssize_t k;

	path = xasprintf("%s/w.o", tmpd);
	ck_assert_int_eq(bc_write_output(path, "one", 3, 0644, err), BC_OK);
	ck_assert_int_eq(bc_write_output(path, "two!", 4, 0644, err), BC_OK);
	ck_assert_int_eq(bc_read_file(path, 100, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 4);
	ck_assert_int_eq(memcmp(bc_buf_data(&b), "two!", 4), 0);
	ck_assert_uint_eq(count_entries(tmpd), 1);
	/* a FIFO: a child reads what is written into it */
	fifo = xasprintf("%s/fifo", tmpd);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fd = open(fifo, O_RDONLY);
		k = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
		_exit(k == 5 && memcmp(buf, "fifo!", 5) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(bc_write_output(fifo, "fifo!", 5, 0644, err), BC_OK);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	/* a null device of our own (root only: mknod) */
	dev = xasprintf("%s/null", tmpd);
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		ck_assert_int_eq(bc_write_output(dev, "x", 1, 0644, err), BC_OK);
		ck_assert_int_eq(bc_write_file_atomic(dev, "y", 1, 0644, err),
		    BC_OK);
		ck_assert_int_eq(lstat(dev, &st), 0);
		ck_assert(S_ISCHR(st.st_mode));
	}
	free(dev);
	free(fifo);
	free(path);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_read_file)
{
	char err[BC_ERRLEN], *path;
	struct bc_buf b = BC_BUF_INIT(1 << 20);

	path = xasprintf("%s/f", tmpd);
	ck_assert_int_eq(bc_write_file_atomic(path, "0123456789", 10, 0644,
	    err), BC_OK);
	ck_assert_int_eq(bc_read_file(path, 9, &b, err), BC_ERR_LIMIT);
	ck_assert_uint_eq(bc_buf_len(&b), 0);
	ck_assert_int_eq(bc_read_file(path, 10, &b, err), BC_OK);
	ck_assert_uint_eq(bc_buf_len(&b), 10);
	free(path);
	path = xasprintf("%s/missing", tmpd);
	ck_assert_int_eq(bc_read_file(path, 10, &b, err), BC_ERR_NOENT);
	free(path);
	ck_assert_int_eq(bc_read_file(tmpd, 10, &b, err), BC_ERR_INVAL);
	bc_buf_free(&b);
}
END_TEST

START_TEST(test_mkdir_rmtree)
{
	char err[BC_ERRLEN], *deep, *f, *outside, *link;
	struct stat st;

	deep = xasprintf("%s/a/b//c/d", tmpd);
	ck_assert_int_eq(bc_mkdir_p(deep, 0755, err), BC_OK);
	ck_assert_int_eq(stat(deep, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(bc_mkdir_p(deep, 0755, err), BC_OK);	/* exists */
	f = xasprintf("%s/file", deep);
	ck_assert_int_eq(bc_write_file_atomic(f, "x", 1, 0644, err), BC_OK);
	ck_assert_int_ne(bc_mkdir_p(f, 0755, err), BC_OK);	/* a file */

	/* rmtree does not follow symlinks out of the tree. */
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "test_util-out-",
	    &outside, err), BC_OK);
	free(f);
	f = xasprintf("%s/keep", outside);
	ck_assert_int_eq(bc_write_file_atomic(f, "k", 1, 0644, err), BC_OK);
	link = xasprintf("%s/a/link", tmpd);
	ck_assert_int_eq(symlink(outside, link), 0);
	free(deep);
	deep = xasprintf("%s/a", tmpd);
	ck_assert_int_eq(bc_rmtree(deep), BC_OK);
	ck_assert_int_eq(lstat(deep, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(stat(f, &st), 0);	/* survived */
	ck_assert_int_eq(bc_rmtree(outside), BC_OK);
	ck_assert_int_eq(stat(outside, &st), -1);
	/* Removing something that does not exist is fine. */
	ck_assert_int_eq(bc_rmtree(outside), BC_OK);
	free(outside);
	free(link);
	free(deep);
	free(f);
}
END_TEST

START_TEST(test_mkdtemp_tmpdir)
{
	char err[BC_ERRLEN], *d, *old, *want;
	const char *e = getenv("TMPDIR");
	struct stat st;

	old = e != NULL ? xstrdup(e) : NULL;
	want = xasprintf("%s/", tmpd);	/* trailing slash tolerated */
	setenv("TMPDIR", want, 1);
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "pfx-", &d, err), BC_OK);
	ck_assert(bc_str_has_prefix(d, tmpd));
	ck_assert_ptr_nonnull(strstr(d, "/pfx-"));
	ck_assert_ptr_null(strstr(d, "//"));
	ck_assert_int_eq(stat(d, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	free(d);
	setenv("TMPDIR", "/nonexistent-boltcc-dir", 1);
	d = (char *)1;
	ck_assert_int_eq(bc_mkdtemp(getenv("TMPDIR"), "pfx-", &d, err),
	    BC_ERR_IO);
	ck_assert_ptr_null(d);
	if (old != NULL)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	free(want);
}
END_TEST

START_TEST(test_paths_strings)
{
	ck_assert_str_eq(bc_basename("/usr/bin/gcc"), "gcc");
	ck_assert_str_eq(bc_basename("gcc"), "gcc");
	ck_assert_str_eq(bc_basename("dir/"), "");
	ck_assert_str_eq(bc_extension("a/b.c"), ".c");
	ck_assert_str_eq(bc_extension("x.tar.gz"), ".gz");
	ck_assert_str_eq(bc_extension("a.d/file"), "");
	ck_assert_str_eq(bc_extension(".bashrc"), "");
	ck_assert_str_eq(bc_extension("noext"), "");
	ck_assert(bc_str_has_prefix("-Wall", "-W"));
	ck_assert(!bc_str_has_prefix("-W", "-Wall"));
	ck_assert(bc_str_has_prefix("x", ""));
	ck_assert(bc_str_has_suffix("hello.cpp", ".cpp"));
	ck_assert(!bc_str_has_suffix("cpp", ".cpp"));
}
END_TEST

START_TEST(test_parse_int)
{
	long long v = 99;

	ck_assert_int_eq(bc_parse_int("42", 0, 100, &v), BC_OK);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(bc_parse_int("-5", -10, 10, &v), BC_OK);
	ck_assert_int_eq(v, -5);
	ck_assert_int_eq(bc_parse_int("+7", 0, 10, &v), BC_OK);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(bc_parse_int("0", 0, 0, &v), BC_OK);
	ck_assert_int_eq(bc_parse_int("100", 0, 100, &v), BC_OK);
	v = 99;
	ck_assert_int_eq(bc_parse_int("101", 0, 100, &v), BC_ERR_LIMIT);
	ck_assert_int_eq(bc_parse_int("-1", 0, 100, &v), BC_ERR_LIMIT);
	ck_assert_int_eq(bc_parse_int("99999999999999999999", 0,
	    100, &v), BC_ERR_LIMIT);
	ck_assert_int_eq(v, 99);
	ck_assert_int_eq(bc_parse_int("", 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int(" 1", 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int("1 ", 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int("1x", 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int("0x10", 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int("-", 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int("--1", -5, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(bc_parse_int(NULL, 0, 100, &v), BC_ERR_INVAL);
	ck_assert_int_eq(v, 99);
	ck_assert_int_eq(bc_parse_int("9223372036854775807", 0, 9223372036854775807LL,
	    &v), BC_OK);
	ck_assert(v == 9223372036854775807LL);
}
END_TEST

START_TEST(test_err)
{
	char err[BC_ERRLEN], big[BC_ERRLEN * 2];
	int code;

	ck_assert_str_eq(bc_strerror(BC_OK), "success");
	for (code = BC_ERR_NOTSUP; code < 0; code++) {
		ck_assert_ptr_nonnull(bc_strerror(code));
		ck_assert_str_ne(bc_strerror(code), "unknown error");
	}
	ck_assert_str_eq(bc_strerror(-1000), "unknown error");
	ck_assert_str_eq(bc_strerror(5), "unknown error");
	ck_assert_int_eq(bc_seterr(err, BC_ERR_PROTO, "bad %s %d", "x", 3),
	    BC_ERR_PROTO);
	ck_assert_str_eq(err, "bad x 3");
	ck_assert_int_eq(bc_seterr(NULL, BC_ERR_IO, "ignored"), BC_ERR_IO);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	bc_seterr(err, BC_ERR_IO, "%s", big);
	ck_assert_uint_eq(strlen(err), BC_ERRLEN - 1);
}
END_TEST

static void
log_lines(const char *peer)
{
	char esc[64];

	bc_info("hello %d", 1);
	bc_debug("not shown");
	bc_log_escape(peer, strlen(peer), esc, sizeof(esc));
	bc_error("peer said %s", esc);
}

static void
log_warn(const char *msg)
{
	bc_warn("%s", msg);
}

static void
log_debug(int n)
{
	bc_debug("detail %d", n);
}

/* 1 if s starts with "YYYY-MM-DDTHH:MM:SS.mmm+hh:mm " (RFC 3339). */
static int
is_stamp(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd.ddd+dd:dd ";
	size_t i;

	for (i = 0; pat[i] != '\0'; i++) {
		if (s[i] == '\0')
			return 0;
		if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9') :
		    pat[i] == '+' ? (s[i] != '+' && s[i] != '-') :
		    s[i] != pat[i])
			return 0;
	}
	return 1;
}

/* The file's text with each line's time stamp checked and removed. */
static char *
read_unstamped(const char *path)
{
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN], *s, *p, *out;
	size_t o = 0;

	ck_assert_int_eq(bc_read_file(path, 1 << 20, &b, err), BC_OK);
	ck_assert_int_eq(bc_buf_dup_cstr(&b, &s), BC_OK);
	bc_buf_free(&b);
	out = xmalloc(strlen(s) + 1);
	for (p = s; *p != '\0';) {
		char *nl = strchr(p, '\n');
		size_t n;

		ck_assert_msg(is_stamp(p), "no time stamp: %s", p);
		p += strlen("2026-12-05T13:45:01.123+00:00 ");
		n = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = '\0';
	free(s);
	return out;
}

START_TEST(test_log)
{
	char err[BC_ERRLEN], *path, *rotated, *s, *want;
	long pid = (long)getpid();

	path = xasprintf("%s/log", tmpd);
	rotated = xasprintf("%s/log.1", tmpd);
	bc_log_init("/usr/sbin/boltccd", BC_LOG_INFO);
	ck_assert_int_eq(bc_log_open(path, err), BC_OK);
	log_lines("evil\nboltccd[1] ERROR: forged\x01");
	/* Rotate, then reopen (SIGHUP): new lines go to a new file. */
	ck_assert_int_eq(rename(path, rotated), 0);
	log_warn("still old");
	ck_assert_int_eq(bc_log_reopen(err), BC_OK);
	log_warn("after reopen");
	bc_log_set_level(BC_LOG_DEBUG);
	log_debug(2);
	ck_assert_int_eq(bc_log_open(NULL, err), BC_OK);
	bc_log_silence();
	bc_error("silenced");

	/* Every line stamped; function names on debug lines only. */
	s = read_unstamped(rotated);
	want = xasprintf("boltccd[%ld] INFO: hello 1\n"
	    "boltccd[%ld] ERROR: peer said "
	    "evil\\nboltccd[1] ERROR: forged\\x01\n"
	    "boltccd[%ld] WARN: still old\n", pid, pid, pid);
	ck_assert_str_eq(s, want);
	free(s);
	free(want);
	s = read_unstamped(path);
	want = xasprintf("boltccd[%ld] WARN: after reopen\n"
	    "boltccd[%ld] DEBUG: (log_debug) detail 2\n", pid, pid);
	ck_assert_str_eq(s, want);
	free(s);
	free(want);
	free(path);
	free(rotated);
	ck_assert_int_eq(bc_log_get_level(), BC_LOG_DEBUG);
	bc_log_set_level(BC_LOG_INFO);
	ck_assert_int_eq(bc_log_get_level(), BC_LOG_INFO);
	ck_assert_int_ne(bc_log_open("/nonexistent-dir/x.log", err), BC_OK);
}
END_TEST

/* stderr: no stamp unless asked (the client's is the user's terminal). */
START_TEST(test_log_stderr_stamp)
{
	char *path = xasprintf("%s/err", tmpd), *s, *want;
	struct bc_buf b = BC_BUF_INIT(1 << 20);
	char err[BC_ERRLEN];
	int fd, saved = dup(STDERR_FILENO);

	ck_assert_int_ge(saved, 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
	bc_log_init("boltcc", BC_LOG_WARN);
	bc_warn("plain");
	bc_log_stamp_stderr(1);
	bc_warn("stamped");
	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	ck_assert_int_eq(bc_read_file(path, 1 << 20, &b, err), BC_OK);
	ck_assert_int_eq(bc_buf_dup_cstr(&b, &s), BC_OK);
	want = xasprintf("boltcc[%ld] WARN: plain\n", (long)getpid());
	ck_assert(bc_str_has_prefix(s, want));
	ck_assert(is_stamp(s + strlen(want)));
	ck_assert(bc_str_has_suffix(s, " WARN: stamped\n"));
	free(want);
	free(s);
	free(path);
	bc_buf_free(&b);
}
END_TEST

static void
warn_each_compile(int i)
{
	bc_warn_once("cache: storing %d failed", i);
}

static void
info_each_compile(void)
{
	bc_info_once("another site");
}

START_TEST(test_log_once)
{
	char err[BC_ERRLEN], *path = xasprintf("%s/once", tmpd), *s, *want;
	long pid = (long)getpid();
	pid_t child;
	int i, st;

	bc_log_init("boltccd", BC_LOG_ERROR);
	ck_assert_int_eq(bc_log_open(path, err), BC_OK);
	warn_each_compile(0);		/* not shown: does not use it up */
	bc_log_set_level(BC_LOG_INFO);
	ck_assert_int_eq(bc_log_share_once(err), BC_OK);
	ck_assert_int_eq(bc_log_share_once(err), BC_OK);	/* no-op */
	/* Each "compile" in a worker of its own, as the daemon forks. */
	for (i = 1; i <= 3; i++) {
		child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0) {
			warn_each_compile(i);
			_exit(0);
		}
		ck_assert_int_eq(waitpid(child, &st, 0), child);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	warn_each_compile(4);		/* the parent: said already */
	bc_log_set_level(BC_LOG_DEBUG);
	warn_each_compile(5);	/* a debug line, with the function */
	info_each_compile();
	info_each_compile();
	bc_log_silence();
	s = read_unstamped(path);
	ck_assert(bc_str_has_prefix(s, "boltccd["));
	want = xasprintf("] WARN: cache: storing 1 failed (said once; "
	    "repeats are logged at debug level)\n"
	    "boltccd[%ld] DEBUG: (warn_each_compile) cache: storing 5 "
	    "failed\n"
	    "boltccd[%ld] INFO: another site (said once; repeats are logged "
	    "at debug level)\n"
	    "boltccd[%ld] DEBUG: (info_each_compile) another site\n", pid, pid,
	    pid);
	ck_assert_msg(strstr(s, want) != NULL && strstr(s, "storing 2") ==
	    NULL && strstr(s, "storing 4") == NULL, "got: %s", s);
	free(want);
	free(s);
	free(path);
	/* The key table itself. */
	ck_assert_int_eq(bc_log_once("k1"), 1);
	ck_assert_int_eq(bc_log_once("k1"), 0);
	ck_assert_int_eq(bc_log_once("k2"), 1);
	/* Full: every key is said rather than hidden. */
	for (i = 0; i < 2 * BC_LOG_ONCE_SITES; i++) {
		char k[32];

		snprintf(k, sizeof(k), "fill %d", i);
		(void)bc_log_once(k);
	}
	ck_assert_int_eq(bc_log_once("new after full"), 1);
	ck_assert_int_eq(bc_log_once("new after full"), 1);
	ck_assert_int_eq(bc_log_once("k1"), 0);
}
END_TEST

START_TEST(test_time_distance)
{
	char t[BC_TIME_RFC3339_LEN], small[8];
	const char *tz = getenv("TZ");
	char *old = tz != NULL ? xstrdup(tz) : NULL;

	setenv("TZ", "UTC0", 1);
	tzset();
	ck_assert_int_eq(bc_time_rfc3339((time_t)1796478301, 123, t,
	    sizeof(t)), BC_OK);
	ck_assert_str_eq(t, "2026-12-05T13:45:01.123+00:00");
	ck_assert_int_eq(bc_time_rfc3339((time_t)1796478301, -1, t,
	    sizeof(t)), BC_OK);
	ck_assert_str_eq(t, "2026-12-05T13:45:01+00:00");
	setenv("TZ", "XST-5:30", 1);	/* POSIX: east of UTC */
	tzset();
	ck_assert_int_eq(bc_time_rfc3339((time_t)1796478301, 7, t,
	    sizeof(t)), BC_OK);
	ck_assert_str_eq(t, "2026-12-05T19:15:01.007+05:30");
	setenv("TZ", "YST8", 1);
	tzset();
	ck_assert_int_eq(bc_time_rfc3339((time_t)1796478301, -1, t,
	    sizeof(t)), BC_OK);
	ck_assert_str_eq(t, "2026-12-05T05:45:01-08:00");
	ck_assert_int_eq(bc_time_rfc3339(0, -1, small, sizeof(small)),
	    BC_ERR_LIMIT);
	ck_assert_str_eq(small, "");
	if (old != NULL) {
		setenv("TZ", old, 1);
		free(old);
	} else
		unsetenv("TZ");
	tzset();

	ck_assert_uint_eq(bc_str_distance("BOLTCC_HOST", "BOLTCC_HOSTS", 2), 1);
	ck_assert_uint_eq(bc_str_distance("BOLTCC_HOSTS", "BOLTCC_HOSTS", 2),
	    0);
	ck_assert_uint_eq(bc_str_distance("DISTCC_FALBACK", "DISTCC_FALLBACK",
	    2), 1);
	ck_assert_uint_eq(bc_str_distance("BOLTCC_PUPM", "BOLTCC_PUMP", 2), 2);
	ck_assert_uint_eq(bc_str_distance("kitten", "sitting", 5), 3);
	ck_assert_uint_eq(bc_str_distance("kitten", "sitting", 2), 3);
	ck_assert_uint_eq(bc_str_distance("", "abc", 3), 3);
	ck_assert_uint_eq(bc_str_distance("abc", "", 1), 2);
	ck_assert_uint_eq(bc_str_distance("BOLTCC_X", "DISTCC_LOG", 2), 3);
	{
		char longs[100];

		memset(longs, 'a', sizeof(longs) - 1);
		longs[sizeof(longs) - 1] = '\0';
		ck_assert_uint_eq(bc_str_distance(longs, longs, 2), 3);
	}
}
END_TEST

START_TEST(test_misc)
{
	char *s = xasprintf("%s-%d", "a", 5);

	ck_assert_str_eq(s, "a-5");
	free(s);
	s = xstrndup("abcdef", 3);
	ck_assert_str_eq(s, "abc");
	free(s);
	s = xstrndup("ab", 10);
	ck_assert_str_eq(s, "ab");
	free(s);
	ck_assert_int_ge(bc_ncpus(), 1);
}
END_TEST

static Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = bc_tcase("core", BC_TEST_TIMEOUT);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_strv);
	tcase_add_test(tc, test_strv_join);
	tcase_add_test(tc, test_atomic_write);
	tcase_add_test(tc, test_write_output);
	tcase_add_test(tc, test_read_file);
	tcase_add_test(tc, test_mkdir_rmtree);
	tcase_add_test(tc, test_mkdtemp_tmpdir);
	tcase_add_test(tc, test_paths_strings);
	tcase_add_test(tc, test_parse_int);
	tcase_add_test(tc, test_err);
	tcase_add_test(tc, test_log);
	tcase_add_test(tc, test_log_stderr_stamp);
	tcase_add_test(tc, test_log_once);
	tcase_add_test(tc, test_time_distance);
	tcase_add_test(tc, test_misc);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return bc_unit_run(util_suite());
}
