/* redis.h: a Redis connection on the loop. hiredis's async API (redisAsyncContext)
 * with its read and write hooks on loop.c's fd watchers and its timeouts on loop
 * timers; no call blocks, the connect included. It knows nothing of Lua.
 *
 * A connection is one TCP socket to one IPv4 address: names are resolved before,
 * by the caller (dns.c). Commands are argv arrays (binary safe), queued in hiredis's
 * output buffer and written when the socket is next writable, so commands issued
 * one after another in the same turn leave in one write: a pipeline. Replies come
 * in order, each to its command's callback, always from a loop callback, never
 * inside a redis_* call.
 *
 * A connection that fails (refused, reset, closed by the server, a protocol error,
 * a timeout) is dead from then on: every pending command's callback gets the
 * error, and redis_command refuses new ones. There is no reconnect here: the
 * caller makes a new connection. */
#ifndef LUACRAWL_REDIS_H
#define LUACRAWL_REDIS_H

#include "loop.h"

#include <stddef.h>

typedef struct redis redis_t;
typedef struct redis_cmd redis_cmd_t;
/* A reply, valid only during the callback it is given to. */
typedef struct redis_reply redis_reply_t;

enum redis_type {
    REDIS_T_STRING, /* a bulk string: any bytes */
    REDIS_T_STATUS, /* +OK and the like */
    REDIS_T_INTEGER,
    REDIS_T_NIL,
    REDIS_T_ARRAY,
    REDIS_T_ERROR, /* an error reply (-ERR ...): the command failed, the connection is fine */
};

enum redis_fail {
    REDIS_F_NONE = 0,
    REDIS_F_CONNECT,  /* refused, unreachable, reset or closed by the server */
    REDIS_F_TIMEOUT,  /* the connect timeout or a command's timeout passed */
    REDIS_F_PROTOCOL, /* the server sent something that is not RESP */
    REDIS_F_MEMORY,   /* out of memory (ours or hiredis's) */
    REDIS_F_CLOSED,   /* redis_close or redis_free while the command was pending */
};

/* What one reply may be: a server past them fails the connection with
 * REDIS_F_PROTOCOL before it has sent (and made us hold) more. A reply nobody asked
 * for (no command pending) is a protocol error too. */
#define REDIS_MAX_STRING (64ULL << 20) /* bytes of one bulk string */
#define REDIS_MAX_ELEMENTS (1 << 22)   /* elements of one array */
#define REDIS_MAX_REPLY (256ULL << 20) /* bytes hiredis holds for one reply, all told */

typedef struct redis_error {
    enum redis_fail code;
    const char *message; /* for people; valid during the callback */
} redis_error_t;

typedef struct redis_opts {
    double connect_timeout; /* seconds for the TCP connect; 0: none */
    /* Seconds a command may wait for its reply. Replies come in order, so the oldest
     * pending command passing it means the server (or the path to it) is stuck: the
     * connection fails with REDIS_F_TIMEOUT, and every pending command with it. 0:
     * none (for blocking commands such as BLPOP with a long timeout). */
    double command_timeout;
} redis_opts_t;

/* err NULL: connected. Not called after redis_close. */
typedef void (*redis_connect_fn)(void *arg, const redis_error_t *err);
/* Exactly one of reply and err is set. The callback may issue commands on the
 * connection, and may close it (redis_close, not redis_free). */
typedef void (*redis_reply_fn)(void *arg, const redis_reply_t *reply, const redis_error_t *err);

/* Start connecting to addr (an IPv4 address, no name) and port; fn(arg, err) when
 * the connection is up or has failed. NULL with errno set when addr is not an IPv4
 * address (EINVAL) or memory ran out (ENOMEM). Commands may be issued at once: they
 * are written when the connection is up. */
redis_t *redis_connect(loop_t *loop, const char *addr, int port, const redis_opts_t *opts,
                       redis_connect_fn fn, void *arg);

/* Send a command; fn(arg, reply, err) with its reply or the connection's failure.
 * NULL when it cannot be sent: the connection has failed (redis_failure says why),
 * or errno is EINVAL (argc < 1, or a command that does not fit request and reply:
 * SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE, MONITOR) or ENOMEM. */
redis_cmd_t *redis_command(redis_t *r, int argc, const char *const *argv, const size_t *lens,
                           redis_reply_fn fn, void *arg);

/* Forget cmd's callback: it is not called, whenever the reply comes (the reply is
 * read and dropped, as the protocol requires). cmd must be pending. */
void redis_cancel(redis_t *r, redis_cmd_t *cmd);

/* 1 once connected and not failed. */
int redis_ready(const redis_t *r);
/* Why the connection failed, or NULL while it has not. */
const redis_error_t *redis_failure(const redis_t *r);
/* Commands sent whose reply has not come (cancelled ones included). */
size_t redis_pending(const redis_t *r);

/* Close the connection now (the socket is closed before this returns) and free r.
 * The callbacks of pending commands get REDIS_F_CLOSED from a deferred call, never
 * inside redis_close; the connect callback is not called. */
void redis_close(redis_t *r);
/* The same for a caller that is going away with its loop: the pending commands'
 * callbacks run inside this call. */
void redis_free(redis_t *r);

/* Replies. */
enum redis_type redis_reply_type(const redis_reply_t *reply);
/* The bytes of a string, status or error reply (NUL-terminated too). */
const char *redis_reply_string(const redis_reply_t *reply, size_t *len);
long long redis_reply_integer(const redis_reply_t *reply);
/* The elements of an array reply. */
size_t redis_reply_count(const redis_reply_t *reply);
const redis_reply_t *redis_reply_element(const redis_reply_t *reply, size_t i);

#endif
