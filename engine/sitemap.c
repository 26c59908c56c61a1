/* sitemap.c: sitemaps from bytes to entries. Gzip is inflated with a hard limit on
 * the output; XML goes through xmlTextReader, which streams and never loads
 * external entities (no XXE, no network); anything that does not start like XML
 * is read as a text sitemap, one URL per line. */
#include "sitemap.h"

#include <libxml/xmlreader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

static int is_gzip(const char *p, size_t n)
{
    return n >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b;
}

/* Inflate gzip data into *out, refusing more than SITEMAP_MAX_BYTES. */
static int gunzip(const char *in, size_t len, char **out, size_t *outlen, char *err, size_t errlen)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        snprintf(err, errlen, "sitemap: cannot start gzip decoding");
        return -1;
    }
    size_t cap = len * 4 < 65536 ? 65536 : len * 4, n = 0;
    if (cap > SITEMAP_MAX_BYTES + 1) cap = SITEMAP_MAX_BYTES + 1;
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "sitemap: out of memory");
        goto fail;
    }
    int rc = Z_OK;
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    while (rc != Z_STREAM_END) {
        if (n == cap) {
            if (cap > SITEMAP_MAX_BYTES) {
                snprintf(err, errlen,
                         "sitemap: more than %u bytes uncompressed (the protocol's limit is 50 MB)",
                         SITEMAP_MAX_BYTES);
                goto fail;
            }
            size_t ncap = cap * 2 > SITEMAP_MAX_BYTES + 1 ? SITEMAP_MAX_BYTES + 1 : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                snprintf(err, errlen, "sitemap: out of memory");
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        zs.next_out = (Bytef *)buf + n;
        zs.avail_out = (uInt)(cap - n);
        rc = inflate(&zs, Z_NO_FLUSH);
        n = cap - zs.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END) {
            snprintf(err, errlen, "sitemap: bad gzip data (%s)", zs.msg ? zs.msg : "truncated");
            goto fail;
        }
        if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
            snprintf(err, errlen, "sitemap: gzip data ends early");
            goto fail;
        }
    }
    if (n > SITEMAP_MAX_BYTES) {
        snprintf(err, errlen,
                 "sitemap: more than %u bytes uncompressed (the protocol's limit is 50 MB)",
                 SITEMAP_MAX_BYTES);
        goto fail;
    }
    inflateEnd(&zs);
    *out = buf;
    *outlen = n;
    return 0;
fail:
    inflateEnd(&zs);
    free(buf);
    return -1;
}

static int too_many(char *err, size_t errlen)
{
    snprintf(err, errlen, "sitemap: more than %d URLs (the protocol's limit)", SITEMAP_MAX_URLS);
    return -1;
}

/* Copy s (up to a NUL, if any) without surrounding whitespace into a fresh string. */
static char *trimmed(const char *s, size_t n)
{
    n = strnlen(s, n);
    while (n && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    char *t = malloc(n + 1);
    if (t) {
        memcpy(t, s, n);
        t[n] = '\0';
    }
    return t;
}

static int parse_text(const char *p, size_t len, sitemap_fn fn, void *arg, char *err, size_t errlen)
{
    int count = 0;
    const char *end = p + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = trimmed(p, n);
        p += n + 1;
        if (!line) {
            snprintf(err, errlen, "sitemap: out of memory");
            return -1;
        }
        if (*line &&
            (strncasecmp(line, "http://", 7) == 0 || strncasecmp(line, "https://", 8) == 0)) {
            if (++count > SITEMAP_MAX_URLS) {
                free(line);
                return too_many(err, errlen);
            }
            sitemap_entry_t e = {.loc = line};
            int stop = fn(arg, &e);
            free(line);
            if (stop) return 0;
        } else {
            free(line);
        }
    }
    return 0;
}

enum field { F_NONE, F_LOC, F_LASTMOD, F_CHANGEFREQ, F_PRIORITY, F_COUNT };

struct xml_state {
    char *fields[F_COUNT];
    enum field current;
    int in_entry;
    int count;
};

static enum field field_of(const char *name)
{
    if (strcmp(name, "loc") == 0) return F_LOC;
    if (strcmp(name, "lastmod") == 0) return F_LASTMOD;
    if (strcmp(name, "changefreq") == 0) return F_CHANGEFREQ;
    if (strcmp(name, "priority") == 0) return F_PRIORITY;
    return F_NONE;
}

static void clear_fields(struct xml_state *st)
{
    for (int i = 0; i < F_COUNT; i++) {
        free(st->fields[i]);
        st->fields[i] = NULL;
    }
}

/* Append text to the field being read (text may come in several nodes). */
static int add_text(struct xml_state *st, const char *text)
{
    char *old = st->fields[st->current];
    size_t a = old ? strlen(old) : 0, b = strlen(text);
    char *s = realloc(old, a + b + 1);
    if (!s) return -1;
    memcpy(s + a, text, b + 1);
    st->fields[st->current] = s;
    return 0;
}

