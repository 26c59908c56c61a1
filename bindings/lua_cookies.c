/* lua_cookies.c: core.cookies_new() -> a cookie jar (http_cookies.h), with the methods
 * jar:get(url), jar:set(url, line), jar:list([url]) and jar:clear(). The value
 * holds one reference to the jar; lc.fetch's cookies option gives each request
 * another (lua_http.c). */
#include "lua_cookies.h"

#include "lua_aux.h"
#include "lua_libs.h"

static const char JAR_METATABLE[] = "luacrawl.cookies";

/* The value: one reference to the jar (NULL once collected). */
struct jar_value {
    cookies_t *jar;
};

cookies_t *lc_tocookies(lua_State *L, int idx)
{
    struct jar_value *v = lua_touserdata(L, idx);
    if (!v || !lua_getmetatable(L, idx)) return NULL;
    luaL_getmetatable(L, JAR_METATABLE);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? v->jar : NULL;
}

static cookies_t *check_jar(lua_State *L, const char *method)
{
    cookies_t *jar = lc_tocookies(L, 1);
    if (!jar) luaL_error(L, "jar:%s: call it on a cookie jar (lc.cookies()), with ':'", method);
    return jar;
}

static int l_cookies_new(lua_State *L)
{
    struct jar_value *v = lua_newuserdata(L, sizeof(*v));
    v->jar = NULL;
    luaL_getmetatable(L, JAR_METATABLE);
    lua_setmetatable(L, -2);
    if (!(v->jar = cookies_new())) luaL_error(L, "lc.cookies: out of memory");
    return 1;
}

/* core.is_cookies(v) -> whether v is a cookie jar */
static int l_is_cookies(lua_State *L)
{
    lua_pushboolean(L, lc_tocookies(L, 1) != NULL);
    return 1;
}

static int l_cookies_gc(lua_State *L)
{
    struct jar_value *v = luaL_checkudata(L, 1, JAR_METATABLE);
    cookies_unref(v->jar);
    v->jar = NULL;
    return 0;
}

static int l_cookies_tostring(lua_State *L)
{
    lua_pushfstring(L, "cookie jar: %p", lua_topointer(L, 1));
    return 1;
}

/* cookies_fn: append a table for c to the list on top of L. */
static int push_cookie(void *arg, const cookie_t *c)
{
    lua_State *L = arg;
    lua_createtable(L, 0, 8);
    lc_set_string(L, "name", c->name);
    lc_set_string(L, "value", c->value);
    lc_set_string(L, "domain", c->domain);
    lc_set_string(L, "path", c->path);
    lc_set_bool(L, "host_only", c->host_only);
    lc_set_bool(L, "secure", c->secure);
    lc_set_bool(L, "http_only", c->http_only);
    if (c->expires) lc_set_number(L, "expires", (double)c->expires);
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    return 0;
}

/* jar:list([url]) -> { {name=, value=, domain=, path=, ...}, ... } */
static int l_cookies_list(lua_State *L)
{
    cookies_t *jar = check_jar(L, "list");
    const char *url = luaL_optstring(L, 2, NULL);
    char err[128];
    lua_newtable(L);
    if (cookies_each(jar, url, push_cookie, L, err, sizeof(err)) < 0)
        luaL_error(L, "jar:list: %s: %s", err, url ? url : "");
    return 1;
}

struct header {
    luaL_Buffer b;
    int n;
};

static int add_to_header(void *arg, const cookie_t *c)
{
    struct header *h = arg;
    if (h->n++) luaL_addstring(&h->b, "; ");
    luaL_addstring(&h->b, c->name);
    luaL_addchar(&h->b, '=');
    luaL_addstring(&h->b, c->value);
    return 0;
}

/* jar:get(url) -> the Cookie header a request to url gets ("a=1; b=2"), or nil */
static int l_cookies_get(lua_State *L)
{
    cookies_t *jar = check_jar(L, "get");
    const char *url = luaL_checkstring(L, 2);
    char err[128];
    struct header h = {.n = 0};
    luaL_buffinit(L, &h.b);
    if (cookies_each(jar, url, add_to_header, &h, err, sizeof(err)) < 0)
        luaL_error(L, "jar:get: %s: %s", err, url);
    luaL_pushresult(&h.b);
    if (h.n == 0) lua_pushnil(L);
    return 1;
}

/* jar:set(url, "name=value; Attr=...") -> true | nil, err (kind invalid_cookie) */
static int l_cookies_set(lua_State *L)
{
    cookies_t *jar = check_jar(L, "set");
    const char *url = luaL_checkstring(L, 2);
    const char *line = luaL_checkstring(L, 3);
    char err[256];
    int rc = cookies_set(jar, url, line, err, sizeof(err));
    if (rc == -2) luaL_error(L, "jar:set: %s: %s", err, url);
    if (rc < 0) return lc_fail(L, lc_state(L), "invalid_cookie", err);
    lua_pushboolean(L, 1);
    return 1;
}

static int l_cookies_clear(lua_State *L)
{
    cookies_clear(check_jar(L, "clear"));
    return 0;
}

static const luaL_Reg methods[] = {
    {"get", l_cookies_get},     {"set", l_cookies_set}, {"list", l_cookies_list},
    {"clear", l_cookies_clear}, {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"cookies_new", l_cookies_new},
    {"is_cookies", l_is_cookies},
    {NULL, NULL},
};

void lc_register_cookies(lua_State *L)
{
    static const luaL_Reg meta[] = {
        {"__gc", l_cookies_gc}, {"__tostring", l_cookies_tostring}, {NULL, NULL}};
    lc_class(L, JAR_METATABLE, meta, methods); /* jar:set makes error objects (lc_state) */
    lc_setfuncs(L, funcs);
}
