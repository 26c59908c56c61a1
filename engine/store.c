/* store.c: the durable crawl state on SQLite (store.h). One connection per file, in
 * WAL mode with locking_mode=EXCLUSIVE: the connection holds the file's lock from
 * open to close, so a second crawl on the same state is refused rather than
 * interleaved, and the WAL index lives in our heap (no -shm file beside it).
 *
 * Schema (version 1): schema_version, meta (key/value), objects (one row per named
 * queue or seen set, with its item count kept in the same transactions as the
 * items, so an open need not count them), and a table per object:
 *   queue_<id>(seq INTEGER PRIMARY KEY, item)  a rowid table: items are appended in
 *     seq order, which SQLite's rowid B-tree packs into full pages, and a pop is a
 *     range scan from the last seq taken. Taken-but-unacknowledged is not written:
 *     the scan position lives in memory only, so after a crash every item still in
 *     the table is ready again, oldest first.
 *   seen_<id>(fp INTEGER PRIMARY KEY) WITHOUT ROWID  random 64-bit keys: as a rowid
 *     each is a 9-byte varint and the leaves need a record besides; as the key of a
 *     WITHOUT ROWID table it is stored once, 8 bytes, and compared as an integer.
 *     That made the set about a tenth smaller and its inserts faster.
 * Table names are made from our own numeric ids, never from a caller's string. */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCHEMA_VERSION 1
#define APPLICATION_ID 0x4C43524C /* "LCRL" in the file header: this file is ours */
#define DEFAULT_CACHE_KB (32 * 1024)

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

struct store {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *meta_get, *meta_set, *meta_del, *set_count;
    sqlite3_stmt *begin, *commit; /* prepared once: a crawl commits many times a second */
    store_queue_t *queues;
    store_seen_t *seens;
    store_stmt_t *stmts;
    store_err_t failed; /* kind != STORE_OK: a write failed; every call fails so */
};

const char *store_kind_name(store_kind_t kind)
{
    switch (kind) {
    case STORE_OK:
        return "ok";
    case STORE_CORRUPT:
        return "corrupt";
    case STORE_INCOMPATIBLE:
        return "incompatible";
    case STORE_LOCKED:
        return "locked";
    case STORE_READ_ONLY:
        return "read_only";
    case STORE_DISK_FULL:
        return "disk_full";
    case STORE_NOMEM:
        return "nomem";
    case STORE_IO:
        break;
    }
    return "io";
}

__attribute__((format(printf, 3, 4))) static int set_err(store_err_t *err, store_kind_t kind,
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
static store_kind_t kind_of(int rc, int sys)
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
static int sql_err(const char *path, sqlite3 *db, int rc, const char *doing, store_err_t *err)
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

static int exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int prepare(store_t *s, const char *sql, sqlite3_stmt **stmt, store_err_t *err)
{
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "preparing a statement", err);
    return 0;
}

/* A failed write: roll the transaction back (the file keeps the last commit) and
 * remember the error for every later call: the counts and positions held in
 * memory no longer match the file, and only a reopen makes them agree again. */
static int write_failed(store_t *s, int rc, const char *doing, store_err_t *err)
{
    store_err_t e;
    sql_err(s->path, s->db, rc, doing, &e);
    if (!sqlite3_get_autocommit(s->db)) exec(s->db, "ROLLBACK");
    s->failed = e;
    if (err) *err = e;
    return -1;
}

static int check_failed(const store_t *s, store_err_t *err)
{
    if (s->failed.kind == STORE_OK) return 0;
    if (err) *err = s->failed;
    return -1;
}

/* Step a statement that returns no row (or whose row is not wanted), and reset it. */
static int step_done(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

/* The integer of a one-row query (def when it gives no row); an SQLite code. */
static int query_int(sqlite3 *db, const char *sql, int64_t def, int64_t *out)
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

/* path with suffix appended (malloc'd; NULL when out of memory). */
static char *with_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", path, suffix);
    return p;
}

/* Open ------------------------------------------------------------------------- */

/* An existing empty file is a database to SQLite, and would silently become a
 * fresh state: a state cut to nothing must be an error. */
static int check_file(const char *path, store_err_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0; /* a new state (or SQLite says why not) */
    if (S_ISDIR(st.st_mode)) return set_err(err, STORE_IO, "state %s is a directory", path);
    if (!S_ISREG(st.st_mode) || st.st_size > 0) return 0;
    char *wal = with_suffix(path, "-wal");
    if (!wal) return set_err(err, STORE_NOMEM, "state %s: out of memory", path);
    int has_wal = stat(wal, &st) == 0 && st.st_size > 0;
    free(wal);
    if (has_wal) return 0;
    return set_err(err, STORE_CORRUPT,
                   "state %s is an empty file, not a luacrawl state (truncated? remove it to "
                   "start afresh)",
                   path);
}

