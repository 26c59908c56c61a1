/* http_headers.h: the User-Agent and Accept-Encoding headers of a plain request, as
 * curl header lists made once per user agent.
 *
 * Given CURLOPT_USERAGENT and CURLOPT_ACCEPT_ENCODING, curl 7.88 prints both header
 * lines for every request with its own printf, which appends a byte at a time, and
 * then prints them again into the request, a measurable part of a crawl's work.
 * Handed over as a ready CURLOPT_HTTPHEADER list (with CURLOPT_USERAGENT
 * unset, and CURLOPT_ACCEPT_ENCODING still "" so that curl decodes what it
 * advertised), they are printed once. The Accept-Encoding value is the one curl
 * would send: the encodings its build decodes ("deflate, gzip, br, zstd"). */
#ifndef LUACRAWL_HTTP_HEADERS_H
#define LUACRAWL_HTTP_HEADERS_H

struct curl_slist;
typedef struct http_headers http_headers_t;

/* features: curl_version_info's (http.c reads them once for the process). NULL
 * when out of memory. */
http_headers_t *http_headers_new(long features);
void http_headers_free(http_headers_t *hh);

/* The list for this user agent, valid until http_headers_free (curl keeps the
 * pointer while a transfer runs); NULL when there is none to give (more user
 * agents than it keeps, out of memory, a curl that decodes nothing): the caller
 * then sets CURLOPT_USERAGENT as usual. */
struct curl_slist *http_headers_for(http_headers_t *hh, const char *user_agent);

#endif
