/* buf.h: a growing byte buffer: response bodies and headers (http.c), the text the
 * HTML code decodes and collects, the text the JSON writer makes. The common case,
 * room to spare, is inline: the HTML scan appends to one for every attribute it
 * keeps. */
#ifndef LUACRAWL_BUF_H
#define LUACRAWL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
    char *p; /* NULL until something is added */
    size_t n, cap;
};

/* buf_reserve when the room is not there. The first allocation is what is asked (at
 * least 256 bytes): a body is sized to its Content-Length at once. Later the
 * capacity doubles until there is room. */
int buf_grow(struct buf *b, size_t more);

/* Room for more bytes after the n used; 0, or -1 when out of memory (b unchanged). */
static inline int buf_reserve(struct buf *b, size_t more)
{
    return b->p && b->cap - b->n >= more ? 0 : buf_grow(b, more);
}

/* Append n bytes of s and keep a NUL after them (not counted in n); 0, or -1 when
 * out of memory (b unchanged). */
static inline int buf_append(struct buf *b, const void *s, size_t n)
{
    if (n == SIZE_MAX || buf_reserve(b, n + 1) != 0) return -1;
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

void buf_free(struct buf *b);

/* Empty b; keep its memory for the next use when it is at most keep bytes. */
void buf_reset(struct buf *b, size_t keep);

#endif
