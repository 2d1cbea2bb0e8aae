/*
 * sha256_openssl.c - the SHA-256 primitive of hash.h from OpenSSL's
 * libcrypto (Linux and wherever CommonCrypto is not used).
 *
 * The one-shot SHA256_* functions are used rather than EVP: they need no
 * library initialisation (EVP in OpenSSL 3 loads providers and the
 * configuration on first use, about a millisecond in every boltcc process
 * and every forked boltccd worker), and they use the same assembly.  They
 * are deprecated in OpenSSL 3 but kept; OPENSSL_API_COMPAT selects them.
 */
#include "config.h"

#define OPENSSL_API_COMPAT 0x10100000L
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "common/hash.h"

void
bc_hash_init(struct bc_hash *h)
{
	SHA256_CTX *c = malloc(sizeof(*c));

	if (c == NULL)
		bc_hash_die("context allocation");
	if (SHA256_Init(c) != 1)
		bc_hash_die("init");
	h->ctx = c;
}

void
bc_hash_update(struct bc_hash *h, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (SHA256_Update((SHA256_CTX *)h->ctx, p, n) != 1)
		bc_hash_die("update");
}

void
bc_hash_final(struct bc_hash *h, uint8_t out[BC_HASH_LEN])
{
	if (SHA256_Final(out, (SHA256_CTX *)h->ctx) != 1)
		bc_hash_die("final");
	bc_hash_free(h);
}

void
bc_hash_free(struct bc_hash *h)
{
	if (h->ctx != NULL) {
		memset(h->ctx, 0, sizeof(SHA256_CTX));
		free(h->ctx);
	}
	h->ctx = NULL;
}
