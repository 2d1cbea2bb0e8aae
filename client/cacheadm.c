/*
 * cacheadm.c - boltcc --cache (cacheadm.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "common/exitcode.h"
#include "common/hosts.h"
#include "common/io.h"
#include "common/util.h"
#include "client/cacheadm.h"
#include "client/cconf.h"
#include "client/hitcache.h"
#include "client/remote.h"
#include "common/limits.h"

#define CACHEADM_SHOW_TIMEOUT_MS 5000
/* a clear of a big cache takes its time: the daemon answers when done */
#define CACHEADM_OP_TIMEOUT_MS (30 * 60 * 1000)

enum op { OP_SHOW, OP_CLEAR, OP_LIMIT, OP_EVICT };

struct cmd {
	enum op op;
	const char *value;	/* SIZE or AGE */
	int json;
	int local;
	char **hosts;		/* named hosts, or none */
	int nhosts;
};

/* One cache as shown: a daemon's (from /stats.json) or the local tier. */
struct view {
	int ok;			/* fetched */
	int has_cache;		/* a boltccd with a cache */
	char err[BC_ERRLEN];
	double entries, bytes, limit, hit_rate, oldest_age;
	int limit_set;
};

static int
usage_error(const char *msg)
{
	fprintf(stderr, "boltcc: --cache: %s\nusage: boltcc --cache [--json]\n"
	    "       boltcc --cache clear [--local] [HOST...]\n"
	    "       boltcc --cache limit SIZE [HOST...]\n"
	    "       boltcc --cache evict-older-than AGE [--local] [HOST...]\n",
	    msg);
	return BC_EXIT_BAD_ARGUMENTS;
}

static int
parse_cmd(int argc, char **argv, struct cmd *c)
{
	int i = 0;
	uint64_t size;
	int64_t age;

	memset(c, 0, sizeof(*c));
	c->op = OP_SHOW;
	if (i < argc && strcmp(argv[i], "clear") == 0)
		c->op = OP_CLEAR;
	else if (i < argc && strcmp(argv[i], "limit") == 0)
		c->op = OP_LIMIT;
	else if (i < argc && strcmp(argv[i], "evict-older-than") == 0)
		c->op = OP_EVICT;
	if (c->op != OP_SHOW)
		i++;
	if (c->op == OP_LIMIT || c->op == OP_EVICT) {
		if (i >= argc)
			return usage_error(c->op == OP_LIMIT ? "limit needs a "
			    "SIZE" : "evict-older-than needs an AGE");
		c->value = argv[i++];
		if (c->op == OP_LIMIT && bc_parse_size(c->value, 0, &size) !=
		    BC_OK)
			return usage_error("SIZE is a number with K, M, G or T, "
			    "like 20G (0: back to the daemon's --cache-size)");
		if (c->op == OP_EVICT && bc_parse_age(c->value, &age) != BC_OK)
			return usage_error("AGE is a number with s, m, h or d, "
			    "like 7d");
	}
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && c->op == OP_SHOW)
			c->json = 1;
		else if (strcmp(argv[i], "--local") == 0 && (c->op == OP_CLEAR
		    || c->op == OP_EVICT))
			c->local = 1;
		else if (argv[i][0] == '-')
			return usage_error("unknown option");
		else if (c->op == OP_SHOW)
			return usage_error("unknown request (clear, limit, "
			    "evict-older-than)");
		else {
			if (c->hosts == NULL)
				c->hosts = argv + i;
			c->nhosts++;
		}
	}
	if (c->local && c->nhosts > 0)
		return usage_error("--local applies to the local tier only: "
		    "no HOST with it");
	return BC_OK;
}

/* A boltccd (declared ,bolt or probed). */
static int
is_boltccd(const struct bc_cconf *cfg, const struct bc_host *h)
{
	return h->kind == BC_HOST_TCP && h->bolt != BC_BOLT_NO &&
	    (h->bolt == BC_BOLT_YES ||
	    bc_remote_probe_cached(cfg->statedir, h) == 1);
}

/* HOST as the user names it: the entry as written, its name, or
 * name:port. */
static int
host_named(const struct bc_host *h, const char *name)
{
	char np[300];

	snprintf(np, sizeof(np), "%s:%d", h->name, h->port);
	return strcmp(h->spec, name) == 0 || strcmp(h->name, name) == 0 ||
	    strcmp(np, name) == 0;
}

static void
fetch_view(const struct bc_cconf *cfg, const struct bc_host *h,
    struct view *v)
{
	struct bc_buf page = BC_BUF_INIT(BC_MAX_ADMIN_REPLY);
	struct bc_json d;
	char *body, e[BC_ERRLEN];
	size_t c;

