/* lua_regex.c: core.regex_compile(pattern [, flags]) -> regex, a userdata with the methods
 * test, find, match, gmatch, gsub, split and info. Offsets are 1-based on the Lua side,
 * as in string.find. Runaway matches raise an error naming the limit and the pattern;
 * the cache of compiled patterns lives in lua/luacrawl/regex.lua. */
#include "lua_check.h"
#include "lua_aux.h"
#include "regex.h"
#include "lua_libs.h"

#include <string.h>

static const char REGEX_METATABLE[] = "luacrawl.regex";
#define QUOTE_MAX 60 /* bytes of a pattern quoted in messages */

typedef struct {
    regex_pattern_t *re;
} regex_box_t;

static regex_pattern_t *check_regex(lua_State *L, int idx)
{
    regex_box_t *box = luaL_checkudata(L, idx, REGEX_METATABLE);
    if (!box->re) luaL_error(L, "regex: used after it was freed");
    return box->re;
}

/* Push the pattern in quotes, cut at QUOTE_MAX bytes on a character boundary. */
static void push_quoted(lua_State *L, const char *src, size_t len)
{
    size_t n = len;
    if (n > QUOTE_MAX) {
        n = QUOTE_MAX;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    lua_pushliteral(L, "\"");
    lua_pushlstring(L, src, n);
    lua_pushstring(L, n < len ? "...\"" : "\"");
    lua_concat(L, 3);
}

/* Raised at the caller's line: the methods are called from the user's code. */
static int raise_exec_error(lua_State *L, regex_pattern_t *re, const char *msg)
{
    size_t len;
    const char *src = regex_source(re, &len);
    luaL_where(L, 1);
    lua_pushliteral(L, "regex ");
    push_quoted(L, src, len);
    lua_pushfstring(L, ": %s", msg);
    lua_concat(L, 4);
    return lua_error(L);
}

/* regex_exec, raising on a limit or an error. */
static int exec(lua_State *L, regex_pattern_t *re, const char *s, size_t len, size_t start,
                unsigned options)
{
    char err[256];
    enum regex_status st = regex_exec(re, s, len, start, options, err, sizeof(err));
    if (st < 0) raise_exec_error(L, re, err);
    return st == REGEX_MATCH;
}

/* The 0-based start offset of an optional 1-based init at idx (negative counts from the
 * end, as in string.find); -1 when init lies past the end, so nothing can match. */
static ptrdiff_t start_offset(lua_State *L, int idx, size_t len)
{
    ptrdiff_t init = (ptrdiff_t)lc_opt_integer(L, idx, "regex: init", 1, -LC_INT_MAX, LC_INT_MAX);
    if (init < 0) init += (ptrdiff_t)len + 1;
    if (init < 1) init = 1;
    if ((size_t)init > len + 1) return -1;
    return init - 1;
}

static void push_group(lua_State *L, regex_pattern_t *re, const char *s, int i)
{
    size_t so, eo;
    if (regex_group(re, i, &so, &eo))
        lua_pushlstring(L, s + so, eo - so);
    else
        lua_pushboolean(L, 0); /* a group that took no part in the match */
}

/* Push the groups of the last match from first on; returns how many. */
static int push_groups(lua_State *L, regex_pattern_t *re, const char *s, int first)
{
    int n = regex_ncaptures(re);
    luaL_checkstack(L, n + 1, "too many captures");
    for (int i = first; i <= n; i++)
        push_group(L, re, s, i);
    return n + 1 - first;
}

static int l_regex_test(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    ptrdiff_t start = start_offset(L, 3, len);
    lua_pushboolean(L, start >= 0 && exec(L, re, s, len, (size_t)start, 0));
    return 1;
}

static int l_regex_find(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len, so, eo;
    const char *s = luaL_checklstring(L, 2, &len);
    ptrdiff_t start = start_offset(L, 3, len);
    if (start < 0 || !exec(L, re, s, len, (size_t)start, 0)) {
        lua_pushnil(L);
        return 1;
    }
    regex_group(re, 0, &so, &eo);
    lua_pushinteger(L, (lua_Integer)so + 1);
    lua_pushinteger(L, (lua_Integer)eo);
    return 2 + push_groups(L, re, s, 1);
}

static int l_regex_match(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    ptrdiff_t start = start_offset(L, 3, len);
    if (start < 0 || !exec(L, re, s, len, (size_t)start, 0)) {
        lua_pushnil(L);
        return 1;
    }
    return push_groups(L, re, s, 0);
}

/* A global search: where the next match starts looking, and whether the last match was
 * empty. After an empty match at p, a non-empty match anchored at p is tried before the
 * search moves one character on (PCRE2's pcre2demo, and Perl's behaviour). */
typedef struct {
    size_t pos;
    int after_empty;
} scan_t;

static size_t next_char(const char *s, size_t len, size_t pos)
{
    pos++;
    while (pos < len && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}

/* The next match of a global search, its offsets in *so, *eo; 0 when there is none. */
static int scan_next(lua_State *L, regex_pattern_t *re, const char *s, size_t len, scan_t *sc,
                     size_t *so, size_t *eo)
{
    for (;;) {
        if (sc->pos > len) return 0;
        unsigned opt = sc->after_empty ? REGEX_ANCHORED | REGEX_NOTEMPTY_ATSTART : 0;
        if (exec(L, re, s, len, sc->pos, opt)) break;
        if (!sc->after_empty || sc->pos >= len) return 0;
        sc->pos = next_char(s, len, sc->pos);
        sc->after_empty = 0;
    }
    regex_group(re, 0, so, eo);
    sc->pos = *eo;
    sc->after_empty = *so == *eo;
    return 1;
}

/* upvalues: regex, subject, position, after_empty */
static int gmatch_next(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, lua_upvalueindex(1));
    size_t len, so, eo;
    const char *s = lua_tolstring(L, lua_upvalueindex(2), &len);
    double pos = lua_tonumber(L, lua_upvalueindex(3));
    if (pos < 0) return 0;
    scan_t sc = {(size_t)pos, lua_toboolean(L, lua_upvalueindex(4))};
    if (!scan_next(L, re, s, len, &sc, &so, &eo)) {
        lua_pushnumber(L, -1);
        lua_replace(L, lua_upvalueindex(3));
        return 0;
    }
    lua_pushnumber(L, (double)sc.pos);
    lua_replace(L, lua_upvalueindex(3));
    lua_pushboolean(L, sc.after_empty);
    lua_replace(L, lua_upvalueindex(4));
    return push_groups(L, re, s, 0);
}

static int l_regex_gmatch(lua_State *L)
{
    check_regex(L, 1);
    size_t len;
    luaL_checklstring(L, 2, &len);
    ptrdiff_t start = start_offset(L, 3, len);
    lua_settop(L, 2);
    lua_pushnumber(L, (double)start);
    lua_pushboolean(L, 0);
    lua_pushcclosure(L, gmatch_next, 4);
    return 1;
}

/* A "$" reference of a replacement string at r[*i] (just past the "$"): its group
 * number, *i moved past it; -1 for "$$"; raises on anything else. */
static int repl_ref(lua_State *L, regex_pattern_t *re, const char *r, size_t rlen, size_t *i)
{
    size_t k = *i;
    int g = -2;
    if (k < rlen && r[k] == '$') {
        *i = k + 1;
        return -1;
    }
    if (k < rlen && r[k] >= '0' && r[k] <= '9') {
        g = r[k] - '0';
        *i = k + 1;
    } else if (k < rlen && r[k] == '{') {
        size_t e = k + 1, digits = 0;
        while (e < rlen && r[e] != '}')
            digits += (r[e] >= '0' && r[e] <= '9'), e++;
        if (e < rlen && e > k + 1) {
            if (digits == e - k - 1) {
                g = 0;
                for (size_t j = k + 1; j < e && g <= 65535; j++)
                    g = g * 10 + (r[j] - '0');
            } else {
                g = regex_group_number(re, r + k + 1, e - k - 1);
                if (g < 0) {
                    lua_pushlstring(L, r + k + 1, e - k - 1);
                    luaL_error(L, "regex: no group named '%s' in replacement", lua_tostring(L, -1));
                }
            }
            *i = e + 1;
        }
    }
    if (g == -2) luaL_error(L, "regex: invalid use of '$' in replacement string");
    if (g > regex_ncaptures(re))
        luaL_error(L, "regex: invalid capture index $%d in replacement", g);
    return g;
}

/* Append the replacement string r for the last match; with b NULL, only check it. */
static void add_expansion(lua_State *L, luaL_Buffer *b, regex_pattern_t *re, const char *s,
                          const char *r, size_t rlen)
{
    size_t i = 0;
    while (i < rlen) {
        const char *dollar = memchr(r + i, '$', rlen - i);
        size_t lit = dollar ? (size_t)(dollar - (r + i)) : rlen - i;
        if (b) luaL_addlstring(b, r + i, lit);
        i += lit;
        if (i >= rlen) break;
        i++;
        int g = repl_ref(L, re, r, rlen, &i);
        size_t so, eo;
        if (!b) continue;
        if (g < 0)
            luaL_addchar(b, '$');
        else if (regex_group(re, g, &so, &eo))
            luaL_addlstring(b, s + so, eo - so);
    }
}

/* Append what the function at index 3 returns for the last match [so, eo): a string or
 * number replaces it, nil or false keeps it. */
static void add_call(lua_State *L, luaL_Buffer *b, regex_pattern_t *re, const char *s, size_t so,
                     size_t eo)
{
    lua_pushvalue(L, 3);
    int n = push_groups(L, re, s, 0);
    lua_call(L, n, 1);
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s + so, eo - so);
    } else if (lua_isstring(L, -1)) {
        luaL_addvalue(b);
    } else {
        luaL_error(L, "regex: invalid replacement value (a %s)", luaL_typename(L, -1));
    }
}

