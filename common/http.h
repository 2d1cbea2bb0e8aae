/*
 * http.h - the request line of the few HTTP requests boltcc and boltccd
 * serve (boltccd's stats port, boltcc --monitor --web), read through
 * the bounded buffer type.
 */
#ifndef BC_HTTP_H
#define BC_HTTP_H

#include <stddef.h>

/*
 * "METHOD TARGET ..." from the n bytes at req: method (capitals, at most
 * BC_MAX_HTTP_METHOD) and target (printable ASCII but space, at most
 * BC_MAX_HTTP_TARGET) into the caller's arrays of those sizes + 1, and
 * in *end what follows the target: ' ' (the version comes), -1 (the
 * bytes end there) or any other byte.
 * BC_OK; BC_ERR_PROTO if there is no method and space (not HTTP);
 * BC_ERR_LIMIT if the target is longer (target holds its first bytes).
 */
int bc_http_request_line(const void *req, size_t n,
    char method[], char target[], int *end);

#endif
