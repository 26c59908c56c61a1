/* http_decode.c: a chain of stream decoders (ISA-L's igzip for gzip and deflate, and
 * brotli and zstd when the build has them) undoing a Content-Encoding, each stage
 * handing its output to the next in pieces of OUT_SIZE bytes. igzip inflates bodies
 * as servers compress them up to two and a half times as fast as zlib
 * (docs/benchmarks.md), for a larger state (87 KB against zlib's 40), held only while
 * a body comes. */
#include "http_decode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <isa-l/igzip_lib.h>
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
    int fed;                  /* bytes came in */
    int ended;                /* the stream's end marker was reached (and nothing came after) */
    unsigned char head[2];    /* gzip, deflate: the first bytes, until there are two */
    int nhead;                /* which wrapper they say comes next (feed_flate) */
    struct inflate_state *in; /* gzip, deflate: once the wrapper is known */
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

/* An igzip state for a stream with the wrapper given (ISAL_GZIP, ISAL_ZLIB or
 * ISAL_DEFLATE, raw): malloc's, not zeroed (87 KB that isal_inflate_init readies). */
static int inflate_init(struct stage *s, uint16_t wrapper)
{
    if (!(s->in = malloc(sizeof(*s->in)))) return -1;
    isal_inflate_init(s->in);
    s->in->crc_flag = wrapper;
    return 0;
}

static void stage_free(struct stage *s)
{
    if (!s) return;
    free(s->in);
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
    case C_DEFLATE: /* inflate_init once the first two bytes say which wrapper (feed_flate) */
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

/* What an igzip error means, for the message. */
static const char *inflate_error(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid block";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance";
    case ISAL_INVALID_WRAPPER:
        return "invalid header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unsupported method";
    case ISAL_INCORRECT_CHECKSUM:
        return "incorrect checksum";
    case ISAL_NEED_DICT:
        return "needs a preset dictionary";
    default:
        return "igzip error";
    }
}

static int feed_inflate(http_decoder_t *d, int k, const unsigned char *data, size_t n,
                        http_decode_fn out, void *arg, char *err, size_t errlen)
{
    struct stage *s = d->stage[k];
    struct inflate_state *in = s->in;
    in->next_in = (uint8_t *)data; /* only read, but ISA-L's field is not const */
    in->avail_in = (uint32_t)n;
    for (;;) {
        in->next_out = s->out;
        in->avail_out = OUT_SIZE;
        int rc = isal_inflate(in);
        size_t got = OUT_SIZE - in->avail_out;
        int r = pass(d, k, got, out, arg, err, errlen);
        if (r) return r;
        if (rc != ISAL_DECOMP_OK && rc != ISAL_END_INPUT) {
            snprintf(err, errlen, "%s: invalid compressed data (%s)", coding_names[s->coding],
                     inflate_error(rc));
            return -1;
        }
        if (in->block_state == ISAL_BLOCK_FINISH) {
            s->ended = 1;
            /* Another gzip member may follow (gzip -c a b); anything else is ignored. */
            if (s->coding == C_GZIP && in->avail_in >= 2 && in->next_in[0] == 0x1f &&
                in->next_in[1] == 0x8b) {
                uint8_t *next = in->next_in;
                uint32_t left = in->avail_in;
                isal_inflate_reset(in);
                in->crc_flag = ISAL_GZIP;
                in->next_in = next;
                in->avail_in = left;
                s->ended = 0;
                continue;
            }
            return 0;
        }
        if (in->avail_in == 0 && got < OUT_SIZE) return 0; /* wants more input */
    }
}

/* gzip and deflate: the first two bytes tell the wrapper. gzip's magic number is
 * 1f 8b, and a body labelled gzip with a zlib header is taken too, as curl and zlib
 * do. "deflate" is meant as a zlib stream (RFC 9110) but some servers send raw
 * deflate, which curl and browsers take too: a zlib header is CM 8 and a multiple
 * of 31. */
static int feed_flate(http_decoder_t *d, int k, const unsigned char *data, size_t n,
                      http_decode_fn out, void *arg, char *err, size_t errlen)
{
    struct stage *s = d->stage[k];
    if (s->in) return feed_inflate(d, k, data, n, out, arg, err, errlen);
    while (s->nhead < 2 && n) {
        s->head[s->nhead++] = *data++;
        n--;
    }
    if (s->nhead < 2) return 0;
    int zlib = (s->head[0] & 0x0f) == 8 && (s->head[0] * 256 + s->head[1]) % 31 == 0;
    int gzip = s->head[0] == 0x1f && s->head[1] == 0x8b;
    uint16_t wrapper =
        s->coding == C_GZIP ? (gzip ? ISAL_GZIP : ISAL_ZLIB) : (zlib ? ISAL_ZLIB : ISAL_DEFLATE);
    if (inflate_init(s, wrapper) < 0) {
        snprintf(err, errlen, "out of memory decoding %s", coding_names[s->coding]);
        return -1;
    }
    unsigned char head[2] = {s->head[0], s->head[1]};
    int r = feed_inflate(d, k, head, 2, out, arg, err, errlen);
    if (r || !n || s->ended) return r;
    return feed_inflate(d, k, data, n, out, arg, err, errlen);
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
    case C_DEFLATE:
        return feed_flate(d, k, data, n, out, arg, err, errlen);
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
    /* igzip counts input in 32 bits: a larger piece goes in parts. */
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
