/* store_internal.h: the seams of the state store, internal to engine/store*.c: the
 * structs of a store and of its queues, seen sets and statements, and the error and
 * SQLite helpers every store file calls. The helpers are static inline: the calls a
 * push, a pop, an add or a statement's run makes stay inside its own file, as they
 * were before the split. store.c owns the file's lifecycle and its objects table. */
#ifndef LUACRAWL_STORE_INTERNAL_H
#define LUACRAWL_STORE_INTERNAL_H

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store.h"

struct store_queue {
    store_t *s;
    struct store_queue *next;
    int64_t id;
    sqlite3_stmt *push, *pop, *ack;
    int64_t rows;     /* items in the table: ready + pending */
    int64_t pending;  /* taken by pop (seq <= cursor), not acknowledged */
    int64_t cursor;   /* the highest seq taken by pop since open */
    int64_t next_seq; /* the seq of the next push */
    int dirty;        /* rows changed since the last commit */
    char *arena;      /* the bytes of the last pop's items */
    size_t arena_cap;
};

struct store_seen {
    store_t *s;
    struct store_seen *next;
    int64_t id;
    sqlite3_stmt *add, *has;
    int64_t size;
    int dirty;
};

struct store_stmt {
    store_t *s;
    struct store_stmt *next;
    sqlite3_stmt *stmt;
    char *sql;
    int writes; /* not read-only: a failed step is a failed write */
};

typedef struct store_lock store_lock_t;

struct store {
    sqlite3 *db;
    char *path;
    store_lock_t *lock; /* store_lock.c: the writer's flock, or a reader's place */
    int read_only;
    long writer; /* read-only: who had it open for writing at open (store_writer) */
    sqlite3_stmt *meta_get, *meta_set, *meta_del, *set_count;
    sqlite3_stmt *begin, *commit; /* prepared once: a crawl commits many times a second */
    store_queue_t *queues;
    store_seen_t *seens;
    store_stmt_t *stmts;
    store_err_t failed; /* kind != STORE_OK: a write failed; every call fails so */
};

/* Errors and SQLite calls ------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static inline int set_err(store_err_t *err, store_kind_t kind,
                                                                const char *fmt, ...)
{
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    err->kind = kind;
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

/* The kind of an SQLite failure; errno (sqlite3_system_errno) tells a file that
 * cannot be opened for writing from one that is missing. */
static inline store_kind_t kind_of(int rc, int sys)
{
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return STORE_CORRUPT;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return STORE_LOCKED;
    case SQLITE_READONLY:
        return STORE_READ_ONLY;
    case SQLITE_FULL:
        return STORE_DISK_FULL;
    case SQLITE_NOMEM:
        return STORE_NOMEM;
    default:
        break;
    }
    if (sys == EROFS || sys == EACCES || sys == EPERM) return STORE_READ_ONLY;
    if (sys == ENOSPC || sys == EDQUOT) return STORE_DISK_FULL;
    return STORE_IO;
}

/* An error of SQLite's, in words that say what it means for a crawl's state. */
static inline int sql_err(const char *path, sqlite3 *db, int rc, const char *doing,
                          store_err_t *err)
{
    int sys = db ? sqlite3_system_errno(db) : 0;
    store_kind_t kind = kind_of(rc, sys);
    const char *detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (kind) {
    case STORE_CORRUPT:
        return set_err(err, kind, "state %s is damaged or not a database (%s, %s)", path, detail,
                       doing);
    case STORE_LOCKED:
        return set_err(err, kind, "state %s is in use: another crawl has it open (%s)", path,
                       detail);
    case STORE_READ_ONLY:
        return set_err(err, kind,
                       "state %s cannot be written: the file, its directory or its file system "
                       "is read-only (%s%s%s, %s)",
                       path, detail, sys ? ": " : "", sys ? strerror(sys) : "", doing);
    case STORE_DISK_FULL:
        return set_err(err, kind,
                       "state %s: no space left (disk full or max_bytes reached) %s; the last "
                       "commit is intact",
                       path, doing);
    default:
        return set_err(err, kind, "state %s: %s (%s%s%s)", path, doing, detail, sys ? ": " : "",
                       sys ? strerror(sys) : "");
    }
}

static inline int exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static inline int prepare(store_t *s, const char *sql, sqlite3_stmt **stmt, store_err_t *err)
{
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "preparing a statement", err);
    return 0;
}

/* A failed write: roll the transaction back (the file keeps the last commit) and
 * remember the error for every later call: the counts and positions held in
 * memory no longer match the file, and only a reopen makes them agree again. */
static inline int write_failed(store_t *s, int rc, const char *doing, store_err_t *err)
{
    store_err_t e;
    sql_err(s->path, s->db, rc, doing, &e);
    if (!sqlite3_get_autocommit(s->db)) exec(s->db, "ROLLBACK");
    s->failed = e;
    if (err) *err = e;
    return -1;
}

static inline int check_failed(const store_t *s, store_err_t *err)
{
    if (s->failed.kind == STORE_OK) return 0;
    if (err) *err = s->failed;
    return -1;
}

/* Step a statement that returns no row (or whose row is not wanted), and reset it. */
static inline int step_done(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

/* The integer of a one-row query (def when it gives no row); an SQLite code. */
static inline int query_int(sqlite3 *db, const char *sql, int64_t def, int64_t *out)
{
    sqlite3_stmt *stmt;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(stmt);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : def;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(stmt);
    return rc;
}

/* The lock (store_lock.c) ------------------------------------------------------ */

/* A writer: take the flock of path's file (create: make the file if missing), or fail
 * STORE_LOCKED when another store, of this process or another, holds it. A reader:
 * only ask whether a writer holds it: *holder its pid, -1 when that is not known, 0
 * none. NULL and *err on failure. */
store_lock_t *store_lock_take(const char *path, int writer, int create, long *holder,
                              store_err_t *err);
void store_lock_release(store_lock_t *l, int writer);

/* Named objects (store.c) -------------------------------------------------------- */

/* The id and count of the object (kind, name), made (with its table: create, a format
 * with one %lld, the id) if new. */
int store_object(store_t *s, const char *kind, const char *name, const char *create, int64_t *id,
                 int64_t *count, store_err_t *err);

/* Prepare sql, a format with one %lld (the object's id). */
int store_prepare_for(store_t *s, const char *fmt, int64_t id, sqlite3_stmt **stmt,
                      store_err_t *err);

#endif
