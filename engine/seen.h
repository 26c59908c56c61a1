/* seen.h: a set of 64-bit URL fingerprints (url_fingerprint) for "have we queued
 * this URL already?". It stores the fingerprints alone, 8 bytes a slot, in one
 * open-addressing table (Robin Hood linear probing), never the URLs.
 *
 * Memory: the table grows by 1.5x when it is 80% full, so it holds between 10 and
 * 15 bytes per URL at any size past the first few dozen (plus 32 bytes of header);
 * while it grows, the old and the new table live together for a moment (up to 25
 * bytes per URL). Two URLs whose fingerprints collide count as one: at 64 bits
 * that is a chance of about n^2 / 2^65 (3e-8 for a million URLs). The
 * fingerprint 0 is stored as 1, so those two are one too. */
#ifndef LUACRAWL_SEEN_H
#define LUACRAWL_SEEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct seen seen_t;

/* A set sized for `expected` fingerprints without growing (0: start small).
 * NULL when out of memory. */
seen_t *seen_new(size_t expected);
void seen_free(seen_t *s);

/* Add fp: 1 when it was new, 0 when it was there already, -1 when the set had to
 * grow and there was no memory (fp was not added). */
int seen_add(seen_t *s, uint64_t fp);
int seen_has(const seen_t *s, uint64_t fp);

/* seen_add within the table there is: SEEN_FULL (fp not added) when fp is new and
 * the set would have to grow, which its owner counts first (seen_grow_bytes). One
 * call for a link's fingerprint where most are there already. */
#define SEEN_FULL (-2)
int seen_add_room(seen_t *s, uint64_t fp);
/* A hint: fp will be looked up soon. Asking for a page's links first lets their
 * cache misses overlap instead of coming one after another. */
void seen_prefetch(const seen_t *s, uint64_t fp);

/* Bytes seen_new(expected) takes (SIZE_MAX: more than can be), and bytes the next
 * seen_add of a new fingerprint takes for the bigger table (0: it fits; the old
 * one is freed after): so that a caller with a budget can refuse first. */
size_t seen_new_bytes(size_t expected);
size_t seen_grow_bytes(const seen_t *s);

size_t seen_size(const seen_t *s);
/* Bytes the set holds on the heap now. */
size_t seen_bytes(const seen_t *s);

#endif
