/* url.c: URL parsing, resolution and hosts, through curl's URL API (normalization is
 * url_normalize.c's; what the two share is in url_internal.h).
 * curl parses and validates, removes dot segments, lower-cases schemes and converts
 * IDN hosts; libpsl knows registrable domains. This file adds only what none of them
 * does: the pre-cleaning browsers apply to references, the RFC 3986 merge of a
 * relative reference (curl's own gets "", "#s" and "..//x" wrong), percent-escape
 * normalization and query rewriting.
 *
 * Hot path: url_resolve_normalize and url_fingerprint run for every link of every
 * page. URLs already normalized, and plain references against such a base, skip
 * curl altogether: url_fast.c holds those entry points, and calls the slow paths
 * here (url_internal.h) for the rest. Here, apart from curl's own allocations,
 * nothing is allocated for URLs that fit SCRATCH_STACK. */
#include "url.h"
#include "url_chars.h"
#include "url_host.h"
#include "url_internal.h"

#include <ctype.h>
#include <curl/curl.h>
#include <libpsl.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *url_strerror(int code)
{
    switch (code) {
    case URL_OK:
        return "no error";
    case URL_E_MALFORMED:
        return "malformed URL";
    case URL_E_SCHEME:
        return "missing or unsupported scheme";
    case URL_E_HOST:
        return "missing or invalid host";
    case URL_E_PORT:
        return "invalid port number";
    case URL_E_TOO_LONG:
        return "URL too long";
    case URL_E_NOMEM:
        return "out of memory";
    default:
        return "unknown URL error";
    }
}

/* What the standard percent-encodes in userinfo: C0 controls, space, non-ASCII and
 * " # < > ? ` { } / : ; = @ [ \ ] ^ | */
static const uint32_t USERINFO_ENC[8] = {0xffffffff, 0xfc00800d, 0x78000001, 0xb8000001,
                                         0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};

/* Where url_clean() cuts a URL: the authority from auth (userinfo up to at, the '@'
 * whose first ':' is colon; host and port to auth_end), the query from query, the
 * fragment from frag. Without an authority auth, at and auth_end are where the path
 * starts; without a userinfo at is auth. */
typedef struct layout {
    size_t auth, at, colon, auth_end, query, frag;
    int special;
} layout_t;

/* The bytes url_clean() looks at twice after the authority: FORBIDDEN, # ? and '. */
static const uint32_t CLEAN_STOP[8] = {0xffffffff, 0xd000008d, 0x50000000, 0xb8000001,
                                       0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};

/* Whether url_clean() writes dst[i] == c percent-encoded. */
static int clean_encodes(const layout_t *l, size_t i, unsigned c)
{
    if (i < l->at) return in_set(USERINFO_ENC, c) && i != l->colon;
    if (i < l->auth_end) return 0; /* the host keeps raw UTF-8 for IDN */
    if (must_encode(c)) return 1;
    if (i > l->frag) return c == '#';
    /* The standard's special-query set: a quote too. */
    return l->special && c == '\'' && i > l->query && i < l->frag;
}

/* The userinfo of dst (m bytes) between l->auth and the last '@' of the authority
 * (the standard's: "http://a@b@c" is user "a@b" of host c): found, its empty parts
 * dropped ("http://:@h" is "http://h", "http://a:@h" is "http://a@h") and marked in
 * l. Returns the new length. */
static size_t userinfo(char *dst, size_t m, layout_t *l)
{
    l->at = l->colon = l->auth;
    size_t at = l->auth_end;
    while (at > l->auth && dst[at - 1] != '@')
        at--;
    /* No '@'; or nothing after it, which curl refuses as it stands (dropping an
     * empty userinfo would make "http://@/x" read as "http:///x"). */
    if (at == l->auth || at == l->auth_end) return m;
    at--;
    size_t colon = l->auth;
    while (colon < at && dst[colon] != ':')
        colon++;
    size_t cut = 0, from = 0;
    if (colon + 1 >= at && colon == l->auth) { /* nothing, or only ':' */
        from = l->auth;
        cut = at + 1 - l->auth;
    } else if (colon + 1 == at) { /* "user:" */
        from = colon;
        cut = 1;
    }
    if (cut) {
        memmove(dst + from, dst + from + cut, m - from - cut);
        m -= cut;
        at -= cut;
        l->auth_end -= cut;
        if (from == l->auth) return m;
    }
    l->at = at;
    l->colon = colon < at ? colon : at;
    return m;
}

