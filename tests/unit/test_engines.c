/* Engines are independent: two in one process, one after another, both alive on one
 * thread, and on two threads at the same time. Each crawls pages of the fixture HTTP
 * server (tests/fixtures/run.py --http: LC_FIXTURE_PORT) under limits of its own, so
 * that state shared between engines shows: one engine's max_task_cpu or bodies
 * reaching the other, a library set up or torn down by one under the other.
 * Only the embedding API of luacrawl.h and the Lua C API are used. */
#include "luacrawl.h"
#include "test.h"

#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <string.h>

#define MB (1024.0 * 1024.0)

/* What an engine is asked to do. */
struct job {
    const char *host;       /* the fixture's address this engine fetches from */
    int first, pages;       /* the site's pages it fetches: first .. first + pages - 1 */
    double max_memory;      /* bytes */
    double max_task_cpu;    /* seconds */
    int holds, hold_size;   /* bodies it keeps alive, and their size */
    double busy;            /* seconds of wall time its busy task runs unless stopped */
    pthread_barrier_t *met; /* both engines at the same step (NULL: one thread) */
    int synced;             /* sync() calls made */
};

#define SYNCS 4 /* the sync() calls in MAIN */

/* What it saw. */
struct report {
    char error[512]; /* the script's error, "" when it ran through */
    int pages_ok;
    double completed;   /* lc.stats().http_completed */
    double held_delta;  /* lc.memory() grew by this while it held its bodies */
    double limit;       /* lc.memory()'s limit */
    int busy_stopped;   /* the busy task failed for max_task_cpu */
    char busy_err[256]; /* its error */
};

/* Run before MAIN, in a separate call: the limits are set in every engine before
 * any runs. */
static const char SETUP[] = "local lc = require 'luacrawl'\n"
                            "lc.configure { max_memory = job.max_memory,\n"
                            "               max_task_cpu = job.max_task_cpu }\n";

static const char MAIN[] =
    "local lc = require 'luacrawl'\n"
    "require 'luacrawl.html'\n"
    "local base = 'http://' .. job.host .. ':' .. job.port\n"
    "report = { pages_ok = 0 }\n"
    "held = {}\n"
    "lc.run(function()\n"
    "  local tasks = {}\n"
    "  for i = job.first, job.first + job.pages - 1 do\n"
    "    tasks[#tasks + 1] = lc.spawn(function()\n"
    "      local res = lc.fetch(base .. '/site/p/' .. i .. '.html')\n"
    "      assert(res.status == 200, 'status ' .. res.status)\n"
    "      local doc = res:html()\n"
    "      assert(doc:title() == 'Page ' .. i, 'title ' .. tostring(doc:title()))\n"
    "      local next_page = base .. '/site/p/' .. (i + 1) .. '.html'\n"
    "      local found = false\n"
    "      for _, link in ipairs(doc:links()) do found = found or link == next_page end\n"
    "      assert(found, 'no link to ' .. next_page)\n"
    "      report.pages_ok = report.pages_ok + 1\n"
    "    end)\n"
    "  end\n"
    "  for _, t in ipairs(tasks) do t:join() end\n"
    "  report.completed = lc.stats().http_completed\n"
    "  sync()\n"
    /* Bodies: counted in this engine's memory, and only there. */
    "  collectgarbage()\n"
    "  local before = lc.memory()\n"
    "  for j = 1, job.holds do\n"
    "    held[j] = lc.fetch(base .. '/large?bytes=' .. job.hold_size,\n"
    "                       { max_size = job.hold_size })\n"
    "    assert(#held[j]._body == job.hold_size, 'body of ' .. #held[j]._body)\n"
    "  end\n"
    "  sync() -- the other engine holds its bodies too\n"
    "  collectgarbage()\n"
    "  local after, limit = lc.memory()\n"
    "  report.held_delta, report.limit = after - before, limit\n"
    "  sync()\n"
    /* A task that never waits: stopped by this engine's max_task_cpu, or not. */
    "  local busy = lc.spawn(function()\n"
    "    local stop, n = lc.now() + job.busy, 0\n"
    "    while lc.now() < stop do n = n + 1 end\n"
    "    return n\n"
    "  end)\n"
    "  local ok, err = pcall(busy.join, busy)\n"
    "  report.busy_stopped = not ok and tostring(err):find('max_task_cpu', 1, true) ~= nil\n"
    "  report.busy_err = not ok and tostring(err) or ''\n"
    "  sync()\n"
    "end)\n";

