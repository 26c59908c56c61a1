/* fuzz_sitemap.c: engine/sitemap.h on arbitrary bodies, gzipped or not (the seeds
 * include gzip files; the mutations that keep the magic bytes reach the inflater).
 * Parsed twice: to the end, then stopping at the first entry. Checks: success
 * sets a kind, failure gives a message, every entry has a non-empty loc without
 * surrounding whitespace, a text sitemap gives only http(s) locs, no more entries
 * than the protocol allows. */
#include "sitemap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    size_t count, stop_after;
    int non_http;                  /* an entry whose loc is not an http(s) URL */
    const enum sitemap_kind *kind; /* set before the first entry */
};

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_sitemap: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void check_field(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n && (is_space(s[0]) || is_space(s[n - 1])))
        fail("a field keeps surrounding whitespace", s);
}

static int on_entry(void *arg, const sitemap_entry_t *e)
{
    struct seen *seen = arg;
    if (!e->loc || !*e->loc) fail("an entry without loc", NULL);
    check_field(e->loc);
    check_field(e->lastmod);
    check_field(e->changefreq);
    check_field(e->priority);
    if (strncasecmp(e->loc, "http://", 7) != 0 && strncasecmp(e->loc, "https://", 8) != 0)
        seen->non_http = 1;
    seen->count++;
    if (seen->count > SITEMAP_MAX_URLS) fail("more entries than SITEMAP_MAX_URLS", NULL);
    return seen->stop_after && seen->count >= seen->stop_after;
}

static void parse(const char *body, size_t len, size_t stop_after)
{
    enum sitemap_kind kind = (enum sitemap_kind)99; /* none */
    struct seen seen = {0, stop_after, 0, &kind};
    char err[256] = "";
    int rc = sitemap_parse(body, len, &kind, on_entry, &seen, err, sizeof(err));
    if (rc == 0 && kind != SITEMAP_URLSET && kind != SITEMAP_INDEX && kind != SITEMAP_TEXT)
        fail("success without a kind", NULL);
    if (rc == 0 && kind == SITEMAP_TEXT && seen.non_http)
        fail("a text sitemap gave a non-http(s) loc", NULL);
    if (rc != 0 && (rc != -1 || !err[0])) fail("failure without a message", NULL);
    if (stop_after && seen.count > stop_after)
        fail("entries after the callback asked to stop", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly the input's size, so reading past it is caught. */
    char *body = malloc(size ? size : 1);
    if (!body) return 0;
    memcpy(body, data, size);
    parse(body, size, 0);
    parse(body, size, 1);
    free(body);
    return 0;
}
