/* Unit tests of engine/dupes.c: each digest keeps the URL it was first added with,
 * through the table's and the URL buffer's growth; digests that differ in either
 * half are different; an empty URL is a URL; the memory a digest takes. */
#include "dupes.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

/* A digest from i: its halves differ from those of every other i, and with
 * same_high the high half (the home slot) is the same for all i, so that they
 * collide. */
static void digest_of(uint32_t i, int same_high, uint64_t d[2])
{
    d[0] = same_high ? 0x0123456789abcdefu : (uint64_t)i * 0x9E3779B97F4A7C15u;
    d[1] = (uint64_t)i * 0xC2B2AE3D27D4EB4Fu + 1;
}

static int url_of(uint32_t i, char *buf, size_t n)
{
    return snprintf(buf, n, "https://example.org/page/%u.html", i);
}

static void first_url_kept_through_growth(int same_high, uint32_t n)
{
    dupes_t *d = dupes_new();
    CHECK(d != NULL);
    if (!d) return;
    uint64_t dg[2];
    char url[64];
    const char *first;
    size_t len;
    int ok = 1;
    for (uint32_t i = 0; i < n; i++) {
        digest_of(i, same_high, dg);
        if (dupes_find(d, dg, &first, &len)) ok = 0;
        int m = url_of(i, url, sizeof(url));
        if (dupes_add(d, dg, url, (size_t)m) != 0) ok = 0;
    }
    CHECK(ok);
    CHECK(dupes_size(d) == n);
    for (uint32_t i = 0; i < n; i++) {
        digest_of(i, same_high, dg);
        int m = url_of(i, url, sizeof(url));
        if (!dupes_find(d, dg, &first, &len) || len != (size_t)m || memcmp(first, url, len) != 0)
            ok = 0;
    }
    CHECK(ok);
    /* Absent: the same high half with another low half, and the other way round. */
    digest_of(n + 1, same_high, dg);
    CHECK(!dupes_find(d, dg, &first, &len));
    digest_of(0, same_high, dg);
    dg[0] ^= 1ull << 63;
    CHECK(!dupes_find(d, dg, &first, &len));
    dupes_free(d);
}

static void many_digests(void)
{
    first_url_kept_through_growth(0, 200000);
}

static void digests_sharing_a_home_slot(void)
{
    first_url_kept_through_growth(1, 3000);
}

static void an_empty_url_and_a_long_one(void)
{
    dupes_t *d = dupes_new();
    uint64_t a[2] = {1, 0}, b[2] = {2, 0};
    static char long_url[20000];
    memset(long_url, 'x', sizeof(long_url));
    const char *first;
    size_t len = 99;
    CHECK(dupes_add(d, a, "", 0) == 0);
    CHECK(dupes_find(d, a, &first, &len) && len == 0);
    CHECK(dupes_grow_bytes(d, sizeof(long_url)) >= sizeof(long_url));
    CHECK(dupes_add(d, b, long_url, sizeof(long_url)) == 0);
    CHECK(dupes_find(d, b, &first, &len) && len == sizeof(long_url) &&
          memcmp(first, long_url, len) == 0);
    CHECK(dupes_find(d, a, &first, &len) && len == 0);
    dupes_free(d);
}

/* About 32 bytes a slot at a load of 3/8 to 3/4, and the URLs, with the buffer at
 * most twice their length. */
static void bytes_per_digest(void)
{
    dupes_t *d = dupes_new();
    uint64_t dg[2];
    char url[64];
    size_t text = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        digest_of(i, 0, dg);
        int m = url_of(i, url, sizeof(url));
        text += (size_t)m;
        CHECK(dupes_add(d, dg, url, (size_t)m) == 0);
    }
    double per = (double)(dupes_bytes(d) - 2 * text) / 100000;
    printf("  %.1f bytes a digest besides its URL's (at most twice the URL's)\n", per);
    CHECK(dupes_bytes(d) <= 2 * text + 100000 * 86 + 4096);
    CHECK(dupes_grow_bytes(d, 10) < dupes_bytes(d));
    dupes_free(d);
}

int main(void)
{
    RUN(many_digests);
    RUN(digests_sharing_a_home_slot);
    RUN(an_empty_url_and_a_long_one);
    RUN(bytes_per_digest);
    return test_failures ? 1 : 0;
}
