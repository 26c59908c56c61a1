/* lua_store.c: core.store_open over store.c, the durable crawl state, and the
 * handles of its queues and seen sets. lc.store.open, lc.queue{store =} and
 * lc.seen{store =} (init.lua) are built on these.
 *
 * A store's userdata owns the store_t; the handles of its queues and seen sets
 * keep it alive (their environment holds it) and check that it is still open. */
#include "lua_check.h"
#include "lua_opts.h"
#include "lua_aux.h"
#include "store.h"
#include "url.h"
#include "lua_seen.h"
#include "lua_libs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char STORE_METATABLE[] = "luacrawl.store";
static const char QUEUE_METATABLE[] = "luacrawl.store_queue";
static const char SEEN_METATABLE[] = "luacrawl.store_seen";
static const char STMT_METATABLE[] = "luacrawl.store_stmt";

#define POP_MAX 256 /* items one pop call hands over */
#define BIND_MAX 32 /* values one statement call binds */

struct store_ud {
    store_t *s; /* NULL once closed */
    lc_state_t *st;
};

struct handle_ud {
    struct store_ud *owner;
    void *obj; /* store_queue_t or store_seen_t, owned by the store */
};

/* Push nil and the error as lc's error object (err.kind, err.message, err.path). */
static int push_fail(lua_State *L, lc_state_t *st, const store_err_t *e, const char *path)
{
    lua_pushnil(L);
    lc_push_error(L, st, store_kind_name(e->kind), e->message);
    if (path) {
        lua_pushstring(L, path);
        lua_setfield(L, -2, "path");
    }
    return 2;
}

/* Raise the error object, for the calls made in the flow of a crawl (push, pop,
 * ack, add): a task that cannot record its work must stop, and its error says why. */
static int raise_err(lua_State *L, struct store_ud *u, const store_err_t *e)
{
    push_fail(L, u->st, e, u->s ? store_path(u->s) : NULL);
    return lua_error(L);
}

static struct store_ud *check_store(lua_State *L)
{
    struct store_ud *u = lc_toudata_either(L, 1, STORE_METATABLE, NULL);
    if (!u) luaL_typerror(L, 1, "store");
    if (!u->s) luaL_error(L, "store: already closed");
    return u;
}

static struct handle_ud *check_handle(lua_State *L, const char *mt, const char *what)
{
    struct handle_ud *h = lc_toudata_either(L, 1, mt, NULL);
    if (!h) luaL_typerror(L, 1, what);
    if (!h->owner->s) luaL_error(L, "%s: its store is closed", what);
    return h;
}

static const lc_opt_t open_list[] = {
    LC_OPT("synchronous", LC_OPT_STRING),
    LC_OPT("check", LC_OPT_ANY),
    LC_OPT_RANGE("max_bytes", LC_OPT_INTEGER, 0, LC_INT_MAX),
    LC_OPT_RANGE("cache_mb", LC_OPT_INTEGER, 0, 1 << 20),
    LC_OPT("read_only", LC_OPT_BOOLEAN),
};

static const lc_opts_t open_opts = {"store.open", "store.open: option '%s'", 0,
                                    sizeof(open_list) / sizeof(open_list[0]), open_list};

/* core.store_open(path[, opts]) -> store | nil, err
 *   opts.synchronous  "normal" (default) or "full"
 *   opts.check        false: no quick_check at open
 *   opts.max_bytes    the database may not grow past this many bytes
 *   opts.cache_mb     SQLite's page cache (default 32)
 *   opts.read_only    true: read a state a crawl may be writing (db:writer()) */
