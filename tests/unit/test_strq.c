/* Unit tests of engine/strq.c: FIFO order against a model under random pushes and
 * pops (empty strings, strings longer than a block, runs that empty the FIFO and
 * fill it again), and the memory it holds as it grows and drains. */
#include "strq.h"
#include "test.h"

#include <string.h>

#define MODEL_MAX 20000

/* The i-th string of a run: its length varies from 0 to well over a 64 KB block. */
static size_t make(char *buf, size_t cap, unsigned i)
{
    size_t len = i % 97 == 0 ? 70000 + i % 5000 : i % 13 == 0 ? 0 : 1 + (i * 7919u) % 300;
    if (len > cap) len = cap;
    for (size_t k = 0; k < len; k++)
        buf[k] = (char)('a' + (i + k) % 26);
    return len;
}

static void order_under_random_pushes_and_pops(void)
{
    static char want[80000];
    strq_t *q = strq_new();
    CHECK(q != NULL);
    unsigned pushed = 0, popped = 0;
    const char *s;
    size_t len;
    CHECK(strq_pop(q, &s, &len) == -1); /* empty */
    for (int step = 0; step < 200000; step++) {
        /* Phases that grow the FIFO, then drain it to empty. */
        int grow = (step / 5000) % 2 == 0;
        if (pushed - popped < MODEL_MAX && (rnd(100) < (grow ? 70u : 30u) || pushed == popped)) {
            size_t n = make(want, sizeof(want), pushed);
            CHECK(strq_push(q, want, n) == 0);
            pushed++;
        } else {
            size_t n = make(want, sizeof(want), popped);
            CHECK(strq_pop(q, &s, &len) == 0);
            CHECK(len == n && memcmp(s, want, n) == 0);
            popped++;
        }
        CHECK(strq_count(q) == pushed - popped);
    }
    while (popped < pushed) {
        size_t n = make(want, sizeof(want), popped++);
        CHECK(strq_pop(q, &s, &len) == 0 && len == n && memcmp(s, want, n) == 0);
    }
    CHECK(strq_pop(q, &s, &len) == -1);
    CHECK(strq_count(q) == 0);
    strq_free(q);
}

static void memory_follows_what_is_held(void)
{
    strq_t *q = strq_new();
    CHECK(strq_bytes(q) == 0); /* no block before the first push */
    char url[64];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(url, sizeof(url), "http://example.org/p/%d.html", i);
        CHECK(strq_push(q, url, (size_t)n) == 0);
    }
    size_t full = strq_bytes(q);
    /* ~30 bytes and a length each, in blocks of at most 64 KB. */
    CHECK(full >= 100000 * 30 && full < 100000 * 40 + 2 * 65536);
    const char *s;
    size_t len;
    for (int i = 0; i < 99999; i++)
        CHECK(strq_pop(q, &s, &len) == 0);
    CHECK(strq_bytes(q) <= 2 * 65536); /* the last block and a spare */
    CHECK(strq_pop(q, &s, &len) == 0 && len == strlen("http://example.org/p/99999.html") &&
          memcmp(s, "http://example.org/p/99999.html", len) == 0);
    /* Empty again: the same block is written from its start. */
    size_t before = strq_bytes(q);
    CHECK(strq_push(q, "x", 1) == 0 && strq_bytes(q) == before);
    strq_free(q);
}

int main(void)
{
    RUN(order_under_random_pushes_and_pops);
    RUN(memory_follows_what_is_held);
    return test_failures ? 1 : 0;
}
