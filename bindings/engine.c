/* engine.c: the embedding API of luacrawl.h. Scripts start and end through the Lua
 * modules luacrawl.cli (lc_engine_main) and luacrawl.embed (everything else), so
 * the binary and embedders behave alike; the run itself is the scheduler's, turned
 * one step at a time by the host or by lc_engine_run_file. */
#include "luacrawl.h"
#include "lua_aux.h"
#include "lua_signal.h"
#include "proc_limits.h"

#include <errno.h>
#include <lualib.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* lc_engine_stop may run in a signal handler: its counter must be lock-free. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "lc_engine_stop needs a lock-free atomic int");

int luaopen_luacrawl(lua_State *L);

/* A C function registered as lc.host.NAME: the closure's upvalue. */
struct host_fn {
    struct host_fn *next;
    lc_engine *e;
    lc_host_fn fn;
    void *ud;
};

struct lc_engine {
    lua_State *L;
    lc_state_t *st;
    int embed_ref;   /* require "luacrawl.embed" */
    int step_ref;    /* step_p, a C function in the registry (no closure per step) */
    int main_ref;    /* the running script's main task, LUA_NOREF when none */
    int running;     /* a run was started and has not ended */
    int status;      /* of the last run; -1 before any and while one goes on */
    int in_callback; /* inside a host function, an item or log callback */
    /* lc_engine_stop calls, from any thread or a signal handler; the engine's thread
     * delivers them. The eventfd, watched by the engine's loop, ends a wait in its
     * epoll (the host's poll of lc_engine_fd, lc_engine_run_file's own) so that the
     * next step sees them. */
    atomic_uint stops;
    unsigned stops_done; /* of them delivered */
    int wake_fd;
    struct host_fn *fns;
    lc_item_fn item_fn;
    void *item_ud;
    lc_log_fn log_fn;
    void *log_ud;
};

/* ---- messages ---- */

/* Say msg (one or more lines) where the engine's stderr goes. */
static void say(lc_engine *e, const char *msg)
{
    if (!e->log_fn) {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
        return;
    }
    /* One call per line, as the Lua side gives them. */
    char line[1024];
    const char *p = msg;
    e->in_callback++;
    while (*p) {
        size_t n = strcspn(p, "\n");
        if (n < sizeof(line)) {
            memcpy(line, p, n);
            line[n] = '\0';
            e->log_fn(e, line, e->log_ud);
        } else {
            char *big = malloc(n + 1);
            if (big) {
                memcpy(big, p, n);
                big[n] = '\0';
            }
            e->log_fn(e, big ? big : "luacrawl: (a message too long for memory)", e->log_ud);
            free(big);
        }
        p += n;
        if (*p == '\n') p++;
    }
    e->in_callback--;
}

/* Say the error on top of L ("luacrawl: " and its text), popped. */
static void say_error(lc_engine *e)
{
    lua_State *L = e->L;
    const char *msg = lua_tostring(L, -1);
    lua_pushfstring(L, "luacrawl: %s", msg ? msg : "(an error that is not a string)");
    /* A copy: the callback may run Lua (a collection) that moves the stack. */
    char *copy = strdup(lua_tostring(L, -1));
    lua_pop(L, 2);
    say(e, copy ? copy : "luacrawl: out of memory");
    free(copy);
}

/* sched_log_fn: a failed task's report. */
static void sched_say(void *arg, const char *msg)
{
    say(arg, msg);
}

/* ---- creating ---- */

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

static int step_p(lua_State *L);

/* The engine's own pieces: the core's state, luacrawl.embed, the step function. */
static int open_embed(lua_State *L)
{
    lc_engine *e = lua_touserdata(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "luacrawl.core");
    lua_getfield(L, -1, "_state");
    e->st = lua_touserdata(L, -1);
    if (!e->st) return luaL_error(L, "the luacrawl core has no state");
    e->st->hosted = 1;
    lua_pop(L, 2);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl.embed");
    lua_call(L, 1, 1);
    e->embed_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "host");
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "embedded");
    lua_pop(L, 2);
    lua_pushcfunction(L, step_p);
    e->step_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* The wake_fd's watcher: empty it (the stops themselves are counted in e->stops). */
static void on_wake(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)events, (void)arg;
    uint64_t n;
    while (read(fd, &n, sizeof(n)) < 0 && errno == EINTR) {
    }
}