/* A new state that cannot be created because its directory is not writable:
 * SQLite retries such an open for reading, and reports that attempt's ENOENT. */
static int new_in_read_only_dir(const char *path, store_err_t *err)
{
    struct stat st;
    if (stat(path, &st) == 0) return 0;
    char *dir = strdup(path);
    if (!dir) return 0;
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    int denied = access(slash ? dir : ".", W_OK) != 0 && (errno == EROFS || errno == EACCES);
    int e = errno;
    if (denied)
        set_err(err, STORE_READ_ONLY,
                "state %s cannot be created: its directory is not writable (%s)", path,
                strerror(e));
    free(dir);
    return denied;
}

static const char SCHEMA_SQL[] =
    "PRAGMA application_id = 1279480396;"
    "CREATE TABLE schema_version(version INTEGER NOT NULL);"
    "INSERT INTO schema_version VALUES (1);"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE objects(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,"
    " count INTEGER NOT NULL DEFAULT 0, UNIQUE(kind, name));";

/* A fresh file gets the schema; any other must be ours, of a version we read. */
static int check_schema(store_t *s, store_err_t *err)
{
    int64_t tables, app, version;
    int rc = query_int(s->db, "SELECT count(*) FROM sqlite_schema", 0, &tables);
    if (rc == SQLITE_OK) rc = query_int(s->db, "PRAGMA application_id", 0, &app);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "reading its schema", err);
    if (tables == 0 && app == 0) {
        rc = exec(s->db, SCHEMA_SQL);
        return rc == SQLITE_OK ? 0 : sql_err(s->path, s->db, rc, "creating its schema", err);
    }
    if (app != APPLICATION_ID)
        return set_err(err, STORE_INCOMPATIBLE,
                       "state %s is an SQLite database of another program, not a luacrawl state",
                       s->path);
    rc = query_int(s->db, "SELECT max(version) FROM schema_version", 0, &version);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "reading its schema version", err);
    if (version > SCHEMA_VERSION)
        return set_err(err, STORE_INCOMPATIBLE,
                       "state %s was made by a newer luacrawl (schema %" PRId64
                       "; this one reads up to %d)",
                       s->path, version, SCHEMA_VERSION);
    return 0;
}

/* PRAGMA quick_check: every page and index entry read once. SQLite would find most
 * damage only when a crawl reached it; found at open, the error comes before any
 * work is done on a state that cannot be trusted. */
static int quick_check(store_t *s, store_err_t *err)
{
    sqlite3_stmt *stmt;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &stmt, NULL);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "checking it", err);
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(stmt);
        return sql_err(s->path, s->db, rc, "checking it", err);
    }
    const char *r = (const char *)sqlite3_column_text(stmt, 0);
    int ok = r && strcmp(r, "ok") == 0;
    if (!ok)
        set_err(err, STORE_CORRUPT, "state %s is damaged (quick_check: %.300s)", s->path,
                r ? r : "no answer");
    sqlite3_finalize(stmt);
    return ok ? 0 : -1;
}

static int set_pragmas(store_t *s, const store_opts_t *o, store_err_t *err)
{
    char sql[160];
    int64_t page = 4096;
    /* The connection's lock and WAL: locking_mode must be set before WAL starts for
     * the WAL index to be kept in memory. The first read takes the lock. */
    if (sqlite3_db_readonly(s->db, "main") == 1) /* SQLite fell back to reading only */
        return set_err(err, STORE_READ_ONLY,
                       "state %s cannot be written: the file or its file system is read-only",
                       s->path);
    int rc = exec(s->db, "PRAGMA locking_mode=EXCLUSIVE");
    if (rc == SQLITE_OK) rc = exec(s->db, "SELECT count(*) FROM sqlite_schema");
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "opening it", err);
    snprintf(sql, sizeof(sql),
             "PRAGMA synchronous=%s; PRAGMA cache_size=-%d; PRAGMA wal_autocheckpoint=8192",
             o->sync_full ? "FULL" : "NORMAL", o->cache_kb > 0 ? o->cache_kb : DEFAULT_CACHE_KB);
    rc = exec(s->db, sql);
    if (rc == SQLITE_OK && o->max_bytes > 0) {
        rc = query_int(s->db, "PRAGMA page_size", 4096, &page);
        snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%lld",
                 (long long)(o->max_bytes / page > 0 ? o->max_bytes / page : 1));
        if (rc == SQLITE_OK) rc = exec(s->db, sql);
    }
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "setting it up", err);
    return 0;
}

