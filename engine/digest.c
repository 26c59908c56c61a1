/* digest.c: content digests (digest.h). */
#include "digest.h"

#include "digest_avx2.h"

#include <stdint.h>
#include <xxhash.h>

static void to_hex(const unsigned long long h[2], char hex[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int w = 0; w < 2; w++) {
        uint64_t v = h[w];
        for (int i = 15; i >= 0; i--, v >>= 4)
            hex[w * 16 + i] = digits[v & 15];
    }
    hex[32] = '\0';
}

void digest_hex_portable(const void *p, size_t n, char hex[33])
{
    XXH128_hash_t h = XXH3_128bits(p, n);
    unsigned long long v[2] = {h.high64, h.low64};
    to_hex(v, hex);
}

void digest128(const void *p, size_t n, unsigned long long out[2])
{
#ifdef LUACRAWL_DIGEST_AVX2
    /* __builtin_cpu_supports reads what libgcc's constructor found: one load. */
    if (__builtin_cpu_supports("avx2")) {
        digest_avx2(p, n, out);
        return;
    }
#endif
    XXH128_hash_t h = XXH3_128bits(p, n);
    out[0] = h.high64;
    out[1] = h.low64;
}

void digest_hex(const void *p, size_t n, char hex[33])
{
    unsigned long long v[2];
    digest128(p, n, v);
    to_hex(v, hex);
}
