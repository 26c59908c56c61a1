/* utf8.h: a code point written as UTF-8, for the JSON reader's escapes (json.c) and
 * the HTML scan's character references (html_scan.c). Inline: both write one for
 * every escape they decode. */
#ifndef LUACRAWL_UTF8_H
#define LUACRAWL_UTF8_H

/* Write cp (at most 0x10FFFF; callers check) at w, 1 to 4 bytes; returns the end. */
static inline char *utf8_put(char *w, unsigned long cp)
{
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xC0 | cp >> 6);
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xE0 | cp >> 12);
        *w++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *w++ = (char)(0xF0 | cp >> 18);
        *w++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *w++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    }
    return w;
}

#endif
