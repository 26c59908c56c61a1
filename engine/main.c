/* main.c: the luacrawl command. Argument handling lives in lua/luacrawl/cli.lua. */
#include "luacrawl.h"

#include <signal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    /* curl runs with CURLOPT_NOSIGNAL; a peer closing a socket must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    lc_engine *e = lc_engine_new();
    if (!e) {
        fprintf(stderr, "luacrawl: cannot start the engine\n");
        return 1;
    }
    int status = lc_engine_main(e, argc, argv);
    lc_engine_free(e);
    return status;
}
