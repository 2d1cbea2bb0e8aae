/*
 * lex.c - directive lexer (see lex.h).
 *
 * Translation phase 2 (backslash-newline splicing) is done first into a
 * private copy when the file has any continuation; line numbers are then
 * counted on the spliced text (logical lines).  The scan itself is one
 * pass over the text with a "beginning of logical line" flag: comments
 * count as whitespace, every other token clears the flag.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "preproc/lex.h"

struct lx {
	const char *s;
	size_t n;
	size_t i;
	unsigned line;
	struct bc_pp_dirs *out;
	int r;			/* first error */
};

void
bc_pp_dirs_init(struct bc_pp_dirs *d)
{
	d->v = NULL;
	d->n = 0;
	d->cap = 0;
}

void
bc_pp_dirs_free(struct bc_pp_dirs *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	bc_pp_dirs_init(d);
}

static int
is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c == '$' || c >= 0x80;
}

static int
is_ident(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int
is_hspace(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int
add(struct lx *l, int kind, int angled, const char *name, size_t len,
    unsigned line)
{
	struct bc_pp_dirs *d = l->out;
	struct bc_pp_dir *e;

	if (l->r != BC_OK)
		return l->r;
	if (d->n >= BC_PP_MAX_DIRS)
		return l->r = BC_ERR_LIMIT;
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 16;
		struct bc_pp_dir *nv = realloc(d->v, nc * sizeof(*nv));

		if (nv == NULL)
			return l->r = BC_ERR_ALLOC;
		d->v = nv;
		d->cap = nc;
	}
	e = &d->v[d->n];
	e->kind = kind;
	e->angled = angled;
	e->computed = name == NULL;
	e->line = line;
	e->name = NULL;
	if (name != NULL) {
		if ((e->name = malloc(len + 1)) == NULL)
			return l->r = BC_ERR_ALLOC;
		memcpy(e->name, name, len);
		e->name[len] = '\0';
	}
	d->n++;
	return BC_OK;
}

/* Skip a block comment starting at l->i ("/ *"), counting lines. */
static void
skip_block_comment(struct lx *l)
{
	l->i += 2;
	while (l->i < l->n) {
		if (l->s[l->i] == '*' && l->i + 1 < l->n &&
		    l->s[l->i + 1] == '/') {
			l->i += 2;
			return;
		}
		if (l->s[l->i] == '\n')
			l->line++;
		l->i++;
	}
}

/* Skip horizontal whitespace and comments within the current line. */
static void
skip_hspace(struct lx *l)
{
	while (l->i < l->n) {
		char c = l->s[l->i];

		if (is_hspace(c)) {
			l->i++;
		} else if (c == '/' && l->i + 1 < l->n &&
		    l->s[l->i + 1] == '*') {
			skip_block_comment(l);
		} else if (c == '/' && l->i + 1 < l->n &&
		    l->s[l->i + 1] == '/') {
			while (l->i < l->n && l->s[l->i] != '\n')
				l->i++;
		} else {
			return;
		}
	}
}

/* A quoted literal ending in q; unterminated ones end at the newline. */
static void
skip_quoted(struct lx *l, char q)
{
	l->i++;
	while (l->i < l->n) {
		char c = l->s[l->i];

		if (c == '\n')
			return;
		if (c == '\\' && l->i + 1 < l->n && l->s[l->i + 1] != '\n') {
			l->i += 2;
			continue;
		}
		l->i++;
		if (c == q)
			return;
	}
}

/*
 * Raw string at l->i ('"' after the R prefix): R"delim( ... )delim".
 * An invalid delimiter makes it an ordinary string.
 */
static void
skip_raw(struct lx *l)
{
	size_t d0 = l->i + 1, j = d0, dl;

	while (j < l->n && j - d0 <= 16 && l->s[j] != '(' &&
	    l->s[j] != ' ' && l->s[j] != ')' && l->s[j] != '\\' &&
	    l->s[j] != '\n' && l->s[j] != '\t' && l->s[j] != '"')
		j++;
	if (j >= l->n || l->s[j] != '(' || j - d0 > 16) {
		skip_quoted(l, '"');
		return;
	}
	dl = j - d0;
	for (j = j + 1; j < l->n; j++) {
		if (l->s[j] == '\n')
			l->line++;
		if (l->s[j] == ')' && j + dl + 1 < l->n &&
		    memcmp(l->s + j + 1, l->s + d0, dl) == 0 &&
		    l->s[j + 1 + dl] == '"') {
			l->i = j + dl + 2;
			return;
		}
	}
	l->i = l->n;
}

static void
skip_ppnumber(struct lx *l)
{
	while (l->i < l->n) {
		char c = l->s[l->i];

		if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') &&
		    l->i + 1 < l->n && (l->s[l->i + 1] == '+' ||
		    l->s[l->i + 1] == '-')) {
			l->i += 2;
		} else if (c == '\'' && l->i + 1 < l->n &&
		    is_ident((unsigned char)l->s[l->i + 1])) {
			l->i += 2;	/* C++14 digit separator */
		} else if (is_ident((unsigned char)c) || c == '.') {
			l->i++;
		} else {
			return;
		}
	}
}

