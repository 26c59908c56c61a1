/* http_cookies.c: cookie jars (http_cookies.h), kept here rather than in libcurl's cookie
 * engine: RFC 6265's rules, as curl 7.88 applies them, for a Set-Cookie line (cookies_set,
 * and a response's lines through cookies_take) and for what a request sends
 * (cookies_each, cookies_header); and the caps of http_cookies.h. A jar holds each
 * site's cookies in a list, oldest first, and all of them in a hash table by name,
 * domain and path, so that storing, replacing, capping and sending cost the same however
 * full the jar is. curl 7.88 walked a site's cookies for each one it stored, and
 * offered no cheap way to drop the oldest (docs/benchmarks.md, bench-cookies). */
#include "http_cookies.h"

#include "ascii.h"
#include <arpa/inet.h>
#include <libpsl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* What curl 7.88 sends at most in one request: 150 cookies, a Cookie header of
 * 8190 bytes; the longest name plus value it keeps, and the longest Set-Cookie
 * line it reads. */
#define MAX_SEND 150
#define MAX_HEADER 8190
#define MAX_NAME_VALUE 4096
#define MAX_LINE 5000

#define FIRST_BUCKETS 64 /* of the cookie table; it doubles as the jar grows */
#define FIRST_SITE_BUCKETS 16

/* What a jar's two tables chain (sites by name; cookies by name, domain and path):
 * the first member of a struct site and of a struct jc. */
struct node {
    struct node *next; /* in its bucket */
    uint32_t hash;
};

/* One cookie: c's strings are in text. */
struct jc {
    struct node node; /* hashed by name, domain and path */
    cookie_t c;
    size_t path_len; /* as matched and sorted: a trailing '/' cut */
    size_t domain_len, name_len, value_len;
    uint64_t created;         /* the order cookies came in; a cookie replaced keeps its own */
    struct jc *older, *newer; /* in its site's list */
    struct jc *jar_older, *jar_newer; /* in the jar's list */
    struct site *site;
    char text[];
};

/* A site (a registrable domain and its hosts; an IP address or a public suffix on its
 * own) and its cookies, oldest first. A site without cookies goes. */
struct site {
    struct node node; /* hashed by name */
    struct jc *oldest, *newest;
    size_t count;
    size_t secure; /* how many of them are Secure (store: a Secure cookie's shadow) */
    char name[];
};

struct cookies {
    int refs;
    struct node **buckets;  /* the cookies */
    size_t nbuckets, total; /* nbuckets: a power of 2, as nsite_buckets */
    struct jc *oldest, *newest;
    struct node **sites;
    size_t nsite_buckets, nsites;
    uint64_t created;
};

