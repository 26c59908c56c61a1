/* lua_libs.h: the open function of every binding file, for the root (lua_core.c)
 * that calls each once, as LuaJIT's lualib.h lists its libraries. Each is called
 * with [core table, state userdata] on top of L and leaves the stack as it was. */
#ifndef LUACRAWL_LUA_LIBS_H
#define LUACRAWL_LUA_LIBS_H

#include "lua_api.h"

void lc_register_task(lua_State *L);
void lc_register_http(lua_State *L);
void lc_register_cookies(lua_State *L);
void lc_register_html(lua_State *L);
void lc_register_links(lua_State *L);
void lc_register_url(lua_State *L);
void lc_register_seen(lua_State *L);
void lc_register_digest(lua_State *L);
void lc_register_sitemap(lua_State *L);
void lc_register_regex(lua_State *L);
void lc_register_readline(lua_State *L);
void lc_register_signal(lua_State *L);
void lc_register_limits(lua_State *L);
void lc_register_body(lua_State *L);
void lc_register_queue(lua_State *L);
void lc_register_crawl(lua_State *L);
void lc_register_json(lua_State *L);
void lc_register_warc(lua_State *L);
void lc_register_store(lua_State *L);
void lc_register_redis(lua_State *L);
void lc_register_check(lua_State *L);
void lc_register_opts(lua_State *L);
void lc_register_fs(lua_State *L);
void lc_register_browser(lua_State *L);
void lc_register_dash(lua_State *L);

#endif
