/* html_scan.c: the fast path of html_scan_body: start tags, their attributes and the
 * first <title>'s text in one pass over the decoded UTF-8 text, without libxml2's
 * parser (which does a lot of work per character).
 *
 * The reference is not the WHATWG tokenizer but what libxml2 2.9's HTML parser (the
 * SAX pass this replaces) reports, so that both paths give the same links and title.
 * Where the two differ, this follows libxml2:
 *   - only <script> and <style> hold raw text, up to the first "</script" or "</style"
 *     (any case, whatever follows: no escape states); <title>, <textarea>, <xmp>,
 *     <iframe>, <noembed>, <noframes>, <noscript>, <template> and <plaintext> hold
 *     markup, and there is no foreign content (an <svg><a href> is a link);
 *     "<script/>" is empty;
 *   - names (tags and attributes) are [A-Za-z_:.][A-Za-z0-9_:.-]* (tags start with a
 *     letter), lower-cased and cut at 100 characters; a character that cannot be in a
 *     name (a '/', a form feed) makes the rest up to a blank an ignored attribute; the
 *     blanks are space, tab, LF and CR;
 *   - a start tag cut off by the end of the text still counts, as does the value of
 *     its last attribute;
 *   - "<!--" ends at the first "-->" or "--!>" at least two characters after it ("<!-->"
 *     does not end it); a comment never closed runs to the end; "<!x" and "</ x" are
 *     text; "<?target ...>" ends at the first '>'; "<!DOCTYPE" skips its quoted
 *     literals, and after one in the body a "<" that is not a comment, processing
 *     instruction or start tag is text;
 *   - an end tag skips to the first '>';
 *   - in attribute values, "&#...;" follows htmlParseCharRef (no windows-1252 remap;
 *     a reference that is not an XML character ends the value, as libxml2 writes a NUL)
 *     and named references are decoded only with their ';' and when libxml2's HTML 4
 *     table knows them.
 *   - a name after '&', "<?" or "<!DOCTYPE" is read as htmlParseName does, with
 *     libxml2's Unicode tables.
 * libxml2's tree (its stack of open elements, its rules for closing them) is not
 * emulated: the scan knows only which names were ever opened. Where the tree could
 * matter it gives up and says so (1), and the caller takes the SAX pass: in the first
 * <title>, a start tag, a DOCTYPE, or an end tag (other than its own) of an element
 * that may be open; at the start of the text of a <script> or <style>, or at an end
 * tag that begins like its own ("</scripts>"), an end tag of an element that may be
 * open. The text holds no NUL (html_parse's decoding leaves none; html.h). */
#include "html_scan.h"

#include "buf.h"
#include "utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTML_NAME_MAX 100 /* libxml2's HTML_PARSER_BUFFER_SIZE: longer names are cut there */

enum { DONE = 0, UNSURE = 1, FAILED = -1 };

/* Character classes, by byte. */
enum {
    C_BLANK = 1,    /* space, tab, LF, CR */
    C_LETTER = 2,   /* ASCII letter */
    C_NAME = 4,     /* in an HTML name after its first character: letter, digit : - _ . */
    C_START = 8,    /* first character of an attribute name: letter _ : . */
    C_XSTART = 16,  /* first character of an XML name (entity, PI target): letter _ : */
    C_DROPPED = 32, /* C0 controls libxml2 drops from text: not XML characters */
};

/* By byte; the bytes from 0x80 are in no class. */
static const unsigned char cls[256] = {
    32, 32, 32, 32, 32, 32, 32, 32, 32, 1,  1,  32, 32, 1,  32, 32, /* C0 */
    32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, /* C0 */
    1,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  4,  12, 0,  /* space - . */
    4,  4,  4,  4,  4,  4,  4,  4,  4,  4,  28, 0,  0,  0,  0,  0,  /* digits : */
    0,  30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, /* A-O */
    30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 0,  0,  0,  0,  28, /* P-Z _ */
    0,  30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, /* a-o */
    30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 0,  0,  0,  0,  0,  /* p-z */
};

static int is(unsigned char c, unsigned k)
{
    return (cls[c] & k) != 0;
}

/* By byte: a character of an HTML name (C_NAME) lower-cased, 0 for any other. */
static const unsigned char name_lower[256] = {
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   /* C0 */
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   /* C0 */
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   '-', '.', 0,   /* space - . */
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', 0,   0,   0,   0,   0,   /* digits : */
    0,   'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', /* A-O */
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 0,   0,   0,   0,   '_', /* P-Z _ */
    0,   'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', /* a-o */
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 0,   0,   0,   0,   0,   /* p-z */
};