static int l_regex_gsub(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len, rlen = 0, so, eo;
    const char *s = luaL_checklstring(L, 2, &len);
    int tr = lua_type(L, 3);
    luaL_argcheck(L, tr == LUA_TSTRING || tr == LUA_TNUMBER || tr == LUA_TFUNCTION, 3,
                  "string or function expected");
    const char *r = tr == LUA_TFUNCTION ? NULL : lua_tolstring(L, 3, &rlen);
    /* negative: no limit */
    long long max = lc_opt_integer(L, 4, "gsub: n", -1, -LC_INT_MAX, LC_INT_MAX);
    if (r) add_expansion(L, NULL, re, s, r, rlen); /* raise on a bad reference up front */
    lua_settop(L, 3);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    scan_t sc = {0, 0};
    size_t copied = 0;
    lua_Integer count = 0;
    while ((max < 0 || count < max) && scan_next(L, re, s, len, &sc, &so, &eo)) {
        luaL_addlstring(&b, s + copied, so - copied);
        copied = eo;
        count++;
        /* The callback may match with this regex again: offsets are read before it runs. */
        if (r)
            add_expansion(L, &b, re, s, r, rlen);
        else
            add_call(L, &b, re, s, so, eo);
    }
    luaL_addlstring(&b, s + copied, len - copied);
    luaL_pushresult(&b);
    lua_pushinteger(L, count);
    return 2;
}

