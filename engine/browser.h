/* browser.h: a headless Chromium child driven over --remote-debugging-pipe on the loop.
 * Owns the process (its own process group, killed with the engine, even by kill -9
 * through the parent-death signal), its profile folder, and the two pipes: CDP
 * messages (JSON, each ended by a NUL) out on the browser's fd 3, in from its fd 4.
 * Knows nothing of CDP's meaning or of Lua. */
#ifndef LUACRAWL_BROWSER_H
#define LUACRAWL_BROWSER_H

#include "loop.h"

#include <stddef.h>
#include <sys/types.h>

typedef struct browser browser_t;

/* One whole message (without its NUL), valid during the call. */
typedef void (*browser_msg_fn)(void *arg, const char *msg, size_t len);
/* The browser is gone (it exited, or a pipe failed): why says so. Called once, from a
 * loop callback; the process is reaped and its group killed by then. */
typedef void (*browser_end_fn)(void *arg, const char *why);

/* The binary the engine starts when none is given: Debian's chromium-headless-shell
 * (the real binary rather than /usr/bin's wrapper script, so that the process
 * started is the browser itself). */
#define BROWSER_DEFAULT_PATH "/usr/lib/chromium/chromium-headless-shell"

/* Start path with the engine's flags, then args (nargs of them). --no-sandbox is
 * added only when running as root, where Chromium's sandbox refuses to start. NULL
 * with a message in err when the profile folder, the pipes or the process cannot be
 * made, or exec fails. */
browser_t *browser_start(loop_t *loop, const char *path, const char *const *args, int nargs,
                         browser_msg_fn on_msg, browser_end_fn on_end, void *arg, char *err,
                         size_t errlen);

/* Queue msg (a NUL is added) and write what the pipe takes now; the rest goes when it
 * drains. 0; -1 when the browser has ended or memory ran out. */
int browser_send(browser_t *b, const char *msg, size_t len);

/* Resident memory of every process of the browser's group, in bytes (0 once ended). */
size_t browser_rss(const browser_t *b);
pid_t browser_pid(const browser_t *b);
const char *browser_profile(const browser_t *b);
int browser_alive(const browser_t *b);

/* Kill the whole group, reap the browser, close the pipes and remove the profile
 * folder; on_end is not called. Then free. Either may be called in any state. */
void browser_kill(browser_t *b);
void browser_free(browser_t *b);

#endif
