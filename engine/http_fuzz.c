/* http_fuzz.c: fuzzing only (LUACRAWL_FUZZING; nothing in other builds). The
 * response side of http.c (its curl header and body callbacks and the header list
 * finish() builds) fed from a fake transfer, for fuzz/fuzz_http_response.c; the
 * transfer and its callbacks are reached through http_fuzz.h. */
#include "http_fuzz.h"

#ifdef LUACRAWL_FUZZING

#include <stdlib.h>
#include <string.h>

typedef size_t (*feed_fn)(http_xfer_t *x, char *data, size_t n);

static size_t feed(feed_fn fn, const char *data, size_t n, http_xfer_t *x)
{
    char *copy = malloc(n ? n : 1); /* exactly n bytes, so overreads are caught */
    if (!copy) return 0;
    memcpy(copy, data, n);
    size_t took = fn(x, copy, n);
    free(copy);
    return took;
}

int http_fuzz_response(const char *data, size_t len, size_t max_body, size_t max_header,
                       int as_curl)
{
    http_xfer_t *x = http_fuzz_xfer_new(max_body, max_header);
    if (!x) return -1;
    int rc = -1, interim = 0;
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
        if (as_curl && memchr(line, '\0', n)) goto out;
        if (feed(http_fuzz_header, line, n, x) != n) goto out;
        off += n;
        if (blank) {
            if (!interim || len - off < 5 || memcmp(data + off, "HTTP/", 5) != 0) break;
            interim = 0;
        }
    }
    for (size_t chunk = 1; off < len; chunk *= 4) {
        size_t n = len - off < chunk ? len - off : chunk;
        if (feed(http_fuzz_body, data + off, n, x) != n) goto out;
        off += n;
    }
    /* As finish() does, but bounded, to tell a walk off the end from a good one. */
    size_t list_len;
    int nheaders;
    const char *p = http_fuzz_header_list(x, &list_len, &nheaders);
    const char *end = p + list_len;
    rc = nheaders;
    for (int i = 0; i < 2 * nheaders; i++) {
        size_t n = p < end ? strnlen(p, (size_t)(end - p)) : 0;
        if (p >= end || p + n == end) {
            rc = -2;
            break;
        }
        p += n + 1;
    }
    if (rc >= 0 && p != end) rc = -2;
out:
    http_fuzz_xfer_free(x);
    return rc;
}

#endif
