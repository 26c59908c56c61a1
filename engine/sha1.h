/* sha1.h: SHA-1 (FIPS 180-4), for the block and payload digests of WARC records
 * (warc.c), which the format names by SHA-1 and base32 by convention. No library the
 * engine links exports one (curl's is internal; OpenSSL is not ours to link), and
 * the algorithm is small. Not for anything that needs collision resistance. */
#ifndef LUACRAWL_SHA1_H
#define LUACRAWL_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_LEN 20
#define SHA1_BASE32_LEN 32 /* 160 bits in 5-bit groups, no padding needed */

/* On the stack; its fields are sha1.c's. */
typedef struct sha1 {
    uint32_t h[5];
    uint64_t bytes;
    unsigned char block[64];
    size_t n;
} sha1_t;

void sha1_init(sha1_t *s);
void sha1_update(sha1_t *s, const void *data, size_t len);
void sha1_final(sha1_t *s, unsigned char out[SHA1_LEN]);

/* RFC 4648 base32 (upper case) of a digest, NUL-terminated. */
void sha1_base32(const unsigned char d[SHA1_LEN], char out[SHA1_BASE32_LEN + 1]);

#endif
