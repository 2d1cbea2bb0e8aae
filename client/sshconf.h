/*
 * sshconf.h - the subset of ssh_config(5) that boltcc honours for SSH
 * hosts, so that a host on another port, under another name, with its
 * own key or behind a bastion needs nothing new in the host list.
 *
 * Keywords: Host (patterns with * ? and !, several per line), HostName,
 * Port, User, IdentityFile (repeatable), IdentitiesOnly, IdentityAgent
 * (only "none" and a path), UserKnownHostsFile, GlobalKnownHostsFile,
 * StrictHostKeyChecking, ConnectTimeout, ProxyJump, ProxyCommand (kept
 * so that the resolver can refuse it: a host behind a ProxyCommand must
 * not be connected to directly), Include.  As in ssh, the first value
 * obtained for a keyword wins; IdentityFile accumulates; ProxyJump and
 * ProxyCommand compete (the first one seen wins).  A Match block is
 * skipped (treated as not matching), noted in `notes`.  Other keywords
 * are ignored.
 *
 * Include, as in ssh: one or more paths or glob(3) patterns, ~/ is the
 * home, a relative path is relative to ~/.ssh (the user's file) or
 * /etc/ssh (the system file); the files a pattern matches are read in
 * lexical order, a pattern matching nothing is no error; each included
 * file starts outside any Host block and leaves the includer's block
 * state as it was.  An Include inside a Host block that does not match
 * is not read (ssh parses it without applying it).  Nesting is limited
 * to BC_MAX_SSH_INCLUDE_DEPTH, the files read to
 * BC_MAX_SSH_INCLUDE_FILES (common/limits.h).  Errors name file:line.
 *
 * Tokens in IdentityFile and the known-hosts files: ~ and %d (home),
 * %u (local user), %r (remote user), %h (host name), %% ; any other %
 * token makes the value unusable (the entry is dropped with a note).
 */
#ifndef BC_SSHCONF_H
#define BC_SSHCONF_H

#include <stddef.h>
#include "common/util.h"
#include "common/limits.h"


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
	char *proxy_jump;	/* ProxyJump as written ("none": off), or NULL */
	char *proxy_command;	/* ProxyCommand as written, or NULL */
	char *proxy_where;	/* "file:line" of the one set, for messages */
	int files;		/* files read so far (Include) */
	struct bc_strv notes;	/* things not honoured, for debug logs */
};

/* Where Include finds files.  home NULL: Include lines are noted, not
 * read (bc_sshcfg_parse). */
struct bc_sshcfg_inc {
	const char *home;	/* ~/ in Include paths */
	const char *dir;	/* relative Include paths: $HOME/.ssh or /etc/ssh */
	int system;		/* the system file: no ~ in Include paths */
	const char *jail;	/* if set, no Include path outside this
				 * directory (nor with "..") is read: the fuzz
				 * target */
};

/* One hop of a ProxyJump value ([ssh://][user@]host[:port]). */
struct bc_sshcfg_hop {
	char user[256];		/* "" = not given */
	char host[256];
	int port;		/* 0 = not given */
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

/*
 * The same for text named `name` (in messages), with Include lines read
 * as inc says (inc NULL: noted, not read).
 */
int bc_sshcfg_parse_named(const char *text, size_t len, const char *name,
    const struct bc_sshcfg_inc *inc, const char *host, struct bc_sshcfg *c,
    char *err);

/*
 * Read the config file path (a missing one is no error, as in ssh) and
 * apply it as bc_sshcfg_parse_named does.
 */
int bc_sshcfg_read(const char *path, const struct bc_sshcfg_inc *inc,
    const char *host, struct bc_sshcfg *c, char *err);

/*
 * Split a ProxyJump value into hops ("a,user@b:2222,ssh://c").  Returns
 * BC_OK with *n hops (0 for "none"), BC_ERR_INVAL for a malformed value,
 * BC_ERR_LIMIT for more than max hops; err says which.
 */
int bc_sshcfg_jump_parse(const char *v, struct bc_sshcfg_hop *hops,
    size_t max, size_t *n, char *err);

/* ssh's pattern matching for one pattern list ("a*,!b?"): 1 match. */
int bc_sshcfg_match_list(const char *list, const char *host);

/*
 * Expand ~ and % tokens of a path value.  Returns a new string or NULL
 * (with err set) for an unknown token or a result over 4096 bytes.
 */
char *bc_sshcfg_expand(const char *v, const char *home, const char *luser,
    const char *ruser, const char *host, char *err);

#endif
