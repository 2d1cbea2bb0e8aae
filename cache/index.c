/*
 * index.c - the cache's handle and its sqlite index (index.sqlite, WAL
 * mode): opening and closing a cache directory, the schema and its
 * migration, and the small statements every other file of the cache
 * runs through (store_int.h).  The tables are in doc/cache.md, "Index
 * schema".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

#define BUSY_TIMEOUT_MS 10000
/* 1: blobs/ab/cd/<key>; 2: blobs/ab/<key> (no directory per new key) */
#define SCHEMA_VERSION 2

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS entries ("
    " key TEXT PRIMARY KEY NOT NULL,"
    " size INTEGER NOT NULL,"		/* blob bytes on disk */
    " osize INTEGER NOT NULL,"		/* uncompressed bytes */
    " created INTEGER NOT NULL,"	/* unix seconds */
    " last_used INTEGER NOT NULL,"	/* unix seconds */
    " seq INTEGER NOT NULL,"		/* LRU order: larger = more recent */
    " hits INTEGER NOT NULL DEFAULT 0,"
    " compile_ms INTEGER NOT NULL DEFAULT 0"
    ") WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS entries_lru ON entries(seq);"
    "CREATE TABLE IF NOT EXISTS counters ("
    " name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS locations ("
    " key TEXT PRIMARY KEY NOT NULL, host TEXT NOT NULL"
    ");"
    "CREATE TABLE IF NOT EXISTS state ("
    " name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    /* which checkout stored an entry (a hash of its working directory),
     * for hits_other_checkout; gone with its entry */
    "CREATE TABLE IF NOT EXISTS origins ("
    " key TEXT PRIMARY KEY NOT NULL, dir TEXT NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TRIGGER IF NOT EXISTS origins_gone AFTER DELETE ON entries"
    " BEGIN DELETE FROM origins WHERE key=old.key; END;";

/* ---------------------------------------------------------------------
 * statements
 */

int
bc_index_err(struct bc_cache *c, char *err, const char *what)
{
	return bc_seterr(err, BC_ERR_IO, "cache index: %s: %s", what,
	    c->db != NULL ? sqlite3_errmsg(c->db) : "not open");
}

int
bc_index_need(struct bc_cache *c, char *err)
{
	return c->db != NULL ? BC_OK : bc_index_open(c, err);
}

int
bc_index_exec(struct bc_cache *c, const char *sql, char *err)
{
	char *msg = NULL;
	int r;

	if ((r = bc_index_need(c, err)) != BC_OK)
		return r;
	if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		r = bc_seterr(err, BC_ERR_IO, "cache index: %s: %s", sql,
		    msg != NULL ? msg : "error");

		sqlite3_free(msg);
		return r;
	}
	return BC_OK;
}

int
bc_index_prep(struct bc_cache *c, const char *sql, sqlite3_stmt **st,
    char *err)
{
	int r;

	*st = NULL;
	if ((r = bc_index_need(c, err)) != BC_OK)
		return r;
	if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return bc_index_err(c, err, sql);
	}
	return BC_OK;
}

int
bc_index_begin(struct bc_cache *c, char *err)
{
	return bc_index_exec(c, "BEGIN IMMEDIATE", err);
}

int
bc_index_commit(struct bc_cache *c, char *err)
{
	int r = bc_index_exec(c, "COMMIT", err);

	if (r != BC_OK)
		(void)bc_index_exec(c, "ROLLBACK", NULL);
	return r;
}

void
bc_index_rollback(struct bc_cache *c)
{
	(void)bc_index_exec(c, "ROLLBACK", NULL);
}

int
bc_index_add(struct bc_cache *c, const char *table, const char *name,
    int64_t delta)
{
	char sql[160];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "INSERT INTO %s(name,value) VALUES(?1,?2) "
	    "ON CONFLICT(name) DO UPDATE SET value=value+excluded.value",
	    table);
	if (bc_index_prep(c, sql, &st, NULL) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, delta);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? BC_OK : BC_ERR_IO;
}

int64_t
bc_index_get(struct bc_cache *c, const char *table, const char *name)
{
	char sql[128];
	sqlite3_stmt *st;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT value FROM %s WHERE name=?1",
	    table);
	if (bc_index_prep(c, sql, &st, NULL) != BC_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int
bc_index_set_state(struct bc_cache *c, const char *name, int64_t v)
{
	sqlite3_stmt *st;
	int rc;

	if (bc_index_prep(c, "INSERT OR REPLACE INTO state(name,value) "
	    "VALUES(?1,?2)", &st, NULL) != BC_OK)
		return BC_ERR_IO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, v);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? BC_OK : BC_ERR_IO;
}

