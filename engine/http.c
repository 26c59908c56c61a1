/* http.c: transfers on one curl multi handle, driven by curl_multi_socket_action
 * from loop watchers and one loop timer. A transfer goes DNS -> curl -> (redirect ->
 * DNS -> curl ...) -> completion. Completions are reported from the loop's own
 * callbacks after curl has returned, never from inside a curl callback. The request
 * a transfer carries is built, and turned into curl options, by http_request.c. */
#include "http.h"

#include "buf.h"
#include "curl_probe.h"
#include "http_capture.h"
#include "http_decode.h"
#include "http_errors.h"
#include "http_fuzz.h"
#include "http_headers.h"
#include "http_request.h"
#include "proxy_env.h"
#include "url.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <sys/resource.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#define MAX_HEADERS 1000
#define POOL_MAX 64
#define MAX_IDLE_CONNECTIONS 256
#define RECV_BUFFER_SIZE 65536L /* curl's receive buffer: 16 KB by default */
#define HEADERS_FIRST 2048      /* bytes of "name\0value\0" room for a response at first */

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

struct http_xfer {
    http_t *http;
    http_req_t *req;
    http_fn fn;
    void *arg;
    enum xfer_state state;
    CURL *easy;
    cookies_t *easy_jar;      /* the jar easy is on (a reference, join_jar); NULL: none */
    int easy_base;            /* easy holds the base options and a plain request's (setup_easy) */
    int attempts;             /* of this hop's request: more than one when curl retried it */
    size_t set_cookies;       /* Set-Cookie lines this hop's responses had, for easy_jar */
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
    CURLU *uh; /* this hop's URL in parts, when it is in normalized form */
    struct curl_slist *resolve;
    int redirects;
    double started, hop_started, dns_time;
    /* the response being assembled */
    struct buf body;
    struct buf hdrbuf; /* "name\0value\0" pairs */
    size_t header_bytes;
    int nheaders;
    int headers_done;        /* the last response's header block ended (its empty line) */
    http_decoder_t *decoder; /* undoes the response's Content-Encoding; NULL: none */
    int decode_refused;      /* its Content-Encoding cannot be undone (message set) */
    int encoded;             /* a Content-Encoding is among the headers (setup_decoder) */
    http_capture_t *capture; /* the bytes as sent and received (http_req_archive); NULL: none */
    enum abort_reason aborted;
    enum http_error error;
    char message[CURL_ERROR_SIZE + 256];
    char errbuf[CURL_ERROR_SIZE];
    char denied[160]; /* why on_open_socket refused this hop's connection; "": it did not */
    int sock_errno;   /* EMFILE/ENFILE: on_open_socket could not make a socket; 0: none */
};

/* An easy handle between transfers, with what it holds (as http_xfer_t's easy_base
 * and easy_jar: the jar's reference goes with the handle). */
struct pooled {
    CURL *easy;
    int base;
    cookies_t *jar;
};

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
    double dns_pruned;     /* when curl last pruned its DNS cache (setup_easy) */
    addr_policy_t *policy; /* the engine's (http_set_policy); NULL: none */
    size_t held;           /* bytes of body buffers of the transfers in progress */
    http_budget_fn budget;
    void *budget_arg;
    http_stats_t stats;
};

static int start_hop(http_xfer_t *x, double now);
static void check_done(http_t *http);
static void end_stalled(http_t *http, CURLMcode mc);

const char *http_error_name(enum http_error e)
{
    static const char *const names[] = {
        "ok",        "invalid_url", "dns",       "connect", "tls",    "timeout",
        "too_large", "protocol",    "cancelled", "memory",  "denied", "resource",
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == HTTP_E_COUNT, "a name for each kind");
    return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "protocol";
}

/* ---- completion ---- */

static void fail(http_xfer_t *x, enum http_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(http_xfer_t *x, enum http_error e, const char *fmt, ...)
{
    va_list ap;
    x->error = e;
    va_start(ap, fmt);
    vsnprintf(x->message, sizeof(x->message), fmt, ap);
    va_end(ap);
}

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

/* A handle on a jar goes back to the engine's share, with curl's cookie engine off
 * (CURLOPT_COOKIEFILE NULL also drops a list of files not read yet, which would
 * give the handle a jar of its own): no later request on it sends or keeps
 * cookies, and the jar can go. Before any curl_easy_reset too, which in curl 7.88
 * leaves the handle on its share and loses the list of cookie files. */
static void leave_jar(http_t *http, CURL *easy, cookies_t **jar)
{
    if (!*jar) return;
    curl_easy_setopt(easy, CURLOPT_SHARE, http->share);
    curl_easy_setopt(easy, CURLOPT_COOKIEFILE, NULL);
    cookies_unref(*jar); /* after the handle left its share: the jar may go now */
    *jar = NULL;
}

/* x's handle on the jar of its request (NULL: none), with curl's cookie engine on: at
 * each hop curl sends what the jar holds for the hop's URL and keeps what the
 * response sets. A handle stays on its jar between transfers (the pool keeps it
 * there), so that the jar's next request needs nothing set. -1 when an option did
 * not take (the handle is then on the jar: leave_jar takes it off). */
static int join_jar(http_xfer_t *x, cookies_t *jar)
{
    if (x->easy_jar == jar) return 0;
    leave_jar(x->http, x->easy, &x->easy_jar);
    if (!jar) return 0;
    x->easy_jar = cookies_ref(jar);
    int bad = curl_easy_setopt(x->easy, CURLOPT_SHARE, cookies_share(jar)) != CURLE_OK;
    bad |= curl_easy_setopt(x->easy, CURLOPT_COOKIEFILE, "") != CURLE_OK;
    return bad ? -1 : 0;
}

/* x's handle back to curl's defaults, off any jar. */
static void reset_easy(http_xfer_t *x)
{
    leave_jar(x->http, x->easy, &x->easy_jar);
    curl_easy_reset(x->easy);
    x->easy_base = 0;
}

/* A handle for a request with jar (NULL: none): the last one given back, unless a
 * handle that holds the base options and is on that jar is in the pool (the
 * newest such). NULL when out of memory. */
static CURL *get_easy(http_t *http, cookies_t *jar, int *base, cookies_t **easy_jar)
{
    *base = 0;
    *easy_jar = NULL;
    if (http->npool == 0) return curl_easy_init();
    int i = http->npool - 1;
    for (int j = i; j >= 0; j--) {
        if (http->pool[j].base && http->pool[j].jar == jar) {
            i = j;
            break;
        }
    }
    struct pooled p = http->pool[i];
    http->pool[i] = http->pool[--http->npool];
    *base = p.base;
    *easy_jar = p.jar;
    return p.easy;
}

/* curl 7.88 counts the times it sends a request again on a new connection (when a
 * kept-alive one turns out dead) per handle, and only curl_easy_reset zeroes the
 * count: a handle kept for its options would fail its sixth such retry, whichever
 * transfer it fell in ("Connection died, tried 5 times"). A handle whose transfer
 * was retried is therefore reset before it serves again. */
static int keeps_options(const http_xfer_t *x)
{
    return x->easy_base && x->attempts <= 1;
}

/* x's handle back to the pool: with its options and its jar when they are a plain
 * request's (the next plain request sets only its own), else reset to curl's
 * defaults. */
static void release_easy(http_xfer_t *x)
{
    http_t *http = x->http;
    if (!x->easy) return;
    curl_easy_setopt(x->easy, CURLOPT_CURLU, NULL); /* the transfer's, freed next */
    if (!keeps_options(x)) reset_easy(x);
    if (http->npool < POOL_MAX) {
        http->pool[http->npool++] = (struct pooled){x->easy, x->easy_base, x->easy_jar};
    } else {
        curl_easy_cleanup(x->easy); /* which takes it off its share */
        cookies_unref(x->easy_jar);
    }
    x->easy = NULL;
    x->easy_jar = NULL;
}

static void stop_dns_deadline(http_xfer_t *x)
{
    if (x->dns_deadline) loop_timer_cancel(x->http->loop, x->dns_deadline);
    x->dns_deadline = NULL;
}

static void free_xfer(http_xfer_t *x)
{
    stop_dns_deadline(x);
    release_easy(x);
    curl_url_cleanup(x->uh);
    curl_slist_free_all(x->resolve);
    http_req_free(x->req);
    free(x->url);
    free(x->host);
    free(x->proxy_host);
    x->http->held -= x->body.cap;
    buf_free(&x->body);
    buf_free(&x->hdrbuf);
    http_decoder_free(x->decoder);
    http_capture_free(x->capture);
    free(x);
}

/* Report the result to the caller and free the transfer. */
static void finish(http_xfer_t *x)
{
    http_t *http = x->http;
    http_res_t res = {0};
    http_header_t *headers = NULL;
    /* The header list first: a response without its headers must not pass as whole. */
    if (x->easy && x->error == HTTP_OK && x->nheaders &&
        !(headers = calloc((size_t)x->nheaders, sizeof(*headers))))
        fail(x, HTTP_E_MEMORY, "out of memory");
    if (x->capture && x->error == HTTP_OK && http_capture_failed(x->capture))
        fail(x, HTTP_E_MEMORY, "out of memory keeping the exchange for the archive");
    res.error = x->error;
    res.message = x->message;
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
    free_xfer(x);
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
        free_xfer(x);
        return;
    }
    finish(x);
}

