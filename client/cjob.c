/*
 * cjob.c - one compile's life cycle (cjob.h): its state, its counters,
 * its temp files, the local runs every path may end in, and writing a
 * remote result out.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/limits.h"
#include "common/log.h"
#include "client/binstate.h"
#include "client/cjob.h"
#include "client/hostsel.h"

static void
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

void
bc_cjob_put_stderr(const struct bc_buf *b)
{
	if (bc_buf_len(b) > 0)
		write_all(STDERR_FILENO, bc_buf_data(b), bc_buf_len(b));
}

static int
output_mode(void)
{
	mode_t um = umask(0);

	umask(um);
	return (int)(0666 & ~um);
}

int
bc_cjob_write_file(const char *path, const struct bc_buf *b, char *err)
{
	return bc_write_output(path, bc_buf_data(b), bc_buf_len(b),
	    output_mode(), err);
}

void
bc_cjob_init(struct bc_cjob *j, struct bc_cconf *cfg)
{
	memset(j, 0, sizeof(*j));
	j->cfg = cfg;
	bc_strv_init(&j->exec_argv);
	bc_strv_init(&j->argv);
	bc_plan_init(&j->plan);
	bc_cstats_init(&j->stats);
	bc_buf_init(&j->cpp_err, BC_MAX_STDERR);
}

const char *
bc_cjob_origin(struct bc_cjob *j)
{
	if (j->origin[0] == '\0')
		bc_cache_origin(j->cfg->cwd, j->origin);
	return j->origin;
}

int
bc_cjob_identity(struct bc_cjob *j)
{
	char err[BC_ERRLEN];

	if (j->ident_state == 0) {
		j->ident_state = bc_cache_identity(j->compiler_path,
		    j->cfg->statedir, j->ident, err) == BC_OK ? 1 : -1;
		if (j->ident_state < 0) {
			bc_info("no cache lookup: %s", err);
			j->ident[0] = '\0';
			bc_cstats_add2(&j->stats, "cache_skipped_by_reason",
			    "no-identity", 1);
		}
	}
	return j->ident_state > 0;
}

static void
cleanup_temps(struct bc_cjob *j)
{
	if (j->tmpdir != NULL) {
		if (j->cfg->save_temps)
			bc_info("keeping temporary files in %s", j->tmpdir);
		else
			(void)bc_rmtree(j->tmpdir);
	}
	free(j->tmpdir);
	free(j->ipath);
	free(j->cpp_err_path);
	j->tmpdir = j->ipath = j->cpp_err_path = NULL;
}

void
bc_cjob_free(struct bc_cjob *j)
{
	cleanup_temps(j);
	free(j->compiler_path);
	bc_strv_free(&j->exec_argv);
	bc_strv_free(&j->argv);
	bc_plan_free(&j->plan);
	bc_cstats_free(&j->stats);
	bc_local_self_free(&j->self);
	bc_direct_free(&j->direct);
	bc_buf_free(&j->cpp_err);
}

void
bc_cjob_commit_stats(struct bc_cjob *j)
{
	char err[BC_ERRLEN];

	if (!j->cfg->dir_ok || j->stats.n == 0)
		return;
	if (bc_cstats_commit(j->cfg->dir, &j->stats, err) != BC_OK)
		bc_debug("cannot update client stats: %s", err);
	bc_cstats_free(&j->stats);
}

void
bc_cjob_note_state(struct bc_cjob *j, const char *host, int slot)
{
	if (!j->cfg->dir_ok || j->plan.source == NULL)
		return;
	if (bc_binstate_note(j->cfg->statedir, BC_PHASE_COMPILE,
	    j->plan.source, host, slot) == BC_OK)
		j->binstate = 1;
}

int
bc_cjob_exec_local(struct bc_cjob *j)
{
	char err[BC_ERRLEN];

	/* the compiler keeps this pid: distccmon drops the record when it
	 * exits */
	bc_cjob_note_state(j, "localhost", 0);
	bc_cjob_commit_stats(j);
	cleanup_temps(j);
	fflush(stdout);
	fflush(stderr);
	bc_local_exec(j->compiler_path, j->exec_argv.v, err);
	fprintf(stderr, "boltcc: error: %s\n", err);
	return errno == ENOENT ? BC_EXIT_COMPILER_MISSING : BC_EXIT_FAILURE;
}

