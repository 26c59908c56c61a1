/* strq.c: the FIFO of strq.h. Each string is its length (a size_t) and its bytes,
 * written one after the other in the tail block and read from the head block;
 * blocks grow from 1 KB to 64 KB as the FIFO does, a string longer than that gets
 * a block of its own, and a block read to its end is freed (one of 64 KB is kept
 * for the next). */
#include "strq.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_MIN 1024
#define BLOCK_MAX (64 * 1024)

struct block {
    struct block *next;
    size_t cap, used, read; /* bytes of data, written, read up to */
    char data[];
};

struct strq {
    struct block *head, *tail; /* read from head, written to tail */
    struct block *spare;       /* a free block of BLOCK_MAX bytes */
    size_t count, bytes, next_cap;
};

strq_t *strq_new(void)
{
    strq_t *q = calloc(1, sizeof(*q));
    if (q) q->next_cap = BLOCK_MIN;
    return q;
}

void strq_free(strq_t *q)
{
    if (!q) return;
    for (struct block *b = q->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(q->spare);
    free(q);
}

/* A block for at least need bytes: the spare, or a new one. */
static struct block *new_block(strq_t *q, size_t need)
{
    struct block *b;
    if (q->spare && need <= q->spare->cap) {
        b = q->spare;
        q->spare = NULL;
    } else {
        size_t cap = need > q->next_cap ? need : q->next_cap;
        if (cap > SIZE_MAX - sizeof(*b) || !(b = malloc(sizeof(*b) + cap))) return NULL;
        b->cap = cap;
        q->bytes += cap;
        if (q->next_cap < BLOCK_MAX) q->next_cap *= 2;
    }
    b->next = NULL;
    b->used = b->read = 0;
    return b;
}

static void drop_block(strq_t *q, struct block *b)
{
    if (!q->spare && b->cap == BLOCK_MAX) {
        q->spare = b;
        return;
    }
    q->bytes -= b->cap;
    free(b);
}

int strq_push(strq_t *q, const char *s, size_t len)
{
    if (len > SIZE_MAX - sizeof(len)) return -1;
    size_t need = sizeof(len) + len;
    struct block *b = q->tail;
    if (b && q->count == 0) /* all read: write from the start again */
        b->used = b->read = 0;
    if (!b || b->cap - b->used < need) {
        b = new_block(q, need);
        if (!b) return -1;
        if (q->tail)
            q->tail->next = b;
        else
            q->head = b;
        q->tail = b;
    }
    memcpy(b->data + b->used, &len, sizeof(len));
    if (len) memcpy(b->data + b->used + sizeof(len), s, len);
    b->used += need;
    q->count++;
    return 0;
}

int strq_pop(strq_t *q, const char **s, size_t *len)
{
    if (!q->count) return -1;
    struct block *b = q->head;
    while (b->read == b->used) { /* read to its end: the next holds the string */
        q->head = b->next;
        drop_block(q, b);
        b = q->head;
    }
    memcpy(len, b->data + b->read, sizeof(*len));
    *s = b->data + b->read + sizeof(*len);
    b->read += sizeof(*len) + *len;
    q->count--;
    return 0;
}

size_t strq_count(const strq_t *q)
{
    return q->count;
}

size_t strq_bytes(const strq_t *q)
{
    return q->bytes;
}
