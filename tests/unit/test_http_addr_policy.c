/* Unit tests of engine/http_addr_policy.c: CIDR parsing, matching in both families,
 * and what public_only denies and lets through. */
#include "http_addr_policy.h"
#include "test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static int denied(const addr_policy_t *p, const char *addr)
{
    return addr_policy_check(p, addr) != NULL;
}

static void test_empty_allows_all(void)
{
    addr_policy_t *p = addr_policy_new();
    CHECK(p && addr_policy_empty(p));
    CHECK(!denied(p, "127.0.0.1"));
    CHECK(!denied(p, "169.254.169.254"));
    CHECK(!denied(NULL, "::1"));
    CHECK(!denied(p, "not an address")); /* an empty policy looks at nothing */
    addr_policy_free(p);
}

static void test_cidr_parsing(void)
{
    addr_policy_t *p = addr_policy_new();
    CHECK(addr_policy_deny(p, "10.0.0.0/8") == 0);
    CHECK(addr_policy_deny(p, "fd00::/8") == 0);
    CHECK(addr_policy_deny(p, "[::1]/128") == 0);
    CHECK(addr_policy_deny(p, "192.0.2.7") == 0); /* one address */
    CHECK(addr_policy_deny(p, "0.0.0.0/0") == 0);
    CHECK(addr_policy_deny(p, "::/0") == 0);
    CHECK(addr_policy_deny(p, "10.0.0.1/8") == -1); /* host bits set */
    CHECK(addr_policy_deny(p, "10.0.0.0/33") == -1);
    CHECK(addr_policy_deny(p, "fd00::/129") == -1);
    CHECK(addr_policy_deny(p, "10.0.0.0/") == -1);
    CHECK(addr_policy_deny(p, "10.0.0.0/-1") == -1);
    CHECK(addr_policy_deny(p, "10.0.0.0/ 8") == -1);
    CHECK(addr_policy_deny(p, "10.0.0/8") == -1);
    CHECK(addr_policy_deny(p, "example.com") == -1);
    CHECK(addr_policy_deny(p, "") == -1);
    CHECK(addr_policy_deny(p, "/8") == -1);
    addr_policy_free(p);
}

static void test_deny_list(void)
{
    addr_policy_t *p = addr_policy_new();
    CHECK(addr_policy_deny(p, "10.1.0.0/16") == 0);
    CHECK(addr_policy_deny(p, "2001:db8:1::/48") == 0);
    CHECK(addr_policy_deny(p, "198.51.100.9") == 0);
    CHECK(!addr_policy_empty(p));
    CHECK(denied(p, "10.1.2.3"));
    CHECK(denied(p, "10.1.255.255"));
    CHECK(!denied(p, "10.2.0.1"));
    CHECK(!denied(p, "10.0.255.255"));
    CHECK(denied(p, "::ffff:10.1.2.3")); /* the IPv4-mapped form is the same host */
    CHECK(denied(p, "2001:db8:1::5"));
    CHECK(denied(p, "[2001:db8:1:ffff::1]"));
    CHECK(!denied(p, "2001:db8:2::1"));
    CHECK(denied(p, "198.51.100.9"));
    CHECK(!denied(p, "198.51.100.10"));
    CHECK(strcmp(addr_policy_check(p, "10.1.0.1"), "10.1.0.0/16") == 0);
    CHECK(!denied(p, "127.0.0.1")); /* not public_only */
    CHECK(denied(p, "nonsense"));   /* a policy in force refuses what it cannot read */
    addr_policy_free(p);

    p = addr_policy_new();
    CHECK(addr_policy_deny(p, "10.1.2.0/23") == 0); /* a prefix not on a byte */
    CHECK(denied(p, "10.1.3.200"));
    CHECK(!denied(p, "10.1.4.0"));
    CHECK(!denied(p, "10.1.1.255"));
    addr_policy_free(p);
}

