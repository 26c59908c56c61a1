/* loop.c: epoll watchers indexed by fd, a binary min-heap of timers and a FIFO of
 * deferred calls. Everything else in the engine waits through this file. */
#include "loop.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 256

struct watcher {
    int events;  /* LOOP_READ|LOOP_WRITE wanted; 0 when not watched (or parked) */
    int kernel;  /* the same bits as registered with epoll; 0 when not registered */
    int managed; /* parked once: the owner calls loop_forget before closing the fd */
    int urgent;  /* urgent data came (EPOLLPRI): registered without it from then on */
    /* For loop_fd_quiet: the wait during whose turn epoll_ctl last set the fd (the
     * waits after it have looked at the fd), and the wait that reported an event
     * for it not yet handed to its callback (or a hangup, which stays). */
    uint64_t armed, reported;
    loop_io_fn fn;
    void *arg;
};

struct loop_timer {
    double when;
    uint64_t seq; /* ties fire in the order they were added */
    size_t index; /* position in the heap */
    loop_fn fn;
    void *arg;
};

struct deferred {
    struct deferred *next;
    loop_fn fn;
    void *arg;
};

struct loop {
    int epfd;
    struct watcher *watchers; /* indexed by fd */
    int nwatchers;
    loop_timer_t **heap;
    size_t nheap, capheap;
    uint64_t timer_seq;
    struct deferred *dhead, *dtail, *dfree;
    int refs;
    int stopped;
    double now;
    uint64_t waits; /* epoll_wait calls that returned */
    int full;       /* the last of them filled its batch: it may have left ready fds out */
};

double loop_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

loop_t *loop_new(void)
{
    loop_t *loop = calloc(1, sizeof(*loop));
    if (!loop) return NULL;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        free(loop);
        return NULL;
    }
    loop->now = loop_time();
    return loop;
}

void loop_free(loop_t *loop)
{
    if (!loop) return;
    for (size_t i = 0; i < loop->nheap; i++)
        free(loop->heap[i]);
    free(loop->heap);
    struct deferred *d, *next;
    for (d = loop->dhead; d; d = next) {
        next = d->next;
        free(d);
    }
    for (d = loop->dfree; d; d = next) {
        next = d->next;
        free(d);
    }
    free(loop->watchers);
    close(loop->epfd);
    free(loop);
}

/* ---- fd watchers ---- */

static int grow_watchers(loop_t *loop, int fd)
{
    if (fd < loop->nwatchers) return 0;
    int n = loop->nwatchers ? loop->nwatchers : 64;
    while (n <= fd)
        n *= 2;
    struct watcher *w = realloc(loop->watchers, (size_t)n * sizeof(*w));
    if (!w) return -1;
    memset(w + loop->nwatchers, 0, (size_t)(n - loop->nwatchers) * sizeof(*w));
    loop->watchers = w;
    loop->nwatchers = n;
    return 0;
}

static int epoll_set(loop_t *loop, int fd, int events)
{
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    /* A hangup and urgent data are asked for only so that loop_fd_quiet knows of
     * them; urgent data, which nobody here reads, once (dispatch). */
    if (events & LOOP_READ) ev.events |= EPOLLIN | EPOLLRDHUP;
    if ((events & LOOP_READ) && !loop->watchers[fd].urgent) ev.events |= EPOLLPRI;
    if (events & LOOP_WRITE) ev.events |= EPOLLOUT;
    /* Try MOD first: the fd may have been closed and reused without our knowing. */
    if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0) {
        if (errno != ENOENT || epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) return -1;
    }
    loop->watchers[fd].armed = loop->waits;
    return 0;
}

int loop_watch(loop_t *loop, int fd, int events, loop_io_fn fn, void *arg)
{
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if (grow_watchers(loop, fd) < 0) return -1;
    struct watcher *w = &loop->watchers[fd];
    events &= LOOP_READ | LOOP_WRITE;
    if (events == 0) {
        /* EBADF/ENOENT: the fd was already closed or never added; nothing to undo. */
        if (w->kernel) epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
        memset(w, 0, sizeof(*w));
        return 0;
    }
    /* A managed fd still registered as wanted needs no system call: its owner tells
     * us before it closes it, so the registration is its own. */
    if (!(w->managed && w->kernel == events) && epoll_set(loop, fd, events) < 0) return -1;
    w->events = w->kernel = events;
    w->fn = fn;
    w->arg = arg;
    return 0;
}

