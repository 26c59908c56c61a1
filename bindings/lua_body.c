/* lua_body.c: response bodies held outside the Lua heap, with the response's
 * facts that scripts seldom read.
 *
 * A fetch hands its body to Lua as a small userdata that owns the malloc'd bytes
 * curl wrote, not as a Lua string: a crawler that only scans a page for links never
 * copies it, interns it or makes the collector sweep it (bodies are
 * most of what a crawl allocates, and they drove most collection cycles). res.body
 * makes the string on first use (init.lua); the HTML functions read the userdata
 * directly (lc_tobytes).
 *
 * The collector does not see these bytes, so they are paced here: while more than
 * BODY_BUDGET bytes of the state's bodies are alive, each new body does the collection work its
 * size would have caused as a string. They count towards max_memory
 * (lc_limits_account). res:release() (core.body_free) gives them back at once.
 *
 * The same userdata keeps the facts of the response that most scripts never read:
 * res.ip, res.http_version, res.redirects, res.size and res.time, which init.lua
 * asks core.body_fact for on first use. A response table with those five fields
 * and a table for the timings made most of the example crawler's garbage a page
 * (docs/benchmarks.md). They outlive res:release(). */
#include "http_capture.h"
#include "lua_aux.h"
#include "lua_body.h"
#include "lua_limits.h"
#include "lua_libs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BODY_METATABLE[] = "luacrawl.body";
/* A body given back early (res:release()): no __gc, so the collector frees the
 * userdata without calling a finalizer. */
static const char BODY_SPENT_METATABLE[] = "luacrawl.body.spent";
#define BODY_BUDGET (16u << 20)

/* A body's bytes and capture once lent to a WARC writer's thread (lc_lend_body): freed
 * by whichever of the body and the borrowers lets go last. */
struct shared_bytes {
    atomic_int refs;
    char *data;
    http_capture_t *capture;
};

static void shared_release(void *arg)
{
    struct shared_bytes *s = arg;
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
    free(s->data);
    http_capture_free(s->capture);
    free(s);
}

struct body {
    char *data;
    size_t len;
    struct shared_bytes *shared; /* NULL until data is lent; then it owns data and capture */
    lc_state_t *st; /* whose body_bytes count data; alive as long as any body (lua_close
                     * runs every finalizer before it frees anything) */
    /* The facts, kept after the bytes are given back. */
    size_t size;
    int redirects;
    double t_dns, t_connect, t_tls, t_ttfb, t_total;
    char version[4];         /* "1.0", "1.1", "2", "3" */
    char ip[48];             /* INET6_ADDRSTRLEN and more */
    http_capture_t *capture; /* a fetch with archive = true: what went over the wire */
    /* The response's headers as the server sent them, in this userdata after the
     * struct (names and values too): res.headers is made of them on first use
     * (lc_body_headers), and most pages never read more than one. */
    int nheaders;
    http_header_t *headers;
};

/* The body at idx (given back or not), else NULL. */
static struct body *to_body(lua_State *L, int idx)
{
    return lc_toudata_either(L, idx, BODY_METATABLE, BODY_SPENT_METATABLE);
}

/* Give b's bytes back; b is empty after. */
static void drop_bytes(lua_State *L, struct body *b)
{
    if (b->capture) lc_limits_account(L, -(long long)http_capture_bytes(b->capture));
    if (b->data) {
        lc_limits_account(L, -(long long)b->len);
        b->st->body_bytes -= b->len;
    }
    if (b->shared) {
        shared_release(b->shared); /* the writer may still hold them */
    } else {
        http_capture_free(b->capture);
        free(b->data);
    }
    b->shared = NULL;
    b->capture = NULL;
    b->data = NULL;
    b->len = 0;
}

static int l_body_gc(lua_State *L)
{
    struct body *b = to_body(L, 1);
    if (b) drop_bytes(L, b);
    return 0;
}

static int l_body_len(lua_State *L)
{
    struct body *b = to_body(L, 1);
    if (!b) luaL_typerror(L, 1, "body");
    lua_pushnumber(L, (double)b->len);
    return 1;
}

static int l_body_tostring(lua_State *L)
{
    struct body *b = to_body(L, 1);
    if (!b) luaL_typerror(L, 1, "body");
    lua_pushfstring(L, "luacrawl.body (%d bytes)", (int)b->len);
    return 1;
}

