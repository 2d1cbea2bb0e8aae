/*
 * test_exepath.c - the running executable's path (client/exepath.c).
 * Built twice: against this system's osdep object, where the OS says
 * (Linux /proc/self/exe, macOS _NSGetExecutablePath) whatever argv0 is;
 * and against the portable fallback (-DTEST_OSDEP_OTHER, linked with
 * common/osdep_other.c), where argv0 is all there is: a path with a '/'
 * is resolved through symlinks, a bare name is searched on PATH as
 * execvp would (an empty element is the current directory, a file that
 * is not executable is passed over).
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/exepath.h"
#include "common/util.h"
#include "tests/unit/unit.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static char self[PATH_MAX];	/* realpath of argv[0] */

#if (defined(__linux__) || defined(__APPLE__)) && !defined(TEST_OSDEP_OTHER)
#define OS_KNOWS 1
#else
#define OS_KNOWS 0
#endif

#if OS_KNOWS
/* The OS answers, whatever argv0 says. */
START_TEST(t_os)
{
	static const char *const argv0s[] = { NULL, "", "boltcc",
	    "/nonexistent/boltcc", "./x" };
	size_t i;
	char *p;

	ck_assert_str_ne(self, "");
	for (i = 0; i < sizeof(argv0s) / sizeof(argv0s[0]); i++) {
		p = bc_exe_path(argv0s[i], getenv("PATH"));
		ck_assert_ptr_nonnull(p);
		ck_assert_str_eq(p, self);
		free(p);
	}
}
END_TEST
#else
static char tmpl[64];
static char *dir;
static char prog[PATH_MAX];	/* realpath of dir/prog */
static char *oldpath;
static int oldcwd = -1;

static void
mkfile(const char *name, mode_t mode)
{
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
	free(p);
}

static void
setup(void)
{
	char *p, *q;

	strcpy(tmpl, "/tmp/bc-exepath.XXXXXX");
	dir = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(dir);
	mkfile("prog", 0755);
	mkfile("plain", 0644);
	p = xasprintf("%s/prog", dir);
	q = xasprintf("%s/link", dir);
	ck_assert_int_eq(symlink(p, q), 0);
	ck_assert_ptr_nonnull(realpath(p, prog));
	free(q);
	free(p);
	oldpath = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	oldcwd = open(".", O_RDONLY);
}

static void
teardown(void)
{
	static const char *const names[] = { "prog", "plain", "link" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *p = xasprintf("%s/%s", dir, names[i]);

		unlink(p);
		free(p);
	}
	if (oldcwd >= 0) {
		(void)fchdir(oldcwd);
		close(oldcwd);
	}
	rmdir(dir);
	if (oldpath != NULL) {
		setenv("PATH", oldpath, 1);
		free(oldpath);
	}
}

/* bc_exe_path(argv0) is want (NULL: no answer). */
static void
expect(const char *argv0, const char *want)
{
	char *p = bc_exe_path(argv0, getenv("PATH"));

	if (want == NULL) {
		ck_assert_msg(p == NULL, "%s: got %s", argv0 ? argv0 : "NULL",
		    p);
		return;
	}
	ck_assert_msg(p != NULL, "%s: no answer", argv0);
	ck_assert_str_eq(p, want);
	free(p);
}

START_TEST(t_nothing)
{
	expect(NULL, NULL);
	expect("", NULL);
}
END_TEST

START_TEST(t_slash)
{
	char *p;

	p = xasprintf("%s/link", dir);
	expect(p, prog);		/* symlink resolved */
	free(p);
	p = xasprintf("%s/./prog", dir);
	expect(p, prog);
	free(p);
	p = xasprintf("%s/missing", dir);
	expect(p, NULL);
	free(p);
	ck_assert_int_eq(chdir(dir), 0);
	expect("./link", prog);		/* relative to the cwd */
	/* a '/' means no PATH search even if PATH has it */
	setenv("PATH", dir, 1);
	expect("sub/prog", NULL);
}
END_TEST

START_TEST(t_path)
{
	char *path;

	path = xasprintf("/nonexistent:%s", dir);
	setenv("PATH", path, 1);
	expect("prog", prog);
	expect("link", prog);
	expect("missing", NULL);
	expect("plain", NULL);		/* not executable */
	free(path);

	/* an empty element (leading, middle, trailing) is the cwd */
	ck_assert_int_eq(chdir(dir), 0);
	setenv("PATH", ":/nonexistent", 1);
	expect("prog", prog);
	setenv("PATH", "/nonexistent::/nonexistent2", 1);
	expect("link", prog);
	setenv("PATH", "/nonexistent:", 1);
	expect("prog", prog);
	setenv("PATH", "/nonexistent", 1);
	expect("prog", NULL);

	setenv("PATH", "", 1);
	expect("prog", NULL);
	unsetenv("PATH");
	expect("prog", NULL);
}
END_TEST
#endif

static Suite *
exepath_suite(void)
{
	Suite *s = suite_create("exepath");
	TCase *tc = bc_tcase("exepath", BC_TEST_TIMEOUT);

#if OS_KNOWS
	tcase_add_test(tc, t_os);
#else
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_nothing);
	tcase_add_test(tc, t_slash);
	tcase_add_test(tc, t_path);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (realpath(argv[0], self) == NULL)
		self[0] = '\0';
	return bc_unit_run(exepath_suite());
}
