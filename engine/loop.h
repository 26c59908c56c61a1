/* loop.h: the event loop. epoll fd watchers, a timer heap and a queue of deferred
 * calls, all on one thread. It knows nothing of curl, c-ares or Lua.
 *
 * The loop runs while something holds a reference (loop_ref): an fd watcher or a
 * timer alone does not keep it alive, so idle keep-alive sockets and housekeeping
 * timers never stop a run from ending. Work that a caller waits for (a transfer, a
 * DNS query, a sleeping task) takes a reference until it completes. */
#ifndef LUACRAWL_LOOP_H
#define LUACRAWL_LOOP_H

#include <stdint.h>

typedef struct loop loop_t;
typedef struct loop_timer loop_timer_t;

enum { LOOP_READ = 1, LOOP_WRITE = 2, LOOP_ERROR = 4 };

/* events: LOOP_READ/LOOP_WRITE that are ready, LOOP_ERROR on EPOLLERR/EPOLLHUP. */
typedef void (*loop_io_fn)(loop_t *loop, int fd, int events, void *arg);
typedef void (*loop_fn)(loop_t *loop, void *arg);

loop_t *loop_new(void);
void loop_free(loop_t *loop);

/* Watch fd for events (LOOP_READ|LOOP_WRITE); events 0 stops watching. Replaces any
 * earlier watcher of the same fd. Returns 0, or -1 with errno set. */
int loop_watch(loop_t *loop, int fd, int events, loop_io_fn fn, void *arg);

/* Stop watching fd but leave it registered with epoll, so that watching it again
 * for the same events costs no system call (an idle keep-alive socket between two
 * requests: two epoll_ctl calls saved per request). An event on a parked fd
 * unregisters it. The owner of a parked fd must call loop_forget before closing it
 * (or watch it with events 0). */
int loop_park(loop_t *loop, int fd);
/* fd is being closed: forget it (the kernel drops a closed fd from epoll itself). */
void loop_forget(loop_t *loop, int fd);

/* A one-shot timer firing after delay seconds. The handle is valid until the timer
 * fires (then it is freed, before fn runs) or is cancelled. */
loop_timer_t *loop_timer_add(loop_t *loop, double delay, loop_fn fn, void *arg);
void loop_timer_cancel(loop_t *loop, loop_timer_t *timer);

/* Whether fd is known to have none of events (LOOP_READ|LOOP_WRITE) ready, as of
 * the last wait that saw every ready fd: 1 when fd was registered for them before
 * that wait, the wait did not fill its batch (a full batch may leave ready fds
 * unreported), and it either did not report fd or its report has since been handed
 * to fd's callback without a hangup or error (a hangup stays ready). A parked fd
 * counts while it stays registered. 0 when only the kernel can say. Readiness that
 * came after that wait is the next wait's to report (epoll is level-triggered), so
 * the answer is the kernel's of a moment earlier. */
int loop_fd_quiet(const loop_t *loop, int fd, int events);

/* Run fn(arg) on the next turn of the loop, outside any callback now on the stack.
 * Calls run in the order they were deferred. Returns 0, or -1 when out of memory. */
int loop_defer(loop_t *loop, loop_fn fn, void *arg);

/* Keep the loop running while references are held. */
void loop_ref(loop_t *loop);
void loop_unref(loop_t *loop);
int loop_refs(const loop_t *loop);

/* Monotonic seconds, updated once per turn (loop_now) or read now (loop_time). */
double loop_now(const loop_t *loop);
double loop_time(void);

/* One turn: run deferred calls, poll (blocking at most until the next timer when
 * block is set), dispatch fd events, fire due timers. Returns 1 while the loop is
 * alive (references held or calls deferred), 0 when it has nothing left to do, -1
 * with errno set when the wait failed (for another reason than a signal). */
int loop_run_once(loop_t *loop, int block);

/* Turn until loop_run_once returns 0 or loop_stop is called: 0. When a wait fails
 * the run stops there, and its errno is returned: a loop that cannot wait cannot
 * run anything again. */
int loop_run(loop_t *loop);
void loop_stop(loop_t *loop);

/* For a host that runs its own loop (engine.c): the epoll fd, readable when one of
 * the watched fds is ready (epoll fds are themselves pollable), and how long the
 * host may wait before calling loop_run_once(loop, 0): 0 when deferred calls are
 * queued or a timer is due, the milliseconds to the next timer, or -1 when there is
 * no timer (only an fd event can bring work then). */
int loop_fd(const loop_t *loop);
int loop_timeout_ms(loop_t *loop);

#endif
