/* fuzz_json.c: json_decode (json.h) on arbitrary bytes. Besides memory safety, the
 * promises of json.h are checked: the callbacks come in a well-formed order (items
 * numbered from 1, every begin ended, nesting within JSON_MAX_DEPTH), strings are
 * valid UTF-8, a refusal names a place inside the text; and what was read, written
 * back as JSON (numbers with 17 digits, so they survive), reads back the same. */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct frame {
    int object;
    size_t items;  /* values completed in this container */
    int after_key; /* object: a name was read, its value is next */
} frame_t;

typedef struct trace {
    struct buf events; /* what the callbacks saw, in a form to compare */
    struct buf text;   /* the same written back as JSON */
    frame_t stack[JSON_MAX_DEPTH + 1];
    int depth;
    int finite; /* no infinities: the text can be written back */
} trace_t;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_json: %s\n", what);
    abort();
}

static void put(struct buf *b, const void *p, size_t n)
{
    if (buf_append(b, p, n) != 0) fail("out of memory");
}

/* A value starts: the comma before it, when it is not the first in its container. */
static void value_starts(trace_t *t, int is_string)
{
    if (t->depth == 0) return;
    frame_t *f = &t->stack[t->depth];
    if (f->object && !f->after_key) {
        if (!is_string) fail("a member name that is not a string");
        if (f->items) put(&t->text, ",", 1);
        return;
    }
    if (!f->object && f->items) put(&t->text, ",", 1);
}

/* A name was read in an object: its value is next. */
static int name_read(trace_t *t)
{
    frame_t *f = &t->stack[t->depth];
    if (t->depth > 0 && f->object && !f->after_key) {
        f->after_key = 1;
        put(&t->text, ":", 1);
        return 1;
    }
    return 0;
}

static int on_null(void *ud)
{
    trace_t *t = ud;
    value_starts(t, 0);
    put(&t->events, "n", 1);
    put(&t->text, "null", 4);
    return 0;
}

static int on_boolean(void *ud, int v)
{
    trace_t *t = ud;
    value_starts(t, 0);
    put(&t->events, v ? "t" : "f", 1);
    put(&t->text, v ? "true" : "false", v ? 4 : 5);
    return 0;
}

static int on_number(void *ud, double v)
{
    trace_t *t = ud;
    char tmp[40];
    value_starts(t, 0);
    if (isnan(v)) fail("NaN read");
    put(&t->events, "d", 1);
    put(&t->events, &v, sizeof(v));
    if (!isfinite(v)) {
        t->finite = 0;
        return 0;
    }
    int n = snprintf(tmp, sizeof(tmp), "%.17g", v);
    put(&t->text, tmp, (size_t)n);
    return 0;
}

/* The length of the UTF-8 sequence at p, 0 if it is not one (RFC 3629). */
static size_t utf8_seq(const unsigned char *p, const unsigned char *e)
{
    uint32_t cp;
    size_t n;
    if (p[0] < 0x80) return 1;
    if ((p[0] & 0xE0) == 0xC0)
        n = 2, cp = p[0] & 0x1F;
    else if ((p[0] & 0xF0) == 0xE0)
        n = 3, cp = p[0] & 0x0F;
    else if ((p[0] & 0xF8) == 0xF0)
        n = 4, cp = p[0] & 0x07;
    else
        return 0;
    if ((size_t)(e - p) < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

static int on_string(void *ud, const char *s, size_t n)
{
    trace_t *t = ud;
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        size_t k = utf8_seq(p, e);
        if (!k) fail("a string that is not UTF-8");
        p += k;
    }
    frame_t *f = &t->stack[t->depth];
    int is_name = t->depth > 0 && f->object && !f->after_key;
    value_starts(t, 1);
    put(&t->events, is_name ? "k" : "s", 1);
    put(&t->events, &n, sizeof(n));
    put(&t->events, s, n);
    if (json_put_string(&t->text, s, n) != 0) fail("out of memory");
    if (is_name) name_read(t);
    return 0;
}

static int on_begin(void *ud, int object)
{
    trace_t *t = ud;
    value_starts(t, 0);
    if (t->depth >= JSON_MAX_DEPTH) fail("nested deeper than JSON_MAX_DEPTH");
    t->stack[++t->depth] = (frame_t){object, 0, 0};
    put(&t->events, object ? "{" : "[", 1);
    put(&t->text, object ? "{" : "[", 1);
    return 0;
}

/* A value inside the container on top ended. */
static void value_ends(trace_t *t, int object)
{
    if (t->depth < 1) fail("item or member outside a container");
    frame_t *f = &t->stack[t->depth];
    if (f->object != object) fail("item in an object, or member in an array");
    if (object && !f->after_key) fail("member without a name");
    f->items++;
    f->after_key = 0;
}

static int on_item(void *ud, size_t index)
{
    trace_t *t = ud;
    value_ends(t, 0);
    if (index != t->stack[t->depth].items) fail("items not numbered 1, 2, ...");
    put(&t->events, "i", 1);
    return 0;
}

static int on_member(void *ud)
{
    trace_t *t = ud;
    value_ends(t, 1);
    put(&t->events, "m", 1);
    return 0;
}

static int on_end(void *ud, int object)
{
    trace_t *t = ud;
    if (t->depth < 1 || t->stack[t->depth].object != object) fail("end without its begin");
    if (t->stack[t->depth].after_key) fail("end after a name without its value");
    t->depth--;
    put(&t->events, object ? "}" : "]", 1);
    put(&t->text, object ? "}" : "]", 1);
    return 0;
}

static const json_reader_t READER = {on_null,  on_boolean, on_number, on_string,
                                     on_begin, on_item,    on_member, on_end};

/* Decode n bytes into t; the result of json_decode. */
static int decode(const char *s, size_t n, trace_t *t, struct buf *scratch)
{
    json_error_t err = {0, NULL};
    memset(t, 0, sizeof(*t));
    t->finite = 1;
    int rc = json_decode(s, n, &READER, t, scratch, &err);
    if (rc == -1 && (err.offset > n || !err.why)) fail("a refusal outside the text");
    if (rc == 0 && t->depth != 0) fail("accepted with a container left open");
    if (rc != 0 && rc != -1) fail("an unexpected result");
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static trace_t first, again;
    struct buf scratch = {0};
    if (decode((const char *)data, size, &first, &scratch) == 0 && first.finite) {
        if (decode(first.text.p ? first.text.p : "", first.text.n, &again, &scratch) != 0)
            fail("what was read, written back, is refused");
        if (again.events.n != first.events.n ||
            memcmp(again.events.p, first.events.p, first.events.n) != 0)
            fail("what was read, written back, reads differently");
        buf_free(&again.events);
        buf_free(&again.text);
    }
    buf_free(&first.events);
    buf_free(&first.text);
    buf_free(&scratch);
    return 0;
}
