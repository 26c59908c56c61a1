/* url_chars.h: the byte classes, scheme and IPv4 tests that url.c (curl's paths) and
 * url_fast.c (the paths without curl) share. All static inline, so each path keeps
 * them inline as when they were one file; no other module includes this. */
#ifndef LUACRAWL_URL_CHARS_H
#define LUACRAWL_URL_CHARS_H

#include "ascii.h"

#include <stddef.h>
#include <stdint.h>

/* Character classes (ASCII only, independent of the locale). */
static inline int is_alpha(unsigned c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static inline int is_digit(unsigned c)
{
    return c >= '0' && c <= '9';
}

/* Bitmaps of 256 bits, one per byte value (built by a script from the sets named). */
static inline int in_set(const uint32_t *set, unsigned c)
{
    return (int)(set[c >> 5] >> (c & 31) & 1);
}

/* ALPHA DIGIT - . _ ~ */
static const uint32_t UNRESERVED[8] = {0, 0x03ff6000, 0x87fffffe, 0x47fffffe, 0, 0, 0, 0};

static inline int is_unreserved(unsigned c)
{
    return in_set(UNRESERVED, c);
}

static inline int ascii_caseeq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): see clean() in url.c */
        if (ascii_lower((unsigned char)a[i]) != ascii_lower((unsigned char)b[i])) return 0;
    return 1;
}

/* Length of the RFC 3986 scheme that starts s, without its ':' (0 if none):
 * ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":". */
static inline size_t scheme_len(const char *s, size_t n)
{
    if (n == 0 || !is_alpha((unsigned char)s[0])) return 0;
    for (size_t i = 1; i < n; i++) {
        /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): see clean() in url.c */
        unsigned c = (unsigned char)s[i];
        if (c == ':') return i;
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return 0;
    }
    return 0;
}

/* Whether h (n bytes, of digits, letters, '-' and '.') is an IPv4 address in the
 * dotted-decimal form curl renders: four numbers 0..255 without leading zeros. */
static inline int dotted_quad(const char *h, size_t n)
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part && (i == n || h[i++] != '.')) return 0;
        size_t start = i;
        unsigned v = 0;
        while (i < n && i - start < 4 && is_digit((unsigned char)h[i]))
            v = v * 10 + (unsigned)(h[i++] - '0');
        size_t len = i - start;
        if (len == 0 || len > 3 || v > 255 || (len > 1 && h[start] == '0')) return 0;
    }
    return i == n;
}

/* http and https: the schemes browsers call special ('\' is '/', the authority
 * may not be empty). Other special schemes (ftp, ws) are not crawled. */
static inline int is_special(const char *scheme, size_t n)
{
    return (n == 4 && ascii_caseeq(scheme, "http", 4)) ||
           (n == 5 && ascii_caseeq(scheme, "https", 5));
}

/* Upper-case hex digits, as percent-escapes are written. */
static const char HEX[] __attribute__((unused)) = "0123456789ABCDEF";

/* Bytes RFC 3986 allows nowhere outside the authority: controls, space, non-ASCII
 * and " < > \ ^ ` { | }. ('[' and ']' stay: PHP-style "a[]=1" queries are common
 * and every server takes them raw.) */
static const uint32_t FORBIDDEN[8] = {0xffffffff, 0x50000005, 0x50000000, 0xb8000001,
                                      0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};

static inline int must_encode(unsigned c)
{
    return in_set(FORBIDDEN, c);
}

static inline int hexval(unsigned c)
{
    if (is_digit(c)) return (int)(c - '0');
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
    return -1;
}

/* Whether a path segment (s, len bytes) is "." (1) or ".." (2), a '.' also spelled
 * "%2e" as the standard reads it; else 0. */
static inline int dot_segment_kind(const char *s, size_t len)
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

#endif
