/* http_hop.c: one hop of a transfer, from its URL to its launch: the URL checked
 * (http and https only), the host and the proxy resolved by dns.c and handed to curl
 * as CURLOPT_RESOLVE, the address policy applied to what was resolved and, as a
 * backstop, to the socket curl opens. */
#include "http_internal.h"

#include "url.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* ---- the URL and the addresses ---- */

static int parse_url(http_xfer_t *x, const char *url, char **host, int *port, int proxy)
{
    size_t max_url = x->req ? x->req->max_url : HTTP_MAX_URL, len = strlen(url);
    if (!proxy && len > max_url) {
        http_fail(x, HTTP_E_INVALID_URL, "URL longer than %zu bytes", max_url);
        return -1;
    }
    const char *fast_host;
    size_t fast_len;
    if (!proxy) x->normal = 0;
    if (!proxy && url_host_port_fast(url, len, &fast_host, &fast_len, port)) {
        /* A URL in normalized form (most are: the link extractors give them) needs
         * no parse by curl. */
        x->normal = 1;
        *host = strndup(fast_host, fast_len);
        if (*host) return 0;
        http_fail(x, HTTP_E_MEMORY, "out of memory");
        return -1;
    }
    CURLU *u = curl_url();
    char *scheme = NULL, *h = NULL, *p = NULL;
    int rc = -1;
    if (!u) {
        http_fail(x, HTTP_E_MEMORY, "out of memory");
        return -1;
    }
    unsigned flags = proxy ? CURLU_GUESS_SCHEME : 0;
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, flags);
    if (uc) {
        http_fail(x, HTTP_E_INVALID_URL, "invalid URL: %s", curl_url_strerror(uc));
        goto out;
    }
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OUT_OF_MEMORY) {
        http_fail(x, HTTP_E_MEMORY, "out of memory");
        goto out;
    }
    if (!proxy && (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))) {
        http_fail(x, HTTP_E_INVALID_URL, "refused scheme '%s': only http and https are fetched",
                  scheme ? scheme : "");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_HOST, &h, 0) || !h || !*h) {
        http_fail(x, HTTP_E_INVALID_URL, "invalid URL: no host");
        goto out;
    }
    /* Without a port (out of memory, say) it would be taken as 80, even for https. */
    if (curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OUT_OF_MEMORY) {
        http_fail(x, HTTP_E_MEMORY, "out of memory");
        goto out;
    }
    *port = p ? atoi(p) : 80;
    if (proxy && !p) *port = 1080;
    *host = h;
    h = NULL;
    rc = 0;
out:
    curl_free(scheme);
    curl_free(h);
    curl_free(p);
    curl_url_cleanup(u);
    return rc;
}

static int is_literal(const char *host)
{
    unsigned char buf[16];
    char tmp[64];
    size_t n = strlen(host);
    if (n > 2 && n < sizeof(tmp) && host[0] == '[') {
        memcpy(tmp, host + 1, n - 2);
        tmp[n - 2] = '\0';
        return inet_pton(AF_INET6, tmp, buf) == 1;
    }
    return inet_pton(AF_INET, host, buf) == 1;
}

/* What denies addr (text) to x: the engine's address policy or the request's. */
static const char *policy_denies(const http_xfer_t *x, const char *addr)
{
    const char *why = addr_policy_check(x->http->policy, addr);
    return why ? why : addr_policy_check(x->req->policy, addr);
}

/* An IP-literal host the address policy denies fails x: 1 then, else 0. */
static int literal_denied(http_xfer_t *x)
{
    const char *why = policy_denies(x, x->host);
    if (!why) return 0;
    http_fail(x, HTTP_E_DENIED, "address %s denied by the address policy (%s)", x->host, why);
    return 1;
}

/* The answer as a CURLOPT_RESOLVE entry; with check, less the addresses the address
 * policy denies (the target's: a proxy's address is the caller's choice). -1 when
 * out of memory; -2, x failed, when the policy denies every address. */