lc_engine *lc_engine_new(void)
{
    lc_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->main_ref = e->embed_ref = e->step_ref = LUA_NOREF;
    e->status = -1;
    e->wake_fd = -1;
    e->L = luaL_newstate();
    if (!e->L) {
        free(e);
        return NULL;
    }
    /* No log callback can be set yet: a failure here goes to stderr. */
    if (lua_cpcall(e->L, open_all, NULL) != 0 || lua_cpcall(e->L, open_embed, e) != 0) {
        fprintf(stderr, "luacrawl: %s\n", lua_tostring(e->L, -1));
        lua_close(e->L);
        free(e);
        return NULL;
    }
    sched_set_log(e->st->sched, sched_say, e);
    e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (e->wake_fd < 0 || loop_watch(e->st->loop, e->wake_fd, LOOP_READ, on_wake, e) != 0) {
        fprintf(stderr, "luacrawl: cannot watch an eventfd: %s\n", strerror(errno));
        lc_engine_free(e);
        return NULL;
    }
    return e;
}

void lc_engine_free(lc_engine *e)
{
    if (!e) return;
    lua_close(e->L);
    if (e->wake_fd >= 0) close(e->wake_fd);
    while (e->fns) {
        struct host_fn *f = e->fns;
        e->fns = f->next;
        free(f);
    }
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

/* Call embed[fn] with the nargs values on top of L in protected mode, leaving nres
 * results: 0, or -1 after saying the error (nothing left on the stack). */
static int call_embed(lc_engine *e, const char *fn, int nargs, int nres)
{
    lua_State *L = e->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->embed_ref);
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    lua_insert(L, -1 - nargs);
    if (lua_pcall(L, nargs, nres, 0) == 0) return 0;
    say_error(e);
    return -1;
}

/* ---- running ---- */

/* The run has ended, or its loop cannot wait (loop_failed, errno saying why): its
 * status, from embed.finish(main task | nil, why | nil). */
static void finish(lc_engine *e, int loop_failed)
{
    lua_State *L = e->L;
    if (loop_failed) {
        lua_pushnil(L);
        lua_pushfstring(L, "run stopped: the event loop cannot wait (epoll_wait: %s)",
                        strerror(errno));
    } else {
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->main_ref);
        lua_pushnil(L);
    }
    e->status = 1;
    if (call_embed(e, "finish", 2, 1) == 0) {
        if (lua_isnumber(L, -1)) e->status = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    luaL_unref(L, LUA_REGISTRYINDEX, e->main_ref);
    e->main_ref = LUA_NOREF;
    e->running = 0;
}

/* The main task from embed.start_file/start_string on top of L (nil: not loaded). */
static int begin(lc_engine *e, int loaded)
{
    lua_State *L = e->L;
    if (loaded != 0 || lua_isnil(L, -1)) {
        if (loaded == 0) lua_pop(L, 1);
        e->status = 1;
        return -1;
    }
    e->main_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    e->running = 1;
    e->status = -1;
    e->stops_done = atomic_load(&e->stops); /* a stop asked before this run is not this run's */
    return 0;
}

static int can_start(lc_engine *e, const char *what)
{
    if (e->in_callback) return 0;
    if (!e->running) return 1;
    char msg[128];
    snprintf(msg, sizeof(msg), "luacrawl: %s: a run is already going on", what);
    say(e, msg);
    return 0;
}

