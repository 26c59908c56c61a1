/* test.h: a minimal assertion helper for the C unit tests. */
#ifndef LUACRAWL_TEST_H
#define LUACRAWL_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            test_failures++;                                                                   \
        }                                                                                      \
    } while (0)

#define RUN(fn)                                                                                \
    do {                                                                                       \
        int before = test_failures;                                                            \
        fn();                                                                                  \
        printf("%s %s\n", test_failures == before ? "ok  " : "FAIL", #fn);                    \
    } while (0)

#endif
