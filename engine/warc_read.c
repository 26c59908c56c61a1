/* warc_read.c: WARC records read back from gzip members (one per record, or one
 * stream for the whole file) or plain text, one at a time; and the HTTP message in a
 * record's block (warc.h). */
#include "warc_internal.h"

#include "ascii.h"
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define READ_CHUNK 65536
#define MAX_HEAD (1u << 20) /* a record's WARC header block */

/* Where a gzip member starts: in the decompressed stream and in the file. */
struct member {
    unsigned long long dec, comp;
};

struct warc_reader {
    FILE *f; /* NULL: reading mem */
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    int gz;
    z_stream z;
    int z_ready;
    int in_member;               /* inside a gzip member that has not ended */
    int eof;                     /* no more input */
    unsigned long long comp_pos; /* input bytes inflate took */
    unsigned char in[READ_CHUNK];
    struct buf d; /* the data (decompressed), from d_base */
    size_t pos;   /* the first byte not taken */
    unsigned long long d_base;
    struct member *members;
    size_t nmembers, members_cap;
    struct buf text; /* the record's version and fields, "...\0" each */
    warc_field_t *fields;
    int fields_cap;
    size_t max_block;              /* warc_reader_limit: 0 for none */
    int damaged;                   /* a damaged member was skipped: told by the next call */
    unsigned long long damaged_at; /* its offset in the file */
};

static size_t src_read(warc_reader_t *r, unsigned char *out, size_t n, warc_err_t *err)
{
    if (!r->f) {
        size_t k = r->mem_len - r->mem_pos < n ? r->mem_len - r->mem_pos : n;
        memcpy(out, r->mem + r->mem_pos, k);
        r->mem_pos += k;
        if (!k) r->eof = 1;
        return k;
    }
    size_t k = fread(out, 1, n, r->f);
    if (k < n) {
        if (ferror(r->f)) set_err(err, WARC_E_IO, "reading: %s", strerror(errno));
        r->eof = 1;
    }
    return k;
}

static int add_member(warc_reader_t *r)
{
    if (r->nmembers == r->members_cap) {
        size_t cap = r->members_cap ? r->members_cap * 2 : 16;
        struct member *m = realloc(r->members, cap * sizeof(*m));
        if (!m) return -1;
        r->members = m;
        r->members_cap = cap;
    }
    r->members[r->nmembers].dec = r->d_base + r->d.n;
    r->members[r->nmembers++].comp = r->comp_pos;
    return 0;
}

/* After bad gzip data: the input from the next gzip member's magic (1f 8b 08) on, or
 * at its end. The data not taken is dropped: it was the damaged record's. */
static int skip_to_member(warc_reader_t *r, warc_err_t *err)
{
    r->d.n = r->pos;
    r->in_member = 0;
    for (;;) {
        const unsigned char *p = r->z.next_in;
        size_t n = r->z.avail_in, i = 0;
        while (i + 2 < n && !(p[i] == 0x1f && p[i + 1] == 0x8b && p[i + 2] == 8))
            i++;
        if (i + 2 < n || r->eof) {
            if (i + 2 >= n) i = n; /* no member after it */
            r->z.next_in += i;
            r->z.avail_in -= (uInt)i;
            r->comp_pos += i;
            return 0;
        }
        size_t keep = n < 2 ? n : 2; /* they may start a magic */
        memmove(r->in, p + n - keep, keep);
        r->comp_pos += n - keep;
        size_t k = src_read(r, r->in + keep, sizeof(r->in) - keep, err);
        if (err->kind) return -1;
        r->z.next_in = r->in;
        r->z.avail_in = (uInt)(keep + k);
    }
}

/* Bad gzip data in the member being read: skipped, and told (warc_reader_next). */
static int damaged(warc_reader_t *r, warc_err_t *err)
{
    r->damaged = 1;
    r->damaged_at = r->nmembers ? r->members[r->nmembers - 1].comp : r->comp_pos;
    if (r->comp_pos == r->damaged_at && r->z.avail_in) { /* past its magic, at least */
        r->z.next_in++;
        r->z.avail_in--;
        r->comp_pos++;
    }
    if (skip_to_member(r, err) < 0) return -1;
    return set_err(err, WARC_E_FORMAT, "bad gzip data in the member at offset %llu", r->damaged_at);
}

