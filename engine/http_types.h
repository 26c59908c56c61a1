/* http_types.h: the HTTP family's public types, which both the API (http.h) and the
 * transfer inside (http_internal.h) use: the kinds of failure and their names, a
 * response as the completion sees it, the statistics and the memory budget. */
#ifndef LUACRAWL_HTTP_TYPES_H
#define LUACRAWL_HTTP_TYPES_H

#include <stddef.h>

/* The default longest URL; longer ones are refused with HTTP_E_INVALID_URL
 * (browsers and servers commonly stop at 8 KiB too). http_req_max_url changes it. */
#define HTTP_MAX_URL 8192

typedef struct http http_t;
typedef struct http_req http_req_t;
typedef struct http_xfer http_xfer_t;

enum http_error {
    HTTP_OK = 0,
    HTTP_E_INVALID_URL,
    HTTP_E_DNS,
    HTTP_E_CONNECT,
    HTTP_E_TLS,
    HTTP_E_TIMEOUT,
    HTTP_E_TOO_LARGE,
    HTTP_E_PROTOCOL,
    HTTP_E_CANCELLED,
    HTTP_E_MEMORY,   /* out of memory (ours or curl's): not worth retrying at once */
    HTTP_E_DENIED,   /* every address of the host is one the address policy denies */
    HTTP_E_RESOURCE, /* out of file descriptors (EMFILE, ENFILE) */
    HTTP_E_COUNT     /* not a kind: the number of them, HTTP_OK included */
};

/* "invalid_url", "dns", ... as the Lua API names them. */
const char *http_error_name(enum http_error e);

typedef struct http_header {
    const char *name; /* as the server sent it */
    const char *value;
} http_header_t;

typedef struct http_res {
    enum http_error error; /* HTTP_OK, or what went wrong (message says more) */
    const char *message;
    long status;
    const char *url; /* the URL answered, after any redirects followed */
    int nheaders;
    const http_header_t *headers;
    const char *body;
    size_t body_len;
    const char *ip;
    const char *http_version; /* "1.0", "1.1", "2", "3" */
    int redirects;            /* redirects followed */
    int truncated;            /* the body was cut at max_body (http_req_truncate) */
    /* Seconds from the start of the request (the last hop's, after a redirect) to
     * the end of each phase; 0 where a phase did not happen (a reused connection). */
    double t_dns, t_connect, t_tls, t_ttfb, t_total;
    void *xfer; /* for http_res_take_body */
} http_res_t;

typedef void (*http_fn)(void *arg, const http_res_t *res);

typedef struct http_stats {
    unsigned long started, completed, failed;
    unsigned long active;
    unsigned long long bytes; /* body bytes received (decoded) */
} http_stats_t;

/* The engine's memory budget (http_set_budget): limit (0: none) is what the engine
 * may hold, used what it holds besides the bodies of transfers in progress. */
typedef struct http_budget {
    size_t limit, used;
} http_budget_t;
typedef void (*http_budget_fn)(void *arg, http_budget_t *budget);

#endif
