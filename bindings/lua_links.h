/* lua_links.h: link sets (lua_links.c), for the crawl's admission (lua_crawl.c),
 * and the link lists doc:links makes of a document's links (lua_html.c). */
#ifndef LUACRAWL_LUA_LINKS_H
#define LUACRAWL_LUA_LINKS_H

#include "html.h"
#include "lua_aux.h"
#include "lua_check.h"
#include "lua_seen.h"

#include <limits.h>

/* The tags of the link sets' metatables (lc_class), for core.html.metatables. */
extern const char LC_LINKSET_MT[], LC_LINKSET_SPENT_MT[];

/* The links of a link set at idx (core.html.scan_set), NULL when it is something
 * else. */
html_links_t *lc_tolinkset(lua_State *L, int idx);

/* What a link list keeps: links starting with prefix (when set), and only those the
 * seen set did not hold (when set), which are added to it. */
struct link_filter {
    const char *prefix;
    size_t prefix_len;
    struct seen *seen;
};

/* The filter from the arguments at idx (prefix) and idx + 1 (seen set). */
static inline struct link_filter lc_link_filter(lua_State *L, int idx)
{
    struct link_filter f = {NULL, 0, NULL};
    f.prefix = luaL_optlstring(L, idx, NULL, &f.prefix_len);
    if (!lua_isnoneornil(L, idx + 1) && !(f.seen = lc_toseen(L, idx + 1)))
        luaL_argerror(L, idx + 1, "unseen must be a seen set (lc.seen())");
    return f;
}

static inline unsigned lc_link_flags(lua_State *L, int idx, int detail)
{
    unsigned flags = (unsigned)lc_opt_integer(L, idx, "links: flags", 0, 0, INT_MAX) &
                     (HTML_LINKS_LINK | HTML_LINKS_FRAMES | HTML_LINKS_IMG);
    return detail ? flags | HTML_LINKS_TEXT : flags;
}

/* Push the list of the links that pass f (strings, or {url=, tag=, text=,
 * nofollow=} with detail) and free links, which a scan or html_links made (rc its
 * result: raises when it ran out of memory, with links freed too). */
int lc_push_links(lua_State *L, html_links_t *links, int rc, int detail,
                  const struct link_filter *f);

#endif
