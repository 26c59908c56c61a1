/* http_addr_policy.c: denied networks and the public_only list, matched against
 * addresses as 16-byte IPv6 ones (IPv4 as IPv4-mapped). A linear scan: a policy
 * holds a few dozen networks, checked once per connection, not per byte. */
#include "http_addr_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct net {
    uint8_t addr[16];
    int bits; /* prefix length over the 16 bytes (an IPv4 /8 is 96 + 8) */
    const char *name;
};

struct addr_policy {
    int public_only;
    struct net *deny;
    char **names; /* the CIDRs as given, owned */
    int n, cap;
};

/* IANA's IPv4 and IPv6 special-purpose address registries, less what is globally
 * reachable by design (the anycast entries); the reserved 240/4 and multicast too.
 * IPv4-mapped ::ffff:0:0/96 is absent on purpose: its addresses are the IPv4 ones
 * and meet the IPv4 rules. */
static const struct {
    const char *cidr, *name;
} special[] = {
    {"0.0.0.0/8", "this network 0.0.0.0/8"},
    {"10.0.0.0/8", "private 10.0.0.0/8"},
    {"100.64.0.0/10", "shared (CGNAT) 100.64.0.0/10"},
    {"127.0.0.0/8", "loopback 127.0.0.0/8"},
    {"169.254.0.0/16", "link-local 169.254.0.0/16"},
    {"172.16.0.0/12", "private 172.16.0.0/12"},
    {"192.0.0.0/24", "IETF protocol assignments 192.0.0.0/24"},
    {"192.0.2.0/24", "documentation 192.0.2.0/24"},
    {"192.88.99.0/24", "6to4 relay 192.88.99.0/24"},
    {"192.168.0.0/16", "private 192.168.0.0/16"},
    {"198.18.0.0/15", "benchmarking 198.18.0.0/15"},
    {"198.51.100.0/24", "documentation 198.51.100.0/24"},
    {"203.0.113.0/24", "documentation 203.0.113.0/24"},
    {"224.0.0.0/4", "multicast 224.0.0.0/4"},
    {"240.0.0.0/4", "reserved 240.0.0.0/4"},
    {"::/96", "unspecified, loopback or IPv4-compatible ::/96"},
    {"64:ff9b:1::/48", "local NAT64 64:ff9b:1::/48"},
    {"100::/64", "discard-only 100::/64"},
    {"2001::/32", "Teredo 2001::/32"},
    {"2001:10::/28", "ORCHID 2001:10::/28"},
    {"2001:20::/28", "ORCHIDv2 2001:20::/28"},
    {"2001:db8::/32", "documentation 2001:db8::/32"},
    {"3fff::/20", "documentation 3fff::/20"},
    {"fc00::/7", "unique-local fc00::/7"},
    {"fe80::/10", "link-local fe80::/10"},
    {"fec0::/10", "site-local fec0::/10"},
    {"ff00::/8", "multicast ff00::/8"},
};
#define NSPECIAL (sizeof(special) / sizeof(special[0]))

/* Parsed once per process (pthread_once: engines may start on several threads);
 * constant after. Every entry parses: the unit test denies an address of each. */
static struct net special_nets[NSPECIAL];
static pthread_once_t special_once = PTHREAD_ONCE_INIT;

static void map_v4(uint8_t out[16], const uint8_t v4[4])
{
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, v4, 4);
}

/* "a.b.c.d", "x::y" or "[x::y]" into 16 bytes; 0, or -1 when not an address.
 * *v4 says which family it was. */
static int parse_addr(const char *s, size_t n, uint8_t out[16], int *v4)
{
    char tmp[64];
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') s++, n -= 2;
    if (n == 0 || n >= sizeof(tmp)) return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    uint8_t a4[4];
    if (inet_pton(AF_INET, tmp, a4) == 1) {
        map_v4(out, a4);
        *v4 = 1;
        return 0;
    }
    *v4 = 0;
    return inet_pton(AF_INET6, tmp, out) == 1 ? 0 : -1;
}

