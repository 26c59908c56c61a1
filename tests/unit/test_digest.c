/* Unit tests of engine/digest.c: digest_hex gives libxxhash's XXH3-128, high half
 * first in lower-case hex, whichever implementation the CPU gets (AVX2 or not), for
 * every length through XXH3's size classes (0, 1-3, 4-8, 9-16, 17-128, 129-240, and
 * longer: stripes, blocks, a last partial stripe) and at every alignment. */
#include "digest.h"
#include "test.h"

#include <string.h>
#include <xxhash.h>

/* libxxhash's value, formatted by printf. */
static void reference(const void *p, size_t n, char hex[33])
{
    XXH128_hash_t h = XXH3_128bits(p, n);
    snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

static unsigned char data[70000 + 64];

static void check_len(size_t off, size_t n)
{
    char want[33], got[33], portable[33];
    reference(data + off, n, want);
    digest_hex(data + off, n, got);
    digest_hex_portable(data + off, n, portable);
    CHECK(strcmp(want, got) == 0);
    CHECK(strcmp(want, portable) == 0);
    if (strcmp(want, got) != 0) fprintf(stderr, "  at offset %zu, length %zu\n", off, n);
}

static void every_length_and_alignment(void)
{
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)rnd(256);
    for (size_t n = 0; n <= 2100; n++)
        check_len(n % 32, n);
    static const size_t big[] = {4095, 4096, 4097, 15000, 16384, 65536, 70000};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
        for (size_t off = 0; off < 64; off += 7)
            check_len(off, big[i]);
}

static void the_empty_string(void)
{
    char got[33];
    digest_hex("", 0, got);
    CHECK(strcmp(got, "99aa06d3014798d86001c324468d497f") == 0);
}

int main(void)
{
    RUN(every_length_and_alignment);
    RUN(the_empty_string);
    return test_failures ? 1 : 0;
}