/* The path of dst (m bytes) from path on, its dot segments spelled with "%2e"
 * written "." and "..", in place, so that curl removes them where the standard
 * does ("a/%2e%2e/b" is "b"). Returns the new length. */
static size_t spelled_dots(char *dst, size_t m, size_t path)
{
    if (!memchr(dst + path, '%', m - path)) return m; /* most URLs */
    size_t end = path;
    while (end < m && dst[end] != '?' && dst[end] != '#')
        end++;
    size_t w = path, i = path;
    while (i < end) {
        size_t j = i;
        while (j < end && dst[j] != '/')
            j++;
        int kind = dot_segment_kind(dst + i, j - i);
        if (kind) {
            dst[w++] = '.';
            if (kind == 2) dst[w++] = '.';
        } else {
            memmove(dst + w, dst + i, j - i);
            w += j - i;
        }
        if (j < end) dst[w++] = '/';
        i = j + 1;
    }
    memmove(dst + w, dst + end, m - end);
    return w + (m - end);
}

/* Copy src (n bytes) into dst the way browsers pre-process a URL string: leading and
 * trailing C0 controls and spaces trimmed, tabs and newlines dropped anywhere; then,
 * if the scheme is http(s) (or, without a scheme, if the base's is), '\' read as
 * '/' before the query, and the slashes after the scheme made two as the standard
 * reads them: any number (none too) when the URL is absolute (base_sl 0: no base;
 * or another scheme than the base's), two or more in a reference; the userinfo
 * split at the authority's last '@', its empty parts dropped, percent-encoded by
 * the standard's userinfo set; dot segments spelled "%2e" written as dots; last,
 * bytes must_encode() names percent-encoded outside the authority, which keeps raw
 * UTF-8 for IDN, '#' inside the fragment, and '\'' in the query of http(s). dst
 * must hold 3 * n + 1 bytes. Returns the length. */
size_t url_clean(const char *src, size_t n, const char *base, size_t base_sl, char *dst)
{
    size_t a = 0, b = n, m = 0;
    while (a < b && (unsigned char)src[a] <= 0x20)
        a++;
    while (b > a && (unsigned char)src[b - 1] <= 0x20)
        b--;
    for (size_t i = a; i < b; i++)
        if (src[i] != '\t' && src[i] != '\r' && src[i] != '\n') dst[m++] = src[i];

    size_t sl = scheme_len(dst, m);
    size_t start = sl ? sl + 1 : 0;
    layout_t l;
    l.special = sl ? is_special(dst, sl) : base_sl && is_special(base, base_sl);
    if (l.special) {
        for (size_t i = start; i < m && dst[i] != '?' && dst[i] != '#'; i++)
            if (dst[i] == '\\') dst[i] = '/';
        size_t k = start;
        while (k < m && dst[k] == '/')
            k++;
        int absolute = sl && !(base_sl == sl && ascii_caseeq(dst, base, sl));
        if ((absolute || k - start >= 2) && k - start != 2) {
            /* Growing by two at most: the scheme's bytes are never encoded, so the
             * 3 * n bytes of dst still hold the result. */
            memmove(dst + start + 2, dst + k, m - k);
            m = m + 2 - (k - start);
            dst[start] = dst[start + 1] = '/';
        }
    }
    l.auth = l.at = l.colon = l.auth_end = start;
    /* clang-tidy's analyzer, past its limits on loops and inlining (through
     * host_or_site and parse_into), loses that scheme_len(dst, m) < m and that the
     * expansion below writes every byte it counted: it reports reads of bytes of
     * dst never written, here and in ascii_caseeq and scheme_len. */
    /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
    if (m - start >= 2 && dst[start] == '/' && dst[start + 1] == '/') {
        l.auth = l.auth_end = start + 2;
        while (l.auth_end < m && dst[l.auth_end] != '/' && dst[l.auth_end] != '?' &&
               dst[l.auth_end] != '#')
            l.auth_end++;
        m = userinfo(dst, m, &l);
    }
    m = spelled_dots(dst, m, l.auth_end);
    l.frag = l.query = m;
    size_t extra = 0;
    for (size_t i = l.auth; i < l.at; i++)
        if (clean_encodes(&l, i, (unsigned char)dst[i])) extra += 2;
    /* What clean_encodes() says, in one pass that finds the query and fragment too:
     * every byte of a reference's path comes here. */
    for (size_t i = l.auth_end; i < m; i++) {
        unsigned c = (unsigned char)dst[i];
        if (!in_set(CLEAN_STOP, c)) continue;
        if (must_encode(c))
            extra += 2;
        else if (c == '#') {
            if (l.frag == m)
                l.frag = i;
            else
                extra += 2;
        } else if (c == '?') {
            if (l.query == m && l.frag == m) l.query = i;
        } else if (c == '\'' && l.special && l.query < m && l.frag == m)
            extra += 2;
    }
    if (extra) { /* expand in place, right to left */
        size_t r = m, w = m + extra;
        while (r > l.auth) {
            unsigned c = (unsigned char)dst[--r];
            if (clean_encodes(&l, r, c) && r != l.frag) {
                dst[--w] = HEX[c & 15];
                dst[--w] = HEX[c >> 4];
                dst[--w] = '%';
            } else {
                dst[--w] = (char)c;
            }
        }
    }
    dst[m + extra] = '\0';
    return m + extra;
}

