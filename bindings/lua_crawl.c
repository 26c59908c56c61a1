/* lua_crawl.c: core.crawl, the admission rules of the crawl framework (crawl.lua).
 *
 * A filter holds a crawl's rules (normalize options, max_depth, the scope, the seen
 * set) and is the one place they are applied, in this order: a URL is normalized
 * (else invalid_urls), dropped when deeper than max_depth (too_deep), checked
 * against the scope (out_of_scope) and recorded in the seen set (else duplicates).
 * Crawler:enqueue asks it about one URL (filter:check); page:follow hands it a
 * page's whole list of links (filter:next), most of them duplicates, and it stops at
 * the next link that passes, so that the others cost no Lua string, table or call.
 * The counts go straight into the crawl's stats table.
 *
 * A scope of hosts alone is checked here (a host set: core.crawl.hosts). One with
 * functions or URL patterns is Lua's: the filter hands the URL back, between the
 * depth and the seen set, and filter:scoped takes the answer; a Lua function is
 * never called from C, so a scope function may wait as any Lua code may.
 *
 * core.crawl.host is lc.url.host, without parsing a URL already in normalized form. */
#include "html.h"
#include "lua_aux.h"
#include "seen.h"
#include "url.h"
#include "lua_limits.h"
#include "lua_seen.h"
#include "lua_links.h"
#include "lua_url.h"
#include "lua_libs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char HOSTS_METATABLE[] = "luacrawl.hosts";
static const char FILTER_METATABLE[] = "luacrawl.filter";

#define HOST_MEMO 256 /* the longest host the per-call memo keeps */

/* Hosts ------------------------------------------------------------------------- */

/* A set of host names, kept as fingerprints (url_hash of the lower-cased name, as
 * seen.c keeps URLs); with subdomains, a host matches when it or a domain above it
 * is in the set ("a.b.example.org" matches "example.org"). */
typedef struct hosts {
    seen_t *set;
    int subdomains;
    size_t counted; /* bytes of set counted towards max_memory */
} hosts_t;

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static uint64_t host_hash(const char *host, size_t n)
{
    char buf[HOST_MEMO];
    if (n > sizeof(buf)) return url_hash(host, n); /* no such DNS name: compared as given */
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)lower((unsigned char)host[i]);
    return url_hash(buf, n);
}

static int hosts_match(const hosts_t *h, const char *host, size_t n)
{
    if (seen_has(h->set, host_hash(host, n))) return 1;
    if (!h->subdomains) return 0;
    for (size_t i = 0; i < n; i++)
        if (host[i] == '.' && seen_has(h->set, host_hash(host + i + 1, n - i - 1))) return 1;
    return 0;
}

static hosts_t *check_hosts(lua_State *L, int idx)
{
    return luaL_checkudata(L, idx, HOSTS_METATABLE);
}

/* Count the set's bytes now towards max_memory, as lc.seen sets are. */
static void hosts_count(lua_State *L, hosts_t *h)
{
    size_t now = h->set ? seen_bytes(h->set) : 0;
    lc_limits_account(L, (long long)now - (long long)h->counted);
    h->counted = now;
}

static void hosts_add(lua_State *L, hosts_t *h, const char *host, size_t n)
{
    size_t grow = seen_grow_bytes(h->set), left;
    if (grow && !lc_limits_allow(L, grow, &left))
        luaL_error(L, "hosts: growing the set takes %.0f bytes, more than max_memory leaves (%.0f)",
                   (double)grow, (double)left);
    if (seen_add(h->set, host_hash(host, n)) < 0) luaL_error(L, "hosts: out of memory");
    if (grow) hosts_count(L, h);
}

/* The host of url (len bytes) as url_host gives it, into buf (URL_MAX_LENGTH + 1
 * bytes), read in place when the URL is in normalized form. Returns its length, or
 * -1 with *err set. */
