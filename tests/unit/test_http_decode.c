/* Unit tests of engine/http_decode.c: a compressed body cut short is told from a
 * whole one, layers and members are decoded, what is not a body is refused. */
#include "http_decode.h"
#include "test.h"

#include <string.h>
#include <zlib.h>

struct sink {
    char data[65536];
    size_t n;
};

static int collect(void *arg, const char *data, size_t n)
{
    struct sink *s = arg;
    if (n > sizeof(s->data) - s->n) return 7;
    memcpy(s->data + s->n, data, n);
    s->n += n;
    return 0;
}

/* n bytes of data compressed with zlib's deflateInit2 window bits (31: gzip, 15:
 * zlib, -15: raw) */
static size_t compress_n(int bits, const void *data, size_t n, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 9, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    deflateEnd(&z);
    return rc == Z_STREAM_END ? z.total_out : 0;
}

static size_t compress_with(int bits, const char *text, unsigned char *out, size_t cap)
{
    return compress_n(bits, text, strlen(text), out, cap);
}

static const char TEXT[] = "hello hello hello gzip, a body that compresses well well well well";

/* Decode data fed in pieces of `piece` bytes; the finish result. */
static int decode(const char *ce, const unsigned char *data, size_t n, size_t piece,
                  struct sink *out)
{
    http_decoder_t *d = NULL;
    char err[256];
    out->n = 0;
    if (http_decoder_new(ce, &d, err, sizeof(err)) != 0 || !d) return -9;
    int rc = 0;
    for (size_t off = 0; off < n && rc == 0; off += piece)
        rc = http_decoder_feed(d, (const char *)data + off, n - off < piece ? n - off : piece,
                               collect, out, err, sizeof(err));
    if (rc == 0) rc = http_decoder_finish(d, err, sizeof(err));
    http_decoder_free(d);
    return rc;
}

static void test_decode_whole_and_cut(void)
{
    static const struct {
        const char *ce;
        int bits;
    } forms[] = {{"gzip", 31}, {"x-gzip", 31}, {"deflate", 15}, {"deflate", -15}, {"GZip", 15}};
    unsigned char z[1024];
    struct sink out;
    for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
        size_t n = compress_with(forms[f].bits, TEXT, z, sizeof(z));
        CHECK(n > 0);
        for (size_t piece = 1; piece <= n; piece = piece * 3 + 1) {
            int rc = decode(forms[f].ce, z, n, piece, &out);
            if (rc != 0)
                fprintf(stderr, "%s (bits %d) in pieces of %zu: %d\n", forms[f].ce, forms[f].bits,
                        piece, rc);
            CHECK(rc == 0);
            CHECK(out.n == strlen(TEXT) && memcmp(out.data, TEXT, out.n) == 0);
        }
        /* Cut anywhere before the end marker: never whole. */
        for (size_t cut = 1; cut < n - (forms[f].bits == -15 ? 1 : 0); cut++)
            if (decode(forms[f].ce, z, cut, 5, &out) != -1) {
                fprintf(stderr, "%s (bits %d) cut at %zu of %zu passed as whole\n", forms[f].ce,
                        forms[f].bits, cut, n);
                CHECK(0);
                break;
            }
    }
}

static void test_decode_refusals(void)
{
    http_decoder_t *d = (http_decoder_t *)1;
    char err[256];
    CHECK(http_decoder_new("compress", &d, err, sizeof(err)) == -1 && !d);
    CHECK(strstr(err, "compress") != NULL);
    CHECK(http_decoder_new("identity", &d, err, sizeof(err)) == 0 && !d);
    CHECK(http_decoder_new("", &d, err, sizeof(err)) == 0 && !d);
    CHECK(http_decoder_new("gzip, gzip, gzip, gzip, gzip", &d, err, sizeof(err)) == -1);
    /* Garbage in a coding: an error, not a short body. */
    struct sink out;
    CHECK(decode("gzip", (const unsigned char *)"not gzip at all", 15, 4, &out) == -1);
    /* An empty body is not a truncated one. */
    CHECK(http_decoder_new("gzip", &d, err, sizeof(err)) == 0 && d);
    CHECK(http_decoder_finish(d, err, sizeof(err)) == 0);
    http_decoder_free(d);
}

/* Two codings: undone in reverse order; the inner one cut is caught too. */
static void test_decode_layers(void)
{
    unsigned char inner[1024], outer[2048];
    size_t n1 = compress_with(15, TEXT, inner, sizeof(inner));   /* deflate first */
    size_t n2 = compress_n(31, inner, n1, outer, sizeof(outer)); /* then gzip */
    struct sink out;
    CHECK(decode("deflate, gzip", outer, n2, 7, &out) == 0);
    CHECK(out.n == strlen(TEXT) && memcmp(out.data, TEXT, out.n) == 0);
    CHECK(http_decode_accept()[0] != '\0');
}

/* Two gzip members (gzip -c a b) in one piece: both decoded. A wrong CRC or length in
 * the trailer, or a broken block: invalid, never a body. A body larger than the
 * decoder's output piece, in pieces of several sizes. */
static void test_decode_members_and_checks(void)
{
    unsigned char z[2048];
    size_t n1 = compress_with(31, TEXT, z, sizeof(z));
    size_t n2 = compress_with(31, TEXT, z + n1, sizeof(z) - n1);
    struct sink out;
    CHECK(n1 && n2 && decode("gzip", z, n1 + n2, n1 + n2, &out) == 0);
    CHECK(out.n == 2 * strlen(TEXT) && memcmp(out.data + strlen(TEXT), TEXT, strlen(TEXT)) == 0);
    for (size_t at = n1 - 8; at < n1; at++) { /* the trailer: CRC-32, then the length */
        z[at] ^= 0x40;
        CHECK(decode("gzip", z, n1, 5, &out) == -1);
        z[at] ^= 0x40;
    }
    size_t nz = compress_with(15, TEXT, z, sizeof(z)); /* zlib: Adler-32 last */
    z[nz - 1] ^= 0x01;
    CHECK(decode("deflate", z, nz, nz, &out) == -1);
    n1 = compress_with(31, TEXT, z, sizeof(z));
    z[12] ^= 0xff; /* inside the first block */
    CHECK(decode("gzip", z, n1, n1, &out) == -1);

    static char big[60000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = "abcdefghijklmnopqrstuvwxyz <p>\n"[(i * 7 + i / 13) % 32];
    static unsigned char zb[70000];
    size_t nb = compress_n(31, big, sizeof(big), zb, sizeof(zb));
    CHECK(nb > 0);
    for (size_t piece = 1; piece <= nb; piece = piece * 5 + 3) {
        CHECK(decode("gzip", zb, nb, piece, &out) == 0);
        CHECK(out.n == sizeof(big) && memcmp(out.data, big, sizeof(big)) == 0);
    }
}

int main(void)
{
    RUN(test_decode_whole_and_cut);
    RUN(test_decode_refusals);
    RUN(test_decode_layers);
    RUN(test_decode_members_and_checks);
    return test_failures ? 1 : 0;
}
