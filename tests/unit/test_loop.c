/* Unit tests of engine/loop.c: timer order, cancellation, deferred calls, fds, and
 * what the last wait saw (loop_fd_quiet), with the answers to curl's probes built
 * on it (engine/http_probe.c). */
#include "http_probe.h"
#include "loop.h"
#include "test.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char order[64];
static int norder;

static void record(loop_t *loop, void *arg)
{
    (void)loop;
    order[norder++] = *(const char *)arg;
    order[norder] = '\0';
}

static void timers_fire_in_deadline_order(void)
{
    loop_t *loop = loop_new();
    norder = 0;
    /* 100 ms apart: a loaded machine (valgrind beside other jobs) may stall
     * between two adds for longer than a few milliseconds. */
    loop_timer_add(loop, 0.300, record, "c");
    loop_timer_add(loop, 0.100, record, "a");
    loop_timer_add(loop, 0.200, record, "b");
    loop_ref(loop);
    while (norder < 3)
        loop_run_once(loop, 1);
    CHECK(strcmp(order, "abc") == 0);
    loop_free(loop);
}

static void equal_deadlines_fire_in_insertion_order(void)
{
    loop_t *loop = loop_new();
    norder = 0;
    static const char *letters = "abcdefgh";
    for (int i = 0; i < 8; i++)
        loop_timer_add(loop, 0, record, (void *)(letters + i));
    loop_ref(loop);
    while (norder < 8)
        loop_run_once(loop, 1);
    CHECK(strcmp(order, "abcdefgh") == 0);
    loop_free(loop);
}

static void cancelled_timers_never_fire(void)
{
    loop_t *loop = loop_new();
    norder = 0;
    loop_timer_t *t1 = loop_timer_add(loop, 0.05, record, "x");
    loop_timer_add(loop, 0.10, record, "a");
    loop_timer_t *t3 = loop_timer_add(loop, 0.15, record, "y");
    loop_timer_add(loop, 0.20, record, "b");
    loop_timer_cancel(loop, t1);
    loop_timer_cancel(loop, t3);
    loop_ref(loop);
    while (norder < 2)
        loop_run_once(loop, 1);
    double until = loop_time() + 0.1;
    while (loop_time() < until)
        loop_run_once(loop, 0);
    CHECK(strcmp(order, "ab") == 0);
    loop_free(loop);
}

static int fire_count, fire_out_of_order;
static double fire_last_lo;

/* A timer's absolute deadline lies between the clock read before its add and the
 * one after (plus its delay): order is broken only when a timer fires whose latest
 * possible deadline is before the earliest possible deadline of one fired earlier.
 * So a slow machine (valgrind, a loaded CI) cannot fail the test by taking longer
 * than the gap between two deadlines to add them. */
struct deadline {
    double lo, hi;
};

static void fire_in_order(loop_t *loop, void *arg)
{
    (void)loop;
    const struct deadline *d = arg;
    if (d->hi < fire_last_lo) fire_out_of_order++;
    if (d->lo > fire_last_lo) fire_last_lo = d->lo;
    fire_count++;
}

static void many_timers_stay_ordered(void)
{
    loop_t *loop = loop_new();
    /* Deadlines 2 ms apart, added in a scrambled order. */
    static struct deadline when[200];
    fire_count = fire_out_of_order = 0;
    fire_last_lo = -1;
    loop_timer_t *cancel[40];
    for (int i = 0; i < 200; i++) {
        double delay = ((i * 7919) % 200) * 0.002;
        when[i].lo = loop_time() + delay;
        loop_timer_t *t = loop_timer_add(loop, delay, fire_in_order, &when[i]);
        when[i].hi = loop_time() + delay;
        if (i % 5 == 0) cancel[i / 5] = t;
    }
    for (int i = 0; i < 40; i++)
        loop_timer_cancel(loop, cancel[i]);
    loop_ref(loop);
    while (fire_count < 160)
        loop_run_once(loop, 1);
    CHECK(fire_out_of_order == 0);
    loop_free(loop);
}

static void deferred_calls_run_in_order_on_the_next_turn(void)
{
    loop_t *loop = loop_new();
    norder = 0;
    loop_defer(loop, record, "1");
    loop_defer(loop, record, "2");
    CHECK(norder == 0);
    CHECK(loop_run_once(loop, 1) == 0); /* nothing left after they ran */
    CHECK(strcmp(order, "12") == 0);
    loop_free(loop);
}

static void unreferenced_loop_ends(void)
{
    loop_t *loop = loop_new();
    norder = 0;
    loop_timer_add(loop, 10, record, "z"); /* a timer alone keeps nothing alive */
    double start = loop_time();
    loop_run(loop);
    CHECK(loop_time() - start < 1);
    CHECK(norder == 0);
    loop_free(loop);
}

