/* http_cookies.h: cookie jars on libcurl's cookie engine. A jar is a CURLSH that shares
 * CURL_LOCK_DATA_COOKIE: a transfer given the jar (http_req_cookies) has curl parse
 * its Set-Cookie headers into it and send back what RFC 6265 allows (domain and path
 * matching, Secure only over https, expiry, no cookie for a public suffix: libpsl),
 * at every hop of a redirect. The functions here read and change a jar from outside
 * a transfer, by the same rules. Knows nothing of the loop or Lua.
 *
 * A jar is reference-counted: its maker holds one reference and each request using
 * it another, so that a jar dropped by its maker stays alive while transfers use it;
 * so does each easy handle an engine keeps on the jar between its requests (http_pool.c's
 * pool, at most 64 handles: a dropped jar goes once its handles serve other requests
 * or the engine ends). Not thread-safe: a jar belongs to one engine's thread.
 *
 * A jar is capped as browsers cap theirs (Chrome's numbers): a site (a registrable
 * domain and its hosts) holds at most COOKIES_SITE_MAX cookies, the jar at most
 * COOKIES_JAR_MAX; past either, the oldest go, down to COOKIES_SITE_KEEP a site and
 * COOKIES_JAR_KEEP in all. curl 7.88 has no cap, and walks a site's cookies for each
 * one it stores. */
#ifndef LUACRAWL_HTTP_COOKIES_H
#define LUACRAWL_HTTP_COOKIES_H

#include <curl/curl.h>
#include <stddef.h>

typedef struct cookies cookies_t;

#define COOKIES_SITE_MAX 180
#define COOKIES_SITE_KEEP 150
#define COOKIES_JAR_MAX 3300
#define COOKIES_JAR_KEEP 3000

/* One cookie as the jar holds it. */
typedef struct cookie {
    const char *name, *value;
    const char *domain; /* without a leading dot */
    const char *path;
    int host_only; /* sent to domain alone, not to its subdomains (no Domain attribute) */
    int secure, http_only;
    long long expires; /* seconds since the epoch; 0: a session cookie */
} cookie_t;

/* Called for each cookie; return non-zero to stop. */
typedef int (*cookies_fn)(void *arg, const cookie_t *c);

/* A new empty jar with one reference; NULL when out of memory. */
cookies_t *cookies_new(void);
cookies_t *cookies_ref(cookies_t *jar);
void cookies_unref(cookies_t *jar);

/* The share a transfer using the jar sets as CURLOPT_SHARE (it shares TLS sessions
 * too, since a handle takes one share), with CURLOPT_COOKIEFILE "" to turn curl's
 * cookie engine on. */
CURLSH *cookies_share(cookies_t *jar);

/* Store a cookie as if url's response had sent "Set-Cookie: line": Domain must
 * cover url's host and not be a public suffix, Secure needs an https URL, a missing
 * Path is url's directory, Max-Age or Expires in the past deletes. 0, or -1 with
 * the reason in err; -2 when url is not an http(s) URL. */
int cookies_set(cookies_t *jar, const char *url, const char *line, char *err, size_t errlen);

/* Every cookie in the jar (url NULL), or those a request to url would send, in the
 * order they would go (longest path first). 0, or -1 when url is not an http(s) URL
 * or memory runs out (err says which). */
int cookies_each(cookies_t *jar, const char *url, cookies_fn fn, void *arg, char *err,
                 size_t errlen);

/* After curl stored up to n cookies for host (the Set-Cookie lines of one response):
 * the jar is counted when that may have taken a site past its cap (cookies.c). */
void cookies_added(cookies_t *jar, const char *host, size_t n);

/* Forget every cookie. */
void cookies_clear(cookies_t *jar);

#endif