int url_from_curl(CURLUcode rc)
{
    switch (rc) {
    case CURLUE_OK:
        return URL_OK;
    case CURLUE_OUT_OF_MEMORY:
        return URL_E_NOMEM;
    case CURLUE_UNSUPPORTED_SCHEME:
    case CURLUE_BAD_SCHEME:
    case CURLUE_NO_SCHEME:
        return URL_E_SCHEME;
    case CURLUE_NO_HOST:
    case CURLUE_BAD_HOSTNAME:
    case CURLUE_BAD_IPV6:
    case CURLUE_LACKS_IDN:
        return URL_E_HOST;
    case CURLUE_BAD_PORT_NUMBER:
        return URL_E_PORT;
    default:
        return URL_E_MALFORMED;
    }
}

/* CURLU_PUNYCODE converts a host with libidn2's idn2_lookup_ul, which reads its
 * input in the charset of the current locale: under the C locale every non-ASCII
 * host fails (as "out of memory", in 7.88). So the conversion runs with a UTF-8
 * LC_CTYPE for this thread only (uselocale); the process locale is untouched. */
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static locale_t utf8_locale;

static void utf8_init(void)
{
    static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !utf8_locale; i++)
        utf8_locale = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
}

/* curl_url_get, IDN hosts converted to punycode. (A host can be non-ASCII even
 * when the input is not: curl decodes "%C3%A9" in hosts.) */
CURLUcode url_get_part(CURLU *h, CURLUPart part, char **out, unsigned flags)
{
    pthread_once(&utf8_once, utf8_init);
    locale_t old = utf8_locale ? uselocale(utf8_locale) : (locale_t)0;
    CURLUcode rc = curl_url_get(h, part, out, flags | CURLU_PUNYCODE);
    if (utf8_locale) uselocale(old);
    return rc == CURLUE_OUT_OF_MEMORY ? CURLUE_BAD_HOSTNAME : rc;
}

/* Where the host of a URL rendered by curl starts, and ends (before any port). */
size_t url_host_start(const char *u, const split_t *s)
{
    size_t h = s->auth;
    for (size_t i = s->auth; i < s->path; i++)
        if (u[i] == '@') h = i + 1;
    return h;
}

size_t url_host_end(const char *u, size_t h, const split_t *s)
{
    size_t e = s->path;
    if (u[h] == '[') {
        const char *b = memchr(u + h, ']', s->path - h);
        return b ? (size_t)(b - u) + 1 : e;
    }
    for (size_t i = h; i < s->path; i++)
        if (u[i] == ':') return i;
    return e;
}

