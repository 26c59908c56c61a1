/* lc_engine_stop from another thread than the engine's, and from a signal handler
 * there: the engine's thread, blocked in the host's poll() of lc_engine_fd or inside
 * lc_engine_run_file, wakes and the crawl stops at once, with the stop's status and
 * every item recorded before it delivered. The crawls are of the fixture HTTP
 * server's site (tests/fixtures/run.py --http: LC_FIXTURE_PORT). The slow one waits
 * 30 s between two pages (a per-host delay) after the first, with no other timer
 * due: a stop that did not wake the wait would be seen 30 s late. Only the
 * embedding API of luacrawl.h is used. */
#include "luacrawl.h"
#include "test.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A crawl of the site; the %s are the output's path ("" for none), the fixture's
 * port and more of the spec. The script tells the host its stats (lc.host.done). */
static const char CRAWL[] =
    "local lc = require 'luacrawl'\n"
    "local crawl = require 'luacrawl.crawl'\n"
    "local output = '%s'\n"
    "local stats = crawl.run {\n"
    "  start = { 'http://127.0.0.1:%s/site/' },\n"
    "  output = output ~= '' and output or nil,\n"
    "  robots = false, quiet = true, progress = false,\n"
    "  %s\n"
    "  parse = function(page)\n"
    "    page:follow(page:css('a::attr(href)'))\n"
    "    page:emit { url = page.url }\n"
    "  end,\n"
    "}\n"
    "lc.host.done { signal = stats.signal or 'none', items = stats.items }\n";

#define SLOW "per_host = 1, delay = 30, max_delay = 60,"
#define STOP_WITHIN 5.0 /* seconds from a stop to the run's end */

struct host {
    lc_engine *e;
    atomic_int items;   /* through the item callback */
    atomic_int in_poll; /* the engine's thread is inside poll() */
    atomic_int poll_ms; /* with this timeout */
    atomic_int blocked; /* the stop came while it waited a long poll() */
    double stop_at, done_at;
    int status;
    char done[256]; /* what lc.host.done got */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* lc_item_fn */
static void on_item(lc_engine *e, const char *json, size_t len, void *ud)
{
    (void)e, (void)json, (void)len;
    struct host *h = ud;
    atomic_fetch_add(&h->items, 1);
}

/* lc_host_fn: lc.host.done(stats) */
static int on_done(lc_engine *e, const char *args, char **result, void *ud)
{
    (void)e, (void)result;
    struct host *h = ud;
    snprintf(h->done, sizeof(h->done), "%s", args);
    return 0;
}

/* lc_log_fn: the crawl says nothing unless something is wrong. */
static void on_log(lc_engine *e, const char *line, void *ud)
{
    (void)e, (void)ud;
    printf("log: %s\n", line);
}

static int setup(struct host *h)
{
    h->e = lc_engine_new();
    CHECK(h->e != NULL);
    if (!h->e) return -1;
    lc_engine_on_item(h->e, on_item, h);
    lc_engine_on_log(h->e, on_log, h);
    CHECK(lc_engine_register(h->e, "done", on_done, h) == 0);
    return 0;
}

static void script(char *buf, size_t size, const char *output, const char *options)
{
    snprintf(buf, size, CRAWL, output, getenv("LC_FIXTURE_PORT"), options);
}

/* The engine's thread of a host with its own poll() loop. */
static void *poll_host(void *arg)
{
    struct host *h = arg;
    while (!lc_engine_done(h->e)) {
        int ms = lc_engine_timeout_ms(h->e);
        struct pollfd p = {lc_engine_fd(h->e), POLLIN, 0};
        atomic_store(&h->poll_ms, ms);
        atomic_store(&h->in_poll, 1);
        poll(&p, 1, ms);
        atomic_store(&h->in_poll, 0);
        lc_engine_step(h->e);
    }
    h->done_at = now();
    h->status = lc_engine_status(h->e);
    return NULL;
}

/* Wait (at most 20 s) until the engine's thread has recorded `items` items. */
static int wait_items(struct host *h, int items)
{
    for (int i = 0; i < 20000 && atomic_load(&h->items) < items; i++)
        nap_ms(1);
    return atomic_load(&h->items) >= items;
}

static void stop_slow_crawl_in_poll(struct host *h)
{
    CHECK(wait_items(h, 1));
    /* The first page is in; the next waits for the delay: a long poll(). */
    for (int i = 0; i < 20000; i++) {
        if (atomic_load(&h->in_poll) && atomic_load(&h->poll_ms) > 10000) {
            nap_ms(100);
            if (atomic_load(&h->in_poll)) {
                atomic_store(&h->blocked, 1);
                break;
            }
        }
        nap_ms(1);
    }
    h->stop_at = now();
    lc_engine_stop(h->e);
}

static void a_stop_from_another_thread_wakes_a_host_blocked_in_poll(void)
{
    struct host h = {0};
    char chunk[2048];
    if (setup(&h) != 0) return;
    script(chunk, sizeof(chunk), "", SLOW);
    CHECK(lc_engine_start_string(h.e, chunk, "=slow_crawl") == 0);
    pthread_t engine;
    CHECK(pthread_create(&engine, NULL, poll_host, &h) == 0);
    stop_slow_crawl_in_poll(&h);
    pthread_join(engine, NULL);
    CHECK(atomic_load(&h.blocked) == 1);
    CHECK(h.done_at - h.stop_at < STOP_WITHIN);
    CHECK(h.status == 0);
    CHECK(strstr(h.done, "\"signal\":\"INT\"") != NULL);
    char items[32];
    snprintf(items, sizeof(items), "\"items\":%d", atomic_load(&h.items));
    CHECK(strstr(h.done, items) != NULL);
    if (h.done_at - h.stop_at >= STOP_WITHIN || !strstr(h.done, items))
        fprintf(stderr, "ended %.1f s after the stop; %d items; done: %s\n", h.done_at - h.stop_at,
                atomic_load(&h.items), h.done);
    lc_engine_free(h.e);
}

/* ---- lc_engine_run_file, stopped from a signal handler on another thread ---- */

static lc_engine *signalled; /* what on_usr1 stops */

static void on_usr1(int signo)
{
    (void)signo;
    lc_engine_stop(signalled);
}

struct file_run {
    struct host *h;
    const char *path;
};

static void *run_file_host(void *arg)
{
    struct file_run *r = arg;
    r->h->status = lc_engine_run_file(r->h->e, r->path, 0, NULL);
    r->h->done_at = now();
    return NULL;
}

static void a_stop_from_a_signal_handler_on_another_thread_ends_run_file(void)
{
    struct host h = {0};
    char chunk[2048], path[] = "lc_stop_XXXXXX" /* in the test's directory */;
    if (setup(&h) != 0) return;
    script(chunk, sizeof(chunk), "", SLOW);
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, chunk, strlen(chunk)) == (ssize_t)strlen(chunk));
    close(fd);

    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    signalled = h.e;
    /* The engine's thread blocks SIGUSR1: the handler runs on this thread. */
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, &old);
    struct file_run r = {&h, path};
    pthread_t engine;
    CHECK(pthread_create(&engine, NULL, run_file_host, &r) == 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    CHECK(wait_items(&h, 1));
    nap_ms(500); /* the engine waits in its epoll for the next page's delay */
    h.stop_at = now();
    CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);
    pthread_join(engine, NULL);
    signal(SIGUSR1, SIG_DFL);
    unlink(path);
    CHECK(h.done_at - h.stop_at < STOP_WITHIN);
    CHECK(h.status == 0);
    CHECK(strstr(h.done, "\"signal\":\"INT\"") != NULL);
    if (h.done_at - h.stop_at >= STOP_WITHIN || h.status != 0)
        fprintf(stderr, "ended %.1f s after the stop, status %d; done: %s\n", h.done_at - h.stop_at,
                h.status, h.done);
    lc_engine_free(h.e);
}

