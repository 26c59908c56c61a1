/* lua_core.c: luaopen_luacrawl, the root of the bindings. Creates the engine state
 * (loop, scheduler; lua_state.c makes the resolver and HTTP client on first use),
 * walks the table of binding files once, each registering its C functions into a
 * `core` table, and runs the embedded lua/luacrawl/init.lua with it, which builds
 * the public module. No binding file calls into this one. */
#include "buf.h"
#include "lua_aux.h"
#include "lua_browser.h"
#include "lua_dash.h"
#include "lua_check.h"
#include "lua_embed.h"
#include "lua_libs.h"
#include "lua_limits.h"
#include "lua_redis.h"
#include "lua_signal.h"
#include "lua_opts.h"

#include <ares.h>
#include <dlfcn.h>
#include <float.h>
#include <luajit.h>
#include <stdlib.h>
#include <string.h>

static const char STATE_METATABLE[] = "luacrawl.state";

static int l_state_gc(lua_State *L)
{
    lc_state_t *st = luaL_checkudata(L, 1, STATE_METATABLE);
    lc_signals_free(st);
    lc_limits_free(L, st);
    lc_redis_free(st); /* before the loop its sockets are on */
    lc_browsers_free(st);
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
static int l_init(lua_State *L)
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

/* The names lc.configure takes, in the order of configure_list: the DNS settings
 * read here, the limits (core.set_limits) and the address policy
 * (core.address_policy), which init.lua's lc.configure sets from the same table. */
enum {
    C_SERVERS,
    C_TIMEOUT,
    C_TRIES,
    C_RETRIES,
    C_CONCURRENCY,
    C_TTL_MIN,
    C_TTL_MAX,
    C_NEGATIVE_TTL,
};

static const lc_opt_t configure_list[] = {
    LC_OPT("dns_servers", LC_OPT_STRING),
    LC_OPT_RANGE("dns_timeout", LC_OPT_NUMBER, 0.001, 86400),
    LC_OPT_RANGE("dns_tries", LC_OPT_INTEGER, 1, 1000),
    LC_OPT_RANGE("dns_retries", LC_OPT_INTEGER, 0, 100),
    LC_OPT_RANGE("dns_concurrency", LC_OPT_INTEGER, 1, 65536),
    LC_OPT_RANGE("dns_ttl_min", LC_OPT_NUMBER, 0, LC_INT_MAX),
    LC_OPT_RANGE("dns_ttl_max", LC_OPT_NUMBER, 0, LC_INT_MAX),
    LC_OPT_RANGE("dns_negative_ttl", LC_OPT_NUMBER, 0, LC_INT_MAX),
    LC_OPT_RANGE("max_memory", LC_OPT_INTEGER, 0, LC_INT_MAX),
    LC_OPT_RANGE("max_task_cpu", LC_OPT_NUMBER, 0, DBL_MAX),
    LC_OPT("public_only", LC_OPT_ANY),
    LC_OPT("deny_networks", LC_OPT_ANY),
};

static const lc_opts_t configure_opts = {"configure", "configure: %s", 0,
                                         sizeof(configure_list) / sizeof(configure_list[0]),
                                         configure_list};

/* The checked value at idx, or def when nil. */
static double number_or(lua_State *L, int idx, double def)
{
    return lua_isnil(L, idx) ? def : lua_tonumber(L, idx);
}

/* dns_servers: before the first lookup only. */
static void configure_servers(lua_State *L, lc_state_t *st, int idx)
{
    const char *servers = lua_tostring(L, idx);
    if (st->dns) {
        if (!st->dns_servers || strcmp(st->dns_servers, servers) != 0)
            luaL_error(L, "configure: dns_servers must be set before the first lookup");
        return;
    }
    free(st->dns_servers);
    st->dns_servers = strdup(servers);
    lc_dns(L, st); /* report a bad server list now */
}

/* core.configure{dns_servers=, dns_timeout=, dns_tries=, dns_retries=, dns_concurrency=,
 * dns_ttl_min=, dns_ttl_max=, dns_negative_ttl=, and the names init.lua's lc.configure
 * reads}: before the first lookup for servers; the rest at any time. Every value is
 * checked (and an unknown name refused) before any is set. A setting not given keeps
 * its value (dns_get_config): giving dns_ttl_min alone leaves dns_ttl_max as it was. */
static int l_configure(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    int o = lc_push_opts(L, 1, &configure_opts);
    if (!lua_isnil(L, o + C_SERVERS)) configure_servers(L, st, o + C_SERVERS);
    dns_config_t now;
    if (!lua_isnil(L, o + C_TIMEOUT) || !lua_isnil(L, o + C_TRIES)) {
        dns_get_config(lc_dns(L, st), &now);
        /* c-ares takes the timeout in milliseconds, as an int. */
        double timeout = number_or(L, o + C_TIMEOUT, now.timeout_ms / 1000.0);
        int tries = (int)number_or(L, o + C_TRIES, now.tries);
        dns_set_timeout(lc_dns(L, st), (int)(timeout * 1000), tries);
    }
    if (!lua_isnil(L, o + C_RETRIES))
        dns_set_retries(lc_dns(L, st), (int)lua_tonumber(L, o + C_RETRIES));
    if (!lua_isnil(L, o + C_CONCURRENCY))
        dns_set_pacing(lc_dns(L, st), (int)lua_tonumber(L, o + C_CONCURRENCY));
    if (!lua_isnil(L, o + C_TTL_MIN) || !lua_isnil(L, o + C_TTL_MAX) ||
        !lua_isnil(L, o + C_NEGATIVE_TTL)) {
        dns_get_config(lc_dns(L, st), &now);
        dns_set_ttl(lc_dns(L, st), number_or(L, o + C_TTL_MIN, now.ttl_min),
                    number_or(L, o + C_TTL_MAX, now.ttl_max),
                    number_or(L, o + C_NEGATIVE_TTL, now.ttl_negative));
    }
    lua_settop(L, 1);
    return 0;
}

/* core.stats(): counters of the scheduler, resolver and HTTP client. */
static int l_stats(lua_State *L)
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

static int l_versions(lua_State *L)
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
    {"init", l_init}, {"configure", l_configure}, {"stats", l_stats}, {"versions", l_versions},
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

/* The binding files, in the order they are opened: lc_register_links adds to the
 * core.html table lc_register_html makes. */
static const struct {
    const char *name;
    void (*open)(lua_State *L);
} bindings[] = {
    {"task", lc_register_task},
    {"http", lc_register_http},
    {"cookies", lc_register_cookies},
    {"html", lc_register_html},
    {"links", lc_register_links},
    {"url", lc_register_url},
    {"seen", lc_register_seen},
    {"digest", lc_register_digest},
    {"sitemap", lc_register_sitemap},
    {"regex", lc_register_regex},
    {"readline", lc_register_readline},
    {"signal", lc_register_signal},
    {"limits", lc_register_limits},
    {"body", lc_register_body},
    {"queue", lc_register_queue},
    {"crawl", lc_register_crawl},
    {"json", lc_register_json},
    {"warc", lc_register_warc},
    {"store", lc_register_store},
    {"redis", lc_register_redis},
    {"check", lc_register_check},
    {"opts", lc_register_opts},
    {"fs", lc_register_fs},
    {"browser", lc_register_browser},
    {"dash", lc_register_dash},
};

/* With [core, state] on top of L. An open function that leaves the stack otherwise
 * would shift every one after it onto the wrong tables: caught here, by name. */
static void open_bindings(lua_State *L)
{
    int top = lua_gettop(L);
    for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
        bindings[i].open(L);
        if (lua_gettop(L) != top)
            luaL_error(L, "luacrawl: binding %s left the stack unbalanced", bindings[i].name);
    }
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
    static const luaL_Reg state_meta[] = {{"__gc", l_state_gc}, {NULL, NULL}};
    lc_class(L, STATE_METATABLE, state_meta, NULL);
    lc_getmetatable(L, STATE_METATABLE);
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
    open_bindings(L);
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
