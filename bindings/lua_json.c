/* lua_json.c: core.json_encode(value) -> JSON text, the encoder of the crawl's item
 * outputs (export.lua), core.json_lines/json_append/json_take, which keep JSON
 * Lines in C until a batch is written, and core.json_decode(text) -> value (raising
 * on bad text; core.json_parse gives nil and an error instead), with core.json_null
 * for JSON's null (a NULL light userdata: cjson.null is the same value, and both
 * encoders write it as null). It writes what lua-cjson's encode writes,
 * and refuses what it refuses with the same messages (tests/spec/json_spec.lua
 * compares the two on random values), at a fraction of the cost: cjson formats
 * every number with its own printf. Where cjson copies a string's bytes through, it
 * writes valid UTF-8 (json.h says how): a record holding a server's bytes stays JSON.
 * And core.plain_text(s [, keep]), the same repair for text printed on a terminal
 * or written to CSV.
 *
 * Tables: one whose keys are the integers 1..n (holes allowed, up to half of them
 * past the first ten) is an array; an empty table and any other are objects, their
 * number keys written as strings, but an empty table whose metatable is
 * core.json_array_mt (lc.json.array{}) is the empty array []. nil and cjson.null (a NULL light
 * userdata) are null. Functions, userdata, threads, NaN, infinities, keys other than strings and
 * numbers, and nesting deeper than 1000 raise. Metamethods are not called. */
#include "json.h"
#include "lua_aux.h"
#include "lua_libs.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 1000
#define SPARSE_RATIO 2 /* an array may have up to this many slots an item... */
#define SPARSE_SAFE 10 /* ...or up to this many slots whatever its items */
#define KEEP_BYTES (64 << 10)

__attribute__((noreturn)) static void fail(lua_State *L, int idx, const char *why)
{
    luaL_error(L, "Cannot serialise %s: %s", luaL_typename(L, idx), why);
}

static void put(lua_State *L, int rc)
{
    if (rc == -1) luaL_error(L, "json: out of memory");
}

/* The length of the array the table at idx is, 0 when it is not one. */
static size_t array_length(lua_State *L, int idx)
{
    double max = 0;
    size_t items = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        double k;
        if (lua_type(L, -2) != LUA_TNUMBER || (k = lua_tonumber(L, -2)) < 1 || floor(k) != k) {
            lua_pop(L, 2);
            return 0;
        }
        if (k > max) max = k;
        items++;
        lua_pop(L, 1);
    }
    if (max > (double)items * SPARSE_RATIO && max > SPARSE_SAFE)
        luaL_error(L, "Cannot serialise table: excessively sparse array");
    return (size_t)max;
}

static void encode(lua_State *L, json_buf_t *out, int idx, int depth);

/* The metatable that marks a table as an array even when it is empty. */
static const char ARRAY_METATABLE[] = "luacrawl.json.array";

static void encode_number(lua_State *L, json_buf_t *out, int idx)
{
    int rc = json_put_number(out, lua_tonumber(L, idx));
    if (rc == -2) fail(L, idx, "must not be NaN or Inf");
    put(L, rc);
}

/* The member whose key is at -2 and value at -1 (lua_next's pair): "key":value. */
static void encode_member(lua_State *L, json_buf_t *out, int depth)
{
    int kt = lua_type(L, -2);
    if (kt == LUA_TSTRING) {
        size_t len;
        const char *k = lua_tolstring(L, -2, &len);
        put(L, json_put_string(out, k, len));
    } else if (kt == LUA_TNUMBER) {
        put(L, buf_append(out, "\"", 1));
        encode_number(L, out, lua_gettop(L) - 1);
        put(L, buf_append(out, "\"", 1));
    } else {
        fail(L, -2, "table key must be a number or string");
    }
    put(L, buf_append(out, ":", 1));
    encode(L, out, lua_gettop(L), depth);
}

