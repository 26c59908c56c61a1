/* browser.c: the Chromium child of browser.h: started in a process group of its own
 * with a parent-death signal, a fresh profile folder, two non-blocking pipes on the
 * loop (messages framed by NUL bytes, writes queued while the pipe is full). */
#include "browser.h"

#include "buf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define READ_CHUNK 65536
#define MAX_ARGS 256

/* The flags every browser gets: no first-run, update, sync or background traffic of
 * its own (only the pages' requests, which the renders intercept), no GPU. */
static const char *const base_flags[] = {
    "--headless",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-gpu",
    "--disable-extensions",
    "--mute-audio",
    "--no-default-browser-check",
    "--disable-breakpad",
};
#define NBASE (int)(sizeof(base_flags) / sizeof(base_flags[0]))

struct browser {
    loop_t *loop;
    pid_t pid; /* also the process group; 0 once reaped */
    int to_fd, from_fd;
    struct buf in, out;
    size_t out_off; /* bytes of out already written */
    browser_msg_fn on_msg;
    browser_end_fn on_end;
    void *arg;
    char profile[4096];
};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* Kill the group, reap, close, remove the profile: what every ending shares. Returns
 * the browser's wait status (-1 when it was reaped before). */
static int teardown(browser_t *b)
{
    int status = -1;
    if (b->pid > 0) {
        kill(-b->pid, SIGKILL);
        kill(b->pid, SIGKILL);
        while (waitpid(b->pid, &status, 0) < 0 && errno == EINTR) {
        }
        b->pid = 0;
    }
    for (int i = 0; i < 2; i++) {
        int *fd = i ? &b->from_fd : &b->to_fd;
        if (*fd >= 0) {
            loop_watch(b->loop, *fd, 0, NULL, NULL);
            close(*fd);
            *fd = -1;
        }
    }
    if (b->profile[0]) {
        nftw(b->profile, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        b->profile[0] = '\0';
    }
    return status;
}

static void end(browser_t *b, const char *what)
{
    if (b->pid <= 0) return;
    int status = teardown(b);
    char why[160];
    if (status >= 0 && WIFSIGNALED(status))
        snprintf(why, sizeof why, "%s (killed by signal %d)", what, WTERMSIG(status));
    else if (status >= 0 && WIFEXITED(status))
        snprintf(why, sizeof why, "%s (exit status %d)", what, WEXITSTATUS(status));
    else
        snprintf(why, sizeof why, "%s", what);
    b->on_end(b->arg, why);
}

/* Hand over every whole message in the input, keep the partial one. */
static void frame(browser_t *b)
{
    size_t start = 0;
    for (;;) {
        const char *nul = memchr(b->in.p + start, '\0', b->in.n - start);
        if (!nul) break;
        size_t len = (size_t)(nul - (b->in.p + start));
        b->on_msg(b->arg, b->in.p + start, len);
        if (b->pid <= 0) return; /* the callback killed it */
        start += len + 1;
    }
    memmove(b->in.p, b->in.p + start, b->in.n - start);
    b->in.n -= start;
}

static void on_read(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)events;
    browser_t *b = arg;
    for (;;) {
        if (buf_reserve(&b->in, READ_CHUNK) < 0) {
            end(b, "out of memory reading from the browser");
            return;
        }
        ssize_t n = read(fd, b->in.p + b->in.n, READ_CHUNK);
        if (n > 0) {
            b->in.n += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (b->in.n) frame(b);
        end(b, n == 0 ? "the browser exited" : "reading from the browser failed");
        return;
    }
    frame(b);
}

static int flush(browser_t *b);

static void on_write(loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    browser_t *b = arg;
    if (flush(b) < 0) end(b, "writing to the browser failed");
}

/* Write what the pipe takes; watch for room when some is left. 0, or -1 on failure. */
static int flush(browser_t *b)
{
    while (b->out_off < b->out.n) {
        ssize_t n = write(b->to_fd, b->out.p + b->out_off, b->out.n - b->out_off);
        if (n > 0) {
            b->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN)
            return loop_watch(b->loop, b->to_fd, LOOP_WRITE, on_write, b) < 0 ? -1 : 0;
        return -1;
    }
    b->out.n = b->out_off = 0;
    return loop_watch(b->loop, b->to_fd, 0, NULL, NULL) < 0 && errno != ENOENT ? -1 : 0;
}

int browser_send(browser_t *b, const char *msg, size_t len)
{
    if (b->pid <= 0) return -1;
    if (buf_append(&b->out, msg, len) < 0 || buf_append(&b->out, "", 1) < 0) return -1;
    if (b->out.n - b->out_off > len + 1) return 0; /* queued behind others: on_write */
    if (flush(b) == 0) return 0;
    end(b, "writing to the browser failed");
    return -1;
}

/* In the child, between fork and exec: only async-signal-safe calls. Moves the
 * pipe ends to fds 3 and 4 (by way of fds above 9, so that neither overwrites the
 * other), resets what exec would keep (the signal mask, ignored signals), joins a
 * group of its own and asks to be killed when the engine dies. */
static void child(const char *path, char *const *argv, char *const *envp, int rd, int wr, int errfd,
                  pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the engine died before prctl */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    int hr = fcntl(rd, F_DUPFD, 10), hw = fcntl(wr, F_DUPFD, 10);
    int null = open("/dev/null", O_RDWR);
    if (hr < 0 || hw < 0 || null < 0 || dup2(hr, 3) < 0 || dup2(hw, 4) < 0 || dup2(null, 0) < 0 ||
        dup2(null, 1) < 0 || dup2(null, 2) < 0)
        goto fail;
    execve(path, argv, envp);
fail:;
    int e = errno;
    ssize_t ignored = write(errfd, &e, sizeof e);
    (void)ignored;
    _exit(127);
}

/* The argv: path, the base flags, the profile, --no-sandbox as root, then args. */
static int make_argv(const char **argv, const char *path, const char *profile_flag,
                     const char *const *args, int nargs)
{
    int n = 0;
    argv[n++] = path;
    for (int i = 0; i < NBASE; i++)
        argv[n++] = base_flags[i];
    argv[n++] = profile_flag;
    if (geteuid() == 0) argv[n++] = "--no-sandbox"; /* Chromium refuses its sandbox as root */
    for (int i = 0; i < nargs && n < MAX_ARGS - 1; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return n;
}

static int make_profile(browser_t *b, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    snprintf(b->profile, sizeof b->profile, "%s/luacrawl-chromium-XXXXXX", tmp);
    if (mkdtemp(b->profile)) return 0;
    snprintf(err, errlen, "cannot make the browser's profile folder in %s: %s", tmp,
             strerror(errno));
    b->profile[0] = '\0';
    return -1;
}

/* The browser's environment: the engine's, less LD_PRELOAD. What is preloaded into
 * luacrawl (a sanitizer's runtime in the tests, a host's malloc) is not meant for
 * Chromium, which the sanitizer runtimes make hang. NULL when out of memory. */
static char **browser_env(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = malloc((n + 1) * sizeof(*env));
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) env[k++] = environ[i];
    env[k] = NULL;
    return env;
}

/* fork and exec; the exec's failure comes back on a close-on-exec pipe (read 0 bytes:
 * exec worked). 0, or -1 with err set. */
static int spawn(browser_t *b, const char *path, const char **argv, int p_in[2], int p_out[2],
                 char *err, size_t errlen)
{
    int ep[2];
    char **env = browser_env();
    if (!env) {
        snprintf(err, errlen, "cannot start the browser: out of memory");
        return -1;
    }
    if (pipe2(ep, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
        free(env);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) child(path, (char *const *)argv, env, p_in[0], p_out[1], ep[1], parent);
    free(env);
    close(ep[1]);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start the browser: fork: %s", strerror(errno));
        close(ep[0]);
        return -1;
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    b->pid = pid;
    int e = 0;
    ssize_t n;
    while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(ep[0]);
    if (n > 0) {
        snprintf(err, errlen, "cannot run the browser %s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

browser_t *browser_start(loop_t *loop, const char *path, const char *const *args, int nargs,
                         browser_msg_fn on_msg, browser_end_fn on_end, void *arg, char *err,
                         size_t errlen)
{
    int p_in[2] = {-1, -1}, p_out[2] = {-1, -1};
    browser_t *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "out of memory starting the browser");
        return NULL;
    }
    b->loop = loop, b->on_msg = on_msg, b->on_end = on_end, b->arg = arg;
    b->to_fd = b->from_fd = -1;
    if (make_profile(b, err, errlen) < 0) goto fail;
    if (pipe2(p_in, O_CLOEXEC) < 0 || pipe2(p_out, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot make the browser's pipes: %s", strerror(errno));
        goto fail;
    }
    char profile_flag[4200];
    snprintf(profile_flag, sizeof profile_flag, "--user-data-dir=%s", b->profile);
    const char *argv[MAX_ARGS];
    make_argv(argv, path, profile_flag, args, nargs);
    int rc = spawn(b, path, argv, p_in, p_out, err, errlen);
    close(p_in[0]), close(p_out[1]);
    p_in[0] = p_out[1] = -1;
    b->to_fd = p_in[1], b->from_fd = p_out[0];
    p_in[1] = p_out[0] = -1;
    if (rc < 0) goto fail;
    if (fcntl(b->to_fd, F_SETFL, O_NONBLOCK) < 0 || fcntl(b->from_fd, F_SETFL, O_NONBLOCK) < 0 ||
        loop_watch(loop, b->from_fd, LOOP_READ, on_read, b) < 0) {
        snprintf(err, errlen, "cannot watch the browser's pipes: %s", strerror(errno));
        goto fail;
    }
    return b;
fail:
    for (int i = 0; i < 2; i++) {
        if (p_in[i] >= 0) close(p_in[i]);
        if (p_out[i] >= 0) close(p_out[i]);
    }
    browser_free(b);
    return NULL;
}

/* Field 24 of /proc/PID/stat (rss, in pages) when field 5 (the group) is pgid. */
static size_t group_pages(const char *pid, pid_t pgid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *p = strrchr(line, ')'); /* the command may hold spaces and parentheses */
    long long pgrp = 0, rss = 0;
    /* After the command: field 3 (state) on; 5 is the group, 24 the rss. */
    for (int field = 3; p && field <= 24; field++) {
        p = strchr(p, ' ');
        if (!p) break;
        p++;
        if (field == 5) pgrp = strtoll(p, NULL, 10);
        if (field == 24) rss = strtoll(p, NULL, 10);
    }
    return pgrp == pgid && rss > 0 ? (size_t)rss : 0;
}

size_t browser_rss(const browser_t *b)
{
    if (!b || b->pid <= 0) return 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    size_t pages = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9') pages += group_pages(e->d_name, b->pid);
    closedir(d);
    return pages * (size_t)sysconf(_SC_PAGESIZE);
}

pid_t browser_pid(const browser_t *b)
{
    return b->pid;
}

const char *browser_profile(const browser_t *b)
{
    return b->profile;
}

int browser_alive(const browser_t *b)
{
    return b->pid > 0;
}

void browser_kill(browser_t *b)
{
    if (b) teardown(b);
}

void browser_free(browser_t *b)
{
    if (!b) return;
    teardown(b);
    buf_free(&b->in);
    buf_free(&b->out);
    free(b);
}
