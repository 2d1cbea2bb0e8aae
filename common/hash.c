/*
 * hash.c - the portable half of SHA-256 (see hash.h): hex forms and the
 * helpers built on the primitive.  The primitive itself (init, update,
 * final, free) is sha256_openssl.c (libcrypto) or, on macOS,
 * sha256_commoncrypto.c (CommonCrypto in libSystem); configure picks one.
 * And FNV-1a, whole here.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

void
bc_hash_die(const char *what)
{
	fprintf(stderr, "boltcc: fatal: SHA-256 %s failed\n", what);
	abort();
}

void
bc_hash_update_str(struct bc_hash *h, const char *s)
{
	bc_hash_update(h, s, strlen(s) + 1);
}

void
bc_hash_final_hex(struct bc_hash *h, char out[BC_HASH_HEXLEN + 1])
{
	uint8_t d[BC_HASH_LEN];

	bc_hash_final(h, d);
	bc_hash_hex(d, sizeof(d), out);
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

/* FIPS 180-2 examples, and one input fed across many updates. */
static const struct {
	const char *msg;
	size_t repeat;
	const char *hex;
} vectors[] = {
	{ "", 1,
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", 1,
	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 10000,	/* 100 bytes x 10^4 */
	  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
};

int
bc_hash_selftest(char *err, size_t errlen)
{
	char hex[BC_HASH_HEXLEN + 1];
	size_t i, k;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		struct bc_hash h;
		size_t len = strlen(vectors[i].msg);

		bc_hash_init(&h);
		for (k = 0; k < vectors[i].repeat; k++)
			bc_hash_update(&h, vectors[i].msg, len);
		bc_hash_final_hex(&h, hex);
		if (strcmp(hex, vectors[i].hex) != 0) {
			snprintf(err, errlen, "SHA-256 vector %zu (%zu x %zu "
			    "bytes): got %s, want %s", i, vectors[i].repeat,
			    len, hex, vectors[i].hex);
			return -1;
		}
	}
	return 0;
}

#define FNV1A_PRIME 1099511628211ULL	/* FNV's 64-bit prime, 2^40 + 0x1b3 */

uint64_t
bc_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= FNV1A_PRIME;
	}
	return h;
}

uint64_t
bc_fnv1a_str(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= FNV1A_PRIME;
	}
	return h;
}
