/* Unit tests of engine/dns.c against the dnsmasq that tests/fixtures/run.py starts
 * (LC_DNS_SERVER): answers, the TTL cache, negative entries, one query per name. */
#include "dns.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

struct result {
    int done;
    enum dns_status status;
    char addr[64];
    double ttl;
};

static void on_answer(void *arg, const dns_answer_t *ans)
{
    struct result *r = arg;
    r->done = 1;
    r->status = ans->status;
    r->ttl = ans->ttl;
    if (ans->naddrs) snprintf(r->addr, sizeof(r->addr), "%s", ans->addrs[0]);
}

static loop_t *loop;
static dns_t *dns;

static void wait_all(struct result *r, int n)
{
    for (;;) {
        int done = 1;
        for (int i = 0; i < n; i++)
            done &= r[i].done;
        if (done) return;
        loop_run_once(loop, 1);
    }
}

static void resolve(const char *host, struct result *r)
{
    memset(r, 0, sizeof(*r));
    CHECK(dns_resolve(dns, host, on_answer, r) != NULL);
    CHECK(r->done == 0); /* never answered inside dns_resolve */
}

static void names_only_the_test_server_knows_resolve(void)
{
    struct result r;
    resolve("a.crawl.test", &r);
    wait_all(&r, 1);
    CHECK(r.status == DNS_OK);
    CHECK(strcmp(r.addr, "127.0.0.2") == 0);
    CHECK(r.ttl > 200 && r.ttl <= 300);
}

static void unknown_names_fail_fast_as_not_found(void)
{
    struct result r;
    double start = loop_time();
    resolve("nope.crawl.test", &r);
    wait_all(&r, 1);
    CHECK(r.status == DNS_NOTFOUND);
    CHECK(loop_time() - start < 1.0);
}

static void concurrent_lookups_share_one_query(void)
{
    dns_stats_t before, after;
    dns_get_stats(dns, &before);
    struct result r[50];
    for (int i = 0; i < 50; i++)
        resolve("b.crawl.test", &r[i]);
    wait_all(r, 50);
    dns_get_stats(dns, &after);
    CHECK(after.queries - before.queries == 1);
    CHECK(after.coalesced - before.coalesced == 49);
    for (int i = 0; i < 50; i++)
        CHECK(strcmp(r[i].addr, "127.0.0.3") == 0);
}

static void cached_answers_need_no_query(void)
{
    dns_stats_t before, after;
    struct result r;
    resolve("a.crawl.test", &r); /* cached by the first test */
    dns_get_stats(dns, &before);
    wait_all(&r, 1);
    resolve("A.Crawl.Test.", &r); /* same name, other spelling */
    wait_all(&r, 1);
    dns_get_stats(dns, &after);
    CHECK(after.queries == before.queries);
    CHECK(r.status == DNS_OK);
}

static void negative_answers_are_cached(void)
{
    dns_stats_t before, after;
    struct result r;
    dns_get_stats(dns, &before);
    resolve("nope.crawl.test", &r); /* failed in an earlier test */
    wait_all(&r, 1);
    dns_get_stats(dns, &after);
    CHECK(r.status == DNS_NOTFOUND);
    CHECK(after.queries == before.queries);
}

static void answers_expire_after_their_ttl(void)
{
    struct result r;
    dns_set_ttl(dns, 0.2, 0.2, 0.2); /* clamp every TTL to 0.2 s */
    resolve("c.crawl.test", &r);
    wait_all(&r, 1);
    CHECK(r.ttl <= 0.2);
    dns_stats_t before, after;
    dns_get_stats(dns, &before);
    resolve("c.crawl.test", &r);
    wait_all(&r, 1);
    dns_get_stats(dns, &after);
    CHECK(after.queries == before.queries); /* still fresh */
    double until = loop_time() + 0.3;
    while (loop_time() < until)
        loop_run_once(loop, 0);
    resolve("c.crawl.test", &r);
    wait_all(&r, 1);
    dns_get_stats(dns, &after);
    CHECK(after.queries == before.queries + 1); /* expired: asked again */
    CHECK(r.status == DNS_OK);
    dns_set_ttl(dns, 60, 3600, 60);
}

static void ip_literals_and_hosts_file_need_no_query(void)
{
    dns_stats_t before, after;
    struct result r[3];
    dns_get_stats(dns, &before);
    resolve("127.0.0.9", &r[0]);
    resolve("[::1]", &r[1]);
    wait_all(r, 2);
    dns_get_stats(dns, &after);
    CHECK(after.queries == before.queries);
    CHECK(strcmp(r[0].addr, "127.0.0.9") == 0);
    CHECK(strcmp(r[1].addr, "::1") == 0);
    resolve("localhost", &r[2]); /* from /etc/hosts, answered by c-ares itself */
    wait_all(&r[2], 1);
    CHECK(r[2].status == DNS_OK);
    CHECK(strcmp(r[2].addr, "127.0.0.1") == 0);
}

static void cancelled_waits_are_not_answered(void)
{
    struct result r[2];
    memset(r, 0, sizeof(r));
    dns_wait_t *w = dns_resolve(dns, "d-cancel.crawl.test", on_answer, &r[0]);
    resolve("d-cancel.crawl.test", &r[1]);
    dns_cancel(dns, w);
    wait_all(&r[1], 1);
    CHECK(r[0].done == 0);
}

int main(void)
{
    const char *server = getenv("LC_DNS_SERVER");
    if (!server) {
        fprintf(stderr, "LC_DNS_SERVER is not set: run through tests/fixtures/run.py --dns\n");
        return 1;
    }
    char err[256];
    loop = loop_new();
    dns = dns_new(loop, server, err, sizeof(err));
    if (!dns) {
        fprintf(stderr, "dns_new: %s\n", err);
        return 1;
    }
    RUN(names_only_the_test_server_knows_resolve);
    RUN(unknown_names_fail_fast_as_not_found);
    RUN(concurrent_lookups_share_one_query);
    RUN(cached_answers_need_no_query);
    RUN(negative_answers_are_cached);
    RUN(answers_expire_after_their_ttl);
    RUN(ip_literals_and_hosts_file_need_no_query);
    RUN(cancelled_waits_are_not_answered);
    dns_free(dns);
    loop_free(loop);
    printf("%s\n", test_failures ? "FAILED" : "all passed");
    return test_failures ? 1 : 0;
}
