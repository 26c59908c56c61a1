/* test_jobq.c: the job queue's thread runs jobs in order, off the pusher's thread,
 * at a lower priority than its maker's; a full queue makes the pusher wait. */
#include "jobq.h"
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

struct job {
    jobq_job_t q;
    int n;
};

struct seen {
    int order[64];
    int count;
    int nice; /* of the queue's thread, as its first job saw it */
    int nice_err;
    pthread_t thread;
    atomic_int slow_ms; /* each job sleeps this long */
};

static void run_job(void *arg, jobq_job_t *q)
{
    struct seen *s = arg;
    struct job *j = (struct job *)q;
    if (s->count == 0) {
        errno = 0;
        s->nice = getpriority(PRIO_PROCESS, 0);
        s->nice_err = errno;
        s->thread = pthread_self();
    }
    int ms = atomic_load(&s->slow_ms);
    if (ms) {
        struct timespec t = {0, (long)ms * 1000000L};
        nanosleep(&t, NULL);
    }
    if (s->count < 64) s->order[s->count] = j->n;
    s->count++;
    free(j);
}

static void push(jobq_t *q, int n, size_t size)
{
    struct job *j = calloc(1, sizeof(*j));
    if (!j) abort();
    j->n = n;
    j->q.size = size;
    jobq_push(q, &j->q);
}

static int own_nice(void)
{
    errno = 0;
    int n = getpriority(PRIO_PROCESS, 0);
    CHECK(errno == 0);
    return n;
}

static void in_order_off_thread(void)
{
    struct seen s = {0};
    jobq_t *q = jobq_new(run_job, &s, 1 << 20);
    CHECK(q != NULL);
    if (!q) return;
    for (int i = 0; i < 50; i++)
        push(q, i, 100);
    jobq_drain(q);
    CHECK(s.count == 50);
    CHECK(jobq_backlog(q) == 0);
    for (int i = 0; i < 50; i++)
        CHECK(s.order[i] == i);
    CHECK(!pthread_equal(s.thread, pthread_self()));
    jobq_free(q);
}

/* The queue's thread: nice 10 more than the thread that made the queue, at most 19. */
static int nice_of_queue_made_at(int maker_nice)
{
    if (maker_nice != own_nice()) CHECK(setpriority(PRIO_PROCESS, 0, maker_nice) == 0);
    struct seen s = {0};
    jobq_t *q = jobq_new(run_job, &s, 1 << 20);
    CHECK(q != NULL);
    if (!q) return -100;
    push(q, 0, 1);
    jobq_drain(q);
    CHECK(s.nice_err == 0);
    jobq_free(q);
    return s.nice;
}

static void *maker_at_15(void *arg)
{
    int *nice = arg; /* in: the test's own (a value above 15 stays), out: the queue's */
    *nice = nice_of_queue_made_at(*nice > 15 ? *nice : 15);
    return NULL;
}

static void lower_priority(void)
{
    int base = own_nice();
    int expect = base + 10 > 19 ? 19 : base + 10;
    CHECK(nice_of_queue_made_at(base) == expect);
    CHECK(own_nice() == base); /* the maker's own priority is left as it was */
    /* A maker already at 15 (a thread of its own: the nice value is per thread on
     * Linux, and this one's cannot go back down without privilege). */
    int got = base;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, maker_at_15, &got) == 0);
    pthread_join(t, NULL);
    CHECK(got == 19);
    CHECK(own_nice() == base);
}

/* A push into a full queue waits until the thread has run half of it. */
static void full_queue_waits(void)
{
    struct seen s = {0};
    atomic_store(&s.slow_ms, 20);
    jobq_t *q = jobq_new(run_job, &s, 1000);
    CHECK(q != NULL);
    if (!q) return;
    for (int i = 0; i < 10; i++) {
        push(q, i, 400);
        CHECK(jobq_backlog(q) <= 1000); /* never more than the bound queued */
    }
    jobq_drain(q);
    CHECK(s.count == 10);
    for (int i = 0; i < 10; i++)
        CHECK(s.order[i] == i);
    jobq_free(q);
}

int main(void)
{
    RUN(in_order_off_thread);
    RUN(lower_priority);
    RUN(full_queue_waits);
    return test_failures ? 1 : 0;
}
