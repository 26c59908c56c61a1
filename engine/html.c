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
#include "url.h"

#include <errno.h>
#include <iconv.h>
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- encodings (WHATWG Encoding Standard) ---- */

enum kind {
    K_UTF8,
    K_SINGLE,     /* single-byte, ASCII-compatible */
    K_MULTI,      /* multi-byte, ASCII-compatible */
    K_STATEFUL,   /* ISO-2022-JP: ASCII bytes may be escape sequences */
    K_UTF16LE,
    K_UTF16BE,
    K_REPLACEMENT /* the whole body decodes to one U+FFFD */
};

struct encoding {
    const char *name;  /* WHATWG name */
    const char *iconv; /* glibc iconv name of the decoder */
    enum kind kind;
};

enum {
    E_UTF8, E_IBM866, E_8859_2, E_8859_3, E_8859_4, E_8859_5, E_8859_6, E_8859_7, E_8859_8,
    E_8859_8I, E_8859_10, E_8859_13, E_8859_14, E_8859_15, E_8859_16, E_KOI8R, E_KOI8U,
    E_MACINTOSH, E_WIN874, E_WIN1250, E_WIN1251, E_WIN1252, E_WIN1253, E_WIN1254,
    E_WIN1255, E_WIN1256, E_WIN1257, E_WIN1258, E_MACCYR, E_GBK, E_GB18030, E_BIG5,
    E_EUCJP, E_ISO2022JP, E_SJIS, E_EUCKR, E_REPLACEMENT, E_UTF16BE, E_UTF16LE, E_USERDEF,
};

/* The decoders are glibc's, picked for the WHATWG variant where names differ:
 * Shift_JIS is windows-31j (CP932), EUC-KR is windows-949, GBK decodes as gb18030,
 * Big5 includes HKSCS. x-user-defined is read as windows-1252. */
static const struct encoding encodings[] = {
    [E_UTF8] = {"UTF-8", "UTF-8", K_UTF8},
    [E_IBM866] = {"IBM866", "IBM866", K_SINGLE},
    [E_8859_2] = {"ISO-8859-2", "ISO-8859-2", K_SINGLE},
    [E_8859_3] = {"ISO-8859-3", "ISO-8859-3", K_SINGLE},
    [E_8859_4] = {"ISO-8859-4", "ISO-8859-4", K_SINGLE},
    [E_8859_5] = {"ISO-8859-5", "ISO-8859-5", K_SINGLE},
    [E_8859_6] = {"ISO-8859-6", "ISO-8859-6", K_SINGLE},
    [E_8859_7] = {"ISO-8859-7", "ISO-8859-7", K_SINGLE},
    [E_8859_8] = {"ISO-8859-8", "ISO-8859-8", K_SINGLE},
    [E_8859_8I] = {"ISO-8859-8-I", "ISO-8859-8", K_SINGLE},
    [E_8859_10] = {"ISO-8859-10", "ISO-8859-10", K_SINGLE},
    [E_8859_13] = {"ISO-8859-13", "ISO-8859-13", K_SINGLE},
    [E_8859_14] = {"ISO-8859-14", "ISO-8859-14", K_SINGLE},
    [E_8859_15] = {"ISO-8859-15", "ISO-8859-15", K_SINGLE},
    [E_8859_16] = {"ISO-8859-16", "ISO-8859-16", K_SINGLE},
    [E_KOI8R] = {"KOI8-R", "KOI8-R", K_SINGLE},
    [E_KOI8U] = {"KOI8-U", "KOI8-U", K_SINGLE},
    [E_MACINTOSH] = {"macintosh", "MACINTOSH", K_SINGLE},
    [E_WIN874] = {"windows-874", "CP874", K_SINGLE},
    [E_WIN1250] = {"windows-1250", "CP1250", K_SINGLE},
    [E_WIN1251] = {"windows-1251", "CP1251", K_SINGLE},
    [E_WIN1252] = {"windows-1252", "CP1252", K_SINGLE},
    [E_WIN1253] = {"windows-1253", "CP1253", K_SINGLE},
    [E_WIN1254] = {"windows-1254", "CP1254", K_SINGLE},
    [E_WIN1255] = {"windows-1255", "CP1255", K_SINGLE},
    [E_WIN1256] = {"windows-1256", "CP1256", K_SINGLE},
    [E_WIN1257] = {"windows-1257", "CP1257", K_SINGLE},
    [E_WIN1258] = {"windows-1258", "CP1258", K_SINGLE},
    [E_MACCYR] = {"x-mac-cyrillic", "MAC-CYRILLIC", K_SINGLE},
    [E_GBK] = {"GBK", "GB18030", K_MULTI},
    [E_GB18030] = {"gb18030", "GB18030", K_MULTI},
    [E_BIG5] = {"Big5", "BIG5-HKSCS", K_MULTI},
    [E_EUCJP] = {"EUC-JP", "EUC-JP", K_MULTI},
    [E_ISO2022JP] = {"ISO-2022-JP", "ISO-2022-JP", K_STATEFUL},
    [E_SJIS] = {"Shift_JIS", "CP932", K_MULTI},
    [E_EUCKR] = {"EUC-KR", "CP949", K_MULTI},
    [E_REPLACEMENT] = {"replacement", NULL, K_REPLACEMENT},
    [E_UTF16BE] = {"UTF-16BE", "UTF-16BE", K_UTF16BE},
    [E_UTF16LE] = {"UTF-16LE", "UTF-16LE", K_UTF16LE},
    [E_USERDEF] = {"x-user-defined", "CP1252", K_SINGLE},
};

