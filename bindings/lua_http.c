/* lua_http.c: core.fetch and core.resolve. A fetch builds an http request from the
 * options table, starts it and yields; the completion builds the response table
 * (in protected mode, on the scheduler's state) and wakes the task with it. */
#include "lua_check.h"
#include "lua_cookies.h"
#include "lua_opts.h"
#include "lua_aux.h"
#include "lua_body.h"
#include "lua_http.h"
#include "lua_libs.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct op {
    lc_state_t *st;
    task_t *task;
    void *pending; /* http_xfer_t or dns_wait_t while in flight */
    const void *result;
    int nresults; /* the builder moved onto the task */
};

/* The error a builder's failure hands over, in the registry at st->oom_error_ref
 * (0 until made): made before the operation starts, since a builder fails when
 * memory runs out, and then nothing more can be made. A reference rather than a
 * key: a flag to test, and a lua_rawgeti to fetch it, for every fetch. */
static void ready_oom_error(lua_State *L, lc_state_t *st)
{
    if (st->oom_error_ref) return;
    lc_push_error(L, st, "memory", "out of memory building the result");
    st->oom_error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* The body a response builder made in an attempt that failed later, for the next
 * attempt (the body is taken from the transfer once), in the registry at
 * st->kept_body_ref: the reference is made with the state (false when empty), so
 * that storing under it allocates nothing. */
static void set_kept_body(lua_State *L, lc_state_t *st, int idx)
{
    if (idx)
        lua_pushvalue(L, idx);
    else
        lua_pushboolean(L, 0);
    lua_rawseti(L, LUA_REGISTRYINDEX, st->kept_body_ref);
}

/* Building a result allocates, and an allocation may run a step of the collector
 * and the step a __gc metamethod, whose error LuaJIT 2.1 (Debian 12's) rethrows to
 * the allocation (see task.c's store_outcome). So a failed attempt is made again:
 * each failure ran one finalizer that will not run again. Out of memory is given a
 * few more attempts, not forever. */
#define DELIVER_TRIES 1000000
#define DELIVER_MEM_TRIES 4

/* Say what made an attempt fail (the error on top of L, popped); 1 if it was out
 * of memory. The builders' own errors are all a failed malloc ("out of memory
 * ..."): they count as such, or a failure that is not a finalizer's would be
 * tried again and again. Said where the scheduler's reports go: an embedding
 * host's log callback (lc_engine_on_log), else stderr. */
static int report_build_error(lc_state_t *st, lua_State *L, int status)
{
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int mem = status == LUA_ERRMEM || (msg && strstr(msg, "out of memory"));
    if (!mem)
        sched_log(st->sched, "luacrawl: error in a __gc metamethod (ignored): %s",
                  msg ? msg : luaL_typename(L, -1));
    lua_pop(L, 1);
    return mem;
}

/* Run a builder (a registry ref: lua_cpcall would make a new closure for each
 * call) on op in protected mode, and wake op's task with what it handed over: the
 * builder moves its results onto the task's stack as its last step (hand_over), so
 * that they arrive whole or not at all. */
static void deliver(struct op *op, int builder)
{
    lua_State *L = op->st->L;
    lua_State *co = task_thread(op->task);
    int status = -1;
    for (int tries = 0, mem = 0; tries < DELIVER_TRIES && mem < DELIVER_MEM_TRIES; tries++) {
        op->nresults = 0;
        lua_rawgeti(L, LUA_REGISTRYINDEX, builder);
        lua_pushlightuserdata(L, op);
        status = lua_pcall(L, 1, 0, 0);
        if (status == 0) break;
        mem += report_build_error(op->st, L, status);
    }
    set_kept_body(L, op->st, 0);
    int n = op->nresults;
    if (status != 0) {
        /* Out of memory: report it to the task as a failed operation, with the
         * error made beforehand (a lua_rawgeti allocates nothing). */
        lua_pushnil(co);
        lua_rawgeti(co, LUA_REGISTRYINDEX, op->st->oom_error_ref);
        n = 2;
    }
    task_wake(op->task, n);
    free(op);
}

/* A builder's last step: the n values on top of L go to the task. */
static int hand_over(lua_State *L, struct op *op, int n)
{
    lua_xmove(L, task_thread(op->task), n);
    op->nresults = n;
    return 0;
}

/* Header names, made once. A response's header names are the same from page to
 * page, but making each a Lua string again means hashing it and looking it up in
 * LuaJIT's string table (whose chains ran through a crawl's queued URLs, a cache
 * miss or two per name, until queues kept their strings in C: lua_queue.c). This cache maps a
 * lower-case name to its string by the hash push_headers computes anyway (one name per slot, the
 * last that hashed there); the strings sit in a table at their slot's index, which keeps them
 * alive. */
#define NAME_SLOTS 64
#define NAME_MAX_LEN 32 /* longer names are made each time */

struct lc_names {
    struct name_slot {
        unsigned hash, len; /* len 0: an empty slot */
        char s[NAME_MAX_LEN];
    } slot[NAME_SLOTS];
    int table_ref;
};

/* Push the name (n bytes, hash h) from the cache, whose table is at index t. */
static void push_name(lua_State *L, struct lc_names *c, int t, const char *name, size_t n,
                      unsigned h)
{
    if (n == 0 || n > NAME_MAX_LEN) {
        lua_pushlstring(L, name, n);
        return;
    }
    int i = (int)(h % NAME_SLOTS);
    struct name_slot *slot = &c->slot[i];
    if (slot->len == n && slot->hash == h && memcmp(slot->s, name, n) == 0) {
        lua_rawgeti(L, t, i + 1);
        return;
    }
    lua_pushlstring(L, name, n);
    lua_pushvalue(L, -1);
    lua_rawseti(L, t, i + 1);
    memcpy(slot->s, name, n);
    slot->len = (unsigned)n;
    slot->hash = h;
}

/* The cache (made on first use), its table pushed. */
static struct lc_names *names_cache(lua_State *L, lc_state_t *st)
{
    if (!st->names) {
        struct lc_names *c = calloc(1, sizeof(*c));
        if (!c) luaL_error(L, "out of memory");
        lua_createtable(L, NAME_SLOTS, 0);
        c->table_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        st->names = c;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->names->table_ref);
    return st->names;
}

/* Headers keyed by lower-case name; repeated names joined with ", ". */
static void push_headers(lua_State *L, lc_state_t *st, const http_header_t *hdrs, int nheaders)
{
    struct lc_names *cache = names_cache(L, st);
    int t = lua_gettop(L);
    lua_createtable(L, 0, nheaders);
    char name[256];
    uint64_t names = 0; /* a bit per name hash: only a name whose bit is set may repeat */
    for (int i = 0; i < nheaders; i++) {
        const char *raw = hdrs[i].name;
        size_t n = strlen(raw);
        if (n >= sizeof(name)) continue;
        unsigned h = 0;
        for (size_t j = 0; j < n; j++) {
            unsigned char c = (unsigned char)raw[j];
            if (c >= 'A' && c <= 'Z') c += 32;
            name[j] = (char)c;
            h = h * 31 + c;
        }
        uint64_t bit = (uint64_t)1 << (h & 63);
        push_name(L, cache, t, name, n, h); /* the key */
        if (names & bit) {
            lua_pushvalue(L, -1);
            lua_rawget(L, -3);
        } else {
            names |= bit;
            lua_pushnil(L);
        }
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_pushstring(L, hdrs[i].value);
        } else {
            lua_pushliteral(L, ", ");
            lua_pushstring(L, hdrs[i].value);
            lua_concat(L, 3);
        }
        lua_rawset(L, -3);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->headers_mt_ref);
    lua_setmetatable(L, -2);
    lua_remove(L, t);
}

