/*
 * acl.c - parsing and matching of --allow CIDR blocks (see acl.h).
 *
 * Everything is compared in network byte order, byte by byte, so the code
 * is the same for IPv4 and IPv6; mapped addresses are folded to IPv4 first.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "acl.h"

static const uint8_t v4mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

void
bc_acl_init(struct bc_acl *acl)
{
	acl->v = NULL;
	acl->n = 0;
	acl->cap = 0;
}

void
bc_acl_free(struct bc_acl *acl)
{
	free(acl->v);
	bc_acl_init(acl);
}

/* Zero every bit after the first `bits` bits of an n-byte address. */
static void
mask_bits(uint8_t *a, size_t n, int bits)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int keep = bits - (int)(i * 8);

		if (keep >= 8)
			continue;
		if (keep <= 0)
			a[i] = 0;
		else
			a[i] &= (uint8_t)(0xff << (8 - keep));
	}
}

int
bc_acl_parse(const char *s, struct bc_acl_entry *out, char *err)
{
	char host[INET6_ADDRSTRLEN + 4];
	const char *slash, *addr_start, *addr_end;
	size_t hlen;
	int maxbits;
	long long bits = -1;

	memset(out, 0, sizeof(*out));
	if (s == NULL || *s == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "empty address");
	slash = strchr(s, '/');
	addr_start = s;
	addr_end = slash != NULL ? slash : s + strlen(s);
	if (*addr_start == '[') {
		if (addr_end - addr_start < 2 || addr_end[-1] != ']')
			return bc_seterr(err, BC_ERR_INVAL,
			    "bad address '%s': unbalanced '['", s);
		addr_start++;
		addr_end--;
	}
	hlen = (size_t)(addr_end - addr_start);
	if (hlen == 0 || hlen >= sizeof(host))
		return bc_seterr(err, BC_ERR_INVAL, "bad address '%s'", s);
	memcpy(host, addr_start, hlen);
	host[hlen] = '\0';

	if (strchr(host, ':') != NULL) {
		if (inet_pton(AF_INET6, host, out->addr) != 1)
			return bc_seterr(err, BC_ERR_INVAL,
			    "bad IPv6 address '%s'", s);
		out->family = AF_INET6;
		maxbits = 128;
	} else {
		if (inet_pton(AF_INET, host, out->addr) != 1)
			return bc_seterr(err, BC_ERR_INVAL,
			    "bad IPv4 address '%s' (expected a.b.c.d[/bits])", s);
		out->family = AF_INET;
		maxbits = 32;
	}
	if (slash != NULL) {
		if (bc_parse_int(slash + 1, 0, maxbits, &bits) != BC_OK)
			return bc_seterr(err, BC_ERR_INVAL,
			    "bad prefix length in '%s' (0..%d)", s, maxbits);
	} else
		bits = maxbits;
	out->bits = (int)bits;

	/* Fold a mapped IPv6 block with a prefix inside the IPv4 part. */
	if (out->family == AF_INET6 && out->bits >= 96 &&
	    memcmp(out->addr, v4mapped_prefix, 12) == 0) {
		memmove(out->addr, out->addr + 12, 4);
		memset(out->addr + 4, 0, 12);
		out->family = AF_INET;
		out->bits -= 96;
	}
	mask_bits(out->addr, out->family == AF_INET ? 4 : 16, out->bits);
	return BC_OK;
}

int
bc_acl_add(struct bc_acl *acl, const char *s, char *err)
{
	struct bc_acl_entry e;
	int r;

	if ((r = bc_acl_parse(s, &e, err)) != BC_OK)
		return r;
	if (acl->n == acl->cap) {
		size_t ncap = acl->cap == 0 ? 8 : acl->cap * 2;

		acl->v = xrealloc(acl->v, ncap, sizeof(*acl->v));
		acl->cap = ncap;
	}
	acl->v[acl->n++] = e;
	return BC_OK;
}

void
bc_acl_add_loopback(struct bc_acl *acl)
{
	(void)bc_acl_add(acl, "127.0.0.0/8", NULL);
	(void)bc_acl_add(acl, "::1/128", NULL);
}

static int
prefix_match(const uint8_t *a, const uint8_t *net, int bits)
{
	int full = bits / 8, rest = bits % 8;

	if (full > 0 && memcmp(a, net, (size_t)full) != 0)
		return 0;
	if (rest != 0) {
		uint8_t m = (uint8_t)(0xff << (8 - rest));

		if ((a[full] & m) != (net[full] & m))
			return 0;
	}
	return 1;
}

int
bc_acl_match_addr(const struct bc_acl *acl, int family, const uint8_t *addr)
{
	uint8_t a[16];
	size_t i;

	if (family == AF_INET6 && memcmp(addr, v4mapped_prefix, 12) == 0) {
		family = AF_INET;
		memcpy(a, addr + 12, 4);
	} else if (family == AF_INET)
		memcpy(a, addr, 4);
	else if (family == AF_INET6)
		memcpy(a, addr, 16);
	else
		return 0;
	for (i = 0; i < acl->n; i++) {
		const struct bc_acl_entry *e = &acl->v[i];

		if (e->family == family && prefix_match(a, e->addr, e->bits))
			return 1;
	}
	return 0;
}

int
bc_acl_match(const struct bc_acl *acl, const struct sockaddr *sa,
    socklen_t salen)
{
	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET &&
	    salen >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		return bc_acl_match_addr(acl, AF_INET,
		    (const uint8_t *)&s4->sin_addr);
	}
	if (sa->sa_family == AF_INET6 &&
	    salen >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 =
		    (const struct sockaddr_in6 *)sa;

		return bc_acl_match_addr(acl, AF_INET6,
		    (const uint8_t *)&s6->sin6_addr);
	}
	return 0;
}

void
bc_acl_format(const struct bc_acl_entry *e, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN];

	if (inet_ntop(e->family, e->addr, a, sizeof(a)) == NULL)
		snprintf(a, sizeof(a), "?");
	snprintf(out, outlen, "%s/%d", a, e->bits);
}
