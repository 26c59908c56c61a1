/* task.c: tasks are LuaJIT coroutines; the scheduler resumes them from the loop.
 *
 * Life of a task: NEW (spawned, queued) -> RUNNING -> WAITING (yielded inside a C
 * wait) -> READY (woken, queued) -> RUNNING ... -> DONE (finished, failed or
 * cancelled). Only the scheduler calls lua_resume, from a deferred loop call, so
 * no resume ever nests inside a curl, c-ares or timer callback. */
#include "task.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum state { T_NEW, T_READY, T_RUNNING, T_WAITING, T_DONE };
enum outcome { R_NONE, R_OK, R_FAILED, R_CANCELLED };

struct joiner {
    struct joiner *prev, *next;
    task_t *waiter, *target;
};

struct task {
    sched_t *s;
    lua_State *co;
    int co_ref, self_ref, result_ref;
    enum state state;
    enum outcome outcome;
    int nwake;          /* values on co's stack to resume with */
    int cancel_pending; /* cancel asked while running or queued */
    int resume_marker;  /* resume with the cancelled marker */
    int error_delivered;
    int suspended; /* waiting in a generic suspend */
    int lost;      /* its results could not be stored (store_outcome) */
    task_abort_fn abort;
    void *abort_arg;
    task_t *ready_next;
    task_t *live_prev, *live_next;
    struct joiner *joiners;
    unsigned long id;
};

struct sched {
    lua_State *L;
    loop_t *loop;
    task_t *ready_head, *ready_tail;
    int drain_scheduled;
    task_t *current;
    task_t *live;
    int cancel_err_ref;
    int store_ref; /* store_outcome_p, a C function in the registry */
    int lost_ref;  /* the error of a task whose results could not be stored */
    unsigned long next_id;
    double resume_cpu; /* thread CPU time when the running task was resumed */
    int measure_cpu;   /* set resume_cpu at every resume */
    sched_resume_fn on_resume;
    void *on_resume_arg;
    sched_log_fn log;
    void *log_arg;
    int cancel_rounds; /* of sched_step since sched_begin */
    sched_stats_t stats;
};

static char cancelled_marker;

#define SCHED_CANCEL_ROUNDS 16

/* What went wrong in a task nobody joins: stderr, or the host's log (engine.c). */
void sched_log(sched_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (s->log) {
        /* A traceback may be long: the whole message, or what fits when out of memory. */
        char small[512];
        va_list copy;
        va_copy(copy, ap);
        int n = vsnprintf(small, sizeof(small), fmt, copy);
        va_end(copy);
        char *msg = n >= (int)sizeof(small) ? malloc((size_t)n + 1) : NULL;
        if (msg) vsnprintf(msg, (size_t)n + 1, fmt, ap);
        s->log(s->log_arg, msg ? msg : small);
        free(msg);
    } else {
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        fflush(stderr);
    }
    va_end(ap);
}

