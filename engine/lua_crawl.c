/* lua_crawl.c: core.crawl, the per-link work of the crawl framework (crawl.lua) in C.
 *
 * A page's links are mostly duplicates (a site's pages link to each other over and
 * over: dozens of links a page for one new URL), so page:follow hands its list of
 * links to core.crawl.next, which runs them through the checks Crawler:enqueue
 * makes before a request is queued (resolve, normalize, max_depth, the scope by
 * host, the seen set) and stops at the next link that passes them all: the others
 * cost no Lua string, table or call.
 * Each check gives what lc.url.resolve, lc.url.normalize, lc.url.host and seen:add
 * give, in the order enqueue takes them, so the counts come out the same too.
 *
 * core.crawl.host is lc.url.host, without parsing a URL already in normalized form. */
#include "html.h"
#include "lua_state.h"
#include "seen.h"
#include "url.h"
#include "url_internal.h"

#include <stdlib.h>
#include <string.h>

#define SMALL_SET 8 /* a host set this small is searched, not indexed */
#define HOST_CACHE 256

enum scope_mode {
    SCOPE_ANY = 0,    /* every host */
    SCOPE_SET = 1,    /* hosts[host] == true */
    SCOPE_SUFFIX = 2, /* host is one of the list, or a subdomain, case-insensitively */
};

/* The host of a URL in normalized form ("http://HOST[:PORT]/...", HOST lower-case
 * letters, digits, '-' and '.'): where it starts, and its length in *n. */
static const char *normal_host(const char *url, size_t *n)
{
    size_t i = url[4] == ':' ? 7 : 8, e = i;
    while (url[e] != ':' && url[e] != '/')
        e++;
    *n = e - i;
    return url + i;
}

/* Whether a URL in normalized form (n bytes) has the host cached (len bytes; -1:
 * none). */
static int same_host(const char *url, size_t n, const char *cached, long len)
{
    size_t h = url[4] == ':' ? 7 : 8;
    if (len < 0 || h + (size_t)len >= n) return 0;
    return memcmp(url + h, cached, (size_t)len) == 0 &&
           (url[h + (size_t)len] == ':' || url[h + (size_t)len] == '/');
}

/* The host of a URL as url_host gives it, copied into buf (cap URL_MAX_LENGTH + 1):
 * taken from the string when the URL is in normalized form (normal: what
 * url_normal_form gave, non-zero for that form), else from url_host. Returns its
 * length, or -1 with *err set. */
static long host_of(const char *url, size_t len, size_t normal, char *buf, int *err)
{
    if (strlen(url) != len) {
        *err = URL_E_MALFORMED;
        return -1;
    }
    size_t n;
    if (normal) {
        const char *h = normal_host(url, &n);
        memcpy(buf, h, n);
    } else {
        char *h = NULL;
        *err = url_host(url, &h);
        if (*err) return -1;
        n = strlen(h);
        if (n > URL_MAX_LENGTH) n = URL_MAX_LENGTH; /* url_host refuses longer URLs */
        memcpy(buf, h, n);
        free(h);
    }
    buf[n] = '\0';
    return (long)n;
}

/* core.crawl.host(url) -> host | nil, message: lc.url.host */
static int l_host(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING) luaL_typerror(L, 1, "string");
    size_t len;
    const char *url = lua_tolstring(L, 1, &len);
    char buf[URL_MAX_LENGTH + 1];
    int err = URL_OK;
    long n = host_of(url, len, url_normal_form(url, len), buf, &err);
    if (n < 0) {
        lua_pushnil(L);
        lua_pushstring(L, url_strerror(err));
        return 2;
    }
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* hosts[host] == true, hosts a table at idx. */
static int in_set(lua_State *L, int idx, const char *host, size_t n)
{
    int found = 0, count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (++count > SMALL_SET) {
            lua_pop(L, 2);
            lua_pushlstring(L, host, n);
            lua_rawget(L, idx);
            found = lua_type(L, -1) == LUA_TBOOLEAN && lua_toboolean(L, -1);
            lua_pop(L, 1);
            return found;
        }
        size_t kn;
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TBOOLEAN &&
            lua_toboolean(L, -1)) {
            const char *k = lua_tolstring(L, -2, &kn);
            if (kn == n && memcmp(k, host, n) == 0) found = 1;
        }
        lua_pop(L, 1);
    }
    return found;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* a (n bytes) equals b (bn bytes) lower-cased. */