static int l_store_open(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    const char *path = luaL_checkstring(L, 1);
    store_opts_t o = {0};
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        int i = lc_push_opts(L, 2, &open_opts);
        const char *sync = lua_isnil(L, i) ? "normal" : lua_tostring(L, i);
        if (strcmp(sync, "normal") != 0 && strcmp(sync, "full") != 0)
            return luaL_error(L, "store.open: option 'synchronous' must be \"normal\" or \"full\"");
        o.sync_full = strcmp(sync, "full") == 0;
        o.skip_check = lua_type(L, i + 1) == LUA_TBOOLEAN && !lua_toboolean(L, i + 1);
        o.max_bytes = (long long)lua_tonumber(L, i + 2);
        o.cache_kb = (int)lua_tonumber(L, i + 3) * 1024;
        o.read_only = lua_toboolean(L, i + 4);
        lua_settop(L, 2);
    }
    struct store_ud *u = lua_newuserdata(L, sizeof(*u));
    u->s = NULL;
    u->st = st;
    lc_getmetatable(L, STORE_METATABLE);
    lua_setmetatable(L, -2);
    lua_newtable(L); /* the cache of Lua objects made over it (init.lua) */
    lua_setfenv(L, -2);
    store_err_t e;
    u->s = store_open(path, &o, &e);
    if (!u->s) return push_fail(L, st, &e, path);
    return 1;
}

/* db:writer() -> false | pid | true: a read-only store's, whether a crawl had the
 * state open for writing when it was opened (true: one did, its pid not known). */
static int l_store_writer(lua_State *L)
{
    struct store_ud *u = check_store(L);
    long pid;
    if (!store_writer(u->s, &pid))
        lua_pushboolean(L, 0);
    else if (pid > 0)
        lua_pushnumber(L, (lua_Number)pid);
    else
        lua_pushboolean(L, 1);
    return 1;
}

/* db:commit() -> true | nil, err */
static int l_store_commit(lua_State *L)
{
    struct store_ud *u = check_store(L);
    store_err_t e;
    if (store_commit(u->s, &e) != 0) return push_fail(L, u->st, &e, store_path(u->s));
    lua_pushboolean(L, 1);
    return 1;
}

/* db:close() -> true | nil, err: commits, then closes (also after a failed
 * commit). A second close does nothing. */
static int l_store_close(lua_State *L)
{
    struct store_ud *u = lc_toudata_either(L, 1, STORE_METATABLE, NULL);
    if (!u) luaL_typerror(L, 1, "store");
    lua_pushboolean(L, 1);
    if (!u->s) return 1;
    store_err_t e;
    store_t *s = u->s;
    u->s = NULL;
    /* The message names the file: made before the store (and its path) is freed. */
    lua_pushstring(L, store_path(s));
    if (store_close(s, &e) != 0) return push_fail(L, u->st, &e, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
}

/* db:abandon(): close without committing: what was written since the last commit is
 * dropped, as a kill would drop it (a crawl whose outputs no longer match it). */
static int l_store_abandon(lua_State *L)
{
    struct store_ud *u = lc_toudata_either(L, 1, STORE_METATABLE, NULL);
    if (!u) luaL_typerror(L, 1, "store");
    store_abandon(u->s);
    u->s = NULL;
    return 0;
}

/* Collected unclosed: dropped as a kill would drop it, what was not committed lost. */
static int l_store_gc(lua_State *L)
{
    struct store_ud *u = lc_toudata_either(L, 1, STORE_METATABLE, NULL);
    if (u && u->s) {
        store_abandon(u->s);
        u->s = NULL;
    }
    return 0;
}

static int l_store_path(lua_State *L)
{
    lua_pushstring(L, store_path(check_store(L)->s));
    return 1;
}

/* db:bytes() -> bytes of the file and its WAL */
static int l_store_bytes(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)store_file_bytes(check_store(L)->s));
    return 1;
}

/* db:meta(key) -> value | nil (not set) | nil, err */
static int l_store_meta(lua_State *L)
{
    struct store_ud *u = check_store(L);
    const char *key = luaL_checkstring(L, 2);
    char *v;
    size_t len;
    store_err_t e;
    int r = store_meta_get(u->s, key, &v, &len, &e);
    if (r < 0) return push_fail(L, u->st, &e, store_path(u->s));
    if (r == 0) return 0;
    lua_pushlstring(L, v, len);
    free(v);
    return 1;
}

/* db:set_meta(key, value | nil) -> true | nil, err */
static int l_store_set_meta(lua_State *L)
{
    struct store_ud *u = check_store(L);
    const char *key = luaL_checkstring(L, 2);
    size_t len = 0;
    const char *v = lua_isnoneornil(L, 3) ? NULL : luaL_checklstring(L, 3, &len);
    store_err_t e;
    if (store_meta_set(u->s, key, v, len, &e) != 0)
        return push_fail(L, u->st, &e, store_path(u->s));
    lua_pushboolean(L, 1);
    return 1;
}

