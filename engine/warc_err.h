/* warc_err.h: how the writer (warc.c) and the reader (warc_read.c) fill a
 * warc_err_t. Internal to those two files. */
#ifndef LUACRAWL_WARC_ERR_H
#define LUACRAWL_WARC_ERR_H

#include <stdarg.h>
#include <stdio.h>

#include "warc.h"

/* Set err to kind and the formatted message; returns -1 for `return set_err(...)`. */
static inline int set_err(warc_err_t *err, enum warc_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int set_err(warc_err_t *err, enum warc_kind kind, const char *fmt, ...)
{
    va_list ap;
    err->kind = kind;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

static inline int oom(warc_err_t *err)
{
    return set_err(err, WARC_E_MEMORY, "out of memory");
}

#endif