/* finish() on the next turn. -1, x untouched, when out of memory: finishing now
 * instead would run the completion inside http_start. */
static int finish_later(http_xfer_t *x)
{
    if (loop_defer(x->http->loop, finish_deferred, x) < 0) return -1;
    x->state = X_DEFERRED;
    return 0;
}

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
            fail(x, HTTP_E_MEMORY,
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
static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
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
        char err[sizeof(x->message)];
        int r = http_decoder_feed(x->decoder, data, n, keep_body, x, err, sizeof(err));
        if (r < 0) {
            fail(x, HTTP_E_PROTOCOL, "%s", err);
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
static int on_prereq(void *arg, char *ip, char *local_ip, int port, int local_port)
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
static int on_debug(CURL *easy, curl_infotype type, char *data, size_t size, void *arg)
{
    (void)easy;
    http_xfer_t *x = arg;
    if (type == CURLINFO_HEADER_OUT || type == CURLINFO_DATA_OUT)
        http_capture_request(x->capture, data, size);
    return 0;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r' ||
                  (*s)[*n - 1] == '\n'))
        (*n)--;
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
        trim(&line, &n);
        x->hdrbuf.n--; /* reopen the last value */
        if (buf_append(&x->hdrbuf, " ", 1) < 0 || buf_append(&x->hdrbuf, line, n) < 0 ||
            buf_append(&x->hdrbuf, "", 1) < 0)
            return out_of_memory(x);
        return 0;
    }
    const char *colon = memchr(line, ':', n);
    if (!colon) return 0; /* not a header line: ignore it, as browsers do */
    const char *name = line, *value = colon + 1;
    size_t nlen = (size_t)(colon - line), vlen = n - nlen - 1;
    trim(&name, &nlen);
    trim(&value, &vlen);
    if (nlen == 0 || memchr(name, '\0', nlen) || memchr(value, '\0', vlen)) return 0;
    if (x->nheaders >= MAX_HEADERS) return -1;
    if (nlen == 16 && strncasecmp(name, "Content-Encoding", 16) == 0) x->encoded = 1;
    /* A response's headers usually fit in the first allocation. */
    if (!x->hdrbuf.p && buf_reserve(&x->hdrbuf, HEADERS_FIRST) < 0) return out_of_memory(x);
    if (buf_append(&x->hdrbuf, name, nlen) < 0 || buf_append(&x->hdrbuf, "", 1) < 0 ||
        buf_append(&x->hdrbuf, value, vlen) < 0 || buf_append(&x->hdrbuf, "", 1) < 0)
        return out_of_memory(x);
    x->nheaders++;
    return 0;
}

/* At the end of a response's headers: the decoder for its Content-Encoding (the
 * values of every such header, in order). A coding we cannot undo fails the
 * transfer only when body bytes come (on_body): a redirect or a HEAD has none.
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
            snprintf(x->message, sizeof(x->message), "Content-Encoding longer than %zu bytes",
                     sizeof(ce) - 1);
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
        snprintf(x->message, sizeof(x->message), "%s", err);
        x->decode_refused = 1;
    }
    return 0;
}

/* CURLOPT_HEADERFUNCTION: one header line at a time, status lines included. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
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
    if (n > 11 && strncasecmp(data, "Set-Cookie:", 11) == 0) x->set_cookies++;
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

/* CURLOPT_RESOLVER_START_FUNCTION: curl must never resolve a name by itself; every
 * name it connects to is in CURLOPT_RESOLVE. IP literals need no resolving. */
static int on_resolver_start(void *resolver_state, void *reserved, void *arg)
{
    (void)resolver_state;
    (void)reserved;
    http_xfer_t *x = arg;
    return x->literal ? 0 : 1;
}

