/* builtins.c - functions callable from expressions. */
#include <string.h>
#include "calc.h"
#include "util.h"

static num_t gcd(num_t a, num_t b)
{
	num_t t;

	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static num_t fib(num_t n)
{
	num_t a = 0, b = 1, t;

	while (n-- > 0) {
		t = a + b;
		a = b;
		b = t;
	}
	return a;
}

static num_t isqrt(num_t v)
{
	num_t r = 0;

	while ((r + 1) * (r + 1) <= v)
		r++;
	return r;
}

struct builtin {
	const char *name;
	int nargs;
};

static const struct builtin table[] = {
	{ "abs", 1 }, { "min", 2 }, { "max", 2 }, { "gcd", 2 },
	{ "fib", 1 }, { "sqrt", 1 }, { "clamp", 3 },
};

int builtin_call(const char *name, const num_t *a, int nargs, num_t *out,
    char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].name, name) == 0)
			break;
	if (i == sizeof table / sizeof table[0]) {
		set_err(err, errlen, "unknown function", name);
		return -1;
	}
	if (table[i].nargs != nargs) {
		set_err(err, errlen, "wrong number of arguments to", name);
		return -1;
	}
	switch (i) {
	case 0: *out = a[0] < 0 ? -a[0] : a[0]; break;
	case 1: *out = a[0] < a[1] ? a[0] : a[1]; break;
	case 2: *out = a[0] > a[1] ? a[0] : a[1]; break;
	case 3: *out = gcd(a[0], a[1]); break;
	case 4:
		if (a[0] < 0 || a[0] > 90) {
			set_err(err, errlen, "fib argument out of range", "");
			return -1;
		}
		*out = fib(a[0]);
		break;
	case 5:
		if (a[0] < 0 || a[0] > 1000000000000LL) {
			set_err(err, errlen, "sqrt argument out of range", "");
			return -1;
		}
		*out = isqrt(a[0]);
		break;
	default:
		*out = a[0] < a[1] ? a[1] : a[0] > a[2] ? a[2] : a[0];
		break;
	}
	return 0;
}