static void on_readable(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    char buf[8];
    if (events & LOOP_READ) *(ssize_t *)arg = read(fd, buf, sizeof(buf));
}

static void fd_watchers_report_readable(void)
{
    loop_t *loop = loop_new();
    int p[2];
    CHECK(pipe(p) == 0);
    ssize_t got = 0;
    CHECK(loop_watch(loop, p[0], LOOP_READ, on_readable, &got) == 0);
    CHECK(write(p[1], "hi", 2) == 2);
    loop_ref(loop);
    for (int i = 0; i < 10 && got == 0; i++)
        loop_run_once(loop, 1);
    CHECK(got == 2);
    CHECK(loop_watch(loop, p[0], 0, NULL, NULL) == 0);
    close(p[0]);
    close(p[1]);
    loop_free(loop);
}

/* Run the loop a few turns without blocking. */
static void spin(loop_t *loop, int turns)
{
    for (int i = 0; i < turns; i++)
        loop_run_once(loop, 0);
}

/* A referenced loop watching the read end of a new pipe p with on_readable(got). */
static loop_t *loop_watching_pipe(int p[2], ssize_t *got)
{
    loop_t *loop = loop_new();
    loop_ref(loop);
    CHECK(pipe(p) == 0);
    *got = 0;
    CHECK(loop_watch(loop, p[0], LOOP_READ, on_readable, got) == 0);
    return loop;
}

static void parked_fds_report_nothing_and_watch_again(void)
{
    int p[2];
    ssize_t got;
    loop_t *loop = loop_watching_pipe(p, &got);
    CHECK(loop_park(loop, p[0]) == 0);
    CHECK(write(p[1], "x", 1) == 1);
    spin(loop, 3); /* an event on a parked fd unregisters it, and reaches no one */
    CHECK(got == 0);
    CHECK(loop_watch(loop, p[0], LOOP_READ, on_readable, &got) == 0);
    spin(loop, 3);
    CHECK(got == 1);
    /* Parked with nothing pending, then watched again for the same events. */
    got = 0;
    CHECK(loop_park(loop, p[0]) == 0);
    CHECK(loop_watch(loop, p[0], LOOP_READ, on_readable, &got) == 0);
    CHECK(write(p[1], "yz", 2) == 2);
    spin(loop, 3);
    CHECK(got == 2);
    CHECK(loop_watch(loop, p[0], 0, NULL, NULL) == 0);
    close(p[0]);
    close(p[1]);
    loop_free(loop);
}

static void a_forgotten_fd_number_reused_is_registered_anew(void)
{
    loop_t *loop = loop_new();
    loop_ref(loop);
    int p[2], q[2];
    CHECK(pipe(p) == 0);
    ssize_t got = 0;
    CHECK(loop_watch(loop, p[0], LOOP_READ, on_readable, &got) == 0);
    CHECK(loop_park(loop, p[0]) == 0);
    int fd = p[0];
    loop_forget(loop, fd);
    close(p[0]);
    close(p[1]);
    CHECK(pipe(q) == 0); /* the lowest free numbers: most likely the same */
    int reused = q[0] == fd;
    CHECK(loop_watch(loop, q[0], LOOP_READ, on_readable, &got) == 0);
    CHECK(write(q[1], "abc", 3) == 3);
    spin(loop, 3);
    CHECK(got == 3);
    if (!reused) printf("  (fd number not reused: the case was not exercised)\n");
    CHECK(loop_watch(loop, q[0], 0, NULL, NULL) == 0);
    close(q[0]);
    close(q[1]);
    loop_free(loop);
}

/* Whether lc_probe_answer answers a zero-timeout probe of fd for events (1:
 * "nothing ready", without asking the kernel). */
static int answered(int fd, short events)
{
    struct pollfd pfd = {.fd = fd, .events = events, .revents = POLLIN};
    int r = lc_probe_answer(&pfd, 1);
    if (r) CHECK(pfd.revents == 0);
    return r;
}

