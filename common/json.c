/*
 * json.c - JSON strings from any bytes, the JSON number grammar, a
 * writer of JSON documents, and a bounded reader of them (see json.h).
 *
 * The reader is a recursive-descent parser over a bc_buf view: every
 * byte is taken with bc_buf_peek/bc_buf_skip, so no read can pass the
 * end; depth, node count and string length are capped by limits.h.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "common/limits.h"
#include "common/util.h"

/*
 * Length of the valid UTF-8 sequence at s (n bytes left), 0 if the byte
 * at s does not start one (RFC 3629 section 4: no overlong forms, no
 * surrogates, nothing past U+10FFFF).
 */
size_t
bc_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void
bc_json_escape(const char *s, size_t n, bc_json_sink *put, void *ctx)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, len;

	put(ctx, "\"", 1);
	while (i < n) {
		const char *esc = NULL;
		char ctl[7];

		len = bc_utf8_len(u + i, n - i);
		if (len > 1 || (len == 1 && u[i] >= 0x20 && u[i] != 0x7f &&
		    u[i] != '"' && u[i] != '\\')) {
			i += len;	/* passes through: extend the run */
			run += len;
			continue;
		}
		if (run > 0)
			put(ctx, s + i - run, run);
		run = 0;
		if (len == 0)
			esc = "\\ufffd";
		else if (u[i] == '"')
			esc = "\\\"";
		else if (u[i] == '\\')
			esc = "\\\\";
		else if (u[i] == '\n')
			esc = "\\n";
		else if (u[i] == '\r')
			esc = "\\r";
		else if (u[i] == '\t')
			esc = "\\t";
		else {
			memcpy(ctl, "\\u00", 4);
			ctl[4] = hex[u[i] >> 4];
			ctl[5] = hex[u[i] & 15];
			ctl[6] = '\0';
			esc = ctl;
		}
		put(ctx, esc, strlen(esc));
		i++;
	}
	if (run > 0)
		put(ctx, s + i - run, run);
	put(ctx, "\"", 1);
}

struct buf_sink {
	struct bc_buf *out;
	int r;
};

static void
buf_put(void *ctx, const char *p, size_t n)
{
	struct buf_sink *b = ctx;

	if (b->r == BC_OK)
		b->r = bc_buf_put(b->out, p, n);
}

int
bc_json_put_str(struct bc_buf *out, const char *s)
{
	struct buf_sink b = { out, BC_OK };

	bc_json_escape(s, strlen(s), buf_put, &b);
	return b.r;
}

static void
file_put(void *ctx, const char *p, size_t n)
{
	(void)fwrite(p, 1, n, (FILE *)ctx);
}

void
bc_json_fput_str(FILE *f, const char *s)
{
	bc_json_escape(s, strlen(s), file_put, f);
}