/* db:_cache() -> the table of Lua objects made over this store (init.lua) */
static int l_store_cache(lua_State *L)
{
    check_store(L);
    lua_getfenv(L, 1);
    return 1;
}

static int l_store_tostring(lua_State *L)
{
    struct store_ud *u = lc_toudata_either(L, 1, STORE_METATABLE, NULL);
    if (!u) luaL_typerror(L, 1, "store");
    if (u->s)
        lua_pushfstring(L, "store (%s)", store_path(u->s));
    else
        lua_pushliteral(L, "store (closed)");
    return 1;
}

/* A handle's userdata for obj, its environment holding the store (index 1). */
static void push_handle(lua_State *L, struct store_ud *u, void *obj, const char *mt)
{
    struct handle_ud *h = lua_newuserdata(L, sizeof(*h));
    h->owner = u;
    h->obj = obj;
    lc_getmetatable(L, mt);
    lua_setmetatable(L, -2);
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_setfenv(L, -2);
}

/* db:queue(name) -> the queue's handle (raises on failure) */
static int l_store_queue(lua_State *L)
{
    struct store_ud *u = check_store(L);
    const char *name = luaL_checkstring(L, 2);
    store_err_t e;
    store_queue_t *q = store_queue(u->s, name, &e);
    if (!q) return raise_err(L, u, &e);
    push_handle(L, u, q, QUEUE_METATABLE);
    return 1;
}

/* db:seen(name) -> the seen set's handle (raises on failure) */
static int l_store_seen(lua_State *L)
{
    struct store_ud *u = check_store(L);
    const char *name = luaL_checkstring(L, 2);
    store_err_t e;
    store_seen_t *set = store_seen(u->s, name, &e);
    if (!set) return raise_err(L, u, &e);
    push_handle(L, u, set, SEEN_METATABLE);
    return 1;
}

/* db:sql(text) -> the statement's handle (prepared once per text; raises on failure) */
static int l_store_sql(lua_State *L)
{
    struct store_ud *u = check_store(L);
    const char *sql = luaL_checkstring(L, 2);
    store_err_t e;
    store_stmt_t *stmt = store_stmt(u->s, sql, &e);
    if (!stmt) return raise_err(L, u, &e);
    push_handle(L, u, stmt, STMT_METATABLE);
    return 1;
}

/* Queue handles ------------------------------------------------------------------- */

/* h:push(item[, text]) -> id. text: stored as text (init.lua's JSON) */
static int l_store_queue_push(lua_State *L)
{
    struct handle_ud *h = check_handle(L, QUEUE_METATABLE, "store queue");
    store_item_t it = {0};
    it.data = luaL_checklstring(L, 2, &it.len);
    it.text = lua_toboolean(L, 3);
    store_err_t e;
    if (store_queue_push(h->obj, &it, 1, &e) != 0) return raise_err(L, h->owner, &e);
    lua_pushnumber(L, (lua_Number)it.id);
    return 1;
}

/* h:pop(max, items, ids, texts) -> n: the n oldest items not taken yet into
 * items[1..n], their ids into ids[1..n], texts[i] true for those pushed as text. */
static int l_store_queue_pop(lua_State *L)
{
    struct handle_ud *h = check_handle(L, QUEUE_METATABLE, "store queue");
    size_t max = (size_t)lc_check_integer(L, 2, "store queue: pop count", 1, POP_MAX);
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_checktype(L, 4, LUA_TTABLE);
    luaL_checktype(L, 5, LUA_TTABLE);
    store_item_t out[POP_MAX];
    size_t n;
    store_err_t e;
    if (store_queue_pop(h->obj, out, max, &n, &e) != 0) return raise_err(L, h->owner, &e);
    for (size_t i = 0; i < n; i++) {
        lua_pushlstring(L, out[i].data, out[i].len);
        lua_rawseti(L, 3, (int)i + 1);
        lua_pushnumber(L, (lua_Number)out[i].id);
        lua_rawseti(L, 4, (int)i + 1);
        lua_pushboolean(L, out[i].text);
        lua_rawseti(L, 5, (int)i + 1);
    }
    lua_pushnumber(L, (lua_Number)n);
    return 1;
}

