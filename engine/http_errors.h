/* http_errors.h: what each libcurl result code means to a fetch: its err.kind and
 * the words our message starts with. One table (http_errors.c), so that no code
 * falls into a kind by accident; tests/unit/test_http_errors.c checks it code by
 * code. */
#ifndef LUACRAWL_HTTP_ERRORS_H
#define LUACRAWL_HTTP_ERRORS_H

#include "http_types.h"

#include <curl/curl.h>

typedef struct http_curl_error {
    enum http_error kind;
    const char *what; /* our words, followed by curl's message */
} http_curl_error_t;

/* The kind and words for rc (not CURLE_OK). began: bytes of a response had come
 * when the transfer failed; a receive error then is a response cut short (protocol),
 * before it a connection that failed (connect). A code the table does not know (a
 * newer libcurl's) is protocol. */
http_curl_error_t http_curl_error(CURLcode rc, int began);

/* 1 when rc has an entry of its own in the table (for the unit test). */
int http_curl_error_known(CURLcode rc);

#endif
