/* lua_core.c: luaopen_luacrawl. Creates the engine state (loop, scheduler, and on
 * first use the resolver and HTTP client), registers the C functions of every
 * binding file into a `core` table, and runs the embedded lua/luacrawl/init.lua
 * with it, which builds the public module. */
#include "buf.h"
#include "lua_embed.h"
#include "lua_state.h"
#include "lua_check.h"

#include <ares.h>
#include <dlfcn.h>
#include <luajit.h>
#include <stdlib.h>
#include <string.h>

#define STATE_METATABLE "luacrawl.state"

void lc_setfuncs(lua_State *L, const luaL_Reg *reg)
{
    for (; reg->name; reg++) {
        lua_pushvalue(L, -1);
        lua_pushcclosure(L, reg->func, 1);
        lua_setfield(L, -3, reg->name);
    }
}

dns_t *lc_dns(lua_State *L, lc_state_t *st)
{
    if (!st->dns) {
        char err[256];
        const char *servers = st->dns_servers;
        if (!servers || !*servers) servers = getenv("LUACRAWL_DNS_SERVERS");
        st->dns = dns_new(st->loop, servers, err, sizeof(err));
        if (!st->dns) luaL_error(L, "DNS: %s", err);
    }
    return st->dns;
}

http_t *lc_http(lua_State *L, lc_state_t *st)
{
    if (!st->http) {
        char err[256];
        dns_t *dns = lc_dns(L, st);
        st->http = http_new(st->loop, dns, err, sizeof(err));
        if (!st->http) luaL_error(L, "HTTP: %s", err);
        http_set_budget(st->http, lc_limits_budget, st);
    }
    return st->http;
}

void lc_newmetatable(lua_State *L, const char *name)
{
    luaL_newmetatable(L, name);
    lua_pushlightuserdata(L, (void *)name); /* its tag, for lc_toudata_either */
    lua_rawseti(L, -2, 1);
    lua_pushlightuserdata(L, (void *)name);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

void lc_getmetatable(lua_State *L, const char *name)
{
    lua_pushlightuserdata(L, (void *)name);
    lua_rawget(L, LUA_REGISTRYINDEX);
}

void *lc_toudata_either(lua_State *L, int idx, const char *name, const char *spent)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx)) return NULL;
    lua_rawgeti(L, -1, 1); /* the tag lc_newmetatable gave it: no lookup in the registry */
    const void *tag = lua_type(L, -1) == LUA_TLIGHTUSERDATA ? lua_touserdata(L, -1) : NULL;
    lua_pop(L, 2);
    return tag && (tag == name || tag == spent) ? p : NULL;
}

void lc_push_error(lua_State *L, lc_state_t *st, const char *kind, const char *message)
{
    lua_createtable(L, 0, 2);
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, message);
    lua_setfield(L, -2, "message");
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->error_mt_ref);
    lua_setmetatable(L, -2);
}

static int state_gc(lua_State *L)
{
    lc_state_t *st = luaL_checkudata(L, 1, STATE_METATABLE);
    lc_signals_free(st);
    lc_limits_free(L, st);
    lc_redis_free(st); /* before the loop its sockets are on */
    lc_dash_free(st);
    http_free(st->http);
    dns_free(st->dns);
    sched_free(st->sched);
    loop_free(st->loop);
    free(st->dns_servers);
    if (st->json) buf_free(st->json);
    free(st->json);
    free(st->names);
    memset(st, 0, sizeof(*st));
    return 0;
}

/* core.init(error_mt, cancel_error, new_response, headers_mt): values the C side
 * hands out, defined in init.lua (new_response builds a response from its fields). */
static int core_init(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    luaL_checktype(L, 4, LUA_TTABLE);
    lua_pushvalue(L, 1);
    st->error_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    sched_set_cancel_error(st->sched, L, 2);
    lua_pushvalue(L, 3);
    st->new_response_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 4);
    st->headers_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* core.configure{dns_servers=, dns_timeout=, dns_tries=, dns_retries=, dns_concurrency=,
 * dns_ttl_min=, dns_ttl_max=, dns_negative_ttl=}: before the first lookup for servers;
 * the rest at any time. A setting not given keeps its value (dns_get_config): giving
 * dns_ttl_min alone leaves dns_ttl_max as it was. */
