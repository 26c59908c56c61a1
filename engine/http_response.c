/* http_response.c: a transfer's response, assembled from curl's header and body
 * callbacks (the header list, the body within max_size and the engine's memory
 * budget, its Content-Encoding undone, the bytes kept for an archive), checked whole,
 * and handed to the caller as an http_res_t; then the transfer is freed.
 * fuzz/fuzz_http_response.c drives the callbacks on a transfer of its own. */
#include "http.h"

#include "ascii.h"
#include "http_internal.h"

#include <curl/header.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_HEADERS 1000
#define HEADERS_FIRST 2048 /* bytes of "name\0value\0" room for a response at first */

/* ---- curl callbacks ---- */

static int out_of_memory(http_xfer_t *x);

/* The capacity buf_grow gives b for more bytes (buf.c's rule). */
static size_t next_cap(const struct buf *b, size_t more)
{
    size_t cap = b->cap ? b->cap : more > 256 ? more : 256;
    while (cap - b->n < more && cap <= SIZE_MAX / 2)
        cap *= 2;
    return cap;
}

/* Room in x's body for more bytes and a NUL, within the engine's memory budget
 * (http_set_budget): the bodies of all transfers in progress and what the engine
 * holds already must stay under its limit while the bytes arrive, not only once
 * the body is whole. Near the limit the buffer grows to what is left rather than
 * doubling. -1 with x->aborted set when it cannot. */
static int reserve_body(http_xfer_t *x, size_t more)
{
    struct buf *b = &x->body;
    http_t *http = x->http;
    if (more >= SIZE_MAX - b->n - 1) return out_of_memory(x);
    size_t need = b->n + more + 1;
    if (b->p && b->cap >= need) return 0;
    size_t old = b->cap, cap = next_cap(b, more + 1);
    http_budget_t bg = {0, 0};
    if (http->budget) http->budget(http->budget_arg, &bg);
    if (bg.limit) {
        /* The most this buffer may hold: the limit less all else counted. */
        size_t others = bg.used + (http->held - old);
        size_t room = bg.limit > others ? bg.limit - others : 0;
        if (need > room) {
            /* memory, not too_large: that kind is for the request's own limits
             * (max_size); this one is the engine's, and depends on what it holds. */
            http_fail(x, HTTP_E_MEMORY,
                      "not enough memory: a body of %zu bytes and more would take the engine past "
                      "max_memory (%zu bytes; %zu held besides)",
                      need - 1, bg.limit, others);
            x->aborted = ABORT_BUDGET;
            return -1;
        }
        if (cap > room) cap = room;
    }
    if (cap < need || !cap) return out_of_memory(x); /* never (room >= need >= 1) */
    /* Not buf_reserve: its doubling would pass the room left. */
    char *p = realloc(b->p, cap);
    if (!p) return out_of_memory(x);
    b->p = p;
    b->cap = cap;
    http->held += cap - old;
    return 0;
}

/* http_decode_fn: decoded body bytes, kept within max_size and the budget; 1 stops
 * the transfer (x->aborted says why). */
static int keep_body(void *arg, const char *data, size_t n)
{
    http_xfer_t *x = arg;
    struct buf *b = &x->body;
    int cut = 0;
    if (n > x->req->max_body - b->n) {
        if (!x->req->truncate) {
            x->aborted = ABORT_BODY;
            return 1;
        }
        /* Keep what fits and stop the transfer; reported as a success. */
        n = x->req->max_body - b->n;
        cut = 1;
    }
    if (reserve_body(x, n) < 0) return 1;
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
    if (cut) x->aborted = ABORT_TRUNCATED;
    return cut;
}

/* Body bytes as they came, for the archive: at the first, room for the declared
 * length (within max_size), so that they are copied once. */
static void capture_body(http_xfer_t *x, const char *data, size_t n)
{
    if (http_capture_wants_size(x->capture)) {
        curl_off_t declared = -1;
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
        if (declared > (curl_off_t)n && (size_t)declared <= x->req->max_body)
            http_capture_reserve(x->capture, (size_t)declared);
    }
    http_capture_body(x->capture, data, n);
}

