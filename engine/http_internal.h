/* http_internal.h: inside the HTTP family only (http.c and the http_*.c files that
 * share a transfer). The request, the transfer and the engine's side of them, and
 * what each of those files does for the others. */
#ifndef LUACRAWL_HTTP_INTERNAL_H
#define LUACRAWL_HTTP_INTERNAL_H

#include "buf.h"
#include "dns.h"
#include "http_addr_policy.h"
#include "http_capture.h"
#include "http_cookies.h"
#include "http_decode.h"
#include "http_headers.h"
#include "http_proxy_env.h"
#include "http_types.h"
#include "loop.h"

#include <curl/curl.h>
#include <stddef.h>

#define POOL_MAX 64
#define HTTP_MESSAGE_MAX (CURL_ERROR_SIZE + 256) /* a failure's message, at most */

/* The request a transfer carries (http.h's http_req_t, opaque to everyone else:
 * http_req_* build it). */
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

/* A hop's URL in parts for CURLOPT_CURLU, and the origin they hold ("http://host:port"
 * as the URL writes it). Kept with an easy handle between transfers (struct pooled):
 * the next hop to the same origin sets only its path and query (http_pool.c). */
struct http_url_parts {
    CURLU *uh; /* NULL: none */
    char *origin;
    size_t origin_len;
};

/* p's parts freed, p emptied. */
void http_url_parts_free(struct http_url_parts *p);

enum xfer_state { X_DNS, X_CURL, X_DEFERRED, X_DONE };
enum abort_reason {
    ABORT_NONE,
    ABORT_BODY,
    ABORT_HEADER,
    ABORT_TRUNCATED,
    ABORT_MEMORY,
    ABORT_DECODE, /* the body is not valid in its Content-Encoding (message set) */
    ABORT_BUDGET, /* the engine's memory budget (message set, and error) */
};

/* A transfer: its request, this hop's URL, names and handle, and the response being
 * assembled. */
struct http_xfer {
    http_t *http;
    http_req_t *req;
    http_fn fn;
    void *arg;
    enum xfer_state state;
    CURL *easy;
    int easy_base; /* easy holds the base options and a plain request's (http_easy_setup) */
    int attempts;  /* of this hop's request: more than one when curl retried it */
    http_xfer_t *prev, *next; /* in http->in_curl while the multi handle has easy */
    int unwatched;            /* errno of a failed loop_watch of its socket; 0: none */
    dns_wait_t *dns_wait;
    loop_timer_t *dns_deadline; /* the request's timeout, while a lookup is out */
    const char *dns_host;       /* the name being resolved: host or proxy_host */
    char *url;                  /* this hop's URL */
    char *host;                 /* this hop's host, and the port curl will connect to */
    int port;
    int literal;
    int normal;        /* url is in normalized form (parse_url took host and port from it) */
    const char *proxy; /* this hop's: the request's, else the environment's; NULL: none */
    char *proxy_host;
    int proxy_port;
    struct http_url_parts parts; /* this hop's URL in parts, when it is in normalized form */
    struct curl_slist *resolve;
    struct curl_slist *sent_headers; /* the request's, without its Cookie (set_cookie_header) */
    int redirects;
    double started, hop_started, dns_time;
    /* the response being assembled */
    struct buf body;
    struct buf hdrbuf;      /* "name\0value\0" pairs */
    struct buf set_cookies; /* this hop's Set-Cookie values, "value\0" each, for a jar */
    size_t nset_cookies;
    size_t header_bytes;
    int nheaders;
    int headers_done;        /* the last response's header block ended (its empty line) */
    http_decoder_t *decoder; /* undoes the response's Content-Encoding; NULL: none */
    int decode_refused;      /* its Content-Encoding cannot be undone (message set) */
    int encoded;             /* a Content-Encoding is among the headers (setup_decoder) */
    http_capture_t *capture; /* the bytes as sent and received (http_req_archive); NULL: none */
    enum abort_reason aborted;
    enum http_error error;
    /* Why it failed (http_fail), allocated then: most transfers never fail, and
     * thousands waiting at once would each carry the room for it. NULL: nothing
     * said, or no memory to say it (http_finish then says that). */
    char *message;
    char errbuf[CURL_ERROR_SIZE];
    char denied[160]; /* why http_on_open_socket refused this hop's connection; "": it did not */
    int sock_errno;   /* EMFILE/ENFILE: http_on_open_socket could not make a socket; 0: none */
};

/* An easy handle between transfers, with what it holds (as http_xfer_t's easy_base). */
struct pooled {
    CURL *easy;
    int base;
    struct http_url_parts parts; /* the last hop's URL in parts (none set on easy) */
};

/* The engine's side: the multi handle, its timer, the pool, and what all transfers
 * share. */
struct http {
    loop_t *loop;
    dns_t *dns;
    CURLM *multi;
    CURLSH *share;
    loop_timer_t *timer;
    int timeout_deferred;
    int timer_lost;       /* on_timer could not arm the loop's timer */
    int unwatched;        /* a transfer in in_curl has its unwatched set */
    http_xfer_t *in_curl; /* the transfers the multi handle holds (end_stalled) */
    struct pooled pool[POOL_MAX];
    int npool;
    proxy_env_t *penv; /* the environment's proxies; NULL: none set */
    http_headers_t *headers;
    double dns_pruned;     /* when curl last pruned its DNS cache (http_easy_setup) */
    addr_policy_t *policy; /* the engine's (http_set_policy); NULL: none */
    size_t held;           /* bytes of body buffers of the transfers in progress */
    http_budget_fn budget;
    void *budget_arg;
    http_stats_t stats;
};

