/* dns_internal.h: the resolver's structs, shared by dns.c (the c-ares channel on the
 * loop, waiters and deliveries) and dns_cache.c (the answer cache: a hash table of
 * entries, one per name). Internal to those two files. */
#ifndef LUACRAWL_DNS_INTERNAL_H
#define LUACRAWL_DNS_INTERNAL_H

#include "dns.h"

#include <ares.h>

#define MAX_ENTRIES 65536
#define MAX_ADDRS 16
#define MAX_HOST 255

struct dns_wait {
    struct dns_wait *prev, *next;
    struct entry *entry;
    dns_fn fn;
    void *arg;
};

enum entry_state { PENDING, RESOLVED };

struct entry {
    struct entry *hnext; /* hash chain */
    char *host;
    unsigned hash;
    enum entry_state state;
    enum dns_status status;
    char *error;
    int naddrs;
    char *addrs[MAX_ADDRS];
    double expires;
    struct dns_wait *waiters, *waiters_tail;
    int deliver_scheduled;
    int undelivered; /* in dns->undelivered: its deferred delivery failed */
    struct entry *unext;
    int retries_left;    /* fresh queries still allowed after a timeout */
    int holds_loop;      /* PENDING with waiters: a loop reference (hold_loop) */
    struct entry *qnext; /* in dns->queue while waiting for a slot */
    dns_t *dns;
};

struct dns {
    loop_t *loop;
    ares_channel channel;
    loop_timer_t *timer;
    struct entry **buckets;
    size_t nbuckets, nentries;
    int inflight;              /* queries given to c-ares */
    int max_inflight, retries; /* dns_set_pacing, dns_set_retries */
    int timeout_ms, tries;     /* dns_set_timeout */
    int nservers;
    struct entry *queue_head, *queue_tail; /* PENDING, waiting for a slot */
    int destroying;
    struct entry *undelivered; /* RESOLVED, waiting for pump to defer delivery */
    int sock_errno;            /* EMFILE/ENFILE from c-ares's last socket() */
    /* A failure recorded inside a c-ares callback, for pump: it cancels the
     * channel's queries and they end with this status and message. */
    enum dns_status trouble;
    const char *trouble_msg;
    int cancelling; /* ares_cancel on behalf of trouble: see on_addrinfo */
    double ttl_min, ttl_max, ttl_negative;
    dns_stats_t stats;
};

/* Resolved, with nobody waiting and nothing to deliver: the entry may be evicted or
 * queried afresh. */
static inline int entry_idle(const struct entry *e)
{
    return e->state == RESOLVED && !e->waiters && !e->deliver_scheduled && !e->undelivered;
}

/* The cache (dns_cache.c). */
unsigned dns_hash_host(const char *s);
/* The entry of host, NULL when there is none. */
struct entry *dns_cache_find(dns_t *dns, const char *host, unsigned hash);
/* A new entry for host (its hash given), in the table; evicts idle entries first
 * when the cache is full. NULL when out of memory. */
struct entry *dns_cache_add(dns_t *dns, const char *host, unsigned hash);
/* Forget e's addresses and failure. */
void dns_entry_clear(struct entry *e);
/* Free e (no longer in the table). */
void dns_entry_free(struct entry *e);

#endif
