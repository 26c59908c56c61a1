/* html.c: HTML documents on libxml2: encoding detection and decoding, parsing, link
 * extraction, text and serialisation.
 *
 * Decoding happens here, before libxml2 sees the bytes: libxml2 2.9.14 stops at the
 * first byte its converter rejects (the rest of the page is lost) and lets invalid
 * UTF-8 through to the tree. So the body is turned into clean UTF-8 first (iconv for
 * legacy encodings, a validating copy for UTF-8, no copy at all for the common case
 * of valid UTF-8 or pure ASCII), and libxml2 parses it as UTF-8 with
 * HTML_PARSE_IGNORE_ENC, so a <meta> later in the page cannot switch encodings. */
#include "html.h"

#include "buf.h"
#include "url.h"

#include <errno.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <iconv.h>
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/parserInternals.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- encodings (WHATWG Encoding Standard) ---- */

enum kind {
    K_UTF8,
    K_SINGLE,   /* single-byte, ASCII-compatible */
    K_MULTI,    /* multi-byte, ASCII-compatible */
    K_STATEFUL, /* ISO-2022-JP: ASCII bytes may be escape sequences */
    K_UTF16LE,
    K_UTF16BE,
    K_REPLACEMENT /* the whole body decodes to one U+FFFD */
};

struct encoding {
    const char *name;  /* WHATWG name */
    const char *iconv; /* glibc iconv name of the decoder */
    enum kind kind;
    const char *labels; /* the Encoding Standard's labels, space-separated */
};

/* The encodings the code names; the others follow them in the table. */
enum { E_UTF8, E_WIN1252, E_UTF16BE, E_UTF16LE, E_USERDEF };

/* The decoders are glibc's, picked for the WHATWG variant where names differ:
 * Shift_JIS is windows-31j (CP932), EUC-KR is windows-949, GBK decodes as gb18030,
 * Big5 includes HKSCS. x-user-defined is read as windows-1252. */
static const struct encoding encodings[] = {
    [E_UTF8] = {"UTF-8", "UTF-8", K_UTF8,
                "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"},
    [E_WIN1252] =
        {"windows-1252", "CP1252", K_SINGLE,
         "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
         "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252"},
    [E_UTF16BE] = {"UTF-16BE", "UTF-16BE", K_UTF16BE, "unicodefffe utf-16be"},
    [E_UTF16LE] = {"UTF-16LE", "UTF-16LE", K_UTF16LE,
                   "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"},
    [E_USERDEF] = {"x-user-defined", "CP1252", K_SINGLE, "x-user-defined"},
    {"IBM866", "IBM866", K_SINGLE, "866 cp866 csibm866 ibm866"},
    {"ISO-8859-2", "ISO-8859-2", K_SINGLE,
     "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2"},
    {"ISO-8859-3", "ISO-8859-3", K_SINGLE,
     "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3"},
    {"ISO-8859-4", "ISO-8859-4", K_SINGLE,
     "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4"},
    {"ISO-8859-5", "ISO-8859-5", K_SINGLE,
     "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 "
     "iso_8859-5:1988"},
    {"ISO-8859-6", "ISO-8859-6", K_SINGLE,
     "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
     "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987"},
    {"ISO-8859-7", "ISO-8859-7", K_SINGLE,
     "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
     "iso_8859-7 iso_8859-7:1987 sun_eu_greek"},
    {"ISO-8859-8", "ISO-8859-8", K_SINGLE,
     "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
     "iso_8859-8 iso_8859-8:1988 visual"},
    {"ISO-8859-8-I", "ISO-8859-8", K_SINGLE, "csiso88598i iso-8859-8-i logical"},
    {"ISO-8859-10", "ISO-8859-10", K_SINGLE,
     "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"},
    {"ISO-8859-13", "ISO-8859-13", K_SINGLE, "iso-8859-13 iso8859-13 iso885913"},
    {"ISO-8859-14", "ISO-8859-14", K_SINGLE, "iso-8859-14 iso8859-14 iso885914"},
    {"ISO-8859-15", "ISO-8859-15", K_SINGLE,
     "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"},
    {"ISO-8859-16", "ISO-8859-16", K_SINGLE, "iso-8859-16"},
    {"KOI8-R", "KOI8-R", K_SINGLE, "cskoi8r koi koi8 koi8-r koi8_r"},
    {"KOI8-U", "KOI8-U", K_SINGLE, "koi8-ru koi8-u"},
    {"macintosh", "MACINTOSH", K_SINGLE, "csmacintosh mac macintosh x-mac-roman"},
    {"windows-874", "CP874", K_SINGLE,
     "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"},
    {"windows-1250", "CP1250", K_SINGLE, "cp1250 windows-1250 x-cp1250"},
    {"windows-1251", "CP1251", K_SINGLE, "cp1251 windows-1251 x-cp1251"},
    {"windows-1253", "CP1253", K_SINGLE, "cp1253 windows-1253 x-cp1253"},
    {"windows-1254", "CP1254", K_SINGLE,
     "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 "
     "latin5 windows-1254 x-cp1254"},
    {"windows-1255", "CP1255", K_SINGLE, "cp1255 windows-1255 x-cp1255"},
    {"windows-1256", "CP1256", K_SINGLE, "cp1256 windows-1256 x-cp1256"},
    {"windows-1257", "CP1257", K_SINGLE, "cp1257 windows-1257 x-cp1257"},
    {"windows-1258", "CP1258", K_SINGLE, "cp1258 windows-1258 x-cp1258"},
    {"x-mac-cyrillic", "MAC-CYRILLIC", K_SINGLE, "x-mac-cyrillic x-mac-ukrainian"},
    {"GBK", "GB18030", K_MULTI,
     "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"},
    {"gb18030", "GB18030", K_MULTI, "gb18030"},
    {"Big5", "BIG5-HKSCS", K_MULTI, "big5 big5-hkscs cn-big5 csbig5 x-x-big5"},
    {"EUC-JP", "EUC-JP", K_MULTI, "cseucpkdfmtjapanese euc-jp x-euc-jp"},
    {"ISO-2022-JP", "ISO-2022-JP", K_STATEFUL, "csiso2022jp iso-2022-jp"},
    {"Shift_JIS", "CP932", K_MULTI,
     "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"},
    {"EUC-KR", "CP949", K_MULTI,
     "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 "
     "ksc_5601 windows-949"},
    {"replacement", NULL, K_REPLACEMENT,
     "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement"},
};

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static const struct encoding *find_label(const char *label, size_t len)
{
    char key[32];
    while (len && is_space((unsigned char)*label))
        label++, len--;
    while (len && is_space((unsigned char)label[len - 1]))
        len--;
    if (len == 0 || len >= sizeof(key)) return NULL;
    for (size_t i = 0; i < len; i++)
        key[i] = (char)lower((unsigned char)label[i]);
    key[len] = 0;
    if (strchr(key, ' ')) return NULL;
    for (size_t i = 0; i < sizeof(encodings) / sizeof(encodings[0]); i++) {
        const char *l = encodings[i].labels;
        for (const char *at = strstr(l, key); at; at = strstr(at + 1, key))
            if ((at == l || at[-1] == ' ') && (at[len] == ' ' || at[len] == 0))
                return &encodings[i];
    }
    return NULL;
}

