/* signals.c: a signalfd watched by the loop. Signals are blocked with
 * sigprocmask, so they queue on the fd and are read on a normal loop turn.
 * A signal is blocked before the fd is told of it: in the other order, one sent
 * between the two calls got its ordinary disposition (and an ignored one was
 * dropped). Unwatching restores the mask as it was: a signal that was blocked
 * before stays blocked (the luacrawl binary blocks inherited-ignored ones, main.c). */
#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct sigwatch {
    loop_t *loop;
    int fd;
    sigset_t mask;
    sigset_t was_blocked; /* the watched signals that were blocked before */
    sigwatch_fn fn;
    void *arg;
};

static void on_readable(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)events;
    sigwatch_t *w = arg;
    struct signalfd_siginfo info;
    while (read(fd, &info, sizeof(info)) == (ssize_t)sizeof(info))
        w->fn(w->arg, (int)info.ssi_signo);
}

sigwatch_t *sigwatch_new(loop_t *loop, sigwatch_fn fn, void *arg)
{
    sigwatch_t *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    w->loop = loop;
    w->fn = fn;
    w->arg = arg;
    sigemptyset(&w->mask);
    sigemptyset(&w->was_blocked);
    w->fd = signalfd(-1, &w->mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (w->fd < 0 || loop_watch(loop, w->fd, LOOP_READ, on_readable, w) < 0) {
        if (w->fd >= 0) close(w->fd);
        free(w);
        return NULL;
    }
    return w;
}

/* Unblock the watched signals in set that were not blocked before. */
static int unblock(sigwatch_t *w, const sigset_t *set)
{
    sigset_t un;
    sigemptyset(&un);
    for (int signo = 1; signo < NSIG; signo++)
        if (sigismember(set, signo) == 1 && !sigismember(&w->was_blocked, signo))
            sigaddset(&un, signo);
    return sigprocmask(SIG_UNBLOCK, &un, NULL);
}

void sigwatch_free(sigwatch_t *w)
{
    if (!w) return;
    unblock(w, &w->mask);
    loop_watch(w->loop, w->fd, 0, NULL, NULL);
    close(w->fd);
    free(w);
}

int sigwatch_add(sigwatch_t *w, int signo)
{
    sigset_t one, old;
    sigemptyset(&one);
    if (sigaddset(&one, signo) < 0) return -1;
    if (sigismember(&w->mask, signo) == 1) return 0; /* watched already */
    if (sigprocmask(SIG_BLOCK, &one, &old) < 0) return -1;
    if (sigismember(&old, signo) == 1) sigaddset(&w->was_blocked, signo);
    sigaddset(&w->mask, signo);
    if (signalfd(w->fd, &w->mask, 0) < 0) {
        int err = errno;
        sigdelset(&w->mask, signo);
        unblock(w, &one);
        sigdelset(&w->was_blocked, signo);
        errno = err;
        return -1;
    }
    return 0;
}

int sigwatch_remove(sigwatch_t *w, int signo)
{
    sigset_t one;
    sigemptyset(&one);
    if (sigaddset(&one, signo) < 0) return -1;
    if (sigismember(&w->mask, signo) != 1) return 0;
    sigdelset(&w->mask, signo);
    if (signalfd(w->fd, &w->mask, 0) < 0) return -1;
    /* A signal that arrived while blocked is delivered now, as it would have been
     * (unless it was blocked before the watch: then it stays pending, as before). */
    int rc = unblock(w, &one);
    sigdelset(&w->was_blocked, signo);
    return rc;
}
