/* lua_limits.c: limits on what scripts may take. max_memory caps the Lua heap and
 * the response bodies held for it (lua_body.c): an allocator wrapper refuses to
 * grow it past the limit while task code runs, so the task that asked gets "not
 * enough memory"; the engine's own bookkeeping between resumes is never refused.
 * max_task_cpu raises an error in a task that runs longer than that without
 * waiting, from an instruction-count hook. core.raise_fd_limit raises the process's
 * limit of open files (proc_limits.c).
 *
 * LuaJIT's compiled code never calls hooks: with max_task_cpu set the JIT compiler
 * is switched off (the interpreter is several times slower on Lua loops, but a
 * crawl spends most of its time in C). */
#include "lua_check.h"
#include "lua_aux.h"
#include "lua_limits.h"
#include "lua_libs.h"
#include "proc_limits.h"

#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <luajit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOOK_COUNT 10000

/* A state's limits (st->limits), made by the first core.set_limits. Every coroutine
 * of the state reaches it as its allocator's ud: the CPU hook has no upvalues, and
 * that is the one pointer a hook and an allocation both get without a lookup. */
struct lc_limits {
    lc_state_t *st;
    lua_Alloc alloc; /* the allocator wrapped, and its ud */
    void *ud;
    size_t used, limit;  /* bytes; limit 0: none */
    int active;          /* task code is running */
    double max_task_cpu; /* seconds; 0: none */
};

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct lc_limits *m = ud;
    if (nsize > osize && m->active && m->limit && m->used + (nsize - osize) > m->limit) return NULL;
    void *p = m->alloc(m->ud, ptr, osize, nsize);
    if (p || nsize == 0) m->used = m->used - osize + nsize;
    return p;
}

/* The limits of L's state, NULL when none were set (or they are gone). */
static struct lc_limits *limits_of(lua_State *L)
{
    void *ud;
    return lua_getallocf(L, &ud) == limited_alloc ? ud : NULL;
}

/* Before a task runs close to the limit, collect: LuaJIT does not retry a refused
 * allocation after a collection, so garbage (from a task that just failed for
 * lack of memory, say) would otherwise make every task fail. */
static void on_resume(void *arg, int entering)
{
    struct lc_limits *m = arg;
    if (entering && m->limit && m->used > m->limit - m->limit / 8)
        lua_gc(m->st->L, LUA_GCCOLLECT, 0);
    m->active = entering;
}

/* The wrapper stays installed until the state closes (lc_limits_free): it is cheap,
 * and the state's memory was counted from the start only if installed early, so
 * the count is of what was allocated since (the estimate errs low, never refusing
 * too early). */
static struct lc_limits *limits_for(lua_State *L, lc_state_t *st)
{
    if (st->limits) return st->limits;
    struct lc_limits *m = calloc(1, sizeof(*m));
    if (!m) luaL_error(L, "limits: out of memory");
    m->st = st;
    m->alloc = lua_getallocf(L, &m->ud);
    m->used = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024;
    lua_setallocf(L, limited_alloc, m);
    sched_on_resume(st->sched, on_resume, m);
    st->limits = m;
    return m;
}

/* Called as the state closes, before its scheduler goes. */
void lc_limits_free(lua_State *L, lc_state_t *st)
{
    struct lc_limits *m = st->limits;
    if (!m) return;
    st->limits = NULL;
    lua_sethook(L, NULL, 0, 0);
    sched_on_resume(st->sched, NULL, NULL);
    /* What the state still holds came from the wrapped allocator: hand the state
     * back to it, so that lua_close ends with that allocator's own teardown
     * (LuaJIT's releases its arena only if it is still the state's allocator). If
     * something wrapped ours since, the wrapper must stay, and so must m. */
    void *ud;
    if (lua_getallocf(L, &ud) != limited_alloc || ud != m) return;
    lua_setallocf(L, m->alloc, m->ud);
    free(m);
}

static void cpu_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    const struct lc_limits *m = limits_of(L);
    if (!m || m->max_task_cpu <= 0) return;
    double used = sched_resume_cpu(m->st->sched);
    if (used <= m->max_task_cpu) return;
    char msg[160];
    snprintf(msg, sizeof(msg), "task used %.2f s of CPU without waiting (max_task_cpu is %g s)",
             used, m->max_task_cpu);
    luaL_where(L, 0); /* inside a hook, level 0 is the function that was running */
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    lua_error(L);
}

void lc_limits_account(lua_State *L, long long delta)
{
    struct lc_limits *m = limits_of(L);
    if (!m) return;
    /* Bodies made before the wrapper was installed were never counted. */
    if (delta < 0 && (size_t)-delta > m->used)
        m->used = 0;
    else
        m->used = (size_t)((long long)m->used + delta);
}

void lc_limits_budget(void *arg, http_budget_t *budget)
{
    const lc_state_t *st = arg;
    const struct lc_limits *m = st->limits;
    budget->limit = m ? m->limit : 0;
    budget->used = m ? m->used : 0;
}

int lc_limits_allow(lua_State *L, size_t bytes, size_t *left)
{
    const struct lc_limits *m = limits_of(L);
    *left = !m || !m->limit ? SIZE_MAX : m->used < m->limit ? m->limit - m->used : 0;
    return bytes <= *left;
}

/* core.set_limits{max_memory = bytes (0: none), max_task_cpu = seconds (0: none)} */
static int l_set_limits(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "max_memory");
    if (!lua_isnil(L, -1)) {
        double bytes = (double)lc_check_integer(L, -1, "max_memory", 0, LC_INT_MAX);
        limits_for(L, st)->limit = (size_t)bytes;
    }
    lua_getfield(L, 1, "max_task_cpu");
    if (!lua_isnil(L, -1)) {
        double secs = lc_check_number(L, -1, "max_task_cpu", 0, DBL_MAX);
        limits_for(L, st)->max_task_cpu = secs;
        sched_measure_cpu(st->sched, secs > 0);
        if (secs > 0) {
            luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
            lua_sethook(L, cpu_hook, LUA_MASKCOUNT, HOOK_COUNT);
        } else {
            lua_sethook(L, NULL, 0, 0);
            luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_ON);
        }
    }
    lua_pop(L, 2);
    return 0;
}

/* core.memory() -> bytes of Lua heap counted, limit */
static int l_memory(lua_State *L)
{
    const struct lc_limits *m = limits_of(L);
    if (m) {
        lua_pushnumber(L, (double)m->used);
        lua_pushnumber(L, (double)m->limit);
        return 2;
    }
    lua_pushnumber(L, (double)lua_gc(L, LUA_GCCOUNT, 0) * 1024);
    lua_pushnil(L);
    return 2;
}

/* core.raise_fd_limit() -> the soft limit of open files now in force | nil, message.
 * For programs that load the module: the binary does it at start (main.c). */
static int l_raise_fd_limit(lua_State *L)
{
    long n = proc_raise_nofile();
    if (n < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "raise_fd_limit: %s", strerror(errno));
        return 2;
    }
    lua_pushnumber(L, (double)n);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"raise_fd_limit", l_raise_fd_limit},
    {"set_limits", l_set_limits},
    {"memory", l_memory},
    {NULL, NULL},
};

void lc_register_limits(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