const char *html_encoding_label(const char *label, size_t len)
{
    const struct encoding *e = label ? find_label(label, len) : NULL;
    return e ? e->name : NULL;
}

/* ---- the prescan (HTML spec 13.2.3.2, "prescan a byte stream") ---- */

struct scan {
    const unsigned char *s;
    size_t n, i;
};

static int at_ci(const struct scan *p, size_t i, const char *lit)
{
    size_t k = strlen(lit);
    if (p->n - i < k) return 0;
    for (size_t j = 0; j < k; j++)
        if (lower(p->s[i + j]) != lit[j]) return 0;
    return 1;
}

static int is_alpha(int c)
{
    c = lower(c);
    return c >= 'a' && c <= 'z';
}

/* Append c to a bounded buffer (the tail of an overlong name or value is dropped:
 * no label or attribute name we look for is that long). */
static void put(char *buf, size_t size, size_t *len, int c)
{
    if (*len + 1 < size) buf[(*len)++] = (char)c;
    buf[*len < size ? *len : size - 1] = 0;
}

/* "Get an attribute": 1 with name and value (both lower-cased), 0 at '>', -1 when
 * the bytes run out first. */
static int get_attr(struct scan *p, char *name, size_t nsize, char *value, size_t vsize)
{
    size_t nl = 0, vl = 0;
    name[0] = value[0] = 0;
    while (p->i < p->n && (is_space(p->s[p->i]) || p->s[p->i] == '/'))
        p->i++;
    if (p->i >= p->n) return -1;
    if (p->s[p->i] == '>') return 0;
    for (;; p->i++) {
        if (p->i >= p->n) return -1;
        int c = p->s[p->i];
        if (c == '=' && nl > 0) {
            p->i++;
            goto value;
        }
        if (is_space(c)) break;
        if (c == '/' || c == '>') return 1;
        put(name, nsize, &nl, lower(c));
    }
    while (p->i < p->n && is_space(p->s[p->i]))
        p->i++;
    if (p->i >= p->n) return -1;
    if (p->s[p->i] != '=') return 1;
    p->i++;
value:
    while (p->i < p->n && is_space(p->s[p->i]))
        p->i++;
    if (p->i >= p->n) return -1;
    int q = p->s[p->i];
    if (q == '"' || q == '\'') {
        for (p->i++; p->i < p->n; p->i++) {
            if (p->s[p->i] == q) {
                p->i++;
                return 1;
            }
            put(value, vsize, &vl, lower(p->s[p->i]));
        }
        return -1;
    }
    if (q == '>') return 1;
    for (; p->i < p->n; p->i++) {
        int c = p->s[p->i];
        if (is_space(c) || c == '>') return 1;
        put(value, vsize, &vl, lower(c));
    }
    return -1;
}

/* "Extract a character encoding from a meta element" (its content attribute). */
static const struct encoding *charset_in_content(const char *s)
{
    for (;;) {
        const char *at = strstr(s, "charset");
        if (!at) return NULL;
        s = at + 7;
        while (is_space((unsigned char)*s))
            s++;
        if (*s != '=') continue;
        s++;
        while (is_space((unsigned char)*s))
            s++;
        if (*s == '"' || *s == '\'') {
            const char *end = strchr(s + 1, *s);
            return end ? find_label(s + 1, (size_t)(end - s - 1)) : NULL;
        }
        if (!*s) return NULL;
        size_t len = 0;
        while (s[len] && !is_space((unsigned char)s[len]) && s[len] != ';')
            len++;
        return find_label(s, len);
    }
}

/* After "<meta": 1 and *enc when it declares a known encoding, 0 if not, -1 when the
 * bytes run out. */
static int scan_meta(struct scan *p, const struct encoding **enc)
{
    char name[32] = {0},
         value[256] = {0}; /* zeroed: clang-analyzer cannot tell get_attr ends them */
    int seen_equiv = 0, seen_content = 0, seen_charset = 0;
    int got_pragma = 0, need_pragma = -1;
    const struct encoding *charset = NULL;
    for (;;) {
        int r = get_attr(p, name, sizeof(name), value, sizeof(value));
        if (r < 0) return -1;
        if (r == 0) break;
        if (strcmp(name, "http-equiv") == 0) {
            if (seen_equiv++) continue;
            if (strcmp(value, "content-type") == 0) got_pragma = 1;
        } else if (strcmp(name, "content") == 0) {
            if (seen_content++) continue;
            if (!charset) {
                charset = charset_in_content(value);
                if (charset) need_pragma = 1;
            }
        } else if (strcmp(name, "charset") == 0) {
            if (seen_charset++) continue;
            charset = find_label(value, strlen(value));
            need_pragma = 0;
        }
    }
    if (need_pragma < 0 || (need_pragma == 1 && !got_pragma) || !charset) return 0;
    if (charset->kind == K_UTF16LE || charset->kind == K_UTF16BE) charset = &encodings[E_UTF8];
    if (charset == &encodings[E_USERDEF]) charset = &encodings[E_WIN1252];
    *enc = charset;
    return 1;
}