static int add_utf8(struct buf *b, unsigned c)
{
    char u[4];
    return buf_append(b, u, (size_t)(utf8_put(u, c) - u));
}

struct scanner {
    const unsigned char *end; /* of the text, which holds no NUL */
    const char *const *tags;
    uint64_t wanted[4]; /* the name_bit of each of tags */
    html_tag_fn tag;
    void *arg;
    /* The attributes of the start tags reported, "name\0value\0" each: the caller's
     * buffer (html_scan_tags), with room reserved at the start and never grown, so
     * that the pointers the callback got stay good after the scan. atts points into
     * it: the name, value pairs of the tag being reported (a NULL value for an
     * attribute without one), natts of them so far. */
    struct buf attrs;
    const char **atts;
    size_t natts, capatts;
    /* A superset of the names of the open elements: the names of the start tags read
     * so far and of those libxml2 implies, hashed to bits. */
    uint64_t opened[4];
    unsigned special[3]; /* the name_hash of title, script and style */
    enum { T_NONE, T_IN, T_DONE } title_state;
    struct buf title;
    int rc; /* UNSURE or FAILED once the pass must stop */
};

/* A name's hash, which name_at also computes on its way through a start tag's name;
 * its low byte is the name's bit in the sets of names (opened, wanted). */
#define NAME_HASH_INIT 5381u
#define NAME_HASH_STEP(h, c) ((h)*33 + (unsigned char)(c))

static unsigned name_hash(const char *name)
{
    unsigned h = NAME_HASH_INIT;
    while (*name)
        h = NAME_HASH_STEP(h, *name++);
    return h;
}

static unsigned name_bit(const char *name)
{
    return name_hash(name) & 255;
}

/* A set of name bits: 256 bits in four words. */
static void bit_add(uint64_t *set, unsigned b)
{
    set[b >> 6] |= (uint64_t)1 << (b & 63);
}

static int bit_has(const uint64_t *set, unsigned b)
{
    return (set[b >> 6] >> (b & 63)) & 1;
}

/* Can an element of this name be open? When not, libxml2 ignores its end tag. */
static int maybe_open(const struct scanner *sc, const char *name)
{
    return bit_has(sc->opened, name_bit(name));
}

#ifdef __SSE2__
/* A bit for each of the 16 bytes at p that is c. */
static inline unsigned match16(const unsigned char *p, unsigned char c)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)c)));
}
#endif

/* The first c in [p, end), or NULL: memchr, after a look at the next 16 bytes
 * inline (most gaps between tags and most attribute values are shorter). */
static const unsigned char *find(const unsigned char *p, const unsigned char *end, unsigned char c)
{
#ifdef __SSE2__
    if (end - p >= 16) {
        unsigned m = match16(p, c);
        if (m) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    return memchr(p, c, (size_t)(end - p));
}

static const unsigned char *skip_blanks(const unsigned char *p, const unsigned char *end)
{
    while (p < end && is(*p, C_BLANK))
        p++;
    return p;
}

/* htmlParseHTMLName: a tag or attribute name at p, lower-cased in name (HTML_NAME_MAX + 1
 * bytes), *len 0 when there is none; returns the end of the name. */
static inline const unsigned char *html_name(const unsigned char *p, const unsigned char *end,
                                             char *name, size_t *len)
{
    size_t n = 0;
    if (p < end && is(*p, C_START)) {
        const unsigned char *lim = end - p > HTML_NAME_MAX ? p + HTML_NAME_MAX : end;
        unsigned char c;
        while (p < lim && (c = name_lower[*p]) != 0) {
            name[n++] = (char)c;
            p++;
        }
    }
    name[n] = 0;
    *len = n;
    return p;
}

/* html_name without the copy, at a start tag's name (p at a letter): the end of the
 * name, and its hash (name_hash of it lower-cased) in *h. */
static inline const unsigned char *name_at(const unsigned char *p, const unsigned char *end,
                                           unsigned *h)
{
    const unsigned char *lim = end - p > HTML_NAME_MAX ? p + HTML_NAME_MAX : end;
    unsigned x = NAME_HASH_INIT;
    unsigned char c;
    while (p < lim && (c = name_lower[*p]) != 0) {
        x = NAME_HASH_STEP(x, c);
        p++;
    }
    *h = x;
    return p;
}

/* The end of an HTML name at p, for a name nothing is done with (cutting it at
 * HTML_NAME_MAX would make the rest another name: the tag reads the same). */
static const unsigned char *skip_name(const unsigned char *p, const unsigned char *end)
{
    if (p < end && is(*p, C_START))
        while (p < end && name_lower[*p])
            p++;
    return p;
}

/* The code point of the UTF-8 character at p (the text is valid UTF-8), its length
 * in *len. */
static inline unsigned utf8_char(const unsigned char *p, const unsigned char *end, size_t *len)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if ((size_t)(end - p) < n) n = 1; /* cannot happen in valid UTF-8 */
    if (n == 2) c &= 0x1F;
    if (n == 3) c &= 0x0F;
    if (n == 4) c &= 0x07;
    for (size_t i = 1; i < n; i++)
        c = c << 6 | (p[i] & 0x3Fu);
    *len = n;
    return c;
}

