/* lua_warc.c: the WARC writer and reader (warc.h) for Lua, as core.warc_*; lc.warc
 * (lua/luacrawl/warc.lua) wraps them. A writer takes the exchanges a fetch with
 * archive = true kept (http_capture.h, held by the response's body: lua_body.c). */
#include "buf.h"
#include "http_capture.h"
#include "http_decode.h"
#include "lua_check.h"
#include "lua_aux.h"
#include "warc.h"
#include "lua_body.h"
#include "lua_libs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char WRITER_METATABLE[] = "luacrawl.warc.writer";
static const char READER_METATABLE[] = "luacrawl.warc.reader";

#define DEFAULT_MAX_DECODED (64u << 20) /* rec:response()'s body, decoded */

static void push_warc_error(lua_State *L, const warc_err_t *err)
{
    lc_push_error(L, lc_state(L), warc_kind_name(err->kind), err->message);
}

/* ---- the writer ---- */

static warc_t **to_writer(lua_State *L)
{
    warc_t **w = lc_toudata_either(L, 1, WRITER_METATABLE, NULL);
    if (!w) luaL_typerror(L, 1, "WARC writer");
    return w;
}

static warc_t *check_writer(lua_State *L)
{
    warc_t **w = to_writer(L);
    if (!*w) luaL_error(L, "WARC writer used after close()");
    return *w;
}

/* core.warc_open(target, max_size, cdx, dedupe, info, level) -> writer | nil, err; info
 * is warcinfo's extra fields as "name: value\r\n" lines (warc.lua checks them); level
 * the gzip level, 1 to 9 (nil: warc.h's default). */
static int l_warc_open(lua_State *L)
{
    const char *target = luaL_checkstring(L, 1);
    long long max_size = lc_opt_integer(L, 2, "warc.open: max_size", 0, 0, LC_INT_MAX);
    warc_opts_t o = {.max_size = (unsigned long long)max_size,
                     .cdx = lua_toboolean(L, 3),
                     .dedupe = lua_toboolean(L, 4),
                     .software = "luacrawl/" LUACRAWL_VERSION,
                     .info = luaL_optstring(L, 5, NULL),
                     .level = (int)lc_opt_integer(L, 6, "warc.open: level", 0, 1, 9)};
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the userdata holds a pointer */
    warc_t **w = lua_newuserdata(L, sizeof(*w));
    *w = NULL;
    lc_getmetatable(L, WRITER_METATABLE);
    lua_setmetatable(L, -2);
    warc_err_t err = {0};
    *w = warc_open(target, &o, &err);
    if (*w) return 1;
    lua_pushnil(L);
    push_warc_error(L, &err);
    return 2;
}

/* The record ID, or nil and the error: the number of results. */
static int push_result(lua_State *L, int rc, const char *id, const warc_err_t *err)
{
    if (rc == 0) {
        lua_pushstring(L, id);
        return 1;
    }
    lua_pushnil(L);
    push_warc_error(L, err);
    return 2;
}

/* core.warc_write(writer, body) -> the last response record's ID | nil, err: every
 * hop the fetch kept (redirects first). */
static int l_warc_write(lua_State *L)
{
    warc_t *w = check_writer(L);
    struct http_capture *c = lc_tocapture(L, 2);
    if (!c || !http_capture_count(c))
        return luaL_error(L, "warc write: the response was not fetched with archive = true "
                             "(or was released)");
    char id[WARC_ID_SIZE] = "";
    warc_err_t err = {0};
    int rc = 0;
    for (int i = 0; rc == 0 && i < http_capture_count(c); i++) {
        const http_exchange_t *h = http_capture_get(c, i);
        warc_exchange_t ex = {.url = h->url,
                              .ip = h->ip,
                              .date = h->date,
                              .request = h->request,
                              .request_len = h->request_len,
                              .head = h->head,
                              .head_len = h->head_len,
                              .payload = h->payload,
                              .payload_len = h->payload_len,
                              .truncated = h->truncated};
        /* The payload (most of the exchange) lent to the writer's thread, not
         * copied: the body's bytes or the capture's, both held by the body until the
         * writer gives them back. Should that fail for memory, copied. */
        warc_loan_t loan = {0};
        if (lc_lend_body(L, 2, &loan.release, &loan.arg) < 0) loan.release = NULL;
        rc = warc_write_exchange_lent(w, &ex, loan.release ? &loan : NULL, id, &err);
    }
    return push_result(L, rc, id, &err);
}