static int start_wal(store_t *s, store_err_t *err)
{
    sqlite3_stmt *stmt;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &stmt, NULL);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "starting its WAL", err);
    rc = sqlite3_step(stmt);
    const char *mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(stmt, 0) : NULL;
    int wal = mode && strcmp(mode, "wal") == 0;
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW) return sql_err(s->path, s->db, rc, "starting its WAL", err);
    if (!wal)
        return set_err(err, STORE_READ_ONLY,
                       "state %s: its WAL cannot be made (is the directory writable?)", s->path);
    return 0;
}

static store_t *open_file(const char *path, const store_opts_t *o, store_err_t *err);

/* A file and its WAL and shared-memory files gone, if they were there. */
static void remove_db_files(const char *file)
{
    static const char *const suffixes[] = {"-wal", "-shm"};
    unlink(file);
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        char *f = with_suffix(file, suffixes[i]);
        if (f) unlink(f);
        free(f);
    }
}

/* The directory that holds path, synced: a file linked into it stays there after a
 * power loss. Best effort: a file system that cannot sync a directory says so by
 * failing, and the state is no less whole for it. */
static void sync_dir_of(const char *path)
{
    char *dir = strdup(path);
    if (!dir) return;
    char *slash = strrchr(dir, '/');
    const char *d = ".";
    if (slash == dir)
        d = "/";
    else if (slash) {
        *slash = '\0';
        d = dir;
    }
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* The temporary new file of a process making a new state at path: PATH.new.PID, its
 * own, so that two processes making one state do not unlink each other's. */
static char *new_name(const char *path)
{
    char suffix[32];
    snprintf(suffix, sizeof(suffix), ".new.%ld", (long)getpid());
    return with_suffix(path, suffix);
}

/* Close a state made under a temporary name, its WAL written into the file first
 * and checked: SQLite's close ignores a checkpoint that fails (a full disk), and
 * a file linked without its WAL would be a damaged state, refused by every run. */
static int close_whole(store_t *s, const char *path, store_err_t *err)
{
    int r = store_commit(s, err);
    int rc = SQLITE_OK, log = -1, done = -1;
    if (r == 0) rc = exec(s->db, "COMMIT"); /* the empty transaction store_commit began */
    if (r == 0 && rc == SQLITE_OK)
        rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
    if (r == 0 && (rc != SQLITE_OK || log != 0)) {
        int sys = sqlite3_system_errno(s->db);
        r = set_err(err, rc == SQLITE_OK ? STORE_IO : kind_of(rc, sys),
                    "state %s cannot be created: %s%s%s; nothing was made", path,
                    rc == SQLITE_OK ? "its file could not be written whole" : sqlite3_errmsg(s->db),
                    sys ? ": " : "", sys ? strerror(sys) : "");
    }
    store_abandon(s);
    return r;
}

/* A new state is made whole beside its path (PATH.new.PID: opened, its schema
 * written, closed) and then linked into place. SQLite creates its file empty and
 * writes it later; a kill in between would leave an empty file at PATH, which the
 * next open must refuse (an empty state is a truncated one). This way PATH is whole
 * or not there. When another process linked PATH first, its state is the one opened
 * (and found locked while that process crawls). A kill while the new file is made
 * leaves PATH.new.PID, which nothing reads. */
static int create_whole(const char *path, const store_opts_t *o, store_err_t *err)
{
    if (new_in_read_only_dir(path, err)) return -1;
    char *tmp = new_name(path);
    if (!tmp) return set_err(err, STORE_NOMEM, "state %s: out of memory", path);
    remove_db_files(tmp);
    store_opts_t t = *o;
    t.skip_check = 1;
    store_t *s = open_file(tmp, &t, err);
    int r = s ? close_whole(s, path, err) : -1;
    if (r == 0 && link(tmp, path) != 0 && errno != EEXIST) {
        /* A file system without hard links: rename, which would replace a PATH
         * another process made meanwhile (it then holds the file open and locked,
         * and this open of PATH fails as "locked"). */
        int e = errno;
        if ((e != EPERM && e != ENOTSUP && e != ENOSYS) || rename(tmp, path) != 0)
            r = set_err(err, STORE_IO, "state %s cannot be created: %s", path, strerror(errno));
    }
    remove_db_files(tmp);
    free(tmp);
    if (r == 0) sync_dir_of(path);
    return r;
}

store_t *store_open(const char *path, const store_opts_t *opts, store_err_t *err)
{
    static const store_opts_t defaults = {0};
    const store_opts_t *o = opts ? opts : &defaults;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT && create_whole(path, o, err) != 0) return NULL;
    store_t *s = open_file(path, o, err);
    if (s) {
        /* PATH.new, the temporary file of an older luacrawl, left beside a whole
         * PATH by a kill between its link and its unlink: it goes. */
        char *tmp = with_suffix(path, ".new");
        if (tmp) remove_db_files(tmp);
        free(tmp);
    }
    return s;
}

