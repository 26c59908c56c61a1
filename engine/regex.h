/* regex.h: PCRE2 patterns for the crawler. A pattern is compiled once in UTF mode (with
 * Unicode properties for \w, \d, \b and case folding), JIT-compiled when PCRE2 can, and
 * matched against subjects that need not be valid UTF-8: invalid sequences simply never
 * match a character. Each pattern owns one match block, reused by every match, so a
 * pattern is not reentrant: read a match's offsets before matching with it again.
 *
 * The type is not called regex_t so as not to clash with POSIX <regex.h>. */
#ifndef LUACRAWL_REGEX_H
#define LUACRAWL_REGEX_H

#include <stddef.h>

typedef struct regex_pattern regex_pattern_t;

/* Compile options. */
enum {
    REGEX_CASELESS = 1 << 0,  /* "i" */
    REGEX_EXTENDED = 1 << 1,  /* "x": whitespace and #comments in the pattern are ignored */
    REGEX_DOTALL = 1 << 2,    /* "s": . matches newlines too */
    REGEX_MULTILINE = 1 << 3, /* "m": ^ and $ match at every line */
};

/* Match options. */
enum {
    REGEX_ANCHORED = 1 << 0,         /* match only at the start offset */
    REGEX_NOTEMPTY_ATSTART = 1 << 1, /* an empty match at the start offset does not count */
};

/* What regex_exec found. */
enum regex_status {
    REGEX_MATCH = 1,
    REGEX_NOMATCH = 0,
    REGEX_LIMIT = -1, /* the match, depth or heap limit stopped a runaway match */
    REGEX_ERROR = -2, /* anything else PCRE2 refused (out of memory) */
};

/* Backtracking steps one match may take (PCRE2's own default). With JIT, the
 * catastrophic (a+)+$ against 40 a's and a "!" gives up after about 10 ms; without JIT,
 * after about 100 ms. */
#define REGEX_MATCH_LIMIT 10000000u
/* Memory, in KiB, the interpreter may take for backtracking (PCRE2's default is 20 GB). */
#define REGEX_HEAP_LIMIT (64u * 1024u)

/* Compile pattern (len bytes, NULs allowed). NULL on failure, with err set to PCRE2's
 * message and *erroffset to the byte offset in the pattern where it gave up. */
regex_pattern_t *regex_compile(const char *pattern, size_t len, unsigned flags, size_t *erroffset,
                               char *err, size_t errlen);
void regex_free(regex_pattern_t *re);

/* The pattern's source, its compile flags, and its number of capturing groups. */
const char *regex_source(const regex_pattern_t *re, size_t *len);
unsigned regex_flags(const regex_pattern_t *re);
int regex_ncaptures(const regex_pattern_t *re);
/* Whether PCRE2's JIT compiled the pattern (matching falls back to the interpreter
 * when it did not, and when the JIT stack runs out). */
int regex_jitted(const regex_pattern_t *re);

/* Search subject from byte offset start (<= len). On REGEX_MATCH, regex_group gives the
 * offsets; on an error status, err says which limit was hit. */
enum regex_status regex_exec(regex_pattern_t *re, const char *subject, size_t len, size_t start,
                             unsigned options, char *err, size_t errlen);

/* Byte offsets [*so, *eo) of group i (0 is the whole match) of the last match; 0 when the
 * group did not take part in it. */
int regex_group(const regex_pattern_t *re, int i, size_t *so, size_t *eo);

/* The number of the named group name, or -1. */
int regex_group_number(const regex_pattern_t *re, const char *name, size_t len);

#endif
