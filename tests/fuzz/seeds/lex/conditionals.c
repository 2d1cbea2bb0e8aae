#ifndef GUARD_H
#define GUARD_H
#if defined(__linux__) && __GNUC__ >= 4
# include <features.h>
#elif __has_include(<os.h>)
#include <os.h>
#else
#error "no os"
#endif
#ifdef X
#undef X
#endif
#pragma once
#pragma GCC system_header
#line 40 "gen.c"
#endif /* GUARD_H */
