/* lua_links.c: link sets, the links of a page kept in C (core.html.scan_set, the
 * crawl's admission reads them, lua_crawl.c), and the link lists of core.html.scan,
 * set_links and doc:links (lua_html.c), filtered by a prefix and a seen set, made
 * from them. */
#include "html.h"
#include "lua_body.h"
#include "lua_links.h"
#include "seen.h"
#include "lua_libs.h"

#include <stdlib.h>
#include <string.h>

const char LC_LINKSET_MT[] = "luacrawl.html.linkset";
/* A set whose links were freed early (set_free, or once its list is made): no
 * __gc, so the collector frees it without calling a finalizer. */
const char LC_LINKSET_SPENT_MT[] = "luacrawl.html.linkset.spent";

/* 1 to keep url, 0 to drop it, -1 when the seen set is out of memory. */
static int keep_link(const struct link_filter *f, const html_link_t *l)
{
    if (f->prefix && (l->len < f->prefix_len || memcmp(l->url, f->prefix, f->prefix_len) != 0))
        return 0;
    if (f->seen) return seen_add(f->seen, l->hash); /* its fingerprint: l->url is normalized */
    return 1;
}

/* The links that pass f as a list: strings, or {url=, tag=, text=, nofollow=}. */
static void push_link_list(lua_State *L, const html_links_t *links, int detail,
                           const struct link_filter *f)
{
    lua_createtable(L, f->prefix || f->seen ? 0 : (int)links->n, 0);
    if (f->seen)
        for (size_t i = 0; i < links->n; i++)
            seen_prefetch(f->seen, links->v[i].hash);
    int n = 0;
    for (size_t i = 0; i < links->n; i++) {
        const html_link_t *l = &links->v[i];
        int keep = keep_link(f, l);
        if (keep < 0) luaL_error(L, "seen: out of memory");
        if (!keep) continue;
        if (detail) {
            lua_createtable(L, 0, 4);
            lc_set_string(L, "url", l->url);
            lc_set_string(L, "tag", l->tag);
            lc_set_string(L, "text", l->text ? l->text : "");
            lua_pushboolean(L, l->nofollow);
            lua_setfield(L, -2, "nofollow");
        } else {
            lua_pushlstring(L, l->url, l->len);
        }
        lua_rawseti(L, -2, ++n);
    }
}

/* A link set's userdata: the links of a scan, and the title it found (NULL: none),
 * which becomes a Lua string only when asked for (core.html.set_title): a crawler
 * that never asks makes no string of it. */
struct link_set {
    html_links_t links;
    char *title;
};

/* Push a set that takes links and title (may be NULL) from a scan (rc its result);
 * raises when rc says it ran out of memory. */
static struct link_set *push_link_set(lua_State *L, html_links_t *links, int rc, char *title)
{
    if (rc != 0) {
        html_links_free(links);
        free(title);
        luaL_error(L, "html: out of memory extracting links");
    }
    struct link_set *set = lua_newuserdata(L, sizeof(*set));
    set->links = *links; /* the userdata owns them from here, freed by its __gc */
    set->title = title;
    memset(links, 0, sizeof(*links));
    lc_getmetatable(L, LC_LINKSET_MT);
    lua_setmetatable(L, -2);
    return set;
}

static struct link_set *to_set(lua_State *L, int idx)
{
    return lc_toudata_either(L, idx, LC_LINKSET_MT, LC_LINKSET_SPENT_MT);
}

html_links_t *lc_tolinkset(lua_State *L, int idx)
{
    struct link_set *set = to_set(L, idx);
    return set ? &set->links : NULL;
}

static struct link_set *check_set(lua_State *L, int idx)
{
    struct link_set *set = to_set(L, idx);
    if (!set) luaL_typerror(L, idx, "link set");
    return set;
}

static void free_set(struct link_set *set)
{
    html_links_free(&set->links);
    free(set->title);
    set->title = NULL;
}

/* Free the links and title of set, the set at idx, now; the set is empty after. */
static void spend_set(lua_State *L, int idx, struct link_set *set)
{
    free_set(set);
    lc_getmetatable(L, LC_LINKSET_SPENT_MT);
    lua_setmetatable(L, idx < 0 ? idx - 1 : idx);
}