/* sync(): wait for the other engine's thread to reach its sync() (a barrier), or
 * nothing when the engines share one thread. Blocking the engine's loop is the
 * point: each engine has its own. */
static void sync_job(struct job *j)
{
    j->synced++;
    if (j->met) pthread_barrier_wait(j->met);
}

static int l_sync(lua_State *L)
{
    sync_job(lua_touserdata(L, lua_upvalueindex(1)));
    return 0;
}

static void set_job(lua_State *L, struct job *j)
{
    lua_createtable(L, 0, 10);
    lua_pushstring(L, j->host);
    lua_setfield(L, -2, "host");
    lua_pushstring(L, getenv("LC_FIXTURE_PORT"));
    lua_setfield(L, -2, "port");
    lua_pushinteger(L, j->first);
    lua_setfield(L, -2, "first");
    lua_pushinteger(L, j->pages);
    lua_setfield(L, -2, "pages");
    lua_pushnumber(L, j->max_memory);
    lua_setfield(L, -2, "max_memory");
    lua_pushnumber(L, j->max_task_cpu);
    lua_setfield(L, -2, "max_task_cpu");
    lua_pushinteger(L, j->holds);
    lua_setfield(L, -2, "holds");
    lua_pushinteger(L, j->hold_size);
    lua_setfield(L, -2, "hold_size");
    lua_pushnumber(L, j->busy);
    lua_setfield(L, -2, "busy");
    lua_setglobal(L, "job");
    lua_pushlightuserdata(L, j);
    lua_pushcclosure(L, l_sync, 1);
    lua_setglobal(L, "sync");
}

