/* dash.c: the dashboard's HTTP server. libmicrohttpd in external epoll mode (no thread
 * of its own): its epoll fd is watched by the loop, MHD_run runs when it is readable
 * or its timeout falls due. Published documents, the event stream, the token and
 * same-origin checks, the queue of commands. */
#include "dash.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CMDS 32
#define MAX_CLIENTS 32
#define MAX_CONNECTIONS 64
#define CONNECTION_TIMEOUT 60 /* seconds; an event-stream client hears every publish */
#define SSE_BLOCK 16384

struct doc {
    struct doc *next;
    char *path, *ctype, *body;
    size_t len;
};

struct client {
    struct client *next, **prev;
    dash_t *d;
    struct MHD_Connection *conn;
    unsigned long gen; /* of the event it has (or is sending) */
    char *buf;         /* that event as data: lines */
    size_t len, off;
    int suspended;
};

struct dash {
    loop_t *loop;
    struct MHD_Daemon *mhd;
    int epfd;
    loop_timer_t *timer;
    struct doc *docs;
    char *event;
    size_t event_len;
    unsigned long gen; /* events published; 0: none yet */
    struct client *clients;
    int nclients;
    enum dash_cmd cmds[MAX_CMDS];
    int ncmds;
    int reads_need_token, closing;
    unsigned port;
    char host[INET6_ADDRSTRLEN + 3]; /* [v6] and its NUL */
    char token[65];
};

static const char *const cmd_names[] = {"", "pause", "resume", "stop"};

const char *dash_cmd_name(enum dash_cmd cmd)
{
    return cmd > DASH_NONE && cmd <= DASH_STOP ? cmd_names[cmd] : "";
}

/* The loop ---------------------------------------------------------------------- */

static void on_timer(loop_t *loop, void *arg);

/* After every MHD_run (and anything that may have changed what MHD waits for): its
 * next timeout as our one timer. */
static void rearm(dash_t *d)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (d->timer) loop_timer_cancel(d->loop, d->timer);
    d->timer = NULL;
    if (MHD_get_timeout(d->mhd, &ms) == MHD_YES)
        d->timer = loop_timer_add(d->loop, (double)ms / 1000.0, on_timer, d);
}

static void run(dash_t *d)
{
    MHD_run(d->mhd);
    rearm(d);
}

static void on_timer(loop_t *loop, void *arg)
{
    (void)loop;
    dash_t *d = arg;
    d->timer = NULL; /* freed before this call */
    run(d);
}

static void on_io(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    run(arg);
}

/* Checks ------------------------------------------------------------------------ */

static int same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = la != lb;
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return diff == 0;
}

static int has_token(const dash_t *d, struct MHD_Connection *c)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (auth && strncasecmp(auth, "Bearer ", 7) == 0 && same_secret(auth + 7, d->token)) return 1;
    const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    return arg && same_secret(arg, d->token);
}

/* A Host header naming a loopback address or localhost: a page of another site whose
 * name was made to point at 127.0.0.1 (DNS rebinding) sends its own name. */
static int loopback_host(const char *host)
{
    char name[INET6_ADDRSTRLEN + 1];
    size_t n;
    if (!host) return 0;
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        if (!end) return 0;
        host++;
        n = (size_t)(end - host);
    } else {
        n = strcspn(host, ":");
    }
    if (n == 0 || n >= sizeof(name)) return 0;
    memcpy(name, host, n);
    name[n] = '\0';
    struct in_addr a4;
    struct in6_addr a6;
    if (strcasecmp(name, "localhost") == 0) return 1;
    if (inet_pton(AF_INET, name, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, name, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* A command comes from the dashboard's own page or from a program (no Origin, no
 * Sec-Fetch-Site): a form or script of another site is refused. */
static int same_origin(struct MHD_Connection *c)
{
    const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && strcmp(site, "same-origin") != 0) return 0;
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!origin) return 1;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    return host && strncmp(origin, "http://", 7) == 0 && strcmp(origin + 7, host) == 0;
}

/* Responses --------------------------------------------------------------------- */