static int eq_lower(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)a[i] != lower((unsigned char)b[i])) return 0;
    return 1;
}

/* host matches one of the list at idx, or is a subdomain of one (crawl.lua's
 * host_matches); 1, 0, or -1 when an entry is not a string. */
static int in_suffix_list(lua_State *L, int idx, const char *host, size_t n)
{
    for (int i = 1;; i++) {
        lua_rawgeti(L, idx, i);
        int t = lua_type(L, -1);
        if (t == LUA_TNIL) {
            lua_pop(L, 1);
            return 0;
        }
        if (t != LUA_TSTRING) {
            lua_pop(L, 1);
            return -1;
        }
        size_t hn;
        const char *h = lua_tolstring(L, -1, &hn);
        int match = (n == hn && eq_lower(host, h, n)) ||
                    (n > hn && host[n - hn - 1] == '.' && eq_lower(host + n - hn, h, hn));
        lua_pop(L, 1);
        if (match) return 1;
    }
}

/* core.crawl.next(list, i, seen, base, normalize_opts, mode, hosts, too_deep), list a
 * Lua list or a link set (core.html.scan_set)
 *   -> url|nil|false, next, invalid, too_deep, out_of_scope, duplicates
 *
 * Takes list[i], list[i + 1], ... (as ipairs would) as page:follow does: a URL that
 * is not http(s):// resolves against base (one that does not is skipped); it is
 * normalized (else counted invalid), counted too deep when too_deep is true, its
 * host checked by mode (enum scope_mode; a URL without a host has the host ""),
 * and added to the seen set (else counted a duplicate). Returns at the first URL
 * that passes (normalized; next is the index after it), at the end (nil), or at an
 * item this cannot take (false; next is its index): a table (a node), or a URL
 * whose scope check meets a host list entry that is not a string. */