/* CURLOPT_OPENSOCKETFUNCTION: the address policy's backstop, on the address curl is
 * about to connect to. take_answer already left denied addresses out of
 * CURLOPT_RESOLVE, so this refuses only what came another way (a cached connection
 * setup, a curl change). Through a proxy the address is the proxy's, which the
 * caller named: not checked (http.h). curl tries the next address, if any, and
 * reports CURLE_COULDNT_CONNECT; map_curl_error makes that HTTP_E_DENIED. */
static curl_socket_t on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    http_xfer_t *x = arg;
    if (purpose == CURLSOCKTYPE_IPCXN && !x->proxy) {
        const char *why = addr_policy_check_sa(x->http->policy, &a->addr);
        if (!why) why = addr_policy_check_sa(x->req->policy, &a->addr);
        if (why) {
            char ip[INET6_ADDRSTRLEN] = "?";
            const void *in = NULL;
            if (a->family == AF_INET) in = &((struct sockaddr_in *)(void *)&a->addr)->sin_addr;
            if (a->family == AF_INET6) in = &((struct sockaddr_in6 *)(void *)&a->addr)->sin6_addr;
            if (in) inet_ntop(a->family, in, ip, sizeof(ip));
            snprintf(x->denied, sizeof(x->denied),
                     "connection to %s denied by the address policy (%s)", ip, why);
            return CURL_SOCKET_BAD;
        }
    }
    curl_socket_t fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    /* Out of descriptors: curl would say only "Couldn't connect" (map_curl_error). */
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) x->sock_errno = errno;
    return fd;
}

/* ---- the multi handle on the loop ---- */

/* Let curl act on fd (CURL_SOCKET_TIMEOUT: on its timers), vouching for the socket
 * probes it makes meanwhile (curl_probe.h), then report the transfers it finished. */
static void socket_action(http_t *http, curl_socket_t fd, int flags)
{
    int running = 0;
    lc_probe_vouch(http->loop, 1);
    CURLMcode mc = curl_multi_socket_action(http->multi, fd, flags, &running);
    lc_probe_vouch(http->loop, 0);
    end_stalled(http, mc);
    check_done(http);
}

static void on_sock_io(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    int flags = 0;
    if (events & LOOP_READ) flags |= CURL_CSELECT_IN;
    if (events & LOOP_WRITE) flags |= CURL_CSELECT_OUT;
    if (events & LOOP_ERROR) flags |= CURL_CSELECT_ERR;
    socket_action(arg, fd, flags);
}

/* CURLMOPT_SOCKETFUNCTION. A socket the loop cannot watch (out of memory, or of
 * epoll's watches) would stall its transfer until its timeout: the transfer is
 * marked, and ended once curl has returned (end_stalled). Returning -1 instead
 * would make curl 7.88 give up the whole multi handle. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)socketp;
    http_t *http = userp;
    int events = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) events |= LOOP_READ;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) events |= LOOP_WRITE;
    if (!events) { /* most often a connection going back to the pool, soon used again */
        loop_park(http->loop, fd);
    } else if (loop_watch(http->loop, fd, events, on_sock_io, http) < 0) {
        int err = errno ? errno : ENOMEM;
        http_xfer_t *x = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        if (x && !x->unwatched) x->unwatched = err;
        http->unwatched = 1;
    }
    return 0;
}

/* CURLOPT_CLOSESOCKETFUNCTION: a parked socket must be forgotten before it closes,
 * or a new socket given the same number could be taken as still registered. */
static int on_close_socket(void *arg, curl_socket_t fd)
{
    http_t *http = arg;
    loop_forget(http->loop, fd);
    return close(fd);
}

static void on_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    http_t *http = arg;
    http->timer = NULL;
    socket_action(http, CURL_SOCKET_TIMEOUT, 0);
}

static void on_timeout_deferred(loop_t *loop, void *arg)
{
    http_t *http = arg;
    http->timeout_deferred = 0;
    on_timeout(loop, arg);
}

/* CURLMOPT_TIMERFUNCTION: -1 deletes the timer; 0 means act now, which we do on the
 * next turn of the loop rather than with a 1 ms timer. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    http_t *http = userp;
    if (http->timer) {
        loop_timer_cancel(http->loop, http->timer);
        http->timer = NULL;
    }
    if (timeout_ms == 0) {
        if (http->timeout_deferred) return 0;
        if (loop_defer(http->loop, on_timeout_deferred, http) == 0) {
            http->timeout_deferred = 1;
            return 0;
        }
        /* out of memory for a deferred call: a timer does the same a little later */
    }
    if (timeout_ms >= 0) {
        http->timer = loop_timer_add(http->loop, (double)timeout_ms / 1000.0, on_timeout, http);
        /* Without its timer curl never acts on a timeout or a retry; as for
         * on_socket, -1 would end the multi handle: end_stalled acts instead. */
        if (!http->timer) http->timer_lost = 1;
    }
    return 0;
}

/* ---- transfers curl cannot drive ---- */

/* x goes to curl: 0, or curl's refusal (x untouched). */
static CURLMcode attach(http_t *http, http_xfer_t *x)
{
    CURLMcode mc = curl_multi_add_handle(http->multi, x->easy);
    if (mc != CURLM_OK) return mc;
    x->prev = NULL;
    x->next = http->in_curl;
    if (x->next) x->next->prev = x;
    http->in_curl = x;
    return CURLM_OK;
}

/* x comes back from curl (done, cancelled or stalled); the jar, which curl stored
 * the hop's cookies in, is told how many there may have been (its caps). */
static void detach(http_t *http, http_xfer_t *x)
{
    curl_multi_remove_handle(http->multi, x->easy);
    if (x->set_cookies && x->easy_jar) cookies_added(x->easy_jar, x->host, x->set_cookies);
    x->set_cookies = 0;
    if (x->prev)
        x->prev->next = x->next;
    else
        http->in_curl = x->next;
    if (x->next) x->next->prev = x->prev;
    x->prev = x->next = NULL;
}

static enum http_error kind_of_errno(int err)
{
    return err == ENOMEM || err == ENOSPC ? HTTP_E_MEMORY : HTTP_E_CONNECT;
}

/* After a call into curl: end with an error the transfers it can no longer drive,
 * which would otherwise stall until their timeouts (or for good, without a timer).
 * Those whose socket the loop could not watch (on_socket); every one when the
 * timer was lost (on_timer) or curl itself failed (mc: out of memory keeping
 * track of a socket, say), since which transfer it was cannot be told. One at a
 * time from the head of the list: a completion may end others. None of this
 * happens but when memory or descriptors run out. */
