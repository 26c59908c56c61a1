/* dns.c: a c-ares channel driven by the loop, in front of it the answer cache
 * (dns_cache.c; the structs both share are in dns_internal.h).
 *
 * Each name has one cache entry. An entry is PENDING while its query is in flight,
 * then RESOLVED (with addresses or a failure) until it expires. Waiters hang on the
 * entry and are answered from a deferred call, so a caller never sees its callback
 * run inside dns_resolve (c-ares may answer synchronously from /etc/hosts).
 *
 * Queries are paced: a burst of new names must not leave all at once, or the
 * replies overflow the socket's receive buffer and the names dropped there end as
 * timeouts. A PENDING entry is either out (given to c-ares) or waiting in a FIFO
 * for one of max_inflight slots; a slot frees when c-ares answers, and the queue
 * is drained after c-ares has returned (pump), never inside one of its callbacks.
 * A timeout goes back to the queue's tail for a fresh query, up to `retries`
 * times, before it is cached as a failure.
 *
 * What fails inside a c-ares callback (the loop cannot watch a socket, no timer,
 * no deferred call) is only recorded there; pump acts on it once c-ares has
 * returned: it cancels the channel's queries with that error, or retries the
 * delivery. Out of memory and out of descriptors end lookups uncached. */
#include "dns_internal.h"

#include "ascii.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static void arm_timer(dns_t *dns);

/* ---- answering waiters ---- */

static void deliver(loop_t *loop, void *arg)
{
    (void)loop;
    struct entry *e = arg;
    e->deliver_scheduled = 0;
    dns_t *dns = e->dns;
    double ttl = e->expires - loop_now(dns->loop);
    dns_answer_t ans = {
        .status = e->status,
        .error = e->error,
        .naddrs = e->naddrs,
        .addrs = (const char **)e->addrs,
        .ttl = ttl > 0 ? ttl : 0,
    };
    /* A callback may cancel other waiters of this entry or start new lookups of the
     * same name (answered on a later turn), so take one waiter at a time. */
    while (e->state == RESOLVED && e->waiters) {
        struct dns_wait *w = e->waiters;
        e->waiters = w->next;
        if (e->waiters)
            e->waiters->prev = NULL;
        else
            e->waiters_tail = NULL;
        dns_fn fn = w->fn;
        void *warg = w->arg;
        free(w);
        fn(warg, &ans);
    }
}

/* 0 when e's waiters will be answered (or it has none), -1 when the deferred call
 * could not be made (out of memory). */
static int schedule_delivery(struct entry *e)
{
    if (e->deliver_scheduled || !e->waiters) return 0;
    if (loop_defer(e->dns->loop, deliver, e) < 0) return -1;
    e->deliver_scheduled = 1;
    return 0;
}

static void hold_loop(struct entry *e, int hold);

/* Inside a c-ares callback, where no caller can be told: e waits in
 * dns->undelivered, holding the loop, until pump manages the deferred call. */
static void deliver_later(struct entry *e)
{
    if (schedule_delivery(e) == 0 || e->undelivered) return;
    e->undelivered = 1;
    e->unext = e->dns->undelivered;
    e->dns->undelivered = e;
    hold_loop(e, 1);
}

/* pump's part: defer the deliveries that failed before; those that fail again stay
 * (arm_timer keeps a timer for them). */
static void retry_deliveries(dns_t *dns)
{
    struct entry **p = &dns->undelivered;
    while (*p) {
        struct entry *e = *p;
        if (schedule_delivery(e) < 0) {
            p = &e->unext;
            continue;
        }
        *p = e->unext;
        e->unext = NULL;
        e->undelivered = 0;
        hold_loop(e, 0);
    }
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void set_failure(struct entry *e, enum dns_status status, const char *fmt,
                        const char *detail)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, e->host, detail);
    e->status = status;
    e->error = strdup(msg);
    double neg = e->dns->ttl_negative;
    if (status != DNS_NOTFOUND) neg = neg / 6 > 1 ? neg / 6 : 1;
    /* A shortage of memory or descriptors says nothing of the name. */
    if (status == DNS_MEMORY || status == DNS_RESOURCE) neg = 0;
    e->expires = loop_now(e->dns->loop) + neg;
}

