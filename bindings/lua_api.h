/* lua_api.h: the Lua C API (LuaJIT's), for every file of the engine that uses it.
 *
 * luacrawl needs LuaJIT. Loaded as a C module by another Lua (PUC Lua 5.1 to 5.4;
 * `busted` runs under one of them on many systems), the module would fail in the
 * dynamic loader, before any code of ours runs, on the first function that Lua lacks
 * ("undefined symbol: luaL_typerror"), which does not say what is wrong. So the
 * functions some PUC Lua lacks are weak references: the module loads under any Lua,
 * and the module's luaopen_ functions, finding no luaJIT_setmode, raise "luacrawl
 * needs LuaJIT" (lc_need_luajit) before they call anything else. With LuaJIT every reference binds
 * as before; the other functions stay strong, so a link against LuaJIT still needs the library.
 *
 * The list: what the module imports and Debian 12's lua5.1, lua5.2, lua5.3 and
 * lua5.4 do not all export (nm -D). A function of the list used for the first time
 * needs no change; a new one that some PUC Lua lacks makes module.puc_lua.* fail with
 * "undefined symbol" until it is added here. */
#ifndef LUACRAWL_LUA_API_H
#define LUACRAWL_LUA_API_H

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>

#pragma weak luaJIT_setmode
#pragma weak luaL_loadbuffer
#pragma weak luaL_prepbuffer
#pragma weak luaL_register
#pragma weak luaL_traceback
#pragma weak luaL_typerror
#pragma weak lua_call
#pragma weak lua_cpcall
#pragma weak lua_getfenv
#pragma weak lua_insert
#pragma weak lua_isyieldable
#pragma weak lua_newuserdata
#pragma weak lua_objlen
#pragma weak lua_pcall
#pragma weak lua_remove
#pragma weak lua_replace
#pragma weak lua_setfenv
#pragma weak lua_tointeger
#pragma weak lua_tonumber
#pragma weak lua_yield

/* First thing in every luaopen_ function: under another Lua, raise "luacrawl needs
 * LuaJIT" (luaL_error is the same function in every Lua). */
static inline void lc_need_luajit(lua_State *L)
{
    if (!luaJIT_setmode)
        luaL_error(L, "luacrawl needs LuaJIT, and this Lua is not LuaJIT (PUC Lua?): "
                      "run the script with luajit (busted: luajit $(command -v busted) ...)");
}

#endif
