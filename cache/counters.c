/*
 * counters.c - the artifact cache's statistics: named counters in the
 * index (so they survive restarts), the index's totals, and the baseline
 * an operator's zero keeps so that the pages count from it while the
 * totals never go backwards (doc/cache.md, "Statistics").
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/util.h"
#include "cache/store.h"
#include "cache/store_int.h"

#define UNCACHEABLE "uncacheable:"

/* The counters with a field of their own in struct bc_cache_stats; the
 * others are uncacheable:<reason>. */
static const struct {
	const char *name;
	size_t off;
} known_counters[] = {
#define F(n) { #n, offsetof(struct bc_cache_stats, n) }
	F(requests), F(hits), F(misses), F(stores), F(store_errors),
	F(evictions), F(corrupt), F(identity_mismatch),
	F(time_saved_ms), F(hits_other_checkout),
#undef F
};
#define NKNOWN (sizeof(known_counters) / sizeof(known_counters[0]))

int
bc_cache_count(struct bc_cache *c, const char *name, int64_t delta)
{
	return bc_index_add(c, "counters", name, delta);
}

static uint64_t *
counter_field(struct bc_cache_stats *s, size_t i)
{
	return (uint64_t *)(void *)((char *)s + known_counters[i].off);
}

static uint64_t
counter_get(const struct bc_cache_stats *s, size_t i)
{
	return *(const uint64_t *)(const void *)((const char *)s +
	    known_counters[i].off);
}

/* One counter row (name, value) into out. */
static void
fill_counter(struct bc_cache_stats *out, const char *n, int64_t v)
{
	uint64_t uv = v > 0 ? (uint64_t)v : 0;
	size_t i;

	for (i = 0; i < NKNOWN; i++)
		if (strcmp(n, known_counters[i].name) == 0) {
			*counter_field(out, i) = uv;
			return;
		}
	if (!bc_str_has_prefix(n, UNCACHEABLE))
		return;
	out->uncacheable += uv;
	if (out->nreasons < BC_CACHE_MAX_REASONS) {
		snprintf(out->reasons[out->nreasons].name,
		    sizeof(out->reasons[0].name), "%s",
		    n + strlen(UNCACHEABLE));
		out->reasons[out->nreasons].value = uv;
		out->nreasons++;
	}
}

/* Every row of sql (name, value), names without prefix, into out. */
static int
fill_counters(struct bc_cache *c, const char *sql, const char *prefix,
    struct bc_cache_stats *out, char *err)
{
	sqlite3_stmt *st;
	size_t pl = strlen(prefix);

	if (bc_index_prep(c, sql, &st, err) != BC_OK)
		return BC_ERR_IO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 0);

		if (n != NULL && strncmp(n, prefix, pl) == 0)
			fill_counter(out, n + pl, sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	return BC_OK;
}

int
bc_cache_stats(struct bc_cache *c, struct bc_cache_stats *out, char *err)
{
	int64_t b;

	memset(out, 0, sizeof(*out));
	if (fill_counters(c, "SELECT name, value FROM counters ORDER BY name",
	    "", out, err) != BC_OK)
		return BC_ERR_IO;
	out->entries = (uint64_t)bc_index_query_int(c,
	    "SELECT COUNT(*) FROM entries");
	out->oldest_used = bc_index_query_int(c,
	    "SELECT MIN(last_used) FROM entries");
	b = bc_index_get(c, "state", "stored_bytes");
	out->stored_bytes = b > 0 ? (uint64_t)b : 0;
	out->limit_set = bc_cache_operator_limit(c) > 0;
	out->max_bytes = bc_cache_limit(c);
	out->zeroed_at = bc_index_get(c, "state", "zeroed_at");
	return BC_OK;
}

/* ---------------------------------------------------------------------
 * the baseline
 */

int
bc_cache_zero(struct bc_cache *c, char *err)
{
	sqlite3_stmt *st;
	int r;

	if ((r = bc_index_begin(c, err)) != BC_OK)
		return r;
	if ((r = bc_index_exec(c, "DELETE FROM state WHERE name LIKE 'zero:%';"
	    "INSERT INTO state(name,value) SELECT 'zero:'||name, value "
	    "FROM counters", err)) != BC_OK) {
		bc_index_rollback(c);
		return r;
	}
	if (bc_index_prep(c, "INSERT OR REPLACE INTO state(name,value) "
	    "VALUES('zeroed_at',?1)", &st, err) != BC_OK) {
		bc_index_rollback(c);
		return BC_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
	r = sqlite3_step(st) == SQLITE_DONE ? BC_OK :
	    bc_index_err(c, err, "zero");
	sqlite3_finalize(st);
	if (r != BC_OK) {
		bc_index_rollback(c);
		return r;
	}
	return bc_index_commit(c, err);
}

int
bc_cache_baseline(struct bc_cache *c, struct bc_cache_stats *base,
    char *err)
{
	memset(base, 0, sizeof(*base));
	if (fill_counters(c, "SELECT name, value FROM state WHERE name LIKE "
	    "'zero:%' ORDER BY name", "zero:", base, err) != BC_OK)
		return BC_ERR_IO;
	base->zeroed_at = bc_index_get(c, "state", "zeroed_at");
	return BC_OK;
}

static uint64_t
minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void
bc_cache_stats_since(const struct bc_cache_stats *total,
    const struct bc_cache_stats *base, struct bc_cache_stats *out)
{
	size_t i, k;

	*out = *total;
	for (i = 0; i < NKNOWN; i++)
		*counter_field(out, i) = minus(counter_get(total, i),
		    counter_get(base, i));
	out->uncacheable = 0;
	for (i = 0; i < out->nreasons; i++) {
		uint64_t b = 0;

		for (k = 0; k < base->nreasons; k++)
			if (strcmp(base->reasons[k].name,
			    out->reasons[i].name) == 0)
				b = base->reasons[k].value;
		out->reasons[i].value = minus(out->reasons[i].value, b);
		out->uncacheable += out->reasons[i].value;
	}
	out->zeroed_at = base->zeroed_at;
}
