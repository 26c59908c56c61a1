/* json.c: the JSON writer and the JSON reader (json.h). */
#include "json.h"
#include "utf8.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an ASCII byte becomes in a string: 0 for itself, else its escape's second
 * character ('u' for \u00XX). */
/* clang-format off */
static const char ESCAPE[128] = {
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

static const char HEX[] = "0123456789abcdef";

/* U+FFFD, the replacement character, at w. */
static char *put_replacement(char *w)
{
    *w++ = (char)0xEF;
    *w++ = (char)0xBF;
    *w++ = (char)0xBD;
    return w;
}

/* The UTF-8 sequence at p (p[0] is 0x80 or more), before e: the bytes it takes, and
 * *valid 1 when they are a well-formed character (the table of RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF). When they are not, the
 * bytes are its "maximal subpart" (Unicode 15, section 3.9, the practice WHATWG's
 * decoder follows): the lead byte and the continuation bytes that could still
 * begin a well-formed character, at least one byte; each such run is one U+FFFD. */
static size_t utf8_sequence(const unsigned char *p, const unsigned char *e, int *valid)
{
    unsigned c = p[0], lo = 0x80, hi = 0xBF;
    size_t n;
    *valid = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 1;
    }
    for (size_t i = 1; i < n; i++) {
        if (p + i >= e) return i;
        unsigned b = p[i];
        if (i == 1 ? b < lo || b > hi : (b & 0xC0) != 0x80) return i;
    }
    *valid = 1;
    return n;
}

static char *put_u_escape(char *w, unsigned cp)
{
    *w++ = '\\';
    *w++ = 'u';
    *w++ = HEX[cp >> 12 & 15];
    *w++ = HEX[cp >> 8 & 15];
    *w++ = HEX[cp >> 4 & 15];
    *w++ = HEX[cp & 15];
    return w;
}

int json_put_string(json_buf_t *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    /* The worst case, every byte a \u00XX (a character's every byte at most six
     * bytes of output, U+FFFD three for one), reserved once. */
    if (n > (SIZE_MAX - 2) / 6 || buf_reserve(b, 6 * n + 2) != 0) return -1;
    char *w = b->p + b->n;
    *w++ = '"';
    while (p < e) {
        unsigned c = *p;
        if (c < 0x80) {
            char x = ESCAPE[c];
            p++;
            if (!x) {
                *w++ = (char)c;
            } else if (x == 'u') {
                w = put_u_escape(w, c);
            } else {
                *w++ = '\\';
                *w++ = x;
            }
            continue;
        }
        int valid;
        size_t len = utf8_sequence(p, e, &valid);
        if (!valid) {
            w = put_replacement(w);
        } else if (c == 0xC2 && p[1] < 0xA0) {
            /* The C1 controls, U+0080..U+009F: a terminal may act on them. */
            w = put_u_escape(w, p[1]);
        } else if (c == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
            /* U+2028 and U+2029 end a line in JavaScript source and in some
             * line-oriented readers of JSON Lines. */
            w = put_u_escape(w, p[2] == 0xA8 ? 0x2028 : 0x2029);
        } else {
            memcpy(w, p, len);
            w += len;
        }
        p += len;
    }
    *w++ = '"';
    b->n = (size_t)(w - b->p);
    return 0;
}

/* What json_put_plain writes for byte c (a C0 control or DEL): its Control
 * Picture, U+2400 + c (U+2421 for DEL), three bytes. */
static char *put_picture(char *w, unsigned c)
{
    return utf8_put(w, c == 0x7F ? 0x2421 : 0x2400 + c);
}

/* Whether s needs json_put_plain's changes at all. */
static int plain_already(const unsigned char *p, const unsigned char *e, uint32_t keep)
{
    while (p < e) {
        unsigned c = *p;
        if (c >= 0x20 && c < 0x7F) {
            p++;
        } else if (c < 0x20) {
            if (!(keep >> c & 1)) return 0;
            p++;
        } else if (c == 0x7F) {
            return 0;
        } else {
            int valid;
            size_t len = utf8_sequence(p, e, &valid);
            if (!valid || (c == 0xC2 && p[1] < 0xA0)) return 0;
            p += len;
        }
    }
    return 1;
}

int json_put_plain(json_buf_t *b, const char *s, size_t n, uint32_t keep)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    if (plain_already(p, e, keep)) return buf_append(b, s, n);
    /* At most three bytes of output for a byte of input. */
    if (n > SIZE_MAX / 3 || buf_reserve(b, 3 * n) != 0) return -1;
    char *w = b->p + b->n;
    while (p < e) {
        unsigned c = *p;
        if (c < 0x80) {
            if ((c < 0x20 && !(keep >> c & 1)) || c == 0x7F) {
                w = put_picture(w, c);
            } else {
                *w++ = (char)c;
            }
            p++;
            continue;
        }
        int valid;
        size_t len = utf8_sequence(p, e, &valid);
        if (!valid || (c == 0xC2 && p[1] < 0xA0)) {
            w = put_replacement(w);
        } else {
            memcpy(w, p, len);
            w += len;
        }
        p += len;
    }
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

