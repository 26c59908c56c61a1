/* lua_aux.c: the helpers below every binding file (lua_aux.h): registering
 * functions, classes tagged by the address of their name, error objects. It calls
 * no binding file, so that none of them depends on another through it. */
#include "lua_aux.h"

void lc_setfuncs(lua_State *L, const luaL_Reg *reg)
{
    for (; reg->name; reg++) {
        lua_pushvalue(L, -1);
        lua_pushcclosure(L, reg->func, 1);
        lua_setfield(L, -3, reg->name);
    }
}

void lc_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods)
{
    luaL_newmetatable(L, name);             /* [state, mt] */
    lua_pushlightuserdata(L, (void *)name); /* its tag, for lc_toudata_either */
    lua_rawseti(L, -2, 1);
    lua_pushlightuserdata(L, (void *)name);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    for (; meta && meta->name; meta++) {
        lua_pushcfunction(L, meta->func);
        lua_setfield(L, -2, meta->name);
    }
    if (methods) {
        lua_newtable(L);
        lua_pushvalue(L, -3); /* [state, mt, methods, state] */
        lc_setfuncs(L, methods);
        lua_pop(L, 1);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

void lc_getmetatable(lua_State *L, const char *name)
{
    lua_pushlightuserdata(L, (void *)name);
    lua_rawget(L, LUA_REGISTRYINDEX);
}

void *lc_toudata_either(lua_State *L, int idx, const char *name, const char *spent)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx)) return NULL;
    lua_rawgeti(L, -1, 1); /* the tag lc_class gave it: no lookup in the registry */
    /* NULL unless a (light or full) userdata: a full one's block is never a tag,
     * which is the address of a class's name. No lua_type first: these checks run
     * several times a page. */
    const void *tag = lua_touserdata(L, -1);
    lua_pop(L, 2);
    return tag && (tag == name || tag == spent) ? p : NULL;
}

void lc_push_error(lua_State *L, lc_state_t *st, const char *kind, const char *message)
{
    lua_createtable(L, 0, 2);
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, message);
    lua_setfield(L, -2, "message");
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->error_mt_ref);
    lua_setmetatable(L, -2);
}

int lc_fail(lua_State *L, lc_state_t *st, const char *kind, const char *message)
{
    lua_pushnil(L);
    lc_push_error(L, st, kind, message);
    return 2;
}