/* CURLOPT_WRITEFUNCTION: body bytes as they came (curl's decoding is off). */
size_t http_on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    http_xfer_t *x = arg;
    size_t n = size * nmemb;
    if (x->decode_refused) { /* the message is set */
        x->error = HTTP_E_PROTOCOL;
        x->aborted = ABORT_DECODE;
        return 0;
    }
    if (x->decoder) {
        if (x->capture) capture_body(x, data, n);
        char err[HTTP_MESSAGE_MAX];
        int r = http_decoder_feed(x->decoder, data, n, keep_body, x, err, sizeof(err));
        if (r < 0) {
            http_fail(x, HTTP_E_PROTOCOL, "%s", err);
            x->aborted = ABORT_DECODE;
        }
        return r ? 0 : n;
    }
    if (x->body.cap == 0) { /* the first bytes: room for the declared length at once */
        curl_off_t declared = -1;
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
        if (declared > (curl_off_t)n && (size_t)declared <= x->req->max_body &&
            reserve_body(x, (size_t)declared) < 0) {
            /* Over the budget: grow as the bytes come instead, and fail then. */
            x->aborted = ABORT_NONE;
            x->error = HTTP_OK;
        }
    }
    int stop = keep_body(x, data, n);
    if (x->capture) http_capture_body_kept(x->capture); /* the same bytes, as cut */
    return stop ? 0 : n;
}

/* CURLOPT_PREREQFUNCTION: a request is about to be sent (again, on a retry). */
int http_on_prereq(void *arg, char *ip, char *local_ip, int port, int local_port)
{
    (void)ip;
    (void)local_ip;
    (void)port;
    (void)local_port;
    http_xfer_t *x = arg;
    x->attempts++;
    if (x->capture) http_capture_sent(x->capture);
    return CURL_PREREQFUNC_OK;
}

/* CURLOPT_DEBUGFUNCTION, set for an archived request only: the request's head and
 * body as curl sent them (CURLOPT_HTTPHEADER is not what goes: curl adds Host, and
 * more). */
int http_on_debug(CURL *easy, curl_infotype type, char *data, size_t size, void *arg)
{
    (void)easy;
    http_xfer_t *x = arg;
    if (type == CURLINFO_HEADER_OUT || type == CURLINFO_DATA_OUT)
        http_capture_request(x->capture, data, size);
    return 0;
}

/* Out of memory storing a response: the transfer ends as HTTP_E_MEMORY. */
static int out_of_memory(http_xfer_t *x)
{
    x->aborted = ABORT_MEMORY;
    return -1;
}

/* Append "name\0value\0"; a folded continuation line extends the last value. -1
 * when it cannot (x->aborted says so when memory ran out; else too many headers). */
static int store_header(http_xfer_t *x, const char *line, size_t n)
{
    if (n && (line[0] == ' ' || line[0] == '\t') && x->nheaders) {
        ascii_trim_field(&line, &n);
        x->hdrbuf.n--; /* reopen the last value */
        if (buf_append(&x->hdrbuf, " ", 1) < 0 || buf_append(&x->hdrbuf, line, n) < 0 ||
            buf_append(&x->hdrbuf, "", 1) < 0)
            return out_of_memory(x);
        return 0;
    }
    const char *colon = memchr(line, ':', n);
    if (!colon) return 0; /* not a header line: ignore it, as browsers do */
    /* A NUL anywhere in the line is in its name or its value (the rest is the colon
     * and the blanks trimmed off): one look for both. */
    if (memchr(line, '\0', n)) return 0;
    const char *name = line, *value = colon + 1;
    size_t nlen = (size_t)(colon - line), vlen = n - nlen - 1;
    ascii_trim_field(&name, &nlen);
    ascii_trim_field(&value, &vlen);
    if (nlen == 0) return 0;
    if (x->nheaders >= MAX_HEADERS) return -1;
    if (nlen == 16 && strncasecmp(name, "Content-Encoding", 16) == 0) x->encoded = 1;
    /* "name\0value\0" in one reservation (a response's headers usually fit in the
     * first), and a NUL after it as buf_append keeps. */
    struct buf *b = &x->hdrbuf;
    size_t more = nlen + vlen + 3;
    if (!b->p && buf_reserve(b, more > HEADERS_FIRST ? more : HEADERS_FIRST) < 0)
        return out_of_memory(x);
    if (buf_reserve(b, more) < 0) return out_of_memory(x);
    char *p = b->p + b->n;
    memcpy(p, name, nlen);
    p[nlen] = '\0';
    memcpy(p + nlen + 1, value, vlen);
    p[nlen + 1 + vlen] = '\0';
    p[nlen + vlen + 2] = '\0';
    b->n += nlen + vlen + 2;
    x->nheaders++;
    return 0;
}

