/*
 * reconcile.c - making the index and the blob files agree, at start-up
 * and for boltccd --cache-check (bc_cache_reconcile, store.h): rows
 * without blobs or with the wrong size go, blobs without rows (a crash
 * between a blob and its row) are indexed if they verify and deleted
 * otherwise, temp files of interrupted writes are deleted, the byte total
 * is recomputed, then eviction to the limit.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

/* What bc_cache_reconcile was asked to do. */
struct scan_ctx {
	int repair;
	int verify;
	struct bc_cache_check *out;
};

/* ---------------------------------------------------------------------
 * rows
 */

static void
delete_row(struct bc_cache *c, const char *key)
{
	sqlite3_stmt *st;

	if (bc_index_prep(c, "DELETE FROM entries WHERE key=?1", &st, NULL)
	    != BC_OK)
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	(void)sqlite3_step(st);
	sqlite3_finalize(st);
}

/* Every row's key and size (as a decimal string). */
static int
read_rows(struct bc_cache *c, struct bc_strv *keys, struct bc_strv *sizes,
    char *err)
{
	sqlite3_stmt *st;

	if (bc_index_prep(c, "SELECT key, size FROM entries", &st, err) !=
	    BC_OK)
		return BC_ERR_IO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		char num[32];

		snprintf(num, sizeof(num), "%lld",
		    (long long)sqlite3_column_int64(st, 1));
		bc_strv_push(keys, k != NULL ? k : "");
		bc_strv_push(sizes, num);
	}
	sqlite3_finalize(st);
	return BC_OK;
}

/* 1 if the blob at p expands without error. */
static int
blob_decodes(const char *p)
{
	struct bc_buf b;
	struct bc_cache_entry e;
	int ok;

	bc_buf_init(&b, BC_BUF_CEILING);
	bc_cache_entry_init(&e);	/* freed also when the read fails */
	ok = bc_read_file(p, BC_BUF_CEILING, &b, NULL) == BC_OK &&
	    bc_cache_blob_decode(bc_buf_data(&b), bc_buf_len(&b), &e, NULL) ==
	    BC_OK;
	bc_cache_entry_free(&e);
	bc_buf_free(&b);
	return ok;
}

/* One row (key k, blob of size bytes): counted as an entry, or as what
 * is wrong with it and, when repairing, removed (with its blob if that
 * is there but bad). */
static void
check_row(struct bc_cache *c, const char *k, long long size,
    const struct scan_ctx *x)
{
	struct bc_cache_check *out = x->out;
	struct stat sb;
	char *p;
	int drop = 0, unl = 0;

	if (!bc_hash_is_hex(k)) {
		out->orphan_rows++;
		if (x->repair)
			delete_row(c, k);
		return;
	}
	p = bc_cache_blob_path(c, k);
	if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		out->orphan_rows++;
		drop = 1;
	} else if ((long long)sb.st_size != size) {
		out->bad_size++;
		drop = unl = 1;
	} else if (x->verify && !blob_decodes(p)) {
		out->corrupt++;
		drop = unl = 1;
	}
	if (!drop) {
		out->entries++;
		out->bytes += (uint64_t)size;
	} else if (x->repair) {
		delete_row(c, k);
		if (unl)
			(void)unlink(p);
	}
	free(p);
}

/* Every row checked, in one transaction when repairing (which also
 * counts the corrupt blobs and sets the byte total). */
static int
check_rows(struct bc_cache *c, const struct scan_ctx *x, char *err)
{
	struct bc_strv keys = BC_STRV_INIT;
	struct bc_strv sizes = BC_STRV_INIT;
	size_t i;
	int r;

	if ((r = read_rows(c, &keys, &sizes, err)) != BC_OK)
		return r;
	if (x->repair && (r = bc_index_begin(c, err)) != BC_OK)
		goto out;
	for (i = 0; i < keys.n; i++) {
		long long size = 0;

		(void)bc_parse_int(sizes.v[i], 0, 1LL << 62, &size);
		check_row(c, keys.v[i], size, x);
	}
	if (x->repair) {
		if (x->out->corrupt > 0)
			(void)bc_index_add(c, "counters", "corrupt",
			    (int64_t)x->out->corrupt);
		if (bc_index_set_state(c, "stored_bytes",
		    (int64_t)x->out->bytes) != BC_OK) {
			bc_index_rollback(c);
			r = bc_index_err(c, err, "reconcile");
			goto out;
		}
		r = bc_index_commit(c, err);
	}
out:
	bc_strv_free(&keys);
	bc_strv_free(&sizes);
	return r;
}

