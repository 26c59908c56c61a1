/* stop_host.c (install.embed): a host that stops a crawl midway from its item
 * callback and must get every item the crawl recorded before the stop.
 *   stop_host SCRIPT START_URL OUTPUT STOP_AFTER EXTRA_URL
 * Steps the engine from a poll() loop; after the first step pushes EXTRA_URL into
 * the crawl (lc_engine_call "add_url"); calls lc_engine_stop from the callback
 * once STOP_AFTER items came. Takes the engine's messages (lc_engine_on_log) and
 * prints them on stdout as "log: ...", so that nothing reaches stderr. Prints
 * "items N" and the add_url result; the test compares N with OUTPUT's lines. */
#include <luacrawl.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct state {
    long items, stop_after;
    int stopped;
};

static void on_item(lc_engine *e, const char *json, size_t len, void *ud)
{
    struct state *s = ud;
    if (strlen(json) != len || json[0] != '{') printf("bad item %s\n", json);
    if (++s->items == s->stop_after && !s->stopped) {
        s->stopped = 1;
        lc_engine_stop(e);
        /* Stepping from a callback is refused, not recursed into. */
        if (lc_engine_step(e) != -1) printf("step from a callback was not refused\n");
    }
}

static void on_log(lc_engine *e, const char *line, void *ud)
{
    (void)e, (void)ud;
    printf("log: %s\n", line);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s SCRIPT START_URL OUTPUT STOP_AFTER EXTRA_URL\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct state s = {0, atol(argv[4]), 0};
    lc_engine *e = lc_engine_new();
    if (!e) return 1;
    lc_engine_on_item(e, on_item, &s);
    lc_engine_on_log(e, on_log, NULL);
    if (lc_engine_start_file(e, argv[1], 2, argv + 2) != 0) return 1;
    if (lc_engine_status(e) != -1 || lc_engine_done(e)) printf("a started run looks done\n");
    int steps = 0;
    while (!lc_engine_done(e)) {
        struct pollfd p = {.fd = lc_engine_fd(e), .events = POLLIN};
        poll(&p, 1, lc_engine_timeout_ms(e));
        lc_engine_step(e);
        if (++steps == 1) {
            char arg[1024], *result = NULL;
            snprintf(arg, sizeof(arg), "\"%s\"", argv[5]);
            int rc = lc_engine_call(e, "add_url", arg, &result);
            printf("add_url: %d %s\n", rc, result ? result : "(null)");
            free(result);
            rc = lc_engine_call(e, "no_such_fn", NULL, &result);
            printf("no_such_fn: %d %s\n", rc, result ? result : "(null)");
            free(result);
        }
    }
    printf("items %ld\nstatus %d\n", s.items, lc_engine_status(e));
    lc_engine_free(e);
    return 0;
}
