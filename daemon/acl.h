/*
 * acl.h - the --allow access list: IPv4 and IPv6 CIDR blocks.
 *
 * A peer is allowed when any entry contains its address.  IPv4-mapped
 * IPv6 peers (::ffff:a.b.c.d, what a dual-stack socket reports) and
 * IPv4-mapped entries are compared as IPv4, so "--allow 10.0.0.0/8"
 * covers both kinds of socket.  Host bits below the prefix are ignored
 * ("192.168.1.7/24" means 192.168.1.0/24).
 */
#ifndef BC_ACL_H
#define BC_ACL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct bc_acl_entry {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network bytes, 4 used for AF_INET */
	int bits;		/* prefix length */
};

struct bc_acl {
	struct bc_acl_entry *v;
	size_t n;
	size_t cap;
};

void bc_acl_init(struct bc_acl *acl);
void bc_acl_free(struct bc_acl *acl);

/*
 * Parse "ADDR" or "ADDR/BITS" (IPv4 dotted quad or IPv6 literal, optional
 * [brackets]) into *out.  A bare address is a host (/32 or /128).
 * BC_OK or BC_ERR_INVAL with a message in err.
 */
int bc_acl_parse(const char *s, struct bc_acl_entry *out, char *err);
/* Parse and append; BC_OK or BC_ERR_INVAL. */
int bc_acl_add(struct bc_acl *acl, const char *s, char *err);
/* Append 127.0.0.0/8 and ::1/128 (the default without --allow). */
void bc_acl_add_loopback(struct bc_acl *acl);

/* 1 if the socket address is allowed, 0 if not (or not an IP address). */
int bc_acl_match(const struct bc_acl *acl, const struct sockaddr *sa,
    socklen_t salen);
/* The same for raw address bytes (4 or 16 bytes, family AF_INET/AF_INET6). */
int bc_acl_match_addr(const struct bc_acl *acl, int family,
    const uint8_t *addr);

/* Format an entry as "addr/bits" into out. */
void bc_acl_format(const struct bc_acl_entry *e, char *out, size_t outlen);

#endif