/* More data until want bytes are there past pos, or the input ends. -1 on an error. */
static int fill(warc_reader_t *r, size_t want, warc_err_t *err)
{
    err->kind = WARC_OK;
    while (r->d.n - r->pos < want) {
        if (r->pos && r->pos >= r->d.n / 2) { /* keep the buffer from growing for good */
            memmove(r->d.p, r->d.p + r->pos, r->d.n - r->pos);
            r->d.n -= r->pos;
            r->d_base += r->pos;
            r->pos = 0;
        }
        if (buf_reserve(&r->d, READ_CHUNK + 1) < 0) return oom(err);
        if (!r->gz) {
            size_t k = src_read(r, (unsigned char *)r->d.p + r->d.n, READ_CHUNK, err);
            if (err->kind) return -1;
            r->d.n += k;
            if (!k) return 0;
            continue;
        }
        if (!r->z.avail_in) {
            if (r->eof) return 0;
            r->z.next_in = r->in;
            r->z.avail_in = (uInt)src_read(r, r->in, sizeof(r->in), err);
            if (err->kind) return -1;
            if (!r->z.avail_in) return 0;
        }
        if (!r->in_member) {
            if (inflateReset(&r->z) != Z_OK || add_member(r) < 0) return oom(err);
            r->in_member = 1;
        }
        uInt before = r->z.avail_in;
        r->z.next_out = (Bytef *)r->d.p + r->d.n;
        r->z.avail_out = (uInt)(r->d.cap - r->d.n - 1);
        int rc = inflate(&r->z, Z_NO_FLUSH);
        r->comp_pos += before - r->z.avail_in;
        r->d.n = r->d.cap - 1 - r->z.avail_out;
        if (rc == Z_STREAM_END) {
            r->in_member = 0;
        } else if (rc == Z_MEM_ERROR) {
            return oom(err);
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            return damaged(r, err);
        }
    }
    return 0;
}

static warc_reader_t *reader_start(warc_reader_t *r, warc_err_t *err)
{
    size_t n = src_read(r, r->in, sizeof(r->in), err);
    if (err->kind) goto fail;
    r->gz = n >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b;
    if (r->gz) {
        if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
            oom(err);
            goto fail;
        }
        r->z_ready = 1;
        r->z.next_in = r->in;
        r->z.avail_in = (uInt)n;
    } else if (buf_append(&r->d, r->in, n) < 0) {
        oom(err);
        goto fail;
    }
    return r;
fail:
    warc_reader_free(r);
    return NULL;
}

warc_reader_t *warc_reader_open(const char *path, warc_err_t *err)
{
    err->kind = WARC_OK;
    warc_reader_t *r = calloc(1, sizeof(*r));
    if (!r) {
        oom(err);
        return NULL;
    }
    if (!(r->f = fopen(path, "rbe"))) {
        set_err(err, WARC_E_IO, "cannot open %s: %s", path, strerror(errno));
        free(r);
        return NULL;
    }
    return reader_start(r, err);
}

warc_reader_t *warc_reader_mem(const void *data, size_t len, warc_err_t *err)
{
    err->kind = WARC_OK;
    warc_reader_t *r = calloc(1, sizeof(*r));
    if (!r) {
        oom(err);
        return NULL;
    }
    r->mem = data;
    r->mem_len = len;
    return reader_start(r, err);
}

void warc_reader_free(warc_reader_t *r)
{
    if (!r) return;
    if (r->f) fclose(r->f);
    if (r->z_ready) inflateEnd(&r->z);
    buf_free(&r->d);
    buf_free(&r->text);
    free(r->members);
    free(r->fields);
    free(r);
}

void warc_reader_limit(warc_reader_t *r, size_t max_block)
{
    r->max_block = max_block;
}

/* Take n bytes past r->pos without holding them: a chunk at a time. 0, or -1 with
 * err set (WARC_E_OK when the data ended first). */
static int read_past(warc_reader_t *r, unsigned long long n, warc_err_t *err)
{
    while (n) {
        if (r->pos == r->d.n && fill(r, 1, err) < 0) return -1;
        size_t have = r->d.n - r->pos;
        if (!have) return -1;
        size_t take = have < n ? have : (size_t)n;
        r->pos += take;
        n -= take;
    }
    return 0;
}

/* The offset in the file of the record starting at dec in the data; members that
 * start before it are forgotten. */
static unsigned long long record_offset(warc_reader_t *r, unsigned long long dec)
{
    if (!r->gz) return dec;
    size_t i = 0;
    while (i + 1 < r->nmembers && r->members[i + 1].dec <= dec)
        i++;
    if (!r->nmembers) return r->comp_pos;
    unsigned long long off = r->members[i].comp;
    memmove(r->members, r->members + i, (r->nmembers - i) * sizeof(*r->members));
    r->nmembers -= i;
    return off;
}

static int truncated(warc_reader_t *r, unsigned long long start, warc_err_t *err)
{
    return set_err(err, WARC_E_TRUNCATED,
                   "the data ends inside the record at offset %llu (a writer stopped mid-write?)",
                   record_offset(r, start));
}