/* core.response_headers(body) -> res.headers, made on first use (init.lua) of the
 * headers the body keeps (lua_body.c); nil for what is not a body. */
static int l_response_headers(lua_State *L)
{
    int n = 0;
    const http_header_t *hdrs = lc_body_headers(L, 1, &n);
    if (!hdrs) return 0;
    push_headers(L, lc_state(L), hdrs, n);
    return 1;
}

/* core.response_header(body, name) -> res.headers[name] (name in lower case) without
 * making res.headers: the value, or the values of a repeated name joined with ", ";
 * nil when there is none, or for what is not a body. */
static int l_response_header(lua_State *L)
{
    int n = 0;
    const http_header_t *hdrs = lc_body_headers(L, 1, &n);
    size_t len;
    const char *name = luaL_checklstring(L, 2, &len);
    if (!hdrs || len >= 256) return 0; /* res.headers keeps no longer name */
    int found = 0;
    for (int i = 0; i < n; i++) {
        const char *raw = hdrs[i].name;
        size_t j = 0;
        for (; j < len && raw[j]; j++) {
            unsigned char c = (unsigned char)raw[j];
            if (c >= 'A' && c <= 'Z') c += 32;
            if (c != (unsigned char)name[j]) break;
        }
        if (j != len || raw[j]) continue;
        if (found) lua_pushliteral(L, ", ");
        lua_pushstring(L, hdrs[i].value);
        found++;
    }
    if (found > 1) lua_concat(L, 2 * found - 1);
    return found ? 1 : 0;
}