static int add_resolve(http_xfer_t *x, const char *host, int port, const dns_answer_t *ans,
                       int check)
{
    size_t n = strlen(host) + 16;
    for (int i = 0; i < ans->naddrs; i++)
        n += strlen(ans->addrs[i]) + 3;
    char *entry = malloc(n);
    if (!entry) return -1;
    size_t off = (size_t)snprintf(entry, n, "+%s:%d:", host, port);
    int kept = 0, denied = -1;
    const char *why = NULL;
    for (int i = 0; i < ans->naddrs; i++) {
        const char *w = check ? policy_denies(x, ans->addrs[i]) : NULL;
        if (w) {
            if (denied < 0) denied = i, why = w;
            continue;
        }
        int v6 = strchr(ans->addrs[i], ':') != NULL;
        off += (size_t)snprintf(entry + off, n - off, "%s%s%s%s", kept++ ? "," : "", v6 ? "[" : "",
                                ans->addrs[i], v6 ? "]" : "");
    }
    if (!kept && denied >= 0) {
        free(entry);
        http_fail(x, HTTP_E_DENIED, "address %s of %s denied by the address policy (%s)",
                  ans->addrs[denied], host, why);
        return -2;
    }
    struct curl_slist *l = curl_slist_append(x->resolve, entry);
    free(entry);
    if (!l) return -1;
    x->resolve = l;
    return 0;
}

/* ---- name resolution ---- */

static void on_dns(void *arg, const dns_answer_t *ans);

/* A proxy that resolves names itself (http, https, socks4a, socks5h) needs only its
 * own name resolved; socks4 and socks5 need the target's too. */
static int proxy_needs_target(const char *proxy)
{
    return strncmp(proxy, "socks4://", 9) == 0 || strncmp(proxy, "socks5://", 9) == 0;
}

/* The request's timeout came while a lookup was out: the time limit covers name
 * resolution too, whatever the resolver's own timeouts and retries would take.
 * Reported as a DNS failure (what did not happen was the lookup), as the
 * resolver's own timeout is, so that a crawl treats both alike. */
static void on_dns_deadline(loop_t *loop, void *arg)
{
    (void)loop;
    http_xfer_t *x = arg;
    x->dns_deadline = NULL;
    dns_cancel(x->http->dns, x->dns_wait);
    x->dns_wait = NULL;
    x->dns_time = loop_time() - x->hop_started;
    http_fail(x, HTTP_E_DNS, "timed out after %g s: no DNS answer for %s in time", x->req->timeout,
              x->dns_host);
    http_finish(x);
}

static int resolve_next(http_xfer_t *x, const char *host, dns_fn fn)
{
    x->state = X_DNS;
    x->dns_host = host;
    x->dns_wait = dns_resolve(x->http->dns, host, fn, x);
    if (!x->dns_wait) {
        http_fail(x, HTTP_E_MEMORY, "out of memory");
        return -1;
    }
    /* A cached answer comes on the next turn: no timer for it. */
    if (!x->dns_deadline && !dns_wait_ready(x->dns_wait)) {
        double left = x->started + x->req->timeout - loop_time();
        x->dns_deadline = loop_timer_add(x->http->loop, left > 0 ? left : 0, on_dns_deadline, x);
        /* Without the timer (out of memory) the resolver's own timeout still ends it. */
    }
    return 0;
}

/* The kind of a failed lookup: a shortage of memory or descriptors is not the name's. */
static enum http_error dns_error_kind(enum dns_status status)
{
    switch (status) {
    case DNS_MEMORY:
        return HTTP_E_MEMORY;
    case DNS_RESOURCE:
        return HTTP_E_RESOURCE;
    default:
        return HTTP_E_DNS;
    }
}

/* Record an answer as a CURLOPT_RESOLVE entry; 0 to go on, -1 when x was finished. */
static int take_answer(http_xfer_t *x, const char *host, int port, const dns_answer_t *ans)
{
    int rc;
    x->dns_wait = NULL;
    http_stop_dns_deadline(x);
    x->dns_time = loop_time() - x->hop_started;
    if (ans->status != DNS_OK)
        http_fail(x, dns_error_kind(ans->status), "%s",
                  ans->error ? ans->error : "DNS lookup failed");
    else if (host == x->host && x->literal)
        return 0; /* an IP literal: curl needs no resolve entry (see http_on_resolver_start) */
    else if ((rc = add_resolve(x, host, port, ans, host == x->host)) == -1)
        http_fail(x, HTTP_E_MEMORY, "out of memory");
    else if (rc == 0)
        return 0;
    http_finish(x); /* failed: out of memory, or every address denied (add_resolve) */
    return -1;
}