static void probes_are_answered_only_for_what_the_last_wait_saw(void)
{
    int p[2];
    ssize_t got;
    loop_t *loop = loop_watching_pipe(p, &got);
    lc_probe_vouch(loop, 1);
    CHECK(!answered(p[0], POLLIN)); /* registered after the last wait: unknown */
    spin(loop, 1);
    CHECK(answered(p[0], POLLIN | POLLPRI)); /* the wait saw nothing */
    CHECK(!answered(p[0], POLLOUT));         /* not watched for writing */
    CHECK(!answered(p[1], POLLOUT));         /* not watched at all */
    struct pollfd two[2] = {{.fd = -1, .events = POLLIN}, {.fd = p[0], .events = POLLIN}};
    CHECK(lc_probe_answer(two, 2)); /* poll() skips a negative fd */
    lc_probe_vouch(loop, 0);
    CHECK(!answered(p[0], POLLIN)); /* nobody vouches */
    lc_probe_vouch(loop, 1);
    /* What arrives after the wait is the next wait's to report: until then the
     * answer is the last wait's, as if the probe had come a moment earlier. */
    CHECK(write(p[1], "ab", 2) == 2);
    CHECK(answered(p[0], POLLIN));
    lc_probe_vouch(loop, 0);
    spin(loop, 1); /* reported and handed to the callback, which read it */
    CHECK(got == 2);
    lc_probe_vouch(loop, 1);
    CHECK(answered(p[0], POLLIN));
    /* Parked, then closed by the peer: the wait reports it, the loop unregisters
     * it, and from then only the kernel can answer. */
    CHECK(loop_park(loop, p[0]) == 0);
    CHECK(answered(p[0], POLLIN));
    close(p[1]);
    spin(loop, 1);
    CHECK(!answered(p[0], POLLIN));
    lc_probe_vouch(loop, 0);
    loop_forget(loop, p[0]);
    close(p[0]);
    loop_free(loop);
}

/* Two fds ready in one wait: while the first one's callback runs, the second has
 * been reported but not handed over, so a probe of it goes to the kernel. */
struct pair {
    int fds[2], calls, probed_other;
};

static void on_pair(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)events;
    struct pair *pr = arg;
    char c;
    if (read(fd, &c, 1) != 1) CHECK(0);
    if (pr->calls++ == 0)
        pr->probed_other = answered(fd == pr->fds[0] ? pr->fds[1] : pr->fds[0], POLLIN);
}

static void a_reported_fd_is_not_answered_before_its_callback(void)
{
    loop_t *loop = loop_new();
    loop_ref(loop);
    int a[2], b[2];
    CHECK(pipe(a) == 0 && pipe(b) == 0);
    struct pair pr = {{a[0], b[0]}, 0, -1};
    CHECK(loop_watch(loop, a[0], LOOP_READ, on_pair, &pr) == 0);
    CHECK(loop_watch(loop, b[0], LOOP_READ, on_pair, &pr) == 0);
    spin(loop, 1);
    CHECK(write(a[1], "x", 1) == 1 && write(b[1], "y", 1) == 1);
    lc_probe_vouch(loop, 1);
    spin(loop, 1);
    CHECK(pr.calls == 2);
    CHECK(pr.probed_other == 0);
    CHECK(answered(a[0], POLLIN) && answered(b[0], POLLIN)); /* both handed over */
    lc_probe_vouch(loop, 0);
    CHECK(loop_watch(loop, a[0], 0, NULL, NULL) == 0 && loop_watch(loop, b[0], 0, NULL, NULL) == 0);
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
    loop_free(loop);
}

/* Whether the kernel says fd has something to read now. */
static int readable(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLHUP));
}

static void on_one_byte(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)events;
    char c;
    if (read(fd, &c, 1) == 1) (*(int *)arg)++;
}

/* More ready fds than one wait reports (MAX_EVENTS, 256, in loop.c): the fds the
 * full batch left out are still readable, so until a wait that was not full the
 * loop must not call any fd quiet. */
#define NPIPES 300
static void a_full_batch_leaves_every_fd_to_the_kernel(void)
{
    loop_t *loop = loop_new();
    loop_ref(loop);
    static int p[NPIPES][2];
    int got = 0, opened = 0;
    for (; opened < NPIPES; opened++) {
        if (pipe(p[opened]) != 0) break;
        CHECK(loop_watch(loop, p[opened][0], LOOP_READ, on_one_byte, &got) == 0);
    }
    CHECK(opened == NPIPES);
    spin(loop, 1); /* registered before this wait: the next ones have looked */
    for (int i = 0; i < opened; i++)
        CHECK(write(p[i][1], "x", 1) == 1);
    spin(loop, 1);
    CHECK(got > 0 && got < opened); /* one full batch, handed over */
    int wrong = 0, quiet = 0;
    for (int i = 0; i < opened; i++) {
        int q = loop_fd_quiet(loop, p[i][0], LOOP_READ);
        quiet += q;
        if (q && readable(p[i][0])) wrong++;
    }
    CHECK(wrong == 0);
    CHECK(quiet == 0);
    lc_probe_vouch(loop, 1);
    CHECK(!answered(p[opened - 1][0], POLLIN) || !readable(p[opened - 1][0]));
    lc_probe_vouch(loop, 0);
    spin(loop, 1); /* the rest: a wait that was not full */
    CHECK(got == opened);
    quiet = 0;
    for (int i = 0; i < opened; i++)
        quiet += loop_fd_quiet(loop, p[i][0], LOOP_READ) && !readable(p[i][0]);
    CHECK(quiet == opened); /* every report handed over: quiet again */
    for (int i = 0; i < opened; i++) {
        CHECK(loop_watch(loop, p[i][0], 0, NULL, NULL) == 0);
        close(p[i][0]);
        close(p[i][1]);
    }
    loop_free(loop);
}

