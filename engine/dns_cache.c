/* dns_cache.c: the resolver's answer cache (dns_internal.h): one entry per name in a
 * hash table that doubles as it fills, up to MAX_ENTRIES; when full, expired idle
 * entries go first, then any idle ones. dns.c decides what an entry holds and when
 * it expires. */
#include "dns_internal.h"

#include <stdlib.h>
#include <string.h>

unsigned dns_hash_host(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

struct entry *dns_cache_find(dns_t *dns, const char *host, unsigned hash)
{
    struct entry *e = dns->buckets[hash & (dns->nbuckets - 1)];
    for (; e; e = e->hnext)
        if (e->hash == hash && strcmp(e->host, host) == 0) return e;
    return NULL;
}

static void grow_buckets(dns_t *dns)
{
    size_t n = dns->nbuckets * 2;
    if (n == 0) return; /* dns_new made the table: never 0 */
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    struct entry **b = calloc(n, sizeof(*b));
    if (!b) return; /* keep the old table: longer chains, still correct */
    for (size_t i = 0; i < dns->nbuckets; i++) {
        struct entry *e = dns->buckets[i], *next;
        for (; e; e = next) {
            next = e->hnext;
            e->hnext = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(dns->buckets);
    dns->buckets = b;
    dns->nbuckets = n;
}

void dns_entry_clear(struct entry *e)
{
    for (int i = 0; i < e->naddrs; i++)
        free(e->addrs[i]);
    e->naddrs = 0;
    free(e->error);
    e->error = NULL;
}

void dns_entry_free(struct entry *e)
{
    dns_entry_clear(e);
    free(e->host);
    free(e);
}

/* Called when the cache is full: drop expired idle entries, and if that frees
 * less than a quarter of the table, any idle entries. O(entries), but amortised
 * over the quarter of the table it frees. */
static void evict(dns_t *dns)
{
    double now = loop_now(dns->loop);
    size_t target = MAX_ENTRIES * 3 / 4;
    for (int pass = 0; pass < 2 && dns->nentries > target; pass++) {
        for (size_t i = 0; i < dns->nbuckets && dns->nentries > target; i++) {
            struct entry **p = &dns->buckets[i];
            while (*p && dns->nentries > target) {
                struct entry *e = *p;
                if (entry_idle(e) && (pass == 1 || e->expires <= now)) {
                    *p = e->hnext;
                    dns->nentries--;
                    dns_entry_free(e);
                } else {
                    p = &e->hnext;
                }
            }
        }
    }
}

struct entry *dns_cache_add(dns_t *dns, const char *host, unsigned hash)
{
    if (dns->nentries >= MAX_ENTRIES) evict(dns);
    if (dns->nentries >= dns->nbuckets) grow_buckets(dns);
    struct entry *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->host = strdup(host);
    if (!e->host) {
        free(e);
        return NULL;
    }
    e->hash = hash;
    e->dns = dns;
    size_t b = hash & (dns->nbuckets - 1);
    e->hnext = dns->buckets[b];
    dns->buckets[b] = e;
    dns->nentries++;
    return e;
}