/* ---- items before the stop ---- */

static long lines_of(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long n = 0;
    for (int c; (c = getc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

static void every_item_before_a_stop_from_another_thread_reaches_the_host(void)
{
    struct host h = {0};
    char chunk[2048], path[] = "lc_stop_items_XXXXXX";
    if (setup(&h) != 0) return;
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    /* 20 ms a page, some 2 s for the site: the stop comes while pages still do. */
    script(chunk, sizeof(chunk), path, "per_host = 1, delay = 0.02,");
    CHECK(lc_engine_start_string(h.e, chunk, "=crawl") == 0);
    pthread_t engine;
    CHECK(pthread_create(&engine, NULL, poll_host, &h) == 0);
    CHECK(wait_items(&h, 20));
    h.stop_at = now();
    lc_engine_stop(h.e);
    pthread_join(engine, NULL);

    int items = atomic_load(&h.items);
    long lines = lines_of(path);
    unlink(path);
    char want[32];
    snprintf(want, sizeof(want), "\"items\":%d", items);
    CHECK(h.status == 0);
    CHECK(items >= 20);
    CHECK(lines == items);
    CHECK(strstr(h.done, "\"signal\":\"INT\"") != NULL); /* stopped midway */
    CHECK(strstr(h.done, want) != NULL);
    CHECK(h.done_at - h.stop_at < STOP_WITHIN);
    if (lines != items || !strstr(h.done, want) || !strstr(h.done, "INT"))
        fprintf(stderr, "%d items through the callback, %ld in the output; done: %s\n", items,
                lines, h.done);
    lc_engine_free(h.e);
}

int main(void)
{
    if (!getenv("LC_FIXTURE_PORT")) {
        fprintf(stderr, "LC_FIXTURE_PORT is not set: run under tests/fixtures/run.py --http\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    RUN(a_stop_from_another_thread_wakes_a_host_blocked_in_poll);
    RUN(a_stop_from_a_signal_handler_on_another_thread_ends_run_file);
    RUN(every_item_before_a_stop_from_another_thread_reaches_the_host);
    return test_failures ? 1 : 0;
}