static int
word_is(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(w, lit, n) == 0;
}

/*
 * A header-name operand at l->i: <...> or "..." up to the closing
 * delimiter on the same line, no escapes.  Records the directive; a
 * missing or unterminated operand is recorded as computed.
 */
static void
header_operand(struct lx *l, int kind, unsigned line)
{
	char close;
	size_t j;

	if (l->i < l->n && (l->s[l->i] == '<' || l->s[l->i] == '"')) {
		close = l->s[l->i] == '<' ? '>' : '"';
		for (j = l->i + 1; j < l->n && l->s[j] != '\n' &&
		    l->s[j] != close; j++)
			;
		if (j < l->n && l->s[j] == close && j - l->i - 1 > 0 &&
		    j - l->i - 1 <= BC_PP_MAX_NAME) {
			(void)add(l, kind, close == '>', l->s + l->i + 1,
			    j - l->i - 1, line);
			l->i = j + 1;
			return;
		}
	}
	if (kind != BC_PP_HAS_INCLUDE && kind != BC_PP_HAS_INCLUDE_NEXT &&
	    l->i < l->n && is_ident_start((unsigned char)l->s[l->i])) {
		/* "#include MACRO": the macro's name, for the scanner to
		 * look up among the #defines it has seen */
		size_t w = l->i, k;

		for (j = l->i; j < l->n && is_ident((unsigned char)l->s[j]);
		    j++)
			;
		k = j;
		while (k < l->n && is_hspace(l->s[k]))
			k++;
		if (j - w <= BC_PP_MAX_NAME && (k >= l->n || l->s[k] == '\n' ||
		    (l->s[k] == '/' && k + 1 < l->n && (l->s[k + 1] == '/' ||
		    l->s[k + 1] == '*')))) {
			if (add(l, kind, 0, l->s + w, j - w, line) == BC_OK)
				l->out->v[l->out->n - 1].computed = 1;
			l->i = j;
			return;
		}
	}
	(void)add(l, kind, 0, NULL, 0, line);
}

/*
 * After "#define": an object-like macro is recorded as BC_PP_DEFINE.
 * Its value, when it is exactly one header name (<x> or "x"), is kept as
 * "NAME x" (angled as for an include); any other value is "NAME" with
 * computed set.  Function-like macros are not recorded.
 */
