/* warc_cdx.c: the CDXJ index kept beside each WARC file, as pywb reads it: a line a
 * response, revisit or conversion record (the records warcio's cdx-index lists),
 * keyed by the SURT form of its URL and its date, sorted when the file is closed. */
#include "warc_internal.h"

#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct line {
    const char *p;
    size_t n;
};

static int line_cmp(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The index, sorted (replay tools search it by key), written to path (by way of
 * path.open). */
int warc_cdx_write(const struct warc_cdx *c, const char *path, warc_err_t *err)
{
    struct line *lines = calloc(c->n ? c->n : 1, sizeof(*lines));
    if (!lines) return oom(err);
    size_t k = 0;
    for (size_t off = 0; off < c->lines.n && k < c->n;) {
        const char *nl = memchr(c->lines.p + off, '\n', c->lines.n - off);
        size_t n = nl ? (size_t)(nl - (c->lines.p + off)) + 1 : c->lines.n - off;
        lines[k].p = c->lines.p + off;
        lines[k++].n = n;
        off += n;
    }
    qsort(lines, k, sizeof(*lines), line_cmp);
    char *tmp = cat(path, ".open");
    if (!tmp) {
        free(lines);
        return oom(err);
    }
    int rc = 0;
    FILE *f = fopen(tmp, "we");
    if (!f) {
        rc = set_err(err, WARC_E_IO, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        fwrite(lines[i].p, 1, lines[i].n, f);
    if (ferror(f) | fclose(f)) {
        rc = set_err(err, WARC_E_IO, "writing %s: %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) < 0)
        rc = set_err(err, WARC_E_IO, "renaming %s: %s", tmp, strerror(errno));
out:
    free(tmp);
    free(lines);
    return rc;
}

/* The SURT form of a URL as warcio and pywb key it: lower case, no scheme, "www."
 * (and www2. ...) dropped, host labels reversed and joined by commas, the port when
 * not the scheme's, ")" and the path, query arguments sorted. */
static int surt(const char *url, struct buf *out)
{
    struct buf low = {0};
    if (buf_append(&low, url, strlen(url)) < 0) return -1;
    for (size_t i = 0; i < low.n; i++)
        if (low.p[i] >= 'A' && low.p[i] <= 'Z') low.p[i] = (char)(low.p[i] + 32);
    char *u = low.p;
    int https = strncmp(u, "https://", 8) == 0;
    if (!https && strncmp(u, "http://", 7) != 0) {
        int rc = buf_append(out, url, strlen(url));
        buf_free(&low);
        return rc;
    }
    char *p = u + (https ? 8 : 7);
    char *frag = strchr(p, '#');
    if (frag) *frag = '\0';
    size_t auth_len = strcspn(p, "/?");
    char *at = memchr(p, '@', auth_len);
    if (at) {
        auth_len -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    char *rest = p + auth_len;
    char *host = p, *port = NULL;
    size_t host_len = auth_len;
    char *colon = host[0] == '[' ? NULL : memchr(host, ':', auth_len);
    if (colon) {
        host_len = (size_t)(colon - host);
        port = colon + 1;
    }
    if (host_len > 3 && strncmp(host, "www", 3) == 0) {
        size_t k = 3;
        while (k < host_len && host[k] >= '0' && host[k] <= '9')
            k++;
        if (k < host_len && host[k] == '.') {
            host += k + 1;
            host_len -= k + 1;
        }
    }
    int bad = 0;
    for (size_t end = host_len; end > 0;) {
        size_t start = end;
        while (start > 0 && host[start - 1] != '.')
            start--;
        bad |= buf_append(out, host + start, end - start);
        if (start > 0) bad |= buf_append(out, ",", 1);
        end = start ? start - 1 : 0;
    }
    size_t port_len = port ? (size_t)(rest - port) : 0;
    if (port_len && !(port_len == 2 && !https && memcmp(port, "80", 2) == 0) &&
        !(port_len == 3 && https && memcmp(port, "443", 3) == 0))
        bad |= buf_append(out, ":", 1) | buf_append(out, port, port_len);
    bad |= buf_append(out, ")", 1);
    char *query = strchr(rest, '?');
    size_t path_len = query ? (size_t)(query - rest) : strlen(rest);
    bad |= path_len ? buf_append(out, rest, path_len) : buf_append(out, "/", 1);
    if (query && query[1]) {
        struct line args[256];
        size_t na = 0;
        for (char *a = query + 1; na < 256;) {
            size_t n = strcspn(a, "&");
            args[na].p = a;
            args[na++].n = n;
            if (!a[n]) break;
            a += n + 1;
        }
        qsort(args, na, sizeof(*args), line_cmp);
        bad |= buf_append(out, "?", 1);
        for (size_t i = 0; i < na; i++)
            bad |= (i ? buf_append(out, "&", 1) : 0) | buf_append(out, args[i].p, args[i].n);
    }
    buf_free(&low);
    return bad ? -1 : 0;
}

static int put_json_field(struct buf *b, const char *name, const char *value, int first)
{
    return (first ? 0 : buf_append(b, ", ", 2)) | json_put_string(b, name, strlen(name)) |
           buf_append(b, ": ", 2) | json_put_string(b, value, strlen(value));
}

/* The index line of a response, revisit or conversion record at offset, length bytes
 * long, in the file called filename. */
int warc_cdx_add(struct warc_cdx *c, const char *filename, const char *url, double date,
                 const char *mime, int status, const char *digest, unsigned long long offset,
                 unsigned long long length)
{
    struct buf *b = &c->lines;
    size_t mark = b->n;
    char ts[16], num[3][24];
    time_t s = (time_t)date;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm);
    snprintf(num[0], sizeof(num[0]), "%d", status);
    snprintf(num[1], sizeof(num[1]), "%llu", length);
    snprintf(num[2], sizeof(num[2]), "%llu", offset);
    int bad = surt(url, b) | buf_append(b, " ", 1) | put(b, ts) | buf_append(b, " {", 2) |
              put_json_field(b, "url", url, 1) | put_json_field(b, "mime", mime, 0) |
              (status ? put_json_field(b, "status", num[0], 0) : 0) |
              put_json_field(b, "digest", digest + 5, 0) | put_json_field(b, "length", num[1], 0) |
              put_json_field(b, "offset", num[2], 0) | put_json_field(b, "filename", filename, 0) |
              buf_append(b, "}\n", 2);
    if (bad) {
        b->n = mark;
        return -1;
    }
    c->n++;
    return 0;
}
