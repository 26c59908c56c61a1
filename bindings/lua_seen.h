/* lua_seen.h: the in-memory seen set (lua_seen.c), for the bindings that fill one
 * (link lists, the crawl's admission, the state file's seen set). */
#ifndef LUACRAWL_LUA_SEEN_H
#define LUACRAWL_LUA_SEEN_H

#include "lua_api.h"

#include <stddef.h>
#include <stdint.h>

/* The seen set at idx, NULL when it is something else. */
struct seen;
struct seen *lc_toseen(lua_State *L, int idx);

/* Add the fingerprint fp to the seen set whose userdata is ud (lua_touserdata of
 * a set lc_toseen accepted), as set:add does: what the set holds is counted
 * towards max_memory, and a growth that would pass it is refused. 1 when fp was
 * new, 0 when it was there; -1 with a message in err when it could not be added
 * (nothing raised: the caller frees what it must first). */
int lc_seen_add(lua_State *L, void *ud, uint64_t fp, char *err, size_t errlen);

#endif
