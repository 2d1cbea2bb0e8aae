/*
 * sha256_commoncrypto.c - the SHA-256 primitive of hash.h from macOS's
 * CommonCrypto (part of libSystem, so boltcc and boltccd need no
 * libcrypto on a Mac).  The digests are the same bytes as OpenSSL's:
 * tests/unit/test_hash.c pins them on Linux and `boltccd --self-test`
 * checks the same vectors on the Mac.
 *
 * CC_SHA256_Update takes a 32-bit length, so longer inputs are fed in
 * chunks.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <CommonCrypto/CommonDigest.h>

#include "common/hash.h"

#define CHUNK ((size_t)1 << 30)

void
bc_hash_init(struct bc_hash *h)
{
	CC_SHA256_CTX *c = malloc(sizeof(*c));

	if (c == NULL)
		bc_hash_die("context allocation");
	if (CC_SHA256_Init(c) != 1)
		bc_hash_die("init");
	h->ctx = c;
}

void
bc_hash_update(struct bc_hash *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n > 0) {
		size_t k = n < CHUNK ? n : CHUNK;

		if (CC_SHA256_Update((CC_SHA256_CTX *)h->ctx, b,
		    (CC_LONG)k) != 1)
			bc_hash_die("update");
		b += k;
		n -= k;
	}
}

void
bc_hash_final(struct bc_hash *h, uint8_t out[BC_HASH_LEN])
{
	if (CC_SHA256_Final(out, (CC_SHA256_CTX *)h->ctx) != 1)
		bc_hash_die("final");
	bc_hash_free(h);
}

void
bc_hash_free(struct bc_hash *h)
{
	if (h->ctx != NULL) {
		memset(h->ctx, 0, sizeof(CC_SHA256_CTX));
		free(h->ctx);
	}
	h->ctx = NULL;
}
