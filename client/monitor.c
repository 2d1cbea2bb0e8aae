/*
 * monitor.c - boltcc --monitor: the farm's hosts, their slots and the
 * files compiling there now, refreshed once a second (see monitor.h).
 *
 * The terminal view redraws the whole screen each second with three
 * VT100 sequences (home, erase to end of line, erase below) on the
 * alternate screen: that is all it needs, it is smaller than linking
 * ncurses, and it builds unchanged for macOS.  Without a terminal it
 * prints plain snapshots.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include "client/binstate.h"
#include "client/hostsel.h"
#include "client/monitor.h"
#include "client/statspage.h"
#include "common/err.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/util.h"

#define MON_FETCH_MS 800	/* one host's stats page, in all */
#define MON_MIN_WIDTH 40
#define BC_MAX_LINE_COLS 1000	/* plain lines (no terminal) are not cut */
#define BC_MON_MAX_MINE 256	/* this machine's jobs shown */

/* --------------------------------------------------------------------- */
/* reading the hosts */

/* The body of an HTTP answer with status 200, or NULL. */
static const char *
http_body(const struct bc_buf *page, size_t *n)
{
	const char *p = (const char *)bc_buf_data(page);
	size_t len = bc_buf_len(page), i;

	if (len < 12 || memcmp(p, "HTTP/1.", 7) != 0 ||
	    memcmp(p + 8, " 200", 4) != 0)
		return NULL;
	for (i = 0; i + 1 < len; i++) {
		if (p[i] == '\n' && p[i + 1] == '\n') {
			*n = len - i - 2;
			return p + i + 2;
		}
		if (i + 3 < len && memcmp(p + i, "\r\n\r\n", 4) == 0) {
			*n = len - i - 4;
			return p + i + 4;
		}
	}
	return NULL;
}

/* src cut to fit n bytes, at a character boundary. */
static void
copy_str(char *dst, size_t n, const char *src)
{
	size_t k = src != NULL ? strnlen(src, n - 1) : 0;

	if (src != NULL && src[k] != '\0')
		while (k > 0 && ((unsigned char)src[k] & 0xc0) == 0x80)
			k--;
	if (k > 0)
		memcpy(dst, src, k);
	dst[k] = '\0';
}

static void
parse_series(const struct bc_json *d, size_t hist, const char *name,
    double *out)
{
	size_t a = bc_json_get(d, hist, name), k, n, i;

	memset(out, 0, BC_MON_HISTORY * sizeof(*out));
	if (bc_json_type(d, a) != BC_JSON_ARRAY)
		return;
	n = d->v[a].count;
	/* the newest points, right-aligned */
	for (i = 0, k = d->v[a].first; k != BC_JSON_NONE; k = d->v[k].next,
	    i++) {
		size_t at;

		if (n - i > BC_MON_HISTORY)
			continue;
		at = BC_MON_HISTORY - (n - i);
		out[at] = d->v[k].type == BC_JSON_NUMBER ? d->v[k].num : 0;
	}
}

static void
parse_jobs(const struct bc_json *d, size_t root, struct bc_mon_host *h)
{
	size_t a = bc_json_get(d, root, "active_jobs"), k;

	if (bc_json_type(d, a) != BC_JSON_ARRAY || d->v[a].count == 0)
		return;
	h->job = xcalloc(d->v[a].count, sizeof(*h->job));
	for (k = d->v[a].first; k != BC_JSON_NONE; k = d->v[k].next) {
		struct bc_mon_job *j = &h->job[h->njob];

		if (d->v[k].type != BC_JSON_OBJECT)
			continue;
		copy_str(j->state, sizeof(j->state),
		    bc_json_str(d, k, "state", "-"));
		copy_str(j->mode, sizeof(j->mode),
		    bc_json_str(d, k, "mode", "-"));
		copy_str(j->client, sizeof(j->client),
		    bc_json_str(d, k, "client", "-"));
		copy_str(j->compiler, sizeof(j->compiler),
		    bc_json_str(d, k, "compiler", "-"));
		copy_str(j->file, sizeof(j->file),
		    bc_json_str(d, k, "file", "-"));
		j->secs = bc_json_num(d, k, "seconds", 0);
		h->njob++;
	}
}

