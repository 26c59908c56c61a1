/* digest_sha1_ni.h: SHA-1 with the CPU's SHA instructions (x86-64's SHA extensions), two
 * messages at a time. The WARC writer digests each response twice, its payload and
 * its block (the head, then the same payload): one SHA-1 is a chain of rounds each
 * waiting on the last, so the two run side by side, a block of one then a block of the
 * other, in about the time of one. Elsewhere, or on a CPU without the instructions,
 * sha1_ni_available() is 0 and warc.c uses libcrypto. */
#ifndef LUACRAWL_DIGEST_SHA1_NI_H
#define LUACRAWL_DIGEST_SHA1_NI_H

#include <stddef.h>

/* A message: the concatenation of n pieces. */
typedef struct sha1_msg {
    const char *const *piece;
    const size_t *len;
    int n;
} sha1_msg_t;

/* 1 when this build and this CPU have the instructions (SHA, SSSE3, SSE4.1). */
int sha1_ni_available(void);

/* The SHA-1 of a into da and, when b is not NULL, of b into db. Only when
 * sha1_ni_available(). */
void sha1_ni(const sha1_msg_t *a, unsigned char da[20], const sha1_msg_t *b, unsigned char db[20]);

#endif