static long host_of(const char *url, size_t len, char *buf, int *err)
{
    const char *h;
    size_t n;
    int port;
    if (strlen(url) == len && url_host_port_fast(url, len, &h, &n, &port)) {
        memcpy(buf, h, n);
    } else {
        /* A NUL inside is "%00", as lc.url reads it (url_escape_nul). */
        char *esc = NULL, *out = NULL;
        if (strlen(url) != len) {
            if (!(esc = malloc(3 * len + 1))) {
                *err = URL_E_NOMEM;
                return -1;
            }
            url_escape_nul(url, len, esc);
            url = esc;
        }
        *err = url_host(url, &out);
        free(esc);
        if (*err) return -1;
        n = strlen(out);
        if (n > URL_MAX_LENGTH) n = URL_MAX_LENGTH; /* url_host refuses longer URLs */
        memcpy(buf, out, n);
        free(out);
    }
    buf[n] = '\0';
    return (long)n;
}

/* core.crawl.hosts([list], subdomains) -> a host set of the names in list */
static int l_crawl_hosts(lua_State *L)
{
    if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    hosts_t *h = lua_newuserdata(L, sizeof(*h));
    h->set = NULL;
    h->subdomains = lua_toboolean(L, 2);
    h->counted = 0;
    lc_getmetatable(L, HOSTS_METATABLE);
    lua_setmetatable(L, -2);
    h->set = seen_new(0);
    if (!h->set) return luaL_error(L, "hosts: out of memory");
    hosts_count(L, h);
    for (int i = 1; lua_istable(L, 1); i++) {
        lua_rawgeti(L, 1, i);
        if (lua_isnil(L, -1)) break;
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "hosts: entry %d is not a string", i);
        size_t n;
        const char *host = lua_tolstring(L, -1, &n);
        hosts_add(L, h, host, n);
        lua_pop(L, 1);
    }
    lua_settop(L, 3);
    return 1;
}

/* hosts:add(host) */
static int l_hosts_add(lua_State *L)
{
    hosts_t *h = check_hosts(L, 1);
    size_t n;
    const char *host = luaL_checklstring(L, 2, &n);
    hosts_add(L, h, host, n);
    return 0;
}

/* hosts:match(url) -> whether the URL's host is in the set (a URL without one has
 * the host "") */
static int l_hosts_match(lua_State *L)
{
    hosts_t *h = check_hosts(L, 1);
    size_t len;
    const char *url = luaL_checklstring(L, 2, &len);
    char buf[URL_MAX_LENGTH + 1];
    int err;
    long n = host_of(url, len, buf, &err);
    lua_pushboolean(L, hosts_match(h, buf, n < 0 ? 0 : (size_t)n));
    return 1;
}

static int l_hosts_gc(lua_State *L)
{
    hosts_t *h = check_hosts(L, 1);
    seen_free(h->set);
    h->set = NULL;
    hosts_count(L, h);
    return 0;
}

/* core.crawl.host(url) -> host | nil, err: lc.url.host */
static int l_crawl_host(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING) luaL_typerror(L, 1, "string");
    size_t len;
    const char *url = lua_tolstring(L, 1, &len);
    char buf[URL_MAX_LENGTH + 1];
    int err = URL_OK;
    long n = host_of(url, len, buf, &err);
    if (n < 0) {
        lc_push_url_error(L, err);
        return 2;
    }
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* The filter ---------------------------------------------------------------------- */

enum scope_kind {
    SCOPE_ANY,   /* every host */
    SCOPE_HOSTS, /* the hosts of a host set */
    SCOPE_LUA,   /* crawl.lua decides (filter:scoped) */
};

typedef struct filter {
    seen_t *seen;   /* the seen set's and the host set's userdata are in the filter's */
    void *seen_ud;  /* the seen set's userdata (lc_seen_add counts what it holds) */
    hosts_t *hosts; /* environment, which keeps them alive: [1] stats, [2] seen, [3] hosts */
    enum scope_kind scope;
    double max_depth; /* HUGE_VAL: no limit */
    url_norm_opts_t opts;
    char *pats[LC_MAX_STRIP + 1]; /* the strip patterns, copied: opts.strip points here */
    int plain;                    /* opts change nothing in a normalized URL */
    int no_record;                /* the seen set is the caller's to check (a dedupe key in Lua) */
} filter_t;

