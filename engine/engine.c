/* engine.c: the embedding API of luacrawl.h. Everything it does goes through the
 * Lua CLI module (lua/luacrawl/cli.lua), so the binary and embedders behave alike. */
#include "luacrawl.h"
#include "proc_limits.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>

int luaopen_luacrawl(lua_State *L);

struct lc_engine {
    lua_State *L;
};

static int open_all(lua_State *L)
{
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "loaded");
    lua_pushcfunction(L, luaopen_luacrawl);
    lua_call(L, 0, 1);
    lua_setfield(L, -2, "luacrawl");
    lua_pop(L, 2);
    /* This state is ours: a __gc metamethod that raises is reported and ignored
     * (luacrawl/finalizers.lua says why the LuaJIT we build on needs that). */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl.finalizers");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "install");
    lua_call(L, 0, 0);
    lua_pop(L, 1);
    return 0;
}

lc_engine *lc_engine_new(void)
{
    lc_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->L = luaL_newstate();
    if (!e->L) {
        free(e);
        return NULL;
    }
    if (lua_cpcall(e->L, open_all, NULL) != 0) {
        fprintf(stderr, "luacrawl: %s\n", lua_tostring(e->L, -1));
        lua_close(e->L);
        free(e);
        return NULL;
    }
    return e;
}

void lc_engine_free(lc_engine *e)
{
    if (!e) return;
    lua_close(e->L);
    free(e);
}

struct lua_State *lc_engine_lua(lc_engine *e)
{
    return e->L;
}

const char *lc_engine_version(void)
{
    return LUACRAWL_VERSION;
}

long lc_raise_fd_limit(void)
{
    return proc_raise_nofile();
}

static int traceback(lua_State *L)
{
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
    return 1;
}

/* require("luacrawl.cli")[fn](args...) -> exit status */
static int call_cli(lc_engine *e, const char *fn, const char *first, int argc, char **argv)
{
    lua_State *L = e->L;
    lua_pushcfunction(L, traceback);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl.cli");
    if (lua_pcall(L, 1, 1, -3) != 0) goto fail;
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    if (argc < 0) argc = 0;
    lua_createtable(L, argc + 1, 0);
    int idx = 1;
    if (first) {
        lua_pushstring(L, first);
        lua_rawseti(L, -2, idx++);
    }
    for (int i = 0; i < argc && argv[i]; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, idx++);
    }
    if (lua_pcall(L, 1, 1, -3) != 0) goto fail;
    int status = (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
    return status;
fail:
    fprintf(stderr, "luacrawl: %s\n", lua_tostring(L, -1));
    lua_pop(L, 2);
    return 1;
}

int lc_engine_run_file(lc_engine *e, const char *path, int argc, char **argv)
{
    if (!path) {
        fprintf(stderr, "luacrawl: lc_engine_run_file: no script path\n");
        return 1;
    }
    return call_cli(e, "run_file", path, argv ? argc : 0, argv);
}

int lc_engine_main(lc_engine *e, int argc, char **argv)
{
    if (argc < 1 || !argv) return call_cli(e, "main", NULL, 0, NULL);
    return call_cli(e, "main", NULL, argc - 1, argv + 1);
}
