/* parser.c - recursive-descent parser producing an AST. */
#include <string.h>
#include "calc.h"
#include "util.h"

struct parser {
	struct lexer lx;
	char *err;
	size_t errlen;
	int failed;
};

static struct node *expr(struct parser *p);
static struct node *unary(struct parser *p);

static struct node *fail(struct parser *p, const char *msg)
{
	if (!p->failed)
		set_err(p->err, p->errlen, msg, p->lx.cur.text);
	p->failed = 1;
	return NULL;
}

static struct node *atom(struct parser *p)
{
	struct token t = p->lx.cur;
	struct node *n;

	if (t.kind == TOK_NUM) {
		lex_next(&p->lx);
		n = node_new(N_NUM);
		n->num = t.num;
		return n;
	}
	if (t.kind == TOK_LPAREN) {
		lex_next(&p->lx);
		n = expr(p);
		if (!n)
			return NULL;
		if (p->lx.cur.kind != TOK_RPAREN)
			return fail(p, "expected ')'");
		lex_next(&p->lx);
		return n;
	}
	if (t.kind != TOK_NAME)
		return fail(p, "expected a number, a name or '('");
	lex_next(&p->lx);
	if (p->lx.cur.kind != TOK_LPAREN) {
		n = node_new(N_VAR);
		memcpy(n->name, t.text, sizeof n->name);
		return n;
	}
	lex_next(&p->lx);
	n = node_new(N_CALL);
	memcpy(n->name, t.text, sizeof n->name);
	while (p->lx.cur.kind != TOK_RPAREN) {
		if (n->nargs == MAX_ARGS)
			return fail(p, "too many arguments");
		n->kid[n->nargs] = expr(p);
		if (!n->kid[n->nargs])
			return NULL;
		n->nargs++;
		if (p->lx.cur.kind == TOK_COMMA)
			lex_next(&p->lx);
		else if (p->lx.cur.kind != TOK_RPAREN)
			return fail(p, "expected ',' or ')'");
	}
	lex_next(&p->lx);
	return n;
}

static struct node *binary(char op, struct node *l, struct node *r)
{
	struct node *n = node_new(N_BIN);
	n->op = op;
	n->kid[0] = l;
	n->kid[1] = r;
	n->nargs = 2;
	return n;
}

static struct node *power(struct parser *p)
{
	struct node *l = atom(p), *r;

	if (!l)
		return NULL;
	if (p->lx.cur.kind == TOK_OP && p->lx.cur.op == '^') {
		lex_next(&p->lx);
		r = unary(p);
		return r ? binary('^', l, r) : NULL;
	}
	return l;
}

static struct node *unary(struct parser *p)
{
	struct node *n, *k;

	if (p->lx.cur.kind == TOK_OP && p->lx.cur.op == '-') {
		lex_next(&p->lx);
		k = unary(p);
		if (!k)
			return NULL;
		n = node_new(N_NEG);
		n->kid[0] = k;
		n->nargs = 1;
		return n;
	}
	return power(p);
}

static struct node *term(struct parser *p)
{
	struct node *l = unary(p), *r;
	char op;

	while (l && p->lx.cur.kind == TOK_OP && strchr("*/%", p->lx.cur.op)) {
		op = p->lx.cur.op;
		lex_next(&p->lx);
		r = unary(p);
		l = r ? binary(op, l, r) : NULL;
	}
	return l;
}

static struct node *expr(struct parser *p)
{
	struct node *l = term(p), *r;
	char op;

	while (l && p->lx.cur.kind == TOK_OP && strchr("+-", p->lx.cur.op)) {
		op = p->lx.cur.op;
		lex_next(&p->lx);
		r = term(p);
		l = r ? binary(op, l, r) : NULL;
	}
	return l;
}

struct node *parse_statement(const char *src, char *err, size_t errlen)
{
	struct parser p;
	struct node *n, *a;
	struct lexer save;

	memset(&p, 0, sizeof p);
	p.err = err;
	p.errlen = errlen;
	lex_init(&p.lx, src);
	save = p.lx;
	if (p.lx.cur.kind == TOK_NAME) {
		struct token name = p.lx.cur;
		lex_next(&p.lx);
		if (p.lx.cur.kind == TOK_ASSIGN) {
			lex_next(&p.lx);
			n = expr(&p);
			if (!n)
				return NULL;
			a = node_new(N_ASSIGN);
			memcpy(a->name, name.text, sizeof a->name);
			a->kid[0] = n;
			a->nargs = 1;
			n = a;
			goto end;
		}
		p.lx = save;
	}
	n = expr(&p);
	if (!n)
		return NULL;
end:
	if (p.lx.cur.kind != TOK_END)
		return fail(&p, "unexpected input after expression");
	return n;
}