/* htmlParseNameComplex: an XML name read with libxml2's Unicode tables. */
static const unsigned char *xml_name_complex(const unsigned char *p, const unsigned char *end)
{
    size_t l;
    unsigned c = utf8_char(p, end, &l);
    if (!IS_LETTER(c) && c != '_' && c != ':') return p;
    for (p += l; p < end; p += l) {
        c = utf8_char(p, end, &l);
        if (!IS_LETTER(c) && !IS_DIGIT(c) && c != '.' && c != '-' && c != '_' && c != ':' &&
            !IS_COMBINING(c) && !IS_EXTENDER(c))
            break;
    }
    return p;
}

/* htmlParseName, for entity names, processing instruction targets and DOCTYPE names:
 * the end of the name at p, or p when there is none (libxml2 finds none when an ASCII
 * name runs to the end of the text too). */
static const unsigned char *xml_name(const unsigned char *p, const unsigned char *end)
{
    if (p >= end) return p;
    if (*p < 0x80) {
        if (!is(*p, C_XSTART)) return p;
        const unsigned char *q = p + 1;
        while (q < end && is(*q, C_NAME))
            q++;
        if (q == end) return p;
        if (*q < 0x80) return q;
    }
    return xml_name_complex(p, end); /* it starts over, and reads on past ASCII */
}

