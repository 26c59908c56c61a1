/* http.c: transfers on one curl multi handle, driven by curl_multi_socket_action
 * from loop watchers and one loop timer. A transfer goes DNS -> curl -> (redirect ->
 * DNS -> curl ...) -> completion. Completions are reported from the loop's own
 * callbacks after curl has returned, never from inside a curl callback. This file
 * owns the multi handle and a transfer's start, cancel and end in curl; the rest of
 * the family does a part each: a hop's URL and names (http_hop.c), its easy handle
 * (http_pool.c), the response and the completion (http_response.c), redirects
 * (http_redirect.c), failures (http_errors.c) and the request (http_request.c),
 * sharing the transfer through http_internal.h. */
#include "http.h"

#include "http_internal.h"
#include "http_probe.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_IDLE_CONNECTIONS 256

static void check_done(http_t *http);
static void end_stalled(http_t *http, CURLMcode mc);

/* ---- the multi handle on the loop ---- */

/* Let curl act on fd (CURL_SOCKET_TIMEOUT: on its timers), vouching for the socket
 * probes it makes meanwhile (http_probe.h), then report the transfers it finished. */
static void socket_action(http_t *http, curl_socket_t fd, int flags)
{
    int running = 0;
    lc_probe_vouch(http->loop, 1);
    CURLMcode mc = curl_multi_socket_action(http->multi, fd, flags, &running);
    lc_probe_vouch(http->loop, 0);
    end_stalled(http, mc);
    check_done(http);
}

static void on_sock_io(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    int flags = 0;
    if (events & LOOP_READ) flags |= CURL_CSELECT_IN;
    if (events & LOOP_WRITE) flags |= CURL_CSELECT_OUT;
    if (events & LOOP_ERROR) flags |= CURL_CSELECT_ERR;
    socket_action(arg, fd, flags);
}

/* CURLMOPT_SOCKETFUNCTION. A socket the loop cannot watch (out of memory, or of
 * epoll's watches) would stall its transfer until its timeout: the transfer is
 * marked, and ended once curl has returned (end_stalled). Returning -1 instead
 * would make curl 7.88 give up the whole multi handle. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)socketp;
    http_t *http = userp;
    int events = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) events |= LOOP_READ;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) events |= LOOP_WRITE;
    if (!events) { /* most often a connection going back to the pool, soon used again */
        loop_park(http->loop, fd);
    } else if (loop_watch(http->loop, fd, events, on_sock_io, http) < 0) {
        int err = errno ? errno : ENOMEM;
        http_xfer_t *x = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        if (x && !x->unwatched) x->unwatched = err;
        http->unwatched = 1;
    }
    return 0;
}

/* CURLOPT_CLOSESOCKETFUNCTION: a parked socket must be forgotten before it closes,
 * or a new socket given the same number could be taken as still registered. */
int http_on_close_socket(void *arg, curl_socket_t fd)
{
    http_t *http = arg;
    loop_forget(http->loop, fd);
    return close(fd);
}

static void on_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    http_t *http = arg;
    http->timer = NULL;
    socket_action(http, CURL_SOCKET_TIMEOUT, 0);
}

static void on_timeout_deferred(loop_t *loop, void *arg)
{
    http_t *http = arg;
    http->timeout_deferred = 0;
    on_timeout(loop, arg);
}

/* CURLMOPT_TIMERFUNCTION: -1 deletes the timer; 0 means act now, which we do on the
 * next turn of the loop rather than with a 1 ms timer. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    http_t *http = userp;
    if (http->timer) {
        loop_timer_cancel(http->loop, http->timer);
        http->timer = NULL;
    }
    if (timeout_ms == 0) {
        if (http->timeout_deferred) return 0;
        if (loop_defer(http->loop, on_timeout_deferred, http) == 0) {
            http->timeout_deferred = 1;
            return 0;
        }
        /* out of memory for a deferred call: a timer does the same a little later */
    }
    if (timeout_ms >= 0) {
        http->timer = loop_timer_add(http->loop, (double)timeout_ms / 1000.0, on_timeout, http);
        /* Without its timer curl never acts on a timeout or a retry; as for
         * on_socket, -1 would end the multi handle: end_stalled acts instead. */
        if (!http->timer) http->timer_lost = 1;
    }
    return 0;
}

/* ---- transfers curl cannot drive ---- */

