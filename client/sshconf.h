/*
 * sshconf.h - the subset of ssh_config(5) that boltcc honours for SSH
 * hosts, so that a host on another port, under another name or with its
 * own key needs nothing new in the host list.
 *
 * Keywords: Host (patterns with * ? and !, several per line), HostName,
 * Port, User, IdentityFile (repeatable), IdentitiesOnly, IdentityAgent
 * (only "none" and a path), UserKnownHostsFile, GlobalKnownHostsFile,
 * StrictHostKeyChecking, ConnectTimeout.  As in ssh, the first value
 * obtained for a keyword wins; IdentityFile accumulates.  Match and
 * Include blocks are not supported: a Match block is skipped (treated as
 * not matching) and Include is ignored, each noted in `notes`.  Other
 * keywords are ignored.
 *
 * Tokens in IdentityFile and the known-hosts files: ~ and %d (home),
 * %u (local user), %r (remote user), %h (host name), %% ; any other %
 * token makes the value unusable (the entry is dropped with a note).
 */
#ifndef BC_SSHCONF_H
#define BC_SSHCONF_H

#include <stddef.h>
#include "common/util.h"

#define BC_SSHCONF_MAX_BYTES (256 * 1024)	/* config file size */
#define BC_SSHCONF_MAX_LINE 4096
#define BC_SSHCONF_MAX_ARGS 64			/* words on one line */
#define BC_SSHCONF_MAX_FILES 16			/* identity / known-hosts files */

enum bc_ssh_strict { BC_SSH_STRICT_YES = 0, BC_SSH_STRICT_NO = 1,
    BC_SSH_STRICT_ACCEPT_NEW = 2 };

struct bc_sshcfg {
	char *hostname;		/* HostName, else the alias */
	int port;		/* 0 = not set (22) */
	char *user;		/* User or NULL */
	struct bc_strv identity;	/* IdentityFile, unexpanded */
	struct bc_strv known_hosts;	/* UserKnownHostsFile, unexpanded */
	struct bc_strv global_known_hosts;
	int identities_only;	/* -1 unset, 0, 1 */
	char *identity_agent;	/* NULL unset, "none", or a path */
	int strict;		/* -1 unset, else enum bc_ssh_strict */
	int connect_timeout;	/* seconds, 0 unset */
	struct bc_strv notes;	/* things not honoured, for debug logs */
};

void bc_sshcfg_init(struct bc_sshcfg *c);
void bc_sshcfg_free(struct bc_sshcfg *c);

/*
 * Apply the config text (len bytes, need not be NUL-terminated) for the
 * host alias `host` on top of c (first value wins, so apply the user's
 * file before the system one).  A malformed line is BC_ERR_INVAL naming
 * the line; too large input is BC_ERR_LIMIT.  c stays valid either way.
 */
int bc_sshcfg_parse(const char *text, size_t len, const char *host,
    struct bc_sshcfg *c, char *err);

/* ssh's pattern matching for one pattern list ("a*,!b?"): 1 match. */
int bc_sshcfg_match_list(const char *list, const char *host);

/*
 * Expand ~ and % tokens of a path value.  Returns a new string or NULL
 * (with err set) for an unknown token or a result over 4096 bytes.
 */
char *bc_sshcfg_expand(const char *v, const char *home, const char *luser,
    const char *ruser, const char *host, char *err);

#endif
