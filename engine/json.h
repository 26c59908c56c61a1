/* json.h: JSON text appended to a growing buffer, in the form lua-cjson writes it
 * (the outputs' format since the first crawl): strings with '"', '\\', '/', DEL
 * and the C0 controls escaped and the other bytes as they are; numbers as "%.14g"
 * with a '.' for a decimal point whatever the locale. */
#ifndef LUACRAWL_JSON_H
#define LUACRAWL_JSON_H

#include "buf.h"

#include <stddef.h>

typedef struct buf json_buf_t;

/* Each returns 0, or -1 when out of memory (the buffer is left as it was). Raw
 * bytes go in with buf_append. */
int json_put_string(json_buf_t *b, const char *s, size_t n); /* quoted and escaped */

/* 0, -1 when out of memory, -2 for NaN or an infinity (JSON has none). */
int json_put_number(json_buf_t *b, double v);

#endif
