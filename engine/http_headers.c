/* http_headers.c: ready header lists for plain requests (http_headers.h). */
#include "http_headers.h"

#include "http_decode.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEPT 8 /* user agents: a crawl has one or two */

struct http_headers {
    char *accept_encoding; /* the header line, NULL when curl decodes nothing */
    struct {
        char *ua;
        struct curl_slist *list;
    } kept[KEPT];
    int nkept;
};

/* The encodings http_decode.c decodes: curl's own decoding is off (http_pool.c). */
static char *accept_encoding_line(long features)
{
    (void)features;
    char line[96];
    snprintf(line, sizeof(line), "Accept-Encoding: %s", http_decode_accept());
    return strdup(line);
}

http_headers_t *http_headers_new(long features)
{
    http_headers_t *hh = calloc(1, sizeof(*hh));
    if (hh) hh->accept_encoding = accept_encoding_line(features);
    return hh;
}

void http_headers_free(http_headers_t *hh)
{
    if (!hh) return;
    for (int i = 0; i < hh->nkept; i++) {
        free(hh->kept[i].ua);
        curl_slist_free_all(hh->kept[i].list);
    }
    free(hh->accept_encoding);
    free(hh);
}

/* The list for ua, new: NULL when out of memory. */
static struct curl_slist *make_list(const char *ae, const char *ua)
{
    size_t n = strlen(ua) + sizeof("User-Agent: ");
    char *line = malloc(n);
    if (!line) return NULL;
    snprintf(line, n, "User-Agent: %s", ua);
    struct curl_slist *list = curl_slist_append(NULL, line);
    free(line);
    if (!list) return NULL;
    struct curl_slist *both = curl_slist_append(list, ae);
    if (!both) curl_slist_free_all(list);
    return both;
}

struct curl_slist *http_headers_for(http_headers_t *hh, const char *ua)
{
    if (!hh->accept_encoding || !*ua) return NULL; /* "" sends no User-Agent: curl's way */
    for (int i = 0; i < hh->nkept; i++)
        if (strcmp(hh->kept[i].ua, ua) == 0) return hh->kept[i].list;
    if (hh->nkept == KEPT) return NULL;
    char *copy = strdup(ua);
    struct curl_slist *list = copy ? make_list(hh->accept_encoding, ua) : NULL;
    if (!list) {
        free(copy);
        return NULL;
    }
    hh->kept[hh->nkept].ua = copy;
    hh->kept[hh->nkept].list = list;
    hh->nkept++;
    return list;
}
