/* html.c: HTML documents on libxml2: parsing, link extraction, text and
 * serialisation. libxml2 reads the body as html_charset.c decodes it, clean UTF-8,
 * with HTML_PARSE_IGNORE_ENC, so a <meta> later in the page cannot switch encodings;
 * html_scan.c is the fast scan behind html_scan_body. */
#include "html.h"

#include "ascii.h"
#include "buf.h"
#include "html_charset.h"
#include "html_scan.h"
#include "url.h"

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/parserInternals.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- parsing ---- */

/* Recovery mode, silent, no network; no implied DOCTYPE; compact text nodes; no
 * depth or size limits (libxml2 otherwise drops a document nested deeper than 256
 * elements, all of it); and the encoding is ours, not the page's. */
#define PARSE_OPTIONS                                                                              \
    (HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET |           \
     HTML_PARSE_NODEFDTD | HTML_PARSE_COMPACT | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE)

xmlDocPtr html_parse(const char *body, size_t len, const char *http_charset, const char **encoding)
{
    html_decoded_t d;
    int rc = html_charset_decode(body, len, http_charset, &d);
    if (encoding) *encoding = d.encoding;
    if (rc != 0) {
        free(d.buf.p);
        return NULL;
    }
    xmlDocPtr doc = NULL;
    if (d.n > 0 && d.n <= INT_MAX)
        doc = htmlReadMemory(d.text, (int)d.n, NULL, "UTF-8", PARSE_OPTIONS);
    free(d.buf.p);
    /* Nothing to parse (or nothing libxml2 kept): an empty document. */
    if (!doc) doc = htmlNewDocNoDtD(NULL, NULL);
    return doc;
}

/* ---- walking, text, title, serialisation ---- */

/* The node after n in document order, staying inside top; descend into n's children
 * only when asked. */
static xmlNodePtr walk_next(xmlNodePtr n, const xmlNode *top, int descend)
{
    if (descend && n->children &&
        (n->type == XML_ELEMENT_NODE || n->type == XML_DOCUMENT_NODE ||
         n->type == XML_HTML_DOCUMENT_NODE))
        return n->children;
    for (;;) {
        if (n == top) return NULL;
        if (n->next) return n->next;
        n = n->parent;
        if (!n) return NULL;
    }
}

static int is(const xmlNode *n, const char *name)
{
    return strcmp((const char *)n->name, name) == 0;
}

/* Collapse runs of ASCII whitespace to one space and trim, in place. */
static size_t squash(char *s, size_t n)
{
    size_t w = 0;
    int space = 0;
    for (size_t r = 0; r < n; r++) {
        if (ascii_is_space((unsigned char)s[r])) {
            space = w > 0;
            continue;
        }
        if (space) s[w++] = ' ';
        space = 0;
        s[w++] = s[r];
    }
    s[w] = 0;
    return w;
}

char *html_text(xmlNodePtr node, int squash_space, size_t *len)
{
    xmlChar *c = xmlNodeGetContent(node);
    size_t n = c ? strlen((char *)c) : 0;
    char *s = malloc(n + 1);
    if (!s) {
        xmlFree(c);
        return NULL;
    }
    if (n) memcpy(s, c, n);
    s[n] = 0;
    xmlFree(c);
    if (squash_space) n = squash(s, n);
    if (len) *len = n;
    return s;
}

char *html_title(xmlDocPtr doc, size_t *len)
{
    xmlNodePtr top = (xmlNodePtr)doc;
    for (xmlNodePtr n = top; n; n = walk_next(n, top, 1))
        if (n->type == XML_ELEMENT_NODE && is(n, "title")) return html_text(n, 1, len);
    return NULL;
}

char *html_serialize(xmlDocPtr doc, xmlNodePtr node, size_t *len)
{
    xmlOutputBufferPtr out = xmlAllocOutputBuffer(NULL);
    if (!out) return NULL;
    htmlNodeDumpFormatOutput(out, doc, node, NULL, 0);
    size_t n = xmlOutputBufferGetSize(out);
    const xmlChar *content = xmlOutputBufferGetContent(out);
    char *s = malloc(n + 1);
    if (s) {
        if (n) memcpy(s, content, n);
        s[n] = 0;
        if (len) *len = n;
    }
    xmlOutputBufferClose(out);
    return s;
}

