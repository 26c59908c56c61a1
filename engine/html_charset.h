/* html_charset.h: a body's encoding, found as the HTML spec finds it, and the body
 * decoded to clean UTF-8 (html_charset.c), for html_parse and html_scan_body; and the
 * lookup of encoding labels. */
#ifndef LUACRAWL_HTML_CHARSET_H
#define LUACRAWL_HTML_CHARSET_H

#include "buf.h"

#include <stddef.h>

/* The WHATWG name of the encoding an encoding label stands for ("latin1" ->
 * "windows-1252", "sjis" -> "Shift_JIS"), or NULL for a label the Encoding Standard
 * does not know. Surrounding ASCII whitespace and case are ignored. */
const char *html_encoding_label(const char *label, size_t len);

/* A body decoded. */
typedef struct html_decoded {
    const char *encoding; /* the WHATWG name of the encoding used */
    const char *text;     /* n bytes of valid UTF-8 without NULs: the body itself (after */
    size_t n;             /* any byte order mark) when it needed no change, else buf's bytes */
    struct buf buf;       /* the decoded copy, when one was made: the caller frees buf.p */
} html_decoded_t;

/* Decode body (len bytes) as html_parse documents it (html.h): the encoding from a
 * byte order mark, else from http_charset (may be NULL), else from the prescan of the
 * first 1024 bytes, else of the whole body, else windows-1252; undecodable bytes become U+FFFD,
 * NULs are dropped. d->encoding is set in every case; 0, or -1 when out of memory (d->buf.p is
 * still the caller's to free). */
int html_charset_decode(const char *body, size_t len, const char *http_charset, html_decoded_t *d);

#endif
