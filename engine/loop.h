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

/* Readiness probes answered without a system call. libcurl checks sockets with
 * poll(fds, n, 0) twice per request on a reused connection: whether the idle
 * connection is still alive, and whether the answer came in right after it sent
 * the request. The loop already knows: a socket it watches that its last
 * epoll_wait did not report, or whose report its callback has had since, had
 * nothing to read (or write) then, and if that has changed, the next wait says so
 * (epoll is level-triggered). The answer can be late by the time since that wait,
 * a race every poll has with the peer anyway; curl meets a connection found dead
 * later by sending the request again on a new one.
 *
 * loop_answer_probe(fds, n) returns 1, with every revents cleared, when that
 * answer ("nothing ready") holds for all of fds; 0 when the kernel must be asked.
 * It answers only between loop_vouch(loop, 1) and loop_vouch(loop, 0) on the same
 * thread: the owner of the fds vouches that the probes come from code of its own
 * (http.c, around curl_multi_socket_action). The luacrawl binary's poll() asks
 * it first (poll_shim.c). */
struct pollfd;
void loop_vouch(const loop_t *loop, int on);
int loop_answer_probe(struct pollfd *fds, unsigned long n);

/* Fewer clock readings in a call into libcurl. curl reads the monotonic clock some
 * 35 times per transfer (Curl_now: when a step starts, ends, is due), each read a
 * few tens of nanoseconds: 3% of a crawl's time, for instants microseconds apart.
 * While vouching (above), the first reading is kept (loop_keep_clock) and answers
 * for the clock (loop_answer_clock returns 1 with it; 0 when the clock must be
 * read) until the owner says that time has moved on (loop_clock_moved): it does
 * where curl has done work worth timing, each time curl hands over body bytes (one
 * call can read a whole large body, for as long as the bytes keep coming) and
 * before it sends a request. So curl's timings (res.time) and timeouts are exact to
 * within the work between two readings: microseconds, or the computation of a TLS
 * handshake's last step. The luacrawl binary's clock_gettime() asks for
 * CLOCK_MONOTONIC with these (clock_shim.c); no Lua code runs while vouching. */
struct timespec;
int loop_answer_clock(struct timespec *ts);
void loop_keep_clock(const struct timespec *ts);
void loop_clock_moved(void);

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
 * alive (references held or calls deferred), 0 when it has nothing left to do. */
int loop_run_once(loop_t *loop, int block);

/* Turn until loop_run_once returns 0 or loop_stop is called. */
void loop_run(loop_t *loop);
void loop_stop(loop_t *loop);

#endif
