/* url_internal.h: the seams of the URL family. Between the curl-based paths (url.c,
 * url_normalize.c) and url_fast.c (the paths without curl), which their tests reach
 * too: the curl-based paths the fast paths must agree with, and the test that picks
 * the fast path. Between url.c and url_normalize.c: the scratch memory of a call, a
 * rendered URL's parts, and the steps both take. */
#ifndef LUACRAWL_URL_INTERNAL_H
#define LUACRAWL_URL_INTERNAL_H

#include "url.h"

/* url_normalize and url_resolve_normalize, always through curl. */
int url_normalize_slow(const char *url, const url_norm_opts_t *opts, char **out);
int url_resolve_normalize_slow(const char *base, const char *ref, const url_norm_opts_t *opts,
                               char **out);

/* RFC 3986 section 5.2.4 on an absolute path p (n bytes), in place; returns the new
 * length (url.c; url_fast.c takes it for a target with dot segments). */
size_t url_remove_dots(char *p, size_t n);

/* If url (n bytes) is already in the form url_normalize gives with default options
 * (and plainly so: the test is conservative), the length of that form (n, or up to
 * the '#' of a fragment); else 0. */
size_t url_normal_form(const char *url, size_t n);

/* url_resolve_base on the strings, when the base is prepared for it (or absent) and
 * ref is plain enough: a relative or absolute path, a query, a fragment or nothing,
 * "//" and an authority, or an absolute http(s) URL, with no byte clean() would
 * change, and opts no more than keep_fragment; and when the result is in normal
 * form; or when ref has another scheme than http(s), which url_resolve_normalize
 * refuses. -1 if not, else what url_resolve_base returns, *out set as it sets it. */
int url_resolve_fast(const url_base_t *b, const char *ref, const url_norm_opts_t *opts, char **out);

/* What url.c (resolution, parsing) and url_normalize.c (normalization) share. */

#include <curl/curl.h>

/* Scratch memory for one call: a bump allocator over a stack buffer that falls
 * back to malloc for long URLs, so that short ones cost no allocation of ours. */
#define SCRATCH_STACK 4096
#define SCRATCH_HEAP 4

typedef struct scratch {
    size_t used;
    int nheap;
    void *heap[SCRATCH_HEAP];
    void **more; /* heap blocks past the first SCRATCH_HEAP, nmore of them */
    int nmore;
    _Alignas(8) char stack[SCRATCH_STACK];
} scratch_t;

static inline void url_scratch_init(scratch_t *s)
{
    s->used = 0;
    s->nheap = 0;
    s->more = NULL;
    s->nmore = 0;
}
void *url_scratch_alloc(scratch_t *s, size_t n);
void url_scratch_free(scratch_t *s);

/* Offsets into a URL as curl renders it: "scheme://authority/path?query#fragment".
 * Each field is the index where that part starts (or would start) and ends. */
typedef struct split {
    size_t auth, path, query, frag, len;
} split_t;

/* The parts of u, a URL as curl renders it. */
void url_split_rendered(const char *u, split_t *s);

/* The browsers' pre-cleaning of a reference (src, n bytes; base the URL it is
 * resolved against, base_sl bytes of it to its last '/', or NULL) into dst, which
 * holds 3 * n + 1 bytes; the length written (url.c, which says more). */
size_t url_clean(const char *src, size_t n, const char *base, size_t base_sl, char *dst);
/* A curl URL API code as a URL_E_ code. */
int url_from_curl(CURLUcode rc);
/* Where the host of a URL rendered by curl starts, and ends (before any port). */
size_t url_host_start(const char *u, const split_t *s);
size_t url_host_end(const char *u, size_t h, const split_t *s);
/* *n = strlen(s); whether it is over URL_MAX_LENGTH. */
int url_too_long(const char *s, size_t *n);

/* curl_url_get, IDN hosts converted to punycode (url.c). */
CURLUcode url_get_part(CURLU *h, CURLUPart part, char **out, unsigned flags);

/* The URL of h rendered normalized by opts (may be NULL) into *res (*reslen bytes, in
 * sc's memory) (url_normalize.c). */
int url_render_normalized(CURLU *h, scratch_t *sc, const url_norm_opts_t *opts, char **res,
                          size_t *reslen);
/* err, or when it is URL_OK, s (len bytes) copied into *out (malloc'd). */
int url_malloc_copy(int err, const char *s, size_t len, char **out);
/* Whether the host of a URL we made would parse differently a second time (url.c). */
int url_host_reparses(const char *out);

#endif
