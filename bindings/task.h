/* task.h: LuaJIT coroutines as tasks, scheduled on the loop.
 *
 * A task is a coroutine anchored in the registry until it ends. C operations never
 * resume Lua themselves: they push their results onto the waiting task's thread and
 * call task_wake, which queues the task; the scheduler resumes ready tasks from a
 * deferred loop call, at top level, one at a time.
 *
 * A C function that waits: check task_waitable, start the operation, call
 * task_wait with a way to abort it, then `return lua_yield(L, 0)`. When the
 * operation completes: push the results onto task_thread(t) and task_wake(t, n).
 * When the task is cancelled instead, the abort function runs and the task resumes
 * with the single value task_cancelled_marker(), which the Lua layer turns into a
 * "cancelled" error raised at the waiting call. */
#ifndef LUACRAWL_TASK_H
#define LUACRAWL_TASK_H

#include "loop.h"

#include "lua_api.h"

typedef struct sched sched_t;
typedef struct task task_t;
typedef void (*task_abort_fn)(void *arg);

typedef struct sched_stats {
    unsigned long spawned, finished, failed, cancelled, live;
    unsigned long yields_dropped; /* plain coroutine.yield(values): values lost */
} sched_stats_t;

#define TASK_METATABLE "luacrawl.task"

sched_t *sched_new(lua_State *L, loop_t *loop);
void sched_free(sched_t *s);
loop_t *sched_loop(sched_t *s);
/* The lua_State the scheduler uses for its own bookkeeping: the one running it. */
void sched_set_lua(sched_t *s, lua_State *L);
void sched_get_stats(const sched_t *s, sched_stats_t *stats);

/* The light userdata a cancelled wait resumes with. */
void *task_cancelled_marker(void);
/* The error value that marks a task as cancelled rather than failed (raised by
 * the Lua layer); set once by the module. */
void sched_set_cancel_error(sched_t *s, lua_State *L, int idx);

/* Spawn fn with nargs arguments from the top of L (popped); pushes the task object.
 * The task first runs on a later turn of the loop. */
task_t *task_spawn(sched_t *s, lua_State *L, int nargs);
task_t *task_check(lua_State *L, int idx);
task_t *task_current(sched_t *s);
lua_State *task_thread(task_t *t);
unsigned long task_id(task_t *t);
/* Push the task object of t (nil once it has ended and was released). */
void task_push(lua_State *L, task_t *t);
/* Release what an ended task holds; the task object's __gc calls it. */
void task_release(lua_State *L, task_t *t);

/* Raise a Lua error unless L is the running task's own coroutine and may yield. */
task_t *task_waitable(sched_t *s, lua_State *L, const char *what);
void task_wait(task_t *t, task_abort_fn abort, void *arg);
/* The same for a generic suspend, the only kind of wait core.wake may end. */
void task_wait_suspended(task_t *t, task_abort_fn abort, void *arg);
void task_wake(task_t *t, int nresults);
/* Run and forget the abort function of t's wait (it stays waiting): for a waker
 * that ends the wait another way than the operation expected. */
void task_abort_wait(task_t *t);
/* 1 while t is suspended in a wait (not yet woken or cancelled); task_suspended
 * only for a wait begun with task_wait_suspended. */
int task_waiting(task_t *t);
int task_suspended(task_t *t);

void task_cancel(task_t *t);
/* Do not print t's error when it fails: whoever started it reports it. */
void task_set_quiet(task_t *t);
/* Push the traceback of a failed task, or nil. */
void task_push_traceback(lua_State *L, task_t *t);

/* 0 running or waiting, 1 finished, 2 failed, 3 cancelled. */
int task_state(task_t *t);

/* Wait for target to end (yields; use as `return task_join(...)`), or push its
 * outcome at once if it has ended: true, results... or false, error. */
int task_join(sched_t *s, lua_State *L, task_t *target);

/* CPU seconds the running task has used since it was last resumed (0 when no task
 * runs, or when not measured): for the max_task_cpu guard, which turns measuring on
 * (reading the thread's CPU clock is a system call, so it is off by default). */
double sched_resume_cpu(sched_t *s);
void sched_measure_cpu(sched_t *s, int on);
/* Called around every lua_resume: the memory limit applies only to task code. */
typedef void (*sched_resume_fn)(void *arg, int entering);
void sched_on_resume(sched_t *s, sched_resume_fn fn, void *arg);

/* Run the loop until no task can make progress; tasks still blocked then are
 * cancelled (and may run their cleanup). 0, or the errno of the loop's failed wait
 * (loop_run): the run stopped there, with its tasks as they were. */
int sched_run(sched_t *s);

/* The same run one turn at a time, for a host's own loop (engine.c): sched_begin
 * before the first step, then sched_step(s, 0) whenever the loop's fd is readable
 * or its timeout has passed (block 1 waits as loop_run does). 1 while the run goes
 * on, 0 when it has ended (the blocked tasks cancelled as sched_run does), -1 with
 * errno set when the loop cannot wait. */
void sched_begin(sched_t *s);
int sched_step(sched_t *s, int block);

/* Where a failed task that nobody joins is reported: stderr (fn NULL), or fn with
 * one line of text (a traceback has newlines), valid during the call. */
typedef void (*sched_log_fn)(void *arg, const char *msg);
void sched_set_log(sched_t *s, sched_log_fn fn, void *arg);

/* Say one message (printf's fmt, no newline) where sched_set_log sends reports: for
 * what goes wrong outside any task, which no task's error can carry. */
void sched_log(sched_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
