/* lua_http.h: what other bindings take of lua_http.c: the address policy made from a
 * call's public_only and deny_networks (lc.render checks its page's requests with it). */
#ifndef LUACRAWL_LUA_HTTP_H
#define LUACRAWL_LUA_HTTP_H

#include "http_addr_policy.h"
#include "lua_aux.h"

/* An address policy from public_only (a truthy value at index pub; 0: none) and
 * deny_networks (nil, false or a list of CIDRs at index deny; 0: none); NULL when
 * neither asks for anything, or when out of memory (*oom set). Raises, naming what,
 * for a value that is not a network. */
addr_policy_t *lc_policy_from(lua_State *L, int pub, int deny, const char *what, int *oom);

#endif
