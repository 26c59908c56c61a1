/* lua_url.c: core.url (parse, resolve, normalize, fingerprint, host, site,
 * same_site) over url.c, and core.seen, a set of URL fingerprints over seen.c.
 * URL errors come back as nil and an error object (kind invalid_url); arguments of
 * the wrong type raise. */
#include "lua_check.h"
#include "lua_opts.h"
#include "lua_state.h"
#include "seen.h"
#include "url.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SEEN_METATABLE[] = "luacrawl.seen";

/* A string argument: numbers are not taken for URLs. A NUL byte inside it (the C
 * functions take strings to their first NUL) is written "%00" (url_escape_nul);
 * that string replaces the argument. */
static const char *check_url(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) != LUA_TSTRING) luaL_typerror(L, idx, "string");
    const char *s = lua_tolstring(L, idx, len);
    if (strlen(s) == *len) return s;
    char *buf = lua_newuserdata(L, 3 * *len + 1);
    *len = url_escape_nul(s, *len, buf);
    lua_pushlstring(L, buf, *len);
    lua_replace(L, idx);
    lua_pop(L, 1);
    return lua_tolstring(L, idx, len);
}

void lc_push_url_error(lua_State *L, int err)
{
    lua_pushnil(L);
    lc_push_error(L, lc_state(L), err == URL_E_NOMEM ? "memory" : "invalid_url", url_strerror(err));
}

static int fail(lua_State *L, int err)
{
    lc_push_url_error(L, err);
    return 2;
}

/* Push a malloc'd result string and free it, or nil and the error. */
static int push_result(lua_State *L, int err, char *s)
{
    if (err) return fail(L, err);
    lua_pushstring(L, s);
    free(s);
    return 1;
}

static void set_field(lua_State *L, const char *k, const char *v)
{
    if (!v) return;
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

/* url.parse(u) -> {scheme, user, password, host, port, path, query, fragment} */
static int l_parse(lua_State *L)
{
    size_t len;
    const char *u = check_url(L, 1, &len);
    url_parts_t p;
    int err = url_parse(u, &p);
    if (err) {
        url_parts_free(&p);
        return fail(L, err);
    }
    lua_createtable(L, 0, 8);
    set_field(L, "scheme", p.scheme);
    set_field(L, "user", p.user);
    set_field(L, "password", p.password);
    set_field(L, "host", p.host);
    if (p.port) {
        lua_pushnumber(L, strtol(p.port, NULL, 10));
        lua_setfield(L, -2, "port");
    }
    set_field(L, "path", p.path);
    set_field(L, "query", p.query);
    set_field(L, "fragment", p.fragment);
    url_parts_free(&p);
    return 1;
}

/* url.resolve(base, ref) -> absolute URL */
static int l_resolve(lua_State *L)
{
    size_t blen, rlen;
    const char *base = check_url(L, 1, &blen);
    const char *ref = check_url(L, 2, &rlen);
    char *out;
    int err = url_resolve(base, ref, &out);
    return push_result(L, err, out);
}

static const lc_opt_t norm_list[] = {
    LC_OPT("sort_query", LC_OPT_ANY),
    LC_OPT("keep_fragment", LC_OPT_ANY),
    LC_OPT("strip", LC_OPT_TABLE),
};

static const lc_opts_t norm_opts = {"normalize", "normalize: option '%s'", 0,
                                    sizeof(norm_list) / sizeof(norm_list[0]), norm_list};

void lc_check_norm_opts(lua_State *L, int idx, url_norm_opts_t *o, const char **pats)
{
    memset(o, 0, sizeof(*o));
    if (lua_isnoneornil(L, idx)) return;
    luaL_checktype(L, idx, LUA_TTABLE);
    int first = lc_push_opts(L, idx, &norm_opts);
    o->sort_query = lua_toboolean(L, first);
    o->keep_fragment = lua_toboolean(L, first + 1);
    if (!lua_isnil(L, first + 2)) {
        size_t n = lua_objlen(L, first + 2);
        if (n > LC_MAX_STRIP)
            luaL_error(L, "normalize: more than %d 'strip' patterns", LC_MAX_STRIP);
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, first + 2, (int)i + 1);
            if (lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "normalize: 'strip' pattern %d is not a string", (int)i + 1);
            pats[i] = lua_tostring(L, -1);
            lua_pop(L, 1);
        }
        pats[n] = NULL;
        if (n) o->strip = pats;
    }
    lua_settop(L, first - 1);
}

