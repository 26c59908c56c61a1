/* warc_record.c: the text of a WARC record: its ID, its date, its header block; and
 * the HTTP head of an exchange as a response record keeps it (chunked framing gone),
 * with what the writer learns from it (status, type, whether the payload is packed).
 * warc.c puts records together from these and writes them. */
#include "warc_internal.h"

#include "ascii.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

static int random_bytes(struct warc_random *r, unsigned char *out, size_t n, warc_err_t *err)
{
    while (n) {
        if (!r->left) {
            ssize_t got = getrandom(r->b, sizeof(r->b), 0);
            if (got <= 0) {
                if (got < 0 && errno == EINTR) continue;
                return set_err(err, WARC_E_IO, "no random bytes for record IDs: %s",
                               strerror(errno));
            }
            r->left = (size_t)got;
        }
        size_t take = n < r->left ? n : r->left;
        memcpy(out, r->b + r->left - take, take);
        r->left -= take;
        out += take;
        n -= take;
    }
    return 0;
}

/* A random (version 4) UUID as a WARC-Record-ID, "<urn:uuid:...>": 47 characters. */
int warc_new_id(struct warc_random *r, char id[WARC_ID_SIZE], warc_err_t *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char u[16] = {0};
    if (random_bytes(r, u, sizeof(u), err) < 0) return -1;
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    char *p = id;
    memcpy(p, "<urn:uuid:", 10);
    p += 10;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
        *p++ = hex[u[i] >> 4];
        *p++ = hex[u[i] & 15];
    }
    *p++ = '>';
    *p = '\0';
    return 0;
}

/* WARC-Date, to the microsecond (WARC/1.1 allows a fraction): 28 bytes and a NUL. */
void warc_format_date(double t, char out[32])
{
    if (!(t >= 0 && t < 253402300800.0)) t = 0; /* years 1970-9999 only */
    time_t s = (time_t)t;
    int us = (int)((t - (double)s) * 1e6);
    if (us < 0 || us > 999999) us = 0;
    struct tm tm;
    gmtime_r(&s, &tm);
    char base[20];
    if (strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) != 19) base[0] = '\0';
    snprintf(out, 32, "%.19s.%06dZ", base, us);
}

/* A record's version line and header block, through the empty line that ends it, for a
 * block of block_len bytes, into b (emptied first). warcinfo_id: "" before the file's
 * warcinfo is written. 0, or -1 when out of memory. */
int warc_record_head(struct buf *b, const record_t *r, const char *warcinfo_id, size_t block_len)
{
    char clen[24];
    snprintf(clen, sizeof(clen), "%zu", block_len);
    b->n = 0;
    int bad = put(b, "WARC/1.1\r\n") | put_field(b, "WARC-Type", r->type) |
              put_field(b, "WARC-Record-ID", r->id) | put_field(b, "WARC-Date", r->date);
    if (r->filename) bad |= put_field(b, "WARC-Filename", r->filename);
    if (r->uri) bad |= put_field(b, "WARC-Target-URI", r->uri);
    if (r->ip && *r->ip) bad |= put_field(b, "WARC-IP-Address", r->ip);
    if (r->concurrent_to) bad |= put_field(b, "WARC-Concurrent-To", r->concurrent_to);
    if (*warcinfo_id && strcmp(r->type, "warcinfo") != 0)
        bad |= put_field(b, "WARC-Warcinfo-ID", warcinfo_id);
    if (r->profile) {
        bad |= put_field(b, "WARC-Profile", r->profile) |
               put_field(b, "WARC-Refers-To-Target-URI", r->refers_uri) |
               put_field(b, "WARC-Refers-To-Date", r->refers_date);
    }
    if (r->refers_id) bad |= put_field(b, "WARC-Refers-To", r->refers_id);
    if (r->block_digest) bad |= put_field(b, "WARC-Block-Digest", r->block_digest);
    if (r->payload_digest) bad |= put_field(b, "WARC-Payload-Digest", r->payload_digest);
    if (r->truncated) bad |= put_field(b, "WARC-Truncated", r->truncated);
    bad |= put_field(b, "Content-Type", r->content_type) | put_field(b, "Content-Length", clen) |
           put(b, "\r\n");
    return bad ? -1 : 0;
}

