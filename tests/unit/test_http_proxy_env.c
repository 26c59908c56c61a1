/* Unit tests of engine/http_proxy_env.c: which variables count, and no_proxy matching
 * (curl 7.88's rules). */
#include "http_proxy_env.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static void clear_env(void)
{
    static const char *const vars[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                                       "all_proxy",  "ALL_PROXY",  "no_proxy",    "NO_PROXY"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

static int same(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

static void test_none_set(void)
{
    int oom = 1;
    clear_env();
    CHECK(proxy_env_new(&oom) == NULL && oom == 0);
    setenv("no_proxy", "example.com", 1); /* exceptions alone: still no proxy */
    setenv("http_proxy", "", 1);          /* empty is not set */
    CHECK(proxy_env_new(&oom) == NULL && oom == 0);
    setenv("HTTP_PROXY", "http://upper:3128", 1); /* never read */
    CHECK(proxy_env_new(&oom) == NULL && oom == 0);
    clear_env();
}

static void test_which_variable(void)
{
    int oom;
    clear_env();
    setenv("https_proxy", "http://secure:3128", 1);
    setenv("HTTPS_PROXY", "http://SECURE:3128", 1);
    setenv("ALL_PROXY", "socks5h://all:1080", 1);
    proxy_env_t *pe = proxy_env_new(&oom);
    CHECK(pe != NULL);
    CHECK(same(proxy_env_for(pe, "https", "example.com"), "http://secure:3128"));
    CHECK(same(proxy_env_for(pe, "http", "example.com"), "socks5h://all:1080"));
    proxy_env_free(pe);

    unsetenv("https_proxy");
    setenv("http_proxy", "http://plain:8080", 1);
    setenv("all_proxy", "socks5h://lower:1080", 1);
    pe = proxy_env_new(&oom);
    CHECK(same(proxy_env_for(pe, "https", "example.com"), "http://SECURE:3128"));
    CHECK(same(proxy_env_for(pe, "HTTP", "example.com"), "http://plain:8080"));
    proxy_env_free(pe);

    unsetenv("HTTPS_PROXY");
    pe = proxy_env_new(&oom);
    CHECK(same(proxy_env_for(pe, "https", "example.com"), "socks5h://lower:1080"));
    setenv("no_proxy", "example.com", 1); /* read at proxy_env_new only */
    CHECK(same(proxy_env_for(pe, "https", "example.com"), "socks5h://lower:1080"));
    proxy_env_free(pe);

    pe = proxy_env_new(&oom);
    CHECK(proxy_env_for(pe, "https", "www.example.com") == NULL);
    CHECK(same(proxy_env_for(pe, "http", "example.org"), "http://plain:8080"));
    proxy_env_free(pe);
    CHECK(proxy_env_for(NULL, "http", "example.com") == NULL);
    clear_env();
}

static void test_bypass_names(void)
{
    CHECK(proxy_env_bypass("*", "anything.test"));
    CHECK(!proxy_env_bypass("*,example.com", "anything.test")); /* "*" only alone */
    CHECK(proxy_env_bypass("example.com", "example.com"));
    CHECK(proxy_env_bypass("example.com", "WWW.Example.COM"));
    CHECK(proxy_env_bypass(".example.com", "example.com"));
    CHECK(proxy_env_bypass("example.com.", "a.b.example.com"));
    CHECK(proxy_env_bypass("example.com", "example.com.")); /* the host's trailing dot */
    CHECK(!proxy_env_bypass("example.com", "nonexample.com"));
    CHECK(!proxy_env_bypass("www.example.com", "example.com"));
    CHECK(proxy_env_bypass("a.test, b.test ,c.test", "x.b.test"));
    CHECK(proxy_env_bypass("a.test c.test", "c.test")); /* blanks separate too */
    CHECK(proxy_env_bypass(",,a.test,,", "a.test"));
    CHECK(!proxy_env_bypass("", "a.test"));
    CHECK(!proxy_env_bypass(".", "a.test"));
    CHECK(!proxy_env_bypass("a.test", ""));
    CHECK(!proxy_env_bypass("10.0.0.1", "10.0.0.1.example")); /* a name, not an address */
}

static void test_bypass_addresses(void)
{
    CHECK(proxy_env_bypass("127.0.0.1", "127.0.0.1"));
    CHECK(!proxy_env_bypass("127.0.0.1", "127.0.0.2"));
    CHECK(proxy_env_bypass("127.0.0.0/8", "127.1.2.3"));
    CHECK(!proxy_env_bypass("10.0.0.0/8", "127.1.2.3"));
    CHECK(proxy_env_bypass("192.168.4.0/22", "192.168.7.255"));
    CHECK(!proxy_env_bypass("192.168.4.0/22", "192.168.8.0"));
    CHECK(!proxy_env_bypass("0.0.0.0/0", "8.8.8.8")); /* as in curl, /0 is the address alone */
    CHECK(proxy_env_bypass("8.8.8.8/0", "8.8.8.8"));
    CHECK(!proxy_env_bypass("10.0.0.0/33", "10.0.0.0"));
    CHECK(!proxy_env_bypass("10.0.0.0/x", "10.0.0.0"));
    CHECK(!proxy_env_bypass("localhost", "127.0.0.1")); /* names are not looked up */
    CHECK(proxy_env_bypass("::1", "::1"));
    CHECK(proxy_env_bypass("::1", "[::1]"));
    CHECK(proxy_env_bypass("2001:db8::/32", "[2001:db8:1::7]"));
    CHECK(!proxy_env_bypass("2001:db8::/32", "2001:db9::7"));
    CHECK(!proxy_env_bypass("127.0.0.1", "[::1]"));
    CHECK(!proxy_env_bypass("::1", "[::1"));
}

int main(void)
{
    RUN(test_none_set);
    RUN(test_which_variable);
    RUN(test_bypass_names);
    RUN(test_bypass_addresses);
    return test_failures ? 1 : 0;
}
