/* store.h: the durable crawl state: one SQLite database file (WAL) that holds named
 * FIFO queues of byte strings, named sets of 64-bit URL fingerprints, and key/value
 * meta (the crawl's identity). One writer at a time: its file is locked (flock) while
 * open; readers (store_opts_t.read_only) come and go beside it without stopping it.
 *
 * Writes go into one open transaction; store_commit makes them durable together
 * and opens the next, so a caller commits at its own interval and a kill loses
 * what was written since. A queue item popped is not gone: it stays in the file
 * until acknowledged (store_queue_ack), and comes back first at the next open.
 *
 * Every call that can fail takes a store_err_t and returns -1 (or NULL) with its
 * kind and a message that names the file. After a failed write (disk full, I/O)
 * the transaction is rolled back, what the last commit holds is intact, and every
 * later call fails with that same error: reopen to go on from the last commit. */
#ifndef LUACRAWL_STORE_H
#define LUACRAWL_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct store store_t;
typedef struct store_queue store_queue_t;
typedef struct store_seen store_seen_t;

typedef enum store_kind {
    STORE_OK = 0,
    STORE_CORRUPT,      /* not a database, malformed, truncated, or an empty file */
    STORE_INCOMPATIBLE, /* a database, but not a luacrawl state, or a newer schema */
    STORE_LOCKED,       /* another connection or process has it open */
    STORE_READ_ONLY,    /* the file, its directory or its file system is not writable */
    STORE_DISK_FULL,    /* no space left, or the max_bytes given at open reached */
    STORE_IO,           /* any other failure of the system or of SQLite */
    STORE_NOMEM,
} store_kind_t;

typedef struct store_err {
    store_kind_t kind;
    char message[512];
} store_err_t;

/* "corrupt", "incompatible", "locked", "read_only", "disk_full", "io", "nomem" */
const char *store_kind_name(store_kind_t kind);

typedef struct store_opts {
    int sync_full;       /* synchronous=FULL: each commit survives power loss (an fsync
                            a commit); 0: NORMAL, a commit survives the process's death */
    int skip_check;      /* 1: no PRAGMA quick_check at open (it reads the whole file) */
    long long max_bytes; /* > 0: the database may not grow past this (disk_full) */
    int cache_kb;        /* SQLite's page cache; 0: 32 MB */
    int read_only;       /* 1: read an existing state, while a crawl may write it: no
                            lock taken, nothing written, no check; reads see the state
                            as of the first read after open or after store_commit */
} store_opts_t;

/* Open (or create) the state at path; opts may be NULL. NULL and *err on failure. */
store_t *store_open(const char *path, const store_opts_t *opts, store_err_t *err);
/* Commit, then close and free s (also when the commit fails: then -1). */
int store_close(store_t *s, store_err_t *err);
/* Close and free s without committing: what was written since the last commit
 * is dropped, as a kill would drop it. */
void store_abandon(store_t *s);
/* Make every write since the last commit durable, and open the next transaction. */
int store_commit(store_t *s, store_err_t *err);
const char *store_path(const store_t *s);
/* A read-only store: 1 when a writer (a crawl) had the state open when s was opened,
 * *pid its process id (0 when not known); else 0. */
int store_writer(const store_t *s, long *pid);
/* Bytes of the database file and of its WAL now. */
long long store_file_bytes(const store_t *s);

/* Meta: get gives a malloc'd copy (NUL-terminated too) in *value: 1 found, 0 not
 * found, -1 error. set with value NULL deletes the key. */
int store_meta_get(store_t *s, const char *key, char **value, size_t *len, store_err_t *err);
int store_meta_set(store_t *s, const char *key, const void *value, size_t len, store_err_t *err);

/* Queues ------------------------------------------------------------------------ */

typedef struct store_item {
    int64_t id;       /* given by push (out) and pop; what ack takes */
    const char *data; /* pop: valid until the next pop on this queue */
    size_t len;
    int text; /* stored as text rather than bytes (a caller's own tag: JSON, say) */
} store_item_t;

/* The queue called name, created if new; owned by s (freed by its close). */
store_queue_t *store_queue(store_t *s, const char *name, store_err_t *err);
/* Append n items in order; each item's id is set. */
int store_queue_push(store_queue_t *q, store_item_t *items, size_t n, store_err_t *err);
/* Take up to max of the oldest items not taken yet: *n of them in out (0: none
 * ready). They stay in the store, pending, until acknowledged. */
int store_queue_pop(store_queue_t *q, store_item_t *out, size_t max, size_t *n, store_err_t *err);
/* Remove n items taken by pop, for good (at the next commit). An id not in the
 * queue (acknowledged before) is passed over. */
int store_queue_ack(store_queue_t *q, const int64_t *ids, size_t n, store_err_t *err);
/* Items not yet popped; items popped and not acknowledged. Their sum is what the
 * queue holds. */
int64_t store_queue_ready(const store_queue_t *q);
int64_t store_queue_pending(const store_queue_t *q);

/* Seen sets --------------------------------------------------------------------- */

/* The set called name, created if new; owned by s. */
store_seen_t *store_seen(store_t *s, const char *name, store_err_t *err);
/* Add n fingerprints; added[i] (when added is not NULL) is 1 when fps[i] was new. */
int store_seen_add(store_seen_t *set, const uint64_t *fps, size_t n, unsigned char *added,
                   store_err_t *err);
/* 1 when fp is in the set, 0 when not, -1 on error. */
int store_seen_has(store_seen_t *set, uint64_t fp, store_err_t *err);
int64_t store_seen_size(const store_seen_t *set);

/* Statements -------------------------------------------------------------------- */

/* SQL of a caller's own over the same database and transaction: the crawl keeps its
 * frontier, done pages and hosts in tables of its own (lua/luacrawl/frontier_sqlite.lua),
 * named crawl_*. A statement is prepared once per SQL text and owned by s. A step
 * of a statement that writes and fails is a failed write as above (rolled back, and
 * every later call fails). */
typedef struct store_stmt store_stmt_t;

typedef enum store_type {
    STORE_NULL = 0,
    STORE_INTEGER,
    STORE_REAL,
    STORE_TEXT,
    STORE_BLOB,
} store_type_t;

typedef struct store_value {
    store_type_t type;
    int64_t i;
    double r;
    const char *p; /* text or blob: a column's is valid until the next step or reset */
    size_t len;
} store_value_t;

store_stmt_t *store_stmt(store_t *s, const char *sql, store_err_t *err);
/* Bind n values to parameters 1..n (the others are NULL), for the next step. */
int store_stmt_bind(store_stmt_t *st, const store_value_t *v, int n, store_err_t *err);
/* Bind n values to parameters 1..n (the others are NULL) without
 * copying them, step to the end (rows, if any, are not read) and reset: a write made
 * many times in a row (a batch). The values need live only during the call. 0 or -1. */
int store_stmt_run(store_stmt_t *st, const store_value_t *v, int n, store_err_t *err);
/* The number of parameters of the statement. */
int store_stmt_params(store_stmt_t *st);
/* 1: a row is ready (store_stmt_column); 0: done (the statement is reset); -1: error. */
int store_stmt_step(store_stmt_t *st, store_err_t *err);
void store_stmt_reset(store_stmt_t *st);
int store_stmt_columns(store_stmt_t *st);
void store_stmt_column(store_stmt_t *st, int i, store_value_t *out);
/* Rows changed by the last write, and the rowid of the last insert. */
int64_t store_changes(store_t *s);
int64_t store_last_id(store_t *s);

#endif