/* The fields of the header block in [p, end) (the first line done) into r->fields. */
static int parse_fields(warc_reader_t *r, const char *p, const char *end, warc_err_t *err)
{
    int n = 0;
    size_t first = r->text.n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line = p;
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        p += len + 1;
        if (len && line[len - 1] == '\r') len--;
        if (!len) break;
        const char *colon = memchr(line, ':', len);
        if (!colon || line[0] == ' ' || line[0] == '\t') continue; /* folded or stray: skipped */
        const char *name = line, *value = colon + 1;
        size_t nn = (size_t)(colon - line), vn = len - nn - 1;
        ascii_trim_field(&name, &nn);
        ascii_trim_field(&value, &vn);
        if (memchr(name, 0, nn) || memchr(value, 0, vn)) continue;
        if (buf_append(&r->text, name, nn) < 0 || buf_append(&r->text, "", 1) < 0 ||
            buf_append(&r->text, value, vn) < 0 || buf_append(&r->text, "", 1) < 0)
            return oom(err);
        n++;
    }
    if (n > 0 && n > r->fields_cap) {
        warc_field_t *f = realloc(r->fields, (size_t)n * sizeof(*f));
        if (!f) return oom(err);
        r->fields = f;
        r->fields_cap = n;
    }
    const char *t = r->text.p + first;
    for (int i = 0; i < n; i++) {
        r->fields[i].name = t;
        t += strlen(t) + 1;
        r->fields[i].value = t;
        t += strlen(t) + 1;
    }
    return n;
}

const char *warc_record_field(const warc_record_t *rec, const char *name)
{
    for (int i = 0; i < rec->nfields; i++)
        if (strcasecmp(rec->fields[i].name, name) == 0) return rec->fields[i].value;
    return NULL;
}

/* Where the header block starting at r->pos ends (past its empty line): 0 while not
 * found in what is there; from says where the last search stopped. */
static size_t head_end(const warc_reader_t *r, size_t *from)
{
    const char *p = r->d.p + r->pos;
    size_t n = r->d.n - r->pos;
    for (size_t i = *from; i < n; i++) {
        if (p[i] != '\n') continue;
        if (i >= 1 && p[i - 1] == '\n') return i + 1;
        if (i >= 2 && p[i - 1] == '\r' && p[i - 2] == '\n') return i + 1;
    }
    *from = n;
    return 0;
}

static int read_record(warc_reader_t *r, warc_record_t *rec, warc_err_t *err);

int warc_reader_next(warc_reader_t *r, warc_record_t *rec, warc_err_t *err)
{
    int rc = read_record(r, rec, err);
    if (rc >= 0 || !r->damaged) return rc;
    r->damaged = 0;
    memset(rec, 0, sizeof(*rec));
    rec->damaged = 1;
    rec->offset = r->damaged_at;
    err->kind = WARC_OK;
    return 1;
}

static int read_record(warc_reader_t *r, warc_record_t *rec, warc_err_t *err)
{
    memset(rec, 0, sizeof(*rec));
    for (;;) { /* the CR LF pairs between records */
        if (fill(r, 1, err) < 0) return -1;
        if (r->pos == r->d.n) {
            if (r->gz && r->in_member) return truncated(r, r->d_base + r->pos, err);
            return 0;
        }
        char c = r->d.p[r->pos];
        if (c != '\r' && c != '\n') break;
        r->pos++;
    }
    unsigned long long start = r->d_base + r->pos;
    size_t from = 0, hlen;
    while (!(hlen = head_end(r, &from))) {
        size_t have = r->d.n - r->pos;
        if (have >= 5 && memcmp(r->d.p + r->pos, "WARC/", 5) != 0) break;
        if (have > MAX_HEAD)
            return set_err(err, WARC_E_FORMAT, "a WARC header block over %u bytes at offset %llu",
                           MAX_HEAD, record_offset(r, start));
        if (fill(r, have + 1, err) < 0) return -1;
        if (r->d.n - r->pos == have) {
            if (memcmp(r->d.p + r->pos, "WARC/", have < 5 ? have : 5) != 0) break;
            return truncated(r, start, err);
        }
    }
    const char *p = r->d.p + r->pos;
    const char *nl = memchr(p, '\n', r->d.n - r->pos);
    if (r->d.n - r->pos < 5 || memcmp(p, "WARC/", 5) != 0 || !hlen || !nl)
        return set_err(err, WARC_E_FORMAT, "no WARC record at offset %llu",
                       record_offset(r, start));
    r->text.n = 0;
    size_t vlen = (size_t)(nl - p);
    if (vlen && p[vlen - 1] == '\r') vlen--;
    if (memchr(p, 0, vlen) || buf_append(&r->text, p, vlen) < 0 || buf_append(&r->text, "", 1) < 0)
        return memchr(p, 0, vlen) ? set_err(err, WARC_E_FORMAT, "a NUL in a WARC version line")
                                  : oom(err);
    int n = parse_fields(r, nl + 1, p + hlen, err);
    if (n < 0) return -1;
    rec->nfields = n;
    rec->fields = r->fields;
    rec->version = r->text.p;
    rec->offset = record_offset(r, start);
    const char *cl = warc_record_field(rec, "Content-Length");
    char *endp = NULL;
    errno = 0;
    unsigned long long blen = cl && *cl >= '0' && *cl <= '9' ? strtoull(cl, &endp, 10) : 0;
    if (!cl || !endp || *endp || errno)
        return set_err(err, WARC_E_FORMAT, "no valid Content-Length in the record at offset %llu",
                       rec->offset);
    if (r->max_block && blen > r->max_block) {
        r->pos += hlen;
        if (read_past(r, blen, err) < 0) return err->kind ? -1 : truncated(r, start, err);
        rec->skipped = 1;
        rec->block = NULL;
        rec->block_len = (size_t)blen;
        return 1;
    }
    if (blen > WARC_MAX_BLOCK)
        return set_err(err, WARC_E_FORMAT, "a record of %llu bytes at offset %llu (at most %u)",
                       blen, rec->offset, WARC_MAX_BLOCK);
    if (fill(r, hlen + (size_t)blen, err) < 0) return -1;
    if (r->d.n - r->pos < hlen + blen) return truncated(r, start, err);
    rec->block = r->d.p + r->pos + hlen;
    rec->block_len = (size_t)blen;
    r->pos += hlen + (size_t)blen;
    return 1;
}