static double number_field(lua_State *L, const char *k)
{
    lua_getfield(L, -1, k);
    double v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

/* Run chunk in e; on failure keep its error in r. */
static int run(lc_engine *e, const char *chunk, struct report *r)
{
    lua_State *L = lc_engine_lua(e);
    if (luaL_dostring(L, chunk) == 0) return 0;
    snprintf(r->error, sizeof(r->error), "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
}

static void read_report(lc_engine *e, struct report *r)
{
    lua_State *L = lc_engine_lua(e);
    lua_getglobal(L, "report");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    r->pages_ok = (int)number_field(L, "pages_ok");
    r->completed = number_field(L, "completed");
    r->held_delta = number_field(L, "held_delta");
    r->limit = number_field(L, "limit");
    lua_getfield(L, -1, "busy_stopped");
    r->busy_stopped = lua_toboolean(L, -1);
    lua_getfield(L, -2, "busy_err");
    snprintf(r->busy_err, sizeof(r->busy_err), "%s",
             lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 3);
}

/* Engine A keeps a tight CPU limit and a loose memory limit with many bodies held;
 * engine B the other way round. Either one's bodies would push B over its limit;
 * A's limit (or B's) in the other engine would stop B's busy task, or let A's run. */
static struct job job_a(void)
{
    struct job j = {.host = "127.0.0.1",
                    .first = 0,
                    .pages = 20,
                    .max_memory = 512 * MB,
                    .max_task_cpu = 1,
                    .holds = 3,
                    .hold_size = 8 << 20,
                    .busy = 30,
                    .met = NULL};
    return j;
}

static struct job job_b(void)
{
    struct job j = {.host = "127.0.0.2",
                    .first = 100,
                    .pages = 20,
                    .max_memory = 24 * MB,
                    .max_task_cpu = 60,
                    .holds = 1,
                    .hold_size = 2 << 20,
                    .busy = 1.5,
                    .met = NULL};
    return j;
}

static void check_report(const struct job *j, const struct report *r)
{
    double held = (double)j->holds * j->hold_size;
    if (r->error[0]) fprintf(stderr, "engine on %s: %s\n", j->host, r->error);
    CHECK(r->error[0] == 0);
    CHECK(r->pages_ok == j->pages);
    /* Its own transfers only: the pages and the bodies it held. */
    CHECK(r->completed == j->pages);
    CHECK(r->limit == j->max_memory);
    /* Its bodies and little else (the other engine holds 2 MB or more): the heap
     * may also have shrunk by a little garbage the first collection left. */
    if (r->held_delta < held - MB / 4 || r->held_delta >= held + MB)
        fprintf(stderr, "engine on %s: memory grew by %.0f bytes holding %.0f\n", j->host,
                r->held_delta, held);
    CHECK(r->held_delta >= held - MB / 4);
    CHECK(r->held_delta < held + MB);
    if (j->max_task_cpu < j->busy) {
        if (!r->busy_stopped) fprintf(stderr, "busy task on %s: '%s'\n", j->host, r->busy_err);
        CHECK(r->busy_stopped);
    } else {
        if (r->busy_err[0]) fprintf(stderr, "busy task on %s: '%s'\n", j->host, r->busy_err);
        CHECK(r->busy_err[0] == 0);
    }
}

/* One engine's whole life: new, setup, main, report, free. An engine that failed
 * still meets the other at every step, which would wait for it forever. */
static void engine_life(struct job *j, struct report *r)
{
    memset(r, 0, sizeof(*r));
    lc_engine *e = lc_engine_new();
    if (!e) {
        snprintf(r->error, sizeof(r->error), "lc_engine_new failed");
    } else {
        set_job(lc_engine_lua(e), j);
        if (run(e, SETUP, r) == 0 && run(e, MAIN, r) == 0) read_report(e, r);
    }
    while (j->synced < SYNCS)
        sync_job(j);
    lc_engine_free(e);
}

static void engines_one_after_another_each_crawl(void)
{
    struct job jobs[3] = {job_a(), job_b(), job_a()};
    for (int i = 0; i < 3; i++) {
        struct report r;
        engine_life(&jobs[i], &r);
        check_report(&jobs[i], &r);
    }
}

static void two_engines_alive_on_one_thread_keep_their_own_limits(void)
{
    struct job ja = job_a(), jb = job_b();
    struct report ra, rb;
    memset(&ra, 0, sizeof(ra));
    memset(&rb, 0, sizeof(rb));
    lc_engine *a = lc_engine_new(), *b = lc_engine_new();
    CHECK(a && b);
    if (!a || !b) goto done;
    set_job(lc_engine_lua(a), &ja);
    set_job(lc_engine_lua(b), &jb);
    /* Both configured before either runs, B last; A runs while B holds nothing
     * yet, then B while A's bodies are still held (in A's globals). */
    if (run(a, SETUP, &ra) == 0 && run(b, SETUP, &rb) == 0) {
        if (run(a, MAIN, &ra) == 0) read_report(a, &ra);
        if (run(b, MAIN, &rb) == 0) read_report(b, &rb);
    }
    check_report(&ja, &ra);
    check_report(&jb, &rb);
done:
    lc_engine_free(a);
    lc_engine_free(b);
}

struct thread_arg {
    struct job job;
    struct report report;
};

static void *thread_main(void *p)
{
    struct thread_arg *t = p;
    engine_life(&t->job, &t->report);
    return NULL;
}

static void two_engines_on_two_threads_run_at_once(void)
{
    pthread_barrier_t met;
    CHECK(pthread_barrier_init(&met, NULL, 2) == 0);
    struct thread_arg ta = {.job = job_a()}, tb = {.job = job_b()};
    ta.job.met = tb.job.met = &met;
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, thread_main, &ta) == 0);
    CHECK(pthread_create(&b, NULL, thread_main, &tb) == 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_barrier_destroy(&met);
    check_report(&ta.job, &ta.report);
    check_report(&tb.job, &tb.report);
}

int main(void)
{
    if (!getenv("LC_FIXTURE_PORT")) {
        fprintf(stderr, "LC_FIXTURE_PORT is not set: run under tests/fixtures/run.py --http\n");
        return 1;
    }
    RUN(engines_one_after_another_each_crawl);
    RUN(two_engines_alive_on_one_thread_keep_their_own_limits);
    RUN(two_engines_on_two_threads_run_at_once);
    return test_failures ? 1 : 0;
}
