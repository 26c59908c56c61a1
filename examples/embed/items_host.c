/* items_host.c: take a crawl's items in C, as they are recorded (lc_engine_on_item),
 * and answer the script's questions (lc_engine_register): here the script asks
 * `lc.host.keep(item)` for each page, and the host keeps every page whose title
 * does not contain "skip"; at the end the script calls `lc.host.done(stats)`.
 *
 *   cc items_host.c -o items_host $(pkg-config --cflags --libs luacrawl)
 *   ./items_host site_crawl.lua http://127.0.0.1:8080/site/
 *
 * Prints one line per item (its JSON text), then the count. The blocking
 * lc_engine_run_file is enough here: the callbacks run during it. */
#include <luacrawl.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct counts {
    long items, kept, refused;
};

/* Each item: JSON text, valid during this call only (copy what you keep). */
static void on_item(lc_engine *e, const char *json, size_t len, void *userdata)
{
    (void)e;
    struct counts *c = userdata;
    c->items++;
    printf("item %.*s\n", (int)len, json);
}

/* lc.host.keep(item) -> true | false: args is the item as JSON text. */
static int keep(lc_engine *e, const char *args, char **result, void *userdata)
{
    (void)e;
    struct counts *c = userdata;
    int ok = strstr(args, "skip") == NULL;
    if (ok)
        c->kept++;
    else
        c->refused++;
    *result = strdup(ok ? "true" : "false"); /* freed by the engine */
    return *result ? 0 : 1;
}

/* lc.host.done(stats): the script's summary, no result. */
static int done(lc_engine *e, const char *args, char **result, void *userdata)
{
    (void)e, (void)result, (void)userdata;
    printf("script done: %s\n", args);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCRIPT [ARGS...]   (luacrawl %s)\n", argv[0],
                lc_engine_version());
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    lc_engine *e = lc_engine_new();
    if (!e) return 1;
    struct counts c = {0, 0, 0};
    if (lc_engine_register(e, "keep", keep, &c) != 0 ||
        lc_engine_register(e, "done", done, NULL) != 0) {
        lc_engine_free(e);
        return 1;
    }
    lc_engine_on_item(e, on_item, &c);
    int status = lc_engine_run_file(e, argv[1], argc - 2, argv + 2);
    printf("items: %ld (kept %ld, refused %ld), status %d\n", c.items, c.kept, c.refused, status);
    lc_engine_free(e);
    return status;
}
