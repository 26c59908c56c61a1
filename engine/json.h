/* json.h: JSON text appended to a growing buffer, in the form lua-cjson writes it
 * (the outputs' format since the first crawl): strings with '"', '\\', '/', DEL
 * and the C0 controls escaped and the other bytes as they are; numbers as "%.14g"
 * with a '.' for a decimal point whatever the locale. Where cjson copies bytes
 * through, strings are made valid UTF-8 and safe to print (json_put_string).
 *
 * And JSON text read back: a strict RFC 8259 parser that reports the values it reads
 * to callbacks, so that the caller builds its own (lua_json.c builds Lua tables). */
#ifndef LUACRAWL_JSON_H
#define LUACRAWL_JSON_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct buf json_buf_t;

/* Each returns 0, or -1 when out of memory (the buffer is left as it was). Raw
 * bytes go in with buf_append. */

/* s quoted and escaped. The text written is always valid UTF-8, whatever s holds
 * (a server's header bytes): each ill-formed sequence of s becomes one U+FFFD, by
 * the "maximal subpart" rule of Unicode (section 3.9) and WHATWG's decoder. The
 * C1 controls (U+0080..U+009F), U+2028 and U+2029 are written as \u escapes too.
 * On valid UTF-8 without those, the output is cjson's, byte for byte. */
int json_put_string(json_buf_t *b, const char *s, size_t n);

/* s as plain text safe to print on a terminal or to put in a CSV cell: ill-formed
 * UTF-8 replaced as json_put_string does; the C0 controls (but those whose bit is set
 * in keep: 1u << '\t' | 1u << '\n' keeps tabs and newlines) and DEL written as
 * their Unicode Control Pictures (ESC as U+241B, DEL as U+2421), and the C1
 * controls as U+FFFD, so none of them reaches a terminal raw. */
int json_put_plain(json_buf_t *b, const char *s, size_t n, uint32_t keep);

/* 0, -1 when out of memory, -2 for NaN or an infinity (JSON has none). */
int json_put_number(json_buf_t *b, double v);

/* The decoder's callbacks. Each returns 0 to go on; anything else (not -1 or -2)
 * stops the parse, and json_decode returns it. A value is reported by null, boolean, number or
 * string, or by begin, its items and end. After each value inside an array comes
 * item, with its 1-based index; inside an object, each member's name is reported
 * by string, then its value, then member. Strings are valid UTF-8, their escapes
 * decoded; s is only valid during the call. */
typedef struct json_reader {
    int (*null)(void *ud);
    int (*boolean)(void *ud, int v);
    int (*number)(void *ud, double v);
    int (*string)(void *ud, const char *s, size_t n);
    int (*begin)(void *ud, int object); /* '[' (object 0) or '{' (object 1) */
    int (*item)(void *ud, size_t index);
    int (*member)(void *ud);
    int (*end)(void *ud, int object);
} json_reader_t;

typedef struct json_error {
    size_t offset;   /* of the byte where the text went wrong, from 0 */
    const char *why; /* a static string: "expected ':'", "invalid UTF-8", ... */
} json_error_t;

/* Arrays and objects nested deeper than this are refused (as lua-cjson does). */
#define JSON_MAX_DEPTH 1000

/* Parse the n bytes of text as one JSON value (RFC 8259: any value at the top,
 * whitespace around it, a UTF-8 byte order mark before it ignored) and report it
 * to r. scratch holds the strings that have escapes while they are reported; the
 * caller owns it, so a callback may leave by longjmp without a leak. Numbers out
 * of a double's range become infinities, as strtod makes them.
 * Returns 0; -1 for text that is not JSON (err says where and why); -2 when out
 * of memory; or what a callback returned to stop. */
int json_decode(const char *text, size_t n, const json_reader_t *r, void *ud, json_buf_t *scratch,
                json_error_t *err);

#endif