/* What became of a URL. */
enum verdict {
    V_NEW,     /* passed: in scope, new, now in the seen set */
    V_ASK,     /* normalized and not too deep: the scope is Lua's to check */
    V_SKIP,    /* a reference that does not resolve: not a URL, not counted */
    V_INVALID, /* invalid_urls */
    V_DEEP,    /* too_deep */
    V_SCOPE,   /* out_of_scope */
    V_DUP,     /* duplicates */
};

static const char *const counter[] = {
    [V_INVALID] = "invalid_urls",
    [V_DEEP] = "too_deep",
    [V_SCOPE] = "out_of_scope",
    [V_DUP] = "duplicates",
};

/* Where the filter's environment keeps the Lua string of counter v (after [1] stats,
 * [2] seen, [3] hosts), for flush_counts. */
#define COUNTER_KEY(v) (4 - V_INVALID + (v))

/* A URL on its way through the rules: normalized, in place or in owned. */
typedef struct candidate {
    const char *url;
    size_t len;
    char *owned; /* malloc'd: freed by the caller */
    int normal;  /* known to be in the form url_host_port_fast takes, no fragment */
    uint64_t fp; /* its fingerprint, when has_fp */
    int has_fp;
} candidate_t;

/* The last host found in the scope in one call, and the last one found out of it: a
 * page's links are mostly to its own host, with a few others between them. */
typedef struct host_memo {
    char host[2][HOST_MEMO]; /* [1] in the scope, [0] out */
    long len[2];             /* -1: none */
} host_memo_t;

/* The filter at idx, found by its metatable's tag (lc_toudata_either): it is asked
 * for every page. */
static filter_t *check_filter(lua_State *L, int idx)
{
    filter_t *f = lc_toudata_either(L, idx, FILTER_METATABLE, NULL);
    if (!f) luaL_typerror(L, idx, "crawl filter");
    if (!f->seen) luaL_error(L, "filter already freed");
    return f;
}

static void free_pats(filter_t *f)
{
    for (int i = 0; f->pats[i]; i++) {
        free(f->pats[i]);
        f->pats[i] = NULL;
    }
}

/* Read the normalize options at idx into f, copying the strip patterns. */
static void filter_set_opts(lua_State *L, filter_t *f, int idx)
{
    const char *pats[LC_MAX_STRIP + 1];
    url_norm_opts_t o;
    lc_check_norm_opts(L, idx, &o, pats);
    f->opts = o;
    f->opts.strip = NULL;
    for (int i = 0; o.strip && pats[i]; i++) {
        f->pats[i] = strdup(pats[i]);
        if (!f->pats[i]) luaL_error(L, "filter: out of memory");
    }
    if (o.strip) f->opts.strip = (const char *const *)f->pats;
    f->plain = !f->opts.sort_query && !f->opts.strip;
}

/* core.crawl.filter{seen =, stats =, normalize =, max_depth =, scope =} -> filter
 *   seen       an lc.seen set
 *   stats      the table the counts go to (invalid_urls, too_deep, out_of_scope,
 *              duplicates: numbers, read and written raw)
 *   normalize  lc.url.normalize's options
 *   max_depth  a number (none: no limit)
 *   scope      a host set (core.crawl.hosts), "any", or "lua"
 *   record     (true) false: the seen set is neither checked nor written, as with
 *              dont_filter on every URL (the crawl checks a dedupe key itself) */
