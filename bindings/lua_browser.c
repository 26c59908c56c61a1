/* lua_browser.c: the browser child (browser.h) for Lua, and the address policies a
 * render checks its page's requests against. lua/luacrawl/render.lua speaks CDP over
 * these: core.browser_send writes a message; core.browser_wait yields the reader
 * task until messages are queued (or the browser ended), core.browser_take hands
 * them over. The wait holds no loop reference: a render waiting on a reply holds the
 * run open with its own timed suspend, and an idle browser keeps nothing alive. */
#include "browser.h"
#include "http_addr_policy.h"
#include "lua_aux.h"
#include "lua_browser.h"
#include "lua_http.h"
#include "lua_libs.h"
#include "strq.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

static const char BROWSER_METATABLE[] = "luacrawl.browser";
static const char POLICY_METATABLE[] = "luacrawl.addr_policy";

#define MAX_BROWSER_ARGS 200

struct lbrowser {
    browser_t *b; /* NULL once freed */
    strq_t *q;    /* messages not yet taken */
    task_t *waiter;
    int ended;
    char why[200];
    struct lbrowser *next; /* the state's live browsers (lc_browsers_free) */
    lc_state_t *st;
};

/* The state's browsers, freed with it: their pipes are on its loop. */
struct lc_browsers {
    struct lbrowser *first;
};

static struct lbrowser *check_browser(lua_State *L)
{
    return luaL_checkudata(L, 1, BROWSER_METATABLE);
}

static void wake(struct lbrowser *lb)
{
    if (!lb->waiter) return;
    task_t *t = lb->waiter;
    lb->waiter = NULL;
    task_wake(t, 0);
}

static void on_msg(void *arg, const char *msg, size_t len)
{
    struct lbrowser *lb = arg;
    if (strq_push(lb->q, msg, len) < 0) {
        /* A lost message would leave a render waiting for ever: end it all instead. */
        snprintf(lb->why, sizeof lb->why, "out of memory queueing the browser's messages");
        lb->ended = 1;
        browser_kill(lb->b);
    }
    wake(lb);
}

static void on_end(void *arg, const char *why)
{
    struct lbrowser *lb = arg;
    if (!lb->ended) snprintf(lb->why, sizeof lb->why, "%s", why);
    lb->ended = 1;
    wake(lb);
}

static void unlink_browser(struct lbrowser *lb)
{
    struct lc_browsers *all = lb->st ? lb->st->browsers : NULL;
    for (struct lbrowser **p = all ? &all->first : NULL; p && *p; p = &(*p)->next) {
        if (*p == lb) {
            *p = lb->next;
            break;
        }
    }
    lb->st = NULL;
}

static void release(struct lbrowser *lb)
{
    browser_free(lb->b);
    lb->b = NULL;
    strq_free(lb->q);
    lb->q = NULL;
    lb->ended = 1;
}

