/* Unit tests of engine/redis.c: hiredis's async API on the loop, against the
 * redis-server that tests/fixtures/run.py --redis starts (LC_REDIS_PORT), and
 * against fake servers on loopback sockets of this process (a server that never
 * answers, one that hangs up, a full listen backlog) for the failures. The process
 * does not ignore SIGPIPE: a write to a connection the peer reset must not kill it. */
#include "redis.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static loop_t *loop;
static int redis_port;

struct result {
    int done;
    enum redis_type type;
    enum redis_fail fail;
    long long integer;
    char str[256];
    size_t len;
    size_t count;
    char msg[256];
};

static void on_reply(void *arg, const redis_reply_t *reply, const redis_error_t *err)
{
    struct result *res = arg;
    res->done++;
    if (err) {
        res->fail = err->code;
        snprintf(res->msg, sizeof(res->msg), "%s", err->message);
        return;
    }
    res->type = redis_reply_type(reply);
    if (res->type == REDIS_T_INTEGER) res->integer = redis_reply_integer(reply);
    if (res->type == REDIS_T_STRING || res->type == REDIS_T_STATUS || res->type == REDIS_T_ERROR) {
        const char *s = redis_reply_string(reply, &res->len);
        memcpy(res->str, s, res->len < sizeof(res->str) ? res->len : sizeof(res->str) - 1);
    }
    if (res->type == REDIS_T_ARRAY) res->count = redis_reply_count(reply);
}

static void on_connect(void *arg, const redis_error_t *err)
{
    struct result *res = arg;
    res->done++;
    if (err) {
        res->fail = err->code;
        snprintf(res->msg, sizeof(res->msg), "%s", err->message);
    }
}

static int all_done(const struct result *r, int n)
{
    int done = 1;
    for (int i = 0; i < n; i++)
        done &= r[i].done > 0;
    return done;
}

static void wait_done(struct result *r, int n)
{
    while (!all_done(r, n)) {
        if (loop_run_once(loop, 1) <= 0 && !all_done(r, n)) {
            /* Nothing holds the loop: nothing left that could answer. */
            CHECK(!"the loop ran out of work before every result came");
            return;
        }
    }
}

static redis_t *connect_to(int port, double timeout, struct result *res)
{
    redis_opts_t opts = {.connect_timeout = timeout, .command_timeout = timeout};
    memset(res, 0, sizeof(*res));
    redis_t *r = redis_connect(loop, "127.0.0.1", port, &opts, on_connect, res);
    CHECK(r != NULL);
    CHECK(res->done == 0); /* never inside redis_connect */
    return r;
}

/* Send argv (strings; lens from strlen unless given) with res as the result. */
static redis_cmd_t *send_cmd(redis_t *r, struct result *res, int argc, const char **argv,
                             const size_t *lens)
{
    size_t l[16];
    for (int i = 0; i < argc; i++)
        l[i] = lens ? lens[i] : strlen(argv[i]);
    memset(res, 0, sizeof(*res));
    redis_cmd_t *cmd = redis_command(r, argc, argv, l, on_reply, res);
    CHECK(res->done == 0); /* never inside redis_command */
    return cmd;
}

static redis_t *connect_real(void)
{
    struct result c;
    redis_t *r = connect_to(redis_port, 5, &c);
    wait_done(&c, 1);
    CHECK(c.fail == REDIS_F_NONE);
    CHECK(redis_ready(r));
    return r;
}

