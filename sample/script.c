/* script.c - the statements the sample program evaluates. */
#include <stddef.h>
#include "calc.h"

const char *const calc_script[] = {
	"1 + 2 * 3",
	"(1 + 2) * 3",
	"2 ^ 10 - 1",
	"x = 6 * 7",
	"y = x % 5 + 10",
	"gcd(x * 3, y + 4)",
	"fib(50)",
	"sqrt(1000000)",
	"clamp(x, 0, 40) + min(y, 3) - max(-5, abs(-9))",
	"-(-x) / 4",
	"z = 2 ^ 62 + 2 ^ 62",
	"1 / (x - 42)",
	"unknown + 1",
	"3 +",
	NULL
};