int
bc_monitor_parse_json(struct bc_mon_host *h, const void *p, size_t n,
    char *err)
{
	struct bc_json d;
	size_t root = 0, c, hist;
	int r;

	if ((r = bc_json_parse(&d, p, n, err)) != BC_OK) {
		bc_json_free(&d);
		return r;
	}
	if (bc_json_type(&d, root) != BC_JSON_OBJECT) {
		bc_json_free(&d);
		return bc_seterr(err, BC_ERR_PROTO, "stats page: not an "
		    "object");
	}
	h->slots = (int)bc_json_num(&d, root, "jobs", 0);
	h->running = (int)bc_json_num(&d, root, "running", 0);
	h->queued = (int)bc_json_num(&d, root, "queued", 0);
	h->done = bc_json_num(&d, root, "dcc_compile_ok", 0) +
	    bc_json_num(&d, root, "dcc_compile_error", 0);
	c = bc_json_get(&d, root, "throughput");
	h->jobs_per_sec = bc_json_num(&d, c, "jobs_per_second",
	    bc_json_num(&d, root, "dcc_num_compiles1", 0) / 60.0);
	c = bc_json_get(&d, root, "cache");
	if (bc_json_type(&d, c) == BC_JSON_OBJECT) {
		h->cache = 1;
		h->hits = bc_json_num(&d, c, "hits", 0);
		h->misses = bc_json_num(&d, c, "misses", 0);
		h->saved_s = bc_json_num(&d, c, "time_saved_ms", 0) / 1000.0;
		h->entries = bc_json_num(&d, c, "entries", 0);
		h->bytes = bc_json_num(&d, c, "stored_bytes", 0);
	}
	hist = bc_json_get(&d, root, "history");
	if (bc_json_type(&d, hist) == BC_JSON_OBJECT) {
		h->step_s = (int)bc_json_num(&d, hist, "step_seconds", 0);
		parse_series(&d, hist, "done", h->hist_done);
		parse_series(&d, hist, "hits", h->hist_hits);
		parse_series(&d, hist, "misses", h->hist_misses);
	}
	parse_jobs(&d, root, h);
	bc_json_free(&d);
	return BC_OK;
}


/* A distccd's text page: what it has of ours. */
static void
parse_distccd(struct bc_mon_host *h, const char *body, size_t n)
{
	struct bc_strv keys = BC_STRV_INIT, vals = BC_STRV_INIT;
	double v;

	bc_statspage_parse(body, n, &keys, &vals);
	if (bc_statspage_num(&keys, &vals, "dcc_max_kids", &v))
		h->slots = (int)v;
	if (bc_statspage_num(&keys, &vals, "dcc_compile_ok", &v))
		h->done = v;
	if (bc_statspage_num(&keys, &vals, "dcc_num_compiles1", &v))
		h->jobs_per_sec = v / 60.0;
	bc_strv_free(&keys);
	bc_strv_free(&vals);
}

static void
sample_tcp(const struct bc_cconf *cfg, const struct bc_host *hs,
    struct bc_mon_host *h)
{
	struct bc_buf page;
	char err[BC_ERRLEN];
	const char *body;
	size_t n = 0;
	time_t until;
	char why[sizeof(h->why)];

	bc_buf_init(&page, BC_MAX_STATS_PAGE);
	if (bc_io_http_get(hs->name, bc_cconf_stats_port(cfg, hs),
	    "/stats.json", MON_FETCH_MS, &page, err) != BC_OK) {
		h->state = BC_MON_DOWN;
		copy_str(h->why, sizeof(h->why), err);
	} else if ((body = http_body(&page, &n)) == NULL) {
		h->state = BC_MON_DOWN;
		copy_str(h->why, sizeof(h->why), "its stats port gave no page");
	} else if (n > 0 && body[0] == '{') {
		h->state = BC_MON_UP;
		if (bc_monitor_parse_json(h, body, n, err) != BC_OK) {
			h->state = BC_MON_DOWN;
			copy_str(h->why, sizeof(h->why), err);
		}
	} else if (bc_memstr(body, n, "<distccstats>")) {
		h->state = BC_MON_DISTCCD;
		parse_distccd(h, body, n);
	} else {
		h->state = BC_MON_DOWN;
		copy_str(h->why, sizeof(h->why), "not a stats page");
	}
	bc_buf_free(&page);
	h->reachable = h->state == BC_MON_UP || h->state == BC_MON_DISTCCD;
	if (cfg->lockdir != NULL && bc_hostsel_backoff_info(cfg->lockdir, hs,
	    cfg->backoff_period, &until, why, sizeof(why))) {
		h->state = BC_MON_BACKOFF;
		h->backoff_until = until;
		copy_str(h->why, sizeof(h->why), why);
	}
}