int url_too_long(const char *s, size_t *n)
{
    *n = strlen(s);
    return *n > URL_MAX_LENGTH;
}

/* Scratch memory ------------------------------------------------------------- */

void *url_scratch_alloc(scratch_t *s, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (SCRATCH_STACK - s->used >= n) {
        void *p = s->stack + s->used;
        s->used += n;
        return p;
    }
    void *p = malloc(n);
    if (!p) return NULL;
    if (s->nheap < SCRATCH_HEAP) {
        s->heap[s->nheap++] = p;
        return p;
    }
    /* A long URL with options can take more blocks than the first few. */
    void **more = realloc(s->more, (size_t)(s->nmore + 1) * sizeof(*more));
    if (!more) {
        free(p);
        return NULL;
    }
    s->more = more;
    s->more[s->nmore++] = p;
    return p;
}

void url_scratch_free(scratch_t *s)
{
    for (int i = 0; i < s->nheap; i++)
        free(s->heap[i]);
    for (int i = 0; i < s->nmore; i++)
        free(s->more[i]);
    free(s->more);
}

void url_split_rendered(const char *u, split_t *s)
{
    const char *p = strstr(u, "://");
    size_t i = p ? (size_t)(p - u) + 3 : 0;
    s->auth = i;
    while (u[i] && u[i] != '/' && u[i] != '?' && u[i] != '#')
        i++;
    s->path = i;
    while (u[i] && u[i] != '?' && u[i] != '#')
        i++;
    s->query = i;
    while (u[i] && u[i] != '#')
        i++;
    s->frag = i;
    s->len = i + strlen(u + i);
}

/* Resolution ------------------------------------------------------------------ */

static char *concat3(scratch_t *sc, const char *a, size_t an, const char *b, size_t bn,
                     const char *c, size_t cn)
{
    char *t = url_scratch_alloc(sc, an + bn + cn + 1);
    if (!t) return NULL;
    memcpy(t, a, an);
    memcpy(t + an, b, bn);
    memcpy(t + an + bn, c, cn);
    t[an + bn + cn] = '\0';
    return t;
}

/* The target URL of RFC 3986 section 5.2.2 for a reference r without a scheme,
 * before dot-segment removal (curl does that when it parses the result). b is the
 * base as curl renders it. */
static char *merge(scratch_t *sc, const char *b, const split_t *bs, const char *r, size_t rn)
{
    if (rn >= 2 && r[0] == '/' && r[1] == '/') /* network-path reference */
        return concat3(sc, b, bs->auth - 2, r, rn, "", 0);
    size_t rpath = strcspn(r, "?#");
    if (rpath == 0) {
        /* Same document: keep the base path, and its query unless r has one. */
        size_t keep = r[0] == '?' ? bs->query : bs->frag;
        return concat3(sc, b, keep, r, rn, "", 0);
    }
    if (r[0] == '/') return concat3(sc, b, bs->path, r, rn, "", 0);
    size_t dir = bs->query;
    while (dir > bs->path && b[dir - 1] != '/')
        dir--;
    if (dir == bs->path) return concat3(sc, b, bs->path, "/", 1, r, rn);
    return concat3(sc, b, dir, r, rn, "", 0);
}

/* A malloc'd copy of a URL rendered by curl, its host lower-cased. */
static int finish(char *u, char **out)
{
    split_t s;
    url_split_rendered(u, &s);
    if (s.len > URL_MAX_LENGTH) return URL_E_TOO_LONG;
    size_t h = url_host_start(u, &s), e = url_host_end(u, h, &s), cn = 0;
    char canon[URL_HOST_CANON_MAX];
    int kind = url_host_canon(u + h, e - h, canon, &cn);
    if (kind < 0) return URL_E_HOST;
    if (kind == URL_HOST_NAME) {
        for (size_t i = h; i < e; i++)
            u[i] = (char)ascii_lower((unsigned char)u[i]);
        cn = e - h;
    }
    size_t len = s.len - (e - h) + cn;
    if (len > URL_MAX_LENGTH) return URL_E_TOO_LONG;
    *out = malloc(len + 1);
    if (!*out) return URL_E_NOMEM;
    memcpy(*out, u, h);
    memcpy(*out + h, kind == URL_HOST_NAME ? u + h : canon, cn);
    memcpy(*out + h + cn, u + e, s.len - e + 1);
    return URL_OK;
}

