/* dupes.c: the digest map. Open addressing with linear probing over a power-of-two
 * table; a digest's home slot is its high 64 bits masked (XXH3's output is uniform),
 * and a slot with len 0 is empty (a stored URL counts one more than its length, so
 * an empty URL is stored too). The table doubles past 3/4 full; the URL buffer
 * doubles when the next URL does not fit. Nothing is ever removed. */
#include "dupes.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64
#define MIN_TEXT 4096

struct slot {
    uint64_t hi, lo;
    uint64_t off; /* where the URL starts in text */
    uint32_t len; /* its length + 1; 0: the slot is empty */
    uint32_t pad;
};

struct dupes {
    struct slot *slots;
    size_t cap, count;
    char *text;
    size_t text_len, text_cap;
};

dupes_t *dupes_new(void)
{
    dupes_t *d = calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->slots = calloc(MIN_CAP, sizeof(*d->slots));
    if (!d->slots) {
        free(d);
        return NULL;
    }
    d->cap = MIN_CAP;
    return d;
}

void dupes_free(dupes_t *d)
{
    if (!d) return;
    free(d->slots);
    free(d->text);
    free(d);
}

static size_t probe(const dupes_t *d, uint64_t hi, uint64_t lo)
{
    size_t mask = d->cap - 1, i = (size_t)hi & mask;
    while (d->slots[i].len && (d->slots[i].hi != hi || d->slots[i].lo != lo))
        i = (i + 1) & mask;
    return i;
}

static int table_full(const dupes_t *d)
{
    return (d->count + 1) * 4 > d->cap * 3;
}

static size_t text_cap_for(const dupes_t *d, size_t url_len)
{
    size_t cap = d->text_cap ? d->text_cap : MIN_TEXT;
    while (cap - d->text_len < url_len)
        cap *= 2;
    return cap;
}

size_t dupes_grow_bytes(const dupes_t *d, size_t url_len)
{
    size_t bytes = 0;
    if (table_full(d)) bytes += d->cap * 2 * sizeof(struct slot);
    if (!d->text || d->text_cap - d->text_len < url_len) bytes += text_cap_for(d, url_len);
    return bytes;
}

static int grow_table(dupes_t *d)
{
    size_t cap = d->cap * 2;
    struct slot *slots = calloc(cap, sizeof(*slots));
    if (!slots) return -1;
    struct slot *old = d->slots;
    size_t old_cap = d->cap;
    d->slots = slots;
    d->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].len) d->slots[probe(d, old[i].hi, old[i].lo)] = old[i];
    free(old);
    return 0;
}

int dupes_find(const dupes_t *d, const uint64_t digest[2], const char **first, size_t *first_len)
{
    const struct slot *s = &d->slots[probe(d, digest[0], digest[1])];
    if (!s->len) return 0;
    *first = d->text + s->off;
    *first_len = s->len - 1;
    return 1;
}

int dupes_add(dupes_t *d, const uint64_t digest[2], const char *url, size_t url_len)
{
    if (url_len >= UINT32_MAX) return -1;
    if (!d->text || d->text_cap - d->text_len < url_len) {
        size_t cap = text_cap_for(d, url_len);
        char *text = realloc(d->text, cap);
        if (!text) return -1;
        d->text = text;
        d->text_cap = cap;
    }
    if (table_full(d) && grow_table(d) < 0) return -1;
    uint64_t hi = digest[0], lo = digest[1];
    if (url_len) memcpy(d->text + d->text_len, url, url_len);
    d->slots[probe(d, hi, lo)] = (struct slot){hi, lo, d->text_len, (uint32_t)url_len + 1, 0};
    d->text_len += url_len;
    d->count++;
    return 0;
}

size_t dupes_size(const dupes_t *d)
{
    return d->count;
}

size_t dupes_bytes(const dupes_t *d)
{
    return sizeof(*d) + d->cap * sizeof(struct slot) + d->text_cap;
}