/* This machine's jobs: the state files of live processes (a dead
 * one's file is removed, as distccmon does). */
static void
sample_mine(const struct bc_cconf *cfg, struct bc_farm *farm)
{
	struct bc_binstate st;
	struct dirent *de;
	size_t cap = 0;
	char err[BC_ERRLEN];
	DIR *d;

	if (cfg->statedir == NULL || (d = opendir(cfg->statedir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && farm->nmine < BC_MON_MAX_MINE) {
		char *path;
		struct bc_mon_mine *m;

		if (!bc_str_has_prefix(de->d_name, "binstate_"))
			continue;
		path = xasprintf("%s/%s", cfg->statedir, de->d_name);
		if (bc_binstate_read(path, &st, err) != BC_OK ||
		    st.cpid == 0) {
			free(path);
			continue;
		}
		if (kill((pid_t)st.cpid, 0) != 0 && errno == ESRCH) {
			(void)unlink(path);	/* its process died */
			free(path);
			continue;
		}
		free(path);
		if (farm->nmine == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			farm->mine = xrealloc(farm->mine, cap,
			    sizeof(*farm->mine));
		}
		m = &farm->mine[farm->nmine++];
		m->pid = (long)st.cpid;
		copy_str(m->file, sizeof(m->file), st.file);
		copy_str(m->host, sizeof(m->host), st.host);
	}
	closedir(d);
}

void
bc_monitor_sample(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    struct bc_farm *farm)
{
	size_t i;

	memset(farm, 0, sizeof(*farm));
	farm->at = time(NULL);
	farm->host = xcalloc(hl->n + 1, sizeof(*farm->host));
	for (i = 0; i < hl->n; i++) {
		const struct bc_host *hs = &hl->v[i];
		struct bc_mon_host *h;

		if (hs->kind == BC_HOST_LOCAL)
			continue;
		h = &farm->host[farm->n++];
		copy_str(h->spec, sizeof(h->spec), hs->spec);
		h->slots = hs->limit;
		if (hs->kind == BC_HOST_TCP) {
			sample_tcp(cfg, hs, h);
		} else {
			h->state = BC_MON_NOSTATS;
			copy_str(h->why, sizeof(h->why), "over SSH: no stats "
			    "port to ask");
		}
	}
	sample_mine(cfg, farm);
}

void
bc_farm_free(struct bc_farm *farm)
{
	size_t i;

	for (i = 0; i < farm->n; i++)
		free(farm->host[i].job);
	free(farm->host);
	free(farm->mine);
	memset(farm, 0, sizeof(*farm));
}

/* --------------------------------------------------------------------- */
/* the view */

static const char *
state_name(int state)
{
	switch (state) {
	case BC_MON_UP: return "up";
	case BC_MON_DISTCCD: return "up (distccd)";
	case BC_MON_DOWN: return "down";
	case BC_MON_BACKOFF: return "backoff";
	default: return "no stats";
	}
}

/*
 * Append s cut or padded to exactly w columns (a character a column):
 * control characters and broken UTF-8 become '?'.  w < 0: no padding.
 */
static int
put_cell(struct bc_buf *out, const char *s, int w)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k;
	int cols = 0, r = BC_OK;

	while (r == BC_OK && i < n && (w < 0 || cols < w)) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			r = bc_buf_put_u8(out, p[i]);
			k = 1;
		} else if (p[i] >= 0x80 && (k = bc_utf8_len(p + i, n - i)) > 0)
			r = bc_buf_put(out, p + i, k);
		else {
			r = bc_buf_put_u8(out, '?');
			k = 1;
		}
		i += k;
		cols++;
	}
	for (; r == BC_OK && w >= 0 && cols < w; cols++)
		r = bc_buf_put_u8(out, ' ');
	return r;
}

/* A slot bar "[###.....]" of `cells` cells, used of total. */
static void
fmt_bar(int used, int total, int cells, char *out, size_t n)
{
	int i, fill = total > 0 ? (used * cells + total - 1) / total : 0;

	if (fill > cells)
		fill = cells;
	if ((size_t)cells + 3 > n)
		cells = (int)n - 3;
	out[0] = '[';
	for (i = 0; i < cells; i++)
		out[1 + i] = i < fill ? '#' : '.';
	out[1 + cells] = ']';
	out[2 + cells] = '\0';
}