/* A Set-Cookie line's value kept for the request's jar (http_take_cookies); -1 when
 * out of memory. */
static int keep_set_cookie(http_xfer_t *x, const char *value, size_t n)
{
    ascii_trim_field(&value, &n);
    if (memchr(value, '\0', n)) return 0; /* no cookie: curl would cut it there */
    if (buf_append(&x->set_cookies, value, n) < 0 || buf_append(&x->set_cookies, "", 1) < 0)
        return out_of_memory(x);
    x->nset_cookies++;
    return 0;
}

void http_take_cookies(http_xfer_t *x)
{
    /* Of the lines kept, the last ones, as many as curl counts among the server's
     * headers of the hop's last request (its response and any 1xx before it): not a
     * proxy's CONNECT response, which comes before them, nor an earlier request's
     * (curl sends a request again when a kept-alive connection turns out dead).
     * Trailers are never kept (http_on_header). */
    struct curl_header *h;
    size_t n = 0;
    if (x->nset_cookies &&
        curl_easy_header(x->easy, "Set-Cookie", 0, CURLH_HEADER | CURLH_1XX, -1, &h) == CURLHE_OK)
        n = h->amount < x->nset_cookies ? h->amount : x->nset_cookies;
    const char *lines = x->set_cookies.p;
    for (size_t skip = x->nset_cookies - n; skip; skip--)
        lines += strlen(lines) + 1;
    cookies_take(x->req->cookies, x->url, lines, n);
    x->set_cookies.n = 0;
    x->nset_cookies = 0;
}

/* At the end of a response's headers: the decoder for its Content-Encoding (the
 * values of every such header, in order). A coding we cannot undo fails the
 * transfer only when body bytes come (http_on_body): a redirect or a HEAD has none.
 * -1 when out of memory. */
static int setup_decoder(http_xfer_t *x)
{
    char ce[512];
    size_t len = 0;
    const char *p = x->hdrbuf.p;
    http_decoder_free(x->decoder);
    x->decoder = NULL;
    x->decode_refused = 0;
    if (!x->encoded) return 0; /* most responses: nothing to look for */
    for (int i = 0; p && i < x->nheaders; i++) {
        const char *name = p, *value = p + strlen(p) + 1;
        p = value + strlen(value) + 1;
        if (strcasecmp(name, "Content-Encoding") != 0) continue;
        int w = snprintf(ce + len, sizeof(ce) - len, "%s%s", len ? ", " : "", value);
        if (w < 0 || (size_t)w >= sizeof(ce) - len) {
            http_set_message(x, "Content-Encoding longer than %zu bytes", sizeof(ce) - 1);
            x->decode_refused = 1;
            return 0;
        }
        len += (size_t)w;
    }
    if (!len) return 0;
    char err[256];
    int rc = http_decoder_new(ce, &x->decoder, err, sizeof(err));
    if (rc == -2) return out_of_memory(x);
    if (rc < 0) {
        http_set_message(x, "%s", err);
        x->decode_refused = 1;
    }
    return 0;
}