static const struct encoding *prescan(const unsigned char *s, size_t n)
{
    struct scan p = {s, n < 1024 ? n : 1024, 0};
    char name[32], value[8];
    while (p.i < p.n) {
        if (p.s[p.i] != '<') { /* every case below starts at a '<' */
            const unsigned char *lt = memchr(p.s + p.i, '<', p.n - p.i);
            if (!lt) break;
            p.i = (size_t)(lt - p.s);
        }
        if (at_ci(&p, p.i, "<!--")) {
            const unsigned char *end = NULL;
            for (size_t j = p.i + 2; j + 3 <= p.n; j++)
                if (memcmp(p.s + j, "-->", 3) == 0) {
                    end = p.s + j;
                    break;
                }
            if (!end) return NULL;
            p.i = (size_t)(end - p.s) + 3;
            continue;
        }
        if (at_ci(&p, p.i, "<meta") && p.i + 5 < p.n &&
            (is_space(p.s[p.i + 5]) || p.s[p.i + 5] == '/')) {
            const struct encoding *enc = NULL;
            p.i += 5;
            int r = scan_meta(&p, &enc);
            if (r < 0) return NULL;
            if (r > 0) return enc;
        } else if (p.s[p.i] == '<' && p.i + 1 < p.n &&
                   (is_alpha(p.s[p.i + 1]) ||
                    (p.s[p.i + 1] == '/' && p.i + 2 < p.n && is_alpha(p.s[p.i + 2])))) {
            while (p.i < p.n && !is_space(p.s[p.i]) && p.s[p.i] != '>')
                p.i++;
            int r;
            while ((r = get_attr(&p, name, sizeof(name), value, sizeof(value))) > 0) {
            }
            if (r < 0) return NULL;
        } else if (at_ci(&p, p.i, "<!") || at_ci(&p, p.i, "</") || at_ci(&p, p.i, "<?")) {
            const void *gt = memchr(p.s + p.i, '>', p.n - p.i);
            if (!gt) return NULL;
            p.i = (size_t)((const unsigned char *)gt - p.s);
        }
        p.i++;
    }
    return NULL;
}

static const struct encoding *sniff(const unsigned char *s, size_t n, const char *http_charset,
                                    size_t *bom)
{
    *bom = 0;
    if (n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) {
        *bom = 3;
        return &encodings[E_UTF8];
    }
    if (n >= 2 && s[0] == 0xFE && s[1] == 0xFF) {
        *bom = 2;
        return &encodings[E_UTF16BE];
    }
    if (n >= 2 && s[0] == 0xFF && s[1] == 0xFE) {
        *bom = 2;
        return &encodings[E_UTF16LE];
    }
    const struct encoding *e = http_charset ? find_label(http_charset, strlen(http_charset)) : NULL;
    if (e) return e;
    e = prescan(s, n);
    return e ? e : &encodings[E_WIN1252];
}

/* ---- decoding to UTF-8 ---- */

static const char REPLACEMENT_CHAR[] = "\xEF\xBF\xBD";

/* Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), or 0 with *bad
 * the length of its maximal ill-formed subpart, which one U+FFFD replaces. */
static inline size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF, need;
    *bad = 1;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    for (size_t k = 1; k <= need; k++) {
        if (k >= n || s[k] < lo || s[k] > hi) {
            *bad = k;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

/* Index of the first NUL or ill-formed byte, or n. */
static size_t utf8_clean_prefix(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    size_t i = 0, bad;
    while (i < n) {
#ifdef __SSE2__
        /* 64 ASCII bytes, none of them NUL, at a time: a page is mostly ASCII. As
         * signed bytes, NUL and the bytes from 0x80 are exactly those below 1. */
        const __m128i one = _mm_set1_epi8(1);
        while (n - i >= 64) {
            const __m128i *v = (const __m128i *)(const void *)(s + i);
            __m128i a = _mm_cmplt_epi8(_mm_loadu_si128(v), one);
            __m128i b = _mm_cmplt_epi8(_mm_loadu_si128(v + 1), one);
            __m128i c = _mm_cmplt_epi8(_mm_loadu_si128(v + 2), one);
            __m128i d = _mm_cmplt_epi8(_mm_loadu_si128(v + 3), one);
            if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) != 0) break;
            i += 64;
        }
        if (i == n) break;
#endif
        if (n - i >= 8) { /* eight ASCII bytes, none of them NUL, at a time */
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & high) && !((w - ones) & ~w & high)) {
                i += 8;
                continue;
            }
        }
        if (s[i] - 1u < 0x7Fu) {
            i++;
            continue;
        }
        if (s[i] == 0) return i;
        size_t k = utf8_seq(s + i, n - i, &bad);
        if (!k) return i;
        i += k;
    }
    return n;
}

/* Copy s to out, ill-formed subparts replaced, NULs dropped. */
static int utf8_repair(const unsigned char *s, size_t n, struct buf *out)
{
    if (buf_reserve(out, n + n / 2 + 4) != 0) return -1;
    size_t i = 0, bad;
    while (i < n) {
        size_t clean = i + utf8_clean_prefix(s + i, n - i);
        if (buf_append(out, s + i, clean - i) != 0) return -1;
        i = clean;
        if (i >= n) break;
        if (s[i] == 0) {
            i++;
            continue;
        }
        utf8_seq(s + i, n - i, &bad);
        if (buf_append(out, REPLACEMENT_CHAR, 3) != 0) return -1;
        i += bad;
    }
    return 0;
}

/* Drop the NULs a legacy decoder produced (browsers do not show U+0000). */
static void drop_nuls(struct buf *b)
{
    char *z = memchr(b->p, 0, b->n);
    if (!z) return;
    char *w = z;
    for (char *r = z; r < b->p + b->n; r++)
        if (*r) *w++ = *r;
    b->n = (size_t)(w - b->p);
}

