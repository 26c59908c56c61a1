/* lua_redis.c: Redis connections for Lua, over redis.c. core.redis_open starts a
 * connection and gives its userdata; its methods wait for the connect, send one
 * command or a pipeline of them and yield the calling task until the replies are
 * in; lua/luacrawl/redis.lua builds lc.redis (URLs, AUTH, SELECT, scripts) on them.
 *
 * A waiting call is an op: the commands it sent, the task, and for a pipeline the
 * table the replies go into. Each reply is converted as it comes, in protected mode
 * on the scheduler's state (it allocates), and the task is woken with the result
 * when the last one is in. A task cancelled while waiting cancels its commands in
 * redis.c, whose callbacks then never come: the op is freed at once. */
#include "lua_check.h"
#include "lua_aux.h"
#include "redis.h"
#include "lua_redis.h"
#include "lua_libs.h"

#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char CONN_METATABLE[] = "luacrawl.redis";

#define MAX_DEPTH 64     /* nested arrays a reply may have (hiredis 0.14 allows 7) */
#define BUILD_TRIES 4    /* a conversion that failed: a __gc's error or out of memory */
#define MAX_ARGS 1000000 /* arguments of one command */

/* The state's connections and what their deliveries need, made on first use. */
struct lc_redis {
    struct conn *conns; /* open ones, closed at the state's end (lc_redis_free) */
    int build_ref;      /* the converter below, as a Lua function */
    int oom_ref;        /* the error a conversion that ran out of memory gives */
    int ending;         /* the state is going: deliver nothing */
};

struct conn {
    redis_t *r; /* NULL once closed */
    lc_state_t *st;
    struct conn *prev, *next;
    task_t *connect_waiter;
    char label[80]; /* "redis 127.0.0.1:6379", for messages */
};

struct op {
    lc_state_t *st;
    redis_t *r;
    task_t *task;
    const char *label; /* the connection's: the waiting task holds it */
    int n, got;        /* commands; replies (or failures) in so far */
    int pipeline;      /* the replies go to the table results_ref, not the task */
    int results_ref;
    enum redis_fail fail; /* the first failure of the connection met */
    char fail_msg[256];
    redis_cmd_t *cmds[];
};

/* What the converter is asked to build. */
enum build_what { BUILD_REPLY, BUILD_ENTRY, BUILD_FAIL, BUILD_TABLE, BUILD_CONNECTED };

struct build {
    enum build_what what;
    lc_state_t *st;
    struct op *op;
    const redis_reply_t *reply;
    const char *label;
    enum redis_fail fail;
    const char *message;
    lua_State *co; /* the task's thread, where the results go */
    int nresults;
};

static struct lc_redis *get_redis(lua_State *L, lc_state_t *st);

/* ---- errors ---- */

static const char *fail_kind(enum redis_fail code)
{
    switch (code) {
    case REDIS_F_TIMEOUT:
        return "timeout";
    case REDIS_F_PROTOCOL:
        return "protocol";
    case REDIS_F_MEMORY:
        return "memory";
    default: /* refused, reset, closed by either side */
        return "connect";
    }
}

static void push_fail(lua_State *L, lc_state_t *st, const char *label, enum redis_fail code,
                      const char *message)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", label, message);
    lc_push_error(L, st, fail_kind(code), lua_tostring(L, -1));
    lua_remove(L, -2);
}

/* An error reply: kind "redis", the server's words as the message, and its first
 * word (ERR, WRONGTYPE, NOSCRIPT, ...) as err.code. */
static void push_error_reply(lua_State *L, lc_state_t *st, const redis_reply_t *reply)
{
    size_t len;
    const char *s = redis_reply_string(reply, &len);
    lua_pushlstring(L, s, len);
    lc_push_error(L, st, "redis", lua_tostring(L, -1));
    lua_remove(L, -2);
    size_t word = strcspn(s, " ");
    lua_pushlstring(L, s, word);
    lua_setfield(L, -2, "code");
}

/* ---- replies to Lua values ---- */

/* status and strings: strings; integers: numbers; nil: nil at the top, false in an
 * array (as Redis's own Lua scripting has it, so that arrays have no holes);
 * arrays: tables; an error reply inside an array: an error object. */