/* ---- links ---- */

const char *html_attr(xmlNodePtr node, const char *name, xmlChar **owned)
{
    *owned = NULL;
    for (xmlAttrPtr a = node->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name) != 0) continue;
        xmlNodePtr c = a->children;
        if (!c) return "";
        if (!c->next && c->type == XML_TEXT_NODE && c->content) return (const char *)c->content;
        *owned = xmlNodeGetContent((xmlNodePtr)a);
        return *owned ? (const char *)*owned : "";
    }
    return NULL;
}

/* Is word one of the whitespace-separated tokens of s (ASCII case-insensitive)? */
static int has_token(const char *s, const char *word)
{
    size_t wl = strlen(word);
    while (*s) {
        while (ascii_is_space((unsigned char)*s))
            s++;
        size_t k = 0;
        while (s[k] && !ascii_is_space((unsigned char)s[k]))
            k++;
        if (k == wl && strncasecmp(s, word, wl) == 0) return 1;
        s += k;
    }
    return 0;
}

/* The URL of a <meta http-equiv=refresh> content value (HTML spec "shared declarative
 * refresh steps"): start and length, or 0 when there is none. */
static int refresh_url(const char *s, const char **url, size_t *len)
{
    while (ascii_is_space((unsigned char)*s))
        s++;
    if (!(*s >= '0' && *s <= '9') && *s != '.') return 0;
    while ((*s >= '0' && *s <= '9') || *s == '.')
        s++;
    if (*s && *s != ';' && *s != ',' && !ascii_is_space((unsigned char)*s)) return 0;
    while (ascii_is_space((unsigned char)*s))
        s++;
    if (*s == ';' || *s == ',') s++;
    while (ascii_is_space((unsigned char)*s))
        s++;
    if (!*s) return 0;
    const char *start = s;
    if (ascii_lower((unsigned char)s[0]) == 'u' && ascii_lower((unsigned char)s[1]) == 'r' &&
        ascii_lower((unsigned char)s[2]) == 'l') {
        const char *t = s + 3;
        while (ascii_is_space((unsigned char)*t))
            t++;
        if (*t == '=') {
            t++;
            while (ascii_is_space((unsigned char)*t))
                t++;
            start = t;
        }
    }
    char quote = 0;
    if (*start == '\'' || *start == '"') quote = *start++;
    const char *end = quote ? strchr(start, quote) : NULL;
    if (!end) end = start + strlen(start);
    *url = start;
    *len = (size_t)(end - start);
    return 1;
}

/* A reference found in the document, before resolution. */
/* Strings a pass copies, in chunks freed together: a page's references and links
 * cost a few mallocs, not one each. */
struct html_strings {
    struct html_strings *next;
    size_t used, cap;
    char data[];
};

#define STRINGS_CHUNK 4096

/* Room for n bytes in *a (in a new chunk when they do not fit), not taken yet:
 * strings_take takes them. NULL when out of memory. */
static inline char *strings_room(struct html_strings **a, size_t n)
{
    struct html_strings *c = *a;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > STRINGS_CHUNK ? n : STRINGS_CHUNK;
        c = malloc(sizeof(*c) + cap);
        if (!c) return NULL;
        c->next = *a;
        c->used = 0;
        c->cap = cap;
        *a = c;
    }
    return c->data + c->used;
}

/* Take the n bytes strings_room gave. */
static inline void strings_take(struct html_strings *a, size_t n)
{
    a->used += n;
}