/* h:ack(id, ...) : the items with these ids are done */
static int l_store_queue_ack(lua_State *L)
{
    struct handle_ud *h = check_handle(L, QUEUE_METATABLE, "store queue");
    int top = lua_gettop(L);
    for (int i = 2; i <= top; i++) {
        int64_t id = (int64_t)lc_check_integer(L, i, "store queue: id", 1, LC_INT_MAX);
        store_err_t e;
        if (store_queue_ack(h->obj, &id, 1, &e) != 0) return raise_err(L, h->owner, &e);
    }
    return 0;
}

/* h:counts() -> ready, pending; 0, 0 once the store is closed (tasks cancelled
 * while they waited on the queue ask it after their crawl closed the store). */
static int l_store_queue_counts(lua_State *L)
{
    struct handle_ud *h = lc_toudata_either(L, 1, QUEUE_METATABLE, NULL);
    if (!h) luaL_typerror(L, 1, "store queue");
    int open = h->owner->s != NULL;
    lua_pushnumber(L, open ? (lua_Number)store_queue_ready(h->obj) : 0);
    lua_pushnumber(L, open ? (lua_Number)store_queue_pending(h->obj) : 0);
    return 2;
}

/* Seen handles -------------------------------------------------------------------- */

/* As lc.seen: the fingerprint of the normalized URL; one with a NUL hashes as given. */
static uint64_t fingerprint(lua_State *L, int idx)
{
    size_t len;
    if (lua_type(L, idx) != LUA_TSTRING) luaL_typerror(L, idx, "string");
    const char *u = lua_tolstring(L, idx, &len);
    return strlen(u) != len ? url_hash(u, len) : url_fingerprint(u);
}

/* set:add(url) -> true when the URL (normalized) was not in the set */
static int l_store_seen_add(lua_State *L)
{
    struct handle_ud *h = check_handle(L, SEEN_METATABLE, "store seen set");
    uint64_t fp = fingerprint(L, 2);
    unsigned char added;
    store_err_t e;
    if (store_seen_add(h->obj, &fp, 1, &added, &e) != 0) return raise_err(L, h->owner, &e);
    lua_pushboolean(L, added);
    return 1;
}

/* set:has(url) -> boolean */
static int l_store_seen_has(lua_State *L)
{
    struct handle_ud *h = check_handle(L, SEEN_METATABLE, "store seen set");
    store_err_t e;
    int r = store_seen_has(h->obj, fingerprint(L, 2), &e);
    if (r < 0) return raise_err(L, h->owner, &e);
    lua_pushboolean(L, r);
    return 1;
}

static int l_store_seen_size(lua_State *L)
{
    struct handle_ud *h = check_handle(L, SEEN_METATABLE, "store seen set");
    lua_pushnumber(L, (lua_Number)store_seen_size(h->obj));
    return 1;
}

static int l_store_seen_tostring(lua_State *L)
{
    struct handle_ud *h = check_handle(L, SEEN_METATABLE, "store seen set");
    lua_pushfstring(L, "seen set (%d URLs, in %s)", (int)store_seen_size(h->obj),
                    store_path(h->owner->s));
    return 1;
}

/* Statement handles --------------------------------------------------------------- */

/* The Lua value at idx as a statement's value: nil, booleans (0/1), numbers (integers
 * when whole), strings (text, pointing into the Lua string). 0, or -1 for another type. */
static int to_value(lua_State *L, int at, store_value_t *v)
{
    memset(v, 0, sizeof(*v));
    switch (lua_type(L, at)) {
    case LUA_TNIL:
        v->type = STORE_NULL;
        break;
    case LUA_TBOOLEAN:
        v->type = STORE_INTEGER;
        v->i = lua_toboolean(L, at);
        break;
    case LUA_TNUMBER: {
        lua_Number x = lua_tonumber(L, at);
        if (x == (lua_Number)(int64_t)x && x >= -9007199254740992.0 && x <= 9007199254740992.0) {
            v->type = STORE_INTEGER;
            v->i = (int64_t)x;
        } else {
            v->type = STORE_REAL;
            v->r = x;
        }
        break;
    }
    case LUA_TSTRING:
        v->type = STORE_TEXT;
        v->p = lua_tolstring(L, at, &v->len);
        break;
    default:
        return -1;
    }
    return 0;
}

