/* store_lock.c: who may write a state. A writer holds flock(LOCK_EX) on the state file
 * from open to close, so a second crawl is refused while readers (luacrawl state) come
 * and go under SQLite's own locks (WAL, locking_mode=NORMAL). A reader only probes it.
 *
 * The fds of those locks are kept in a table of this process's open states, one per
 * file, and closed when the last store of the file closes. Closing any descriptor of
 * a file drops every POSIX lock the process holds on it, SQLite's included (its shared
 * lock on a WAL database is what stops another connection from taking the file as its
 * last user and removing the WAL): so a descriptor of ours is never closed while a
 * connection of this process has the file open. */
#include "store_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct store_lock {
    struct store_lock *next;
    dev_t dev;
    ino_t ino;
    int fd;
    int writers; /* 0 or 1: the flock is held */
    int users;   /* stores of this process over the file */
};

static pthread_mutex_t table_mutex = PTHREAD_MUTEX_INITIALIZER;
static store_lock_t *table;

static store_lock_t *find(dev_t dev, ino_t ino)
{
    for (store_lock_t *l = table; l; l = l->next)
        if (l->dev == dev && l->ino == ino) return l;
    return NULL;
}

/* The entry of path's file, made (with its descriptor) if this process has none; NULL
 * and *err when the file cannot be opened. create: a new file is made (empty). */
static store_lock_t *entry_of(const char *path, int create, store_err_t *err)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        store_lock_t *l = find(st.st_dev, st.st_ino);
        if (l) return l;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    if (fd < 0) {
        int e = errno;
        set_err(err, kind_of(SQLITE_CANTOPEN, e), "state %s cannot be opened: %s", path,
                strerror(e));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd); /* no entry: this process has no connection over it */
        set_err(err, STORE_IO, "state %s: %s", path, strerror(e));
        return NULL;
    }
    store_lock_t *l = find(st.st_dev, st.st_ino);
    if (l) {
        /* The path was replaced, between the stat and the open, by a file this
         * process has open under another name. Closing fd would drop the locks of
         * that file's connections: it is left open (this does not happen in use). */
        return set_err(err, STORE_IO, "state %s was replaced while it was being opened", path),
               NULL;
    }
    l = calloc(1, sizeof(*l));
    if (!l) {
        close(fd);
        set_err(err, STORE_NOMEM, "state %s: out of memory", path);
        return NULL;
    }
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    l->fd = fd;
    l->next = table;
    table = l;
    return l;
}

static void drop_entry(store_lock_t *l)
{
    if (l->users > 0 || l->writers > 0) return;
    for (store_lock_t **p = &table; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    close(l->fd);
    free(l);
}

/* The pid that holds the flock of the file (dev, ino), from /proc/locks; 0 when not
 * found (no /proc, another pid namespace). */
static long flock_holder(dev_t dev, ino_t ino)
{
    FILE *f = fopen("/proc/locks", "re");
    if (!f) return 0;
    char line[256];
    long found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
        char type[16], mode[16];
        long pid;
        unsigned maj, min;
        unsigned long long i;
        /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters start "1: ->". */
        if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%llu", type, mode, &pid, &maj, &min, &i) ==
                6 &&
            strcmp(type, "FLOCK") == 0 && strcmp(mode, "WRITE") == 0 && maj == major(dev) &&
            min == minor(dev) && i == (unsigned long long)ino)
            found = pid;
    }
    fclose(f);
    return found;
}

store_lock_t *store_lock_take(const char *path, int writer, int create, long *holder,
                              store_err_t *err)
{
    pthread_mutex_lock(&table_mutex);
    store_lock_t *l = entry_of(path, create, err);
    if (!l) goto done;
    *holder = 0;
    if (l->writers > 0) {
        *holder = (long)getpid();
        if (writer) {
            set_err(err, STORE_LOCKED,
                    "state %s is in use: another crawl has it open (in this process)", path);
            drop_entry(l);
            l = NULL;
            goto done;
        }
    } else if (flock(l->fd, (writer ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
        int e = errno;
        if (e != EWOULDBLOCK) {
            set_err(err, STORE_IO, "state %s cannot be locked: %s", path, strerror(e));
            drop_entry(l);
            l = NULL;
            goto done;
        }
        long pid = flock_holder(l->dev, l->ino);
        if (writer) {
            if (pid)
                set_err(err, STORE_LOCKED,
                        "state %s is in use: another crawl has it open (pid %ld)", path, pid);
            else
                set_err(err, STORE_LOCKED, "state %s is in use: another crawl has it open", path);
            drop_entry(l);
            l = NULL;
            goto done;
        }
        *holder = pid ? pid : -1;
    } else if (!writer) {
        flock(l->fd, LOCK_UN); /* a reader's probe: nobody writes; it keeps no lock */
    }
    l->users++;
    if (writer) l->writers = 1;
done:
    pthread_mutex_unlock(&table_mutex);
    return l;
}

void store_lock_release(store_lock_t *l, int writer)
{
    if (!l) return;
    pthread_mutex_lock(&table_mutex);
    if (writer && l->writers) {
        flock(l->fd, LOCK_UN);
        l->writers = 0;
    }
    l->users--;
    drop_entry(l);
    pthread_mutex_unlock(&table_mutex);
}