/* The response: its fields pushed in the order init.lua's new_response takes them,
 * which builds the table (a table constructor with constant keys costs far less
 * than a lua_setfield per field). Its headers stay in the body until read
 * (l_response_headers): making them was most of the Lua strings a page made. */
static int build_response(lua_State *L)
{
    struct op *op = lua_touserdata(L, 1);
    lc_state_t *st = op->st;
    const http_res_t *res = op->result;
    if (res->error != HTTP_OK) {
        lua_pushnil(L);
        lc_push_error(L, st, http_error_name(res->error), res->message);
        lc_set_string(L, "url", res->url);
        return hand_over(L, op, 2);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->new_response_ref);
    lua_pushnumber(L, (double)res->status);
    lua_pushstring(L, res->url);
    /* The body, and the facts read on first use (res.time, res.ip...: lua_body.c);
     * the one an earlier attempt made if there is one (deliver). */
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->kept_body_ref);
    if (!lua_isuserdata(L, -1)) {
        lua_pop(L, 1);
        lc_push_body(L, st, res);
        set_kept_body(L, st, lua_gettop(L));
    }
    lua_pushboolean(L, res->truncated);
    lua_pushnumber(L, (double)res->body_len); /* res.size, read for most pages */
    lua_call(L, 5, 1);
    return hand_over(L, op, 1);
}

static void fetch_done(void *arg, const http_res_t *res)
{
    struct op *op = arg;
    op->result = res;
    deliver(op, op->st->build_response_ref);
}

static void fetch_abort(void *arg)
{
    struct op *op = arg;
    http_cancel(op->st->http, op->pending);
    free(op);
}

/* The longest timeout fetch takes: a year, in seconds. */
#define FETCH_MAX_SECONDS 31536000.0

/* The options fetch reads, in the order of opt_list. */
enum opt {
    O_METHOD,
    O_USER_AGENT,
    O_PROXY,
    O_CA_FILE,
    O_BODY,
    O_HEADERS,
    O_TIMEOUT,
    O_CONNECT_TIMEOUT,
    O_MAX_SIZE,
    O_MAX_HEADER_SIZE,
    O_FOLLOW,
    O_MAX_URL_LENGTH,
    O_INSECURE,
    O_TRUNCATE,
    O_KEEP_CREDENTIALS,
    O_FOLLOW_SITE,
    O_PUBLIC_ONLY,
    O_DENY_NETWORKS,
    O_ARCHIVE,
    O_COOKIES,
    O_COUNT
};

/* Their types and ranges: a timeout goes to curl in milliseconds, as a long (a year
 * is far beyond any use); the redirect budget is an int. */
