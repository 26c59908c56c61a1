/* seen.c: the fingerprint set. Robin Hood linear probing over a uint64_t array;
 * 0 marks an empty slot. A fingerprint's home slot is fp * cap / 2^64 (the high
 * half of a 64x64 multiply), which spreads xxhash output evenly over any table
 * size, so the capacity need not be a power of two: it grows by 1.5x, which keeps
 * the memory per URL within 10..15 bytes where doubling would swing up to 20.
 *
 * Robin Hood keeps probe sequences short at a high load (0.8): an insert takes
 * the slot of any entry that sits closer to its own home, and a lookup stops as
 * soon as it meets an entry closer to home than the sought one would be. */
#include "seen.h"

#include <stdlib.h>

#define MIN_CAP 16
#define LOAD_NUM 4 /* grow past 4/5 full */
#define LOAD_DEN 5

__extension__ typedef unsigned __int128 u128;

struct seen {
    uint64_t *slots;
    size_t cap, count, limit;
};

static size_t home(uint64_t fp, size_t cap)
{
    return (size_t)(((u128)fp * cap) >> 64);
}

/* How far the entry at pos sits from its home slot. */
static size_t dist(uint64_t fp, size_t pos, size_t cap)
{
    size_t h = home(fp, cap);
    return pos >= h ? pos - h : pos + cap - h;
}

/* Insert fp, known to be absent, into a table with a free slot, from slot pos
 * at distance d from its home on. */
static void insert_at(uint64_t *slots, size_t cap, size_t pos, size_t d, uint64_t fp)
{
    for (;;) {
        uint64_t cur = slots[pos];
        if (!cur) {
            slots[pos] = fp;
            return;
        }
        size_t cd = dist(cur, pos, cap);
        if (cd < d) { /* take the slot from an entry nearer its home */
            slots[pos] = fp;
            fp = cur;
            d = cd;
        }
        if (++pos == cap) pos = 0;
        d++;
    }
}

static void place(uint64_t *slots, size_t cap, uint64_t fp)
{
    insert_at(slots, cap, home(fp, cap), 0, fp);
}

static int set_cap(seen_t *s, size_t cap)
{
    uint64_t *slots = calloc(cap, sizeof(*slots));
    if (!slots) return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i]) place(slots, cap, s->slots[i]);
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    s->limit = cap / LOAD_DEN * LOAD_NUM + cap % LOAD_DEN * LOAD_NUM / LOAD_DEN;
    return 0;
}

static size_t cap_for(size_t expected)
{
    size_t cap = expected / LOAD_NUM * LOAD_DEN + expected % LOAD_NUM * LOAD_DEN / LOAD_NUM + 1;
    return cap < MIN_CAP ? MIN_CAP : cap;
}

size_t seen_new_bytes(size_t expected)
{
    if (expected > SIZE_MAX / 16) return SIZE_MAX;
    return sizeof(seen_t) + cap_for(expected) * sizeof(uint64_t);
}

size_t seen_grow_bytes(const seen_t *s)
{
    return s->count < s->limit ? 0 : (s->cap + s->cap / 2) * sizeof(*s->slots);
}

seen_t *seen_new(size_t expected)
{
    if (expected > SIZE_MAX / 16) return NULL;
    seen_t *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    size_t cap = cap_for(expected);
    if (set_cap(s, cap) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void seen_free(seen_t *s)
{
    if (!s) return;
    free(s->slots);
    free(s);
}

void seen_prefetch(const seen_t *s, uint64_t fp)
{
    __builtin_prefetch(&s->slots[home(fp ? fp : 1, s->cap)]);
}

/* The lookup of seen_has for fp (not 0), stopped where an insert would go on from:
 * FOUND when fp is there, else that slot (its distance from fp's home is dist's).
 * Nothing of the caller's is taken by address: the lookup of every link stays in
 * registers. */
#define FOUND SIZE_MAX
static inline size_t probe(const seen_t *s, uint64_t fp)
{
    size_t p = home(fp, s->cap), n = 0;
    for (;;) {
        uint64_t cur = s->slots[p];
        if (cur == fp) return FOUND;
        if (!cur || dist(cur, p, s->cap) < n) return p;
        if (++p == s->cap) p = 0;
        n++;
    }
}

int seen_has(const seen_t *s, uint64_t fp)
{
    return probe(s, fp ? fp : 1) == FOUND;
}

int seen_add(seen_t *s, uint64_t fp)
{
    if (!fp) fp = 1;
    size_t pos = probe(s, fp);
    if (pos == FOUND) return 0;
    if (s->count < s->limit) {
        insert_at(s->slots, s->cap, pos, dist(fp, pos, s->cap), fp);
    } else {
        if (set_cap(s, s->cap + s->cap / 2) != 0) return -1;
        place(s->slots, s->cap, fp);
    }
    s->count++;
    return 1;
}

int seen_add_room(seen_t *s, uint64_t fp)
{
    if (!fp) fp = 1;
    size_t pos = probe(s, fp);
    if (pos == FOUND) return 0;
    if (s->count >= s->limit) return SEEN_FULL;
    insert_at(s->slots, s->cap, pos, dist(fp, pos, s->cap), fp);
    s->count++;
    return 1;
}

size_t seen_size(const seen_t *s)
{
    return s->count;
}

size_t seen_bytes(const seen_t *s)
{
    return sizeof(*s) + s->cap * sizeof(*s->slots);
}
