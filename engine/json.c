/* json.c: the JSON writer (json.h). */
#include "json.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a byte becomes in a string: 0 for itself, else its escape's second
 * character ('u' for \u00XX). */
static char escape_of(unsigned char c)
{
    switch (c) {
    case '"':
        return '"';
    case '\\':
        return '\\';
    case '/':
        return '/';
    case '\b':
        return 'b';
    case '\f':
        return 'f';
    case '\n':
        return 'n';
    case '\r':
        return 'r';
    case '\t':
        return 't';
    default:
        return c < 0x20 || c == 0x7f ? 'u' : 0;
    }
}

int json_put_string(json_buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* The worst case, every byte a \u00XX, reserved once. */
    if (n > (SIZE_MAX - 2) / 6 || buf_reserve(b, 6 * n + 2) != 0) return -1;
    char *w = b->p + b->n;
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e = escape_of(c);
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

int json_put_number(json_buf_t *b, double v)
{
    char tmp[40];
    int len;
    if (!isfinite(v)) return -2;
    if (v == floor(v) && fabs(v) < 1e14 && !(v == 0 && signbit(v))) {
        /* An integer of at most 14 digits: what "%.14g" gives, without printf. */
        uint64_t u = (uint64_t)fabs(v);
        char *e = tmp + sizeof(tmp), *p = e;
        do {
            *--p = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0) *--p = '-';
        return buf_append(b, p, (size_t)(e - p));
    }
    len = snprintf(tmp, sizeof(tmp), "%.14g", v);
    if (len < 0 || (size_t)len >= sizeof(tmp)) return -1;
    const char *point = localeconv()->decimal_point;
    if (point && point[0] && point[0] != '.' && !point[1]) {
        char *p = memchr(tmp, point[0], (size_t)len);
        if (p) *p = '.';
    }
    return buf_append(b, tmp, (size_t)len);
}

void json_reset(json_buf_t *b, size_t keep)
{
    b->n = 0;
    if (b->cap > keep) {
        free(b->p);
        b->p = NULL;
        b->cap = 0;
    }
}