/* The lookup found no socket for its query: said as http.c says it of connections. */
static void set_no_socket(struct entry *e, int err)
{
    char detail[256];
    struct rlimit rl;
    if (err == ENFILE || getrlimit(RLIMIT_NOFILE, &rl) < 0)
        snprintf(detail, sizeof(detail),
                 "too many open files in the system: no socket for the DNS query");
    else
        snprintf(detail, sizeof(detail),
                 "too many open files: the process's limit of %llu is reached, no socket for "
                 "the DNS query (raise ulimit -n, or lower the concurrency)",
                 (unsigned long long)rl.rlim_cur);
    set_failure(e, DNS_RESOURCE, "%s: %s", detail);
}

/* 0, or -1 when out of memory. */
static int add_address(struct entry *e, const struct sockaddr *sa)
{
    char buf[INET6_ADDRSTRLEN];
    const void *src = sa->sa_family == AF_INET6
                          ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
                          : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
    if (!inet_ntop(sa->sa_family, src, buf, sizeof(buf))) return 0;
    /* 0.0.0.0 and :: mean "this host" to connect(): never a crawl target. */
    if (strcmp(buf, "0.0.0.0") == 0 || strcmp(buf, "::") == 0) return 0;
    for (int i = 0; i < e->naddrs; i++)
        if (strcmp(e->addrs[i], buf) == 0) return 0;
    if (e->naddrs == MAX_ADDRS) return 0;
    if (!(e->addrs[e->naddrs] = strdup(buf))) return -1;
    e->naddrs++;
    return 0;
}

/* Every c-ares status a lookup can end with, what it means and what the user is
 * told. c-ares's own strings speak of its internals ("Could not contact DNS
 * servers" for a server that answered REFUSED). */
static const struct {
    int code;
    enum dns_status status;
    const char *message;
} ares_codes[] = {
    {ARES_ENOTFOUND, DNS_NOTFOUND, "no such host"},
    {ARES_ENODATA, DNS_NOTFOUND, "no address for this name"},
    {ARES_ETIMEOUT, DNS_TIMEOUT, "no DNS server answered in time"},
    {ARES_EREFUSED, DNS_FAILED, "DNS server refused the query"},
    {ARES_ESERVFAIL, DNS_FAILED, "DNS server failed to answer (SERVFAIL)"},
    {ARES_ENOTIMP, DNS_FAILED, "DNS server does not support the query (NOTIMP)"},
    {ARES_EFORMERR, DNS_FAILED, "DNS server could not read the query (FORMERR)"},
    {ARES_EBADRESP, DNS_FAILED, "malformed reply from the DNS server"},
    {ARES_ECONNREFUSED, DNS_FAILED, "could not reach any DNS server (connection refused)"},
    {ARES_EOF, DNS_FAILED, "DNS server closed the connection"},
    {ARES_EBADNAME, DNS_FAILED, "not a valid host name"},
    {ARES_EBADQUERY, DNS_FAILED, "not a valid host name"},
    {ARES_ENONAME, DNS_FAILED, "not a valid host name"},
    {ARES_EBADFAMILY, DNS_FAILED, "address family not supported"},
    {ARES_ENOMEM, DNS_MEMORY, "out of memory"},
    {ARES_ECANCELLED, DNS_FAILED, "lookup cancelled"},
    {ARES_EDESTRUCTION, DNS_FAILED, "lookup cancelled: the resolver is shutting down"},
    {ARES_EFILE, DNS_FAILED, "could not read the resolver configuration"},
};

enum dns_status dns_ares_status(int code, const char **message)
{
    *message = NULL;
    if (code == ARES_SUCCESS) return DNS_OK;
    for (size_t i = 0; i < sizeof(ares_codes) / sizeof(ares_codes[0]); i++) {
        if (ares_codes[i].code == code) {
            *message = ares_codes[i].message;
            return ares_codes[i].status;
        }
    }
    *message = "DNS lookup failed";
    return DNS_FAILED;
}

/* A lookup keeps the loop running only while somebody waits for it: one whose
 * waiters all gave up (a request's timeout) goes on, and its answer is cached if
 * it comes while the loop runs, but it does not hold a run open. */