int loop_park(loop_t *loop, int fd)
{
    if (fd < 0 || fd >= loop->nwatchers) return 0;
    struct watcher *w = &loop->watchers[fd];
    w->events = 0;
    w->fn = NULL;
    w->arg = NULL;
    w->managed = 1;
    return 0;
}

void loop_forget(loop_t *loop, int fd)
{
    if (fd >= 0 && fd < loop->nwatchers) memset(&loop->watchers[fd], 0, sizeof(loop->watchers[fd]));
}

/* ---- timers: a min-heap ordered by (when, seq) ---- */

static int timer_before(const loop_timer_t *a, const loop_timer_t *b)
{
    return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void heap_set(loop_t *loop, size_t i, loop_timer_t *t)
{
    loop->heap[i] = t;
    t->index = i;
}

static void heap_up(loop_t *loop, size_t i)
{
    loop_timer_t *t = loop->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(t, loop->heap[parent])) break;
        heap_set(loop, i, loop->heap[parent]);
        i = parent;
    }
    heap_set(loop, i, t);
}

static void heap_down(loop_t *loop, size_t i)
{
    loop_timer_t *t = loop->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= loop->nheap) break;
        if (child + 1 < loop->nheap && timer_before(loop->heap[child + 1], loop->heap[child]))
            child++;
        if (!timer_before(loop->heap[child], t)) break;
        heap_set(loop, i, loop->heap[child]);
        i = child;
    }
    heap_set(loop, i, t);
}

static void heap_remove(loop_t *loop, size_t i)
{
    loop_timer_t *last = loop->heap[--loop->nheap];
    if (i == loop->nheap) return;
    heap_set(loop, i, last);
    if (i > 0 && timer_before(last, loop->heap[(i - 1) / 2]))
        heap_up(loop, i);
    else
        heap_down(loop, i);
}

loop_timer_t *loop_timer_add(loop_t *loop, double delay, loop_fn fn, void *arg)
{
    if (loop->nheap == loop->capheap) {
        size_t cap = loop->capheap ? loop->capheap * 2 : 64;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        loop_timer_t **h = realloc(loop->heap, cap * sizeof(*h));
        if (!h) return NULL;
        loop->heap = h;
        loop->capheap = cap;
    }
    loop_timer_t *t = malloc(sizeof(*t));
    if (!t) return NULL;
    if (!(delay > 0)) delay = 0; /* also catches NaN */
    t->when = loop_time() + delay;
    t->seq = loop->timer_seq++;
    t->fn = fn;
    t->arg = arg;
    loop->heap[loop->nheap] = t;
    t->index = loop->nheap++;
    heap_up(loop, t->index);
    return t;
}

void loop_timer_cancel(loop_t *loop, loop_timer_t *timer)
{
    if (!timer) return;
    heap_remove(loop, timer->index);
    free(timer);
}

static void fire_timers(loop_t *loop)
{
    /* Timers added by a callback for "now" wait for the next turn: fire only those
     * due at the start, so a timer that re-arms itself cannot starve the loop. */
    double now = loop->now;
    uint64_t seq_limit = loop->timer_seq;
    while (loop->nheap > 0 && !loop->stopped) {
        loop_timer_t *t = loop->heap[0];
        if (t->when > now || t->seq >= seq_limit) break;
        heap_remove(loop, 0);
        loop_fn fn = t->fn;
        void *arg = t->arg;
        free(t);
        fn(loop, arg);
    }
}

/* ---- deferred calls ---- */

int loop_defer(loop_t *loop, loop_fn fn, void *arg)
{
    struct deferred *d = loop->dfree;
    if (d)
        loop->dfree = d->next;
    else if (!(d = malloc(sizeof(*d))))
        return -1;
    d->next = NULL;
    d->fn = fn;
    d->arg = arg;
    if (loop->dtail)
        loop->dtail->next = d;
    else
        loop->dhead = d;
    loop->dtail = d;
    return 0;
}

static void run_deferred(loop_t *loop)
{
    /* Only the calls queued before this point: new ones run on the next turn, after
     * the loop has polled for I/O again. */
    struct deferred *d = loop->dhead;
    loop->dhead = loop->dtail = NULL;
    while (d) {
        struct deferred *next = d->next;
        loop_fn fn = d->fn;
        void *arg = d->arg;
        d->next = loop->dfree;
        loop->dfree = d;
        fn(loop, arg);
        if (loop->stopped && next) {
            /* Put the rest back in front so nothing deferred is lost. */
            struct deferred *tail = next;
            while (tail->next)
                tail = tail->next;
            tail->next = loop->dhead;
            if (!loop->dhead) loop->dtail = tail;
            loop->dhead = next;
            return;
        }
        d = next;
    }
}

