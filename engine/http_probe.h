/* http_probe.h: libcurl's zero-timeout readiness probes, answered from the event
 * loop. libcurl checks sockets with poll(fds, n, 0) twice per request on a reused
 * connection: whether the idle connection is still alive, and whether the answer
 * came in right after it sent the request. The loop already knows whether those
 * sockets were ready at its last wait (loop_fd_quiet in loop.h).
 *
 * lc_probe_answer(fds, n) returns 1, with every revents cleared, when "nothing
 * ready" holds for all of fds by the loop's account; 0 when the kernel must be
 * asked. It answers only between lc_probe_vouch(loop, 1) and
 * lc_probe_vouch(loop, 0) on the same thread: http.c vouches around its calls
 * into curl, so that only curl's probes of the loop's own sockets are answered. The
 * luacrawl binary's poll() asks it first, when its overrides are on (poll_shim.c,
 * curl_overrides.h); the library and the Lua module only vouch, and nobody asks. */
#ifndef LUACRAWL_HTTP_PROBE_H
#define LUACRAWL_HTTP_PROBE_H

#include "loop.h"

struct pollfd;
void lc_probe_vouch(const loop_t *loop, int on);
int lc_probe_answer(struct pollfd *fds, unsigned long n);

#endif