static uint32_t fnv(uint32_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

#define FNV_START 2166136261u

cookies_t *cookies_new(void)
{
    cookies_t *jar = calloc(1, sizeof(*jar));
    if (!jar) return NULL;
    jar->refs = 1;
    jar->buckets = calloc(FIRST_BUCKETS, sizeof(struct node *));
    jar->sites = calloc(FIRST_SITE_BUCKETS, sizeof(struct node *));
    if (!jar->buckets || !jar->sites) goto fail;
    jar->nbuckets = FIRST_BUCKETS;
    jar->nsite_buckets = FIRST_SITE_BUCKETS;
    return jar;
fail:
    free(jar->buckets);
    free(jar->sites);
    free(jar);
    return NULL;
}

cookies_t *cookies_ref(cookies_t *jar)
{
    jar->refs++;
    return jar;
}

void cookies_clear(cookies_t *jar)
{
    for (struct jc *j = jar->oldest, *next; j; j = next) {
        next = j->jar_newer;
        free(j);
    }
    for (size_t i = 0; i < jar->nsite_buckets; i++)
        for (struct node *e = jar->sites[i], *next; e; e = next) {
            next = e->next;
            free(e); /* its struct site */
        }
    memset(jar->buckets, 0, jar->nbuckets * sizeof(struct node *));
    memset(jar->sites, 0, jar->nsite_buckets * sizeof(struct node *));
    jar->oldest = jar->newest = NULL;
    jar->total = jar->nsites = 0;
}

void cookies_unref(cookies_t *jar)
{
    if (!jar || --jar->refs > 0) return;
    cookies_clear(jar);
    free(jar->buckets);
    free(jar->sites);
    free(jar);
}

/* ---- a URL's parts ---- */

struct target {
    char *host; /* lower-case; an IPv6 address in brackets, as curl gives it */
    char *path;
    int secure;       /* a secure context, as curl 7.88 decides it for cookies */
    const char *site; /* in host: the site whose cookies it may get (site_of) */
};

static int is_ip(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return host[0] == '[' || inet_pton(AF_INET, host, buf) == 1;
}

/* The site of a lower-case host or cookie domain: its registrable domain, else
 * itself (an IP address, a public suffix). A Domain attribute covers the host that
 * sent it and is no public suffix, so a cookie's site is that host's site. */
static const char *site_of(const char *domain)
{
    if (is_ip(domain)) return domain; /* libpsl would make 127.0.0.1's site 0.1 */
    const char *site = psl_registrable_domain(psl_builtin(), domain);
    return site ? site : domain;
}

static void target_free(struct target *t)
{
    curl_free(t->host);
    curl_free(t->path);
}

static int set_err(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s", what);
    return -1;
}

static int parse_target(const char *url, struct target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    CURLU *u = curl_url();
    char *scheme = NULL;
    if (!u) return set_err(err, errlen, "out of memory");
    int rc = -1;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &t->host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &t->path, 0) != CURLUE_OK) {
        set_err(err, errlen, "not a URL");
        goto out;
    }
    if (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0) {
        set_err(err, errlen, "not an http or https URL");
        goto out;
    }
    for (char *p = t->host; *p; p++)
        *p = (char)ascii_lower((unsigned char)*p);
    /* curl 7.88 (http.c) counts localhost and the loopback addresses as secure
     * contexts too, for sending Secure cookies and for taking them. */
    t->secure = strcasecmp(scheme, "https") == 0 || strcmp(t->host, "localhost") == 0 ||
                strcmp(t->host, "127.0.0.1") == 0 || strcmp(t->host, "[::1]") == 0;
    t->site = site_of(t->host);
    rc = 0;
out:
    curl_free(scheme);
    curl_url_cleanup(u);
    if (rc < 0) target_free(t);
    return rc;
}

/* host ends with domain at a label boundary (RFC 6265 5.1.3 domain-match). */
static int tail_match(const char *domain, const char *host)
{
    size_t d = strlen(domain), h = strlen(host);
    if (d > h || strcasecmp(host + (h - d), domain) != 0) return 0;
    return d == h || host[h - d - 1] == '.';
}

/* RFC 6265 5.1.4 path-match, for the first c bytes of cookie_path (a trailing '/'
 * cut, as curl matches). */
static int path_match(const char *cookie_path, size_t c, const char *path)
{
    size_t p;
    if (c <= 1) return 1; /* "/" */
    if (*path != '/') path = "/";
    p = strlen(path);
    if (p < c || strncmp(cookie_path, path, c) != 0) return 0;
    return p == c || path[c] == '/';
}

/* ---- a Set-Cookie line ---- */

struct set_cookie {
    const char *name, *value, *domain, *path, *expires_text, *max_age;
    size_t name_len, value_len, domain_len, path_len, expires_len, max_age_len;
    int secure, http_only;
};

static int has_ctl(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 1;
    return 0;
}

static int attr_is(const char *a, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(a, name, n) == 0;
}

/* RFC 6265 5.2: name=value, then attributes; the last of each attribute wins,
 * unknown ones are ignored. -1 with err set when there is no cookie in it. */