static int core_configure(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "dns_servers");
    if (!lua_isnil(L, -1)) {
        const char *servers = luaL_checkstring(L, -1);
        if (st->dns) {
            if (!st->dns_servers || strcmp(st->dns_servers, servers) != 0)
                return luaL_error(L, "configure: dns_servers must be set before the first lookup");
        } else {
            free(st->dns_servers);
            st->dns_servers = strdup(servers);
            lc_dns(L, st); /* report a bad server list now */
        }
    }
    lua_pop(L, 1);
    dns_config_t now;
    lua_getfield(L, 1, "dns_timeout");
    lua_getfield(L, 1, "dns_tries");
    if (!lua_isnil(L, -1) || !lua_isnil(L, -2)) {
        dns_get_config(lc_dns(L, st), &now);
        /* c-ares takes the timeout in milliseconds, as an int. */
        double timeout =
            lc_opt_number(L, -2, "configure: dns_timeout", now.timeout_ms / 1000.0, 0.001, 86400);
        int tries = (int)lc_opt_integer(L, -1, "configure: dns_tries", now.tries, 1, 1000);
        dns_set_timeout(lc_dns(L, st), (int)(timeout * 1000), tries);
    }
    lua_pop(L, 2);
    lua_getfield(L, 1, "dns_retries");
    if (!lua_isnil(L, -1))
        dns_set_retries(lc_dns(L, st),
                        (int)lc_opt_integer(L, -1, "configure: dns_retries", 0, 0, 100));
    lua_pop(L, 1);
    lua_getfield(L, 1, "dns_concurrency");
    if (!lua_isnil(L, -1))
        dns_set_pacing(lc_dns(L, st),
                       (int)lc_opt_integer(L, -1, "configure: dns_concurrency", 1, 1, 65536));
    lua_pop(L, 1);
    lua_getfield(L, 1, "dns_ttl_min");
    lua_getfield(L, 1, "dns_ttl_max");
    lua_getfield(L, 1, "dns_negative_ttl");
    if (!lua_isnil(L, -1) || !lua_isnil(L, -2) || !lua_isnil(L, -3)) {
        dns_get_config(lc_dns(L, st), &now);
        dns_set_ttl(
            lc_dns(L, st),
            lc_opt_number(L, -3, "configure: dns_ttl_min", now.ttl_min, 0, LC_INT_MAX),
            lc_opt_number(L, -2, "configure: dns_ttl_max", now.ttl_max, 0, LC_INT_MAX),
            lc_opt_number(L, -1, "configure: dns_negative_ttl", now.ttl_negative, 0, LC_INT_MAX));
    }
    lua_pop(L, 3);
    return 0;
}