/* ---- http_request.c: what a transfer asks of its request ---- */

/* The method the request goes with: its own, else POST with a body, else GET. */
const char *http_req_method_name(const http_req_t *r);

/* A plain request: a GET without headers, body, proxy, TLS settings or archiving of
 * its own (a cookie jar it may have: its Cookie header is set at every hop); between
 * two of them a handle keeps its options (http_easy_setup). */
int http_req_plain(const http_req_t *r);

/* The request's own options on e, a handle that holds the base options and none of
 * another request's (http_easy_setup, for a request that is not plain): its headers,
 * TLS settings, method and body (not its cookie jar's Cookie header: http_easy_setup
 * sets that). -1 when an option did not take (out of memory: http_pool.c's setup_base
 * says why that matters). */
int http_req_setopt(const http_req_t *r, CURL *e);

/* ---- http_errors.c: failing a transfer ---- */

/* x ends with error e and this message (when it finishes). */
void http_fail(http_xfer_t *x, enum http_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* x's message, its error left as it is (at most HTTP_MESSAGE_MAX - 1 bytes). */
void http_set_message(http_xfer_t *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* x ends with the error curl's result rc means, or the one our callbacks stopped it
 * for. */
void http_fail_curl(http_xfer_t *x, CURLcode rc);

/* ---- http_response.c: the response, from curl's callbacks to the completion ---- */

/* curl's callbacks on a transfer (arg): CURLOPT_WRITEFUNCTION (body bytes as they
 * came), CURLOPT_HEADERFUNCTION (one header line a call, status lines included),
 * CURLOPT_PREREQFUNCTION and CURLOPT_DEBUGFUNCTION (an archived request's bytes). */
size_t http_on_body(char *data, size_t size, size_t nmemb, void *arg);
size_t http_on_header(char *data, size_t size, size_t nmemb, void *arg);
int http_on_prereq(void *arg, char *ip, char *local_ip, int port, int local_port);
int http_on_debug(CURL *easy, curl_infotype type, char *data, size_t size, void *arg);

/* After curl ended x as a success: 0 when the response is whole, else -1 with the
 * error set. */
int http_check_whole(http_xfer_t *x);

/* The response assembled so far forgotten, for the next hop's. */
void http_response_restart(http_xfer_t *x);

/* The request's jar takes the cookies the hop's response set (http.c's detach). */
void http_take_cookies(http_xfer_t *x);

/* Report the result to the caller and free the transfer. */
void http_finish(http_xfer_t *x);

/* x freed with all it holds, its handle back to the pool. */
void http_xfer_free(http_xfer_t *x);

/* http_finish on the next turn. -1, x untouched, when out of memory: finishing now
 * instead would run the completion inside http_start. */
int http_finish_later(http_xfer_t *x);

/* ---- http_hop.c: one hop, from its URL to an easy handle's launch ---- */

/* Begin one hop at x->url: check it, resolve its host (and the proxy's), launch.
 * -1 when out of memory with nothing started: the caller finishes or frees x. */
int http_hop_start(http_xfer_t *x, double now);

/* CURLOPT_RESOLVER_START_FUNCTION and CURLOPT_OPENSOCKETFUNCTION (the address
 * policy's backstop). */
int http_on_resolver_start(void *resolver_state, void *reserved, void *arg);
curl_socket_t http_on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a);

static inline void http_stop_dns_deadline(http_xfer_t *x)
{
    if (x->dns_deadline) loop_timer_cancel(x->http->loop, x->dns_deadline);
    x->dns_deadline = NULL;
}

/* ---- http_redirect.c ---- */

/* After a 3xx with Location, when the request asked to follow: 1 for the next hop,
 * 0 for none, -1 when out of memory. */
int http_follow_redirect(http_xfer_t *x);

/* ---- http_pool.c: easy handles between transfers, and set up for a hop ---- */

/* A handle; NULL when out of memory. *parts (empty before) takes the URL parts kept
 * with it. */
CURL *http_pool_get(http_t *http, int *base, struct http_url_parts *parts);

/* x's handle back to the pool (x->easy NULL after). */
void http_pool_put(http_xfer_t *x);

/* The pooled handles freed, for http_free. */
void http_pool_free(http_t *http);

/* x's handle back to curl's defaults. */
void http_easy_reset(http_xfer_t *x);

/* Set up x->easy for this hop; -1 when an option did not take. */
int http_easy_setup(http_xfer_t *x);

/* ---- http.c: the multi handle ---- */

/* x's hop to curl, on a handle set up for it; finished at once when that fails. */
void http_launch(http_xfer_t *x);

/* CURLOPT_CLOSESOCKETFUNCTION (arg: the http_t). */
int http_on_close_socket(void *arg, curl_socket_t fd);

#endif
