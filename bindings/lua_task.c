/* lua_task.c: the task functions of the core table (spawn, current, suspend, wake,
 * sleep, now, run) and the methods of task objects. The Lua layer (init.lua) wraps
 * the waiting ones to turn the cancelled marker into a raised error. */
#include "lua_check.h"
#include "lua_aux.h"
#include "lua_libs.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The task type's tag for lc_class (task.c reaches the metatable by its name). */
static const char TASK_CLASS[] = TASK_METATABLE;

/* core.spawn(fn, ...) -> task */
static int l_spawn(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    task_spawn(st->sched, L, lua_gettop(L) - 1);
    return 1;
}

/* core.current() -> task | nil */
static int l_current(lua_State *L)
{
    task_t *t = task_current(lc_state(L)->sched);
    if (t && task_thread(t) == L)
        task_push(L, t);
    else
        lua_pushnil(L);
    return 1;
}

struct sleeper {
    loop_t *loop;
    loop_timer_t *timer;
    task_t *task;
};

static void sleep_done(loop_t *loop, void *arg)
{
    struct sleeper *sl = arg;
    loop_unref(loop);
    task_wake(sl->task, 0);
    free(sl);
}

static void sleep_abort(void *arg)
{
    struct sleeper *sl = arg;
    loop_timer_cancel(sl->loop, sl->timer);
    loop_unref(sl->loop);
    free(sl);
}

/* Wait in task t for secs seconds (or until woken or cancelled), keeping the run
 * alive meanwhile. */
static int timed_wait(lua_State *L, lc_state_t *st, task_t *t, double secs, const char *what,
                      int suspend)
{
    struct sleeper *sl = malloc(sizeof(*sl));
    if (!sl) return luaL_error(L, "%s: out of memory", what);
    sl->loop = st->loop;
    sl->task = t;
    sl->timer = loop_timer_add(st->loop, secs, sleep_done, sl);
    if (!sl->timer) {
        free(sl);
        return luaL_error(L, "%s: out of memory", what);
    }
    loop_ref(st->loop);
    if (suspend)
        task_wait_suspended(t, sleep_abort, sl);
    else
        task_wait(t, sleep_abort, sl);
    return lua_yield(L, 0);
}

/* core.suspend([timeout]) -> the values given to core.wake; nothing when the
 * timeout passed first; or the cancelled marker. A timed suspend keeps the run
 * alive like a sleep; an untimed one does not. */
static int l_suspend(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    task_t *t = task_waitable(st->sched, L, "suspend");
    if (lua_isnoneornil(L, 1)) {
        task_wait_suspended(t, NULL, NULL);
        return lua_yield(L, 0);
    }
    double secs = lc_check_number(L, 1, "suspend: the timeout", -DBL_MAX, DBL_MAX);
    return timed_wait(L, st, t, secs, "suspend", 1);
}

/* core.wake(task, ...) -> true if the task was waiting in core.suspend and is now
 * woken (any other wait, a fetch say, is left alone). */
static int l_wake(lua_State *L)
{
    task_t *t = task_check(L, 1);
    int n = lua_gettop(L) - 1;
    if (!task_suspended(t)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    task_abort_wait(t); /* a timed suspend's timer */
    lua_xmove(L, task_thread(t), n);
    task_wake(t, n);
    lua_pushboolean(L, 1);
    return 1;
}

/* core.sleep(seconds) */
static int l_sleep(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    /* Any finite number: a negative one (a deadline already past) sleeps for 0. */
    double secs = lc_check_number(L, 1, "sleep: seconds", -DBL_MAX, DBL_MAX);
    return timed_wait(L, st, task_waitable(st->sched, L, "sleep"), secs, "sleep", 0);
}

/* core.now() -> monotonic seconds */
static int l_now(lua_State *L)
{
    lua_pushnumber(L, loop_time());
    return 1;
}

/* core.run(fn, ...) -> true, results... | false, err, traceback
 * Runs fn as the main task and drives the loop until no task can make progress. */
static int l_run(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    if (st->running) return luaL_error(L, "run: already running (call lc.spawn inside a run)");
    st->running = 1;
    st->L = L;
    sched_set_lua(st->sched, L);
    int nargs = lua_gettop(L) - 1;
    task_t *main = task_spawn(st->sched, L, nargs);
    task_set_quiet(main); /* its error goes to the caller, not to stderr */
    int err = sched_run(st->sched);
    st->running = 0;
    if (err) {
        lua_pushboolean(L, 0);
        lua_pushfstring(L, "run stopped: the event loop cannot wait (epoll_wait: %s)",
                        strerror(err));
        return 2;
    }
    int state = task_state(main);
    if (state == 0) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "run ended while the main task was still blocked");
        return 2;
    }
    int n = task_join(st->sched, L, main); /* ended: pushes true, ... | false, err */
    if (state == 1) return n;
    task_push_traceback(L, main);
    return n + 1;
}