struct view {
	struct bc_buf *out;
	int width, height, lines;
	int r;
};

/* One line of the view, cut to the width, without trailing blanks. */
static void
view_line(struct view *v, const char *text)
{
	struct bc_buf line;
	size_t n;

	if (v->r != BC_OK || (v->height > 0 && v->lines >= v->height))
		return;
	bc_buf_init(&line, 4 * (size_t)v->width + 1);
	v->r = put_cell(&line, text, v->width);
	n = bc_buf_len(&line);
	while (n > 0 && bc_buf_data(&line)[n - 1] == ' ')
		n--;
	if (v->r == BC_OK && n > 0)
		v->r = bc_buf_put(v->out, bc_buf_data(&line), n);
	if (v->r == BC_OK)
		v->r = bc_buf_put_u8(v->out, '\n');
	bc_buf_free(&line);
	v->lines++;
}

static void
view_summary(struct view *v, const struct bc_farm *farm)
{
	char line[512], rate[16], saved[32], when[16];
	double hits = 0, misses = 0, saved_s = 0, jps = 0;
	int up = 0, slots = 0, busy = 0;
	size_t i;
	struct tm tm;

	for (i = 0; i < farm->n; i++) {
		const struct bc_mon_host *h = &farm->host[i];

		if (!h->reachable)
			continue;
		up += h->state != BC_MON_BACKOFF;
		slots += h->slots;
		busy += h->running;
		hits += h->hits;
		misses += h->misses;
		saved_s += h->saved_s;
		jps += h->jobs_per_sec;
	}
	bc_human_percent(hits, hits + misses, rate, sizeof(rate));
	bc_human_secs(saved_s, saved, sizeof(saved));
	localtime_r(&farm->at, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	snprintf(line, sizeof(line), "boltcc monitor  %s  %zu host%s, %d up",
	    when, farm->n, farm->n == 1 ? "" : "s", up);
	view_line(v, line);
	snprintf(line, sizeof(line), "farm: slots %d/%d busy, %.2f jobs/s, "
	    "cache hits %s, time saved %s", busy, slots, jps, rate, saved);
	view_line(v, line);
	view_line(v, "");
	snprintf(line, sizeof(line), "%-22s %-8s %-16s %7s %6s %6s %9s",
	    "HOST", "STATE", "SLOTS", "DONE", "JOB/S", "HIT", "SAVED");
	view_line(v, line);
}

static void
view_host(struct view *v, const struct bc_mon_host *h)
{
	char line[1024], bar[32], slots[40], rate[16], saved[32], spec[96];
	char file[160], client[80];
	size_t k;

	{
		struct bc_buf b;

		bc_buf_init(&b, sizeof(spec) - 1);
		(void)put_cell(&b, h->spec, 22);
		snprintf(spec, sizeof(spec), "%.*s", (int)bc_buf_len(&b),
		    (const char *)bc_buf_data(&b));
		bc_buf_free(&b);
	}
	if (!h->reachable) {
		snprintf(line, sizeof(line), "%s %s", spec,
		    state_name(h->state));
		view_line(v, line);
	} else {
		fmt_bar(h->running, h->slots, 8, bar, sizeof(bar));
		snprintf(slots, sizeof(slots), "%s %d/%d", bar, h->running,
		    h->slots);
		if (h->cache)
			bc_human_percent(h->hits, h->hits + h->misses, rate,
			    sizeof(rate));
		else
			snprintf(rate, sizeof(rate), "-");
		bc_human_secs(h->saved_s, saved, sizeof(saved));
		snprintf(line, sizeof(line), "%s %-8s %-16s %7.0f %6.2f %6s "
		    "%9s", spec, state_name(h->state), slots, h->done,
		    h->jobs_per_sec, rate, h->cache ? saved : "-");
		view_line(v, line);
	}
	if (h->state == BC_MON_BACKOFF) {
		char until[16];
		struct tm tm;

		localtime_r(&h->backoff_until, &tm);
		strftime(until, sizeof(until), "%H:%M:%S", &tm);
		snprintf(line, sizeof(line), "    backoff until %s: %s", until,
		    h->why[0] != '\0' ? h->why : "failed jobs");
		view_line(v, line);
	} else if (h->why[0] != '\0') {
		snprintf(line, sizeof(line), "    %s", h->why);
		view_line(v, line);
	}
	for (k = 0; k < h->njob; k++) {
		const struct bc_mon_job *j = &h->job[k];
		struct bc_buf b;

		bc_buf_init(&b, sizeof(file) - 1);
		(void)put_cell(&b, j->file, 30);
		snprintf(file, sizeof(file), "%.*s", (int)bc_buf_len(&b),
		    (const char *)bc_buf_data(&b));
		bc_buf_free(&b);
		snprintf(client, sizeof(client), "%s", j->client);
		snprintf(line, sizeof(line), "    %s %-9s %6.1f s  %-9s %s",
		    file, j->state, j->secs, j->mode, client);
		view_line(v, line);
	}
}

static void
view_mine(struct view *v, const struct bc_farm *farm)
{
	char line[512], file[160];
	size_t i;

	if (farm->nmine == 0)
		return;
	view_line(v, "");
	snprintf(line, sizeof(line), "this machine: %zu job%s", farm->nmine,
	    farm->nmine == 1 ? "" : "s");
	view_line(v, line);
	for (i = 0; i < farm->nmine; i++) {
		struct bc_buf b;

		bc_buf_init(&b, sizeof(file) - 1);
		(void)put_cell(&b, farm->mine[i].file, 30);
		snprintf(file, sizeof(file), "%.*s", (int)bc_buf_len(&b),
		    (const char *)bc_buf_data(&b));
		bc_buf_free(&b);
		snprintf(line, sizeof(line), "    %s on %s (pid %ld)", file,
		    farm->mine[i].host, farm->mine[i].pid);
		view_line(v, line);
	}
}

int
bc_monitor_render(const struct bc_farm *farm, int width, int height,
    struct bc_buf *out)
{
	struct view v = { out, width < MON_MIN_WIDTH ? MON_MIN_WIDTH : width,
	    height, 0, BC_OK };
	size_t i;

	view_summary(&v, farm);
	for (i = 0; i < farm->n; i++)
		view_host(&v, &farm->host[i]);
	if (farm->n == 0)
		view_line(&v, "(no hosts: set BOLTCC_HOSTS or DISTCC_HOSTS)");
	view_mine(&v, farm);
	return v.r;
}

/* --------------------------------------------------------------------- */
/* JSON for the web page */

static void
put_series(struct bc_jsonw *w, const char *name, const double *s)
{
	int i;

	bc_jsonw_key(w, name);
	bc_jsonw_arr(w);
	for (i = 0; i < BC_MON_HISTORY; i++)
		bc_jsonw_fixed(w, s[i], 0);
	bc_jsonw_arr_end(w);
}

static void
put_str(struct bc_jsonw *w, const char *key, const char *v)
{
	bc_jsonw_key(w, key);
	bc_jsonw_str(w, v);
}

static void
put_num(struct bc_jsonw *w, const char *key, double v, int decimals)
{
	bc_jsonw_key(w, key);
	bc_jsonw_fixed(w, v, decimals);
}

static void
put_int(struct bc_jsonw *w, const char *key, long long v)
{
	bc_jsonw_key(w, key);
	bc_jsonw_int(w, v);
}

static void
put_job_json(struct bc_jsonw *w, const struct bc_mon_job *j)
{
	bc_jsonw_obj(w);
	put_num(w, "seconds", j->secs, 1);
	put_str(w, "state", j->state);
	put_str(w, "mode", j->mode);
	put_str(w, "client", j->client);
	put_str(w, "compiler", j->compiler);
	put_str(w, "file", j->file);
	bc_jsonw_obj_end(w);
}

static void
put_host_json(struct bc_jsonw *w, const struct bc_mon_host *h)
{
	size_t k;

	bc_jsonw_obj(w);
	put_str(w, "host", h->spec);
	put_str(w, "state", state_name(h->state));
	bc_jsonw_key(w, "reachable");
	bc_jsonw_bool(w, h->reachable);
	put_str(w, "why", h->why);
	put_int(w, "backoff_until", (long long)h->backoff_until);
	put_int(w, "slots", h->slots);
	put_int(w, "running", h->running);
	put_int(w, "queued", h->queued);
	put_num(w, "done", h->done, 0);
	put_num(w, "jobs_per_second", h->jobs_per_sec, 2);
	bc_jsonw_key(w, "cache");
	bc_jsonw_bool(w, h->cache);
	put_num(w, "hits", h->hits, 0);
	put_num(w, "misses", h->misses, 0);
	put_num(w, "time_saved_seconds", h->saved_s, 1);
	put_num(w, "entries", h->entries, 0);
	put_num(w, "stored_bytes", h->bytes, 0);
	put_int(w, "step_seconds", h->step_s);
	put_series(w, "history_done", h->hist_done);
	put_series(w, "history_hits", h->hist_hits);
	put_series(w, "history_misses", h->hist_misses);
	bc_jsonw_key(w, "jobs");
	bc_jsonw_arr(w);
	for (k = 0; k < h->njob; k++)
		put_job_json(w, &h->job[k]);
	bc_jsonw_arr_end(w);
	bc_jsonw_obj_end(w);
}

int
bc_monitor_render_json(const struct bc_farm *farm, struct bc_buf *out)
{
	struct bc_jsonw w;
	size_t i;

	bc_jsonw_init(&w, out);
	bc_jsonw_obj(&w);
	put_int(&w, "time", (long long)farm->at);
	put_int(&w, "history_points", BC_MON_HISTORY);
	bc_jsonw_key(&w, "hosts");
	bc_jsonw_arr(&w);
	for (i = 0; i < farm->n; i++)
		put_host_json(&w, &farm->host[i]);
	bc_jsonw_arr_end(&w);
	bc_jsonw_key(&w, "this_machine");
	bc_jsonw_arr(&w);
	for (i = 0; i < farm->nmine; i++) {
		bc_jsonw_obj(&w);
		put_int(&w, "pid", farm->mine[i].pid);
		put_str(&w, "file", farm->mine[i].file);
		put_str(&w, "host", farm->mine[i].host);
		bc_jsonw_obj_end(&w);
	}
	bc_jsonw_arr_end(&w);
	bc_jsonw_obj_end(&w);
	if (bc_jsonw_end(&w) != BC_OK)
		return bc_jsonw_end(&w);
	return bc_buf_put_u8(out, '\n');
}

/* --------------------------------------------------------------------- */
/* the terminal */

static volatile sig_atomic_t mon_stop, mon_resized;

static void
mon_on_signal(int sig)
{
	if (sig == SIGWINCH)
		mon_resized = 1;
	else
		mon_stop = 1;
}

static void
mon_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = mon_on_signal;	/* no SA_RESTART: poll wakes up */
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
}