/* A copy of s (n bytes and a NUL) in *a; NULL when out of memory. */
static inline char *strings_dup(struct html_strings **a, const char *s, size_t n)
{
    char *p = strings_room(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    strings_take(*a, n + 1);
    return p;
}

static void strings_free(struct html_strings *a)
{
    while (a) {
        struct html_strings *next = a->next;
        free(a);
        a = next;
    }
}

struct cand {
    const char *ref;
    xmlChar *owned;  /* xmlFree: ref, when it had to be copied out of the tree */
    xmlNodePtr node; /* tree walk only */
    const char *tag;
    int nofollow;
    struct buf text; /* SAX with HTML_LINKS_TEXT: the text seen so far */
};

/* What a pass over the document collects: every reference, and the first base. */
struct collect {
    struct cand *v;
    size_t n, cap;
    const char *base;
    xmlChar *base_owned;
    struct html_strings *copies; /* of references (meta refresh, SAX) */
    unsigned flags;
    int copy_refs; /* the attribute values do not outlive the visit (SAX; the fast
                    * scan keeps them till the end: html_scan_tags) */
};

static void collect_free(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++) { /* most have neither: no calls for them */
        if (c->v[i].owned) xmlFree(c->v[i].owned);
        if (c->v[i].text.p) free(c->v[i].text.p);
    }
    free(c->v);
    xmlFree(c->base_owned);
    strings_free(c->copies);
}

typedef const char *(*attr_fn)(const void *el, const char *name, xmlChar **owned);

static const char *tree_attr(const void *el, const char *name, xmlChar **owned)
{
    return html_attr((xmlNodePtr)el, name, owned);
}

/* SAX attributes: a NULL-ended array of name, value pairs. */
static inline const char *sax_attr(const void *el, const char *name, xmlChar **owned)
{
    const xmlChar *const *atts = el;
    *owned = NULL;
    for (size_t i = 0; atts && atts[i]; i += 2)
        if (html_name_eq((const char *)atts[i], name))
            return atts[i + 1] ? (const char *)atts[i + 1] : "";
    return NULL;
}

/* The tag an element is reported as, and the attribute with its reference; "base"
 * for <base>; NULL for elements that give no link. */
static const char *link_tag(const char *name, unsigned flags, const char **attr_name)
{
    *attr_name = "href";
    switch (name[0]) {
    case 'a':
        if (html_name_eq(name, "a")) return "a";
        if (html_name_eq(name, "area")) return "area";
        break;
    case 'b':
        if (html_name_eq(name, "base")) return "base";
        break;
    case 'f':
        *attr_name = "src";
        if ((flags & HTML_LINKS_FRAMES) && html_name_eq(name, "frame")) return "frame";
        break;
    case 'i':
        *attr_name = "src";
        if ((flags & HTML_LINKS_FRAMES) && html_name_eq(name, "iframe")) return "iframe";
        if ((flags & HTML_LINKS_IMG) && html_name_eq(name, "img")) return "img";
        break;
    case 'l':
        if ((flags & HTML_LINKS_LINK) && html_name_eq(name, "link")) return "link";
        break;
    case 'm':
        *attr_name = "content";
        if (html_name_eq(name, "meta")) return "meta";
        break;
    }
    return NULL;
}

static inline int keep(struct collect *c, const char **ref, const xmlChar *owned)
{
    if (!c->copy_refs || owned) return 0;
    *ref = strings_dup(&c->copies, *ref, strlen(*ref));
    return *ref ? 0 : -1;
}

/* Free what an attribute lookup owns: nothing in the fast scan and SAX passes, which
 * then make no call through xmlFree (one for each <a>'s rel, otherwise). */
static inline void drop(xmlChar *owned)
{
    if (owned) xmlFree(owned);
}

/* Append x to what c collected; 0, or -1 when out of memory. */
static inline int add_cand(struct collect *c, const struct cand *x)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct cand *v = realloc(c->v, cap * sizeof(*v));
        if (!v) return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = *x;
    return 0;
}

/* Collect what element el (a tree node or SAX attributes, read with get) gives:
 * 1 when it added a candidate, 0 when not, -1 when out of memory. Always inlined:
 * in scan_tag, once per tag of the fast scan, get is then sax_attr, called directly
 * and inlined in turn, which the scan of a page measurably gains from. */
