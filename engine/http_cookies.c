/* http_cookies.c: cookie jars on libcurl's cookie engine (http_cookies.h). curl does the real
 * work inside transfers; this file reads a jar through CURLINFO_COOKIELIST and writes
 * one through CURLOPT_COOKIELIST, on a probe handle each jar keeps attached to its
 * share. What curl offers no call for is written here by curl 7.88's rules: which
 * cookies a URL gets (cookies_each) and a Set-Cookie line checked against the URL it
 * is said to come from (cookies_set: curl's CURLOPT_COOKIELIST takes a Set-Cookie
 * line without a URL, and would keep a cookie without Domain for every host), and the
 * caps of cookies.h, which curl 7.88 lacks. */
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
 * 8190 bytes; and the longest name plus value it keeps. */
#define MAX_SEND 150
#define MAX_HEADER 8190
#define MAX_NAME_VALUE 4096

/* Sites are counted in buckets by a hash of their name (cookies_added). */
#define SITE_BUCKETS 64

struct cookies {
    CURLSH *share;
    CURL *probe; /* attached to share: the handle the jar is read and written through */
    int refs;
    /* Bounds, since the jar was last counted (trim_jar), that its Set-Cookie lines keep
     * above what it holds: of the most cookies a site of each bucket has, of all
     * of them. Counting the jar takes a walk of it; the bounds let that happen
     * only when a cap may have been passed. */
    size_t site_bound[SITE_BUCKETS];
    size_t total_bound;
};

cookies_t *cookies_new(void)
{
    cookies_t *jar = calloc(1, sizeof(*jar));
    if (!jar) return NULL;
    jar->refs = 1;
    if (!(jar->share = curl_share_init())) goto fail;
    if (curl_share_setopt(jar->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) != CURLSHE_OK ||
        curl_share_setopt(jar->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK)
        goto fail;
    if (!(jar->probe = curl_easy_init())) goto fail;
    if (curl_easy_setopt(jar->probe, CURLOPT_SHARE, jar->share) != CURLE_OK) goto fail;
    return jar;
fail:
    if (jar->probe) curl_easy_cleanup(jar->probe);
    if (jar->share) curl_share_cleanup(jar->share);
    free(jar);
    return NULL;
}

cookies_t *cookies_ref(cookies_t *jar)
{
    jar->refs++;
    return jar;
}

void cookies_unref(cookies_t *jar)
{
    if (!jar || --jar->refs > 0) return;
    /* The probe first: a share with a handle attached refuses to go. Every transfer
     * that used the jar held a reference, and gave its handle back (http_pool.c). */
    curl_easy_cleanup(jar->probe);
    curl_share_cleanup(jar->share);
    free(jar);
}

CURLSH *cookies_share(cookies_t *jar)
{
    return jar->share;
}

static void clear_bounds(cookies_t *jar)
{
    memset(jar->site_bound, 0, sizeof(jar->site_bound));
    jar->total_bound = 0;
}

void cookies_clear(cookies_t *jar)
{
    curl_easy_setopt(jar->probe, CURLOPT_COOKIELIST, "ALL");
    clear_bounds(jar);
}

/* ---- a URL's parts ---- */

struct target {
    char *host; /* lower-case; an IPv6 address in brackets, as curl gives it */
    char *path;
    int secure; /* a secure context, as curl 7.88 decides it for cookies */
};

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
    rc = 0;
out:
    curl_free(scheme);
    curl_url_cleanup(u);
    if (rc < 0) target_free(t);
    return rc;
}

/* ---- reading the jar ---- */

/* host ends with domain at a label boundary (RFC 6265 5.1.3 domain-match). */
static int tail_match(const char *domain, const char *host)
{
    size_t d = strlen(domain), h = strlen(host);
    if (d > h || strcasecmp(host + (h - d), domain) != 0) return 0;
    return d == h || host[h - d - 1] == '.';
}

/* RFC 6265 5.1.4 path-match; cookie_path as curl keeps it (trailing '/' cut). */
static int path_match(const char *cookie_path, const char *path)
{
    size_t c = strlen(cookie_path), p;
    if (c <= 1) return 1; /* "/" */
    if (*path != '/') path = "/";
    p = strlen(path);
    if (p < c || strncmp(cookie_path, path, c) != 0) return 0;
    return p == c || path[c] == '/';
}

