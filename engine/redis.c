/* redis.c: hiredis's async context on the loop. The adapter is the five hooks of
 * redisAsyncContext.ev (addRead, delRead, addWrite, delWrite, cleanup) onto one fd
 * watcher; hiredis 0.14 (Debian 12's) has no timer hook, so the timeouts are ours:
 * one loop timer a connection, for the connect and for the oldest pending command.
 *
 * Each command is a struct redis_cmd, hiredis's privdata for its callback, kept in
 * a list in the order sent (the order replies come). hiredis calls every callback
 * exactly once: with the reply, or with NULL when the context is freed (an error,
 * a timeout, a close). A cancelled command keeps its place and its struct until
 * then, with no callback of the caller's: the reply still has to be read.
 *
 * hiredis frees its context itself after a read or write error, inside
 * redisAsyncHandleRead/Write: the cleanup hook is the one sign of it, so it clears
 * r->ac and nothing touches the context after a handler returns without checking.
 *
 * What a server may send is bounded here (hiredis 0.14's reader has no limits): its
 * reply functions are wrapped to refuse a reply no command asked for (hiredis would
 * assert) and a reply too large, and the bytes of the item it waits on are checked
 * after each read, so that a bulk string's announced length is refused before its
 * bytes are buffered. */
#include "redis.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The limits of one reply (REDIS_MAX_* in redis.h); what hiredis holds of a reply is
 * counted as its objects' sizes: strings, a redisReply each, an array's slots. */
#define MAX_LINE (64 * 1024) /* a status, error or integer line, a length's line */

enum conn_state { CONNECTING, READY, DEAD };

struct redis_cmd {
    struct redis_cmd *prev, *next;
    redis_t *r;
    redis_reply_fn fn; /* NULL once cancelled */
    void *arg;
    double deadline; /* when the reply is due (command_timeout) */
    int closed;      /* in r->closed_head: its callback is due from deliver_closed */
};

struct redis {
    loop_t *loop;
    redisAsyncContext *ac; /* NULL once hiredis freed it */
    int fd, mask;          /* the watched fd and its LOOP_READ|LOOP_WRITE */
    enum conn_state state;
    redis_opts_t opts;
    double connect_deadline;
    redis_connect_fn connect_fn;
    void *connect_arg;
    struct redis_cmd *head, *tail; /* sent, reply not yet come: oldest first */
    size_t npending, nwaited;      /* all of them; those with a callback */
    loop_timer_t *timer;
    double timer_at;
    int holds_ref;     /* a loop reference while someone waits (update_ref) */
    int in_callback;   /* a caller's callback is running: close after it */
    int close_asked;   /* redis_close inside a callback: done after hiredis returns */
    int closing;       /* failures go to `closed`, delivered from a deferred call */
    int guard_sigpipe; /* SIGPIPE is not ignored by the process: block it around writes */
    struct redis_cmd *closed_head, *closed_tail; /* their callbacks, for the deferred call */
    redis_error_t fail;                          /* code REDIS_F_NONE while alive */
    char fail_msg[256];
    redisReplyObjectFunctions *hiredis_fn; /* hiredis's own reply functions */
    redisReplyObjectFunctions fn;          /* them wrapped: the limits below */
    size_t reply_size;                     /* what the reply being read holds so far */
};

/* ---- state ---- */

/* Hold a loop reference while a caller waits for something: the connect, or a
 * command with a callback. An idle connection does not keep a run alive. */
static void update_ref(redis_t *r)
{
    int want = (r->state == CONNECTING && r->connect_fn) || r->nwaited > 0;
    if (want && !r->holds_ref) loop_ref(r->loop);
    if (!want && r->holds_ref) loop_unref(r->loop);
    r->holds_ref = want;
}

static void set_failure(redis_t *r, enum redis_fail code, const char *fmt, const char *detail)
{
    if (r->fail.code != REDIS_F_NONE) return; /* the first cause is the one to tell */
    r->fail.code = code;
    snprintf(r->fail_msg, sizeof(r->fail_msg), fmt, detail);
    r->fail.message = r->fail_msg;
}

