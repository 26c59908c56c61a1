/* url_host.h: the last steps of the WHATWG URL Standard's host parser, which make
 * one host one spelling: IPv4 addresses in every form browsers accept ("0xc0.0250.01",
 * "999999999.", "1.2.3.4.") written in dotted decimal, a host that ends in a number
 * but is no address refused ("256.0.0.1", "foo.1.2.3.4"), IPv6 addresses written in
 * the standard's canonical form, names of other bytes than letters, digits, '-',
 * '_' and '.' refused (which covers the standard's forbidden code points). url.c
 * applies them to the host curl parsed; url_fast.c asks url_host_ends_in_number. */
#ifndef LUACRAWL_URL_HOST_H
#define LUACRAWL_URL_HOST_H

#include <stddef.h>
#include <stdint.h>

enum url_host_kind {
    URL_HOST_INVALID = -1,
    URL_HOST_NAME = 0, /* a domain: left as it is */
    URL_HOST_IPV4,     /* written as four decimal numbers */
    URL_HOST_IPV6,     /* written in brackets, canonical */
};

/* The bytes url_host_canon may write: an IPv6 address in brackets at most. */
#define URL_HOST_CANON_MAX 48

/* The host h (n bytes, ASCII as curl renders it: punycode, an IPv6 address in
 * brackets) checked and, if an address, written canonically into out
 * (URL_HOST_CANON_MAX bytes, not NUL-terminated, *outlen bytes). Names are
 * neither copied nor changed (their case is the caller's). Returns the kind, or
 * URL_HOST_INVALID: empty, a byte a name may not have, a malformed IPv6 address (a
 * zone ID too), or a name whose last label is a number but that is no IPv4 address. */
int url_host_canon(const char *h, size_t n, char *out, size_t *outlen);

/* The standard's "ends in a number": the last label of h (after one trailing dot)
 * is all digits, or "0x" and hex digits. Such a host is an IPv4 address or an
 * error. */
int url_host_ends_in_number(const char *h, size_t n);

/* The standard's IPv4 parser: 1 to 4 numbers, each decimal, octal ("0" first) or
 * hex ("0x" first), the last filling the bytes the others leave; one trailing dot.
 * 0 and the address in *addr, or -1. */
int url_host_ipv4(const char *h, size_t n, uint32_t *addr);

#endif