static void encode_table(lua_State *L, json_buf_t *out, int idx, int depth)
{
    if (depth > MAX_DEPTH || !lua_checkstack(L, 3))
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
    size_t n = array_length(L, idx);
    if (n == 0 && lua_getmetatable(L, idx)) {
        lc_getmetatable(L, ARRAY_METATABLE);
        int marked = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (marked) {
            put(L, buf_append(out, "[]", 2));
            return;
        }
    }
    if (n > 0) {
        put(L, buf_append(out, "[", 1));
        for (size_t i = 1; i <= n; i++) {
            if (i > 1) put(L, buf_append(out, ",", 1));
            lua_rawgeti(L, idx, (int)i);
            encode(L, out, lua_gettop(L), depth);
            lua_pop(L, 1);
        }
        put(L, buf_append(out, "]", 1));
        return;
    }
    put(L, buf_append(out, "{", 1));
    int first = 1;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (!first) put(L, buf_append(out, ",", 1));
        first = 0;
        encode_member(L, out, depth);
        lua_pop(L, 1);
    }
    put(L, buf_append(out, "}", 1));
}

/* The value at idx (an absolute index). */
static void encode(lua_State *L, json_buf_t *out, int idx, int depth)
{
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        put(L, json_put_string(out, s, len));
        return;
    }
    case LUA_TNUMBER:
        encode_number(L, out, idx);
        return;
    case LUA_TBOOLEAN:
        put(L, lua_toboolean(L, idx) ? buf_append(out, "true", 4) : buf_append(out, "false", 5));
        return;
    case LUA_TNIL:
        put(L, buf_append(out, "null", 4));
        return;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == NULL) { /* cjson.null */
            put(L, buf_append(out, "null", 4));
            return;
        }
        break;
    case LUA_TTABLE:
        encode_table(L, out, idx, depth + 1);
        return;
    default:
        break;
    }
    fail(L, idx, "type not supported");
}

/* The value at idx as JSON text in the state's buffer, kept from call to call and
 * reset at the start of each: an error raised halfway leaks nothing. */
static json_buf_t *encode_value(lua_State *L, int idx)
{
    lc_state_t *st = lc_state(L);
    if (!st->json && !(st->json = calloc(1, sizeof(*st->json))))
        luaL_error(L, "json: out of memory");
    buf_reset(st->json, KEEP_BYTES);
    encode(L, st->json, idx, 0);
    return st->json;
}

/* Whether the key at kidx (a string) is one of the strings of the list at keys. */
static int listed(lua_State *L, int keys, int kidx)
{
    size_t n = lua_objlen(L, keys);
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, keys, (int)i);
        int eq = lua_rawequal(L, -1, kidx);
        lua_pop(L, 1);
        if (eq) return 1;
    }
    return 0;
}

/* The object at idx with the keys of the list at keys first, in its order (those
 * the object has), then its other keys. */
static void encode_ordered(lua_State *L, json_buf_t *out, int idx, int keys)
{
    if (!lua_checkstack(L, 4)) luaL_error(L, "json: out of memory");
    put(L, buf_append(out, "{", 1));
    int first = 1;
    size_t n = lua_objlen(L, keys), found = 0, total = 0;
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, keys, (int)i);
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "json: the keys' order must be a list of strings");
        lua_pushvalue(L, -1);
        lua_rawget(L, idx);
        if (!lua_isnil(L, -1)) {
            if (!first) put(L, buf_append(out, ",", 1));
            first = 0;
            found++;
            size_t len;
            const char *k = lua_tolstring(L, -2, &len);
            put(L, json_put_string(out, k, len));
            put(L, buf_append(out, ":", 1));
            encode(L, out, lua_gettop(L), 1);
        }
        lua_pop(L, 2);
    }
    /* Most often the object has the listed keys only (a record of its fields). */
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        total++;
        lua_pop(L, 1);
    }
    if (total > found) lua_pushnil(L);
    while (total > found && lua_next(L, idx) != 0) {
        int kt = lua_type(L, -2);
        if (kt == LUA_TSTRING && listed(L, keys, lua_gettop(L) - 1)) {
            lua_pop(L, 1);
            continue;
        }
        if (!first) put(L, buf_append(out, ",", 1));
        first = 0;
        encode_member(L, out, 1);
        lua_pop(L, 1);
    }
    put(L, buf_append(out, "}", 1));
}

/* core.json_encode(value) -> text */
static int l_json_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    json_buf_t *out = encode_value(L, 1);
    lua_pushlstring(L, out->p ? out->p : "", out->n);
    return 1;
}

/* JSON Lines kept in C until they are written (export.lua): one Lua string for a
 * batch of records rather than one for each, and one to join them. */
