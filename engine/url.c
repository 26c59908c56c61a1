/* url.c: URL parsing, resolution, normalization and hosts, through curl's URL API.
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

static const char HEX[] = "0123456789ABCDEF";

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

/* Scratch memory for one call: a bump allocator over a stack buffer that falls
 * back to malloc for long URLs, so that short ones cost no allocation of ours. */
#define SCRATCH_STACK 4096
#define SCRATCH_HEAP 4

typedef struct scratch {
    size_t used;
    int nheap;
    void *heap[SCRATCH_HEAP];
    void **more; /* heap blocks past the first SCRATCH_HEAP, nmore of them */
    int nmore;
    _Alignas(8) char stack[SCRATCH_STACK];
} scratch_t;

static void *scratch_alloc(scratch_t *s, size_t n)
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

static void scratch_free(scratch_t *s)
{
    for (int i = 0; i < s->nheap; i++)
        free(s->heap[i]);
    for (int i = 0; i < s->nmore; i++)
        free(s->more[i]);
    free(s->more);
}

/* Bytes RFC 3986 allows nowhere outside the authority: controls, space, non-ASCII
 * and " < > \ ^ ` { | }. ('[' and ']' stay: PHP-style "a[]=1" queries are common
 * and every server takes them raw.) */
static const uint32_t FORBIDDEN[8] = {0xffffffff, 0x50000005, 0x50000000, 0xb8000001,
                                      0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};

static int must_encode(unsigned c)
{
    return in_set(FORBIDDEN, c);
}

static int hexval(unsigned c)
{
    if (is_digit(c)) return (int)(c - '0');
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
    return -1;
}

/* Whether a path segment (s, len bytes) is "." (1) or ".." (2), a '.' also spelled
 * "%2e" as the standard reads it; else 0. */
static int dot_segment_kind(const char *s, size_t len)
{
    int dots = 0;
    for (size_t i = 0; i < len; dots++) {
        if (s[i] == '.')
            i++;
        else if (len - i >= 3 && s[i] == '%' && s[i + 1] == '2' && (s[i + 2] | 0x20) == 'e')
            i += 3;
        else
            return 0;
        if (dots == 2) return 0;
    }
    return dots;
}

/* What the standard percent-encodes in userinfo: C0 controls, space, non-ASCII and
 * " # < > ? ` { } / : ; = @ [ \ ] ^ | */
static const uint32_t USERINFO_ENC[8] = {0xffffffff, 0xfc00800d, 0x78000001, 0xb8000001,
                                         0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};

/* Where clean() cuts a URL: the authority from auth (userinfo up to at, the '@'
 * whose first ':' is colon; host and port to auth_end), the query from query, the
 * fragment from frag. Without an authority auth, at and auth_end are where the path
 * starts; without a userinfo at is auth. */
typedef struct layout {
    size_t auth, at, colon, auth_end, query, frag;
    int special;
} layout_t;

/* The bytes clean() looks at twice after the authority: FORBIDDEN, # ? and '. */
static const uint32_t CLEAN_STOP[8] = {0xffffffff, 0xd000008d, 0x50000000, 0xb8000001,
                                       0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};

/* Whether clean() writes dst[i] == c percent-encoded. */
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
static size_t clean(const char *src, size_t n, const char *base, size_t base_sl, char *dst)
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

static int from_curl(CURLUcode rc)
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
static CURLUcode get_part(CURLU *h, CURLUPart part, char **out, unsigned flags)
{
    pthread_once(&utf8_once, utf8_init);
    locale_t old = utf8_locale ? uselocale(utf8_locale) : (locale_t)0;
    CURLUcode rc = curl_url_get(h, part, out, flags | CURLU_PUNYCODE);
    if (utf8_locale) uselocale(old);
    return rc == CURLUE_OUT_OF_MEMORY ? CURLUE_BAD_HOSTNAME : rc;
}

/* Offsets into a URL as curl renders it: "scheme://authority/path?query#fragment".
 * Each field is the index where that part starts (or would start) and ends. */
typedef struct split {
    size_t auth, path, query, frag, len;
} split_t;

static void split_curl_url(const char *u, split_t *s)
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

/* Where the host of a URL rendered by curl starts, and ends (before any port). */
static size_t host_start(const char *u, const split_t *s)
{
    size_t h = s->auth;
    for (size_t i = s->auth; i < s->path; i++)
        if (u[i] == '@') h = i + 1;
    return h;
}

static size_t host_end(const char *u, size_t h, const split_t *s)
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

