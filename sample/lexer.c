/* lexer.c - split an input line into tokens. */
#include <ctype.h>
#include <string.h>
#include "calc.h"

void lex_init(struct lexer *lx, const char *src)
{
	lx->src = src;
	lx->pos = 0;
	lex_next(lx);
}

static int is_name_char(int c, int first)
{
	return isalpha(c) || c == '_' || (!first && isdigit(c));
}

void lex_next(struct lexer *lx)
{
	struct token *t = &lx->cur;
	const char *s = lx->src;
	size_t n;

	while (s[lx->pos] == ' ' || s[lx->pos] == '\t')
		lx->pos++;
	memset(t, 0, sizeof *t);
	if (s[lx->pos] == '\0') {
		t->kind = TOK_END;
		return;
	}
	if (isdigit((unsigned char)s[lx->pos])) {
		t->kind = TOK_NUM;
		while (isdigit((unsigned char)s[lx->pos]))
			t->num = t->num * 10 + (s[lx->pos++] - '0');
		return;
	}
	if (is_name_char((unsigned char)s[lx->pos], 1)) {
		t->kind = TOK_NAME;
		for (n = 0; is_name_char((unsigned char)s[lx->pos], 0); lx->pos++)
			if (n + 1 < sizeof t->text)
				t->text[n++] = s[lx->pos];
		return;
	}
	switch (s[lx->pos]) {
	case '(': t->kind = TOK_LPAREN; break;
	case ')': t->kind = TOK_RPAREN; break;
	case ',': t->kind = TOK_COMMA; break;
	case '=': t->kind = TOK_ASSIGN; break;
	case '+': case '-': case '*': case '/': case '%': case '^':
		t->kind = TOK_OP;
		t->op = s[lx->pos];
		break;
	default:
		t->kind = TOK_BAD;
		t->op = s[lx->pos];
		break;
	}
	lx->pos++;
}