static int decode_iconv(const struct encoding *e, const unsigned char *s, size_t n, struct buf *out)
{
    /* NOLINTNEXTLINE(performance-no-int-to-ptr): iconv_open's failure value, by its API */
    const iconv_t failed = (iconv_t)-1;
    iconv_t cd = iconv_open("UTF-8", e->iconv);
    if (cd == failed) cd = iconv_open("UTF-8", "CP1252");
    if (cd == failed) return -1;
    size_t unit = e->kind == K_UTF16LE || e->kind == K_UTF16BE ? 2 : 1;
    int rc = -1;
    if (buf_reserve(out, n * 2 + 16) != 0) goto done;
    size_t i = 0;
    for (int flushed = 0; !flushed;) {
        char *o = out->p + out->n;
        size_t oleft = out->cap - out->n, r;
        if (i < n) {
            char *in = (char *)(s + i);
            size_t inleft = n - i;
            r = iconv(cd, &in, &inleft, &o, &oleft);
            i = n - inleft;
        } else {
            /* All input read: write out what a stateful decoder still holds. */
            r = iconv(cd, NULL, NULL, &o, &oleft);
            flushed = r != (size_t)-1;
        }
        int err = errno;
        out->n = (size_t)(o - out->p);
        if (r != (size_t)-1) continue;
        if (err == E2BIG) {
            if (buf_reserve(out, (n - i) * 2 + 64) != 0) goto done;
        } else if (i >= n) {
            break;
        } else if (err == EILSEQ) {
            unsigned c = s[i];
            /* windows-1252's five unassigned bytes decode to C1 controls. */
            int c1 = e == &encodings[E_WIN1252] &&
                     (c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D);
            char c1buf[2] = {(char)0xC2, (char)c};
            if (buf_append(out, c1 ? c1buf : REPLACEMENT_CHAR, c1 ? 2 : 3) != 0) goto done;
            i += unit < n - i ? unit : n - i;
        } else {
            /* EINVAL: a sequence cut off by the end of the body. */
            if (buf_append(out, REPLACEMENT_CHAR, 3) != 0) goto done;
            i = n;
        }
    }
    drop_nuls(out);
    rc = 0;
done:
    iconv_close(cd);
    return rc;
}

static int ascii_only(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] - 1u >= 0x7Fu) return 0;
    return 1;
}

/* Decode s to clean UTF-8: *out is s itself when no change is needed, else the
 * bytes of buf. */
static int decode(const struct encoding *e, const unsigned char *s, size_t n, const char **out,
                  size_t *outlen, struct buf *buf)
{
    *out = (const char *)s;
    *outlen = n;
    switch (e->kind) {
    case K_UTF8:
        if (utf8_clean_prefix(s, n) == n) return 0;
        if (utf8_repair(s, n, buf) != 0) return -1;
        break;
    case K_REPLACEMENT:
        if (n == 0) return 0;
        if (buf_append(buf, REPLACEMENT_CHAR, 3) != 0) return -1;
        break;
    case K_SINGLE:
    case K_MULTI:
        if (ascii_only(s, n)) return 0;
        /* fall through */
    default:
        if (decode_iconv(e, s, n, buf) != 0) return -1;
    }
    *out = buf->p ? buf->p : "";
    *outlen = buf->n;
    return 0;
}

/* ---- parsing ---- */

/* Recovery mode, silent, no network; no implied DOCTYPE; compact text nodes; no
 * depth or size limits (libxml2 otherwise drops a document nested deeper than 256
 * elements, all of it); and the encoding is ours, not the page's. */
#define PARSE_OPTIONS                                                                              \
    (HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET |           \
     HTML_PARSE_NODEFDTD | HTML_PARSE_COMPACT | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE)

xmlDocPtr html_parse(const char *body, size_t len, const char *http_charset, const char **encoding)
{
    size_t bom;
    const struct encoding *e = sniff((const unsigned char *)body, len, http_charset, &bom);
    if (encoding) *encoding = e->name;
    struct buf buf = {NULL, 0, 0};
    const char *text;
    size_t n;
    if (decode(e, (const unsigned char *)body + bom, len - bom, &text, &n, &buf) != 0) {
        free(buf.p);
        return NULL;
    }
    xmlDocPtr doc = NULL;
    if (n > 0 && n <= INT_MAX) doc = htmlReadMemory(text, (int)n, NULL, "UTF-8", PARSE_OPTIONS);
    free(buf.p);
    /* Nothing to parse (or nothing libxml2 kept): an empty document. */
    if (!doc) doc = htmlNewDocNoDtD(NULL, NULL);
    return doc;
}

/* ---- walking, text, title, serialisation ---- */

/* The node after n in document order, staying inside top; descend into n's children
 * only when asked. */
static xmlNodePtr walk_next(xmlNodePtr n, const xmlNode *top, int descend)
{
    if (descend && n->children &&
        (n->type == XML_ELEMENT_NODE || n->type == XML_DOCUMENT_NODE ||
         n->type == XML_HTML_DOCUMENT_NODE))
        return n->children;
    for (;;) {
        if (n == top) return NULL;
        if (n->next) return n->next;
        n = n->parent;
        if (!n) return NULL;
    }
}

static int is(const xmlNode *n, const char *name)
{
    return strcmp((const char *)n->name, name) == 0;
}

/* Collapse runs of ASCII whitespace to one space and trim, in place. */
static size_t squash(char *s, size_t n)
{
    size_t w = 0;
    int space = 0;
    for (size_t r = 0; r < n; r++) {
        if (is_space((unsigned char)s[r])) {
            space = w > 0;
            continue;
        }
        if (space) s[w++] = ' ';
        space = 0;
        s[w++] = s[r];
    }
    s[w] = 0;
    return w;
}

char *html_text(xmlNodePtr node, int squash_space, size_t *len)
{
    xmlChar *c = xmlNodeGetContent(node);
    size_t n = c ? strlen((char *)c) : 0;
    char *s = malloc(n + 1);
    if (!s) {
        xmlFree(c);
        return NULL;
    }
    if (n) memcpy(s, c, n);
    s[n] = 0;
    xmlFree(c);
    if (squash_space) n = squash(s, n);
    if (len) *len = n;
    return s;
}

