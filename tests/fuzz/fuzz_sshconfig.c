/*
 * fuzz_sshconfig.c - the ~/.ssh/config subset reader (client/sshconf.c),
 * with Include, ProxyJump values, and the ssh helper's request decoder
 * (client/sshclient.c).
 *
 * Input: the text of a config file.  Its Include lines are read in a
 * sandbox: a temp dir made at the first call (removed at exit) holding
 * .ssh/{a.conf,b.conf,d/1.conf,d/2.conf,self.conf}, with the parser's
 * jail set to it, so no path outside it (nor with "..") is read.  The
 * same bytes then go to the ProxyJump value parser and the helper's
 * request decoder.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/util.h"
#include "client/ssh.h"
#include "client/sshconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *jail, *jail_ssh;

static void
jail_remove(void)
{
	if (jail != NULL)
		(void)bc_rmtree(jail);
}

static void
jail_put(const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", jail_ssh, name);
	FILE *f = fopen(p, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
		(void)chmod(p, 0600);
	}
	free(p);
}

static void
jail_make(void)
{
	const char *tmp = getenv("TMPDIR");
	char *d, *sub;

	d = xasprintf("%s/bc-fuzz-sshconf-XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(d) == NULL) {
		free(d);
		return;
	}
	jail = d;
	jail_ssh = xasprintf("%s/.ssh", jail);
	sub = xasprintf("%s/d", jail_ssh);
	(void)mkdir(jail_ssh, 0700);
	(void)mkdir(sub, 0700);
	free(sub);
	jail_put("a.conf", "Host build-*\n  User a\n  Include b.conf\n");
	jail_put("b.conf", "Port 2022\nProxyJump j1,u@j2:22\n"
	    "Host *\n  IdentityFile ~/.ssh/id_b\n");
	jail_put("d/1.conf", "Host *.lan\n  HostName 10.1.1.1\n");
	jail_put("d/2.conf", "Match all\nProxyCommand nc %h %p\n");
	jail_put("self.conf", "Include self.conf\n");
	atexit(jail_remove);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_sshcfg_hop hops[BC_MAX_SSH_JUMPS];
	struct bc_sshcfg_inc inc;
	struct bc_sshcfg c;
	struct bc_ssh_target t;
	char err[BC_ERRLEN], v[600];
	size_t n;

	bc_log_silence();
	if (jail == NULL)
		jail_make();
	memset(&inc, 0, sizeof(inc));
	inc.home = jail;
	inc.dir = jail_ssh;
	inc.jail = jail;
	bc_sshcfg_init(&c);
	(void)bc_sshcfg_parse_named((const char *)data, size, "fuzz",
	    jail != NULL ? &inc : NULL, "build-1.lan", &c, err);
	bc_sshcfg_free(&c);
	n = size < sizeof(v) - 1 ? size : sizeof(v) - 1;
	memcpy(v, data, n);
	v[n] = '\0';
	(void)bc_sshcfg_jump_parse(v, hops, BC_MAX_SSH_JUMPS, &n, err);
	if (bc_ssh_target_decode((const char *)data, size, &t, err) == BC_OK)
		bc_ssh_target_free(&t);
	return 0;
}