static inline __attribute__((always_inline)) int visit(struct collect *c, const char *name,
                                                       const void *el, attr_fn get, xmlNodePtr node)
{
    const char *an;
    const char *tag = link_tag(name, c->flags, &an);
    if (!tag) return 0;
    if (tag[0] == 'b') {
        if (c->base) return 0;
        c->base = get(el, "href", &c->base_owned);
        return c->base ? keep(c, &c->base, c->base_owned) : 0;
    }
    struct cand x = {NULL, NULL, node, tag, 0, {NULL, 0, 0}};
    xmlChar *owned;
    if (tag[0] == 'm') {
        const char *equiv = get(el, "http-equiv", &owned);
        int refresh = equiv && strcasecmp(equiv, "refresh") == 0;
        drop(owned);
        if (!refresh) return 0;
        const char *content = get(el, "content", &owned), *u;
        size_t ul;
        if (content && refresh_url(content, &u, &ul)) x.ref = strings_dup(&c->copies, u, ul);
        drop(owned);
        if (!x.ref) return 0;
    } else {
        x.ref = get(el, an, &x.owned);
        if (!x.ref) return 0;
        if (tag[0] == 'a' || tag[0] == 'l') {
            const char *rel = get(el, "rel", &owned);
            x.nofollow = rel && has_token(rel, "nofollow");
            drop(owned);
        }
        if (keep(c, &x.ref, x.owned) != 0) goto fail;
    }
    if (add_cand(c, &x) != 0) goto fail;
    return 1;
fail:
    xmlFree(x.owned);
    return -1;
}

/* An open-addressing map from strings (not copied) to indexes, sized once for the
 * keys it will hold: a page's worth fits in the caller's stack. */
struct map {
    struct slot {
        const char *key; /* NULL: empty */
        uint64_t hash;
        size_t val;
    } * slot;
    size_t mask;
    int heap; /* slot was malloc'd */
};

#define MAP_ABSENT SIZE_MAX
#define MAP_STACK_SLOTS 256

/* An empty map for at most n keys, in stack (MAP_STACK_SLOTS slots) when they fit
 * there at half load. */
static int map_init(struct map *m, size_t n, struct slot *stack)
{
    size_t size = 16;
    while (size < 2 * n + 2)
        size *= 2;
    m->heap = size > MAP_STACK_SLOTS;
    m->slot = m->heap ? calloc(size, sizeof(*m->slot)) : memset(stack, 0, size * sizeof(*stack));
    m->mask = size - 1;
    return m->slot ? 0 : -1;
}

static void map_free(struct map *m)
{
    if (m->heap) free(m->slot);
}

static size_t map_get(const struct map *m, const char *key, uint64_t hash)
{
    for (size_t i = (size_t)hash & m->mask; m->slot[i].key; i = (i + 1) & m->mask)
        if (m->slot[i].hash == hash && strcmp(m->slot[i].key, key) == 0) return m->slot[i].val;
    return MAP_ABSENT;
}

/* Add a key known to be absent (one of the n map_init made room for). */
static void map_put(struct map *m, const char *key, uint64_t hash, size_t val)
{
    size_t i = (size_t)hash & m->mask;
    while (m->slot[i].key)
        i = (i + 1) & m->mask;
    m->slot[i] = (struct slot){key, hash, val};
}

/* The output index of the link url (len bytes and a NUL): a new link, or the one it
 * repeats; MAP_ABSENT when out of memory. placed: url is where strings_room put it in
 * out->strings (taken when new), else it is copied there. */
static inline size_t add_link(html_links_t *out, struct map *urls, const char *url, size_t len,
                              int normal, const struct cand *c, int placed)
{
    uint64_t h = url_hash(url, len);
    size_t i = map_get(urls, url, h);
    if (i != MAP_ABSENT) return i;
    char *kept = (char *)url;
    if (placed)
        strings_take(out->strings, len + 1);
    else if (!(kept = strings_dup(&out->strings, url, len)))
        return MAP_ABSENT;
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 64;
        html_link_t *v = realloc(out->v, cap * sizeof(*v));
        if (!v) return MAP_ABSENT;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n] = (html_link_t){kept, c->tag, NULL, c->nofollow, len, h, normal};
    map_put(urls, kept, h, out->n);
    return out->n++;
}

