/* lua_check.c: the one rule for numbers that come from Lua (lua_check.h). */
#include "lua_check.h"

#include "lua_aux.h"
#include "lua_libs.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

/* Raise "WHAT must be KIND RANGE (got VALUE)". The range is left out where it is
 * the whole of what the type holds, so the message says what matters: "must be a
 * finite number", "must be an integer >= 0". */
static void range_error(lua_State *L, int idx, const char *what, int integer, double min,
                        double max)
{
    double top = integer ? (double)LC_INT_MAX : DBL_MAX;
    char range[96], got[48];
    if (min <= -top && max >= top)
        range[0] = '\0';
    else if (max >= top)
        snprintf(range, sizeof(range), " >= %.14g", min);
    else if (min <= -top)
        snprintf(range, sizeof(range), " <= %.14g", max);
    else
        snprintf(range, sizeof(range), " from %.14g to %.14g", min, max);
    double v = lua_tonumber(L, idx);
    if (isnan(v))
        snprintf(got, sizeof(got), "nan");
    else
        snprintf(got, sizeof(got), "%.14g", v);
    luaL_error(L, "%s must be %s%s (got %s)", what,
               integer ? "an integer"
                       : (min <= -top && max >= top ? "a finite number" : "a number"),
               range, got);
}

static double number_at(lua_State *L, int idx, const char *what)
{
    if (!lua_isnumber(L, idx))
        luaL_error(L, "%s must be a number (got %s)", what, luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

double lc_check_number(lua_State *L, int idx, const char *what, double min, double max)
{
    double v = number_at(L, idx, what);
    /* Written so that NaN, which compares false with everything, fails too. */
    if (!(isfinite(v) && v >= min && v <= max)) range_error(L, idx, what, 0, min, max);
    return v;
}

long long lc_check_integer(lua_State *L, int idx, const char *what, long long min, long long max)
{
    double v = number_at(L, idx, what);
    if (!(isfinite(v) && v >= (double)min && v <= (double)max && floor(v) == v))
        range_error(L, idx, what, 1, (double)min, (double)max);
    return (long long)v;
}

double lc_opt_number(lua_State *L, int idx, const char *what, double def, double min, double max)
{
    return lua_isnoneornil(L, idx) ? def : lc_check_number(L, idx, what, min, max);
}

long long lc_opt_integer(lua_State *L, int idx, const char *what, long long def, long long min,
                         long long max)
{
    return lua_isnoneornil(L, idx) ? def : lc_check_integer(L, idx, what, min, max);
}

/* The Lua side's bounds: nil for "no bound". */
static double bound(lua_State *L, int idx, double none)
{
    return lua_isnoneornil(L, idx) ? none
                                   : lc_check_number(L, idx, "check: a bound", -DBL_MAX, DBL_MAX);
}

/* core.check_number(v, what, [min], [max]) -> v */
static int l_check_number(lua_State *L)
{
    const char *what = luaL_checkstring(L, 2);
    double v = lc_check_number(L, 1, what, bound(L, 3, -DBL_MAX), bound(L, 4, DBL_MAX));
    lua_pushnumber(L, v);
    return 1;
}

/* core.check_integer(v, what, [min], [max]) -> v */
static int l_check_integer(lua_State *L)
{
    const char *what = luaL_checkstring(L, 2);
    double min = bound(L, 3, (double)-LC_INT_MAX), max = bound(L, 4, (double)LC_INT_MAX);
    if (min < (double)-LC_INT_MAX) min = (double)-LC_INT_MAX;
    if (max > (double)LC_INT_MAX) max = (double)LC_INT_MAX;
    long long v = lc_check_integer(L, 1, what, (long long)ceil(min), (long long)floor(max));
    lua_pushnumber(L, (double)v);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"check_number", l_check_number},
    {"check_integer", l_check_integer},
    {NULL, NULL},
};

void lc_register_check(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
