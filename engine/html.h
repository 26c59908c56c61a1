/* html.h: HTML documents on libxml2. Parsing decodes the body to UTF-8 with the HTML
 * spec's encoding detection first, so libxml2 always reads clean UTF-8; link
 * extraction walks the tree once and resolves with url.h. Knows nothing of Lua or
 * the loop.
 *
 * Strings returned malloc'd are freed by the caller with free(). */
#ifndef LUACRAWL_HTML_H
#define LUACRAWL_HTML_H

#include <libxml/tree.h>
#include <stddef.h>
#include <stdint.h>

/* Parse an HTML body in recovery mode: never fails on malformed markup, invalid
 * bytes or NULs (undecodable bytes become U+FFFD, NUL bytes are dropped, as a
 * browser shows them). The encoding is chosen in the HTML spec's order: a byte order
 * mark (UTF-8, UTF-16LE, UTF-16BE); the transport's charset label (http_charset, may
 * be NULL); a <meta charset> or <meta http-equiv=Content-Type> found by the spec's
 * prescan of the first 1024 bytes, or of the whole body (a browser meeting a
 * late <meta> decodes again in its encoding); windows-1252. *encoding (if not NULL) gets the
 * WHATWG name used. NULL only when out of memory. Free with xmlFreeDoc. */
xmlDocPtr html_parse(const char *body, size_t len, const char *http_charset, const char **encoding);

/* Which links html_links reports. <a href>, <area href> and <meta http-equiv=refresh>
 * targets always. */
enum {
    HTML_LINKS_LINK = 1 << 0,   /* <link href> */
    HTML_LINKS_FRAMES = 1 << 1, /* <iframe src>, <frame src> */
    HTML_LINKS_IMG = 1 << 2,    /* <img src> */
    HTML_LINKS_TEXT = 1 << 3,   /* fill html_link_t.text */
    /* html_scan_body and html_links_body only, for tests and measurements: */
    HTML_LINKS_FORCE_SAX = 1 << 4, /* libxml2's SAX pass, never the fast scan */
    HTML_LINKS_FAST_ONLY = 1 << 5, /* the fast scan alone: 1 where it is not sure */
};

typedef struct html_link {
    char *url;       /* absolute, normalized http(s) URL, no fragment */
    const char *tag; /* of its first occurrence: "a", "area", "link", "iframe", "frame",
                        "img", "meta" */
    char *text;      /* with HTML_LINKS_TEXT: the first occurrence's squashed text (<a>)
                        or alt (<area>, <img>), else ""; NULL without */
    int nofollow;    /* every occurrence has rel=nofollow */
    size_t len;      /* of url */
    uint64_t hash;   /* url_hash(url, len): its fingerprint, url being normalized */
    int normal;      /* url is in the form url_host_port_fast takes */
} html_link_t;

typedef struct html_links {
    html_link_t *v;
    size_t n, cap;
    struct html_strings *strings; /* where the urls are kept (html.c) */
} html_links_t;

/* The links of doc in document order, each URL once. Relative references resolve
 * against the first <base href> (itself resolved against doc_url), else doc_url;
 * without either only absolute references are kept. javascript:, mailto:, data:,
 * tel: and whatever does not resolve to http(s) are skipped. 0, or -1 when out of
 * memory; free with html_links_free either way. */
int html_links(xmlDocPtr doc, const char *doc_url, unsigned flags, html_links_t *out);
void html_links_free(html_links_t *links);

/* The same links straight from a body (decoded as html_parse does, *encoding likewise),
 * in one pass that builds no tree (see html_scan_body): for a caller that wants only
 * the links, many times faster than html_parse followed by html_links. */
int html_links_body(const char *body, size_t len, const char *http_charset, const char *doc_url,
                    unsigned flags, html_links_t *out, const char **encoding);

/* html_links_body that also returns, in *title (malloc'd, squashed as html_title;
 * NULL when the page has none), the first <title>'s text: what a crawler records of
 * a page without building its tree.
 *
 * Both take a tokenizer-level scan of the decoded text (html_scan_tags) that gives
 * what the SAX pass gives, and take the SAX pass for the rare pages the scan is not
 * sure of, and whenever HTML_LINKS_TEXT asks for link text. */
int html_scan_body(const char *body, size_t len, const char *http_charset, const char *doc_url,
                   unsigned flags, html_links_t *out, char **title, const char **encoding);

/* The value of attribute name (lower case) of an element: without a copy when it is
 * one text node (the usual case), else a copy in *owned (xmlFree it; NULL if no copy
 * was made). NULL if the attribute is absent, "" if it has no value. */
const char *html_attr(xmlNodePtr node, const char *name, xmlChar **owned);

/* The text content of node (all descendant text, as in the document); with squash,
 * runs of ASCII whitespace become one space and the ends are trimmed. NULL when out
 * of memory. */
char *html_text(xmlNodePtr node, int squash, size_t *len);

/* The squashed text of the first <title>, or NULL if there is none. */
char *html_title(xmlDocPtr doc, size_t *len);

/* Outer HTML of an element (or the whole document for the document node). */
char *html_serialize(xmlDocPtr doc, xmlNodePtr node, size_t *len);

#endif
