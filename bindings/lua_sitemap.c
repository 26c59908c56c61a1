/* lua_sitemap.c: core.sitemap_parse(body) -> {kind=, entries={{loc=,...}}} | nil, err:
 * what is not a sitemap (or passes the protocol's limits) gives an error of kind
 * "parse", a lack of memory one of kind "memory". */
#include "lua_aux.h"
#include "sitemap.h"
#include "lua_libs.h"

#include <string.h>

static int add_entry(void *arg, const sitemap_entry_t *e)
{
    lua_State *L = arg;
    lua_createtable(L, 0, 4);
    lc_set_string(L, "loc", e->loc);
    lc_set_string(L, "lastmod", e->lastmod);
    lc_set_string(L, "changefreq", e->changefreq);
    lc_set_string(L, "priority", e->priority);
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
        /* sitemap.c says every failure in err; running out of memory as "out of memory". */
        lc_push_error(L, lc_state(L), strstr(err, "out of memory") ? "memory" : "parse", err);
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