static void push_reply(lua_State *L, lc_state_t *st, const redis_reply_t *reply, int depth)
{
    size_t len;
    const char *s;
    switch (redis_reply_type(reply)) {
    case REDIS_T_STRING:
    case REDIS_T_STATUS:
        s = redis_reply_string(reply, &len);
        lua_pushlstring(L, s, len);
        break;
    case REDIS_T_INTEGER:
        lua_pushnumber(L, (lua_Number)redis_reply_integer(reply));
        break;
    case REDIS_T_ERROR:
        push_error_reply(L, st, reply);
        break;
    case REDIS_T_ARRAY: {
        if (depth >= MAX_DEPTH || !lua_checkstack(L, 4))
            luaL_error(L, "redis: reply nested too deep");
        size_t n = redis_reply_count(reply);
        lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
        for (size_t i = 0; i < n; i++) {
            const redis_reply_t *e = redis_reply_element(reply, i);
            if (redis_reply_type(e) == REDIS_T_NIL)
                lua_pushboolean(L, 0);
            else
                push_reply(L, st, e, depth + 1);
            lua_rawseti(L, -2, (int)i + 1);
        }
        break;
    }
    default:
        lua_pushnil(L);
        break;
    }
}

/* core's converter, run by deliver in protected mode with a struct build. It moves
 * what the task gets onto the task's thread as its last step, whole or not at all. */
static int build(lua_State *L)
{
    struct build *b = lua_touserdata(L, 1);
    lc_state_t *st = b->st;
    int n = 0;
    switch (b->what) {
    case BUILD_REPLY: /* one command's reply, for the task */
        if (redis_reply_type(b->reply) == REDIS_T_ERROR) {
            lua_pushnil(L);
            push_error_reply(L, st, b->reply);
            n = 2;
        } else {
            push_reply(L, st, b->reply, 0);
            n = 1;
        }
        break;
    case BUILD_ENTRY: /* a pipeline's reply, into its table: nothing for the task yet */
        lua_rawgeti(L, LUA_REGISTRYINDEX, b->op->results_ref);
        if (redis_reply_type(b->reply) == REDIS_T_NIL)
            lua_pushboolean(L, 0);
        else
            push_reply(L, st, b->reply, 0);
        lua_rawseti(L, -2, b->op->got + 1);
        return 0;
    case BUILD_TABLE: /* the pipeline's table, complete */
        lua_rawgeti(L, LUA_REGISTRYINDEX, b->op->results_ref);
        lua_pushinteger(L, b->op->n);
        lua_setfield(L, -2, "n");
        n = 1;
        break;
    case BUILD_FAIL:
        push_fail(L, st, b->label, b->fail, b->message);
        n = 2;
        break;
    case BUILD_CONNECTED:
        lua_pushboolean(L, 1);
        n = 1;
        break;
    }
    lua_xmove(L, b->co, n);
    b->nresults = n;
    return 0;
}

/* Run the converter on b; what it handed to the task, or when it failed every
 * time (out of memory; an error a finalizer raised in an allocation is worth
 * another try), nil and the out-of-memory error made beforehand. */
static int deliver(lc_state_t *st, struct build *b)
{
    struct lc_redis *lr = st->redis;
    lua_State *L = st->L;
    for (int i = 0; i < BUILD_TRIES; i++) {
        b->nresults = 0;
        lua_rawgeti(L, LUA_REGISTRYINDEX, lr->build_ref);
        lua_pushlightuserdata(L, b);
        if (lua_pcall(L, 1, 0, 0) == 0) return b->nresults;
        lua_pop(L, 1);
    }
    if (b->what == BUILD_ENTRY) return -1;
    lua_pushnil(b->co);
    lua_rawgeti(b->co, LUA_REGISTRYINDEX, lr->oom_ref);
    return 2;
}

/* ---- ops ---- */

static void free_op(struct op *op)
{
    if (op->results_ref != LUA_NOREF && !op->st->redis->ending)
        luaL_unref(op->st->L, LUA_REGISTRYINDEX, op->results_ref);
    free(op);
}