static const struct {
    const char *label;
    int enc;
} labels[] = {
    {"unicode-1-1-utf-8", E_UTF8}, {"unicode11utf8", E_UTF8}, {"unicode20utf8", E_UTF8},
    {"utf-8", E_UTF8}, {"utf8", E_UTF8}, {"x-unicode20utf8", E_UTF8},
    {"866", E_IBM866}, {"cp866", E_IBM866}, {"csibm866", E_IBM866}, {"ibm866", E_IBM866},
    {"csisolatin2", E_8859_2}, {"iso-8859-2", E_8859_2}, {"iso-ir-101", E_8859_2},
    {"iso8859-2", E_8859_2}, {"iso88592", E_8859_2}, {"iso_8859-2", E_8859_2},
    {"iso_8859-2:1987", E_8859_2}, {"l2", E_8859_2}, {"latin2", E_8859_2},
    {"csisolatin3", E_8859_3}, {"iso-8859-3", E_8859_3}, {"iso-ir-109", E_8859_3},
    {"iso8859-3", E_8859_3}, {"iso88593", E_8859_3}, {"iso_8859-3", E_8859_3},
    {"iso_8859-3:1988", E_8859_3}, {"l3", E_8859_3}, {"latin3", E_8859_3},
    {"csisolatin4", E_8859_4}, {"iso-8859-4", E_8859_4}, {"iso-ir-110", E_8859_4},
    {"iso8859-4", E_8859_4}, {"iso88594", E_8859_4}, {"iso_8859-4", E_8859_4},
    {"iso_8859-4:1988", E_8859_4}, {"l4", E_8859_4}, {"latin4", E_8859_4},
    {"csisolatincyrillic", E_8859_5}, {"cyrillic", E_8859_5}, {"iso-8859-5", E_8859_5},
    {"iso-ir-144", E_8859_5}, {"iso8859-5", E_8859_5}, {"iso88595", E_8859_5},
    {"iso_8859-5", E_8859_5}, {"iso_8859-5:1988", E_8859_5},
    {"arabic", E_8859_6}, {"asmo-708", E_8859_6}, {"csiso88596e", E_8859_6},
    {"csiso88596i", E_8859_6}, {"csisolatinarabic", E_8859_6}, {"ecma-114", E_8859_6},
    {"iso-8859-6", E_8859_6}, {"iso-8859-6-e", E_8859_6}, {"iso-8859-6-i", E_8859_6},
    {"iso-ir-127", E_8859_6}, {"iso8859-6", E_8859_6}, {"iso88596", E_8859_6},
    {"iso_8859-6", E_8859_6}, {"iso_8859-6:1987", E_8859_6},
    {"csisolatingreek", E_8859_7}, {"ecma-118", E_8859_7}, {"elot_928", E_8859_7},
    {"greek", E_8859_7}, {"greek8", E_8859_7}, {"iso-8859-7", E_8859_7},
    {"iso-ir-126", E_8859_7}, {"iso8859-7", E_8859_7}, {"iso88597", E_8859_7},
    {"iso_8859-7", E_8859_7}, {"iso_8859-7:1987", E_8859_7}, {"sun_eu_greek", E_8859_7},
    {"csiso88598e", E_8859_8}, {"csisolatinhebrew", E_8859_8}, {"hebrew", E_8859_8},
    {"iso-8859-8", E_8859_8}, {"iso-8859-8-e", E_8859_8}, {"iso-ir-138", E_8859_8},
    {"iso8859-8", E_8859_8}, {"iso88598", E_8859_8}, {"iso_8859-8", E_8859_8},
    {"iso_8859-8:1988", E_8859_8}, {"visual", E_8859_8},
    {"csiso88598i", E_8859_8I}, {"iso-8859-8-i", E_8859_8I}, {"logical", E_8859_8I},
    {"csisolatin6", E_8859_10}, {"iso-8859-10", E_8859_10}, {"iso-ir-157", E_8859_10},
    {"iso8859-10", E_8859_10}, {"iso885910", E_8859_10}, {"l6", E_8859_10},
    {"latin6", E_8859_10},
    {"iso-8859-13", E_8859_13}, {"iso8859-13", E_8859_13}, {"iso885913", E_8859_13},
    {"iso-8859-14", E_8859_14}, {"iso8859-14", E_8859_14}, {"iso885914", E_8859_14},
    {"csisolatin9", E_8859_15}, {"iso-8859-15", E_8859_15}, {"iso8859-15", E_8859_15},
    {"iso885915", E_8859_15}, {"iso_8859-15", E_8859_15}, {"l9", E_8859_15},
    {"iso-8859-16", E_8859_16},
    {"cskoi8r", E_KOI8R}, {"koi", E_KOI8R}, {"koi8", E_KOI8R}, {"koi8-r", E_KOI8R},
    {"koi8_r", E_KOI8R}, {"koi8-ru", E_KOI8U}, {"koi8-u", E_KOI8U},
    {"csmacintosh", E_MACINTOSH}, {"mac", E_MACINTOSH}, {"macintosh", E_MACINTOSH},
    {"x-mac-roman", E_MACINTOSH},
    {"dos-874", E_WIN874}, {"iso-8859-11", E_WIN874}, {"iso8859-11", E_WIN874},
    {"iso885911", E_WIN874}, {"tis-620", E_WIN874}, {"windows-874", E_WIN874},
    {"cp1250", E_WIN1250}, {"windows-1250", E_WIN1250}, {"x-cp1250", E_WIN1250},
    {"cp1251", E_WIN1251}, {"windows-1251", E_WIN1251}, {"x-cp1251", E_WIN1251},
    {"ansi_x3.4-1968", E_WIN1252}, {"ascii", E_WIN1252}, {"cp1252", E_WIN1252},
    {"cp819", E_WIN1252}, {"csisolatin1", E_WIN1252}, {"ibm819", E_WIN1252},
    {"iso-8859-1", E_WIN1252}, {"iso-ir-100", E_WIN1252}, {"iso8859-1", E_WIN1252},
    {"iso88591", E_WIN1252}, {"iso_8859-1", E_WIN1252}, {"iso_8859-1:1987", E_WIN1252},
    {"l1", E_WIN1252}, {"latin1", E_WIN1252}, {"us-ascii", E_WIN1252},
    {"windows-1252", E_WIN1252}, {"x-cp1252", E_WIN1252},
    {"cp1253", E_WIN1253}, {"windows-1253", E_WIN1253}, {"x-cp1253", E_WIN1253},
    {"cp1254", E_WIN1254}, {"csisolatin5", E_WIN1254}, {"iso-8859-9", E_WIN1254},
    {"iso-ir-148", E_WIN1254}, {"iso8859-9", E_WIN1254}, {"iso88599", E_WIN1254},
    {"iso_8859-9", E_WIN1254}, {"iso_8859-9:1989", E_WIN1254}, {"l5", E_WIN1254},
    {"latin5", E_WIN1254}, {"windows-1254", E_WIN1254}, {"x-cp1254", E_WIN1254},
    {"cp1255", E_WIN1255}, {"windows-1255", E_WIN1255}, {"x-cp1255", E_WIN1255},
    {"cp1256", E_WIN1256}, {"windows-1256", E_WIN1256}, {"x-cp1256", E_WIN1256},
    {"cp1257", E_WIN1257}, {"windows-1257", E_WIN1257}, {"x-cp1257", E_WIN1257},
    {"cp1258", E_WIN1258}, {"windows-1258", E_WIN1258}, {"x-cp1258", E_WIN1258},
    {"x-mac-cyrillic", E_MACCYR}, {"x-mac-ukrainian", E_MACCYR},
    {"chinese", E_GBK}, {"csgb2312", E_GBK}, {"csiso58gb231280", E_GBK}, {"gb2312", E_GBK},
    {"gb_2312", E_GBK}, {"gb_2312-80", E_GBK}, {"gbk", E_GBK}, {"iso-ir-58", E_GBK},
    {"x-gbk", E_GBK}, {"gb18030", E_GB18030},
    {"big5", E_BIG5}, {"big5-hkscs", E_BIG5}, {"cn-big5", E_BIG5}, {"csbig5", E_BIG5},
    {"x-x-big5", E_BIG5},
    {"cseucpkdfmtjapanese", E_EUCJP}, {"euc-jp", E_EUCJP}, {"x-euc-jp", E_EUCJP},
    {"csiso2022jp", E_ISO2022JP}, {"iso-2022-jp", E_ISO2022JP},
    {"csshiftjis", E_SJIS}, {"ms932", E_SJIS}, {"ms_kanji", E_SJIS}, {"shift-jis", E_SJIS},
    {"shift_jis", E_SJIS}, {"sjis", E_SJIS}, {"windows-31j", E_SJIS}, {"x-sjis", E_SJIS},
    {"cseuckr", E_EUCKR}, {"csksc56011987", E_EUCKR}, {"euc-kr", E_EUCKR},
    {"iso-ir-149", E_EUCKR}, {"korean", E_EUCKR}, {"ks_c_5601-1987", E_EUCKR},
    {"ks_c_5601-1989", E_EUCKR}, {"ksc5601", E_EUCKR}, {"ksc_5601", E_EUCKR},
    {"windows-949", E_EUCKR},
    {"csiso2022kr", E_REPLACEMENT}, {"hz-gb-2312", E_REPLACEMENT},
    {"iso-2022-cn", E_REPLACEMENT}, {"iso-2022-cn-ext", E_REPLACEMENT},
    {"iso-2022-kr", E_REPLACEMENT}, {"replacement", E_REPLACEMENT},
    {"unicodefffe", E_UTF16BE}, {"utf-16be", E_UTF16BE},
    {"csunicode", E_UTF16LE}, {"iso-10646-ucs-2", E_UTF16LE}, {"ucs-2", E_UTF16LE},
    {"unicode", E_UTF16LE}, {"unicodefeff", E_UTF16LE}, {"utf-16", E_UTF16LE},
    {"utf-16le", E_UTF16LE},
    {"x-user-defined", E_USERDEF},
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
    while (len && is_space((unsigned char)*label)) label++, len--;
    while (len && is_space((unsigned char)label[len - 1])) len--;
    if (len == 0 || len >= sizeof(key)) return NULL;
    for (size_t i = 0; i < len; i++) key[i] = (char)lower((unsigned char)label[i]);
    key[len] = 0;
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
        if (strcmp(labels[i].label, key) == 0) return &encodings[labels[i].enc];
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
    while (p->i < p->n && (is_space(p->s[p->i]) || p->s[p->i] == '/')) p->i++;
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
    while (p->i < p->n && is_space(p->s[p->i])) p->i++;
    if (p->i >= p->n) return -1;
    if (p->s[p->i] != '=') return 1;
    p->i++;
value:
    while (p->i < p->n && is_space(p->s[p->i])) p->i++;
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
        while (is_space((unsigned char)*s)) s++;
        if (*s != '=') continue;
        s++;
        while (is_space((unsigned char)*s)) s++;
        if (*s == '"' || *s == '\'') {
            const char *end = strchr(s + 1, *s);
            return end ? find_label(s + 1, (size_t)(end - s - 1)) : NULL;
        }
        if (!*s) return NULL;
        size_t len = 0;
        while (s[len] && !is_space((unsigned char)s[len]) && s[len] != ';') len++;
        return find_label(s, len);
    }
}

