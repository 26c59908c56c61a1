/* html_scan.c: the fast path of html_scan_body: start tags, their attributes and the
 * first <title>'s text in one pass over the decoded UTF-8 text, without libxml2's
 * parser (which does a lot of work per character).
 *
 * The reference is not the WHATWG tokenizer but what libxml2 2.9's HTML parser (the
 * SAX pass this replaces) reports, so that both paths give the same links and title.
 * Where the two differ, this follows libxml2:
 *   - only <script> and <style> hold raw text, up to the first "</script" or "</style"
 *     (any case, whatever follows: no escape states); <title>, <textarea>, <xmp>,
 *     <iframe>, <noembed>, <noframes>, <noscript>, <template> and <plaintext> hold
 *     markup, and there is no foreign content (an <svg><a href> is a link);
 *     "<script/>" is empty;
 *   - names (tags and attributes) are [A-Za-z_:.][A-Za-z0-9_:.-]* (tags start with a
 *     letter), lower-cased and cut at 100 characters; a character that cannot be in a
 *     name (a '/', a form feed) makes the rest up to a blank an ignored attribute; the
 *     blanks are space, tab, LF and CR;
 *   - a start tag cut off by the end of the text still counts, as does the value of
 *     its last attribute;
 *   - "<!--" ends at the first "-->" or "--!>" at least two characters after it ("<!-->"
 *     does not end it); a comment never closed runs to the end; "<!x" and "</ x" are
 *     text; "<?target ...>" ends at the first '>'; "<!DOCTYPE" skips its quoted
 *     literals, and after one in the body a "<" that is not a comment, processing
 *     instruction or start tag is text;
 *   - an end tag skips to the first '>';
 *   - in attribute values, "&#...;" follows htmlParseCharRef (no windows-1252 remap;
 *     a reference that is not an XML character ends the value, as libxml2 writes a NUL)
 *     and named references are decoded only with their ';' and when libxml2's HTML 4
 *     table knows them.
 *   - a name after '&', "<?" or "<!DOCTYPE" is read as htmlParseName does, with
 *     libxml2's Unicode tables.
 * libxml2's tree (its stack of open elements, its rules for closing them) is not
 * emulated: the scan knows only which names were ever opened. Where the tree could
 * matter it gives up and says so (1), and the caller takes the SAX pass: in the first
 * <title>, a start tag, a DOCTYPE, or an end tag (other than its own) of an element
 * that may be open; at the start of the text of a <script> or <style>, or at an end
 * tag that begins like its own ("</scripts>"), an end tag of an element that may be
 * open. The text holds no NUL (html_parse's decoding leaves none; html.h). */
#include "html_scan.h"

#include "buf.h"
#include "html_scan_internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTML_NAME_MAX 100 /* libxml2's HTML_PARSER_BUFFER_SIZE: longer names are cut there */

enum { DONE = 0, UNSURE = 1, FAILED = -1 };

/* By byte: a character of an HTML name (C_NAME) lower-cased, 0 for any other. */
static const unsigned char name_lower[256] = {
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   /* C0 */
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   /* C0 */
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   '-', '.', 0,   /* space - . */
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', 0,   0,   0,   0,   0,   /* digits : */
    0,   'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', /* A-O */
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 0,   0,   0,   0,   '_', /* P-Z _ */
    0,   'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', /* a-o */
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 0,   0,   0,   0,   0,   /* p-z */
};

struct scanner {
    const unsigned char *end; /* of the text, which holds no NUL */
    const char *const *tags;
    uint64_t wanted[4]; /* the name_bit of each of tags */
    html_tag_fn tag;
    void *arg;
    /* The attributes of the start tags reported, "name\0value\0" each: the caller's
     * buffer (html_scan_tags), with room reserved at the start and never grown, so
     * that the pointers the callback got stay good after the scan. atts points into
     * it: the name, value pairs of the tag being reported (a NULL value for an
     * attribute without one), natts of them so far. */
    struct buf attrs;
    const char **atts;
    size_t natts, capatts;
    /* A superset of the names of the open elements: the names of the start tags read
     * so far and of those libxml2 implies, hashed to bits. */
    uint64_t opened[4];
    unsigned special[3]; /* the name_hash of title, script and style */
    unsigned a_bit;      /* the name_bit of "a" */
    int a_reported;      /* <a> is one of tags */
    enum { T_NONE, T_IN, T_DONE } title_state;
    struct buf title;
    int rc; /* UNSURE or FAILED once the pass must stop */
};

