/* mprintf_shim.c: the luacrawl binary's curl_msnprintf() and curl_maprintf(), which
 * libcurl calls in place of its own (an executable's symbols come first). curl 7.88
 * formats three strings a transfer with them: its connection cache's key, the Host:
 * line and a message it makes whether it logs it or not. Its printf hands the
 * output on a byte at a time. When the overrides are on (curl_overrides.h), a
 * format of %s, %d, %u, %ld, %lu and %% only, as those three are, is written here
 * directly, to the bytes curl writes (a NULL string too: "(nil)"); any other, and
 * every format when they are off, goes to curl's curl_mvsnprintf() and
 * curl_mvaprintf(), which is all that libcurl's own two functions do with their
 * arguments (a variadic function cannot hand its arguments on to another found
 * with dlsym; tests/unit/test_mprintf_shim.c checks both ways against libcurl's own,
 * found so). Only the binary has these, as with poll_shim.c: a library must not
 * replace its host's libcurl functions. */
#include "curl_overrides.h"

#include <curl/curl.h>
#include <curl/mprintf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Whether every conversion in fmt is %s, %d, %u, %ld, %lu or %%. */
static int simple(const char *fmt)
{
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p + 1, '%')) {
        p++; /* the conversion */
        if (*p == 'l') p++;
        if (*p == 'd' || *p == 'u') continue;
        if (p[-1] == 'l' || (*p != 's' && *p != '%')) return 0;
    }
    return 1;
}

/* Write the decimal digits of v (at most 20) just before end; returns where they
 * start. */
static char *digits(char *end, unsigned long v)
{
    do
        *--end = (char)('0' + v % 10);
    while (v /= 10);
    return end;
}

/* Format simple fmt into out (max bytes, max > 0), cut to fit as curl cuts it; a
 * NULL string is "(nil)", as curl has it. Returns the length of the whole output,
 * cut or not. (The analyzer takes the va_copy'd list of curl_maprintf for
 * uninitialized.) */
// NOLINTBEGIN(clang-analyzer-valist.Uninitialized)
static size_t format(char *out, size_t max, const char *fmt, va_list *ap)
{
    size_t n = 0, total = 0;
    for (const char *p = fmt; *p; p++) {
        char num[24];
        const char *s;
        size_t len;
        if (*p != '%') { /* the text up to the next conversion, at once */
            const char *q = strchr(p, '%');
            s = p;
            len = q ? (size_t)(q - p) : strlen(p);
            p += len - 1;
        } else if (*++p == '%') {
            s = p;
            len = 1;
        } else {
            int lng = *p == 'l';
            if (lng) p++;
            if (*p == 's') {
                s = va_arg(*ap, const char *);
                if (!s) s = "(nil)";
                len = strlen(s);
            } else if (*p == 'd') {
                long v = lng ? va_arg(*ap, long) : va_arg(*ap, int);
                unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
                char *d = digits(num + sizeof(num), u);
                if (v < 0) *--d = '-';
                s = d;
                len = (size_t)(num + sizeof(num) - d);
            } else { /* 'u' */
                unsigned long v = lng ? va_arg(*ap, unsigned long) : va_arg(*ap, unsigned);
                s = digits(num + sizeof(num), v);
                len = (size_t)(num + sizeof(num) - s);
            }
        }
        total += len;
        if (len > max - 1 - n) len = max - 1 - n; /* curl stops where the buffer ends */
        memcpy(out + n, s, len);
        n += len;
    }
    out[n] = '\0';
    return total;
}
// NOLINTEND(clang-analyzer-valist.Uninitialized)

int curl_msnprintf(char *buffer, size_t maxlength, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    if (maxlength && lc_overrides_on() && simple(fmt)) {
        size_t total = format(buffer, maxlength, fmt, &ap);
        n = (int)(total < maxlength ? total : maxlength - 1); /* what was written */
    } else {
        n = curl_mvsnprintf(buffer, maxlength, fmt, ap);
    }
    va_end(ap);
    return n;
}

char *curl_maprintf(const char *fmt, ...)
{
    va_list ap;
    char buf[1024], *s = NULL;
    va_start(ap, fmt);
    if (lc_overrides_on() && simple(fmt)) {
        va_list try;
        va_copy(try, ap);
        size_t n = format(buf, sizeof(buf), fmt, &try);
        va_end(try);
        if (n < sizeof(buf)) { /* else curl formats it again, whole */
            s = malloc(n + 1);
            if (s) memcpy(s, buf, n + 1);
            va_end(ap);
            return s;
        }
    }
    s = curl_mvaprintf(fmt, ap);
    va_end(ap);
    return s;
}
