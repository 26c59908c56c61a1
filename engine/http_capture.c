/* http_capture.c: the hops of an archived transfer (http_capture.h). */
#include "http_capture.h"

#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hop {
    http_exchange_t ex; /* pointing into the buffers below once the hop ended */
    char *url;
    char ip[48];
    struct buf request, head, payload;
    int kept; /* the body is the transfer's own: 1 until lent, then 2 */
};

struct http_capture {
    struct hop *hops;
    int n, cap; /* n: hops begun; the last is in progress until ended */
    int ended;  /* hops ended */
    int failed;
    size_t bytes;
};

http_capture_t *http_capture_new(void)
{
    return calloc(1, sizeof(http_capture_t));
}

static void hop_free(struct hop *h)
{
    free(h->url);
    buf_free(&h->request);
    buf_free(&h->head);
    buf_free(&h->payload);
}

void http_capture_free(http_capture_t *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++)
        hop_free(&c->hops[i]);
    free(c->hops);
    free(c);
}

int http_capture_count(const http_capture_t *c)
{
    /* The last hop ended waits for its body when that is the transfer's own. */
    return c->ended && c->hops[c->ended - 1].kept == 1 ? c->ended - 1 : c->ended;
}

const http_exchange_t *http_capture_get(const http_capture_t *c, int i)
{
    return i >= 0 && i < http_capture_count(c) ? &c->hops[i].ex : NULL;
}

size_t http_capture_bytes(const http_capture_t *c)
{
    return c->bytes;
}

int http_capture_failed(const http_capture_t *c)
{
    return c->failed;
}

/* The hop in progress, NULL when there is none (or memory ran out). */
static struct hop *current(http_capture_t *c)
{
    return !c->failed && c->n > c->ended ? &c->hops[c->n - 1] : NULL;
}

void http_capture_hop(http_capture_t *c, const char *url)
{
    if (c->failed) return;
    if (c->n > c->ended) { /* a hop that never ended (a retry from the start): again */
        hop_free(&c->hops[--c->n]);
    }
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 2;
        struct hop *h = realloc(c->hops, (size_t)cap * sizeof(*h));
        if (!h) {
            c->failed = 1;
            return;
        }
        c->hops = h;
        c->cap = cap;
        for (int i = 0; i < c->ended; i++) /* the hops moved, and their addresses */
            h[i].ex.ip = h[i].ip;
    }
    struct hop *h = &c->hops[c->n];
    memset(h, 0, sizeof(*h));
    if (!(h->url = strdup(url))) {
        c->failed = 1;
        return;
    }
    c->n++;
}

void http_capture_sent(http_capture_t *c)
{
    struct hop *h = current(c);
    if (!h) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->ex.date = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    c->bytes -= h->request.n + h->head.n + h->payload.n;
    h->request.n = h->head.n = h->payload.n = 0; /* an earlier attempt's */
    h->kept = 0;
}

static void add(http_capture_t *c, struct buf *b, const char *data, size_t n)
{
    if (buf_append(b, data, n) < 0)
        c->failed = 1;
    else
        c->bytes += n;
}

void http_capture_request(http_capture_t *c, const char *data, size_t n)
{
    struct hop *h = current(c);
    if (h) add(c, &h->request, data, n);
}

void http_capture_response(http_capture_t *c)
{
    struct hop *h = current(c);
    if (!h) return;
    c->bytes -= h->head.n;
    h->head.n = 0; /* after an interim 1xx response: only the final one is kept */
}

void http_capture_head(http_capture_t *c, const char *data, size_t n)
{
    struct hop *h = current(c);
    if (h) add(c, &h->head, data, n);
}

void http_capture_body(http_capture_t *c, const char *data, size_t n)
{
    struct hop *h = current(c);
    if (h) add(c, &h->payload, data, n);
}

void http_capture_body_kept(http_capture_t *c)
{
    struct hop *h = current(c);
    if (h) h->kept = 1;
}

void http_capture_settle_body(http_capture_t *c, const char *data, size_t n)
{
    struct hop *h = current(c);
    if (!h || !h->kept) return;
    h->kept = 0;
    if (n) add(c, &h->payload, data, n);
}

void http_capture_lend_body(http_capture_t *c, const char *data, size_t n)
{
    if (c->failed || !c->ended) return;
    struct hop *h = &c->hops[c->ended - 1];
    if (h->kept != 1) return;
    h->kept = 2;
    h->ex.payload = data ? data : "";
    h->ex.payload_len = data ? n : 0;
}

int http_capture_wants_size(const http_capture_t *c)
{
    return !c->failed && c->n > c->ended && c->hops[c->n - 1].payload.cap == 0;
}

void http_capture_reserve(http_capture_t *c, size_t n)
{
    struct hop *h = current(c);
    if (h && buf_reserve(&h->payload, n + 1) < 0) c->failed = 1; /* and buf_append's NUL */
}

void http_capture_end(http_capture_t *c, const char *ip, int truncated)
{
    struct hop *h = current(c);
    if (!h) return;
    snprintf(h->ip, sizeof(h->ip), "%s", ip ? ip : "");
    h->ex.url = h->url;
    h->ex.ip = h->ip;
    h->ex.request = h->request.p ? h->request.p : "";
    h->ex.request_len = h->request.n;
    h->ex.head = h->head.p ? h->head.p : "";
    h->ex.head_len = h->head.n;
    h->ex.payload = h->payload.p ? h->payload.p : "";
    h->ex.payload_len = h->payload.n;
    h->ex.truncated = truncated;
    c->ended++;
}