static void end_stalled(http_t *http, CURLMcode mc)
{
    int all = http->timer_lost || (mc != CURLM_OK && mc != CURLM_BAD_SOCKET);
    if (!all && !http->unwatched) return;
    http->timer_lost = http->unwatched = 0;
    for (;;) {
        http_xfer_t *x = http->in_curl;
        while (x && !all && !x->unwatched)
            x = x->next;
        if (!x) break;
        detach(http, x);
        if (x->unwatched)
            fail(x, kind_of_errno(x->unwatched), "cannot watch the connection's socket: %s",
                 strerror(x->unwatched));
        else if (mc != CURLM_OK && mc != CURLM_BAD_SOCKET)
            fail(x, mc == CURLM_OUT_OF_MEMORY ? HTTP_E_MEMORY : HTTP_E_PROTOCOL, "curl: %s",
                 curl_multi_strerror(mc));
        else
            fail(x, HTTP_E_MEMORY, "out of memory for curl's timer");
        finish(x);
    }
}

/* ---- per-hop setup ---- */

static int parse_url(http_xfer_t *x, const char *url, char **host, int *port, int proxy)
{
    size_t max_url = x->req ? x->req->max_url : HTTP_MAX_URL, len = strlen(url);
    if (!proxy && len > max_url) {
        fail(x, HTTP_E_INVALID_URL, "URL longer than %zu bytes", max_url);
        return -1;
    }
    const char *fast_host;
    size_t fast_len;
    if (!proxy) x->normal = 0;
    if (!proxy && url_host_port_fast(url, len, &fast_host, &fast_len, port)) {
        /* A URL in normalized form (most are: the link extractors give them) needs
         * no parse by curl. */
        x->normal = 1;
        *host = strndup(fast_host, fast_len);
        if (*host) return 0;
        fail(x, HTTP_E_MEMORY, "out of memory");
        return -1;
    }
    CURLU *u = curl_url();
    char *scheme = NULL, *h = NULL, *p = NULL;
    int rc = -1;
    if (!u) {
        fail(x, HTTP_E_MEMORY, "out of memory");
        return -1;
    }
    unsigned flags = proxy ? CURLU_GUESS_SCHEME : 0;
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, flags);
    if (uc) {
        fail(x, HTTP_E_INVALID_URL, "invalid URL: %s", curl_url_strerror(uc));
        goto out;
    }
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OUT_OF_MEMORY) {
        fail(x, HTTP_E_MEMORY, "out of memory");
        goto out;
    }
    if (!proxy && (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))) {
        fail(x, HTTP_E_INVALID_URL, "refused scheme '%s': only http and https are fetched",
             scheme ? scheme : "");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_HOST, &h, 0) || !h || !*h) {
        fail(x, HTTP_E_INVALID_URL, "invalid URL: no host");
        goto out;
    }
    /* Without a port (out of memory, say) it would be taken as 80, even for https. */
    if (curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OUT_OF_MEMORY) {
        fail(x, HTTP_E_MEMORY, "out of memory");
        goto out;
    }
    *port = p ? atoi(p) : 80;
    if (proxy && !p) *port = 1080;
    *host = h;
    h = NULL;
    rc = 0;
out:
    curl_free(scheme);
    curl_free(h);
    curl_free(p);
    curl_url_cleanup(u);
    return rc;
}

static int is_literal(const char *host)
{
    unsigned char buf[16];
    char tmp[64];
    size_t n = strlen(host);
    if (n > 2 && n < sizeof(tmp) && host[0] == '[') {
        memcpy(tmp, host + 1, n - 2);
        tmp[n - 2] = '\0';
        return inet_pton(AF_INET6, tmp, buf) == 1;
    }
    return inet_pton(AF_INET, host, buf) == 1;
}

/* What denies addr (text) to x: the engine's address policy or the request's. */
static const char *policy_denies(const http_xfer_t *x, const char *addr)
{
    const char *why = addr_policy_check(x->http->policy, addr);
    return why ? why : addr_policy_check(x->req->policy, addr);
}

/* An IP-literal host the address policy denies fails x: 1 then, else 0. */
static int literal_denied(http_xfer_t *x)
{
    const char *why = policy_denies(x, x->host);
    if (!why) return 0;
    fail(x, HTTP_E_DENIED, "address %s denied by the address policy (%s)", x->host, why);
    return 1;
}

/* The answer as a CURLOPT_RESOLVE entry; with check, less the addresses the address
 * policy denies (the target's: a proxy's address is the caller's choice). -1 when
 * out of memory; -2, x failed, when the policy denies every address. */
static int add_resolve(http_xfer_t *x, const char *host, int port, const dns_answer_t *ans,
                       int check)
{
    size_t n = strlen(host) + 16;
    for (int i = 0; i < ans->naddrs; i++)
        n += strlen(ans->addrs[i]) + 3;
    char *entry = malloc(n);
    if (!entry) return -1;
    size_t off = (size_t)snprintf(entry, n, "+%s:%d:", host, port);
    int kept = 0, denied = -1;
    const char *why = NULL;
    for (int i = 0; i < ans->naddrs; i++) {
        const char *w = check ? policy_denies(x, ans->addrs[i]) : NULL;
        if (w) {
            if (denied < 0) denied = i, why = w;
            continue;
        }
        int v6 = strchr(ans->addrs[i], ':') != NULL;
        off += (size_t)snprintf(entry + off, n - off, "%s%s%s%s", kept++ ? "," : "", v6 ? "[" : "",
                                ans->addrs[i], v6 ? "]" : "");
    }
    if (!kept && denied >= 0) {
        free(entry);
        fail(x, HTTP_E_DENIED, "address %s of %s denied by the address policy (%s)",
             ans->addrs[denied], host, why);
        return -2;
    }
    struct curl_slist *l = curl_slist_append(x->resolve, entry);
    free(entry);
    if (!l) return -1;
    x->resolve = l;
    return 0;
}

/* The options every transfer has, whatever its request; -1 when one did not take.
 *
 * curl_easy_setopt fails for an unknown option or a value of the wrong kind (the
 * tests meet those), and for lack of memory, which only the options curl copies
 * (strings) can meet: those results are checked here and in setup_easy. An option
 * that did not take leaves the handle's earlier value, so that a pooled handle
 * would send this request to the last one's URL, proxy or method. */
static int setup_base(CURL *e, http_t *http)
{
    int bad = 0;
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_SHARE, http->share);
    bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK;
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    /* The codings http_decode.c undoes, asked for; curl must not decode them itself:
     * its decoders take a stream cut short for a whole one. */
    bad |= curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, http_decode_accept()) != CURLE_OK;
    curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, http);
    curl_easy_setopt(e, CURLOPT_RESOLVER_START_FUNCTION, on_resolver_start);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    /* Most pages fit in one read: one recv and no poll for more after it. */
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, RECV_BUFFER_SIZE);
    /* No proxy unless setup_easy names one: the environment's proxy variables were
     * read once (proxy_env.h); curl would read them again for every transfer. */
    bad |= curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_NOPROXY, "") != CURLE_OK;
    return bad ? -1 : 0;
}

