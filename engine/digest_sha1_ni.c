/* digest_sha1_ni.c: SHA-1 (FIPS 180-4) with x86-64's SHA instructions, two messages side by
 * side (digest_sha1_ni.h). Written from the standard and the instructions' definitions: the
 * 80 rounds go four at a time (sha1rnds4, its function chosen by the round's fifth),
 * the next four rounds' E from the last A (sha1nexte), and the message schedule four
 * words at a time: W[t] = rol1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16]) as sha1msg1 (the
 * t-16 and t-14 terms), a xor (t-8) and sha1msg2 (t-3 and the rotation). */
#include "digest_sha1_ni.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define TARGET __attribute__((target("sha,ssse3,sse4.1")))

/* What the CPU has, found once. Two threads may find it at once (two engines' writers):
 * both find the same, and atomics keep that from being a data race. */
static atomic_int has_avx; /* vzeroupper is there (clean_upper) */

int sha1_ni_available(void)
{
    static atomic_int known = -1;
    int k = atomic_load_explicit(&known, memory_order_acquire);
    if (k < 0) {
        atomic_store_explicit(&has_avx, __builtin_cpu_supports("avx") != 0, memory_order_relaxed);
        unsigned a, b, c, d;
        int ok = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1);
        ok = ok && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
        k = ok;
        atomic_store_explicit(&known, k, memory_order_release);
    }
    return k;
}

/* Rounds 4i to 4i+3 (i a constant: the macro is expanded 20 times). The words of
 * group i are in m[i % 4]; e[i % 2] takes them (the first group adds them to E), the
 * other e keeps A for the next group. Group i also finishes group i + 1's words
 * (sha1msg2), and starts group i + 3's (sha1msg1) and i + 2's (the xor): groups 4 to
 * 19 are made so, from groups 0 to 3, the message's. */
#define ROUNDS(i)                                                                                  \
    do {                                                                                           \
        if ((i) == 0)                                                                              \
            e[0] = _mm_add_epi32(e[0], m[0]);                                                      \
        else                                                                                       \
            e[(i) % 2] = _mm_sha1nexte_epu32(e[(i) % 2], m[(i) % 4]);                              \
        e[((i) + 1) % 2] = abcd;                                                                   \
        if ((i) >= 3 && (i) <= 18)                                                                 \
            m[((i) + 1) % 4] = _mm_sha1msg2_epu32(m[((i) + 1) % 4], m[(i) % 4]);                   \
        abcd = _mm_sha1rnds4_epu32(abcd, e[(i) % 2], (i) / 5);                                     \
        if ((i) >= 1 && (i) <= 16)                                                                 \
            m[((i) + 3) % 4] = _mm_sha1msg1_epu32(m[((i) + 3) % 4], m[(i) % 4]);                   \
        if ((i) >= 2 && (i) <= 17) m[((i) + 2) % 4] = _mm_xor_si128(m[((i) + 2) % 4], m[(i) % 4]); \
    } while (0)

/* One 64-byte block into the state h (A to E). */
TARGET static inline void compress(uint32_t h[5], const unsigned char *block)
{
    /* Each 16 bytes as four big-endian words, the first in the top lane. */
    const __m128i order = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0x1b);
    __m128i e0 = _mm_set_epi32((int)h[4], 0, 0, 0);
    __m128i abcd_in = abcd, e_in = e0;
    __m128i m[4], e[2];
    for (int k = 0; k < 4; k++)
        m[k] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * k)), order);
    e[0] = e0;
    e[1] = e0;
    ROUNDS(0);
    ROUNDS(1);
    ROUNDS(2);
    ROUNDS(3);
    ROUNDS(4);
    ROUNDS(5);
    ROUNDS(6);
    ROUNDS(7);
    ROUNDS(8);
    ROUNDS(9);
    ROUNDS(10);
    ROUNDS(11);
    ROUNDS(12);
    ROUNDS(13);
    ROUNDS(14);
    ROUNDS(15);
    ROUNDS(16);
    ROUNDS(17);
    ROUNDS(18);
    ROUNDS(19);
    /* After group 19, e[0] holds A as it was before it: the next E, rotated. */
    e[0] = _mm_sha1nexte_epu32(e[0], e_in);
    abcd = _mm_add_epi32(abcd, abcd_in);
    _mm_storeu_si128((__m128i *)h, _mm_shuffle_epi32(abcd, 0x1b));
    h[4] = (uint32_t)_mm_extract_epi32(e[0], 3);
}