void lc_set_number(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

/* core.stats(): counters of the scheduler, resolver and HTTP client. */
static int core_stats(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    sched_stats_t ts;
    sched_get_stats(st->sched, &ts);
    lua_createtable(L, 0, 16);
    lc_set_number(L, "tasks_spawned", (double)ts.spawned);
    lc_set_number(L, "tasks_finished", (double)ts.finished);
    lc_set_number(L, "tasks_failed", (double)ts.failed);
    lc_set_number(L, "tasks_cancelled", (double)ts.cancelled);
    lc_set_number(L, "tasks_live", (double)ts.live);
    lc_set_number(L, "yields_dropped", (double)ts.yields_dropped);
    if (st->dns) {
        dns_stats_t ds;
        dns_get_stats(st->dns, &ds);
        lc_set_number(L, "dns_queries", (double)ds.queries);
        lc_set_number(L, "dns_hits", (double)ds.hits);
        lc_set_number(L, "dns_coalesced", (double)ds.coalesced);
        lc_set_number(L, "dns_entries", (double)ds.entries);
        lc_set_number(L, "dns_retries", (double)ds.retries);
        lc_set_number(L, "dns_waiting", (double)ds.waiting);
        lc_set_number(L, "dns_peak", (double)ds.peak);
    }
    if (st->http) {
        http_stats_t hs;
        http_get_stats(st->http, &hs);
        lc_set_number(L, "http_started", (double)hs.started);
        lc_set_number(L, "http_completed", (double)hs.completed);
        lc_set_number(L, "http_failed", (double)hs.failed);
        lc_set_number(L, "http_active", (double)hs.active);
        lc_set_number(L, "http_bytes", (double)hs.bytes);
    }
    return 1;
}

static int core_versions(lua_State *L)
{
    lua_createtable(L, 0, 4);
    lua_pushstring(L, LUACRAWL_VERSION);
    lua_setfield(L, -2, "luacrawl");
    lua_pushstring(L, LUAJIT_VERSION);
    lua_setfield(L, -2, "luajit");
    lua_pushstring(L, http_curl_version());
    lua_setfield(L, -2, "libcurl");
    lua_pushstring(L, ares_version(NULL));
    lua_setfield(L, -2, "c-ares");
    return 1;
}

static const luaL_Reg core_funcs[] = {
    {"init", core_init},   {"configure", core_configure},
    {"stats", core_stats}, {"versions", core_versions},
    {NULL, NULL},
};

/* Loaded as a Lua C module, luacrawl.so must stay mapped until the state is gone:
 * lua_close may unload C modules before it frees the last objects, which go
 * through our allocator wrapper (lua_limits.c). */
static void pin_module(void)
{
    Dl_info info;
    if (dladdr((void *)pin_module, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

int luaopen_luacrawl(lua_State *L)
{
    lc_need_luajit(L); /* under another Lua, before any other call (lua_api.h) */
    pin_module();
    /* The collector keeps the host's pause (LuaJIT's default: 200%). Bodies live
     * outside the Lua heap (lua_body.c), so a crawl's heap holds small objects
     * only, a few MB; a shorter pause, once set here for bodies, made the collector
     * run nearly twice as many cycles and cost the crawls measurable CPU time for
     * little less peak RSS (scripts/bench-ab; docs/benchmarks.md). */
    lua_createtable(L, 0, 32); /* core */
    lc_state_t *st = lua_newuserdata(L, sizeof(*st));
    memset(st, 0, sizeof(*st));
    luaL_newmetatable(L, STATE_METATABLE);
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    st->L = L;
    st->error_mt_ref = st->new_response_ref = st->headers_mt_ref = LUA_NOREF;
    st->loop = loop_new();
    if (!st->loop) return luaL_error(L, "luacrawl: cannot create the event loop");
    st->sched = sched_new(L, st->loop);
    if (!st->sched) return luaL_error(L, "luacrawl: out of memory");

    /* The state lives as long as the core table, and the registry holds both. */
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "_state");
    lc_setfuncs(L, core_funcs);
    lua_pushlightuserdata(L, task_cancelled_marker());
    lua_setfield(L, -3, "CANCELLED");
    lc_register_task(L);
    lc_register_http(L);
    lc_register_html(L);
    lc_register_url(L);
    lc_register_digest(L);
    lc_register_sitemap(L);
    lc_register_regex(L);
    lc_register_readline(L);
    lc_register_fs(L);
    lc_register_signal(L);
    lc_register_limits(L);
    lc_register_body(L);
    lc_register_queue(L);
    lc_register_crawl(L);
    lc_register_json(L);
    lc_register_warc(L);
    lc_register_store(L);
    lc_register_redis(L);
    lc_register_dash(L);
    lc_register_check(L);
    lua_pop(L, 1); /* state */
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "luacrawl.core");
    /* Lua modules of the library reach the core with require "luacrawl.core". */
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "loaded");
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "luacrawl.core");
    lua_pop(L, 2);

    lua_embed_preload(L);
    if (lua_embed_load(L, "luacrawl") != 0) return lua_error(L);
    lua_insert(L, -2);
    lua_call(L, 1, 1); /* init.lua(core) -> module */
    return 1;
}
