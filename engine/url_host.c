/* url_host.c: the WHATWG URL Standard's host rules that curl does not apply
 * (url_host.h): its IPv4 parser and "ends in a number" test, its IPv6 serialization;
 * and the bytes a name may have (fewer than the standard allows: those DNS can look
 * up). A host a scope rule or an address policy reads must be the address that is
 * connected to, so each address has one spelling here. */
#include "url_host.h"
#include "url_chars.h"

#include <arpa/inet.h>
#include <string.h>

/* The bytes of a host name we take: letters, digits, '-', '_' and '.'. The
 * standard forbids fewer (C0 controls, space, DEL and # % / : < > ? @ [ \ ] ^ |),
 * but a name of others ("a|b", "%zz", which curl lets through) has no DNS lookup. */
static const uint32_t NAME_BYTES[8] = {0, 0x03ff6000, 0x87fffffe, 0x07fffffe, 0, 0, 0, 0};

/* One IPv4 number (s, n bytes): decimal, octal after a "0", hex after "0x" (which
 * alone is 0). Values past 32 bits saturate at 2^32: they are errors either way.
 * 0, or -1 if it is not a number. */
static int ipv4_number(const char *s, size_t n, uint64_t *v)
{
    if (n == 0) return -1;
    unsigned radix = 10;
    if (n >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
        s += 2;
        n -= 2;
        radix = 16;
    } else if (n >= 2 && s[0] == '0') {
        s++;
        n--;
        radix = 8;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)s[i], d;
        if (is_digit(c))
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            return -1;
        if (d >= radix) return -1;
        x = x * radix + d;
        if (x > 0xffffffffu) x = 0x100000000u;
    }
    *v = x;
    return 0;
}

/* h without one trailing dot, when something is left before it. */
static size_t drop_trailing_dot(const char *h, size_t n)
{
    return n > 1 && h[n - 1] == '.' ? n - 1 : n;
}

int url_host_ends_in_number(const char *h, size_t n)
{
    n = drop_trailing_dot(h, n);
    size_t last = n;
    while (last > 0 && h[last - 1] != '.')
        last--;
    if (last == n) return 0;
    size_t i = last;
    while (i < n && is_digit((unsigned char)h[i]))
        i++;
    uint64_t v;
    return i == n || ipv4_number(h + last, n - last, &v) == 0;
}

int url_host_ipv4(const char *h, size_t n, uint32_t *addr)
{
    n = drop_trailing_dot(h, n);
    uint64_t nums[4];
    int count = 0;
    for (size_t i = 0;;) {
        size_t j = i;
        while (j < n && h[j] != '.')
            j++;
        if (count == 4 || ipv4_number(h + i, j - i, &nums[count]) != 0) return -1;
        count++;
        if (j == n) break;
        i = j + 1;
    }
    for (int k = 0; k < count - 1; k++)
        if (nums[k] > 255) return -1;
    if (nums[count - 1] >= (uint64_t)1 << (8 * (5 - count))) return -1;
    uint64_t a = nums[count - 1];
    for (int k = 0; k < count - 1; k++)
        a += nums[k] << (8 * (3 - k));
    *addr = (uint32_t)a;
    return 0;
}

static size_t put_dec(char *out, unsigned v)
{
    size_t w = 0;
    if (v >= 100) out[w++] = (char)('0' + v / 100);
    if (v >= 10) out[w++] = (char)('0' + v / 10 % 10);
    out[w++] = (char)('0' + v % 10);
    return w;
}

static size_t put_hex(char *out, unsigned v)
{
    static const char HEXL[] = "0123456789abcdef";
    size_t w = 0;
    for (int shift = 12; shift >= 0; shift -= 4)
        if (v >> shift || shift == 0 || w) out[w++] = HEXL[v >> shift & 15];
    return w;
}

/* The standard's IPv6 serializer: lower-case hex pieces without leading zeros, the
 * first longest run of two or more zero pieces written "::"; in brackets. */
static size_t ipv6_serialize(const unsigned char a[16], char *out)
{
    unsigned piece[8];
    for (int i = 0; i < 8; i++)
        piece[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
    int best = -1, best_len = 1;
    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && piece[j] == 0)
            j++;
        if (j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = j > i ? j : i + 1;
    }
    size_t w = 0;
    out[w++] = '[';
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            out[w++] = ':';
            if (i == 0) out[w++] = ':';
            i += best_len - 1;
            continue;
        }
        w += put_hex(out + w, piece[i]);
        if (i < 7) out[w++] = ':';
    }
    out[w++] = ']';
    return w;
}

int url_host_canon(const char *h, size_t n, char *out, size_t *outlen)
{
    if (n == 0) return URL_HOST_INVALID;
    if (h[0] == '[') {
        /* inet_pton takes what the standard's IPv6 parser takes, and no zone ID. */
        char buf[64];
        unsigned char a[16];
        if (n < 3 || h[n - 1] != ']' || n - 2 >= sizeof(buf)) return URL_HOST_INVALID;
        memcpy(buf, h + 1, n - 2);
        buf[n - 2] = '\0';
        if (inet_pton(AF_INET6, buf, a) != 1) return URL_HOST_INVALID;
        *outlen = ipv6_serialize(a, out);
        return URL_HOST_IPV6;
    }
    for (size_t i = 0; i < n; i++)
        if (!in_set(NAME_BYTES, (unsigned char)h[i])) return URL_HOST_INVALID;
    if (!url_host_ends_in_number(h, n)) return URL_HOST_NAME;
    uint32_t a;
    if (url_host_ipv4(h, n, &a) != 0) return URL_HOST_INVALID;
    size_t w = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        w += put_dec(out + w, a >> shift & 255);
        if (shift) out[w++] = '.';
    }
    *outlen = w;
    return URL_HOST_IPV4;
}