static void hold_loop(struct entry *e, int hold)
{
    if (e->holds_loop == hold) return;
    e->holds_loop = hold;
    if (hold)
        loop_ref(e->dns->loop);
    else
        loop_unref(e->dns->loop);
}

static void enqueue(dns_t *dns, struct entry *e)
{
    e->qnext = NULL;
    if (dns->queue_tail)
        dns->queue_tail->qnext = e;
    else
        dns->queue_head = e;
    dns->queue_tail = e;
    dns->stats.waiting++;
}

/* ares_getaddrinfo callback; may run inside ares_getaddrinfo itself. */
static void on_addrinfo(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
    (void)timeouts;
    struct entry *e = arg;
    dns_t *dns = e->dns;
    dns->inflight--;
    if (!dns->destroying && status == ARES_ETIMEOUT && e->retries_left > 0 && e->waiters) {
        /* Still PENDING, with its loop reference: pump sends it again. */
        if (res) ares_freeaddrinfo(res);
        e->retries_left--;
        dns->stats.retries++;
        enqueue(dns, e);
        return;
    }
    hold_loop(e, 0);
    if (dns->destroying) {
        if (res) ares_freeaddrinfo(res);
        return;
    }
    dns_entry_clear(e);
    e->state = RESOLVED;
    if (status == ARES_SUCCESS && res) {
        int ttl = -1, oom = 0;
        for (struct ares_addrinfo_node *n = res->nodes; n && !oom; n = n->ai_next) {
            if (n->ai_family != AF_INET && n->ai_family != AF_INET6) continue;
            oom = add_address(e, n->ai_addr) < 0;
            if (ttl < 0 || n->ai_ttl < ttl) ttl = n->ai_ttl;
        }
        if (oom) {
            dns_entry_clear(e);
            set_failure(e, DNS_MEMORY, "%s: %s", "out of memory");
        } else if (e->naddrs > 0) {
            e->status = DNS_OK;
            e->expires = loop_now(dns->loop) + clamp(ttl, dns->ttl_min, dns->ttl_max);
        } else {
            set_failure(e, DNS_NOTFOUND, "%s: %s", "no usable address for this name");
        }
    } else if (status == ARES_ECANCELLED && dns->cancelling) {
        set_failure(e, dns->trouble, "%s: %s", dns->trouble_msg);
    } else if (status == ARES_ECONNREFUSED && dns->sock_errno) {
        /* c-ares 1.18 skips a server it has no socket for, and out of servers ends
         * the query as if each had refused it. */
        set_no_socket(e, dns->sock_errno);
    } else {
        const char *message;
        enum dns_status st = dns_ares_status(status, &message);
        /* With several servers c-ares checks replies itself (new_channel), and ends
         * with this code when each refused or failed the query, too. */
        if (status == ARES_ECONNREFUSED && dns->nservers > 1)
            message = "no DNS server would answer (each refused or failed the query, "
                      "or could not be reached)";
        if (st == DNS_OK) /* ARES_SUCCESS without a result */
            set_failure(e, DNS_NOTFOUND, "%s: %s", "no address for this name");
        else
            set_failure(e, st, "%s: %s", message);
    }
    if (res) ares_freeaddrinfo(res);
    deliver_later(e);
}

/* ---- c-ares on the loop ---- */

static void pump(dns_t *dns);

static void on_io(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    dns_t *dns = arg;
    ares_socket_t rfd = (events & (LOOP_READ | LOOP_ERROR)) ? fd : ARES_SOCKET_BAD;
    ares_socket_t wfd = (events & LOOP_WRITE) ? fd : ARES_SOCKET_BAD;
    ares_process_fd(dns->channel, rfd, wfd);
    pump(dns); /* answers freed slots, timeouts came back to the queue */
}

/* Remember the first failure c-ares's callbacks met, for pump. */
static void record_trouble(dns_t *dns, enum dns_status status, const char *msg)
{
    if (dns->trouble) return;
    dns->trouble = status;
    dns->trouble_msg = msg;
}

/* ARES_OPT_SOCK_STATE_CB. A socket the loop cannot watch would leave its queries
 * to time out: pump ends them at once instead. Stopping a watch cannot fail in a
 * way that matters (the socket is being closed). */