/* ---- running ---- */

void loop_ref(loop_t *loop)
{
    loop->refs++;
}

void loop_unref(loop_t *loop)
{
    loop->refs--;
}

int loop_refs(const loop_t *loop)
{
    return loop->refs;
}

double loop_now(const loop_t *loop)
{
    return loop->now;
}

static int poll_timeout_ms(loop_t *loop, int block)
{
    if (!block) return 0;
    return loop_timeout_ms(loop);
}

int loop_fd(const loop_t *loop)
{
    return loop->epfd;
}

int loop_timeout_ms(loop_t *loop)
{
    if (loop->dhead) return 0;
    if (loop->nheap == 0) return -1;
    double wait = loop->heap[0]->when - loop_time();
    if (wait <= 0) return 0;
    double ms = ceil(wait * 1000.0);
    return ms > 60000 ? 60000 : (int)ms;
}

static void dispatch(loop_t *loop, const struct epoll_event *ev)
{
    int fd = ev->data.fd;
    if (fd >= loop->nwatchers) return;
    struct watcher *w = &loop->watchers[fd];
    if (!w->events && w->kernel) { /* parked, and something happened: unregister it now */
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
        w->kernel = 0;
        return;
    }
    if ((ev->events & EPOLLPRI) && w->kernel && !w->urgent) {
        /* Level-triggered, unread urgent data would wake every wait: ask no more,
         * and loop_fd_quiet answers for this fd no more. */
        w->urgent = 1;
        if (epoll_set(loop, fd, w->kernel) < 0) w->kernel = 0;
    }
    /* Re-check: an earlier callback in this batch may have stopped watching fd. */
    if (!w->events || !w->fn) return;
    int events = 0;
    if (ev->events & EPOLLIN) events |= LOOP_READ;
    if (ev->events & EPOLLOUT) events |= LOOP_WRITE;
    if (ev->events & (EPOLLERR | EPOLLHUP)) events |= LOOP_ERROR;
    events &= w->events | LOOP_ERROR;
    if (events) w->fn(loop, fd, events, w->arg);
    /* Handed over, unless it was a hangup or an error: those stay ready. */
    if (fd < loop->nwatchers && !(ev->events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
        loop->watchers[fd].reported = 0;
}

int loop_run_once(loop_t *loop, int block)
{
    loop->now = loop_time();
    run_deferred(loop);
    if (loop->stopped) return 1;
    if (loop->refs <= 0 && !loop->dhead) return 0;

    struct epoll_event events[MAX_EVENTS];
    int n = epoll_wait(loop->epfd, events, MAX_EVENTS, poll_timeout_ms(loop, block));
    /* Other than a signal (EINTR), a failed wait is a bad epoll fd or a fault: the
     * next would fail at once too. Stop, as Redis's aeApiPoll does, rather than spin
     * with nothing ever dispatched. */
    if (n < 0 && errno != EINTR) return -1;
    loop->now = loop_time();
    if (n >= 0) {
        loop->waits++;
        loop->full = n == MAX_EVENTS;
    }
    for (int i = 0; i < n; i++)
        if (events[i].data.fd < loop->nwatchers)
            loop->watchers[events[i].data.fd].reported = loop->waits;
    for (int i = 0; i < n && !loop->stopped; i++)
        dispatch(loop, &events[i]);
    fire_timers(loop);
    return loop->refs > 0 || loop->dhead != NULL;
}

int loop_run(loop_t *loop)
{
    int rc = 0;
    loop->stopped = 0;
    while (!loop->stopped && (rc = loop_run_once(loop, 1)) > 0) {
    }
    int err = !loop->stopped && rc < 0 ? errno : 0;
    loop->stopped = 0;
    return err;
}

/* ---- what the last wait saw ---- */

int loop_fd_quiet(const loop_t *loop, int fd, int events)
{
    if (fd < 0 || fd >= loop->nwatchers || loop->full || !events) return 0;
    const struct watcher *w = &loop->watchers[fd];
    return (w->kernel & events) == events && !w->urgent && w->armed != loop->waits &&
           w->reported != loop->waits;
}

void loop_stop(loop_t *loop)
{
    loop->stopped = 1;
}