/* A cookie of CURLINFO_COOKIELIST's Netscape lines, split in place:
 * [#HttpOnly_][.]domain TAB tailmatch TAB path TAB secure TAB expires TAB name TAB value */
struct entry {
    cookie_t c;
    size_t path_len; /* as curl sorts and matches: trailing '/' cut */
    size_t order;
};

static int split_line(char *line, struct entry *e)
{
    char *f[7];
    int n = 0;
    memset(e, 0, sizeof(*e));
    if (strncmp(line, "#HttpOnly_", 10) == 0) {
        e->c.http_only = 1;
        line += 10;
    }
    f[n++] = line;
    for (char *p = line; *p && n < 7; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    if (n < 6) return -1;
    if (n == 6) f[n++] = ""; /* an empty value */
    e->c.domain = f[0][0] == '.' ? f[0] + 1 : f[0];
    e->c.host_only = strcmp(f[1], "TRUE") != 0;
    e->c.path = f[2];
    e->c.secure = strcmp(f[3], "TRUE") == 0;
    e->c.expires = strtoll(f[4], NULL, 10);
    e->c.name = f[5];
    e->c.value = f[6];
    size_t pl = strlen(e->c.path);
    e->path_len = pl > 1 && e->c.path[pl - 1] == '/' ? pl - 1 : pl;
    return 0;
}

static int sends_to(const struct entry *e, const struct target *t)
{
    if (e->c.secure && !t->secure) return 0;
    if (e->c.host_only ? strcasecmp(e->c.domain, t->host) != 0 : !tail_match(e->c.domain, t->host))
        return 0;
    char cut[MAX_NAME_VALUE + 2];
    if (e->path_len >= sizeof(cut)) return 0;
    memcpy(cut, e->c.path, e->path_len);
    cut[e->path_len] = '\0';
    return path_match(cut, t->path);
}

/* curl 7.88's order of a request's cookies: longer paths first, then longer domains,
 * then longer names, then older ones. */
static int by_send_order(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    size_t lx, ly;
    if (x->path_len != y->path_len) return x->path_len > y->path_len ? -1 : 1;
    if ((lx = strlen(x->c.domain)) != (ly = strlen(y->c.domain))) return lx > ly ? -1 : 1;
    if ((lx = strlen(x->c.name)) != (ly = strlen(y->c.name))) return lx > ly ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

int cookies_each(cookies_t *jar, const char *url, cookies_fn fn, void *arg, char *err,
                 size_t errlen)
{
    struct target t;
    if (url && parse_target(url, &t, err, errlen) < 0) return -1;
    struct curl_slist *list = NULL;
    curl_easy_getinfo(jar->probe, CURLINFO_COOKIELIST, &list);
    size_t n = 0;
    for (struct curl_slist *l = list; l; l = l->next)
        n++;
    struct entry *es = n ? calloc(n, sizeof(*es)) : NULL;
    int rc = 0;
    if (n && !es) {
        rc = set_err(err, errlen, "out of memory");
        goto out;
    }
    time_t now = time(NULL);
    size_t kept = 0;
    for (struct curl_slist *l = list; l; l = l->next) {
        struct entry *e = &es[kept];
        if (split_line(l->data, e) < 0) continue;
        if (e->c.expires && e->c.expires <= (long long)now) continue; /* gone at next use */
        if (url && !sends_to(e, &t)) continue;
        e->order = kept++;
    }
    if (url && kept) qsort(es, kept, sizeof(*es), by_send_order);
    size_t header = 0;
    for (size_t i = 0; i < kept; i++) {
        if (url) { /* what curl leaves out of one request */
            header += (i ? 2 : 0) + strlen(es[i].c.name) + 1 + strlen(es[i].c.value);
            if (i >= MAX_SEND || header > MAX_HEADER) break;
        }
        if (fn(arg, &es[i].c)) break;
    }
out:
    free(es);
    curl_slist_free_all(list);
    if (url) target_free(&t);
    return rc;
}

/* ---- writing the jar ---- */

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

static int is_ip(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return host[0] == '[' || inet_pton(AF_INET, host, buf) == 1;
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
        snprintf(dom, domlen, "%s", t->host);
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

/* c into the jar, as a Netscape line (how CURLOPT_COOKIELIST takes a cookie with its
 * domain); its name and value are the first name_len and value_len bytes. An
 * expiry in the past deletes the cookie of that name, domain and path. -1 when out
 * of memory. */
static int store_cookie(cookies_t *jar, const cookie_t *c, size_t name_len, size_t value_len)
{
    size_t n = 64 + strlen(c->domain) + strlen(c->path) + name_len + value_len;
    char *netscape = malloc(n);
    if (!netscape) return -1;
    snprintf(netscape, n, "%s%s%s\t%s\t%s\t%s\t%lld\t%.*s\t%.*s", c->http_only ? "#HttpOnly_" : "",
             c->host_only ? "" : ".", c->domain, c->host_only ? "FALSE" : "TRUE", c->path,
             c->secure ? "TRUE" : "FALSE", c->expires, (int)name_len, c->name, (int)value_len,
             c->value);
    int rc = curl_easy_setopt(jar->probe, CURLOPT_COOKIELIST, netscape) == CURLE_OK ? 0 : -1;
    free(netscape);
    return rc;
}

int cookies_set(cookies_t *jar, const char *url, const char *line, char *err, size_t errlen)
{
    struct target t;
    struct set_cookie sc;
    if (parse_target(url, &t, err, errlen) < 0) return -2;
    if (parse_set_cookie(line, &sc, err, errlen) < 0) {
        target_free(&t);
        return -1;
    }
    char dom[256], path[1024];
    int tail, rc = -1;
    if (cookie_domain(&sc, &t, dom, sizeof(dom), &tail, err, errlen) < 0) goto out;
    cookie_path(&sc, &t, path, sizeof(path));
    if (has_ctl(path, strlen(path))) {
        set_err(err, errlen, "control characters in the cookie's path");
        goto out;
    }
    if (sc.secure && !t.secure) {
        set_err(err, errlen, "a Secure cookie from a URL that is not https");
        goto out;
    }
    /* The name prefixes (RFC 6265bis 4.1.3), as curl 7.88 checks them. */
    if ((sc.name_len >= 9 && strncmp(sc.name, "__Secure-", 9) == 0 && !sc.secure) ||
        (sc.name_len >= 7 && strncmp(sc.name, "__Host-", 7) == 0 &&
         (!sc.secure || tail || strcmp(path, "/") != 0))) {
        set_err(err, errlen, "a __Secure- or __Host- cookie without what its prefix requires");
        goto out;
    }
    cookie_t c = {.name = sc.name,
                  .value = sc.value,
                  .domain = dom,
                  .path = path,
                  .host_only = !tail,
                  .secure = sc.secure,
                  .http_only = sc.http_only,
                  .expires = expiry(&sc)};
    if (store_cookie(jar, &c, sc.name_len, sc.value_len) < 0) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    cookies_added(jar, t.host, 1);
    rc = 0;
out:
    target_free(&t);
    return rc;
}

/* ---- the caps ---- */

/* The site of a lower-case host or cookie domain: its registrable domain, else
 * itself (an IP address, a public suffix). A Domain attribute covers the host that
 * sent it and is no public suffix, so a cookie's site is that host's site. */
static const char *site_of(const char *domain)
{
    if (is_ip(domain)) return domain; /* libpsl would make 127.0.0.1's site 0.1 */
    const char *site = psl_registrable_domain(psl_builtin(), domain);
    return site ? site : domain;
}

static unsigned site_bucket(const char *site)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *site; site++)
        h = (h ^ (unsigned char)*site) * 16777619u;
    return h % SITE_BUCKETS;
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)ascii_lower((unsigned char)*s);
}

