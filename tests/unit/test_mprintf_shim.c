/* Unit tests of engine/mprintf_shim.c, linked in here as in the binary, with its
 * gate (curl_overrides.c): its curl_msnprintf() and curl_maprintf() must give, to
 * the byte and in what they return, what libcurl's own two give (found past ours
 * with dlsym(RTLD_NEXT)): for the formats curl 7.88 uses on every transfer, for
 * others the shim hands to curl, for NULL strings, extreme numbers and every buffer
 * size that cuts the output. ctest runs it with the overrides on and, with
 * LUACRAWL_NO_OVERRIDES=1, off. */
#include "curl_overrides.h"
#include "test.h"

#include <curl/curl.h>
#include <curl/mprintf.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

/* libcurl's own curl_msnprintf and curl_maprintf, which ours hide. */
static int (*curl_snprintf)(char *, size_t, const char *, ...);
static char *(*curl_aprintf)(const char *, ...);

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

/* On exactly when the environment allows it and libcurl is 7.88.x. */
static void the_gate_follows_the_environment_and_the_version(void)
{
    const char *env = getenv("LUACRAWL_NO_OVERRIDES");
    int allowed = !(env && *env && strcmp(env, "0") != 0);
    unsigned v = curl_version_info(CURLVERSION_NOW)->version_num;
    CHECK(lc_overrides_on() == (allowed && v >> 8 == 0x0758));
    CHECK(!lc_overrides_on() == (lc_overrides_off_reason() != NULL));
    printf("  overrides %s%s\n",
           lc_overrides_on() ? "on" : "off: ", lc_overrides_on() ? "" : lc_overrides_off_reason());
}

static void the_gate_allows_7_88_only_and_obeys_the_environment(void)
{
    char why[96];
    CHECK(lc_overrides_allowed(NULL, 0x075801, "7.88.1", why, sizeof(why)));
    CHECK(lc_overrides_allowed("", 0x075800, "7.88.0", why, sizeof(why)));
    CHECK(lc_overrides_allowed("0", 0x0758ff, "7.88.255", why, sizeof(why)));
    CHECK(!lc_overrides_allowed("1", 0x075801, "7.88.1", why, sizeof(why)));
    CHECK(strcmp(why, "LUACRAWL_NO_OVERRIDES is set") == 0);
    CHECK(!lc_overrides_allowed(NULL, 0x075700, "7.87.0", why, sizeof(why)));
    CHECK(!lc_overrides_allowed(NULL, 0x080500, "8.5.0", why, sizeof(why)));
    CHECK(strcmp(why, "libcurl 8.5.0 is not one they were tested with") == 0);
    CHECK(!lc_overrides_allowed(NULL, 0, NULL, why, sizeof(why)));
}

int main(void)
{
    /* NOLINTBEGIN(bugprone-casting-through-void): dlsym's result is a function */
    *(void **)&curl_snprintf = dlsym(RTLD_NEXT, "curl_msnprintf");
    *(void **)&curl_aprintf = dlsym(RTLD_NEXT, "curl_maprintf");
    /* NOLINTEND(bugprone-casting-through-void) */
    if (!curl_snprintf || !curl_aprintf || (void *)curl_snprintf == (void *)curl_msnprintf) {
        fprintf(stderr, "libcurl's own curl_msnprintf/curl_maprintf not found\n");
        return 1;
    }
    RUN(the_gate_follows_the_environment_and_the_version);
    RUN(the_gate_allows_7_88_only_and_obeys_the_environment);
    RUN(transfer_formats);
    RUN(numbers_and_strings);
    RUN(other_formats_go_to_curl);
    printf("%d formats compared\n", compared);
    return test_failures ? 1 : 0;
}