/* The text a link is shown with: an <a>'s squashed text, an <area>'s or <img>'s alt,
 * else "". */
static char *link_text(struct cand *c)
{
    if (strcmp(c->tag, "a") == 0) {
        if (!c->node) { /* SAX: the text collected */
            char *t = c->text.p ? c->text.p : strdup("");
            if (c->text.p) squash(t, c->text.n);
            c->text.p = NULL;
            return t;
        }
        return html_text(c->node, 1, NULL);
    }
    if (c->text.p || !c->node) { /* SAX: alt was kept as the text */
        char *t = c->text.p ? c->text.p : strdup("");
        c->text.p = NULL;
        return t;
    }
    xmlChar *owned = NULL;
    const char *alt = NULL;
    if (strcmp(c->tag, "area") == 0 || strcmp(c->tag, "img") == 0)
        alt = html_attr(c->node, "alt", &owned);
    char *t = strdup(alt ? alt : "");
    xmlFree(owned);
    return t;
}

/* Resolve, filter and deduplicate what a pass collected. */
static int resolve_all(struct collect *c, const char *doc_url, html_links_t *out)
{
    struct map urls = {NULL, 0, 0};
    struct slot stack[MAP_STACK_SLOTS];
    char *base_url = NULL;
    int rc = -1;
    /* The first <base href>, resolved against the document's URL; if it does not
     * resolve, the document's URL stays the base. */
    const char *b = doc_url;
    if (c->base && url_resolve(doc_url ? doc_url : c->base, c->base, &base_url) == URL_OK)
        b = base_url;
    url_base_t base;
    url_base_prepare(b, &base);
    char url[URL_MAX_LENGTH + 1];
    if (map_init(&urls, c->n, stack) != 0) goto done;
    for (size_t i = 0; i < c->n; i++) {
        size_t len, keep, rn, before = out->n, k;
        const char *ref = c->v[i].ref, *rest;
        if (url_resolve_parts(&base, ref, &keep, &rest, &rn) == URL_OK) {
            /* The commonest reference: the link written once, where it is kept. */
            len = keep + rn;
            char *t = strings_room(&out->strings, len + 1);
            if (!t) goto done;
            memcpy(t, base.url, keep);
            memcpy(t + keep, rest, rn);
            t[len] = '\0';
            k = add_link(out, &urls, t, len, 1, &c->v[i], 1);
        } else {
            int normal;
            /* mailto:, javascript: and the like fail at their scheme, at once. */
            if (url_resolve_into(&base, ref, url, &len, &normal) != URL_OK) continue;
            k = add_link(out, &urls, url, len, normal, &c->v[i], 0);
        }
        if (k == MAP_ABSENT) goto done;
        if (out->n > before && (c->flags & HTML_LINKS_TEXT) &&
            !(out->v[k].text = link_text(&c->v[i])))
            goto done;
        out->v[k].nofollow = out->v[k].nofollow && c->v[i].nofollow;
    }
    rc = 0;
done:
    free(base_url);
    map_free(&urls);
    return rc;
}

int html_links(xmlDocPtr doc, const char *doc_url, unsigned flags, html_links_t *out)
{
    struct collect c = {.flags = flags};
    int rc = -1;
    memset(out, 0, sizeof(*out));
    xmlNodePtr top = (xmlNodePtr)doc;
    for (xmlNodePtr n = top; n; n = walk_next(n, top, 1))
        if (n->type == XML_ELEMENT_NODE && visit(&c, (const char *)n->name, n, tree_attr, n) < 0)
            goto done;
    rc = resolve_all(&c, doc_url, out);
done:
    collect_free(&c);
    return rc;
}

/* The SAX pass: the same elements the tree would get, in the same order (the tree is
 * built from these very events), without building it. */
struct sax {
    struct collect c;
    size_t depth;
    struct open_a {
        size_t cand, depth;
    } * open; /* the <a> elements open (they can nest), whose text is collected */
    size_t nopen, capopen;
    int failed;
    struct buf *title;  /* the first <title>'s text, when asked for */
    size_t title_depth; /* depth of that <title> while inside it, else 0 */
    int title_seen;
};