/* x goes to curl: 0, or curl's refusal (x untouched). */
static CURLMcode attach(http_t *http, http_xfer_t *x)
{
    CURLMcode mc = curl_multi_add_handle(http->multi, x->easy);
    if (mc != CURLM_OK) return mc;
    x->prev = NULL;
    x->next = http->in_curl;
    if (x->next) x->next->prev = x;
    http->in_curl = x;
    return CURLM_OK;
}

/* x comes back from curl (done, cancelled or stalled); the request's jar takes the
 * cookies the hop's response set, before the next hop of a redirect or another
 * request asks it for a Cookie header. */
static void detach(http_t *http, http_xfer_t *x)
{
    curl_multi_remove_handle(http->multi, x->easy);
    if (x->req->cookies) http_take_cookies(x);
    if (x->prev)
        x->prev->next = x->next;
    else
        http->in_curl = x->next;
    if (x->next) x->next->prev = x->prev;
    x->prev = x->next = NULL;
}

static enum http_error kind_of_errno(int err)
{
    return err == ENOMEM || err == ENOSPC ? HTTP_E_MEMORY : HTTP_E_CONNECT;
}

/* After a call into curl: end with an error the transfers it can no longer drive,
 * which would otherwise stall until their timeouts (or for good, without a timer).
 * Those whose socket the loop could not watch (on_socket); every one when the
 * timer was lost (on_timer) or curl itself failed (mc: out of memory keeping
 * track of a socket, say), since which transfer it was cannot be told. One at a
 * time from the head of the list: a completion may end others. None of this
 * happens but when memory or descriptors run out. */
static void end_stalled(http_t *http, CURLMcode mc)
{
    int all = http->timer_lost || (mc != CURLM_OK && mc != CURLM_BAD_SOCKET);
    if (!all && !http->unwatched) return;
    http->timer_lost = http->unwatched = 0;
    for (;;) {
        http_xfer_t *x = http->in_curl;
        while (x && !all && !x->unwatched)
            x = x->next;
        if (!x) break;
        detach(http, x);
        if (x->unwatched)
            http_fail(x, kind_of_errno(x->unwatched), "cannot watch the connection's socket: %s",
                      strerror(x->unwatched));
        else if (mc != CURLM_OK && mc != CURLM_BAD_SOCKET)
            http_fail(x, mc == CURLM_OUT_OF_MEMORY ? HTTP_E_MEMORY : HTTP_E_PROTOCOL, "curl: %s",
                      curl_multi_strerror(mc));
        else
            http_fail(x, HTTP_E_MEMORY, "out of memory for curl's timer");
        http_finish(x);
    }
}

void http_launch(http_xfer_t *x)
{
    http_t *http = x->http;
    x->state = X_CURL;
    if (!x->easy && !(x->easy = http_pool_get(http, &x->easy_base, &x->parts))) {
        http_fail(x, HTTP_E_MEMORY, "out of memory");
        http_finish(x);
        return;
    }
    if (http_easy_setup(x) < 0) {
        x->easy_base = 0; /* reset before it serves again: a base option may be missing */
        http_fail(x, HTTP_E_MEMORY, "out of memory setting the request's options");
        http_finish(x);
        return;
    }
    if (x->capture) http_capture_hop(x->capture, x->url);
    CURLMcode mc = attach(http, x);
    if (mc != CURLM_OK) {
        http_fail(x, mc == CURLM_OUT_OF_MEMORY ? HTTP_E_MEMORY : HTTP_E_PROTOCOL, "curl: %s",
                  curl_multi_strerror(mc));
        http_finish(x);
        return;
    }
    end_stalled(http, CURLM_OK); /* adding it set curl's timer */
}

static void transfer_done(http_t *http, CURL *easy, CURLcode rc)
{
    http_xfer_t *x = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (!x) {
        curl_multi_remove_handle(http->multi, easy);
        return;
    }
    detach(http, x);
    if (rc != CURLE_OK && !(x->aborted == ABORT_TRUNCATED && rc == CURLE_WRITE_ERROR)) {
        http_fail_curl(x, rc);
        http_finish(x);
        return;
    }
    if (http_check_whole(x) < 0) {
        http_finish(x);
        return;
    }
    int hop = x->req->follow ? http_follow_redirect(x) : 0;
    if (hop > 0) {
        if (http_hop_start(x, loop_time()) < 0) http_finish(x);
        return;
    }
    if (hop < 0) http_fail(x, HTTP_E_MEMORY, "out of memory following a redirect");
    http_finish(x);
}

static void check_done(http_t *http)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(http->multi, &left))) {
        if (msg->msg == CURLMSG_DONE) transfer_done(http, msg->easy_handle, msg->data.result);
    }
    end_stalled(http, CURLM_OK); /* removing a handle can move another's socket */
}

