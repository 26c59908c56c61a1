/* luacrawl.h: embedding luacrawl in a C program (docs/embedding.md).
 *
 *   lc_engine *e = lc_engine_new();
 *   int status = lc_engine_run_file(e, "crawl.lua", argc - 1, argv + 1);
 *   lc_engine_free(e);
 *
 * Link with `pkg-config --cflags --libs luacrawl` (the shared library) or
 * luacrawl-static (the archive). examples/embed.c is a complete program.
 *
 * An engine is a LuaJIT state with the standard libraries and `luacrawl` loaded
 * (the Lua standard library is built in).
 *
 * Threads. Engines share no state: each has its own Lua state, event loop, resolver,
 * HTTP client, limits (max_memory, max_task_cpu) and counters, so a process may run
 * any number of them, on one thread or on several at once. One engine (with its
 * lua_State and every value from it) is used by one thread at a time; it may pass to
 * another thread between calls. The first engine sets up libcurl, c-ares and
 * libxml2 for the process (thread-safely, once) and no engine ever tears them down:
 * a program that calls curl_global_cleanup or xmlCleanupParser itself does so after
 * its last engine is freed. What is one per process stays so:
 *   - signals: lc.signals.watch blocks the signal in the calling thread and reads it
 *     from a signalfd. Watch a signal in one engine only, keep that engine on its
 *     thread, and block the signal in the program's other threads, or the kernel
 *     may deliver it to one that does not;
 *   - the shell's line editor (libedit): one engine at a time in `luacrawl shell`;
 *   - the environment, read when an engine first resolves or fetches
 *     (LUACRAWL_DNS_SERVERS, the proxy variables): do not change it while engines run;
 *   - SIGPIPE: the library leaves signal dispositions alone; ignore SIGPIPE as the
 *     luacrawl binary does, or a peer closing a connection may end the process. */
#ifndef LUACRAWL_H
#define LUACRAWL_H

struct lua_State;
typedef struct lc_engine lc_engine;

/* NULL when out of memory. */
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
 * traceback are printed on stderr). */
int lc_engine_run_file(lc_engine *e, const char *path, int argc, char **argv);

/* The command line interface (`luacrawl run|fetch|crawl|shell ...`): argc and argv as
 * main() gets them, argv[0] the program's name (not read). Returns the exit status. */
int lc_engine_main(lc_engine *e, int argc, char **argv);

/* "0.1.0" */
const char *lc_engine_version(void);

/* Raise the process's soft limit of open files (RLIMIT_NOFILE) to its hard limit:
 * every transfer in flight holds a socket, and the usual soft limit of 1024 is
 * soon reached. The luacrawl binary does it at start; the library never changes
 * its host's limits by itself. Returns the soft limit now in force, or -1. */
long lc_raise_fd_limit(void);

#endif