/* Copy s into a field of n bytes, cut if it must be. */
static void copy_fact(char *dst, size_t n, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len >= n) len = n - 1;
    memcpy(dst, s ? s : "", len);
    dst[len] = 0;
}

/* The bytes res's headers take in a body: their array and their strings. */
static size_t headers_size(const http_res_t *res)
{
    size_t n = (size_t)res->nheaders * sizeof(http_header_t);
    for (int i = 0; i < res->nheaders; i++)
        n += strlen(res->headers[i].name) + strlen(res->headers[i].value) + 2;
    return n;
}

/* Copy res's headers into b's userdata, after the struct (size bytes). */
static void copy_headers(struct body *b, const http_res_t *res)
{
    b->nheaders = res->nheaders;
    b->headers = (http_header_t *)(b + 1);
    char *p = (char *)(b->headers + res->nheaders);
    for (int i = 0; i < res->nheaders; i++) {
        const char *fields[2] = {res->headers[i].name, res->headers[i].value};
        for (int j = 0; j < 2; j++) {
            size_t len = strlen(fields[j]) + 1;
            memcpy(p, fields[j], len);
            fields[j] = p;
            p += len;
        }
        b->headers[i].name = fields[0];
        b->headers[i].value = fields[1];
    }
}

void lc_push_body(lua_State *L, lc_state_t *st, const http_res_t *res)
{
    /* The collection work first: a step may run a finalizer that raises, and after
     * the body is taken nothing may raise but a failure to take it (lua_http.c's
     * deliver builds the response again, with the body this call made). */
    if (st->body_bytes + res->body_len > BODY_BUDGET)
        lua_gc(L, LUA_GCSTEP, (int)(res->body_len >> 10) + 1);
    struct body *b = lua_newuserdata(L, sizeof(*b) + headers_size(res));
    b->data = NULL;
    b->len = 0;
    b->st = st;
    b->capture = NULL;
    b->shared = NULL;
    b->size = res->body_len;
    b->redirects = res->redirects;
    b->t_dns = res->t_dns;
    b->t_connect = res->t_connect;
    b->t_tls = res->t_tls;
    b->t_ttfb = res->t_ttfb;
    b->t_total = res->t_total;
    copy_fact(b->version, sizeof(b->version), res->http_version);
    copy_fact(b->ip, sizeof(b->ip), res->ip);
    copy_headers(b, res);
    lc_getmetatable(L, BODY_METATABLE);
    lua_setmetatable(L, -2);
    if ((b->capture = http_res_take_capture(res)))
        lc_limits_account(L, (long long)http_capture_bytes(b->capture));
    /* Taken only now that nothing can raise before b owns it. */
    char *data = http_res_take_body(res);
    if (!data) {
        if (res->body_len) luaL_error(L, "out of memory taking the body");
        if (b->capture) http_capture_lend_body(b->capture, NULL, 0);
        return;
    }
    /* The archive's copy of a body without Content-Encoding is this one: b frees
     * both together (drop_bytes). */
    if (b->capture) http_capture_lend_body(b->capture, data, res->body_len);
    b->data = data;
    b->len = res->body_len;
    st->body_bytes += b->len;
    lc_limits_account(L, (long long)b->len);
}

const char *lc_tobytes(lua_State *L, int idx, size_t *len)
{
    if (lua_type(L, idx) == LUA_TSTRING) return lua_tolstring(L, idx, len);
    struct body *b = to_body(L, idx);
    if (!b) return NULL;
    *len = b->len;
    return b->data ? b->data : "";
}

struct http_capture *lc_tocapture(lua_State *L, int idx)
{
    struct body *b = to_body(L, idx);
    return b ? b->capture : NULL;
}

int lc_lend_body(lua_State *L, int idx, void (**release)(void *), void **arg)
{
    struct body *b = to_body(L, idx);
    if (!b || (!b->data && !b->capture)) return -1;
    if (!b->shared) {
        struct shared_bytes *s = malloc(sizeof(*s));
        if (!s) return -1;
        atomic_init(&s->refs, 1); /* the body's */
        s->data = b->data;
        s->capture = b->capture;
        b->shared = s;
    }
    atomic_fetch_add_explicit(&b->shared->refs, 1, memory_order_relaxed);
    *release = shared_release;
    *arg = b->shared;
    return 0;
}