static int emit(struct xml_state *st, sitemap_fn fn, void *arg, int *stop, char *err, size_t errlen)
{
    char *clean[F_COUNT] = {0};
    for (int i = 1; i < F_COUNT; i++)
        if (st->fields[i]) clean[i] = trimmed(st->fields[i], strlen(st->fields[i]));
    int rc = 0;
    if (clean[F_LOC] && *clean[F_LOC]) {
        if (++st->count > SITEMAP_MAX_URLS) {
            rc = too_many(err, errlen);
        } else {
            sitemap_entry_t e = {clean[F_LOC], clean[F_LASTMOD], clean[F_CHANGEFREQ],
                                 clean[F_PRIORITY]};
            *stop = fn(arg, &e);
        }
    }
    for (int i = 0; i < F_COUNT; i++)
        free(clean[i]);
    clear_fields(st);
    return rc;
}

static void quiet_errors(void *arg, const char *msg, xmlParserSeverities severity,
                         xmlTextReaderLocatorPtr locator)
{
    (void)arg;
    (void)msg;
    (void)severity;
    (void)locator;
}

static int parse_xml(const char *p, size_t len, enum sitemap_kind *kind, sitemap_fn fn, void *arg,
                     char *err, size_t errlen)
{
    xmlTextReaderPtr r = xmlReaderForMemory(p, (int)len, NULL, NULL,
                                            XML_PARSE_NONET | XML_PARSE_NOERROR |
                                                XML_PARSE_NOWARNING | XML_PARSE_COMPACT);
    if (!r) {
        snprintf(err, errlen, "sitemap: cannot read XML");
        return -1;
    }
    /* Errors come back through xmlTextReaderRead's result; libxml2 must not print
     * them on stderr. */
    xmlTextReaderSetErrorHandler(r, quiet_errors, NULL);
    struct xml_state st = {0};
    int rc = 0, stop = 0, ret, root_seen = 0;
    while (!stop && rc == 0 && (ret = xmlTextReaderRead(r)) == 1) {
        int type = xmlTextReaderNodeType(r);
        const char *name = (const char *)xmlTextReaderConstLocalName(r);
        if (type == XML_READER_TYPE_ELEMENT) {
            if (!root_seen) {
                root_seen = 1;
                if (strcmp(name, "sitemapindex") == 0)
                    *kind = SITEMAP_INDEX;
                else if (strcmp(name, "urlset") == 0)
                    *kind = SITEMAP_URLSET;
                else {
                    snprintf(err, errlen,
                             "sitemap: root element is <%s>, not <urlset> or <sitemapindex>", name);
                    rc = -1;
                }
            } else if (strcmp(name, "url") == 0 || strcmp(name, "sitemap") == 0) {
                clear_fields(&st);
                st.in_entry = 1;
            } else if (st.in_entry && !xmlTextReaderIsEmptyElement(r)) {
                st.current = field_of(name);
            }
        } else if (type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA) {
            if (st.in_entry && st.current != F_NONE) {
                const char *v = (const char *)xmlTextReaderConstValue(r);
                if (v && add_text(&st, v) < 0) {
                    snprintf(err, errlen, "sitemap: out of memory");
                    rc = -1;
                }
            }
        } else if (type == XML_READER_TYPE_END_ELEMENT) {
            if (strcmp(name, "url") == 0 || strcmp(name, "sitemap") == 0) {
                if (st.in_entry) rc = emit(&st, fn, arg, &stop, err, errlen);
                st.in_entry = 0;
            }
            st.current = F_NONE;
        }
    }
    if (rc == 0 && !stop && ret < 0) {
        const xmlError *e = xmlGetLastError();
        snprintf(err, errlen, "sitemap: malformed XML%s%s", e && e->message ? ": " : "",
                 e && e->message ? e->message : "");
        /* libxml2's messages span lines: one line here. */
        for (char *c = err; *c; c++)
            if (*c == '\n') *c = ' ';
        size_t n = strlen(err);
        while (n && err[n - 1] == ' ')
            err[--n] = '\0';
        rc = -1;
    }
    if (rc == 0 && !root_seen) {
        snprintf(err, errlen, "sitemap: no XML element found");
        rc = -1;
    }
    clear_fields(&st);
    xmlFreeTextReader(r);
    return rc;
}

static int looks_like_xml(const char *p, size_t n)
{
    if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3, n -= 3;
    while (n && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++, n--;
    return n && *p == '<';
}

int sitemap_parse(const char *body, size_t len, enum sitemap_kind *kind, sitemap_fn fn, void *arg,
                  char *err, size_t errlen)
{
    char *inflated = NULL;
    if (is_gzip(body, len)) {
        if (gunzip(body, len, &inflated, &len, err, errlen) < 0) return -1;
        body = inflated;
    } else if (len > SITEMAP_MAX_BYTES) {
        snprintf(err, errlen, "sitemap: more than %u bytes (the protocol's limit is 50 MB)",
                 SITEMAP_MAX_BYTES);
        return -1;
    }
    int rc;
    if (looks_like_xml(body, len)) {
        rc = parse_xml(body, len, kind, fn, arg, err, errlen);
    } else {
        *kind = SITEMAP_TEXT;
        rc = parse_text(body, len, fn, arg, err, errlen);
    }
    free(inflated);
    return rc;
}
