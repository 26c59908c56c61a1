/* lua_signal.h: the state's signal waits (lua_signal.c), for the state's end
 * (lua_core.c) and the embedding API's stop (engine.c). */
#ifndef LUACRAWL_LUA_SIGNAL_H
#define LUACRAWL_LUA_SIGNAL_H

#include "lua_state.h"

void lc_signals_free(lc_state_t *st);

/* Deliver signo to lc.signals.wait as if it had been caught (lc_engine_stop); raises
 * when out of memory. */
void lc_signals_deliver(lua_State *L, lc_state_t *st, int signo);

#endif