/* The current time, as warc.h's dates take it. */
static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* core.warc_metadata(writer, url, fields text, concurrent_to or nil, date or nil)
 * -> record ID | nil, err */
static int l_warc_metadata(lua_State *L)
{
    warc_t *w = check_writer(L);
    const char *url = luaL_checkstring(L, 2);
    size_t len;
    const char *fields = luaL_checklstring(L, 3, &len);
    const char *to = luaL_optstring(L, 4, NULL);
    double date = lc_opt_number(L, 5, "warc metadata: date", 0, 0, 253402300799.0);
    if (date == 0) date = wall_now();
    char id[WARC_ID_SIZE] = "";
    warc_err_t err = {0};
    int rc = warc_write_metadata(w, url, date, to, fields, len, id, &err);
    return push_result(L, rc, id, &err);
}

/* core.warc_exchange(writer, url, ip or nil, date or nil, request, head, payload,
 * truncated) -> the response record's ID | nil, err: an exchange given as strings
 * (a rendered page's main document, as the browser reported it: render_archive.lua),
 * its records as warc_write's. */
static int l_warc_exchange(lua_State *L)
{
    warc_t *w = check_writer(L);
    warc_exchange_t ex = {.url = luaL_checkstring(L, 2), .ip = luaL_optstring(L, 3, NULL)};
    ex.date = lc_opt_number(L, 4, "warc exchange: date", 0, 0, 253402300799.0);
    if (ex.date == 0) ex.date = wall_now();
    ex.request = luaL_checklstring(L, 5, &ex.request_len);
    ex.head = luaL_checklstring(L, 6, &ex.head_len);
    ex.payload = luaL_checklstring(L, 7, &ex.payload_len);
    ex.truncated = lua_toboolean(L, 8);
    char id[WARC_ID_SIZE] = "";
    warc_err_t err = {0};
    int rc = warc_write_exchange(w, &ex, id, &err);
    return push_result(L, rc, id, &err);
}

/* core.warc_conversion(writer, url, refers_to or nil, content_type, block) -> record
 * ID | nil, err */
static int l_warc_conversion(lua_State *L)
{
    warc_t *w = check_writer(L);
    const char *url = luaL_checkstring(L, 2);
    const char *to = luaL_optstring(L, 3, NULL);
    const char *type = luaL_checkstring(L, 4);
    size_t len;
    const char *block = luaL_checklstring(L, 5, &len);
    char id[WARC_ID_SIZE] = "";
    warc_err_t err = {0};
    int rc = warc_write_conversion(w, url, wall_now(), to, type, block, len, id, &err);
    return push_result(L, rc, id, &err);
}

