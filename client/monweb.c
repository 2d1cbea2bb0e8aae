/*
 * monweb.c - boltcc --monitor --web [ADDR:]PORT: the monitor as a web
 * page, served on loopback unless an address is given.
 *
 * Two resources: "/" is one self-contained page (its script and style
 * inline, nothing fetched from elsewhere) that asks for "/farm.json"
 * once a second and draws it: per-host slot bars, the files compiling,
 * and the farm's jobs per second and cache hit rate over the last 15
 * minutes (from the hosts' own histories).  One connection at a time,
 * each with a short deadline: it is one person's view of the farm.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "client/monitor.h"
#include "common/err.h"
#include "common/exitcode.h"
#include "common/http.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/util.h"

#define MONWEB_IO_MS 2000	/* one request and its answer */
#define MONWEB_SAMPLE_MS 900	/* the snapshot's age before a new one */

static const char monweb_page[] =
"<!doctype html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
"<title>boltcc monitor</title>\n"
"<style>\n"
"body{font:14px -apple-system,BlinkMacSystemFont,\"Segoe UI\",sans-serif;"
"margin:16px 24px;background:#f6f7f9;color:#1d2330}\n"
"h1{font-size:20px;margin:0 0 4px}\n"
"#summary{color:#4a5263;margin-bottom:12px}\n"
".charts{display:flex;flex-wrap:wrap;gap:16px}\n"
"figure{margin:0}figcaption{font-weight:600;margin-bottom:4px}\n"
"svg{background:#fff;border:1px solid #d8dce3;border-radius:6px}\n"
".host{background:#fff;border:1px solid #d8dce3;border-radius:6px;"
"padding:10px 14px;margin:12px 0;max-width:980px}\n"
".head{display:flex;flex-wrap:wrap;align-items:center;gap:14px}\n"
".name{font-weight:600;font-size:15px;min-width:180px}\n"
".state{font-weight:600}.up{color:#1a7f37}.down{color:#c62828}"
".backoff{color:#b26a00}.nostats{color:#6b7280}\n"
".bar{display:flex;gap:3px}.slot{width:16px;height:16px;border-radius:3px;"
"background:#e4e7ec}.slot.busy{background:#2f6fde}\n"
".figs{color:#4a5263}\n"
"table{border-collapse:collapse;margin-top:6px;width:100%}\n"
"th,td{text-align:left;padding:2px 10px 2px 0;font-size:13px}"
"th{color:#6b7280;font-weight:500}\n"
"td.file{font-family:ui-monospace,Menlo,monospace}\n"
"</style></head><body>\n"
"<h1>boltcc monitor</h1>\n"
"<div id=\"summary\">waiting for the first snapshot&hellip;</div>\n"
"<div class=\"charts\">\n"
"<figure><figcaption>Jobs per second, last 15 minutes</figcaption>"
"<svg id=\"jps\" width=\"460\" height=\"150\" role=\"img\" "
"aria-label=\"jobs per second\"></svg></figure>\n"
"<figure><figcaption>Cache hit rate, last 15 minutes</figcaption>"
"<svg id=\"hit\" width=\"460\" height=\"150\" role=\"img\" "
"aria-label=\"cache hit rate\"></svg></figure>\n"
"</div>\n"
"<div id=\"hosts\"></div>\n"
"<script>\n"
"\"use strict\";\n"
"const NS = \"http://www.w3.org/2000/svg\";\n"
"function el(tag, cls, text) {\n"
"  const e = document.createElement(tag);\n"
"  if (cls) e.className = cls;\n"
"  if (text !== undefined) e.textContent = String(text);\n"
"  return e;\n"
"}\n"
"function svgEl(tag, attrs, text) {\n"
"  const e = document.createElementNS(NS, tag);\n"
"  for (const k in attrs) e.setAttribute(k, attrs[k]);\n"
"  if (text !== undefined) e.textContent = text;\n"
"  return e;\n"
"}\n"
"function secs(s) {\n"
"  if (s < 120) return s.toFixed(1) + \" s\";\n"
"  if (s < 7200) return (s / 60).toFixed(1) + \" min\";\n"
"  return (s / 3600).toFixed(1) + \" h\";\n"
"}\n"
"function pct(h, m) { return h + m > 0 ? (100 * h / (h + m)).toFixed(1) + \"%\" : \"-\"; }\n"
"/* values: numbers or null (no data), drawn left (oldest) to right */\n"
"function chart(svg, values, top, unit, color) {\n"
"  while (svg.firstChild) svg.removeChild(svg.firstChild);\n"
"  const W = 460, H = 150, L = 44, R = 8, T = 10, B = 22;\n"
"  const x = i => L + (W - L - R) * i / Math.max(values.length - 1, 1);\n"
"  const y = v => T + (H - T - B) * (1 - v / top);\n"
"  svg.appendChild(svgEl(\"line\", {x1: L, y1: y(0), x2: W - R, y2: y(0), stroke: \"#c3c8d1\"}));\n"
"  svg.appendChild(svgEl(\"line\", {x1: L, y1: y(top), x2: W - R, y2: y(top), stroke: \"#eceef2\"}));\n"
"  svg.appendChild(svgEl(\"text\", {x: L - 6, y: y(top) + 4, \"text-anchor\": \"end\", \"font-size\": 11, fill: \"#6b7280\"}, top.toFixed(top < 10 && unit !== \"%\" ? 1 : 0) + unit));\n"
"  svg.appendChild(svgEl(\"text\", {x: L - 6, y: y(0) + 4, \"text-anchor\": \"end\", \"font-size\": 11, fill: \"#6b7280\"}, \"0\" + unit));\n"
"  svg.appendChild(svgEl(\"text\", {x: L, y: H - 6, \"font-size\": 11, fill: \"#6b7280\"}, \"-15 min\"));\n"
"  svg.appendChild(svgEl(\"text\", {x: W - R, y: H - 6, \"text-anchor\": \"end\", \"font-size\": 11, fill: \"#6b7280\"}, \"now\"));\n"
"  let pts = [];\n"
"  const flush = () => { if (pts.length) svg.appendChild(svgEl(\"polyline\", {points: pts.join(\" \"), fill: \"none\", stroke: color, \"stroke-width\": 2})); pts = []; };\n"
"  values.forEach((v, i) => { if (v === null) flush(); else pts.push(x(i).toFixed(1) + \",\" + y(Math.min(v, top)).toFixed(1)); });\n"
"  flush();\n"
"  if (values.every(v => v === null)) svg.appendChild(svgEl(\"text\", {x: (L + W - R) / 2, y: H / 2, \"text-anchor\": \"middle\", \"font-size\": 12, fill: \"#9aa1ad\"}, \"no cache lookups in this window\"));\n"
"  /* a point with no neighbour is a dot */\n"
"  values.forEach((v, i) => { if (v !== null && (i === 0 || values[i - 1] === null) && (i === values.length - 1 || values[i + 1] === null)) svg.appendChild(svgEl(\"circle\", {cx: x(i).toFixed(1), cy: y(Math.min(v, top)).toFixed(1), r: 2.5, fill: color})); });\n"
"}\n"
"function drawCharts(d) {\n"
"  const n = d.history_points, done = new Array(n).fill(0), hits = new Array(n).fill(0), miss = new Array(n).fill(0);\n"
"  let step = 10;\n"
"  for (const h of d.hosts) {\n"
"    if (!h.step_seconds) continue;\n"
"    step = h.step_seconds;\n"
"    for (let i = 0; i < n; i++) { done[i] += h.history_done[i]; hits[i] += h.history_hits[i]; miss[i] += h.history_misses[i]; }\n"
"  }\n"
"  const jps = done.map(v => v / step);\n"
"  const top = Math.max(1, Math.ceil(Math.max.apply(null, jps)));\n"
"  chart(document.getElementById(\"jps\"), jps, top, \"/s\", \"#2f6fde\");\n"
"  chart(document.getElementById(\"hit\"), hits.map((h, i) => h + miss[i] > 0 ? 100 * h / (h + miss[i]) : null), 100, \"%\", \"#1a7f37\");\n"
"}\n"
"function hostCard(h) {\n"
"  const card = el(\"div\", \"host\");\n"
"  card.dataset.host = h.host;\n"
"  const head = el(\"div\", \"head\");\n"
"  head.appendChild(el(\"span\", \"name\", h.host));\n"
"  const cls = {\"up\": \"up\", \"up (distccd)\": \"up\", \"down\": \"down\", \"backoff\": \"backoff\"}[h.state] || \"nostats\";\n"
"  head.appendChild(el(\"span\", \"state \" + cls, h.state));\n"
"  if (h.reachable) {\n"
"    const bar = el(\"span\", \"bar\");\n"
"    bar.title = h.running + \" of \" + h.slots + \" slots busy\";\n"
"    for (let i = 0; i < h.slots; i++) bar.appendChild(el(\"span\", i < h.running ? \"slot busy\" : \"slot\"));\n"
"    head.appendChild(bar);\n"
"    head.appendChild(el(\"span\", \"figs\", h.running + \"/\" + h.slots + \" slots, \" + h.done + \" done, \" + h.jobs_per_second.toFixed(2) + \" jobs/s\" + (h.cache ? \", hits \" + pct(h.hits, h.misses) + \", saved \" + secs(h.time_saved_seconds) : \"\")));\n"
"  }\n"
"  card.appendChild(head);\n"
"  if (h.why) card.appendChild(el(\"div\", \"figs\", (h.state === \"backoff\" ? \"backoff until \" + new Date(h.backoff_until * 1000).toLocaleTimeString() + \": \" : \"\") + h.why));\n"
"  if (h.jobs.length) {\n"
"    const t = el(\"table\"), hr = el(\"tr\");\n"
"    for (const c of [\"file\", \"state\", \"time\", \"mode\", \"compiler\", \"client\"]) hr.appendChild(el(\"th\", \"\", c));\n"
"    t.appendChild(hr);\n"
"    for (const j of h.jobs) {\n"
"      const r = el(\"tr\", \"job\");\n"
"      r.appendChild(el(\"td\", \"file\", j.file));\n"
"      for (const v of [j.state, j.seconds.toFixed(1) + \" s\", j.mode, j.compiler, j.client]) r.appendChild(el(\"td\", \"\", v));\n"
"      t.appendChild(r);\n"
"    }\n"
"    card.appendChild(t);\n"
"  }\n"
"  return card;\n"
"}\n"
"function render(d) {\n"
"  let up = 0, slots = 0, busy = 0, jps = 0, hits = 0, miss = 0, saved = 0;\n"
"  for (const h of d.hosts) {\n"
"    if (!h.reachable) continue;\n"
"    if (h.state.startsWith(\"up\")) up++;\n"
"    slots += h.slots; busy += h.running; jps += h.jobs_per_second;\n"
"    hits += h.hits; miss += h.misses; saved += h.time_saved_seconds;\n"
"  }\n"
"  document.getElementById(\"summary\").textContent = d.hosts.length + \" host\" + (d.hosts.length === 1 ? \"\" : \"s\") + \", \" + up + \" up, slots \" + busy + \"/\" + slots + \", \" + jps.toFixed(2) + \" jobs/s, cache hits \" + pct(hits, miss) + \", saved \" + secs(saved) + \" (\" + new Date(d.time * 1000).toLocaleTimeString() + \")\";\n"
"  const box = document.getElementById(\"hosts\");\n"
"  while (box.firstChild) box.removeChild(box.firstChild);\n"
"  for (const h of d.hosts) box.appendChild(hostCard(h));\n"
"  if (d.this_machine.length) {\n"
"    const card = el(\"div\", \"host\"), t = el(\"table\");\n"
"    card.appendChild(el(\"div\", \"name\", \"This machine: \" + d.this_machine.length + \" job\" + (d.this_machine.length === 1 ? \"\" : \"s\")));\n"
"    for (const m of d.this_machine) {\n"
"      const r = el(\"tr\", \"mine\");\n"
"      r.appendChild(el(\"td\", \"file\", m.file));\n"
"      r.appendChild(el(\"td\", \"\", \"on \" + m.host));\n"
"      r.appendChild(el(\"td\", \"\", \"pid \" + m.pid));\n"
"      t.appendChild(r);\n"
"    }\n"
"    card.appendChild(t);\n"
"    box.appendChild(card);\n"
"  }\n"
"  drawCharts(d);\n"
"}\n"
"async function tick() {\n"
"  try {\n"
"    const r = await fetch(\"farm.json\", {cache: \"no-store\"});\n"
"    render(await r.json());\n"
"  } catch (e) {\n"
"    document.getElementById(\"summary\").textContent = \"the monitor is not answering: \" + e;\n"
"  }\n"
"  setTimeout(tick, 1000);\n"
"}\n"
"tick();\n"
"</script>\n"
"</body></html>\n";

