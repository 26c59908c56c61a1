/* lua_state.h: the engine state shared by the Lua bindings (lua_*.c only). One per
 * lua_State that opened the module; every core function gets it as upvalue 1. */
#ifndef LUACRAWL_LUA_STATE_H
#define LUACRAWL_LUA_STATE_H

#include "dns.h"
#include "http.h"
#include "loop.h"
#include "task.h"

#include "lua_api.h"

/* These never return: they unwind to the nearest pcall. lua.h and lauxlib.h do not
 * say so, and without it the compiler and clang-tidy take the code after them as
 * reachable: a helper that raises on failure would seem to return NULL or garbage. */
LUA_API int lua_error(lua_State *L) __attribute__((noreturn));
LUALIB_API int luaL_error(lua_State *L, const char *fmt, ...) __attribute__((noreturn));
LUALIB_API int luaL_argerror(lua_State *L, int numarg, const char *extramsg)
    __attribute__((noreturn));
LUALIB_API int luaL_typerror(lua_State *L, int narg, const char *tname) __attribute__((noreturn));

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
    struct buf *json;                         /* lua_json.c's buffer (buf.h), made on first use */
    struct lc_names *names;                   /* lua_http.c's header names, made on first use */
    struct lc_redis *redis;                   /* lua_redis.c's connections, made on first use */
    struct lc_dash *dashes;                   /* lua_dash.c's servers still open */
} lc_state_t;

#define lc_state(L) ((lc_state_t *)lua_touserdata((L), lua_upvalueindex(1)))

/* The DNS resolver and HTTP client, created on first use; raise on failure. */
dns_t *lc_dns(lua_State *L, lc_state_t *st);
http_t *lc_http(lua_State *L, lc_state_t *st);

/* Push an error object {kind=, message=} with the module's error metatable. */
void lc_push_error(lua_State *L, lc_state_t *st, const char *kind, const char *message);

/* With [core table, state userdata] on top of L, set each function of reg as
 * core[name], a closure over the state. Leaves the stack as it was. */
void lc_setfuncs(lua_State *L, const luaL_Reg *reg);

/* t[k] = v for the table t on top of L. */
void lc_set_number(lua_State *L, const char *k, double v);

/* The userdata at idx if its metatable is `name`'s or `spent`'s (the same type once
 * its memory was given back early: a metatable without __gc, so that the collector
 * frees it without a finalizer call; NULL for a type without one), else NULL. */
void *lc_toudata_either(lua_State *L, int idx, const char *name, const char *spent);

/* The metatables of our userdata types are kept in the registry under their name
 * (as luaL_newmetatable does, for luaL_checkudata) and under the address of that
 * name, a light userdata: the checks made for every page look them up by pointer,
 * a fraction of the cost of a lookup by string. name is the type's char array (of
 * static storage), the same one at every call. lc_newmetatable pushes the new
 * table, lc_getmetatable the table. The table holds the name's address at [1] as
 * a light userdata: lc_toudata_either checks a userdata's type by that tag. */
void lc_newmetatable(lua_State *L, const char *name);
void lc_getmetatable(lua_State *L, const char *name);

/* Each binding file's registration, called the same way. */
void lc_register_task(lua_State *L);
void lc_register_http(lua_State *L);
void lc_register_html(lua_State *L);
void lc_register_url(lua_State *L);
void lc_register_digest(lua_State *L);
void lc_register_sitemap(lua_State *L);
void lc_register_regex(lua_State *L);
void lc_register_readline(lua_State *L);
void lc_register_fs(lua_State *L);
void lc_register_signal(lua_State *L);
void lc_register_limits(lua_State *L);
void lc_register_body(lua_State *L);
void lc_register_queue(lua_State *L);
void lc_register_crawl(lua_State *L);
void lc_register_json(lua_State *L);
void lc_register_warc(lua_State *L);
void lc_register_store(lua_State *L);
void lc_register_redis(lua_State *L);
void lc_register_dash(lua_State *L);
/* Close the state's dashboard servers (before the loop they are on). */
void lc_dash_free(lc_state_t *st);
/* Close the state's Redis connections: their pending calls are dropped untold. */
void lc_redis_free(lc_state_t *st);
void lc_signals_free(lc_state_t *st);
/* Deliver signo to lc.signals.wait as if it had been caught (lc_engine_stop); raises
 * when out of memory. */
void lc_signals_deliver(lua_State *L, lc_state_t *st, int signo);
void lc_limits_free(lua_State *L, lc_state_t *st);

/* Response bodies (lua_body.c): push a body userdata that takes res's body (in an
 * http completion), counted in st's body_bytes. lc_tobytes gives the bytes of a string or a
 * body at idx, NULL for anything else; lc_checkbytes raises instead. */
void lc_push_body(lua_State *L, lc_state_t *st, const http_res_t *res);
const char *lc_tobytes(lua_State *L, int idx, size_t *len);
const char *lc_checkbytes(lua_State *L, int idx, size_t *len);
/* The exchanges a fetch with archive = true kept, held by the body at idx; NULL for
 * anything else (lua_warc.c writes them). */
struct http_capture *lc_tocapture(lua_State *L, int idx);
/* Lend the bytes of the body at idx, and of its capture (whose payloads are the
 * capture's own or, for the last hop, the body's), to another thread: release(arg)
 * gives them back, once. The body goes on using them; whichever lets go last frees
 * them. 0, or -1 when idx is no body with bytes, or memory ran out. */
int lc_lend_body(lua_State *L, int idx, void (**release)(void *), void **arg);

/* The seen set at idx (lua_url.c), NULL when it is something else. */
struct seen;
struct seen *lc_toseen(lua_State *L, int idx);
/* Add the fingerprint fp to the seen set whose userdata is ud (lua_touserdata of
 * a set lc_toseen accepted), as set:add does: what the set holds is counted
 * towards max_memory, and a growth that would pass it is refused. 1 when fp was
 * new, 0 when it was there; -1 with a message in err when it could not be added
 * (nothing raised: the caller frees what it must first). */
int lc_seen_add(lua_State *L, void *ud, uint64_t fp, char *err, size_t errlen);

/* The links of a link set at idx (lua_html.c: core.html.scan_set), NULL when it is
 * something else. */
struct html_links;
struct html_links *lc_tolinkset(lua_State *L, int idx);

/* The options table of url.normalize at idx (none: defaults) into o, raising as
 * url.normalize does on a bad one (lua_url.c); strip points into pats (LC_MAX_STRIP + 1
 * entries), whose strings stay alive in the table. */
#define LC_MAX_STRIP 64
struct url_norm_opts;
void lc_check_norm_opts(lua_State *L, int idx, struct url_norm_opts *o, const char **pats);

/* Count memory held for Lua outside its heap (bodies) towards max_memory. */
void lc_limits_account(lua_State *L, long long delta);
/* 1 when bytes more may be held under max_memory (*left: what may; SIZE_MAX: no
 * limit), for C allocations made for a script that can be refused beforehand. */
int lc_limits_allow(lua_State *L, size_t bytes, size_t *left);
/* http_budget_fn over st (an lc_state_t): max_memory and what is counted towards it,
 * so that bodies being received are bounded by it too. */
void lc_limits_budget(void *st, http_budget_t *budget);

#endif