/* A request to normalize the result; opts may be NULL. */
struct norm {
    const url_norm_opts_t *opts;
};

/* Resolve ref against base into *out (malloc'd); normalized too when norm is set. */
static int resolve(CURLU *h, scratch_t *sc, const char *base, size_t bn, const char *ref, size_t rn,
                   const struct norm *norm, char **out)
{
    char *b = url_scratch_alloc(sc, 3 * bn + 1);
    char *r = url_scratch_alloc(sc, 3 * rn + 1);
    if (!b || !r) return URL_E_NOMEM;
    bn = url_clean(base, bn, NULL, 0, b);
    size_t bsl = scheme_len(b, bn);
    if (!bsl) return URL_E_SCHEME;
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, b, CURLU_NON_SUPPORT_SCHEME);
    if (rc) return url_from_curl(rc);
    char *bu = NULL;
    rc = curl_url_get(h, CURLUPART_URL, &bu, 0);
    if (rc) return url_from_curl(rc);
    split_t bs;
    url_split_rendered(bu, &bs);
    if (bs.auth != bsl + 3) { /* not "scheme://": curl renders every URL so */
        curl_free(bu);
        return URL_E_MALFORMED;
    }

    int err = URL_OK, parsed = 0;
    char *t = NULL;
    /* "https:g" against an http base comes out of url_clean() as "https://g". */
    rn = url_clean(ref, rn, bu, bsl, r);
    size_t sl = scheme_len(r, rn);
    int slashes = sl && rn >= sl + 3 && r[sl + 1] == '/' && r[sl + 2] == '/';
    if (sl && !is_special(r, sl)) {
        /* mailto:, javascript:, g:h... are absolute as written; other schemes with
         * an authority ("ftp://") go through curl when it knows them. */
        for (size_t i = 0; i < sl; i++)
            r[i] = (char)ascii_lower((unsigned char)r[i]);
        if (norm) {
            err = URL_E_SCHEME;
            goto done;
        }
        /* Clear the handle first: holding the base, curl would read a ref it cannot
         * parse as absolute (a scheme over 40 characters) as relative to it. */
        curl_url_set(h, CURLUPART_URL, NULL, 0);
        if (!slashes || curl_url_set(h, CURLUPART_URL, r, CURLU_NON_SUPPORT_SCHEME)) {
            if (rn > URL_MAX_LENGTH)
                err = URL_E_TOO_LONG;
            else if (!(*out = strdup(r)))
                err = URL_E_NOMEM;
            goto done;
        }
        parsed = 1;
    } else if (slashes) {
        t = r; /* an absolute http(s) URL */
    } else {
        /* Relative, or "http:g" against an http base, which browsers (and RFC 3986
         * section 5.4.2, "for backward compatibility") read as "g". */
        size_t skip = sl ? sl + 1 : 0;
        t = merge(sc, bu, &bs, r + skip, rn - skip);
    }
    if (!parsed) {
        if (!t) {
            err = URL_E_NOMEM;
            goto done;
        }
        rc = curl_url_set(h, CURLUPART_URL, t, CURLU_NON_SUPPORT_SCHEME);
        if (rc) {
            err = url_from_curl(rc);
            goto done;
        }
    }
    if (norm) {
        char *res = NULL;
        size_t len = 0;
        err = url_render_normalized(h, sc, norm->opts, &res, &len);
        err = url_malloc_copy(err, res, len, out);
        goto done;
    }
    char *u = NULL;
    rc = url_get_part(h, CURLUPART_URL, &u, 0);
    if (rc) {
        err = url_from_curl(rc);
        goto done;
    }
    err = finish(u, out);
    curl_free(u);
done:
    curl_free(bu);
    return err;
}

