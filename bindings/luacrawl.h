/* luacrawl.h: embedding luacrawl in a C program (docs/embedding.md).
 *
 *   lc_engine *e = lc_engine_new();
 *   int status = lc_engine_run_file(e, "crawl.lua", argc - 1, argv + 1);
 *   lc_engine_free(e);
 *
 * Link with `pkg-config --cflags --libs luacrawl` (the shared library) or
 * luacrawl-static (the archive). examples/embed.c is a complete program;
 * examples/embed/poll_host.c drives an engine from its own poll() loop.
 * docs/embedding.md says who owns each pointer and which thread may call what.
 *
 * An engine is a LuaJIT state with the standard libraries and `luacrawl` loaded
 * (the Lua standard library is built in).
 *
 * Threads. Engines share no state: each has its own Lua state, event loop, resolver,
 * HTTP client, limits (max_memory, max_task_cpu) and counters, so a process may run
 * any number of them, on one thread or on several at once. One engine (with its
 * lua_State and every value from it) is used by one thread at a time; it may pass to
 * another thread between calls; lc_engine_stop alone may come from any thread. The
 * first engine sets up libcurl, c-ares and libxml2 for the process (thread-safely,
 * once) and no engine ever tears them down: a program that calls curl_global_cleanup
 * or xmlCleanupParser itself does so after its last engine is freed. What is one per
 * process stays so:
 *   - signals: an engine from lc_engine_new catches none and leaves dispositions and
 *     masks alone (lc.signals.watch catches nothing in it; lc_engine_stop is how a
 *     host stops a crawl). Only lc_engine_main (the luacrawl binary) watches SIGINT
 *     and SIGTERM, from a signalfd: the signal is blocked in the calling thread;
 *   - the shell's line editor (libedit): one engine at a time in `luacrawl shell`;
 *   - the environment, read when an engine first resolves or fetches
 *     (LUACRAWL_DNS_SERVERS, the proxy variables): do not change it while engines run;
 *   - SIGPIPE: the library leaves signal dispositions alone; ignore SIGPIPE as the
 *     luacrawl binary does, or a peer closing a connection may end the process. */
#ifndef LUACRAWL_H
#define LUACRAWL_H

#include <stddef.h>

struct lua_State;
typedef struct lc_engine lc_engine;

/* NULL when out of memory or file descriptors (an engine holds some from the
 * start: its epoll fd and the eventfd lc_engine_stop writes among them). */
lc_engine *lc_engine_new(void);
void lc_engine_free(lc_engine *e);

/* The engine's Lua state, to add functions or globals before running. */
struct lua_State *lc_engine_lua(lc_engine *e);

/* Run the Lua file at path as its main task, as `luacrawl run path args...` does.
 * argv holds the script's arguments only, argc of them (argv may be NULL when argc
 * is 0): no program name. The script sees arg[0] = path and arg[1..argc] = argv[0..
 * argc-1], and gets them as `...` too. From main(argc, argv) with the script's
 * arguments after the program name, pass argc - 1, argv + 1; after the script's
 * own path too, argc - 2, argv + 2.
 * Returns 0, or 1 when the script could not be loaded or failed (the error and its
 * traceback are printed on stderr, or given to lc_engine_on_log's callback). Built
 * on the calls below: start, then steps that wait in the engine's own epoll. */
int lc_engine_run_file(lc_engine *e, const char *path, int argc, char **argv);

/* The command line interface (`luacrawl run|fetch|crawl|shell ...`): argc and argv as
 * main() gets them, argv[0] the program's name (not read). Returns the exit status. */
int lc_engine_main(lc_engine *e, int argc, char **argv);

/* ---- Running without blocking: the host's own event loop drives the engine ----
 *
 *   lc_engine_start_file(e, "crawl.lua", 0, NULL);
 *   while (!lc_engine_done(e)) {
 *       struct pollfd p = {lc_engine_fd(e), POLLIN, 0};
 *       poll(&p, 1, lc_engine_timeout_ms(e));   (or the host's epoll, libuv, GLib)
 *       lc_engine_step(e);
 *   }
 *   status = lc_engine_status(e);
 *
 * Only lc_engine_step runs the script: the other calls return at once. */

/* Start the Lua file at path (arguments as lc_engine_run_file) or the chunk text
 * (name: how its error messages call it, "=name" for a plain name) as the main task,
 * without running it. 0, or -1 when the script cannot be loaded (said in the log)
 * or a run is already going on; the run is then done with status 1. */
int lc_engine_start_file(lc_engine *e, const char *path, int argc, char **argv);
int lc_engine_start_string(lc_engine *e, const char *chunk, const char *name);