/* url.normalize(u [, opts]) -> URL */
static int l_normalize(lua_State *L)
{
    size_t len;
    const char *u = check_url(L, 1, &len);
    url_norm_opts_t opts;
    const char *pats[LC_MAX_STRIP + 1];
    lc_check_norm_opts(L, 2, &opts, pats);
    char *out;
    int err = url_normalize(u, &opts, &out);
    return push_result(L, err, out);
}

static uint64_t fingerprint(const char *u, size_t len)
{
    (void)len; /* check_url leaves no NUL inside */
    return url_fingerprint(u);
}

/* url.fingerprint(u) -> 16 lower-case hex digits (a Lua number cannot hold 64 bits) */
static int l_fingerprint(lua_State *L)
{
    size_t len;
    const char *u = check_url(L, 1, &len);
    char hex[17];
    snprintf(hex, sizeof(hex), "%016" PRIx64, fingerprint(u, len));
    lua_pushlstring(L, hex, 16);
    return 1;
}

static int host_or_site(lua_State *L, int (*fn)(const char *, char **))
{
    size_t len;
    const char *u = check_url(L, 1, &len);
    char *out;
    int err = fn(u, &out);
    return push_result(L, err, out);
}

/* url.host(u) -> host */
static int l_host(lua_State *L)
{
    return host_or_site(L, url_host);
}

/* url.site(u) -> registrable domain */
static int l_site(lua_State *L)
{
    return host_or_site(L, url_site);
}

/* url.same_site(a, b) -> boolean: both parse and have the same registrable domain. */
static int l_same_site(lua_State *L)
{
    size_t alen, blen;
    const char *a = check_url(L, 1, &alen);
    const char *b = check_url(L, 2, &blen);
    char *sa = NULL, *sb = NULL;
    int same = url_site(a, &sa) == URL_OK && url_site(b, &sb) == URL_OK && strcmp(sa, sb) == 0;
    free(sa);
    free(sb);
    lua_pushboolean(L, same);
    return 1;
}

/* Seen sets -------------------------------------------------------------------- */

/* A seen set's userdata: the set first (lc_toseen reads it as a seen_t **), and
 * the bytes of it counted towards max_memory (what is given back is what was
 * counted). */
struct seen_ud {
    seen_t *s;
    size_t counted;
};

static seen_t *check_seen(lua_State *L)
{
    struct seen_ud *u = luaL_checkudata(L, 1, SEEN_METATABLE);
    if (!u->s) luaL_error(L, "seen set already freed");
    return u->s;
}

/* Count the set's bytes now towards max_memory. */
static void seen_count(lua_State *L, struct seen_ud *u)
{
    size_t now = seen_bytes(u->s);
    lc_limits_account(L, (long long)now - (long long)u->counted);
    u->counted = now;
}

/* core.seen([expected]) -> set. The table is allocated at once for `expected`:
 * refused first when it would pass max_memory. */
static int l_seen(lua_State *L)
{
    long long expected = lc_opt_integer(L, 1, "seen: the expected size", 0, 0, LC_INT_MAX);
    size_t bytes = seen_new_bytes((size_t)expected), left;
    if (!lc_limits_allow(L, bytes, &left))
        return luaL_error(
            L, "seen: a set for %.0f URLs takes %.0f bytes, more than max_memory leaves (%.0f)",
            (double)expected, (double)bytes, (double)left);
    struct seen_ud *u = lua_newuserdata(L, sizeof(*u));
    u->s = NULL;
    u->counted = 0;
    lc_getmetatable(L, SEEN_METATABLE);
    lua_setmetatable(L, -2);
    u->s = seen_new((size_t)expected);
    if (!u->s) return luaL_error(L, "seen: out of memory for a set of %.0f URLs", (double)expected);
    seen_count(L, u);
    return 1;
}