static int too_long(const char *s, size_t *n)
{
    *n = strlen(s);
    return *n > URL_MAX_LENGTH;
}

/* Resolution ------------------------------------------------------------------ */

static char *concat3(scratch_t *sc, const char *a, size_t an, const char *b, size_t bn,
                     const char *c, size_t cn)
{
    char *t = scratch_alloc(sc, an + bn + cn + 1);
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
    split_curl_url(u, &s);
    if (s.len > URL_MAX_LENGTH) return URL_E_TOO_LONG;
    size_t h = host_start(u, &s), e = host_end(u, h, &s), cn = 0;
    char canon[URL_HOST_CANON_MAX];
    int kind = url_host_canon(u + h, e - h, canon, &cn);
    if (kind < 0) return URL_E_HOST;
    if (kind == URL_HOST_NAME) {
        for (size_t i = h; i < e; i++)
            u[i] = (char)lower((unsigned char)u[i]);
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

/* Defined with normalization, below. */
static int render_normalized(CURLU *h, scratch_t *sc, const url_norm_opts_t *opts, char **res,
                             size_t *reslen);
static int malloc_copy(int err, const char *s, size_t len, char **out);

/* A request to normalize the result; opts may be NULL. */
struct norm {
    const url_norm_opts_t *opts;
};

/* Resolve ref against base into *out (malloc'd); normalized too when norm is set. */
static int resolve(CURLU *h, scratch_t *sc, const char *base, size_t bn, const char *ref, size_t rn,
                   const struct norm *norm, char **out)
{
    char *b = scratch_alloc(sc, 3 * bn + 1);
    char *r = scratch_alloc(sc, 3 * rn + 1);
    if (!b || !r) return URL_E_NOMEM;
    bn = clean(base, bn, NULL, 0, b);
    size_t bsl = scheme_len(b, bn);
    if (!bsl) return URL_E_SCHEME;
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, b, CURLU_NON_SUPPORT_SCHEME);
    if (rc) return from_curl(rc);
    char *bu = NULL;
    rc = curl_url_get(h, CURLUPART_URL, &bu, 0);
    if (rc) return from_curl(rc);
    split_t bs;
    split_curl_url(bu, &bs);
    if (bs.auth != bsl + 3) { /* not "scheme://": curl renders every URL so */
        curl_free(bu);
        return URL_E_MALFORMED;
    }

    int err = URL_OK, parsed = 0;
    char *t = NULL;
    /* "https:g" against an http base comes out of clean() as "https://g". */
    rn = clean(ref, rn, bu, bsl, r);
    size_t sl = scheme_len(r, rn);
    int slashes = sl && rn >= sl + 3 && r[sl + 1] == '/' && r[sl + 2] == '/';
    if (sl && !is_special(r, sl)) {
        /* mailto:, javascript:, g:h... are absolute as written; other schemes with
         * an authority ("ftp://") go through curl when it knows them. */
        for (size_t i = 0; i < sl; i++)
            r[i] = (char)lower((unsigned char)r[i]);
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
            err = from_curl(rc);
            goto done;
        }
    }
    if (norm) {
        char *res = NULL;
        size_t len = 0;
        err = render_normalized(h, sc, norm->opts, &res, &len);
        err = malloc_copy(err, res, len, out);
        goto done;
    }
    char *u = NULL;
    rc = get_part(h, CURLUPART_URL, &u, 0);
    if (rc) {
        err = from_curl(rc);
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
    if (too_long(base, &bn) || too_long(ref, &rn)) return URL_E_TOO_LONG;
    CURLU *h = curl_url();
    if (!h) return URL_E_NOMEM;
    scratch_t sc;
    sc.used = 0;
    sc.nheap = 0;
    sc.more = NULL;
    sc.nmore = 0;
    int err = resolve(h, &sc, base, bn, ref, rn, norm, out);
    scratch_free(&sc);
    curl_url_cleanup(h);
    return err;
}

/* Whether the host of out (a URL curl wrote) is one curl would read as a number and
 * write another way on a second pass ("671" -> "0.0.2.159"): a host it became only
 * after curl's own check for numbers, by decoding escapes ("%39") or by IDNA mapping
 * characters away ("671\xcd\x8f"). */
static int host_reparses(const char *out)
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
    if (err == URL_OK && *out && (strchr(ref, '%') || host_reparses(*out))) {
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
    if (err == URL_OK && *out && (strchr(ref, '%') || host_reparses(*out))) {
        char *again = NULL;
        if (url_normalize_slow(*out, opts, &again) == URL_OK) {
            free(*out);
            *out = again;
        }
    }
    return err;
}

/* Normalization --------------------------------------------------------------- */

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
 * new dot segments ("%2E" segments are dots before curl sees them: clean()), or on
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
    param_t *ps = scratch_alloc(sc, count * sizeof(*ps));
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
    size_t w = s->auth, at = host_start(u, s), e = host_end(u, at, s), cn;
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
        out[w++] = (char)lower((unsigned char)u[i]);

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
            char *tmp = scratch_alloc(sc, w - q);
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
static int render_normalized(CURLU *h, scratch_t *sc, const url_norm_opts_t *opts, char **res,
                             size_t *reslen)
{
    char *u = NULL;
    CURLUcode rc = get_part(h, CURLUPART_URL, &u, CURLU_NO_DEFAULT_PORT);
    if (rc) return from_curl(rc);
    split_t s;
    split_curl_url(u, &s);
    int err = URL_E_SCHEME;
    if (s.auth >= 3 && is_special(u, s.auth - 3)) {
        err = URL_E_NOMEM;
        *res = scratch_alloc(sc, 3 * s.len + 2 + URL_HOST_CANON_MAX);
        if (*res) err = rebuild(sc, u, &s, opts, *res, reslen);
    }
    curl_free(u);
    return err;
}

static int malloc_copy(int err, const char *s, size_t len, char **out)
{
    if (err) return err;
    *out = malloc(len + 1);
    if (!*out) return URL_E_NOMEM;
    /* s is set when err is URL_OK: the analyzer, short of inlining from_curl deep in
     * url_normalize, takes a failed curl_url_set for success. */
    memcpy(*out, s, len + 1); /* NOLINT(clang-analyzer-core.NonNullParamChecker) */
    return URL_OK;
}

static int normalize(CURLU *h, scratch_t *sc, const char *url, const url_norm_opts_t *opts,
                     char **res, size_t *reslen)
{
    size_t n;
    if (too_long(url, &n)) return URL_E_TOO_LONG;
    char *buf = scratch_alloc(sc, 3 * n + 1);
    if (!buf) return URL_E_NOMEM;
    n = clean(url, n, NULL, 0, buf);
    size_t sl = scheme_len(buf, n);
    if (!sl || !is_special(buf, sl)) return URL_E_SCHEME;
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, buf, 0);
    if (rc) return from_curl(rc);
    return render_normalized(h, sc, opts, res, reslen);
}

