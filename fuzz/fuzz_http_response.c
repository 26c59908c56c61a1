/* fuzz_http_response.c: the response side of the engine (http_response.c: the curl
 * header and body callbacks, and the header list http_finish walks), fed without
 * curl or a network on a transfer of its own. The first byte picks the limits
 * (defaults, or a small max_body and/or max_header so they are hit); the rest is the
 * response as the server sends it, status line first.
 *
 * Known (fuzz/crashes/http_response-folded-nul): a folded header line (one starting
 * with a space or tab) with a NUL byte is appended to the last value as it is, and
 * the NUL then splits it: http_finish walks the list out of step, names becoming
 * values. curl 7.83 and later refuse any header line with a NUL byte, so the
 * transfers model curl's rule unless FUZZ_KNOWN is set in the environment. */
#include "http.h"
#include "http_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A transfer of a request for http://fuzz.test/ with these limits (0 keeps a
 * default), on an http_t of its own without a budget or curl (only its count of the
 * bytes held is used); NULL when out of memory. http_xfer_free frees it. */
static http_xfer_t *xfer_new(size_t max_body, size_t max_header)
{
    static http_t http;
    http_xfer_t *x = calloc(1, sizeof(*x));
    if (!x || !(x->req = http_req_new("http://fuzz.test/"))) {
        free(x);
        return NULL;
    }
    x->http = &http;
    http_req_max_size(x->req, max_body, max_header);
    return x;
}

typedef size_t (*feed_fn)(char *data, size_t size, size_t nmemb, void *arg);

/* n bytes through a curl callback; its result: n, or not n to end the transfer. */
static size_t feed(feed_fn fn, const char *data, size_t n, http_xfer_t *x)
{
    char *copy = malloc(n ? n : 1); /* exactly n bytes, so overreads are caught */
    if (!copy) return 0;
    memcpy(copy, data, n);
    size_t took = fn(copy, 1, n, x);
    free(copy);
    return took;
}

/* data's lines up to the first empty one through http_on_header, one call per line
 * as curl delivers them (after an interim 1xx status, the next response's lines
 * too); the rest through http_on_body in growing chunks. With as_curl, a header line
 * with a NUL byte ends the transfer as curl (7.83 and later) ends it. -1 when the
 * transfer ended early. */
static int feed_response(http_xfer_t *x, const char *data, size_t len, int as_curl)
{
    int interim = 0;
    size_t off = 0;
    while (off < len) {
        const char *nl = memchr(data + off, '\n', len - off);
        size_t n = nl ? (size_t)(nl - (data + off)) + 1 : len - off;
        const char *line = data + off;
        int blank = line[0] == '\n' || (n == 2 && line[0] == '\r');
        if (n > 9 && memcmp(line, "HTTP/", 5) == 0) {
            const char *sp = memchr(line, ' ', n);
            interim = sp && (size_t)(sp - line) + 1 < n && sp[1] == '1';
        }
        if (as_curl && memchr(line, '\0', n)) return -1;
        if (feed(http_on_header, line, n, x) != n) return -1;
        off += n;
        if (blank) {
            if (!interim || len - off < 5 || memcmp(data + off, "HTTP/", 5) != 0) break;
            interim = 0;
        }
    }
    for (size_t chunk = 1; off < len; chunk *= 4) {
        size_t n = len - off < chunk ? len - off : chunk;
        if (feed(http_on_body, data + off, n, x) != n) return -1;
        off += n;
    }
    return 0;
}

/* Whether the header list walks as http_finish walks it ("name\0value\0" pairs,
 * nheaders of them) to exactly its end; bounded here, to tell a walk off the end
 * from a good one. */
static int header_list_whole(const http_xfer_t *x)
{
    const char *p = x->hdrbuf.p ? x->hdrbuf.p : "";
    const char *end = p + x->hdrbuf.n;
    for (int i = 0; i < 2 * x->nheaders; i++) {
        size_t n = p < end ? strnlen(p, (size_t)(end - p)) : 0;
        if (p >= end || p + n == end) return 0;
        p += n + 1;
    }
    return p == end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t max_body = (data[0] & 1) ? 64 : 0;
    size_t max_header = (data[0] & 2) ? 256 : 0;
    static int as_curl = -1;
    if (as_curl < 0) as_curl = getenv("FUZZ_KNOWN") == NULL;
    http_xfer_t *x = xfer_new(max_body, max_header);
    if (!x) return 0;
    if (feed_response(x, (const char *)data + 1, size - 1, as_curl) == 0 && !header_list_whole(x)) {
        fprintf(stderr,
                "fuzz_http_response: the header list does not walk to the end of its buffer\n");
        abort();
    }
    http_xfer_free(x); /* no handle, no lookup: only the request and the response */
    return 0;
}
