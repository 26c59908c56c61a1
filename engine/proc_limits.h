/* proc_limits.h: limits of the process the engine runs in. Only the binary changes
 * them on its own; a library's host decides for its process (luacrawl.h). */
#ifndef LUACRAWL_PROC_LIMITS_H
#define LUACRAWL_PROC_LIMITS_H

/* Raise the soft RLIMIT_NOFILE to the hard limit. Returns the soft limit now in
 * force (it may have been raised already, or be unlimited: then a large number), or
 * -1 with errno set. */
long proc_raise_nofile(void);

#endif