static int parse_set_cookie(const char *line, struct set_cookie *sc, char *err, size_t errlen)
{
    memset(sc, 0, sizeof(*sc));
    const char *end = line + strcspn(line, ";");
    const char *eq = memchr(line, '=', (size_t)(end - line));
    if (!eq) return set_err(err, errlen, "no name=value in the cookie");
    sc->name = line;
    sc->name_len = (size_t)(eq - line);
    sc->value = eq + 1;
    sc->value_len = (size_t)(end - eq - 1);
    ascii_trim_wsp(&sc->name, &sc->name_len);
    ascii_trim_wsp(&sc->value, &sc->value_len);
    if (!sc->name_len) return set_err(err, errlen, "the cookie has no name");
    if (has_ctl(sc->name, sc->name_len) || has_ctl(sc->value, sc->value_len))
        return set_err(err, errlen, "control characters in the cookie's name or value");
    if (sc->name_len + sc->value_len > MAX_NAME_VALUE)
        return set_err(err, errlen, "the cookie's name and value are over 4096 bytes");
    while (*end == ';') {
        const char *a = end + 1;
        end = a + strcspn(a, ";");
        const char *v = memchr(a, '=', (size_t)(end - a));
        size_t an = v ? (size_t)(v - a) : (size_t)(end - a), vn = 0;
        if (v) {
            v++;
            vn = (size_t)(end - v);
            ascii_trim_wsp(&v, &vn);
        }
        ascii_trim_wsp(&a, &an);
        if (has_ctl(v ? v : "", vn))
            return set_err(err, errlen, "control characters in an attribute");
        if (attr_is(a, an, "secure"))
            sc->secure = 1;
        else if (attr_is(a, an, "httponly"))
            sc->http_only = 1;
        else if (attr_is(a, an, "domain") && vn)
            sc->domain = v, sc->domain_len = vn;
        else if (attr_is(a, an, "path"))
            sc->path = v, sc->path_len = vn;
        else if (attr_is(a, an, "expires"))
            sc->expires_text = v, sc->expires_len = vn;
        else if (attr_is(a, an, "max-age"))
            sc->max_age = v, sc->max_age_len = vn;
    }
    return 0;
}

/* The cookie's expiry: 0 for a session cookie, 1 (long past) to delete it. Max-Age
 * wins over Expires; one that does not parse is ignored (RFC 6265 5.2.1, 5.2.2). */
static long long expiry(const struct set_cookie *sc)
{
    char buf[128];
    long long now = (long long)time(NULL);
    if (sc->max_age && sc->max_age_len < sizeof(buf)) {
        memcpy(buf, sc->max_age, sc->max_age_len);
        buf[sc->max_age_len] = '\0';
        const char *p = buf[0] == '-' ? buf + 1 : buf;
        if (*p && strspn(p, "0123456789") == strlen(p)) {
            long long secs = strlen(p) > 12 ? 999999999999LL : strtoll(p, NULL, 10);
            return buf[0] == '-' || secs == 0 ? 1 : now + secs;
        }
    }
    if (sc->expires_text && sc->expires_len < sizeof(buf)) {
        memcpy(buf, sc->expires_text, sc->expires_len);
        buf[sc->expires_len] = '\0';
        time_t t = curl_getdate(buf, NULL);
        if (t != -1) return (long long)t <= now ? 1 : (long long)t;
    }
    return 0;
}

/* The domain the cookie goes to, into dom (lower-case, no leading dot), and whether
 * its subdomains get it too; -1 with err set when Domain does not cover the host or
 * is a public suffix (RFC 6265 5.3 steps 5 and 6). */
static int cookie_domain(const struct set_cookie *sc, const struct target *t, char *dom,
                         size_t domlen, int *tail, char *err, size_t errlen)
{
    *tail = 0;
    if (!sc->domain) {
        size_t n = strlen(t->host);
        if (n >= domlen) return set_err(err, errlen, "a host name too long for a cookie");
        memcpy(dom, t->host, n + 1);
        return 0;
    }
    const char *d = sc->domain;
    size_t n = sc->domain_len;
    if (*d == '.') d++, n--;
    if (!n || n >= domlen) return set_err(err, errlen, "a Domain attribute that is no domain");
    for (size_t i = 0; i < n; i++)
        dom[i] = (char)ascii_lower((unsigned char)d[i]);
    dom[n] = '\0';
    if (strcmp(dom, t->host) == 0 && is_ip(t->host)) return 0; /* an IP: that host alone */
    if (is_ip(t->host) || !tail_match(dom, t->host) ||
        !psl_is_cookie_domain_acceptable(psl_builtin(), t->host, dom)) {
        snprintf(err, errlen, "Domain=%s is not %s or a domain above it that may set cookies", dom,
                 t->host);
        return -1;
    }
    *tail = 1;
    return 0;
}

/* The cookie's path into buf: its Path when that starts with '/', else the URL's
 * directory (RFC 6265 5.1.4's default-path). */