static store_t *open_file(const char *path, const store_opts_t *o, store_err_t *err)
{
    if (check_file(path, err) != 0) return NULL;
    store_t *s = calloc(1, sizeof(*s));
    if (!s || !(s->path = strdup(path))) {
        free(s);
        set_err(err, STORE_NOMEM, "state %s: out of memory", path);
        return NULL;
    }
    /* NOMUTEX: a store is used by the thread of the event loop only, so its
     * connection needs no mutex of its own (SQLite takes one at every call else). */
    int rc = sqlite3_open_v2(
        path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (new_in_read_only_dir(path, err)) goto fail;
        sql_err(path, s->db, rc, "opening it", err);
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    if (set_pragmas(s, o, err) != 0 || start_wal(s, err) != 0) goto fail;
    /* Write once now: the exclusive lock is then held until close, and a
     * directory or file that cannot be written fails here rather than at the
     * first commit. */
    rc = exec(s->db, "BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) {
        sql_err(path, s->db, rc, "opening it for writing", err);
        goto fail;
    }
    if (check_schema(s, err) != 0 || (!o->skip_check && quick_check(s, err) != 0)) goto fail;
    if (prepare(s, "SELECT value FROM meta WHERE key = ?1", &s->meta_get, err) != 0 ||
        prepare(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", &s->meta_set, err) ||
        prepare(s, "DELETE FROM meta WHERE key = ?1", &s->meta_del, err) ||
        prepare(s, "UPDATE objects SET count = ?2 WHERE id = ?1", &s->set_count, err) ||
        prepare(s, "BEGIN", &s->begin, err) || prepare(s, "COMMIT", &s->commit, err))
        goto fail;
    rc = exec(s->db, "COMMIT");
    if (rc == SQLITE_OK) rc = exec(s->db, "BEGIN");
    if (rc != SQLITE_OK) {
        sql_err(path, s->db, rc, "writing its schema", err);
        goto fail;
    }
    return s;
fail:
    store_abandon(s);
    return NULL;
}

/* Commit and close ------------------------------------------------------------- */

static int write_counts(store_t *s)
{
    for (store_queue_t *q = s->queues; q; q = q->next) {
        if (!q->dirty) continue;
        sqlite3_bind_int64(s->set_count, 1, q->id);
        sqlite3_bind_int64(s->set_count, 2, q->rows);
        int rc = step_done(s->set_count);
        if (rc != SQLITE_DONE) return rc;
        q->dirty = 0;
    }
    for (store_seen_t *set = s->seens; set; set = set->next) {
        if (!set->dirty) continue;
        sqlite3_bind_int64(s->set_count, 1, set->id);
        sqlite3_bind_int64(s->set_count, 2, set->size);
        int rc = step_done(s->set_count);
        if (rc != SQLITE_DONE) return rc;
        set->dirty = 0;
    }
    return SQLITE_DONE;
}

int store_commit(store_t *s, store_err_t *err)
{
    if (check_failed(s, err)) return -1;
    int rc = write_counts(s);
    if (rc != SQLITE_DONE) return write_failed(s, rc, "while committing", err);
    rc = step_done(s->commit);
    if (rc != SQLITE_DONE) return write_failed(s, rc, "while committing", err);
    rc = step_done(s->begin);
    if (rc != SQLITE_DONE) return write_failed(s, rc, "after a commit", err);
    return 0;
}

static void free_objects(store_t *s)
{
    while (s->queues) {
        store_queue_t *q = s->queues;
        s->queues = q->next;
        sqlite3_finalize(q->push);
        sqlite3_finalize(q->pop);
        sqlite3_finalize(q->ack);
        free(q->arena);
        free(q);
    }
    while (s->seens) {
        store_seen_t *set = s->seens;
        s->seens = set->next;
        sqlite3_finalize(set->add);
        sqlite3_finalize(set->has);
        free(set);
    }
    while (s->stmts) {
        store_stmt_t *st = s->stmts;
        s->stmts = st->next;
        sqlite3_finalize(st->stmt);
        free(st->sql);
        free(st);
    }
}

void store_abandon(store_t *s)
{
    if (!s) return;
    if (s->db && !sqlite3_get_autocommit(s->db)) exec(s->db, "ROLLBACK");
    free_objects(s);
    sqlite3_finalize(s->meta_get);
    sqlite3_finalize(s->meta_set);
    sqlite3_finalize(s->meta_del);
    sqlite3_finalize(s->set_count);
    sqlite3_finalize(s->begin);
    sqlite3_finalize(s->commit);
    sqlite3_close(s->db); /* a NULL db is a no-op; the WAL is checkpointed here */
    free(s->path);
    free(s);
}

int store_close(store_t *s, store_err_t *err)
{
    int r = store_commit(s, err);
    store_abandon(s);
    return r;
}

const char *store_path(const store_t *s)
{
    return s->path;
}

long long store_file_bytes(const store_t *s)
{
    struct stat st;
    long long total = 0;
    char *wal = with_suffix(s->path, "-wal");
    if (stat(s->path, &st) == 0) total += st.st_size;
    if (wal && stat(wal, &st) == 0) total += st.st_size;
    free(wal);
    return total;
}

/* Meta ----------------------------------------------------------------------------- */

int store_meta_get(store_t *s, const char *key, char **value, size_t *len, store_err_t *err)
{
    if (check_failed(s, err)) return -1;
    sqlite3_bind_text(s->meta_get, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s->meta_get);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(s->meta_get);
        return 0;
    }
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s->meta_get);
        return sql_err(s->path, s->db, rc, "reading its meta", err);
    }
    const void *v = sqlite3_column_blob(s->meta_get, 0);
    size_t n = (size_t)sqlite3_column_bytes(s->meta_get, 0);
    char *copy = malloc(n + 1);
    if (copy) {
        if (n) memcpy(copy, v, n);
        copy[n] = '\0';
    }
    sqlite3_reset(s->meta_get);
    if (!copy) return set_err(err, STORE_NOMEM, "state %s: out of memory", s->path);
    *value = copy;
    *len = n;
    return 1;
}