	memset(v, 0, sizeof(*v));
	if (bc_io_http_get(h->name, bc_cconf_stats_port(cfg, h), "/stats.json",
	    CACHEADM_SHOW_TIMEOUT_MS, &page, v->err) != BC_OK) {
		bc_buf_free(&page);
		return;
	}
	body = bc_io_http_body(&page);
	bc_buf_free(&page);
	v->ok = 1;
	if (bc_json_parse(&d, body, strlen(body), e) == BC_OK &&
	    bc_json_type(&d, c = bc_json_get(&d, 0, "cache")) ==
	    BC_JSON_OBJECT) {
		v->has_cache = 1;
		v->entries = bc_json_num(&d, c, "entries", 0);
		v->bytes = bc_json_num(&d, c, "stored_bytes", 0);
		v->limit = bc_json_num(&d, c, "limit_bytes",
		    bc_json_num(&d, c, "max_bytes", 0));
		v->hit_rate = bc_json_num(&d, c, "hit_rate", 0);
		v->oldest_age = bc_json_num(&d, c, "oldest_age_sec", 0);
		v->limit_set = bc_json_type(&d, bc_json_get(&d, c,
		    "limit_set")) == BC_JSON_TRUE;
	}
	bc_json_free(&d);
	free(body);
}

static void
local_view(const struct bc_cconf *cfg, struct view *v)
{
	uint64_t n, b;
	int64_t oldest, now = (int64_t)time(NULL);

	memset(v, 0, sizeof(*v));
	bc_hitcache_info(cfg->hitdir, &n, &b, &oldest);
	v->ok = v->has_cache = 1;
	v->entries = (double)n;
	v->bytes = (double)b;
	v->limit = (double)cfg->local_cache_size;
	v->oldest_age = oldest > 0 && now > oldest ? (double)(now - oldest) : 0;
	v->hit_rate = -1;	/* the client's counters say (--stats) */
}

static void
human_age(double s, char *out, size_t n)
{
	if (s < 120)
		snprintf(out, n, "%.0f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.0f min", s / 60);
	else if (s < 2 * 86400)
		snprintf(out, n, "%.1f h", s / 3600);
	else
		snprintf(out, n, "%.1f d", s / 86400);
}

static void
print_row(const char *label, const struct view *v)
{
	char b[32], l[32], age[32], rate[16];

	if (!v->ok) {
		printf("%-32s unavailable: %s\n", label, v->err);
		return;
	}
	if (!v->has_cache) {
		printf("%-32s no cache (distccd, or boltccd --no-cache)\n",
		    label);
		return;
	}
	bc_human_bytes(v->bytes, b, sizeof(b));
	bc_human_bytes(v->limit, l, sizeof(l));
	if (v->entries > 0)
		human_age(v->oldest_age, age, sizeof(age));
	else
		snprintf(age, sizeof(age), "-");
	if (v->hit_rate >= 0)
		snprintf(rate, sizeof(rate), "%.1f%%", v->hit_rate);
	else
		snprintf(rate, sizeof(rate), "-");
	printf("%-32s %9.0f %11s %11s%s %8s %10s\n", label, v->entries, b, l,
	    v->limit_set ? "*" : " ", rate, age);
}

static void
json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void
json_view(const struct view *v)
{
	if (!v->ok) {
		printf("\"ok\":false,\"error\":");
		json_str(v->err);
		return;
	}
	printf("\"ok\":true,\"cache\":");
	if (!v->has_cache) {
		printf("null");
		return;
	}
	printf("{\"entries\":%.0f,\"stored_bytes\":%.0f,\"limit_bytes\":%.0f,"
	    "\"limit_set\":%s,\"oldest_age_sec\":%.0f", v->entries, v->bytes,
	    v->limit, v->limit_set ? "true" : "false", v->oldest_age);
	if (v->hit_rate >= 0)
		printf(",\"hit_rate\":%.1f", v->hit_rate);
	printf("}");
}

static int
show(const struct bc_cconf *cfg, const struct bc_hostlist *hl, int as_json)
{
	struct view v;
	size_t i, k = 0;

	if (as_json)
		printf("{\"hosts\":[");
	else
		printf("%-32s %9s %11s %12s %8s %10s\n", "cache", "entries",
		    "stored", "limit", "hit rate", "oldest");
	for (i = 0; hl != NULL && i < hl->n; i++) {
		const struct bc_host *h = &hl->v[i];

		if (h->kind != BC_HOST_TCP)
			continue;
		fetch_view(cfg, h, &v);
		if (as_json) {
			printf("%s{\"host\":", k++ > 0 ? "," : "");
			json_str(h->spec);
			printf(",\"stats_port\":%d,", bc_cconf_stats_port(cfg, h));
			json_view(&v);
			printf("}");
		} else
			print_row(h->spec, &v);
	}
	local_view(cfg, &v);
	if (as_json) {
		printf("],\"local\":{\"dir\":");
		json_str(cfg->hitdir);
		printf(",");
		json_view(&v);
		printf("}}\n");
	} else {
		char label[64];

		snprintf(label, sizeof(label), "local tier%s",
		    cfg->local_cache_size == 0 ? " (off)" : "");
		print_row(label, &v);
		printf("(* limit set by an operator; the hit rate counts since "
		    "the daemon's last zero; oldest: least recently used "
		    "entry)\n");
	}
	return 0;
}

