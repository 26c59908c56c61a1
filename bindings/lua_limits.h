/* lua_limits.h: max_memory as the other bindings count towards it (lua_limits.c). */
#ifndef LUACRAWL_LUA_LIMITS_H
#define LUACRAWL_LUA_LIMITS_H

#include "lua_state.h"

/* Count memory held for Lua outside its heap (bodies) towards max_memory. */
void lc_limits_account(lua_State *L, long long delta);

/* 1 when bytes more may be held under max_memory (*left: what may; SIZE_MAX: no
 * limit), for C allocations made for a script that can be refused beforehand. */
int lc_limits_allow(lua_State *L, size_t bytes, size_t *left);

/* http_budget_fn over st (an lc_state_t): max_memory and what is counted towards it,
 * so that bodies being received are bounded by it too. */
void lc_limits_budget(void *st, http_budget_t *budget);

/* Called as the state closes, before its scheduler goes. */
void lc_limits_free(lua_State *L, lc_state_t *st);

#endif
