/* lua_aux.h: the helpers every binding file uses, below all of them (as LuaJIT's
 * lib_aux.c is below its libraries): one way to make a class, to set a field, to
 * register functions and to fail. It calls no binding file. */
#ifndef LUACRAWL_LUA_AUX_H
#define LUACRAWL_LUA_AUX_H

#include "lua_api.h"
#include "lua_state.h"

/* These never return: they unwind to the nearest pcall. lua.h and lauxlib.h do not
 * say so, and without it the compiler and clang-tidy take the code after them as
 * reachable: a helper that raises on failure would seem to return NULL or garbage. */
LUA_API int lua_error(lua_State *L) __attribute__((noreturn));
LUALIB_API int luaL_error(lua_State *L, const char *fmt, ...) __attribute__((noreturn));
LUALIB_API int luaL_argerror(lua_State *L, int numarg, const char *extramsg)
    __attribute__((noreturn));
LUALIB_API int luaL_typerror(lua_State *L, int narg, const char *tname) __attribute__((noreturn));

/* Registering ------------------------------------------------------------------- */

/* With [table, state userdata] on top of L, set each function of reg as
 * table[name], a closure over the state (lc_state reads it). Leaves the stack as it
 * was. Every binding's open function is called with [core, state] on top. */
void lc_setfuncs(lua_State *L, const luaL_Reg *reg);

/* Classes ----------------------------------------------------------------------- */

/* The metatables of our userdata types are kept in the registry under their name
 * (as luaL_newmetatable does, for luaL_checkudata) and under the address of that
 * name, a light userdata: the checks made for every page look them up by pointer,
 * a fraction of the cost of a lookup by string. name is the type's char array (of
 * static storage), the same one at every call. The table holds the name's address
 * at [1] as a light userdata: lc_toudata_either checks a userdata's type by that tag.
 *
 * lc_class makes one, with the state userdata on top of L (as in an open function):
 * meta (NULL: none) are its metamethods, plain C functions; methods (NULL: none) go
 * into its __index table as closures over the state, as lc_setfuncs makes them.
 * Leaves the stack as it was. */
void lc_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);

/* Push the metatable lc_class made for name. */
void lc_getmetatable(lua_State *L, const char *name);

/* The userdata at idx if its metatable is `name`'s or `spent`'s (the same type once
 * its memory was given back early: a metatable without __gc, so that the collector
 * frees it without a finalizer call; NULL for a type without one), else NULL. */
void *lc_toudata_either(lua_State *L, int idx, const char *name, const char *spent);

/* Fields ------------------------------------------------------------------------ */

/* t[k] = v for the table t on top of L; a NULL string sets nothing. Inline: the
 * response and link tables are built with them for every page. */
static inline void lc_set_string(lua_State *L, const char *k, const char *v)
{
    if (!v) return;
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static inline void lc_set_number(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static inline void lc_set_bool(lua_State *L, const char *k, int v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}

/* Failing ----------------------------------------------------------------------- */

/* A bad call (wrong type, bad option) raises (luaL_error, luaL_argerror); a failure
 * of the operation itself returns nil and an error object: */

/* Push an error object {kind=, message=} with the module's error metatable. */
void lc_push_error(lua_State *L, lc_state_t *st, const char *kind, const char *message);

/* Push nil and that error object: `return lc_fail(...)` returns them to Lua. */
int lc_fail(lua_State *L, lc_state_t *st, const char *kind, const char *message);

#endif
