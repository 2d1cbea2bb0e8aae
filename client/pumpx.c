/*
 * pumpx.c - BOLT pump request, client side (see pumpx.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/key.h"
#include "cache/pathmap.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto3x.h"
#include "common/util.h"
#include "preproc/hmap.h"
#include "client/cstats.h"
#include "client/pumpx.h"

/* The DIRM name of a marker entry (the directory itself), malloc'd. */
static char *
marker_dir(const char *name)
{
	size_t nl = strlen(name), ml = strlen("/" BC_CPUMP_MARKER);

	return nl > ml ? xstrndup(name, nl - ml) : xstrdup("/");
}

/* A header map's mapped digest (cache/pathmap.h) into d: 1, or 0 when
 * the file is no header map (then the key takes its plain hash, as the
 * daemon does). */
static int
hmap_digest(const char *name, const struct bc_pathmap *pm,
    uint8_t d[BC_HASH_LEN])
{
	struct bc_buf b;
	int r;

	if (!bc_str_has_suffix(name, ".hmap"))
		return 0;
	bc_buf_init(&b, BC_HMAP_MAX_SIZE);
	r = bc_read_file(name, BC_HMAP_MAX_SIZE, &b, NULL) == BC_OK &&
	    bc_hmap_mapped_digest(bc_buf_data(&b), bc_buf_len(&b), pm, d) ==
	    BC_OK;
	bc_buf_free(&b);
	return r;
}

/* One section of a reply with the stored path tokens made ours. */
static int
unmap_buf(const struct bc_pathmap *pm, int make_escaped, struct bc_buf *b,
    size_t max, char *err)
{
	struct bc_buf nb;
	int r;

	if (bc_buf_len(b) == 0 ||
	    memchr(bc_buf_data(b), '\1', bc_buf_len(b)) == NULL)
		return BC_OK;
	bc_buf_init(&nb, max);
	r = bc_pathmap_detokenize(pm, make_escaped, bc_buf_data(b),
	    bc_buf_len(b), &nb, err);
	if (r == BC_OK)
		bc_buf_move(b, &nb);
	bc_buf_free(&nb);
	return r;
}

/* The .dia's file names and messages made ours (any byte of the
 * bitstream may be 1, so every .dia is read through). */
static int
unmap_dia(const struct bc_pathmap *pm, struct bc_buf *dia, char *err)
{
	struct bc_buf nb;
	int r;

	bc_buf_init(&nb, BC_MAX_DIA);
	r = bc_pathmap_detokenize_dia(pm, bc_buf_data(dia), bc_buf_len(dia),
	    &nb, err);
	if (r == BC_OK)
		bc_buf_move(dia, &nb);
	bc_buf_free(&nb);
	return r;
}

int
bc_cpumpx_unmap(const struct bc_cpump *p, struct bc_reply *rep, char *err)
{
	struct bc_pathmap pm;
	int r;

	bc_pathmap_init(&pm, p->argv.v, p->argv.n);
	r = unmap_buf(&pm, 0, &rep->serr, BC_MAX_STDERR, err);
	if (r == BC_OK)
		r = unmap_buf(&pm, 1, &rep->dotd, BC_MAX_DOTD, err);
	if (r == BC_OK && bc_buf_len(&rep->dia) > 0)
		r = unmap_dia(&pm, &rep->dia, err);
	bc_pathmap_free(&pm);
	return r;
}

int
bc_cpumpx_key(const struct bc_cpump *p, const char *identity,
    char out[BC_HASH_HEXLEN + 1])
{
	return bc_cpumpx_key_paths(p, identity, out, NULL);
}

int
bc_cpumpx_key_paths(const struct bc_cpump *p, const char *identity,
    char out[BC_HASH_HEXLEN + 1], char **exact_why)
{
	struct bc_cache_pump_ent *v = xcalloc(p->n > 0 ? p->n : 1, sizeof(*v));
	uint8_t (*mh)[BC_HASH_LEN] = xcalloc(p->n > 0 ? p->n : 1,
	    sizeof(*mh));
	struct bc_cache_pump_in in;
	char **dirs = xcalloc(p->n > 0 ? p->n : 1, sizeof(*dirs));
	struct bc_pathmap pm;
	size_t i;
	int r = BC_OK;

	bc_pathmap_init(&pm, p->argv.v, p->argv.n);

	for (i = 0; i < p->n; i++) {
		const struct bc_cpump_ent *e = &p->v[i];

		v[i].name = e->name;
		switch (e->kind) {
		case BC_CPUMP_LINK:
			v[i].kind = BC_CACHE_PUMP_LINK;
			v[i].target = e->target;
			break;
		case BC_CPUMP_MARKER_FILE:
			v[i].kind = BC_CACHE_PUMP_DIR;
			v[i].name = dirs[i] = marker_dir(e->name);
			break;
		default:
			v[i].kind = BC_CACHE_PUMP_FILE;
			v[i].hash = e->hash;
			if (!e->has_hash)
				r = BC_ERR_INVAL;
			if (bc_pathmap_active(&pm) &&
			    hmap_digest(e->name, &pm, mh[i]))
				v[i].mhash = mh[i];
			break;
		}
	}
	if (r == BC_OK) {
		memset(&in, 0, sizeof(in));
		in.identity = identity;
		in.argv = p->argv.v;
		in.argc = p->argv.n;
		in.cwd = p->cwd;
		in.flags = p->flags;
		in.ents = v;
		in.n = p->n;
		bc_cache_pump_key_paths(&in, out, exact_why);
	}
	for (i = 0; i < p->n; i++)
		free(dirs[i]);
	free(dirs);
	free(mh);
	free(v);
	bc_pathmap_free(&pm);
	return r;
}