static const lc_opt_t opt_list[O_COUNT] = {
    LC_OPT("method", LC_OPT_STRING),
    LC_OPT("user_agent", LC_OPT_STRING),
    LC_OPT("proxy", LC_OPT_STRING),
    LC_OPT("ca_file", LC_OPT_STRING),
    LC_OPT("body", LC_OPT_STRING),
    LC_OPT("headers", LC_OPT_TABLE),
    LC_OPT_RANGE("timeout", LC_OPT_NUMBER, 0, FETCH_MAX_SECONDS),
    LC_OPT_RANGE("connect_timeout", LC_OPT_NUMBER, 0, FETCH_MAX_SECONDS),
    LC_OPT_RANGE("max_size", LC_OPT_INTEGER, 0, LC_INT_MAX),
    LC_OPT_RANGE("max_header_size", LC_OPT_INTEGER, 0, LC_INT_MAX),
    LC_OPT_RANGE("follow", LC_OPT_INTEGER, 0, INT_MAX),
    LC_OPT_RANGE("max_url_length", LC_OPT_INTEGER, 0, LC_INT_MAX),
    LC_OPT("insecure", LC_OPT_ANY),
    LC_OPT("truncate", LC_OPT_ANY),
    LC_OPT("keep_credentials", LC_OPT_ANY),
    LC_OPT("follow_site", LC_OPT_ANY),
    LC_OPT("public_only", LC_OPT_ANY),
    LC_OPT("deny_networks", LC_OPT_ANY),
    LC_OPT("archive", LC_OPT_ANY),
    LC_OPT("cookies", LC_OPT_ANY),
};

static const lc_opts_t fetch_opts = {"fetch", "fetch: option '%s'", 0, O_COUNT, opt_list};

/* The option in slot o + i as a string (NULL when nil; o 0: no options). */
static const char *opt_string(lua_State *L, int o, enum opt i)
{
    return o ? lua_tostring(L, o + (int)i) : NULL;
}

/* The option in slot o + i as a number (0 when nil: the default). */
static double opt_number(lua_State *L, int o, enum opt i)
{
    return o ? lua_tonumber(L, o + (int)i) : 0;
}

/* A timeout: nil for the default (0 here); else more than 0. 0 is refused rather
 * than taken as "none" or as the default: there is no fetch without a time limit. */
static double opt_seconds(lua_State *L, int o, enum opt i)
{
    if (!o || lua_isnil(L, o + (int)i)) return 0;
    double v = lua_tonumber(L, o + (int)i);
    if (v <= 0)
        luaL_error(L, "fetch: option '%s' must be more than 0 seconds (there is no 'no limit')",
                   opt_list[i].name);
    return v;
}

/* A setter's refusal after the request was made: out of memory (the values were
 * checked before). Going on without the option would send a POST as a GET, or a
 * proxied request direct: the fetch fails instead (NULL from make_request). */
static http_req_t *req_failed(http_req_t *req)
{
    http_req_free(req);
    return NULL;
}

static void bad_header(lua_State *L, http_req_t *req, const char *name)
{
    http_req_free(req);
    luaL_error(L,
               "fetch: header '%s' refused: names and values must not contain CR or LF "
               "(and names no colon)",
               name);
}

/* The headers table at idx (checked to be one) into req. */
static void apply_headers(lua_State *L, int idx, http_req_t *req)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1)) {
            http_req_free(req);
            luaL_error(L, "fetch: headers must map names to strings");
        }
        const char *name = lua_tostring(L, -2);
        if (http_req_header(req, name, lua_tostring(L, -1)) < 0) bad_header(L, req, name);
        lua_pop(L, 1);
    }
}

/* An address policy (http_addr_policy.h) from public_only (a truthy value at index pub;
 * 0: none) and deny_networks (nil or false, or a list of CIDR strings, at index
 * deny; 0: none). NULL when neither asks for anything, or when out of memory (*oom set).
 * Raises, naming what, for a value that is not a network; frees what it made first. */
addr_policy_t *lc_policy_from(lua_State *L, int pub, int deny, const char *what, int *oom)
{
    *oom = 0;
    int public_only = pub && lua_toboolean(L, pub);
    int has_deny = deny && lua_toboolean(L, deny); /* nil or false: none */
    if (has_deny && !lua_istable(L, deny))
        luaL_error(L, "%s: deny_networks must be a list of networks (CIDR strings)", what);
    if (!public_only && !has_deny) return NULL;
    addr_policy_t *p = addr_policy_new();
    if (!p) {
        *oom = 1;
        return NULL;
    }
    addr_policy_public_only(p, public_only);
    int n = has_deny ? (int)lua_objlen(L, deny) : 0;
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, deny, i);
        const char *cidr = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int rc = cidr ? addr_policy_deny(p, cidr) : -1;
        if (rc == -1) {
            addr_policy_free(p);
            luaL_error(L,
                       "%s: deny_networks[%d] is not a network (a CIDR such as \"10.0.0.0/8\" "
                       "or \"fc00::/7\"): %s",
                       what, i, cidr ? cidr : luaL_typename(L, -1));
        }
        lua_pop(L, 1);
        if (rc == -2) {
            addr_policy_free(p);
            *oom = 1;
            return NULL;
        }
    }
    return p;
}