char *html_title(xmlDocPtr doc, size_t *len)
{
    xmlNodePtr top = (xmlNodePtr)doc;
    for (xmlNodePtr n = top; n; n = walk_next(n, top, 1))
        if (n->type == XML_ELEMENT_NODE && is(n, "title")) return html_text(n, 1, len);
    return NULL;
}

char *html_serialize(xmlDocPtr doc, xmlNodePtr node, size_t *len)
{
    xmlOutputBufferPtr out = xmlAllocOutputBuffer(NULL);
    if (!out) return NULL;
    htmlNodeDumpFormatOutput(out, doc, node, NULL, 0);
    size_t n = xmlOutputBufferGetSize(out);
    const xmlChar *content = xmlOutputBufferGetContent(out);
    char *s = malloc(n + 1);
    if (s) {
        if (n) memcpy(s, content, n);
        s[n] = 0;
        if (len) *len = n;
    }
    xmlOutputBufferClose(out);
    return s;
}

/* ---- links ---- */

const char *html_attr(xmlNodePtr node, const char *name, xmlChar **owned)
{
    *owned = NULL;
    for (xmlAttrPtr a = node->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name) != 0) continue;
        xmlNodePtr c = a->children;
        if (!c) return "";
        if (!c->next && c->type == XML_TEXT_NODE && c->content) return (const char *)c->content;
        *owned = xmlNodeGetContent((xmlNodePtr)a);
        return *owned ? (const char *)*owned : "";
    }
    return NULL;
}

/* Is word one of the whitespace-separated tokens of s (ASCII case-insensitive)? */
static int has_token(const char *s, const char *word)
{
    size_t wl = strlen(word);
    while (*s) {
        while (is_space((unsigned char)*s))
            s++;
        size_t k = 0;
        while (s[k] && !is_space((unsigned char)s[k]))
            k++;
        if (k == wl && strncasecmp(s, word, wl) == 0) return 1;
        s += k;
    }
    return 0;
}

/* The URL of a <meta http-equiv=refresh> content value (HTML spec "shared declarative
 * refresh steps"): start and length, or 0 when there is none. */
static int refresh_url(const char *s, const char **url, size_t *len)
{
    while (is_space((unsigned char)*s))
        s++;
    if (!(*s >= '0' && *s <= '9') && *s != '.') return 0;
    while ((*s >= '0' && *s <= '9') || *s == '.')
        s++;
    if (*s && *s != ';' && *s != ',' && !is_space((unsigned char)*s)) return 0;
    while (is_space((unsigned char)*s))
        s++;
    if (*s == ';' || *s == ',') s++;
    while (is_space((unsigned char)*s))
        s++;
    if (!*s) return 0;
    const char *start = s;
    if (lower((unsigned char)s[0]) == 'u' && lower((unsigned char)s[1]) == 'r' &&
        lower((unsigned char)s[2]) == 'l') {
        const char *t = s + 3;
        while (is_space((unsigned char)*t))
            t++;
        if (*t == '=') {
            t++;
            while (is_space((unsigned char)*t))
                t++;
            start = t;
        }
    }
    char quote = 0;
    if (*start == '\'' || *start == '"') quote = *start++;
    const char *end = quote ? strchr(start, quote) : NULL;
    if (!end) end = start + strlen(start);
    *url = start;
    *len = (size_t)(end - start);
    return 1;
}

/* A reference found in the document, before resolution. */
/* Strings a pass copies, in chunks freed together: a page's references and links
 * cost a few mallocs, not one each. */
struct html_strings {
    struct html_strings *next;
    size_t used, cap;
    char data[];
};

#define STRINGS_CHUNK 4096

/* A copy of s (n bytes and a NUL) in *a; NULL when out of memory. */
static inline char *strings_dup(struct html_strings **a, const char *s, size_t n)
{
    struct html_strings *c = *a;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = n + 1 > STRINGS_CHUNK ? n + 1 : STRINGS_CHUNK;
        c = malloc(sizeof(*c) + cap);
        if (!c) return NULL;
        c->next = *a;
        c->used = 0;
        c->cap = cap;
        *a = c;
    }
    char *p = c->data + c->used;
    memcpy(p, s, n);
    p[n] = '\0';
    c->used += n + 1;
    return p;
}

static void strings_free(struct html_strings *a)
{
    while (a) {
        struct html_strings *next = a->next;
        free(a);
        a = next;
    }
}

struct cand {
    const char *ref;
    xmlChar *owned;  /* xmlFree: ref, when it had to be copied out of the tree */
    xmlNodePtr node; /* tree walk only */
    const char *tag;
    int nofollow;
    struct buf text; /* SAX with HTML_LINKS_TEXT: the text seen so far */
};

/* What a pass over the document collects: every reference, and the first base. */
struct collect {
    struct cand *v;
    size_t n, cap;
    const char *base;
    xmlChar *base_owned;
    struct html_strings *copies; /* of references (meta refresh, SAX) */
    unsigned flags;
    int copy_refs; /* the attribute values do not outlive the visit (SAX; the fast
                    * scan keeps them till the end: html_scan_tags) */
};

static void collect_free(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++) { /* most have neither: no calls for them */
        if (c->v[i].owned) xmlFree(c->v[i].owned);
        if (c->v[i].text.p) free(c->v[i].text.p);
    }
    free(c->v);
    xmlFree(c->base_owned);
    strings_free(c->copies);
}

typedef const char *(*attr_fn)(const void *el, const char *name, xmlChar **owned);

static const char *tree_attr(const void *el, const char *name, xmlChar **owned)
{
    return html_attr((xmlNodePtr)el, name, owned);
}

/* SAX attributes: a NULL-ended array of name, value pairs. */
static inline const char *sax_attr(const void *el, const char *name, xmlChar **owned)
{
    const xmlChar *const *atts = el;
    *owned = NULL;
    for (size_t i = 0; atts && atts[i]; i += 2)
        if (html_name_eq((const char *)atts[i], name))
            return atts[i + 1] ? (const char *)atts[i + 1] : "";
    return NULL;
}