static void
set_cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);

	if (f >= 0)
		(void)fcntl(fd, F_SETFD, f | FD_CLOEXEC);
}

/* A listening socket on addr:port. */
static int
listen_on(const char *addr, int port, char *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char ps[16];
	int fd = -1, one = 1, g;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(ps, sizeof(ps), "%d", port);
	if ((g = getaddrinfo(addr, ps, &hints, &res)) != 0)
		return bc_seterr(err, BC_ERR_INVAL, "%s: %s", addr,
		    gai_strerror(g)), -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
		    sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 16) == 0)
			break;
		bc_seterr(err, BC_ERR_IO, "%s:%d: %s", addr, port,
		    strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		set_cloexec(fd);
	return fd;
}

/*
 * The path of a GET request line ("GET /p HTTP/1.x"), query cut off:
 * 0 and path filled, or -1 with a status for the answer (400, 405).
 */
int
bc_monweb_request_path(const char *req, size_t n, char *path, size_t len,
    int *status)
{
	char method[BC_MAX_HTTP_METHOD + 1], target[BC_MAX_HTTP_TARGET + 1];
	int end, r;

	*status = 400;
	if (len > 0)
		path[0] = '\0';
	r = bc_http_request_line(req, n, method, target, &end);
	if (r == BC_OK && strcmp(method, "GET") != 0) {
		*status = 405;
		return -1;
	}
	/* whole (its version follows), absolute, and fits */
	if (r != BC_OK || end != ' ' || target[0] != '/')
		return -1;
	target[strcspn(target, "?#")] = '\0';
	if (strlen(target) >= len)
		return -1;
	memcpy(path, target, strlen(target) + 1);
	return 0;
}