/* Options read once (core.fetch_options): a request with every setting but its URL,
 * which each fetch given them copies (http_req_copy). */
static const char PREPARED_METATABLE[] = "luacrawl.fetch_options";
struct prepared {
    http_req_t *req; /* NULL until made */
};

/* Build a request from fetch's arguments; raises on a programming error, NULL when
 * out of memory. The options are checked before the request exists, so an error
 * leaks nothing. */
static http_req_t *make_request(lua_State *L, const char *url)
{
    const struct prepared *prepared = lc_toudata_either(L, 2, PREPARED_METATABLE, NULL);
    if (prepared) return prepared->req ? http_req_copy(prepared->req, url) : NULL;
    int o = 0;
    if (!lua_isnoneornil(L, 2)) {
        if (!lua_istable(L, 2)) luaL_error(L, "fetch: options must be a table");
        o = lc_push_opts(L, 2, &fetch_opts);
    }
    const char *method = opt_string(L, o, O_METHOD), *ua = opt_string(L, o, O_USER_AGENT);
    const char *proxy = opt_string(L, o, O_PROXY), *ca_file = opt_string(L, o, O_CA_FILE);
    size_t body_len = 0;
    const char *body = o ? lua_tolstring(L, o + O_BODY, &body_len) : NULL;
    int headers = o && !lua_isnil(L, o + O_HEADERS);
    /* nil for each: the default. */
    double timeout = opt_seconds(L, o, O_TIMEOUT);
    double connect_timeout = opt_seconds(L, o, O_CONNECT_TIMEOUT);
    long long max_size = (long long)opt_number(L, o, O_MAX_SIZE);
    long long max_header_size = (long long)opt_number(L, o, O_MAX_HEADER_SIZE);
    long long follow = (long long)opt_number(L, o, O_FOLLOW);
    long long max_url = (long long)opt_number(L, o, O_MAX_URL_LENGTH);
    int oom = 0;
    addr_policy_t *policy =
        o ? lc_policy_from(L, o + O_PUBLIC_ONLY, o + O_DENY_NETWORKS, "fetch", &oom) : NULL;
    if (oom) return NULL;
    /* nil or false: none. Checked before anything is made, as the rest are. */
    cookies_t *jar = o && lua_toboolean(L, o + O_COOKIES) ? lc_tocookies(L, o + O_COOKIES) : NULL;
    if (o && lua_toboolean(L, o + O_COOKIES) && !jar) {
        addr_policy_free(policy);
        luaL_error(L, "fetch: option 'cookies' must be a cookie jar (lc.cookies())");
    }

    http_req_t *req = http_req_new(url);
    if (!req) {
        addr_policy_free(policy);
        return NULL;
    }
    http_req_policy(req, policy);
    if (method && http_req_method(req, method) < 0) {
        http_req_free(req);
        luaL_error(L, "fetch: bad method '%s' (use upper-case letters, e.g. \"POST\")", method);
    }
    if (ua && http_req_user_agent(req, ua) < 0) bad_header(L, req, "User-Agent");
    if (proxy && http_req_proxy(req, proxy) < 0) return req_failed(req);
    if (ca_file && http_req_ca_file(req, ca_file) < 0) return req_failed(req);
    if (body && http_req_body(req, body, body_len) < 0) return req_failed(req);
    if (headers) apply_headers(L, o + O_HEADERS, req);
    http_req_timeout(req, timeout, connect_timeout);
    http_req_max_size(req, (size_t)max_size, (size_t)max_header_size);
    http_req_follow(req, (int)follow);
    http_req_max_url(req, (size_t)max_url);
    http_req_insecure(req, o && lua_toboolean(L, o + O_INSECURE));
    http_req_truncate(req, o && lua_toboolean(L, o + O_TRUNCATE));
    http_req_keep_credentials(req, o && lua_toboolean(L, o + O_KEEP_CREDENTIALS));
    http_req_follow_site(req, o && lua_toboolean(L, o + O_FOLLOW_SITE));
    http_req_archive(req, o && lua_toboolean(L, o + O_ARCHIVE));
    http_req_cookies(req, jar);
    return req;
}