/* A cookie of the jar as trim_jar counts it. */
struct counted {
    struct entry e; /* e.order: its place in curl's list, older first within a site */
    const char *site;
};

static int by_site_then_age(const void *a, const void *b)
{
    const struct counted *x = a, *y = b;
    int c = strcmp(x->site, y->site);
    if (c) return c;
    return x->e.order < y->e.order ? -1 : x->e.order > y->e.order;
}

/* The cookies of a site: cs[start .. start + count), of which it keeps keep. */
struct site_run {
    size_t start, count, keep;
};

/* The most each site may keep so that the sites keep at most COOKIES_JAR_KEEP in
 * all: those holding the most lose theirs first. */
static size_t fair_share(const struct site_run *runs, size_t nruns)
{
    size_t lo = 0, hi = COOKIES_SITE_KEEP;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2, sum = 0;
        for (size_t i = 0; i < nruns; i++)
            sum += runs[i].keep < mid ? runs[i].keep : mid;
        if (sum <= COOKIES_JAR_KEEP)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The live cookies of list into cs, sorted by site then age; how many. */
static size_t count_sites(struct curl_slist *list, struct counted *cs)
{
    time_t now = time(NULL);
    size_t n = 0;
    for (struct curl_slist *l = list; l; l = l->next) {
        struct counted *c = &cs[n];
        if (split_line(l->data, &c->e) < 0) continue;
        if (c->e.c.expires && c->e.c.expires <= (long long)now) continue; /* deleted */
        lower(l->data + (c->e.c.domain - l->data));
        /* curl lists a domain's cookies together: one lookup for each run */
        int same = n && strcmp(c->e.c.domain, cs[n - 1].e.c.domain) == 0;
        c->site = same ? cs[n - 1].site : site_of(c->e.c.domain);
        c->e.order = n++;
    }
    qsort(cs, n, sizeof(*cs), by_site_then_age);
    return n;
}

/* Each site's run of cs; how many sites. */
static size_t site_runs(const struct counted *cs, size_t n, struct site_run *runs)
{
    size_t nruns = 0;
    for (size_t i = 0; i < n; i++) {
        if (!i || strcmp(cs[i].site, cs[i - 1].site) != 0)
            runs[nruns++] = (struct site_run){.start = i};
        runs[nruns - 1].count++;
    }
    return nruns;
}

/* Count the jar by site: a site over COOKIES_SITE_KEEP loses its oldest down to it;
 * then, over COOKIES_JAR_KEEP in all, the sites holding the most lose theirs. Every
 * site and the jar end at most at the KEEP figures, so that the jar is counted
 * again only after at least 30 (300) more Set-Cookie lines: the cost of counting
 * is spread over them. Out of memory, the jar stays as it is until the next try. */
static void trim_jar(cookies_t *jar)
{
    struct curl_slist *list = NULL;
    curl_easy_getinfo(jar->probe, CURLINFO_COOKIELIST, &list);
    size_t n = 0;
    for (struct curl_slist *l = list; l; l = l->next)
        n++;
    struct counted *cs = n ? calloc(n, sizeof(*cs)) : NULL;
    struct site_run *runs = n ? calloc(n, sizeof(*runs)) : NULL;
    if (!cs || !runs) {
        if (!n) clear_bounds(jar); /* an empty jar */
        goto out;
    }
    size_t nruns = site_runs(cs, count_sites(list, cs), runs), total = 0;
    for (size_t i = 0; i < nruns; i++) {
        runs[i].keep = runs[i].count < COOKIES_SITE_KEEP ? runs[i].count : COOKIES_SITE_KEEP;
        total += runs[i].keep;
    }
    size_t share = total > COOKIES_JAR_KEEP ? fair_share(runs, nruns) : COOKIES_SITE_KEEP;
    clear_bounds(jar);
    for (size_t i = 0; i < nruns; i++) {
        struct site_run *r = &runs[i];
        if (r->keep > share) r->keep = share;
        size_t oldest_kept = r->start + r->count - r->keep;
        for (size_t k = r->start; k < oldest_kept; k++) {
            cs[k].e.c.expires = 1; /* long past: curl drops it */
            if (store_cookie(jar, &cs[k].e.c, strlen(cs[k].e.c.name), strlen(cs[k].e.c.value)) < 0)
                r->keep++; /* still there */
        }
        size_t *bound = &jar->site_bound[site_bucket(cs[r->start].site)];
        if (r->keep > *bound) *bound = r->keep;
        jar->total_bound += r->keep;
    }
out:
    free(runs);
    free(cs);
    curl_slist_free_all(list);
}

void cookies_added(cookies_t *jar, const char *host, size_t n)
{
    char low[256];
    if (!n) return;
    snprintf(low, sizeof(low), "%s", host);
    lower(low);
    size_t *site = &jar->site_bound[site_bucket(site_of(low))];
    *site += n;
    jar->total_bound += n;
    if (*site > COOKIES_SITE_MAX || jar->total_bound > COOKIES_JAR_MAX) trim_jar(jar);
}