static int resolve_call(const char *base, const char *ref, const struct norm *norm, char **out)
{
    *out = NULL;
    size_t bn, rn;
    if (url_too_long(base, &bn) || url_too_long(ref, &rn)) return URL_E_TOO_LONG;
    CURLU *h = curl_url();
    if (!h) return URL_E_NOMEM;
    scratch_t sc;
    url_scratch_init(&sc);
    int err = resolve(h, &sc, base, bn, ref, rn, norm, out);
    url_scratch_free(&sc);
    curl_url_cleanup(h);
    return err;
}

/* Whether the host of out (a URL curl wrote) is one curl would read as a number and
 * write another way on a second pass ("671" -> "0.0.2.159"): a host it became only
 * after curl's own check for numbers, by decoding escapes ("%39") or by IDNA mapping
 * characters away ("671\xcd\x8f"). */
int url_host_reparses(const char *out)
{
    const char *h = strstr(out, "://");
    if (!h) return 0;
    h += 3;
    const char *end = h + strcspn(h, "/?#");
    for (const char *p = h; p < end; p++) /* after any userinfo */
        if (*p == '@') h = p + 1;
    if (h < end && *h == '[') return 0; /* IPv6 */
    const char *colon = memchr(h, ':', (size_t)(end - h));
    if (colon) end = colon;
    if (h == end) return 0;
    for (const char *p = h; p < end; p++)
        if (!isxdigit((unsigned char)*p) && *p != '.' && *p != 'x' && *p != 'X') return 0;
    return !dotted_quad(h, (size_t)(end - h));
}

int url_resolve(const char *base, const char *ref, char **out)
{
    int err = resolve_call(base, ref, NULL, out);
    /* An escape curl decoded in a host needs one more pass (see url_normalize_slow). */
    if (err == URL_OK && *out && (strchr(ref, '%') || url_host_reparses(*out))) {
        char *again = NULL;
        if (resolve_call(*out, *out, NULL, &again) == URL_OK) {
            free(*out);
            *out = again;
        }
    }
    return err;
}

/* url_resolve_normalize without the fast path (url_fast.c). */
int url_resolve_normalize_slow(const char *base, const char *ref, const url_norm_opts_t *opts,
                               char **out)
{
    struct norm norm = {opts};
    int err = resolve_call(base, ref, &norm, out);
    /* As in url_normalize_slow: an escape curl decoded in a host ("0%36" -> "06")
     * needs one more pass to reach the form a later pass would keep ("0.0.0.6"). */
    if (err == URL_OK && *out && (strchr(ref, '%') || url_host_reparses(*out))) {
        char *again = NULL;
        if (url_normalize_slow(*out, opts, &again) == URL_OK) {
            free(*out);
            *out = again;
        }
    }
    return err;
}

size_t url_escape_nul(const char *s, size_t len, char *out)
{
    size_t a = 0, b = len, w = 0;
    while (a < b && (unsigned char)s[a] <= 0x20)
        a++;
    while (b > a && (unsigned char)s[b - 1] <= 0x20)
        b--;
    for (size_t i = a; i < b; i++) {
        if (s[i]) {
            out[w++] = s[i];
        } else {
            memcpy(out + w, "%00", 3);
            w += 3;
        }
    }
    out[w] = '\0';
    return w;
}

/* Parsing and hosts ----------------------------------------------------------- */

/* Parse url into h (any scheme curl can parse with an authority). */
static int parse_into(CURLU *h, const char *url)
{
    size_t n;
    if (url_too_long(url, &n)) return URL_E_TOO_LONG;
    scratch_t sc;
    url_scratch_init(&sc);
    int err = URL_E_NOMEM;
    char *buf = url_scratch_alloc(&sc, 3 * n + 1);
    if (buf) {
        n = url_clean(url, n, NULL, 0, buf);
        err = scheme_len(buf, n)
                  ? url_from_curl(curl_url_set(h, CURLUPART_URL, buf, CURLU_NON_SUPPORT_SCHEME))
                  : URL_E_SCHEME;
    }
    url_scratch_free(&sc);
    return err;
}

/* The host, lower-cased, IPv6 without brackets, in curl's memory; *ip tells
 * whether it is an IP address. */
