/* main.c: the luacrawl command. Argument handling lives in lua/luacrawl/cli.lua. */
#include "luacrawl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#ifdef LUACRAWL_MIMALLOC
#include <mimalloc.h>
#include <stdlib.h>

/* The binary's malloc is mimalloc (CMakeLists.txt): a crawl mallocs and frees dozens
 * of blocks a page (curl's 64 KB buffer, its header copies, the body, the link
 * scan's buffers), and glibc's allocator, which sweeps its fast bins on every
 * malloc of 1 KB or more, took a noticeable share of a page's time; mimalloc does
 * not (docs/benchmarks.md has the figures). It serves the whole process
 * only when linked before the C library: say so if the build got that wrong. */
static void setup_allocator(void)
{
    void *p = calloc(1, 64);
    if (p && !mi_is_in_heap_region(p))
        fprintf(stderr, "luacrawl: warning: malloc is not mimalloc's (link order)\n");
    free(p);
}
#else
#include <malloc.h>

/* Built without mimalloc (with the sanitizers): glibc's malloc, tuned. A crawl
 * mallocs and frees a body buffer and a 64 KB curl buffer for every page. glibc
 * gives free memory at the top of its heap back to the system past 128 KB and so
 * faults those pages in again a moment later, a good part of a page's kernel time. Up
 * to TRIM_KEEP bytes stay mapped, and allocations under MMAP_FROM come from the
 * heap (bigger ones, huge bodies, are still mapped on their own and returned when
 * freed). The library leaves malloc alone: its host owns that. */
#define TRIM_KEEP (32 << 20)
#define MMAP_FROM (4 << 20)

static void setup_allocator(void)
{
    mallopt(M_TRIM_THRESHOLD, TRIM_KEEP);
    mallopt(M_MMAP_THRESHOLD, MMAP_FROM);
}
#endif

/* A crawl catches SIGINT and SIGTERM from the moment it starts (lc.signals.watch).
 * A process started in the background by a non-interactive shell inherits SIGINT
 * ignored, and the kernel drops an ignored signal at once unless it is blocked: one
 * sent before the crawl began watching was lost, and the crawl ran to its end.
 * Blocked from the start, it waits in the queue for the watch; in a script that
 * never watches it, it stays as inherited, ignored. */
static void keep_ignored_signals(void)
{
    static const int watched[] = {SIGINT, SIGTERM};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
        struct sigaction sa;
        if (sigaction(watched[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            sigaddset(&set, watched[i]);
    }
    sigprocmask(SIG_BLOCK, &set, NULL);
}

int main(int argc, char **argv)
{
    keep_ignored_signals();
    setup_allocator();
    /* Thousands of transfers in flight each hold a socket (luacrawl.h). */
    lc_raise_fd_limit();
    /* curl runs with CURLOPT_NOSIGNAL; a peer closing a socket must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    lc_engine *e = lc_engine_new();
    if (!e) {
        fprintf(stderr, "luacrawl: cannot start the engine\n");
        return 1;
    }
    int status = lc_engine_main(e, argc, argv);
    lc_engine_free(e);
    /* What is still buffered for stdout (a script's prints) is written now; output
     * that could not be written (a full disk) is a failure, not exit status 0. The
     * commands that write stdout themselves report their own failures first. */
    errno = 0;
    int flushed = fflush(stdout) == 0;
    if ((!flushed || ferror(stdout)) && status == 0) {
        fprintf(stderr, "luacrawl: stdout: %s\n",
                !flushed && errno ? strerror(errno) : "write error");
        status = 4;
    }
    return status;
}
