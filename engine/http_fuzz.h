/* http_fuzz.h: fuzzing only (cmake -DLUACRAWL_FUZZ=ON defines LUACRAWL_FUZZING).
 * http.c's side: a transfer with no curl and no network, fed by hand through the
 * callbacks curl would call. http_fuzz.c's side: http_fuzz_response, the entry
 * point of fuzz/fuzz_http_response.c. */
#ifndef LUACRAWL_HTTP_FUZZ_H
#define LUACRAWL_HTTP_FUZZ_H

#include "http.h"

#include <stddef.h>

#ifdef LUACRAWL_FUZZING

/* A transfer of a request for http://fuzz.test/ with these limits (0 keeps a
 * default), on an http_t of its own without a budget; NULL when out of memory. */
http_xfer_t *http_fuzz_xfer_new(size_t max_body, size_t max_header);
void http_fuzz_xfer_free(http_xfer_t *x);

/* n bytes of data through on_header (CURLOPT_HEADERFUNCTION: one line a call) or
 * on_body (CURLOPT_WRITEFUNCTION); their result: n, or not n to end the transfer. */
size_t http_fuzz_header(http_xfer_t *x, char *data, size_t n);
size_t http_fuzz_body(http_xfer_t *x, char *data, size_t n);

/* The header list finish() walks: *n "name\0value\0" pairs in the *len bytes
 * returned (never NULL). */
const char *http_fuzz_header_list(const http_xfer_t *x, size_t *len, int *n);

/* A response without a network. data's lines up to the first empty one go through
 * on_header one call per line, as curl delivers them (after an interim 1xx status,
 * the next response's lines too); the rest through on_body in growing chunks; then
 * the header list is walked as finish() walks it. max_body and max_header of 0 keep
 * the defaults. With as_curl, a header line with a NUL byte ends the transfer as
 * curl (7.83 and later) ends it; without, on_header gets it. Returns the number of
 * headers, -1 when the transfer ended early, -2 when the walk does not end exactly at
 * the end of the list (a bug). */
int http_fuzz_response(const char *data, size_t len, size_t max_body, size_t max_header,
                       int as_curl);

#endif
#endif