static int l_crawl_filter(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    filter_t *f = lua_newuserdata(L, sizeof(*f)); /* 2 */
    memset(f, 0, sizeof(*f));
    lc_getmetatable(L, FILTER_METATABLE);
    lua_setmetatable(L, 2);
    lua_createtable(L, COUNTER_KEY(V_DUP), 0); /* 3: the environment */

    lua_getfield(L, 1, "stats");
    luaL_argcheck(L, lua_istable(L, -1), 1, "stats must be a table");
    lua_rawseti(L, 3, 1);
    lua_getfield(L, 1, "seen");
    seen_t *seen = lc_toseen(L, -1);
    luaL_argcheck(L, seen != NULL, 1, "seen must be a seen set (lc.seen())");
    f->seen_ud = lua_touserdata(L, -1);
    lua_rawseti(L, 3, 2);

    lua_getfield(L, 1, "max_depth");
    f->max_depth = lua_isnil(L, -1) ? HUGE_VAL : lua_tonumber(L, -1);
    luaL_argcheck(L, lua_isnil(L, -1) || lua_type(L, -1) == LUA_TNUMBER, 1,
                  "max_depth must be a number");
    lua_pop(L, 1);

    lua_getfield(L, 1, "record");
    f->no_record = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
    lua_pop(L, 1);

    lua_getfield(L, 1, "scope");
    if (lua_type(L, -1) == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);
        if (strcmp(s, "any") == 0)
            f->scope = SCOPE_ANY;
        else if (strcmp(s, "lua") == 0)
            f->scope = SCOPE_LUA;
        else
            luaL_argerror(L, 1, "scope must be a host set, \"any\" or \"lua\"");
        lua_pop(L, 1);
    } else {
        f->hosts = lc_toudata_either(L, -1, HOSTS_METATABLE, NULL);
        luaL_argcheck(L, f->hosts != NULL, 1, "scope must be a host set, \"any\" or \"lua\"");
        f->scope = SCOPE_HOSTS;
        lua_rawseti(L, 3, 3);
    }
    for (int v = V_INVALID; v <= V_DUP; v++) {
        lua_pushstring(L, counter[v]);
        lua_rawseti(L, 3, COUNTER_KEY(v));
    }
    lua_setfenv(L, 2);

    lua_getfield(L, 1, "normalize");
    filter_set_opts(L, f, 3); /* may raise: the collector frees what was copied */
    lua_pop(L, 1);
    f->seen = seen;
    lua_settop(L, 2);
    return 1;
}

static int is_http(const char *s, size_t n)
{
    return (n >= 7 && memcmp(s, "http://", 7) == 0) || (n >= 8 && memcmp(s, "https://", 8) == 0);
}

/* Resolve (against base, when given and the URL is not http(s)) and normalize: the
 * first rule. href is a link's URL for a link of a link set, which is absolute and
 * normalized already. */
static inline enum verdict normalize(const filter_t *f, const char *href, size_t href_len,
                                     const html_link_t *link, const char *base, candidate_t *c)
{
    memset(c, 0, sizeof(*c));
    if (link && link->normal && f->plain) {
        c->url = link->url;
        c->len = link->len;
        c->normal = 1;
        c->fp = link->hash;
        c->has_fp = 1;
        return V_NEW;
    }
    char *resolved = NULL;
    const char *abs = href;
    size_t abs_len = href_len;
    if (!link && base && !is_http(href, href_len)) {
        if (strlen(href) != href_len || url_resolve(base, href, &resolved) != URL_OK) return V_SKIP;
        abs = resolved;
        abs_len = strlen(resolved);
    }
    int err = strlen(abs) != abs_len ? URL_E_MALFORMED : url_normalize(abs, &f->opts, &c->owned);
    free(resolved);
    if (err) return V_INVALID;
    c->url = c->owned;
    c->len = strlen(c->owned);
    return V_NEW;
}

/* memcmp(a, b, n) == 0 inline, eight bytes at a time: a host of a few words, for
 * every link, costs less than the call. */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    while (n--)
        if (*a++ != *b++) return 0;
    return 1;
}

