/* lua_embed.c: makes the embedded Lua modules loadable with require. */
#include "lua_embed.h"

#include <string.h>

static const struct lua_embedded *find(const char *name)
{
    for (const struct lua_embedded *m = lua_embedded_modules; m->name; m++)
        if (strcmp(m->name, name) == 0) return m;
    return NULL;
}

int lua_embed_load(lua_State *L, const char *name)
{
    const struct lua_embedded *m = find(name);
    if (!m) {
        lua_pushfstring(L, "no embedded module '%s'", name);
        return LUA_ERRFILE;
    }
    return luaL_loadbuffer(L, (const char *)m->data, m->size, m->chunk);
}

static int preload_loader(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    if (lua_embed_load(L, name) != 0) return lua_error(L);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    return 1;
}

void lua_embed_preload(lua_State *L)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "preload");
    for (const struct lua_embedded *m = lua_embedded_modules; m->name; m++) {
        if (strcmp(m->name, "luacrawl") == 0) continue;
        lua_pushcfunction(L, preload_loader);
        lua_setfield(L, -2, m->name);
    }
    lua_pop(L, 2);
}

int lua_embed_open(lua_State *L, const char *name)
{
    lc_need_luajit(L); /* require "luacrawl.crawl" first, under another Lua */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl");
    lua_call(L, 1, 0);
    if (lua_embed_load(L, name) != 0) return lua_error(L);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    return 1;
}
