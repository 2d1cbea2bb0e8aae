/* ast.c - syntax tree nodes and printing them back as text. */
#include <string.h>
#include "calc.h"
#include "util.h"

struct node *node_new(enum node_kind kind)
{
	struct node *n = arena_alloc(sizeof *n);

	memset(n, 0, sizeof *n);
	n->kind = kind;
	return n;
}

void node_free(struct node *n)
{
	(void)n;	/* arena memory: released by arena_reset() */
}

static void print_rec(const struct node *n, struct strbuf *sb)
{
	int i;

	switch (n->kind) {
	case N_NUM:
		sb_putnum(sb, (long long)n->num);
		break;
	case N_VAR:
		sb_puts(sb, n->name);
		break;
	case N_NEG:
		sb_puts(sb, "(-");
		print_rec(n->kid[0], sb);
		sb_putc(sb, ')');
		break;
	case N_BIN:
		sb_putc(sb, '(');
		print_rec(n->kid[0], sb);
		sb_putc(sb, ' ');
		sb_putc(sb, n->op);
		sb_putc(sb, ' ');
		print_rec(n->kid[1], sb);
		sb_putc(sb, ')');
		break;
	case N_CALL:
		sb_puts(sb, n->name);
		sb_putc(sb, '(');
		for (i = 0; i < n->nargs; i++) {
			if (i)
				sb_puts(sb, ", ");
			print_rec(n->kid[i], sb);
		}
		sb_putc(sb, ')');
		break;
	case N_ASSIGN:
		sb_puts(sb, n->name);
		sb_puts(sb, " = ");
		print_rec(n->kid[0], sb);
		break;
	}
}

void node_print(const struct node *n, char *out, size_t outlen)
{
	struct strbuf sb;

	sb_init(&sb, out, outlen);
	print_rec(n, &sb);
}
