/* json.c: the JSON writer (json.h). */
#include "json.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What a byte becomes in a string: 0 for itself, else its escape's second
 * character ('u' for \u00XX). The bytes from 0x80 stay as they are. */
/* clang-format off */
static const char ESCAPE[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u', /* 0x00 */
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', /* 0x10 */
      0,   0, '"',   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0, '/', /* 0x20 */
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0, /* 0x30 */
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0, /* 0x40 */
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,'\\',   0,   0,   0, /* 0x50 */
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0, /* 0x60 */
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0, 'u', /* 0x70 */
};
/* clang-format on */

int json_put_string(json_buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* The worst case, every byte a \u00XX, reserved once. */
    if (n > (SIZE_MAX - 2) / 6 || buf_reserve(b, 6 * n + 2) != 0) return -1;
    char *w = b->p + b->n;
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e = ESCAPE[c];
        if (!e) {
            *w++ = (char)c;
            continue;
        }
        *w++ = '\\';
        *w++ = e;
        if (e == 'u') {
            *w++ = '0';
            *w++ = '0';
            *w++ = hex[c >> 4];
            *w++ = hex[c & 15];
        }
    }
    *w++ = '"';
    b->n = (size_t)(w - b->p);
    return 0;
}

/* The digits of u, ending at e; returns where they start. */
static char *put_digits(char *e, uint64_t u)
{
    do {
        *--e = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return e;
}

/* If v is k / 10^6 for a whole k of at most 14 digits, and at least 1e-4 (times
 * seconds measured in microseconds, as most are), what "%.14g" gives for it,
 * ending at e: those digits with the trailing zeros of the fraction dropped (the
 * double nearest k / 10^6 is closer to it than to any other 14-digit number, and
 * %g writes a number of 1e-4 or more with an exponent under 14 without one).
 * NULL for any other v. */
static char *put_micros(char *e, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 1e8)) return NULL;
    uint64_t k = (uint64_t)llround(a * 1e6);
    if ((double)k / 1e6 != a) return NULL;
    uint64_t frac = k % 1000000;
    char *p = e;
    if (frac) {
        int digits = 6;
        while (frac % 10 == 0) {
            frac /= 10;
            digits--;
        }
        for (; digits > 0; digits--) {
            *--p = (char)('0' + frac % 10);
            frac /= 10;
        }
        *--p = '.';
    }
    p = put_digits(p, k / 1000000);
    if (v < 0) *--p = '-';
    return p;
}

int json_put_number(json_buf_t *b, double v)
{
    char tmp[40], *e = tmp + sizeof(tmp), *p;
    int len;
    if (!isfinite(v)) return -2;
    if (v == floor(v) && fabs(v) < 1e14 && !(v == 0 && signbit(v))) {
        /* An integer of at most 14 digits: what "%.14g" gives, without printf. */
        p = put_digits(e, (uint64_t)fabs(v));
        if (v < 0) *--p = '-';
        return buf_append(b, p, (size_t)(e - p));
    }
    if ((p = put_micros(e, v))) return buf_append(b, p, (size_t)(e - p));
    len = snprintf(tmp, sizeof(tmp), "%.14g", v);
    if (len < 0 || (size_t)len >= sizeof(tmp)) return -1;
    const char *point = localeconv()->decimal_point;
    if (point && point[0] && point[0] != '.' && !point[1]) {
        char *p = memchr(tmp, point[0], (size_t)len);
        if (p) *p = '.';
    }
    return buf_append(b, tmp, (size_t)len);
}
