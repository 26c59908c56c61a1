/* sha1.c: SHA-1 as FIPS 180-4 section 6.1 gives it, and base32 for WARC digests. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static void compress(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1_init(sha1_t *s)
{
    static const uint32_t iv[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    memcpy(s->h, iv, sizeof(iv));
    s->bytes = 0;
    s->n = 0;
}

void sha1_update(sha1_t *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->bytes += len;
    if (s->n) {
        size_t take = 64 - s->n < len ? 64 - s->n : len;
        memcpy(s->block + s->n, p, take);
        s->n += take;
        p += take;
        len -= take;
        if (s->n < 64) return;
        compress(s->h, s->block);
        s->n = 0;
    }
    for (; len >= 64; p += 64, len -= 64)
        compress(s->h, p);
    memcpy(s->block, p, len);
    s->n = len;
}

void sha1_final(sha1_t *s, unsigned char out[SHA1_LEN])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = {0x80};
    size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_update(s, pad, padlen + 8);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void sha1_base32(const unsigned char d[SHA1_LEN], char out[SHA1_BASE32_LEN + 1])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    /* 20 bytes are 32 groups of 5 bits exactly: 5 bytes make 8 characters. */
    for (int g = 0; g < 4; g++) {
        uint64_t v = 0;
        for (int i = 0; i < 5; i++)
            v = v << 8 | d[5 * g + i];
        for (int i = 0; i < 8; i++)
            out[8 * g + i] = alphabet[(v >> (35 - 5 * i)) & 31];
    }
    out[SHA1_BASE32_LEN] = '\0';
}
