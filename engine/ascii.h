/* ascii.h: the ASCII tests and trims several core files need, written once. Locale-
 * independent (unlike ctype.h's) and inline: the URL and HTML paths call them per byte. */
#ifndef LUACRAWL_ASCII_H
#define LUACRAWL_ASCII_H

#include <stddef.h>

/* ASCII lower case; any other byte as it is. */
static inline int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* HTML's ASCII whitespace: space, tab, LF, FF, CR. */
static inline int ascii_is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* A header field's value as a line gives it (HTTP's, a WARC record's): spaces and
 * tabs off its start, and spaces, tabs, CR and LF off its end. */
static inline void ascii_trim_field(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r' ||
                  (*s)[*n - 1] == '\n'))
        (*n)--;
}

/* Spaces and tabs (RFC 6265's WSP) off both ends. */
static inline void ascii_trim_wsp(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

#endif