static const char *
digits(const char *p)
{
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

int
bc_json_is_number(const char *s)
{
	const char *p = s, *q;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		p = digits(p);
	else
		return 0;
	if (*p == '.') {
		q = digits(p + 1);
		if (q == p + 1)
			return 0;
		p = q;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		q = digits(p);
		if (q == p)
			return 0;
		p = q;
	}
	return *p == '\0';
}

/* ------------------------------------------------------------------ */
/* the writer */

void
bc_jsonw_init(struct bc_jsonw *w, struct bc_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->r = BC_OK;
}

/* Before a value: 1 if it may be written, after the comma that follows
 * a sibling in an array; in an object the key wrote the comma. */
static int
jsonw_value(struct bc_jsonw *w)
{
	if (w->r != BC_OK)
		return 0;
	if (w->key) {
		w->key = 0;
		return 1;
	}
	if (w->depth > 0 && w->obj[w->depth - 1]) {
		w->r = BC_ERR_INVAL;	/* a value where a key belongs */
		return 0;
	}
	if (w->depth > 0 && w->some[w->depth - 1])
		w->r = bc_buf_put_u8(w->out, ',');
	if (w->depth > 0)
		w->some[w->depth - 1] = 1;
	return w->r == BC_OK;
}

static void
jsonw_open(struct bc_jsonw *w, char c)
{
	if (!jsonw_value(w))
		return;
	if (w->depth == BC_JSONW_DEPTH) {
		w->r = BC_ERR_INVAL;
		return;
	}
	w->obj[w->depth] = c == '{';
	w->some[w->depth++] = 0;
	w->r = bc_buf_put_u8(w->out, (uint8_t)c);
}

static void
jsonw_close(struct bc_jsonw *w, char c)
{
	if (w->r != BC_OK)
		return;
	if (w->depth == 0 || w->key || w->obj[w->depth - 1] != (c == '}')) {
		w->r = BC_ERR_INVAL;
		return;
	}
	w->depth--;
	w->r = bc_buf_put_u8(w->out, (uint8_t)c);
}

void
bc_jsonw_obj(struct bc_jsonw *w)
{
	jsonw_open(w, '{');
}

void
bc_jsonw_obj_end(struct bc_jsonw *w)
{
	jsonw_close(w, '}');
}

void
bc_jsonw_arr(struct bc_jsonw *w)
{
	jsonw_open(w, '[');
}

void
bc_jsonw_arr_end(struct bc_jsonw *w)
{
	jsonw_close(w, ']');
}

void
bc_jsonw_key(struct bc_jsonw *w, const char *key)
{
	if (w->r != BC_OK)
		return;
	if (w->depth == 0 || !w->obj[w->depth - 1] || w->key) {
		w->r = BC_ERR_INVAL;
		return;
	}
	if (w->some[w->depth - 1])
		w->r = bc_buf_put_u8(w->out, ',');
	w->some[w->depth - 1] = 1;
	if (w->r == BC_OK)
		w->r = bc_json_put_str(w->out, key);
	if (w->r == BC_OK)
		w->r = bc_buf_put_u8(w->out, ':');
	w->key = 1;
}

void
bc_jsonw_str(struct bc_jsonw *w, const char *s)
{
	if (jsonw_value(w))
		w->r = bc_json_put_str(w->out, s);
}

void
bc_jsonw_int(struct bc_jsonw *w, long long v)
{
	if (jsonw_value(w))
		w->r = bc_buf_putf(w->out, "%lld", v);
}

void
bc_jsonw_uint(struct bc_jsonw *w, unsigned long long v)
{
	if (jsonw_value(w))
		w->r = bc_buf_putf(w->out, "%llu", v);
}

void
bc_jsonw_fixed(struct bc_jsonw *w, double v, int decimals)
{
	if (jsonw_value(w))
		w->r = bc_buf_putf(w->out, "%.*f", decimals, v);
}

void
bc_jsonw_number(struct bc_jsonw *w, const char *s)
{
	if (w->r == BC_OK && !bc_json_is_number(s)) {
		w->r = BC_ERR_INVAL;
		return;
	}
	if (jsonw_value(w))
		w->r = bc_buf_put_str(w->out, s);
}

void
bc_jsonw_bool(struct bc_jsonw *w, int v)
{
	if (jsonw_value(w))
		w->r = bc_buf_put_str(w->out, v ? "true" : "false");
}

void
bc_jsonw_null(struct bc_jsonw *w)
{
	if (jsonw_value(w))
		w->r = bc_buf_put_str(w->out, "null");
}

int
bc_jsonw_end(const struct bc_jsonw *w)
{
	if (w->r == BC_OK && (w->depth != 0 || w->key))
		return BC_ERR_INVAL;	/* a container or a key left open */
	return w->r;
}

/* ------------------------------------------------------------------ */
/* the reader */

struct parser {
	struct bc_buf in;
	size_t start_len;	/* for offsets in messages */
	struct bc_json *doc;
	char *err;
};

static int value(struct parser *p, int depth, size_t *out);

static size_t
offset(const struct parser *p)
{
	return p->start_len - bc_buf_avail(&p->in);
}

static int
fail(struct parser *p, const char *what)
{
	return bc_seterr(p->err, BC_ERR_PROTO, "JSON: %s at byte %zu", what,
	    offset(p));
}

/* The next byte without taking it; -1 at the end. */
static int
peek(const struct parser *p)
{
	const uint8_t *c;

	if (bc_buf_peek(&p->in, 1, &c) != BC_OK)
		return -1;
	return *c;
}

static void
skip_ws(struct parser *p)
{
	int c;

	while ((c = peek(p)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		(void)bc_buf_skip(&p->in, 1);
}

static int
expect(struct parser *p, const char *word)
{
	size_t n = strlen(word);
	const uint8_t *c;

	if (bc_buf_peek(&p->in, n, &c) != BC_OK || memcmp(c, word, n) != 0)
		return fail(p, "unexpected token");
	return bc_buf_skip(&p->in, n);
}

static int
new_node(struct parser *p, int type, size_t *out)
{
	struct bc_json *d = p->doc;

	if (d->n >= BC_MAX_JSON_NODES)
		return fail(p, "too many values");
	if (d->n == d->cap) {
		d->cap = d->cap == 0 ? 64 : d->cap * 2;
		d->v = xrealloc(d->v, d->cap, sizeof(*d->v));
	}
	memset(&d->v[d->n], 0, sizeof(d->v[d->n]));
	d->v[d->n].type = type;
	d->v[d->n].first = d->v[d->n].next = BC_JSON_NONE;
	*out = d->n++;
	return BC_OK;
}

static int
hex4(struct parser *p, uint32_t *v)
{
	const uint8_t *c;
	int i;

	if (bc_buf_peek(&p->in, 4, &c) != BC_OK)
		return fail(p, "short \\u escape");
	*v = 0;
	for (i = 0; i < 4; i++) {
		int d = c[i] >= '0' && c[i] <= '9' ? c[i] - '0' :
		    c[i] >= 'a' && c[i] <= 'f' ? c[i] - 'a' + 10 :
		    c[i] >= 'A' && c[i] <= 'F' ? c[i] - 'A' + 10 : -1;

		if (d < 0)
			return fail(p, "bad \\u escape");
		*v = *v << 4 | (uint32_t)d;
	}
	return bc_buf_skip(&p->in, 4);
}

/* A \uXXXX escape (a surrogate pair when there is one) as a code point. */
static int
unicode_escape(struct parser *p, uint32_t *cp)
{
	uint32_t lo;
	int r;

	if ((r = hex4(p, cp)) != BC_OK)
		return r;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return fail(p, "lone low surrogate");
	if (*cp < 0xd800 || *cp > 0xdbff)
		return *cp == 0 ? fail(p, "\\u0000 in a string") : BC_OK;
	if (expect(p, "\\u") != BC_OK || hex4(p, &lo) != BC_OK ||
	    lo < 0xdc00 || lo > 0xdfff)
		return fail(p, "lone high surrogate");
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return BC_OK;
}

static int
put_utf8(struct bc_buf *s, uint32_t cp)
{
	uint8_t b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return bc_buf_put(s, b, n);
}

/* One character of a string body, escapes decoded, appended to s. */
static int
string_char(struct parser *p, struct bc_buf *s)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	uint8_t c, e;
	uint32_t cp;
	const char *k;
	int r;

	if (bc_buf_get_u8(&p->in, &c) != BC_OK)
		return fail(p, "unterminated string");
	if (c < 0x20)
		return fail(p, "control character in a string");
	if (c != '\\')
		r = bc_buf_put_u8(s, c);
	else if (bc_buf_get_u8(&p->in, &e) != BC_OK)
		return fail(p, "unterminated string");
	else if (e == 'u')
		r = (r = unicode_escape(p, &cp)) != BC_OK ? r : put_utf8(s, cp);
	else if (e != '\0' && (k = strchr(from, e)) != NULL)
		r = bc_buf_put_u8(s, (uint8_t)to[k - from]);
	else
		return fail(p, "bad escape");
	if (r == BC_ERR_LIMIT)
		return fail(p, "string too long");
	return r;
}

/* A string (the opening quote next) as a malloc'd C string. */
static int
string(struct parser *p, char **out)
{
	struct bc_buf s;
	int r;

	*out = NULL;
	if ((r = expect(p, "\"")) != BC_OK)
		return r;
	bc_buf_init(&s, BC_MAX_JSON_STRING);
	while ((r = peek(p)) != '"') {
		if (r < 0) {
			bc_buf_free(&s);
			return fail(p, "unterminated string");
		}
		if ((r = string_char(p, &s)) != BC_OK) {
			bc_buf_free(&s);
			return r;
		}
	}
	(void)bc_buf_skip(&p->in, 1);
	r = bc_buf_dup_cstr(&s, out);
	bc_buf_free(&s);
	return r == BC_OK ? BC_OK : fail(p, "NUL in a string");
}

/* A number as JSON spells it, converted by strtod. */
static int
number(struct parser *p, size_t node)
{
	char text[64];
	size_t n = 0;
	int c;

	while ((c = peek(p)) == '-' || c == '+' || c == '.' || c == 'e' ||
	    c == 'E' || (c >= '0' && c <= '9')) {
		if (n + 1 >= sizeof(text))
			return fail(p, "number too long");
		text[n++] = (char)c;
		(void)bc_buf_skip(&p->in, 1);
	}
	text[n] = '\0';
	if (!bc_json_is_number(text))
		return fail(p, "bad number");
	p->doc->v[node].num = strtod(text, NULL);
	return BC_OK;
}

/* Link child after prev (or first under parent). */
static void
link_child(struct bc_json *d, size_t parent, size_t *prev, size_t child)
{
	if (*prev == BC_JSON_NONE)
		d->v[parent].first = child;
	else
		d->v[*prev].next = child;
	*prev = child;
	d->v[parent].count++;
}

static int
array(struct parser *p, int depth, size_t node)
{
	size_t prev = BC_JSON_NONE, child;
	int r;

	(void)bc_buf_skip(&p->in, 1);
	skip_ws(p);
	if (peek(p) == ']')
		return bc_buf_skip(&p->in, 1);
	for (;;) {
		if ((r = value(p, depth + 1, &child)) != BC_OK)
			return r;
		link_child(p->doc, node, &prev, child);
		skip_ws(p);
		if (peek(p) == ']')
			return bc_buf_skip(&p->in, 1);
		if ((r = expect(p, ",")) != BC_OK)
			return fail(p, "',' or ']' expected");
	}
}

static int
object(struct parser *p, int depth, size_t node)
{
	size_t prev = BC_JSON_NONE, child;
	char *key;
	int r;

	(void)bc_buf_skip(&p->in, 1);
	skip_ws(p);
	if (peek(p) == '}')
		return bc_buf_skip(&p->in, 1);
	for (;;) {
		skip_ws(p);
		if (peek(p) != '"')
			return fail(p, "member name expected");
		if ((r = string(p, &key)) != BC_OK)
			return r;
		skip_ws(p);
		if ((r = expect(p, ":")) != BC_OK ||
		    (r = value(p, depth + 1, &child)) != BC_OK) {
			free(key);
			return r;
		}
		p->doc->v[child].key = key;
		link_child(p->doc, node, &prev, child);
		skip_ws(p);
		if (peek(p) == '}')
			return bc_buf_skip(&p->in, 1);
		if ((r = expect(p, ",")) != BC_OK)
			return fail(p, "',' or '}' expected");
	}
}

static int
value(struct parser *p, int depth, size_t *out)
{
	int c, r;

	if (depth > BC_MAX_JSON_DEPTH)
		return fail(p, "nested too deeply");
	skip_ws(p);
	c = peek(p);
	switch (c) {
	case '{':
		return (r = new_node(p, BC_JSON_OBJECT, out)) != BC_OK ? r :
		    object(p, depth, *out);
	case '[':
		return (r = new_node(p, BC_JSON_ARRAY, out)) != BC_OK ? r :
		    array(p, depth, *out);
	case '"':
		return (r = new_node(p, BC_JSON_STRING, out)) != BC_OK ? r :
		    string(p, &p->doc->v[*out].str);
	case 't':
		return (r = new_node(p, BC_JSON_TRUE, out)) != BC_OK ? r :
		    expect(p, "true");
	case 'f':
		return (r = new_node(p, BC_JSON_FALSE, out)) != BC_OK ? r :
		    expect(p, "false");
	case 'n':
		return (r = new_node(p, BC_JSON_NULL, out)) != BC_OK ? r :
		    expect(p, "null");
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return (r = new_node(p, BC_JSON_NUMBER, out)) !=
			    BC_OK ? r : number(p, *out);
		return fail(p, c < 0 ? "unexpected end" : "value expected");
	}
}

int
bc_json_parse(struct bc_json *doc, const void *bytes, size_t n, char *err)
{
	struct parser p;
	size_t root;
	int r;

	memset(doc, 0, sizeof(*doc));
	bc_buf_view(&p.in, bytes, n);
	p.start_len = n;
	p.doc = doc;
	p.err = err;
	if ((r = value(&p, 0, &root)) != BC_OK)
		return r;
	skip_ws(&p);
	if (bc_buf_avail(&p.in) != 0)
		return fail(&p, "trailing bytes");
	return BC_OK;
}

void
bc_json_free(struct bc_json *doc)
{
	size_t i;

	for (i = 0; i < doc->n; i++) {
		free(doc->v[i].key);
		free(doc->v[i].str);
	}
	free(doc->v);
	memset(doc, 0, sizeof(*doc));
}

int
bc_json_type(const struct bc_json *doc, size_t i)
{
	return i < doc->n ? doc->v[i].type : BC_JSON_NULL;
}

size_t
bc_json_get(const struct bc_json *doc, size_t i, const char *key)
{
	size_t k;

	if (bc_json_type(doc, i) != BC_JSON_OBJECT)
		return BC_JSON_NONE;
	for (k = doc->v[i].first; k != BC_JSON_NONE; k = doc->v[k].next)
		if (strcmp(doc->v[k].key, key) == 0)
			return k;
	return BC_JSON_NONE;
}

double
bc_json_num(const struct bc_json *doc, size_t i, const char *key,
    double dflt)
{
	size_t k = bc_json_get(doc, i, key);

	return bc_json_type(doc, k) == BC_JSON_NUMBER ? doc->v[k].num : dflt;
}

const char *
bc_json_str(const struct bc_json *doc, size_t i, const char *key,
    const char *dflt)
{
	size_t k = bc_json_get(doc, i, key);

	return bc_json_type(doc, k) == BC_JSON_STRING ? doc->v[k].str : dflt;
}
