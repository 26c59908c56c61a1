/* lua_sitemap.c: core.sitemap_parse(body) -> {kind=, entries={{loc=,...}}} | nil, err */
#include "lua_aux.h"
#include "sitemap.h"
#include "lua_libs.h"

static void set_field(lua_State *L, const char *k, const char *v)
{
    if (!v) return;
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static int add_entry(void *arg, const sitemap_entry_t *e)
{
    lua_State *L = arg;
    lua_createtable(L, 0, 4);
    set_field(L, "loc", e->loc);
    set_field(L, "lastmod", e->lastmod);
    set_field(L, "changefreq", e->changefreq);
    set_field(L, "priority", e->priority);
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    return 0;
}

static int l_sitemap_parse(lua_State *L)
{
    size_t len;
    const char *body = luaL_checklstring(L, 1, &len);
    enum sitemap_kind kind = SITEMAP_TEXT;
    char err[512];
    lua_createtable(L, 0, 2);
    lua_createtable(L, 64, 0);
    if (sitemap_parse(body, len, &kind, add_entry, L, err, sizeof(err)) < 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_setfield(L, -2, "entries");
    static const char *const kinds[] = {"urlset", "index", "text"};
    lua_pushstring(L, kinds[kind]);
    lua_setfield(L, -2, "kind");
    return 1;
}

static const luaL_Reg funcs[] = {
    {"sitemap_parse", l_sitemap_parse},
    {NULL, NULL},
};

void lc_register_sitemap(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
