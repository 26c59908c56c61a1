/* html_scan_markup.c: the rarer markup of the fast link scan (html_scan.c), read as
 * libxml2 2.9's HTML parser reads it: character and entity references, names read
 * with libxml2's Unicode tables, comments, processing instructions and DOCTYPE. Apart
 * from the tags, which the scan spends its time on. */
#include "buf.h"
#include "html_scan_internal.h"
#include "utf8.h"

#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <string.h>

int scan_add_utf8(struct buf *b, unsigned c)
{
    char u[4];
    return buf_append(b, u, (size_t)(utf8_put(u, c) - u));
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
const unsigned char *scan_xml_name(const unsigned char *p, const unsigned char *end)
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
const unsigned char *scan_char_ref(const unsigned char *p, const unsigned char *end,
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
const unsigned char *scan_entity_ref(const unsigned char *p, const unsigned char *end,
                                     struct buf *out, int *failed)
{
    const unsigned char *q = scan_xml_name(p, end);
    const htmlEntityDesc *ent = NULL;
    if (q > p && q < end && *q == ';' && q - p < 32) {
        char name[32];
        memcpy(name, p, (size_t)(q - p));
        name[q - p] = 0;
        ent = htmlEntityLookup((const xmlChar *)name);
    }
    if (ent && ent->value > 0) {
        if (scan_add_utf8(out, ent->value) != 0) *failed = 1;
        return q + 1;
    }
    if (buf_append(out, "&", 1) != 0 || buf_append(out, p, (size_t)(q - p)) != 0) *failed = 1;
    return q;
}

/* ---- comments, processing instructions, DOCTYPE ---- */

/* htmlParseComment at "<!--": the end of the comment, the end of the text when it is
 * never closed. */
const unsigned char *scan_comment(const unsigned char *p, const unsigned char *end)
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
const unsigned char *scan_pi(const unsigned char *p, const unsigned char *end)
{
    p += 2;
    const unsigned char *q = scan_xml_name(p, end);
    if (q == p) return p; /* no target: "<?" is dropped, the rest is text */
    if (q < end && *q == '>') return q + 1;
    q = memchr(q, '>', (size_t)(end - q));
    return q ? q + 1 : end;
}

int scan_at_ci(const unsigned char *p, const unsigned char *end, const char *upper)
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
const unsigned char *scan_doctype(const unsigned char *p, const unsigned char *end)
{
    p = skip_blanks(p + 9, end);
    p = skip_blanks(scan_xml_name(p, end), end);
    if (scan_at_ci(p, end, "SYSTEM")) {
        p = literal(skip_blanks(p + 6, end), end);
    } else if (scan_at_ci(p, end, "PUBLIC")) {
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
