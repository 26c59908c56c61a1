/* lua_redis.h: the state's Redis connections (lua_redis.c), for the state's end. */
#ifndef LUACRAWL_LUA_REDIS_H
#define LUACRAWL_LUA_REDIS_H

#include "lua_state.h"

/* Close the state's Redis connections: their pending calls are dropped untold. */
void lc_redis_free(lc_state_t *st);

#endif
