/*
 * calc.h - a tiny integer expression calculator (boltcc's sample project).
 *
 * Grammar:  stmt   := NAME '=' expr | expr
 *           expr   := term (('+'|'-') term)*
 *           term   := unary (('*'|'/'|'%') unary)*
 *           unary  := '-' unary | power
 *           power  := atom ('^' unary)?
 *           atom   := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'
 */
#ifndef CALC_H
#define CALC_H

#include <stdint.h>
#include <stddef.h>

typedef int64_t num_t;

enum tok_kind {
	TOK_END, TOK_NUM, TOK_NAME, TOK_OP, TOK_LPAREN, TOK_RPAREN,
	TOK_COMMA, TOK_ASSIGN, TOK_BAD
};

struct token {
	enum tok_kind kind;
	num_t num;
	char text[32];
	char op;
};

struct lexer {
	const char *src;
	size_t pos;
	struct token cur;
};

enum node_kind { N_NUM, N_VAR, N_NEG, N_BIN, N_CALL, N_ASSIGN };

#define MAX_ARGS 4

struct node {
	enum node_kind kind;
	num_t num;
	char name[32];
	char op;
	int nargs;
	struct node *kid[MAX_ARGS];
};

/* lexer.c */
void lex_init(struct lexer *lx, const char *src);
void lex_next(struct lexer *lx);

/* parser.c: returns NULL and fills err on a syntax error */
struct node *parse_statement(const char *src, char *err, size_t errlen);

/* ast.c */
struct node *node_new(enum node_kind kind);
void node_free(struct node *n);
void node_print(const struct node *n, char *out, size_t outlen);

/* eval.c: 0 on success, -1 with err filled */
int eval(const struct node *n, num_t *out, char *err, size_t errlen);

/* env.c */
int env_get(const char *name, num_t *out);
void env_set(const char *name, num_t v);
size_t env_count(void);

/* builtins.c */
int builtin_call(const char *name, const num_t *args, int nargs,
    num_t *out, char *err, size_t errlen);

/* script.c */
extern const char *const calc_script[];

#endif