int store_meta_set(store_t *s, const char *key, const void *value, size_t len, store_err_t *err)
{
    if (check_failed(s, err)) return -1;
    sqlite3_stmt *stmt = value ? s->meta_set : s->meta_del;
    sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
    if (value) sqlite3_bind_blob64(stmt, 2, value, len, SQLITE_STATIC);
    int rc = step_done(stmt);
    if (rc != SQLITE_DONE) return write_failed(s, rc, "writing its meta", err);
    return 0;
}

/* Named objects -------------------------------------------------------------------- */

/* The id and count of the object (kind, name), made (with its table) if new. */
static int object(store_t *s, const char *kind, const char *name, const char *create, int64_t *id,
                  int64_t *count, store_err_t *err)
{
    sqlite3_stmt *stmt;
    int rc = sqlite3_prepare_v2(
        s->db, "SELECT id, count FROM objects WHERE kind = ?1 AND name = ?2", -1, &stmt, NULL);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "reading its objects", err);
    sqlite3_bind_text(stmt, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(stmt, 0);
        *count = sqlite3_column_int64(stmt, 1);
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_ROW) return 0;
    if (rc != SQLITE_DONE) return sql_err(s->path, s->db, rc, "reading its objects", err);
    rc = sqlite3_prepare_v2(s->db, "INSERT INTO objects(kind, name) VALUES (?1, ?2)", -1, &stmt,
                            NULL);
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "adding an object", err);
    sqlite3_bind_text(stmt, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return write_failed(s, rc, "adding an object", err);
    *id = sqlite3_last_insert_rowid(s->db);
    *count = 0;
    char sql[128];
    snprintf(sql, sizeof(sql), create, (long long)*id);
    rc = exec(s->db, sql);
    if (rc != SQLITE_OK) return write_failed(s, rc, "adding an object", err);
    return 0;
}

/* Prepare sql, a format with one %lld (the object's id). */
static int prepare_for(store_t *s, const char *fmt, int64_t id, sqlite3_stmt **stmt,
                       store_err_t *err)
{
    char sql[160];
    snprintf(sql, sizeof(sql), fmt, (long long)id);
    return prepare(s, sql, stmt, err);
}