static void on_sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
    dns_t *dns = data;
    int events = (readable ? LOOP_READ : 0) | (writable ? LOOP_WRITE : 0);
    if (loop_watch(dns->loop, fd, events, events ? on_io : NULL, dns) == 0 || !events) return;
    if (errno == ENOMEM)
        record_trouble(dns, DNS_MEMORY, "out of memory watching the DNS socket");
    else
        record_trouble(dns, DNS_RESOURCE, "the event loop could not watch the DNS socket");
}

/* ares_set_socket_functions: the system's calls, but socket() notes why it failed,
 * which c-ares 1.18 does not pass on (see on_addrinfo). c-ares leaves sockets made
 * by these functions as they come: non-blocking is ours to set (a blocking read
 * would stall the loop), close-on-exec too. */
static ares_socket_t sock_open(int family, int type, int protocol, void *data)
{
    dns_t *dns = data;
    int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
    if (fd >= 0)
        dns->sock_errno = 0;
    else if (errno == EMFILE || errno == ENFILE)
        dns->sock_errno = errno;
    return fd;
}

static int sock_close(ares_socket_t fd, void *data)
{
    (void)data;
    return close(fd);
}

static int sock_connect(ares_socket_t fd, const struct sockaddr *sa, ares_socklen_t len, void *data)
{
    (void)data;
    return connect(fd, sa, len);
}

static ares_ssize_t sock_recvfrom(ares_socket_t fd, void *buf, size_t len, int flags,
                                  struct sockaddr *from, ares_socklen_t *fromlen, void *data)
{
    (void)data;
    return recvfrom(fd, buf, len, flags, from, fromlen);
}

static ares_ssize_t sock_sendv(ares_socket_t fd, const struct iovec *iov, int n, void *data)
{
    (void)data;
    return writev(fd, iov, n);
}

static const struct ares_socket_functions sock_functions = {
    .asocket = sock_open,
    .aclose = sock_close,
    .aconnect = sock_connect,
    .arecvfrom = sock_recvfrom,
    .asendv = sock_sendv,
};

