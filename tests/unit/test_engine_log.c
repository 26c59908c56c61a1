/* An engine with a log callback (lc_engine_on_log) writes nothing on stderr: what it
 * has to say goes to the callback, the errors of __gc metamethods too, wherever the
 * collector happens to run them (in a task, while a task's outcome is stored, while
 * a fetch's response is built). The script fetches pages of the fixture HTTP server
 * (tests/fixtures/run.py --http: LC_FIXTURE_PORT) while leaving behind many objects
 * whose __gc raises, set with rawset so that luacrawl.finalizers does not guard them,
 * and raises only outside a task (coroutine.running() is nil there): in the
 * scheduler's own allocations, which a task's pcall cannot catch. Only the embedding
 * API of luacrawl.h is used. */
#include "luacrawl.h"
#include "test.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

struct seen {
    int lines; /* log lines */
    int gc;    /* of them, a __gc error's report */
    int done;  /* the script's last line */
    char first[256];
};

/* lc_log_fn */
static void on_log(lc_engine *e, const char *line, void *userdata)
{
    (void)e;
    struct seen *s = userdata;
    if (s->lines++ == 0) snprintf(s->first, sizeof(s->first), "%s", line);
    if (strstr(line, "error in a __gc metamethod (ignored): ") && strstr(line, "gc boom")) s->gc++;
    if (strstr(line, "fetches done")) s->done++;
}

static const char SCRIPT[] =
    "local lc = require 'luacrawl'\n"
    "local url = 'http://127.0.0.1:%s/site/p/%%d.html'\n"
    "local n = 0\n"
    "-- Only outside tasks: while the scheduler builds a response or stores an outcome.\n"
    "local function raise() if coroutine.running() then return end n = n + 1; error('gc boom ' .. "
    "n) end\n"
    "local function leave_bombs(k)\n"
    "  for _ = 1, k do rawset(getmetatable(newproxy(true)), '__gc', raise) end\n"
    "end\n"
    "local tasks = {}\n"
    "for t = 1, 8 do\n"
    "  tasks[t] = lc.spawn(function()\n"
    "    for i = 1, 25 do\n"
    "      -- A __gc error may be raised into this task's own code: caught here.\n"
    "      pcall(function()\n"
    "        leave_bombs(200)\n"
    "        lc.fetch(url:format(t * 25 + i))\n"
    "      end)\n"
    "    end\n"
    "  end)\n"
    "end\n"
    "for _, t in ipairs(tasks) do pcall(t.join, t) end\n"
    "io.stderr:write('fetches done\\n')\n";

/* Run chunk in e from the host's own poll() loop; the run's status. */
static int run(lc_engine *e, const char *chunk)
{
    if (lc_engine_start_string(e, chunk, "=gc_bombs") != 0) return -1;
    while (!lc_engine_done(e)) {
        struct pollfd p = {lc_engine_fd(e), POLLIN, 0};
        poll(&p, 1, lc_engine_timeout_ms(e));
        lc_engine_step(e);
    }
    return lc_engine_status(e);
}

static void gc_errors_go_to_the_log_callback_not_stderr(void)
{
    char chunk[sizeof(SCRIPT) + 16];
    snprintf(chunk, sizeof(chunk), SCRIPT, getenv("LC_FIXTURE_PORT"));
    FILE *captured = tmpfile(); /* stderr while the engine runs */
    CHECK(captured != NULL);
    if (!captured) return;
    int fd = fileno(captured);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);

    struct seen s = {0};
    lc_engine *e = lc_engine_new();
    CHECK(e != NULL);
    int status = -1;
    if (e) {
        lc_engine_on_log(e, on_log, &s);
        status = run(e, chunk);
        lc_engine_free(e);
    }

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char out[512] = "";
    ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
    fclose(captured);
    if (n > 0) out[n] = '\0';
    CHECK(status == 0);
    CHECK(s.done == 1);
    CHECK(s.gc > 0);
    CHECK(n == 0);
    if (n != 0 || status != 0 || s.gc == 0)
        fprintf(stderr, "status %d, %d log lines (%d __gc), first: %s\nstderr: %s\n", status,
                s.lines, s.gc, s.first, out);
}

int main(void)
{
    if (!getenv("LC_FIXTURE_PORT")) {
        fprintf(stderr, "LC_FIXTURE_PORT is not set: run under tests/fixtures/run.py --http\n");
        return 1;
    }
    RUN(gc_errors_go_to_the_log_callback_not_stderr);
    return test_failures ? 1 : 0;
}
