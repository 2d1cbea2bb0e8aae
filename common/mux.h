/*
 * mux.h - many job streams over one byte stream (the SSH channel of
 * `boltccd --mux`): greeting, frame codec and the relay engine shared by
 * the daemon (daemon/muxd.c) and the SSH helper (client/sshmux.c).
 * Wire format: doc/PROTOCOL.md, "Stream multiplexing".
 *
 * Each side first sends a 24-byte greeting: the magic "BOLTMUX1", then
 * u32 version, max frame payload, max open streams and the initial
 * window (bytes the peer may send on one stream before it is granted
 * more), big-endian, all as the sender accepts them.  Then frames:
 *
 *   u32 stream, u32 length, u8 type, 3 zero bytes, length bytes payload
 *
 * Only the client side (the helper) opens streams, with increasing ids.
 * Every stream is a local socket on each side (a job's fd); the engine
 * moves bytes between it and the frames, sends CREDIT as the local side
 * consumes, and never buffers more than one window per stream and
 * direction, so a slow stream cannot stall the others.
 *
 * Errors: a frame that breaks the protocol for one stream (data past the
 * window or after end-of-data, a stream over the limit) resets that
 * stream; one that makes the byte stream untrustworthy (bad greeting,
 * oversized length, unknown type, reused or unknown stream id) fails the
 * whole connection.  Frames for a stream that was already closed are
 * ignored (they may have crossed a RESET).
 */
#ifndef BC_MUX_H
#define BC_MUX_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/limits.h"

#define BC_MUX_MAGIC		"BOLTMUX1"
#define BC_MUX_MAGIC_LEN	8
#define BC_MUX_VERSION		1
#define BC_MUX_HELLO_LEN	24
#define BC_MUX_HDR_LEN		12

/* Its limits (BC_MUX_MAX_PAYLOAD, BC_MUX_WINDOW, ...) are in limits.h. */

enum bc_mux_type {
	BC_MUX_OPEN = 1,	/* client -> server: new stream, no payload */
	BC_MUX_DATA = 2,	/* bytes, counted against the window */
	BC_MUX_EOF = 3,		/* sender's end of data on the stream */
	BC_MUX_RESET = 4,	/* abort the stream; payload: reason text */
	BC_MUX_CREDIT = 5,	/* payload u32: more bytes the peer may send */
	BC_MUX_GOAWAY = 6,	/* stream 0; payload: reason; sender closes */
};

struct bc_mux_hello {
	uint32_t version;
	uint32_t max_payload;
	uint32_t max_streams;
	uint32_t window;
};

struct bc_mux_frame {
	uint8_t type;
	uint32_t stream;
	uint32_t len;
	const uint8_t *payload;	/* points into the input buffer */
};

/* --- codec ----------------------------------------------------------- */

int bc_mux_put_hello(struct bc_buf *out, const struct bc_mux_hello *h);
/* BC_OK, BC_ERR_TRUNCATED (need more bytes; nothing consumed),
 * BC_ERR_PROTO (not a mux greeting) or BC_ERR_NOTSUP (version, limits). */
int bc_mux_get_hello(struct bc_buf *in, struct bc_mux_hello *h, char *err);
int bc_mux_put_frame(struct bc_buf *out, uint8_t type, uint32_t stream,
    const void *payload, size_t len);
/* One frame; BC_OK, BC_ERR_TRUNCATED (incomplete, nothing consumed),
 * BC_ERR_LIMIT (length over max_payload) or BC_ERR_PROTO (bad type,
 * reserved bits, payload size for the type, stream 0 misuse). */
int bc_mux_get_frame(struct bc_buf *in, uint32_t max_payload,
    struct bc_mux_frame *f, char *err);

/* --- engine ---------------------------------------------------------- */

enum bc_mux_role { BC_MUX_ROLE_CLIENT, BC_MUX_ROLE_SERVER };

struct bc_mux_stream {
	uint32_t id;
	int fd;			/* local socket (non-blocking), -1 = closed */
	struct bc_buf in;	/* peer -> local, at most one window */
	uint32_t send_credit;	/* bytes we may still send */
	uint32_t owed;		/* bytes consumed locally, credit not sent */
	int local_eof;		/* the local side ended its data */
	int eof_sent, peer_eof, shut;
	int done;		/* finished (both ends, or reset) */
	int reset;		/* 1: reset by us, 2: by the peer */
	char reason[BC_MUX_MAX_REASON + 1];
	void *user;
};

struct bc_mux;
/* Server: a stream was opened; set st->fd (and st->user) or fail. */
typedef int (*bc_mux_open_fn)(struct bc_mux *m, struct bc_mux_stream *st,
    void *ctx, char *err);

struct bc_mux {
	int role;
	struct bc_buf in, out;
	int hello_in;		/* the peer's greeting was read */
	struct bc_mux_hello peer, mine;
	uint32_t last_id;
	struct bc_mux_stream **s;
	size_t ns;
	bc_mux_open_fn on_open;
	void *ctx;
	int failed;
	char why[BC_MUX_MAX_REASON + 64];
	uint64_t opened, resets_sent, ignored;
};

/* max_streams is capped at BC_MUX_MAX_STREAMS; our greeting is queued. */
void bc_mux_init(struct bc_mux *m, int role, uint32_t max_streams,
    bc_mux_open_fn on_open, void *ctx);
/* Closes every stream fd still open and frees everything. */
void bc_mux_free(struct bc_mux *m);

/* Where the owner reads transport bytes into, and how many fit. */
size_t bc_mux_in_space(struct bc_mux *m, uint8_t **p);
/* The owner put n bytes there: parse and dispatch.  BC_OK, or a
 * connection error (m->why says why; a GOAWAY is queued). */
int bc_mux_input(struct bc_mux *m, size_t n, char *err);
/* Bytes to write to the transport, and how many were written. */
size_t bc_mux_out(struct bc_mux *m, const uint8_t **p);
void bc_mux_out_done(struct bc_mux *m, size_t n);

/* Client: a new stream over local fd (taken over).  BC_ERR_BUSY when the
 * peer's stream limit is reached, BC_ERR_PROTO before its greeting. */
int bc_mux_open(struct bc_mux *m, int fd, struct bc_mux_stream **st,
    char *err);
/* Move bytes between the streams' fds and the frames; returns 1 if
 * anything moved.  Finished streams get done = 1 (fd closed). */
int bc_mux_pump(struct bc_mux *m);
/* Poll events wanted on a stream's fd (POLLIN / POLLOUT bits). */
short bc_mux_events(const struct bc_mux *m, const struct bc_mux_stream *st);
/* Reset one stream (queues RESET, closes its fd, done = 1). */
void bc_mux_reset(struct bc_mux *m, struct bc_mux_stream *st,
    const char *reason);
/* Remove and free the streams marked done. */
void bc_mux_collect(struct bc_mux *m);
/* Streams not done. */
size_t bc_mux_active(const struct bc_mux *m);
/* The peer's stream limit (after its greeting), capped by ours. */
uint32_t bc_mux_peer_streams(const struct bc_mux *m);

#endif