/* Whether a URL in normalized form has the host of memo entry in. */
static inline int memo_has(const host_memo_t *m, int in, const char *url, size_t n)
{
    size_t h = url[4] == ':' ? 7 : 8, hl = (size_t)m->len[in];
    return m->len[in] >= 0 && h + hl < n && same_bytes(url + h, m->host[in], hl) &&
           (url[h + hl] == ':' || url[h + hl] == '/');
}

/* The host of a URL known to be in normalized form (candidate_t.normal): read in
 * place, between the scheme's "//" and the ':' or '/' that ends it, as
 * url_host_port_fast reads it once it has checked the form. */
static const char *normal_host(const char *url, size_t *n)
{
    size_t i = url[4] == ':' ? 7 : 8, e = i;
    while (url[e] != ':' && url[e] != '/')
        e++;
    *n = e - i;
    return url + i;
}

/* The scope of a host set, past the memo's two hosts (in_hosts). */
static int in_hosts_looked_up(const filter_t *f, const candidate_t *c, host_memo_t *m)
{
    char buf[URL_MAX_LENGTH + 1];
    const char *host = buf;
    size_t hl;
    if (c->normal) {
        host = normal_host(c->url, &hl);
    } else {
        int err;
        long n = host_of(c->url, c->len, buf, &err);
        hl = n < 0 ? 0 : (size_t)n; /* a URL without a host has the host "" */
    }
    for (int in = 1; in >= 0; in--)
        if ((long)hl == m->len[in] && memcmp(host, m->host[in], hl) == 0) return in;
    int in = hosts_match(f->hosts, host, hl);
    if (hl < HOST_MEMO) {
        memcpy(m->host[in], host, hl);
        m->len[in] = (long)hl;
    }
    return in;
}

/* The scope of a host set: for most links, the memo's answer. */
static inline int in_hosts(const filter_t *f, const candidate_t *c, host_memo_t *m)
{
    if (c->normal) {
        if (memo_has(m, 1, c->url, c->len)) return 1;
        if (memo_has(m, 0, c->url, c->len)) return 0;
    }
    return in_hosts_looked_up(f, c, m);
}

/* The last rule: record the URL in the seen set (unless dont_filter). */
static inline enum verdict record(lua_State *L, const filter_t *f, candidate_t *c, int dont_filter)
{
    if (dont_filter || f->no_record) return V_NEW;
    uint64_t fp = c->has_fp   ? c->fp
                  : c->normal ? url_hash(c->url, c->len)
                              : url_fingerprint(c->url);
    int r = seen_add_room(f->seen, fp);
    if (r != SEEN_FULL) return r ? V_NEW : V_DUP;
    char err[160]; /* the set grows: counted towards max_memory */
    r = lc_seen_add(L, f->seen_ud, fp, err, sizeof(err));
    if (r < 0) {
        free(c->owned);
        luaL_error(L, "%s", err);
    }
    return r ? V_NEW : V_DUP;
}

/* Every rule, in their order, for one URL (href, or a link of a link set). */
static enum verdict judge(lua_State *L, const filter_t *f, const char *href, size_t href_len,
                          const html_link_t *link, const char *base, double depth, int dont_filter,
                          candidate_t *c, host_memo_t *m)
{
    enum verdict v = normalize(f, href, href_len, link, base, c);
    if (v != V_NEW) return v;
    if (depth > f->max_depth) return V_DEEP;
    if (f->scope == SCOPE_LUA) return V_ASK;
    if (f->scope == SCOPE_HOSTS && !in_hosts(f, c, m)) return V_SCOPE;
    return record(L, f, c, dont_filter);
}

/* Add counts[v] to the stats table (environment [1] of the filter at fidx), with
 * raw accesses and the counters' names kept in the environment: lua_getfield and
 * lua_setfield would look each name up in the string table, twice a counter, for
 * every page. */
