/* lua_opts.c: option tables read by declaration (lua_opts.h), the "did you mean" of
 * every refused name, and the Lua side's access to both (core.suggest,
 * core.option_decl, core.check_options). */
#include "lua_opts.h"

#include "lua_aux.h"
#include "lua_check.h"
#include "lua_libs.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names longer than this get no suggestion (a row of the distance on the stack). */
#define SUGGEST_MAX_LEN 128

/* Levenshtein distance of a and b, case aside; both at most SUGGEST_MAX_LEN long. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t row[SUGGEST_MAX_LEN + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t cost = ca == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

const char *lc_suggest(const char *name, const char *const *known, int n)
{
    size_t len = strlen(name);
    if (len > SUGGEST_MAX_LEN) return NULL;
    size_t limit = len / 3 > 2 ? len / 3 : 2;
    const char *best = NULL;
    size_t best_d = 0;
    for (int i = 0; i < n; i++) {
        size_t klen = strlen(known[i]);
        if (klen > SUGGEST_MAX_LEN) continue;
        size_t d = distance(name, len, known[i], klen);
        if (d <= limit && (!best || d < best_d || (d == best_d && strcmp(known[i], best) < 0))) {
            best = known[i];
            best_d = d;
        }
    }
    return best;
}

static const char *const type_names[] = {
    [LC_OPT_ANY] = "any",           [LC_OPT_STRING] = "string",   [LC_OPT_NUMBER] = "number",
    [LC_OPT_INTEGER] = "integer",   [LC_OPT_BOOLEAN] = "boolean", [LC_OPT_TABLE] = "table",
    [LC_OPT_FUNCTION] = "function",
};

/* The checks that fail go here: a number out of range or a numeric string (taken,
 * as lua_check.h takes it), or a value of the wrong type. */
static void check_slow(lua_State *L, int idx, const lc_opts_t *d, const lc_opt_t *o)
{
    char what[160];
    snprintf(what, sizeof(what), d->label, o->name);
    if (o->type == LC_OPT_NUMBER) {
        lc_check_number(L, idx, what, o->min, o->max);
        return;
    }
    if (o->type == LC_OPT_INTEGER) {
        lc_check_integer(L, idx, what, (long long)o->min, (long long)o->max);
        return;
    }
    luaL_error(L, "%s must be a %s (got %s)", what, type_names[o->type], luaL_typename(L, idx));
}

static void check_value(lua_State *L, int idx, const lc_opts_t *d, const lc_opt_t *o)
{
    int t = lua_type(L, idx);
    switch (o->type) {
    case LC_OPT_ANY:
        return;
    case LC_OPT_STRING:
        if (t == LUA_TSTRING || t == LUA_TNUMBER) return;
        break;
    case LC_OPT_NUMBER:
    case LC_OPT_INTEGER:
        if (t == LUA_TNUMBER) {
            double v = lua_tonumber(L, idx);
            /* NaN compares false and fails; so do infinities, bounds being finite. */
            if (v >= o->min && v <= o->max && (o->type == LC_OPT_NUMBER || floor(v) == v)) return;
        }
        break;
    case LC_OPT_BOOLEAN:
        if (t == LUA_TBOOLEAN) return;
        break;
    case LC_OPT_TABLE:
        if (t == LUA_TTABLE) return;
        break;
    case LC_OPT_FUNCTION:
        if (t == LUA_TFUNCTION) return;
        break;
    }
    check_slow(L, idx, d, o);
}

/* The index of the option named k (n bytes), or -1. */
static int find_opt(const lc_opts_t *d, const char *k, size_t n)
{
    for (int i = 0; i < d->count; i++)
        if (d->opt[i].len == n && memcmp(d->opt[i].name, k, n) == 0) return i;
    return -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* " (did you mean 'x'?)" for name, or nothing, onto b. */
static void add_hint(luaL_Buffer *b, const lc_opts_t *d, const char **known, const char *name)
{
    const char *s = lc_suggest(name, known, d->count);
    if (!s) return;
    luaL_addstring(b, " (did you mean '");
    luaL_addstring(b, s);
    luaL_addstring(b, "'?)");
}

#define MAX_NAMED 16 /* unknown names a message lists */

/* Raise "CALLER: unknown option(s) 'a' (did you mean 'b'?), 'c'" for the string
 * keys of the table at idx not declared, sorted: the same message every run. */
static void refuse_unknown(lua_State *L, int idx, const lc_opts_t *d)
{
    const char **known = lua_newuserdata(L, sizeof(*known) * (size_t)(d->count + MAX_NAMED));
    const char **bad = known + d->count;
    for (int i = 0; i < d->count; i++)
        known[i] = d->opt[i].name;
    int nbad = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        size_t n;
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &n) : NULL;
        if (k && find_opt(d, k, n) < 0 && nbad < MAX_NAMED) bad[nbad++] = k; /* kept by the table */
        lua_pop(L, 1);
    }
    qsort(bad, (size_t)nbad, sizeof(*bad), by_name);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, d->caller);
    luaL_addstring(&b, nbad > 1 ? ": unknown options " : ": unknown option ");
    for (int i = 0; i < nbad; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addchar(&b, '\'');
        luaL_addstring(&b, bad[i]);
        luaL_addchar(&b, '\'');
        add_hint(&b, d, known, bad[i]);
    }
    luaL_pushresult(&b);
    lua_error(L);
}

