/* lua_browser.h: what the root takes of lua_browser.c: the state's browsers freed at
 * its end, before the loop their pipes are watched on. */
#ifndef LUACRAWL_LUA_BROWSER_H
#define LUACRAWL_LUA_BROWSER_H

#include "lua_state.h"

/* Kill and free the state's browsers (their process groups killed and reaped, their
 * profile folders removed). */
void lc_browsers_free(lc_state_t *st);

#endif