static int l_regex_split(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len, so, eo;
    const char *s = luaL_checklstring(L, 2, &len);
    long long max = lc_opt_integer(L, 3, "split: n", -1, -LC_INT_MAX, LC_INT_MAX);
    lua_newtable(L);
    scan_t sc = {0, 0};
    size_t from = 0;
    int n = 0;
    while ((max < 0 || n < max) && scan_next(L, re, s, len, &sc, &so, &eo)) {
        lua_pushlstring(L, s + from, so - from);
        lua_rawseti(L, -2, ++n);
        from = eo;
    }
    lua_pushlstring(L, s + from, len - from);
    lua_rawseti(L, -2, ++n);
    return 1;
}

static const char flag_chars[] = "ixsm"; /* in the order of REGEX_CASELESS... */

static void push_flags(lua_State *L, unsigned flags)
{
    char buf[sizeof(flag_chars)];
    size_t n = 0;
    for (size_t i = 0; flag_chars[i]; i++)
        if (flags & (1u << i)) buf[n++] = flag_chars[i];
    lua_pushlstring(L, buf, n);
}

static int l_regex_info(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len;
    const char *src = regex_source(re, &len);
    lua_createtable(L, 0, 4);
    lua_pushlstring(L, src, len);
    lua_setfield(L, -2, "pattern");
    push_flags(L, regex_flags(re));
    lua_setfield(L, -2, "flags");
    lua_pushinteger(L, regex_ncaptures(re));
    lua_setfield(L, -2, "captures");
    lua_pushboolean(L, regex_jitted(re));
    lua_setfield(L, -2, "jit");
    return 1;
}

