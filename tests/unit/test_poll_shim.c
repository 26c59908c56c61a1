/* Unit tests of cli/poll_shim.c, linked in here as in the binary with its gate
 * (curl_overrides.c). A byte written after the loop's last wait makes the two
 * answers differ: the kernel says readable, the loop's account (a moment earlier)
 * says nothing ready. With the overrides on, a zero-timeout probe made while
 * vouching gets the loop's answer; every other call, and every call with them off
 * (LUACRAWL_NO_OVERRIDES=1: ctest runs it both ways), gets the kernel's. */
#include "curl_overrides.h"
#include "http_probe.h"
#include "loop.h"
#include "test.h"

#include <poll.h>
#include <unistd.h>

static void on_readable(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)fd;
    (void)events;
    (void)arg;
}

static int probe(int fd, int timeout)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLPRI};
    int n = poll(&pfd, 1, timeout);
    CHECK(n == 0 || (n == 1 && (pfd.revents & POLLIN)));
    return n;
}

static void probes_go_to_the_loop_only_when_on_and_vouched(void)
{
    loop_t *loop = loop_new();
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(loop_watch(loop, p[0], LOOP_READ, on_readable, NULL) == 0);
    loop_ref(loop);
    loop_run_once(loop, 0);
    CHECK(write(p[1], "x", 1) == 1);
    CHECK(probe(p[0], 0) == 1); /* nobody vouches */
    lc_probe_vouch(loop, 1);
    CHECK(probe(p[0], 0) == (lc_overrides_on() ? 0 : 1));
    CHECK(probe(p[0], 10) == 1); /* not a probe: a wait */
    CHECK(probe(p[0], -1) == 1); /* nor this */
    CHECK(probe(p[1], 0) == 0);  /* a pipe's write end has nothing to read */
    lc_probe_vouch(loop, 0);
    printf("  overrides %s\n", lc_overrides_on() ? "on" : lc_overrides_off_reason());
    CHECK(loop_watch(loop, p[0], 0, NULL, NULL) == 0);
    close(p[0]);
    close(p[1]);
    loop_free(loop);
}

int main(void)
{
    RUN(probes_go_to_the_loop_only_when_on_and_vouched);
    return test_failures ? 1 : 0;
}
