/*
 * packet.h - one packet at a time: a header or body read from a
 * connection (io) or from bytes already in memory (in, when io is NULL),
 * for the protocol-3 readers (proto3.c, proto3x.c); and the one packet
 * writer of every protocol (proto.c, proto3.c, proto3x.c): packets
 * appended to a buffer, bulk bodies compressed.  Limits are checked
 * before any allocation; errors name the token.
 */
#ifndef BC_PACKET_H
#define BC_PACKET_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "codec.h"
#include "io.h"

/*
 * Append one packet: BC_OK, or the bc_buf error (BC_ERR_LIMIT when out
 * is full, BC_ERR_ALLOC) with err naming the token; on failure nothing
 * of the packet stays in out.
 */
int bc_packet_put_int(struct bc_buf *out, const char *tok, uint32_t v,
    char *err);
int bc_packet_put_str(struct bc_buf *out, const char *tok, const void *p,
    size_t n, char *err);
/* Bulk body compressed with comp (zstd at level); empty = length 0. */
int bc_packet_put_bulk(struct bc_buf *out, const char *tok,
    enum bc_comp comp, int level, const void *p, size_t n, char *err);

/* Header from io, or from in when io is NULL. */
int bc_packet_rd_hdr(struct bc_io *io, struct bc_buf *in, const char *expect,
    char tok[5], uint32_t *val, char *err);
/* Body of len bytes (len <= max checked first) into out, reset first. */
int bc_packet_rd_body(struct bc_io *io, struct bc_buf *in, const char *tok,
    uint32_t len, size_t max, struct bc_buf *out, char *err);

#endif
