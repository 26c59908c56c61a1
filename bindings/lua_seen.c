/* lua_seen.c: core.seen, a set of URL fingerprints in memory over seen.c, counted
 * towards max_memory; link lists and the crawl's admission add to it through
 * lc_seen_add (lua_seen.h). */
#include "lua_check.h"
#include "lua_limits.h"
#include "lua_seen.h"
#include "lua_url.h"
#include "seen.h"
#include "lua_libs.h"

#include <stdio.h>

static const char SEEN_METATABLE[] = "luacrawl.seen";

/* A seen set's userdata: the set first (lc_toseen reads it as a seen_t **), and
 * the bytes of it counted towards max_memory (what is given back is what was
 * counted). */
struct seen_ud {
    seen_t *s;
    size_t counted;
};

static seen_t *check_seen(lua_State *L)
{
    struct seen_ud *u = luaL_checkudata(L, 1, SEEN_METATABLE);
    if (!u->s) luaL_error(L, "seen set already freed");
    return u->s;
}

/* Count the set's bytes now towards max_memory. */
static void seen_count(lua_State *L, struct seen_ud *u)
{
    size_t now = seen_bytes(u->s);
    lc_limits_account(L, (long long)now - (long long)u->counted);
    u->counted = now;
}

/* core.seen([expected]) -> set. The table is allocated at once for `expected`:
 * refused first when it would pass max_memory. */
static int l_seen(lua_State *L)
{
    long long expected = lc_opt_integer(L, 1, "seen: the expected size", 0, 0, LC_INT_MAX);
    size_t bytes = seen_new_bytes((size_t)expected), left;
    if (!lc_limits_allow(L, bytes, &left))
        return luaL_error(
            L, "seen: a set for %.0f URLs takes %.0f bytes, more than max_memory leaves (%.0f)",
            (double)expected, (double)bytes, (double)left);
    struct seen_ud *u = lua_newuserdata(L, sizeof(*u));
    u->s = NULL;
    u->counted = 0;
    lc_getmetatable(L, SEEN_METATABLE);
    lua_setmetatable(L, -2);
    u->s = seen_new((size_t)expected);
    if (!u->s) return luaL_error(L, "seen: out of memory for a set of %.0f URLs", (double)expected);
    seen_count(L, u);
    return 1;
}

seen_t *lc_toseen(lua_State *L, int idx)
{
    seen_t **s = lc_toudata_either(L, idx, SEEN_METATABLE, NULL);
    if (!s) return NULL;
    if (!*s) luaL_error(L, "seen set already freed");
    return *s;
}

int lc_seen_add(lua_State *L, void *ud, uint64_t fp, char *err, size_t errlen)
{
    struct seen_ud *u = ud;
    seen_t *s = u->s;
    size_t grow = seen_grow_bytes(s), left;
    if (!grow) return seen_add(s, fp);
    /* Only a new fingerprint makes a full set grow. */
    if (!seen_has(s, fp) && !lc_limits_allow(L, grow, &left)) {
        snprintf(err, errlen,
                 "seen: growing the set (%.0f URLs) takes %.0f bytes, more than max_memory "
                 "leaves (%.0f)",
                 (double)seen_size(s), (double)grow, (double)left);
        return -1;
    }
    int r = seen_add(s, fp);
    if (r < 0) {
        snprintf(err, errlen, "seen: out of memory");
        return -1;
    }
    seen_count(L, u);
    return r;
}

/* set:add(url) -> true when the URL (normalized) was not in the set */
static int l_seen_add(lua_State *L)
{
    check_seen(L);
    size_t len;
    const char *u = lc_check_url(L, 2, &len);
    char err[160];
    int r = lc_seen_add(L, lua_touserdata(L, 1), url_fingerprint(u), err, sizeof(err));
    if (r < 0) return luaL_error(L, "%s", err);
    lua_pushboolean(L, r);
    return 1;
}

/* set:has(url) -> boolean */
static int l_seen_has(lua_State *L)
{
    seen_t *s = check_seen(L);
    size_t len;
    const char *u = lc_check_url(L, 2, &len);
    lua_pushboolean(L, seen_has(s, url_fingerprint(u)));
    return 1;
}

static int l_seen_size(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)seen_size(check_seen(L)));
    return 1;
}

static int l_seen_bytes(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)seen_bytes(check_seen(L)));
    return 1;
}

static int l_seen_tostring(lua_State *L)
{
    lua_pushfstring(L, "seen set (%d URLs)", (int)seen_size(check_seen(L)));
    return 1;
}

static int l_seen_gc(lua_State *L)
{
    struct seen_ud *u = luaL_checkudata(L, 1, SEEN_METATABLE);
    lc_limits_account(L, -(long long)u->counted);
    u->counted = 0;
    seen_free(u->s);
    u->s = NULL;
    return 0;
}

static const luaL_Reg seen_methods[] = {
    {"add", l_seen_add},     {"has", l_seen_has}, {"size", l_seen_size},
    {"bytes", l_seen_bytes}, {NULL, NULL},
};

static const luaL_Reg seen_meta[] = {
    {"__len", l_seen_size},
    {"__tostring", l_seen_tostring},
    {"__gc", l_seen_gc},
    {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"seen", l_seen},
    {NULL, NULL},
};

void lc_register_seen(lua_State *L)
{
    lc_class(L, SEEN_METATABLE, seen_meta, seen_methods);
    lc_setfuncs(L, funcs);
}
