/* poll_shim.c: the luacrawl binary's poll(), which libcurl calls in place of the C
 * library's (an executable's symbols come first). When the overrides are on
 * (curl_overrides.h), a zero-timeout probe of sockets the event loop watches is
 * answered from what the loop knows (http_probe.h says when and why); every other
 * call, and every call when they are off, goes to the kernel as ppoll, which is
 * what the C library's poll() does. Only the binary has it: a library must not
 * replace its host's poll(), so the Lua module and libluacrawl make those probes as
 * system calls. */
#include <poll.h>
#include <stddef.h>
#include <time.h>

#include "curl_overrides.h"
#include "http_probe.h"

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (timeout == 0 && lc_overrides_on() && lc_probe_answer(fds, n)) return 0;
    struct timespec ts, *tp = NULL;
    if (timeout >= 0) {
        ts.tv_sec = timeout / 1000;
        ts.tv_nsec = (long)(timeout % 1000) * 1000000L;
        tp = &ts;
    }
    return ppoll(fds, n, tp, NULL);
}
