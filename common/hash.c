/*
 * hash.c - SHA-256 from OpenSSL's libcrypto (see hash.h).
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "common/hash.h"

static void
hash_die(const char *what)
{
	fprintf(stderr, "boltcc: fatal: SHA-256 %s failed\n", what);
	abort();
}

void
bc_hash_init(struct bc_hash *h)
{
	SHA256_CTX *c = malloc(sizeof(*c));

	if (c == NULL)
		hash_die("context allocation");
	if (SHA256_Init(c) != 1)
		hash_die("init");
	h->ctx = c;
}

void
bc_hash_update(struct bc_hash *h, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (SHA256_Update((SHA256_CTX *)h->ctx, p, n) != 1)
		hash_die("update");
}

void
bc_hash_update_str(struct bc_hash *h, const char *s)
{
	bc_hash_update(h, s, strlen(s) + 1);
}

void
bc_hash_final(struct bc_hash *h, uint8_t out[BC_HASH_LEN])
{
	if (SHA256_Final(out, (SHA256_CTX *)h->ctx) != 1)
		hash_die("final");
	bc_hash_free(h);
}

void
bc_hash_final_hex(struct bc_hash *h, char out[BC_HASH_HEXLEN + 1])
{
	uint8_t d[BC_HASH_LEN];

	bc_hash_final(h, d);
	bc_hash_hex(d, sizeof(d), out);
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

void
bc_hash_bytes(const void *p, size_t n, uint8_t out[BC_HASH_LEN])
{
	struct bc_hash h;

	bc_hash_init(&h);
	bc_hash_update(&h, p, n);
	bc_hash_final(&h, out);
}

void
bc_hash_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int
bc_hash_is_hex(const char *s)
{
	size_t i;

	for (i = 0; i < BC_HASH_HEXLEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[BC_HASH_HEXLEN] == '\0';
}

static int
lowhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	    c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int
bc_hash_unhex(const char *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi = lowhex(s[2 * i]), lo;

		if (hi < 0 || (lo = lowhex(s[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
