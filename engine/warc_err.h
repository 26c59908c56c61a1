/* warc_err.h: what a failed call of the WARC writer or reader says (warc.h includes
 * it): a kind and a message. How the warc_*.c files fill one is in warc_internal.h. */
#ifndef LUACRAWL_WARC_ERR_H
#define LUACRAWL_WARC_ERR_H

enum warc_kind {
    WARC_OK = 0,
    WARC_E_IO,        /* a file could not be opened, written, renamed or read (errno's message) */
    WARC_E_MEMORY,    /* out of memory */
    WARC_E_FORMAT,    /* the data is not WARC (or not gzip where it says it is) */
    WARC_E_TRUNCATED, /* the data ends inside a record: a writer killed mid-write */
    WARC_E_USAGE,     /* a value the caller should not have given (a URL with CR or LF...) */
};

typedef struct warc_err {
    enum warc_kind kind;
    char message[512];
} warc_err_t;

/* "io", "memory", "format", "truncated", "usage": err.kind in Lua. */
const char *warc_kind_name(enum warc_kind kind);

#endif
