/* lua_state.h: the engine state shared by the Lua bindings (lua_*.c only). One per
 * lua_State that opened the module (lua_core.c makes it); every core function gets
 * it as upvalue 1. */
#ifndef LUACRAWL_LUA_STATE_H
#define LUACRAWL_LUA_STATE_H

#include "dns.h"
#include "http.h"
#include "loop.h"
#include "task.h"

#include "lua_api.h"

typedef struct lc_state {
    lua_State *L; /* the state that runs the scheduler now */
    loop_t *loop;
    sched_t *sched;
    dns_t *dns;   /* created on first use, so configure() can set servers first */
    http_t *http; /* likewise */
    char *dns_servers;
    struct lc_signals *signals; /* lua_signal.c, created on first use */
    struct lc_limits *limits;   /* lua_limits.c, created on first use */
    size_t body_bytes;          /* of the response bodies alive in this state (lua_body.c) */
    int running;
    int hosted; /* driven by a host program (engine.c): signals are the host's, not ours */
    int error_mt_ref, new_response_ref, headers_mt_ref;
    int build_response_ref, build_answer_ref; /* lua_http.c's builders, as Lua functions */
    int kept_body_ref, oom_error_ref;         /* lua_http.c's (0: the error not made yet) */
    struct buf *json;                         /* lua_json.c's buffer (buf.h), made on first use */
    struct lc_names *names;                   /* lua_http.c's header names, made on first use */
    struct lc_redis *redis;                   /* lua_redis.c's connections, made on first use */
    struct lc_browsers *browsers;             /* lua_browser.c's browsers, made on first use */
    struct lc_dash *dashes;                   /* lua_dash.c's servers still open */
} lc_state_t;

#define lc_state(L) ((lc_state_t *)lua_touserdata((L), lua_upvalueindex(1)))

/* The DNS resolver and HTTP client (lua_state.c), created on first use; raise on
 * failure. */
dns_t *lc_dns(lua_State *L, lc_state_t *st);
http_t *lc_http(lua_State *L, lc_state_t *st);

#endif