static void flush_counts(lua_State *L, int fidx, const double *counts)
{
    int any = 0;
    for (int v = V_INVALID; v <= V_DUP; v++)
        any |= counts[v] != 0;
    if (!any) return;
    lua_getfenv(L, fidx);
    lua_rawgeti(L, -1, 1);
    for (int v = V_INVALID; v <= V_DUP; v++) {
        if (!counts[v]) continue;
        lua_rawgeti(L, -2, COUNTER_KEY(v));
        lua_pushvalue(L, -1);
        lua_rawget(L, -3);
        double was = lua_tonumber(L, -1);
        lua_pop(L, 1);
        lua_pushnumber(L, was + counts[v]);
        lua_rawset(L, -3);
    }
    lua_pop(L, 2);
}

/* Push the result of a URL that came out of the rules: url [, "scope"], or nil and
 * the name of its count (nothing for a reference that does not resolve). Frees the
 * candidate's normalized copy whatever the verdict: a URL out of depth or scope, or
 * already seen, was normalized too. */
static int push_verdict(lua_State *L, enum verdict v, candidate_t *c)
{
    int n = 1;
    if (v == V_NEW || v == V_ASK) {
        lua_pushlstring(L, c->url, c->len);
        if (v == V_ASK) {
            lua_pushliteral(L, "scope");
            n = 2;
        }
    } else {
        lua_pushnil(L);
        if (v != V_SKIP) {
            lua_pushstring(L, counter[v]);
            n = 2;
        }
    }
    free(c->owned);
    return n;
}

/* filter:next(list, i, base, depth [, dont_filter]) -> url, next [, "scope"] | nil | false, next
 *
 * Takes list[i], list[i + 1], ... (as ipairs would), list a Lua list of URLs or a
 * link set (core.html.scan_set), the URLs at depth, relative ones resolved against
 * base (one that does not resolve is skipped), and stops at the first that passes
 * the rules (next: the index after it), or that is in the hands of a Lua scope
 * ("scope": the caller asks it, then calls filter:scoped), at the end (nil), or at
 * an item that is not a string (false; next is its index: a node, say). */
static int l_filter_next(lua_State *L)
{
    const filter_t *f = check_filter(L, 1);
    const html_links_t *set = lc_tolinkset(L, 2);
    if (!set) luaL_checktype(L, 2, LUA_TTABLE);
    int i = (int)luaL_checkinteger(L, 3);
    size_t base_len;
    const char *base = luaL_checklstring(L, 4, &base_len);
    if (strlen(base) != base_len) base = NULL; /* nothing resolves against it */
    double depth = luaL_checknumber(L, 5);
    int dont_filter = lua_toboolean(L, 6);

    double counts[V_DUP + 1] = {0};
    host_memo_t memo = {.len = {-1, -1}};
    candidate_t c;
    enum verdict v = V_SKIP;
    int stop = 0; /* 0 the end, 1 a URL, 2 an item for the caller */

    if (set && i == 1 && !dont_filter &&
        !f->no_record) /* the seen set's slots of the links, asked at once */
        for (size_t k = 0; k < set->n; k++)
            seen_prefetch(f->seen, set->v[k].hash);

    for (;; i++) {
        const char *href = NULL;
        size_t href_len = 0;
        const html_link_t *link = NULL;
        if (set) {
            if (i < 1 || (size_t)i > set->n) break;
            link = &set->v[i - 1];
            href = link->url;
            href_len = link->len;
        } else {
            lua_rawgeti(L, 2, i);
            int t = lua_type(L, -1);
            if (t != LUA_TSTRING) {
                lua_pop(L, 1);
                stop = t == LUA_TNIL ? 0 : 2;
                break;
            }
            href = lua_tolstring(L, -1, &href_len);
            lua_pop(L, 1); /* the string stays alive in the list */
        }
        v = judge(L, f, href, href_len, link, base, depth, dont_filter, &c, &memo);
        if (v == V_NEW || v == V_ASK) {
            stop = 1;
            break;
        }
        free(c.owned);
        counts[v]++;
    }
    flush_counts(L, 1, counts);
    if (stop == 1) {
        lua_pushlstring(L, c.url, c.len);
        free(c.owned);
        lua_pushinteger(L, i + 1);
        if (v == V_NEW) return 2;
        lua_pushliteral(L, "scope");
        return 3;
    }
    if (stop == 2)
        lua_pushboolean(L, 0);
    else
        lua_pushnil(L);
    lua_pushinteger(L, i);
    return 2;
}