static int is_xml_char(unsigned c)
{
    if (c < 0x20) return c == 0x9 || c == 0xA || c == 0xD;
    return c <= 0xD7FF || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* htmlParseCharRef at "&#": *value is the character, 0 when libxml2 finds none (not an
 * XML character, or no digits); returns the end of the reference. */
static const unsigned char *char_ref(const unsigned char *p, const unsigned char *end,
                                     unsigned *value)
{
    unsigned val = 0;
    p += 2;
    if (p < end && (*p == 'x' || *p == 'X')) {
        for (p++; p < end && *p != ';'; p++) {
            int d = hex_digit(*p);
            if (d < 0) break;
            if (val < 0x110000) val = val * 16 + (unsigned)d;
        }
    } else {
        for (; p < end && *p != ';'; p++) {
            if (*p < '0' || *p > '9') break;
            if (val < 0x110000) val = val * 10 + (unsigned)(*p - '0');
        }
    }
    if (p < end && *p == ';') p++;
    *value = is_xml_char(val) ? val : 0;
    return p;
}

/* htmlParseEntityRef just after a '&' (not "&#"): appends to out what libxml2 makes of
 * it (the character of a known name followed by ';', else '&' and the name, the ';'
 * left as text) and returns where the text goes on. */
static const unsigned char *entity_ref(const unsigned char *p, const unsigned char *end,
                                       struct buf *out, int *failed)
{
    const unsigned char *q = xml_name(p, end);
    const htmlEntityDesc *ent = NULL;
    if (q > p && q < end && *q == ';' && q - p < 32) {
        char name[32];
        memcpy(name, p, (size_t)(q - p));
        name[q - p] = 0;
        ent = htmlEntityLookup((const xmlChar *)name);
    }
    if (ent && ent->value > 0) {
        if (add_utf8(out, ent->value) != 0) *failed = 1;
        return q + 1;
    }
    if (buf_append(out, "&", 1) != 0 || buf_append(out, p, (size_t)(q - p)) != 0) *failed = 1;
    return q;
}

/* ---- comments, processing instructions, DOCTYPE ---- */

/* htmlParseComment at "<!--": the end of the comment, the end of the text when it is
 * never closed. */
static const unsigned char *comment(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *s = p + 4, *q = s + 2;
    if (end - s < 3) return end; /* no room for "-->" */
    while (q < end && (q = memchr(q, '>', (size_t)(end - q)))) {
        if (q[-1] == '-' && q[-2] == '-') return q + 1;
        if (q - 3 >= s && q[-1] == '!' && q[-2] == '-' && q[-3] == '-') return q + 1;
        q++;
    }
    return end;
}

/* htmlParsePI at "<?". */
static const unsigned char *pi(const unsigned char *p, const unsigned char *end)
{
    p += 2;
    const unsigned char *q = xml_name(p, end);
    if (q == p) return p; /* no target: "<?" is dropped, the rest is text */
    if (q < end && *q == '>') return q + 1;
    q = memchr(q, '>', (size_t)(end - q));
    return q ? q + 1 : end;
}

static int at_ci(const unsigned char *p, const unsigned char *end, const char *upper)
{
    size_t n = strlen(upper);
    if ((size_t)(end - p) < n) return 0;
    for (size_t i = 0; i < n; i++)
        if ((p[i] >= 'a' && p[i] <= 'z' ? p[i] - 32 : p[i]) != upper[i]) return 0;
    return 1;
}

/* A system or public literal of a DOCTYPE (htmlParseSystemLiteral and
 * htmlParsePubidLiteral skip the same way). */
static const unsigned char *literal(const unsigned char *p, const unsigned char *end)
{
    if (p >= end || (*p != '"' && *p != '\'')) return p;
    const unsigned char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
    return q ? q + 1 : end;
}

/* htmlParseDocTypeDecl at "<!DOCTYPE". */
static const unsigned char *doctype(const unsigned char *p, const unsigned char *end)
{
    p = skip_blanks(p + 9, end);
    p = skip_blanks(xml_name(p, end), end);
    if (at_ci(p, end, "SYSTEM")) {
        p = literal(skip_blanks(p + 6, end), end);
    } else if (at_ci(p, end, "PUBLIC")) {
        p = skip_blanks(literal(skip_blanks(p + 6, end), end), end);
        p = literal(p, end);
    }
    p = skip_blanks(p, end);
    if (p < end && *p != '>') {
        p = memchr(p, '>', (size_t)(end - p));
        if (!p) return end;
    }
    return p < end ? p + 1 : end;
}

/* ---- tags ---- */

/* Whether a start tag of this name (and name_bit) is reported. */
static int reported(const struct scanner *sc, const char *name, unsigned bit)
{
    if (!bit_has(sc->wanted, bit)) return 0;
    for (const char *const *t = sc->tags; *t; t++)
        if ((*t)[0] == name[0] && html_name_eq(*t, name)) return 1;
    return 0;
}

static int has_attr(const struct scanner *sc, const char *name)
{
    for (size_t i = 0; i < sc->natts; i += 2)
        if (html_name_eq(sc->atts[i], name)) return 1;
    return 0;
}

/* Add a name or value to atts, leaving room for the two NULLs that end them. */
static inline int push_att(struct scanner *sc, const char *s)
{
    if (sc->natts + 2 >= sc->capatts) {
        size_t cap = sc->capatts ? sc->capatts * 2 : 16;
        const char **v = realloc(sc->atts, cap * sizeof(*v));
        if (!v) return -1;
        sc->atts = v;
        sc->capatts = cap;
    }
    sc->atts[sc->natts++] = s;
    return 0;
}

/* Whether n more bytes fit in attrs without growing them; when not, the scan gives
 * up (UNSURE) rather than move what it handed out. */
static int room(struct scanner *sc, size_t n)
{
    if (sc->attrs.cap - sc->attrs.n >= n) return 1;
    sc->rc = UNSURE;
    return 0;
}

/* The first byte at p that is a or b, or end: 16 bytes at a time inline, without
 * memchr's call (attribute values are short: a call and a second pass for the '&'
 * cost more than the value). */
static inline const unsigned char *find2(const unsigned char *p, const unsigned char *end,
                                         unsigned char a, unsigned char b)
{
#ifdef __SSE2__
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
        if (m) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    while (p < end && *p != a && *p != b)
        p++;
    return p;
}

/* htmlParseAttValue at p (after '=' and blanks); the value is appended to sc->attrs,
 * with its NUL, when kept (the caller made room for it: a value decoded is no longer
 * than the text it is read from). */
static const unsigned char *att_value(struct scanner *sc, const unsigned char *p, int keep)
{
    const unsigned char *end = sc->end;
    unsigned char stop = 0;
    if (p < end && (*p == '"' || *p == '\'')) stop = *p++;
    const unsigned char *run = p;
    if (stop) { /* references never hide the quote */
        if (!keep) {
            const unsigned char *q = find(p, end, stop);
            return q ? q + 1 : end;
        }
        p = find2(p, end, stop, '&');
        if (p == end || *p == stop) { /* nothing to decode: the value as it is */
            size_t n = (size_t)(p - run);
            memcpy(sc->attrs.p + sc->attrs.n, run, n); /* room was made */
            sc->attrs.p[sc->attrs.n + n] = '\0';
            sc->attrs.n += n + 1;
            return p < end ? p + 1 : end;
        }
    }
    int cut = !keep; /* nothing more is kept: a reference gave NUL */
    while (p < end) {
        unsigned char c = *p;
        if (stop ? c == stop : c == '>' || is(c, C_BLANK)) break;
        if (c != '&' || cut) {
            p++;
            continue;
        }
        if (buf_append(&sc->attrs, run, (size_t)(p - run)) != 0) goto fail;
        if (p + 1 < end && p[1] == '#') {
            unsigned v;
            p = char_ref(p, end, &v);
            if (!v)
                cut = 1;
            else if (add_utf8(&sc->attrs, v) != 0)
                goto fail;
        } else {
            int failed = 0;
            p = entity_ref(p + 1, end, &sc->attrs, &failed);
            if (failed) goto fail;
        }
        run = p;
    }
    if (keep && !cut && buf_append(&sc->attrs, run, (size_t)(p - run)) != 0) goto fail;
    if (keep && buf_append(&sc->attrs, "", 0) != 0) goto fail;
    if (keep) sc->attrs.n++; /* its NUL */
    if (stop && p < end) p++;
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

static int at_tag_end(const unsigned char *p, const unsigned char *end)
{
    return *p == '>' || (*p == '/' && p + 1 < end && p[1] == '>');
}

/* Skip what is not a name, up to a blank or the end of the tag. */
static const unsigned char *skip_junk(const unsigned char *p, const unsigned char *end)
{
    while (p < end && !is(*p, C_BLANK) && !at_tag_end(p, end))
        p++;
    return p;
}

/* The attributes of a start tag that is not reported, from p: read past. */
static const unsigned char *skip_attrs(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    while (p < end && !at_tag_end(p, end)) {
        const unsigned char *q = skip_name(p, end);
        if (q == p) { /* not a name: skipped up to a blank */
            p = skip_junk(p, end);
        } else {
            p = skip_blanks(q, end);
            if (p < end && *p == '=') p = att_value(sc, skip_blanks(p + 1, end), 0);
        }
        p = skip_blanks(p, end);
    }
    return p;
}

/* The attributes of a start tag that is reported, from p: kept in attrs, the first
 * of a name winning, and listed in atts. */
static const unsigned char *keep_attrs(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    sc->natts = 0;
    /* What a tag keeps is at most twice its text (a name and its NUL, a value and
     * its NUL, each from one byte at least); html_scan_tags reserved twice all of
     * it, so this holds: a guard. */
    if (!room(sc, 2 * (size_t)(end - p) + 2)) return p;
    while (p < end && !at_tag_end(p, end)) {
        char *an = sc->attrs.p + sc->attrs.n; /* the name is read in place */
        size_t al;
        const unsigned char *q = html_name(p, end, an, &al);
        if (al == 0) {
            p = skip_junk(p, end);
        } else {
            int k = !has_attr(sc, an);
            if (k) {
                if (push_att(sc, an) != 0) goto fail;
                sc->attrs.n += al + 1;
            }
            p = skip_blanks(q, end);
            if (p < end && *p == '=') {
                if (k && push_att(sc, sc->attrs.p + sc->attrs.n) != 0) goto fail;
                p = att_value(sc, skip_blanks(p + 1, end), k);
                if (sc->rc) return p;
            } else if (k && push_att(sc, NULL) != 0) {
                goto fail;
            }
        }
        p = skip_blanks(p, end);
    }
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

/* Call the callback with the attributes kept. */
static int report(struct scanner *sc, const char *name)
{
    if (!sc->natts) return sc->tag(sc->arg, name, NULL) != 0 ? -1 : 0;
    sc->atts[sc->natts] = sc->atts[sc->natts + 1] = NULL; /* push_att left room */
    return sc->tag(sc->arg, name, sc->atts) != 0 ? -1 : 0;
}

/* Which element holds raw text once its start tag is read. */
enum raw { RAW_NONE, RAW_SCRIPT, RAW_STYLE };

/* start_tag for a tag that may be reported, or be a <title>, <script> or <style>:
 * the name from p + 1 to q (of that hash) is copied. Apart, so that the common case
 * stays small. */
static __attribute__((noinline)) const unsigned char *named_start_tag(struct scanner *sc,
                                                                      const unsigned char *p,
                                                                      const unsigned char *q,
                                                                      unsigned h, enum raw *raw)
{
    const unsigned char *end = sc->end;
    char name[HTML_NAME_MAX + 1];
    size_t nl = (size_t)(q - p - 1);
    for (size_t i = 0; i < nl; i++)
        name[i] = (char)name_lower[p[1 + i]];
    name[nl] = 0;
    p = q;
    int keep = reported(sc, name, h & 255);
    p = skip_blanks(p, end);
    p = keep ? keep_attrs(sc, p) : skip_attrs(sc, p);
    if (sc->rc) return p;
    int open = 0; /* ended by '>' (not "/>", not the end of the text) */
    if (p < end) {
        open = *p == '>';
        p += open ? 1 : 2;
    }
    if (keep && report(sc, name) != 0) goto fail;
    if (sc->title_state == T_NONE && nl == 5 && memcmp(name, "title", 5) == 0) {
        if (buf_append(&sc->title, "", 0) != 0) goto fail;
        sc->title_state = open ? T_IN : T_DONE;
    }
    if (open && name[0] == 's') {
        if (nl == 6 && memcmp(name, "script", 6) == 0) *raw = RAW_SCRIPT;
        if (nl == 5 && memcmp(name, "style", 5) == 0) *raw = RAW_STYLE;
    }
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

/* The rest of an end tag after its name: htmlParseEndTag skips to the first '>'. */
static inline const unsigned char *end_of_end_tag(const unsigned char *p, const unsigned char *end)
{
    p = skip_blanks(p, end);
    if (p < end && *p != '>') {
        p = memchr(p, '>', (size_t)(end - p));
        if (!p) return end;
    }
    return p < end ? p + 1 : end;
}

/* htmlParseEndTag at "</". */
static const unsigned char *end_tag(struct scanner *sc, const unsigned char *p)
{
    char name[HTML_NAME_MAX + 1];
    size_t nl;
    if (sc->title_state != T_IN) {
        const unsigned char *q = skip_name(p + 2, sc->end);
        return q == p + 2 ? q : end_of_end_tag(q, sc->end); /* no name: "</" is dropped */
    }
    const unsigned char *q = html_name(p + 2, sc->end, name, &nl);
    if (nl == 0) return p + 2;
    if (strcmp(name, "title") == 0)
        sc->title_state = T_DONE;
    else if (maybe_open(sc, name)) { /* inside the title: it may close it, or not */
        sc->rc = UNSURE;
        return p;
    }
    return end_of_end_tag(q, sc->end);
}

/* The text of a <script> or <style> from p: htmlParseContentInternal with that
 * element current, which hands the text to htmlParseScript. Returns where markup
 * starts again. */
static __attribute__((noinline)) const unsigned char *raw_text(struct scanner *sc,
                                                               const unsigned char *p, enum raw raw)
{
    const unsigned char *end = sc->end;
    const char *elem = raw == RAW_SCRIPT ? "script" : "style";
    size_t el = strlen(elem);
    char name[HTML_NAME_MAX + 1];
    size_t nl;
    for (;;) {
        if (p >= end) return end;
        /* What the content loop looks at before it hands the text over. */
        if (p[0] == '<' && p + 1 < end && p[1] == '/') {
            const unsigned char *q = html_name(p + 2, end, name, &nl);
            if (nl == 0) { /* "</" dropped */
                p += 2;
                continue;
            }
            if (strcmp(name, elem) == 0) return end_of_end_tag(q, end);
            if (maybe_open(sc, name)) { /* it may close elements around this one */
                sc->rc = UNSURE;
                return p;
            }
            p = end_of_end_tag(q, end); /* ignored */
            continue;
        }
        if (p[0] == '<' && p + 1 < end && (is(p[1], C_LETTER) || p[1] == '_' || p[1] == ':')) {
            /* A start tag that closes the element (htmlCheckAutoClose, with the name
             * read as htmlParseHTMLName_nonInvasive does: no '.'). */
            char nm[HTML_NAME_MAX + 1];
            size_t n = 0;
            const unsigned char *q = p + 1;
            while (n < HTML_NAME_MAX && q < end && is(*q, C_NAME) && *q != '.') {
                nm[n++] = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
                q++;
            }
            nm[n] = 0;
            if (raw == RAW_SCRIPT ? strcmp(nm, "noscript") == 0
                                  : strcmp(nm, "body") == 0 || strcmp(nm, "frameset") == 0)
                return p;
        }
        /* htmlParseScript: up to "</" and the element's name, in any case. */
        const unsigned char *q = p;
        for (;;) {
            q = memchr(q, '<', (size_t)(end - q));
            if (!q) return end;
            if (q + 1 < end && q[1] == '/' && (size_t)(end - q - 2) >= el &&
                strncasecmp((const char *)q + 2, elem, el) == 0)
                break;
            q++;
        }
        p = q;
        q = html_name(p + 2, end, name, &nl);
        if (strcmp(name, elem) == 0) return end_of_end_tag(q, end);
        if (maybe_open(sc, name)) { /* "</scripts>": it may close elements */
            sc->rc = UNSURE;
            return p;
        }
        p = end_of_end_tag(q, end); /* ignored */
    }
}

/* The first title's text from p up to the next '<': htmlParseCharData (which drops
 * what is not an XML character) and htmlParseReference. */
static const unsigned char *title_text(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end, *run = p;
    while (p < end && *p != '<') {
        unsigned char c = *p;
        if (c != '&' && !is(c, C_DROPPED) &&
            !(c == 0xEF && end - p >= 3 && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF))) {
            p++;
            continue;
        }
        if (buf_append(&sc->title, run, (size_t)(p - run)) != 0) goto fail;
        if (c != '&') { /* dropped: a C0 control, U+FFFE or U+FFFF */
            p += c == 0xEF ? 3 : 1;
        } else if (p + 1 < end && p[1] == '#') {
            unsigned v;
            p = char_ref(p, end, &v);
            if (v && add_utf8(&sc->title, v) != 0) goto fail;
        } else {
            int failed = 0;
            p = entity_ref(p + 1, end, &sc->title, &failed);
            if (failed) goto fail;
        }
        run = p;
    }
    if (buf_append(&sc->title, run, (size_t)(p - run)) != 0) goto fail;
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

static int at_doctype(const unsigned char *p, const unsigned char *end)
{
    return end - p >= 9 && p[0] == '<' && p[1] == '!' && at_ci(p + 2, end, "DOCTYPE");
}

static int at_comment(const unsigned char *p, const unsigned char *end)
{
    return end - p >= 4 && p[0] == '<' && p[1] == '!' && p[2] == '-' && p[3] == '-';
}

/* A start tag that may be reported, or be a <title>, <script> or <style>, and the
 * raw text after it when it opened a <script> or <style>. */
static __attribute__((noinline)) const unsigned char *
named_element(struct scanner *sc, const unsigned char *p, const unsigned char *q, unsigned h)
{
    enum raw raw = RAW_NONE;
    p = named_start_tag(sc, p, q, h, &raw);
    if (!sc->rc && raw != RAW_NONE) p = raw_text(sc, p, raw);
    return p;
}

/* The attributes of a start tag neither reported nor special, from q (after its
 * name), and its end. */
static __attribute__((noinline)) const unsigned char *tag_rest(struct scanner *sc,
                                                               const unsigned char *q)
{
    const unsigned char *end = sc->end;
    q = skip_attrs(sc, skip_blanks(q, end));
    if (q < end) q += *q == '>' ? 1 : 2; /* '>' or "/>" */
    return q;
}

/* htmlParseStartTag at '<' and a letter, and the raw text after it when it opened a
 * <script> or <style>. Most tags are neither reported nor special: their name is
 * only hashed, and their attributes skipped; inline, and without a call for a tag
 * without attributes. */
static inline const unsigned char *element(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    if (sc->title_state == T_IN) { /* an element inside the title: libxml2's tree decides */
        sc->rc = UNSURE;
        return p;
    }
    unsigned h;
    const unsigned char *q = name_at(p + 1, end, &h);
    bit_add(sc->opened, h & 255);
    if (bit_has(sc->wanted, h & 255) || h == sc->special[0] || h == sc->special[1] ||
        h == sc->special[2])
        return named_element(sc, p, q, h);
    if (q < end && *q == '>') return q + 1;
    return tag_rest(sc, q);
}

/* htmlParseContentInternal from p to the end of the text. */
static void content(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    while (!sc->rc) {
        if (sc->title_state == T_IN) {
            p = title_text(sc, p);
            if (sc->rc) return;
        } else if (p < end && *p != '<') {
            if (p + 1 < end && p[1] == '<') /* a tag on the next line: skip the call */
                p++;
            else
                p = find(p, end, '<');
        }
        if (!p || p >= end) return;
        unsigned char c1 = p + 1 < end ? p[1] : 0;
        if (c1 == '/') {
            p = end_tag(sc, p);
        } else if (is(c1, C_LETTER)) {
            p = element(sc, p);
        } else if (at_doctype(p, end)) {
            if (sc->title_state == T_IN) {
                sc->rc = UNSURE;
                return;
            }
            p = doctype(p, end);
            /* The same turn of libxml2's loop goes on without looking for an end tag
             * (or another DOCTYPE): a '<' that starts no comment, processing
             * instruction or start tag is text. */
            if (p < end && *p == '<') {
                c1 = p + 1 < end ? p[1] : 0;
                if (at_comment(p, end))
                    p = comment(p, end);
                else if (c1 == '?')
                    p = pi(p, end);
                else if (is(c1, C_LETTER))
                    p = element(sc, p);
                else
                    p++;
            }
        } else if (at_comment(p, end)) {
            p = comment(p, end);
        } else if (c1 == '?') {
            p = pi(p, end);
        } else {
            if (sc->title_state == T_IN && buf_append(&sc->title, "<", 1) != 0) sc->rc = FAILED;
            p++;
        }
    }
}

/* The comments and processing instructions htmlParseDocument reads before content. */
static const unsigned char *misc(const unsigned char *p, const unsigned char *end)
{
    p = skip_blanks(p, end);
    while (at_comment(p, end) || (end - p >= 2 && p[0] == '<' && p[1] == '?')) {
        if (at_comment(p, end)) p = comment(p, end);
        if (end - p >= 2 && p[0] == '<' && p[1] == '?') p = pi(p, end);
        p = skip_blanks(p, end);
    }
    return p;
}

int html_scan_tags(const char *text, size_t len, const char *const *tags, html_tag_fn tag,
                   void *arg, char **title, struct buf *kept)
{
    static const unsigned char bom[] = {0xEF, 0xBB, 0xBF};
    if (title) *title = NULL;
    struct scanner sc = {
        .end = (const unsigned char *)text + len, .tags = tags, .tag = tag, .arg = arg};
    /* What the reported tags keep is at most twice the text they are read from. */
    if (len > (SIZE_MAX - 256) / 2 || buf_reserve(kept, 2 * len + 256) != 0) return FAILED;
    sc.attrs = *kept;
    static const char *const implied[] = {"html", "head", "body", "p"};
    for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]); i++)
        bit_add(sc.opened, name_bit(implied[i]));
    for (const char *const *t = tags; *t; t++)
        bit_add(sc.wanted, name_bit(*t));
    sc.special[0] = name_hash("title");
    sc.special[1] = name_hash("script");
    sc.special[2] = name_hash("style");
    const unsigned char *p = (const unsigned char *)text, *end = sc.end;
    /* Switching the context to UTF-8 skips a byte order mark, and the check of the
     * first four bytes in htmlParseDocument another. */
    if (end - p >= 3 && memcmp(p, bom, 3) == 0) p += 3;
    if (end - p >= 4 && memcmp(p, bom, 3) == 0) p += 3;
    p = misc(p, end);
    if (at_doctype(p, end)) p = misc(doctype(p, end), end);
    content(&sc, p);
    *kept = sc.attrs;
    free(sc.atts);
    if (sc.rc == DONE && title) {
        *title = sc.title.p; /* NULL without a <title> */
        sc.title.p = NULL;
    }
    free(sc.title.p);
    return sc.rc;
}