store_queue_t *store_queue(store_t *s, const char *name, store_err_t *err)
{
    if (check_failed(s, err)) return NULL;
    int64_t id = 0, count = 0, max_seq = 0;
    if (object(s, "queue", name,
               "CREATE TABLE queue_%lld(seq INTEGER PRIMARY KEY, item BLOB NOT NULL)", &id, &count,
               err) != 0)
        return NULL;
    for (store_queue_t *q = s->queues; q; q = q->next)
        if (q->id == id) return q;
    store_queue_t *q = calloc(1, sizeof(*q));
    if (!q) {
        set_err(err, STORE_NOMEM, "state %s: out of memory", s->path);
        return NULL;
    }
    q->s = s;
    q->id = id;
    q->rows = count;
    q->next = s->queues;
    s->queues = q; /* freed with s, whatever happens next */
    char sql[64];
    snprintf(sql, sizeof(sql), "SELECT max(seq) FROM queue_%lld", (long long)id);
    int rc = query_int(s->db, sql, 0, &max_seq);
    if (rc != SQLITE_OK) {
        sql_err(s->path, s->db, rc, "reading a queue", err);
        q->id = -1; /* never found again */
        return NULL;
    }
    q->next_seq = max_seq + 1;
    if (prepare_for(s, "INSERT INTO queue_%lld(seq, item) VALUES (?1, ?2)", id, &q->push, err) ||
        prepare_for(s, "SELECT seq, item FROM queue_%lld WHERE seq > ?1 ORDER BY seq LIMIT ?2", id,
                    &q->pop, err) ||
        prepare_for(s, "DELETE FROM queue_%lld WHERE seq = ?1", id, &q->ack, err)) {
        q->id = -1;
        return NULL;
    }
    return q;
}