static enum MHD_Result send_response(struct MHD_Connection *c, unsigned status,
                                     struct MHD_Response *r, const char *ctype)
{
    if (!r) return MHD_NO;
    enum MHD_Result ok = MHD_YES;
    if (ctype) ok &= MHD_add_response_header(r, "Content-Type", ctype);
    ok &= MHD_add_response_header(r, "Cache-Control", "no-store");
    ok &= MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    ok &= MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    ok &= MHD_add_response_header(r, "X-Frame-Options", "DENY");
    /* The page's script and styles are documents of their own: nothing inline runs. */
    if (ctype && strncmp(ctype, "text/html", 9) == 0)
        ok &=
            MHD_add_response_header(r, "Content-Security-Policy",
                                    "default-src 'self'; img-src 'self' data:; "
                                    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    if (status == MHD_HTTP_UNAUTHORIZED)
        ok &= MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    if (ok) ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    return send_response(c, status, r, "text/plain; charset=utf-8");
}

static const struct doc *find_doc(const dash_t *d, const char *path)
{
    for (const struct doc *p = d->docs; p; p = p->next)
        if (strcmp(p->path, path) == 0) return p;
    return NULL;
}

/* The event stream -------------------------------------------------------------- */

static size_t put(char *buf, size_t n, const char *s)
{
    while (*s)
        buf[n++] = *s++;
    return n;
}

/* The latest event as data: lines ("data: " before each line, a blank line after). */
static int load_event(struct client *cl)
{
    const dash_t *d = cl->d;
    size_t lines = 1;
    for (size_t i = 0; i < d->event_len; i++)
        lines += d->event[i] == '\n';
    char *buf = realloc(cl->buf, d->event_len + lines * 6 + 2);
    if (!buf) return -1;
    cl->buf = buf;
    size_t n = put(buf, 0, "data: ");
    for (size_t i = 0; i < d->event_len; i++) {
        buf[n++] = d->event[i];
        if (d->event[i] == '\n') n = put(buf, n, "data: ");
    }
    cl->len = put(buf, n, "\n\n");
    cl->off = 0;
    cl->gen = d->gen;
    return 0;
}

/* With nothing new to send, the connection is suspended until the next event. */
static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    struct client *cl = cls;
    if (cl->d->closing) return MHD_CONTENT_READER_END_OF_STREAM;
    if (cl->off == cl->len) {
        if (cl->gen == cl->d->gen) {
            cl->suspended = 1;
            MHD_suspend_connection(cl->conn);
            return 0;
        }
        if (load_event(cl) < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = cl->len - cl->off < max ? cl->len - cl->off : max;
    memcpy(out, cl->buf + cl->off, n);
    cl->off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls)
{
    struct client *cl = cls;
    *cl->prev = cl->next;
    if (cl->next) cl->next->prev = cl->prev;
    cl->d->nclients--;
    free(cl->buf);
    free(cl);
}

static enum MHD_Result start_stream(dash_t *d, struct MHD_Connection *c)
{
    if (d->nclients >= MAX_CLIENTS) return send_text(c, 503, "too many event streams\n");
    struct client *cl = calloc(1, sizeof(*cl));
    if (!cl) return MHD_NO;
    cl->d = d;
    cl->conn = c;
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, cl, sse_free);
    if (!r) {
        free(cl);
        return MHD_NO;
    }
    cl->next = d->clients;
    cl->prev = &d->clients;
    if (d->clients) d->clients->prev = &cl->next;
    d->clients = cl;
    d->nclients++;
    return send_response(c, MHD_HTTP_OK, r, "text/event-stream");
}

static void wake_clients(dash_t *d)
{
    for (struct client *cl = d->clients; cl; cl = cl->next)
        if (cl->suspended) {
            cl->suspended = 0;
            MHD_resume_connection(cl->conn);
        }
}

/* Requests ---------------------------------------------------------------------- */

static enum MHD_Result command(dash_t *d, struct MHD_Connection *c, const char *url)
{
    enum dash_cmd cmd = DASH_NONE;
    for (int i = DASH_PAUSE; i <= DASH_STOP; i++)
        if (url[0] == '/' && strcmp(url + 1, cmd_names[i]) == 0) cmd = (enum dash_cmd)i;
    if (cmd == DASH_NONE) return send_text(c, MHD_HTTP_NOT_FOUND, "no such command\n");
    if (!has_token(d, c)) return send_text(c, MHD_HTTP_UNAUTHORIZED, "a command needs the token\n");
    if (!same_origin(c)) return send_text(c, MHD_HTTP_FORBIDDEN, "cross-origin command refused\n");
    if (d->ncmds == MAX_CMDS) return send_text(c, 503, "too many commands queued\n");
    d->cmds[d->ncmds++] = cmd;
    return send_text(c, MHD_HTTP_ACCEPTED, "queued\n");
}

static enum MHD_Result get(dash_t *d, struct MHD_Connection *c, const char *url)
{
    if (strcmp(url, "/events") == 0) return start_stream(d, c);
    const struct doc *doc = find_doc(d, url);
    if (!doc) return send_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
    struct MHD_Response *r =
        MHD_create_response_from_buffer(doc->len, doc->body, MHD_RESPMEM_MUST_COPY);
    return send_response(c, MHD_HTTP_OK, r, doc->ctype);
}

/* Every request is answered on its first call, once its headers are in: a body sent
 * with a command is not read (the connection is then closed after the answer). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;
    dash_t *d = cls;
    int token = has_token(d, c);
    if (d->reads_need_token && !token)
        return send_text(c, MHD_HTTP_UNAUTHORIZED, "this dashboard needs its token\n");
    if (!token && !loopback_host(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
        return send_text(c, MHD_HTTP_FORBIDDEN, "Host is not a loopback address\n");
    if (strcmp(method, "POST") == 0) return command(d, c, url);
    if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) return get(d, c, url);
    return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
}

/* Setup ------------------------------------------------------------------------- */

/* "[HOST:]PORT" into addr; the host as a URL writes it into d->host. */
static int parse_listen(dash_t *d, const char *listen, struct sockaddr_storage *addr, char *err,
                        size_t errlen)
{
    char host[INET6_ADDRSTRLEN + 1] = "127.0.0.1";
    const char *colon = strrchr(listen, ':'), *port_s = colon ? colon + 1 : listen;
    if (colon) {
        const char *h = listen;
        size_t n = (size_t)(colon - listen);
        if (n >= 2 && h[0] == '[' && h[n - 1] == ']') h++, n -= 2;
        if (n == 0 || n >= sizeof(host)) goto bad;
        memcpy(host, h, n);
        host[n] = '\0';
        if (strcasecmp(host, "localhost") == 0) strcpy(host, "127.0.0.1");
    }
    char *end;
    errno = 0;
    unsigned long port = strtoul(port_s, &end, 10);
    if (!*port_s || *end || errno || port > 65535 || port_s[0] == '-' || port_s[0] == '+') goto bad;
    memset(addr, 0, sizeof(*addr));
    struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        snprintf(d->host, sizeof(d->host), "%s", host);
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        snprintf(d->host, sizeof(d->host), "[%s]", host);
    } else {
        goto bad;
    }
    return 0;
bad:
    snprintf(err, errlen, "listen '%s': want [HOST:]PORT, HOST an IP address or localhost", listen);
    return -1;
}

