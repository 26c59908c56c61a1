/* digest_avx2.c: XXH3-128 with AVX2 instructions, for digest.c to call only when the
 * CPU has them. Built with -mavx2 on x86-64 (CMakeLists.txt); elsewhere empty.
 * Debian's libxxhash is built for the x86-64 baseline (SSE2): on a 15 KB page AVX2
 * takes about half its time. XXH3's value does not depend on the instructions. */
#ifdef __AVX2__
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

#include "digest_avx2.h"

void digest_avx2(const void *p, size_t n, unsigned long long out[2])
{
    XXH128_hash_t h = XXH3_128bits(p, n);
    out[0] = h.high64;
    out[1] = h.low64;
}
#else
typedef int digest_avx2_unused; /* ISO C wants a translation unit to declare something */
#endif
