/* signals.h: POSIX signals delivered through the loop (signalfd), so a signal is
 * an event like any other instead of an interruption. A watched signal is blocked
 * for normal delivery; unwatching restores it. */
#ifndef LUACRAWL_SIGNALS_H
#define LUACRAWL_SIGNALS_H

#include "loop.h"

typedef struct sigwatch sigwatch_t;
typedef void (*sigwatch_fn)(void *arg, int signo);

sigwatch_t *sigwatch_new(loop_t *loop, sigwatch_fn fn, void *arg);
void sigwatch_free(sigwatch_t *w);
/* Start or stop catching signo. Returns 0, or -1 with errno set. */
int sigwatch_add(sigwatch_t *w, int signo);
int sigwatch_remove(sigwatch_t *w, int signo);

#endif