/* What hiredis's own error on ac means (set before it frees the context). */
static void failure_from_hiredis(redis_t *r, const redisAsyncContext *ac)
{
    const char *why = ac->c.errstr[0] ? ac->c.errstr : "connection closed";
    switch (ac->c.err) {
    case REDIS_ERR_PROTOCOL:
        set_failure(r, REDIS_F_PROTOCOL, "protocol error: %s", why);
        break;
    case REDIS_ERR_OOM:
        set_failure(r, REDIS_F_MEMORY, "out of memory: %s", why);
        break;
    case REDIS_ERR_OTHER: /* an error reply nobody asked for: maxclients, loading */
        set_failure(r, REDIS_F_CONNECT, "the server refused the connection: %s", why);
        break;
    default:
        if (r->state == CONNECTING)
            set_failure(r, REDIS_F_CONNECT, "cannot connect: %s", why);
        else
            set_failure(r, REDIS_F_CONNECT, "connection lost: %s", why);
        break;
    }
}

/* ---- the adapter: redisAsyncContext.ev ---- */

static void on_io(loop_t *loop, int fd, int events, void *arg);

static void watch(redis_t *r, int mask)
{
    if (mask == r->mask || r->fd < 0) return;
    if (loop_watch(r->loop, r->fd, mask, mask ? on_io : NULL, r) != 0 && mask) {
        /* An fd the loop cannot watch would leave its commands waiting forever. The
         * failure is acted on in on_io or after the call that asked (check_watch):
         * freeing the context inside one of its own hooks is not allowed. */
        set_failure(r, errno == ENOMEM ? REDIS_F_MEMORY : REDIS_F_CONNECT, "%s",
                    "the event loop could not watch the connection");
        return;
    }
    r->mask = mask;
}

static void ev_add_read(void *p)
{
    redis_t *r = p;
    watch(r, r->mask | LOOP_READ);
}

static void ev_del_read(void *p)
{
    redis_t *r = p;
    watch(r, r->mask & ~LOOP_READ);
}

static void ev_add_write(void *p)
{
    redis_t *r = p;
    watch(r, r->mask | LOOP_WRITE);
}

static void ev_del_write(void *p)
{
    redis_t *r = p;
    watch(r, r->mask & ~LOOP_WRITE);
}

/* The context is being freed (its socket is closed right after): stop watching. */
static void ev_cleanup(void *p)
{
    redis_t *r = p;
    if (r->ac) failure_from_hiredis(r, r->ac); /* an idle connection lost: no callback said */
    if (r->fd >= 0) loop_watch(r->loop, r->fd, 0, NULL, NULL);
    r->mask = 0;
    r->fd = -1;
    r->ac = NULL;
    r->state = DEAD;
}

/* ---- commands and their callbacks ---- */

static void unlink_cmd(redis_t *r, struct redis_cmd *cmd)
{
    if (cmd->prev)
        cmd->prev->next = cmd->next;
    else
        r->head = cmd->next;
    if (cmd->next)
        cmd->next->prev = cmd->prev;
    else
        r->tail = cmd->prev;
    r->npending--;
}

/* hiredis's callback of every command (redisCallbackFn). */
static void on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct redis_cmd *cmd = privdata;
    redis_t *r = cmd->r;
    unlink_cmd(r, cmd);
    if (!reply) failure_from_hiredis(r, ac); /* ours is set already if we freed it */
    if (!cmd->fn) {
        free(cmd);
        return;
    }
    r->nwaited--;
    if (r->closing && !reply) { /* redis_close: delivered from a deferred call */
        cmd->closed = 1;
        cmd->next = NULL;
        if (r->closed_tail)
            r->closed_tail->next = cmd;
        else
            r->closed_head = cmd;
        r->closed_tail = cmd;
        return;
    }
    r->in_callback++;
    if (reply)
        cmd->fn(cmd->arg, (const redis_reply_t *)reply, NULL);
    else
        cmd->fn(cmd->arg, NULL, &r->fail);
    r->in_callback--;
    free(cmd);
}

