/* http_probe.c: answers to libcurl's poll(fds, n, 0) probes from what the loop's
 * last complete wait saw (http_probe.h).
 *
 * Why "nothing ready" from the loop is the answer curl should get:
 * - A socket registered before the last wait that the wait did not report had
 *   nothing ready then; what arrived since is the next wait's to report, as if
 *   the probe had come a moment earlier: the race every poll has with the peer,
 *   and curl meets a connection found dead later by sending the request again on
 *   a new one.
 * - A socket whose report was handed to its callback (curl, in the same turn) has
 *   had what was ready read by curl, or curl chose to leave it: if it is still
 *   ready, the next wait reports it again (level-triggered) and curl is called for
 *   it then. A hangup or an error is never taken as handed over: an idle
 *   connection the server closed stays "ready", and curl drops it.
 * - A wait that filled its batch, or a socket with urgent data, and the loop
 *   knows nothing: the kernel answers (loop_fd_quiet). */
#include "http_probe.h"

#include <poll.h>
#include <stddef.h>

/* The loop whose owner vouches for the probes made on this thread. */
static _Thread_local const loop_t *vouching;

void lc_probe_vouch(const loop_t *loop, int on)
{
    vouching = on ? loop : NULL;
}

/* The loop's events for a pollfd's: every read bit (urgent data too, which the
 * loop watches for) is LOOP_READ, every write bit LOOP_WRITE. */
static int loop_events(short events)
{
    int e = 0;
    if (events & (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND)) e |= LOOP_READ;
    if (events & (POLLOUT | POLLWRNORM | POLLWRBAND)) e |= LOOP_WRITE;
    return e;
}

int lc_probe_answer(struct pollfd *fds, unsigned long n)
{
    const loop_t *loop = vouching;
    if (!loop) return 0;
    for (unsigned long i = 0; i < n; i++) {
        if (fds[i].fd < 0) continue; /* poll() skips it */
        if (!loop_fd_quiet(loop, fds[i].fd, loop_events(fds[i].events))) return 0;
    }
    for (unsigned long i = 0; i < n; i++)
        fds[i].revents = 0;
    return 1;
}
