/* http_proxy_env.h: the proxy the environment names for a URL, read as curl reads it.
 *
 * The variables are read once, by proxy_env_new:
 *   - http_proxy for http URLs (never HTTP_PROXY: a CGI program's environment has
 *     it from the request's "Proxy:" header);
 *   - https_proxy, else HTTPS_PROXY, for https URLs;
 *   - all_proxy, else ALL_PROXY, when the scheme's own is not set;
 *   - no_proxy, else NO_PROXY: hosts that go direct. A comma-separated list (blanks
 *     separate too): "*" alone for every host; a name matches itself and its
 *     subdomains (a leading or trailing '.' is ignored, case is not); an IP address
 *     matches itself, or its network with "/bits".
 * An empty variable is one not set. http_hop.c resolves the proxy's name and gives
 * curl the proxy explicitly, so curl never reads the environment itself. */
#ifndef LUACRAWL_HTTP_PROXY_ENV_H
#define LUACRAWL_HTTP_PROXY_ENV_H

typedef struct proxy_env proxy_env_t;

/* The environment's proxy settings; NULL when none of the variables is set (or
 * when out of memory, which http_new reports as such). *oom says which. */
proxy_env_t *proxy_env_new(int *oom);
void proxy_env_free(proxy_env_t *pe);

/* The proxy for a URL of this scheme ("http" or "https") and host (a name, an IPv4
 * address, or an IPv6 one with or without brackets), or NULL to go direct. */
const char *proxy_env_for(const proxy_env_t *pe, const char *scheme, const char *host);

/* Whether host is in no_proxy (the list's syntax above). */
int proxy_env_bypass(const char *no_proxy, const char *host);

#endif