static void replies_of_each_type(void)
{
    redis_t *r = connect_real();
    struct result res[7];
    const char bin[] = "a\0b\r\nc";
    const char *set[] = {"SET", "unit:bin", bin};
    size_t setl[] = {3, 8, sizeof(bin) - 1};
    send_cmd(r, &res[0], 3, set, setl);
    send_cmd(r, &res[1], 2, (const char *[]){"GET", "unit:bin"}, NULL);
    send_cmd(r, &res[2], 2, (const char *[]){"INCR", "unit:n"}, NULL);
    send_cmd(r, &res[3], 2, (const char *[]){"GET", "unit:missing"}, NULL);
    send_cmd(r, &res[4], 4, (const char *[]){"LRANGE", "unit:missing", "0", "-1"}, NULL);
    send_cmd(r, &res[5], 1, (const char *[]){"NOSUCHCOMMAND"}, NULL);
    send_cmd(r, &res[6], 3, (const char *[]){"DEL", "unit:bin", "unit:n"}, NULL);
    CHECK(redis_pending(r) == 7);
    wait_done(res, 7);
    CHECK(res[0].type == REDIS_T_STATUS && strcmp(res[0].str, "OK") == 0);
    CHECK(res[1].type == REDIS_T_STRING && res[1].len == sizeof(bin) - 1);
    CHECK(memcmp(res[1].str, bin, sizeof(bin) - 1) == 0);
    CHECK(res[2].type == REDIS_T_INTEGER && res[2].integer == 1);
    CHECK(res[3].type == REDIS_T_NIL);
    CHECK(res[4].type == REDIS_T_ARRAY && res[4].count == 0);
    CHECK(res[5].type == REDIS_T_ERROR && strncmp(res[5].str, "ERR unknown command", 19) == 0);
    CHECK(res[6].type == REDIS_T_INTEGER && res[6].integer == 2);
    CHECK(redis_pending(r) == 0);
    CHECK(redis_ready(r)); /* an error reply leaves the connection as it was */
    redis_close(r);
}

static void pipeline_replies_in_order(void)
{
    redis_t *r = connect_real();
    enum { N = 1000 };
    static struct result res[N];
    for (int i = 0; i < N; i++)
        send_cmd(r, &res[i], 2, (const char *[]){"INCR", "unit:pipe"}, NULL);
    wait_done(res, N);
    int in_order = 1;
    for (int i = 0; i < N; i++)
        in_order &= res[i].type == REDIS_T_INTEGER && res[i].integer == i + 1;
    CHECK(in_order);
    struct result del;
    send_cmd(r, &del, 2, (const char *[]){"DEL", "unit:pipe"}, NULL);
    wait_done(&del, 1);
    redis_close(r);
}

static void a_cancelled_command_is_never_answered(void)
{
    redis_t *r = connect_real();
    struct result a, b, c;
    redis_cmd_t *cmd = send_cmd(r, &a, 1, (const char *[]){"PING"}, NULL);
    send_cmd(r, &b, 2, (const char *[]){"ECHO", "after"}, NULL);
    redis_cancel(r, cmd);
    wait_done(&b, 1);
    CHECK(a.done == 0);
    CHECK(b.type == REDIS_T_STRING && strcmp(b.str, "after") == 0);
    CHECK(redis_pending(r) == 0);
    send_cmd(r, &c, 1, (const char *[]){"PING"}, NULL);
    wait_done(&c, 1);
    CHECK(c.type == REDIS_T_STATUS && strcmp(c.str, "PONG") == 0);
    redis_close(r);
    /* Nothing waits: the loop has nothing left. */
    CHECK(loop_refs(loop) == 0);
}

static void unpaired_commands_are_refused(void)
{
    redis_t *r = connect_real();
    struct result res;
    errno = 0;
    CHECK(send_cmd(r, &res, 2, (const char *[]){"subscribe", "ch"}, NULL) == NULL);
    CHECK(errno == EINVAL);
    CHECK(send_cmd(r, &res, 1, (const char *[]){"MONITOR"}, NULL) == NULL);
    CHECK(redis_failure(r) == NULL);
    redis_close(r);
}

static void close_tells_pending_commands_later(void)
{
    redis_t *r = connect_real();
    struct result a, b;
    send_cmd(r, &a, 3, (const char *[]){"BLPOP", "unit:never", "5"}, NULL);
    send_cmd(r, &b, 1, (const char *[]){"PING"}, NULL);
    loop_run_once(loop, 0); /* written */
    redis_close(r);
    CHECK(a.done == 0 && b.done == 0); /* not inside redis_close */
    wait_done(&a, 1);
    wait_done(&b, 1);
    CHECK(a.fail == REDIS_F_CLOSED && b.fail == REDIS_F_CLOSED);
    CHECK(a.done == 1 && b.done == 1);
}

static redis_t *closing_from_callback;
static void close_then_count(void *arg, const redis_reply_t *reply, const redis_error_t *err)
{
    on_reply(arg, reply, err);
    redis_close(closing_from_callback);
}

