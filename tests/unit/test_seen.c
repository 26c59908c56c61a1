/* Unit tests of engine/seen.c: set semantics, and memory at a million URLs. */
#include "seen.h"
#include "test.h"
#include "url.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MILLION 1000000

/* AddressSanitizer keeps freed memory in quarantine: RSS says nothing there. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_MEANINGFUL 0
#endif
#endif
#ifndef RSS_MEANINGFUL
#define RSS_MEANINGFUL 1
#endif

/* Nor does it under valgrind (ctest's valgrind.seen), whose allocator pads blocks. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* Fingerprints the way the crawler makes them: xxhash of distinct URLs. */
static uint64_t fp_of(const char *prefix, int i)
{
    char buf[96];
    int n = snprintf(buf, sizeof(buf), "https://example.org/%s/%d?page=%d", prefix, i / 100, i);
    return url_hash(buf, (size_t)n);
}

/* Resident set size in bytes, from /proc/self/statm. */
static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static void add_reports_new_then_present(void)
{
    seen_t *s = seen_new(0);
    CHECK(seen_size(s) == 0);
    CHECK(!seen_has(s, 42));
    CHECK(seen_add(s, 42) == 1);
    CHECK(seen_add(s, 42) == 0);
    CHECK(seen_has(s, 42));
    CHECK(!seen_has(s, 43));
    CHECK(seen_size(s) == 1);
    seen_free(s);
}

static void zero_is_a_fingerprint_too(void)
{
    seen_t *s = seen_new(0);
    CHECK(!seen_has(s, 0));
    CHECK(seen_add(s, 0) == 1);
    CHECK(seen_has(s, 0));
    CHECK(seen_add(s, 0) == 0);
    CHECK(seen_add(s, UINT64_MAX) == 1);
    CHECK(seen_has(s, UINT64_MAX));
    CHECK(seen_size(s) == 2);
    seen_free(s);
}

/* Grows from the smallest table through every size up to a million. */
static void a_million_urls_from_a_small_start(void)
{
    long rss0 = rss_bytes();
    seen_t *s = seen_new(0);
    int fresh = 0, again = 0, found = 0, strangers = 0;
    for (int i = 0; i < MILLION; i++)
        fresh += seen_add(s, fp_of("a", i)) == 1;
    for (int i = 0; i < MILLION; i++)
        again += seen_add(s, fp_of("a", i)) == 0;
    for (int i = 0; i < MILLION; i++)
        found += seen_has(s, fp_of("a", i));
    for (int i = 0; i < MILLION; i++)
        strangers += seen_has(s, fp_of("b", i));
    long rss1 = rss_bytes();
    CHECK(fresh == MILLION);
    CHECK(again == MILLION);
    CHECK(found == MILLION);
    CHECK(strangers == 0);
    CHECK(seen_size(s) == MILLION);
    double per_url = (double)seen_bytes(s) / MILLION;
    double rss_per_url = (double)(rss1 - rss0) / MILLION;
    printf("     %.2f bytes/URL (seen_bytes), %.2f bytes/URL (RSS growth)\n", per_url, rss_per_url);
    CHECK(per_url <= 16.0);
    CHECK(!RSS_MEANINGFUL || RUNNING_ON_VALGRIND || rss0 < 0 || rss_per_url <= 16.0);
    seen_free(s);
}

static void sized_for_a_million_does_not_grow(void)
{
    seen_t *s = seen_new(MILLION);
    size_t before = seen_bytes(s);
    for (int i = 0; i < MILLION; i++)
        seen_add(s, fp_of("c", i));
    CHECK(seen_bytes(s) == before);
    CHECK(seen_size(s) == MILLION);
    CHECK((double)seen_bytes(s) / MILLION <= 16.0);
    seen_free(s);
}

int main(void)
{
    RUN(add_reports_new_then_present);
    RUN(zero_is_a_fingerprint_too);
    RUN(a_million_urls_from_a_small_start);
    RUN(sized_for_a_million_does_not_grow);
    return test_failures ? 1 : 0;
}
