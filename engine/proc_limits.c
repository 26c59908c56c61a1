/* proc_limits.c: the descriptor limit. Every transfer holds a socket, so a crawl
 * with thousands of them in flight needs more than the usual soft limit of 1024;
 * the hard limit is most often far higher, and raising the soft one to it needs no
 * privilege. */
#include "proc_limits.h"

#include <limits.h>
#include <sys/resource.h>

long proc_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return -1;
    if (rl.rlim_cur != rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) return -1;
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)LONG_MAX ? LONG_MAX
                                                                          : (long)rl.rlim_cur;
}