/* CURLOPT_HEADERFUNCTION: one header line at a time, status lines included. */
size_t http_on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    http_xfer_t *x = arg;
    size_t n = size * nmemb;
    x->header_bytes += n;
    if (x->header_bytes > x->req->max_header) {
        x->aborted = ABORT_HEADER;
        return 0;
    }
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        /* A new response (after 100 Continue, say): forget the earlier headers. */
        x->hdrbuf.n = 0;
        x->nheaders = 0;
        x->encoded = 0;
        x->headers_done = 0;
        if (x->capture) http_capture_response(x->capture);
        if (x->capture) http_capture_head(x->capture, data, n);
        return n;
    }
    if (x->capture && !x->headers_done) http_capture_head(x->capture, data, n);
    /* The jar's lines (http_cookies.c); the first letter spares most lines the compare. */
    if (x->req->cookies && !x->headers_done && n > 11 && (data[0] | 0x20) == 's' &&
        strncasecmp(data, "Set-Cookie:", 11) == 0 && keep_set_cookie(x, data + 11, n - 11) < 0)
        return 0;
    if ((n == 2 && data[0] == '\r' && data[1] == '\n') || (n == 1 && data[0] == '\n')) {
        if (x->headers_done) return n; /* after a chunked body's trailers */
        x->headers_done = 1;           /* the end of the block: only now is it whole */
        return setup_decoder(x) < 0 ? 0 : n;
    }
    if (store_header(x, data, n) < 0) {
        if (x->aborted != ABORT_MEMORY) x->aborted = ABORT_HEADER;
        return 0;
    }
    return n;
}

/* A transfer curl ended as a success may still be cut short: inside its header block
 * (curl 7.88 takes a connection closed there for the end of a response with no
 * body), or inside a compressed body whose Content-Length matched the bytes sent.
 * 0 when whole, else -1 with the error set. */
int http_check_whole(http_xfer_t *x)
{
    if (!x->headers_done) {
        http_fail(x, HTTP_E_PROTOCOL, "response cut short inside its headers (%zu bytes came)",
                  x->header_bytes);
        return -1;
    }
    char err[256];
    if (x->aborted != ABORT_TRUNCATED && http_decoder_finish(x->decoder, err, sizeof(err)) < 0) {
        http_fail(x, HTTP_E_PROTOCOL, "%s", err);
        return -1;
    }
    return 0;
}

void http_response_restart(http_xfer_t *x)
{
    x->body.n = 0;
    x->hdrbuf.n = 0;
    x->nheaders = 0;
    x->encoded = 0;
    x->header_bytes = 0;
    x->headers_done = 0;
    http_decoder_free(x->decoder);
    x->decoder = NULL;
    x->decode_refused = 0;
}

/* ---- completion ---- */

static const char *version_name(long v)
{
    switch (v) {
    case CURL_HTTP_VERSION_1_0:
        return "1.0";
    case CURL_HTTP_VERSION_2_0:
        return "2";
    case CURL_HTTP_VERSION_3:
        return "3";
    default:
        return "1.1";
    }
}

static double info_time(CURL *easy, CURLINFO what)
{
    curl_off_t us = 0;
    curl_easy_getinfo(easy, what, &us);
    return (double)us / 1e6;
}

void http_xfer_free(http_xfer_t *x)
{
    http_stop_dns_deadline(x);
    http_pool_put(x);
    http_url_parts_free(&x->parts); /* those the pool did not take */
    curl_slist_free_all(x->resolve);
    curl_slist_free_all(x->sent_headers);
    http_req_free(x->req);
    free(x->url);
    free(x->host);
    free(x->proxy_host);
    x->http->held -= x->body.cap;
    buf_free(&x->body);
    buf_free(&x->hdrbuf);
    buf_free(&x->set_cookies);
    http_decoder_free(x->decoder);
    http_capture_free(x->capture);
    free(x->message);
    free(x);
}