static void on_timer(loop_t *loop, void *arg)
{
    (void)loop;
    dns_t *dns = arg;
    dns->timer = NULL;
    ares_process_fd(dns->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    pump(dns);
}

static void arm_timer(dns_t *dns)
{
    if (dns->timer) {
        loop_timer_cancel(dns->loop, dns->timer);
        dns->timer = NULL;
    }
    /* Deliveries that could not be deferred are tried again soon. */
    double delay = dns->undelivered ? 0.01 : 1.0;
    if (dns->inflight > 0) {
        struct timeval tv, *tvp = ares_timeout(dns->channel, NULL, &tv);
        double d = tvp ? (double)tvp->tv_sec + (double)tvp->tv_usec / 1e6 : 1.0;
        if (d < delay) delay = d;
    } else if (!dns->undelivered) {
        return;
    }
    dns->timer = loop_timer_add(dns->loop, delay, on_timer, dns);
    /* Without it nothing times out a query a server never answers. */
    if (!dns->timer && dns->inflight > 0)
        record_trouble(dns, DNS_MEMORY, "out of memory (no timer for the DNS query)");
}

/* ---- public API ---- */

/* ares_library_init is not thread-safe: once per process, from whichever engine
 * comes first, and never undone while any channel may be alive. */
static pthread_once_t ares_once = PTHREAD_ONCE_INIT;
static int ares_init_result;

static void ares_library_once(void)
{
    ares_init_result = ares_library_init(ARES_LIB_INIT_ALL);
}

static int open_channel(dns_t *dns, int flags, ares_channel *ch)
{
    struct ares_options opts = {0};
    opts.sock_state_cb = on_sock_state;
    opts.sock_state_cb_data = dns;
    opts.timeout = dns->timeout_ms;
    opts.tries = dns->tries;
    opts.flags = flags;
    int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
    int rc = ares_init_options(ch, &opts, flags ? mask | ARES_OPT_FLAGS : mask);
    if (rc == ARES_SUCCESS) ares_set_socket_functions(*ch, &sock_functions, dns);
    return rc;
}

/* ch, or in its place a channel on its one server that hands SERVFAIL, REFUSED and
 * NOTIMP replies over as they are (ARES_FLAG_NOCHECKRESP). c-ares 1.18 otherwise
 * skips a server that gives one and, out of servers, ends the query with
 * ARES_ECONNREFUSED ("Could not contact DNS servers"), whatever the server said.
 * With several servers that check is kept: such a reply from one moves on to the
 * next, which matters more than the exact message. Sets dns->nservers. */
static ares_channel checked_channel(dns_t *dns, ares_channel ch)
{
    struct ares_addr_port_node *list = NULL;
    dns->nservers = 0;
    if (ares_get_servers_ports(ch, &list) != ARES_SUCCESS) return ch;
    for (const struct ares_addr_port_node *n = list; n; n = n->next)
        dns->nservers++;
    ares_channel one;
    if (dns->nservers == 1 && open_channel(dns, ARES_FLAG_NOCHECKRESP, &one) == ARES_SUCCESS) {
        if (ares_set_servers_ports(one, list) == ARES_SUCCESS) {
            ares_destroy(ch);
            ch = one;
        } else {
            ares_destroy(one);
        }
    }
    ares_free_data(list);
    return ch;
}

dns_t *dns_new(loop_t *loop, const char *servers, char *err, size_t errlen)
{
    pthread_once(&ares_once, ares_library_once);
    if (ares_init_result != ARES_SUCCESS) {
        snprintf(err, errlen, "c-ares: %s", ares_strerror(ares_init_result));
        return NULL;
    }
    dns_t *dns = calloc(1, sizeof(*dns));
    if (!dns) goto oom;
    dns->loop = loop;
    dns->nbuckets = 256;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    dns->buckets = calloc(dns->nbuckets, sizeof(*dns->buckets));
    if (!dns->buckets) goto oom;
    dns->ttl_min = dns_defaults.ttl_min;
    dns->ttl_max = dns_defaults.ttl_max;
    dns->ttl_negative = dns_defaults.ttl_negative;
    dns->max_inflight = dns_defaults.max_inflight;
    dns->retries = dns_defaults.retries;
    dns->timeout_ms = dns_defaults.timeout_ms;
    dns->tries = dns_defaults.tries;

    int rc = open_channel(dns, 0, &dns->channel);
    if (rc != ARES_SUCCESS) {
        snprintf(err, errlen, "c-ares: %s", ares_strerror(rc));
        free(dns->buckets);
        free(dns);
        return NULL;
    }
    if (servers && *servers) {
        rc = ares_set_servers_ports_csv(dns->channel, servers);
        if (rc != ARES_SUCCESS) {
            snprintf(err, errlen, "bad DNS server list '%s': %s", servers, ares_strerror(rc));
            dns_free(dns);
            return NULL;
        }
    }
    dns->channel = checked_channel(dns, dns->channel);
    return dns;
oom:
    snprintf(err, errlen, "out of memory");
    if (dns) free(dns->buckets);
    free(dns);
    return NULL;
}

void dns_free(dns_t *dns)
{
    if (!dns) return;
    dns->destroying = 1;
    if (dns->timer) loop_timer_cancel(dns->loop, dns->timer);
    ares_destroy(dns->channel);
    for (struct entry *e = dns->queue_head; e; e = e->qnext)
        hold_loop(e, 0);
    for (struct entry *e = dns->undelivered; e; e = e->unext)
        hold_loop(e, 0);
    for (size_t i = 0; i < dns->nbuckets; i++) {
        struct entry *e = dns->buckets[i], *next;
        for (; e; e = next) {
            next = e->hnext;
            while (e->waiters) {
                struct dns_wait *w = e->waiters;
                e->waiters = w->next;
                free(w);
            }
            dns_entry_free(e);
        }
    }
    free(dns->buckets);
    free(dns);
}

/* max_inflight: enough to keep a remote resolver busy, few enough that the replies
 * of a burst fit the socket's receive buffer (every query of a burst sent at once
 * loses replies there, and they end as timeouts). */
const dns_config_t dns_defaults = {
    .ttl_min = 60,
    .ttl_max = 3600,
    .ttl_negative = 60,
    .timeout_ms = 1500,
    .tries = 2,
    .max_inflight = 64,
    .retries = 1,
};

void dns_get_config(const dns_t *dns, dns_config_t *config)
{
    config->ttl_min = dns->ttl_min;
    config->ttl_max = dns->ttl_max;
    config->ttl_negative = dns->ttl_negative;
    config->timeout_ms = dns->timeout_ms;
    config->tries = dns->tries;
    config->max_inflight = dns->max_inflight;
    config->retries = dns->retries;
}

void dns_set_ttl(dns_t *dns, double min, double max, double negative)
{
    dns->ttl_min = min;
    dns->ttl_max = max < min ? min : max;
    dns->ttl_negative = negative;
}

void dns_set_timeout(dns_t *dns, int timeout_ms, int tries)
{
    /* c-ares 1.18 has no setter for a live channel; re-create it keeping servers. */
    struct ares_addr_port_node *list = NULL;
    if (dns->inflight == 0 && ares_get_servers_ports(dns->channel, &list) == ARES_SUCCESS) {
        int old_ms = dns->timeout_ms, old_tries = dns->tries;
        dns->timeout_ms = timeout_ms;
        dns->tries = tries;
        ares_channel fresh;
        if (open_channel(dns, 0, &fresh) == ARES_SUCCESS) {
            ares_set_servers_ports(fresh, list);
            ares_destroy(dns->channel);
            dns->channel = checked_channel(dns, fresh);
        } else {
            dns->timeout_ms = old_ms;
            dns->tries = old_tries;
        }
        ares_free_data(list);
    }
}

void dns_set_pacing(dns_t *dns, int max_inflight)
{
    dns->max_inflight = max_inflight > 0 ? max_inflight : 1;
    pump(dns);
}

void dns_set_retries(dns_t *dns, int retries)
{
    dns->retries = retries > 0 ? retries : 0;
}

static int lower_host(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n == 0 || n > MAX_HOST) return -1;
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)ascii_lower((unsigned char)src[i]);
    dst[n] = '\0';
    if (n > 1 && dst[n - 1] == '.') dst[n - 1] = '\0'; /* "example.org." */
    return 0;
}