/* core.start(fn, ...) -> task
 * For a host that drives the loop itself (engine.c): fn is spawned as the main
 * task, as core.run does, and the run begins; the host turns it with sched_step
 * and ends it with core.finish. */
static int l_start(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    if (st->running) return luaL_error(L, "start: already running");
    int nargs = lua_gettop(L) - 1;
    st->L = L;
    sched_set_lua(st->sched, L);
    task_t *main = task_spawn(st->sched, L, nargs);
    task_set_quiet(main); /* its error goes to the host, not to stderr */
    st->running = 1;
    sched_begin(st->sched);
    return 1;
}

/* core.finish([task]) -> true, results... | false, err, traceback
 * The run core.start began has ended (sched_step returned 0, or -1 and task is
 * nil): the main task's outcome, as core.run gives it. */
static int l_finish(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    st->running = 0;
    if (lua_isnoneornil(L, 1)) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "run stopped: the event loop cannot wait");
        return 2;
    }
    task_t *main = task_check(L, 1);
    int state = task_state(main);
    if (state == 0) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "run ended while the main task was still blocked");
        return 2;
    }
    int n = task_join(st->sched, L, main);
    if (state == 1) return n;
    task_push_traceback(L, main);
    return n + 1;
}

/* ---- task methods ---- */

/* task:_join() -> true, results... | false, err (waits until the task ends) */
static int l_task_join(lua_State *L)
{
    return task_join(lc_state(L)->sched, L, task_check(L, 1));
}

static int l_task_cancel(lua_State *L)
{
    task_cancel(task_check(L, 1));
    return 0;
}

static int l_task_done(lua_State *L)
{
    lua_pushboolean(L, task_state(task_check(L, 1)) != 0);
    return 1;
}

static int l_task_state(lua_State *L)
{
    static const char *const names[] = {"running", "finished", "failed", "cancelled"};
    lua_pushstring(L, names[task_state(task_check(L, 1))]);
    return 1;
}

static int l_task_id(lua_State *L)
{
    lua_pushnumber(L, (double)task_id(task_check(L, 1)));
    return 1;
}

static int l_task_tostring(lua_State *L)
{
    task_t *t = task_check(L, 1);
    lua_pushfstring(L, "task %d", (int)task_id(t));
    return 1;
}

static int l_task_gc(lua_State *L)
{
    task_release(L, task_check(L, 1));
    return 0;
}

static const luaL_Reg task_methods[] = {
    {"_join", l_task_join},  {"cancel", l_task_cancel}, {"done", l_task_done},
    {"state", l_task_state}, {"id", l_task_id},         {NULL, NULL},
};

static const luaL_Reg core_funcs[] = {
    {"spawn", l_spawn},   {"current", l_current}, {"suspend", l_suspend}, {"wake", l_wake},
    {"sleep", l_sleep},   {"now", l_now},         {"run", l_run},         {"start", l_start},
    {"finish", l_finish}, {NULL, NULL},
};

void lc_register_task(lua_State *L)
{
    lc_setfuncs(L, core_funcs);
    /* The task metatable; init.lua adds the Lua-level methods to core.Task. */
    static const luaL_Reg meta[] = {
        {"__tostring", l_task_tostring}, {"__gc", l_task_gc}, {NULL, NULL}};
    lc_class(L, TASK_CLASS, meta, task_methods);
    lc_getmetatable(L, TASK_CLASS);
    lua_getfield(L, -1, "__index");
    lua_setfield(L, -4, "Task"); /* core.Task = methods */
    lua_pop(L, 1);
}
