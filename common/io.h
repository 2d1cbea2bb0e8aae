/*
 * io.h - blocking-with-deadline I/O on file descriptors.
 *
 * A bc_io wraps a read fd and a write fd (the same socket, or the two ends
 * of an inetd/ssh pipe pair).  Every blocking step waits at most
 * io_timeout_ms (0 = no per-step limit) and never past deadline_ms (an
 * absolute bc_now_ms() value, 0 = none), so a peer that trickles one byte
 * a second cannot hold a job forever.  Uses poll(), never select().
 */
#ifndef BC_IO_H
#define BC_IO_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "common/limits.h"

/* Bytes bc_io_read_full reads ahead at most (one read). */
#define BC_IO_READ_AHEAD 8192

struct bc_io {
	int rfd;
	int wfd;
	int io_timeout_ms;
	int64_t deadline_ms;
	uint64_t bytes_in;
	uint64_t bytes_out;
	/* BOLT heartbeats: once the reply reader has seen a BEAT, it lowers
	 * io_timeout_ms to this (0 = leave it) */
	int beat_timeout_ms;
	uint32_t beats;		/* BEATs skipped by bc_io_read_hdr_beat */
	/* how a timeout's message names the two limits (NULL: "idle
	 * timeout", "whole-job deadline"), e.g. "--io-timeout 60 s";
	 * static strings or the caller's, alive as long as io */
	const char *idle_name;
	const char *deadline_name;
	/* read-ahead: bytes read from rfd and not yet consumed, so that a
	 * message of many small packets costs a read, not a read (and a
	 * poll) per packet; rfd is then not read by anyone else */
	size_t rpos, rlen;
	uint8_t rbuf[BC_IO_READ_AHEAD];
	/* bytes read from rfd by someone else first (boltccd's parent reads
	 * a request whole before a worker takes it), read before rfd; not
	 * owned.  With rfd < 0 they are all there is: past them, EOF. */
	const uint8_t *pre;
	size_t pre_pos, pre_len;
};


void bc_io_init(struct bc_io *io, int rfd, int wfd, int io_timeout_ms);

/*
 * The message of a timeout (pure, unit-tested): which limit ended the
 * wait (io->deadline_name when by_deadline, else io->idle_name and
 * io_timeout_ms), while doing what, and how many bytes had moved.
 * Always returns BC_ERR_TIMEOUT.
 */
int bc_io_timeout_err(const struct bc_io *io, int by_deadline,
    const char *what, char *err);

/* Monotonic clock in milliseconds. */
int64_t bc_now_ms(void);

/*
 * Run path with argv (stdin and stderr /dev/null; LC_ALL set to lc_all
 * unless NULL) and read its stdout into buf, at most buflen bytes: the
 * bytes read, or -1 if it could not run or did not exit 0.  timeout_ms
 * > 0: read for at most that long, and the program is killed once its
 * output is read (one that closes stdout and lingers is not waited for);
 * 0: read to the end, and kill it only if buf filled.  For the short
 * queries of a tool's version or path (daemon/ident.c, client/xcode.c).
 */
ssize_t bc_io_run_capture(const char *path, char *const argv[],
    const char *lc_all, int timeout_ms, char *buf, size_t buflen);
/* Read p (n bytes, not copied: they must outlive io) before io's rfd. */
void bc_io_preload(struct bc_io *io, const void *p, size_t n);
/* Bytes preloaded and not read yet. */
size_t bc_io_preload_left(const struct bc_io *io);
/* Sleep ms milliseconds (through signals). */
void bc_sleep_ms(int ms);

/* Read exactly n bytes: BC_OK, BC_ERR_EOF (clean EOF before any byte is
 * BC_ERR_EOF, EOF mid-way is BC_ERR_TRUNCATED), BC_ERR_TIMEOUT, BC_ERR_IO. */
int bc_io_read_full(struct bc_io *io, void *p, size_t n, char *err);
/* Write exactly n bytes (SIGPIPE must be ignored by the program). */
int bc_io_write_full(struct bc_io *io, const void *p, size_t n, char *err);
int bc_io_write_buf(struct bc_io *io, const struct bc_buf *b, char *err);

/*
 * Read one 12-byte header.  With expect != NULL a different token is
 * BC_ERR_PROTO and the message shows the (escaped) bytes received.
 */
int bc_io_read_hdr(struct bc_io *io, const char *expect, char tok_out[5],
    uint32_t *val, char *err);
/*
 * As bc_io_read_hdr, but first skip "BEAT 00000000" packets (BOLT
 * heartbeats, doc/PROTOCOL.md): each counts in io->beats and lowers
 * io_timeout_ms to beat_timeout_ms when that is set and shorter.
 */
int bc_io_read_hdr_beat(struct bc_io *io, const char *expect,
    char tok_out[5], uint32_t *val, char *err);
/*
 * Read a body of len bytes into out (appended), after checking len <= max
 * (BC_ERR_LIMIT otherwise, before reading or allocating).  Storage grows
 * as bytes arrive, never from the claimed length alone.
 */
int bc_io_read_body(struct bc_io *io, uint32_t len, size_t max,
    struct bc_buf *out, char *err);

/* Dead-peer detection on connected TCP sockets: bc_osdep_tcp_liveness
 * (osdep.h) with these values. */
#define BC_TCP_KEEPIDLE_S 5
#define BC_TCP_KEEPINTVL_S 2
#define BC_TCP_KEEPCNT 3
#define BC_TCP_USER_TIMEOUT_MS 15000

/* Connect to host:port (name or literal, IPv4/IPv6) within timeout_ms.
 * The socket gets bc_osdep_tcp_liveness with the BC_TCP_* values. */
int bc_io_connect_tcp(const char *host, int port, int timeout_ms, int *fd_out,
    char *err);

/*
 * GET path from host:port (HTTP/1.0) and append the whole answer, status
 * line and headers included, to out, up to out's limit (BC_ERR_LIMIT
 * past it); within timeout_ms in all.  For boltccd's stats pages (the
 * client's --stats, boltccd --self-test); callers parse the answer.
 */
int bc_io_http_get(const char *host, int port, const char *path,
    int timeout_ms, struct bc_buf *out, char *err);
/* The same with another method (e.g. "POST", no body): boltccd's admin
 * requests (doc/cache.md). */
int bc_io_http_request(const char *method, const char *host, int port,
    const char *path, int timeout_ms, struct bc_buf *out, char *err);
/* The status code of an HTTP answer in out (200, ...), 0 if none. */
int bc_io_http_status(const struct bc_buf *answer);
/* The body of an HTTP answer (after the blank line; the whole answer if
 * there is none) as a NUL-terminated malloc'd string. */
char *bc_io_http_body(const struct bc_buf *answer);

#endif