static void close_inside_a_callback(void)
{
    redis_t *r = connect_real();
    struct result a, b;
    memset(&a, 0, sizeof(a));
    closing_from_callback = r;
    size_t l1[] = {4};
    CHECK(redis_command(r, 1, (const char *[]){"PING"}, l1, close_then_count, &a) != NULL);
    send_cmd(r, &b, 1, (const char *[]){"PING"}, NULL);
    wait_done(&a, 1);
    wait_done(&b, 1);
    CHECK(a.type == REDIS_T_STATUS);
    /* b's reply was in the same read, or not: either it came or it was closed. */
    CHECK(b.done == 1 && (b.type == REDIS_T_STATUS || b.fail == REDIS_F_CLOSED));
    while (loop_run_once(loop, 0) > 0) {
    }
}

/* ---- fake servers ---- */

static int listen_socket(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    CHECK(listen(fd, backlog) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void connection_refused(void)
{
    int port;
    close(listen_socket(1, &port)); /* a port nobody listens on */
    struct result c, cmd;
    redis_t *r = connect_to(port, 5, &c);
    send_cmd(r, &cmd, 1, (const char *[]){"PING"}, NULL); /* queued before the connect */
    wait_done(&c, 1);
    wait_done(&cmd, 1);
    CHECK(c.fail == REDIS_F_CONNECT && strstr(c.msg, "refused") != NULL);
    CHECK(cmd.fail == REDIS_F_CONNECT);
    CHECK(!redis_ready(r));
    CHECK(redis_failure(r) && redis_failure(r)->code == REDIS_F_CONNECT);
    struct result later;
    CHECK(send_cmd(r, &later, 1, (const char *[]){"PING"}, NULL) == NULL);
    redis_close(r);
    CHECK(loop_refs(loop) == 0);
}

static void a_server_that_never_answers_times_out(void)
{
    int port, lfd = listen_socket(8, &port); /* the kernel accepts; nobody reads */
    struct result c, a, b;
    redis_t *r = connect_to(port, 0.3, &c);
    wait_done(&c, 1);
    CHECK(c.fail == REDIS_F_NONE);
    double start = loop_time();
    send_cmd(r, &a, 1, (const char *[]){"PING"}, NULL);
    send_cmd(r, &b, 1, (const char *[]){"PING"}, NULL);
    wait_done(&a, 1);
    wait_done(&b, 1);
    double took = loop_time() - start;
    CHECK(a.fail == REDIS_F_TIMEOUT && b.fail == REDIS_F_TIMEOUT);
    CHECK(strstr(a.msg, "0.3") != NULL);
    CHECK(took >= 0.25 && took < 2);
    redis_close(r);
    close(lfd);
}

static void a_connect_that_hangs_times_out(void)
{
    /* A full listen backlog: Linux drops the SYNs of further connects, which then
     * wait for retransmissions. */
    int port, lfd = listen_socket(0, &port);
    int fillers[4];
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < 4; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fillers[i], (struct sockaddr *)&sa, sizeof(sa));
    }
    struct result c;
    double start = loop_time();
    redis_t *r = connect_to(port, 0.3, &c);
    wait_done(&c, 1);
    double took = loop_time() - start;
    CHECK(c.fail == REDIS_F_TIMEOUT);
    CHECK(strstr(c.msg, "connect timed out") != NULL);
    CHECK(took >= 0.25 && took < 2);
    redis_close(r);
    for (int i = 0; i < 4; i++)
        close(fillers[i]);
    close(lfd);
}

/* A server that accepts one connection and resets it (SO_LINGER 0) as soon as the
 * client has sent something, leaving it unread. */
static void reset_on_data(loop_t *l, int fd, int events, void *arg)
{
    (void)events;
    (void)arg;
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    loop_watch(l, fd, 0, NULL, NULL);
    close(fd);
}

static void accept_one(loop_t *l, int fd, int events, void *arg)
{
    (void)events;
    (void)arg;
    int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return;
    loop_watch(l, fd, 0, NULL, NULL);
    CHECK(loop_watch(l, c, LOOP_READ, reset_on_data, NULL) == 0);
}

