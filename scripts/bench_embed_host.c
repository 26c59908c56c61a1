/* bench_embed_host.c (scripts/bench-embed): `luacrawl crawl ARGS...` run by an
 * engine that a host steps from its own poll() loop, as examples/embed/poll_host.c
 * does, to measure what driving the engine from outside costs.
 *   bench_embed_host ARGS...      (the arguments of `luacrawl crawl`)
 * The script asks the host for its arguments (lc.host.args()), then runs the CLI's
 * crawl (luacrawl.cli_crawl) as its main task. Exit status: 0, or 1 when the crawl
 * failed. Prints the number of steps and of polls that timed out on stderr. */
#include <luacrawl.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char script[] =
    "local status = require('luacrawl.cli_crawl').main(require('luacrawl').host.args())\n"
    "if status ~= 0 then error('luacrawl crawl: exit status ' .. status, 0) end\n";

struct args {
    int argc;
    char **argv;
};

/* lc.host.args() -> the crawl's arguments, a JSON array of strings. */
static int host_args(lc_engine *e, const char *json, char **result, void *userdata)
{
    (void)e, (void)json;
    const struct args *a = userdata;
    size_t cap = 3;
    for (int i = 0; i < a->argc; i++)
        cap += 6 * strlen(a->argv[i]) + 3;
    char *out = malloc(cap), *p = out;
    if (!out) return 1;
    *p++ = '[';
    for (int i = 0; i < a->argc; i++) {
        if (i) *p++ = ',';
        *p++ = '"';
        for (const unsigned char *s = (const unsigned char *)a->argv[i]; *s; s++) {
            if (*s == '"' || *s == '\\')
                p += sprintf(p, "\\%c", *s);
            else if (*s < 0x20)
                p += sprintf(p, "\\u%04x", *s);
            else
                *p++ = (char)*s;
        }
        *p++ = '"';
    }
    *p++ = ']';
    *p = '\0';
    *result = out;
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    lc_raise_fd_limit();
    lc_engine *e = lc_engine_new();
    if (!e) return 1;
    struct args a = {argc - 1, argv + 1};
    if (lc_engine_register(e, "args", host_args, &a) != 0 ||
        lc_engine_start_string(e, script, "=bench_embed") != 0)
        return 1;
    long steps = 0, idle = 0;
    while (!lc_engine_done(e)) {
        struct pollfd p = {.fd = lc_engine_fd(e), .events = POLLIN};
        int r = poll(&p, 1, lc_engine_timeout_ms(e));
        if (r < 0 && errno != EINTR) {
            perror("poll");
            return 1;
        }
        if (r == 0) idle++;
        steps++;
        lc_engine_step(e);
    }
    fprintf(stderr, "bench_embed_host: %ld steps, %ld polls timed out\n", steps, idle);
    int status = lc_engine_status(e);
    lc_engine_free(e);
    return status;
}
