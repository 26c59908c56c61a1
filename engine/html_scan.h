/* html_scan.h: the fast link scan (html_scan.c): start tags, attributes and the
 * title of decoded UTF-8 text in one pass, no tree, giving what libxml2's HTML parser
 * gives. html.c's html_scan_body is its one caller. */
#ifndef LUACRAWL_HTML_SCAN_H
#define LUACRAWL_HTML_SCAN_H

#include <stddef.h>

/* The scan behind html_scan_body (html_scan.c), over UTF-8 text as html_parse decodes
 * it: text must hold no NUL (libxml2 reads one as a space; the scan does not look
 * for them, as that decoding leaves none). It reads start tags and attributes as
 * libxml2's HTML parser does, in one pass that builds nothing. tag is called in
 * document order for each start tag named in tags (lower case, NULL-ended), with
 * the tag's name and attributes as libxml2's startElement gets them: NULL-ended
 * name, value pairs (names lower-cased, the first of a name kept, values decoded;
 * NULL for an attribute without a value), or NULL without attributes. *title (when
 * title is not NULL) gets the first <title>'s text, unsquashed (malloc'd; NULL when
 * there is none). The attributes are stored in *kept (appended, with room reserved
 * up front: they are never moved), and stay good until the caller frees it; the
 * array that lists them is good for the call only. 0 when done; 1 when the scan is not
 * sure to agree with libxml2 and gave up; -1 when out of memory or when tag returned
 * nonzero. */
struct buf;
typedef int (*html_tag_fn)(void *arg, const char *name, const char *const *atts);
int html_scan_tags(const char *text, size_t len, const char *const *tags, html_tag_fn tag,
                   void *arg, char **title, struct buf *kept);

/* Whether two tag or attribute names are the same: inline, for the scan's hot path,
 * where a call to strcmp costs more than comparing a few bytes. */
static inline int html_name_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

#endif