/* The request path of an op. */
static char *
op_path(const struct cmd *c)
{
	if (c->op == OP_CLEAR)
		return xstrdup("/admin/cache/clear");
	if (c->op == OP_LIMIT)
		return xasprintf("/admin/cache/limit?size=%s", c->value);
	return xasprintf("/admin/cache/evict?older-than=%s", c->value);
}

/* One host's request: its answer or error on one line; 0 or -1. */
static int
op_host(const struct bc_cconf *cfg, const struct bc_host *h,
    const struct cmd *c)
{
	struct bc_buf ans = BC_BUF_INIT(BC_MAX_ADMIN_REPLY);
	char err[BC_ERRLEN], *path = op_path(c), *body;
	int status, r;

	r = bc_io_http_request("POST", h->name, bc_cconf_stats_port(cfg, h), path,
	    CACHEADM_OP_TIMEOUT_MS, &ans, err);
	free(path);
	if (r != BC_OK) {
		printf("%s: error: %s\n", h->spec, err);
		bc_buf_free(&ans);
		return -1;
	}
	status = bc_io_http_status(&ans);
	body = bc_io_http_body(&ans);
	body[strcspn(body, "\n")] = '\0';
	if (status == 200)
		printf("%s: %s\n", h->spec, body);
	else
		printf("%s: error: HTTP %d: %s\n", h->spec, status, body);
	free(body);
	bc_buf_free(&ans);
	return status == 200 ? 0 : -1;
}

static int
op_local(const struct bc_cconf *cfg, const struct cmd *c)
{
	char err[BC_ERRLEN];
	uint64_t n = 0, freed = 0;
	int64_t cutoff = INT64_MAX, age;

	if (c->op == OP_LIMIT)
		return usage_error("the local tier's limit is "
		    "BOLTCC_LOCAL_CACHE_SIZE");
	if (c->op == OP_EVICT) {
		(void)bc_parse_age(c->value, &age);
		cutoff = (int64_t)time(NULL) - age;
	}
	if (bc_hitcache_evict_older(cfg->hitdir, cutoff, &n, &freed, err) !=
	    BC_OK) {
		printf("local tier: error: %s\n", err);
		return BC_EXIT_IO_ERROR;
	}
	printf("local tier: {\"op\":\"%s\",\"%s_entries\":%llu,"
	    "\"freed_bytes\":%llu}\n", c->op == OP_CLEAR ? "clear" : "evict",
	    c->op == OP_CLEAR ? "cleared" : "evicted", (unsigned long long)n,
	    (unsigned long long)freed);
	return 0;
}

static int
op_hosts(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    const struct cmd *c)
{
	size_t i;
	int k, sent = 0, failed = 0;

	for (k = 0; k < c->nhosts; k++) {
		for (i = 0; hl != NULL && i < hl->n; i++)
			if (hl->v[i].kind == BC_HOST_TCP &&
			    host_named(&hl->v[i], c->hosts[k]))
				break;
		if (hl == NULL || i == hl->n) {
			printf("%s: error: not a TCP host of the host list\n",
			    c->hosts[k]);
			failed++;
		}
	}
	for (i = 0; hl != NULL && i < hl->n; i++) {
		const struct bc_host *h = &hl->v[i];

		if (c->nhosts > 0) {
			for (k = 0; k < c->nhosts; k++)
				if (h->kind == BC_HOST_TCP &&
				    host_named(h, c->hosts[k]))
					break;
			if (k == c->nhosts)
				continue;
		} else if (!is_boltccd(cfg, h))
			continue;
		sent++;
		failed += op_host(cfg, h, c) != 0;
	}
	if (sent == 0 && failed == 0) {
		fprintf(stderr, "boltcc: --cache: no boltccd host in the host "
		    "list (name one, or --local)\n");
		return BC_EXIT_NO_HOSTS;
	}
	return failed > 0 ? BC_EXIT_FAILURE : 0;
}

int
bc_cacheadm_main(const struct bc_cconf *cfg, int argc, char **argv)
{
	struct bc_hostlist hl;
	char err[BC_ERRLEN];
	struct cmd c;
	int r, have = 0;

	if ((r = parse_cmd(argc, argv, &c)) != BC_OK)
		return r;
	if (!cfg->dir_ok) {
		fprintf(stderr, "boltcc: error: %s\n", cfg->error != NULL ?
		    cfg->error : "no state directory");
		return BC_EXIT_BAD_ARGUMENTS;
	}
	if (c.local)
		return op_local(cfg, &c);
	memset(&hl, 0, sizeof(hl));
	if (cfg->hosts_text != NULL) {
		if (bc_hosts_parse(cfg->hosts_text, cfg->hosts_boltopts, &hl,
		    err) != BC_OK) {
			fprintf(stderr, "boltcc: error: bad host list in %s: "
			    "%s\n", cfg->hosts_origin, err);
			return BC_EXIT_BAD_HOSTSPEC;
		}
		have = 1;
	}
	r = c.op == OP_SHOW ? show(cfg, have ? &hl : NULL, c.json) :
	    op_hosts(cfg, have ? &hl : NULL, &c);
	if (have)
		bc_hosts_free(&hl);
	return r;
}