int lc_push_links(lua_State *L, html_links_t *links, int rc, int detail,
                  const struct link_filter *f)
{
    struct link_set *set = push_link_set(L, links, rc, NULL); /* freed even if the list raises */
    push_link_list(L, &set->links, detail, f);
    spend_set(L, -2, set);
    lua_remove(L, -2);
    return 1;
}

static int l_html_linkset_gc(lua_State *L)
{
    free_set(check_set(L, 1));
    return 0;
}

static int l_html_linkset_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_set(L, 1)->links.n);
    return 1;
}

/* core.html.scan(body, url, charset, flags, detail, prefix, seen) -> links, title: the
 * links as doc:links gives them, without a tree, and the first <title>'s text (or
 * nil), from one pass */
static int l_html_scan(lua_State *L)
{
    size_t len;
    const char *body = lc_checkbytes(L, 1, &len);
    const char *url = luaL_optstring(L, 2, NULL), *charset = luaL_optstring(L, 3, NULL);
    int detail = lua_toboolean(L, 5);
    struct link_filter f = lc_link_filter(L, 6);
    html_links_t links;
    char *title = NULL;
    int rc =
        html_scan_body(body, len, charset, url, lc_link_flags(L, 4, detail), &links, &title, NULL);
    if (title) {
        lua_pushstring(L, title); /* before push_links, which may raise */
        free(title);
    } else {
        lua_pushnil(L);
    }
    lc_push_links(L, &links, rc, detail, &f);
    lua_insert(L, -2);
    return 2;
}

/* core.html.scan_set(body, url, charset) -> set: as scan with no options, the links
 * (and the title) kept in C, a link set, for core.html.set_links, set_title and
 * core.crawl.next */
static int l_html_scan_set(lua_State *L)
{
    size_t len;
    const char *body = lc_checkbytes(L, 1, &len);
    const char *url = luaL_optstring(L, 2, NULL), *charset = luaL_optstring(L, 3, NULL);
    html_links_t links;
    char *title = NULL;
    int rc = html_scan_body(body, len, charset, url, 0, &links, &title, NULL);
    push_link_set(L, &links, rc, title);
    return 1;
}

/* core.html.set_title(set) -> the title its scan found, or nil (none, or freed) */
static int l_html_set_title(lua_State *L)
{
    struct link_set *set = check_set(L, 1);
    if (set->title)
        lua_pushstring(L, set->title);
    else
        lua_pushnil(L);
    return 1;
}

/* core.html.set_free(set): free its links and title now; the set is empty after */
static int l_html_set_free(lua_State *L)
{
    spend_set(L, 1, check_set(L, 1));
    return 0;
}

/* core.html.set_links(set, prefix, seen) -> {url, ...}: the list scan would give */
static int l_html_set_links(lua_State *L)
{
    struct link_set *set = check_set(L, 1);
    struct link_filter f = lc_link_filter(L, 2);
    push_link_list(L, &set->links, 0, &f);
    return 1;
}

static const luaL_Reg linkset_meta[] = {
    {"__gc", l_html_linkset_gc},
    {"__len", l_html_linkset_len},
    {NULL, NULL},
};

static const luaL_Reg html_funcs[] = {
    {"scan", l_html_scan},           {"scan_set", l_html_scan_set},   {"set_free", l_html_set_free},
    {"set_links", l_html_set_links}, {"set_title", l_html_set_title}, {NULL, NULL},
};

/* After lc_register_html: its functions go into core.html. */
void lc_register_links(lua_State *L)
{
    lc_class(L, LC_LINKSET_MT, linkset_meta, NULL);
    lc_class(L, LC_LINKSET_SPENT_MT, linkset_meta + 1, NULL); /* no __gc */
    lua_getfield(L, -2, "html");                              /* [core, state, html] */
    lua_pushvalue(L, -2);                                     /* [core, state, html, state] */
    lc_setfuncs(L, html_funcs);
    lua_pop(L, 2);
}
