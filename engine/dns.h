/* dns.h: name resolution with c-ares on the loop, and a cache of answers.
 *
 * One query per name however many callers wait on it; answers cached for their
 * TTL (clamped to [ttl_min, ttl_max]), failures cached as negative entries; IP
 * literals answered without a query and /etc/hosts consulted by c-ares first.
 * At most max_inflight queries are out at once (the rest wait their turn in
 * order), and a query that timed out is sent again, afresh, before its failure is
 * cached. Results are always delivered from a deferred call, never inside
 * dns_resolve. */
#ifndef LUACRAWL_DNS_H
#define LUACRAWL_DNS_H

#include "loop.h"

#include <stddef.h>

typedef struct dns dns_t;
typedef struct dns_wait dns_wait_t;

enum dns_status {
    DNS_OK = 0,
    DNS_NOTFOUND, /* NXDOMAIN, or no address of the family asked for */
    DNS_TIMEOUT,  /* no server answered, after the retries */
    DNS_FAILED,   /* SERVFAIL, REFUSED, a bad name, any other failure */
    DNS_MEMORY,   /* out of memory (ours or c-ares's): never cached */
    DNS_RESOURCE, /* no socket for the query (EMFILE, ENFILE), or the loop could not
                   * watch it: never cached */
};

/* What a c-ares status means, as the one table dns.c maps them with: the status
 * and a message a user understands ("DNS server refused the query"). NULL message
 * for ARES_SUCCESS. Exposed for the tests. */
enum dns_status dns_ares_status(int ares_status, const char **message);

typedef struct dns_answer {
    enum dns_status status;
    const char *error; /* human message when status != DNS_OK */
    int naddrs;
    const char **addrs; /* textual addresses, IPv6 without brackets */
    double ttl;         /* seconds the answer stays cached from now */
} dns_answer_t;

typedef void (*dns_fn)(void *arg, const dns_answer_t *answer);

typedef struct dns_stats {
    unsigned long queries;   /* queries sent to c-ares */
    unsigned long hits;      /* answered from the cache or a literal */
    unsigned long coalesced; /* joined a query already in flight */
    unsigned long entries;   /* names in the cache now */
    unsigned long retries;   /* timed-out queries sent again */
    unsigned long waiting;   /* queries waiting for a free slot now (max_inflight) */
    unsigned long peak;      /* the most queries out at once so far */
} dns_stats_t;

/* A resolver's settings, each changed by its setter below. */
typedef struct dns_config {
    double ttl_min, ttl_max, ttl_negative; /* dns_set_ttl */
    int timeout_ms, tries;                 /* dns_set_timeout */
    int max_inflight;                      /* dns_set_pacing */
    int retries;                           /* dns_set_retries */
} dns_config_t;

/* What dns_new starts with: the one place the defaults are written (dns.c). */
extern const dns_config_t dns_defaults;

/* The settings of dns now: a caller that changes one of a setter's values passes
 * the others as they are. */
void dns_get_config(const dns_t *dns, dns_config_t *config);

/* servers: NULL for /etc/resolv.conf, or "HOST[:PORT][,...]". On failure returns
 * NULL and writes a message to err. */
dns_t *dns_new(loop_t *loop, const char *servers, char *err, size_t errlen);
void dns_free(dns_t *dns);

/* Clamp positive TTLs to [min, max] seconds; negative answers live `negative`
 * seconds (timeouts and server failures a sixth of that, at least one second). */
void dns_set_ttl(dns_t *dns, double min, double max, double negative);
/* Query timeout per try in milliseconds and number of tries. */
void dns_set_timeout(dns_t *dns, int timeout_ms, int tries);
/* At most max_inflight (at least 1) queries out at once. */
void dns_set_pacing(dns_t *dns, int max_inflight);
/* A lookup that timed out (every try of every server) is queried again, afresh, up
 * to `retries` times (0: never) before its failure is cached. */
void dns_set_retries(dns_t *dns, int retries);

/* Look up host; fn(arg, answer) is called once from a deferred call, unless the
 * wait is cancelled first. The answer is valid only during the call. Returns NULL
 * when out of memory. */
dns_wait_t *dns_resolve(dns_t *dns, const char *host, dns_fn fn, void *arg);
void dns_cancel(dns_t *dns, dns_wait_t *wait);
/* 1 when wait's answer is known already (cached, a literal): it comes on the next
 * turn, without a query; 0 while a query is queued or out. */
int dns_wait_ready(const dns_wait_t *wait);

void dns_get_stats(const dns_t *dns, dns_stats_t *stats);

#endif