/* Bind the arguments from idx on (to_value). */
static void bind_args(lua_State *L, struct handle_ud *h, int idx)
{
    int n = lua_gettop(L) - idx + 1;
    if (n > BIND_MAX) luaL_error(L, "store statement: more than %d values", BIND_MAX);
    store_value_t v[BIND_MAX];
    for (int i = 0; i < n; i++)
        if (to_value(L, idx + i, &v[i]) != 0)
            luaL_argerror(L, idx + i, "nil, a boolean, a number or a string");
    store_err_t e;
    if (store_stmt_bind(h->obj, v, n, &e) != 0) raise_err(L, h->owner, &e);
}

static void push_value(lua_State *L, const store_value_t *v)
{
    switch (v->type) {
    case STORE_INTEGER:
        lua_pushnumber(L, (lua_Number)v->i);
        break;
    case STORE_REAL:
        lua_pushnumber(L, v->r);
        break;
    case STORE_TEXT:
    case STORE_BLOB:
        lua_pushlstring(L, v->p ? v->p : "", v->len);
        break;
    default:
        lua_pushnil(L);
        break;
    }
}

static void push_column(lua_State *L, store_stmt_t *stmt, int i)
{
    store_value_t v;
    store_stmt_column(stmt, i, &v);
    push_value(L, &v);
}

/* Step once; 1 with a row, 0 done (raises on failure). */
static int step(lua_State *L, struct handle_ud *h)
{
    store_err_t e;
    int r = store_stmt_step(h->obj, &e);
    if (r < 0) raise_err(L, h->owner, &e);
    return r;
}

/* stmt:exec(...) -> rows changed, the rowid of the last insert */
static int l_store_stmt_exec(lua_State *L)
{
    struct handle_ud *h = check_handle(L, STMT_METATABLE, "store statement");
    bind_args(L, h, 2);
    while (step(L, h) == 1) {
    }
    lua_pushnumber(L, (lua_Number)store_changes(h->owner->s));
    lua_pushnumber(L, (lua_Number)store_last_id(h->owner->s));
    return 2;
}

/* stmt:exec_many(first, last, col1, ..., colk): the statement run for the rows
 * first..last of the column lists col1..colk (a list may have holes: nil), in one call:
 * the writes a crawl gathered since its last flush (frontier_sqlite.lua), with no call
 * a row. A statement of k * m parameters (INSERT ... VALUES (...), (...), ...) takes m
 * rows a step: rows i..i+m-1 fill its parameters in order; last - first + 1 must then
 * be a multiple of m. Raises as exec does; the rows before a failed step are written
 * (and rolled back with it). */
#define MANY_MAX 512 /* values one step of exec_many binds */
static int l_store_stmt_exec_many(lua_State *L)
{
    struct handle_ud *h = check_handle(L, STMT_METATABLE, "store statement");
    int first = (int)lc_check_integer(L, 2, "store statement: first row", 1, LC_INT_MAX);
    int last = (int)lc_check_integer(L, 3, "store statement: last row", 0, LC_INT_MAX);
    int k = lua_gettop(L) - 3;
    if (k < 1 || k > BIND_MAX) return luaL_error(L, "store statement: 1 to %d columns", BIND_MAX);
    for (int j = 0; j < k; j++)
        luaL_checktype(L, 4 + j, LUA_TTABLE);
    int params = store_stmt_params(h->obj);
    int m = params / k;
    if (m < 1 || m * k != params || params > MANY_MAX)
        return luaL_error(L, "store statement: %d parameters for rows of %d values", params, k);
    if (last >= first && (last - first + 1) % m != 0)
        return luaL_error(L, "store statement: %d rows, not a multiple of %d", last - first + 1, m);
    store_value_t v[MANY_MAX];
    for (int i = first; i <= last; i += m) {
        /* The strings stay reachable from their tables: their pointers live through
         * the step, with nothing allocated meanwhile. */
        for (int r = 0; r < m; r++)
            for (int j = 0; j < k; j++) {
                lua_rawgeti(L, 4 + j, i + r);
                int bad = to_value(L, -1, &v[r * k + j]);
                lua_pop(L, 1);
                if (bad)
                    return luaL_error(L,
                                      "store statement: row %d, value %d: not nil, a boolean, a "
                                      "number or a string",
                                      i + r, j + 1);
            }
        store_err_t e;
        if (store_stmt_run(h->obj, v, params, &e) != 0) return raise_err(L, h->owner, &e);
    }
    return 0;
}

