/* http.h: HTTP(S) transfers on a curl multi handle driven by the loop.
 *
 * Only http and https are fetched, at every hop. Names are resolved by dns.c and
 * handed to curl with CURLOPT_RESOLVE: curl never resolves by itself. Redirects are
 * followed here (never by curl) when a request asks for it, so each hop goes back
 * through our DNS and scheme checks. A completion callback never runs inside
 * http_start or inside a curl callback. */
#ifndef LUACRAWL_HTTP_H
#define LUACRAWL_HTTP_H

#include "dns.h"
#include "http_addr_policy.h"
#include "http_types.h"
#include "loop.h"

#include <stddef.h>

/* In the completion: the body as a malloc'd block the caller now owns (free it),
 * body_len bytes and a NUL, so that keeping it needs no copy; NULL for an empty
 * body, or when out of memory (the body then stays with the transfer). After it
 * returned a block, res->body must not be read. */
char *http_res_take_body(const http_res_t *res);

/* In the completion of an archived request (http_req_archive) that succeeded: its
 * hops, which the caller now owns (http_capture_free); NULL otherwise. */
struct http_capture;
struct http_capture *http_res_take_capture(const http_res_t *res);

http_t *http_new(loop_t *loop, dns_t *dns, char *err, size_t errlen);
void http_free(http_t *http);

/* libcurl's version ("7.88.1"), read once for the process: call this rather than
 * curl_version_info, which is not thread-safe. "" when libcurl failed to start. */
const char *http_curl_version(void);

void http_get_stats(const http_t *http, http_stats_t *stats);

/* The engine's address policy (http_addr_policy.h), taken over (the last one is freed;
 * NULL: none): every connection of every request is checked against it, besides the
 * request's own (http_req_policy). What is checked: the addresses dns.c gives for a
 * host (denied ones are left out of CURLOPT_RESOLVE; none left ends the request
 * with HTTP_E_DENIED), an IP-literal host, and, as a backstop, the address curl
 * opens a socket to (CURLOPT_OPENSOCKETFUNCTION). Through a proxy the connection
 * goes to the proxy, which the caller named and which is not checked; the target's
 * addresses are checked when we resolve them (socks4, socks5) or it is an IP
 * literal; a proxy that resolves names itself (http, https, socks4a, socks5h) must
 * apply its own policy to them. */
void http_set_policy(http_t *http, addr_policy_t *policy);

/* The engine's memory budget (http_types.h), asked while bodies arrive. A transfer
 * whose body would take the total past its limit ends as it grows, with
 * HTTP_E_MEMORY (HTTP_E_TOO_LARGE stays the request's own max_body). */
void http_set_budget(http_t *http, http_budget_fn fn, void *arg);

/* A request. Setters return 0, or -1 when the value is refused (a header with CR or
 * LF, an unknown method) or memory runs out. */
http_req_t *http_req_new(const char *url);
void http_req_free(http_req_t *req);
/* A new request for url with all of r's settings (its strings, headers, body and
 * policy copied, its cookie jar shared): a caller that sends many requests with the
 * same options reads them once into r (lc.fetch_options). NULL when out of memory. */
http_req_t *http_req_copy(const http_req_t *r, const char *url);
int http_req_method(http_req_t *req, const char *method);
int http_req_header(http_req_t *req, const char *name, const char *value);
int http_req_body(http_req_t *req, const char *data, size_t len);
int http_req_user_agent(http_req_t *req, const char *ua);
int http_req_proxy(http_req_t *req, const char *proxy);
void http_req_timeout(http_req_t *req, double total, double connect);
void http_req_max_size(http_req_t *req, size_t max_body, size_t max_header);
void http_req_follow(http_req_t *req, int max_redirects);
void http_req_max_url(http_req_t *req, size_t max_url);
/* With truncate set, a body over max_body is cut there and returned (res.truncated)
 * instead of failing with HTTP_E_TOO_LARGE. */
void http_req_truncate(http_req_t *req, int truncate);
void http_req_insecure(http_req_t *req, int insecure);
/* The request's address policy, taken over (see http_set_policy). */
void http_req_policy(http_req_t *req, addr_policy_t *policy);
/* Redirects followed to another origin (scheme, host or port) drop the request's
 * Authorization, Cookie and Proxy-Authorization headers and the URL's user name and
 * password, as curl does without --location-trusted; keep sends them on. */
void http_req_keep_credentials(http_req_t *req, int keep);
/* With site set, a redirect is followed only to the site (registrable domain, as
 * url_site gives it) of the request's URL; one elsewhere ends the request with the
 * 3xx response, as when follow runs out. */
void http_req_follow_site(http_req_t *req, int site);
/* Send cookies from jar and keep those the responses set in it, at every hop, by
 * the jar's rules (http_cookies.h); the request holds a reference until it is freed.
 * NULL: no cookies (the default), besides a Cookie header of the request's own. */
typedef struct cookies cookies_t;
void http_req_cookies(http_req_t *req, cookies_t *jar);
/* Verify TLS peers against the CA certificates in this PEM file instead of the
 * system's. */
int http_req_ca_file(http_req_t *req, const char *path);
/* With archive set, the transfer keeps, for each hop, the request as sent and the
 * response as received (http_capture.h), for a WARC writer: http_res_take_capture. */
void http_req_archive(http_req_t *req, int archive);

/* Start a transfer; takes ownership of req. fn(arg, res) is called exactly once,
 * later, unless http_cancel is called first. NULL when out of memory (req freed). */
http_xfer_t *http_start(http_t *http, http_req_t *req, http_fn fn, void *arg);
void http_cancel(http_t *http, http_xfer_t *xfer);

#endif
