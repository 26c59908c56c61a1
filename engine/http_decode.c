/* http_decode.c: a chain of stream decoders (zlib for gzip and deflate, and brotli
 * and zstd when the build has them) undoing a Content-Encoding, each stage handing
 * its output to the next in pieces of OUT_SIZE bytes. */
#include "http_decode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#ifdef LUACRAWL_HAVE_BROTLI
#include <brotli/decode.h>
#endif
#ifdef LUACRAWL_HAVE_ZSTD
#include <zstd.h>
#endif

#define OUT_SIZE 16384 /* as curl's own decoders */
#define MAX_STAGES 4   /* curl 7.88 allows five; more than two is never seen */
/* A zstd frame may ask for a window of up to 2 GB; RFC 9659 has HTTP decoders
 * support 8 MB and refuse more, which bounds what one response can make us hold. */
#define ZSTD_WINDOW_LOG_MAX 23

enum coding { C_GZIP, C_DEFLATE, C_BR, C_ZSTD };
static const char *const coding_names[] = {"gzip", "deflate", "br", "zstd"};

struct stage {
    enum coding coding;
    int fed;               /* bytes came in */
    int ended;             /* the stream's end marker was reached (and nothing came after) */
    int raw;               /* deflate without its zlib wrapper (as some servers send it) */
    int known;             /* deflate: which of the two was told from the first two bytes */
    unsigned char head[2]; /* deflate: the first bytes, until there are two */
    int nhead;
    z_stream z;
#ifdef LUACRAWL_HAVE_BROTLI
    BrotliDecoderState *br;
#endif
#ifdef LUACRAWL_HAVE_ZSTD
    ZSTD_DStream *zs;
#endif
    unsigned char out[OUT_SIZE];
};

struct http_decoder {
    int n;
    struct stage *stage[MAX_STAGES]; /* [0] undoes the coding listed last */
};

const char *http_decode_accept(void)
{
#if defined(LUACRAWL_HAVE_BROTLI) && defined(LUACRAWL_HAVE_ZSTD)
    return "deflate, gzip, br, zstd";
#elif defined(LUACRAWL_HAVE_BROTLI)
    return "deflate, gzip, br";
#elif defined(LUACRAWL_HAVE_ZSTD)
    return "deflate, gzip, zstd";
#else
    return "deflate, gzip";
#endif
}

static int coding_of(const char *name, size_t n)
{
    static const struct {
        const char *name;
        enum coding c;
    } known[] = {
        {"gzip", C_GZIP}, {"x-gzip", C_GZIP}, {"deflate", C_DEFLATE},
#ifdef LUACRAWL_HAVE_BROTLI
        {"br", C_BR},
#endif
#ifdef LUACRAWL_HAVE_ZSTD
        {"zstd", C_ZSTD},
#endif
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strlen(known[i].name) == n && strncasecmp(name, known[i].name, n) == 0)
            return (int)known[i].c;
    return -1;
}

static int zlib_init(struct stage *s)
{
    memset(&s->z, 0, sizeof(s->z));
    /* gzip: 32 lets zlib take a zlib header too, as curl does. */
    int bits = s->coding == C_GZIP ? MAX_WBITS + 32 : s->raw ? -MAX_WBITS : MAX_WBITS;
    return inflateInit2(&s->z, bits) == Z_OK ? 0 : -1;
}

static void stage_free(struct stage *s)
{
    if (!s) return;
    if (s->coding == C_GZIP || s->known) inflateEnd(&s->z);
#ifdef LUACRAWL_HAVE_BROTLI
    if (s->br) BrotliDecoderDestroyInstance(s->br);
#endif
#ifdef LUACRAWL_HAVE_ZSTD
    if (s->zs) ZSTD_freeDStream(s->zs);
#endif
    free(s);
}

static struct stage *stage_new(enum coding c)
{
    struct stage *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->coding = c;
    int ok = 1;
    switch (c) {
    case C_GZIP:
        ok = zlib_init(s) == 0;
        break;
    case C_DEFLATE: /* zlib_init once the first two bytes say which form (feed_deflate) */
        break;
    case C_BR:
#ifdef LUACRAWL_HAVE_BROTLI
        ok = (s->br = BrotliDecoderCreateInstance(NULL, NULL, NULL)) != NULL;
#endif
        break;
    case C_ZSTD:
#ifdef LUACRAWL_HAVE_ZSTD
        ok = (s->zs = ZSTD_createDStream()) != NULL &&
             !ZSTD_isError(ZSTD_DCtx_setParameter(s->zs, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX));
#endif
        break;
    }
    if (ok) return s;
    stage_free(s);
    return NULL;
}

