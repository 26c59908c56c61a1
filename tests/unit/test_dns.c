/* Unit tests of engine/dns.c against the dnsmasq that tests/fixtures/run.py starts
 * (LC_DNS_SERVER): answers, the TTL cache, negative entries, one query per name,
 * pacing of bursts; and against dns_faults.py (LC_DNS_FAULTS): retries of timed-out
 * queries, and what each failure is called. */
#include "dns.h"
#include "test.h"

#include <ares.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct result {
    int done;
    enum dns_status status;
    char addr[64];
    char msg[256];
    double ttl;
};

static void on_answer(void *arg, const dns_answer_t *ans)
{
    struct result *r = arg;
    r->done = 1;
    r->status = ans->status;
    r->ttl = ans->ttl;
    if (ans->naddrs) snprintf(r->addr, sizeof(r->addr), "%s", ans->addrs[0]);
    if (ans->error) snprintf(r->msg, sizeof(r->msg), "%s", ans->error);
}

static loop_t *loop;
static dns_t *dns;
static const char *faults_server; /* LC_DNS_FAULTS */

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

static void resolve_with(dns_t *d, const char *host, struct result *r)
{
    memset(r, 0, sizeof(*r));
    CHECK(dns_resolve(d, host, on_answer, r) != NULL);
    CHECK(r->done == 0); /* never answered inside dns_resolve */
}

static void resolve(const char *host, struct result *r)
{
    resolve_with(dns, host, r);
}

/* A resolver of its own (fresh statistics) on server; c-ares tries once, for
 * timeout_ms, so that what is retried is ours. */
static dns_t *new_resolver(const char *server, int timeout_ms)
{
    char err[256];
    dns_t *d = dns_new(loop, server, err, sizeof(err));
    if (!d) {
        fprintf(stderr, "dns_new: %s\n", err);
        exit(1);
    }
    dns_set_timeout(d, timeout_ms, 1);
    return d;
}

/* Run the loop until nothing is left to do (every query answered). */
static void settle(void)
{
    while (loop_run_once(loop, 1) > 0) {
    }
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

#define BURST 1500

static void a_burst_of_new_names_all_resolve_with_bounded_queries_out(void)
{
    static struct result r[BURST];
    char name[64];
    dns_t *d = new_resolver(getenv("LC_DNS_SERVER"), 1500);
    dns_set_timeout(d, 1500, 2); /* the defaults: what a crawl has */
    for (int i = 0; i < BURST; i++) {
        snprintf(name, sizeof(name), "h%d.burst.crawl.test", i);
        resolve_with(d, name, &r[i]);
    }
    dns_stats_t st;
    dns_get_stats(d, &st);
    CHECK(st.waiting == (unsigned long)(BURST - dns_defaults.max_inflight));
    wait_all(r, BURST);
    int failed = 0;
    for (int i = 0; i < BURST; i++) {
        if (r[i].status != DNS_OK || strcmp(r[i].addr, "127.0.0.1") != 0) {
            if (failed++ < 5) fprintf(stderr, "  h%d: %s\n", i, r[i].msg);
        }
    }
    CHECK(failed == 0);
    dns_get_stats(d, &st);
    CHECK(st.queries == BURST);
    CHECK(st.peak == (unsigned long)dns_defaults.max_inflight);
    CHECK(st.waiting == 0);
    dns_free(d);
}

static void pacing_holds_to_the_limit_set(void)
{
    struct result r[20];
    char name[64];
    dns_t *d = new_resolver(getenv("LC_DNS_SERVER"), 1500);
    dns_set_pacing(d, 3);
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "p%d.burst.crawl.test", i);
        resolve_with(d, name, &r[i]);
    }
    wait_all(r, 20);
    dns_stats_t st;
    dns_get_stats(d, &st);
    CHECK(st.peak == 3);
    for (int i = 0; i < 20; i++)
        CHECK(r[i].status == DNS_OK);
    dns_free(d);
}

