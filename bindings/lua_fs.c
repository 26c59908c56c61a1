/* lua_fs.c: the file system calls the Lua library needs and Lua lacks.
 * core.mkdirs(path) -> true | nil, err (kind "io"): path and its missing parents made
 * (mode 0777 less the umask, as mkdir -p makes them); true when it is a folder already.
 * Used for what the CLI writes where a user names a path (the shell's history, the
 * outputs' folders). */
#include "lua_aux.h"
#include "lua_body.h"
#include "lua_libs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p on a writable copy of the path; 0, or -1 with errno set. */
static int make_dirs(char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0777);
        int err = errno;
        if (rc != 0 && !(err == EEXIST && is_dir(path))) {
            *p = c;
            errno = err == EEXIST ? ENOTDIR : err;
            return -1;
        }
        *p = c;
        if (c == '\0') return 0;
    }
}

static int l_mkdirs(lua_State *L)
{
    size_t len;
    const char *path = luaL_checklstring(L, 1, &len);
    if (len == 0 || strlen(path) != len) return luaL_argerror(L, 1, "a path without NUL bytes");
    char *copy = strdup(path);
    if (!copy) return luaL_error(L, "mkdirs: out of memory");
    int rc = make_dirs(copy);
    int err = errno;
    free(copy);
    if (rc == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    char msg[512];
    snprintf(msg, sizeof(msg), "cannot make the folder %s: %s", path, strerror(err));
    lua_pushnil(L);
    lc_push_error(L, lc_state(L), "io", msg);
    return 2;
}

static const luaL_Reg funcs[] = {
    {"mkdirs", l_mkdirs},
    {NULL, NULL},
};

void lc_register_fs(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