static void sax_fail(htmlParserCtxtPtr ctxt, struct sax *s)
{
    s->failed = 1;
    xmlStopParser(ctxt);
}

/* startElement */
static void sax_start(void *ctx, const xmlChar *name, const xmlChar **atts)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct sax *s = ctxt->_private;
    s->depth++;
    if (s->title && !s->title_seen && strcmp((const char *)name, "title") == 0) {
        s->title_seen = 1;
        s->title_depth = s->depth;
        if (buf_append(s->title, "", 0) != 0) sax_fail(ctxt, s);
    }
    int r = visit(&s->c, (const char *)name, atts, sax_attr, NULL);
    if (r < 0) {
        sax_fail(ctxt, s);
        return;
    }
    if (r == 0 || !(s->c.flags & HTML_LINKS_TEXT)) return;
    struct cand *x = &s->c.v[s->c.n - 1];
    if (strcmp(x->tag, "a") == 0) {
        if (s->nopen == s->capopen) {
            size_t cap = s->capopen ? s->capopen * 2 : 8;
            struct open_a *v = realloc(s->open, cap * sizeof(*v));
            if (!v) {
                sax_fail(ctxt, s);
                return;
            }
            s->open = v;
            s->capopen = cap;
        }
        s->open[s->nopen++] = (struct open_a){s->c.n - 1, s->depth};
    } else if (strcmp(x->tag, "area") == 0 || strcmp(x->tag, "img") == 0) {
        xmlChar *owned;
        const char *alt = sax_attr(atts, "alt", &owned);
        if (buf_append(&x->text, alt ? alt : "", alt ? strlen(alt) : 0) != 0) sax_fail(ctxt, s);
    }
}

/* endElement */
static void sax_end(void *ctx, const xmlChar *name)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct sax *s = ctxt->_private;
    (void)name;
    if (s->title_depth == s->depth) s->title_depth = 0;
    if (s->nopen && s->open[s->nopen - 1].depth == s->depth) s->nopen--;
    if (s->depth) s->depth--;
}

/* characters, cdataBlock */
static void sax_text(void *ctx, const xmlChar *text, int len)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct sax *s = ctxt->_private;
    if (s->title_depth && len > 0 && buf_append(s->title, text, (size_t)len) != 0) {
        sax_fail(ctxt, s);
        return;
    }
    for (size_t i = 0; i < s->nopen && len > 0; i++)
        if (buf_append(&s->c.v[s->open[i].cand].text, text, (size_t)len) != 0) {
            sax_fail(ctxt, s);
            return;
        }
}

int html_links_body(const char *body, size_t len, const char *http_charset, const char *doc_url,
                    unsigned flags, html_links_t *out, const char **encoding)
{
    return html_scan_body(body, len, http_charset, doc_url, flags, out, NULL, encoding);
}

/* The SAX pass over decoded text into s: 0, or -1 when out of memory. */
static int sax_pass(const char *text, size_t n, struct sax *s)
{
    htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(text, (int)n);
    int rc = -1;
    if (!ctxt) return -1;
    memset(ctxt->sax, 0, sizeof(*ctxt->sax));
    ctxt->sax->startElement = sax_start;
    ctxt->sax->endElement = sax_end;
    /* Like the tree builder: text (which also opens implied paragraphs), but not
     * the whitespace the parser deems ignorable. */
    ctxt->sax->characters = sax_text;
    ctxt->sax->cdataBlock = sax_text;
    ctxt->sax->initialized = 1;
    ctxt->_private = s;
    htmlCtxtUseOptions(ctxt, PARSE_OPTIONS);
    /* As htmlReadMemory(..., "UTF-8", ...) does: without it, the first non-ASCII
     * character makes this context guess an encoding. */
    xmlCharEncodingHandlerPtr utf8 = xmlFindCharEncodingHandler("UTF-8");
    if (!utf8 || xmlSwitchToEncoding(ctxt, utf8) != 0) goto done;
    xmlFree((xmlChar *)ctxt->input->encoding);
    ctxt->input->encoding = xmlStrdup((const xmlChar *)"UTF-8");
    htmlParseDocument(ctxt);
    rc = s->failed ? -1 : 0;
done:
    htmlFreeParserCtxt(ctxt);
    return rc;
}