/* stmt:rows(...) -> {{col, ...}, ...}: every row */
static int l_store_stmt_rows(lua_State *L)
{
    struct handle_ud *h = check_handle(L, STMT_METATABLE, "store statement");
    bind_args(L, h, 2);
    lua_newtable(L);
    int n = 0;
    while (step(L, h) == 1) {
        int cols = store_stmt_columns(h->obj);
        lua_createtable(L, cols, 0);
        for (int i = 0; i < cols; i++) {
            push_column(L, h->obj, i);
            lua_rawseti(L, -2, i + 1);
        }
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

/* stmt:records(names, ...) -> {{[names[1]] = col1, ...}, ...}: every row as a table
 * of named fields, a column NULL or without a name (names[i] not a string) left out:
 * rows made into records (requests read back from a state's frontier) with no table a
 * row besides. */
static int l_store_stmt_records(lua_State *L)
{
    struct handle_ud *h = check_handle(L, STMT_METATABLE, "store statement");
    luaL_checktype(L, 2, LUA_TTABLE);
    bind_args(L, h, 3);
    lua_newtable(L);
    int out = lua_gettop(L);
    int n = 0;
    while (step(L, h) == 1) {
        int cols = store_stmt_columns(h->obj);
        lua_createtable(L, 0, cols + 2);
        for (int i = 0; i < cols; i++) {
            store_value_t v;
            store_stmt_column(h->obj, i, &v);
            if (v.type == STORE_NULL) continue;
            lua_rawgeti(L, 2, i + 1);
            if (lua_type(L, -1) != LUA_TSTRING) { /* no name: not kept */
                lua_pop(L, 1);
                continue;
            }
            push_value(L, &v);
            lua_rawset(L, -3);
        }
        lua_rawseti(L, out, ++n);
    }
    return 1;
}

/* stmt:one(...) -> the columns of the first row (nothing when there is none) */
static int l_store_stmt_one(lua_State *L)
{
    struct handle_ud *h = check_handle(L, STMT_METATABLE, "store statement");
    bind_args(L, h, 2);
    int top = lua_gettop(L);
    if (step(L, h) == 0) return 0;
    int cols = store_stmt_columns(h->obj);
    luaL_checkstack(L, cols, "store statement: too many columns");
    for (int i = 0; i < cols; i++)
        push_column(L, h->obj, i);
    store_stmt_reset(h->obj);
    return lua_gettop(L) - top;
}

/* core.truncate(path, length) -> true | nil, message: cut a file back to length
 * bytes (an output resumed at the length its crawl's state committed). */
static int l_truncate(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    long long len = lc_check_integer(L, 2, "truncate: length", 0, LC_INT_MAX);
    if (truncate(path, (off_t)len) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* path's directory resolved (realpath: links, "..", the working directory), with
 * its last part appended: one name for a file however its path was typed, also
 * for a file not made yet. NULL (errno set) when the directory cannot be resolved. */
static char *absolute_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return NULL;
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real) return NULL;
    size_t n = strlen(real) + strlen(base) + 2;
    char *abs = malloc(n);
    if (abs) snprintf(abs, n, "%s%s%s", real, strcmp(real, "/") == 0 ? "" : "/", base);
    free(real);
    return abs;
}

/* core.file_id(path) -> id, name, kind: what a file is, whatever the spelling of its
 * path. id is "DEV:INO" (false when there is no such file), name absolute_name's,
 * kind "file" (a regular file), "missing" or "other" (a device, a FIFO, ...).
 * nil and a message when its directory cannot be resolved. A crawl tells its
 * files apart, and a state finds its outputs again, by these. */
static int l_file_id(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char *abs = absolute_name(path);
    if (!abs) {
        int e = errno;
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(e));
        return 2;
    }
    struct stat st;
    const char *kind = "missing";
    if (stat(path, &st) == 0) {
        char id[48];
        snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        lua_pushstring(L, id);
        kind = S_ISREG(st.st_mode) ? "file" : "other";
    } else {
        lua_pushboolean(L, 0);
    }
    lua_pushstring(L, abs);
    free(abs);
    lua_pushstring(L, kind);
    return 3;
}

/* stmt:seen_urls(set, ...) -> n: add the URL in the first column of every row to the
 * lc.seen set, as the crawl's filter adds a normalized URL (url_hash of its text);
 * the crawl's state makes its seen set so at open, with no Lua value a row. */
static int l_store_stmt_seen_urls(lua_State *L)
{
    struct handle_ud *h = check_handle(L, STMT_METATABLE, "store statement");
    if (!lc_toseen(L, 2)) return luaL_argerror(L, 2, "an lc.seen set");
    void *set = lua_touserdata(L, 2);
    bind_args(L, h, 3);
    double n = 0;
    while (step(L, h) == 1) {
        store_value_t v;
        store_stmt_column(h->obj, 0, &v);
        if (v.type != STORE_TEXT) continue;
        char err[160];
        if (lc_seen_add(L, set, url_hash(v.p, v.len), err, sizeof(err)) < 0) {
            store_stmt_reset(h->obj);
            return luaL_error(L, "%s", err);
        }
        n++;
    }
    lua_pushnumber(L, n);
    return 1;
}

/* Registration -------------------------------------------------------------------- */

void lc_register_store(lua_State *L)
{
    static const luaL_Reg store_methods[] = {
        {"commit", l_store_commit},
        {"close", l_store_close},
        {"abandon", l_store_abandon},
        {"path", l_store_path},
        {"bytes", l_store_bytes},
        {"meta", l_store_meta},
        {"set_meta", l_store_set_meta},
        {"queue", l_store_queue},
        {"seen", l_store_seen},
        {"sql", l_store_sql},
        {"_cache", l_store_cache},
        {"writer", l_store_writer},
        {NULL, NULL},
    };
    static const luaL_Reg queue_methods[] = {
        {"push", l_store_queue_push},
        {"pop", l_store_queue_pop},
        {"ack", l_store_queue_ack},
        {"counts", l_store_queue_counts},
        {NULL, NULL},
    };
    static const luaL_Reg seen_methods[] = {
        {"add", l_store_seen_add},
        {"has", l_store_seen_has},
        {"size", l_store_seen_size},
        {NULL, NULL},
    };
    static const luaL_Reg stmt_methods[] = {
        {"exec", l_store_stmt_exec},
        {"exec_many", l_store_stmt_exec_many},
        {"rows", l_store_stmt_rows},
        {"records", l_store_stmt_records},
        {"one", l_store_stmt_one},
        {"seen_urls", l_store_stmt_seen_urls},
        {NULL, NULL},
    };
    static const luaL_Reg funcs[] = {
        {"store_open", l_store_open},
        {"truncate", l_truncate},
        {"file_id", l_file_id},
        {NULL, NULL},
    };
    static const luaL_Reg store_meta[] = {
        {"__gc", l_store_gc}, {"__tostring", l_store_tostring}, {NULL, NULL}};
    static const luaL_Reg seen_meta[] = {
        {"__len", l_store_seen_size}, {"__tostring", l_store_seen_tostring}, {NULL, NULL}};
    lc_class(L, STORE_METATABLE, store_meta, store_methods);
    lc_class(L, QUEUE_METATABLE, NULL, queue_methods);
    lc_class(L, STMT_METATABLE, NULL, stmt_methods);
    lc_class(L, SEEN_METATABLE, seen_meta, seen_methods);
    lc_setfuncs(L, funcs);
}