static void
term_size(int *w, int *h)
{
	struct winsize ws;

	*w = 80;
	*h = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		*w = ws.ws_col;
		*h = ws.ws_row;
	}
}

static int
put_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One frame: home, each line erased to its end, the rest erased. */
static int
draw(const struct bc_farm *farm, int interactive)
{
	struct bc_buf view, frame;
	const char *p;
	int w = 80, h = 0, r;
	size_t n, i;

	if (interactive)
		term_size(&w, &h);
	bc_buf_init(&view, BC_MAX_STATS_PAGE);
	r = bc_monitor_render(farm, interactive ? w : BC_MAX_LINE_COLS,
	    interactive ? h - 1 : 0, &view);
	if (!interactive) {
		if (r == BC_OK)
			r = put_all(STDOUT_FILENO, bc_buf_data(&view),
			    bc_buf_len(&view)) == 0 ? BC_OK : BC_ERR_IO;
		bc_buf_free(&view);
		return r;
	}
	bc_buf_init(&frame, 2 * BC_MAX_STATS_PAGE);
	r = r == BC_OK ? bc_buf_put_str(&frame, "\033[H") : r;
	p = (const char *)bc_buf_data(&view);
	n = bc_buf_len(&view);
	for (i = 0; r == BC_OK && i < n; i++) {
		if (p[i] == '\n')
			r = bc_buf_put_str(&frame, "\033[K\r\n");
		else
			r = bc_buf_put_u8(&frame, (uint8_t)p[i]);
	}
	if (r == BC_OK)
		r = bc_buf_put_str(&frame, "\033[Kq: quit\033[J");
	if (r == BC_OK && put_all(STDOUT_FILENO, bc_buf_data(&frame),
	    bc_buf_len(&frame)) != 0)
		r = BC_ERR_IO;
	bc_buf_free(&frame);
	bc_buf_free(&view);
	return r;
}