/* The tag an element is reported as, and the attribute with its reference; "base"
 * for <base>; NULL for elements that give no link. */
static const char *link_tag(const char *name, unsigned flags, const char **attr_name)
{
    *attr_name = "href";
    switch (name[0]) {
    case 'a':
        if (html_name_eq(name, "a")) return "a";
        if (html_name_eq(name, "area")) return "area";
        break;
    case 'b':
        if (html_name_eq(name, "base")) return "base";
        break;
    case 'f':
        *attr_name = "src";
        if ((flags & HTML_LINKS_FRAMES) && html_name_eq(name, "frame")) return "frame";
        break;
    case 'i':
        *attr_name = "src";
        if ((flags & HTML_LINKS_FRAMES) && html_name_eq(name, "iframe")) return "iframe";
        if ((flags & HTML_LINKS_IMG) && html_name_eq(name, "img")) return "img";
        break;
    case 'l':
        if ((flags & HTML_LINKS_LINK) && html_name_eq(name, "link")) return "link";
        break;
    case 'm':
        *attr_name = "content";
        if (html_name_eq(name, "meta")) return "meta";
        break;
    }
    return NULL;
}

static int keep(struct collect *c, const char **ref, const xmlChar *owned)
{
    if (!c->copy_refs || owned) return 0;
    *ref = strings_dup(&c->copies, *ref, strlen(*ref));
    return *ref ? 0 : -1;
}

/* Free what an attribute lookup owns: nothing in the fast scan and SAX passes, which
 * then make no call through xmlFree (one for each <a>'s rel, otherwise). */
static inline void drop(xmlChar *owned)
{
    if (owned) xmlFree(owned);
}

/* Append x to what c collected; 0, or -1 when out of memory. */
static inline int add_cand(struct collect *c, const struct cand *x)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct cand *v = realloc(c->v, cap * sizeof(*v));
        if (!v) return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = *x;
    return 0;
}

/* Collect what element el (a tree node or SAX attributes, read with get) gives:
 * 1 when it added a candidate, 0 when not, -1 when out of memory. Always inlined:
 * in scan_tag, once per tag of the fast scan, get is then sax_attr, called directly
 * and inlined in turn, which the scan of a page measurably gains from. */
static inline __attribute__((always_inline)) int visit(struct collect *c, const char *name,
                                                       const void *el, attr_fn get, xmlNodePtr node)
{
    const char *an;
    const char *tag = link_tag(name, c->flags, &an);
    if (!tag) return 0;
    if (tag[0] == 'b') {
        if (c->base) return 0;
        c->base = get(el, "href", &c->base_owned);
        return c->base ? keep(c, &c->base, c->base_owned) : 0;
    }
    struct cand x = {NULL, NULL, node, tag, 0, {NULL, 0, 0}};
    xmlChar *owned;
    if (tag[0] == 'm') {
        const char *equiv = get(el, "http-equiv", &owned);
        int refresh = equiv && strcasecmp(equiv, "refresh") == 0;
        drop(owned);
        if (!refresh) return 0;
        const char *content = get(el, "content", &owned), *u;
        size_t ul;
        if (content && refresh_url(content, &u, &ul)) x.ref = strings_dup(&c->copies, u, ul);
        drop(owned);
        if (!x.ref) return 0;
    } else {
        x.ref = get(el, an, &x.owned);
        if (!x.ref) return 0;
        if (tag[0] == 'a' || tag[0] == 'l') {
            const char *rel = get(el, "rel", &owned);
            x.nofollow = rel && has_token(rel, "nofollow");
            drop(owned);
        }
        if (keep(c, &x.ref, x.owned) != 0) goto fail;
    }
    if (add_cand(c, &x) != 0) goto fail;
    return 1;
fail:
    xmlFree(x.owned);
    return -1;
}

/* An open-addressing map from strings (not copied) to indexes, sized once for the
 * keys it will hold: a page's worth fits in the caller's stack. */
struct map {
    struct slot {
        const char *key; /* NULL: empty */
        uint64_t hash;
        size_t val;
    } * slot;
    size_t mask;
    int heap; /* slot was malloc'd */
};

#define MAP_ABSENT SIZE_MAX
#define MAP_STACK_SLOTS 256

/* An empty map for at most n keys, in stack (MAP_STACK_SLOTS slots) when they fit
 * there at half load. */
static int map_init(struct map *m, size_t n, struct slot *stack)
{
    size_t size = 16;
    while (size < 2 * n + 2)
        size *= 2;
    m->heap = size > MAP_STACK_SLOTS;
    m->slot = m->heap ? calloc(size, sizeof(*m->slot)) : memset(stack, 0, size * sizeof(*stack));
    m->mask = size - 1;
    return m->slot ? 0 : -1;
}

static void map_free(struct map *m)
{
    if (m->heap) free(m->slot);
}

static size_t map_get(const struct map *m, const char *key, uint64_t hash)
{
    for (size_t i = (size_t)hash & m->mask; m->slot[i].key; i = (i + 1) & m->mask)
        if (m->slot[i].hash == hash && strcmp(m->slot[i].key, key) == 0) return m->slot[i].val;
    return MAP_ABSENT;
}

/* Add a key known to be absent (one of the n map_init made room for). */
static void map_put(struct map *m, const char *key, uint64_t hash, size_t val)
{
    size_t i = (size_t)hash & m->mask;
    while (m->slot[i].key)
        i = (i + 1) & m->mask;
    m->slot[i] = (struct slot){key, hash, val};
}

/* The output index of the link url (len bytes, in buf): a new link, or the one it
 * repeats; MAP_ABSENT when out of memory. */