/* core.browser_start(path, {args}) -> browser | nil, message */
static int l_browser_start(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    const char *path = luaL_checkstring(L, 1);
    const char *args[MAX_BROWSER_ARGS];
    int nargs = lua_istable(L, 2) ? (int)lua_objlen(L, 2) : 0;
    if (nargs > MAX_BROWSER_ARGS)
        return luaL_error(L, "browser: more than %d args", MAX_BROWSER_ARGS);
    for (int i = 0; i < nargs; i++) {
        lua_rawgeti(L, 2, i + 1);
        args[i] = lua_tostring(L, -1); /* the table keeps the strings alive */
        if (!args[i]) return luaL_error(L, "browser: args[%d] must be a string", i + 1);
        lua_pop(L, 1);
    }
    if (!st->browsers && !(st->browsers = calloc(1, sizeof(*st->browsers))))
        return luaL_error(L, "browser: out of memory");
    struct lbrowser *lb = lua_newuserdata(L, sizeof(*lb));
    memset(lb, 0, sizeof(*lb));
    luaL_getmetatable(L, BROWSER_METATABLE);
    lua_setmetatable(L, -2);
    if (!(lb->q = strq_new())) return luaL_error(L, "browser: out of memory");
    char err[512];
    lb->b = browser_start(st->loop, path, args, nargs, on_msg, on_end, lb, err, sizeof err);
    if (!lb->b) {
        release(lb);
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lb->st = st;
    lb->next = st->browsers->first;
    st->browsers->first = lb;
    return 1;
}

/* core.browser_send(b, text) -> true | false (the browser has ended) */
static int l_browser_send(lua_State *L)
{
    struct lbrowser *lb = check_browser(L);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    lua_pushboolean(L, lb->b && !lb->ended && browser_send(lb->b, s, len) == 0);
    return 1;
}

static void wait_abort(void *arg)
{
    struct lbrowser *lb = arg;
    lb->waiter = NULL;
}

/* core.browser_wait(b): returns at once when messages are queued or the browser has
 * ended, else yields until one of them; the cancelled marker when cancelled. */
static int l_browser_wait(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    struct lbrowser *lb = check_browser(L);
    if (lb->ended || !lb->q || strq_count(lb->q) > 0) return 0;
    if (lb->waiter) return luaL_error(L, "browser: another task is waiting on it");
    task_t *t = task_waitable(st->sched, L, "browser wait");
    lb->waiter = t;
    task_wait(t, wait_abort, lb);
    return lua_yield(L, 0);
}

/* core.browser_take(b) -> {messages} [, why it ended: once they are all taken] */
static int l_browser_take(lua_State *L)
{
    struct lbrowser *lb = check_browser(L);
    size_t n = lb->q ? strq_count(lb->q) : 0;
    lua_createtable(L, (int)n, 0);
    const char *s;
    size_t len;
    for (size_t i = 1; lb->q && strq_pop(lb->q, &s, &len) == 0; i++) {
        lua_pushlstring(L, s, len);
        lua_rawseti(L, -2, (int)i);
    }
    if (!lb->ended) return 1;
    lua_pushstring(L, lb->why[0] ? lb->why : "the browser has ended");
    return 2;
}

/* core.browser_info(b) -> {pid=, profile=, rss=, alive=} */
static int l_browser_info(lua_State *L)
{
    struct lbrowser *lb = check_browser(L);
    int alive = lb->b && browser_alive(lb->b);
    lua_createtable(L, 0, 4);
    lua_pushboolean(L, alive);
    lua_setfield(L, -2, "alive");
    if (!alive) return 1;
    lc_set_number(L, "pid", (double)browser_pid(lb->b));
    lc_set_number(L, "rss", (double)browser_rss(lb->b));
    lua_pushstring(L, browser_profile(lb->b));
    lua_setfield(L, -2, "profile");
    return 1;
}

/* core.browser_kill(b [, why]): the whole group killed and reaped, the profile removed. */
static int l_browser_kill(lua_State *L)
{
    struct lbrowser *lb = check_browser(L);
    if (!lb->ended) snprintf(lb->why, sizeof lb->why, "%s", luaL_optstring(L, 2, "killed"));
    lb->ended = 1;
    browser_kill(lb->b);
    wake(lb);
    return 0;
}

static int browser_gc(lua_State *L)
{
    struct lbrowser *lb = check_browser(L);
    unlink_browser(lb);
    release(lb);
    return 0;
}

void lc_browsers_free(lc_state_t *st)
{
    struct lc_browsers *all = st->browsers;
    if (!all) return;
    for (struct lbrowser *lb = all->first, *next; lb; lb = next) {
        next = lb->next;
        lb->st = NULL;
        browser_free(lb->b);
        lb->b = NULL;
        lb->ended = 1;
    }
    free(all);
    st->browsers = NULL;
}

/* core.address_policy_new(public_only, deny_networks) -> policy | nil (denies nothing) */
static int l_address_policy_new(lua_State *L)
{
    lua_settop(L, 2);
    int oom;
    addr_policy_t *p = lc_policy_from(L, 1, 2, "render", &oom);
    if (oom) return luaL_error(L, "render: out of memory");
    if (!p) return 0;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the userdata holds a pointer */
    addr_policy_t **ud = lua_newuserdata(L, sizeof(*ud));
    *ud = p;
    luaL_getmetatable(L, POLICY_METATABLE);
    lua_setmetatable(L, -2);
    return 1;
}

/* core.address_denied(policy, addr) -> nil (allowed) | what denies it */
static int l_address_denied(lua_State *L)
{
    addr_policy_t **ud = luaL_checkudata(L, 1, POLICY_METATABLE);
    const char *why = addr_policy_check(*ud, luaL_checkstring(L, 2));
    if (!why) return 0;
    lua_pushstring(L, why);
    return 1;
}

static int policy_gc(lua_State *L)
{
    addr_policy_t **ud = luaL_checkudata(L, 1, POLICY_METATABLE);
    addr_policy_free(*ud);
    *ud = NULL;
    return 0;
}

/* core.base64_decode(text) -> bytes | nil (not base64): a screenshot's PNG */
static int l_base64_decode(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    if (len % 4 || len > (size_t)INT32_MAX) return 0;
    unsigned char *out = malloc(len / 4 * 3 + 1);
    if (!out) return luaL_error(L, "base64: out of memory");
    int n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
    if (n < 0) {
        free(out);
        return 0;
    }
    /* EVP_DecodeBlock counts the bytes the padding stands for. */
    for (size_t i = len; i > 0 && s[i - 1] == '=' && n > 0; i--)
        n--;
    lua_pushlstring(L, (const char *)out, (size_t)n);
    free(out);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"base64_decode", l_base64_decode},   {"browser_start", l_browser_start},
    {"browser_send", l_browser_send},     {"browser_wait", l_browser_wait},
    {"browser_take", l_browser_take},     {"browser_info", l_browser_info},
    {"browser_kill", l_browser_kill},     {"address_policy_new", l_address_policy_new},
    {"address_denied", l_address_denied}, {NULL, NULL},
};

void lc_register_browser(lua_State *L)
{
    luaL_newmetatable(L, BROWSER_METATABLE);
    lua_pushcfunction(L, browser_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, POLICY_METATABLE);
    lua_pushcfunction(L, policy_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lc_setfuncs(L, funcs);
}
