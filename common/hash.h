/*
 * hash.h - SHA-256 (OpenSSL libcrypto; CommonCrypto on macOS), the one
 * collision-resistant hash of boltcc: cache keys, compiler identities,
 * blob checksums, rendezvous hashing of cache keys over the host list.
 * And FNV-1a, the one fast hash, for in-memory tables and short names.
 *
 * Usage: bc_hash_init, any number of bc_hash_update, bc_hash_final (or
 * bc_hash_final_hex).  A context is reusable after final.  Failures of
 * the library (out of memory) abort: they are not input errors.
 */
#ifndef BC_HASH_H
#define BC_HASH_H

#include <stddef.h>
#include <stdint.h>

#define BC_HASH_LEN 32			/* SHA-256 digest bytes */
#define BC_HASH_HEXLEN (2 * BC_HASH_LEN)	/* without NUL */

struct bc_hash {
	void *ctx;	/* SHA256_CTX or CC_SHA256_CTX */
};

void bc_hash_init(struct bc_hash *h);
void bc_hash_update(struct bc_hash *h, const void *p, size_t n);
/* Convenience: a string including its NUL, so fields cannot run together. */
void bc_hash_update_str(struct bc_hash *h, const char *s);
void bc_hash_final(struct bc_hash *h, uint8_t out[BC_HASH_LEN]);
void bc_hash_final_hex(struct bc_hash *h, char out[BC_HASH_HEXLEN + 1]);
/* For the primitive's implementations (sha256_*.c): a failure of the
 * library, which is not an input error: print what failed and abort. */
void bc_hash_die(const char *what);
/* Release the context (after final, or to abandon it). */
void bc_hash_free(struct bc_hash *h);

/* One-shot digest of n bytes. */
void bc_hash_bytes(const void *p, size_t n, uint8_t out[BC_HASH_LEN]);
/* Lowercase hex of n bytes into out (2n + 1 bytes). */
void bc_hash_hex(const uint8_t *p, size_t n, char *out);
/* 1 if s is exactly BC_HASH_HEXLEN lowercase hex digits. */
int bc_hash_is_hex(const char *s);
/* Check the primitive against the FIPS 180-2 vectors: 0, or -1 with the
 * vector that failed in err.  The unit tests run it on Linux, `boltccd
 * --self-test` on the machine where boltcc is installed (CommonCrypto on
 * macOS must give the bytes OpenSSL gives). */
int bc_hash_selftest(char *err, size_t errlen);
/* The n bytes written as the first 2n lowercase hex digits of s (the
 * inverse of bc_hash_hex): 0, or -1 at a character that is not one. */
int bc_hash_unhex(const char *s, size_t n, uint8_t *out);

/*
 * FNV-1a, 64-bit, of n bytes at p (bc_fnv1a_str: of a string, without
 * its NUL), continuing from h: start with BC_FNV1A_BASIS; hashing a then
 * b from the hash of a is the hash of ab.  Fast, not collision-resistant:
 * for hash tables and names of our own things, never where a peer's
 * chosen collisions would cost more than a probe.
 */
#define BC_FNV1A_BASIS		14695981039346656037ULL	/* FNV's offset basis */
/* The basis preproc/ always used: FNV's with its last digit lost.  Kept
 * where the value reaches the disk: the names of the state dir's
 * ppdirs-* files (preproc/search.c) and the order of equally old entries
 * in the scan memo file (preproc/memo.c). */
#define BC_FNV1A_BASIS_PP	1469598103934665603ULL
uint64_t bc_fnv1a(uint64_t h, const void *p, size_t n);
uint64_t bc_fnv1a_str(uint64_t h, const char *s);

#endif
