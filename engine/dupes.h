/* dupes.h: the content digests a crawl has met, each with the URL of the first page
 * whose body had it, for "is this body a copy of one fetched before, and of which
 * page?". Outside the Lua heap: a table of 32-byte slots (the 128-bit digest, where
 * the URL starts and its length) and the URLs end to end in one buffer, about 80
 * bytes a distinct body plus its URL, where a Lua table of the same held several
 * hundred and made the collector walk them every cycle. */
#ifndef LUACRAWL_DUPES_H
#define LUACRAWL_DUPES_H

#include <stddef.h>
#include <stdint.h>

typedef struct dupes dupes_t;

/* An empty map; NULL when out of memory. */
dupes_t *dupes_new(void);
void dupes_free(dupes_t *d);

/* The digest (its two 64-bit halves, the high one first, as digest128 gives them)
 * is in the map: 1, with *first and *first_len the URL it came with (valid until
 * the next dupes_add); else 0. */
int dupes_find(const dupes_t *d, const uint64_t digest[2], const char **first, size_t *first_len);

/* Add a digest that is not in the map, with its URL: 0, or -1 when out of memory
 * (nothing added). */
int dupes_add(dupes_t *d, const uint64_t digest[2], const char *url, size_t url_len);

/* Bytes the next dupes_add with a URL of url_len bytes may allocate (0: it fits
 * as is), so that a caller with a budget can refuse first. */
size_t dupes_grow_bytes(const dupes_t *d, size_t url_len);

size_t dupes_size(const dupes_t *d);
/* Bytes the map holds on the heap now. */
size_t dupes_bytes(const dupes_t *d);

#endif
