/* fuzz_lua.h: what the fuzz targets of Lua modules (robots, css) share. One LuaJIT
 * state for the whole run with luacrawl opened as the binary opens it; a driver
 * chunk (Lua source in the target) returns the function each input is given to; any
 * Lua error out of it is a finding.
 *
 * Coverage: LuaJIT is not instrumented, so libFuzzer would see none of the Lua code
 * it is exercising. A line hook feeds it instead: each (previous line, line) pair
 * bumps one of libFuzzer's extra counters, a rough edge coverage of the Lua side.
 * Hooks never run in compiled traces, so the JIT is off in these targets. */
#ifndef LUACRAWL_FUZZ_LUA_H
#define LUACRAWL_FUZZ_LUA_H

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int luaopen_luacrawl(lua_State *L);

/* The interpreter sits outside ASan's view, and LeakSanitizer does not scan
 * LuaJIT's own heap: malloc'd objects that only Lua holds (compiled XPath, parsed
 * documents waiting for a collection) would be reported as leaks. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

#define FUZZ_LUA_COUNTERS (1 << 16)
#define FUZZ_LUA_GC_EVERY 1000

#define FUZZ_EXTRA_COUNTERS __attribute__((used, section("__libfuzzer_extra_counters")))

static uint8_t fuzz_lua_counters[FUZZ_LUA_COUNTERS] FUZZ_EXTRA_COUNTERS;

static lua_State *fuzz_L;
static int fuzz_fn_ref = LUA_NOREF;
static unsigned fuzz_runs;
static int fuzz_prev_line;

static void fuzz_lua_line_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    uint32_t h = ((uint32_t)fuzz_prev_line * 2654435761u) ^ (uint32_t)ar->currentline;
    uint8_t *c = &fuzz_lua_counters[(h ^ (h >> 16)) & (FUZZ_LUA_COUNTERS - 1)];
    if (*c < 255) (*c)++;
    fuzz_prev_line = ar->currentline;
}

static int fuzz_lua_traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = lua_pushfstring(L, "(error object is a %s)", luaL_typename(L, 1));
    lua_getglobal(L, "debug");
    lua_getfield(L, -1, "traceback");
    lua_pushstring(L, msg);
    lua_pushinteger(L, 2);
    lua_call(L, 2, 1);
    return 1;
}

/* Create the state and load the driver: a chunk returning function(data). */
static void fuzz_lua_init(const char *driver, const char *name)
{
    lua_State *L = luaL_newstate();
    if (!L) abort();
    luaL_openlibs(L);
    luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
    /* require "luacrawl" as luacrawl.so would answer it; opening it puts its
     * embedded Lua modules in package.preload. */
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, luaopen_luacrawl);
    lua_setfield(L, -2, "luacrawl");
    lua_pop(L, 2);
    lua_pushcfunction(L, fuzz_lua_traceback);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl");
    if (lua_pcall(L, 1, 0, -3) != 0 || luaL_loadbuffer(L, driver, strlen(driver), name) != 0 ||
        lua_pcall(L, 0, 1, -2) != 0) {
        fprintf(stderr, "fuzz: cannot load the driver: %s\n", lua_tostring(L, -1));
        abort();
    }
    fuzz_fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    lua_sethook(L, fuzz_lua_line_hook, LUA_MASKLINE, 0);
    fuzz_L = L;
}

/* Give one input to the driver's function; a Lua error aborts (a finding). */
static void fuzz_lua_run(const uint8_t *data, size_t size)
{
    lua_State *L = fuzz_L;
    int top = lua_gettop(L);
    fuzz_prev_line = 0;
    lua_pushcfunction(L, fuzz_lua_traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, fuzz_fn_ref);
    lua_pushlstring(L, (const char *)data, size);
    if (lua_pcall(L, 1, 0, top + 1) != 0) {
        fprintf(stderr, "fuzz: Lua error: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_settop(L, top);
    if (++fuzz_runs % FUZZ_LUA_GC_EVERY == 0) lua_gc(L, LUA_GCCOLLECT, 0);
}

/* libFuzzer's entry points for a target whose driver chunk is DRIVER, named NAME in
 * tracebacks ("=fuzz_css"). */
#define FUZZ_LUA_TARGET(DRIVER, NAME)                                                              \
    int LLVMFuzzerInitialize(int *argc, char ***argv);                                             \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                              \
    {                                                                                              \
        (void)argc;                                                                                \
        (void)argv;                                                                                \
        fuzz_lua_init(DRIVER, NAME);                                                               \
        return 0;                                                                                  \
    }                                                                                              \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                                   \
    {                                                                                              \
        fuzz_lua_run(data, size);                                                                  \
        return 0;                                                                                  \
    }

#endif
