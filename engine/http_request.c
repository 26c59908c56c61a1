/* http_request.c: the request builder. http_req_* (http.h) fill a request with what
 * the caller checked and the defaults below; http_pool.c turns it into curl options as
 * it sets each hop up (http_req_plain, http_req_setopt). */
#include "http.h"

#include "http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TIMEOUT 30.0
#define DEFAULT_CONNECT_TIMEOUT 10.0
#define DEFAULT_MAX_BODY (10u << 20)
#define DEFAULT_MAX_HEADER (256u << 10)

static int has_crlf(const char *s)
{
    return strpbrk(s, "\r\n") != NULL;
}

static int set_str(char **dst, const char *src)
{
    char *copy = src ? strdup(src) : NULL;
    if (src && !copy) return -1;
    free(*dst);
    *dst = copy;
    return 0;
}

http_req_t *http_req_new(const char *url)
{
    http_req_t *req = calloc(1, sizeof(*req));
    if (!req) return NULL;
    if (!(req->url = strdup(url))) {
        free(req);
        return NULL;
    }
    req->timeout = DEFAULT_TIMEOUT;
    req->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
    req->max_body = DEFAULT_MAX_BODY;
    req->max_header = DEFAULT_MAX_HEADER;
    req->max_url = HTTP_MAX_URL;
    return req;
}

void http_req_free(http_req_t *req)
{
    if (!req) return;
    free(req->url);
    free(req->method);
    curl_slist_free_all(req->headers);
    free(req->body);
    free(req->user_agent);
    free(req->proxy);
    free(req->ca_file);
    addr_policy_free(req->policy);
    cookies_unref(req->cookies);
    free(req);
}

/* src's lines appended to *dst; -1 when out of memory (*dst, all it holds, stays the
 * caller's to free). */
static int copy_lines(struct curl_slist **dst, const struct curl_slist *src)
{
    for (; src; src = src->next) {
        struct curl_slist *l = curl_slist_append(*dst, src->data);
        if (!l) return -1;
        *dst = l;
    }
    return 0;
}

http_req_t *http_req_copy(const http_req_t *r, const char *url)
{
    http_req_t *req = http_req_new(url);
    if (!req) return NULL;
    req->timeout = r->timeout;
    req->connect_timeout = r->connect_timeout;
    req->max_body = r->max_body;
    req->max_header = r->max_header;
    req->max_url = r->max_url;
    req->follow = r->follow;
    req->insecure = r->insecure;
    req->truncate = r->truncate;
    req->keep_credentials = r->keep_credentials;
    req->follow_site = r->follow_site;
    req->archive = r->archive;
    if (set_str(&req->method, r->method) < 0 || set_str(&req->user_agent, r->user_agent) < 0 ||
        set_str(&req->proxy, r->proxy) < 0 || set_str(&req->ca_file, r->ca_file) < 0 ||
        copy_lines(&req->headers, r->headers) < 0)
        goto fail;
    if (r->has_body && http_req_body(req, r->body, r->body_len) < 0) goto fail;
    if (r->policy && !(req->policy = addr_policy_copy(r->policy))) goto fail;
    http_req_cookies(req, r->cookies);
    return req;
fail:
    http_req_free(req);
    return NULL;
}

int http_req_method(http_req_t *req, const char *method)
{
    if (!*method || strlen(method) > 32) return -1;
    for (const char *p = method; *p; p++)
        if (*p < 'A' || *p > 'Z') return -1;
    return set_str(&req->method, method);
}

int http_req_header(http_req_t *req, const char *name, const char *value)
{
    if (!*name || has_crlf(name) || has_crlf(value) || strchr(name, ':')) return -1;
    size_t n = strlen(name) + strlen(value) + 3;
    char *line = malloc(n);
    if (!line) return -1;
    /* "Name;" is curl's way to send a header with an empty value. */
    if (*value)
        snprintf(line, n, "%s: %s", name, value);
    else
        snprintf(line, n, "%s;", name);
    struct curl_slist *l = curl_slist_append(req->headers, line);
    free(line);
    if (!l) return -1;
    req->headers = l;
    return 0;
}

int http_req_body(http_req_t *req, const char *data, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy) return -1;
    memcpy(copy, data, len);
    free(req->body);
    req->body = copy;
    req->body_len = len;
    req->has_body = 1;
    return 0;
}

int http_req_user_agent(http_req_t *req, const char *ua)
{
    if (has_crlf(ua)) return -1;
    return set_str(&req->user_agent, ua);
}

int http_req_proxy(http_req_t *req, const char *proxy)
{
    return set_str(&req->proxy, proxy);
}

void http_req_timeout(http_req_t *req, double total, double connect)
{
    if (total > 0) req->timeout = total;
    if (connect > 0) req->connect_timeout = connect;
}

void http_req_max_size(http_req_t *req, size_t max_body, size_t max_header)
{
    if (max_body > 0) req->max_body = max_body;
    if (max_header > 0) req->max_header = max_header;
}

void http_req_follow(http_req_t *req, int max_redirects)
{
    req->follow = max_redirects > 0 ? max_redirects : 0;
}

void http_req_max_url(http_req_t *req, size_t max_url)
{
    if (max_url > 0) req->max_url = max_url;
}

void http_req_truncate(http_req_t *req, int truncate)
{
    req->truncate = truncate;
}

void http_req_insecure(http_req_t *req, int insecure)
{
    req->insecure = insecure;
}

int http_req_ca_file(http_req_t *req, const char *path)
{
    return set_str(&req->ca_file, path);
}

void http_req_policy(http_req_t *req, addr_policy_t *policy)
{
    addr_policy_free(req->policy);
    req->policy = policy;
}

void http_req_keep_credentials(http_req_t *req, int keep)
{
    req->keep_credentials = keep;
}

void http_req_follow_site(http_req_t *req, int site)
{
    req->follow_site = site;
}

void http_req_archive(http_req_t *req, int archive)
{
    req->archive = archive;
}

void http_req_cookies(http_req_t *req, cookies_t *jar)
{
    cookies_unref(req->cookies);
    req->cookies = jar ? cookies_ref(jar) : NULL;
}

/* ---- what a transfer asks (http_internal.h) ---- */

const char *http_req_method_name(const http_req_t *r)
{
    return r->method ? r->method : (r->has_body ? "POST" : "GET");
}

int http_req_plain(const http_req_t *r)
{
    return !r->method && !r->has_body && !r->headers && !r->proxy && !r->ca_file && !r->insecure &&
           !r->archive;
}

int http_req_setopt(const http_req_t *r, CURL *e)
{
    int bad = 0;
    if (r->headers) curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    if (r->ca_file) bad |= curl_easy_setopt(e, CURLOPT_CAINFO, r->ca_file) != CURLE_OK;
    if (r->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    const char *m = http_req_method_name(r);
    if (strcmp(m, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (r->has_body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
        if (strcmp(m, "POST") != 0)
            bad |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m) != CURLE_OK;
    } else if (strcmp(m, "GET") != 0) {
        bad |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m) != CURLE_OK;
    }
    return bad ? -1 : 0;
}