/* filter:check(url, depth [, dont_filter [, base]]) -> url [, "scope"] | nil [, count]
 *
 * One URL through the rules, as filter:next takes each: the normalized URL when it
 * passes (with "scope" when the scope is Lua's), else nil and the name of the stats
 * counter it went to (none for a reference that does not resolve against base). */
static int l_filter_check(lua_State *L)
{
    const filter_t *f = check_filter(L, 1);
    size_t len;
    const char *url = luaL_checklstring(L, 2, &len);
    double depth = luaL_checknumber(L, 3);
    int dont_filter = lua_toboolean(L, 4);
    size_t base_len = 0;
    const char *base = luaL_optlstring(L, 5, NULL, &base_len);
    if (base && strlen(base) != base_len) base = NULL;

    double counts[V_DUP + 1] = {0};
    host_memo_t memo = {.len = {-1, -1}};
    candidate_t c;
    enum verdict v = judge(L, f, url, len, NULL, base, depth, dont_filter, &c, &memo);
    if (v >= V_INVALID) counts[v]++;
    flush_counts(L, 1, counts);
    return push_verdict(L, v, &c);
}

/* filter:scoped(url, in_scope [, dont_filter]) -> url | nil, count
 *
 * The rest of the rules for a URL that filter:next or filter:check handed over
 * with "scope", once the Lua scope has answered. */
static int l_filter_scoped(lua_State *L)
{
    const filter_t *f = check_filter(L, 1);
    size_t len;
    const char *url = luaL_checklstring(L, 2, &len);
    int in = lua_toboolean(L, 3), dont_filter = lua_toboolean(L, 4);
    candidate_t c;
    memset(&c, 0, sizeof(c));
    c.url = url;
    c.len = len;
    /* A URL with a NUL was not given by the filter: it fingerprints as seen:add's. */
    if (strlen(url) != len) {
        c.fp = url_hash(url, len);
        c.has_fp = 1;
    }
    enum verdict v = in ? record(L, f, &c, dont_filter) : V_SCOPE;
    double counts[V_DUP + 1] = {0};
    if (v != V_NEW) counts[v]++;
    flush_counts(L, 1, counts);
    return push_verdict(L, v, &c);
}

static int l_filter_gc(lua_State *L)
{
    filter_t *f = luaL_checkudata(L, 1, FILTER_METATABLE);
    free_pats(f);
    f->seen = NULL;
    return 0;
}

static const luaL_Reg hosts_methods[] = {
    {"add", l_hosts_add},
    {"match", l_hosts_match},
    {NULL, NULL},
};

static const luaL_Reg filter_methods[] = {
    {"next", l_filter_next},
    {"check", l_filter_check},
    {"scoped", l_filter_scoped},
    {NULL, NULL},
};

static const luaL_Reg crawl_funcs[] = {
    {"host", l_crawl_host},
    {"hosts", l_crawl_hosts},
    {"filter", l_crawl_filter},
    {NULL, NULL},
};

void lc_register_crawl(lua_State *L)
{
    static const luaL_Reg hosts_meta[] = {{"__gc", l_hosts_gc}, {NULL, NULL}};
    static const luaL_Reg filter_meta[] = {{"__gc", l_filter_gc}, {NULL, NULL}};
    lc_class(L, HOSTS_METATABLE, hosts_meta, hosts_methods);
    lc_class(L, FILTER_METATABLE, filter_meta, filter_methods);
    lua_createtable(L, 0, 3); /* core.crawl */
    lua_pushvalue(L, -2);     /* the state, as lc_setfuncs wants it on top */
    lc_setfuncs(L, crawl_funcs);
    lua_pop(L, 1);
    lua_setfield(L, -3, "crawl");
}
