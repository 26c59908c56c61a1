/* two_engines.c (install.embed): one thread, one poll() loop, two engines crawling
 * at once, each stepped when its descriptor is ready or its timeout has passed.
 *   two_engines SCRIPT START_URL OUT1 OUT2
 * Prints for each engine its status and the items its callback got, and whether
 * the crawls were interleaved: when the first ended, the other had items too. */
#include <luacrawl.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>

static void count(lc_engine *e, const char *json, size_t len, void *ud)
{
    (void)e, (void)json, (void)len;
    ++*(long *)ud;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s SCRIPT START_URL OUT1 OUT2\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    lc_engine *e[2];
    long items[2] = {0, 0}, steps[2] = {0, 0};
    long other_at_end = -1; /* the other engine's items when the first run ended */
    for (int i = 0; i < 2; i++) {
        char *args[2] = {argv[2], argv[3 + i]};
        if (!(e[i] = lc_engine_new())) return 1;
        lc_engine_on_item(e[i], count, &items[i]);
        if (lc_engine_start_file(e[i], argv[1], 2, args) != 0) return 1;
    }
    while (!lc_engine_done(e[0]) || !lc_engine_done(e[1])) {
        struct pollfd p[2];
        int timeout = -1;
        for (int i = 0; i < 2; i++) {
            p[i].fd = lc_engine_done(e[i]) ? -1 : lc_engine_fd(e[i]);
            p[i].events = POLLIN;
            int t = lc_engine_done(e[i]) ? -1 : lc_engine_timeout_ms(e[i]);
            if (t >= 0 && (timeout < 0 || t < timeout)) timeout = t;
        }
        poll(p, 2, timeout);
        for (int i = 0; i < 2; i++)
            if (!lc_engine_done(e[i])) {
                steps[i]++;
                if (lc_engine_step(e[i]) == 0 && other_at_end < 0) other_at_end = items[1 - i];
            }
    }
    printf("interleaved %s\n", other_at_end > 0 ? "yes" : "no");
    for (int i = 0; i < 2; i++) {
        printf("engine %d: status %d, items %ld, stepped %s\n", i, lc_engine_status(e[i]), items[i],
               steps[i] > 1 ? "yes" : "no");
        lc_engine_free(e[i]);
    }
    return 0;
}
