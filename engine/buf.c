/* buf.c: the growing byte buffer (buf.h). */
#include "buf.h"

#include <stdlib.h>

int buf_grow(struct buf *b, size_t more)
{
    size_t cap = b->cap ? b->cap : more > 256 ? more : 256;
    while (cap - b->n < more) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

void buf_free(struct buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

void buf_reset(struct buf *b, size_t keep)
{
    if (b->cap > keep)
        buf_free(b);
    else
        b->n = 0;
}
