/* main.c: the luacrawl command. Argument handling lives in lua/luacrawl/cli.lua. */
#include "luacrawl.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>

/* A crawl mallocs and frees a body buffer and a 64 KB curl buffer for every page.
 * glibc gives free memory at the top of its heap back to the system past 128 KB
 * and so faults those pages in again a moment later: a fifth of a page's kernel
 * time. Up to TRIM_KEEP bytes stay mapped, and allocations under MMAP_FROM come
 * from the heap (bigger ones, huge bodies, are still mapped on their own and
 * returned when freed). The library leaves malloc alone: its host owns that. */
#define TRIM_KEEP (32 << 20)
#define MMAP_FROM (4 << 20)

int main(int argc, char **argv)
{
    mallopt(M_TRIM_THRESHOLD, TRIM_KEEP);
    mallopt(M_MMAP_THRESHOLD, MMAP_FROM);
    /* curl runs with CURLOPT_NOSIGNAL; a peer closing a socket must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    lc_engine *e = lc_engine_new();
    if (!e) {
        fprintf(stderr, "luacrawl: cannot start the engine\n");
        return 1;
    }
    int status = lc_engine_main(e, argc, argv);
    lc_engine_free(e);
    return status;
}
