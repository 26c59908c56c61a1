/* url_internal.h: the seam between url.c (curl's paths) and url_fast.c (the paths
 * without curl), which their tests reach too: the curl-based paths the fast paths
 * must agree with, and the test that picks the fast path. */
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

#endif
