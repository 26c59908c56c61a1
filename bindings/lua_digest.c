/* lua_digest.c: content digests for Lua. core.digest (digest.c) and core.dupes, the
 * digests a crawl has met with the URL each was first met with (dupes.c), which
 * crawl_dupes.lua uses for page.duplicate_of. */
#include "digest.h"
#include "dupes.h"
#include "lua_aux.h"
#include "lua_body.h"
#include "lua_limits.h"
#include "lua_libs.h"

static const char DUPES_METATABLE[] = "luacrawl.dupes";

/* core.digest(s) -> 32 lower-case hex digits: the 128-bit XXH3 of the bytes of s, a
 * string or a response's body (read in place: no Lua string is made of it).
 * Not cryptographic: it tells equal bodies apart from different ones (content
 * duplicates in a crawl), not a forged body from a real one. */
static int l_digest(lua_State *L)
{
    size_t len;
    const char *s = lc_checkbytes(L, 1, &len);
    char hex[33];
    digest_hex(s, len, hex);
    lua_pushlstring(L, hex, 32);
    return 1;
}

/* The map's userdata, with the bytes of it counted towards max_memory. */
struct dupes_ud {
    dupes_t *d;
    size_t counted;
};

static struct dupes_ud *check_dupes(lua_State *L)
{
    struct dupes_ud *u = luaL_checkudata(L, 1, DUPES_METATABLE);
    if (!u->d) luaL_error(L, "dupes already freed");
    return u;
}

static void dupes_count(lua_State *L, struct dupes_ud *u)
{
    size_t now = dupes_bytes(u->d);
    lc_limits_account(L, (long long)now - (long long)u->counted);
    u->counted = now;
}

/* core.dupes() -> an empty map. */
static int l_dupes(lua_State *L)
{
    struct dupes_ud *u = lua_newuserdata(L, sizeof(*u));
    u->d = NULL;
    u->counted = 0;
    lc_getmetatable(L, DUPES_METATABLE);
    lua_setmetatable(L, -2);
    u->d = dupes_new();
    if (!u->d) return luaL_error(L, "dupes: out of memory");
    dupes_count(L, u);
    return 1;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The URL the digest was first met with (pushed), or nothing pushed and the digest
 * kept with the URL at idx: the number of results. */
static int first_or_add(lua_State *L, struct dupes_ud *u, const uint64_t digest[2], int idx)
{
    size_t url_len;
    const char *url = luaL_checklstring(L, idx, &url_len), *first;
    size_t first_len;
    if (dupes_find(u->d, digest, &first, &first_len)) {
        lua_pushlstring(L, first, first_len);
        return 1;
    }
    size_t grow = dupes_grow_bytes(u->d, url_len), left;
    if (grow && !lc_limits_allow(L, grow, &left))
        return luaL_error(L,
                          "dupes: growing the map (%.0f digests) takes %.0f bytes, more than "
                          "max_memory leaves (%.0f)",
                          (double)dupes_size(u->d), (double)grow, (double)left);
    if (dupes_add(u->d, digest, url, url_len) < 0) return luaL_error(L, "dupes: out of memory");
    if (grow) dupes_count(L, u);
    return 0;
}

/* map:first(digest, url) -> the URL the digest (32 hex digits, as core.digest
 * gives) was first met with, or nil when it is new: then it is kept with url.
 * Raises when the map would pass max_memory or memory runs out. */
static int l_dupes_first(lua_State *L)
{
    struct dupes_ud *u = check_dupes(L);
    size_t hex_len;
    const char *hex = luaL_checklstring(L, 2, &hex_len);
    uint64_t digest[2] = {0, 0};
    if (hex_len != 32) return luaL_argerror(L, 2, "a digest of 32 hex digits");
    for (int i = 0; i < 32; i++) {
        int v = hex_value((unsigned char)hex[i]);
        if (v < 0) return luaL_argerror(L, 2, "a digest of 32 hex digits");
        digest[i / 16] = digest[i / 16] << 4 | (uint64_t)v;
    }
    return first_or_add(L, u, digest, 3);
}

/* map:see(body, url) -> as map:first with the digest of body (a string or a
 * response's body, read in place), without making the digest a Lua string. */
static int l_dupes_see(lua_State *L)
{
    struct dupes_ud *u = check_dupes(L);
    size_t len;
    const char *body = lc_checkbytes(L, 2, &len);
    unsigned long long v[2];
    digest128(body, len, v);
    uint64_t digest[2] = {v[0], v[1]};
    return first_or_add(L, u, digest, 3);
}

static int l_dupes_size(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)dupes_size(check_dupes(L)->d));
    return 1;
}

static int l_dupes_bytes(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)dupes_bytes(check_dupes(L)->d));
    return 1;
}

static int l_dupes_gc(lua_State *L)
{
    struct dupes_ud *u = luaL_checkudata(L, 1, DUPES_METATABLE);
    lc_limits_account(L, -(long long)u->counted);
    u->counted = 0;
    dupes_free(u->d);
    u->d = NULL;
    return 0;
}

static const luaL_Reg dupes_methods[] = {
    {"first", l_dupes_first}, {"see", l_dupes_see}, {"size", l_dupes_size},
    {"bytes", l_dupes_bytes}, {NULL, NULL},
};

static const luaL_Reg digest_funcs[] = {
    {"digest", l_digest},
    {"dupes", l_dupes},
    {NULL, NULL},
};

void lc_register_digest(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__len", l_dupes_size}, {"__gc", l_dupes_gc}, {NULL, NULL}};
    lc_class(L, DUPES_METATABLE, meta, dupes_methods);
    lc_setfuncs(L, digest_funcs);
}