/* x->url in parts, for CURLOPT_CURLU, when parse_url found it in normalized form
 * and it has no fragment and no '%': curl then copies the parts instead of parsing
 * the URL and putting it back together for every transfer (a sizeable share of a
 * transfer's instructions). curl 7.88 lower-cases the escapes of a part it
 * is given, which would change the request, hence no '%'. NULL for any other URL,
 * or out of memory: curl parses it. */
static CURLU *url_handle(const http_xfer_t *x)
{
    const char *url = x->url;
    if (!x->normal || strpbrk(url, "%#")) return NULL;
    /* Host and port as parse_url took them; the path from the '/' after them. */
    const char *host_end = url + (url[4] == 's' ? 8 : 7) + strlen(x->host);
    const char *path = strchr(host_end, '/'), *query = strchr(path, '?');
    char p[URL_MAX_LENGTH + 1], port[8];
    size_t pn = query ? (size_t)(query - path) : strlen(path);
    memcpy(p, path, pn);
    p[pn] = '\0';
    /* The port as the URL writes it (normalized: digits, no leading zero). */
    size_t portn = *host_end == ':' ? (size_t)(path - host_end - 1) : 0;
    if (portn >= sizeof(port)) return NULL;
    memcpy(port, host_end + 1, portn);
    port[portn] = '\0';
    CURLU *u = curl_url();
    if (!u || curl_url_set(u, CURLUPART_SCHEME, url[4] == 's' ? "https" : "http", 0) ||
        curl_url_set(u, CURLUPART_HOST, x->host, 0) ||
        (*host_end == ':' && curl_url_set(u, CURLUPART_PORT, port, 0)) ||
        curl_url_set(u, CURLUPART_PATH, p, 0) ||
        (query && curl_url_set(u, CURLUPART_QUERY, query + 1, 0))) {
        curl_url_cleanup(u);
        return NULL;
    }
    return u;
}

/* Set up x->easy for this hop. A handle that still holds the base options and a
 * plain request's needs only what changes from one transfer to the next; any
 * other is reset and set up whole. -1 when an option did not take (setup_base). */
static int setup_easy(http_xfer_t *x)
{
    http_req_t *r = x->req;
    CURL *e = x->easy;
    int plain = http_req_plain(r), bad = 0;
    if (!(plain && keeps_options(x))) {
        /* a request with options of its own, or a handle to reset (keeps_options) */
        if (x->easy_base || x->easy_jar) reset_easy(x);
        bad = setup_base(e, x->http) < 0;
    }
    bad |= join_jar(x, r->cookies) < 0;
    x->easy_base = plain;
    x->attempts = 0;
    curl_url_cleanup(x->uh);
    x->uh = url_handle(x);
    curl_easy_setopt(e, CURLOPT_CURLU, x->uh); /* NULL: curl parses CURLOPT_URL */
    bad |= curl_easy_setopt(e, CURLOPT_URL, x->url) != CURLE_OK;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    /* Over TLS, wait for a connection being set up to say (by ALPN) whether it can
     * multiplex before opening another. Over plain HTTP curl could only learn that
     * from the first response, so it would serialise a burst of requests. */
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, strncasecmp(x->url, "https:", 6) == 0 ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_RESOLVER_START_DATA, x);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
    curl_easy_setopt(e, CURLOPT_RESOLVE, x->resolve);
    /* curl prunes its DNS cache, walking every entry (one per host and port given
     * in CURLOPT_RESOLVE), at the end of each transfer, unless the transfer says
     * the cache never expires. Once a second is enough: the entries of the hosts
     * being crawled are renewed by each of their transfers, the others expire 60 s
     * (curl's default) after their last. */
    double now = loop_now(x->http->loop);
    long dns_timeout = -1;
    if (now - x->http->dns_pruned >= 1.0) {
        x->http->dns_pruned = now;
        dns_timeout = 60;
    }
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, dns_timeout);
    /* A declared length over the limit fails at once, unless the caller wants the
     * body truncated (on_body cuts it). */
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                     (curl_off_t)(r->truncate ? 0 : r->max_body)); /* 0: no limit */
    /* The clock as the answer that launches this hop came in (take_answer), a
     * moment ago: no need to read it again. */
    double remaining = r->timeout - (x->hop_started + x->dns_time - x->started);
    /* Rounded up: a timeout must not end the transfer before it is due. */
    long timeout_ms = remaining > 0.001 ? (long)ceil(remaining * 1000) : 1;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(r->connect_timeout * 1000));
    /* A plain request's User-Agent and Accept-Encoding go as a ready header list
     * (http_headers.h). Not to a proxy: curl would leave the User-Agent out of a
     * CONNECT, which takes only CURLOPT_USERAGENT. */
    const char *ua = r->user_agent ? r->user_agent : "luacrawl/" LUACRAWL_VERSION;
    struct curl_slist *ready = plain && !x->proxy ? http_headers_for(x->http->headers, ua) : NULL;
    bad |= curl_easy_setopt(e, CURLOPT_USERAGENT, ready ? NULL : ua) != CURLE_OK;
    /* With proxy variables, a pooled handle may hold the last hop's proxy. */
    if (x->proxy || x->http->penv)
        bad |= curl_easy_setopt(e, CURLOPT_PROXY, x->proxy ? x->proxy : "") != CURLE_OK;
    if (plain) {
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, ready); /* NULL: a pooled handle's goes */
        return bad ? -1 : 0;
    }
    if (r->archive) { /* on_debug sees what curl sends only in verbose mode */
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_debug);
        curl_easy_setopt(e, CURLOPT_DEBUGDATA, x);
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
    }
    bad |= http_req_setopt(r, e) < 0;
    return bad ? -1 : 0;
}

static void launch(http_xfer_t *x)
{
    http_t *http = x->http;
    x->state = X_CURL;
    if (!x->easy && !(x->easy = get_easy(http, x->req->cookies, &x->easy_base, &x->easy_jar))) {
        fail(x, HTTP_E_MEMORY, "out of memory");
        finish(x);
        return;
    }
    if (setup_easy(x) < 0) {
        x->easy_base = 0; /* reset before it serves again: a base option may be missing */
        fail(x, HTTP_E_MEMORY, "out of memory setting the request's options");
        finish(x);
        return;
    }
    if (x->capture) http_capture_hop(x->capture, x->url);
    CURLMcode mc = attach(http, x);
    if (mc != CURLM_OK) {
        fail(x, mc == CURLM_OUT_OF_MEMORY ? HTTP_E_MEMORY : HTTP_E_PROTOCOL, "curl: %s",
             curl_multi_strerror(mc));
        finish(x);
        return;
    }
    end_stalled(http, CURLM_OK); /* adding it set curl's timer */
}

