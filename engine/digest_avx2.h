/* digest_avx2.h: digest_avx2.c's one function, which needs AVX2 (digest.c checks). */
#ifndef LUACRAWL_DIGEST_AVX2_H
#define LUACRAWL_DIGEST_AVX2_H

#include <stddef.h>

/* XXH3-128 of the n bytes at p: out[0] the high 64 bits, out[1] the low. */
void digest_avx2(const void *p, size_t n, unsigned long long out[2]);

#endif