static const char LINES_METATABLE[] = "luacrawl.json.lines";

static json_buf_t *check_lines(lua_State *L)
{
    json_buf_t *lines = lc_toudata_either(L, 1, LINES_METATABLE, NULL);
    if (!lines) luaL_typerror(L, 1, LINES_METATABLE);
    return lines;
}

static int l_json_lines_gc(lua_State *L)
{
    buf_free(check_lines(L));
    return 0;
}

/* core.json_lines() -> an empty batch of lines */
static int l_json_lines(lua_State *L)
{
    json_buf_t *b = lua_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    lc_getmetatable(L, LINES_METATABLE);
    lua_setmetatable(L, -2);
    return 1;
}

/* A list of keys read once (core.json_keys), for the records an output writes with
 * its fields in their order: each key's string (kept alive by the list, the
 * userdata's environment) and its text, "key":, escaped once. */
static const char KEYS_METATABLE[] = "luacrawl.json.keys";
#define KEYS_MAX 64 /* more: the list's own way (encode_ordered) */

struct json_key {
    const char *s; /* the string's bytes: a Lua string's, which do not move */
    size_t len;
    size_t text, text_len; /* its "key": in json_keys.text */
    int first;             /* the index of the first key equal to it (its own if none) */
};

struct json_keys {
    int n;
    struct json_key key[KEYS_MAX];
    char text[]; /* the keys' texts */
};

/* core.json_keys(list) -> keys: the strings of list (at most KEYS_MAX) read once, for
 * json_append; raises for a list that holds anything else, or is too long. */
static int l_json_keys(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t n = lua_objlen(L, 1);
    if (n > KEYS_MAX) luaL_argerror(L, 1, "too many keys");
    lua_settop(L, 1);
    lua_createtable(L, (int)n, 0); /* the strings, kept alive: 2 */
    lc_state_t *st = lc_state(L);
    if (!st->json && !(st->json = calloc(1, sizeof(*st->json))))
        luaL_error(L, "json: out of memory");
    buf_reset(st->json, KEEP_BYTES);
    struct json_key key[KEYS_MAX] = {{0}};
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 1, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_argerror(L, 1, "keys must be strings");
        key[i].s = lua_tolstring(L, -1, &key[i].len);
        lua_rawseti(L, 2, (int)i + 1);
        key[i].text = st->json->n;
        put(L, json_put_string(st->json, key[i].s, key[i].len));
        put(L, buf_append(st->json, ":", 1));
        key[i].text_len = st->json->n - key[i].text;
        key[i].first = (int)i;
        for (size_t j = 0; j < i; j++)
            if (key[j].len == key[i].len && memcmp(key[j].s, key[i].s, key[i].len) == 0) {
                key[i].first = (int)j;
                break;
            }
    }
    struct json_keys *k = lua_newuserdata(L, sizeof(*k) + st->json->n);
    k->n = (int)n;
    memcpy(k->key, key, n * sizeof(key[0]));
    if (st->json->n) memcpy(k->text, st->json->p, st->json->n);
    lc_getmetatable(L, KEYS_METATABLE);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 2);
    lua_setfenv(L, -2);
    return 1;
}

/* The listed key the string at idx is, or -1. */
static int key_index(lua_State *L, const struct json_keys *k, int idx)
{
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    for (int i = 0; i < k->n; i++) /* LuaJIT's equal strings are one string */
        if (k->key[i].s == s) return k->key[i].first;
    for (int i = 0; i < k->n; i++)
        if (k->key[i].len == len && memcmp(k->key[i].s, s, len) == 0) return k->key[i].first;
    return -1;
}

/* The object at 2 written to lines with the keys k (at 3) in their order, in one pass
 * of lua_next: its values go to out first, in the table's order, and then to lines
 * in the keys' (no key looked up, no key escaped). 0 when the object has a key
 * that is not listed: the caller writes it as encode_ordered does. */