static void cookie_path(const struct set_cookie *sc, const struct target *t, char *buf, size_t len)
{
    if (sc->path && sc->path_len && sc->path[0] == '/' && sc->path_len < len) {
        memcpy(buf, sc->path, sc->path_len);
        buf[sc->path_len] = '\0';
        return;
    }
    const char *slash = strrchr(t->path, '/');
    size_t n = t->path[0] == '/' && slash && slash != t->path ? (size_t)(slash - t->path) : 1;
    if (n >= len) n = 1;
    memcpy(buf, n == 1 ? "/" : t->path, n);
    buf[n] = '\0';
}

/* ---- the tables ---- */

/* A table of *n buckets doubled; out of memory, it stays as it is and its chains
 * grow longer. */
static void grow(struct node ***table, size_t *n)
{
    size_t m = *n * 2;
    struct node **b = calloc(m, sizeof(struct node *));
    if (!b) return;
    for (size_t i = 0; i < *n; i++)
        for (struct node *e = (*table)[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (m - 1)];
            b[e->hash & (m - 1)] = e;
        }
    free(*table);
    *table = b;
    *n = m;
}

static void push(struct node **table, size_t n, struct node *e)
{
    e->next = table[e->hash & (n - 1)];
    table[e->hash & (n - 1)] = e;
}

static void unlink_node(struct node **table, size_t n, const struct node *e)
{
    struct node **p = &table[e->hash & (n - 1)];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
}

/* The site of that name; with create, a new one when there is none (NULL when out
 * of memory). */
static struct site *site_find(cookies_t *jar, const char *name, int create)
{
    uint32_t h = fnv(FNV_START, name, strlen(name));
    for (struct node *e = jar->sites[h & (jar->nsite_buckets - 1)]; e; e = e->next)
        if (e->hash == h && strcmp(((struct site *)e)->name, name) == 0) return (struct site *)e;
    if (!create) return NULL;
    size_t n = strlen(name);
    struct site *s = calloc(1, sizeof(*s) + n + 1);
    if (!s) return NULL;
    memcpy(s->name, name, n + 1);
    s->node.hash = h;
    push(jar->sites, jar->nsite_buckets, &s->node);
    if (++jar->nsites > jar->nsite_buckets * 2) grow(&jar->sites, &jar->nsite_buckets);
    return s;
}

static uint32_t key_hash(const char *name, size_t name_len, const char *domain, const char *path)
{
    uint32_t h = fnv(FNV_START, name, name_len);
    h = fnv(h, domain, strlen(domain) + 1); /* with its '\0': "ab"+"c" is not "a"+"bc" */
    return fnv(h, path, strlen(path));
}

/* The cookie of that name, domain and path (the one a new cookie replaces, RFC 6265
 * 5.3 step 11); NULL: none. */
static struct jc *find(cookies_t *jar, uint32_t h, const char *name, size_t name_len,
                       const char *domain, const char *path)
{
    for (struct node *e = jar->buckets[h & (jar->nbuckets - 1)]; e; e = e->next) {
        struct jc *j = (struct jc *)e;
        if (e->hash == h && j->name_len == name_len && memcmp(j->c.name, name, name_len) == 0 &&
            strcmp(j->c.domain, domain) == 0 && strcmp(j->c.path, path) == 0)
            return j;
    }
    return NULL;
}

/* j out of the jar and freed; its site goes with its last cookie. */
static void drop(cookies_t *jar, struct jc *j)
{
    unlink_node(jar->buckets, jar->nbuckets, &j->node);
    struct site *s = j->site;
    *(j->older ? &j->older->newer : &s->oldest) = j->newer;
    *(j->newer ? &j->newer->older : &s->newest) = j->older;
    *(j->jar_older ? &j->jar_older->jar_newer : &jar->oldest) = j->jar_newer;
    *(j->jar_newer ? &j->jar_newer->jar_older : &jar->newest) = j->jar_older;
    s->secure -= j->c.secure != 0;
    jar->total--;
    free(j);
    if (--s->count) return;
    unlink_node(jar->sites, jar->nsite_buckets, &s->node);
    jar->nsites--;
    free(s);
}

/* A copy of c (its name and value: the first name_len and value_len bytes), in no
 * list yet; NULL when out of memory. */
