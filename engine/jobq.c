/* jobq.c: a job queue and its thread (jobq.h). */
#include "jobq.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* Waking the thread for each job costs the pusher a system call and the other CPU an
 * interrupt, as much as a small job itself. So an idle thread dozes: it looks at the
 * queue again after DOZE_NS without being woken, and is woken only when WAKE_PART of
 * the queue's bound is queued. Only after a doze that found nothing does it sleep
 * until woken by the next push. */
#define DOZE_NS 20000000L /* 20 ms */
#define WAKE_PART 8

/* The thread's work is background work (the WARC writer's compression), and the
 * pusher's thread paces everything else (the crawl's loop, each transfer's next step):
 * so the thread runs NICE_STEP below the priority of the thread that made it. Where
 * a CPU is idle, that changes nothing; where the threads contend with each other or
 * with other processes for the CPUs, the pusher goes first, and the queue's bound
 * makes it wait when the thread falls that far behind. (On Linux the nice value is a
 * thread's own; the new thread starts with its maker's.) */
#define NICE_STEP 10
#define NICE_MAX 19

static void lower_priority(void)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0); /* this thread's */
    if (nice == -1 && errno) return;
    nice = nice + NICE_STEP > NICE_MAX ? NICE_MAX : nice + NICE_STEP;
    /* Raising one's own nice value needs no privilege; were it refused, the thread
     * would only keep its maker's priority. */
    (void)setpriority(PRIO_PROCESS, 0, nice);
}

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
    int asleep; /* the thread waits for a wake-up, not for its doze to end */
    pthread_t thread;
};

/* Wait on q->wake (mu held) until a job or stop comes: dozing first, then asleep. */
static void wait_for_work(jobq_t *q)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += DOZE_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int dozing = 1;
    while (!q->head && !q->stop) {
        if (dozing) {
            dozing = pthread_cond_timedwait(&q->wake, &q->mu, &until) == 0;
        } else {
            q->asleep = 1;
            pthread_cond_wait(&q->wake, &q->mu);
        }
    }
    q->asleep = 0;
}

static void *run(void *arg)
{
    jobq_t *q = arg;
    lower_priority();
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (!q->head) wait_for_work(q);
        jobq_job_t *job = q->head;
        if (!job) break;          /* stop, and nothing left */
        q->head = q->tail = NULL; /* every job queued, run without the lock */
        pthread_mutex_unlock(&q->mu);
        while (job) {
            jobq_job_t *next = job->next;
            size_t size = job->size;
            q->fn(q->arg, job);
            pthread_mutex_lock(&q->mu);
            q->queued -= size;
            pthread_cond_broadcast(&q->room);
            pthread_mutex_unlock(&q->mu);
            job = next;
        }
        pthread_mutex_lock(&q->mu);
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
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0) goto no_wake;
    int bad = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
              pthread_cond_init(&q->wake, &attr) != 0;
    pthread_condattr_destroy(&attr);
    if (bad) goto no_wake;
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
    if (q->asleep || q->queued >= q->max_bytes / WAKE_PART) pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->mu);
}

size_t jobq_backlog(jobq_t *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->queued;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void jobq_drain(jobq_t *q)
{
    pthread_mutex_lock(&q->mu);
    if (q->queued) pthread_cond_signal(&q->wake); /* no dozing while the caller waits */
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