static void
define_operand(struct lx *l, unsigned line)
{
	size_t w, j, k, v0;
	char close, *buf;

	skip_hspace(l);
	w = l->i;
	if (w >= l->n || !is_ident_start((unsigned char)l->s[w]))
		return;
	for (j = w; j < l->n && is_ident((unsigned char)l->s[j]); j++)
		;
	if (j - w > BC_PP_MAX_NAME || (j < l->n && l->s[j] == '('))
		return;
	l->i = j;
	skip_hspace(l);
	v0 = l->i;
	if (v0 < l->n && (l->s[v0] == '<' || l->s[v0] == '"')) {
		close = l->s[v0] == '<' ? '>' : '"';
		for (k = v0 + 1; k < l->n && l->s[k] != '\n' &&
		    l->s[k] != close; k++)
			;
		if (k < l->n && l->s[k] == close && k - v0 - 1 > 0 &&
		    k - v0 - 1 <= BC_PP_MAX_NAME) {
			size_t e = k + 1;

			while (e < l->n && is_hspace(l->s[e]))
				e++;
			if (e >= l->n || l->s[e] == '\n' || (l->s[e] == '/' &&
			    e + 1 < l->n && (l->s[e + 1] == '/' ||
			    l->s[e + 1] == '*'))) {
				if ((buf = malloc((j - w) + (k - v0) + 1))
				    == NULL) {
					l->r = BC_ERR_ALLOC;
					return;
				}
				memcpy(buf, l->s + w, j - w);
				buf[j - w] = ' ';
				memcpy(buf + (j - w) + 1, l->s + v0 + 1,
				    k - v0 - 1);
				(void)add(l, BC_PP_DEFINE, close == '>', buf,
				    (j - w) + (k - v0), line);
				free(buf);
				l->i = k + 1;
				return;
			}
		}
	}
	if (add(l, BC_PP_DEFINE, 0, l->s + w, j - w, line) == BC_OK)
		l->out->v[l->out->n - 1].computed = 1;
}

/* After the identifier __has_include[_next] in an #if line. */
static void
has_include(struct lx *l, int kind, unsigned line)
{
	skip_hspace(l);
	if (l->i >= l->n || l->s[l->i] != '(')
		return;		/* e.g. defined(__has_include) */
	l->i++;
	skip_hspace(l);
	header_operand(l, kind, line);
}

/*
 * Scan tokens up to (not including) the next newline or the end; in an
 * #if line, look for __has_include.  Returns with l->i at the newline.
 */
static void
scan_line(struct lx *l, int if_line, int *bol)
{
	while (l->i < l->n && l->r == BC_OK) {
		unsigned char c = (unsigned char)l->s[l->i];

		if (c == '\n')
			return;
		if (is_hspace((char)c)) {
			l->i++;
			continue;
		}
		if (c == '/' && l->i + 1 < l->n && l->s[l->i + 1] == '*') {
			skip_block_comment(l);
			continue;
		}
		if (c == '/' && l->i + 1 < l->n && l->s[l->i + 1] == '/') {
			while (l->i < l->n && l->s[l->i] != '\n')
				l->i++;
			return;
		}
		if (*bol && (c == '#' || (c == '%' && l->i + 1 < l->n &&
		    l->s[l->i + 1] == ':')))
			return;		/* a directive: caller handles */
		*bol = 0;
		if (c == '"' || c == '\'') {
			skip_quoted(l, (char)c);
		} else if ((c >= '0' && c <= '9') || (c == '.' &&
		    l->i + 1 < l->n && l->s[l->i + 1] >= '0' &&
		    l->s[l->i + 1] <= '9')) {
			skip_ppnumber(l);
		} else if (is_ident_start(c)) {
			size_t w = l->i;

			while (l->i < l->n && is_ident((unsigned char)l->s[l->i]))
				l->i++;
			if (l->i < l->n && l->s[l->i] == '"' &&
			    (word_is(l->s + w, l->i - w, "R") ||
			    word_is(l->s + w, l->i - w, "LR") ||
			    word_is(l->s + w, l->i - w, "uR") ||
			    word_is(l->s + w, l->i - w, "UR") ||
			    word_is(l->s + w, l->i - w, "u8R"))) {
				skip_raw(l);
			} else if (if_line && word_is(l->s + w, l->i - w,
			    "__has_include")) {
				has_include(l, BC_PP_HAS_INCLUDE, l->line);
			} else if (if_line && word_is(l->s + w, l->i - w,
			    "__has_include_next")) {
				has_include(l, BC_PP_HAS_INCLUDE_NEXT, l->line);
			}
		} else {
			l->i++;
		}
	}
}

