/*
 * sshhelper.c - main() of boltcc-ssh, the per-user SSH helper that boltcc
 * execs when a host list has SSH entries (doc/ssh.md).  Kept out of the
 * boltcc binary so that boltcc does not link libssh2 (nor load libcrypto
 * and libz) for every compile.  Not meant to be run by hand:
 *
 *   boltcc-ssh [--idle SEC] [--log FILE] --dir DIR   shared: DIR/helper.sock
 *   boltcc-ssh [--idle SEC] [--log FILE] --fd N      private: one client on fd N
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "client/ssh.h"

static int
usage(void)
{
	fprintf(stderr, "usage: boltcc-ssh [--idle SEC] [--reuse-wait MS] "
	    "[--log FILE] (--dir DIR | --fd N)\n(boltcc's SSH helper; boltcc "
	    "starts it, see boltcc(1))\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL, *logf = NULL;
	long long idle = BC_SSH_IDLE_SEC, wait = BC_SSH_REUSE_WAIT_MS, fd = -1;
	struct bc_sshmux_opts o;
	int i;

	if (argc % 2 == 0)	/* every option takes one value */
		return usage();
	for (i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (strcmp(a, "--dir") == 0)
			dir = v;
		else if (strcmp(a, "--log") == 0)
			logf = v;
		else if (strcmp(a, "--idle") == 0) {
			if (bc_parse_int(v, 0, 86400, &idle) != BC_OK)
				return usage();
		} else if (strcmp(a, "--reuse-wait") == 0) {
			if (bc_parse_int(v, 0, 600000, &wait) != BC_OK)
				return usage();
		} else if (strcmp(a, "--fd") == 0) {
			if (bc_parse_int(v, 3, 1000000, &fd) != BC_OK)
				return usage();
		} else
			return usage();
	}
	if ((dir == NULL) == (fd < 0))
		return usage();
	signal(SIGPIPE, SIG_IGN);
	if (logf != NULL) {
		bc_log_init("boltcc-ssh", BC_LOG_DEBUG);
		(void)bc_log_open(logf, NULL);
	} else
		bc_log_silence();
	o.idle_sec = (int)idle;
	o.reuse_wait_ms = (int)wait;
	if (dir != NULL)
		return bc_sshmux_serve_dir(dir, &o);
	o.idle_sec = 0;
	bc_sshmux_run(-1, (int)fd, &o);
	return 0;
}
