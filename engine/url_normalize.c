/* url_normalize.c: URL normalization through curl's URL API (url_internal.h): percent-
 * escapes normalized, dot segments removed, path parameters stripped, the query
 * rewritten (parameters dropped or sorted). The slow path of url_normalize; url_fast.c
 * serves URLs already in normal form without it, and url.c's resolution calls it to
 * render a resolved URL normalized. */
#include "url.h"
#include "url_chars.h"
#include "url_host.h"
#include "url_internal.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

/* Copy s (n bytes) to out with escapes normalized: hex digits upper-cased, escaped
 * unreserved characters decoded, forbidden bytes encoded, and also (the byte the part
 * adds to them: '#' in a fragment, '\'' in the query of http(s), or 0).
 * A '%' not followed by two hex digits becomes "%25" (browsers leave it, but then
 * "%%41" would change again on a second pass). out must hold 3 * n bytes. *dot is
 * set when an escaped '.' was decoded. */
static size_t norm_escapes(const char *s, size_t n, char *out, unsigned also, int *dot)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)s[i];
        int hi, lo;
        if (c == '%' && i + 2 < n && (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
            (lo = hexval((unsigned char)s[i + 2])) >= 0) {
            unsigned v = (unsigned)(hi << 4 | lo);
            if (is_unreserved(v)) {
                out[w++] = (char)v;
                if (v == '.') *dot = 1;
            } else {
                out[w++] = '%';
                out[w++] = HEX[hi];
                out[w++] = HEX[lo];
            }
            i += 2;
        } else if (must_encode(c) || c == '%' || (also && c == also)) {
            out[w++] = '%';
            out[w++] = HEX[c >> 4];
            out[w++] = HEX[c & 15];
        } else {
            out[w++] = (char)c;
        }
    }
    return w;
}

/* RFC 3986 section 5.2.4 on an absolute path, in place; returns the new length.
 * curl has already done it once; this runs again only when decoding "%2E" made
 * new dot segments ("%2E" segments are dots before curl sees them: url_clean()), or on
 * a target of url_fast.c. */
size_t url_remove_dots(char *p, size_t n)
{
    size_t w = 0, i = 0;
    while (i < n) { /* p[i] == '/' */
        size_t j = i + 1;
        while (j < n && p[j] != '/')
            j++;
        int kind = dot_segment_kind(p + i + 1, j - i - 1);
        if (kind) {
            if (kind == 2)
                while (w > 0 && p[--w] != '/') {
                }
            if (j == n) p[w++] = '/';
        } else {
            memmove(p + w, p + i, j - i);
            w += j - i;
        }
        i = j;
    }
    return w;
}

static int strip_match(const char *const *pats, const char *name, size_t n)
{
    for (; *pats; pats++) {
        size_t pl = strlen(*pats);
        if (pl && (*pats)[pl - 1] == '*') {
            if (n >= pl - 1 && ascii_caseeq(name, *pats, pl - 1)) return 1;
        } else if (pl == n && ascii_caseeq(name, *pats, n)) {
            return 1;
        }
    }
    return 0;
}

/* Drop path parameters (";jsessionid=...") whose names match, in place. */
static size_t strip_path_params(char *p, size_t n, const char *const *pats)
{
    size_t w = 0, i = 0;
    while (i < n) {
        if (p[i] != ';') {
            p[w++] = p[i++];
            continue;
        }
        size_t j = i + 1;
        while (j < n && p[j] != ';' && p[j] != '/')
            j++;
        /* The name ends at '=' within the parameter (p is not NUL-terminated). */
        size_t name = 0;
        while (i + 1 + name < j && p[i + 1 + name] != '=')
            name++;
        if (!strip_match(pats, p + i + 1, name)) {
            memmove(p + w, p + i, j - i);
            w += j - i;
        }
        i = j;
    }
    return w;
}

typedef struct param {
    const char *s;
    size_t len, name;
    size_t index; /* the original position: a stable sort keeps repeated names in order */
} param_t;