static void on_dns(void *arg, const dns_answer_t *ans);

/* A proxy that resolves names itself (http, https, socks4a, socks5h) needs only its
 * own name resolved; socks4 and socks5 need the target's too. */
static int proxy_needs_target(const char *proxy)
{
    return strncmp(proxy, "socks4://", 9) == 0 || strncmp(proxy, "socks5://", 9) == 0;
}

/* The request's timeout came while a lookup was out: the time limit covers name
 * resolution too, whatever the resolver's own timeouts and retries would take.
 * Reported as a DNS failure (what did not happen was the lookup), as the
 * resolver's own timeout is, so that a crawl treats both alike. */
static void on_dns_deadline(loop_t *loop, void *arg)
{
    (void)loop;
    http_xfer_t *x = arg;
    x->dns_deadline = NULL;
    dns_cancel(x->http->dns, x->dns_wait);
    x->dns_wait = NULL;
    x->dns_time = loop_time() - x->hop_started;
    fail(x, HTTP_E_DNS, "timed out after %g s: no DNS answer for %s in time", x->req->timeout,
         x->dns_host);
    finish(x);
}

static int resolve_next(http_xfer_t *x, const char *host, dns_fn fn)
{
    x->state = X_DNS;
    x->dns_host = host;
    x->dns_wait = dns_resolve(x->http->dns, host, fn, x);
    if (!x->dns_wait) {
        fail(x, HTTP_E_MEMORY, "out of memory");
        return -1;
    }
    /* A cached answer comes on the next turn: no timer for it. */
    if (!x->dns_deadline && !dns_wait_ready(x->dns_wait)) {
        double left = x->started + x->req->timeout - loop_time();
        x->dns_deadline = loop_timer_add(x->http->loop, left > 0 ? left : 0, on_dns_deadline, x);
        /* Without the timer (out of memory) the resolver's own timeout still ends it. */
    }
    return 0;
}

/* The kind of a failed lookup: a shortage of memory or descriptors is not the name's. */
static enum http_error dns_error_kind(enum dns_status status)
{
    switch (status) {
    case DNS_MEMORY:
        return HTTP_E_MEMORY;
    case DNS_RESOURCE:
        return HTTP_E_RESOURCE;
    default:
        return HTTP_E_DNS;
    }
}

/* Record an answer as a CURLOPT_RESOLVE entry; 0 to go on, -1 when x was finished. */
static int take_answer(http_xfer_t *x, const char *host, int port, const dns_answer_t *ans)
{
    int rc;
    x->dns_wait = NULL;
    stop_dns_deadline(x);
    x->dns_time = loop_time() - x->hop_started;
    if (ans->status != DNS_OK)
        fail(x, dns_error_kind(ans->status), "%s", ans->error ? ans->error : "DNS lookup failed");
    else if (host == x->host && x->literal)
        return 0; /* an IP literal: curl needs no resolve entry (see on_resolver_start) */
    else if ((rc = add_resolve(x, host, port, ans, host == x->host)) == -1)
        fail(x, HTTP_E_MEMORY, "out of memory");
    else if (rc == 0)
        return 0;
    finish(x); /* failed: out of memory, or every address denied (add_resolve) */
    return -1;
}

static void on_proxy_dns(void *arg, const dns_answer_t *ans)
{
    http_xfer_t *x = arg;
    if (take_answer(x, x->proxy_host, x->proxy_port, ans) < 0) return;
    if (proxy_needs_target(x->proxy)) {
        if (resolve_next(x, x->host, on_dns) < 0) finish(x);
        return;
    }
    launch(x);
}

static void on_dns(void *arg, const dns_answer_t *ans)
{
    http_xfer_t *x = arg;
    if (take_answer(x, x->host, x->port, ans) == 0) launch(x);
}

/* Begin one hop at x->url: check it, resolve its host (and the proxy's), launch.
 * Even an IP literal goes through dns_resolve, which answers it on the next turn,
 * so the completion never runs inside http_start. -1 when out of memory with
 * nothing started: the caller finishes or frees x. */
static int start_hop(http_xfer_t *x, double now)
{
    curl_slist_free_all(x->resolve);
    x->resolve = NULL;
    free(x->host);
    x->host = NULL;
    x->hop_started = now;
    x->dns_time = 0;
    x->denied[0] = '\0';
    x->sock_errno = 0;
    if (parse_url(x, x->url, &x->host, &x->port, 0) < 0) return finish_later(x);
    x->literal = is_literal(x->host);
    if (x->literal && literal_denied(x)) return finish_later(x);
    /* The request's proxy ("" for none) wins over the environment's. */
    const char *proxy = x->req->proxy;
    if (!proxy)
        proxy = proxy_env_for(x->http->penv, strncasecmp(x->url, "https:", 6) ? "http" : "https",
                              x->host);
    x->proxy = proxy && *proxy ? proxy : NULL;
    int rc;
    if (x->proxy) {
        free(x->proxy_host);
        x->proxy_host = NULL;
        if (parse_url(x, x->proxy, &x->proxy_host, &x->proxy_port, 1) < 0) return finish_later(x);
        rc = resolve_next(x, x->proxy_host, on_proxy_dns);
    } else {
        rc = resolve_next(x, x->host, on_dns);
    }
    return rc < 0 ? finish_later(x) : 0;
}

static int same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Whether URLs a and b differ in scheme, host or port (one that does not parse
 * counts as different). */
static int cross_origin(const char *a, const char *b)
{
    url_parts_t pa = {0}, pb = {0};
    int differ = url_parse(a, &pa) != URL_OK || url_parse(b, &pb) != URL_OK ||
                 !same_str(pa.scheme, pb.scheme) || !same_str(pa.host, pb.host) ||
                 !same_str(pa.port, pb.port);
    url_parts_free(&pa);
    url_parts_free(&pb);
    return differ;
}

static int same_site(const char *a, const char *b)
{
    char *sa = NULL, *sb = NULL;
    int same = url_site(a, &sa) == URL_OK && url_site(b, &sb) == URL_OK && strcmp(sa, sb) == 0;
    free(sa);
    free(sb);
    return same;
}

/* "Name: value" or "Name;" (http_req_header's forms) of a header that carries
 * credentials. */
