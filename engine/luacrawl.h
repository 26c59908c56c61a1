/* luacrawl.h: embedding luacrawl in a C program.
 *
 *   lc_engine *e = lc_engine_new();
 *   int status = lc_engine_run_file(e, "crawl.lua", argc, argv);
 *   lc_engine_free(e);
 *
 * An engine is a LuaJIT state with the standard libraries and `luacrawl` loaded
 * (the Lua standard library is built in). One engine per thread. */
#ifndef LUACRAWL_H
#define LUACRAWL_H

struct lua_State;
typedef struct lc_engine lc_engine;

/* NULL when out of memory. */
lc_engine *lc_engine_new(void);
void lc_engine_free(lc_engine *e);

/* The engine's Lua state, to add functions or globals before running. */
struct lua_State *lc_engine_lua(lc_engine *e);

/* Run a script as its main task (as `luacrawl run path args...`): the script sees
 * its arguments in `arg`. Returns 0, or 1 when the script failed (the error and
 * its traceback are printed on stderr). */
int lc_engine_run_file(lc_engine *e, const char *path, int argc, char **argv);

/* The command line interface: argv as main() gets it. Returns the exit status. */
int lc_engine_main(lc_engine *e, int argc, char **argv);

/* "0.1.0" */
const char *lc_engine_version(void);

#endif