void http_decoder_free(http_decoder_t *d)
{
    if (!d) return;
    for (int i = 0; i < d->n; i++)
        stage_free(d->stage[i]);
    free(d);
}

int http_decoder_new(const char *ce, http_decoder_t **out, char *err, size_t errlen)
{
    enum coding list[MAX_STAGES];
    int n = 0;
    *out = NULL;
    for (const char *p = ce; *p;) {
        p += strspn(p, " \t,");
        size_t len = strcspn(p, " \t,");
        if (!len) break;
        if (len == 8 && strncasecmp(p, "identity", 8) == 0) {
            p += len;
            continue;
        }
        int c = coding_of(p, len);
        if (c < 0) {
            snprintf(err, errlen, "unsupported Content-Encoding '%.*s' (this build decodes %s)",
                     (int)(len > 64 ? 64 : len), p, http_decode_accept());
            return -1;
        }
        if (n == MAX_STAGES) {
            snprintf(err, errlen, "more than %d content codings in Content-Encoding", MAX_STAGES);
            return -1;
        }
        list[n++] = (enum coding)c;
        p += len;
    }
    if (!n) return 0;
    http_decoder_t *d = calloc(1, sizeof(*d));
    if (!d) goto oom;
    for (int i = 0; i < n; i++, d->n++)
        if (!(d->stage[i] = stage_new(list[n - 1 - i]))) goto oom;
    *out = d;
    return 0;
oom:
    http_decoder_free(d);
    snprintf(err, errlen, "out of memory for the content decoder");
    return -2;
}

static int feed(http_decoder_t *d, int k, const unsigned char *data, size_t n, http_decode_fn out,
                void *arg, char *err, size_t errlen);

/* Hand got bytes of stage k's output on. */
static int pass(http_decoder_t *d, int k, size_t got, http_decode_fn out, void *arg, char *err,
                size_t errlen)
{
    if (!got) return 0;
    return feed(d, k + 1, d->stage[k]->out, got, out, arg, err, errlen);
}

static int feed_zlib(http_decoder_t *d, int k, const unsigned char *data, size_t n,
                     http_decode_fn out, void *arg, char *err, size_t errlen)
{
    struct stage *s = d->stage[k];
    s->z.next_in = (unsigned char *)data;
    s->z.avail_in = (uInt)n;
    for (;;) {
        s->z.next_out = s->out;
        s->z.avail_out = OUT_SIZE;
        int rc = inflate(&s->z, Z_NO_FLUSH);
        size_t got = OUT_SIZE - s->z.avail_out;
        int r = pass(d, k, got, out, arg, err, errlen);
        if (r) return r;
        if (rc == Z_STREAM_END) {
            s->ended = 1;
            /* Another gzip member may follow (gzip -c a b); anything else is ignored. */
            if (s->coding == C_GZIP && s->z.avail_in >= 2 && s->z.next_in[0] == 0x1f &&
                s->z.next_in[1] == 0x8b && inflateReset(&s->z) == Z_OK) {
                s->ended = 0;
                continue;
            }
            return 0;
        }
        if (rc == Z_MEM_ERROR) goto oom;
        if (rc == Z_BUF_ERROR && got == 0) return 0; /* no progress: wants more input */
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            snprintf(err, errlen, "%s: invalid compressed data (%s)", coding_names[s->coding],
                     s->z.msg ? s->z.msg : "zlib error");
            return -1;
        }
        if (s->z.avail_in == 0 && s->z.avail_out != 0) return 0;
    }
oom:
    snprintf(err, errlen, "out of memory decoding %s", coding_names[s->coding]);
    return -1;
}

/* "deflate" is meant as a zlib stream (RFC 9110) but some servers send raw deflate,
 * which curl and browsers take too: the first two bytes tell (a zlib header is
 * CM 8 and a multiple of 31). */
static int feed_deflate(http_decoder_t *d, int k, const unsigned char *data, size_t n,
                        http_decode_fn out, void *arg, char *err, size_t errlen)
{
    struct stage *s = d->stage[k];
    if (s->known) return feed_zlib(d, k, data, n, out, arg, err, errlen);
    while (s->nhead < 2 && n) {
        s->head[s->nhead++] = *data++;
        n--;
    }
    if (s->nhead < 2) return 0;
    s->raw = (s->head[0] & 0x0f) != 8 || (s->head[0] * 256 + s->head[1]) % 31 != 0;
    if (zlib_init(s) < 0) {
        snprintf(err, errlen, "out of memory decoding deflate");
        return -1;
    }
    s->known = 1;
    unsigned char head[2] = {s->head[0], s->head[1]};
    int r = feed_zlib(d, k, head, 2, out, arg, err, errlen);
    if (r || !n || s->ended) return r;
    return feed_zlib(d, k, data, n, out, arg, err, errlen);
}