/* ---- public API ---- */

/* curl_global_init is not thread-safe in every libcurl: once per process, from
 * whichever engine comes first, and never undone (curl_global_cleanup would pull
 * the library from under engines still alive). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;
/* What curl_version_info says, read here once: it rewrites static buffers at every
 * call, so two engines starting on two threads must not both call it. */
static long curl_features;
static char curl_version_text[32];

static void curl_init(void)
{
    curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (curl_init_result != CURLE_OK) return;
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    curl_features = v->features;
    snprintf(curl_version_text, sizeof(curl_version_text), "%s", v->version);
}

const char *http_curl_version(void)
{
    pthread_once(&curl_once, curl_init);
    return curl_version_text;
}

http_t *http_new(loop_t *loop, dns_t *dns, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    if (curl_init_result != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        return NULL;
    }
    http_t *http = calloc(1, sizeof(*http));
    if (!http) goto oom;
    http->loop = loop;
    http->dns = dns;
    int oom;
    http->penv = proxy_env_new(&oom);
    if (oom) goto oom;
    if (!(http->headers = http_headers_new(curl_features))) goto oom;
    http->multi = curl_multi_init();
    http->share = curl_share_init();
    if (!http->multi || !http->share) goto oom;
    /* TLS sessions are kept per easy handle in curl 7.88: share them across all. */
    curl_share_setopt(http->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_multi_setopt(http->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(http->multi, CURLMOPT_SOCKETDATA, http);
    curl_multi_setopt(http->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(http->multi, CURLMOPT_TIMERDATA, http);
    curl_multi_setopt(http->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    /* Idle connections kept for reuse. curl's default (4 per transfer in the multi
     * handle at the time) shrinks whenever few transfers are running, closing
     * connections a moment before they would have been reused. */
    curl_multi_setopt(http->multi, CURLMOPT_MAXCONNECTS, (long)MAX_IDLE_CONNECTIONS);
    return http;
oom:
    snprintf(err, errlen, "out of memory");
    if (http) {
        if (http->multi) curl_multi_cleanup(http->multi);
        if (http->share) curl_share_cleanup(http->share);
        proxy_env_free(http->penv);
        http_headers_free(http->headers);
        free(http);
    }
    return NULL;
}

void http_free(http_t *http)
{
    if (!http) return;
    if (http->timer) loop_timer_cancel(http->loop, http->timer);
    http_pool_free(http);
    curl_multi_cleanup(http->multi);
    curl_share_cleanup(http->share);
    proxy_env_free(http->penv);
    http_headers_free(http->headers);
    addr_policy_free(http->policy);
    free(http);
}

void http_set_budget(http_t *http, http_budget_fn fn, void *arg)
{
    http->budget = fn;
    http->budget_arg = arg;
}

void http_get_stats(const http_t *http, http_stats_t *stats)
{
    *stats = http->stats;
}

void http_set_policy(http_t *http, addr_policy_t *policy)
{
    addr_policy_free(http->policy);
    http->policy = policy;
}

http_xfer_t *http_start(http_t *http, http_req_t *req, http_fn fn, void *arg)
{
    http_xfer_t *x = calloc(1, sizeof(*x));
    if (!x || !(x->url = strdup(req->url))) {
        free(x);
        http_req_free(req);
        return NULL;
    }
    if (req->archive && !(x->capture = http_capture_new())) {
        free(x->url);
        free(x);
        http_req_free(req);
        return NULL;
    }
    x->http = http;
    x->req = req;
    x->fn = fn;
    x->arg = arg;
    x->started = loop_time();
    http->stats.started++;
    http->stats.active++;
    loop_ref(http->loop);
    if (http_hop_start(x, x->started) < 0) { /* out of memory: undo, as if calloc had failed */
        http->stats.started--;
        http->stats.active--;
        loop_unref(http->loop);
        http_xfer_free(x);
        return NULL;
    }
    return x;
}

void http_cancel(http_t *http, http_xfer_t *x)
{
    if (!x) return;
    switch (x->state) {
    case X_DNS:
        dns_cancel(http->dns, x->dns_wait);
        http_stop_dns_deadline(x);
        break;
    case X_CURL:
        detach(http, x);
        break;
    case X_DEFERRED:
        /* finish_deferred frees it when its turn comes. */
        x->state = X_DONE;
        http->stats.active--;
        loop_unref(http->loop);
        return;
    case X_DONE:
        return;
    }
    http->stats.active--;
    loop_unref(http->loop);
    http_xfer_free(x);
}