static int parse_cidr(const char *cidr, struct net *net)
{
    const char *slash = strchr(cidr, '/');
    size_t n = slash ? (size_t)(slash - cidr) : strlen(cidr);
    int v4;
    if (parse_addr(cidr, n, net->addr, &v4) < 0) return -1;
    int max = v4 ? 32 : 128, bits = max;
    if (slash) {
        char *end;
        const char *d = slash + 1;
        if (*d < '0' || *d > '9' || strlen(d) > 3) return -1;
        long b = strtol(d, &end, 10);
        if (*end || b > max) return -1;
        bits = (int)b;
    }
    net->bits = v4 ? 96 + bits : bits;
    /* No bits set past the prefix. */
    for (int i = net->bits; i < 128; i++)
        if (net->addr[i / 8] & (0x80 >> (i % 8))) return -1;
    return 0;
}

static int in_net(const uint8_t a[16], const struct net *net)
{
    int full = net->bits / 8, rest = net->bits % 8;
    if (memcmp(a, net->addr, (size_t)full) != 0) return 0;
    if (!rest) return 1;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a[full] & mask) == (net->addr[full] & mask);
}

static void ready_special(void)
{
    for (size_t i = 0; i < NSPECIAL; i++) {
        if (parse_cidr(special[i].cidr, &special_nets[i]) < 0) special_nets[i].bits = 129;
        special_nets[i].name = special[i].name;
    }
}

static const char *check_special(const uint8_t a[16])
{
    for (size_t i = 0; i < NSPECIAL; i++)
        if (special_nets[i].bits <= 128 && in_net(a, &special_nets[i])) return special_nets[i].name;
    /* The IPv4 address a NAT64 or 6to4 address carries reaches that host. */
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
    uint8_t inner[16];
    if (memcmp(a, nat64, 12) == 0) {
        map_v4(inner, a + 12);
        return check_special(inner);
    }
    if (a[0] == 0x20 && a[1] == 0x02) {
        map_v4(inner, a + 2);
        return check_special(inner);
    }
    return NULL;
}

addr_policy_t *addr_policy_new(void)
{
    return calloc(1, sizeof(addr_policy_t));
}

void addr_policy_free(addr_policy_t *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++)
        free(p->names[i]);
    free(p->names);
    free(p->deny);
    free(p);
}

addr_policy_t *addr_policy_copy(const addr_policy_t *p)
{
    addr_policy_t *copy = addr_policy_new();
    if (!copy) return NULL;
    copy->public_only = p->public_only;
    for (int i = 0; i < p->n; i++) {
        if (addr_policy_deny(copy, p->names[i]) != 0) { /* each one parsed before */
            addr_policy_free(copy);
            return NULL;
        }
    }
    return copy;
}

int addr_policy_deny(addr_policy_t *p, const char *cidr)
{
    struct net net;
    if (parse_cidr(cidr, &net) < 0) return -1;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        struct net *d = realloc(p->deny, (size_t)cap * sizeof(*d));
        if (!d) return -2;
        p->deny = d;
        char **names = realloc(p->names, (size_t)cap * sizeof(*names));
        if (!names) return -2;
        p->names = names;
        p->cap = cap;
    }
    if (!(p->names[p->n] = strdup(cidr))) return -2;
    net.name = p->names[p->n];
    p->deny[p->n++] = net;
    return 0;
}

void addr_policy_public_only(addr_policy_t *p, int on)
{
    p->public_only = on;
}

int addr_policy_empty(const addr_policy_t *p)
{
    return !p || (!p->public_only && p->n == 0);
}

static const char *check_bytes(const addr_policy_t *p, const uint8_t a[16])
{
    if (addr_policy_empty(p)) return NULL;
    for (int i = 0; i < p->n; i++)
        if (in_net(a, &p->deny[i])) return p->deny[i].name;
    if (!p->public_only) return NULL;
    pthread_once(&special_once, ready_special);
    return check_special(a);
}

const char *addr_policy_check(const addr_policy_t *p, const char *addr)
{
    uint8_t a[16];
    int v4;
    if (addr_policy_empty(p)) return NULL;
    if (parse_addr(addr, strlen(addr), a, &v4) < 0) return "not an IP address";
    return check_bytes(p, a);
}

const char *addr_policy_check_sa(const addr_policy_t *p, const struct sockaddr *sa)
{
    uint8_t a[16];
    if (addr_policy_empty(p)) return NULL;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        map_v4(a, (const uint8_t *)&in->sin_addr);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        memcpy(a, &in6->sin6_addr, 16);
    } else {
        return "not an IP address";
    }
    return check_bytes(p, a);
}
