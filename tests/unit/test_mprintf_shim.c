/* Unit tests of engine/mprintf_shim.c, linked in here as in the binary: its
 * curl_msnprintf() and curl_maprintf() must give, to the byte and in what they
 * return, what curl's own curl_mvsnprintf() and curl_mvaprintf() give: for the
 * formats curl 7.88 uses on every transfer, for others the shim hands to curl, for
 * NULL strings, extreme numbers and every buffer size that cuts the output. */
#include "test.h"

#include <curl/curl.h>
#include <curl/mprintf.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

static int curl_snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = curl_mvsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

static char *curl_aprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = curl_mvaprintf(fmt, ap);
    va_end(ap);
    return s;
}

static int compared;

/* The shim against curl for one format and its arguments, at every buffer size. */
#define SAME(fmt, ...)                                                                             \
    do {                                                                                           \
        for (size_t max = 1; max <= 300; max = max < 64 ? max + 1 : max * 2) {                     \
            char a[512], b[512];                                                                   \
            memset(a, 'x', sizeof(a));                                                             \
            memset(b, 'x', sizeof(b));                                                             \
            int ra = curl_msnprintf(a, max, fmt, __VA_ARGS__);                                     \
            int rb = curl_snprintf(b, max, fmt, __VA_ARGS__);                                      \
            CHECK(ra == rb);                                                                       \
            CHECK(memcmp(a, b, sizeof(a)) == 0);                                                   \
            if (ra != rb || memcmp(a, b, sizeof(a)) != 0)                                          \
                fprintf(stderr, "  %s (max %zu): \"%s\" %d, curl \"%s\" %d\n", fmt, max, a, ra, b, \
                        rb);                                                                       \
        }                                                                                          \
        char *sa = curl_maprintf(fmt, __VA_ARGS__), *sb = curl_aprintf(fmt, __VA_ARGS__);          \
        CHECK(sa &&sb &&strcmp(sa, sb) == 0);                                                      \
        curl_free(sa);                                                                             \
        curl_free(sb);                                                                             \
        compared++;                                                                                \
    } while (0)

static void transfer_formats(void)
{
    SAME("%u/%ld/%s", 0u, 8080L, "127.0.0.1");
    SAME("%u/%ld/%s", UINT_MAX, LONG_MAX, "a.very.long.host.name.example.org");
    SAME("Connection #%ld to host %s left intact", 12345L, "example.org");
    SAME("Host: %s%s%s:%d\r\n", "", "127.0.0.1", "", 8080);
    SAME("Host: %s%s%s\r\n", "[", "::1", "]");
    SAME("%s:%d", "h", -1);
}

static void numbers_and_strings(void)
{
    SAME("%d|%d|%d|%d", 0, INT_MIN, INT_MAX, -42);
    SAME("%ld|%ld|%lu|%u", LONG_MIN, LONG_MAX, ULONG_MAX, 7u);
    SAME("%s%s%s", "", "", "");
    SAME("100%% of %s%%", "it");
    SAME("%s", "no conversion after this");
    SAME("plain text, no conversion%s", "");
}

static void other_formats_go_to_curl(void)
{
    SAME("%5d|%-3s|%x", 42, "a", 255u);
    SAME("%zu and %s", (size_t)9, "z");
    SAME("%.2s", "abc");
    SAME("%s and a NULL: %s", "x", (char *)NULL);
    SAME("%ls%d", "wide?", 1);
}

int main(void)
{
    RUN(transfer_formats);
    RUN(numbers_and_strings);
    RUN(other_formats_go_to_curl);
    printf("%d formats compared\n", compared);
    return test_failures ? 1 : 0;
}
