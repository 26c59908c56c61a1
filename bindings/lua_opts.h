/* lua_opts.h: the one reader of option tables from Lua. A caller declares its
 * options once (name, type, range); lc_push_opts walks the table once, checks each
 * value by the rules of lua_check.h and refuses a name it does not know, with the
 * nearest known one as "did you mean" (lc_suggest, which the crawl spec's checks
 * use too: core.suggest). */
#ifndef LUACRAWL_LUA_OPTS_H
#define LUACRAWL_LUA_OPTS_H

#include "lua_api.h"

#include <stddef.h>

enum lc_opt_type {
    LC_OPT_ANY,     /* checked by the caller (a jar, a list of networks) */
    LC_OPT_STRING,  /* a string, or a number (as Lua converts it) */
    LC_OPT_NUMBER,  /* finite, in [min, max]; a numeric string is taken */
    LC_OPT_INTEGER, /* whole, in [min, max] */
    LC_OPT_BOOLEAN,
    LC_OPT_TABLE,
    LC_OPT_FUNCTION,
};

typedef struct lc_opt {
    const char *name;
    size_t len;
    enum lc_opt_type type;
    double min, max; /* numbers and integers */
} lc_opt_t;

#define LC_OPT(name, type)                                                                         \
    {                                                                                              \
        name, sizeof(name) - 1, type, 0, 0                                                         \
    }
#define LC_OPT_RANGE(name, type, min, max)                                                         \
    {                                                                                              \
        name, sizeof(name) - 1, type, min, max                                                     \
    }

typedef struct lc_opts {
    const char *caller; /* "fetch": "fetch: unknown option 'timout' ..." */
    const char *label;  /* the option in messages, a format of its name: "fetch: option '%s'" */
    int open;           /* 1: names not declared are let through (checked elsewhere) */
    int count;
    const lc_opt_t *opt;
} lc_opts_t;

/* Push t[name] for each declared option (nil when absent), t the table at idx, in
 * declaration order; returns the stack index of the first. Raises naming the caller
 * and the option for a value of the wrong type or out of range, and for a name not
 * declared. A table with a metatable is read by name, so that __index works. */
int lc_push_opts(lua_State *L, int idx, const lc_opts_t *d);

/* The known name nearest to name by edit distance (case aside), when close enough to
 * be a misspelling (at most a third of its letters off, at least 2; ties go to the
 * first in byte order), else NULL. */
const char *lc_suggest(const char *name, const char *const *known, int n);

/* core.suggest(name, known), core.option_decl{...} and core.check_options(t, decl)
 * are the same rules for the Lua side (lc_register_opts, lua_libs.h). */

#endif
