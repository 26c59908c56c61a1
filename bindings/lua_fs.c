/* lua_fs.c: the file system calls the Lua library needs and Lua lacks.
 * core.mkdirs(path) -> true | nil, err (kind "io"): path and its missing parents made
 * (mode 0777 less the umask, as mkdir -p makes them); true when it is a folder already.
 * Used for what the CLI writes where a user names a path (the shell's history, the
 * outputs' folders).
 * core.save_under(root, rel, bytes) -> path | nil, err (kind "io"): bytes written to
 * root/rel (save.lua makes rel from a URL), never outside root: rel's segments are
 * checked, and each folder is opened with O_NOFOLLOW, so a symbolic link put in the
 * tree (by a page saved earlier or by anyone else) is not followed. */
#include "lua_aux.h"
#include "lua_body.h"
#include "lua_libs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The name a page takes when its path must be a folder too ("a" then "a/b"). */
#define DIR_INDEX "index.html"

/* A segment save.lua may give: not empty, ".", ".."; no '/'; at most NAME_MAX bytes. */
static int segment_ok(const char *s, size_t n)
{
    if (n == 0 || n > 255 || memchr(s, '/', n)) return 0;
    return !(s[0] == '.' && (n == 1 || (n == 2 && s[1] == '.')));
}

/* The folder name in dirfd, made when missing; a file there already is moved into it
 * as DIR_INDEX (a page saved as "a" before "a/b" came). A new descriptor, or -1. */
static int enter_dir(int dirfd, const char *name)
{
    for (int tries = 0; tries < 3; tries++) {
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) return fd;
        if (errno == ENOENT) {
            if (mkdirat(dirfd, name, 0777) != 0 && errno != EEXIST) return -1;
            continue;
        }
        if (errno != ENOTDIR) return -1;
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
        if (!S_ISREG(st.st_mode)) return -1; /* a link or a device: never entered */
        char tmp[300];
        snprintf(tmp, sizeof(tmp), "%s.lc-move", name);
        if (renameat(dirfd, name, dirfd, tmp) != 0) return -1;
        if (mkdirat(dirfd, name, 0777) != 0) return -1;
        int fd2 = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd2 < 0) return -1;
        if (renameat(dirfd, tmp, fd2, DIR_INDEX) != 0) {
            close(fd2);
            return -1;
        }
        return fd2;
    }
    errno = ELOOP;
    return -1;
}

/* Write n bytes to name in dirfd through a temporary file renamed into place, so that
 * a reader never sees half a page; a folder of that name gets them as DIR_INDEX. *in
 * is set to 1 when they went there. 0, or -1 with errno. */
static int write_file(int dirfd, const char *name, const char *bytes, size_t n, int *in)
{
    struct stat st;
    int sub = -1;
    *in = 0;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) return -1;
        dirfd = sub;
        name = DIR_INDEX;
        *in = 1;
    }
    char tmp[300];
    snprintf(tmp, sizeof(tmp), ".lc-save-%ld", (long)getpid());
    int rc = -1,
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) goto done;
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, bytes + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int err = w < 0 ? errno : EIO;
            close(fd);
            unlinkat(dirfd, tmp, 0);
            errno = err;
            goto done;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || renameat(dirfd, tmp, dirfd, name) != 0) {
        int err = errno;
        unlinkat(dirfd, tmp, 0);
        errno = err;
        goto done;
    }
    rc = 0;
done:
    if (sub >= 0) {
        int err = errno;
        close(sub);
        errno = err;
    }
    return rc;
}

static int push_io_error(lua_State *L, const char *what, const char *path, int err)
{
    char msg[1024];
    snprintf(msg, sizeof(msg), "cannot %s %s: %s", what, path, strerror(err));
    lua_pushnil(L);
    lc_push_error(L, lc_state(L), "io", msg);
    return 2;
}

static int l_save_under(lua_State *L)
{
    size_t rootlen, rellen, n;
    const char *root = luaL_checklstring(L, 1, &rootlen);
    const char *rel = luaL_checklstring(L, 2, &rellen);
    const char *bytes = lc_checkbytes(L, 3, &n);
    if (rootlen == 0 || strlen(root) != rootlen) return luaL_argerror(L, 1, "a folder path");
    if (rellen == 0 || strlen(rel) != rellen || rel[0] == '/')
        return luaL_argerror(L, 2, "a relative path");
    char *copy = strdup(root);
    if (!copy) return luaL_error(L, "save_under: out of memory");
    int rc = make_dirs(copy), err = errno;
    free(copy);
    if (rc != 0) return push_io_error(L, "make the folder", root, err);
    int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return push_io_error(L, "open the folder", root, errno);
    luaL_Buffer out;
    luaL_buffinit(L, &out);
    luaL_addlstring(&out, root, rootlen);
    const char *seg = rel;
    for (;;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
        char name[256];
        if (!segment_ok(seg, len)) {
            close(dirfd);
            return luaL_argerror(L, 2, "a segment that is empty, '.', '..' or over 255 bytes");
        }
        memcpy(name, seg, len);
        name[len] = '\0';
        luaL_addchar(&out, '/');
        luaL_addlstring(&out, name, len);
        if (!slash) {
            int in;
            rc = write_file(dirfd, name, bytes, n, &in);
            err = errno;
            close(dirfd);
            luaL_pushresult(&out);
            if (rc != 0) return push_io_error(L, "write", lua_tostring(L, -1), err);
            if (in) {
                lua_pushliteral(L, "/" DIR_INDEX);
                lua_concat(L, 2);
            }
            return 1;
        }
        int next = enter_dir(dirfd, name);
        err = errno;
        close(dirfd);
        if (next < 0) {
            luaL_pushresult(&out);
            return push_io_error(L, "make the folder", lua_tostring(L, -1), err);
        }
        dirfd = next;
        seg = slash + 1;
    }
}

static const luaL_Reg funcs[] = {
    {"mkdirs", l_mkdirs},
    {"save_under", l_save_under},
    {NULL, NULL},
};

void lc_register_fs(lua_State *L)
{
    lc_setfuncs(L, funcs);
}
