/* lua_body.h: response bodies as Lua values (lua_body.c), for the bindings that
 * make them (lua_http.c) or read their bytes (html, digest, warc, json...). */
#ifndef LUACRAWL_LUA_BODY_H
#define LUACRAWL_LUA_BODY_H

#include "lua_state.h"

/* Push a body userdata that takes res's body (in an http completion), counted in
 * st's body_bytes. lc_tobytes gives the bytes of a string or a body at idx, NULL for
 * anything else; lc_checkbytes raises instead. */
void lc_push_body(lua_State *L, lc_state_t *st, const http_res_t *res);
const char *lc_tobytes(lua_State *L, int idx, size_t *len);
const char *lc_checkbytes(lua_State *L, int idx, size_t *len);

/* The headers of the response whose body is at idx, as the server sent them, *n of
 * them (they live as long as the body, after res:release() too); NULL for anything
 * else. lua_http.c makes res.headers of them. */
const http_header_t *lc_body_headers(lua_State *L, int idx, int *n);

/* The exchanges a fetch with archive = true kept, held by the body at idx; NULL for
 * anything else (lua_warc.c writes them). */
struct http_capture *lc_tocapture(lua_State *L, int idx);

/* Lend the bytes of the body at idx, and of its capture (whose payloads are the
 * capture's own or, for the last hop, the body's), to another thread: release(arg)
 * gives them back, once. The body goes on using them; whichever lets go last frees
 * them. 0, or -1 when idx is no body with bytes, or memory ran out. */
int lc_lend_body(lua_State *L, int idx, void (**release)(void *), void **arg);

#endif
