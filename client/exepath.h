/*
 * exepath.h - the path of the running executable, to find programs
 * installed next to it (boltcc finds its SSH helper this way).
 */
#ifndef BC_EXEPATH_H
#define BC_EXEPATH_H

/*
 * Absolute, symlink-resolved path of this executable (malloc'd), or NULL.
 * Linux: /proc/self/exe; macOS: _NSGetExecutablePath; elsewhere (or if
 * those fail) argv0 when it contains a '/', else argv0 searched on path
 * (the value of PATH boltcc started with, client/cconf.h; NULL: none).
 */
char *bc_exe_path(const char *argv0, const char *path);

#endif