/* url_normalize without the fast path (url_fast.c). */
static int url_normalize_slow_once(const char *url, const url_norm_opts_t *opts, char **out)
{
    *out = NULL;
    CURLU *h = curl_url();
    if (!h) return URL_E_NOMEM;
    scratch_t sc;
    sc.used = 0;
    sc.nheap = 0;
    sc.more = NULL;
    sc.nmore = 0;
    char *res = NULL;
    size_t len = 0;
    int err = normalize(h, &sc, url, opts, &res, &len);
    err = malloc_copy(err, res, len, out);
    scratch_free(&sc);
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
    if (err == URL_OK && (host_has_escape(url) || host_reparses(*out))) {
        char *again = NULL;
        int err2 = url_normalize_slow_once(*out, opts, &again);
        if (err2 == URL_OK) {
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
    if (too_long(url, &n)) return URL_E_TOO_LONG;
    scratch_t sc;
    sc.used = 0;
    sc.nheap = 0;
    sc.more = NULL;
    sc.nmore = 0;
    int err = URL_E_NOMEM;
    char *buf = scratch_alloc(&sc, 3 * n + 1);
    if (buf) {
        n = clean(url, n, NULL, 0, buf);
        err = scheme_len(buf, n)
                  ? from_curl(curl_url_set(h, CURLUPART_URL, buf, CURLU_NON_SUPPORT_SCHEME))
                  : URL_E_SCHEME;
    }
    scratch_free(&sc);
    return err;
}

/* The host, lower-cased, IPv6 without brackets, in curl's memory; *ip tells
 * whether it is an IP address. */
static int get_host(CURLU *h, char **host, int *ip)
{
    CURLUcode rc = get_part(h, CURLUPART_HOST, host, 0);
    if (rc) return from_curl(rc);
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
        if (rc) return from_curl(rc);
    }
    char *p = *host;
    size_t n = strlen(p);
    *ip = kind != URL_HOST_NAME;
    if (kind == URL_HOST_IPV6) {
        memmove(p, p + 1, n - 2);
        p[n - 2] = '\0';
    }
    for (; *p; p++)
        *p = (char)lower((unsigned char)*p);
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