/* core.warc_close(writer) -> true | nil, err (closing twice does nothing) */
static int l_warc_close(lua_State *L)
{
    warc_t **w = to_writer(L);
    warc_err_t err = {0};
    int rc = warc_close(*w, &err);
    *w = NULL;
    if (rc == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    push_warc_error(L, &err);
    return 2;
}

/* core.warc_sync(w) -> true | nil, err: the records queued are written */
static int l_warc_sync(lua_State *L)
{
    warc_err_t err = {0};
    if (warc_sync(check_writer(L), &err) == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    push_warc_error(L, &err);
    return 2;
}

static int l_warc_writer_gc(lua_State *L)
{
    warc_t **w = to_writer(L);
    warc_err_t err = {0};
    warc_close(*w, &err); /* a writer dropped without close(): its files are finished */
    *w = NULL;
    return 0;
}

/* core.warc_remember(writer, digest, uri, date, id) -> true | nil, err: an original
 * of an earlier run that later exchanges may revisit (warc.h) */
static int l_warc_remember(lua_State *L)
{
    warc_t *w = check_writer(L);
    const char *digest = luaL_checkstring(L, 2), *uri = luaL_checkstring(L, 3);
    const char *date = luaL_checkstring(L, 4), *id = luaL_checkstring(L, 5);
    warc_err_t err = {0};
    if (warc_remember(w, digest, uri, date, id, &err) == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    push_warc_error(L, &err);
    return 2;
}

/* core.warc_track(writer): list the originals written from now on (warc_originals) */
static int l_warc_track(lua_State *L)
{
    warc_track_originals(check_writer(L));
    return 0;
}

struct originals {
    lua_State *L;
    int n;
};

static void push_original(void *arg, const char *digest, const char *uri, const char *date,
                          const char *id)
{
    struct originals *o = arg;
    const char *f[4] = {digest, uri, date, id};
    for (int i = 0; i < 4; i++) {
        lua_pushstring(o->L, f[i]);
        lua_rawseti(o->L, -2, ++o->n);
    }
}

/* core.warc_originals(writer) -> {digest, uri, date, id, digest, ...}: the originals
 * written since the last call (call it after warc_sync) */
static int l_warc_originals(lua_State *L)
{
    warc_t *w = check_writer(L);
    lua_newtable(L);
    struct originals o = {.L = L};
    warc_originals(w, push_original, &o);
    return 1;
}

/* core.warc_filename(writer) -> the file being written (its final name) */
static int l_warc_filename(lua_State *L)
{
    lua_pushstring(L, warc_filename(check_writer(L)));
    return 1;
}

/* ---- the reader ---- */

static warc_reader_t **to_reader(lua_State *L)
{
    warc_reader_t **r = lc_toudata_either(L, 1, READER_METATABLE, NULL);
    if (!r) luaL_typerror(L, 1, "WARC reader");
    return r;
}

/* core.warc_reader(path [, max_block]) -> reader | nil, err */
static int l_warc_reader(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t max_block =
        (size_t)lc_opt_integer(L, 2, "warc.records: max_block", 0, 0, WARC_MAX_BLOCK);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): the userdata holds a pointer */
    warc_reader_t **r = lua_newuserdata(L, sizeof(*r));
    *r = NULL;
    lc_getmetatable(L, READER_METATABLE);
    lua_setmetatable(L, -2);
    warc_err_t err = {0};
    if ((*r = warc_reader_open(path, &err))) {
        warc_reader_limit(*r, max_block);
        return 1;
    }
    lua_pushnil(L);
    push_warc_error(L, &err);
    return 2;
}

static int l_warc_reader_gc(lua_State *L)
{
    warc_reader_t **r = to_reader(L);
    warc_reader_free(*r);
    *r = NULL;
    return 0;
}

static void set_field(lua_State *L, const warc_record_t *rec, const char *field, const char *key)
{
    const char *v = warc_record_field(rec, field);
    if (!v) return;
    lua_pushstring(L, v);
    lua_setfield(L, -2, key);
}

/* Headers keyed by lower-case name, repeated ones joined with ", ", with the
 * response headers' metatable (looked up in any case). The table is on top. */
static void add_header(lua_State *L, const char *name, size_t nn, const char *value, size_t vn)
{
    char low[256];
    if (nn >= sizeof(low)) return;
    for (size_t i = 0; i < nn; i++)
        low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    lua_pushlstring(L, low, nn);
    lua_pushvalue(L, -1);
    lua_rawget(L, -3);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushlstring(L, value, vn);
    } else {
        lua_pushliteral(L, ", ");
        lua_pushlstring(L, value, vn);
        lua_concat(L, 3);
    }
    lua_rawset(L, -3);
}

static void headers_mt(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, lc_state(L)->headers_mt_ref);
    lua_setmetatable(L, -2);
}

