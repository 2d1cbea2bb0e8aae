/*
 * locations.c - the directory of where the keys this daemon owns were
 * compiled (daemon/locdir.h), kept in the index's locations table so that
 * a restart keeps it: written a batch per transaction by the cache
 * keeper, read back at start, bounded to the newest BC_CACHE_LOC_MAX rows
 * (doc/cache.md, "Locations").
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/hash.h"
#include "common/limits.h"
#include "cache/store.h"
#include "cache/store_int.h"

/* One location with the batch's statements: ins records a host, del
 * forgets the key (an empty host).  A record with a bad key is skipped. */
static int
put_one(struct bc_cache *c, sqlite3_stmt *ins, sqlite3_stmt *del,
    const struct bc_cache_loc *v, char *err)
{
	sqlite3_stmt *st = v->host[0] != '\0' ? ins : del;

	if (!bc_hash_is_hex(v->key))
		return BC_OK;
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, v->key, -1, SQLITE_TRANSIENT);
	if (st == ins)
		sqlite3_bind_text(st, 2, v->host, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		return bc_index_err(c, err, "recording a location");
	return BC_OK;
}

/* Each location of the batch, in the caller's transaction. */
static int
put_all(struct bc_cache *c, const struct bc_cache_loc *v, size_t n,
    char *err)
{
	sqlite3_stmt *ins = NULL, *del = NULL;
	size_t i;
	int r = BC_OK;

	if (bc_index_prep(c, "INSERT OR REPLACE INTO locations(key,host) "
	    "VALUES(?1,?2)", &ins, err) != BC_OK ||
	    bc_index_prep(c, "DELETE FROM locations WHERE key=?1", &del, err)
	    != BC_OK) {
		sqlite3_finalize(ins);
		return BC_ERR_IO;
	}
	for (i = 0; i < n && r == BC_OK; i++)
		r = put_one(c, ins, del, &v[i], err);
	sqlite3_finalize(ins);
	sqlite3_finalize(del);
	return r;
}

int
bc_cache_loc_put(struct bc_cache *c, const struct bc_cache_loc *v, size_t n,
    char *err)
{
	int r;

	if (n == 0)
		return BC_OK;
	if ((r = bc_index_begin(c, err)) != BC_OK)
		return r;
	if ((r = put_all(c, v, n, err)) == BC_OK)
		/* bounded: the oldest rows beyond the limit go (rowids grow
		 * with every INSERT OR REPLACE) */
		r = bc_index_exec(c, "DELETE FROM locations WHERE rowid <= "
		    "(SELECT MAX(rowid) FROM locations) - "
		    BC_CACHE_STR(BC_CACHE_LOC_MAX), err);
	if (r != BC_OK) {
		bc_index_rollback(c);
		return r;
	}
	return bc_index_commit(c, err);
}

int
bc_cache_loc_each(struct bc_cache *c,
    void (*fn)(void *arg, const char *key, const char *host), void *arg,
    char *err)
{
	sqlite3_stmt *st;
	int r;

	if (bc_index_prep(c, "SELECT key, host FROM locations ORDER BY rowid",
	    &st, err) != BC_OK)
		return BC_ERR_IO;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *h = (const char *)sqlite3_column_text(st, 1);

		if (k != NULL && h != NULL && bc_hash_is_hex(k) &&
		    strlen(h) <= BC_MAX_LOC_HOST)
			fn(arg, k, h);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? BC_OK :
	    bc_index_err(c, err, "reading locations");
}
