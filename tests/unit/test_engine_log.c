/* An engine with a log callback (lc_engine_on_log) writes nothing on stderr: what it
 * has to say goes to the callback, the errors of __gc metamethods too, wherever the
 * collector happens to run them (in a task, while a task's outcome is stored, while
 * a fetch's response is built). The script fetches pages of the fixture HTTP server
 * (tests/fixtures/run.py --http: LC_FIXTURE_PORT) while leaving behind many objects
 * whose __gc raises, set with rawset so that luacrawl.finalizers does not guard them,
 * and raises only outside a task (coroutine.running() is nil there): in the
 * scheduler's own allocations, which a task's pcall cannot catch. The finalizers
 * luacrawl.finalizers guards report through io.stderr, which the callback replaces:
 * theirs reach it too, and stderr without a callback. Only the embedding API of
 * luacrawl.h is used. */
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
    char all[512]; /* every line, each ended with '|' */
};

/* lc_log_fn */
static void on_log(lc_engine *e, const char *line, void *userdata)
{
    (void)e;
    struct seen *s = userdata;
    if (s->lines++ == 0) snprintf(s->first, sizeof(s->first), "%s", line);
    size_t n = strlen(s->all);
    snprintf(s->all + n, sizeof(s->all) - n, "%s|", line);
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

/* What a run wrote on stderr. */
struct out {
    char text[2048];
    ssize_t len;
};

/* Run chunk in a new engine, its log to s (NULL: no log callback), and free it,
 * with stderr in a temporary file meanwhile (into out): the run's status. */
static int run_captured(const char *chunk, struct seen *s, struct out *out)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    if (!file) return -1;
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(file), 2);

    lc_engine *e = lc_engine_new();
    CHECK(e != NULL);
    int status = -1;
    if (e) {
        if (s) lc_engine_on_log(e, on_log, s);
        status = run(e, chunk);
        lc_engine_free(e);
    }

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    out->len = pread(fileno(file), out->text, sizeof(out->text) - 1, 0);
    fclose(file);
    out->text[out->len > 0 ? out->len : 0] = '\0';
    return status;
}

/* Say what a failed check saw. */
static void tell(int status, const struct seen *s, const struct out *out)
{
    fprintf(stderr, "status %d, %d log lines (%d __gc), first: %s\nstderr: %s\n", status, s->lines,
            s->gc, s->first, out->text);
}

static void gc_errors_go_to_the_log_callback_not_stderr(void)
{
    char chunk[sizeof(SCRIPT) + 16];
    snprintf(chunk, sizeof(chunk), SCRIPT, getenv("LC_FIXTURE_PORT"));
    struct seen s = {0};
    struct out out;
    int status = run_captured(chunk, &s, &out);
    CHECK(status == 0);
    CHECK(s.done == 1);
    CHECK(s.gc > 0);
    CHECK(out.len == 0);
    if (out.len != 0 || status != 0 || s.gc == 0) tell(status, &s, &out);
}

/* The finalizers luacrawl.finalizers guards (a __gc set through newproxy's
 * metatable, ffi.gc, debug.setmetatable): each raises once, three collected inside
 * the script, one while the engine is freed. */
static const char GUARDED[] =
    "local ffi = require 'ffi'\n"
    "local function boom(what) return function() error('gc boom ' .. what) end end\n"
    "getmetatable(newproxy(true)).__gc = boom('newproxy')\n"
    "ffi.gc(ffi.new('int[1]'), boom('ffi.gc'))\n"
    "debug.setmetatable(newproxy(), { __gc = boom('setmetatable') })\n"
    "collectgarbage(); collectgarbage()\n"
    "left = newproxy(true)\n"
    "getmetatable(left).__gc = boom('at close')\n"
    "io.stderr:write('fetches done\\n')\n";

static void guarded_gc_errors_go_to_the_log_callback_not_stderr(void)
{
    struct seen s = {0};
    struct out out;
    int status = run_captured(GUARDED, &s, &out);
    CHECK(status == 0);
    CHECK(s.done == 1);
    CHECK(s.gc == 4);
    CHECK(out.len == 0);
    if (out.len != 0 || status != 0 || s.gc != 4) tell(status, &s, &out);
}

/* Without a log callback, the same reports go to stderr, as the binary's do. */
static void guarded_gc_errors_without_a_log_callback_go_to_stderr(void)
{
    struct out out;
    int status = run_captured(GUARDED, NULL, &out);
    int reports = 0;
    for (const char *p = out.text; (p = strstr(p, "error in a __gc metamethod (ignored): ")); p++)
        reports++;
    CHECK(status == 0);
    CHECK(reports == 4);
    if (reports != 4) fprintf(stderr, "stderr: %s\n", out.text);
}

/* A line written while the log's writer is in the middle of one (as a __gc report
 * may be, from an allocation of the writer's own: a __tostring does it here, where
 * it can be placed) comes out whole, and the outer line once. */
static const char NESTED[] = "io.stderr:write('half ')\n"
                             "local inner = setmetatable({}, { __tostring = function()\n"
                             "  io.stderr:write('inner line\\n')\n"
                             "  return 'whole'\n"
                             "end })\n"
                             "io.stderr:write(inner, '\\n')\n"
                             "io.stderr:write('fetches done\\n')\n";

static void a_line_written_during_another_is_a_line_of_its_own(void)
{
    struct seen s = {0};
    struct out out;
    int status = run_captured(NESTED, &s, &out);
    CHECK(status == 0);
    CHECK(strcmp(s.all, "inner line|half whole|fetches done|") == 0);
    CHECK(out.len == 0);
    if (strcmp(s.all, "inner line|half whole|fetches done|") != 0)
        fprintf(stderr, "log: %s\n", s.all);
}

int main(void)
{
    if (!getenv("LC_FIXTURE_PORT")) {
        fprintf(stderr, "LC_FIXTURE_PORT is not set: run under tests/fixtures/run.py --http\n");
        return 1;
    }
    RUN(gc_errors_go_to_the_log_callback_not_stderr);
    RUN(guarded_gc_errors_go_to_the_log_callback_not_stderr);
    RUN(guarded_gc_errors_without_a_log_callback_go_to_stderr);
    RUN(a_line_written_during_another_is_a_line_of_its_own);
    return test_failures ? 1 : 0;
}
