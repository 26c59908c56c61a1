/* http_cookies.h: cookie jars, kept by luacrawl rather than by libcurl's cookie engine
 * (which a transfer never turns on). A transfer with a jar (http_req_cookies) sends the
 * Cookie header cookies_header makes for each hop's URL and gives the jar its response's
 * Set-Cookie lines (cookies_take); both follow RFC 6265 as curl 7.88 does (domain and
 * path matching, Secure only in a secure context, expiry, no cookie for a public suffix:
 * libpsl). The other functions read and change a jar from outside a transfer, by the
 * same rules. Knows nothing of the loop or Lua.
 *
 * A jar is reference-counted: its maker holds one reference and each request using it
 * another, so that a jar dropped by its maker stays alive while transfers use it. Not
 * thread-safe: a jar belongs to one engine's thread.
 *
 * A jar is capped as browsers cap theirs (Chrome's numbers): a site (a registrable
 * domain and its hosts) holds at most COOKIES_SITE_MAX cookies, its oldest going past
 * that; past COOKIES_JAR_MAX in all, the sites holding the most lose their oldest, down
 * to COOKIES_JAR_KEEP. Storing a cookie, and the Cookie header of a request, cost the
 * same however full the jar is. */
#ifndef LUACRAWL_HTTP_COOKIES_H
#define LUACRAWL_HTTP_COOKIES_H

#include <curl/curl.h>
#include <stddef.h>

typedef struct cookies cookies_t;

#define COOKIES_SITE_MAX 180
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

/* Store a cookie as if url's response had sent "Set-Cookie: line": Domain must
 * cover url's host and not be a public suffix, Secure needs an https URL, a missing
 * Path is url's directory, Max-Age or Expires in the past deletes; a cookie that is not
 * Secure, from a URL that is not a secure context, may not shadow a Secure one. 0, or
 * -1 with the reason in err; -2 when url is not an http(s) URL. */
int cookies_set(cookies_t *jar, const char *url, const char *line, char *err, size_t errlen);

/* Every cookie in the jar (url NULL), or those a request to url would send, in the
 * order they would go (longest path first). 0, or -1 when url is not an http(s) URL
 * (err says why). */
int cookies_each(cookies_t *jar, const char *url, cookies_fn fn, void *arg, char *err,
                 size_t errlen);

/* The Cookie header's value for a request to url, into *value (malloc'd; NULL when no
 * cookie goes). 0, or -1 when url is not an http(s) URL or memory runs out. */
int cookies_header(cookies_t *jar, const char *url, char **value);

/* Store n Set-Cookie values of url's response (lines: each ends with a '\0'), by the
 * rules of cookies_set; those the rules refuse are ignored, as browsers do. */
void cookies_take(cookies_t *jar, const char *url, const char *lines, size_t n);

/* Forget every cookie. */
void cookies_clear(cookies_t *jar);

#endif