/* ---- HTTP messages in blocks ---- */

int warc_http_parse(const char *block, size_t len, warc_http_t *out)
{
    memset(out, 0, sizeof(*out));
    const char *nl = memchr(block, '\n', len);
    if (!nl) return -1;
    size_t end = 0;
    for (const char *p = nl; p; p = memchr(p + 1, '\n', len - (size_t)(p + 1 - block))) {
        size_t i = (size_t)(p - block);
        if ((i >= 1 && block[i - 1] == '\n') ||
            (i >= 2 && block[i - 1] == '\r' && block[i - 2] == '\n')) {
            end = i + 1;
            break;
        }
        if (i + 1 >= len) break;
    }
    if (!end) return -1;
    out->start = block;
    out->start_len = (size_t)(nl - block);
    if (out->start_len && block[out->start_len - 1] == '\r') out->start_len--;
    if (out->start_len > 5 && memcmp(block, "HTTP/", 5) == 0) {
        const char *sp = memchr(block, ' ', out->start_len);
        if (sp && (size_t)(sp - block) + 4 <= out->start_len) {
            int st = 0;
            for (int i = 1; i <= 3 && sp[i] >= '0' && sp[i] <= '9'; i++)
                st = st * 10 + (sp[i] - '0');
            out->status = st;
        }
    }
    out->head_len = end;
    out->body = block + end;
    out->body_len = len - end;
    return 0;
}

int warc_http_headers(const warc_http_t *h, warc_header_fn fn, void *arg)
{
    const char *p = h->start, *end = h->start + h->head_len;
    const char *nl = memchr(p, '\n', h->head_len);
    for (p = nl ? nl + 1 : end; p < end;) {
        const char *line = p;
        nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        p += len + 1;
        if (len && line[len - 1] == '\r') len--;
        if (!len) break;
        const char *colon = memchr(line, ':', len);
        if (!colon || line[0] == ' ' || line[0] == '\t') continue;
        const char *name = line, *value = colon + 1;
        size_t nn = (size_t)(colon - line), vn = len - nn - 1;
        ascii_trim_field(&name, &nn);
        ascii_trim_field(&value, &vn);
        int rc = fn(arg, name, nn, value, vn);
        if (rc) return rc;
    }
    return 0;
}

int warc_dechunk(const char *body, size_t len, char **out, size_t *out_len)
{
    struct buf b = {0};
    int rc = -1;
    size_t off = 0;
    if (buf_append(&b, "", 0) < 0) return -2;
    while (off < len) {
        const char *nl = memchr(body + off, '\n', len - off);
        if (!nl) break;
        char *endp;
        errno = 0;
        unsigned long long n = strtoull(body + off, &endp, 16);
        if (endp == body + off || errno ||
            (*endp != '\r' && *endp != '\n' && *endp != ';' && *endp != ' ' && *endp != '\t'))
            break;
        off = (size_t)(nl + 1 - body);
        if (n == 0) {
            rc = 0; /* trailers may follow: not part of the data */
            break;
        }
        if (n > len - off) break;
        if (buf_append(&b, body + off, (size_t)n) < 0) {
            buf_free(&b);
            return -2;
        }
        off += (size_t)n;
        if (off < len && body[off] == '\r') off++;
        if (off < len && body[off] == '\n') off++;
    }
    *out = b.p;
    *out_len = b.n;
    return rc;
}
