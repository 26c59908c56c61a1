/* http_pool.c: the easy handles. Between transfers they wait in the engine's pool,
 * each with the options it holds, so that the next plain request
 * sets only what changes; a hop takes one and sets it up (the base options every
 * transfer has, then the hop's and its request's own). */
#include "http_internal.h"

#include "url.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RECV_BUFFER_SIZE 65536L /* curl's receive buffer: 16 KB by default */
#define RECV_BUFFER_SMALL 1024L /* curl's smallest */
#define MANY_TRANSFERS 1000     /* in progress, beyond which a transfer takes the smallest */

/* x's handle back to curl's defaults. */
void http_easy_reset(http_xfer_t *x)
{
    curl_easy_reset(x->easy);
    x->easy_base = 0;
}

void http_url_parts_free(struct http_url_parts *p)
{
    curl_url_cleanup(p->uh);
    free(p->origin);
    *p = (struct http_url_parts){0};
}

/* A handle: the last one given back, unless a handle that holds the base options is
 * in the pool (the newest such). NULL when out of memory. *parts (empty before) takes
 * the URL parts kept with it. */
CURL *http_pool_get(http_t *http, int *base, struct http_url_parts *parts)
{
    *base = 0;
    if (http->npool == 0) return curl_easy_init();
    int i = http->npool - 1;
    for (int j = i; j >= 0; j--) {
        if (http->pool[j].base) {
            i = j;
            break;
        }
    }
    struct pooled p = http->pool[i];
    http->pool[i] = http->pool[--http->npool];
    *base = p.base;
    *parts = p.parts;
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

/* x's handle back to the pool: with its options when they are a plain request's (the
 * next plain request sets only its own), else reset to curl's defaults. */
void http_pool_put(http_xfer_t *x)
{
    http_t *http = x->http;
    if (!x->easy) return;
    curl_easy_setopt(x->easy, CURLOPT_CURLU, NULL); /* the parts go with it, unset */
    if (!keeps_options(x)) http_easy_reset(x);
    if (http->npool < POOL_MAX) {
        http->pool[http->npool++] = (struct pooled){x->easy, x->easy_base, x->parts};
        x->parts = (struct http_url_parts){0};
    } else {
        curl_easy_cleanup(x->easy);
    }
    x->easy = NULL;
}

void http_pool_free(http_t *http)
{
    for (int i = 0; i < http->npool; i++) {
        curl_easy_cleanup(http->pool[i].easy);
        http_url_parts_free(&http->pool[i].parts);
    }
    http->npool = 0;
}

/* The options every transfer has, whatever its request; -1 when one did not take.
 *
 * curl_easy_setopt fails for an unknown option or a value of the wrong kind (the
 * tests meet those), and for lack of memory, which only the options curl copies
 * (strings) can meet: those results are checked here and in http_easy_setup. An option
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
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_on_body);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, http_on_header);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, http_on_close_socket);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, http);
    curl_easy_setopt(e, CURLOPT_RESOLVER_START_FUNCTION, http_on_resolver_start);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, http_on_prereq);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, http_on_open_socket);
    /* No proxy unless http_easy_setup names one: the environment's proxy variables were
     * read once (http_proxy_env.h); curl would read them again for every transfer. */
    bad |= curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_NOPROXY, "") != CURLE_OK;
    return bad ? -1 : 0;
}

/* x->url in parts (x->parts), for CURLOPT_CURLU, when parse_url found it in
 * normalized form and it has no fragment and no '%': curl then copies the parts
 * instead of parsing the URL and putting it back together for every transfer (a
 * sizeable share of a transfer's instructions). curl 7.88 lower-cases the escapes of
 * a part it is given, which would change the request, hence no '%'. The parts the
 * handle's last hop left are kept when the origin is the same (most of a crawl's
 * transfers): then only the path and the query are set. NULL for any other URL, or
 * out of memory: curl parses it. */
static CURLU *url_handle(http_xfer_t *x)
{
    const char *url = x->url;
    struct http_url_parts *up = &x->parts;
    if (!x->normal || strpbrk(url, "%#")) {
        http_url_parts_free(up);
        return NULL;
    }
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
    size_t origin_len = (size_t)(path - url);
    if (!up->uh || up->origin_len != origin_len || memcmp(up->origin, url, origin_len) != 0) {
        http_url_parts_free(up);
        up->uh = curl_url();
        up->origin = strndup(url, origin_len);
        up->origin_len = origin_len;
        if (!up->uh || !up->origin ||
            curl_url_set(up->uh, CURLUPART_SCHEME, url[4] == 's' ? "https" : "http", 0) ||
            curl_url_set(up->uh, CURLUPART_HOST, x->host, 0) ||
            (*host_end == ':' && curl_url_set(up->uh, CURLUPART_PORT, port, 0))) {
            http_url_parts_free(up);
            return NULL;
        }
    }
    /* A NULL query clears the last hop's. */
    if (curl_url_set(up->uh, CURLUPART_PATH, p, 0) ||
        curl_url_set(up->uh, CURLUPART_QUERY, query ? query + 1 : NULL, 0)) {
        http_url_parts_free(up);
        return NULL;
    }
    return up->uh;
}

