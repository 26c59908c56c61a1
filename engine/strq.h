/* strq.h: a FIFO of byte strings, held in blocks of malloc'd memory. lc.queue keeps
 * the strings put in it here (lua_queue.c), outside the Lua heap: a crawl's queue
 * of thousands of URLs would otherwise be as many strings that the collector sweeps
 * every cycle and that every new string is looked up among. */
#ifndef LUACRAWL_STRQ_H
#define LUACRAWL_STRQ_H

#include <stddef.h>

typedef struct strq strq_t;

/* An empty FIFO (it takes no block until the first push); NULL when out of memory. */
strq_t *strq_new(void);
void strq_free(strq_t *q);

/* Append the len bytes at s; 0, or -1 when out of memory (q unchanged). */
int strq_push(strq_t *q, const char *s, size_t len);

/* Take out the oldest string: its bytes in *s, good until the next call on q, and
 * its length in *len; 0, or -1 when q is empty. */
int strq_pop(strq_t *q, const char **s, size_t *len);

/* How many strings q holds, and the bytes of memory it takes. */
size_t strq_count(const strq_t *q);
size_t strq_bytes(const strq_t *q);

#endif
