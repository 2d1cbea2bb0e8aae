/* main.c - run the built-in script (or the lines of argv) and print results. */
#include <stdio.h>
#include "calc.h"
#include "util.h"

static int run_line(const char *line)
{
	char err[128], text[256];
	struct node *n;
	num_t v;

	err[0] = '\0';
	n = parse_statement(line, err, sizeof err);
	if (!n) {
		printf("%-48s  syntax error: %s\n", line, err);
		return 1;
	}
	node_print(n, text, sizeof text);
	if (eval(n, &v, err, sizeof err) != 0) {
		printf("%-48s  error: %s\n", text, err);
		return 1;
	}
	printf("%-48s  = %lld\n", text, (long long)v);
	return 0;
}

int main(int argc, char **argv)
{
	int i, errors = 0, lines = 0;

	if (argc > 1) {
		for (i = 1; i < argc; i++, lines++)
			errors += run_line(argv[i]);
	} else {
		for (i = 0; calc_script[i]; i++, lines++) {
			errors += run_line(calc_script[i]);
			arena_reset();
		}
	}
	printf("%d statements, %d errors, %zu variables\n", lines, errors, env_count());
	return 0;
}
