/*
 * statscmd.c - boltcc --stats and --zero-stats (statscmd.h).
 */
#include "config.h"

#include <stdio.h>

#include "common/err.h"
#include "common/exitcode.h"
#include "common/hosts.h"
#include "client/cstats.h"
#include "client/statscmd.h"
#include "client/statsview.h"

int
bc_statscmd_is_stats(int nwords, char **words)
{
	struct bc_statsview_opts o;
	char err[BC_ERRLEN];

	return bc_statsview_args(nwords, words, &o, err) == BC_OK;
}

int
bc_statscmd_main(const struct bc_cconf *cfg, int nwords, char **words)
{
	struct bc_statsview_opts o;
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	int have_hosts, r;

	if (bc_statsview_args(nwords, words, &o, err) != BC_OK) {
		fprintf(stderr, "boltcc: %s; usage: --stats [-v] [--json]\n",
		    err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	/* without a (good) host list, the page says so */
	r = bc_cconf_hosts(cfg, &hl, err);
	if (r == BC_ERR_HOSTSPEC)
		fprintf(stderr, "boltcc: error: bad host list in %s: %s\n",
		    cfg->hosts_origin, err);
	have_hosts = r == BC_OK;
	r = bc_statsview_show(cfg, have_hosts ? &hl : NULL, &o, err);
	if (have_hosts)
		bc_hosts_free(&hl);
	if (r != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	return 0;
}

int
bc_statscmd_zero(const struct bc_cconf *cfg)
{
	char err[BC_ERRLEN];

	if (!cfg->dir_ok) {
		fprintf(stderr, "boltcc: error: %s\n", cfg->error != NULL ?
		    cfg->error : "no state directory");
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (bc_cstats_zero(cfg->dir, err) != BC_OK) {
		fprintf(stderr, "boltcc: error: %s\n", err);
		return BC_EXIT_IO_ERROR;
	}
	return 0;
}