int
bc_cjob_run_local(struct bc_cjob *j, const char *reason)
{
	bc_debug("compiling locally: %s", reason);
	bc_cstats_add(&j->stats, "jobs_local", 1);
	bc_cstats_add2(&j->stats, "local_by_reason", reason, 1);
	return bc_cjob_exec_local(j);
}

int
bc_cjob_exec_in_local_slot(struct bc_cjob *j, int localslots)
{
	struct bc_slot slot = BC_SLOT_INIT;
	char err[BC_ERRLEN];

	if (j->cfg->dir_ok &&
	    bc_hostsel_local_slot(j->cfg->lockdir, localslots > 0 ?
	    localslots : BC_DEFAULT_LOCALSLOTS,
	    (int64_t)j->cfg->io_timeout * 1000, &slot, err) != BC_OK)
		bc_debug("running without a local slot: %s", err);
	/* The slot's lock fd survives exec: held until the compiler exits. */
	return bc_cjob_exec_local(j);
}

int
bc_cjob_run_fallback(struct bc_cjob *j, const char *reason, int localslots)
{
	bc_cstats_add(&j->stats, "jobs_local", 1);
	bc_cstats_add2(&j->stats, "fallback_by_reason", reason, 1);
	return bc_cjob_exec_in_local_slot(j, localslots);
}

int
bc_cjob_preprocess(struct bc_cjob *j, struct bc_buf *doti, int *st,
    char *err)
{
	int r;

	if (bc_log_get_level() >= BC_LOG_DEBUG) {
		char *s = bc_strv_join(&j->plan.cpp_argv);

		bc_debug("preprocessing: %s", s);
		free(s);
	}
	bc_buf_reset(doti);
	bc_buf_reset(&j->cpp_err);
	r = bc_local_capture(j->compiler_path, j->plan.cpp_argv.v, doti,
	    &j->cpp_err, st, err);
	if (j->cfg->save_temps && j->tmpdir == NULL &&
	    bc_mkdtemp(j->cfg->tmpdir, "boltcc_", &j->tmpdir, NULL) == BC_OK) {
		j->ipath = xasprintf("%s/%s", j->tmpdir,
		    j->plan.lang != NULL && strstr(j->plan.lang, "++") != NULL ?
		    "source.ii" : "source.i");
		j->cpp_err_path = xasprintf("%s/cpp.stderr", j->tmpdir);
		(void)bc_write_file_atomic(j->ipath, bc_buf_data(doti),
		    bc_buf_len(doti), 0600, NULL);
		(void)bc_write_file_atomic(j->cpp_err_path,
		    bc_buf_data(&j->cpp_err), bc_buf_len(&j->cpp_err), 0600,
		    NULL);
	}
	return r;
}

int
bc_cjob_write_outputs(struct bc_cjob *j, const struct bc_reply *rep,
    char *err)
{
	int mode = output_mode(), r;

	r = bc_write_output(j->plan.output, bc_buf_data(&rep->doto),
	    bc_buf_len(&rep->doto), mode, err);
	if (r != BC_OK)
		return r;
	if (j->plan.dia_file != NULL && bc_buf_len(&rep->dia) > 0) {
		r = bc_write_output(j->plan.dia_file,
		    bc_buf_data(&rep->dia), bc_buf_len(&rep->dia), mode, err);
		if (r != BC_OK)
			return r;
	}
	return BC_OK;
}

void
bc_cjob_replay(const struct bc_cjob *j, const struct bc_reply *rep)
{
	bc_cjob_put_stderr(&j->cpp_err);
	if (bc_buf_len(&rep->serr) > 0)
		write_all(STDERR_FILENO, bc_buf_data(&rep->serr),
		    bc_buf_len(&rep->serr));
	if (bc_buf_len(&rep->sout) > 0) {
		fflush(stdout);
		write_all(STDOUT_FILENO, bc_buf_data(&rep->sout),
		    bc_buf_len(&rep->sout));
	}
}
