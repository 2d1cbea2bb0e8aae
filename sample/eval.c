/* eval.c - evaluate a syntax tree with checked 64-bit arithmetic. */
#include "calc.h"
#include "util.h"

static int ipow(num_t b, num_t e, num_t *out)
{
	num_t r = 1;

	if (e < 0)
		return -1;
	while (e-- > 0) {
		if (__builtin_mul_overflow(r, b, &r))
			return -1;
	}
	*out = r;
	return 0;
}

static int binop(char op, num_t a, num_t b, num_t *out, char *err, size_t errlen)
{
	switch (op) {
	case '+':
		if (__builtin_add_overflow(a, b, out))
			break;
		return 0;
	case '-':
		if (__builtin_sub_overflow(a, b, out))
			break;
		return 0;
	case '*':
		if (__builtin_mul_overflow(a, b, out))
			break;
		return 0;
	case '/':
	case '%':
		if (b == 0) {
			set_err(err, errlen, "division by zero", "");
			return -1;
		}
		*out = op == '/' ? a / b : a % b;
		return 0;
	case '^':
		if (ipow(a, b, out) == 0)
			return 0;
		break;
	}
	set_err(err, errlen, "arithmetic overflow", "");
	return -1;
}

int eval(const struct node *n, num_t *out, char *err, size_t errlen)
{
	num_t a, b, args[MAX_ARGS];
	int i;

	switch (n->kind) {
	case N_NUM:
		*out = n->num;
		return 0;
	case N_VAR:
		if (env_get(n->name, out) != 0) {
			set_err(err, errlen, "unknown variable", n->name);
			return -1;
		}
		return 0;
	case N_NEG:
		if (eval(n->kid[0], &a, err, errlen))
			return -1;
		*out = -a;
		return 0;
	case N_BIN:
		if (eval(n->kid[0], &a, err, errlen) || eval(n->kid[1], &b, err, errlen))
			return -1;
		return binop(n->op, a, b, out, err, errlen);
	case N_CALL:
		for (i = 0; i < n->nargs; i++)
			if (eval(n->kid[i], &args[i], err, errlen))
				return -1;
		return builtin_call(n->name, args, n->nargs, out, err, errlen);
	case N_ASSIGN:
		if (eval(n->kid[0], out, err, errlen))
			return -1;
		env_set(n->name, *out);
		return 0;
	}
	return -1;
}