static struct jc *make(const cookie_t *c, size_t name_len, size_t value_len)
{
    size_t dl = strlen(c->domain), pl = strlen(c->path);
    struct jc *j = malloc(sizeof(*j) + name_len + value_len + dl + pl + 4);
    if (!j) return NULL;
    memset(j, 0, sizeof(*j));
    j->c = *c;
    char *t = j->text;
    const char *parts[4] = {c->name, c->value, c->domain, c->path};
    size_t lens[4] = {name_len, value_len, dl, pl};
    const char **to[4] = {&j->c.name, &j->c.value, &j->c.domain, &j->c.path};
    for (int i = 0; i < 4; i++) {
        memcpy(t, parts[i], lens[i]);
        t[lens[i]] = '\0';
        *to[i] = t;
        t += lens[i] + 1;
    }
    j->path_len = pl > 1 && c->path[pl - 1] == '/' ? pl - 1 : pl;
    j->domain_len = dl;
    j->name_len = name_len;
    j->value_len = value_len;
    return j;
}

/* j takes old's place in the jar (its age, its place in the lists); old is freed. */
static void replace(cookies_t *jar, struct jc *old, struct jc *j)
{
    j->created = old->created;
    j->site = old->site;
    j->older = old->older;
    j->newer = old->newer;
    j->jar_older = old->jar_older;
    j->jar_newer = old->jar_newer;
    unlink_node(jar->buckets, jar->nbuckets, &old->node);
    push(jar->buckets, jar->nbuckets, &j->node); /* the same hash: the same bucket */
    *(j->older ? &j->older->newer : &j->site->oldest) = j;
    *(j->newer ? &j->newer->older : &j->site->newest) = j;
    *(j->jar_older ? &j->jar_older->jar_newer : &jar->oldest) = j;
    *(j->jar_newer ? &j->jar_newer->jar_older : &jar->newest) = j;
    j->site->secure = j->site->secure - (old->c.secure != 0) + (j->c.secure != 0);
    free(old);
}

/* j, new, into the jar as s's newest cookie and the jar's. */
static void append(cookies_t *jar, struct site *s, struct jc *j)
{
    j->site = s;
    j->created = ++jar->created;
    j->older = s->newest;
    *(s->newest ? &s->newest->newer : &s->oldest) = j;
    s->newest = j;
    j->jar_older = jar->newest;
    *(jar->newest ? &jar->newest->jar_newer : &jar->oldest) = j;
    jar->newest = j;
    push(jar->buckets, jar->nbuckets, &j->node);
    s->count++;
    s->secure += j->c.secure != 0;
    if (++jar->total > jar->nbuckets * 2) grow(&jar->buckets, &jar->nbuckets);
}

/* ---- the caps ---- */

/* The most each site may keep so that the sites keep at most COOKIES_JAR_KEEP in
 * all: those holding the most lose theirs first. 0 when there are more sites than
 * that. */
