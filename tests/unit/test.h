/* test.h: a minimal assertion helper for the C unit tests. */
#ifndef LUACRAWL_TEST_H
#define LUACRAWL_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define RUN(fn)                                                                                    \
    do {                                                                                           \
        int before = test_failures;                                                                \
        fn();                                                                                      \
        printf("%s %s\n", test_failures == before ? "ok  " : "FAIL", #fn);                         \
    } while (0)

/* A fixed-seed xorshift generator for the randomized tests: the same inputs every
 * run. rnd(n) is in [0, n); PICK(a) one element of array a. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static inline uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Du) >> 33) % n;
}

#define PICK(a) ((a)[rnd(sizeof(a) / sizeof((a)[0]))])

#endif
