/* digest.h: content digests, the 128-bit XXH3 of a body as 32 lower-case hex digits
 * (high 64 bits first), for telling equal bodies apart from different ones. Not
 * cryptographic. The same value on every machine: with AVX2 where the CPU has it
 * (digest_avx2.c), else libxxhash's. */
#ifndef LUACRAWL_DIGEST_H
#define LUACRAWL_DIGEST_H

#include <stddef.h>

/* hex gets the 32 digits and a NUL. */
void digest_hex(const void *p, size_t n, char hex[33]);

/* The same digest as two numbers, the high half first. */
void digest128(const void *p, size_t n, unsigned long long out[2]);

/* The digest as libxxhash computes it, whatever the CPU: digest_hex's reference,
 * apart for its tests. */
void digest_hex_portable(const void *p, size_t n, char hex[33]);

#endif
