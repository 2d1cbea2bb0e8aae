/*
 * fuzz_sshconfig.c - the ~/.ssh/config subset reader (client/sshconf.c)
 * and the ssh helper's request decoder (client/ssh.c).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/log.h"
#include "client/ssh.h"
#include "client/sshconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bc_sshcfg c;
	struct bc_ssh_target t;
	char err[BC_ERRLEN];

	bc_log_silence();
	bc_sshcfg_init(&c);
	(void)bc_sshcfg_parse((const char *)data, size, "build-1.lan", &c,
	    err);
	bc_sshcfg_free(&c);
	if (bc_ssh_target_decode((const char *)data, size, &t, err) == BC_OK)
		bc_ssh_target_free(&t);
	return 0;
}