int store_queue_push(store_queue_t *q, store_item_t *items, size_t n, store_err_t *err)
{
    store_t *s = q->s;
    if (check_failed(s, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        store_item_t *it = &items[i];
        it->id = q->next_seq;
        sqlite3_bind_int64(q->push, 1, it->id);
        if (it->text)
            sqlite3_bind_text64(q->push, 2, it->data, it->len, SQLITE_STATIC, SQLITE_UTF8);
        else
            sqlite3_bind_blob64(q->push, 2, it->len ? it->data : "", it->len, SQLITE_STATIC);
        int rc = step_done(q->push);
        if (rc != SQLITE_DONE) return write_failed(s, rc, "adding to a queue", err);
        q->next_seq++;
        q->rows++;
        q->dirty = 1;
    }
    return 0;
}

/* Room for need more bytes in the arena after used; its base may move. */
static int arena_reserve(store_queue_t *q, size_t used, size_t need)
{
    if (used + need <= q->arena_cap) return 0;
    size_t cap = q->arena_cap ? q->arena_cap : 4096;
    while (cap < used + need)
        cap *= 2;
    char *a = realloc(q->arena, cap);
    if (!a) return -1;
    q->arena = a;
    q->arena_cap = cap;
    return 0;
}

int store_queue_pop(store_queue_t *q, store_item_t *out, size_t max, size_t *n, store_err_t *err)
{
    store_t *s = q->s;
    *n = 0;
    if (check_failed(s, err)) return -1;
    if (max == 0 || q->rows - q->pending == 0) return 0;
    sqlite3_bind_int64(q->pop, 1, q->cursor);
    sqlite3_bind_int64(q->pop, 2, (sqlite3_int64)max);
    size_t used = 0, got = 0;
    int rc;
    while ((rc = sqlite3_step(q->pop)) == SQLITE_ROW) {
        const void *data = sqlite3_column_blob(q->pop, 1);
        size_t len = (size_t)sqlite3_column_bytes(q->pop, 1);
        if (arena_reserve(q, used, len + 1) != 0) {
            sqlite3_reset(q->pop);
            return set_err(err, STORE_NOMEM, "state %s: out of memory", s->path);
        }
        if (len) memcpy(q->arena + used, data, len);
        q->arena[used + len] = '\0';
        out[got].id = sqlite3_column_int64(q->pop, 0);
        out[got].data = NULL; /* set below, once the arena stops moving */
        out[got].len = len;
        out[got].text = sqlite3_column_type(q->pop, 1) == SQLITE_TEXT;
        used += len + 1;
        got++;
    }
    sqlite3_reset(q->pop);
    if (rc != SQLITE_DONE) return sql_err(s->path, s->db, rc, "reading a queue", err);
    /* The items lie one after another in the arena, each followed by a NUL. */
    const char *p = q->arena;
    for (size_t i = 0; i < got; i++) {
        out[i].data = p;
        p += out[i].len + 1;
    }
    if (got) q->cursor = out[got - 1].id;
    q->pending += (int64_t)got;
    *n = got;
    return 0;
}

int store_queue_ack(store_queue_t *q, const int64_t *ids, size_t n, store_err_t *err)
{
    store_t *s = q->s;
    if (check_failed(s, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(q->ack, 1, ids[i]);
        int rc = step_done(q->ack);
        if (rc != SQLITE_DONE) return write_failed(s, rc, "acknowledging a queue item", err);
        if (sqlite3_changes(s->db) != 1) continue;
        q->rows--;
        if (ids[i] <= q->cursor) q->pending--;
        q->dirty = 1;
    }
    return 0;
}

int64_t store_queue_ready(const store_queue_t *q)
{
    return q->rows - q->pending;
}

int64_t store_queue_pending(const store_queue_t *q)
{
    return q->pending;
}

/* Seen sets --------------------------------------------------------------------- */

store_seen_t *store_seen(store_t *s, const char *name, store_err_t *err)
{
    if (check_failed(s, err)) return NULL;
    int64_t id = 0, count = 0;
    if (object(s, "seen", name, "CREATE TABLE seen_%lld(fp INTEGER PRIMARY KEY) WITHOUT ROWID", &id,
               &count, err) != 0)
        return NULL;
    for (store_seen_t *set = s->seens; set; set = set->next)
        if (set->id == id) return set;
    store_seen_t *set = calloc(1, sizeof(*set));
    if (!set) {
        set_err(err, STORE_NOMEM, "state %s: out of memory", s->path);
        return NULL;
    }
    set->s = s;
    set->id = id;
    set->size = count;
    set->next = s->seens;
    s->seens = set; /* freed with s, whatever happens next */
    if (prepare_for(s, "INSERT OR IGNORE INTO seen_%lld(fp) VALUES (?1)", id, &set->add, err) ||
        prepare_for(s, "SELECT 1 FROM seen_%lld WHERE fp = ?1", id, &set->has, err)) {
        set->id = -1; /* never found again */
        return NULL;
    }
    return set;
}

int store_seen_add(store_seen_t *set, const uint64_t *fps, size_t n, unsigned char *added,
                   store_err_t *err)
{
    store_t *s = set->s;
    if (check_failed(s, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(set->add, 1, (sqlite3_int64)fps[i]);
        int rc = step_done(set->add);
        if (rc != SQLITE_DONE) return write_failed(s, rc, "adding to a seen set", err);
        int is_new = sqlite3_changes(s->db) == 1;
        if (added) added[i] = (unsigned char)is_new;
        if (is_new) {
            set->size++;
            set->dirty = 1;
        }
    }
    return 0;
}

int store_seen_has(store_seen_t *set, uint64_t fp, store_err_t *err)
{
    store_t *s = set->s;
    if (check_failed(s, err)) return -1;
    sqlite3_bind_int64(set->has, 1, (sqlite3_int64)fp);
    int rc = sqlite3_step(set->has);
    sqlite3_reset(set->has);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    return sql_err(s->path, s->db, rc, "reading a seen set", err);
}

int64_t store_seen_size(const store_seen_t *set)
{
    return set->size;
}

/* Statements ------------------------------------------------------------------- */

store_stmt_t *store_stmt(store_t *s, const char *sql, store_err_t *err)
{
    if (check_failed(s, err)) return NULL;
    for (store_stmt_t *st = s->stmts; st; st = st->next)
        if (strcmp(st->sql, sql) == 0) return st;
    store_stmt_t *st = calloc(1, sizeof(*st));
    if (!st || !(st->sql = strdup(sql))) {
        free(st);
        set_err(err, STORE_NOMEM, "state %s: out of memory", s->path);
        return NULL;
    }
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->stmt, NULL);
    if (rc != SQLITE_OK || !st->stmt) {
        if (rc == SQLITE_OK)
            set_err(err, STORE_IO, "state %s: an empty statement", s->path);
        else
            set_err(err, kind_of(rc, 0) == STORE_CORRUPT ? STORE_CORRUPT : STORE_IO,
                    "state %s: %s (in: %.200s)", s->path, sqlite3_errmsg(s->db), sql);
        sqlite3_finalize(st->stmt);
        free(st->sql);
        free(st);
        return NULL;
    }
    st->s = s;
    st->writes = !sqlite3_stmt_readonly(st->stmt);
    st->next = s->stmts;
    s->stmts = st;
    return st;
}

int store_stmt_bind(store_stmt_t *st, const store_value_t *v, int n, store_err_t *err)
{
    store_t *s = st->s;
    if (check_failed(s, err)) return -1;
    sqlite3_reset(st->stmt);
    sqlite3_clear_bindings(st->stmt);
    if (n > sqlite3_bind_parameter_count(st->stmt))
        return set_err(err, STORE_IO, "state %s: %d values for a statement of %d parameters",
                       s->path, n, sqlite3_bind_parameter_count(st->stmt));
    for (int i = 0; i < n; i++) {
        int rc = SQLITE_OK;
        switch (v[i].type) {
        case STORE_NULL:
            break;
        case STORE_INTEGER:
            rc = sqlite3_bind_int64(st->stmt, i + 1, v[i].i);
            break;
        case STORE_REAL:
            rc = sqlite3_bind_double(st->stmt, i + 1, v[i].r);
            break;
        case STORE_TEXT:
            rc = sqlite3_bind_text64(st->stmt, i + 1, v[i].p, v[i].len, SQLITE_TRANSIENT,
                                     SQLITE_UTF8);
            break;
        case STORE_BLOB:
            rc = sqlite3_bind_blob64(st->stmt, i + 1, v[i].len ? v[i].p : "", v[i].len,
                                     SQLITE_TRANSIENT);
            break;
        }
        if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "binding a value", err);
    }
    return 0;
}

int store_stmt_params(store_stmt_t *st)
{
    return sqlite3_bind_parameter_count(st->stmt);
}

int store_stmt_run(store_stmt_t *st, const store_value_t *v, int n, store_err_t *err)
{
    store_t *s = st->s;
    if (check_failed(s, err)) return -1;
    sqlite3_stmt *stmt = st->stmt;
    sqlite3_reset(stmt); /* a read left at a row */
    if (n > sqlite3_bind_parameter_count(stmt))
        return set_err(err, STORE_IO, "state %s: %d values for a statement of %d parameters",
                       s->path, n, sqlite3_bind_parameter_count(stmt));
    int rc = SQLITE_OK;
    for (int i = 0; i < n && rc == SQLITE_OK; i++) {
        switch (v[i].type) {
        case STORE_NULL:
            rc = sqlite3_bind_null(stmt, i + 1);
            break;
        case STORE_INTEGER:
            rc = sqlite3_bind_int64(stmt, i + 1, v[i].i);
            break;
        case STORE_REAL:
            rc = sqlite3_bind_double(stmt, i + 1, v[i].r);
            break;
        case STORE_TEXT:
            rc = sqlite3_bind_text64(stmt, i + 1, v[i].p, v[i].len, SQLITE_STATIC, SQLITE_UTF8);
            break;
        case STORE_BLOB:
            rc = sqlite3_bind_blob64(stmt, i + 1, v[i].len ? v[i].p : "", v[i].len, SQLITE_STATIC);
            break;
        }
    }
    if (rc != SQLITE_OK) {
        sqlite3_clear_bindings(stmt);
        return sql_err(s->path, s->db, rc, "binding a value", err);
    }
    rc = step_done(stmt);
    /* The values are the caller's: none may be read after this call. */
    sqlite3_clear_bindings(stmt);
    if (rc == SQLITE_DONE) return 0;
    if (st->writes) return write_failed(s, rc, "writing the crawl's tables", err);
    return sql_err(s->path, s->db, rc, "reading the crawl's tables", err);
}

int store_stmt_step(store_stmt_t *st, store_err_t *err)
{
    store_t *s = st->s;
    if (check_failed(s, err)) return -1;
    int rc = sqlite3_step(st->stmt);
    if (rc == SQLITE_ROW) return 1;
    sqlite3_reset(st->stmt);
    if (rc == SQLITE_DONE) return 0;
    if (st->writes) return write_failed(s, rc, "writing the crawl's tables", err);
    return sql_err(s->path, s->db, rc, "reading the crawl's tables", err);
}

void store_stmt_reset(store_stmt_t *st)
{
    sqlite3_reset(st->stmt);
}

int store_stmt_columns(store_stmt_t *st)
{
    return sqlite3_data_count(st->stmt);
}

void store_stmt_column(store_stmt_t *st, int i, store_value_t *out)
{
    memset(out, 0, sizeof(*out));
    switch (sqlite3_column_type(st->stmt, i)) {
    case SQLITE_INTEGER:
        out->type = STORE_INTEGER;
        out->i = sqlite3_column_int64(st->stmt, i);
        break;
    case SQLITE_FLOAT:
        out->type = STORE_REAL;
        out->r = sqlite3_column_double(st->stmt, i);
        break;
    case SQLITE_TEXT:
        out->type = STORE_TEXT;
        out->p = (const char *)sqlite3_column_text(st->stmt, i);
        out->len = (size_t)sqlite3_column_bytes(st->stmt, i);
        break;
    case SQLITE_BLOB:
        out->type = STORE_BLOB;
        out->p = sqlite3_column_blob(st->stmt, i);
        out->len = (size_t)sqlite3_column_bytes(st->stmt, i);
        break;
    default:
        out->type = STORE_NULL;
        break;
    }
}

int64_t store_changes(store_t *s)
{
    return sqlite3_changes(s->db);
}

int64_t store_last_id(store_t *s)
{
    return sqlite3_last_insert_rowid(s->db);
}
