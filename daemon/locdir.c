/*
 * locdir.c - the location directory of the keys a daemon owns (locdir.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/proto.h"
#include "common/util.h"
#include "locdir.h"

struct bc_locdir_slot {
	uint8_t key[16];	/* the key's first 16 bytes */
	uint16_t host;		/* index into hosts + 1; 0 = empty */
	uint32_t tick;		/* when it was put */
};

void
bc_locdir_init(struct bc_locdir *d)
{
	memset(d, 0, sizeof(*d));
}

void
bc_locdir_free(struct bc_locdir *d)
{
	size_t i;

	for (i = 0; i < d->nhosts; i++)
		free(d->hosts[i]);
	free(d->hosts);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static int
unhex(const char *key, uint8_t out[16])
{
	return key == NULL || !bc_hash_is_hex(key) ? -1 :
	    bc_hash_unhex(key, 16, out);
}

static size_t
home(const uint8_t k[16])
{
	uint32_t v = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 |
	    (uint32_t)k[2] << 8 | k[3];

	return v % BC_LOCDIR_SLOTS;
}

static struct bc_locdir_slot *
find(const struct bc_locdir *d, const uint8_t k[16])
{
	size_t h = home(k), i;

	if (d->v == NULL)
		return NULL;
	for (i = 0; i < BC_LOCDIR_PROBE; i++) {
		struct bc_locdir_slot *s = &d->v[(h + i) % BC_LOCDIR_SLOTS];

		if (s->host != 0 && memcmp(s->key, k, 16) == 0)
			return s;
	}
	return NULL;
}

const char *
bc_locdir_get(const struct bc_locdir *d, const char *key)
{
	uint8_t k[16];
	struct bc_locdir_slot *s;

	if (unhex(key, k) != 0 || (s = find(d, k)) == NULL)
		return NULL;
	return d->hosts[s->host - 1];
}

static int
intern(struct bc_locdir *d, const char *host)
{
	size_t i;

	for (i = 0; i < d->nhosts; i++)
		if (strcmp(d->hosts[i], host) == 0)
			return (int)i + 1;
	if (d->nhosts >= BC_LOCDIR_HOSTS)
		return -1;
	d->hosts = xrealloc(d->hosts, d->nhosts + 1, sizeof(*d->hosts));
	d->hosts[d->nhosts++] = xstrdup(host);
	return (int)d->nhosts;
}

int
bc_locdir_put(struct bc_locdir *d, const char *key, const char *host)
{
	struct bc_locdir_slot *s, *victim = NULL;
	uint8_t k[16];
	size_t h, i;
	int hi;

	if (unhex(key, k) != 0 || host == NULL ||
	    strlen(host) > BC_MAX_LOC_HOST)
		return -1;
	if ((s = find(d, k)) != NULL && host[0] == '\0') {
		s->host = 0;
		return 0;
	}
	if (host[0] == '\0')
		return 0;
	if ((hi = intern(d, host)) < 0)
		return -1;
	if (d->v == NULL)
		d->v = xcalloc(BC_LOCDIR_SLOTS, sizeof(*d->v));
	d->tick++;
	if (s == NULL) {
		/* a free slot near home, else the oldest one there */
		h = home(k);
		for (i = 0; i < BC_LOCDIR_PROBE; i++) {
			struct bc_locdir_slot *c =
			    &d->v[(h + i) % BC_LOCDIR_SLOTS];

			if (c->host == 0) {
				victim = c;
				break;
			}
			if (victim == NULL ||
			    d->tick - c->tick > d->tick - victim->tick)
				victim = c;
		}
		s = victim;
		memcpy(s->key, k, 16);
	}
	s->host = (uint16_t)hi;
	s->tick = d->tick;
	return 0;
}

const char *
bc_locdir_decide(const struct bc_locdir *d, const char *key,
    const char *client_host, uint32_t flags, int *record)
{
	const char *h = bc_locdir_get(d, key);
	const char *ch = client_host != NULL ? client_host : "";

	*record = 0;
	if (h != NULL && (flags & BC_LOCATE_REPLACE) == 0)
		return h;	/* compiled (or compiling) there: go and ask
				 * (even if the client means to compile there:
				 * it may move the job elsewhere on a MISS) */
	/* A miss everywhere we know of: the client compiles at ch. */
	*record = h == NULL ? ch[0] != '\0' : strcmp(h, ch) != 0;
	return NULL;
}