/* curl's receive buffer for a transfer starting now. curl allocates it at each
 * transfer's connect and frees it at its end. 64 KB: most pages fit in one read,
 * one recv and no poll for more after it. But a transfer that waits holds its
 * buffer all the while, and even untouched a 64 KB block keeps a page or two
 * resident (about 4 KB, where the 1 KB one costs 1 KB): with thousands of
 * transfers in progress, most of them waiting on slow servers, a transfer takes
 * the smallest buffer, a read per KB of its body (scripts/bench_mem.lua,
 * docs/benchmarks.md). */
static long recv_buffer_size(const http_t *http)
{
    return http->stats.active > MANY_TRANSFERS ? RECV_BUFFER_SMALL : RECV_BUFFER_SIZE;
}

/* A "Cookie: value" or "Cookie;" line of the request's own headers (http_req_header's
 * forms): its value's length, else -1. */
static long own_cookie(const char *line)
{
    if (strncasecmp(line, "Cookie", 6) != 0 || (line[6] != ':' && line[6] != ';')) return -1;
    return line[6] == ';' ? 0 : (long)strlen(line + 7);
}

/* One Cookie header (RFC 6265 5.4) for a request with Cookie headers of its own and
 * cookies in its jar: the request's values, then the jar's (*value, replaced), and
 * x->sent_headers the request's other headers (curl would send the request's own
 * alone). -1 when out of memory. */
static int merge_cookies(http_xfer_t *x, char **value)
{
    size_t n = strlen(*value) + 1;
    for (const struct curl_slist *l = x->req->headers; l; l = l->next)
        if (own_cookie(l->data) >= 0) n += (size_t)own_cookie(l->data) + 2;
    char *both = malloc(n), *p = both;
    if (!both) return -1;
    for (const struct curl_slist *l = x->req->headers; l; l = l->next) {
        long len = own_cookie(l->data);
        const char *v = l->data + 7;
        if (len < 0) {
            struct curl_slist *k = curl_slist_append(x->sent_headers, l->data);
            if (!k) goto fail;
            x->sent_headers = k;
            continue;
        }
        while (len && (*v == ' ' || *v == '\t'))
            v++, len--;
        if (!len) continue;
        memcpy(p, v, (size_t)len);
        p[len] = ';';
        p[len + 1] = ' ';
        p += len + 2;
    }
    memcpy(p, *value, strlen(*value) + 1);
    free(*value);
    *value = both;
    return 0;
fail:
    free(both);
    return -1;
}

/* The Cookie header of this hop's request: what the request's jar holds for the
 * hop's URL (curl's own cookie engine stays off), after a Cookie header of the
 * request's own; none without a jar, which a pooled handle may hold from its last
 * request. After http_req_setopt, whose header list it may replace. -1 when out of
 * memory. */
static int set_cookie_header(http_xfer_t *x)
{
    char *value = NULL;
    int bad = 0;
    curl_slist_free_all(x->sent_headers);
    x->sent_headers = NULL;
    if (x->req->cookies && cookies_header(x->req->cookies, x->url, &value) < 0) return -1;
    int own = 0;
    for (const struct curl_slist *l = x->req->headers; value && l && !own; l = l->next)
        own = own_cookie(l->data) >= 0;
    if (own) {
        bad |= merge_cookies(x, &value) < 0;
        curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->sent_headers);
    }
    bad |= curl_easy_setopt(x->easy, CURLOPT_COOKIE, value) != CURLE_OK;
    free(value);
    return bad ? -1 : 0;
}

/* Set up x->easy for this hop. A handle that still holds the base options and a
 * plain request's needs only what changes from one transfer to the next; any
 * other is reset and set up whole. -1 when an option did not take (setup_base). */
int http_easy_setup(http_xfer_t *x)
{
    http_req_t *r = x->req;
    CURL *e = x->easy;
    int plain = http_req_plain(r), bad = 0;
    if (!(plain && keeps_options(x))) {
        /* a request with options of its own, or a handle to reset (keeps_options) */
        if (x->easy_base) http_easy_reset(x);
        bad = setup_base(e, x->http) < 0;
    }
    x->easy_base = plain;
    x->attempts = 0;
    curl_easy_setopt(e, CURLOPT_CURLU, url_handle(x)); /* NULL: curl parses CURLOPT_URL */
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
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, recv_buffer_size(x->http));
    /* A declared length over the limit fails at once, unless the caller wants the
     * body truncated (http_on_body cuts it). */
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
        bad |= set_cookie_header(x) < 0;
        return bad ? -1 : 0;
    }
    if (r->archive) { /* http_on_debug sees what curl sends only in verbose mode */
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, http_on_debug);
        curl_easy_setopt(e, CURLOPT_DEBUGDATA, x);
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
    }
    bad |= http_req_setopt(r, e) < 0;
    bad |= set_cookie_header(x) < 0;
    return bad ? -1 : 0;
}
