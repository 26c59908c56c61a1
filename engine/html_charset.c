/* html_charset.c: a body's encoding, found in the HTML spec's order (byte order
 * mark, transport label, the prescan for a <meta>, windows-1252) among the WHATWG
 * Encoding Standard's labels, and the body decoded to clean UTF-8.
 *
 * Decoding happens before libxml2 sees the bytes: libxml2 2.9.14 stops at the first
 * byte its converter rejects (the rest of the page is lost) and lets invalid UTF-8
 * through to the tree. So the body is turned into clean UTF-8 first (iconv for
 * legacy encodings, a validating copy for UTF-8, no copy at all for the common case
 * of valid UTF-8 or pure ASCII), and html.c has libxml2 parse it as UTF-8 with
 * HTML_PARSE_IGNORE_ENC, so a <meta> later in the page cannot switch encodings. */
#include "html_charset.h"

#include "ascii.h"
#include "buf.h"

#include <errno.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static const struct encoding *find_label(const char *label, size_t len)
{
    char key[32];
    while (len && ascii_is_space((unsigned char)*label))
        label++, len--;
    while (len && ascii_is_space((unsigned char)label[len - 1]))
        len--;
    if (len == 0 || len >= sizeof(key)) return NULL;
    for (size_t i = 0; i < len; i++)
        key[i] = (char)ascii_lower((unsigned char)label[i]);
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
        if (ascii_lower(p->s[i + j]) != lit[j]) return 0;
    return 1;
}

static int is_alpha(int c)
{
    c = ascii_lower(c);
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
    while (p->i < p->n && (ascii_is_space(p->s[p->i]) || p->s[p->i] == '/'))
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
        if (ascii_is_space(c)) break;
        if (c == '/' || c == '>') return 1;
        put(name, nsize, &nl, ascii_lower(c));
    }
    while (p->i < p->n && ascii_is_space(p->s[p->i]))
        p->i++;
    if (p->i >= p->n) return -1;
    if (p->s[p->i] != '=') return 1;
    p->i++;
value:
    while (p->i < p->n && ascii_is_space(p->s[p->i]))
        p->i++;
    if (p->i >= p->n) return -1;
    int q = p->s[p->i];
    if (q == '"' || q == '\'') {
        for (p->i++; p->i < p->n; p->i++) {
            if (p->s[p->i] == q) {
                p->i++;
                return 1;
            }
            put(value, vsize, &vl, ascii_lower(p->s[p->i]));
        }
        return -1;
    }
    if (q == '>') return 1;
    for (; p->i < p->n; p->i++) {
        int c = p->s[p->i];
        if (ascii_is_space(c) || c == '>') return 1;
        put(value, vsize, &vl, ascii_lower(c));
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
        while (ascii_is_space((unsigned char)*s))
            s++;
        if (*s != '=') continue;
        s++;
        while (ascii_is_space((unsigned char)*s))
            s++;
        if (*s == '"' || *s == '\'') {
            const char *end = strchr(s + 1, *s);
            return end ? find_label(s + 1, (size_t)(end - s - 1)) : NULL;
        }
        if (!*s) return NULL;
        size_t len = 0;
        while (s[len] && !ascii_is_space((unsigned char)s[len]) && s[len] != ';')
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

/* The HTML spec's prescan of s's first limit bytes (of n): the encoding its first
 * <meta> declares, or NULL. */
/* How far the prescan looks before the parser starts (the HTML spec's 1024 bytes). */
#define PRESCAN_BYTES 1024

static const struct encoding *prescan(const unsigned char *s, size_t n, size_t limit)
{
    struct scan p = {s, n < limit ? n : limit, 0};
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
            (ascii_is_space(p.s[p.i + 5]) || p.s[p.i + 5] == '/')) {
            const struct encoding *enc = NULL;
            p.i += 5;
            int r = scan_meta(&p, &enc);
            if (r < 0) return NULL;
            if (r > 0) return enc;
        } else if (p.s[p.i] == '<' && p.i + 1 < p.n &&
                   (is_alpha(p.s[p.i + 1]) ||
                    (p.s[p.i + 1] == '/' && p.i + 2 < p.n && is_alpha(p.s[p.i + 2])))) {
            while (p.i < p.n && !ascii_is_space(p.s[p.i]) && p.s[p.i] != '>')
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
    e = prescan(s, n, PRESCAN_BYTES);
    /* Nothing in the first bytes: a browser goes on with windows-1252, tentatively, and
     * when its parser meets a <meta> that declares another encoding it starts again in
     * that one. The same prescan over the whole body finds that <meta> (html5lib-tests'
     * encoding cases agree with it, a <meta> written in a script's text included), so
     * the body is decoded once, in the encoding the browser ends with. */
    if (!e && n > PRESCAN_BYTES) e = prescan(s, n, n);
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
        /* 128 ASCII bytes, none of them NUL, at a time: a page is mostly ASCII. A
         * byte from 0x80 shows in their OR, a NUL in their minimum. */
        while (n - i >= 128) {
            const __m128i *v = (const __m128i *)(const void *)(s + i);
            __m128i a = _mm_loadu_si128(v), b = _mm_loadu_si128(v + 1);
            __m128i c = _mm_loadu_si128(v + 2), d = _mm_loadu_si128(v + 3);
            __m128i e = _mm_loadu_si128(v + 4), f = _mm_loadu_si128(v + 5);
            __m128i g = _mm_loadu_si128(v + 6), h = _mm_loadu_si128(v + 7);
            __m128i any = _mm_or_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)),
                                       _mm_or_si128(_mm_or_si128(e, f), _mm_or_si128(g, h)));
            __m128i min = _mm_min_epu8(_mm_min_epu8(_mm_min_epu8(a, b), _mm_min_epu8(c, d)),
                                       _mm_min_epu8(_mm_min_epu8(e, f), _mm_min_epu8(g, h)));
            any = _mm_or_si128(any, _mm_cmpeq_epi8(min, _mm_setzero_si128()));
            if (_mm_movemask_epi8(any) != 0) break;
            i += 128;
        }
        /* Then 64 (or where the 128 stopped): as signed bytes, NUL and the bytes from
         * 0x80 are exactly those below 1. */
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

int html_charset_decode(const char *body, size_t len, const char *http_charset, html_decoded_t *d)
{
    size_t bom;
    const struct encoding *e = sniff((const unsigned char *)body, len, http_charset, &bom);
    d->encoding = e->name;
    d->buf = (struct buf){NULL, 0, 0};
    return decode(e, (const unsigned char *)body + bom, len - bom, &d->text, &d->n, &d->buf);
}