void sched_set_log(sched_t *s, sched_log_fn fn, void *arg)
{
    s->log = fn;
    s->log_arg = arg;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double sched_resume_cpu(sched_t *s)
{
    return s->current && s->measure_cpu ? thread_cpu() - s->resume_cpu : 0;
}

void sched_measure_cpu(sched_t *s, int on)
{
    if (on && !s->measure_cpu && s->current) s->resume_cpu = thread_cpu(); /* from now */
    s->measure_cpu = on;
}

void sched_on_resume(sched_t *s, sched_resume_fn fn, void *arg)
{
    s->on_resume = fn;
    s->on_resume_arg = arg;
}

void *task_cancelled_marker(void)
{
    return &cancelled_marker;
}

/* ---- the ready queue ---- */

static void drain(loop_t *loop, void *arg);

static void make_ready(task_t *t, int nwake)
{
    sched_t *s = t->s;
    t->state = t->state == T_NEW ? T_NEW : T_READY;
    t->nwake = nwake;
    t->ready_next = NULL;
    if (s->ready_tail)
        s->ready_tail->ready_next = t;
    else
        s->ready_head = t;
    s->ready_tail = t;
    if (!s->drain_scheduled && loop_defer(s->loop, drain, s) == 0) s->drain_scheduled = 1;
}

/* ---- ending a task ---- */

static void push_outcome(lua_State *L, task_t *t)
{
    if (t->lost) {
        lua_pushboolean(L, 0);
        lua_rawgeti(L, LUA_REGISTRYINDEX, t->s->lost_ref);
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->result_ref);
    if (t->outcome == R_OK) {
        int n = (lua_getfield(L, -1, "n"), (int)lua_tointeger(L, -1));
        lua_pop(L, 1);
        luaL_checkstack(L, n + 2, "too many results to join");
        lua_pushboolean(L, 1);
        for (int i = 1; i <= n; i++)
            lua_rawgeti(L, -1 - i, i);
        lua_remove(L, -2 - n); /* the table */
    } else {
        lua_getfield(L, -1, "err");
        lua_remove(L, -2);
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
    }
}

static int outcome_count(lua_State *L, task_t *t)
{
    if (t->outcome != R_OK || t->lost) return 2;
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->result_ref);
    lua_getfield(L, -1, "n");
    int n = (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
    return n + 1;
}

static void wake_joiners(task_t *t)
{
    sched_t *s = t->s;
    while (t->joiners) {
        struct joiner *j = t->joiners;
        t->joiners = j->next;
        task_t *w = j->waiter;
        free(j);
        w->abort = NULL;
        int n = outcome_count(s->L, t);
        push_outcome(s->L, t);
        lua_xmove(s->L, w->co, n);
        task_wake(w, n);
        t->error_delivered = 1;
    }
}

/* Push a readable message for the error value at idx. Its __tostring runs
 * protected: a failing one gives the fallback text, not a second error. */
static void push_error_text(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TSTRING || lua_type(L, idx) == LUA_TNUMBER) {
        lua_pushstring(L, lua_tostring(L, idx));
        return;
    }
    if (luaL_getmetafield(L, idx, "__tostring")) {
        lua_pushvalue(L, idx);
        if (lua_pcall(L, 1, 1, 0) == 0 && lua_type(L, -1) == LUA_TSTRING) return;
        lua_pop(L, 1);
    }
    lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, idx));
}

static void finish(task_t *t, enum outcome outcome)
{
    sched_t *s = t->s;
    lua_State *L = s->L;
    t->state = T_DONE;
    t->outcome = outcome;
    if (t->live_prev)
        t->live_prev->live_next = t->live_next;
    else
        s->live = t->live_next;
    if (t->live_next) t->live_next->live_prev = t->live_prev;
    s->stats.live--;
    if (outcome == R_OK)
        s->stats.finished++;
    else if (outcome == R_FAILED)
        s->stats.failed++;
    else
        s->stats.cancelled++;

    int had_joiners = t->joiners != NULL;
    wake_joiners(t);
    if (outcome == R_FAILED && !had_joiners && !t->error_delivered) {
        if (t->lost) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, s->lost_ref);
            sched_log(s, "luacrawl: task %lu: %s", t->id, lua_tostring(L, -1));
            lua_pop(L, 1);
        } else {
            lua_rawgeti(L, LUA_REGISTRYINDEX, t->result_ref);
            lua_getfield(L, -1, "traceback");
            sched_log(s, "luacrawl: task %lu failed: %s", t->id, lua_tostring(L, -1));
            lua_pop(L, 2);
        }
    }
    luaL_unref(L, LUA_REGISTRYINDEX, t->co_ref);
    t->co_ref = LUA_NOREF;
    t->co = NULL;
    /* Last: after this the task object may be collected once nothing else holds it. */
    luaL_unref(L, LUA_REGISTRYINDEX, t->self_ref);
    t->self_ref = LUA_NOREF;
}

/* ---- storing a task's outcome ----
 *
 * A task's results (or its error and traceback) are kept in a table in the
 * registry until they are joined or the task object is collected. Making it runs
 * in the scheduler, outside any task, and allocates; an allocation may run a step
 * of the collector, and the step a __gc metamethod. LuaJIT 2.1 as Debian 12 ships
 * it rethrows a finalizer's error to whatever allocation started the step (later
 * LuaJIT prints it instead). Unprotected, that error would unwind through the
 * loop's C frames (drain, loop_run) to the nearest pcall and leave the run
 * half-way: tasks queued but never resumed, outputs never flushed. So the table is
 * made in protected mode from copies of the values, and made again if the attempt
 * fails: the finalizer that raised has been run and will not run again. */

/* Each failed attempt runs one finalizer less; an out-of-memory error is given a
 * few more attempts (the collector may free memory meanwhile), not forever. */
#define STORE_TRIES 1000000
#define STORE_MEM_TRIES 4

enum store_kind { S_RESULTS, S_ERROR, S_CANCELLED };

struct store {
    task_t *t;
    enum store_kind kind;
};

/* store_outcome_p(store, values...): the values are the results (S_RESULTS), the
 * error value (S_ERROR) or the cancellation error (S_CANCELLED). */
