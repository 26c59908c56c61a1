/* jobq.h: one thread that runs jobs in the order they were pushed, off the caller's
 * thread (the WARC writer compresses and writes its records there). The queue is
 * bounded in bytes: a push waits while it is full, which is the only time the caller
 * waits, besides jobq_drain and jobq_free. One thread pushes; the job's function
 * runs on the queue's thread and owns the job from then on. A job may wait up to
 * 20 ms before it runs: the thread is not woken for every one (jobq.c). The thread
 * runs at a lower priority than its maker's (nice 10 more, at most 19): where CPUs
 * are scarce, the pusher goes first. */
#ifndef LUACRAWL_JOBQ_H
#define LUACRAWL_JOBQ_H

#include <stddef.h>

typedef struct jobq jobq_t;

/* The head of a job: embed it first in the caller's own struct. */
typedef struct jobq_job {
    struct jobq_job *next;
    size_t size; /* what the job holds, counted against the bound */
} jobq_job_t;

/* Runs on the queue's thread, one job at a time; frees the job. */
typedef void (*jobq_fn)(void *arg, jobq_job_t *job);

/* A queue and its thread (every signal blocked there: the caller's thread keeps
 * them); max_bytes: a push waits while this much is queued or running (a larger job
 * goes alone; a full queue is let half empty first). NULL when out of memory or
 * when no thread could be started. */
jobq_t *jobq_new(jobq_fn fn, void *arg, size_t max_bytes);

/* Queue job for fn. */
void jobq_push(jobq_t *q, jobq_job_t *job);

/* The bytes of the jobs queued and running: how far behind the thread is. */
size_t jobq_backlog(jobq_t *q);

/* Wait until every job pushed has run. */
void jobq_drain(jobq_t *q);

/* Run the jobs left, stop the thread and free q. */
void jobq_free(jobq_t *q);

#endif