seen_t *lc_toseen(lua_State *L, int idx)
{
    seen_t **s = lc_toudata_either(L, idx, SEEN_METATABLE, NULL);
    if (!s) return NULL;
    if (!*s) luaL_error(L, "seen set already freed");
    return *s;
}

int lc_seen_add(lua_State *L, void *ud, uint64_t fp, char *err, size_t errlen)
{
    struct seen_ud *u = ud;
    seen_t *s = u->s;
    size_t grow = seen_grow_bytes(s), left;
    if (!grow) return seen_add(s, fp);
    /* Only a new fingerprint makes a full set grow. */
    if (!seen_has(s, fp) && !lc_limits_allow(L, grow, &left)) {
        snprintf(err, errlen,
                 "seen: growing the set (%.0f URLs) takes %.0f bytes, more than max_memory "
                 "leaves (%.0f)",
                 (double)seen_size(s), (double)grow, (double)left);
        return -1;
    }
    int r = seen_add(s, fp);
    if (r < 0) {
        snprintf(err, errlen, "seen: out of memory");
        return -1;
    }
    seen_count(L, u);
    return r;
}

/* set:add(url) -> true when the URL (normalized) was not in the set */
static int seen_l_add(lua_State *L)
{
    check_seen(L);
    size_t len;
    const char *u = check_url(L, 2, &len);
    char err[160];
    int r = lc_seen_add(L, lua_touserdata(L, 1), fingerprint(u, len), err, sizeof(err));
    if (r < 0) return luaL_error(L, "%s", err);
    lua_pushboolean(L, r);
    return 1;
}

/* set:has(url) -> boolean */
static int seen_l_has(lua_State *L)
{
    seen_t *s = check_seen(L);
    size_t len;
    const char *u = check_url(L, 2, &len);
    lua_pushboolean(L, seen_has(s, fingerprint(u, len)));
    return 1;
}

static int seen_l_size(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)seen_size(check_seen(L)));
    return 1;
}

static int seen_l_bytes(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)seen_bytes(check_seen(L)));
    return 1;
}

static int seen_l_tostring(lua_State *L)
{
    lua_pushfstring(L, "seen set (%d URLs)", (int)seen_size(check_seen(L)));
    return 1;
}

static int seen_l_gc(lua_State *L)
{
    struct seen_ud *u = luaL_checkudata(L, 1, SEEN_METATABLE);
    lc_limits_account(L, -(long long)u->counted);
    u->counted = 0;
    seen_free(u->s);
    u->s = NULL;
    return 0;
}

static const luaL_Reg seen_methods[] = {
    {"add", seen_l_add},     {"has", seen_l_has}, {"size", seen_l_size},
    {"bytes", seen_l_bytes}, {NULL, NULL},
};

static const luaL_Reg url_funcs[] = {
    {"parse", l_parse},         {"resolve", l_resolve},
    {"normalize", l_normalize}, {"fingerprint", l_fingerprint},
    {"host", l_host},           {"site", l_site},
    {"same_site", l_same_site}, {NULL, NULL},
};

static const luaL_Reg core_funcs[] = {
    {"seen", l_seen},
    {NULL, NULL},
};

void lc_register_url(lua_State *L)
{
    lc_newmetatable(L, SEEN_METATABLE);
    lua_createtable(L, 0, 4);
    luaL_register(L, NULL, seen_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, seen_l_size);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, seen_l_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, seen_l_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);

    lua_createtable(L, 0, 8); /* core.url */
    lua_pushvalue(L, -2);     /* the state, as lc_setfuncs wants it on top */
    lc_setfuncs(L, url_funcs);
    lua_pop(L, 1);
    lua_setfield(L, -3, "url");
    lc_setfuncs(L, core_funcs);
}