static size_t fair_share(struct site *const *sites, size_t n)
{
    size_t lo = 0, hi = COOKIES_SITE_MAX;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2, sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += sites[i]->count < mid ? sites[i]->count : mid;
        if (sum <= COOKIES_JAR_KEEP)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Over COOKIES_JAR_MAX in all: the sites holding the most lose their oldest, down to
 * COOKIES_JAR_KEEP in all; with more sites than that (or out of memory), the jar's
 * oldest go. It takes a walk of the sites, once in 300 new cookies at most. */
static void trim_jar(cookies_t *jar)
{
    struct site **all = malloc(jar->nsites * sizeof(struct site *));
    if (all) {
        size_t n = 0;
        for (size_t i = 0; i < jar->nsite_buckets; i++)
            for (struct node *e = jar->sites[i]; e; e = e->next)
                all[n++] = (struct site *)e;
        size_t share = fair_share(all, n);
        for (size_t i = 0; i < n && share; i++)
            while (all[i]->count > share) /* share >= 1: the site stays */
                drop(jar, all[i]->oldest);
        free(all);
    }
    while (jar->total > COOKIES_JAR_KEEP)
        drop(jar, jar->oldest);
}

/* ---- storing ---- */

/* A Secure cookie that c, from a URL that is not a secure context, may not shadow
 * (RFC 6265bis 5.7 step 16; curl 7.88 refuses such a cookie too): of c's name, its
 * domain matching c's either way, c's path under its path. */
static int shadows_secure(const struct site *s, const cookie_t *c, size_t name_len)
{
    if (!s || !s->secure) return 0;
    for (const struct jc *j = s->oldest; j; j = j->newer)
        if (j->c.secure && j->name_len == name_len && memcmp(j->c.name, c->name, name_len) == 0 &&
            (tail_match(j->c.domain, c->domain) || tail_match(c->domain, j->c.domain)) &&
            path_match(j->c.path, j->path_len, c->path))
            return 1;
    return 0;
}

/* c, which a response from t's URL sets (or jar:set as if it did; its site is t's),
 * into the jar; an expired c deletes the cookie it would replace. 0, 1 when c would
 * shadow a Secure cookie (ignored), -1 when out of memory. */
static int store(cookies_t *jar, const struct target *t, const cookie_t *c, size_t name_len,
                 size_t value_len)
{
    struct site *s = site_find(jar, t->site, 0);
    if (!t->secure && shadows_secure(s, c, name_len)) return 1;
    uint32_t h = key_hash(c->name, name_len, c->domain, c->path);
    struct jc *old = find(jar, h, c->name, name_len, c->domain, c->path);
    if (c->expires && c->expires <= (long long)time(NULL)) {
        if (old) drop(jar, old);
        return 0;
    }
    struct jc *j = make(c, name_len, value_len);
    if (!j) return -1;
    j->node.hash = h;
    if (old) {
        replace(jar, old, j);
        return 0;
    }
    if (!s && !(s = site_find(jar, t->site, 1))) {
        free(j);
        return -1;
    }
    append(jar, s, j);
    if (s->count > COOKIES_SITE_MAX) drop(jar, s->oldest);
    if (jar->total > COOKIES_JAR_MAX) trim_jar(jar);
    return 0;
}

/* A Set-Cookie line from t's URL into the jar, by RFC 6265 5.2 and 5.3. 0, or -1
 * with the reason in err. */
static int take_line(cookies_t *jar, const struct target *t, const char *line, char *err,
                     size_t errlen)
{
    struct set_cookie sc;
    if (strlen(line) > MAX_LINE) return set_err(err, errlen, "a Set-Cookie line over 5000 bytes");
    if (parse_set_cookie(line, &sc, err, errlen) < 0) return -1;
    char dom[256], path[1024];
    int tail;
    if (cookie_domain(&sc, t, dom, sizeof(dom), &tail, err, errlen) < 0) return -1;
    cookie_path(&sc, t, path, sizeof(path));
    if (has_ctl(path, strlen(path)))
        return set_err(err, errlen, "control characters in the cookie's path");
    if (sc.secure && !t->secure)
        return set_err(err, errlen, "a Secure cookie from a URL that is not https");
    /* The name prefixes (RFC 6265bis 4.1.3), as curl 7.88 checks them. */
    if ((sc.name_len >= 9 && strncmp(sc.name, "__Secure-", 9) == 0 && !sc.secure) ||
        (sc.name_len >= 7 && strncmp(sc.name, "__Host-", 7) == 0 &&
         (!sc.secure || tail || strcmp(path, "/") != 0)))
        return set_err(err, errlen,
                       "a __Secure- or __Host- cookie without what its prefix requires");
    cookie_t c = {.name = sc.name,
                  .value = sc.value,
                  .domain = dom,
                  .path = path,
                  .host_only = !tail,
                  .secure = sc.secure,
                  .http_only = sc.http_only,
                  .expires = expiry(&sc)};
    int rc = store(jar, t, &c, sc.name_len, sc.value_len);
    if (rc > 0)
        return set_err(err, errlen, "a cookie that would shadow a Secure one, not over https");
    return rc < 0 ? set_err(err, errlen, "out of memory") : 0;
}

int cookies_set(cookies_t *jar, const char *url, const char *line, char *err, size_t errlen)
{
    struct target t;
    if (parse_target(url, &t, err, errlen) < 0) return -2;
    int rc = take_line(jar, &t, line, err, errlen);
    target_free(&t);
    return rc;
}

void cookies_take(cookies_t *jar, const char *url, const char *lines, size_t n)
{
    struct target t;
    char err[256];
    if (!n || parse_target(url, &t, err, sizeof(err)) < 0) return;
    for (; n; n--, lines += strlen(lines) + 1)
        take_line(jar, &t, lines, err, sizeof(err));
    target_free(&t);
}

/* ---- sending ---- */

static int sends_to(const struct jc *j, const struct target *t)
{
    if (j->c.secure && !t->secure) return 0;
    if (j->c.host_only ? strcmp(j->c.domain, t->host) != 0 : !tail_match(j->c.domain, t->host))
        return 0;
    return path_match(j->c.path, j->path_len, t->path);
}

/* curl 7.88's order of a request's cookies: longer paths first, then longer domains,
 * then longer names, then older ones. */
static int by_send_order(const void *a, const void *b)
{
    const struct jc *x = *(const struct jc *const *)a, *y = *(const struct jc *const *)b;
    if (x->path_len != y->path_len) return x->path_len > y->path_len ? -1 : 1;
    if (x->domain_len != y->domain_len) return x->domain_len > y->domain_len ? -1 : 1;
    if (x->name_len != y->name_len) return x->name_len > y->name_len ? -1 : 1;
    return x->created < y->created ? -1 : x->created > y->created;
}

static int expired(const struct jc *j, long long now)
{
    return j->c.expires && j->c.expires <= now;
}

/* fn for each cookie a request to t would send, in order: all of them are in t's
 * site, at most COOKIES_SITE_MAX. Expired ones met on the way go. */
static void each_sent(cookies_t *jar, const struct target *t, cookies_fn fn, void *arg)
{
    struct site *s = site_find(jar, t->site, 0);
    const struct jc *m[COOKIES_SITE_MAX];
    size_t n = 0;
    long long now = (long long)time(NULL);
    for (struct jc *j = s ? s->oldest : NULL, *next; j && n < COOKIES_SITE_MAX; j = next) {
        next = j->newer; /* NULL when j is the site's last: drop may free the site */
        if (expired(j, now))
            drop(jar, j);
        else if (sends_to(j, t))
            m[n++] = j;
    }
    if (n > 1) qsort(m, n, sizeof(const struct jc *), by_send_order);
    size_t header = 0;
    for (size_t i = 0; i < n; i++) { /* what curl 7.88 leaves out of one request */
        header += (i ? 2 : 0) + m[i]->name_len + 1 + m[i]->value_len;
        if (i >= MAX_SEND || header > MAX_HEADER) break;
        if (fn(arg, &m[i]->c)) break;
    }
}

int cookies_each(cookies_t *jar, const char *url, cookies_fn fn, void *arg, char *err,
                 size_t errlen)
{
    struct target t;
    if (url) {
        if (parse_target(url, &t, err, errlen) < 0) return -1;
        each_sent(jar, &t, fn, arg);
        target_free(&t);
        return 0;
    }
    long long now = (long long)time(NULL);
    for (const struct jc *j = jar->oldest; j; j = j->jar_newer)
        if (!expired(j, now) && fn(arg, &j->c)) break;
    return 0;
}

/* A Cookie header's value being built (cookies_header). */
struct header {
    char *s;
    size_t n, cap;
};

static int add_to_header(void *arg, const cookie_t *c)
{
    struct header *h = arg;
    size_t nl = strlen(c->name), vl = strlen(c->value), need = h->n + nl + vl + 4;
    if (!h->s || need > h->cap) {
        size_t cap = need < 1024 ? 1024 : need * 2;
        char *s = realloc(h->s, cap);
        if (!s) {
            free(h->s);
            h->s = NULL;
            return 1; /* stop */
        }
        h->s = s;
        h->cap = cap;
    }
    if (h->n) {
        memcpy(h->s + h->n, "; ", 2);
        h->n += 2;
    }
    memcpy(h->s + h->n, c->name, nl);
    h->s[h->n + nl] = '=';
    memcpy(h->s + h->n + nl + 1, c->value, vl);
    h->n += nl + 1 + vl;
    h->s[h->n] = '\0';
    return 0;
}

int cookies_header(cookies_t *jar, const char *url, char **value)
{
    struct target t;
    struct header h = {0};
    char err[64];
    *value = NULL;
    if (!jar->total) return 0; /* a crawl's jar, most often: no URL to parse */
    if (parse_target(url, &t, err, sizeof(err)) < 0) return -1;
    each_sent(jar, &t, add_to_header, &h);
    target_free(&t);
    if (h.cap && !h.s) return -1; /* out of memory */
    *value = h.s;
    return 0;
}
