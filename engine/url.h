/* url.h: URL parsing, reference resolution (RFC 3986 section 5, with the browser
 * tolerances crawlers need), normalization and fingerprints. Built on curl's URL
 * API (curl_url), libpsl and xxhash. Knows nothing of the loop or Lua.
 *
 * Functions that produce a string return it malloc'd in *out (the caller frees it)
 * and return URL_OK, or an error code (url_strerror names it) with *out NULL. */
#ifndef LUACRAWL_URL_H
#define LUACRAWL_URL_H

#include <stddef.h>
#include <stdint.h>

enum url_error {
    URL_OK = 0,
    URL_E_MALFORMED, /* not a URL curl can parse */
    URL_E_SCHEME,    /* no scheme, or one this operation does not accept */
    URL_E_HOST,      /* missing or invalid host */
    URL_E_TOO_LONG,  /* longer than URL_MAX_LENGTH */
    URL_E_NOMEM,
};

#define URL_MAX_LENGTH 8192

const char *url_strerror(int code);

typedef struct url_parts {
    char *scheme, *user, *password, *host, *port, *path, *query, *fragment; /* NULL if absent */
} url_parts_t;

int url_parse(const char *url, url_parts_t *parts);
void url_parts_free(url_parts_t *parts);

/* Resolve ref against base (an absolute URL): trims surrounding spaces, drops tabs
 * and newlines, reads '\' as '/' in http(s), as browsers do. */
int url_resolve(const char *base, const char *ref, char **out);

typedef struct url_norm_opts {
    int sort_query;               /* sort query parameters by name */
    const char *const *strip;     /* NULL-ended list of parameter name patterns to drop:
                                     exact names, or prefixes ending in '*' ("utm_*") */
    int keep_fragment;
} url_norm_opts_t;

/* Normalize an absolute http(s) URL (opts may be NULL): lower-case scheme and host,
 * IDN to punycode, default port dropped, dot segments removed, percent-escapes
 * upper-cased and unreserved ones decoded, fragment dropped, empty path "/". */
int url_normalize(const char *url, const url_norm_opts_t *opts, char **out);

/* 64-bit xxhash (XXH3) of a string; url_fingerprint normalizes first (with
 * default options) and hashes the result; an unparsable URL hashes as given. */
uint64_t url_hash(const char *s, size_t len);
uint64_t url_fingerprint(const char *url);

/* The host of url, lower-cased (IPv6 without brackets); the registrable domain
 * ("example.co.uk" for "a.b.example.co.uk") via libpsl, or the host itself for IP
 * addresses and names with no registrable part. */
int url_host(const char *url, char **out);
int url_site(const char *url, char **out);

#endif