/* Report the result to the caller and free the transfer. */
void http_finish(http_xfer_t *x)
{
    http_t *http = x->http;
    http_res_t res = {0};
    http_header_t *headers = NULL;
    /* The header list first: a response without its headers must not pass as whole. */
    if (x->easy && x->error == HTTP_OK && x->nheaders &&
        !(headers = calloc((size_t)x->nheaders, sizeof(*headers))))
        http_fail(x, HTTP_E_MEMORY, "out of memory");
    if (x->capture && x->error == HTTP_OK && http_capture_failed(x->capture))
        http_fail(x, HTTP_E_MEMORY, "out of memory keeping the exchange for the archive");
    res.error = x->error;
    res.message = x->message            ? x->message
                  : x->error == HTTP_OK ? ""
                                        : "out of memory for the message of this error";
    res.url = x->url;
    res.redirects = x->redirects;
    res.t_dns = x->dns_time;
    res.truncated = x->aborted == ABORT_TRUNCATED;
    res.http_version = "1.1";
    res.ip = "";
    res.xfer = x;
    if (x->easy && x->error == HTTP_OK) {
        long version = 0;
        char *ip = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &res.status);
        curl_easy_getinfo(x->easy, CURLINFO_HTTP_VERSION, &version);
        curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_IP, &ip);
        res.http_version = version_name(version);
        if (ip) res.ip = ip;
        if (x->capture) http_capture_end(x->capture, res.ip, res.truncated);
        double dns = x->dns_time;
        double connect = info_time(x->easy, CURLINFO_CONNECT_TIME_T);
        double tls = info_time(x->easy, CURLINFO_APPCONNECT_TIME_T);
        res.t_connect = connect > 0 ? dns + connect : 0;
        res.t_tls = tls > 0 ? dns + tls : 0;
        res.t_ttfb = dns + info_time(x->easy, CURLINFO_STARTTRANSFER_TIME_T);
        res.t_total = dns + info_time(x->easy, CURLINFO_TOTAL_TIME_T);
        res.body = x->body.p ? x->body.p : "";
        res.body_len = x->body.n;
        if (headers) {
            const char *p = x->hdrbuf.p;
            for (int i = 0; i < x->nheaders; i++) {
                headers[i].name = p;
                p += strlen(p) + 1;
                headers[i].value = p;
                p += strlen(p) + 1;
            }
            res.nheaders = x->nheaders;
            res.headers = headers;
        }
        http->stats.bytes += x->body.n;
    } else { /* curl's timings (above) when it has them, else the clock's */
        res.t_total = loop_time() - x->started;
    }
    if (x->error == HTTP_OK)
        http->stats.completed++;
    else
        http->stats.failed++;
    http->stats.active--;
    x->state = X_DONE;
    loop_unref(http->loop);
    x->fn(x->arg, &res);
    free(headers);
    http_xfer_free(x);
}

char *http_res_take_body(const http_res_t *res)
{
    http_xfer_t *x = res->xfer;
    if (!x->body.p || x->body.n == 0) return NULL;
    /* NUL-terminated, as a Lua string would be, for whoever reads it as one; what
     * buffer growth left unused is given back when it is much. */
    size_t len = x->body.n;
    if (x->body.cap - len > len / 8 || x->body.cap == len) {
        char *d = realloc(x->body.p, len + 1);
        if (!d) return NULL; /* the body stays with the transfer: the response has none */
        x->http->held -= x->body.cap - (len + 1);
        x->body.p = d;
        x->body.cap = len + 1;
    }
    char *data = x->body.p;
    data[len] = '\0';
    x->http->held -= x->body.cap; /* the caller's now */
    memset(&x->body, 0, sizeof(x->body));
    return data;
}

http_capture_t *http_res_take_capture(const http_res_t *res)
{
    http_xfer_t *x = res->xfer;
    http_capture_t *c = x->capture;
    x->capture = NULL;
    return c;
}

static void finish_deferred(loop_t *loop, void *arg)
{
    (void)loop;
    http_xfer_t *x = arg;
    if (x->state == X_DONE) { /* cancelled while waiting to be reported */
        http_xfer_free(x);
        return;
    }
    http_finish(x);
}

/* http_finish() on the next turn. -1, x untouched, when out of memory: finishing now
 * instead would run the completion inside http_start. */
int http_finish_later(http_xfer_t *x)
{
    if (loop_defer(x->http->loop, finish_deferred, x) < 0) return -1;
    x->state = X_DEFERRED;
    return 0;
}

/* ---- curl callbacks ---- */