static int append_keyed(lua_State *L, json_buf_t *lines, json_buf_t *out, const struct json_keys *k)
{
    size_t off[KEYS_MAX], len[KEYS_MAX];
    char got[KEYS_MAX] = {0};
    size_t total = 2, nvalues = 0; /* {} */
    int top = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        int i = lua_type(L, -2) == LUA_TSTRING ? key_index(L, k, -2) : -1;
        if (i < 0) {
            lua_settop(L, top);
            return 0;
        }
        off[i] = out->n;
        encode(L, out, top + 2, 1);
        len[i] = out->n - off[i];
        got[i] = 1;
        lua_settop(L, top + 1);
    }
    for (int i = 0; i < k->n; i++)
        if (got[k->key[i].first]) {
            total += k->key[i].text_len + len[k->key[i].first] + (nvalues ? 1 : 0);
            nvalues++;
        }
    if (buf_reserve(lines, total + 1) != 0) luaL_error(L, "json: out of memory");
    char *w = lines->p + lines->n;
    *w++ = '{';
    for (int i = 0, first = 1; i < k->n; i++) {
        int v = k->key[i].first;
        if (!got[v]) continue;
        if (!first) *w++ = ',';
        first = 0;
        memcpy(w, k->text + k->key[i].text, k->key[i].text_len);
        w += k->key[i].text_len;
        memcpy(w, out->p + off[v], len[v]);
        w += len[v];
    }
    *w++ = '}';
    *w++ = '\n';
    lines->n = (size_t)(w - lines->p);
    return 1;
}

/* core.json_append(lines, value [, keys]) -> bytes held: value's JSON text and a
 * newline added; raises as json_encode does, adding nothing. keys (a list of strings,
 * or the same read once by core.json_keys): an object's keys in that order first (an
 * item's fields), then its others. */
static int l_json_append(lua_State *L)
{
    json_buf_t *lines = check_lines(L);
    luaL_checkany(L, 2);
    lua_settop(L, 3);
    json_buf_t *out;
    const struct json_keys *k = lc_toudata_either(L, 3, KEYS_METATABLE, NULL);
    if (k && lua_istable(L, 2)) {
        lc_state_t *st = lc_state(L);
        if (!st->json && !(st->json = calloc(1, sizeof(*st->json))))
            luaL_error(L, "json: out of memory");
        buf_reset(st->json, KEEP_BYTES);
        if (append_keyed(L, lines, st->json, k)) {
            lua_pushnumber(L, (double)lines->n);
            return 1;
        }
        lua_getfenv(L, 3); /* the list: written the list's way */
        lua_replace(L, 3);
    }
    if (lua_istable(L, 3) && lua_istable(L, 2) && array_length(L, 2) == 0) {
        lc_state_t *st = lc_state(L);
        if (!st->json && !(st->json = calloc(1, sizeof(*st->json))))
            luaL_error(L, "json: out of memory");
        buf_reset(st->json, KEEP_BYTES);
        encode_ordered(L, st->json, 2, 3);
        out = st->json;
    } else {
        out = encode_value(L, 2);
    }
    if (buf_append(lines, out->p ? out->p : "", out->n) != 0 || buf_append(lines, "\n", 1) != 0)
        luaL_error(L, "json: out of memory");
    lua_pushnumber(L, (double)lines->n);
    return 1;
}

/* core.json_take(lines) -> the text held (""), which the batch no longer holds */
static int l_json_take(lua_State *L)
{
    json_buf_t *lines = check_lines(L);
    lua_pushlstring(L, lines->p ? lines->p : "", lines->n);
    buf_reset(lines, KEEP_BYTES);
    return 1;
}

/* Decoding: each value read (json.c) is pushed on the Lua stack; an array or an
 * object is a table there that its items and members go into as they come. Lua
 * errors (out of memory) unwind through json_decode, which holds no memory. */
static int push_null(void *ud)
{
    lua_pushlightuserdata(ud, NULL);
    return 0;
}

static int push_boolean(void *ud, int v)
{
    lua_pushboolean(ud, v);
    return 0;
}

static int push_number(void *ud, double v)
{
    lua_pushnumber(ud, v);
    return 0;
}

static int push_string(void *ud, const char *s, size_t n)
{
    lua_pushlstring(ud, s, n);
    return 0;
}

static int push_table(void *ud, int object)
{
    (void)object;
    /* The table, then a member's name and its value, or an item. */
    if (!lua_checkstack(ud, 4)) luaL_error(ud, "json: nested too deep for the Lua stack");
    lua_newtable(ud);
    return 0;
}

static int set_item(void *ud, size_t index)
{
    if (index > INT_MAX) luaL_error(ud, "json: array too long");
    lua_rawseti(ud, -2, (int)index);
    return 0;
}

