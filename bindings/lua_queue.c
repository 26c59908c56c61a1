/* lua_queue.c: core.strq, the FIFO of strings (strq.h) that lc.queue (init.lua)
 * keeps the strings put in it in, outside the Lua heap. Its bytes count towards
 * max_memory, as bodies do (lc_limits_account). */
#include "lua_aux.h"
#include "strq.h"
#include "lua_limits.h"
#include "lua_libs.h"

static const char STRQ_METATABLE[] = "luacrawl.strq";

static strq_t *check_strq(lua_State *L)
{
    strq_t **q = lc_toudata_either(L, 1, STRQ_METATABLE, NULL);
    if (!q || !*q) luaL_typerror(L, 1, "strq");
    return *q;
}

/* Tell the limits how the FIFO's memory changed from before. */
static void account(lua_State *L, const strq_t *q, size_t before)
{
    size_t after = strq_bytes(q);
    if (after != before) lc_limits_account(L, (long long)after - (long long)before);
}

/* core.strq() -> an empty FIFO */
static int l_strq(lua_State *L)
{
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the userdata holds a pointer */
    strq_t **q = lua_newuserdata(L, sizeof(*q));
    *q = NULL;
    lc_getmetatable(L, STRQ_METATABLE);
    lua_setmetatable(L, -2);
    if (!(*q = strq_new())) return luaL_error(L, "queue: out of memory");
    return 1;
}

/* fifo:push(s) */
static int l_strq_push(lua_State *L)
{
    strq_t *q = check_strq(L);
    size_t len, before = strq_bytes(q);
    const char *s = luaL_checklstring(L, 2, &len);
    if (strq_push(q, s, len) != 0) return luaL_error(L, "queue: out of memory");
    account(L, q, before);
    return 0;
}

/* fifo:pop() -> the oldest string, or nil when empty */
static int l_strq_pop(lua_State *L)
{
    strq_t *q = check_strq(L);
    const char *s;
    size_t len, before = strq_bytes(q);
    if (strq_pop(q, &s, &len) != 0) return 0;
    lua_pushlstring(L, s, len);
    account(L, q, before);
    return 1;
}

static int l_strq_len(lua_State *L)
{
    lua_pushnumber(L, (double)strq_count(check_strq(L)));
    return 1;
}

static int l_strq_gc(lua_State *L)
{
    strq_t **q = lc_toudata_either(L, 1, STRQ_METATABLE, NULL);
    if (q && *q) {
        lc_limits_account(L, -(long long)strq_bytes(*q));
        strq_free(*q);
        *q = NULL;
    }
    return 0;
}

static const luaL_Reg funcs[] = {
    {"strq", l_strq},
    {NULL, NULL},
};

void lc_register_queue(lua_State *L)
{
    static const luaL_Reg methods[] = {{"push", l_strq_push}, {"pop", l_strq_pop}, {NULL, NULL}};
    static const luaL_Reg meta[] = {{"__gc", l_strq_gc}, {"__len", l_strq_len}, {NULL, NULL}};
    lc_class(L, STRQ_METATABLE, meta, methods);
    lc_setfuncs(L, funcs);
}