/* After "<meta": 1 and *enc when it declares a known encoding, 0 if not, -1 when the
 * bytes run out. */
static int scan_meta(struct scan *p, const struct encoding **enc)
{
    char name[32], value[256];
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
            while (p.i < p.n && !is_space(p.s[p.i]) && p.s[p.i] != '>') p.i++;
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

const char *html_sniff(const char *body, size_t len, const char *http_charset, size_t *bom)
{
    size_t b;
    const char *name = sniff((const unsigned char *)body, len, http_charset, &b)->name;
    if (bom) *bom = b;
    return name;
}

/* ---- decoding to UTF-8 ---- */

struct buf {
    char *p;
    size_t n, cap;
};

static int reserve(struct buf *b, size_t more)
{
    if (b->cap - b->n >= more) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < more) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int append(struct buf *b, const void *s, size_t n)
{
    if (reserve(b, n + 1) != 0) return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static const char REPLACEMENT_CHAR[] = "\xEF\xBF\xBD";

/* Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), or 0 with *bad
 * the length of its maximal ill-formed subpart, which one U+FFFD replaces. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
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
    size_t i = 0, bad;
    while (i < n) {
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
    if (reserve(out, n + n / 2 + 4) != 0) return -1;
    size_t i = 0, bad;
    while (i < n) {
        size_t clean = i + utf8_clean_prefix(s + i, n - i);
        if (append(out, s + i, clean - i) != 0) return -1;
        i = clean;
        if (i >= n) break;
        if (s[i] == 0) {
            i++;
            continue;
        }
        utf8_seq(s + i, n - i, &bad);
        if (append(out, REPLACEMENT_CHAR, 3) != 0) return -1;
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

static int decode_iconv(const struct encoding *e, const unsigned char *s, size_t n,
                        struct buf *out)
{
    iconv_t cd = iconv_open("UTF-8", e->iconv);
    if (cd == (iconv_t)-1) cd = iconv_open("UTF-8", "CP1252");
    if (cd == (iconv_t)-1) return -1;
    size_t unit = e->kind == K_UTF16LE || e->kind == K_UTF16BE ? 2 : 1;
    int rc = -1;
    if (reserve(out, n * 2 + 16) != 0) goto done;
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
            if (reserve(out, (n - i) * 2 + 64) != 0) goto done;
        } else if (i >= n) {
            break;
        } else if (err == EILSEQ) {
            unsigned c = s[i];
            /* windows-1252's five unassigned bytes decode to C1 controls. */
            int c1 = e == &encodings[E_WIN1252] &&
                     (c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D);
            char c1buf[2] = {(char)0xC2, (char)c};
            if (append(out, c1 ? c1buf : REPLACEMENT_CHAR, c1 ? 2 : 3) != 0) goto done;
            i += unit < n - i ? unit : n - i;
        } else {
            /* EINVAL: a sequence cut off by the end of the body. */
            if (append(out, REPLACEMENT_CHAR, 3) != 0) goto done;
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
static int decode(const struct encoding *e, const unsigned char *s, size_t n,
                  const char **out, size_t *outlen, struct buf *buf)
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
        if (append(buf, REPLACEMENT_CHAR, 3) != 0) return -1;
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
#define PARSE_OPTIONS                                                                      \
    (HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET |  \
     HTML_PARSE_NODEFDTD | HTML_PARSE_COMPACT | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE)

xmlDocPtr html_parse(const char *body, size_t len, const char *http_charset,
                     const char **encoding)
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
static xmlNodePtr walk_next(xmlNodePtr n, xmlNodePtr top, int descend)
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
        while (is_space((unsigned char)*s)) s++;
        size_t k = 0;
        while (s[k] && !is_space((unsigned char)s[k])) k++;
        if (k == wl && strncasecmp(s, word, wl) == 0) return 1;
        s += k;
    }
    return 0;
}

