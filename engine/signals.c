/* signals.c: a signalfd watched by the loop. Signals are blocked with
 * sigprocmask, so they queue on the fd and are read on a normal loop turn. */
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
    w->fd = signalfd(-1, &w->mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (w->fd < 0 || loop_watch(loop, w->fd, LOOP_READ, on_readable, w) < 0) {
        if (w->fd >= 0) close(w->fd);
        free(w);
        return NULL;
    }
    return w;
}

void sigwatch_free(sigwatch_t *w)
{
    if (!w) return;
    sigprocmask(SIG_UNBLOCK, &w->mask, NULL);
    loop_watch(w->loop, w->fd, 0, NULL, NULL);
    close(w->fd);
    free(w);
}

int sigwatch_add(sigwatch_t *w, int signo)
{
    sigset_t one;
    sigemptyset(&one);
    if (sigaddset(&one, signo) < 0) return -1;
    sigaddset(&w->mask, signo);
    if (signalfd(w->fd, &w->mask, 0) < 0) return -1;
    return sigprocmask(SIG_BLOCK, &one, NULL);
}

int sigwatch_remove(sigwatch_t *w, int signo)
{
    sigset_t one;
    sigemptyset(&one);
    if (sigaddset(&one, signo) < 0) return -1;
    sigdelset(&w->mask, signo);
    if (signalfd(w->fd, &w->mask, 0) < 0) return -1;
    /* A signal that arrived while blocked is delivered now, as it would have been. */
    return sigprocmask(SIG_UNBLOCK, &one, NULL);
}
