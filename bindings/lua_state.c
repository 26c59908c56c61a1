/* lua_state.c: the engine state's resolver and HTTP client, made on first use (so
 * that core.configure can set the DNS servers first), with max_memory as the HTTP
 * client's budget for bodies (lua_limits.c). */
#include "lua_aux.h"
#include "lua_limits.h"

#include <stdlib.h>

dns_t *lc_dns(lua_State *L, lc_state_t *st)
{
    if (!st->dns) {
        char err[256];
        const char *servers = st->dns_servers;
        if (!servers || !*servers) servers = getenv("LUACRAWL_DNS_SERVERS");
        st->dns = dns_new(st->loop, servers, err, sizeof(err));
        if (!st->dns) luaL_error(L, "DNS: %s", err);
    }
    return st->dns;
}

http_t *lc_http(lua_State *L, lc_state_t *st)
{
    if (!st->http) {
        char err[256];
        dns_t *dns = lc_dns(L, st);
        st->http = http_new(st->loop, dns, err, sizeof(err));
        if (!st->http) luaL_error(L, "HTTP: %s", err);
        http_set_budget(st->http, lc_limits_budget, st);
    }
    return st->http;
}