/* core.fetch(url [, opts]) -> res | nil, err */
static int l_fetch(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    size_t url_len;
    const char *url = luaL_checklstring(L, 1, &url_len);
    task_t *t = task_waitable(st->sched, L, "fetch");
    http_t *http = lc_http(L, st);
    ready_oom_error(L, st);
    if (memchr(url, '\0', url_len)) {
        /* The C side would see the URL up to the NUL, another URL: refused as
         * lc.url refuses it. (Other control bytes are refused by the URL parser.) */
        lua_pushnil(L);
        lc_push_error(L, st, "invalid_url", "invalid URL: it contains a NUL byte");
        lua_pushlstring(L, url, url_len);
        lua_setfield(L, -2, "url");
        return 2;
    }
    http_req_t *req = make_request(L, url);
    lua_settop(L, 2); /* the options make_request read */
    struct op *op = req ? calloc(1, sizeof(*op)) : NULL;
    if (op) {
        op->st = st;
        op->task = t;
        op->pending = http_start(http, req, fetch_done, op); /* frees req on failure */
        if (op->pending) {
            task_wait(t, fetch_abort, op);
            return lua_yield(L, 0);
        }
        free(op);
    } else {
        http_req_free(req);
    }
    /* Out of memory: an error of the crawl's kind, as a transfer's would be. */
    lua_pushnil(L);
    lc_push_error(L, st, "memory", "out of memory starting the request");
    lc_set_string(L, "url", url);
    return 2;
}

/* ---- resolve ---- */

