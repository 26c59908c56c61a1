/* sitemap.h: XML sitemaps, sitemap indexes (gzipped or not) and plain-text
 * sitemaps (sitemaps.org protocol), parsed with libxml2's streaming reader and
 * zlib. The protocol's limits are enforced: 50,000 URLs and 50 MB uncompressed. */
#ifndef LUACRAWL_SITEMAP_H
#define LUACRAWL_SITEMAP_H

#include <stddef.h>

#define SITEMAP_MAX_URLS 50000
#define SITEMAP_MAX_BYTES (50u * 1024 * 1024)

enum sitemap_kind { SITEMAP_URLSET, SITEMAP_INDEX, SITEMAP_TEXT };

typedef struct sitemap_entry {
    const char *loc, *lastmod, *changefreq, *priority; /* NULL when absent */
} sitemap_entry_t;

/* Called for each entry in document order; return non-zero to stop. */
typedef int (*sitemap_fn)(void *arg, const sitemap_entry_t *entry);

/* Parse body (gzip is detected by its magic bytes). Returns 0 and sets *kind, or
 * -1 with a message in err. */
int sitemap_parse(const char *body, size_t len, enum sitemap_kind *kind, sitemap_fn fn, void *arg,
                  char *err, size_t errlen);

#endif
