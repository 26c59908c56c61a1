/* lua_url.h: what other bindings take of lua_url.c: URL arguments and the options
 * of url.normalize. */
#ifndef LUACRAWL_LUA_URL_H
#define LUACRAWL_LUA_URL_H

#include "lua_aux.h"
#include "url.h"

#include <string.h>

/* A string argument: numbers are not taken for URLs. A NUL byte inside it (the C
 * functions take strings to their first NUL) is written "%00" (url_escape_nul);
 * that string replaces the argument. Inline: core.url's calls and set:add run it
 * for every link. */
static inline const char *lc_check_url(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) != LUA_TSTRING) luaL_typerror(L, idx, "string");
    const char *s = lua_tolstring(L, idx, len);
    if (strlen(s) == *len) return s;
    char *buf = lua_newuserdata(L, 3 * *len + 1);
    *len = url_escape_nul(s, *len, buf);
    lua_pushlstring(L, buf, *len);
    lua_replace(L, idx);
    lua_pop(L, 1);
    return lua_tolstring(L, idx, len);
}

/* Push nil and the error of url.c's code err: kind "invalid_url", as fetch gives for
 * a URL it cannot parse ("memory" when that ran out). */
void lc_push_url_error(lua_State *L, int err);

/* The options table of url.normalize at idx (none: defaults) into o, raising as
 * url.normalize does on a bad one; strip points into pats (LC_MAX_STRIP + 1
 * entries), whose strings stay alive in the table. */
#define LC_MAX_STRIP 64
void lc_check_norm_opts(lua_State *L, int idx, url_norm_opts_t *o, const char **pats);

#endif