static size_t add_link(html_links_t *out, struct map *urls, const char *url, size_t len, int normal,
                       const struct cand *c)
{
    uint64_t h = url_hash(url, len);
    size_t i = map_get(urls, url, h);
    if (i != MAP_ABSENT) return i;
    char *kept = strings_dup(&out->strings, url, len);
    if (!kept) return MAP_ABSENT;
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 64;
        html_link_t *v = realloc(out->v, cap * sizeof(*v));
        if (!v) return MAP_ABSENT;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n] = (html_link_t){kept, c->tag, NULL, c->nofollow, len, h, normal};
    map_put(urls, kept, h, out->n);
    return out->n++;
}

/* The text a link is shown with: an <a>'s squashed text, an <area>'s or <img>'s alt,
 * else "". */
static char *link_text(struct cand *c)
{
    if (strcmp(c->tag, "a") == 0) {
        if (!c->node) { /* SAX: the text collected */
            char *t = c->text.p ? c->text.p : strdup("");
            if (c->text.p) squash(t, c->text.n);
            c->text.p = NULL;
            return t;
        }
        return html_text(c->node, 1, NULL);
    }
    if (c->text.p || !c->node) { /* SAX: alt was kept as the text */
        char *t = c->text.p ? c->text.p : strdup("");
        c->text.p = NULL;
        return t;
    }
    xmlChar *owned = NULL;
    const char *alt = NULL;
    if (strcmp(c->tag, "area") == 0 || strcmp(c->tag, "img") == 0)
        alt = html_attr(c->node, "alt", &owned);
    char *t = strdup(alt ? alt : "");
    xmlFree(owned);
    return t;
}

/* Resolve, filter and deduplicate what a pass collected. */
static int resolve_all(struct collect *c, const char *doc_url, html_links_t *out)
{
    struct map urls = {NULL, 0, 0};
    struct slot stack[MAP_STACK_SLOTS];
    char *base_url = NULL;
    int rc = -1;
    /* The first <base href>, resolved against the document's URL; if it does not
     * resolve, the document's URL stays the base. */
    const char *b = doc_url;
    if (c->base && url_resolve(doc_url ? doc_url : c->base, c->base, &base_url) == URL_OK)
        b = base_url;
    url_base_t base;
    url_base_prepare(b, &base);
    char url[URL_MAX_LENGTH + 1];
    if (map_init(&urls, c->n, stack) != 0) goto done;
    for (size_t i = 0; i < c->n; i++) {
        size_t len;
        int normal;
        const char *ref = c->v[i].ref;
        /* mailto:, javascript: and the like fail at their scheme, at once. */
        if (url_resolve_into(&base, ref, url, &len, &normal) != URL_OK) continue;
        size_t before = out->n, k = add_link(out, &urls, url, len, normal, &c->v[i]);
        if (k == MAP_ABSENT) goto done;
        if (out->n > before && (c->flags & HTML_LINKS_TEXT) &&
            !(out->v[k].text = link_text(&c->v[i])))
            goto done;
        out->v[k].nofollow = out->v[k].nofollow && c->v[i].nofollow;
    }
    rc = 0;
done:
    free(base_url);
    map_free(&urls);
    return rc;
}

int html_links(xmlDocPtr doc, const char *doc_url, unsigned flags, html_links_t *out)
{
    struct collect c = {.flags = flags};
    int rc = -1;
    memset(out, 0, sizeof(*out));
    xmlNodePtr top = (xmlNodePtr)doc;
    for (xmlNodePtr n = top; n; n = walk_next(n, top, 1))
        if (n->type == XML_ELEMENT_NODE && visit(&c, (const char *)n->name, n, tree_attr, n) < 0)
            goto done;
    rc = resolve_all(&c, doc_url, out);
done:
    collect_free(&c);
    return rc;
}

/* The SAX pass: the same elements the tree would get, in the same order (the tree is
 * built from these very events), without building it. */
struct sax {
    struct collect c;
    size_t depth;
    struct open_a {
        size_t cand, depth;
    } * open; /* the <a> elements open (they can nest), whose text is collected */
    size_t nopen, capopen;
    int failed;
    struct buf *title;  /* the first <title>'s text, when asked for */
    size_t title_depth; /* depth of that <title> while inside it, else 0 */
    int title_seen;
};

static void sax_fail(htmlParserCtxtPtr ctxt, struct sax *s)
{
    s->failed = 1;
    xmlStopParser(ctxt);
}

/* startElement */
static void sax_start(void *ctx, const xmlChar *name, const xmlChar **atts)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct sax *s = ctxt->_private;
    s->depth++;
    if (s->title && !s->title_seen && strcmp((const char *)name, "title") == 0) {
        s->title_seen = 1;
        s->title_depth = s->depth;
        if (buf_append(s->title, "", 0) != 0) sax_fail(ctxt, s);
    }
    int r = visit(&s->c, (const char *)name, atts, sax_attr, NULL);
    if (r < 0) {
        sax_fail(ctxt, s);
        return;
    }
    if (r == 0 || !(s->c.flags & HTML_LINKS_TEXT)) return;
    struct cand *x = &s->c.v[s->c.n - 1];
    if (strcmp(x->tag, "a") == 0) {
        if (s->nopen == s->capopen) {
            size_t cap = s->capopen ? s->capopen * 2 : 8;
            struct open_a *v = realloc(s->open, cap * sizeof(*v));
            if (!v) {
                sax_fail(ctxt, s);
                return;
            }
            s->open = v;
            s->capopen = cap;
        }
        s->open[s->nopen++] = (struct open_a){s->c.n - 1, s->depth};
    } else if (strcmp(x->tag, "area") == 0 || strcmp(x->tag, "img") == 0) {
        xmlChar *owned;
        const char *alt = sax_attr(atts, "alt", &owned);
        if (buf_append(&x->text, alt ? alt : "", alt ? strlen(alt) : 0) != 0) sax_fail(ctxt, s);
    }
}

/* endElement */
static void sax_end(void *ctx, const xmlChar *name)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct sax *s = ctxt->_private;
    (void)name;
    if (s->title_depth == s->depth) s->title_depth = 0;
    if (s->nopen && s->open[s->nopen - 1].depth == s->depth) s->nopen--;
    if (s->depth) s->depth--;
}

