/*
 * ssh.h - SSH hosts (@host, user@host[/N][:command]) over libssh2.
 *
 * A job on an SSH host gets one file descriptor, exactly like a TCP
 * connection: the far end is a stream of the host's `boltccd --mux`
 * channel (a host known to be boltccd; common/mux.h), or the
 * stdin/stdout of `... --inetd` on a channel of its own.  Sessions live
 * in a per-user helper process, the separate executable boltcc-ssh
 * (sshhelper.c, sshmux.c, ssh.c: the only code that links libssh2), which
 * keeps them open across jobs and hands the client a socket with
 * SCM_RIGHTS; boltcc's side (sshclient.c) resolves the host and asks it.
 * If the shared helper cannot run, a private one serves just this job.
 * See doc/ssh.md.
 *
 * Security: the server's key must be in known_hosts (ssh's files or
 * those named in ~/.ssh/config); an unknown key is refused unless
 * StrictHostKeyChecking is no/accept-new, a changed key always is.
 * Authentication is public key only: the agent, then the key files.
 */
#ifndef BC_SSH_H
#define BC_SSH_H

#include <stddef.h>
#include "common/hosts.h"
#include "common/util.h"
#include "common/limits.h"

#define BC_SSH_DEFAULT_COMMAND "boltccd"
#define BC_SSH_HELPER_NAME "boltcc-ssh"	/* the helper executable */
#ifndef BC_SSH_HELPER_DIR
#define BC_SSH_HELPER_DIR "/usr/local/libexec/boltcc"	/* the build sets it */
#endif
#define BC_SSH_IDLE_SEC 120		/* helper / idle session lifetime */

/* Everything needed to reach one host, resolved on the client side
 * (host entry + ~/.ssh/config + environment). */
struct bc_ssh_target {
	char *alias;		/* the name in the host list */
	char *hostname;		/* after HostName */
	int port;
	char *user;
	char *command;		/* full remote command line (--inetd) */
	char *mux_command;	/* the same with --mux; NULL: no mux */
	struct bc_strv identities;	/* expanded key files (may not exist) */
	struct bc_strv known_hosts;	/* expanded known_hosts files */
	char *agent;		/* agent socket path, or NULL = no agent */
	int strict;		/* enum bc_ssh_strict */
	int timeout_ms;		/* connect / handshake step limit */
	/* ProxyJump: the hops in the order they are reached (each reached
	 * through the one before it, the target through the last), each
	 * with its own settings and no command; NULL / 0 = direct. */
	struct bc_ssh_target *jumps;
	size_t njumps;
};

void bc_ssh_target_free(struct bc_ssh_target *t);

/*
 * Called once by main with the client's configuration, which must
 * outlive every SSH connection: the state dir ($DIR, unless unusable)
 * and the environment values the SSH code needs (HOME, USER,
 * SSH_AUTH_SOCK, BOLTCC_SSH_KEY, BOLTCC_SSH_IDLE, BOLTCC_SSH_HELPER_LOG,
 * PATH to find boltcc's own executable).
 */
struct bc_cconf;
void bc_ssh_configure(const struct bc_cconf *c);
/* argv[0] of boltcc, to find the helper next to it where the OS cannot
 * tell the executable's path (client/exepath.h). */
void bc_ssh_set_argv0(const char *argv0);

/*
 * Resolve a host entry (kind BC_HOST_SSH) against ~/.ssh/config (with its
 * Includes), /etc/ssh/ssh_config and the environment, with its ProxyJump
 * hops, each resolved the same way.  A ProxyCommand is BC_ERR_NOTSUP.
 */
int bc_ssh_resolve(const struct bc_host *h, int timeout_ms,
    struct bc_ssh_target *t, char *err);

/*
 * One connection to a host, as one bidirectional fd: TCP hosts through
 * bc_io_connect_tcp, SSH hosts through the helper.  Errors are host
 * failures with a message naming the host (auth refused, host key
 * unknown or changed, connection failed).
 */
int bc_ssh_connect_host(const struct bc_host *h, int timeout_ms, int *fd,
    char *err);

/*
 * After an exchange with an SSH host failed (EOF, truncation): wait a
 * little for the channel's end and, if the remote command failed (exit
 * status, signal, its stderr) or the connection was lost, replace err by
 * that.  Returns 2 if the command could not be run at all (exit 126 or
 * 127: missing or not executable), 1 for another failure explained, 0 if
 * there is nothing to add (TCP host, clean exit).
 */
int bc_ssh_explain(const struct bc_host *h, char *err);

/* SHA256:base64 fingerprint of a key blob, as ssh prints it. */
void bc_ssh_fingerprint(const unsigned char *sha256, char *out, size_t outlen);

/* --- used by the helper (boltcc-ssh: ssh.c, sshmux.c) ---------------- */

struct bc_ssh_sess;

/* Serialize / parse a target for the helper (key value lines). */
char *bc_ssh_target_encode(const struct bc_ssh_target *t);
int bc_ssh_target_decode(const char *text, size_t len,
    struct bc_ssh_target *t, char *err);

/* Connect, handshake, check the host key, authenticate (blocking, each
 * step bounded by t->timeout_ms). */
int bc_ssh_sess_open(const struct bc_ssh_target *t, struct bc_ssh_sess **out,
    char *err);
/* Open a channel running t->command; the session is left non-blocking
 * and the channel returned as void * (LIBSSH2_CHANNEL *). */
int bc_ssh_sess_exec(struct bc_ssh_sess *s, const char *command,
    int timeout_ms, void **channel, char *err);
void bc_ssh_sess_close(struct bc_ssh_sess *s, int polite);

/*
 * ProxyJump (sshjump.c): open a direct-tcpip channel of session via (the
 * jump host via_label) to to->hostname:to->port and relay it, in a thread
 * of its own, to a socket returned in *fd, on which to's session is
 * opened as on a TCP connection.  via belongs to the relay from then on,
 * also on failure; closing *fd ends the relay, the channel and via.
 */
int bc_ssh_tunnel(struct bc_ssh_sess *via, const char *via_label,
    const struct bc_ssh_target *to, int *fd, char *err);
/* Wait up to ms for the relays to have closed their sessions (the helper
 * calls it after closing its sessions, before libssh2_exit). */
void bc_ssh_tunnels_wait(int ms);
int bc_ssh_sess_fd(const struct bc_ssh_sess *s);
void *bc_ssh_sess_handle(const struct bc_ssh_sess *s);

/* How the helper waits: idle_sec without a job and it exits (and closes
 * sessions idle that long); a job whose target's session is still ending
 * (the previous job's client has its reply, the remote command has not
 * exited yet) waits up to reuse_wait_ms for it before logging in again. */
struct bc_sshmux_opts {
	int idle_sec;
	int reuse_wait_ms;
};
#define BC_SSH_REUSE_WAIT_MS 1000	/* default reuse_wait_ms */

/* The helper's main loop: listen_fd (or -1) and an already connected
 * client (or -1).  Returns when idle (listen) or when its one client is
 * done.  Never returns an error to a job's client except on the wire. */
void bc_sshmux_run(int listen_fd, int client_fd,
    const struct bc_sshmux_opts *o);
/* The shared helper: one per $DIR/ssh through helper.lock; serves
 * helper.sock until o->idle_sec without a job.  Exit code. */
int bc_sshmux_serve_dir(const char *dir, const struct bc_sshmux_opts *o);

#endif