/* Only 127.0.0.1 and ::1 are read without a token: the rest of 127/8 is as
 * "another address" as any (a host's services may be bound there). */
static int is_loopback(const struct sockaddr_storage *addr)
{
    if (addr->ss_family == AF_INET)
        return ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) == INADDR_LOOPBACK;
    return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr);
}

/* Our own listening socket, so that a failure says why (MHD_start_daemon does not). */
static int open_listener(dash_t *d, const struct sockaddr_storage *addr, char *err, size_t errlen)
{
    socklen_t len =
        addr->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    int one = 1;
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) goto fail;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) goto fail;
    if (bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, 64) < 0) goto fail;
    struct sockaddr_storage bound;
    memset(&bound, 0, sizeof(bound));
    len = sizeof(bound);
    if (getsockname(fd, (struct sockaddr *)&bound, &len) < 0) goto fail;
    d->port = ntohs(bound.ss_family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                               : ((struct sockaddr_in6 *)&bound)->sin6_port);
    return fd;
fail:
    snprintf(err, errlen, "listen on %s: %s", d->host, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
}

static int make_token(dash_t *d, const char *token, char *err, size_t errlen)
{
    if (token) {
        size_t n = strlen(token);
        if (n < 8 || n >= sizeof(d->token) || strcspn(token, " \t\r\n\"&?#%") != n) {
            snprintf(err, errlen,
                     "token: want 8 to 64 characters, no spaces, quotes, &, ?, # or %%");
            return -1;
        }
        memcpy(d->token, token, n + 1);
        return 0;
    }
    unsigned char raw[16];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        snprintf(err, errlen, "token: getrandom: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(d->token + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

static int start_daemon(dash_t *d, int fd, char *err, size_t errlen)
{
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    d->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, d, MHD_OPTION_LISTEN_SOCKET, fd,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT,
                              MHD_OPTION_END);
    if (!d->mhd) {
        snprintf(err, errlen, "the dashboard's server (libmicrohttpd) did not start");
        close(fd);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    d->epfd = info ? info->epoll_fd : -1;
    if (d->epfd < 0 || loop_watch(d->loop, d->epfd, LOOP_READ, on_io, d) < 0) {
        snprintf(err, errlen, "the dashboard's server: cannot watch its epoll descriptor");
        return -1;
    }
    rearm(d);
    return 0;
}

dash_t *dash_new(loop_t *loop, const char *listen, const char *token, char *err, size_t errlen)
{
    struct sockaddr_storage addr;
    dash_t *d = calloc(1, sizeof(*d));
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->loop = loop;
    d->epfd = -1;
    if (parse_listen(d, listen, &addr, err, errlen) < 0) goto fail;
    if (make_token(d, token, err, errlen) < 0) goto fail;
    d->reads_need_token = token != NULL || !is_loopback(&addr);
    int fd = open_listener(d, &addr, err, errlen);
    if (fd < 0) goto fail;
    if (start_daemon(d, fd, err, errlen) < 0) goto fail;
    return d;
fail:
    dash_free(d);
    return NULL;
}

void dash_free(dash_t *d)
{
    if (!d) return;
    if (d->mhd) {
        d->closing = 1;
        wake_clients(d); /* MHD_stop_daemon must find no connection suspended */
        if (d->epfd >= 0) loop_forget(d->loop, d->epfd);
        MHD_stop_daemon(d->mhd);
    }
    if (d->timer) loop_timer_cancel(d->loop, d->timer);
    while (d->docs) {
        struct doc *p = d->docs;
        d->docs = p->next;
        free(p->path), free(p->ctype), free(p->body), free(p);
    }
    free(d->event);
    free(d);
}

/* Publishing -------------------------------------------------------------------- */

static char *copy_bytes(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

int dash_publish(dash_t *d, const char *path, const char *ctype, const char *body, size_t len)
{
    struct doc *doc = (struct doc *)find_doc(d, path);
    char *b = copy_bytes(body, len);
    if (!b) return -1;
    if (!doc) {
        doc = calloc(1, sizeof(*doc));
        if (!doc || !(doc->path = strdup(path))) goto fail;
        doc->next = d->docs;
        d->docs = doc;
    }
    if (!doc->ctype || strcmp(doc->ctype, ctype) != 0) {
        char *c = strdup(ctype);
        if (!c) return free(b), -1;
        free(doc->ctype);
        doc->ctype = c;
    }
    free(doc->body);
    doc->body = b;
    doc->len = len;
    return 0;
fail:
    if (doc) free(doc->path);
    free(doc);
    free(b);
    return -1;
}

int dash_event(dash_t *d, const char *data, size_t len)
{
    char *e = copy_bytes(data, len);
    if (!e) return -1;
    free(d->event);
    d->event = e;
    d->event_len = len;
    d->gen++;
    wake_clients(d);
    /* MHD signals no wakeup of its own here (it would through its inter-thread
     * channel, which our epoll mode does not get): a run now takes the resumed
     * connections back and sends them the event. */
    run(d);
    return 0;
}

enum dash_cmd dash_next_command(dash_t *d)
{
    if (d->ncmds == 0) return DASH_NONE;
    enum dash_cmd cmd = d->cmds[0];
    memmove(d->cmds, d->cmds + 1, (size_t)(--d->ncmds) * sizeof(d->cmds[0]));
    return cmd;
}

const char *dash_host(const dash_t *d)
{
    return d->host;
}

unsigned dash_port(const dash_t *d)
{
    return d->port;
}

const char *dash_token(const dash_t *d)
{
    return d->token;
}

int dash_reads_need_token(const dash_t *d)
{
    return d->reads_need_token;
}