/* Answer IP literals at once: c-ares 1.18 would still send a query for them. */
static int literal_address(struct entry *e)
{
    unsigned char buf[sizeof(struct in6_addr)];
    const char *h = e->host;
    char tmp[MAX_HOST + 1];
    size_t n = strlen(h);
    if (n > 2 && h[0] == '[' && h[n - 1] == ']') {
        memcpy(tmp, h + 1, n - 2);
        tmp[n - 2] = '\0';
        h = tmp;
    }
    int family = inet_pton(AF_INET, h, buf) == 1    ? AF_INET
                 : inet_pton(AF_INET6, h, buf) == 1 ? AF_INET6
                                                    : 0;
    if (!family) return 0;
    e->state = RESOLVED;
    if (strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0) {
        set_failure(e, DNS_FAILED, "%s: %s", "the unspecified address is never fetched");
        return 1;
    }
    e->addrs[0] = strdup(h);
    if (!e->addrs[0]) { /* not cached (set_failure): an answer with no address */
        set_failure(e, DNS_MEMORY, "%s: %s", "out of memory");
        return 1;
    }
    e->status = DNS_OK;
    e->naddrs = 1;
    e->expires = INFINITY;
    return 1;
}

static void send_query(dns_t *dns, struct entry *e)
{
    dns->stats.queries++;
    dns->inflight++;
    if ((unsigned long)dns->inflight > dns->stats.peak)
        dns->stats.peak = (unsigned long)dns->inflight;
    struct ares_addrinfo_hints hints = {0};
    hints.ai_family = AF_INET;
    hints.ai_flags = ARES_AI_NOSORT;
    ares_getaddrinfo(dns->channel, e->host, NULL, &hints, on_addrinfo, e);
}

/* Send queued queries while slots are free. Only where no c-ares call is on the
 * stack: a query may complete inside ares_getaddrinfo (/etc/hosts), which frees
 * its slot again before the loop goes on. A queued entry nobody waits for any more
 * (its waiters cancelled) is not sent: it is left expired, to be asked afresh. */
