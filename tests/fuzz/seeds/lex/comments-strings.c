/* #include "not-this.h" */
const char *s = "#include \"nor-this.h\"";
char c = '"';
// #include <no.h> \
   still a comment
#define LONG_MACRO(x) \
	do { \
		(x)++; \
	} while (0)
/* multi
 * line
 */ #include "after-comment.h"
#include /* c */ <between.h>
R"raw(#include <raw.h>)raw";