/* The last reply is in: wake the task with the table, or with the failure. */
static void finish_pipeline(struct op *op)
{
    struct build b = {.st = op->st, .op = op, .co = task_thread(op->task), .label = op->label};
    if (op->fail != REDIS_F_NONE) {
        b.what = BUILD_FAIL;
        b.fail = op->fail;
        b.message = op->fail_msg;
    } else {
        b.what = BUILD_TABLE;
    }
    task_wake(op->task, deliver(op->st, &b));
    free_op(op);
}

/* redis_reply_fn of every command: replies come in the order sent, so this is
 * the reply of op's command number op->got. */
static void on_reply(void *arg, const redis_reply_t *reply, const redis_error_t *err)
{
    struct op *op = arg;
    op->cmds[op->got] = NULL;
    if (op->st->redis->ending) { /* the state is going: no task to tell */
        if (++op->got == op->n) free_op(op);
        return;
    }
    if (err && op->fail == REDIS_F_NONE) {
        op->fail = err->code;
        snprintf(op->fail_msg, sizeof(op->fail_msg), "%s", err->message);
    }
    struct build b = {
        .st = op->st, .op = op, .reply = reply, .co = task_thread(op->task), .label = op->label};
    if (!op->pipeline) {
        if (reply) {
            b.what = BUILD_REPLY;
        } else { /* redis.c gives one of the two */
            b.what = BUILD_FAIL;
            b.fail = op->fail;
            b.message = op->fail_msg;
        }
        op->got++;
        task_wake(op->task, deliver(op->st, &b));
        free_op(op);
        return;
    }
    if (reply && op->fail == REDIS_F_NONE) {
        b.what = BUILD_ENTRY;
        if (deliver(op->st, &b) < 0) {
            op->fail = REDIS_F_MEMORY;
            snprintf(op->fail_msg, sizeof(op->fail_msg), "out of memory converting a reply");
        }
    }
    if (++op->got == op->n) finish_pipeline(op);
}

/* task_wait's abort: the task was cancelled. Its commands' replies will be read
 * and dropped by redis.c; nothing refers to op after this. */
static void op_abort(void *arg)
{
    struct op *op = arg;
    for (int i = op->got; i < op->n; i++)
        if (op->cmds[i]) redis_cancel(op->r, op->cmds[i]);
    free_op(op);
}

/* ---- sending ----
 *
 * Every command of a call is checked before the first is sent: once one is with
 * redis.c, its callback refers to the op, and an error raised then would leave the
 * op to a callback with no task. Sending itself raises nothing: the arguments are
 * read without allocating in Lua (strings stay in their tables, numbers are written
 * into C memory). */

/* The number of arguments of the command table at idx (its field n, or its length),
 * raising unless each is a string or a number. */
static int check_command(lua_State *L, int idx, int cmd)
{
    lua_getfield(L, idx, "n");
    int n = lua_isnumber(L, -1) ? (int)lua_tointeger(L, -1) : (int)lua_objlen(L, idx);
    lua_pop(L, 1);
    if (n < 1 || n > MAX_ARGS) luaL_error(L, "redis: command %d has %d arguments", cmd, n);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        int t = lua_type(L, -1);
        if (t == LUA_TNUMBER && !isfinite(lua_tonumber(L, -1)))
            luaL_error(L, "redis: command %d, argument %d: %f is not a number Redis takes", cmd, i,
                       lua_tonumber(L, -1));
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            luaL_error(L, "redis: command %d, argument %d: a string or a number expected, got %s",
                       cmd, i, lua_typename(L, t));
        lua_pop(L, 1);
    }
    return n;
}

#define NUM_LEN 32 /* a number's text: "%lld" or "%.17g" */

/* Send the n arguments of the (checked) command table at idx, op its callback's
 * argument. Numbers are written whole when they are integers (Lua's "%.14g" would
 * make 10^15 "1e+15"). 0, or -1 when it could not be sent: the connection has
 * failed (redis_failure) or memory ran out. */
