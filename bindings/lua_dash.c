/* lua_dash.c: the dashboard's server (engine/dash.c) as a Lua object:
 * core.dash_open(listen, token) -> server | nil, err; server:publish(path, ctype, body),
 * :event(data), :commands() -> {"pause", ...}, :info() -> {host, port, token,
 * reads_need_token}, :close(). The state closes the servers still open before its loop. */
#include "dash.h"
#include "lua_aux.h"
#include "lua_dash.h"
#include "lua_libs.h"

#include <stdlib.h>

static const char DASH_MT[] = "luacrawl.dashboard";

struct lc_dash {
    dash_t *d;
    struct lc_dash *next, **prev; /* in st->dashes while open */
};

static void unlink_dash(struct lc_dash *s)
{
    if (s->prev) *s->prev = s->next;
    if (s->next) s->next->prev = s->prev;
    s->next = NULL;
    s->prev = NULL;
}

static void close_dash(struct lc_dash *s)
{
    unlink_dash(s);
    dash_free(s->d);
    s->d = NULL;
}

void lc_dash_free(lc_state_t *st)
{
    while (st->dashes)
        close_dash(st->dashes);
}

static struct lc_dash *check_open(lua_State *L)
{
    struct lc_dash *s = luaL_checkudata(L, 1, DASH_MT);
    if (!s->d) luaL_error(L, "dashboard: the server is closed");
    return s;
}

static int l_open(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    const char *listen = luaL_checkstring(L, 1);
    const char *token = luaL_optstring(L, 2, NULL);
    struct lc_dash *s = lua_newuserdata(L, sizeof(*s));
    s->d = NULL;
    s->next = NULL;
    s->prev = NULL;
    luaL_getmetatable(L, DASH_MT);
    lua_setmetatable(L, -2);
    char err[256];
    s->d = dash_new(st->loop, listen, token, err, sizeof(err));
    if (!s->d) {
        lua_pushnil(L);
        lc_push_error(L, st, "dashboard", err);
        return 2;
    }
    s->next = st->dashes;
    s->prev = &st->dashes;
    if (st->dashes) st->dashes->prev = &s->next;
    st->dashes = s;
    return 1;
}

static int l_publish(lua_State *L)
{
    struct lc_dash *s = check_open(L);
    const char *path = luaL_checkstring(L, 2);
    const char *ctype = luaL_checkstring(L, 3);
    size_t len;
    const char *body = luaL_checklstring(L, 4, &len);
    if (dash_publish(s->d, path, ctype, body, len) < 0)
        return luaL_error(L, "dashboard: out of memory");
    return 0;
}

static int l_event(lua_State *L)
{
    struct lc_dash *s = check_open(L);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    if (dash_event(s->d, data, len) < 0) return luaL_error(L, "dashboard: out of memory");
    return 0;
}

static int l_commands(lua_State *L)
{
    struct lc_dash *s = check_open(L);
    lua_newtable(L);
    enum dash_cmd cmd;
    for (int i = 1; (cmd = dash_next_command(s->d)) != DASH_NONE; i++) {
        lua_pushstring(L, dash_cmd_name(cmd));
        lua_rawseti(L, -2, i);
    }
    return 1;
}

static int l_info(lua_State *L)
{
    struct lc_dash *s = check_open(L);
    lua_createtable(L, 0, 4);
    lua_pushstring(L, dash_host(s->d));
    lua_setfield(L, -2, "host");
    lc_set_number(L, "port", dash_port(s->d));
    lua_pushstring(L, dash_token(s->d));
    lua_setfield(L, -2, "token");
    lua_pushboolean(L, dash_reads_need_token(s->d));
    lua_setfield(L, -2, "reads_need_token");
    return 1;
}

static int l_close(lua_State *L)
{
    struct lc_dash *s = luaL_checkudata(L, 1, DASH_MT);
    if (s->d) close_dash(s);
    return 0;
}

void lc_register_dash(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"publish", l_publish}, {"event", l_event}, {"commands", l_commands},
        {"info", l_info},       {"close", l_close}, {NULL, NULL},
    };
    static const luaL_Reg funcs[] = {{"dash_open", l_open}, {NULL, NULL}};
    luaL_newmetatable(L, DASH_MT);
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lc_setfuncs(L, funcs);
}
