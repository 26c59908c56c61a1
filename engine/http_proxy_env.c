/* http_proxy_env.c: proxy settings from the environment (http_proxy_env.h). */
#include "http_proxy_env.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct proxy_env {
    char *http, *https, *no_proxy; /* NULL: not set */
};

/* The first of two variables that is set and not empty, copied; NULL when neither
 * is. */
static char *first_set(const char *a, const char *b, int *oom)
{
    const char *v = a ? getenv(a) : NULL;
    if (!v || !*v) v = b ? getenv(b) : NULL;
    if (!v || !*v) return NULL;
    char *copy = strdup(v);
    if (!copy) *oom = 1;
    return copy;
}

proxy_env_t *proxy_env_new(int *oom)
{
    *oom = 0;
    proxy_env_t *pe = calloc(1, sizeof(*pe));
    if (!pe) {
        *oom = 1;
        return NULL;
    }
    pe->http = first_set("http_proxy", NULL, oom);
    if (!pe->http) pe->http = first_set("all_proxy", "ALL_PROXY", oom);
    pe->https = first_set("https_proxy", "HTTPS_PROXY", oom);
    if (!pe->https) pe->https = first_set("all_proxy", "ALL_PROXY", oom);
    pe->no_proxy = first_set("no_proxy", "NO_PROXY", oom);
    if (*oom || (!pe->http && !pe->https)) { /* no_proxy alone changes nothing */
        proxy_env_free(pe);
        return NULL;
    }
    return pe;
}

void proxy_env_free(proxy_env_t *pe)
{
    if (!pe) return;
    free(pe->http);
    free(pe->https);
    free(pe->no_proxy);
    free(pe);
}

const char *proxy_env_for(const proxy_env_t *pe, const char *scheme, const char *host)
{
    if (!pe) return NULL;
    const char *proxy = strcasecmp(scheme, "https") == 0 ? pe->https : pe->http;
    if (!proxy || (pe->no_proxy && proxy_env_bypass(pe->no_proxy, host))) return NULL;
    return proxy;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Whether the first bits bits of a and b (n bytes each) agree; bits 0 means all. */
static int same_prefix(const unsigned char *a, const unsigned char *b, size_t n, unsigned bits)
{
    if (bits == 0) bits = (unsigned)(n * 8);
    if (bits > n * 8) return 0;
    size_t whole = bits / 8;
    if (memcmp(a, b, whole) != 0) return 0;
    unsigned rest = bits % 8;
    if (!rest) return 1;
    unsigned mask = (0xFFu << (8 - rest)) & 0xFFu;
    return (a[whole] & mask) == (b[whole] & mask);
}

/* An address pattern ("10.0.0.0/8", "::1") against the host's address. */
static int address_match(int af, const unsigned char *addr, const char *token, size_t len)
{
    char pat[128];
    unsigned char net[16];
    if (len >= sizeof(pat)) return 0;
    memcpy(pat, token, len);
    pat[len] = '\0';
    unsigned bits = 0;
    char *slash = strchr(pat, '/');
    if (slash) {
        char *end;
        unsigned long b = strtoul(slash + 1, &end, 10);
        if (end == slash + 1 || *end || b > 128) return 0;
        bits = (unsigned)b;
        *slash = '\0';
    }
    if (inet_pton(af, pat, net) != 1) return 0;
    return same_prefix(addr, net, af == AF_INET ? 4 : 16, bits);
}

/* A name pattern: the name itself or a domain above it. */
static int name_match(const char *name, size_t n, const char *token, size_t len)
{
    if (len && token[len - 1] == '.') len--;
    if (len && token[0] == '.') {
        token++;
        len--;
    }
    if (!len || len > n) return 0;
    if (len == n) return strncasecmp(token, name, n) == 0;
    return name[n - len - 1] == '.' && strncasecmp(token, name + n - len, len) == 0;
}

int proxy_env_bypass(const char *no_proxy, const char *host)
{
    if (!host || !*host || !no_proxy) return 0;
    if (strcmp(no_proxy, "*") == 0) return 1;
    char ip[128];
    size_t n = strlen(host);
    if (host[0] == '[') { /* an IPv6 address in brackets */
        const char *close = strchr(host, ']');
        if (!close) return 0;
        host++;
        n = (size_t)(close - host);
    }
    if (n >= sizeof(ip)) return 0;
    memcpy(ip, host, n);
    ip[n] = '\0';
    unsigned char addr[16];
    int af = inet_pton(AF_INET, ip, addr) == 1    ? AF_INET
             : inet_pton(AF_INET6, ip, addr) == 1 ? AF_INET6
                                                  : 0;
    if (!af && n && ip[n - 1] == '.') n--; /* a name's trailing dot */
    for (const char *p = no_proxy; *p;) {
        while (is_blank(*p) || *p == ',')
            p++;
        const char *token = p;
        while (*p && !is_blank(*p) && *p != ',')
            p++;
        size_t len = (size_t)(p - token);
        if (len && (af ? address_match(af, addr, token, len) : name_match(ip, n, token, len)))
            return 1;
    }
    return 0;
}