static void on_proxy_dns(void *arg, const dns_answer_t *ans)
{
    http_xfer_t *x = arg;
    if (take_answer(x, x->proxy_host, x->proxy_port, ans) < 0) return;
    if (proxy_needs_target(x->proxy)) {
        if (resolve_next(x, x->host, on_dns) < 0) http_finish(x);
        return;
    }
    http_launch(x);
}

static void on_dns(void *arg, const dns_answer_t *ans)
{
    http_xfer_t *x = arg;
    if (take_answer(x, x->host, x->port, ans) == 0) http_launch(x);
}

/* Begin one hop at x->url: check it, resolve its host (and the proxy's), launch.
 * Even an IP literal goes through dns_resolve, which answers it on the next turn,
 * so the completion never runs inside http_start. -1 when out of memory with
 * nothing started: the caller finishes or frees x. */
int http_hop_start(http_xfer_t *x, double now)
{
    curl_slist_free_all(x->resolve);
    x->resolve = NULL;
    free(x->host);
    x->host = NULL;
    x->hop_started = now;
    x->dns_time = 0;
    x->denied[0] = '\0';
    x->sock_errno = 0;
    if (parse_url(x, x->url, &x->host, &x->port, 0) < 0) return http_finish_later(x);
    x->literal = is_literal(x->host);
    if (x->literal && literal_denied(x)) return http_finish_later(x);
    /* The request's proxy ("" for none) wins over the environment's. */
    const char *proxy = x->req->proxy;
    if (!proxy)
        proxy = proxy_env_for(x->http->penv, strncasecmp(x->url, "https:", 6) ? "http" : "https",
                              x->host);
    x->proxy = proxy && *proxy ? proxy : NULL;
    int rc;
    if (x->proxy) {
        free(x->proxy_host);
        x->proxy_host = NULL;
        if (parse_url(x, x->proxy, &x->proxy_host, &x->proxy_port, 1) < 0)
            return http_finish_later(x);
        rc = resolve_next(x, x->proxy_host, on_proxy_dns);
    } else {
        rc = resolve_next(x, x->host, on_dns);
    }
    return rc < 0 ? http_finish_later(x) : 0;
}

/* ---- curl at connection time ---- */

/* CURLOPT_RESOLVER_START_FUNCTION: curl must never resolve a name by itself; every
 * name it connects to is in CURLOPT_RESOLVE. IP literals need no resolving. */
int http_on_resolver_start(void *resolver_state, void *reserved, void *arg)
{
    (void)resolver_state;
    (void)reserved;
    http_xfer_t *x = arg;
    return x->literal ? 0 : 1;
}

/* CURLOPT_OPENSOCKETFUNCTION: the address policy's backstop, on the address curl is
 * about to connect to. take_answer already left denied addresses out of
 * CURLOPT_RESOLVE, so this refuses only what came another way (a cached connection
 * setup, a curl change). Through a proxy the address is the proxy's, which the
 * caller named: not checked (http.h). curl tries the next address, if any, and
 * reports CURLE_COULDNT_CONNECT; http_fail_curl makes that HTTP_E_DENIED. */
curl_socket_t http_on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    http_xfer_t *x = arg;
    if (purpose == CURLSOCKTYPE_IPCXN && !x->proxy) {
        const char *why = addr_policy_check_sa(x->http->policy, &a->addr);
        if (!why) why = addr_policy_check_sa(x->req->policy, &a->addr);
        if (why) {
            char ip[INET6_ADDRSTRLEN] = "?";
            const void *in = NULL;
            if (a->family == AF_INET) in = &((struct sockaddr_in *)(void *)&a->addr)->sin_addr;
            if (a->family == AF_INET6) in = &((struct sockaddr_in6 *)(void *)&a->addr)->sin6_addr;
            if (in) inet_ntop(a->family, in, ip, sizeof(ip));
            snprintf(x->denied, sizeof(x->denied),
                     "connection to %s denied by the address policy (%s)", ip, why);
            return CURL_SOCKET_BAD;
        }
    }
    curl_socket_t fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    /* Out of descriptors: curl would say only "Couldn't connect" (http_fail_curl). */
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) x->sock_errno = errno;
    return fd;
}