/* characters, cdataBlock */
static void sax_text(void *ctx, const xmlChar *text, int len)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct sax *s = ctxt->_private;
    if (s->title_depth && len > 0 && buf_append(s->title, text, (size_t)len) != 0) {
        sax_fail(ctxt, s);
        return;
    }
    for (size_t i = 0; i < s->nopen && len > 0; i++)
        if (buf_append(&s->c.v[s->open[i].cand].text, text, (size_t)len) != 0) {
            sax_fail(ctxt, s);
            return;
        }
}

int html_links_body(const char *body, size_t len, const char *http_charset, const char *doc_url,
                    unsigned flags, html_links_t *out, const char **encoding)
{
    return html_scan_body(body, len, http_charset, doc_url, flags, out, NULL, encoding);
}

/* The SAX pass over decoded text into s: 0, or -1 when out of memory. */
static int sax_pass(const char *text, size_t n, struct sax *s)
{
    htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(text, (int)n);
    int rc = -1;
    if (!ctxt) return -1;
    memset(ctxt->sax, 0, sizeof(*ctxt->sax));
    ctxt->sax->startElement = sax_start;
    ctxt->sax->endElement = sax_end;
    /* Like the tree builder: text (which also opens implied paragraphs), but not
     * the whitespace the parser deems ignorable. */
    ctxt->sax->characters = sax_text;
    ctxt->sax->cdataBlock = sax_text;
    ctxt->sax->initialized = 1;
    ctxt->_private = s;
    htmlCtxtUseOptions(ctxt, PARSE_OPTIONS);
    /* As htmlReadMemory(..., "UTF-8", ...) does: without it, the first non-ASCII
     * character makes this context guess an encoding. */
    xmlCharEncodingHandlerPtr utf8 = xmlFindCharEncodingHandler("UTF-8");
    if (!utf8 || xmlSwitchToEncoding(ctxt, utf8) != 0) goto done;
    xmlFree((xmlChar *)ctxt->input->encoding);
    ctxt->input->encoding = xmlStrdup((const xmlChar *)"UTF-8");
    htmlParseDocument(ctxt);
    rc = s->failed ? -1 : 0;
done:
    htmlFreeParserCtxt(ctxt);
    return rc;
}

/* The elements visit reads: the fast scan reports these with their attributes. */
static const char *const scan_tags[] = {"a",   "area", "base", "frame", "iframe",
                                        "img", "link", "meta", NULL};

static int scan_tag(void *arg, const char *name, const char *const *atts)
{
    /* An <a>, most of what the scan reports: what visit() would make of it, href and
     * rel found in one look at its attributes (the scan keeps the first of a name). */
    if (name[0] == 'a' && name[1] == '\0') {
        struct collect *c = arg;
        struct cand x = {NULL, NULL, NULL, "a", 0, {NULL, 0, 0}};
        const char *rel = NULL;
        for (size_t i = 0; atts && atts[i]; i += 2) {
            const char *an = atts[i], *v = atts[i + 1] ? atts[i + 1] : "";
            if (an[0] == 'h' && html_name_eq(an, "href"))
                x.ref = v;
            else if (an[0] == 'r' && html_name_eq(an, "rel"))
                rel = v;
        }
        if (!x.ref) return 0;
        x.nofollow = rel && has_token(rel, "nofollow");
        if (keep(c, &x.ref, NULL) != 0 || add_cand(c, &x) != 0) return -1;
        return 0;
    }
    return visit(arg, name, atts, sax_attr, NULL) < 0 ? -1 : 0;
}

int html_scan_body(const char *body, size_t len, const char *http_charset, const char *doc_url,
                   unsigned flags, html_links_t *out, char **title, const char **encoding)
{
    struct buf title_buf = {NULL, 0, 0};
    struct sax s = {.c = {.flags = flags, .copy_refs = 1}, .title = title ? &title_buf : NULL};
    struct buf buf = {NULL, 0, 0};
    struct buf kept = {NULL, 0, 0}; /* the fast scan's attributes: its references point there */
    const char *text;
    size_t n, bom;
    int rc = -1;
    memset(out, 0, sizeof(*out));
    const struct encoding *e = sniff((const unsigned char *)body, len, http_charset, &bom);
    if (encoding) *encoding = e->name;
    if (decode(e, (const unsigned char *)body + bom, len - bom, &text, &n, &buf) != 0) goto done;
    if (n > 0 && n <= INT_MAX) {
        /* The fast scan, unless link text is wanted (it does not follow the tree);
         * the SAX pass when it is not sure of this page. */
        int fast = !(flags & (HTML_LINKS_TEXT | HTML_LINKS_FORCE_SAX));
        char **scan_title = title ? &title_buf.p : NULL;
        s.c.copy_refs = !fast; /* the fast scan keeps them for us */
        int r = fast ? html_scan_tags(text, n, scan_tags, scan_tag, &s.c, scan_title, &kept) : 1;
        if (r < 0) goto done;
        if (r == 0 && title_buf.p) title_buf.n = strlen(title_buf.p);
        if (r == 1 && (flags & HTML_LINKS_FAST_ONLY)) {
            rc = 1;
            goto done;
        }
        if (r == 1 && fast) { /* start again */
            collect_free(&s.c);
            s.c = (struct collect){.flags = flags, .copy_refs = 1};
        }
        if (r == 1 && sax_pass(text, n, &s) != 0) goto done;
    }
    rc = resolve_all(&s.c, doc_url, out);
    if (rc == 0 && title) {
        if (title_buf.p) squash(title_buf.p, title_buf.n);
        *title = title_buf.p; /* NULL without a <title> */
        title_buf.p = NULL;
    }
done:
    free(s.open);
    free(buf.p);
    free(title_buf.p);
    collect_free(&s.c);
    buf_free(&kept);
    return rc;
}

void html_links_free(html_links_t *links)
{
    for (size_t i = 0; i < links->n; i++)
        if (links->v[i].text) free(links->v[i].text); /* only with HTML_LINKS_TEXT */
    free(links->v);
    strings_free(links->strings);
    memset(links, 0, sizeof(*links));
}