static int param_cmp(const void *a, const void *b)
{
    const param_t *x = a, *y = b;
    size_t n = x->name < y->name ? x->name : y->name;
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return x->index < y->index ? -1 : 1;
}

/* Rewrite the query q (n bytes) into out: empty parameters and those opts strips
 * dropped, sorted by name if asked. Returns the new length. */
static int rewrite_query(scratch_t *sc, const char *q, size_t n, const url_norm_opts_t *opts,
                         char *out, size_t *outlen)
{
    size_t count = 1;
    for (size_t i = 0; i < n; i++)
        count += q[i] == '&';
    param_t *ps = url_scratch_alloc(sc, count * sizeof(*ps));
    if (!ps) return URL_E_NOMEM;
    size_t np = 0;
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && q[j] != '&')
            j++;
        if (j > i) {
            param_t *p = &ps[np];
            p->s = q + i;
            p->len = j - i;
            p->name = 0;
            while (p->name < p->len && p->s[p->name] != '=')
                p->name++;
            p->index = np;
            if (!opts->strip || !strip_match(opts->strip, p->s, p->name)) np++;
        }
        i = j + 1;
    }
    if (opts->sort_query && np > 1) qsort(ps, np, sizeof(*ps), param_cmp);
    size_t w = 0;
    for (size_t k = 0; k < np; k++) {
        if (k) out[w++] = '&';
        memcpy(out + w, ps[k].s, ps[k].len);
        w += ps[k].len;
    }
    *outlen = w;
    return URL_OK;
}

/* Normalize the URL curl rendered (u, split by s) into out (3 * s->len + 1 bytes). */
static int rebuild(scratch_t *sc, const char *u, const split_t *s, const url_norm_opts_t *opts,
                   char *out, size_t *outlen)
{
    static const url_norm_opts_t none = {0, NULL, 0};
    if (!opts) opts = &none;
    size_t w = s->auth, at = url_host_start(u, s), e = url_host_end(u, at, s), cn;
    int dot = 0;
    char canon[URL_HOST_CANON_MAX];
    int kind = url_host_canon(u + at, e - at, canon, &cn);
    if (kind < 0) return URL_E_HOST;
    memcpy(out, u, s->auth); /* "http://", lower-cased by curl */
    if (at > s->auth) w += norm_escapes(u + s->auth, at - s->auth, out + w, 0, &dot);
    if (kind != URL_HOST_NAME) {
        memcpy(out + w, canon, cn);
        w += cn;
        at = e;
    }
    for (size_t i = at; i < s->path; i++)
        out[w++] = (char)ascii_lower((unsigned char)u[i]);

    size_t path = w;
    dot = 0;
    w += norm_escapes(u + s->path, s->query - s->path, out + w, 0, &dot);
    if (w == path) out[w++] = '/';
    if (opts->strip && memchr(out + path, ';', w - path)) {
        size_t n = strip_path_params(out + path, w - path, opts->strip);
        dot |= n != w - path; /* "/.;sid=1" leaves a dot segment */
        w = path + n;
    }
    if (dot) w = path + url_remove_dots(out + path, w - path);

    if (s->frag > s->query + 1) {
        out[w++] = '?';
        size_t q = w;
        w += norm_escapes(u + s->query + 1, s->frag - s->query - 1, out + w, '\'', &dot);
        if (opts->sort_query || opts->strip) {
            char *tmp = url_scratch_alloc(sc, w - q);
            if (!tmp) return URL_E_NOMEM;
            memcpy(tmp, out + q, w - q);
            size_t qn;
            int err = rewrite_query(sc, tmp, w - q, opts, out + q, &qn);
            if (err) return err;
            w = q + qn;
        }
        if (w == q) w--; /* an empty query is no query */
    }
    if (opts->keep_fragment && s->len > s->frag + 1) {
        out[w++] = '#';
        w += norm_escapes(u + s->frag + 1, s->len - s->frag - 1, out + w, '#', &dot);
    }
    out[w] = '\0';
    if (w > URL_MAX_LENGTH) return URL_E_TOO_LONG;
    *outlen = w;
    return URL_OK;
}