/* At '#' (or "%:") that starts a logical line. */
static void
directive(struct lx *l)
{
	unsigned line = l->line;
	size_t w;
	int bol = 0, kind = 0, if_line = 0;

	l->i += l->s[l->i] == '#' ? 1 : 2;
	skip_hspace(l);
	w = l->i;
	while (l->i < l->n && is_ident((unsigned char)l->s[l->i]))
		l->i++;
	if (word_is(l->s + w, l->i - w, "include"))
		kind = BC_PP_INCLUDE;
	else if (word_is(l->s + w, l->i - w, "include_next"))
		kind = BC_PP_INCLUDE_NEXT;
	else if (word_is(l->s + w, l->i - w, "import"))
		kind = BC_PP_IMPORT;
	else if (word_is(l->s + w, l->i - w, "if") ||
	    word_is(l->s + w, l->i - w, "elif"))
		if_line = 1;
	if (kind != 0) {
		skip_hspace(l);
		header_operand(l, kind, line);
	} else if (word_is(l->s + w, l->i - w, "define")) {
		define_operand(l, line);
	}
	scan_line(l, if_line, &bol);
}

/* Phase 2: a copy without backslash-newline pairs, or NULL if none. */
static char *
splice(const char *p, size_t n, size_t *outn, int *r)
{
	size_t i, o = 0;
	char *s;
	int any = 0;

	*r = BC_OK;
	for (i = 0; i + 1 < n; i++)
		if (p[i] == '\\' && (p[i + 1] == '\n' || (p[i + 1] == '\r' &&
		    i + 2 < n && p[i + 2] == '\n'))) {
			any = 1;
			break;
		}
	if (!any)
		return NULL;
	if ((s = malloc(n ? n : 1)) == NULL) {
		*r = BC_ERR_ALLOC;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (p[i] == '\\' && i + 1 < n && p[i + 1] == '\n') {
			i++;
			continue;
		}
		if (p[i] == '\\' && i + 2 < n && p[i + 1] == '\r' &&
		    p[i + 2] == '\n') {
			i += 2;
			continue;
		}
		s[o++] = p[i];
	}
	*outn = o;
	return s;
}

int
bc_pp_lex(const char *p, size_t n, struct bc_pp_dirs *out, char *err)
{
	struct lx l;
	char *copy;
	size_t cn = 0;
	int bol = 1, r;

	copy = splice(p, n, &cn, &r);
	if (r != BC_OK)
		return bc_seterr(err, r, "out of memory");
	memset(&l, 0, sizeof(l));
	l.s = copy != NULL ? copy : p;
	l.n = copy != NULL ? cn : n;
	l.line = 1;
	l.out = out;
	l.r = BC_OK;
	while (l.i < l.n && l.r == BC_OK) {
		scan_line(&l, 0, &bol);
		if (l.i >= l.n)
			break;
		if (l.s[l.i] == '\n') {
			l.i++;
			l.line++;
			bol = 1;
			continue;
		}
		/* scan_line stopped at a directive */
		directive(&l);
		bol = 0;
	}
	free(copy);
	if (l.r == BC_ERR_LIMIT)
		return bc_seterr(err, l.r, "more than %d include directives",
		    BC_PP_MAX_DIRS);
	if (l.r != BC_OK)
		return bc_seterr(err, l.r, "out of memory");
	return BC_OK;
}