int lc_engine_start_file(lc_engine *e, const char *path, int argc, char **argv)
{
    if (!can_start(e, "lc_engine_start_file")) return -1;
    if (!path) {
        say(e, "luacrawl: lc_engine_start_file: no script path");
        e->status = 1;
        return -1;
    }
    lua_State *L = e->L;
    lua_pushstring(L, path);
    if (!argv || argc < 0) argc = 0;
    lua_createtable(L, argc, 0);
    for (int i = 0; i < argc && argv[i]; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return begin(e, call_embed(e, "start_file", 2, 1));
}

int lc_engine_start_string(lc_engine *e, const char *chunk, const char *name)
{
    if (!can_start(e, "lc_engine_start_string")) return -1;
    if (!chunk) {
        say(e, "luacrawl: lc_engine_start_string: no chunk");
        e->status = 1;
        return -1;
    }
    lua_pushstring(e->L, chunk);
    lua_pushstring(e->L, name ? name : "=chunk");
    return begin(e, call_embed(e, "start_string", 2, 1));
}

int lc_engine_fd(lc_engine *e)
{
    return loop_fd(e->st->loop);
}

int lc_engine_timeout_ms(lc_engine *e)
{
    if (!e->running || atomic_load(&e->stops) != e->stops_done) return 0;
    return loop_timeout_ms(e->st->loop);
}

struct step_args {
    lc_engine *e;
    int block;
    int rc;
    int err; /* errno of a failed wait */
};

/* step_p(args): deliver what lc_engine_stop asked, then one turn of the loop, in
 * protected mode (an error raised from a deferred call unwinds to here). */
static int step_p(lua_State *L)
{
    struct step_args *a = lua_touserdata(L, 1);
    lc_engine *e = a->e;
    while (e->stops_done != atomic_load(&e->stops)) {
        e->stops_done++;
        lc_signals_deliver(L, e->st, SIGINT);
    }
    a->rc = sched_step(e->st->sched, a->block);
    a->err = errno;
    return 0;
}

static int step(lc_engine *e, int block)
{
    if (e->in_callback) return -1;
    if (!e->running) return 0;
    lua_State *L = e->L;
    struct step_args a = {e, block, 1, 0};
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->step_ref);
    lua_pushlightuserdata(L, &a);
    if (lua_pcall(L, 1, 0, 0) != 0) {
        /* What core.run's caller would have got: the run ends with it. */
        say_error(e);
        finish(e, 0);
        e->status = 1;
        return 0;
    }
    if (a.rc > 0) return 1;
    errno = a.err;
    finish(e, a.rc < 0);
    return 0;
}

int lc_engine_step(lc_engine *e)
{
    return step(e, 0);
}

int lc_engine_done(lc_engine *e)
{
    return !e->running;
}

int lc_engine_status(lc_engine *e)
{
    return e->running ? -1 : e->status;
}

int lc_engine_run_file(lc_engine *e, const char *path, int argc, char **argv)
{
    if (lc_engine_start_file(e, path, argc, argv) != 0) return 1;
    /* The same steps a host takes, each waiting in the engine's own epoll. */
    while (step(e, 1) > 0) {
    }
    return e->status;
}

/* Any thread, or a signal handler: an atomic add and write(2) are all it does. */
void lc_engine_stop(lc_engine *e)
{
    int saved = errno;
    atomic_fetch_add(&e->stops, 1);
    uint64_t one = 1;
    /* EAGAIN (the counter is full) leaves the fd readable: the wait ends all the same. */
    ssize_t n = write(e->wake_fd, &one, sizeof(one));
    (void)n;
    errno = saved;
}

/* ---- host functions ---- */

/* lc.host.NAME(value) -> value */
static int host_call(lua_State *L)
{
    struct host_fn *f = lua_touserdata(L, lua_upvalueindex(1));
    lc_engine *e = f->e;
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "luacrawl.core");
    lua_getfield(L, -1, "json_encode");
    if (lua_isnil(L, 1)) {
        lua_getfield(L, -2, "json_null");
        lua_replace(L, 1);
    }
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1); /* raises for a value JSON cannot hold */
    char *result = NULL;
    e->in_callback++;
    int rc = f->fn(e, lua_tostring(L, -1), &result, f->ud);
    e->in_callback--;
    if (rc != 0) {
        lua_pushstring(L, result ? result : "the host's function failed");
        free(result);
        return lua_error(L);
    }
    if (!result) return 0;
    lua_getfield(L, 2, "json_decode"); /* the stack: value, core, its JSON text */
    lua_pushstring(L, result);
    free(result);
    lua_call(L, 1, 1);
    return 1;
}

static int valid_name(const char *name)
{
    if (!name || !*name || *name == '_' || strcmp(name, "expose") == 0 ||
        strcmp(name, "embedded") == 0)
        return 0;
    for (const char *p = name; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9')))
            return 0;
    return !(*name >= '0' && *name <= '9');
}

static int register_p(lua_State *L)
{
    struct host_fn *f = lua_touserdata(L, 1);
    const char *name = lua_tostring(L, 2);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "host");
    lua_pushlightuserdata(L, f);
    lua_pushcclosure(L, host_call, 1);
    lua_setfield(L, -2, name);
    return 0;
}

int lc_engine_register(lc_engine *e, const char *name, lc_host_fn fn, void *userdata)
{
    if (!valid_name(name) || !fn || e->in_callback) return -1;
    struct host_fn *f = calloc(1, sizeof(*f));
    if (!f) return -1;
    f->e = e;
    f->fn = fn;
    f->ud = userdata;
    lua_pushcfunction(e->L, register_p);
    lua_pushlightuserdata(e->L, f);
    lua_pushstring(e->L, name);
    if (lua_pcall(e->L, 2, 0, 0) != 0) {
        lua_pop(e->L, 1);
        free(f);
        return -1;
    }
    /* Kept until the engine is freed: a replaced function's closure may still be
     * held by the script. */
    f->next = e->fns;
    e->fns = f;
    return 0;
}