/* Normalize url into scratch memory: *res points into sc. */
/* The URL parsed in h, normalized into scratch memory (*res points into sc). */
int url_render_normalized(CURLU *h, scratch_t *sc, const url_norm_opts_t *opts, char **res,
                          size_t *reslen)
{
    char *u = NULL;
    CURLUcode rc = url_get_part(h, CURLUPART_URL, &u, CURLU_NO_DEFAULT_PORT);
    if (rc) return url_from_curl(rc);
    split_t s;
    url_split_rendered(u, &s);
    int err = URL_E_SCHEME;
    if (s.auth >= 3 && is_special(u, s.auth - 3)) {
        err = URL_E_NOMEM;
        *res = url_scratch_alloc(sc, 3 * s.len + 2 + URL_HOST_CANON_MAX);
        if (*res) err = rebuild(sc, u, &s, opts, *res, reslen);
    }
    curl_free(u);
    return err;
}

int url_malloc_copy(int err, const char *s, size_t len, char **out)
{
    if (err) return err;
    *out = malloc(len + 1);
    if (!*out) return URL_E_NOMEM;
    /* s is set when err is URL_OK: the analyzer, short of inlining from_curl deep in
     * url_normalize, takes a failed curl_set for success. */
    memcpy(*out, s, len + 1); /* NOLINT(clang-analyzer-core.NonNullParamChecker) */
    return URL_OK;
}

static int normalize(CURLU *h, scratch_t *sc, const char *url, const url_norm_opts_t *opts,
                     char **res, size_t *reslen)
{
    size_t n;
    if (url_too_long(url, &n)) return URL_E_TOO_LONG;
    char *buf = url_scratch_alloc(sc, 3 * n + 1);
    if (!buf) return URL_E_NOMEM;
    n = url_clean(url, n, NULL, 0, buf);
    size_t sl = scheme_len(buf, n);
    if (!sl || !is_special(buf, sl)) return URL_E_SCHEME;
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, buf, 0);
    if (rc) return url_from_curl(rc);
    return url_render_normalized(h, sc, opts, res, reslen);
}

/* url_normalize without the fast path (url_fast.c). */
static int url_normalize_slow_once(const char *url, const url_norm_opts_t *opts, char **out)
{
    *out = NULL;
    CURLU *h = curl_url();
    if (!h) return URL_E_NOMEM;
    scratch_t sc;
    url_scratch_init(&sc);
    char *res = NULL;
    size_t len = 0;
    int err = normalize(h, &sc, url, opts, &res, &len);
    err = url_malloc_copy(err, res, len, out);
    url_scratch_free(&sc);
    curl_url_cleanup(h);
    return err;
}

/* Whether the host part of url may hold a percent sign: anything before the path,
 * query or fragment after the scheme ("http:0%36/" has no "//" but a host). */
static int host_has_escape(const char *url)
{
    const char *a = strchr(url, ':');
    if (!a) return 0;
    /* Tabs and newlines are dropped anywhere in a URL: "https:\n//%39/" has a host. */
    for (a++; *a == '/' || *a == '\\' || *a == '\t' || *a == '\n' || *a == '\r'; a++) {
    }
    for (; *a && *a != '/' && *a != '\\' && *a != '?' && *a != '#'; a++)
        if (*a == '%') return 1;
    return 0;
}

int url_normalize_slow(const char *url, const url_norm_opts_t *opts, char **out)
{
    int err = url_normalize_slow_once(url, opts, out);
    /* curl decodes escapes in hosts ("%39" -> "9") after its own checks of numeric
     * hosts: a second pass gives the form a third would keep ("0.0.0.9"), so
     * normalizing stays idempotent. */
    if (err == URL_OK && (host_has_escape(url) || url_host_reparses(*out))) {
        char *again = NULL;
        int err2 = url_normalize_slow_once(*out, opts, &again);
        if (err2 == URL_OK) {
            free(*out);
            *out = again;
        }
    }
    return err;
}
