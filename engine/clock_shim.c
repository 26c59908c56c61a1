/* clock_shim.c: the luacrawl binary's clock_gettime(), which libcurl calls in place
 * of the C library's (an executable's symbols come first). Inside a call into
 * curl, a read of the monotonic clock may be answered with the reading kept from
 * an earlier one (loop_answer_clock in loop.h says when and why); every other read
 * goes to the C library's clock_gettime (the vDSO), or, before this file's
 * constructor has found it, to the system call. Only the binary has it, as with
 * poll_shim.c: a library must not replace its host's clock. */
#include <dlfcn.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

typedef int (*clock_fn)(clockid_t, struct timespec *);

static clock_fn libc_clock_gettime;

/* Constructors of the libraries (mimalloc's) run first and may read the clock:
 * until this one has run, the system call answers. */
__attribute__((constructor)) static void find_libc_clock(void)
{
    libc_clock_gettime = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (id == CLOCK_MONOTONIC && loop_answer_clock(ts)) return 0;
    int rc =
        libc_clock_gettime ? libc_clock_gettime(id, ts) : (int)syscall(SYS_clock_gettime, id, ts);
    if (rc == 0 && id == CLOCK_MONOTONIC) loop_keep_clock(ts);
    return rc;
}