static int send_command(lua_State *L, struct op *op, int idx, int n)
{
    size_t each = sizeof(char *) + sizeof(size_t) + NUM_LEN;
    char *mem = malloc((size_t)n * each);
    if (!mem) return -1;
    const char **argv = (const char **)(void *)mem;
    size_t *lens = (size_t *)(void *)(mem + (size_t)n * sizeof(char *));
    char *nums = mem + (size_t)n * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        if (lua_type(L, -1) == LUA_TNUMBER) {
            double d = lua_tonumber(L, -1);
            char *buf = nums + (size_t)i * NUM_LEN;
            if (d == floor(d) && fabs(d) < 9.2e18)
                snprintf(buf, NUM_LEN, "%lld", (long long)d);
            else
                snprintf(buf, NUM_LEN, "%.17g", d);
            argv[i] = buf;
            lens[i] = strlen(buf);
        } else { /* a string: its table keeps it alive after the pop */
            argv[i] = lua_tolstring(L, -1, &lens[i]);
        }
        lua_pop(L, 1);
    }
    redis_cmd_t *c = redis_command(op->r, n, argv, lens, on_reply, op);
    free(mem);
    if (!c) return -1;
    op->cmds[op->n++] = c;
    return 0;
}

/* Raise for commands that redis.c refuses whatever the connection's state. */
static void check_paired(lua_State *L, int idx, int cmd)
{
    static const char *const unpaired[] = {"subscribe", "psubscribe", "unsubscribe", "punsubscribe",
                                           "monitor"};
    lua_rawgeti(L, idx, 1);
    const char *name = lua_tostring(L, -1);
    for (size_t i = 0; name && i < sizeof(unpaired) / sizeof(unpaired[0]); i++)
        if (strcasecmp(name, unpaired[i]) == 0)
            luaL_error(L,
                       "redis: command %d: %s is not supported (its replies do not pair with "
                       "commands)",
                       cmd, name);
    lua_pop(L, 1);
}

static struct conn *check_conn(lua_State *L)
{
    struct conn *c = lc_toudata_either(L, 1, CONN_METATABLE, NULL);
    if (!c) luaL_typerror(L, 1, "redis connection");
    if (!c->r) luaL_error(L, "redis: the connection is closed");
    return c;
}

static struct op *new_op(lua_State *L, struct conn *c, int ncmds, int pipeline)
{
    struct op *op = calloc(1, sizeof(*op) + (size_t)ncmds * sizeof(redis_cmd_t *));
    if (!op) luaL_error(L, "redis: out of memory");
    op->st = c->st;
    op->r = c->r;
    op->label = c->label;
    op->pipeline = pipeline;
    op->results_ref = LUA_NOREF;
    return op;
}

/* Give up an op that could not send everything: its sent commands are cancelled,
 * and the caller gets the connection's failure (or out of memory). */
static int send_failed(lua_State *L, struct conn *c, struct op *op)
{
    op_abort(op);
    const redis_error_t *e = redis_failure(c->r);
    if (e)
        push_fail(L, c->st, c->label, e->code, e->message);
    else
        push_fail(L, c->st, c->label, REDIS_F_MEMORY, "out of memory sending the command");
    return 2;
}

static int wait_op(lua_State *L, task_t *t, struct op *op)
{
    op->task = t;
    task_wait(t, op_abort, op);
    return lua_yield(L, 0);
}

/* conn:call(argv) -> reply | nil, err. argv: the command and its arguments (argv.n
 * counts them if there are nils among them: an error). */