/* A descriptor to wait on for reading: the engine's epoll fd, readable when one of
 * its sockets or timers' fds is ready, or lc_engine_stop was called. The same for
 * the engine's life. */
int lc_engine_fd(lc_engine *e);
/* How long the host may wait on lc_engine_fd before calling lc_engine_step: -1
 * (until the fd is readable), 0 (call it now), else milliseconds to the next timer.
 * Ask again after every call into the engine: a step, lc_engine_call and
 * lc_engine_stop may bring work that is due at once. */
int lc_engine_timeout_ms(lc_engine *e);
/* Do what is ready (I/O, due timers, runnable tasks) and return without waiting:
 * 1 while the run goes on, 0 once it has ended (also when none was started), -1
 * when called from inside one of the engine's callbacks (nothing done). */
int lc_engine_step(lc_engine *e);
/* 1 when no run is going on (none started, or it has ended). */
int lc_engine_done(lc_engine *e);
/* The exit status of the last run, as lc_engine_run_file returns it (0, or 1 when
 * the script could not be loaded or failed); -1 while a run goes on or before any. */
int lc_engine_status(lc_engine *e);

/* ---- Talking both ways ---- */

/* A C function a script calls as lc.host.NAME(value): args is value as JSON text
 * ("null" for none), valid during the call. Set *result to a JSON text allocated
 * with malloc (the engine frees it with free), or leave it NULL for nil. Return 0;
 * anything else raises a Lua error in the script, whose message is *result when set
 * (plain text then, not JSON). Runs inside the script: it must not call
 * lc_engine_step, lc_engine_call or lc_engine_free (lc_engine_stop it may). */
typedef int (*lc_host_fn)(lc_engine *e, const char *args, char **result, void *userdata);
/* Make fn visible as require("luacrawl").host.NAME. name: letters, digits and _,
 * not starting with _ and not "expose"; copied. 0, or -1 for a bad name or when
 * out of memory. Registering a name again replaces the function. */
int lc_engine_register(lc_engine *e, const char *name, lc_host_fn fn, void *userdata);

/* Call the function the script exposed with lc.host.expose(NAME, fn), as fn(value)
 * with value decoded from args (JSON text; NULL or "" for nil). It runs at once,
 * outside any task: it may spawn tasks (lc.spawn) or put work in a queue, not wait
 * itself. 0 with *result (when result is not NULL) its return value as JSON text;
 * -1 with *result the error's message. Either way *result is the caller's to free
 * (free()). Not from inside a callback of the engine: -1 then. */
int lc_engine_call(lc_engine *e, const char *fn, const char *args, char **result);

/* Each item a crawl records (crawl.run's emit, the path that writes its outputs)
 * as JSON text, len bytes (NUL-terminated too), valid during the call only. The
 * callback runs inside the crawl: it may call lc_engine_stop, not lc_engine_step,
 * lc_engine_call or lc_engine_free. NULL: no more items. */
typedef void (*lc_item_fn)(lc_engine *e, const char *json, size_t len, void *userdata);
void lc_engine_on_item(lc_engine *e, lc_item_fn cb, void *userdata);

/* Messages the engine would write on stderr (errors and their tracebacks, a
 * crawl's log, progress and final report): one line each, without its newline,
 * valid during the call. Same rules as lc_item_fn. NULL: stderr again. */
typedef void (*lc_log_fn)(lc_engine *e, const char *line, void *userdata);
void lc_engine_on_log(lc_engine *e, lc_log_fn cb, void *userdata);

/* Stop the crawl as SIGINT stops `luacrawl crawl`: no new requests, those in flight
 * finish (within the crawl's stop_grace), outputs flushed and closed, the report
 * written; a second call aborts as a second SIGINT does. It only records the
 * request, atomically, and wakes the engine's fd (the next lc_engine_step acts on
 * it; lc_engine_timeout_ms is 0 until then; a wait in lc_engine_run_file ends), so
 * it may be called from any thread, from a signal handler, or from a callback, as
 * long as the engine is not being freed meanwhile. It keeps errno. The only call
 * that may be made from another thread than the one running the engine. A script
 * that is not a crawl sees it as lc.signals.wait()
 * returning "INT". Signals themselves are never caught by an engine a host drives:
 * lc.signals.watch catches nothing in it (only the luacrawl binary's do). */
void lc_engine_stop(lc_engine *e);

/* "0.1.0" */
const char *lc_engine_version(void);

/* Raise the process's soft limit of open files (RLIMIT_NOFILE) to its hard limit:
 * every transfer in flight holds a socket, and the usual soft limit of 1024 is
 * soon reached. The luacrawl binary does it at start; the library never changes
 * its host's limits by itself. Returns the soft limit now in force, or -1. */
long lc_raise_fd_limit(void);

#endif