/* The URL of a <meta http-equiv=refresh> content value (HTML spec "shared declarative
 * refresh steps"): start and length, or 0 when there is none. */
static int refresh_url(const char *s, const char **url, size_t *len)
{
    while (is_space((unsigned char)*s)) s++;
    if (!(*s >= '0' && *s <= '9') && *s != '.') return 0;
    while ((*s >= '0' && *s <= '9') || *s == '.') s++;
    if (*s && *s != ';' && *s != ',' && !is_space((unsigned char)*s)) return 0;
    while (is_space((unsigned char)*s)) s++;
    if (*s == ';' || *s == ',') s++;
    while (is_space((unsigned char)*s)) s++;
    if (!*s) return 0;
    const char *start = s;
    if (lower((unsigned char)s[0]) == 'u' && lower((unsigned char)s[1]) == 'r' &&
        lower((unsigned char)s[2]) == 'l') {
        const char *t = s + 3;
        while (is_space((unsigned char)*t)) t++;
        if (*t == '=') {
            t++;
            while (is_space((unsigned char)*t)) t++;
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

struct cand {
    const char *ref;
    xmlChar *owned; /* xmlFree */
    char *copy;     /* free */
    xmlNodePtr node;
    const char *tag;
    int nofollow;
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

static int add_cand(struct cands *c, const struct cand *x)
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

/* The reference an element contributes, if any (and the first <base href>). */
static int visit(xmlNodePtr n, unsigned flags, struct cands *c, struct cand *base)
{
    const char *name = (const char *)n->name, *an = NULL, *tag = NULL;
    switch (name[0]) {
    case 'a':
        if (is(n, "a")) tag = "a";
        else if (is(n, "area")) tag = "area";
        an = "href";
        break;
    case 'b':
        if (is(n, "base") && !base->ref) {
            base->ref = html_attr(n, "href", &base->owned);
            base->node = n;
        }
        return 0;
    case 'f':
        if ((flags & HTML_LINKS_FRAMES) && is(n, "frame")) tag = "frame", an = "src";
        break;
    case 'i':
        if ((flags & HTML_LINKS_FRAMES) && is(n, "iframe")) tag = "iframe", an = "src";
        else if ((flags & HTML_LINKS_IMG) && is(n, "img")) tag = "img", an = "src";
        break;
    case 'l':
        if ((flags & HTML_LINKS_LINK) && is(n, "link")) tag = "link", an = "href";
        break;
    case 'm':
        if (is(n, "meta")) tag = "meta";
        break;
    }
    if (!tag) return 0;
    struct cand x = {NULL, NULL, NULL, n, tag, 0};
    if (tag[0] == 'm') {
        xmlChar *owned;
        const char *equiv = html_attr(n, "http-equiv", &owned);
        int refresh = equiv && strcasecmp(equiv, "refresh") == 0;
        xmlFree(owned);
        if (!refresh) return 0;
        const char *content = html_attr(n, "content", &owned), *u;
        size_t ul;
        if (content && refresh_url(content, &u, &ul)) x.copy = strndup(u, ul);
        xmlFree(owned);
        if (!x.copy) return 0;
        x.ref = x.copy;
    } else {
        x.ref = html_attr(n, an, &x.owned);
        if (!x.ref) return 0;
        if (tag[0] == 'a' || tag[0] == 'l') {
            xmlChar *owned;
            const char *rel = html_attr(n, "rel", &owned);
            x.nofollow = rel && has_token(rel, "nofollow");
            xmlFree(owned);
        }
    }
    if (add_cand(c, &x) != 0) {
        xmlFree(x.owned);
        free(x.copy);
        return -1;
    }
    return 0;
}

/* Schemes never worth resolving (the http(s) check after resolution catches the
 * rest, including these written with embedded tabs or newlines). */
static int skipped_scheme(const char *ref)
{
    static const char *const schemes[] = {"javascript:", "mailto:", "data:", "tel:"};
    while (*ref && (unsigned char)*ref <= ' ') ref++;
    for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
        if (strncasecmp(ref, schemes[i], strlen(schemes[i])) == 0) return 1;
    return 0;
}

static int http_url(const char *u)
{
    return strncasecmp(u, "http://", 7) == 0 || strncasecmp(u, "https://", 8) == 0;
}

/* An open-addressing set of indexes into the output, keyed by URL. */
struct seen {
    size_t *slot; /* index + 1; 0 is empty */
    size_t mask, count;
};

static int seen_grow(struct seen *s, const html_links_t *out)
{
    size_t size = s->slot ? (s->mask + 1) * 2 : 128;
    size_t *slot = calloc(size, sizeof(*slot));
    if (!slot) return -1;
    for (size_t i = 0; s->slot && i <= s->mask; i++) {
        if (!s->slot[i]) continue;
        const char *u = out->v[s->slot[i] - 1].url;
        size_t h = (size_t)url_hash(u, strlen(u)) & (size - 1);
        while (slot[h]) h = (h + 1) & (size - 1);
        slot[h] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot;
    s->mask = size - 1;
    return 0;
}

/* Add url (taking it) unless present; merge nofollow either way. */
static int add_link(html_links_t *out, struct seen *s, char *url, const struct cand *c)
{
    if ((s->count + 1) * 2 > s->mask + 1 && seen_grow(s, out) != 0) goto fail;
    size_t h = (size_t)url_hash(url, strlen(url)) & s->mask;
    for (; s->slot[h]; h = (h + 1) & s->mask) {
        html_link_t *l = &out->v[s->slot[h] - 1];
        if (strcmp(l->url, url) == 0) {
            l->nofollow = l->nofollow && c->nofollow;
            free(url);
            return 0;
        }
    }
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 64;
        html_link_t *v = realloc(out->v, cap * sizeof(*v));
        if (!v) goto fail;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n] = (html_link_t){url, c->tag, c->node, c->nofollow};
    s->slot[h] = ++out->n;
    s->count++;
    return 0;
fail:
    free(url);
    return -1;
}

/* The absolute, normalized http(s) URL of ref, or NULL. */
static char *link_url(const char *base, const char *ref)
{
    char *abs = NULL, *norm = NULL;
    if (skipped_scheme(ref)) return NULL;
    /* Without a base only absolute references resolve (against themselves). */
    if (url_resolve(base ? base : ref, ref, &abs) != URL_OK) return NULL;
    if (http_url(abs)) url_normalize(abs, NULL, &norm);
    free(abs);
    return norm;
}

int html_links(xmlDocPtr doc, const char *doc_url, unsigned flags, html_links_t *out)
{
    struct cands c = {NULL, 0, 0};
    struct cand base = {NULL, NULL, NULL, NULL, NULL, 0};
    struct seen seen = {NULL, 0, 0};
    char *base_url = NULL;
    int rc = -1;
    memset(out, 0, sizeof(*out));

    xmlNodePtr top = (xmlNodePtr)doc;
    for (xmlNodePtr n = top; n; n = walk_next(n, top, 1))
        if (n->type == XML_ELEMENT_NODE && visit(n, flags, &c, &base) != 0) goto done;

    /* The first <base href>, resolved against the document's URL; if it does not
     * resolve, the document's URL stays the base. */
    const char *b = doc_url;
    if (base.ref && url_resolve(doc_url ? doc_url : base.ref, base.ref, &base_url) == URL_OK)
        b = base_url;
    for (size_t i = 0; i < c.n; i++) {
        char *u = link_url(b, c.v[i].ref);
        if (u && add_link(out, &seen, u, &c.v[i]) != 0) goto done;
    }
    rc = 0;
done:
    for (size_t i = 0; i < c.n; i++) {
        xmlFree(c.v[i].owned);
        free(c.v[i].copy);
    }
    free(c.v);
    xmlFree(base.owned);
    free(base_url);
    free(seen.slot);
    return rc;
}

void html_links_free(html_links_t *links)
{
    for (size_t i = 0; i < links->n; i++) free(links->v[i].url);
    free(links->v);
    memset(links, 0, sizeof(*links));
}
