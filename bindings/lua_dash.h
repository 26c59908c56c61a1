/* lua_dash.h: what the root takes of lua_dash.c: the state's dashboard servers closed
 * at its end, before the loop they are on. */
#ifndef LUACRAWL_LUA_DASH_H
#define LUACRAWL_LUA_DASH_H

#include "lua_state.h"

void lc_dash_free(lc_state_t *st);

#endif