static int set_member(void *ud)
{
    lua_rawset(ud, -3);
    return 0;
}

static int end_table(void *ud, int object)
{
    (void)ud;
    (void)object;
    return 0;
}

static const json_reader_t LUA_READER = {
    .null = push_null,
    .boolean = push_boolean,
    .number = push_number,
    .string = push_string,
    .begin = push_table,
    .item = set_item,
    .member = set_member,
    .end = end_table,
};

/* Decode the text at index 1: the value on top and 1, or 0 with its error on top
 * ("json: expected ':' at byte 12", bytes counted from 1). Raises when memory runs
 * out. */
static int decode_text(lua_State *L)
{
    size_t n;
    const char *text = luaL_checklstring(L, 1, &n);
    lc_state_t *st = lc_state(L);
    if (!st->json && !(st->json = calloc(1, sizeof(*st->json))))
        luaL_error(L, "json: out of memory");
    buf_reset(st->json, KEEP_BYTES);
    lua_settop(L, 1);
    json_error_t err = {0, NULL};
    int rc = json_decode(text, n, &LUA_READER, L, st->json, &err);
    if (rc == -2) luaL_error(L, "json: out of memory");
    if (rc == -1) {
        lua_settop(L, 1);
        lua_pushfstring(L, "json: %s at byte %f%s", err.why, (double)err.offset + 1,
                        err.offset >= n ? " (the end of the text)" : "");
        return 0;
    }
    return 1;
}

/* core.json_decode(text) -> value. Strict RFC 8259; null is core.json_null;
 * arrays and objects are tables (an empty one of either is {}). Raises on text that
 * is not JSON: the engine's own texts (a state file's, Redis's replies), where that
 * is a broken invariant. */
static int l_json_decode(lua_State *L)
{
    if (!decode_text(L)) lua_error(L);
    return 1;
}

/* core.json_parse(text) -> value | nil, err: lc.json.decode, for text from outside
 * (a page, a script's file): an error of kind "parse" for text that is not JSON. */
static int l_json_parse(lua_State *L)
{
    if (decode_text(L)) return 1;
    lc_push_error(L, lc_state(L), "parse", lua_tostring(L, -1));
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/* core.plain_text(s [, keep]) -> s as valid UTF-8 with its control characters made
 * visible (json_put_plain), but those in the string keep ("\t\n" keeps tabs and
 * newlines). s itself when there is nothing to change. */
static int l_plain_text(lua_State *L)
{
    size_t n, nkeep;
    const char *s = luaL_checklstring(L, 1, &n);
    const char *keep = luaL_optlstring(L, 2, "", &nkeep);
    uint32_t mask = 0;
    for (size_t i = 0; i < nkeep; i++) {
        unsigned char c = (unsigned char)keep[i];
        if (c >= 0x20) luaL_argerror(L, 2, "only control characters below 0x20 can be kept");
        mask |= (uint32_t)1 << c;
    }
    lc_state_t *st = lc_state(L);
    if (!st->json && !(st->json = calloc(1, sizeof(*st->json))))
        luaL_error(L, "json: out of memory");
    buf_reset(st->json, KEEP_BYTES);
    if (json_put_plain(st->json, s, n, mask) != 0) luaL_error(L, "json: out of memory");
    if (st->json->n == n && (n == 0 || memcmp(st->json->p, s, n) == 0)) {
        lua_settop(L, 1);
        return 1;
    }
    lua_pushlstring(L, st->json->p, st->json->n);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"json_encode", l_json_encode}, {"json_decode", l_json_decode}, {"json_parse", l_json_parse},
    {"json_lines", l_json_lines},   {"json_append", l_json_append}, {"json_take", l_json_take},
    {"json_keys", l_json_keys},     {"plain_text", l_plain_text},   {NULL, NULL},
};

void lc_register_json(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", l_json_lines_gc}, {NULL, NULL}};
    lc_class(L, LINES_METATABLE, meta, NULL);
    lc_setfuncs(L, funcs);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -3, "json_null");
    lc_class(L, ARRAY_METATABLE, NULL, NULL);
    lc_class(L, KEYS_METATABLE, NULL, NULL);
    lc_getmetatable(L, ARRAY_METATABLE);
    lua_setfield(L, -3, "json_array_mt");
}