static void queued_lookups_nobody_waits_for_are_not_sent(void)
{
    struct result r[5];
    dns_wait_t *w[5];
    char name[64];
    dns_t *d = new_resolver(getenv("LC_DNS_SERVER"), 1500);
    dns_set_pacing(d, 1);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "c%d.burst.crawl.test", i);
        memset(&r[i], 0, sizeof(r[i]));
        w[i] = dns_resolve(d, name, on_answer, &r[i]);
    }
    for (int i = 1; i < 5; i++)
        dns_cancel(d, w[i]);
    settle();
    dns_stats_t st;
    dns_get_stats(d, &st);
    CHECK(r[0].done && r[0].status == DNS_OK);
    CHECK(st.queries == 1);
    resolve_with(d, "c3.burst.crawl.test", &r[3]); /* asked afresh */
    wait_all(&r[3], 1);
    CHECK(r[3].status == DNS_OK);
    dns_free(d);
}

static void a_lookup_nobody_waits_for_does_not_hold_the_loop(void)
{
    struct result r;
    dns_t *d = new_resolver(faults_server, 5000);
    int before = loop_refs(loop);
    memset(&r, 0, sizeof(r));
    dns_wait_t *w = dns_resolve(d, "timeout.fault.test", on_answer, &r);
    CHECK(loop_refs(loop) == before + 1);
    dns_cancel(d, w); /* a request's timeout: the query goes on, the run may end */
    CHECK(loop_refs(loop) == before);
    dns_free(d);
    CHECK(loop_refs(loop) == before);
}

static void a_timed_out_query_is_sent_again_before_it_fails(void)
{
    struct result r;
    dns_t *d = new_resolver(faults_server, 500);
    resolve_with(d, "drop1-unit.fault.test", &r); /* the first query is lost */
    wait_all(&r, 1);
    CHECK(r.status == DNS_OK);
    CHECK(strcmp(r.addr, "127.0.0.2") == 0);
    dns_stats_t st;
    dns_get_stats(d, &st);
    CHECK(st.retries == 1);
    CHECK(st.queries == 2);
    /* Without retries, the same loss is a failure. */
    dns_set_retries(d, 0);
    resolve_with(d, "drop1-noretry.fault.test", &r);
    wait_all(&r, 1);
    CHECK(r.status == DNS_TIMEOUT);
    dns_free(d);
}

static void a_timeout_is_cached_for_less_time_than_nxdomain(void)
{
    struct result t, n;
    dns_t *d = new_resolver(faults_server, 300);
    resolve_with(d, "timeout.fault.test", &t);
    resolve_with(d, "nxdomain.fault.test", &n);
    wait_all(&t, 1);
    wait_all(&n, 1);
    CHECK(t.status == DNS_TIMEOUT);
    CHECK(strstr(t.msg, "no DNS server answered in time") != NULL);
    CHECK(n.status == DNS_NOTFOUND);
    CHECK(t.ttl < n.ttl);
    dns_stats_t st;
    dns_get_stats(d, &st);
    CHECK(st.retries == (unsigned long)dns_defaults.retries); /* the timeout, not the NXDOMAIN */
    dns_free(d);
}