static void test_public_only(void)
{
    addr_policy_t *p = addr_policy_new();
    addr_policy_public_only(p, 1);
    static const char *const refused[] = {
        "127.0.0.1",
        "127.255.255.254",
        "0.0.0.0",
        "0.1.2.3",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.127.255.255",
        "192.0.0.8",
        "192.0.2.1",
        "198.18.0.1",
        "198.51.100.1",
        "203.0.113.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "::127.0.0.1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:10.0.0.1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "2001:db8::1",
        "100::1",
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::1",
        "2002:c0a8:101::1",
        "2001::1",
        "64:ff9b:1::1",
        "[::1]",
        "192.88.99.1",
        "2001:10::1",
        "2001:20::1",
        "3fff::1",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        if (!denied(p, refused[i])) fprintf(stderr, "not denied: %s\n", refused[i]);
        CHECK(denied(p, refused[i]));
    }
    static const char *const allowed[] = {
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "172.15.255.255",
        "172.32.0.1",
        "100.63.255.255",
        "100.128.0.1",
        "169.253.0.1",
        "11.0.0.1",
        "223.255.255.255",
        "::ffff:8.8.8.8",
        "2606:4700::1111",
        "2a00:1450:4001:80b::200e",
        "64:ff9b::808:808",
        "2002:808:808::1",
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        if (denied(p, allowed[i])) fprintf(stderr, "denied: %s\n", allowed[i]);
        CHECK(!denied(p, allowed[i]));
    }
    CHECK(strcmp(addr_policy_check(p, "169.254.169.254"), "link-local 169.254.0.0/16") == 0);
    CHECK(strcmp(addr_policy_check(p, "::1"), "unspecified, loopback or IPv4-compatible ::/96") ==
          0);
    addr_policy_public_only(p, 0);
    CHECK(addr_policy_empty(p) && !denied(p, "127.0.0.1"));
    addr_policy_free(p);
}

static void test_sockaddr(void)
{
    addr_policy_t *p = addr_policy_new();
    addr_policy_public_only(p, 1);
    struct sockaddr_in in = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.2", &in.sin_addr);
    CHECK(addr_policy_check_sa(p, (struct sockaddr *)&in) != NULL);
    inet_pton(AF_INET, "8.8.4.4", &in.sin_addr);
    CHECK(addr_policy_check_sa(p, (struct sockaddr *)&in) == NULL);
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:192.168.0.1", &in6.sin6_addr);
    CHECK(addr_policy_check_sa(p, (struct sockaddr *)&in6) != NULL);
    inet_pton(AF_INET6, "2606:4700::1111", &in6.sin6_addr);
    CHECK(addr_policy_check_sa(p, (struct sockaddr *)&in6) == NULL);
    struct sockaddr un = {.sa_family = AF_UNIX};
    CHECK(addr_policy_check_sa(p, &un) != NULL);
    addr_policy_free(p);
}

/* A copy denies what its original denies, by the same names, and outlives it. */
static void test_copy(void)
{
    addr_policy_t *p = addr_policy_new();
    CHECK(p && addr_policy_deny(p, "10.1.0.0/16") == 0 && addr_policy_deny(p, "fd00::/8") == 0);
    addr_policy_public_only(p, 1);
    addr_policy_t *c = addr_policy_copy(p);
    addr_policy_free(p);
    CHECK(c != NULL);
    CHECK(strcmp(addr_policy_check(c, "10.1.2.3"), "10.1.0.0/16") == 0);
    CHECK(strcmp(addr_policy_check(c, "fd00::1"), "fd00::/8") == 0);
    CHECK(denied(c, "127.0.0.1")); /* public_only */
    CHECK(!denied(c, "93.184.216.34"));
    addr_policy_free(c);
    addr_policy_t *empty = addr_policy_new(), *ec = addr_policy_copy(empty);
    CHECK(ec && addr_policy_empty(ec));
    addr_policy_free(empty);
    addr_policy_free(ec);
}

int main(void)
{
    RUN(test_empty_allows_all);
    RUN(test_cidr_parsing);
    RUN(test_deny_list);
    RUN(test_public_only);
    RUN(test_sockaddr);
    RUN(test_copy);
    return test_failures ? 1 : 0;
}