/* A message read 64 bytes at a time, across its pieces. */
struct stream {
    const sha1_msg_t *msg;
    int i;          /* the piece being read */
    size_t off;     /* in it */
    size_t left;    /* bytes not read yet */
    uint64_t total; /* the message's length */
    uint32_t h[5];  /* the state */
    unsigned char tmp[128];
};

static void start(struct stream *s, const sha1_msg_t *msg)
{
    static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    memset(s, 0, sizeof(*s));
    s->msg = msg;
    for (int k = 0; k < msg->n; k++)
        s->total += msg->len[k];
    s->left = (size_t)s->total;
    memcpy(s->h, iv, sizeof(iv));
}

/* Copy the next n bytes of the message (n <= left) to out. */
static void take(struct stream *s, unsigned char *out, size_t n)
{
    while (n) {
        size_t avail = s->msg->len[s->i] - s->off;
        if (!avail) {
            s->i++;
            s->off = 0;
            continue;
        }
        const char *src = s->msg->piece[s->i];
        if (!src) break; /* a piece with bytes has them somewhere (the caller's promise) */
        size_t k = avail < n ? avail : n;
        memcpy(out, src + s->off, k);
        s->off += k;
        s->left -= k;
        out += k;
        n -= k;
    }
}

/* The next whole block: in place when one piece holds it, else copied; NULL when
 * fewer than 64 bytes are left (the tail, made by finish). */
static const unsigned char *next_block(struct stream *s)
{
    if (s->left < 64) return NULL;
    while (s->off == s->msg->len[s->i]) {
        s->i++;
        s->off = 0;
    }
    if (s->msg->len[s->i] - s->off >= 64) {
        const unsigned char *p = (const unsigned char *)s->msg->piece[s->i] + s->off;
        s->off += 64;
        s->left -= 64;
        return p;
    }
    take(s, s->tmp, 64);
    return s->tmp;
}

/* The tail, the 0x80 byte, zeros and the length in bits: one block or two. */
TARGET static void finish(struct stream *s, unsigned char d[20])
{
    size_t r = s->left;
    memset(s->tmp, 0, sizeof(s->tmp));
    take(s, s->tmp, r);
    s->tmp[r] = 0x80;
    size_t blocks = r < 56 ? 1 : 2;
    uint64_t bits = s->total * 8;
    for (int k = 0; k < 8; k++)
        s->tmp[64 * blocks - 1 - k] = (unsigned char)(bits >> (8 * k));
    for (size_t k = 0; k < blocks; k++)
        compress(s->h, s->tmp + 64 * k);
    for (int k = 0; k < 5; k++) {
        d[4 * k] = (unsigned char)(s->h[k] >> 24);
        d[4 * k + 1] = (unsigned char)(s->h[k] >> 16);
        d[4 * k + 2] = (unsigned char)(s->h[k] >> 8);
        d[4 * k + 3] = (unsigned char)s->h[k];
    }
}

/* The SHA instructions have only the SSE encoding; run while the upper halves of the
 * vector registers hold what AVX code left there (ISA-L's deflate, on the writer's
 * thread, does), each SSE instruction waits to merge with them: in a crawl, this
 * file's digests took twice their time until vzeroupper cleared the halves first. */
__attribute__((target("avx"))) static void clean_upper(void)
{
    _mm256_zeroupper();
}

TARGET void sha1_ni(const sha1_msg_t *a, unsigned char da[20], const sha1_msg_t *b,
                    unsigned char db[20])
{
    if (atomic_load_explicit(&has_avx, memory_order_relaxed)) clean_upper();
    struct stream sa, sb;
    start(&sa, a);
    if (b) {
        start(&sb, b);
        /* A block of each in turn: the CPU runs the two chains of rounds together. */
        for (;;) {
            const unsigned char *pa = next_block(&sa), *pb = pa ? next_block(&sb) : NULL;
            if (!pb) {
                if (pa) compress(sa.h, pa);
                break;
            }
            compress(sa.h, pa);
            compress(sb.h, pb);
        }
        for (const unsigned char *p; (p = next_block(&sb));)
            compress(sb.h, p);
        finish(&sb, db);
    }
    for (const unsigned char *p; (p = next_block(&sa));)
        compress(sa.h, p);
    finish(&sa, da);
}

#else

int sha1_ni_available(void)
{
    return 0;
}

void sha1_ni(const sha1_msg_t *a, unsigned char da[20], const sha1_msg_t *b, unsigned char db[20])
{
    (void)a, (void)da, (void)b, (void)db;
}

#endif