/* ---- response heads ---- */

static int ieq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

/* The head as the record keeps it: curl removed the chunked framing from the body, so
 * "chunked" goes from Transfer-Encoding (the header goes when nothing is left), or a
 * reader would look for chunks. Appended to out. */
int warc_fixed_head(const char *head, size_t len, struct buf *out)
{
    out->n = 0;
    for (size_t off = 0; off < len;) {
        const char *line = head + off, *nl = memchr(line, '\n', len - off);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - off;
        off += n;
        const char *colon = memchr(line, ':', n);
        if (!colon || !ieq(line, (size_t)(colon - line), "Transfer-Encoding")) {
            if (buf_append(out, line, n) < 0) return -1;
            continue;
        }
        /* Keep the other codings of the list, in order. */
        struct buf kept = {0};
        const char *v = colon + 1, *end = line + n;
        while (v < end) {
            const char *comma = memchr(v, ',', (size_t)(end - v));
            const char *tok = v;
            size_t tn = comma ? (size_t)(comma - v) : (size_t)(end - v);
            v = comma ? comma + 1 : end;
            ascii_trim_field(&tok, &tn);
            if (!tn || ieq(tok, tn, "chunked")) continue;
            if ((kept.n && buf_append(&kept, ", ", 2) < 0) || buf_append(&kept, tok, tn) < 0) {
                buf_free(&kept);
                return -1;
            }
        }
        int bad = kept.n && (buf_append(out, line, (size_t)(colon - line)) < 0 ||
                             buf_append(out, ": ", 2) < 0 || buf_append(out, kept.p, kept.n) < 0 ||
                             buf_append(out, "\r\n", 2) < 0);
        buf_free(&kept);
        if (bad) return -1;
    }
    if (!out->p && buf_append(out, "", 0) < 0) return -1;
    return 0;
}

/* Whether a MIME type's bodies are compressed in their own format. */
static int packed_type(const char *mime)
{
    static const char *const packed[] = {"image/jpeg",          "image/png",
                                         "image/gif",           "image/webp",
                                         "image/avif",          "font/woff",
                                         "font/woff2",          "application/zip",
                                         "application/gzip",    "application/x-gzip",
                                         "application/zstd",    "application/x-xz",
                                         "application/x-bzip2", "application/x-7z-compressed"};
    if (!strncasecmp(mime, "video/", 6) || !strncasecmp(mime, "audio/", 6)) return 1;
    for (size_t i = 0; i < sizeof(packed) / sizeof(packed[0]); i++)
        if (!strcasecmp(mime, packed[i])) return 1;
    return 0;
}

/* The facts of a head: its status line's code, its Content-Type and Content-Encoding. */
void warc_head_facts(const char *head, size_t len, struct warc_head_facts *f)
{
    f->status = 0;
    f->mime[0] = '\0';
    f->packed = 0;
    const char *sp = memchr(head, ' ', len);
    if (sp) f->status = atoi(sp + 1);
    for (size_t off = 0; off < len;) {
        const char *line = head + off, *nl = memchr(line, '\n', len - off);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - off;
        off += n;
        const char *colon = memchr(line, ':', n);
        if (!colon) continue;
        size_t name_len = (size_t)(colon - line);
        const char *v = colon + 1;
        size_t vn = (size_t)(line + n - v);
        if (ieq(line, name_len, "Content-Encoding")) {
            ascii_trim_field(&v, &vn);
            f->packed |= vn && !ieq(v, vn, "identity");
        } else if (ieq(line, name_len, "Content-Type") && !f->mime[0]) {
            const char *semi = memchr(v, ';', vn);
            if (semi) vn = (size_t)(semi - v);
            ascii_trim_field(&v, &vn);
            if (vn >= sizeof(f->mime)) vn = sizeof(f->mime) - 1;
            memcpy(f->mime, v, vn);
            f->mime[vn] = '\0';
        }
    }
    f->packed |= packed_type(f->mime);
}
