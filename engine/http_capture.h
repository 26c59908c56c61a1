/* http_capture.h: what a transfer sent and received, kept for a WARC writer when its
 * request asks (http_req_archive): for each hop, the request as curl sent it, the
 * response's status line and headers as they came, and its body as the server sent
 * it (Content-Encoding intact; curl has removed the chunked framing). http_response.c records;
 * the response object keeps it (lua_body.c) until warc.c writes it. */
#ifndef LUACRAWL_HTTP_CAPTURE_H
#define LUACRAWL_HTTP_CAPTURE_H

#include <stddef.h>

typedef struct http_capture http_capture_t;

/* One hop: a request and its response (warc.h's warc_exchange_t has the same fields). */
typedef struct http_exchange {
    const char *url;
    const char *ip; /* "" when unknown */
    double date;    /* Unix time the request was sent */
    const char *request;
    size_t request_len; /* request line, headers and body as sent */
    const char *head;
    size_t head_len; /* status line and headers as received, through the empty line */
    const char *payload;
    size_t payload_len; /* the body as received */
    int truncated;      /* the body was cut at max_size */
} http_exchange_t;

http_capture_t *http_capture_new(void);
void http_capture_free(http_capture_t *c);

/* The hops recorded whole, in order (redirects first), and the bytes they hold (not
 * those of a body lent). */
int http_capture_count(const http_capture_t *c);
const http_exchange_t *http_capture_get(const http_capture_t *c, int i);
size_t http_capture_bytes(const http_capture_t *c);

/* Recording, from the transfer's curl callbacks, which cannot fail a transfer everywhere: a
 * step out of memory marks the capture (http_capture_failed), and the transfer
 * fails when it ends. */
void http_capture_hop(http_capture_t *c, const char *url); /* a hop begins */
void http_capture_sent(http_capture_t *c);                 /* a request goes (again) */
void http_capture_request(http_capture_t *c, const char *data, size_t n); /* bytes of it */
void http_capture_response(http_capture_t *c);                            /* a response begins */
void http_capture_head(http_capture_t *c, const char *data, size_t n);
void http_capture_body(http_capture_t *c, const char *data, size_t n);
/* Whether the hop's body has no room yet, and room for n bytes of it (the declared
 * length: the body is then copied once, not grown step by step). */
int http_capture_wants_size(const http_capture_t *c);
void http_capture_reserve(http_capture_t *c, size_t n);
void http_capture_end(http_capture_t *c, const char *ip, int truncated); /* the hop is whole */
int http_capture_failed(const http_capture_t *c);

/* A body with no Content-Encoding is the same bytes as the response's body: rather
 * than a copy, the hop in progress notes that its body is the transfer's own
 * (http_capture_body_kept). A hop that ends for a redirect takes a copy then
 * (http_capture_settle_body, given the bytes kept so far); the last hop's body is
 * lent by whoever takes the response's body, which owns the capture with it and frees
 * both together (http_capture_lend_body). Until it is lent, that hop is not counted
 * whole. */
void http_capture_body_kept(http_capture_t *c);
void http_capture_settle_body(http_capture_t *c, const char *data, size_t n);
void http_capture_lend_body(http_capture_t *c, const char *data, size_t n);

#endif