static int l_redis_call(lua_State *L)
{
    struct conn *c = check_conn(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    task_t *t = task_waitable(c->st->sched, L, "redis call");
    int n = check_command(L, 2, 1);
    check_paired(L, 2, 1);
    struct op *op = new_op(L, c, 1, 0);
    if (send_command(L, op, 2, n) != 0) return send_failed(L, c, op);
    return wait_op(L, t, op);
}

/* conn:pipeline(cmds) -> {replies..., n = #cmds} | nil, err */
static int l_redis_pipeline(lua_State *L)
{
    struct conn *c = check_conn(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    task_t *t = task_waitable(c->st->sched, L, "redis pipeline");
    int ncmds = (int)lua_objlen(L, 2);
    luaL_checkstack(L, 4, "redis pipeline");
    for (int i = 1; i <= ncmds; i++) {
        lua_rawgeti(L, 2, i);
        if (!lua_istable(L, -1))
            luaL_error(L, "redis: pipeline entry %d is not a table of arguments", i);
        check_command(L, lua_gettop(L), i);
        check_paired(L, lua_gettop(L), i);
        lua_pop(L, 1);
    }
    lua_createtable(L, ncmds, 1);
    if (ncmds == 0) {
        lua_pushinteger(L, 0);
        lua_setfield(L, -2, "n");
        return 1;
    }
    int ref = luaL_ref(L, LUA_REGISTRYINDEX); /* these may raise: nothing is sent yet */
    struct op *op = new_op(L, c, ncmds, 1);
    op->results_ref = ref;
    for (int i = 1; i <= ncmds; i++) {
        lua_rawgeti(L, 2, i);
        lua_getfield(L, -1, "n");
        int n = lua_isnumber(L, -1) ? (int)lua_tointeger(L, -1) : (int)lua_objlen(L, -2);
        lua_pop(L, 1);
        int rc = send_command(L, op, lua_gettop(L), n);
        lua_pop(L, 1);
        if (rc != 0) return send_failed(L, c, op);
    }
    return wait_op(L, t, op);
}

/* ---- connections ---- */

static void connect_abort(void *arg)
{
    struct conn *c = arg;
    c->connect_waiter = NULL;
}

/* redis_connect_fn */
static void on_connected(void *arg, const redis_error_t *err)
{
    struct conn *c = arg;
    task_t *t = c->connect_waiter;
    if (!t || c->st->redis->ending) return;
    c->connect_waiter = NULL;
    struct build b = {.st = c->st, .co = task_thread(t), .label = c->label};
    if (err) {
        b.what = BUILD_FAIL;
        b.fail = err->code;
        b.message = err->message;
    } else {
        b.what = BUILD_CONNECTED;
    }
    task_wake(t, deliver(c->st, &b));
}

/* conn:wait() -> true | nil, err: once the connection is up (or has failed). */
static int l_redis_wait(lua_State *L)
{
    struct conn *c = check_conn(L);
    const redis_error_t *e = redis_failure(c->r);
    if (e) {
        push_fail(L, c->st, c->label, e->code, e->message);
        return 2;
    }
    if (redis_ready(c->r)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    task_t *t = task_waitable(c->st->sched, L, "redis connect");
    if (c->connect_waiter) return luaL_error(L, "redis: another task waits for this connect");
    c->connect_waiter = t;
    task_wait(t, connect_abort, c);
    return lua_yield(L, 0);
}

static void unlink_conn(struct conn *c)
{
    struct lc_redis *lr = c->st->redis;
    if (c->prev)
        c->prev->next = c->next;
    else if (lr->conns == c)
        lr->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

/* conn:close(): pending calls of other tasks end with an error (kind "connect"),
 * and so does a wait for the connect (redis.c does not call back after a close). */
static int l_redis_close(lua_State *L)
{
    struct conn *c = lc_toudata_either(L, 1, CONN_METATABLE, NULL);
    if (!c) return luaL_typerror(L, 1, "redis connection");
    task_t *t = c->connect_waiter;
    if (t) {
        c->connect_waiter = NULL;
        lua_State *co = task_thread(t);
        push_fail(co, c->st, c->label, REDIS_F_CLOSED, "connection closed");
        task_wake(t, 2);
    }
    if (c->r) {
        unlink_conn(c);
        redis_close(c->r);
        c->r = NULL;
    }
    return 0;
}

/* conn:status() -> "connecting" | "ready" | "failed" | "closed", and the failure */
static int l_redis_status(lua_State *L)
{
    struct conn *c = lc_toudata_either(L, 1, CONN_METATABLE, NULL);
    if (!c) return luaL_typerror(L, 1, "redis connection");
    if (!c->r) {
        lua_pushliteral(L, "closed");
        return 1;
    }
    const redis_error_t *e = redis_failure(c->r);
    if (e) {
        lua_pushliteral(L, "failed");
        push_fail(L, c->st, c->label, e->code, e->message);
        lua_remove(L, -2);
        return 2;
    }
    lua_pushstring(L, redis_ready(c->r) ? "ready" : "connecting");
    return 1;
}

static int l_redis_tostring(lua_State *L)
{
    struct conn *c = lc_toudata_either(L, 1, CONN_METATABLE, NULL);
    lua_pushfstring(L, "%s%s", c ? c->label : "redis", c && c->r ? "" : " (closed)");
    return 1;
}

static struct lc_redis *get_redis(lua_State *L, lc_state_t *st)
{
    if (st->redis) return st->redis;
    struct lc_redis *lr = calloc(1, sizeof(*lr));
    if (!lr) luaL_error(L, "redis: out of memory");
    lr->build_ref = lr->oom_ref = LUA_NOREF;
    st->redis = lr;
    lua_pushcfunction(L, build);
    lr->build_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lc_push_error(L, st, "memory", "out of memory converting the reply");
    lr->oom_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return lr;
}

/* core.redis_open(addr, port, connect_timeout, command_timeout) -> conn | nil, err.
 * addr is an IPv4 address (redis.lua resolves names); the connect goes on in the
 * background: conn:wait() waits for it. */
static int l_redis_open(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    const char *addr = luaL_checkstring(L, 1);
    int port = (int)lc_check_integer(L, 2, "redis: port", 1, 65535);
    redis_opts_t opts = {
        .connect_timeout = lc_check_number(L, 3, "redis: connect_timeout", 0, 1e9),
        .command_timeout = lc_check_number(L, 4, "redis: timeout", 0, 1e9),
    };
    struct lc_redis *lr = get_redis(L, st);
    struct conn *c = lua_newuserdata(L, sizeof(*c));
    memset(c, 0, sizeof(*c));
    c->st = st;
    snprintf(c->label, sizeof(c->label), "redis %s:%d", addr, port);
    lc_getmetatable(L, CONN_METATABLE);
    lua_setmetatable(L, -2);
    c->r = redis_connect(st->loop, addr, port, &opts, on_connected, c);
    if (!c->r) {
        int bad = errno == EINVAL;
        return lc_fail(L, st, bad ? "connect" : "memory",
                       bad ? "redis: not an IPv4 address" : "redis: out of memory connecting");
    }
    c->next = lr->conns;
    if (lr->conns) lr->conns->prev = c;
    lr->conns = c;
    return 1;
}

/* conn.__gc: an unreachable connection has no task waiting on it (a waiting task
 * holds it); its cancelled commands' replies need no reader. */
static int l_redis_gc(lua_State *L)
{
    struct conn *c = lua_touserdata(L, 1);
    if (c->r) {
        unlink_conn(c);
        redis_close(c->r);
        c->r = NULL;
    }
    return 0;
}

/* core.sha1_hex(s): the SHA-1 of s in hex, as EVALSHA names scripts. */
static int l_sha1_hex(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(s, len, md, &mdlen, EVP_sha1(), NULL))
        return luaL_error(L, "sha1: libcrypto failed");
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    lua_pushlstring(L, hex, 2 * mdlen);
    return 1;
}

void lc_redis_free(lc_state_t *st)
{
    struct lc_redis *lr = st->redis;
    if (!lr) return;
    lr->ending = 1;
    for (struct conn *c = lr->conns, *next; c; c = next) {
        next = c->next;
        redis_free(c->r); /* pending callbacks run now, and see `ending` */
        c->r = NULL;
        c->prev = c->next = NULL;
    }
    free(lr);
    st->redis = NULL;
}

void lc_register_redis(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"wait", l_redis_wait},   {"call", l_redis_call},     {"pipeline", l_redis_pipeline},
        {"close", l_redis_close}, {"status", l_redis_status}, {NULL, NULL},
    };
    static const luaL_Reg funcs[] = {
        {"redis_open", l_redis_open},
        {"sha1_hex", l_sha1_hex},
        {NULL, NULL},
    };
    static const luaL_Reg meta[] = {
        {"__gc", l_redis_gc}, {"__tostring", l_redis_tostring}, {NULL, NULL}};
    lc_class(L, CONN_METATABLE, meta, methods);
    lc_setfuncs(L, funcs);
}