static int get_host(CURLU *h, char **host, int *ip)
{
    CURLUcode rc = url_get_part(h, CURLUPART_HOST, host, 0);
    if (rc) return url_from_curl(rc);
    char canon[URL_HOST_CANON_MAX + 1];
    size_t cn;
    int kind = url_host_canon(*host, strlen(*host), canon, &cn);
    if (kind < 0) return URL_E_HOST;
    if (kind != URL_HOST_NAME) {
        /* Written the standard's way; the strings of url_parts_t are curl's. */
        canon[cn] = '\0';
        curl_free(*host);
        *host = NULL;
        rc = curl_url_set(h, CURLUPART_HOST, canon, 0);
        if (!rc) rc = curl_url_get(h, CURLUPART_HOST, host, 0);
        if (rc) return url_from_curl(rc);
    }
    char *p = *host;
    size_t n = strlen(p);
    *ip = kind != URL_HOST_NAME;
    if (kind == URL_HOST_IPV6) {
        memmove(p, p + 1, n - 2);
        p[n - 2] = '\0';
    }
    for (; *p; p++)
        *p = (char)ascii_lower((unsigned char)*p);
    return URL_OK;
}

/* One part into *out: NULL when absent, raw when it cannot be decoded. */
static int get_opt(CURLU *h, CURLUPart part, char **out, unsigned flags)
{
    CURLUcode rc = curl_url_get(h, part, out, flags);
    if (rc == CURLUE_URLDECODE) rc = curl_url_get(h, part, out, flags & ~CURLU_URLDECODE);
    if (rc == CURLUE_OUT_OF_MEMORY) return URL_E_NOMEM;
    if (rc) *out = NULL;
    return URL_OK;
}

int url_parse(const char *url, url_parts_t *parts)
{
    memset(parts, 0, sizeof(*parts));
    CURLU *h = curl_url();
    if (!h) return URL_E_NOMEM;
    int ip;
    int err = parse_into(h, url);
    if (!err) err = get_host(h, &parts->host, &ip);
    if (!err) err = get_opt(h, CURLUPART_SCHEME, &parts->scheme, 0);
    if (!err) err = get_opt(h, CURLUPART_USER, &parts->user, CURLU_URLDECODE);
    if (!err) err = get_opt(h, CURLUPART_PASSWORD, &parts->password, CURLU_URLDECODE);
    if (!err) err = get_opt(h, CURLUPART_PORT, &parts->port, CURLU_DEFAULT_PORT);
    if (!err) err = get_opt(h, CURLUPART_PATH, &parts->path, 0);
    if (!err) err = get_opt(h, CURLUPART_QUERY, &parts->query, 0);
    if (!err) err = get_opt(h, CURLUPART_FRAGMENT, &parts->fragment, 0);
    curl_url_cleanup(h);
    if (err) url_parts_free(parts);
    return err;
}

void url_parts_free(url_parts_t *parts)
{
    /* The strings come from curl_url_get. */
    curl_free(parts->scheme);
    curl_free(parts->user);
    curl_free(parts->password);
    curl_free(parts->host);
    curl_free(parts->port);
    curl_free(parts->path);
    curl_free(parts->query);
    curl_free(parts->fragment);
    memset(parts, 0, sizeof(*parts));
}

/* The host of url (site: its registrable domain) as a malloc'd string. */
static int host_or_site(const char *url, int site, char **out)
{
    *out = NULL;
    CURLU *h = curl_url();
    if (!h) return URL_E_NOMEM;
    int ip = 0;
    char *host = NULL;
    int err = parse_into(h, url);
    if (!err) err = get_host(h, &host, &ip);
    if (!err) {
        const char *s = host;
        if (site && !ip) {
            /* NULL for a public suffix itself ("co.uk", "localhost"): the host. */
            const char *rd = psl_registrable_domain(psl_builtin(), host);
            if (rd) s = rd;
        }
        *out = strdup(s);
        if (!*out) err = URL_E_NOMEM;
    }
    curl_free(host);
    curl_url_cleanup(h);
    return err;
}

int url_host(const char *url, char **out)
{
    return host_or_site(url, 0, out);
}

int url_site(const char *url, char **out)
{
    return host_or_site(url, 1, out);
}