static int is_credential(const char *line)
{
    static const char *const names[] = {"authorization", "cookie", "proxy-authorization"};
    size_t n = strcspn(line, ":;");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == n && strncasecmp(line, names[i], n) == 0) return 1;
    return 0;
}

/* The one rule for credentials on a redirect (http.h, http_req_keep_credentials):
 * req's credential headers go, and *url loses its user name and password. -1 when
 * out of memory. */
static int drop_credentials(http_req_t *req, char **url)
{
    struct curl_slist *kept = NULL;
    for (struct curl_slist *l = req->headers; l; l = l->next) {
        if (is_credential(l->data)) continue;
        struct curl_slist *k = curl_slist_append(kept, l->data);
        if (!k) {
            curl_slist_free_all(kept);
            return -1;
        }
        kept = k;
    }
    curl_slist_free_all(req->headers);
    req->headers = kept;
    if (!strchr(*url, '@')) return 0;
    CURLU *u = curl_url();
    char *out = NULL;
    if (!u) return -1;
    int rc = 0;
    /* A URL curl cannot parse stays as it is: parse_url refuses it next. */
    if (curl_url_set(u, CURLUPART_URL, *url, 0) == CURLUE_OK) {
        curl_url_set(u, CURLUPART_USER, NULL, 0);
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
        curl_url_set(u, CURLUPART_OPTIONS, NULL, 0);
        char *copy = NULL;
        if (curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK || !(copy = strdup(out))) {
            rc = -1;
        } else {
            free(*url);
            *url = copy;
        }
    }
    curl_free(out);
    curl_url_cleanup(u);
    return rc;
}

/* After a 3xx with Location, when the request asked to follow: 1 for the next hop,
 * 0 for none, -1 when out of memory. */
static int follow_redirect(http_xfer_t *x)
{
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status < 300 || status > 399 || status == 304 || x->redirects >= x->req->follow) return 0;
    char *location = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &location);
    if (!location) return 0;
    char *next = strdup(location);
    if (!next) return -1;
    if (x->req->follow_site && !same_site(x->req->url, next)) {
        free(next);
        return 0;
    }
    if (!x->req->keep_credentials && cross_origin(x->url, next) &&
        drop_credentials(x->req, &next) < 0) {
        free(next);
        return -1;
    }
    /* 303, and 301/302 after a POST, turn into GET as browsers do. */
    const char *m = http_req_method_name(x->req);
    if (status == 303 || ((status == 301 || status == 302) && strcmp(m, "POST") == 0)) {
        if (strcmp(m, "HEAD") != 0 && http_req_method(x->req, "GET") < 0) {
            free(next);
            return -1;
        }
        free(x->req->body);
        x->req->body = NULL;
        x->req->has_body = 0;
        x->req->body_len = 0;
    }
    if (x->capture) { /* this hop's exchange is whole; its body is about to go */
        char *ip = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_IP, &ip);
        http_capture_settle_body(x->capture, x->body.p, x->body.n);
        http_capture_end(x->capture, ip, 0);
    }
    free(x->url);
    x->url = next;
    x->redirects++;
    x->body.n = 0;
    x->hdrbuf.n = 0;
    x->nheaders = 0;
    x->encoded = 0;
    x->header_bytes = 0;
    x->headers_done = 0;
    http_decoder_free(x->decoder);
    x->decoder = NULL;
    x->decode_refused = 0;
    if (!http_req_plain(x->req)) reset_easy(x); /* setup_easy sets the next hop up whole */
    return 1;
}

static void map_curl_error(http_xfer_t *x, CURLcode rc)
{
    const char *detail = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
    if (x->denied[0] && rc == CURLE_COULDNT_CONNECT) {
        fail(x, HTTP_E_DENIED, "%s", x->denied);
        return;
    }
    /* Stopped by a callback of ours: it said why. */
    if (x->aborted == ABORT_DECODE || x->aborted == ABORT_BUDGET) return;
    if (x->aborted == ABORT_BODY || rc == CURLE_FILESIZE_EXCEEDED) {
        fail(x, HTTP_E_TOO_LARGE, "body larger than max_size (%zu bytes)", x->req->max_body);
        return;
    }
    if (x->aborted == ABORT_HEADER) {
        fail(x, HTTP_E_TOO_LARGE, "response headers too large");
        return;
    }
    if (x->aborted == ABORT_MEMORY) {
        fail(x, HTTP_E_MEMORY, "out of memory storing the response");
        return;
    }
    /* curl 7.88 reports a header line over its 100 KiB limit as out of memory. */
    if (rc == CURLE_OUT_OF_MEMORY && !x->headers_done && x->header_bytes) {
        fail(x, HTTP_E_TOO_LARGE, "a response header is over curl's 100 KiB limit");
        return;
    }
    if (x->sock_errno && rc == CURLE_COULDNT_CONNECT) {
        struct rlimit rl;
        if (x->sock_errno == ENFILE || getrlimit(RLIMIT_NOFILE, &rl) < 0)
            fail(x, HTTP_E_RESOURCE,
                 "too many open files in the system: no socket for the "
                 "connection");
        else
            fail(x, HTTP_E_RESOURCE,
                 "too many open files: the process's limit of %llu is reached, no socket for "
                 "the connection (raise ulimit -n, or lower the concurrency)",
                 (unsigned long long)rl.rlim_cur);
        return;
    }
    http_curl_error_t e = http_curl_error(rc, x->header_bytes > 0);
    /* curl 7.88 reports broken chunked encoding as a receive error too. */
    if (rc == CURLE_RECV_ERROR && strstr(detail, "chunk")) e.what = "broken chunked encoding";
    fail(x, e.kind, "%s: %s", e.what, detail);
}

/* A transfer curl ended as a success may still be cut short: inside its header block
 * (curl 7.88 takes a connection closed there for the end of a response with no
 * body), or inside a compressed body whose Content-Length matched the bytes sent.
 * 0 when whole, else -1 with the error set. */
static int check_whole(http_xfer_t *x)
{
    if (!x->headers_done) {
        fail(x, HTTP_E_PROTOCOL, "response cut short inside its headers (%zu bytes came)",
             x->header_bytes);
        return -1;
    }
    char err[256];
    if (x->aborted != ABORT_TRUNCATED && http_decoder_finish(x->decoder, err, sizeof(err)) < 0) {
        fail(x, HTTP_E_PROTOCOL, "%s", err);
        return -1;
    }
    return 0;
}