static void a_lost_connection_fails_pending_and_later_commands(void)
{
    int port, lfd = listen_socket(8, &port);
    CHECK(loop_watch(loop, lfd, LOOP_READ, accept_one, NULL) == 0);
    struct result c, a;
    redis_t *r = connect_to(port, 5, &c);
    wait_done(&c, 1);
    send_cmd(r, &a, 1, (const char *[]){"PING"}, NULL);
    wait_done(&a, 1);
    CHECK(a.fail == REDIS_F_CONNECT && strstr(a.msg, "connection lost") != NULL);
    /* Writes to the reset socket until it fails: EPIPE, and SIGPIPE blocked. */
    static char big[1 << 16];
    memset(big, 'x', sizeof(big));
    struct result later;
    redis_cmd_t *cmd =
        send_cmd(r, &later, 3, (const char *[]){"SET", "k", big}, (size_t[]){3, 1, sizeof(big)});
    CHECK(cmd == NULL);
    CHECK(redis_failure(r) && redis_failure(r)->code == REDIS_F_CONNECT);
    redis_close(r);
    close(lfd);
}

/* Reset with the client's commands still unread, while the client writes. */
static void a_reset_while_writing_fails_every_command(void)
{
    int port, lfd = listen_socket(8, &port);
    CHECK(loop_watch(loop, lfd, LOOP_READ, accept_one, NULL) == 0);
    struct result c;
    redis_t *r = connect_to(port, 5, &c);
    wait_done(&c, 1);
    static char big[1 << 20];
    memset(big, 'y', sizeof(big));
    enum { N = 16 };
    struct result res[N];
    for (int i = 0; i < N; i++)
        send_cmd(r, &res[i], 3, (const char *[]){"SET", "k", big}, (size_t[]){3, 1, sizeof(big)});
    wait_done(res, N);
    int all_failed = 1;
    for (int i = 0; i < N; i++)
        all_failed &= res[i].fail == REDIS_F_CONNECT;
    CHECK(all_failed);
    redis_close(r);
    close(lfd);
}

/* A write that fails with EPIPE raises SIGPIPE, which this process does not ignore:
 * the connection fails, the process lives. The client's socket (the lowest free
 * descriptor before the connect, checked by its peer's port) is shut for writing
 * under hiredis's feet; its peer, a listen backlog nobody accepts from, never
 * answers, so the write is what fails. */
static void a_write_that_raises_sigpipe_leaves_the_process_alive(void)
{
    int port, lfd = listen_socket(8, &port);
    int fd = dup(0);
    close(fd);
    struct result c, a;
    redis_t *r = connect_to(port, 5, &c);
    wait_done(&c, 1);
    CHECK(c.fail == REDIS_F_NONE);
    struct sockaddr_in peer;
    socklen_t len = sizeof(peer);
    CHECK(getpeername(fd, (struct sockaddr *)&peer, &len) == 0);
    CHECK(ntohs(peer.sin_port) == port);
    CHECK(shutdown(fd, SHUT_WR) == 0);
    send_cmd(r, &a, 1, (const char *[]){"PING"}, NULL);
    wait_done(&a, 1);
    CHECK(a.fail == REDIS_F_CONNECT && strstr(a.msg, "Broken pipe") != NULL);
    sigset_t pending;
    CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE));
    redis_close(r);
    close(lfd);
}

int main(void)
{
    const char *port = getenv("LC_REDIS_PORT");
    if (!port) {
        fprintf(stderr, "test_redis: LC_REDIS_PORT not set (run under tests/fixtures/run.py "
                        "--redis)\n");
        return 1;
    }
    redis_port = atoi(port);
    loop = loop_new();
    RUN(replies_of_each_type);
    RUN(pipeline_replies_in_order);
    RUN(a_cancelled_command_is_never_answered);
    RUN(unpaired_commands_are_refused);
    RUN(close_tells_pending_commands_later);
    RUN(close_inside_a_callback);
    RUN(connection_refused);
    RUN(a_server_that_never_answers_times_out);
    RUN(a_connect_that_hangs_times_out);
    RUN(a_lost_connection_fails_pending_and_later_commands);
    RUN(a_reset_while_writing_fails_every_command);
    RUN(a_write_that_raises_sigpipe_leaves_the_process_alive);
    /* Every close delivered and freed: nothing left on the loop. */
    while (loop_run_once(loop, 0) > 0) {
    }
    CHECK(loop_refs(loop) == 0);
    loop_free(loop);
    return test_failures ? 1 : 0;
}