/* Wait up to ms for a key: 1 when it was q.  Without a keyboard (stdin
 * at its end: /dev/null, a closed pipe; *keys is then set to 0 for the
 * next calls) it only waits; Ctrl-C stops. */
static int
wait_key(int ms, int *keys)
{
	struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
	char c;

	if (!*keys) {
		(void)poll(NULL, 0, ms);
		return 0;
	}
	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (read(STDIN_FILENO, &c, 1) != 1) {
		*keys = 0;
		return 0;
	}
	return c == 'q' || c == 'Q';
}

static int
run_terminal(const struct bc_cconf *cfg, const struct bc_hostlist *hl)
{
	struct termios saved, raw;
	int have_tty = tcgetattr(STDIN_FILENO, &saved) == 0, r = BC_OK;
	int keys = 1;		/* stdin may still give keys */

	if (have_tty) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	(void)put_all(STDOUT_FILENO, "\033[?1049h\033[?25l\033[2J", 18);
	while (!mon_stop && r == BC_OK) {
		struct bc_farm farm;
		int64_t next = bc_now_ms() + 1000;

		bc_monitor_sample(cfg, hl, &farm);
		r = draw(&farm, 1);
		bc_farm_free(&farm);
		while (!mon_stop && !mon_resized && bc_now_ms() < next)
			if (wait_key((int)(next - bc_now_ms()), &keys))
				mon_stop = 1;
		mon_resized = 0;
	}
	(void)put_all(STDOUT_FILENO, "\033[?25h\033[?1049l", 14);
	if (have_tty)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return r == BC_OK ? 0 : BC_EXIT_IO_ERROR;
}

