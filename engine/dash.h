/* dash.h: the dashboard's HTTP server (libmicrohttpd) on the engine's loop. It serves
 * the documents its owner publishes, streams published events to server-sent-event
 * clients and queues the commands POSTed to it; it never calls its owner back, so
 * the owner (a Lua task) reads the commands when it likes. */
#ifndef LUACRAWL_DASH_H
#define LUACRAWL_DASH_H

#include "loop.h"

#include <stddef.h>

typedef struct dash dash_t;

enum dash_cmd { DASH_NONE = 0, DASH_PAUSE, DASH_RESUME, DASH_STOP };

/* Listen on listen ("[HOST:]PORT", HOST an IP literal, [v6] or localhost; 127.0.0.1
 * when left out; port 0 for any). token: the one every request must carry (NULL: one
 * is generated). Reads (GET) need the token when it was given or the address is not
 * 127.0.0.1 or ::1; commands always do. NULL with a message in err on failure. */
dash_t *dash_new(loop_t *loop, const char *listen, const char *token, char *err, size_t errlen);
void dash_free(dash_t *d);

/* Serve body (copied) at path with content type ctype, replacing what was there.
 * 0, or -1 when out of memory. */
int dash_publish(dash_t *d, const char *path, const char *ctype, const char *body, size_t len);
/* Send data (copied; one event, each line a data: line) to every event-stream client,
 * the ones that connect later included. 0, or -1 when out of memory. */
int dash_event(dash_t *d, const char *data, size_t len);
/* The oldest command not yet taken, DASH_NONE when there is none. */
enum dash_cmd dash_next_command(dash_t *d);
const char *dash_cmd_name(enum dash_cmd cmd);

/* What it listens on (the address as written in a URL, the port), its token, and
 * whether reads need the token. */
const char *dash_host(const dash_t *d);
unsigned dash_port(const dash_t *d);
const char *dash_token(const dash_t *d);
int dash_reads_need_token(const dash_t *d);

#endif