/* ---------------------------------------------------------------------
 * files
 */

/* A verified blob without a row gets one (its stores were counted). */
static int
adopt_blob(struct bc_cache *c, const char *key, const char *path)
{
	struct bc_cache_stored rec;
	struct bc_cache_blob b;
	struct stat sb;
	int64_t added = 0;
	int r, i;

	bc_cache_blob_init(&b);
	memset(&rec, 0, sizeof(rec));
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    bc_read_file(path, BC_BUF_CEILING, &b.data, NULL) != BC_OK ||
	    bc_blob_verify(bc_buf_data(&b.data), bc_buf_len(&b.data), &b,
	    NULL) != BC_OK) {
		bc_cache_blob_free(&b);
		return BC_ERR_CORRUPT;
	}
	memcpy(rec.key, key, BC_HASH_HEXLEN);
	rec.size = (int64_t)bc_buf_len(&b.data);
	for (i = 0; i < BC_CACHE_NSECT; i++)
		rec.osize += (int64_t)b.size[i];
	rec.created = (int64_t)sb.st_mtime;
	rec.compile_ms = b.compile_ms;
	memcpy(rec.origin, b.origin, sizeof(rec.origin));
	bc_cache_blob_free(&b);
	if ((r = bc_index_begin(c, NULL)) != BC_OK)
		return r;
	if ((r = bc_store_insert_rows(c, &rec, 1, &added, NULL)) == BC_OK &&
	    (r = bc_index_add(c, "state", "stored_bytes", added)) == BC_OK)
		return bc_index_commit(c, NULL);
	bc_index_rollback(c);
	return r;
}

/* One blob directory: temp files and blobs without rows. */
static void
scan_dir(struct bc_cache *c, const char *dir, void *arg)
{
	struct scan_ctx *x = arg;
	const char *ab = strrchr(dir, '/') + 1;
	struct dirent *f;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((f = readdir(d)) != NULL) {
		const char *n = f->d_name;
		char *fp;
		int bad = 0;

		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		if (bc_str_has_prefix(n, ".tmp.")) {
			x->out->temp_files++;
			bad = 1;
		} else if (!bc_hash_is_hex(n) || strncmp(n, ab, 2) != 0 ||
		    !bc_cache_has(c, n)) {
			x->out->orphan_blobs++;
			bad = 1;
		}
		if (bad && x->repair) {
			fp = xasprintf("%s/%s", dir, n);
			if (bc_hash_is_hex(n) && strncmp(n, ab, 2) == 0 &&
			    adopt_blob(c, n, fp) == BC_OK)
				x->out->adopted++;
			else
				(void)unlink(fp);
			free(fp);
		}
	}
	closedir(d);
}

int
bc_cache_reconcile(struct bc_cache *c, int repair, int verify,
    struct bc_cache_check *out, char *err)
{
	struct scan_ctx x;
	int r;

	memset(out, 0, sizeof(*out));
	x.repair = repair;
	x.verify = verify;
	x.out = out;
	if ((r = check_rows(c, &x, err)) != BC_OK)
		return r;
	bc_blobdir_each(c, scan_dir, &x);
	if (out->adopted > 0) {
		out->entries += out->adopted;
		out->bytes = (uint64_t)bc_index_get(c, "state", "stored_bytes");
	}
	if (repair)
		r = bc_cache_evict(c, bc_cache_limit(c), &out->evicted, err);
	if (r == BC_OK && out->evicted > 0) {
		out->entries -= out->evicted < out->entries ? out->evicted :
		    out->entries;
		out->bytes = (uint64_t)bc_index_get(c, "state", "stored_bytes");
	}
	return r;
}
