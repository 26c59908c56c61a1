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
    URL_E_NOMEM,     /* out of memory */
    URL_E_PORT,      /* port not a number in 0..65535 */
};

#define URL_MAX_LENGTH 8192

const char *url_strerror(int code);

typedef struct url_parts {
    char *scheme, *user, *password, *host, *port, *path, *query, *fragment; /* NULL if absent */
} url_parts_t;

/* Split an absolute URL of any scheme curl can parse with an authority
 * ("scheme://..."; not mailto:). The scheme and host come lower-cased, the host as
 * url_host gives it; user and password percent-decoded; port the explicit one or
 * the scheme's default ("80" for http); path, query and fragment as written (still
 * percent-encoded), path "/" at least. Free with url_parts_free, even on error. */
int url_parse(const char *url, url_parts_t *parts);
void url_parts_free(url_parts_t *parts);

/* Resolve ref against base (an absolute URL) by RFC 3986 section 5.2, with the
 * tolerances of browsers: surrounding C0 controls and spaces trimmed, tabs and
 * newlines dropped, '\' read as '/' in http(s) before the query, spaces, controls,
 * non-ASCII and other bytes URIs forbid percent-encoded (UTF-8), the host in
 * lower case and punycode, "http:g" against an http base read as "g", "https:g"
 * as "https://g"; and as the WHATWG URL Standard reads them: the slashes after a
 * special scheme, the userinfo (to the last '@', empty parts dropped, encoded by
 * its set), "%2e" dot segments, IP addresses in every form browsers take written
 * one way and hosts ending in a number that are none refused (url_host.h). The
 * result is a URL curl accepts as it is. References with
 * another scheme ("mailto:x", "javascript:...") come back as written, their
 * scheme lower-cased: the caller filters schemes. */
int url_resolve(const char *base, const char *ref, char **out);

typedef struct url_norm_opts {
    int sort_query;           /* sort query parameters by name */
    const char *const *strip; /* NULL-ended list of parameter name patterns to drop:
                                 exact names, or prefixes ending in '*' ("utm_*") */
    int keep_fragment;
} url_norm_opts_t;

/* Normalize an absolute http(s) URL (opts may be NULL; other schemes give
 * URL_E_SCHEME): the cleaning url_resolve does, lower-case scheme and host, IDN to
 * punycode, default port dropped, dot segments removed (also those spelled "%2E"),
 * percent-escapes upper-cased and unreserved ones decoded, forbidden bytes and stray
 * '%' encoded, fragment dropped, empty path "/", empty query "?" dropped. Query parameters keep
 * their order unless sort_query (a stable sort by name, bytewise). strip patterns
 * compare without regard to case and also drop path parameters (";jsessionid=1");
 * when sorting or stripping, empty parameters ("a=1&&b=2") go too. Hosts of other
 * than letters, digits, '-', '_' and '.' (or an IP literal) give URL_E_HOST. */
int url_normalize(const char *url, const url_norm_opts_t *opts, char **out);

/* url_resolve then url_normalize, parsing the result once instead of twice: what a
 * link extractor wants. URL_E_SCHEME when the result is not http(s). */
int url_resolve_normalize(const char *base, const char *ref, const url_norm_opts_t *opts,
                          char **out);

/* A base URL checked once for the many references of a document. url_normalize and
 * url_resolve_normalize skip curl for a URL already in normalized form and for
 * plain references against such a base (with results the same to the byte); a
 * prepared base saves checking the base again for each reference. */
typedef struct url_base {
    const char *url;              /* as given, not copied: it must outlive the base */
    size_t len, path, dir, query; /* where the fast path cuts it; len 0: no fast path */
    /* Where each directory of the path starts (after its '/'), the root first and
     * dir last, for "../" references; ndirs 0 when there are more than fit (the fast
     * path then walks the path back). */
    unsigned short dirs[16];
    unsigned ndirs;
} url_base_t;

/* Prepare base (NULL: none, and references resolve against themselves, so that
 * only absolute ones do). Never fails: a base url_resolve_normalize would reject
 * makes url_resolve_base fail the same way. */
void url_base_prepare(const char *base, url_base_t *b);

/* url_resolve_normalize(base, ref, opts, out), the base prepared (with none, ref
 * against itself). */
int url_resolve_base(const url_base_t *b, const char *ref, const url_norm_opts_t *opts, char **out);

/* url_resolve_base with default options, into buf (URL_MAX_LENGTH + 1 bytes): what
 * a link extractor calls for every reference. URL_OK with the URL's length in *len,
 * and *normal 1 when it is in the form url_host_port_fast takes (checked on the
 * way); else an error as url_resolve_base gives it. */
int url_resolve_into(const url_base_t *b, const char *ref, char *buf, size_t *len, int *normal);

/* The commonest case of url_resolve_into, without writing the URL: a plain path
 * reference against a base in normal form, whose target (in normal form) is the
 * first *keep bytes of b->url and then the *rest_len bytes at *rest (in ref). URL_OK,
 * or -1 for any other reference, which url_resolve_into then takes. */
int url_resolve_parts(const url_base_t *b, const char *ref, size_t *keep, const char **rest,
                      size_t *rest_len);

/* For an http(s) URL already in normalized form (as url_normalize gives it, and
 * plainly so: the test is conservative), its host (not copied: *host points into
 * url, *host_len bytes, a name or an IPv4 address) and port (given, or the scheme's);
 * 0 when url is not in that form (parse it the long way), 1 when it is. */
int url_host_port_fast(const char *url, size_t len, const char **host, size_t *host_len, int *port);

/* s (len bytes, NUL bytes inside it maybe) as a string the functions above take:
 * leading and trailing C0 controls and spaces dropped (cleaning trims them anyway),
 * each NUL left written "%00", as the WHATWG URL Standard writes it wherever it does
 * not refuse it (in a host or a port "%00" fails as a NUL does). Into out (3 * len + 1
 * bytes), NUL-terminated; returns the length. For bindings, whose strings carry a
 * length. */
size_t url_escape_nul(const char *s, size_t len, char *out);

/* 64-bit xxhash (XXH3) of a string; url_fingerprint normalizes first (with
 * default options) and hashes the result; an unparsable URL hashes as given. */
uint64_t url_hash(const char *s, size_t len);
uint64_t url_fingerprint(const char *url);

/* The host of url, lower-cased, punycode (IPv6 without brackets); the registrable domain
 * ("example.co.uk" for "a.b.example.co.uk") via libpsl, or the host itself for IP
 * addresses and names with no registrable part. */
int url_host(const char *url, char **out);
int url_site(const char *url, char **out);

#endif
