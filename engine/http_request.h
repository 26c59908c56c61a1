/* http_request.h: inside http.c and http_request.c only. The request a transfer
 * carries (http.h's http_req_t, opaque to everyone else: http_req_* build it) and
 * what http.c asks of it when it sets a transfer up. */
#ifndef LUACRAWL_HTTP_REQUEST_H
#define LUACRAWL_HTTP_REQUEST_H

#include "http_cookies.h"
#include "http.h"

#include <curl/curl.h>

struct http_req {
    char *url;
    char *method;
    struct curl_slist *headers;
    char *body;
    size_t body_len;
    int has_body;
    char *user_agent;
    char *proxy;
    char *ca_file;
    double timeout, connect_timeout;
    size_t max_body, max_header, max_url;
    int follow;
    int insecure;
    int truncate;
    int keep_credentials, follow_site;
    int archive;
    addr_policy_t *policy;
    cookies_t *cookies; /* a reference (http_req_cookies); NULL: none */
};

/* The method the request goes with: its own, else POST with a body, else GET. */
const char *http_req_method_name(const http_req_t *r);

/* A plain request: a GET without headers, body, proxy, TLS settings or archiving of
 * its own (a cookie jar it may have: http.c keeps handles on their jars); between
 * two of them a handle keeps its options (http.c's setup_easy). */
int http_req_plain(const http_req_t *r);

/* The request's own options on e, a handle that holds the base options and none of
 * another request's (http.c's setup_easy, for a request that is not plain): its
 * headers, TLS settings, method and body (not its cookie jar: http.c puts the handle
 * on it). -1 when an option did not take (out of
 * memory: http.c's setup_base says why that matters). */
int http_req_setopt(const http_req_t *r, CURL *e);

#endif
