/* lua_signal.c: the process's signals: core.signal_watch(name), core.signal_unwatch(name),
 * core.signal_wait() -> name. A signal that arrives while no task waits
 * is kept (up to 64) for the next signal_wait. Waiting takes no loop reference: a task waiting for
 * signals does not keep a run alive. In an engine a host program drives (st->hosted), the
 * process's signals are the host's: watching catches none, and only lc_signals_deliver
 * (lc_engine_stop) brings one. */
#include "lua_aux.h"
#include "signals.h"
#include "lua_signal.h"
#include "lua_libs.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING 64

struct waiter {
    struct waiter *next;
    task_t *task;
    struct lc_signals *owner;
};

struct lc_signals {
    sigwatch_t *watch;
    int names_ref; /* the names as Lua strings, made beforehand (on_signal) */
    int pending[MAX_PENDING];
    int npending;
    struct waiter *waiters;
};

static const struct {
    const char *name;
    int signo;
} names[] = {
    {"INT", SIGINT},   {"TERM", SIGTERM}, {"HUP", SIGHUP},
    {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};

static int signo_of(lua_State *L, int idx)
{
    const char *name = luaL_checkstring(L, idx);
    if (strncmp(name, "SIG", 3) == 0) name += 3;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(names[i].name, name) == 0) return names[i].signo;
    return luaL_error(L, "unknown signal '%s' (INT, TERM, HUP, QUIT, USR1, USR2)", name);
}

static const char *name_of(int signo)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].signo == signo) return names[i].name;
    return "?";
}

static int index_of(int signo)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].signo == signo) return (int)i + 1;
    return 0;
}

/* A loop callback, outside any task: it must not make a Lua value. Making one may
 * run a step of the collector, and a __gc metamethod raising there would unwind
 * through the loop's C frames (task.c, "storing a task's outcome"); so the name is
 * taken from a table made when signals were first used. */
static void on_signal(void *arg, int signo)
{
    struct lc_signals *s = arg;
    struct waiter *w = s->waiters;
    int i = index_of(signo);
    if (w && i) {
        s->waiters = w->next;
        lua_State *co = task_thread(w->task);
        lua_rawgeti(co, LUA_REGISTRYINDEX, s->names_ref);
        lua_rawgeti(co, -1, i);
        lua_remove(co, -2);
        task_wake(w->task, 1);
        free(w);
    } else if (s->npending < MAX_PENDING) {
        s->pending[s->npending++] = signo;
    }
}

static struct lc_signals *signals_of(lua_State *L, lc_state_t *st)
{
    if (!st->signals) {
        int n = (int)(sizeof(names) / sizeof(names[0]));
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            lua_pushstring(L, names[i].name);
            lua_rawseti(L, -2, i + 1);
        }
        int names_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        struct lc_signals *s = calloc(1, sizeof(*s));
        if (!s) {
            luaL_unref(L, LUA_REGISTRYINDEX, names_ref);
            luaL_error(L, "signals: out of memory");
        }
        s->names_ref = names_ref;
        s->watch = st->hosted ? NULL : sigwatch_new(st->loop, on_signal, s);
        if (!s->watch && !st->hosted) {
            free(s);
            luaL_unref(L, LUA_REGISTRYINDEX, names_ref);
            luaL_error(L, "signals: cannot create a signalfd");
        }
        st->signals = s;
    }
    return st->signals;
}

void lc_signals_free(lc_state_t *st)
{
    struct lc_signals *s = st->signals;
    if (!s) return;
    while (s->waiters) {
        struct waiter *w = s->waiters;
        s->waiters = w->next;
        free(w);
    }
    sigwatch_free(s->watch);
    free(s);
    st->signals = NULL;
}

void lc_signals_deliver(lua_State *L, lc_state_t *st, int signo)
{
    on_signal(signals_of(L, st), signo);
}

static int l_signal_watch(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    int signo = signo_of(L, 1);
    struct lc_signals *s = signals_of(L, st);
    if (s->watch && sigwatch_add(s->watch, signo) < 0)
        return luaL_error(L, "signal_watch: cannot watch %s", name_of(signo));
    return 0;
}

static int l_signal_unwatch(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    int signo = signo_of(L, 1);
    if (st->signals && st->signals->watch) sigwatch_remove(st->signals->watch, signo);
    return 0;
}

static void abort_wait(void *arg)
{
    struct waiter *w = arg;
    struct waiter **p = &w->owner->waiters;
    while (*p && *p != w)
        p = &(*p)->next;
    if (*p) *p = w->next;
    free(w);
}

static int l_signal_wait(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    struct lc_signals *s = signals_of(L, st);
    if (s->npending > 0) {
        lua_pushstring(L, name_of(s->pending[0]));
        memmove(s->pending, s->pending + 1, (size_t)(--s->npending) * sizeof(int));
        return 1;
    }
    task_t *t = task_waitable(st->sched, L, "signal_wait");
    struct waiter *w = calloc(1, sizeof(*w));
    if (!w) return luaL_error(L, "signal_wait: out of memory");
    w->task = t;
    w->owner = s;
    struct waiter **p = &s->waiters;
    while (*p)
        p = &(*p)->next;
    *p = w;
    task_wait(t, abort_wait, w);
    return lua_yield(L, 0);
}

static const luaL_Reg funcs[] = {
    {"signal_watch", l_signal_watch},
    {"signal_unwatch", l_signal_unwatch},
    {"signal_wait", l_signal_wait},
    {NULL, NULL},
};

void lc_register_signal(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
