/* jobq.c: a job queue and its thread (jobq.h). */
#include "jobq.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

struct jobq {
    jobq_fn fn;
    void *arg;
    size_t max_bytes;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the thread's: a job came, or stop */
    pthread_cond_t room; /* the pusher's: a job ended (queued went down) */
    jobq_job_t *head, *tail;
    size_t queued; /* bytes of the jobs queued and of the one running */
    int stop;
    pthread_t thread;
};

static void *run(void *arg)
{
    jobq_t *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop)
            pthread_cond_wait(&q->wake, &q->mu);
        jobq_job_t *job = q->head;
        if (!job) break; /* stop, and nothing left */
        q->head = job->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->mu);
        size_t size = job->size;
        q->fn(q->arg, job);
        pthread_mutex_lock(&q->mu);
        q->queued -= size;
        pthread_cond_broadcast(&q->room);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

jobq_t *jobq_new(jobq_fn fn, void *arg, size_t max_bytes)
{
    jobq_t *q = calloc(1, sizeof(*q));
    if (!q) return NULL;
    q->fn = fn;
    q->arg = arg;
    q->max_bytes = max_bytes;
    if (pthread_mutex_init(&q->mu, NULL) != 0) goto no_mutex;
    if (pthread_cond_init(&q->wake, NULL) != 0) goto no_wake;
    if (pthread_cond_init(&q->room, NULL) != 0) goto no_room;
    /* The thread starts with every signal blocked: a signal the engine handles (its
     * signalfd, a handler of the host's) is for the caller's thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&q->thread, NULL, run, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) return q;
    pthread_cond_destroy(&q->room);
no_room:
    pthread_cond_destroy(&q->wake);
no_wake:
    pthread_mutex_destroy(&q->mu);
no_mutex:
    free(q);
    return NULL;
}

void jobq_push(jobq_t *q, jobq_job_t *job)
{
    job->next = NULL;
    pthread_mutex_lock(&q->mu);
    /* Full: wait until half of it has run, not just until this job fits, or the two
     * threads would take turns a job at a time, a wake-up each. */
    if (q->queued && q->queued + job->size > q->max_bytes)
        while (q->queued && (q->queued > q->max_bytes / 2 || q->queued + job->size > q->max_bytes))
            pthread_cond_wait(&q->room, &q->mu);
    if (q->tail)
        q->tail->next = job;
    else
        q->head = job;
    q->tail = job;
    q->queued += job->size;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->mu);
}

void jobq_drain(jobq_t *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->queued)
        pthread_cond_wait(&q->room, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

void jobq_free(jobq_t *q)
{
    if (!q) return;
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->room);
    pthread_cond_destroy(&q->wake);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