int lc_push_opts(lua_State *L, int idx, const lc_opts_t *d)
{
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    int first = lua_gettop(L) + 1;
    luaL_checkstack(L, d->count + 3, d->caller);
    for (int i = 0; i < d->count; i++)
        lua_pushnil(L);
    /* A plain table is walked once: most hold a few of the names, and a lookup by
     * name costs a string interning each. One with a metatable is read by name as
     * well, so that __index works; its own keys are still checked. */
    int by_lookup = lua_getmetatable(L, idx);
    if (by_lookup) lua_pop(L, 1);
    int unknown = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        size_t n;
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &n) : NULL;
        int i = k ? find_opt(d, k, n) : -1;
        if (i >= 0) {
            check_value(L, -1, d, &d->opt[i]);
            lua_replace(L, first + i);
        } else {
            unknown |= k != NULL;
            lua_pop(L, 1);
        }
    }
    if (unknown && !d->open) refuse_unknown(L, idx, d);
    for (int i = 0; by_lookup && i < d->count; i++) {
        if (!lua_isnil(L, first + i)) continue;
        lua_getfield(L, idx, d->opt[i].name);
        if (!lua_isnil(L, -1)) check_value(L, -1, d, &d->opt[i]);
        lua_replace(L, first + i);
    }
    return first;
}

/* ---- the Lua side ---- */

static const char DECL_METATABLE[] = "luacrawl.option_decl";

static enum lc_opt_type type_named(lua_State *L, const char *s)
{
    for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
        if (strcmp(type_names[i], s) == 0) return (enum lc_opt_type)i;
    luaL_error(L, "option_decl: unknown type '%s'", s);
}

/* A string field of the table at idx, kept alive in the table at keep. */
static const char *kept_string(lua_State *L, int idx, const char *k, int keep)
{
    lua_getfield(L, idx, k);
    const char *s = lua_tostring(L, -1);
    if (!s) luaL_error(L, "option_decl: '%s' must be a string", k);
    lua_rawseti(L, keep, (int)lua_objlen(L, keep) + 1);
    return s;
}

/* One declared option from the list entry {name, type[, min[, max]]} on top. */
static void read_entry(lua_State *L, int keep, lc_opt_t *o)
{
    lua_rawgeti(L, -1, 1);
    o->name = lua_tolstring(L, -1, &o->len);
    if (!o->name || lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "option_decl: an option's name must be a string");
    lua_rawseti(L, keep, (int)lua_objlen(L, keep) + 1);
    lua_rawgeti(L, -1, 2);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "option_decl: the type of '%s' must be a string", o->name);
    o->type = lua_isnil(L, -1) ? LC_OPT_ANY : type_named(L, lua_tostring(L, -1));
    lua_pop(L, 1);
    double top = o->type == LC_OPT_INTEGER ? (double)LC_INT_MAX : DBL_MAX;
    lua_rawgeti(L, -1, 3);
    lua_rawgeti(L, -2, 4);
    o->min = lc_opt_number(L, -2, "option_decl: min", -top, -top, top);
    o->max = lc_opt_number(L, -1, "option_decl: max", top, -top, top);
    lua_pop(L, 2);
}

/* core.option_decl{caller = "crawl.run", label = "crawl.run: %s", open = true,
 * {name, type, min, max}, ...} -> a declaration for core.check_options, made once.
 * label has one %s, for the option's name. */
static int l_option_decl(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int n = (int)lua_objlen(L, 1);
    lc_opts_t *d = lua_newuserdata(L, sizeof(*d) + sizeof(lc_opt_t) * (size_t)n);
    lc_opt_t *opt = (lc_opt_t *)(d + 1);
    int ud = lua_gettop(L);
    lua_createtable(L, n + 2, 0); /* the strings d points to */
    int keep = ud + 1;
    d->caller = kept_string(L, 1, "caller", keep);
    d->label = kept_string(L, 1, "label", keep);
    const char *pct = strchr(d->label, '%');
    if (!pct || pct[1] != 's' || strchr(pct + 2, '%'))
        return luaL_error(L, "option_decl: label must hold one %%s");
    lua_getfield(L, 1, "open");
    d->open = lua_toboolean(L, -1);
    lua_pop(L, 1);
    d->count = n;
    d->opt = opt;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        luaL_checktype(L, -1, LUA_TTABLE);
        read_entry(L, keep, &opt[i]);
        lua_pop(L, 1);
    }
    lua_setfenv(L, ud);
    lc_getmetatable(L, DECL_METATABLE);
    lua_setmetatable(L, ud);
    return 1;
}

/* core.check_options(t, decl) -> t: raises as lc_push_opts does. */
static int l_check_options(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const lc_opts_t *d = lc_toudata_either(L, 2, DECL_METATABLE, NULL);
    if (!d) return luaL_typerror(L, 2, "option declaration");
    lua_settop(L, 2);
    lc_push_opts(L, 1, d);
    lua_settop(L, 1);
    return 1;
}

/* core.suggest(name, known) -> the name of the list known nearest to name, or nil */
static int l_suggest(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = (int)lua_objlen(L, 2);
    const char **known = lua_newuserdata(L, sizeof(*known) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 2, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "suggest: known[%d] is not a string", i + 1);
        known[i] = lua_tostring(L, -1); /* kept by the list */
        lua_pop(L, 1);
    }
    const char *s = lc_suggest(name, known, n);
    if (s)
        lua_pushstring(L, s);
    else
        lua_pushnil(L);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"suggest", l_suggest},
    {"option_decl", l_option_decl},
    {"check_options", l_check_options},
    {NULL, NULL},
};

void lc_register_opts(lua_State *L)
{
    lc_class(L, DECL_METATABLE, NULL, NULL);
    lc_setfuncs(L, funcs);
}
