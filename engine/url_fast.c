/* url_fast.c: the entry points of url.h that run for every link of every page
 * (url_normalize, url_resolve_normalize and its prepared-base forms, url_fingerprint),
 * served on the strings, without curl, when the URL is plain; the rest go to url.c.
 *
 * Most URLs a crawler handles are already in the form url_normalize gives: the links
 * it extracted, which seen:add fingerprints again, and the many links written that
 * way in the first place. For those, normalizing is a copy, and resolving a plain
 * reference against a normalized base is string surgery: the RFC 3986 merge and
 * dot-segment removal on the strings, the result checked to be in that form.
 * normal_form() recognises the form in one scan, and is conservative: what it
 * accepts, the curl-based path gives back unchanged (tests/unit/test_url_fast.c
 * checks this on random URLs); anything else takes that path (url_internal.h). */
#include "url.h"
#include "url_chars.h"
#include "url_host.h"
#include "url_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* By byte, whether it is pchar but '%' (ALPHA DIGIT - . _ ~ ! $ & ' ( ) * + , ; = :
 * @): a table, not a bitmap, as every byte of a link's path is looked up. ':' is 2,
 * not 1: in a reference, it may end a scheme (resolve_path). */
static const unsigned char PATH_PLAIN[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* C0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* C0 */
    0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, /* space ! " # $ % & ' ( ) * + , - . / */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 1, 0, 0, /* digits : ; < = > ? */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* @ A-O */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, /* P-Z [ \ ] ^ _ */
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* ` a-o */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, /* p-z { | } ~ DEL */
};                                                  /* the bytes from 0x80: 0 */

/* The same, '?', '[' and ']', but not '\'' (which a special URL's query encodes) */
static const uint32_t QUERY_SAFE[8] = {0, 0xafffff52, 0xafffffff, 0x47fffffe, 0, 0, 0, 0};

static int is_lower_alnum(unsigned c)
{
    return (c >= 'a' && c <= 'z') || is_digit(c);
}

static int is_upper_hex(unsigned c)
{
    return is_digit(c) || (c >= 'A' && c <= 'F');
}

/* The value of a digit is_upper_hex() accepts. */
static unsigned upper_hex_value(unsigned c)
{
    return c <= '9' ? c - '0' : c - 'A' + 10;
}

/* Whether u[i] == '%' starts an escape norm_escapes (url.c) keeps as it is: two upper-case
 * hex digits, of a byte that is not unreserved. */
static inline int kept_escape(const char *u, size_t i, size_t n)
{
    if (i + 2 >= n) return 0;
    unsigned hi = (unsigned char)u[i + 1], lo = (unsigned char)u[i + 2];
    return is_upper_hex(hi) && is_upper_hex(lo) &&
           !is_unreserved(upper_hex_value(hi) << 4 | upper_hex_value(lo));
}

static int dot_segment(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* The longest host taken here; curl takes longer ones, but DNS does not. */
#define FAST_HOST_MAX 253

/* If url (n bytes) is in the form url_normalize gives with default options, the
 * length of that form: n, or the offset of the '#' of a fragment, which goes; else 0.
 * The form: "http://" or "https://"; a host of labels of lower-case letters, digits
 * and '-' (not first or last) joined by single dots, whose last label is not a
 * number (url_host.h) and that curl does not read as an IPv4 address, unless it is
 * one in dotted-decimal form; a port other than the
 * scheme's, 1..65535 without leading zeros; a path from '/' on of pchar without "."
 * or ".." segments; a query, not empty, of pchar, '/', '?', '[' and ']'; in path and
 * query escapes only of bytes that are not unreserved, in upper case, no '\'' in
 * the query; a fragment of
 * printable ASCII. Nothing else: no userinfo, no empty path. */
/* normal_form from i, a '?', a '#' or the end, all before it in normal form. */
static size_t normal_query_on(const char *u, size_t n, size_t i)
{
    if (i < n && u[i] == '?') {
        if (++i == n || u[i] == '#') return 0; /* an empty query goes */
        for (; i < n; i++) {
            unsigned c = (unsigned char)u[i];
            if (c == '%') {
                if (!kept_escape(u, i, n)) return 0;
                i += 2;
            } else if (!in_set(QUERY_SAFE, c)) {
                break;
            }
        }
    }
    if (i == n) return n;
    if (u[i] != '#') return 0;
    for (size_t j = i + 1; j < n; j++)
        if ((unsigned char)u[j] <= 0x20 || (unsigned char)u[j] >= 0x7f) return 0;
    return i;
}

/* normal_form from i, the '/' that starts a path segment, all before it in normal
 * form. */
static size_t normal_path_on(const char *u, size_t n, size_t i)
{
    const unsigned char *s = (const unsigned char *)u;
    size_t seg = i;
    for (i++;; i++) {
        while (i < n && PATH_PLAIN[s[i]]) /* most are */
            i++;
        if (i < n && s[i] == '%') {
            if (!kept_escape(u, i, n)) return 0;
            i += 2;
            continue;
        }
        if (dot_segment(u + seg + 1, i - seg - 1)) return 0;
        if (i == n || s[i] != '/') break;
        seg = i;
    }
    return normal_query_on(u, n, i);
}

static size_t normal_form(const char *u, size_t n)
{
    size_t i;
    const char *port;
    if (n > URL_MAX_LENGTH) return 0;
    if (n > 7 && memcmp(u, "http://", 7) == 0) {
        i = 7;
        port = "80";
    } else if (n > 8 && memcmp(u, "https://", 8) == 0) {
        i = 8;
        port = "443";
    } else {
        return 0;
    }

    size_t host = i, label;
    int numeric = 1;
    for (;;) {
        label = i;
        while (i < n && (is_lower_alnum((unsigned char)u[i]) || u[i] == '-'))
            i++;
        if (i == label || u[label] == '-' || u[i - 1] == '-') return 0;
        numeric &= is_digit((unsigned char)u[label]);
        if (i == n || u[i] != '.') break;
        i++;
    }
    /* A host whose last label is a number is an IPv4 address or an error: only
     * the dotted-decimal form is normal. */
    if (i - host > FAST_HOST_MAX) return 0;
    if ((numeric ||
         (is_digit((unsigned char)u[label]) && url_host_ends_in_number(u + label, i - label))) &&
        !dotted_quad(u + host, i - host))
        return 0;

    if (i < n && u[i] == ':') {
        size_t p = ++i;
        unsigned v = 0;
        while (i < n && i - p < 6 && is_digit((unsigned char)u[i]))
            v = v * 10 + (unsigned)(u[i++] - '0');
        size_t len = i - p;
        if (len == 0 || len > 5 || u[p] == '0' || v > 65535) return 0;
        if (len == strlen(port) && memcmp(u + p, port, len) == 0) return 0;
    }

    if (i == n || u[i] != '/') return 0;
    return normal_path_on(u, n, i);
}

size_t url_normal_form(const char *url, size_t n)
{
    return normal_form(url, n);
}

int url_host_port_fast(const char *url, size_t len, const char **host, size_t *host_len, int *port)
{
    if (!normal_form(url, len)) return 0;
    int https = url[4] == 's';
    size_t i = https ? 8 : 7, e = i;
    while (url[e] != ':' && url[e] != '/')
        e++;
    *host = url + i;
    *host_len = e - i;
    *port = https ? 443 : 80;
    if (url[e] == ':') *port = atoi(url + e + 1); /* checked by normal_form: 1..65535 */
    return 1;
}

/* Whether the fast paths may serve these options: they only copy. */
static int plain_opts(const url_norm_opts_t *opts)
{
    return !opts || (!opts->sort_query && !opts->strip);
}

int url_normalize(const char *url, const url_norm_opts_t *opts, char **out)
{
    if (plain_opts(opts)) {
        size_t n = strlen(url), len = normal_form(url, n);
        if (len && (len == n || !opts || !opts->keep_fragment)) {
            *out = malloc(len + 1);
            if (!*out) return URL_E_NOMEM;
            memcpy(*out, url, len);
            (*out)[len] = '\0';
            return URL_OK;
        }
    }
    return url_normalize_slow(url, opts, out);
}

void url_base_prepare(const char *base, url_base_t *b)
{
    memset(b, 0, sizeof(*b));
    b->url = base;
    if (!base) return;
    size_t len = normal_form(base, strlen(base));
    if (!len) return;
    size_t path = base[4] == ':' ? 7 : 8, query;
    while (base[path] != '/')
        path++;
    for (query = path; query < len && base[query] != '?'; query++) {
    }
    size_t dir = query;
    while (base[dir - 1] != '/')
        dir--;
    b->len = len;
    b->path = path;
    b->dir = dir;
    b->query = query;
    size_t nd = 0, cap = sizeof(b->dirs) / sizeof(b->dirs[0]);
    for (size_t k = path; k < dir && nd <= cap; k++)
        if (base[k] == '/' && nd++ < cap) b->dirs[nd - 1] = (unsigned short)(k + 1);
    b->ndirs = nd <= cap ? (unsigned)nd : 0;
}

/* The end of the run of PATH_PLAIN 1 bytes at r[n], four at a time (the NUL that
 * ends r is not one: no byte after it is read). */
static inline size_t plain_run(const unsigned char *r, size_t n)
{
    for (;; n += 4) {
        if (PATH_PLAIN[r[n]] != 1) return n;
        if (PATH_PLAIN[r[n + 1]] != 1) return n + 1;
        if (PATH_PLAIN[r[n + 2]] != 1) return n + 2;
        if (PATH_PLAIN[r[n + 3]] != 1) return n + 3;
    }
}

/* resolve_buf for the commonest references, a path of pchar (no '%') and '/' without
 * a segment that starts with '.', after a relative one's leading "./" and "../"
 * segments ("../../d1/a.html", as sites written in directories have them), and
 * maybe a fragment, which goes (keep_fragment: not taken here), against a base in
 * normal form (b->len): the target is the base up to its path or directory (each
 * "../" a directory up, but not above the root, as remove_dot_segments has it), then
 * the reference, and in normal form as it is. -1 for any other reference (or a target
 * too long): the rest of resolve_buf takes it. */
static inline int resolve_path_parts(const url_base_t *b, const char *ref, int keep_fragment,
                                     size_t *keep_out, const char **rest, size_t *rest_len)
{
    const unsigned char *r = (const unsigned char *)ref;
    int relative = r[0] != '/';
    size_t keep = relative ? b->dir : b->path;
    if (r[0] == '.') {
        size_t up = 0; /* "../" segments */
        for (;;) {
            if (r[1] == '/') {
                r += 2;
            } else if (r[1] == '.' && r[2] == '/') {
                up++;
                r += 3;
            } else {
                return -1; /* ".", "..", ".a" and the like */
            }
            if (r[0] != '.') break;
        }
        if (r[0] == '/') return -1; /* an empty segment after the dots: resolve_any's */
        /* Each "../" a directory up from b->dir, but not above the root. */
        if (up && b->ndirs)
            keep = b->dirs[up < b->ndirs ? b->ndirs - 1 - up : 0];
        else
            for (; up && keep > b->path + 1; up--) /* b->url[keep - 1] is a '/' */
                for (keep--; b->url[keep - 1] != '/'; keep--) {
                }
    } else if (!relative && r[1] == '/') {
        return -1; /* "//host" is not a path */
    }
    /* In a relative reference's first segment, ':' ends a scheme; not after a dot
     * segment. */
    int slash = !relative || r != (const unsigned char *)ref;
    size_t n = 0;
    for (;; n++) {
        n = plain_run(r, n);
        unsigned c = r[n];
        if (c == '/') {
            if (r[n + 1] == '.') return -1; /* maybe a dot segment */
            slash = 1;
        } else if (c != ':' || !slash) {
            break;
        }
    }
    if ((r[n] != '\0' && (r[n] != '#' || keep_fragment)) || n == 0) return -1;
    if (keep + n > URL_MAX_LENGTH) return -1;
    *keep_out = keep;
    *rest = (const char *)r;
    *rest_len = n;
    return URL_OK;
}

/* resolve_path_parts, the target written at t. */
static inline int resolve_path(const url_base_t *b, const char *ref, int keep_fragment, char *t,
                               size_t *len)
{
    size_t keep, n;
    const char *r;
    if (!b->url || resolve_path_parts(b, ref, keep_fragment, &keep, &r, &n) != URL_OK) return -1;
    memcpy(t, b->url, keep);
    memcpy(t + keep, r, n);
    t[keep + n] = '\0';
    *len = keep + n;
    return URL_OK;
}

int url_resolve_parts(const url_base_t *b, const char *ref, size_t *keep, const char **rest,
                      size_t *rest_len)
{
    if (!b->len) return -1;
    return resolve_path_parts(b, ref, 0, keep, rest, rest_len);
}

/* resolve_buf for any other reference. */
static int resolve_any(const url_base_t *b, const char *ref, int keep_fragment, char *t,
                       size_t *len)
{
    /* Another scheme (mailto:, javascript:, a data: URL of any size) is known before
     * the rest of the reference is read. */
    size_t sl = scheme_len(ref, SIZE_MAX); /* it stops at the NUL */
    if (sl && !is_special(ref, sl)) return b->url ? URL_E_SCHEME : -1;
    /* Bytes that clean() (url.c) would change, and '\', are for the slow path. A target in
     * normal form has none before its fragment (which goes); the others are looked
     * for below. */
    size_t rn = strlen(ref);
    if (rn > URL_MAX_LENGTH) return -1;
    const char *hash = memchr(ref, '#', rn);
    size_t frag = hash ? (size_t)(hash - ref) : rn;
    if (hash && keep_fragment) return -1;

    /* RFC 3986 section 5.2.2, for an absolute http(s) ref or one without a scheme. */
    size_t keep; /* the bytes of the base the target starts with */
    if (sl) {    /* http: or https: */
        if (!((rn > 7 && memcmp(ref, "http://", 7) == 0) ||
              (rn > 8 && memcmp(ref, "https://", 8) == 0)))
            return -1;
        keep = 0;
    } else if (!b->url)
        return -1; /* a relative reference without a base */
    else if (frag >= 2 && ref[0] == '/' && ref[1] == '/')
        keep = b->url[4] == ':' ? 5 : 6; /* "http:" or "https:" */
    else if (frag == 0)
        keep = b->len;
    else if (ref[0] == '?')
        keep = b->query;
    else if (ref[0] == '/')
        keep = b->path;
    else {
        keep = b->dir;
        while (frag >= 2 && ref[0] == '.' && ref[1] == '/') { /* remove_dot_segments drops them */
            ref += 2;
            frag -= 2;
        }
    }

    size_t tn = keep + frag;
    if (tn > URL_MAX_LENGTH) return -1;
    if (keep) memcpy(t, b->url, keep);
    memcpy(t + keep, ref, frag);
    t[tn] = '\0';

    /* Most targets are in normal form as they are. What comes from the base (in
     * normal form) needs no second look. */
    size_t normal;
    if (!b->url || keep < b->path)
        normal = normal_form(t, tn);
    else if (t[keep] == '/') /* the reference's absolute path */
        normal = normal_path_on(t, tn, keep);
    else if (keep == tn || t[keep] == '?') /* the base's path, then */
        normal = normal_query_on(t, tn, keep);
    else /* the base's directory (up to a '/'), then the reference's relative path */
        normal = normal_path_on(t, tn, keep - 1);
    if (normal == tn) {
        *len = tn;
        return URL_OK;
    }

    /* Not so: remove_dot_segments on the path, as curl does when it parses the
     * target, and look at the whole again; unless clean() would change the
     * reference first (removing dot segments could hide that). */
    for (size_t k = 0; k < frag; k++) {
        unsigned c = (unsigned char)ref[k];
        if (c - 0x21u >= 0x5eu || c == '\\') return -1; /* not in '!'..'~' */
    }
    size_t path = t[4] == ':' ? 7 : 8, end;
    while (path < tn && t[path] != '/' && t[path] != '?')
        path++;
    for (end = path; end < tn && t[end] != '?'; end++) {
    }
    int dots = 0; /* a "/." in the path: maybe a dot segment */
    if (path < end && t[path] == '/')
        for (size_t k = path; k + 1 < end && !dots; k++)
            dots = t[k] == '/' && t[k + 1] == '.';
    if (!dots) return -1;
    size_t pn = url_remove_dots(t + path, end - path);
    memmove(t + path + pn, t + end, tn - end + 1);
    tn -= end - path - pn;
    if (normal_form(t, tn) != tn) return -1;
    *len = tn;
    return URL_OK;
}

/* RFC 3986 section 5.2 on the strings (url_internal.h says when), into t
 * (URL_MAX_LENGTH + 1 bytes): URL_OK with the length in *len, URL_E_SCHEME, or -1
 * for the slow path. The base is prepared (or absent). The commonest reference, a
 * plain path, is taken in one look (resolve_path), inline in both callers. */
static inline int resolve_buf(const url_base_t *b, const char *ref, int keep_fragment, char *t,
                              size_t *len)
{
    if (b->len && resolve_path(b, ref, keep_fragment, t, len) == URL_OK) return URL_OK;
    return resolve_any(b, ref, keep_fragment, t, len);
}

int url_resolve_fast(const url_base_t *b, const char *ref, const url_norm_opts_t *opts, char **out)
{
    *out = NULL;
    if (!plain_opts(opts) || (b->url && !b->len)) return -1;
    char t[URL_MAX_LENGTH + 1];
    size_t tn;
    int err = resolve_buf(b, ref, opts && opts->keep_fragment, t, &tn);
    if (err != URL_OK) return err;
    *out = malloc(tn + 1);
    if (!*out) return URL_E_NOMEM;
    memcpy(*out, t, tn + 1);
    return URL_OK;
}

int url_resolve_into(const url_base_t *b, const char *ref, char *buf, size_t *len, int *normal)
{
    *normal = 0;
    if (!b->url || b->len) {
        int err = resolve_buf(b, ref, 0, buf, len);
        if (err >= 0) {
            *normal = err == URL_OK;
            return err;
        }
    }
    char *out = NULL;
    int err = url_resolve_normalize_slow(b->url ? b->url : ref, ref, NULL, &out);
    if (err == URL_OK) {
        *len = strlen(out);
        if (*len <= URL_MAX_LENGTH)
            memcpy(buf, out, *len + 1);
        else
            err = URL_E_TOO_LONG;
    }
    free(out);
    return err;
}

int url_resolve_base(const url_base_t *b, const char *ref, const url_norm_opts_t *opts, char **out)
{
    *out = NULL;
    int err = url_resolve_fast(b, ref, opts, out);
    if (err >= 0) return err;
    return url_resolve_normalize_slow(b->url ? b->url : ref, ref, opts, out);
}

int url_resolve_normalize(const char *base, const char *ref, const url_norm_opts_t *opts,
                          char **out)
{
    url_base_t b;
    url_base_prepare(base, &b);
    return url_resolve_base(&b, ref, opts, out);
}

uint64_t url_hash(const char *s, size_t len)
{
    return XXH3_64bits(s, len);
}

uint64_t url_fingerprint(const char *url)
{
    size_t fast = normal_form(url, strlen(url));
    if (fast) return url_hash(url, fast);
    /* url_normalize_slow, with its second pass for escapes curl decodes in hosts. */
    char *norm = NULL;
    uint64_t fp = url_normalize_slow(url, NULL, &norm) == URL_OK ? url_hash(norm, strlen(norm))
                                                                 : url_hash(url, strlen(url));
    free(norm);
    return fp;
}