/* core.warc_next(reader) -> a record table | nil at the end; raises an error object
 * (kind truncated, format, io, memory) on bad data. */
static int l_warc_next(lua_State *L)
{
    warc_reader_t **r = to_reader(L);
    if (!*r) return 0;
    warc_record_t rec;
    warc_err_t err = {0};
    int rc = warc_reader_next(*r, &rec, &err);
    if (rc == 0) return 0;
    if (rc < 0) { /* the iteration ends here: later calls give nil */
        warc_reader_free(*r);
        *r = NULL;
        push_warc_error(L, &err);
        return lua_error(L);
    }
    if (rec.damaged) { /* no record: where the damaged gzip member was */
        lua_createtable(L, 0, 2);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "damaged");
        lua_pushnumber(L, (double)rec.offset);
        lua_setfield(L, -2, "offset");
        return 1;
    }
    lua_createtable(L, 0, 12);
    set_field(L, &rec, "WARC-Type", "type");
    set_field(L, &rec, "WARC-Target-URI", "uri");
    set_field(L, &rec, "WARC-Date", "date");
    set_field(L, &rec, "WARC-Record-ID", "id");
    set_field(L, &rec, "WARC-IP-Address", "ip");
    set_field(L, &rec, "Content-Type", "content_type");
    if (warc_record_field(&rec, "WARC-Truncated")) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "truncated");
    }
    lua_pushstring(L, rec.version);
    lua_setfield(L, -2, "version");
    lua_pushnumber(L, (double)rec.offset);
    lua_setfield(L, -2, "offset");
    if (rec.skipped) { /* over the reader's limit: its size, no block */
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "skipped");
        lua_pushnumber(L, (double)rec.block_len);
        lua_setfield(L, -2, "block_length");
    } else {
        lua_pushlstring(L, rec.block, rec.block_len);
        lua_setfield(L, -2, "block");
    }
    lua_createtable(L, 0, rec.nfields);
    for (int i = 0; i < rec.nfields; i++)
        add_header(L, rec.fields[i].name, strlen(rec.fields[i].name), rec.fields[i].value,
                   strlen(rec.fields[i].value));
    headers_mt(L);
    lua_setfield(L, -2, "headers");
    return 1;
}

struct http_walk {
    lua_State *L;
    struct buf ce;
    int chunked;
};

static int on_http_header(void *arg, const char *name, size_t nn, const char *value, size_t vn)
{
    struct http_walk *h = arg;
    add_header(h->L, name, nn, value, vn);
    if (nn == 16 && strncasecmp(name, "Content-Encoding", nn) == 0 && vn) {
        if ((h->ce.n && buf_append(&h->ce, ", ", 2) < 0) || buf_append(&h->ce, value, vn) < 0)
            return -1;
    }
    if (nn == 17 && strncasecmp(name, "Transfer-Encoding", nn) == 0) {
        for (size_t i = 0; i + 7 <= vn; i++)
            if (strncasecmp(value + i, "chunked", 7) == 0) h->chunked = 1;
    }
    return 0;
}

struct decoded {
    struct buf out;
    size_t max;
    int over;
};

static int keep_decoded(void *arg, const char *data, size_t n)
{
    struct decoded *d = arg;
    if (n > d->max - d->out.n) {
        n = d->max - d->out.n;
        d->over = 1;
    }
    if (buf_append(&d->out, data, n) < 0) return -1;
    return d->over;
}

/* The body bytes undone of their Content-Encoding into d; NULL, or why not (the bytes
 * decoded so far are kept). */