static int store_outcome_p(lua_State *L)
{
    struct store *a = lua_touserdata(L, 1);
    int n = lua_gettop(L) - 1;
    if (a->kind == S_RESULTS) {
        lua_createtable(L, n, 1);
        for (int i = 1; i <= n; i++) {
            lua_pushvalue(L, i + 1);
            lua_rawseti(L, -2, i);
        }
        lua_pushinteger(L, n);
        lua_setfield(L, -2, "n");
    } else {
        lua_createtable(L, 0, 2);
        if (a->kind == S_ERROR) {
            push_error_text(L, 2);
            luaL_traceback(L, a->t->co, lua_tostring(L, -1), 0);
            lua_setfield(L, -3, "traceback");
            lua_pop(L, 1);
        }
        lua_pushvalue(L, 2);
        lua_setfield(L, -2, "err");
    }
    a->t->result_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* Say what went wrong while storing an outcome: the error on top of L, popped. */
static void report_store_error(lua_State *L, task_t *t, int status)
{
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (status == LUA_ERRMEM)
        sched_log(t->s, "luacrawl: task %lu: out of memory storing its outcome", t->id);
    else
        sched_log(t->s, "luacrawl: error in a __gc metamethod (ignored): %s",
                  msg ? msg : luaL_typename(L, -1));
    fflush(stderr);
    lua_pop(L, 1);
}

/* Store the outcome of t: its n results, its error or the cancellation error (the
 * top n values of L, popped). When every attempt fails, t is marked lost: joining
 * it gives the lost_ref error. */
static void store_outcome(task_t *t, enum store_kind kind, int n)
{
    lua_State *L = t->s->L;
    int base = lua_gettop(L) - n;
    struct store a = {t, kind};
    t->result_ref = LUA_NOREF;
    for (int tries = 0, mem = 0; tries < STORE_TRIES && mem < STORE_MEM_TRIES; tries++) {
        if (!lua_checkstack(L, n + 2)) break;
        lua_rawgeti(L, LUA_REGISTRYINDEX, t->s->store_ref);
        lua_pushlightuserdata(L, &a);
        for (int i = 1; i <= n; i++)
            lua_pushvalue(L, base + i);
        int status = lua_pcall(L, n + 1, 0, 0);
        if (status == 0) {
            lua_settop(L, base);
            return;
        }
        mem += status == LUA_ERRMEM;
        report_store_error(L, t, status);
    }
    lua_settop(L, base);
    t->lost = 1;
}

/* Move the results (or the error) of a coroutine that has ended onto the
 * scheduler's state and store them. */
static void store_results(task_t *t, int status)
{
    lua_State *L = t->s->L;
    lua_State *co = t->co;
    int n = status == 0 ? lua_gettop(co) : 1;
    if (!lua_checkstack(L, n + 4)) {
        /* More results than a C stack holds (some thousands): keep none. */
        lua_settop(co, 0);
        t->lost = 1;
        return;
    }
    lua_xmove(co, L, n);
    store_outcome(t, status == 0 ? S_RESULTS : S_ERROR, n);
}

static int is_cancel_error(sched_t *s, lua_State *co)
{
    lua_rawgeti(co, LUA_REGISTRYINDEX, s->cancel_err_ref);
    int same = lua_rawequal(co, -1, -2);
    lua_pop(co, 1);
    return same;
}

/* ---- resuming ---- */

static void resume(task_t *t)
{
    sched_t *s = t->s;
    lua_State *co = t->co;
    int n = t->nwake;
    if (t->state == T_NEW && t->cancel_pending) {
        lua_settop(co, 0);
        lua_rawgeti(s->L, LUA_REGISTRYINDEX, s->cancel_err_ref);
        store_outcome(t, S_CANCELLED, 1);
        finish(t, R_CANCELLED);
        return;
    }
    if (t->cancel_pending || t->resume_marker) {
        lua_pop(co, n);
        lua_pushlightuserdata(co, &cancelled_marker);
        n = 1;
        t->cancel_pending = 0;
        t->resume_marker = 0;
    }
    t->state = T_RUNNING;
    s->current = t;
    if (s->measure_cpu) s->resume_cpu = thread_cpu();
    if (s->on_resume) s->on_resume(s->on_resume_arg, 1);
    int status = lua_resume(co, n);
    if (s->on_resume) s->on_resume(s->on_resume_arg, 0);
    s->current = NULL;
    if (status == LUA_YIELD) {
        if (t->state == T_RUNNING) {
            /* A plain coroutine.yield() in the task body: give way to others.
             * Values it yields go nowhere (a Scrapy habit in a crawl's parse:
             * coroutine.yield(item)); counted, so the crawl can say so. */
            if (lua_gettop(co) > 0) s->stats.yields_dropped++;
            lua_settop(co, 0);
            t->state = T_READY;
            make_ready(t, 0);
        }
        return;
    }
    if (status == 0) {
        store_results(t, 0);
        finish(t, t->lost ? R_FAILED : R_OK);
        return;
    }
    int cancelled = is_cancel_error(s, co);
    store_results(t, status);
    finish(t, cancelled ? R_CANCELLED : R_FAILED);
}

static void drain(loop_t *loop, void *arg)
{
    (void)loop;
    sched_t *s = arg;
    s->drain_scheduled = 0;
    /* Resume only the tasks ready now; those woken meanwhile wait for the next
     * turn, after the loop has polled for I/O. */
    task_t *t = s->ready_head, *last = s->ready_tail;
    s->ready_head = s->ready_tail = NULL;
    while (t) {
        task_t *next = t == last ? NULL : t->ready_next;
        t->ready_next = NULL;
        resume(t);
        t = next;
    }
}

/* ---- public API ---- */

sched_t *sched_new(lua_State *L, loop_t *loop)
{
    lua_pushcfunction(L, store_outcome_p);
    int store_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "the task ended, but its results could not be kept (out of "
                       "memory, or a __gc metamethod raised an error every time)");
    int lost_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    sched_t *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->L = L;
    s->loop = loop;
    s->cancel_err_ref = LUA_NOREF;
    s->store_ref = store_ref;
    s->lost_ref = lost_ref;
    return s;
}

