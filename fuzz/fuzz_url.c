/* fuzz_url.c: engine/url.h on arbitrary strings. The input (up to its first NUL) is
 * parsed, normalized with several option sets, resolved against a fixed base,
 * fingerprinted and asked for its host and site; split at its first NUL or newline
 * it is also a base and a reference. Besides memory safety (ASan, and LeakSanitizer
 * for every result freed), the promises of url.h are checked: normalization is
 * idempotent and gives what url_parse accepts, url_resolve_normalize is
 * url_resolve then url_normalize, the fingerprint hashes the normalized URL, the
 * site is a suffix of the host; and the fast paths (url_fast.c) give what the
 * curl-based paths give (url_internal.h). */
#include "url.h"
#include "url_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE "https://Example.COM:443/a/b/c.html?q=1&utm_source=x#frag"

static const char *const STRIP[] = {"utm_*", "sessionid", "sid", NULL};

static const url_norm_opts_t OPTS[] = {
    {0, NULL, 0},
    {1, NULL, 0},
    {0, STRIP, 0},
    {1, STRIP, 1},
};
#define NOPTS (sizeof(OPTS) / sizeof(OPTS[0]))

static void fail(const char *what, const char *a, const char *b, const char *c)
{
    fprintf(stderr, "fuzz_url: %s\n  input:  \"%s\"\n  got:    \"%s\"\n  expect: \"%s\"\n", what,
            a ? a : "(null)", b ? b : "(null)", c ? c : "(null)");
    abort();
}

static int is_http(const char *u)
{
    return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

static void check_parse(const char *s)
{
    url_parts_t parts;
    int rc = url_parse(s, &parts);
    if (rc == URL_OK) {
        if (!parts.scheme || !parts.path || !*parts.path)
            fail("url_parse: no scheme or empty path", s, parts.path, "a path");
        for (const char *p = parts.scheme; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                fail("url_parse: scheme not lower-cased", s, parts.scheme, NULL);
    }
    url_parts_free(&parts);
}

/* normalize(x) under opts; when it succeeds, normalize(normalize(x)) is the same,
 * and url_parse takes it. Returns the normalized URL (caller frees) or NULL. */
static char *check_normalize(const char *s, const url_norm_opts_t *opts)
{
    char *n1 = NULL, *n2 = NULL;
    int rc = url_normalize(s, opts, &n1);
    if (rc != URL_OK) {
        if (n1) fail("url_normalize: error with a result", s, n1, NULL);
        return NULL;
    }
    if (!n1 || !is_http(n1)) fail("url_normalize: not an http(s) URL", s, n1, NULL);
    rc = url_normalize(n1, opts, &n2);
    if (rc != URL_OK) fail("url_normalize: fails on its own output", s, n1, url_strerror(rc));
    if (strcmp(n1, n2) != 0) fail("url_normalize: not idempotent", n1, n2, n1);
    free(n2);
    url_parts_t parts;
    rc = url_parse(n1, &parts);
    url_parts_free(&parts);
    if (rc != URL_OK) fail("url_parse: refuses a normalized URL", n1, url_strerror(rc), "ok");
    return n1;
}

/* resolve(base, ref), and resolve_normalize(base, ref) == normalize(resolve(base, ref)). */
static void check_resolve(const char *base, const char *ref)
{
    char *r = NULL;
    int rc = url_resolve(base, ref, &r);
    for (size_t i = 0; i < NOPTS; i++) {
        char *rn = NULL, *n = NULL;
        int rc2 = url_resolve_normalize(base, ref, &OPTS[i], &rn);
        int rc3 = rc == URL_OK ? url_normalize(r, &OPTS[i], &n) : rc;
        if ((rc2 == URL_OK) != (rc3 == URL_OK) || (rc2 == URL_OK && strcmp(rn, n) != 0)) {
            fprintf(stderr, "fuzz_url: base \"%s\" ref \"%s\" options %zu: resolve gives %s (%s)\n",
                    base, ref, i, r ? r : "(null)", url_strerror(rc));
            fail("url_resolve_normalize differs from url_normalize(url_resolve())", ref,
                 rn ? rn : url_strerror(rc2), n ? n : url_strerror(rc3));
        }
        free(rn);
        free(n);
    }
    if (rc == URL_OK && is_http(r)) {
        /* An absolute http(s) URL out of url_resolve resolves to itself. */
        char *again = NULL;
        if (url_resolve(base, r, &again) != URL_OK || strcmp(again, r) != 0)
            fail("url_resolve: its own result does not resolve to itself", r, again, r);
        free(again);
    }
    free(r);
}

static int same(int e1, const char *a, int e2, const char *b)
{
    return e1 == e2 && (a && b ? strcmp(a, b) == 0 : a == b);
}

/* url_normalize and url_resolve_normalize against their paths without the fast path. */
static void check_fast(const char *base, const char *ref)
{
    for (size_t i = 0; i < NOPTS; i++) {
        char *f = NULL, *s = NULL;
        int ef = url_normalize(ref, &OPTS[i], &f), es = url_normalize_slow(ref, &OPTS[i], &s);
        if (!same(ef, f, es, s)) fail("url_normalize: fast and slow paths differ", ref, f, s);
        free(f);
        free(s);
        f = s = NULL;
        ef = url_resolve_normalize(base, ref, &OPTS[i], &f);
        es = url_resolve_normalize_slow(base, ref, &OPTS[i], &s);
        if (!same(ef, f, es, s)) {
            fprintf(stderr, "fuzz_url: base \"%s\"\n", base);
            fail("url_resolve_normalize: fast and slow paths differ", ref, f, s);
        }
        free(f);
        free(s);
    }
}

static void check_fingerprint(const char *s)
{
    char *n = NULL;
    uint64_t fp = url_fingerprint(s);
    uint64_t want =
        url_normalize(s, NULL, &n) == URL_OK ? url_hash(n, strlen(n)) : url_hash(s, strlen(s));
    if (fp != want) fail("url_fingerprint: not the hash of the normalized URL", s, n, NULL);
    free(n);
}

static void check_host_site(const char *s)
{
    char *host = NULL, *site = NULL;
    int rh = url_host(s, &host), rs = url_site(s, &site);
    if ((rh == URL_OK) != (rs == URL_OK)) fail("url_host and url_site disagree", s, host, site);
    if (rh == URL_OK) {
        size_t hl = strlen(host), sl = strlen(site);
        if (sl > hl || strcmp(host + hl - sl, site) != 0 || (sl < hl && host[hl - sl - 1] != '.'))
            fail("url_site: not a domain suffix of url_host", s, site, host);
    }
    free(host);
    free(site);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The whole input as a string, and split into base and reference. */
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *ref = s + strcspn(s, "\n");
    char *base = NULL;
    if (*ref || strlen(s) < size) {
        size_t bl = (size_t)(ref - s);
        base = strndup(s, bl);
        ref = *ref ? ref + 1 : s + bl + 1; /* after the newline, or after the NUL */
    }

    check_parse(s);
    for (size_t i = 0; i < NOPTS; i++)
        free(check_normalize(s, &OPTS[i]));
    check_resolve(BASE, s);
    check_fast(BASE, s);
    check_fingerprint(s);
    check_host_site(s);
    if (base) {
        check_resolve(base, ref);
        char *n = check_normalize(base, NULL);
        if (n) {
            check_resolve(n, ref);
            check_fast(n, ref);
        }
        free(n);
        free(base);
    }
    free(s);
    return 0;
}