static int l_regex_tostring(lua_State *L)
{
    regex_pattern_t *re = check_regex(L, 1);
    size_t len;
    const char *src = regex_source(re, &len);
    lua_pushliteral(L, "regex(");
    push_quoted(L, src, len);
    lua_pushliteral(L, ", \"");
    push_flags(L, regex_flags(re));
    lua_pushliteral(L, "\")");
    lua_concat(L, 5);
    return 1;
}

static int l_regex_gc(lua_State *L)
{
    regex_box_t *box = luaL_checkudata(L, 1, REGEX_METATABLE);
    regex_free(box->re);
    box->re = NULL;
    return 0;
}

static unsigned parse_flags(lua_State *L, int idx)
{
    size_t n;
    const char *f = luaL_optlstring(L, idx, "", &n);
    unsigned flags = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = f[i] ? strchr(flag_chars, f[i]) : NULL;
        if (!p) {
            lua_pushfstring(L, "regex: unknown flag '%c' (flags are i, x, s, m)", f[i]);
            lua_error(L);
        }
        flags |= 1u << (p - flag_chars);
    }
    return flags;
}

static int l_regex_compile(lua_State *L)
{
    size_t len, erroff;
    const char *pattern = luaL_checklstring(L, 1, &len);
    unsigned flags = parse_flags(L, 2);
    char err[256];
    regex_box_t *box = lua_newuserdata(L, sizeof(*box));
    box->re = NULL;
    luaL_getmetatable(L, REGEX_METATABLE);
    lua_setmetatable(L, -2);
    box->re = regex_compile(pattern, len, flags, &erroff, err, sizeof(err));
    if (!box->re) {
        lua_pushliteral(L, "regex ");
        push_quoted(L, pattern, len);
        lua_pushfstring(L, ": %s at offset %d", err, (int)erroff);
        lua_concat(L, 3);
        return lua_error(L);
    }
    return 1;
}

static const luaL_Reg methods[] = {
    {"test", l_regex_test},     {"find", l_regex_find}, {"match", l_regex_match},
    {"gmatch", l_regex_gmatch}, {"gsub", l_regex_gsub}, {"split", l_regex_split},
    {"info", l_regex_info},     {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"regex_compile", l_regex_compile},
    {NULL, NULL},
};

void lc_register_regex(lua_State *L)
{
    static const luaL_Reg meta[] = {
        {"__gc", l_regex_gc}, {"__tostring", l_regex_tostring}, {NULL, NULL}};
    lc_class(L, REGEX_METATABLE, meta, methods);
    lc_setfuncs(L, funcs);
}