/* The elements visit reads: the fast scan reports these with their attributes. */
static const char *const scan_tags[] = {"a",   "area", "base", "frame", "iframe",
                                        "img", "link", "meta", NULL};

static int scan_tag(void *arg, const char *name, const char *const *atts)
{
    /* An <a>, most of what the scan reports: what visit() would make of it, href and
     * rel found in one look at its attributes (the scan keeps the first of a name). */
    if (name[0] == 'a' && name[1] == '\0') {
        struct collect *c = arg;
        struct cand x = {NULL, NULL, NULL, "a", 0, {NULL, 0, 0}};
        const char *rel = NULL;
        for (size_t i = 0; atts && atts[i]; i += 2) {
            const char *an = atts[i], *v = atts[i + 1] ? atts[i + 1] : "";
            if (an[0] == 'h' && an[1] == 'r' && an[2] == 'e' && an[3] == 'f' && !an[4])
                x.ref = v;
            else if (an[0] == 'r' && an[1] == 'e' && an[2] == 'l' && !an[3])
                rel = v;
        }
        if (!x.ref) return 0;
        x.nofollow = rel && has_token(rel, "nofollow");
        if (keep(c, &x.ref, NULL) != 0 || add_cand(c, &x) != 0) return -1;
        return 0;
    }
    return visit(arg, name, atts, sax_attr, NULL) < 0 ? -1 : 0;
}

int html_scan_body(const char *body, size_t len, const char *http_charset, const char *doc_url,
                   unsigned flags, html_links_t *out, char **title, const char **encoding)
{
    struct buf title_buf = {NULL, 0, 0};
    struct sax s = {.c = {.flags = flags, .copy_refs = 1}, .title = title ? &title_buf : NULL};
    struct buf kept = {NULL, 0, 0}; /* the fast scan's attributes: its references point there */
    html_decoded_t d;
    int rc = -1;
    memset(out, 0, sizeof(*out));
    int decoded = html_charset_decode(body, len, http_charset, &d);
    if (encoding) *encoding = d.encoding;
    const char *text = d.text;
    size_t n = d.n;
    if (decoded != 0) goto done;
    if (n > 0 && n <= INT_MAX) {
        /* The fast scan, unless link text is wanted (it does not follow the tree);
         * the SAX pass when it is not sure of this page. */
        int fast = !(flags & (HTML_LINKS_TEXT | HTML_LINKS_FORCE_SAX));
        char **scan_title = title ? &title_buf.p : NULL;
        s.c.copy_refs = !fast; /* the fast scan keeps them for us */
        int r = fast ? html_scan_tags(text, n, scan_tags, scan_tag, &s.c, scan_title, &kept) : 1;
        if (r < 0) goto done;
        if (r == 0 && title_buf.p) title_buf.n = strlen(title_buf.p);
        if (r == 1 && (flags & HTML_LINKS_FAST_ONLY)) {
            rc = 1;
            goto done;
        }
        if (r == 1 && fast) { /* start again */
            collect_free(&s.c);
            s.c = (struct collect){.flags = flags, .copy_refs = 1};
        }
        if (r == 1 && sax_pass(text, n, &s) != 0) goto done;
    }
    rc = resolve_all(&s.c, doc_url, out);
    if (rc == 0 && title) {
        if (title_buf.p) squash(title_buf.p, title_buf.n);
        *title = title_buf.p; /* NULL without a <title> */
        title_buf.p = NULL;
    }
done:
    free(s.open);
    free(d.buf.p);
    free(title_buf.p);
    collect_free(&s.c);
    buf_free(&kept);
    return rc;
}

void html_links_free(html_links_t *links)
{
    for (size_t i = 0; i < links->n; i++)
        if (links->v[i].text) free(links->v[i].text); /* only with HTML_LINKS_TEXT */
    free(links->v);
    strings_free(links->strings);
    memset(links, 0, sizeof(*links));
}