const http_header_t *lc_body_headers(lua_State *L, int idx, int *n)
{
    const struct body *b = to_body(L, idx);
    if (!b) return NULL;
    *n = b->nheaders;
    return b->headers;
}

const char *lc_checkbytes(lua_State *L, int idx, size_t *len)
{
    const char *s = lc_tobytes(L, idx, len);
    if (!s) luaL_typerror(L, idx, "string");
    return s;
}

/* core.body_free(body): give the bytes back now; the body is empty after. */
static int l_body_free(lua_State *L)
{
    struct body *b = to_body(L, 1);
    if (!b) luaL_typerror(L, 1, "body");
    drop_bytes(L, b);
    lc_getmetatable(L, BODY_SPENT_METATABLE);
    lua_setmetatable(L, 1);
    return 0;
}

/* core.body_string(body) -> the bytes as a Lua string */
static int l_body_string(lua_State *L)
{
    size_t len;
    const char *s = lc_checkbytes(L, 1, &len);
    lua_pushlstring(L, s, len);
    return 1;
}

/* core.body_write(body or string, file) -> true | nil, message: the bytes written to
 * an io file (io.stdout) as they are, without making them a Lua string first: a
 * large body as a string would count twice towards max_memory. */
static int l_body_write(lua_State *L)
{
    size_t len;
    const char *s = lc_checkbytes(L, 1, &len);
    /* A Lua 5.1 or LuaJIT file handle: its first field is the FILE *. */
    FILE **f = luaL_checkudata(L, 2, "FILE*");
    if (!*f) return luaL_argerror(L, 2, "file is closed");
    errno = 0;
    if (fwrite(s, 1, len, *f) == len) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno ? errno : EIO));
    return 2;
}

/* core.body_fact(body, name) -> res[name] for a fact the body keeps: "ip",
 * "http_version", "redirects", "size", or "time" (a new table); nil for any other
 * name, or when body is not a body. */
static int l_body_fact(lua_State *L)
{
    const struct body *b = to_body(L, 1);
    size_t n;
    const char *k = lua_tolstring(L, 2, &n);
    if (!b || !k) return 0;
    if (n == 4 && memcmp(k, "time", 4) == 0) {
        lua_createtable(L, 0, 5);
        lc_set_number(L, "dns", b->t_dns);
        lc_set_number(L, "connect", b->t_connect);
        lc_set_number(L, "tls", b->t_tls);
        lc_set_number(L, "ttfb", b->t_ttfb);
        lc_set_number(L, "total", b->t_total);
    } else if (n == 4 && memcmp(k, "size", 4) == 0) {
        lua_pushnumber(L, (double)b->size);
    } else if (n == 2 && memcmp(k, "ip", 2) == 0) {
        lua_pushstring(L, b->ip);
    } else if (n == 12 && memcmp(k, "http_version", 12) == 0) {
        lua_pushstring(L, b->version);
    } else if (n == 9 && memcmp(k, "redirects", 9) == 0) {
        lua_pushnumber(L, b->redirects);
    } else {
        return 0;
    }
    return 1;
}

/* core.body_elapsed(body) -> res.time.total without making res.time (the crawl's
 * report and record read it for every page); nil for what is not a body. */
static int l_body_elapsed(lua_State *L)
{
    const struct body *b = to_body(L, 1);
    if (!b) return 0;
    lua_pushnumber(L, b->t_total);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"body_string", l_body_string}, {"body_elapsed", l_body_elapsed}, {"body_free", l_body_free},
    {"body_fact", l_body_fact},     {"body_write", l_body_write},     {NULL, NULL},
};

void lc_register_body(lua_State *L)
{
    static const luaL_Reg meta[] = {
        {"__gc", l_body_gc}, {"__len", l_body_len}, {"__tostring", l_body_tostring}, {NULL, NULL}};
    lc_class(L, BODY_METATABLE, meta, NULL);
    lc_class(L, BODY_SPENT_METATABLE, meta + 1, NULL); /* no __gc */
    lc_setfuncs(L, funcs);
}