/* The reader. It walks the text once, by recursive descent (depth is bounded by
 * JSON_MAX_DEPTH), and checks everything RFC 8259 asks: the grammar, UTF-8 in
 * strings, escapes and surrogate pairs. */

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct reader {
    const char *s, *p, *e; /* the text, the position, the end */
    const json_reader_t *r;
    void *ud;
    json_buf_t *scratch;
    json_error_t *err;
} reader_t;

static int syntax(reader_t *d, const char *at, const char *why)
{
    d->err->offset = (size_t)(at - d->s);
    d->err->why = why;
    return -1;
}

static void skip_space(reader_t *d)
{
    while (d->p < d->e && (*d->p == ' ' || *d->p == '\n' || *d->p == '\r' || *d->p == '\t'))
        d->p++;
}

static int is_digit(const reader_t *d, const char *p)
{
    return p < d->e && *p >= '0' && *p <= '9';
}

/* The length of the well-formed UTF-8 sequence at p (its first byte 0x80 or more),
 * 0 when it is not one. */
static size_t utf8_length(const unsigned char *p, const unsigned char *e)
{
    int valid;
    size_t n = utf8_sequence(p, e, &valid);
    return valid ? n : 0;
}

/* The four hex digits at p, or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int x = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (x < 0) return -1;
        v = v * 16 + x;
    }
    return v;
}

/* The \u escape at p (its backslash), before end, written at *w; the bytes read. A
 * surrogate must come in a pair, high then low, each written as an escape. */
static int read_u_escape(reader_t *d, const char *p, const char *end, char **w)
{
    long hi = end - p >= 6 ? hex4(p + 2) : -1;
    if (hi < 0) return syntax(d, p, "invalid \\u escape (four hex digits expected)");
    if (hi >= 0xDC00 && hi <= 0xDFFF) return syntax(d, p, "lone low surrogate in \\u escape");
    if (hi < 0xD800 || hi > 0xDBFF) {
        *w = utf8_put(*w, (unsigned long)hi);
        return 6;
    }
    long lo = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ? hex4(p + 8) : -1;
    if (lo < 0xDC00 || lo > 0xDFFF)
        return syntax(d, p, "high surrogate in \\u escape without a low one after it");
    *w =
        utf8_put(*w, 0x10000 + (((unsigned long)hi - 0xD800) << 10) + ((unsigned long)lo - 0xDC00));
    return 12;
}

/* The escapes of the string between start and end (its closing quote) decoded into
 * the scratch buffer, which then holds the string. The text was checked for
 * control characters and UTF-8 already; a decoded string is never longer. */
static int unescape(reader_t *d, const char *start, const char *end)
{
    json_buf_t *b = d->scratch;
    b->n = 0;
    if (buf_reserve(b, (size_t)(end - start) + 1) != 0) return -2;
    char *w = b->p;
    for (const char *p = start; p < end;) {
        const char *esc = memchr(p, '\\', (size_t)(end - p));
        if (!esc) esc = end;
        memcpy(w, p, (size_t)(esc - p));
        w += esc - p;
        if (esc == end) break;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *k = memchr(from, esc[1], sizeof(from) - 1);
        if (k) {
            *w++ = to[k - from];
            p = esc + 2;
        } else if (esc[1] == 'u') {
            int rc = read_u_escape(d, esc, end, &w);
            if (rc < 0) return rc;
            p = esc + rc;
        } else {
            return syntax(d, esc, "invalid escape in string");
        }
    }
    b->n = (size_t)(w - b->p);
    return 0;
}

/* The string at d->p (its opening quote). One pass finds its end and checks its
 * bytes; a string without escapes is reported from the text itself. */
static int read_string(reader_t *d)
{
    const unsigned char *p = (const unsigned char *)d->p + 1, *e = (const unsigned char *)d->e;
    int escaped = 0;
    for (;;) {
        if (p >= e) return syntax(d, d->p, "unterminated string");
        unsigned c = *p;
        if (c == '"') break;
        if (c == '\\') {
            escaped = 1;
            p += 2;
        } else if (c < 0x20) {
            return syntax(d, (const char *)p, "control character in string (escape it)");
        } else if (c < 0x80) {
            p++;
        } else {
            size_t n = utf8_length(p, e);
            if (!n) return syntax(d, (const char *)p, "invalid UTF-8 in string");
            p += n;
        }
    }
    const char *start = d->p + 1, *end = (const char *)p;
    d->p = end + 1;
    if (!escaped) return d->r->string(d->ud, start, (size_t)(end - start));
    int rc = unescape(d, start, end);
    if (rc != 0) return rc;
    return d->r->string(d->ud, d->scratch->p, d->scratch->n);
}