/* The request head (up to its blank line), within the deadline. */
static int
read_head(int fd, char *req, size_t cap, size_t *n)
{
	int64_t deadline = bc_now_ms() + MONWEB_IO_MS;

	*n = 0;
	while (*n < cap) {
		struct pollfd p = { fd, POLLIN, 0 };
		int64_t left = deadline - bc_now_ms();
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		r = read(fd, req + *n, cap - *n);
		if (r <= 0)
			return *n > 0 ? 0 : -1;
		*n += (size_t)r;
		if (bc_memstr(req, *n, "\r\n\r\n") || bc_memstr(req, *n,
		    "\n\n"))
			return 0;
	}
	return 0;	/* a long head: its request line is in */
}

static void
write_within(int fd, const void *p, size_t n)
{
	int64_t deadline = bc_now_ms() + MONWEB_IO_MS;
	const char *c = p;

	while (n > 0) {
		struct pollfd pf = { fd, POLLOUT, 0 };
		int64_t left = deadline - bc_now_ms();
		ssize_t w;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return;
		w = write(fd, c, n);
		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

static void
answer(int fd, int status, const char *type, const void *body, size_t n)
{
	char head[256];
	const char *text = status == 200 ? "OK" : status == 404 ?
	    "Not Found" : status == 405 ? "Method Not Allowed" :
	    "Bad Request";
	int k = snprintf(head, sizeof(head), "HTTP/1.0 %d %s\r\n"
	    "Content-Type: %s\r\nContent-Length: %zu\r\n"
	    "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
	    "Connection: close\r\n\r\n", status, text, type, n);

	write_within(fd, head, (size_t)k);
	write_within(fd, body, n);
}

struct monweb {
	const struct bc_cconf *cfg;
	const struct bc_hostlist *hl;
	struct bc_buf json;	/* the newest snapshot */
	int64_t json_ms;
};

static void
serve_json(struct monweb *w, int fd)
{
	if (w->json_ms == 0 || bc_now_ms() - w->json_ms >= MONWEB_SAMPLE_MS) {
		struct bc_farm farm;

		bc_monitor_sample(w->cfg, w->hl, &farm);
		bc_buf_reset(&w->json);
		if (bc_monitor_render_json(&farm, &w->json) != BC_OK) {
			bc_buf_reset(&w->json);
			(void)bc_buf_put_str(&w->json, "{\"hosts\":[]}\n");
		}
		bc_farm_free(&farm);
		w->json_ms = bc_now_ms();
	}
	answer(fd, 200, "application/json", bc_buf_data(&w->json),
	    bc_buf_len(&w->json));
}

static void
serve_one(struct monweb *w, int fd)
{
	char req[BC_MAX_HTTP_REQUEST], path[256];
	size_t n;
	int status;

	if (read_head(fd, req, sizeof(req), &n) != 0)
		return;
	if (bc_monweb_request_path(req, n, path, sizeof(path), &status) != 0) {
		answer(fd, status, "text/plain", status == 405 ?
		    "only GET\n" : "bad request\n", status == 405 ? 9 : 12);
		return;
	}
	if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
		answer(fd, 200, "text/html; charset=utf-8", monweb_page,
		    sizeof(monweb_page) - 1);
	else if (strcmp(path, "/farm.json") == 0)
		serve_json(w, fd);
	else
		answer(fd, 404, "text/plain", "not found\n", 10);
}

int
bc_monweb_serve(const struct bc_cconf *cfg, const struct bc_hostlist *hl,
    const char *addr, int port)
{
	struct monweb w = { cfg, hl, BC_BUF_INIT(BC_MAX_STATS_PAGE), 0 };
	char err[BC_ERRLEN];
	int lfd = listen_on(addr, port, err);

	if (lfd < 0) {
		fprintf(stderr, "boltcc: --monitor --web: cannot listen on "
		    "%s\n", err);
		bc_buf_free(&w.json);
		return BC_EXIT_BAD_ARGUMENTS;
	}
	fprintf(stderr, "boltcc: monitor on http://%s%s%s:%d/ (Ctrl-C "
	    "stops it)\n", strchr(addr, ':') != NULL ? "[" : "", addr,
	    strchr(addr, ':') != NULL ? "]" : "", port);
	while (!bc_monitor_stopped()) {
		struct pollfd p = { lfd, POLLIN, 0 };
		int fd;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		set_cloexec(fd);
		serve_one(&w, fd);
		close(fd);
	}
	close(lfd);
	bc_buf_free(&w.json);
	return 0;
}
