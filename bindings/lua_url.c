/* lua_url.c: core.url (parse, resolve, normalize, fingerprint, host, site,
 * same_site) over url.c. URL errors come back as nil and an error object (kind
 * invalid_url); arguments of the wrong type raise. */
#include "lua_opts.h"
#include "lua_url.h"
#include "lua_libs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* url.parse(u) -> {scheme, user, password, host, port, path, query, fragment} */
static int l_url_parse(lua_State *L)
{
    size_t len;
    const char *u = lc_check_url(L, 1, &len);
    url_parts_t p;
    int err = url_parse(u, &p);
    if (err) {
        url_parts_free(&p);
        return fail(L, err);
    }
    lua_createtable(L, 0, 8);
    lc_set_string(L, "scheme", p.scheme);
    lc_set_string(L, "user", p.user);
    lc_set_string(L, "password", p.password);
    lc_set_string(L, "host", p.host);
    if (p.port) {
        lua_pushnumber(L, strtol(p.port, NULL, 10));
        lua_setfield(L, -2, "port");
    }
    lc_set_string(L, "path", p.path);
    lc_set_string(L, "query", p.query);
    lc_set_string(L, "fragment", p.fragment);
    url_parts_free(&p);
    return 1;
}

/* url.resolve(base, ref) -> absolute URL */
static int l_url_resolve(lua_State *L)
{
    size_t blen, rlen;
    const char *base = lc_check_url(L, 1, &blen);
    const char *ref = lc_check_url(L, 2, &rlen);
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
static int l_url_normalize(lua_State *L)
{
    size_t len;
    const char *u = lc_check_url(L, 1, &len);
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
static int l_url_fingerprint(lua_State *L)
{
    size_t len;
    const char *u = lc_check_url(L, 1, &len);
    char hex[17];
    snprintf(hex, sizeof(hex), "%016" PRIx64, fingerprint(u, len));
    lua_pushlstring(L, hex, 16);
    return 1;
}

static int host_or_site(lua_State *L, int (*fn)(const char *, char **))
{
    size_t len;
    const char *u = lc_check_url(L, 1, &len);
    char *out;
    int err = fn(u, &out);
    return push_result(L, err, out);
}

/* url.host(u) -> host */
static int l_url_host(lua_State *L)
{
    return host_or_site(L, url_host);
}

/* url.site(u) -> registrable domain */
static int l_url_site(lua_State *L)
{
    return host_or_site(L, url_site);
}

/* url.same_site(a, b) -> boolean: both parse and have the same registrable domain. */
static int l_url_same_site(lua_State *L)
{
    size_t alen, blen;
    const char *a = lc_check_url(L, 1, &alen);
    const char *b = lc_check_url(L, 2, &blen);
    char *sa = NULL, *sb = NULL;
    int same = url_site(a, &sa) == URL_OK && url_site(b, &sb) == URL_OK && strcmp(sa, sb) == 0;
    free(sa);
    free(sb);
    lua_pushboolean(L, same);
    return 1;
}

static const luaL_Reg url_funcs[] = {
    {"parse", l_url_parse},         {"resolve", l_url_resolve},
    {"normalize", l_url_normalize}, {"fingerprint", l_url_fingerprint},
    {"host", l_url_host},           {"site", l_url_site},
    {"same_site", l_url_same_site}, {NULL, NULL},
};

void lc_register_url(lua_State *L)
{
    lua_createtable(L, 0, 8); /* core.url */
    lua_pushvalue(L, -2);     /* the state, as lc_setfuncs wants it on top */
    lc_setfuncs(L, url_funcs);
    lua_pop(L, 1);
    lua_setfield(L, -3, "url");
}
