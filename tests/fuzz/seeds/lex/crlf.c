#include "a.h"
#if 1
#include <b.h>
#endif
??=include <trigraph.h>
%:include <digraph.h>
#include
#include <unterminated.h
#include "open