/* The n bytes of a number (checked by read_number) as a double, with the locale's
 * decimal point for strtod. */
static int number_value(reader_t *d, const char *s, size_t n, double *v)
{
    char tmp[64], *c = tmp;
    if (n >= sizeof(tmp)) {
        d->scratch->n = 0;
        if (buf_reserve(d->scratch, n + 1) != 0) return -2;
        c = d->scratch->p;
    }
    memcpy(c, s, n);
    c[n] = '\0';
    const char *point = localeconv()->decimal_point;
    if (point && point[0] && point[0] != '.' && !point[1]) {
        char *dot = memchr(c, '.', n);
        if (dot) *dot = point[0];
    }
    *v = strtod(c, NULL);
    return 0;
}

static int read_number(reader_t *d)
{
    const char *start = d->p, *p = start;
    int neg = *p == '-', integer = 1;
    if (neg) p++;
    if (!is_digit(d, p)) return syntax(d, p, "expected a digit");
    if (*p == '0') {
        p++;
        if (is_digit(d, p)) return syntax(d, p - 1, "leading zero in number");
    } else {
        while (is_digit(d, p))
            p++;
    }
    if (p < d->e && *p == '.') {
        p++;
        integer = 0;
        if (!is_digit(d, p)) return syntax(d, p, "expected a digit after the decimal point");
        while (is_digit(d, p))
            p++;
    }
    if (p < d->e && (*p == 'e' || *p == 'E')) {
        p++;
        integer = 0;
        if (p < d->e && (*p == '+' || *p == '-')) p++;
        if (!is_digit(d, p)) return syntax(d, p, "expected a digit in the exponent");
        while (is_digit(d, p))
            p++;
    }
    double v;
    size_t digits = (size_t)(p - start) - (size_t)neg;
    if (integer && digits <= 15) { /* exact in a double: no strtod */
        uint64_t k = 0;
        for (const char *q = start + neg; q < p; q++)
            k = k * 10 + (uint64_t)(*q - '0');
        v = neg ? -(double)k : (double)k;
    } else {
        int rc = number_value(d, start, (size_t)(p - start), &v);
        if (rc != 0) return rc;
    }
    d->p = p;
    return d->r->number(d->ud, v);
}

static int read_literal(reader_t *d)
{
    static const char *const words[] = {"null", "false", "true"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(d->e - d->p) >= n && memcmp(d->p, words[i], n) == 0) {
            d->p += n;
            return i == 0 ? d->r->null(d->ud) : d->r->boolean(d->ud, i == 2);
        }
    }
    return syntax(d, d->p, "expected a value");
}

static int read_value(reader_t *d, int depth);

/* The array or object at d->p (its '[' or '{'). */
static int read_container(reader_t *d, int depth, int object)
{
    const char close = object ? '}' : ']';
    if (depth > JSON_MAX_DEPTH)
        return syntax(d, d->p, "arrays and objects nested deeper than " STR(JSON_MAX_DEPTH));
    int rc = d->r->begin(d->ud, object);
    if (rc != 0) return rc;
    d->p++;
    skip_space(d);
    if (d->p < d->e && *d->p == close) {
        d->p++;
        return d->r->end(d->ud, object);
    }
    for (size_t i = 1;; i++) {
        if (object) {
            if (d->p == d->e || *d->p != '"') return syntax(d, d->p, "expected a member name");
            if ((rc = read_string(d)) != 0) return rc;
            skip_space(d);
            if (d->p == d->e || *d->p != ':') return syntax(d, d->p, "expected ':'");
            d->p++;
        }
        if ((rc = read_value(d, depth)) != 0) return rc;
        if ((rc = object ? d->r->member(d->ud) : d->r->item(d->ud, i)) != 0) return rc;
        skip_space(d);
        if (d->p < d->e && *d->p == ',') {
            d->p++;
            skip_space(d);
            continue;
        }
        if (d->p < d->e && *d->p == close) {
            d->p++;
            return d->r->end(d->ud, object);
        }
        return syntax(d, d->p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int read_value(reader_t *d, int depth)
{
    skip_space(d);
    if (d->p == d->e) return syntax(d, d->p, "expected a value");
    switch (*d->p) {
    case '{':
        return read_container(d, depth + 1, 1);
    case '[':
        return read_container(d, depth + 1, 0);
    case '"':
        return read_string(d);
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        return read_number(d);
    default:
        return read_literal(d);
    }
}

int json_decode(const char *text, size_t n, const json_reader_t *r, void *ud, json_buf_t *scratch,
                json_error_t *err)
{
    reader_t d = {text, text, text + n, r, ud, scratch, err};
    /* RFC 8259 8.1: a parser may ignore a byte order mark; some servers send one. */
    if (n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) d.p += 3;
    int rc = read_value(&d, 0);
    if (rc != 0) return rc;
    skip_space(&d);
    if (d.p != d.e) return syntax(&d, d.p, "unexpected text after the value");
    return 0;
}