static void transfer_done(http_t *http, CURL *easy, CURLcode rc)
{
    http_xfer_t *x = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (!x) {
        curl_multi_remove_handle(http->multi, easy);
        return;
    }
    detach(http, x);
    if (rc != CURLE_OK && !(x->aborted == ABORT_TRUNCATED && rc == CURLE_WRITE_ERROR)) {
        map_curl_error(x, rc);
        finish(x);
        return;
    }
    if (check_whole(x) < 0) {
        finish(x);
        return;
    }
    int hop = x->req->follow ? follow_redirect(x) : 0;
    if (hop > 0) {
        if (start_hop(x, loop_time()) < 0) finish(x);
        return;
    }
    if (hop < 0) fail(x, HTTP_E_MEMORY, "out of memory following a redirect");
    finish(x);
}

static void check_done(http_t *http)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(http->multi, &left))) {
        if (msg->msg == CURLMSG_DONE) transfer_done(http, msg->easy_handle, msg->data.result);
    }
    end_stalled(http, CURLM_OK); /* removing a handle can move another's socket */
}

/* ---- public API ---- */

/* curl_global_init is not thread-safe in every libcurl: once per process, from
 * whichever engine comes first, and never undone (curl_global_cleanup would pull
 * the library from under engines still alive). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;
/* What curl_version_info says, read here once: it rewrites static buffers at every
 * call, so two engines starting on two threads must not both call it. */
static long curl_features;
static char curl_version_text[32];

static void curl_init(void)
{
    curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (curl_init_result != CURLE_OK) return;
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    curl_features = v->features;
    snprintf(curl_version_text, sizeof(curl_version_text), "%s", v->version);
}

const char *http_curl_version(void)
{
    pthread_once(&curl_once, curl_init);
    return curl_version_text;
}

http_t *http_new(loop_t *loop, dns_t *dns, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    if (curl_init_result != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        return NULL;
    }
    http_t *http = calloc(1, sizeof(*http));
    if (!http) goto oom;
    http->loop = loop;
    http->dns = dns;
    int oom;
    http->penv = proxy_env_new(&oom);
    if (oom) goto oom;
    if (!(http->headers = http_headers_new(curl_features))) goto oom;
    http->multi = curl_multi_init();
    http->share = curl_share_init();
    if (!http->multi || !http->share) goto oom;
    /* TLS sessions are kept per easy handle in curl 7.88: share them across all. */
    curl_share_setopt(http->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_multi_setopt(http->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(http->multi, CURLMOPT_SOCKETDATA, http);
    curl_multi_setopt(http->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(http->multi, CURLMOPT_TIMERDATA, http);
    curl_multi_setopt(http->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    /* Idle connections kept for reuse. curl's default (4 per transfer in the multi
     * handle at the time) shrinks whenever few transfers are running, closing
     * connections a moment before they would have been reused. */
    curl_multi_setopt(http->multi, CURLMOPT_MAXCONNECTS, (long)MAX_IDLE_CONNECTIONS);
    return http;
oom:
    snprintf(err, errlen, "out of memory");
    if (http) {
        if (http->multi) curl_multi_cleanup(http->multi);
        if (http->share) curl_share_cleanup(http->share);
        proxy_env_free(http->penv);
        http_headers_free(http->headers);
        free(http);
    }
    return NULL;
}

void http_free(http_t *http)
{
    if (!http) return;
    if (http->timer) loop_timer_cancel(http->loop, http->timer);
    for (int i = 0; i < http->npool; i++) {
        curl_easy_cleanup(http->pool[i].easy); /* off its jar's share first */
        cookies_unref(http->pool[i].jar);
    }
    curl_multi_cleanup(http->multi);
    curl_share_cleanup(http->share);
    proxy_env_free(http->penv);
    http_headers_free(http->headers);
    addr_policy_free(http->policy);
    free(http);
}

void http_set_budget(http_t *http, http_budget_fn fn, void *arg)
{
    http->budget = fn;
    http->budget_arg = arg;
}

void http_get_stats(const http_t *http, http_stats_t *stats)
{
    *stats = http->stats;
}

void http_set_policy(http_t *http, addr_policy_t *policy)
{
    addr_policy_free(http->policy);
    http->policy = policy;
}

http_xfer_t *http_start(http_t *http, http_req_t *req, http_fn fn, void *arg)
{
    http_xfer_t *x = calloc(1, sizeof(*x));
    if (!x || !(x->url = strdup(req->url))) {
        free(x);
        http_req_free(req);
        return NULL;
    }
    if (req->archive && !(x->capture = http_capture_new())) {
        free(x->url);
        free(x);
        http_req_free(req);
        return NULL;
    }
    x->http = http;
    x->req = req;
    x->fn = fn;
    x->arg = arg;
    x->started = loop_time();
    http->stats.started++;
    http->stats.active++;
    loop_ref(http->loop);
    if (start_hop(x, x->started) < 0) { /* out of memory: undo, as if calloc had failed */
        http->stats.started--;
        http->stats.active--;
        loop_unref(http->loop);
        free_xfer(x);
        return NULL;
    }
    return x;
}

void http_cancel(http_t *http, http_xfer_t *x)
{
    if (!x) return;
    switch (x->state) {
    case X_DNS:
        dns_cancel(http->dns, x->dns_wait);
        stop_dns_deadline(x);
        break;
    case X_CURL:
        detach(http, x);
        break;
    case X_DEFERRED:
        /* finish_deferred frees it when its turn comes. */
        x->state = X_DONE;
        http->stats.active--;
        loop_unref(http->loop);
        return;
    case X_DONE:
        return;
    }
    http->stats.active--;
    loop_unref(http->loop);
    free_xfer(x);
}

#ifdef LUACRAWL_FUZZING
/* ---- fuzzing only: the fake transfer http_fuzz.c drives (http_fuzz.h) ---- */

http_xfer_t *http_fuzz_xfer_new(size_t max_body, size_t max_header)
{
    static http_t fuzz_http; /* no budget, no curl: only held is used */
    http_xfer_t *x = calloc(1, sizeof(*x));
    if (!x || !(x->req = http_req_new("http://fuzz.test/"))) {
        free(x);
        return NULL;
    }
    x->http = &fuzz_http;
    http_req_max_size(x->req, max_body, max_header);
    return x;
}

void http_fuzz_xfer_free(http_xfer_t *x)
{
    free_xfer(x);
}

size_t http_fuzz_header(http_xfer_t *x, char *data, size_t n)
{
    return on_header(data, 1, n, x);
}

size_t http_fuzz_body(http_xfer_t *x, char *data, size_t n)
{
    return on_body(data, 1, n, x);
}

const char *http_fuzz_header_list(const http_xfer_t *x, size_t *len, int *n)
{
    *len = x->hdrbuf.n;
    *n = x->nheaders;
    return x->hdrbuf.p ? x->hdrbuf.p : "";
}
#endif