void sched_free(sched_t *s)
{
    free(s);
}

loop_t *sched_loop(sched_t *s)
{
    return s->loop;
}

void sched_set_lua(sched_t *s, lua_State *L)
{
    s->L = L;
}

void sched_get_stats(const sched_t *s, sched_stats_t *stats)
{
    *stats = s->stats;
}

void sched_set_cancel_error(sched_t *s, lua_State *L, int idx)
{
    lua_pushvalue(L, idx);
    luaL_unref(L, LUA_REGISTRYINDEX, s->cancel_err_ref);
    s->cancel_err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

task_t *task_spawn(sched_t *s, lua_State *L, int nargs)
{
    luaL_checktype(L, -nargs - 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    int co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_xmove(L, co, nargs + 1);
    task_t *t = lua_newuserdata(L, sizeof(*t));
    memset(t, 0, sizeof(*t));
    luaL_getmetatable(L, TASK_METATABLE);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    t->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    t->co_ref = co_ref;
    t->result_ref = LUA_NOREF;
    t->s = s;
    t->co = co;
    t->id = ++s->next_id;
    t->state = T_NEW;
    t->live_next = s->live;
    if (s->live) s->live->live_prev = t;
    s->live = t;
    s->stats.spawned++;
    s->stats.live++;
    make_ready(t, nargs);
    return t;
}

void task_release(lua_State *L, task_t *t)
{
    if (t->state != T_DONE) return; /* never: a live task is anchored */
    luaL_unref(L, LUA_REGISTRYINDEX, t->result_ref);
    t->result_ref = LUA_NOREF;
}

task_t *task_check(lua_State *L, int idx)
{
    return luaL_checkudata(L, idx, TASK_METATABLE);
}

task_t *task_current(sched_t *s)
{
    return s->current;
}

lua_State *task_thread(task_t *t)
{
    return t->co;
}

unsigned long task_id(task_t *t)
{
    return t->id;
}

void task_push(lua_State *L, task_t *t)
{
    if (t->self_ref != LUA_NOREF)
        lua_rawgeti(L, LUA_REGISTRYINDEX, t->self_ref);
    else
        lua_pushnil(L);
}

/* Raise msg located at the caller of the public Lua wrapper (level 2), which is
 * where the script made the call. */
static int raise_at_caller(lua_State *L, const char *what, const char *msg)
{
    luaL_where(L, 2);
    lua_pushfstring(L, "%s: %s", what, msg);
    lua_concat(L, 2);
    return lua_error(L);
}

task_t *task_waitable(sched_t *s, lua_State *L, const char *what)
{
    task_t *t = s->current;
    if (!t)
        raise_at_caller(L, what,
                        "must be called from a luacrawl task (inside lc.run or a task "
                        "it spawned)");
    else if (t->co != L)
        raise_at_caller(L, what,
                        "called from a coroutine the task created itself; luacrawl "
                        "can only wait in the task's own coroutine");
    else if (!lua_isyieldable(L))
        raise_at_caller(L, what,
                        "cannot wait here: the call is inside a function called from C "
                        "(a table.sort comparator, a string.gsub callback, a "
                        "metamethod called by C)");
    return t;
}

void task_wait_suspended(task_t *t, task_abort_fn abort, void *arg)
{
    task_wait(t, abort, arg);
    if (t->state == T_WAITING) t->suspended = 1;
}

void task_wait(task_t *t, task_abort_fn abort, void *arg)
{
    t->suspended = 0;
    t->state = T_WAITING;
    t->abort = abort;
    t->abort_arg = arg;
    if (t->cancel_pending) task_cancel(t);
}

void task_wake(task_t *t, int nresults)
{
    if (t->state != T_WAITING) return;
    t->abort = NULL;
    t->suspended = 0;
    make_ready(t, nresults);
}

void task_abort_wait(task_t *t)
{
    task_abort_fn abort = t->abort;
    t->abort = NULL;
    if (abort) abort(t->abort_arg);
}

int task_waiting(task_t *t)
{
    return t->state == T_WAITING;
}

int task_suspended(task_t *t)
{
    return t->state == T_WAITING && t->suspended;
}

void task_cancel(task_t *t)
{
    switch (t->state) {
    case T_DONE:
        return;
    case T_NEW:
    case T_READY:
    case T_RUNNING:
        t->cancel_pending = 1;
        return;
    case T_WAITING:
        break;
    }
    task_abort_fn abort = t->abort;
    t->abort = NULL;
    t->cancel_pending = 0;
    if (abort) abort(t->abort_arg);
    t->resume_marker = 1;
    t->state = T_WAITING; /* the abort function must not have woken it */
    make_ready(t, 0);
}

void task_set_quiet(task_t *t)
{
    t->error_delivered = 1;
}

void task_push_traceback(lua_State *L, task_t *t)
{
    if (t->state != T_DONE || t->outcome != R_FAILED || t->lost) {
        lua_pushnil(L);
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->result_ref);
    lua_getfield(L, -1, "traceback");
    lua_remove(L, -2);
}

int task_state(task_t *t)
{
    if (t->state != T_DONE) return 0;
    return t->outcome == R_OK ? 1 : t->outcome == R_FAILED ? 2 : 3;
}

static void abort_join(void *arg)
{
    struct joiner *j = arg;
    if (j->prev)
        j->prev->next = j->next;
    else
        j->target->joiners = j->next;
    if (j->next) j->next->prev = j->prev;
    free(j);
}

int task_join(sched_t *s, lua_State *L, task_t *target)
{
    if (target->state == T_DONE) {
        target->error_delivered = 1;
        int n = outcome_count(L, target);
        push_outcome(L, target);
        return n;
    }
    task_t *me = task_waitable(s, L, "join");
    if (me == target) return luaL_error(L, "join: a task cannot join itself");
    struct joiner *j = calloc(1, sizeof(*j));
    if (!j) return luaL_error(L, "join: out of memory");
    j->waiter = me;
    j->target = target;
    j->next = target->joiners;
    if (target->joiners) target->joiners->prev = j;
    target->joiners = j;
    task_wait(me, abort_join, j);
    return lua_yield(L, 0);
}

void sched_begin(sched_t *s)
{
    s->cancel_rounds = 0;
}

int sched_step(sched_t *s, int block)
{
    int rc = loop_run_once(s->loop, block);
    if (rc != 0) return rc < 0 ? -1 : 1;
    /* As sched_run: nothing left to wait for, so tasks still blocked are cancelled
     * (their cleanup runs on the next steps), a bounded number of times. */
    if (!s->live || s->cancel_rounds >= SCHED_CANCEL_ROUNDS) return 0;
    s->cancel_rounds++;
    for (task_t *t = s->live; t; t = t->live_next)
        task_cancel(t);
    return 1;
}

int sched_run(sched_t *s)
{
    /* When nothing is left to wait for, tasks still blocked (on a queue nobody will
     * fill, say) can never go on: cancel them so their cleanup runs, and run again.
     * A task that swallows the cancellation and blocks again is cancelled again, a
     * bounded number of times. */
    for (int round = 0; round < SCHED_CANCEL_ROUNDS; round++) {
        int err = loop_run(s->loop);
        if (err) return err;
        if (!s->live) return 0;
        for (task_t *t = s->live; t; t = t->live_next)
            task_cancel(t);
    }
    return 0;
}
