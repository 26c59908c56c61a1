/* html_scan_internal.h: what the fast link scan's two files share (html_scan.c, the
 * tags; html_scan_markup.c, the rarer markup: references, comments, processing
 * instructions, DOCTYPE). Not for other callers. */
#ifndef LUACRAWL_HTML_SCAN_INTERNAL_H
#define LUACRAWL_HTML_SCAN_INTERNAL_H

#include <stddef.h>

struct buf;

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

static inline int is(unsigned char c, unsigned k)
{
    return (cls[c] & k) != 0;
}

/* The end of the blanks at p. */
static inline const unsigned char *skip_blanks(const unsigned char *p, const unsigned char *end)
{
    while (p < end && is(*p, C_BLANK))
        p++;
    return p;
}

/* htmlParseName, for entity names, processing instruction targets and DOCTYPE names:
 * the end of the name at p, or p when there is none. */
const unsigned char *scan_xml_name(const unsigned char *p, const unsigned char *end);

/* htmlParseCharRef at "&#": *value is the character, 0 when libxml2 finds none;
 * returns the end of the reference. */
const unsigned char *scan_char_ref(const unsigned char *p, const unsigned char *end,
                                   unsigned *value);

/* htmlParseEntityRef just after a '&' (not "&#"): appends to out what libxml2 makes of
 * it and returns where the text goes on; *failed set when out of memory. */
const unsigned char *scan_entity_ref(const unsigned char *p, const unsigned char *end,
                                     struct buf *out, int *failed);

/* A code point appended to b as UTF-8: 0, or -1 when out of memory. */
int scan_add_utf8(struct buf *b, unsigned c);

/* htmlParseComment at "<!--", htmlParsePI at "<?", htmlParseDocTypeDecl at
 * "<!DOCTYPE": where the text goes on. */
const unsigned char *scan_comment(const unsigned char *p, const unsigned char *end);
const unsigned char *scan_pi(const unsigned char *p, const unsigned char *end);
const unsigned char *scan_doctype(const unsigned char *p, const unsigned char *end);

/* Whether the text at p starts with upper (upper case, ASCII), in any case. */
int scan_at_ci(const unsigned char *p, const unsigned char *end, const char *upper);

#endif