static void send_queued(dns_t *dns)
{
    while (dns->queue_head && dns->inflight < dns->max_inflight) {
        struct entry *e = dns->queue_head;
        dns->queue_head = e->qnext;
        if (!dns->queue_head) dns->queue_tail = NULL;
        e->qnext = NULL;
        dns->stats.waiting--;
        if (!e->waiters) {
            e->state = RESOLVED;
            e->status = DNS_FAILED;
            e->expires = 0;
            hold_loop(e, 0);
            continue;
        }
        send_query(dns, e);
    }
}

/* End every query out with the failure a c-ares callback recorded: without its
 * socket watched, or without a timer, they would wait until the request's own
 * timeout, or for ever. */
static void cancel_for_trouble(dns_t *dns)
{
    dns->cancelling = 1;
    ares_cancel(dns->channel);
    dns->cancelling = 0;
    dns->trouble = DNS_OK;
    dns->trouble_msg = NULL;
}

/* Where no c-ares call is on the stack: send what the slots allow, act on what
 * c-ares's callbacks recorded, keep the timer. Each pass that cancels empties the
 * slots, and the next sends from the queue, so a shortage that lasts ends the queue
 * too. */
static void pump(dns_t *dns)
{
    for (;;) {
        send_queued(dns);
        retry_deliveries(dns);
        if (!dns->trouble) arm_timer(dns);
        if (!dns->trouble) return;
        cancel_for_trouble(dns);
    }
}

/* A fresh lookup of e, whose waiter is already attached. */
static void start_query(dns_t *dns, struct entry *e)
{
    dns_entry_clear(e);
    e->state = PENDING;
    e->retries_left = dns->retries;
    hold_loop(e, 1);
    enqueue(dns, e);
    pump(dns);
}

/* Take w off e and free it. */
static void unlink_waiter(struct entry *e, dns_wait_t *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        e->waiters = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        e->waiters_tail = w->prev;
    free(w);
    if (e->state == PENDING && !e->waiters) hold_loop(e, 0);
}

dns_wait_t *dns_resolve(dns_t *dns, const char *host, dns_fn fn, void *arg)
{
    char name[MAX_HOST + 1];
    dns_wait_t *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    w->fn = fn;
    w->arg = arg;

    if (lower_host(name, host) < 0) name[0] = '\0';
    unsigned hash = dns_hash_host(name);
    struct entry *e = dns_cache_find(dns, name, hash);
    int fresh = 0;
    if (!e) {
        e = dns_cache_add(dns, name, hash);
        if (!e) {
            free(w);
            return NULL;
        }
        if (name[0] == '\0') {
            e->state = RESOLVED;
            set_failure(e, DNS_FAILED, "'%s': %s", "not a valid host name");
            dns->stats.hits++;
        } else if (literal_address(e)) {
            dns->stats.hits++;
        } else {
            fresh = 1;
        }
    } else if (e->state == PENDING) {
        dns->stats.coalesced++;
        hold_loop(e, 1); /* its earlier waiters may all have gone */
    } else if (e->expires <= loop_now(dns->loop) && entry_idle(e)) {
        fresh = 1;
    } else {
        dns->stats.hits++;
    }

    /* The waiter first: pump sends only queries somebody waits for. */
    w->entry = e;
    w->prev = e->waiters_tail;
    if (e->waiters_tail)
        e->waiters_tail->next = w;
    else
        e->waiters = w;
    e->waiters_tail = w;
    if (fresh) start_query(dns, e);
    if (e->state == RESOLVED && schedule_delivery(e) < 0) {
        /* Nothing would ever answer w: the caller hears of it now. */
        unlink_waiter(e, w);
        return NULL;
    }
    return w;
}

void dns_cancel(dns_t *dns, dns_wait_t *w)
{
    (void)dns;
    if (!w) return;
    unlink_waiter(w->entry, w);
}

int dns_wait_ready(const dns_wait_t *w)
{
    return w->entry->state == RESOLVED;
}

void dns_get_stats(const dns_t *dns, dns_stats_t *stats)
{
    *stats = dns->stats;
    stats->entries = dns->nentries;
}