static char *dup_top(lua_State *L)
{
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (!s) s = "(an error without a message)", len = strlen(s);
    char *copy = malloc(len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

int lc_engine_call(lc_engine *e, const char *fn, const char *args, char **result)
{
    if (result) *result = NULL;
    if (e->in_callback || !fn) {
        if (result)
            *result = strdup(fn ? "lc_engine_call from inside a callback of the engine"
                                : "lc_engine_call: no function name");
        return -1;
    }
    lua_State *L = e->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->embed_ref);
    lua_getfield(L, -1, "call");
    lua_remove(L, -2);
    lua_pushstring(L, fn);
    if (args)
        lua_pushstring(L, args);
    else
        lua_pushnil(L);
    lua_pushcfunction(L, traceback);
    lua_insert(L, -4);
    int rc = lua_pcall(L, 2, 1, -4) == 0 ? 0 : -1;
    if (result) *result = dup_top(L);
    lua_pop(L, 2);
    return rc;
}

/* ---- items and messages ---- */

/* deliver(text): an item, as JSON text, for the host's callback. */
static int item_deliver(lua_State *L)
{
    lc_engine *e = lua_touserdata(L, lua_upvalueindex(1));
    size_t len;
    const char *json = luaL_checklstring(L, 1, &len);
    if (!e->item_fn) return 0;
    e->in_callback++;
    e->item_fn(e, json, len, e->item_ud);
    e->in_callback--;
    return 0;
}

/* deliver(line): a line for the host's log callback. */
static int log_deliver(lua_State *L)
{
    lc_engine *e = lua_touserdata(L, lua_upvalueindex(1));
    const char *line = luaL_checkstring(L, 1);
    if (!e->log_fn) return 0;
    e->in_callback++;
    e->log_fn(e, line, e->log_ud);
    e->in_callback--;
    return 0;
}

/* embed[fn](deliver or nil), where deliver is a closure over e. */
static void set_sink(lc_engine *e, const char *fn, lua_CFunction deliver, int on)
{
    if (on) {
        lua_pushlightuserdata(e->L, e);
        lua_pushcclosure(e->L, deliver, 1);
    } else {
        lua_pushnil(e->L);
    }
    call_embed(e, fn, 1, 0);
}

void lc_engine_on_item(lc_engine *e, lc_item_fn cb, void *userdata)
{
    e->item_fn = cb;
    e->item_ud = userdata;
    set_sink(e, "item_sink", item_deliver, cb != NULL);
}

void lc_engine_on_log(lc_engine *e, lc_log_fn cb, void *userdata)
{
    e->log_fn = cb;
    e->log_ud = userdata;
    set_sink(e, "log_to", log_deliver, cb != NULL);
}

/* ---- the command line ---- */

/* require("luacrawl.cli")[fn](args...) -> exit status */
static int call_cli(lc_engine *e, const char *fn, int argc, char **argv)
{
    lua_State *L = e->L;
    lua_pushcfunction(L, traceback);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luacrawl.cli");
    if (lua_pcall(L, 1, 1, -3) != 0) goto fail;
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    if (argc < 0) argc = 0;
    lua_createtable(L, argc, 0);
    for (int i = 0; i < argc && argv[i]; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    if (lua_pcall(L, 1, 1, -3) != 0) goto fail;
    int status = (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
    return status;
fail:
    say_error(e);
    lua_pop(L, 1);
    return 1;
}

int lc_engine_main(lc_engine *e, int argc, char **argv)
{
    /* The luacrawl binary: the process is ours, and SIGINT stops a crawl. */
    e->st->hosted = 0;
    lua_getglobal(e->L, "require");
    lua_pushliteral(e->L, "luacrawl");
    if (lua_pcall(e->L, 1, 1, 0) == 0) {
        lua_getfield(e->L, -1, "host");
        if (lua_istable(e->L, -1)) {
            lua_pushboolean(e->L, 0);
            lua_setfield(e->L, -2, "embedded");
        }
        lua_pop(e->L, 1);
    }
    lua_pop(e->L, 1);
    if (argc < 1 || !argv) return call_cli(e, "main", 0, NULL);
    return call_cli(e, "main", argc - 1, argv + 1);
}