int64_t
bc_index_query_int(struct bc_cache *c, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	if (bc_index_prep(c, sql, &st, NULL) != BC_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---------------------------------------------------------------------
 * opening the index
 */

/* The connection, with what every process wants of it. */
static int
open_connection(struct bc_cache *c, char *err)
{
	char *path = xasprintf("%s/index.sqlite", c->dir);
	int one = 1, r;

	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		r = bc_seterr(err, BC_ERR_IO, "cannot open %s: %s", path,
		    c->db != NULL ? sqlite3_errmsg(c->db) : "out of memory");
		free(path);
		return r;
	}
	free(path);
	sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
	/* Keep -wal and -shm after the last connection closes: workers open
	 * and close the index for every job, and a full disk must not make
	 * an existing index unreadable. */
	(void)sqlite3_file_control(c->db, "main", SQLITE_FCNTL_PERSIST_WAL,
	    &one);
	/* ... and do not checkpoint (with an fsync) every time a worker
	 * closes: the automatic checkpoints suffice. */
	(void)sqlite3_db_config(c->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
	    NULL);
	return BC_OK;
}

/* PRAGMA user_version: 0 for a new index. */
static int
schema_version(struct bc_cache *c, int *uv, char *err)
{
	sqlite3_stmt *st;
	int r;

	*uv = 0;
	if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL)
	    != SQLITE_OK)
		return bc_index_err(c, err, "reading the schema version");
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*uv = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW)
		return bc_index_err(c, err, "reading the schema version");
	return BC_OK;
}

/* An index of schema uv brought to SCHEMA_VERSION: a new one made (in
 * WAL mode, a setting that persists in the file), a schema-1 cache's
 * blobs moved; a newer one refused. */
static int
upgrade(struct bc_cache *c, int uv, char *err)
{
	int r;

	if (uv > SCHEMA_VERSION)
		return bc_seterr(err, BC_ERR_INVAL,
		    "cache index schema %d is newer than this boltccd (%d)",
		    uv, SCHEMA_VERSION);
	if (uv == SCHEMA_VERSION)
		return BC_OK;
	if (uv == 1)
		bc_blobdir_migrate_v1(c);
	bc_blobdir_make(c);
	if ((r = bc_index_exec(c, "PRAGMA journal_mode=WAL", err)) != BC_OK ||
	    (r = bc_index_exec(c, schema, err)) != BC_OK)
		return r;
	return bc_index_exec(c, "PRAGMA user_version="
	    BC_CACHE_STR(SCHEMA_VERSION), err);
}

/* On bc_cache_open, or on the first use of a handle from
 * bc_cache_open_lazy.  On failure c->db stays NULL, so a later use tries
 * again and fails the same way. */
int
bc_index_open(struct bc_cache *c, char *err)
{
	int r, uv;

	if ((r = open_connection(c, err)) != BC_OK ||
	    (r = schema_version(c, &uv, err)) != BC_OK ||
	    (r = upgrade(c, uv, err)) != BC_OK ||
	    (r = bc_index_exec(c, "PRAGMA synchronous=NORMAL", err)) != BC_OK) {
		if (c->db != NULL)
			sqlite3_close(c->db);
		c->db = NULL;
	}
	return r;
}

/* ---------------------------------------------------------------------
 * the handle
 */

static int
cache_new(const char *dir, uint64_t max_bytes, struct bc_cache **out,
    char *err)
{
	struct bc_cache *c;
	char e[BC_ERRLEN];
	int r;

	*out = NULL;
	if (dir == NULL || dir[0] == '\0')
		return bc_seterr(err, BC_ERR_INVAL, "no cache directory");
	if ((r = bc_mkdir_p(dir, 0700, e)) != BC_OK)
		return bc_seterr(err, r, "cache directory: %s", e);
	c = xcalloc(1, sizeof(*c));
	c->dir = xstrdup(dir);
	c->blobdir = xasprintf("%s/blobs", dir);
	c->lockpath = xasprintf("%s/" BC_CACHE_LOCKFILE, dir);
	c->lockfd = -1;
	c->max_bytes = max_bytes > 0 ? max_bytes : BC_CACHE_DEFAULT_SIZE;
	if ((r = bc_mkdir_p(c->blobdir, 0700, e)) != BC_OK) {
		bc_cache_close(c);
		return bc_seterr(err, r, "cache directory: %s", e);
	}
	*out = c;
	return BC_OK;
}

int
bc_cache_open(const char *dir, uint64_t max_bytes, struct bc_cache **out,
    char *err)
{
	int r;

	if ((r = cache_new(dir, max_bytes, out, err)) != BC_OK)
		return r;
	if ((r = bc_index_open(*out, err)) != BC_OK) {
		bc_cache_close(*out);
		*out = NULL;
	}
	return r;
}

int
bc_cache_open_lazy(const char *dir, uint64_t max_bytes,
    struct bc_cache **out, char *err)
{
	return cache_new(dir, max_bytes, out, err);
}

void
bc_cache_close(struct bc_cache *c)
{
	if (c == NULL)
		return;
	if (c->db != NULL)
		sqlite3_close(c->db);
	if (c->lockfd >= 0)
		close(c->lockfd);
	free(c->dir);
	free(c->blobdir);
	free(c->lockpath);
	free(c);
}

const char *
bc_cache_dir(const struct bc_cache *c)
{
	return c->dir;
}