static int l_next(lua_State *L)
{
    const html_links_t *set = lc_tolinkset(L, 1);
    if (!set) luaL_checktype(L, 1, LUA_TTABLE);
    int i = (int)luaL_checkinteger(L, 2);
    seen_t *seen = lc_toseen(L, 3);
    if (!seen) luaL_typerror(L, 3, "seen set");
    size_t base_len;
    const char *base = luaL_checklstring(L, 4, &base_len);
    int mode = (int)luaL_checkinteger(L, 6);
    if (mode != SCOPE_ANY) luaL_checktype(L, 7, LUA_TTABLE);
    int too_deep = lua_toboolean(L, 8);
    int base_ok = strlen(base) == base_len;

    url_norm_opts_t opts;
    memset(&opts, 0, sizeof(opts)); /* read on first need (lc_check_norm_opts) */
    const char *pats[LC_MAX_STRIP + 1];
    int opts_read = 0, plain = 0;
    double n_invalid = 0, n_deep = 0, n_scope = 0, n_dup = 0;
    char host[URL_MAX_LENGTH + 1], url[URL_MAX_LENGTH + 1];
    char cached[HOST_CACHE]; /* the last host checked and its answer */
    long cached_len = -1;
    int cached_in = 0;
    int result = 0;      /* 0 the end, 1 a URL (u), 2 an item for the caller */
    const char *u = url; /* the normalized URL: in url, or in the link or string itself */
    size_t url_len = 0;

    if (set && i == 1) /* the seen set's slots of the page's links, asked for at once */
        for (size_t k = 0; k < set->n; k++)
            seen_prefetch(seen, set->v[k].hash);

    for (;; i++) {
        size_t href_len;
        const char *href;
        const html_link_t *link = NULL;
        if (set) { /* a link set: C strings, absolute and normalized */
            if (i < 1 || (size_t)i > set->n) break;
            link = &set->v[i - 1];
            href = link->url;
            href_len = link->len;
        } else {
            lua_rawgeti(L, 1, i);
            int t = lua_type(L, -1);
            if (t == LUA_TNIL) {
                lua_pop(L, 1);
                break;
            }
            if (t != LUA_TSTRING) {
                lua_pop(L, 1);
                result = 2;
                break;
            }
            href = lua_tolstring(L, -1, &href_len);
            /* The string stays alive in the list while it is used. */
            lua_pop(L, 1);
        }

        char *resolved = NULL;
        const char *abs = href;
        size_t abs_len = href_len;
        if (!((href_len >= 7 && memcmp(href, "http://", 7) == 0) ||
              (href_len >= 8 && memcmp(href, "https://", 8) == 0))) {
            if (!base_ok || strlen(href) != href_len) continue;
            if (url_resolve(base, href, &resolved) != URL_OK) continue;
            abs = resolved;
            abs_len = strlen(resolved);
        }
        if (!opts_read) {
            lc_check_norm_opts(L, 5, &opts, pats); /* may raise: nothing to free yet */
            opts_read = 1;
            plain = !opts.sort_query && !opts.strip;
        }
        /* url_normalize; a URL in normalized form is its own (url_internal.h). */
        size_t normal = !plain                 ? 0
                        : link && link->normal ? link->len
                                               : url_normal_form(abs, abs_len);
        if (normal && (normal == abs_len || !opts.keep_fragment)) {
            u = abs; /* its first normal bytes: a link's or a string in the list */
            if (resolved) {
                memcpy(url, abs, normal);
                url[normal] = '\0';
                free(resolved);
                u = url;
            }
            url_len = normal;
        } else {
            char *norm = NULL;
            int err = strlen(abs) != abs_len ? URL_E_MALFORMED : url_normalize(abs, &opts, &norm);
            free(resolved);
            if (err) {
                n_invalid++;
                continue;
            }
            url_len = strlen(norm);
            if (url_len > URL_MAX_LENGTH) { /* url_normalize refuses longer URLs */
                free(norm);
                n_invalid++;
                continue;
            }
            memcpy(url, norm, url_len + 1);
            free(norm);
            u = url;
            normal = url_normal_form(url, url_len);
        }
        if (too_deep) {
            n_deep++;
            continue;
        }

        if (mode != SCOPE_ANY) {
            int in;
            if (normal && same_host(u, url_len, cached, cached_len)) {
                in = cached_in;
            } else {
                const char *hp = host; /* the host, read in place when normal */
                size_t hl;
                if (normal) {
                    hp = normal_host(u, &hl);
                } else {
                    int herr;
                    long hn = host_of(u, url_len, 0, host, &herr);
                    hl = hn < 0 ? 0 : (size_t)hn;
                }
                if ((long)hl == cached_len && memcmp(hp, cached, hl) == 0) {
                    in = cached_in;
                } else {
                    in = mode == SCOPE_SET ? in_set(L, 7, hp, hl) : in_suffix_list(L, 7, hp, hl);
                    if (in < 0) {
                        result = 2;
                        break;
                    }
                    if (hl < HOST_CACHE) {
                        memcpy(cached, hp, hl);
                        cached_len = (long)hl;
                        cached_in = in;
                    }
                }
            }
            if (!in) {
                n_scope++;
                continue;
            }
        }

        /* seen:add's fingerprint: url_fingerprint, which hashes a URL in normalized
         * form as it is (up to a fragment), as the link set did. */
        uint64_t fp = link && plain ? link->hash
                      : normal      ? url_hash(u, normal)
                                    : url_fingerprint(u);
        int r = seen_add(seen, fp);
        if (r < 0) luaL_error(L, "seen: out of memory");
        if (r == 0) {
            n_dup++;
            continue;
        }
        result = 1;
        break;
    }

    if (result == 1)
        lua_pushlstring(L, u, url_len);
    else if (result == 2)
        lua_pushboolean(L, 0);
    else
        lua_pushnil(L);
    lua_pushinteger(L, result == 1 ? i + 1 : i);
    lua_pushnumber(L, n_invalid);
    lua_pushnumber(L, n_deep);
    lua_pushnumber(L, n_scope);
    lua_pushnumber(L, n_dup);
    return 6;
}

static const luaL_Reg crawl_funcs[] = {
    {"host", l_host},
    {"next", l_next},
    {NULL, NULL},
};

void lc_register_crawl(lua_State *L)
{
    lua_createtable(L, 0, 2); /* core.crawl */
    lua_pushvalue(L, -2);     /* the state, as lc_setfuncs wants it on top */
    lc_setfuncs(L, crawl_funcs);
    lua_pop(L, 1);
    lua_setfield(L, -3, "crawl");
}