#ifdef LUACRAWL_HAVE_BROTLI
static int feed_br(http_decoder_t *d, int k, const unsigned char *data, size_t n,
                   http_decode_fn out, void *arg, char *err, size_t errlen)
{
    struct stage *s = d->stage[k];
    size_t ain = n;
    const uint8_t *in = data;
    for (;;) {
        size_t aout = OUT_SIZE;
        uint8_t *o = s->out;
        BrotliDecoderResult rc = BrotliDecoderDecompressStream(s->br, &ain, &in, &aout, &o, NULL);
        int r = pass(d, k, OUT_SIZE - aout, out, arg, err, errlen);
        if (r) return r;
        switch (rc) {
        case BROTLI_DECODER_RESULT_SUCCESS:
            s->ended = 1;
            return 0;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
            return 0;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
            continue;
        default:
            snprintf(err, errlen, "br: invalid compressed data (%s)",
                     BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s->br)));
            return -1;
        }
    }
}
#endif

#ifdef LUACRAWL_HAVE_ZSTD
static int feed_zstd(http_decoder_t *d, int k, const unsigned char *data, size_t n,
                     http_decode_fn out, void *arg, char *err, size_t errlen)
{
    struct stage *s = d->stage[k];
    ZSTD_inBuffer in = {data, n, 0};
    for (;;) {
        ZSTD_outBuffer o = {s->out, OUT_SIZE, 0};
        size_t rc = ZSTD_decompressStream(s->zs, &o, &in);
        if (ZSTD_isError(rc)) {
            snprintf(err, errlen, "zstd: invalid compressed data (%s)", ZSTD_getErrorName(rc));
            return -1;
        }
        int r = pass(d, k, o.pos, out, arg, err, errlen);
        if (r) return r;
        /* 0: a frame ended and was flushed whole; another may follow. */
        s->ended = rc == 0;
        if (in.pos == in.size && o.pos < o.size) return 0;
    }
}
#endif

static int feed(http_decoder_t *d, int k, const unsigned char *data, size_t n, http_decode_fn out,
                void *arg, char *err, size_t errlen)
{
    if (k == d->n) return out(arg, (const char *)data, n);
    struct stage *s = d->stage[k];
    if (!n || (s->ended && s->coding != C_ZSTD)) return 0; /* after the end: ignored */
    s->fed = 1;
    switch (s->coding) {
    case C_GZIP:
        return feed_zlib(d, k, data, n, out, arg, err, errlen);
    case C_DEFLATE:
        return feed_deflate(d, k, data, n, out, arg, err, errlen);
#ifdef LUACRAWL_HAVE_BROTLI
    case C_BR:
        return feed_br(d, k, data, n, out, arg, err, errlen);
#endif
#ifdef LUACRAWL_HAVE_ZSTD
    case C_ZSTD:
        return feed_zstd(d, k, data, n, out, arg, err, errlen);
#endif
    default:
        snprintf(err, errlen, "unsupported content coding");
        return -1;
    }
}

int http_decoder_feed(http_decoder_t *d, const char *data, size_t n, http_decode_fn out, void *arg,
                      char *err, size_t errlen)
{
    /* zlib counts input in uInt: a larger piece goes in parts. */
    while (n > (size_t)1 << 30) {
        int r = feed(d, 0, (const unsigned char *)data, (size_t)1 << 30, out, arg, err, errlen);
        if (r) return r;
        data += (size_t)1 << 30;
        n -= (size_t)1 << 30;
    }
    return feed(d, 0, (const unsigned char *)data, n, out, arg, err, errlen);
}

int http_decoder_finish(const http_decoder_t *d, char *err, size_t errlen)
{
    for (int i = 0; d && i < d->n; i++) {
        const struct stage *s = d->stage[i];
        if (s->fed && !s->ended) {
            snprintf(err, errlen,
                     "%s body cut short: the response ended before the end of its compressed "
                     "data",
                     coding_names[s->coding]);
            return -1;
        }
    }
    return 0;
}