static const char *decode(const char *ce, const char *body, size_t len, struct decoded *d,
                          char *err, size_t errlen)
{
    http_decoder_t *dec = NULL;
    int rc = http_decoder_new(ce, &dec, err, errlen);
    if (rc == -2) return "out of memory";
    if (rc < 0) return err;
    if (!dec) {
        if (buf_append(&d->out, body, len < d->max ? len : d->max) < 0) return "out of memory";
        d->over = len > d->max;
        return NULL;
    }
    rc = http_decoder_feed(dec, body, len, keep_decoded, d, err, errlen);
    if (rc == 0 && http_decoder_finish(dec, err, errlen) < 0) rc = -1;
    http_decoder_free(dec);
    if (rc == -1 && !d->over) return err;
    if (rc != 0 && !d->over) return "out of memory";
    return NULL;
}

/* core.warc_http(block [, max_size]) -> status, headers, body, first line, cut,
 * problem | nil when the block holds no HTTP message. body is the payload with
 * chunked framing and Content-Encoding undone, at most max_size bytes (cut then set);
 * problem says why it could not be decoded (the bytes as far as they went). */
static int l_warc_http(lua_State *L)
{
    size_t len;
    const char *block = luaL_checklstring(L, 1, &len);
    size_t max =
        (size_t)lc_opt_integer(L, 2, "response: max_size", DEFAULT_MAX_DECODED, 1, LC_INT_MAX);
    warc_http_t h;
    if (warc_http_parse(block, len, &h) < 0) return 0;
    lua_settop(L, 2);
    lua_pushinteger(L, h.status);
    lua_newtable(L);
    struct http_walk walk = {.L = L};
    int bad = warc_http_headers(&h, on_http_header, &walk);
    headers_mt(L);
    char *plain = NULL;
    size_t plain_len = 0;
    const char *body = h.body, *problem = NULL;
    size_t body_len = h.body_len;
    if (!bad && walk.chunked) {
        int rc = warc_dechunk(h.body, h.body_len, &plain, &plain_len);
        if (rc == -2) bad = 1;
        if (rc == -1) problem = "broken chunked encoding";
        body = plain ? plain : "";
        body_len = plain_len;
    }
    char err[256];
    struct decoded d = {.max = max};
    const char *why =
        bad ? "out of memory"
            : decode(walk.ce.p ? walk.ce.p : "", body, body_len, &d, err, sizeof(err));
    buf_free(&walk.ce);
    free(plain);
    if (why && strcmp(why, "out of memory") == 0) {
        buf_free(&d.out);
        return luaL_error(L, "warc: out of memory decoding a response");
    }
    lua_pushlstring(L, d.out.p ? d.out.p : "", d.out.n);
    buf_free(&d.out);
    lua_pushlstring(L, h.start, h.start_len);
    lua_pushboolean(L, d.over);
    if (why && !problem) problem = why;
    if (problem)
        lua_pushstring(L, problem);
    else
        lua_pushnil(L);
    return 6;
}

static const luaL_Reg funcs[] = {
    {"warc_open", l_warc_open},
    {"warc_write", l_warc_write},
    {"warc_metadata", l_warc_metadata},
    {"warc_exchange", l_warc_exchange},
    {"warc_conversion", l_warc_conversion},
    {"warc_close", l_warc_close},
    {"warc_filename", l_warc_filename},
    {"warc_sync", l_warc_sync},
    {"warc_reader", l_warc_reader},
    {"warc_next", l_warc_next},
    {"warc_http", l_warc_http},
    {"warc_remember", l_warc_remember},
    {"warc_track", l_warc_track},
    {"warc_originals", l_warc_originals},
    {NULL, NULL},
};

void lc_register_warc(lua_State *L)
{
    static const luaL_Reg writer_meta[] = {{"__gc", l_warc_writer_gc}, {NULL, NULL}};
    static const luaL_Reg reader_meta[] = {{"__gc", l_warc_reader_gc}, {NULL, NULL}};
    lc_class(L, WRITER_METATABLE, writer_meta, NULL);
    lc_class(L, READER_METATABLE, reader_meta, NULL);
    lc_setfuncs(L, funcs);
}