/* A name's hash, which name_at also computes on its way through a start tag's name;
 * its low byte is the name's bit in the sets of names (opened, wanted). */
#define NAME_HASH_INIT 5381u
#define NAME_HASH_STEP(h, c) ((h)*33 + (unsigned char)(c))

static unsigned name_hash(const char *name)
{
    unsigned h = NAME_HASH_INIT;
    while (*name)
        h = NAME_HASH_STEP(h, *name++);
    return h;
}

static unsigned name_bit(const char *name)
{
    return name_hash(name) & 255;
}

/* A set of name bits: 256 bits in four words. */
static void bit_add(uint64_t *set, unsigned b)
{
    set[b >> 6] |= (uint64_t)1 << (b & 63);
}

static int bit_has(const uint64_t *set, unsigned b)
{
    return (set[b >> 6] >> (b & 63)) & 1;
}

/* Can an element of this name be open? When not, libxml2 ignores its end tag. */
static int maybe_open(const struct scanner *sc, const char *name)
{
    return bit_has(sc->opened, name_bit(name));
}

#ifdef __SSE2__
/* A bit for each of the 16 bytes at p that is c. */
static inline unsigned match16(const unsigned char *p, unsigned char c)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)c)));
}
#endif

/* The first c in [p, end), or NULL: memchr, after a look at the next 16 bytes
 * inline (most gaps between tags and most attribute values are shorter). */