/* The peer closed its end: the callback has had the report and read the last
 * bytes, but the end of the stream stays readable, and the loop says so. */
static void a_hangup_is_never_quiet(void)
{
    loop_t *loop = loop_new();
    loop_ref(loop);
    int sv[2], got = 0;
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(loop_watch(loop, sv[0], LOOP_READ, on_one_byte, &got) == 0);
    spin(loop, 1);
    CHECK(loop_fd_quiet(loop, sv[0], LOOP_READ));
    CHECK(write(sv[1], "x", 1) == 1);
    CHECK(shutdown(sv[1], SHUT_WR) == 0);
    spin(loop, 1);
    CHECK(got == 1);
    CHECK(readable(sv[0]));
    CHECK(!loop_fd_quiet(loop, sv[0], LOOP_READ));
    CHECK(loop_watch(loop, sv[0], 0, NULL, NULL) == 0);
    close(sv[0]);
    close(sv[1]);
    loop_free(loop);
}

/* A connected TCP pair on loopback: *a the connecting end, *b the accepted one. */
static int tcp_pair(int *a, int *b)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0) return -1;
    if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&sa, &len))
        goto fail;
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof(sa))) goto fail;
    *b = accept(l, NULL, NULL);
    if (*b < 0) goto fail;
    close(l);
    return 0;
fail:
    close(l);
    return -1;
}

/* Urgent (out-of-band) TCP data makes poll() say POLLPRI, which curl asks about
 * with every read probe: from then on the loop leaves that socket to the kernel. */
static void urgent_data_is_left_to_the_kernel(void)
{
    int a = -1, b = -1, got = 0;
    if (tcp_pair(&a, &b) < 0) {
        printf("  (no loopback TCP: the case was not exercised)\n");
        return;
    }
    loop_t *loop = loop_new();
    loop_ref(loop);
    CHECK(loop_watch(loop, b, LOOP_READ, on_one_byte, &got) == 0);
    spin(loop, 1);
    CHECK(loop_fd_quiet(loop, b, LOOP_READ));
    CHECK(send(a, "u", 1, MSG_OOB) == 1);
    struct pollfd pfd = {.fd = b, .events = POLLPRI};
    CHECK(poll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLPRI));
    spin(loop, 2);
    CHECK(!loop_fd_quiet(loop, b, LOOP_READ));
    lc_probe_vouch(loop, 1);
    CHECK(!answered(b, POLLIN | POLLPRI));
    lc_probe_vouch(loop, 0);
    CHECK(loop_watch(loop, b, 0, NULL, NULL) == 0);
    close(a);
    close(b);
    loop_free(loop);
}

static void set_flag(loop_t *loop, void *arg)
{
    (void)loop;
    *(int *)arg = 1;
}

/* A wait that fails for another reason than a signal (here: its epoll fd closed
 * under it) stops the run with the wait's errno at once, rather than spinning
 * until a timer happens to end it. */
static void a_failed_wait_stops_the_run_with_its_error(void)
{
    int next_fd = dup(0); /* the number the loop's epoll fd will take */
    CHECK(next_fd >= 0);
    close(next_fd);
    loop_t *loop = loop_new();
    int fired = 0;
    loop_ref(loop);
    loop_timer_add(loop, 0.2, set_flag, &fired);
    CHECK(close(next_fd) == 0);
    double start = loop_time();
    CHECK(loop_run(loop) == EBADF);
    CHECK(!fired);
    CHECK(loop_time() - start < 0.1);
    CHECK(loop_run_once(loop, 0) == -1 && errno == EBADF);
    loop_free(loop); /* closes the number again: EBADF, harmless */
}

int main(void)
{
    RUN(timers_fire_in_deadline_order);
    RUN(equal_deadlines_fire_in_insertion_order);
    RUN(cancelled_timers_never_fire);
    RUN(many_timers_stay_ordered);
    RUN(deferred_calls_run_in_order_on_the_next_turn);
    RUN(unreferenced_loop_ends);
    RUN(fd_watchers_report_readable);
    RUN(parked_fds_report_nothing_and_watch_again);
    RUN(a_forgotten_fd_number_reused_is_registered_anew);
    RUN(probes_are_answered_only_for_what_the_last_wait_saw);
    RUN(a_reported_fd_is_not_answered_before_its_callback);
    RUN(a_full_batch_leaves_every_fd_to_the_kernel);
    RUN(a_hangup_is_never_quiet);
    RUN(urgent_data_is_left_to_the_kernel);
    RUN(a_failed_wait_stops_the_run_with_its_error);
    printf("%s\n", test_failures ? "FAILED" : "all passed");
    return test_failures ? 1 : 0;
}
