/* lua_check.h: numbers from Lua, checked before C uses them. Casting a double that
 * is NaN, infinite or out of the target type's range to size_t or int is undefined
 * behaviour (max_size = -1, follow = 1e300), so every number a binding takes goes
 * through these: they raise an error that names the argument or option and the
 * range it accepts, instead.
 *
 * what names the value as the message should say it: "fetch: option 'timeout'",
 * "seen: expected size". Like luaL_checknumber, a string that converts to a number
 * is taken. */
#ifndef LUACRAWL_LUA_CHECK_H
#define LUACRAWL_LUA_CHECK_H

#include "lua_api.h"

/* 2^53: the integers a Lua number (a double) holds exactly run to here. */
#define LC_INT_MAX 9007199254740992LL

/* The number at idx: finite and in [min, max] (min -DBL_MAX and max DBL_MAX ask
 * only that it be finite). */
double lc_check_number(lua_State *L, int idx, const char *what, double min, double max);

/* A whole number in [min, max], both within [-LC_INT_MAX, LC_INT_MAX]. */
long long lc_check_integer(lua_State *L, int idx, const char *what, long long min, long long max);

/* As above; def when idx holds nil or nothing. */
double lc_opt_number(lua_State *L, int idx, const char *what, double def, double min, double max);
long long lc_opt_integer(lua_State *L, int idx, const char *what, long long def, long long min,
                         long long max);

#endif
