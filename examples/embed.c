/* embed.c: run a luacrawl script from a C program of your own.
 *
 *   cc embed.c -o embed $(pkg-config --cflags --libs luacrawl)
 *   ./embed crawl.lua https://example.org/ 2
 *
 * The script gets its own arguments and nothing else: here arg[0] is "crawl.lua",
 * arg[1] "https://example.org/" and arg[2] "2", as with `luacrawl run crawl.lua
 * https://example.org/ 2`. `pkg-config --cflags --libs luacrawl-static` links the
 * static library instead (docs/embedding.md). */
#include <luacrawl.h>

#include <signal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCRIPT [ARGS...]   (luacrawl %s)\n", argv[0],
                lc_engine_version());
        return 2;
    }
    /* A peer that closes a connection must not kill the program with SIGPIPE (the
     * luacrawl binary does the same). */
    signal(SIGPIPE, SIG_IGN);
    lc_engine *e = lc_engine_new();
    if (!e) {
        fprintf(stderr, "%s: cannot start the engine\n", argv[0]);
        return 1;
    }
    /* argv[0] is this program and argv[1] the script: its arguments start at argv[2]. */
    int status = lc_engine_run_file(e, argv[1], argc - 2, argv + 2);
    lc_engine_free(e);
    return status;
}