static int build_answer(lua_State *L)
{
    struct op *op = lua_touserdata(L, 1);
    const dns_answer_t *ans = op->result;
    if (ans->status != DNS_OK) {
        const char *kind = ans->status == DNS_MEMORY     ? "memory"
                           : ans->status == DNS_RESOURCE ? "resource"
                                                         : "dns";
        lua_pushnil(L);
        lc_push_error(L, op->st, kind, ans->error ? ans->error : "DNS lookup failed");
        return hand_over(L, op, 2);
    }
    lua_createtable(L, ans->naddrs, 0);
    for (int i = 0; i < ans->naddrs; i++) {
        lua_pushstring(L, ans->addrs[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushnumber(L, ans->ttl);
    return hand_over(L, op, 2);
}

static void resolve_done(void *arg, const dns_answer_t *ans)
{
    struct op *op = arg;
    op->result = ans;
    deliver(op, op->st->build_answer_ref);
}

static void resolve_abort(void *arg)
{
    struct op *op = arg;
    dns_cancel(op->st->dns, op->pending);
    free(op);
}

/* core.resolve(host) -> {addrs}, ttl | nil, err */
static int l_resolve(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    const char *host = luaL_checkstring(L, 1);
    task_t *t = task_waitable(st->sched, L, "resolve");
    dns_t *dns = lc_dns(L, st);
    ready_oom_error(L, st);
    struct op *op = calloc(1, sizeof(*op));
    if (op) {
        op->st = st;
        op->task = t;
        op->pending = dns_resolve(dns, host, resolve_done, op);
        if (op->pending) {
            task_wait(t, resolve_abort, op);
            return lua_yield(L, 0);
        }
        free(op);
    }
    return lc_fail(L, st, "memory", "out of memory starting the lookup");
}

/* core.check_fetch_options(opts): raises as fetch would for opts (a header with CR or
 * LF, a number out of range, ...) without starting anything: a crawl checks the
 * options of its fetches before its first request, so that a request that can never
 * be built is a usage error, not an error of every request. */
static int l_check_fetch_options(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushnil(L);
    lua_insert(L, 1); /* make_request reads the options at index 2 */
    http_req_free(make_request(L, "http://check.invalid/"));
    return 0;
}

/* core.fetch_options(opts) -> the options read and checked once, as fetch reads
 * them: fetch(url, it) then fetches as fetch(url, opts) does, without reading the
 * table again (a crawl's fetches share one). Changes to opts made later are not seen.
 * Raises as fetch would for opts. */
static int l_fetch_options(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    struct prepared *ud = lua_newuserdata(L, sizeof(*ud));
    ud->req = NULL; /* until made: __gc frees nothing if make_request raises */
    lc_getmetatable(L, PREPARED_METATABLE);
    lua_setmetatable(L, -2);
    lua_insert(L, 1); /* make_request reads the options at index 2 */
    ud->req = make_request(L, "http://fetch-options.invalid/");
    if (!ud->req) return luaL_error(L, "fetch_options: out of memory");
    lua_settop(L, 1);
    return 1;
}

static int l_prepared_gc(lua_State *L)
{
    struct prepared *ud = lua_touserdata(L, 1);
    http_req_free(ud->req);
    ud->req = NULL;
    return 0;
}

/* core.address_policy(public_only, deny_networks): the engine's address policy,
 * replaced whole (nil and nil: none). */
static int l_address_policy(lua_State *L)
{
    lc_state_t *st = lc_state(L);
    lua_settop(L, 2);
    http_t *http = lc_http(L, st); /* first: it may raise */
    int oom;
    addr_policy_t *p = lc_policy_from(L, 1, 2, "configure", &oom);
    if (oom) return luaL_error(L, "configure: out of memory");
    http_set_policy(http, p);
    return 0;
}

/* core.check_networks(deny_networks, what): raises, naming what, unless it is nil or
 * a list of networks fetch and configure take. */
static int l_check_networks(lua_State *L)
{
    lua_settop(L, 2);
    const char *what = luaL_optstring(L, 2, "deny_networks");
    int oom;
    addr_policy_free(lc_policy_from(L, 0, 1, what, &oom));
    return 0;
}

/* core.fetch_option_names() -> the names lc.fetch reads from its options, a list:
 * the one list a spec's fetch table is checked against (an unknown name there is
 * a misspelling: lua/luacrawl/spec_check.lua). */
static int l_fetch_option_names(lua_State *L)
{
    lua_createtable(L, O_COUNT, 0);
    for (int i = 0; i < O_COUNT; i++) {
        lua_pushlstring(L, opt_list[i].name, opt_list[i].len);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* core.error_kinds() -> {"invalid_url", "dns", ...}: every kind a fetch error may have
 * (crawl.run checks retry_kinds against them). */
static int l_error_kinds(lua_State *L)
{
    lua_createtable(L, HTTP_E_COUNT - 1, 0);
    for (int e = HTTP_OK + 1; e < HTTP_E_COUNT; e++) {
        lua_pushstring(L, http_error_name((enum http_error)e));
        lua_rawseti(L, -2, e);
    }
    return 1;
}

static const luaL_Reg funcs[] = {
    {"fetch", l_fetch},
    {"fetch_option_names", l_fetch_option_names},
    {"error_kinds", l_error_kinds},
    {"resolve", l_resolve},
    {"address_policy", l_address_policy},
    {"check_networks", l_check_networks},
    {"check_fetch_options", l_check_fetch_options},
    {"fetch_options", l_fetch_options},
    {"response_headers", l_response_headers},
    {"response_header", l_response_header},
    {NULL, NULL},
};

void lc_register_http(lua_State *L)
{
    lc_state_t *st = lua_touserdata(L, -1); /* on top, as lc_setfuncs wants it */
    lua_pushcfunction(L, build_response);
    st->build_response_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushcfunction(L, build_answer);
    st->build_answer_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushboolean(L, 0);
    st->kept_body_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    static const luaL_Reg prepared_meta[] = {{"__gc", l_prepared_gc}, {NULL, NULL}};
    lc_class(L, PREPARED_METATABLE, prepared_meta, NULL);
    lc_setfuncs(L, funcs);
}