static int
encode_manifest(const struct bc_cpump *p, struct bc_buf *out, char *err)
{
	size_t i;
	int r;

	r = bc_proto3x_write_head(out, p->flags | BC_FLAG_HEARTBEAT, p->cwd,
	    p->identity, &p->argv, p->n, err);
	for (i = 0; r == BC_OK && i < p->n; i++) {
		const struct bc_cpump_ent *e = &p->v[i];

		switch (e->kind) {
		case BC_CPUMP_LINK:
			r = bc_proto3x_write_link(out, e->name, e->target, err);
			break;
		case BC_CPUMP_MARKER_FILE: {
			/* the directory itself: DIRM */
			char *d = marker_dir(e->name);

			r = bc_proto3x_write_dir(out, d, err);
			free(d);
			break;
		}
		default:
			if (!e->has_hash)
				return bc_seterr(err, BC_ERR_INVAL,
				    "%s: no content hash", e->name);
			r = bc_proto3x_write_hash(out, e->name, e->hash, err);
			break;
		}
	}
	return r;
}

/* The bodies the daemon asked for, each checked against the manifest. */
static int
encode_needed(const struct bc_cpump *p, const uint32_t *need, size_t k,
    struct bc_buf *out, uint64_t *plain_bytes, char *err)
{
	struct bc_buf data;
	uint8_t h[BC_HASH_LEN];
	size_t i;
	int r = BC_OK;

	bc_buf_init(&data, BC_MAX_FILE);
	for (i = 0; i < k && r == BC_OK; i++) {
		const struct bc_cpump_ent *e = &p->v[need[i]];

		if (e->kind != BC_CPUMP_FILE) {
			r = bc_seterr(err, BC_ERR_PROTO,
			    "daemon asked for entry %lu, not a file",
			    (unsigned long)need[i]);
			break;
		}
		bc_buf_reset(&data);
		if ((r = bc_read_file(e->name, BC_MAX_FILE, &data, err))
		    != BC_OK)
			break;
		bc_hash_bytes(bc_buf_data(&data), bc_buf_len(&data), h);
		if (memcmp(h, e->hash, BC_HASH_LEN) != 0) {
			r = bc_seterr(err, BC_ERR_INVAL,
			    "%s changed during the build", e->name);
			break;
		}
		*plain_bytes += bc_buf_len(&data);
		r = bc_proto3x_write_body(out, bc_buf_data(&data),
		    bc_buf_len(&data), err);
	}
	bc_buf_free(&data);
	return r;
}

int
bc_cpumpx_compile(struct bc_cpump *p, const struct bc_host *h,
    int connect_timeout_ms, int io_timeout_ms, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err)
{
	struct bc_buf out;
	struct bc_io io;
	uint32_t *need = NULL;
	size_t k = 0;
	uint64_t plain = 0;
	char *errmsg = NULL;
	int fd = -1, r, beat;

	*why = "io";
	counts->sent = counts->received = 0;
	r = bc_cpump_open(p, encode_manifest, h, connect_timeout_ms,
	    io_timeout_ms, &out, &fd, &io, why, err);
	if (r != BC_OK)
		return r;
	/* heartbeats (doc/PROTOCOL.md): short limit once the host beats */
	io.beat_timeout_ms = io_timeout_ms > 0 &&
	    io_timeout_ms < BC_BEAT_TIMEOUT_MS ? io_timeout_ms :
	    BC_BEAT_TIMEOUT_MS;
	beat = bc_remote_beat_known(p->statedir, h);
	r = bc_io_write_buf(&io, &out, err);
	bc_buf_reset(&out);
	if (r == BC_OK && beat != 0)
		io.io_timeout_ms = io.beat_timeout_ms;
	if (r == BC_OK)
		r = bc_proto3x_read_need(&io, p->n, &need, &k, &errmsg, err);
	if (r == BC_OK) {
		r = encode_needed(p, need, k, &out, &plain, err);
		if (r != BC_OK)
			*why = "encode";
		else
			r = bc_io_write_buf(&io, &out, err);
	}
	rep->proto = BC_PROTO_BOLT;
	if (r == BC_OK)
		r = bc_proto3x_read_reply(&io, rep,
		    (p->flags & BC_FLAG_WANT_DIA) != 0, &errmsg, err);
	if (r == BC_OK)	/* a hit names the storer's prefixes as tokens */
		r = bc_cpumpx_unmap(p, rep, err);
	if (io.beats > 0 && beat != 1)
		bc_remote_beat_remember(p->statedir, h);
	counts->sent = io.bytes_out;
	counts->received = io.bytes_in;
	close(fd);
	bc_buf_free(&out);
	free(need);
	if (p->stats != NULL) {
		bc_cstats_add(p->stats, "pump_files_needed", (long long)k);
		bc_cstats_add(p->stats, "pump_files_deduped",
		    (long long)(p->nfiles > k ? p->nfiles - k : 0));
		bc_cstats_add(p->stats, "pump_file_bytes_sent",
		    (long long)plain);
	}
	if (r != BC_OK && strcmp(*why, "encode") != 0)
		*why = bc_remote_reason(r);
	if (errmsg != NULL) {
		rep->errmsg = errmsg;
		errmsg = NULL;
	}
	return r;
}