static void each_server_failure_says_what_happened(void)
{
    static const struct {
        const char *name;
        enum dns_status status;
        const char *msg;
    } cases[] = {
        {"refused.fault.test", DNS_FAILED, "DNS server refused the query"},
        {"servfail.fault.test", DNS_FAILED, "SERVFAIL"},
        {"formerr.fault.test", DNS_FAILED, "FORMERR"},
        {"notimp.fault.test", DNS_FAILED, "NOTIMP"},
        {"garbage.fault.test", DNS_FAILED, "malformed reply"},
        {"nxdomain.fault.test", DNS_NOTFOUND, "no such host"},
        {"zero.fault.test", DNS_NOTFOUND, "no usable address"},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    struct result r[N];
    dns_t *d = new_resolver(faults_server, 1000);
    for (int i = 0; i < N; i++)
        resolve_with(d, cases[i].name, &r[i]);
    wait_all(r, N);
    for (int i = 0; i < N; i++) {
        if (r[i].status != cases[i].status || !strstr(r[i].msg, cases[i].msg)) {
            fprintf(stderr, "  %s: status %d, '%s'\n", cases[i].name, r[i].status, r[i].msg);
            test_failures++;
        }
    }
    dns_free(d);
}

static void a_server_that_is_not_listening_says_so(void)
{
    struct result r;
    dns_t *d = new_resolver("127.0.0.1:1", 300);
    resolve_with(d, "ok.fault.test", &r);
    wait_all(&r, 1);
    CHECK(r.status != DNS_OK);
    CHECK(strstr(r.msg, "could not reach any DNS server") || strstr(r.msg, "in time"));
    dns_free(d);
}

/* Every descriptor the process may have in use: c-ares has no socket for the query.
 * The lookup ends at once as a shortage of descriptors, said as a connection's is,
 * and is not cached: with descriptors back the same name resolves. */
static void no_descriptor_for_the_query_is_a_resource_failure(void)
{
    const char *server = getenv("LC_DNS_SERVER");
    dns_t *d = new_resolver(server, 1000); /* opens its files before the table fills */
    struct rlimit old, low;
    CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
    low = old;
    low.rlim_cur = 128;
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    int fds[128], nfds = 0;
    while (nfds < 128 && (fds[nfds] = dup(0)) >= 0)
        nfds++;
    CHECK(nfds < 128); /* the table is full */

    struct result r;
    double start = loop_time();
    resolve_with(d, "a.crawl.test", &r);
    wait_all(&r, 1);
    CHECK(r.status == DNS_RESOURCE);
    CHECK(strstr(r.msg, "too many open files: the process's limit of 128 is reached") != NULL);
    CHECK(loop_time() - start < 0.5);

    while (nfds > 0)
        close(fds[--nfds]);
    CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
    resolve_with(d, "a.crawl.test", &r);
    wait_all(&r, 1);
    CHECK(r.status == DNS_OK);
    CHECK(strcmp(r.addr, "127.0.0.2") == 0);
    dns_free(d);
}

static void every_ares_status_has_a_meaning_of_its_own(void)
{
    const char *msg;
    CHECK(dns_ares_status(ARES_SUCCESS, &msg) == DNS_OK && msg == NULL);
    CHECK(dns_ares_status(ARES_ENOTFOUND, &msg) == DNS_NOTFOUND);
    CHECK(dns_ares_status(ARES_ENODATA, &msg) == DNS_NOTFOUND);
    CHECK(dns_ares_status(ARES_ETIMEOUT, &msg) == DNS_TIMEOUT);
    CHECK(dns_ares_status(ARES_EREFUSED, &msg) == DNS_FAILED);
    CHECK(strcmp(msg, "DNS server refused the query") == 0);
    CHECK(dns_ares_status(ARES_ENOMEM, &msg) == DNS_MEMORY);
    /* Every other code a lookup can end with: a failure with a message of ours,
     * never c-ares's own text. */
    for (int code = ARES_ENODATA; code <= ARES_ESERVICE; code++) {
        enum dns_status st = dns_ares_status(code, &msg);
        CHECK(st != DNS_OK);
        CHECK(msg != NULL && strcmp(msg, ares_strerror(code)) != 0);
    }
}

int main(void)
{
    const char *server = getenv("LC_DNS_SERVER");
    if (!server) {
        fprintf(stderr, "LC_DNS_SERVER is not set: run through tests/fixtures/run.py --dns\n");
        return 1;
    }
    faults_server = getenv("LC_DNS_FAULTS");
    if (!faults_server) {
        fprintf(stderr, "LC_DNS_FAULTS is not set: run through tests/fixtures/run.py "
                        "--dns-faults\n");
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
    RUN(a_burst_of_new_names_all_resolve_with_bounded_queries_out);
    RUN(pacing_holds_to_the_limit_set);
    RUN(queued_lookups_nobody_waits_for_are_not_sent);
    RUN(a_lookup_nobody_waits_for_does_not_hold_the_loop);
    RUN(a_timed_out_query_is_sent_again_before_it_fails);
    RUN(a_timeout_is_cached_for_less_time_than_nxdomain);
    RUN(each_server_failure_says_what_happened);
    RUN(a_server_that_is_not_listening_says_so);
    RUN(no_descriptor_for_the_query_is_a_resource_failure);
    RUN(every_ares_status_has_a_meaning_of_its_own);
    dns_free(dns);
    loop_free(loop);
    printf("%s\n", test_failures ? "FAILED" : "all passed");
    return test_failures ? 1 : 0;
}