static const unsigned char *find(const unsigned char *p, const unsigned char *end, unsigned char c)
{
#ifdef __SSE2__
    if (end - p >= 16) {
        unsigned m = match16(p, c);
        if (m) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    return memchr(p, c, (size_t)(end - p));
}

/* htmlParseHTMLName: a tag or attribute name at p, lower-cased in name (HTML_NAME_MAX + 1
 * bytes), *len 0 when there is none; returns the end of the name. */
static inline const unsigned char *html_name(const unsigned char *p, const unsigned char *end,
                                             char *name, size_t *len)
{
    size_t n = 0;
    if (p < end && is(*p, C_START)) {
        const unsigned char *lim = end - p > HTML_NAME_MAX ? p + HTML_NAME_MAX : end;
        unsigned char c;
        while (p < lim && (c = name_lower[*p]) != 0) {
            name[n++] = (char)c;
            p++;
        }
    }
    name[n] = 0;
    *len = n;
    return p;
}

/* html_name without the copy, at a start tag's name (p at a letter): the end of the
 * name, and its hash (name_hash of it lower-cased) in *h. */
static inline const unsigned char *name_at(const unsigned char *p, const unsigned char *end,
                                           unsigned *h)
{
    const unsigned char *lim = end - p > HTML_NAME_MAX ? p + HTML_NAME_MAX : end;
    unsigned x = NAME_HASH_INIT;
    unsigned char c;
    while (p < lim && (c = name_lower[*p]) != 0) {
        x = NAME_HASH_STEP(x, c);
        p++;
    }
    *h = x;
    return p;
}

/* The end of an HTML name at p, for a name nothing is done with (cutting it at
 * HTML_NAME_MAX would make the rest another name: the tag reads the same). */
static const unsigned char *skip_name(const unsigned char *p, const unsigned char *end)
{
    if (p < end && is(*p, C_START))
        while (p < end && name_lower[*p])
            p++;
    return p;
}

/* ---- tags ---- */

/* Whether a start tag of this name (and name_bit) is reported. */
static int reported(const struct scanner *sc, const char *name, unsigned bit)
{
    if (!bit_has(sc->wanted, bit)) return 0;
    for (const char *const *t = sc->tags; *t; t++)
        if ((*t)[0] == name[0] && html_name_eq(*t, name)) return 1;
    return 0;
}

static int has_attr(const struct scanner *sc, const char *name)
{
    for (size_t i = 0; i < sc->natts; i += 2)
        if (html_name_eq(sc->atts[i], name)) return 1;
    return 0;
}

/* Add a name or value to atts, leaving room for the two NULLs that end them. */
static inline int push_att(struct scanner *sc, const char *s)
{
    if (sc->natts + 2 >= sc->capatts) {
        size_t cap = sc->capatts ? sc->capatts * 2 : 16;
        const char **v = realloc(sc->atts, cap * sizeof(*v));
        if (!v) return -1;
        sc->atts = v;
        sc->capatts = cap;
    }
    sc->atts[sc->natts++] = s;
    return 0;
}

/* Whether n more bytes fit in attrs without growing them; when not, the scan gives
 * up (UNSURE) rather than move what it handed out. */
static int room(struct scanner *sc, size_t n)
{
    if (sc->attrs.cap - sc->attrs.n >= n) return 1;
    sc->rc = UNSURE;
    return 0;
}

/* The first byte at p that is a or b, or end: 16 bytes at a time inline, without
 * memchr's call (attribute values are short: a call and a second pass for the '&'
 * cost more than the value). */
static inline const unsigned char *find2(const unsigned char *p, const unsigned char *end,
                                         unsigned char a, unsigned char b)
{
#ifdef __SSE2__
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
        if (m) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    while (p < end && *p != a && *p != b)
        p++;
    return p;
}

/* htmlParseAttValue at p (after '=' and blanks), any value: references decoded (see
 * att_value). */
static __attribute__((noinline)) const unsigned char *
att_value_any(struct scanner *sc, const unsigned char *p, int keep)
{
    const unsigned char *end = sc->end;
    unsigned char stop = 0;
    if (p < end && (*p == '"' || *p == '\'')) stop = *p++;
    const unsigned char *run = p;
    int cut = !keep; /* nothing more is kept: a reference gave NUL */
    while (p < end) {
        unsigned char c = *p;
        if (stop ? c == stop : c == '>' || is(c, C_BLANK)) break;
        if (c != '&' || cut) {
            p++;
            continue;
        }
        if (buf_append(&sc->attrs, run, (size_t)(p - run)) != 0) goto fail;
        if (p + 1 < end && p[1] == '#') {
            unsigned v;
            p = scan_char_ref(p, end, &v);
            if (!v)
                cut = 1;
            else if (scan_add_utf8(&sc->attrs, v) != 0)
                goto fail;
        } else {
            int failed = 0;
            p = scan_entity_ref(p + 1, end, &sc->attrs, &failed);
            if (failed) goto fail;
        }
        run = p;
    }
    if (keep && !cut && buf_append(&sc->attrs, run, (size_t)(p - run)) != 0) goto fail;
    if (keep && buf_append(&sc->attrs, "", 0) != 0) goto fail;
    if (keep) sc->attrs.n++; /* its NUL */
    if (stop && p < end) p++;
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

/* htmlParseAttValue at p (after '=' and blanks); the value is appended to sc->attrs,
 * with its NUL, when kept (the caller made room for it: a value decoded is no longer
 * than the text it is read from). Inline for the commonest value, quoted without a
 * reference. */
static inline const unsigned char *att_value(struct scanner *sc, const unsigned char *p, int keep)
{
    const unsigned char *end = sc->end;
    if (p < end && (*p == '"' || *p == '\'')) { /* references never hide the quote */
        unsigned char stop = *p;
        const unsigned char *v = p + 1, *q;
        if (!keep) {
            q = find(v, end, stop);
            return q ? q + 1 : end;
        }
        q = find2(v, end, stop, '&');
        if (q == end || *q == stop) { /* nothing to decode: the value as it is */
            size_t n = (size_t)(q - v);
            char *d = sc->attrs.p + sc->attrs.n; /* room was made */
#ifdef __SSE2__
            if (n < 16 && end - v >= 16 && sc->attrs.cap - sc->attrs.n >= 16) {
                _mm_storeu_si128((__m128i *)(void *)d,
                                 _mm_loadu_si128((const __m128i *)(const void *)v));
            } else if (n < 32 && end - v >= 32 && sc->attrs.cap - sc->attrs.n >= 32) {
                _mm_storeu_si128((__m128i *)(void *)d,
                                 _mm_loadu_si128((const __m128i *)(const void *)v));
                _mm_storeu_si128((__m128i *)(void *)(d + 16),
                                 _mm_loadu_si128((const __m128i *)(const void *)(v + 16)));
            } else
#endif
                memcpy(d, v, n);
            d[n] = '\0';
            sc->attrs.n += n + 1;
            return q < end ? q + 1 : end;
        }
    }
    return att_value_any(sc, p, keep);
}

static int at_tag_end(const unsigned char *p, const unsigned char *end)
{
    return *p == '>' || (*p == '/' && p + 1 < end && p[1] == '>');
}

/* Skip what is not a name, up to a blank or the end of the tag. */
static const unsigned char *skip_junk(const unsigned char *p, const unsigned char *end)
{
    while (p < end && !is(*p, C_BLANK) && !at_tag_end(p, end))
        p++;
    return p;
}

/* The attributes of a start tag that is not reported, from p: read past. */
static const unsigned char *skip_attrs(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    while (p < end && !at_tag_end(p, end)) {
        const unsigned char *q = skip_name(p, end);
        if (q == p) { /* not a name: skipped up to a blank */
            p = skip_junk(p, end);
        } else {
            p = skip_blanks(q, end);
            if (p < end && *p == '=') p = att_value(sc, skip_blanks(p + 1, end), 0);
        }
        p = skip_blanks(p, end);
    }
    return p;
}

/* keep_attrs from p, after the natts attributes listed already (room was made). */
static const unsigned char *more_attrs(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    while (p < end && !at_tag_end(p, end)) {
        char *an = sc->attrs.p + sc->attrs.n; /* the name is read in place */
        size_t al;
        const unsigned char *q = html_name(p, end, an, &al);
        if (al == 0) {
            p = skip_junk(p, end);
        } else {
            int k = !has_attr(sc, an);
            if (k) {
                if (push_att(sc, an) != 0) goto fail;
                sc->attrs.n += al + 1;
            }
            p = skip_blanks(q, end);
            if (p < end && *p == '=') {
                if (k && push_att(sc, sc->attrs.p + sc->attrs.n) != 0) goto fail;
                p = att_value(sc, skip_blanks(p + 1, end), k);
                if (sc->rc) return p;
            } else if (k && push_att(sc, NULL) != 0) {
                goto fail;
            }
        }
        p = skip_blanks(p, end);
    }
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

/* What a tag keeps is at most twice its text from p (a name and its NUL, a value and
 * its NUL, each from one byte at least); html_scan_tags reserved twice all of it, so
 * this holds: a guard. */
static int room_for_tag(struct scanner *sc, const unsigned char *p)
{
    return room(sc, 2 * (size_t)(sc->end - p) + 2);
}

/* The attributes of a start tag that is reported, from p: kept in attrs, the first
 * of a name winning, and listed in atts. */
static const unsigned char *keep_attrs(struct scanner *sc, const unsigned char *p)
{
    sc->natts = 0;
    return room_for_tag(sc, p) ? more_attrs(sc, p) : p;
}

/* Call the callback with the attributes kept. */
static int report(struct scanner *sc, const char *name)
{
    if (!sc->natts) return sc->tag(sc->arg, name, NULL) != 0 ? -1 : 0;
    sc->atts[sc->natts] = sc->atts[sc->natts + 1] = NULL; /* push_att left room */
    return sc->tag(sc->arg, name, sc->atts) != 0 ? -1 : 0;
}

/* Which element holds raw text once its start tag is read. */
enum raw { RAW_NONE, RAW_SCRIPT, RAW_STYLE };

/* start_tag for a tag that may be reported, or be a <title>, <script> or <style>:
 * the name from p + 1 to q (of that hash) is copied. Apart (in named_element), so that
 * the common case stays small. */
static inline const unsigned char *named_start_tag(struct scanner *sc, const unsigned char *p,
                                                   const unsigned char *q, unsigned h,
                                                   enum raw *raw)
{
    const unsigned char *end = sc->end;
    char name[HTML_NAME_MAX + 1];
    size_t nl = (size_t)(q - p - 1);
    for (size_t i = 0; i < nl; i++)
        name[i] = (char)name_lower[p[1 + i]];
    name[nl] = 0;
    p = q;
    int keep = reported(sc, name, h & 255);
    p = skip_blanks(p, end);
    p = keep ? keep_attrs(sc, p) : skip_attrs(sc, p);
    if (sc->rc) return p;
    int open = 0; /* ended by '>' (not "/>", not the end of the text) */
    if (p < end) {
        open = *p == '>';
        p += open ? 1 : 2;
    }
    if (keep && report(sc, name) != 0) goto fail;
    if (sc->title_state == T_NONE && nl == 5 && memcmp(name, "title", 5) == 0) {
        if (buf_append(&sc->title, "", 0) != 0) goto fail;
        sc->title_state = open ? T_IN : T_DONE;
    }
    if (open && name[0] == 's') {
        if (nl == 6 && memcmp(name, "script", 6) == 0) *raw = RAW_SCRIPT;
        if (nl == 5 && memcmp(name, "style", 5) == 0) *raw = RAW_STYLE;
    }
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

/* The rest of an end tag after its name: htmlParseEndTag skips to the first '>'. */
static inline const unsigned char *end_of_end_tag(const unsigned char *p, const unsigned char *end)
{
    p = skip_blanks(p, end);
    if (p < end && *p != '>') {
        p = memchr(p, '>', (size_t)(end - p));
        if (!p) return end;
    }
    return p < end ? p + 1 : end;
}

/* htmlParseEndTag at "</". */
static const unsigned char *end_tag(struct scanner *sc, const unsigned char *p)
{
    char name[HTML_NAME_MAX + 1];
    size_t nl;
    if (sc->title_state != T_IN) {
        /* The name is nothing to us, and holds no '>': the first '>' after its first
         * character ends the tag. */
        const unsigned char *q = p + 2;
        if (q >= sc->end || !is(*q, C_START)) return q; /* no name: "</" is dropped */
        q = find(q + 1, sc->end, '>');
        return q ? q + 1 : sc->end;
    }
    const unsigned char *q = html_name(p + 2, sc->end, name, &nl);
    if (nl == 0) return p + 2;
    if (strcmp(name, "title") == 0)
        sc->title_state = T_DONE;
    else if (maybe_open(sc, name)) { /* inside the title: it may close it, or not */
        sc->rc = UNSURE;
        return p;
    }
    return end_of_end_tag(q, sc->end);
}

/* The text of a <script> or <style> from p: htmlParseContentInternal with that
 * element current, which hands the text to htmlParseScript. Returns where markup
 * starts again. */
static __attribute__((noinline)) const unsigned char *raw_text(struct scanner *sc,
                                                               const unsigned char *p, enum raw raw)
{
    const unsigned char *end = sc->end;
    const char *elem = raw == RAW_SCRIPT ? "script" : "style";
    size_t el = strlen(elem);
    char name[HTML_NAME_MAX + 1];
    size_t nl;
    for (;;) {
        if (p >= end) return end;
        /* What the content loop looks at before it hands the text over. */
        if (p[0] == '<' && p + 1 < end && p[1] == '/') {
            const unsigned char *q = html_name(p + 2, end, name, &nl);
            if (nl == 0) { /* "</" dropped */
                p += 2;
                continue;
            }
            if (strcmp(name, elem) == 0) return end_of_end_tag(q, end);
            if (maybe_open(sc, name)) { /* it may close elements around this one */
                sc->rc = UNSURE;
                return p;
            }
            p = end_of_end_tag(q, end); /* ignored */
            continue;
        }
        if (p[0] == '<' && p + 1 < end && (is(p[1], C_LETTER) || p[1] == '_' || p[1] == ':')) {
            /* A start tag that closes the element (htmlCheckAutoClose, with the name
             * read as htmlParseHTMLName_nonInvasive does: no '.'). */
            char nm[HTML_NAME_MAX + 1];
            size_t n = 0;
            const unsigned char *q = p + 1;
            while (n < HTML_NAME_MAX && q < end && is(*q, C_NAME) && *q != '.') {
                nm[n++] = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
                q++;
            }
            nm[n] = 0;
            if (raw == RAW_SCRIPT ? strcmp(nm, "noscript") == 0
                                  : strcmp(nm, "body") == 0 || strcmp(nm, "frameset") == 0)
                return p;
        }
        /* htmlParseScript: up to "</" and the element's name, in any case. */
        const unsigned char *q = p;
        for (;;) {
            q = memchr(q, '<', (size_t)(end - q));
            if (!q) return end;
            if (q + 1 < end && q[1] == '/' && (size_t)(end - q - 2) >= el &&
                strncasecmp((const char *)q + 2, elem, el) == 0)
                break;
            q++;
        }
        p = q;
        q = html_name(p + 2, end, name, &nl);
        if (strcmp(name, elem) == 0) return end_of_end_tag(q, end);
        if (maybe_open(sc, name)) { /* "</scripts>": it may close elements */
            sc->rc = UNSURE;
            return p;
        }
        p = end_of_end_tag(q, end); /* ignored */
    }
}

/* The first title's text from p up to the next '<': htmlParseCharData (which drops
 * what is not an XML character) and htmlParseReference. */
static const unsigned char *title_text(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end, *run = p;
    while (p < end && *p != '<') {
        unsigned char c = *p;
        if (c != '&' && !is(c, C_DROPPED) &&
            !(c == 0xEF && end - p >= 3 && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF))) {
            p++;
            continue;
        }
        if (buf_append(&sc->title, run, (size_t)(p - run)) != 0) goto fail;
        if (c != '&') { /* dropped: a C0 control, U+FFFE or U+FFFF */
            p += c == 0xEF ? 3 : 1;
        } else if (p + 1 < end && p[1] == '#') {
            unsigned v;
            p = scan_char_ref(p, end, &v);
            if (v && scan_add_utf8(&sc->title, v) != 0) goto fail;
        } else {
            int failed = 0;
            p = scan_entity_ref(p + 1, end, &sc->title, &failed);
            if (failed) goto fail;
        }
        run = p;
    }
    if (buf_append(&sc->title, run, (size_t)(p - run)) != 0) goto fail;
    return p;
fail:
    sc->rc = FAILED;
    return p;
}

static int at_doctype(const unsigned char *p, const unsigned char *end)
{
    return end - p >= 9 && p[0] == '<' && p[1] == '!' && scan_at_ci(p + 2, end, "DOCTYPE");
}

static int at_comment(const unsigned char *p, const unsigned char *end)
{
    return end - p >= 4 && p[0] == '<' && p[1] == '!' && p[2] == '-' && p[3] == '-';
}

/* A start tag that may be reported, or be a <title>, <script> or <style>, and the
 * raw text after it when it opened a <script> or <style>. */
static __attribute__((noinline)) const unsigned char *
named_element(struct scanner *sc, const unsigned char *p, const unsigned char *q, unsigned h)
{
    enum raw raw = RAW_NONE;
    p = named_start_tag(sc, p, q, h, &raw);
    if (!sc->rc && raw != RAW_NONE) p = raw_text(sc, p, raw);
    return p;
}

/* Whether a start tag of name hash h is reported or special (named_element's). */
static inline int noted(const struct scanner *sc, unsigned h)
{
    return bit_has(sc->wanted, h & 255) || h == sc->special[0] || h == sc->special[1] ||
           h == sc->special[2];
}

/* The attributes of a start tag neither reported nor special, from q (after its
 * name), and its end. */
static __attribute__((noinline)) const unsigned char *tag_rest(struct scanner *sc,
                                                               const unsigned char *q)
{
    const unsigned char *end = sc->end;
    q = skip_attrs(sc, skip_blanks(q, end));
    if (q < end) q += *q == '>' ? 1 : 2; /* '>' or "/>" */
    return q;
}

/* htmlParseStartTag at '<' and a letter, and the raw text after it when it opened a
 * <script> or <style>. Most tags are neither reported nor special: their name is
 * only hashed, and their attributes skipped; inline, and without a call for a tag
 * without attributes. */
static inline const unsigned char *element(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    if (sc->title_state == T_IN) { /* an element inside the title: libxml2's tree decides */
        sc->rc = UNSURE;
        return p;
    }
    unsigned h;
    const unsigned char *q = name_at(p + 1, end, &h);
    bit_add(sc->opened, h & 255);
    if (noted(sc, h)) return named_element(sc, p, q, h);
    if (q < end && *q == '>') return q + 1;
    return tag_rest(sc, q);
}

/* "<a" and a blank at p, when a_reported: named_start_tag for the commonest reported
 * tag, without reading, copying and looking up its name (an <a> is neither a title
 * nor raw text). */
static __attribute__((noinline)) const unsigned char *a_element(struct scanner *sc,
                                                                const unsigned char *p)
{
    const unsigned char *end = sc->end;
    bit_add(sc->opened, sc->a_bit);
    p = skip_blanks(p + 3, end);
    sc->natts = 0;
    if (!room_for_tag(sc, p)) return p;
    if (end - p > 5 && memcmp(p, "href=", 5) == 0) { /* most: the name known, not read */
        char *an = sc->attrs.p + sc->attrs.n;
        memcpy(an, "href", 5);
        sc->attrs.n += 5;
        if (push_att(sc, an) != 0 || push_att(sc, sc->attrs.p + sc->attrs.n) != 0) {
            sc->rc = FAILED;
            return p;
        }
        p = att_value(sc, skip_blanks(p + 5, end), 1);
        if (sc->rc) return p;
        p = skip_blanks(p, end);
    }
    p = more_attrs(sc, p);
    if (sc->rc) return p;
    if (p < end) p += *p == '>' ? 1 : 2; /* '>' or "/>" */
    if (report(sc, "a") != 0) sc->rc = FAILED;
    return p;
}

/* Outside the title, from p: text, end tags and start tags neither reported nor
 * special, which change nothing the scan knows but the names opened, in a loop of
 * their own. Returns the '<' of other markup (*other set), or where the text goes on
 * after a start tag that may be reported or special (which may change what the scan
 * knows), or end. */
static inline const unsigned char *outside(struct scanner *sc, const unsigned char *p, int *other)
{
    const unsigned char *end = sc->end;
    *other = 0;
    for (;;) {
        if (p < end && *p != '<') {
            if (p + 1 < end && p[1] == '<') /* a tag on the next line: skip the call */
                p++;
            else if (!(p = find(p, end, '<')))
                return end;
        }
        if (p >= end) return end;
        unsigned char c1 = p + 1 < end ? p[1] : 0;
        if (c1 == '/') {
            p = end_tag(sc, p);
        } else if ((c1 | 0x20) == 'a' && sc->a_reported && p + 2 < end && is(p[2], C_BLANK)) {
            p = a_element(sc, p);
            if (sc->rc) return p;
        } else if (is(c1, C_LETTER)) {
            unsigned h;
            const unsigned char *q = name_at(p + 1, end, &h);
            bit_add(sc->opened, h & 255);
            if (noted(sc, h)) return named_element(sc, p, q, h);
            p = q < end && *q == '>' ? q + 1 : tag_rest(sc, q);
        } else {
            *other = 1;
            return p;
        }
    }
}

/* htmlParseContentInternal from p to the end of the text. */
static void content(struct scanner *sc, const unsigned char *p)
{
    const unsigned char *end = sc->end;
    while (!sc->rc) {
        if (sc->title_state == T_IN) {
            p = title_text(sc, p);
            if (sc->rc) return;
        } else {
            int other;
            p = outside(sc, p, &other);
            if (p >= end) return;
            if (!other) continue;
        }
        if (!p || p >= end) return;
        unsigned char c1 = p + 1 < end ? p[1] : 0;
        if (c1 == '/') {
            p = end_tag(sc, p);
        } else if (is(c1, C_LETTER)) {
            p = element(sc, p);
        } else if (at_doctype(p, end)) {
            if (sc->title_state == T_IN) {
                sc->rc = UNSURE;
                return;
            }
            p = scan_doctype(p, end);
            /* The same turn of libxml2's loop goes on without looking for an end tag
             * (or another DOCTYPE): a '<' that starts no comment, processing
             * instruction or start tag is text. */
            if (p < end && *p == '<') {
                c1 = p + 1 < end ? p[1] : 0;
                if (at_comment(p, end))
                    p = scan_comment(p, end);
                else if (c1 == '?')
                    p = scan_pi(p, end);
                else if (is(c1, C_LETTER))
                    p = element(sc, p);
                else
                    p++;
            }
        } else if (at_comment(p, end)) {
            p = scan_comment(p, end);
        } else if (c1 == '?') {
            p = scan_pi(p, end);
        } else {
            if (sc->title_state == T_IN && buf_append(&sc->title, "<", 1) != 0) sc->rc = FAILED;
            p++;
        }
    }
}

/* The comments and processing instructions htmlParseDocument reads before content. */
static const unsigned char *misc(const unsigned char *p, const unsigned char *end)
{
    p = skip_blanks(p, end);
    while (at_comment(p, end) || (end - p >= 2 && p[0] == '<' && p[1] == '?')) {
        if (at_comment(p, end)) p = scan_comment(p, end);
        if (end - p >= 2 && p[0] == '<' && p[1] == '?') p = scan_pi(p, end);
        p = skip_blanks(p, end);
    }
    return p;
}

int html_scan_tags(const char *text, size_t len, const char *const *tags, html_tag_fn tag,
                   void *arg, char **title, struct buf *kept)
{
    static const unsigned char bom[] = {0xEF, 0xBB, 0xBF};
    if (title) *title = NULL;
    struct scanner sc = {
        .end = (const unsigned char *)text + len, .tags = tags, .tag = tag, .arg = arg};
    /* What the reported tags keep is at most twice the text they are read from. */
    if (len > (SIZE_MAX - 256) / 2 || buf_reserve(kept, 2 * len + 256) != 0) return FAILED;
    sc.attrs = *kept;
    static const char *const implied[] = {"html", "head", "body", "p"};
    for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]); i++)
        bit_add(sc.opened, name_bit(implied[i]));
    for (const char *const *t = tags; *t; t++)
        bit_add(sc.wanted, name_bit(*t));
    sc.special[0] = name_hash("title");
    sc.special[1] = name_hash("script");
    sc.special[2] = name_hash("style");
    sc.a_bit = name_bit("a");
    sc.a_reported = reported(&sc, "a", sc.a_bit);
    const unsigned char *p = (const unsigned char *)text, *end = sc.end;
    /* Switching the context to UTF-8 skips a byte order mark, and the check of the
     * first four bytes in htmlParseDocument another. */
    if (end - p >= 3 && memcmp(p, bom, 3) == 0) p += 3;
    if (end - p >= 4 && memcmp(p, bom, 3) == 0) p += 3;
    p = misc(p, end);
    if (at_doctype(p, end)) p = misc(scan_doctype(p, end), end);
    content(&sc, p);
    *kept = sc.attrs;
    free(sc.atts);
    if (sc.rc == DONE && title) {
        *title = sc.title.p; /* NULL without a <title> */
        sc.title.p = NULL;
    }
    free(sc.title.p);
    return sc.rc;
}
