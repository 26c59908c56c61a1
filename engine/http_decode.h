/* http_decode.h: content decoding of response bodies (gzip, deflate, br, zstd).
 *
 * Ours rather than curl's (CURLOPT_ACCEPT_ENCODING decodes too): curl 7.88 ends a
 * transfer whose compressed stream stopped before its end marker as a success, so
 * a body cut in half with a matching Content-Length passed as whole. Here the end of
 * each stream is known (http_decoder_finish), and the decoded bytes come out in
 * pieces the caller checks against its limits before it keeps them. */
#ifndef LUACRAWL_HTTP_DECODE_H
#define LUACRAWL_HTTP_DECODE_H

#include <stddef.h>

typedef struct http_decoder http_decoder_t;

/* Takes n decoded bytes; 0 to go on, anything else stops the decoding (returned by
 * http_decoder_feed). */
typedef int (*http_decode_fn)(void *arg, const char *data, size_t n);

/* The Accept-Encoding value for the codings this build decodes ("deflate, gzip, br,
 * zstd" or fewer); "" for none. */
const char *http_decode_accept(void);

/* A decoder for a Content-Encoding value (codings applied in the order listed,
 * undone in reverse; "identity" and empty entries are skipped). *d is NULL when
 * there is nothing to undo. -1 with a message in err for a coding this build does
 * not decode or too many of them, -2 when out of memory. */
int http_decoder_new(const char *content_encoding, http_decoder_t **d, char *err, size_t errlen);
void http_decoder_free(http_decoder_t *d);

/* Feed n encoded bytes; out gets the decoded ones. 0, out's non-zero result, or -1
 * with a message in err when the data is not valid in its coding (or memory ran
 * out: err says so). Bytes after the end of the outermost stream are ignored, as
 * curl and browsers do. */
int http_decoder_feed(http_decoder_t *d, const char *data, size_t n, http_decode_fn out, void *arg,
                      char *err, size_t errlen);

/* At the end of the body: 0 when every stream reached its end marker, else -1 with
 * a message in err (the body was cut short). A decoder fed nothing is complete: an
 * empty body is not a truncated one. */
int http_decoder_finish(const http_decoder_t *d, char *err, size_t errlen);

#endif