/* Not a terminal: a snapshot a second, a blank line between them. */
static int
run_plain(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    int once)
{
	int first = 1;

	while (!mon_stop) {
		struct bc_farm farm;
		int r;

		if (!first && put_all(STDOUT_FILENO, "\n", 1) != 0)
			return BC_EXIT_IO_ERROR;
		bc_monitor_sample(cfg, hl, &farm);
		r = draw(&farm, 0);
		bc_farm_free(&farm);
		if (r != BC_OK)
			return BC_EXIT_IO_ERROR;
		if (once)
			return 0;
		first = 0;
		(void)poll(NULL, 0, 1000);
	}
	return 0;
}

/* "[ADDR:]PORT" of --web. */
static int
parse_web(const char *arg, char *addr, size_t addrlen, int *port)
{
	const char *colon = strrchr(arg, ':');
	long long v;

	snprintf(addr, addrlen, "127.0.0.1");
	if (colon != NULL) {
		size_t n = (size_t)(colon - arg);

		if (n == 0 || n >= addrlen)
			return -1;
		memcpy(addr, arg, n);
		addr[n] = '\0';
		if (addr[0] == '[' && n > 2 && addr[n - 1] == ']') {
			memmove(addr, addr + 1, n - 2);
			addr[n - 2] = '\0';
		}
		arg = colon + 1;
	}
	if (bc_parse_int(arg, 1, 65535, &v) != BC_OK)
		return -1;
	*port = (int)v;
	return 0;
}

int
bc_monitor_main(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    int argc, char **argv)
{
	char addr[256];
	const char *web = NULL;
	int i, once = 0, port = 0, rc;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else if (strcmp(argv[i], "--web") == 0 && i + 1 < argc)
			web = argv[++i];
		else {
			fprintf(stderr, "boltcc: usage: --monitor [--once] "
			    "[--web [ADDR:]PORT]\n");
			return BC_EXIT_BAD_ARGUMENTS;
		}
	}
	if (web != NULL && parse_web(web, addr, sizeof(addr), &port) != 0) {
		fprintf(stderr, "boltcc: --monitor --web: '%s' is not "
		    "[ADDR:]PORT\n", web);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	mon_signals();
	if (web != NULL)
		rc = bc_monweb_serve(cfg, hl, addr, port);
	else if (!once && isatty(STDOUT_FILENO))
		rc = run_terminal(cfg, hl);
	else
		rc = run_plain(cfg, hl, once);
	return rc;
}

int
bc_monitor_stopped(void)
{
	return mon_stop;
}
