/* poll_host.c: a program with its own poll() loop that runs a luacrawl crawl
 * alongside its other work: here a timer that prints a progress line every
 * interval, counted from items the crawl hands over (lc_engine_on_item).
 *
 *   cc poll_host.c -o poll_host $(pkg-config --cflags --libs luacrawl)
 *   ./poll_host site_crawl.lua http://127.0.0.1:8080/site/ items.jsonl
 *
 * The engine never blocks: its descriptor joins the program's own poll set, the
 * engine says how long the program may wait (lc_engine_timeout_ms), and
 * lc_engine_step does what is ready. SIGINT stops the crawl cleanly (outputs
 * flushed, the report given to the log) through lc_engine_stop; the program
 * catches the signal itself, since an engine never does. */
#include <luacrawl.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRESS_MS 200

static volatile sig_atomic_t interrupted;

static void on_sigint(int signo)
{
    (void)signo;
    interrupted = 1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_item(lc_engine *e, const char *json, size_t len, void *userdata)
{
    (void)e, (void)json, (void)len;
    ++*(long *)userdata;
}

static void on_log(lc_engine *e, const char *line, void *userdata)
{
    (void)e, (void)userdata;
    fprintf(stderr, "[engine] %s\n", line);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCRIPT [ARGS...]   (luacrawl %s)\n", argv[0],
                lc_engine_version());
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);

    lc_engine *e = lc_engine_new();
    if (!e) return 1;
    long items = 0;
    lc_engine_on_item(e, on_item, &items);
    lc_engine_on_log(e, on_log, NULL);
    if (lc_engine_start_file(e, argv[1], argc - 2, argv + 2) != 0) {
        lc_engine_free(e);
        return 1;
    }

    long long start = now_ms(), next_tick = start + PROGRESS_MS;
    long ticks = 0, stopped = 0;
    while (!lc_engine_done(e)) {
        if (interrupted && !stopped) {
            lc_engine_stop(e);
            stopped = 1;
        }
        /* Wait for the engine or for our own timer, whichever comes first. */
        long long until_tick = next_tick - now_ms();
        int timeout = lc_engine_timeout_ms(e);
        if (until_tick < 0) until_tick = 0;
        if (timeout < 0 || timeout > until_tick) timeout = (int)until_tick;
        struct pollfd p = {.fd = lc_engine_fd(e), .events = POLLIN};
        if (poll(&p, 1, timeout) < 0 && errno != EINTR) {
            perror("poll");
            break;
        }
        lc_engine_step(e);
        if (now_ms() >= next_tick) {
            ticks++;
            printf("progress: %ld items after %lld ms\n", items, now_ms() - start);
            fflush(stdout);
            next_tick += PROGRESS_MS;
        }
    }
    int status = lc_engine_status(e);
    printf("done: %ld items, %ld progress lines, status %d\n", items, ticks, status);
    lc_engine_free(e);
    return status;
}
