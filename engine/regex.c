/* regex.c: a thin layer over PCRE2 (8-bit): compile in UTF mode with JIT when available,
 * match with limits so a runaway pattern ends in an error instead of a hang. Knows
 * nothing of Lua. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct regex_pattern {
    pcre2_code *code;
    pcre2_match_data *md; /* reused by every match: see regex.h */
    pcre2_match_context *mctx;
    unsigned flags;
    int ncaptures;
    int jitted;
    size_t srclen;
    char src[]; /* the pattern, NUL-terminated, for messages */
};

static void set_error(int code, char *err, size_t errlen)
{
    PCRE2_UCHAR msg[256];
    if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
        snprintf((char *)msg, sizeof(msg), "PCRE2 error %d", code);
    snprintf(err, errlen, "%s", (const char *)msg);
}

static uint32_t compile_options(unsigned flags)
{
    /* UCP: \w, \d, \b and the POSIX classes follow Unicode, so \bcafé\b matches. */
    uint32_t opt = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
    if (flags & REGEX_CASELESS) opt |= PCRE2_CASELESS;
    if (flags & REGEX_EXTENDED) opt |= PCRE2_EXTENDED;
    if (flags & REGEX_DOTALL) opt |= PCRE2_DOTALL;
    if (flags & REGEX_MULTILINE) opt |= PCRE2_MULTILINE;
    return opt;
}

regex_pattern_t *regex_compile(const char *pattern, size_t len, unsigned flags, size_t *erroffset,
                               char *err, size_t errlen)
{
    int code;
    PCRE2_SIZE off = 0;
    *erroffset = 0;
    regex_pattern_t *re = calloc(1, sizeof(*re) + len + 1);
    if (!re) goto nomem;
    memcpy(re->src, pattern, len);
    re->srclen = len;
    re->flags = flags;
    re->code = pcre2_compile((PCRE2_SPTR)pattern, len, compile_options(flags), &code, &off, NULL);
    if (!re->code) {
        set_error(code, err, errlen);
        *erroffset = off;
        free(re);
        return NULL;
    }
    /* Without JIT support (or for a pattern JIT cannot take) pcre2_match interprets. */
    re->jitted = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
    re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
    re->mctx = pcre2_match_context_create(NULL);
    if (!re->md || !re->mctx) goto fail;
    pcre2_set_match_limit(re->mctx, REGEX_MATCH_LIMIT);
    pcre2_set_heap_limit(re->mctx, REGEX_HEAP_LIMIT);
    uint32_t n = 0;
    pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &n);
    re->ncaptures = (int)n;
    return re;
fail:
    regex_free(re);
nomem:
    snprintf(err, errlen, "out of memory");
    return NULL;
}

void regex_free(regex_pattern_t *re)
{
    if (!re) return;
    pcre2_match_context_free(re->mctx);
    pcre2_match_data_free(re->md);
    pcre2_code_free(re->code);
    free(re);
}

const char *regex_source(const regex_pattern_t *re, size_t *len)
{
    if (len) *len = re->srclen;
    return re->src;
}

unsigned regex_flags(const regex_pattern_t *re)
{
    return re->flags;
}

int regex_ncaptures(const regex_pattern_t *re)
{
    return re->ncaptures;
}

int regex_jitted(const regex_pattern_t *re)
{
    return re->jitted;
}

static uint32_t match_options(unsigned options)
{
    uint32_t opt = 0;
    if (options & REGEX_ANCHORED) opt |= PCRE2_ANCHORED;
    if (options & REGEX_NOTEMPTY_ATSTART) opt |= PCRE2_NOTEMPTY_ATSTART;
    return opt;
}

enum regex_status regex_exec(regex_pattern_t *re, const char *subject, size_t len, size_t start,
                             unsigned options, char *err, size_t errlen)
{
    uint32_t opt = match_options(options);
    int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, start, opt, re->md, re->mctx);
    /* The JIT runs on a small machine-stack block; rather than size a JIT stack for the
     * worst pattern, let the interpreter (heap frames, bounded by the heap limit) retry. */
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, start, opt | PCRE2_NO_JIT, re->md,
                         re->mctx);
    if (rc >= 0) return REGEX_MATCH; /* 0: the ovector was too small, cannot happen here */
    if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL) return REGEX_NOMATCH;
    set_error(rc, err, errlen);
    switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
    case PCRE2_ERROR_HEAPLIMIT:
        return REGEX_LIMIT;
    default:
        return REGEX_ERROR;
    }
}

int regex_group(const regex_pattern_t *re, int i, size_t *so, size_t *eo)
{
    if (i < 0 || (uint32_t)i >= pcre2_get_ovector_count(re->md)) return 0;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
    if (ov[2 * i] == PCRE2_UNSET) return 0;
    *so = ov[2 * i];
    *eo = ov[2 * i + 1];
    return 1;
}

int regex_group_number(const regex_pattern_t *re, const char *name, size_t len)
{
    char buf[128];
    if (len == 0 || len >= sizeof(buf)) return -1;
    memcpy(buf, name, len);
    buf[len] = '\0';
    int n = pcre2_substring_number_from_name(re->code, (PCRE2_SPTR)buf);
    return n < 0 ? -1 : n;
}
