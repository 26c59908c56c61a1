/* lua_cookies.h: cookie jars as Lua values (lua_cookies.c), for lua_http.c. */
#ifndef LUACRAWL_LUA_COOKIES_H
#define LUACRAWL_LUA_COOKIES_H

#include "http_cookies.h"

#include "lua_api.h"

/* The jar of the cookie jar value at idx; NULL when it is something else. */
cookies_t *lc_tocookies(lua_State *L, int idx);

#endif
