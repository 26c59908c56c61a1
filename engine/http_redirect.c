/* http_redirect.c: redirects, followed by us (never by curl) when a request asks:
 * the next hop's URL, within the request's site when it says so; the credentials
 * dropped on a hop to another origin (http.h, http_req_keep_credentials); the
 * method and body as browsers change them. */
#include "http.h"

#include "http_internal.h"
#include "url.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Whether URLs a and b differ in scheme, host or port (one that does not parse
 * counts as different). */
static int cross_origin(const char *a, const char *b)
{
    url_parts_t pa = {0}, pb = {0};
    int differ = url_parse(a, &pa) != URL_OK || url_parse(b, &pb) != URL_OK ||
                 !same_str(pa.scheme, pb.scheme) || !same_str(pa.host, pb.host) ||
                 !same_str(pa.port, pb.port);
    url_parts_free(&pa);
    url_parts_free(&pb);
    return differ;
}

static int same_site(const char *a, const char *b)
{
    char *sa = NULL, *sb = NULL;
    int same = url_site(a, &sa) == URL_OK && url_site(b, &sb) == URL_OK && strcmp(sa, sb) == 0;
    free(sa);
    free(sb);
    return same;
}

/* "Name: value" or "Name;" (http_req_header's forms) of a header that carries
 * credentials. */
static int is_credential(const char *line)
{
    static const char *const names[] = {"authorization", "cookie", "proxy-authorization"};
    size_t n = strcspn(line, ":;");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == n && strncasecmp(line, names[i], n) == 0) return 1;
    return 0;
}

/* The one rule for credentials on a redirect (http.h, http_req_keep_credentials):
 * req's credential headers go, and *url loses its user name and password. -1 when
 * out of memory. */
static int drop_credentials(http_req_t *req, char **url)
{
    struct curl_slist *kept = NULL;
    for (struct curl_slist *l = req->headers; l; l = l->next) {
        if (is_credential(l->data)) continue;
        struct curl_slist *k = curl_slist_append(kept, l->data);
        if (!k) {
            curl_slist_free_all(kept);
            return -1;
        }
        kept = k;
    }
    curl_slist_free_all(req->headers);
    req->headers = kept;
    if (!strchr(*url, '@')) return 0;
    CURLU *u = curl_url();
    char *out = NULL;
    if (!u) return -1;
    int rc = 0;
    /* A URL curl cannot parse stays as it is: parse_url refuses it next. */
    if (curl_url_set(u, CURLUPART_URL, *url, 0) == CURLUE_OK) {
        curl_url_set(u, CURLUPART_USER, NULL, 0);
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
        curl_url_set(u, CURLUPART_OPTIONS, NULL, 0);
        char *copy = NULL;
        if (curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK || !(copy = strdup(out))) {
            rc = -1;
        } else {
            free(*url);
            *url = copy;
        }
    }
    curl_free(out);
    curl_url_cleanup(u);
    return rc;
}

int http_follow_redirect(http_xfer_t *x)
{
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status < 300 || status > 399 || status == 304 || x->redirects >= x->req->follow) return 0;
    char *location = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &location);
    if (!location) return 0;
    char *next = strdup(location);
    if (!next) return -1;
    if (x->req->follow_site && !same_site(x->req->url, next)) {
        free(next);
        return 0;
    }
    if (!x->req->keep_credentials && cross_origin(x->url, next) &&
        drop_credentials(x->req, &next) < 0) {
        free(next);
        return -1;
    }
    /* 303, and 301/302 after a POST, turn into GET as browsers do. */
    const char *m = http_req_method_name(x->req);
    if (status == 303 || ((status == 301 || status == 302) && strcmp(m, "POST") == 0)) {
        if (strcmp(m, "HEAD") != 0 && http_req_method(x->req, "GET") < 0) {
            free(next);
            return -1;
        }
        free(x->req->body);
        x->req->body = NULL;
        x->req->has_body = 0;
        x->req->body_len = 0;
    }
    if (x->capture) { /* this hop's exchange is whole; its body is about to go */
        char *ip = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_IP, &ip);
        http_capture_settle_body(x->capture, x->body.p, x->body.n);
        http_capture_end(x->capture, ip, 0);
    }
    free(x->url);
    x->url = next;
    x->redirects++;
    http_response_restart(x);
    if (!http_req_plain(x->req))
        http_easy_reset(x); /* http_easy_setup sets the next hop up whole */
    return 1;
}
