/* lua_readline.c: line editing for the interactive shell, through libedit's
 * readline-compatible API. core.readline(prompt) -> line | nil at end of input,
 * core.add_history(line), core.read_history(path), core.write_history(path) (the
 * history kept between sessions: true, or false when the file cannot be read or
 * written, which only costs the history), core.isatty(fd) -> boolean.
 *
 * readline blocks the whole process, loop included: no transfer, timer or task moves
 * while a prompt waits. That is acceptable for the interactive shell only, which runs its
 * fetches between prompts (lc.run per line), never during one; nothing else may call it.
 * While it waits, signals the engine watches (blocked for its signalfd) stay queued
 * until the line is read. libedit keeps one editor and one history per process, set up on
 * first use; with `luacrawl:` lines, ~/.editrc can configure it for this program. */
#include "lua_check.h"
#include "lua_aux.h"
#include "lua_libs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <editline/readline.h>

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* The most lines the history keeps, in memory and in its file. */
#define HISTORY_LINES 1000

static void setup_editor(void)
{
    rl_readline_name = "luacrawl";
    using_history();
    stifle_history(HISTORY_LINES);
}

static void setup(void)
{
    pthread_once(&setup_once, setup_editor);
}

static int l_readline(lua_State *L)
{
    const char *prompt = luaL_optstring(L, 1, "");
    setup();
    fflush(stdout); /* what the script wrote before the prompt shows before it */
    char *line = readline(prompt);
    if (!line) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushstring(L, line);
    free(line);
    return 1;
}

static int l_add_history(lua_State *L)
{
    const char *line = luaL_checkstring(L, 1);
    setup();
    if (*line) add_history(line);
    return 0;
}

static int l_read_history(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    setup();
    lua_pushboolean(L, read_history(path) == 0);
    return 1;
}

static int l_write_history(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    setup();
    lua_pushboolean(L, write_history(path) == 0);
    return 1;
}

static int l_isatty(lua_State *L)
{
    long long fd = lc_check_integer(L, 1, "isatty: fd", -LC_INT_MAX, LC_INT_MAX);
    lua_pushboolean(L, fd >= 0 && fd <= 0x7fffffff && isatty((int)fd));
    return 1;
}

static const luaL_Reg funcs[] = {
    {"readline", l_readline},
    {"add_history", l_add_history},
    {"read_history", l_read_history},
    {"write_history", l_write_history},
    {"isatty", l_isatty},
    {NULL, NULL},
};

void lc_register_readline(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
