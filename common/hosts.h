/*
 * hosts.h - host lists: the full distcc 3.4 grammar (spec
 * distcc-protocol.md section 10) plus boltcc's own options, which are
 * accepted only in text that came from BOLTCC_HOSTS (a stock distcc
 * client discards a whole list with an unknown option, so DISTCC_HOSTS
 * must stay readable by it).
 *
 * boltcc options (BOLTCC_HOSTS only):
 *   ,bolt     the host is a boltccd: use the BOLT extension (zstd)
 *   ,distcc   the host is a stock distccd: never probe, never use BOLT
 *   ,plain    toward a boltccd: plain mode (local preprocessor) instead
 *             of the default BOLT pump (contradicts ,cpp)
 * Without either, boltcc probes the host once and remembers the answer.
 */
#ifndef BC_HOSTS_H
#define BC_HOSTS_H

#include <stddef.h>

enum bc_host_kind { BC_HOST_LOCAL, BC_HOST_TCP, BC_HOST_SSH };
enum bc_host_bolt { BC_BOLT_UNKNOWN = 0, BC_BOLT_YES = 1, BC_BOLT_NO = 2 };

#define BC_DEFAULT_PORT 3632
#define BC_DEFAULT_STATS_PORT 3633
#define BC_DEFAULT_REMOTE_SLOTS 4
#define BC_DEFAULT_LOCAL_SLOTS 2	/* "localhost" entry */
#define BC_DEFAULT_LOCALSLOTS 4		/* --localslots */
#define BC_DEFAULT_LOCALSLOTS_CPP 8	/* --localslots_cpp */

struct bc_host {
	enum bc_host_kind kind;
	char *spec;		/* the entry as written */
	char *name;		/* host name or address, no brackets */
	char *user;		/* ssh user or NULL */
	char *command;		/* ssh remote command or NULL */
	int port;		/* tcp */
	int limit;		/* slots */
	int protocol;		/* 1, 2 (,lzo) or 3 (,cpp,lzo) */
	int down;		/* ,down: never chosen */
	int auth;		/* ,auth (GSS-API; not supported, never chosen) */
	char *auth_name;
	enum bc_host_bolt bolt;
	int plain;		/* ,plain: no pump toward this boltccd */
};

struct bc_hostlist {
	struct bc_host *v;
	size_t n;
	int randomize;
	int localslots;
	int localslots_cpp;
};

/*
 * Parse host-list text.  boltcc_opts != 0 accepts ,bolt and ,distcc.
 * Any error rejects the whole list (as distcc does) and names the entry
 * and the problem in err.  An empty list is BC_ERR_HOSTSPEC too.
 * --randomize shuffles the result.
 */
int bc_hosts_parse(const char *text, int boltcc_opts, struct bc_hostlist *out,
    char *err);
void bc_hosts_free(struct bc_hostlist *hl);
/* Sum of slots of usable hosts (distcc -j). */
int bc_hosts_total_slots(const struct bc_hostlist *hl);
/* Canonical text of one entry for --show-hosts. */
char *bc_host_describe(const struct bc_host *h);
/* The entry as written (else its name, else "?"), for messages. */
const char *bc_host_label(const struct bc_host *h);

#endif