static int unpaired_command(const char *name, size_t len)
{
    static const char *const names[] = {"subscribe", "psubscribe", "unsubscribe", "punsubscribe",
                                        "monitor"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (len == strlen(names[i]) && strncasecmp(name, names[i], len) == 0) return 1;
    return 0;
}

/* ---- what a server may send ---- */

/* what: words with at most one %llu, for n. */
static void refuse_reply(redis_t *r, const char *what, unsigned long long n)
{
    char detail[96];
    snprintf(detail, sizeof(detail), what, n);
    set_failure(r, REDIS_F_PROTOCOL, "protocol error: %s", detail);
}

/* A reply's first object (task->parent NULL) starts its count, and is refused when
 * no command waits for it; an error reply is let through, as hiredis tells one
 * (max clients, loading) as the connection refused. NULL: refused (hiredis then
 * fails the connection, as out of memory; our cause, set first, is the one told). */
static int admit(const redisReadTask *task, size_t size)
{
    redis_t *r = task->privdata;
    if (!task->parent) {
        r->reply_size = 0;
        if (r->npending == 0 && task->type != REDIS_REPLY_ERROR) {
            refuse_reply(r, "the server sent a reply no command asked for", 0);
            return 0;
        }
    }
    r->reply_size += size + sizeof(redisReply);
    if (r->reply_size > REDIS_MAX_REPLY) {
        refuse_reply(r, "a reply larger than %llu bytes", REDIS_MAX_REPLY);
        return 0;
    }
    return 1;
}

static void *create_string(const redisReadTask *task, char *str, size_t len)
{
    redis_t *r = task->privdata;
    return admit(task, len) ? r->hiredis_fn->createString(task, str, len) : NULL;
}

static void *create_array(const redisReadTask *task, int elements)
{
    redis_t *r = task->privdata;
    if (elements > REDIS_MAX_ELEMENTS) {
        refuse_reply(r, "an array of %llu elements", (unsigned long long)elements);
        return NULL;
    }
    size_t slots = (size_t)(elements > 0 ? elements : 0) * sizeof(redisReply *);
    return admit(task, slots) ? r->hiredis_fn->createArray(task, elements) : NULL;
}

static void *create_integer(const redisReadTask *task, long long value)
{
    redis_t *r = task->privdata;
    return admit(task, 0) ? r->hiredis_fn->createInteger(task, value) : NULL;
}

static void *create_nil(const redisReadTask *task)
{
    redis_t *r = task->privdata;
    return admit(task, 0) ? r->hiredis_fn->createNil(task) : NULL;
}

static void wrap_reader(redis_t *r)
{
    redisReader *reader = r->ac->c.reader;
    r->hiredis_fn = reader->fn;
    r->fn = *reader->fn;
    r->fn.createString = create_string;
    r->fn.createArray = create_array;
    r->fn.createInteger = create_integer;
    r->fn.createNil = create_nil;
    reader->fn = &r->fn;
    reader->privdata = r;
}

/* After hiredis read and took every whole reply: the bytes left in its buffer are
 * the item it waits on. A bulk string whose length is announced is judged by it, at
 * once; any other item (a line) must end within MAX_LINE. hiredis 0.14 has read the
 * type byte of an item it started (rstack[ridx].type) and keeps the rest. */
static void check_reader(redis_t *r)
{
    const redisReader *reader = r->ac->c.reader;
    size_t left = reader->len - reader->pos;
    if (reader->err || reader->ridx < 0 || left == 0) return;
    const char *p = reader->buf + reader->pos;
    const char *cr = memchr(p, '\r', left < MAX_LINE ? left : MAX_LINE);
    if (reader->rstack[reader->ridx].type == REDIS_REPLY_STRING && cr) {
        unsigned long long len = 0;
        for (; p < cr && *p >= '0' && *p <= '9' && len <= REDIS_MAX_STRING; p++)
            len = len * 10 + (unsigned long long)(*p - '0');
        if (len > REDIS_MAX_STRING)
            refuse_reply(r, "a string longer than %llu bytes", REDIS_MAX_STRING);
        return;
    }
    if (!cr && left >= MAX_LINE)
        refuse_reply(r, "a line longer than %llu bytes", (unsigned long long)MAX_LINE);
}

/* ---- failing and timeouts ---- */

/* Give up on the connection: hiredis calls every pending callback with NULL (they
 * get r->fail), then the cleanup hook. The connect callback, if still due, last.
 * Only from a loop callback: the callers' callbacks run inside. */
static void fail_now(redis_t *r)
{
    if (r->ac) redisAsyncFree(r->ac);
    r->state = DEAD;
    redis_connect_fn fn = r->connect_fn;
    r->connect_fn = NULL;
    if (fn) {
        r->in_callback++;
        fn(r->connect_arg, &r->fail);
        r->in_callback--;
    }
    update_ref(r);
}

/* A failure recorded but not yet acted on: by a hook of hiredis's (a watch the loop
 * refused), inside a redis_* call, or by redisAsyncConnect itself. */
static int failure_due(const redis_t *r)
{
    return r->fail.code != REDIS_F_NONE && (r->state != DEAD || r->connect_fn);
}

static void arm_timer(redis_t *r);
static void closed_in_callback(redis_t *r);

static void on_timer(loop_t *loop, void *arg)
{
    redis_t *r = arg;
    r->timer = NULL;
    double now = loop_now(loop) + 1e-3; /* a timer may fire a hair before its time */
    char secs[32];
    if (r->state == CONNECTING && r->opts.connect_timeout > 0 && now >= r->connect_deadline) {
        snprintf(secs, sizeof(secs), "%g", r->opts.connect_timeout);
        set_failure(r, REDIS_F_TIMEOUT, "connect timed out after %s s", secs);
    } else if (r->head && r->opts.command_timeout > 0 && now >= r->head->deadline) {
        snprintf(secs, sizeof(secs), "%g", r->opts.command_timeout);
        set_failure(r, REDIS_F_TIMEOUT, "no reply within %s s", secs);
    }
    if (failure_due(r)) fail_now(r);
    if (r->close_asked) {
        closed_in_callback(r);
        return;
    }
    arm_timer(r);
}

/* The one timer is due at the earliest deadline: now for a failure to act on (a
 * timer rather than a deferred call, so that redis_close can take it back), else
 * the connect's while connecting, or the oldest command's (the earliest: they share
 * one timeout). A timer that fires early finds nothing due and is set again; one
 * that would fire late is moved. */
static void arm_timer(redis_t *r)
{
    double now = loop_now(r->loop), at = 0;
    if (failure_due(r)) {
        at = now;
    } else if (r->state != DEAD) {
        if (r->state == CONNECTING && r->opts.connect_timeout > 0) at = r->connect_deadline;
        if (r->head && r->opts.command_timeout > 0 && (at == 0 || r->head->deadline < at))
            at = r->head->deadline;
    }
    if (at == 0) return;
    if (r->timer) {
        if (r->timer_at <= at) return;
        loop_timer_cancel(r->loop, r->timer);
    }
    r->timer = loop_timer_add(r->loop, at > now ? at - now : 0, on_timer, r);
    r->timer_at = at;
    if (!r->timer) /* acted on at the next event of the socket, if any comes */
        set_failure(r, REDIS_F_MEMORY, "%s", "out of memory (no timer for the timeout)");
}

/* After hiredis returned to a loop callback: act on a failure its hooks could only
 * record, then on a close asked for inside a callback, then set the timer. */
static void after_hiredis(redis_t *r)
{
    if (failure_due(r)) fail_now(r);
    if (r->close_asked) {
        closed_in_callback(r);
        return;
    }
    arm_timer(r);
    update_ref(r);
}

/* hiredis writes with write(2): a server gone away means SIGPIPE, which kills a
 * process that did not ignore it (a host program, luajit running the module). Block
 * it around the write and take a SIGPIPE it raised off the pending set, as libraries
 * without MSG_NOSIGNAL do; the process's disposition stays its own. */
static void handle_write(redis_t *r)
{
    if (!r->guard_sigpipe) {
        redisAsyncHandleWrite(r->ac);
        return;
    }
    sigset_t pipe, old, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    redisAsyncHandleWrite(r->ac);
    if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        const struct timespec zero = {0, 0};
        sigtimedwait(&pipe, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_io(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)fd;
    redis_t *r = arg;
    if (r->ac && (events & (LOOP_READ | LOOP_ERROR))) redisAsyncHandleRead(r->ac);
    if (r->ac) check_reader(r);
    if (r->ac && (events & LOOP_WRITE)) handle_write(r);
    after_hiredis(r);
}

/* redisConnectCallback: the first write event came, connected or not. */
static void on_connect(const redisAsyncContext *ac, int status)
{
    redis_t *r = ac->ev.data;
    if (status != REDIS_OK) {
        failure_from_hiredis(r, ac); /* hiredis frees the context after this */
        r->state = DEAD;
    } else {
        r->state = READY;
    }
    redis_connect_fn fn = r->connect_fn;
    r->connect_fn = NULL;
    if (fn) {
        r->in_callback++;
        fn(r->connect_arg, status == REDIS_OK ? NULL : &r->fail);
        r->in_callback--;
    }
}

/* ---- public API ---- */

static int sigpipe_ignored(void)
{
    struct sigaction sa;
    return sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

redis_t *redis_connect(loop_t *loop, const char *addr, int port, const redis_opts_t *opts,
                       redis_connect_fn fn, void *arg)
{
    struct in_addr in;
    if (!addr || inet_pton(AF_INET, addr, &in) != 1 || port <= 0 || port > 65535) {
        /* hiredis 0.14 would look a name up with getaddrinfo, which blocks. */
        errno = EINVAL;
        return NULL;
    }
    redis_t *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->loop = loop;
    r->fd = -1;
    r->state = CONNECTING;
    if (opts) r->opts = *opts;
    r->connect_deadline = loop_now(loop) + r->opts.connect_timeout;
    r->connect_fn = fn;
    r->connect_arg = arg;
    r->guard_sigpipe = !sigpipe_ignored();
    r->ac = redisAsyncConnect(addr, port); /* non-blocking: connect(2) in progress */
    if (!r->ac) {
        free(r);
        errno = ENOMEM;
        return NULL;
    }
    if (r->ac->err) { /* the socket or connect(2) failed: told from the timer */
        failure_from_hiredis(r, r->ac);
        redisAsyncFree(r->ac); /* no hooks set: nothing to clean */
        r->ac = NULL;
        r->state = DEAD;
        arm_timer(r);
        if (!r->timer) {
            free(r);
            errno = ENOMEM;
            return NULL;
        }
        update_ref(r);
        return r;
    }
    r->fd = r->ac->c.fd;
    wrap_reader(r);
    r->ac->ev.data = r;
    r->ac->ev.addRead = ev_add_read;
    r->ac->ev.delRead = ev_del_read;
    r->ac->ev.addWrite = ev_add_write;
    r->ac->ev.delWrite = ev_del_write;
    r->ac->ev.cleanup = ev_cleanup;
    redisAsyncSetConnectCallback(r->ac, on_connect); /* watches for writable */
    arm_timer(r);
    update_ref(r);
    return r;
}

redis_cmd_t *redis_command(redis_t *r, int argc, const char *const *argv, const size_t *lens,
                           redis_reply_fn fn, void *arg)
{
    if (argc < 1 || unpaired_command(argv[0], lens[0])) {
        errno = EINVAL;
        return NULL;
    }
    if (!r->ac || r->fail.code != REDIS_F_NONE) return NULL;
    struct redis_cmd *cmd = calloc(1, sizeof(*cmd));
    if (!cmd) {
        errno = ENOMEM;
        return NULL;
    }
    cmd->r = r;
    cmd->fn = fn;
    cmd->arg = arg;
    cmd->deadline = loop_now(r->loop) + r->opts.command_timeout;
    /* hiredis 0.14 declares argv without the inner const; it does not write to it. */
    if (redisAsyncCommandArgv(r->ac, on_reply, cmd, argc, (const char **)argv, lens) != REDIS_OK) {
        free(cmd);
        errno = ENOMEM; /* the context is not closing (checked above): the format failed */
        return NULL;
    }
    cmd->prev = r->tail;
    if (r->tail)
        r->tail->next = cmd;
    else
        r->head = cmd;
    r->tail = cmd;
    r->npending++;
    if (fn) r->nwaited++;
    arm_timer(r); /* a failure its hook recorded, or this command's deadline */
    update_ref(r);
    return cmd;
}

void redis_cancel(redis_t *r, redis_cmd_t *cmd)
{
    if (!cmd->fn) return;
    cmd->fn = NULL;
    if (cmd->closed) return; /* counted out already; deliver_closed frees it */
    r->nwaited--;
    update_ref(r);
}

int redis_ready(const redis_t *r)
{
    return r->state == READY && r->fail.code == REDIS_F_NONE;
}

const redis_error_t *redis_failure(const redis_t *r)
{
    return r->fail.code != REDIS_F_NONE ? &r->fail : NULL;
}

size_t redis_pending(const redis_t *r)
{
    return r->npending;
}

static void release(redis_t *r)
{
    if (r->timer) loop_timer_cancel(r->loop, r->timer);
    r->timer = NULL;
    r->connect_fn = NULL;
    r->nwaited = 0;
    r->state = DEAD;
    update_ref(r);
    free(r);
}

static void deliver_closed(loop_t *loop, void *arg)
{
    (void)loop;
    redis_t *r = arg;
    struct redis_cmd *cmd = r->closed_head, *next;
    r->closed_head = r->closed_tail = NULL;
    for (; cmd; cmd = next) {
        next = cmd->next;
        if (cmd->fn) cmd->fn(cmd->arg, NULL, &r->fail);
        free(cmd);
    }
    release(r);
}

void redis_close(redis_t *r)
{
    if (!r) return;
    set_failure(r, REDIS_F_CLOSED, "%s", "connection closed");
    if (r->in_callback) { /* hiredis may be on the stack: once it returns */
        r->close_asked = 1;
        return;
    }
    r->connect_fn = NULL;
    r->closing = 1;
    if (r->ac) redisAsyncFree(r->ac); /* the pending callbacks land in r->closed_head */
    if (r->closed_head && loop_defer(r->loop, deliver_closed, r) == 0) return;
    /* Nothing to tell, or no memory to defer it: tell now rather than never. */
    deliver_closed(r->loop, r);
}

static void closed_in_callback(redis_t *r)
{
    r->close_asked = 0;
    redis_close(r);
}

void redis_free(redis_t *r)
{
    if (!r) return;
    set_failure(r, REDIS_F_CLOSED, "%s", "connection closed");
    r->connect_fn = NULL;
    if (r->ac) redisAsyncFree(r->ac);
    release(r);
}

/* ---- replies: hiredis's redisReply behind our opaque type ---- */

static const redisReply *rep(const redis_reply_t *reply)
{
    return (const redisReply *)(const void *)reply;
}

enum redis_type redis_reply_type(const redis_reply_t *reply)
{
    switch (rep(reply)->type) {
    case REDIS_REPLY_STRING:
        return REDIS_T_STRING;
    case REDIS_REPLY_STATUS:
        return REDIS_T_STATUS;
    case REDIS_REPLY_INTEGER:
        return REDIS_T_INTEGER;
    case REDIS_REPLY_ARRAY:
        return REDIS_T_ARRAY;
    case REDIS_REPLY_ERROR:
        return REDIS_T_ERROR;
    default:
        return REDIS_T_NIL;
    }
}

const char *redis_reply_string(const redis_reply_t *reply, size_t *len)
{
    const redisReply *r = rep(reply);
    *len = r->str ? r->len : 0;
    return r->str ? r->str : "";
}

long long redis_reply_integer(const redis_reply_t *reply)
{
    return rep(reply)->integer;
}

size_t redis_reply_count(const redis_reply_t *reply)
{
    const redisReply *r = rep(reply);
    return r->type == REDIS_REPLY_ARRAY ? r->elements : 0;
}

const redis_reply_t *redis_reply_element(const redis_reply_t *reply, size_t i)
{
    return (const redis_reply_t *)(const void *)rep(reply)->element[i];
}
