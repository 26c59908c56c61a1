/* store.c: the durable crawl state on SQLite (store.h): the file opened (or made),
 * locked, committed and closed; its schema, meta and objects table. The queues, seen
 * sets and the caller's statements are in store_queue.c, store_seen.c and
 * store_stmt.c, over store_internal.h; the writer's lock in store_lock.c. One writing
 * connection per file, in WAL mode with SQLite's normal locking: a writer holds a lock
 * of ours on the file (flock) from open to close, so a second crawl on the same state
 * is refused rather than interleaved, while readers (luacrawl state, read_only) read
 * the last commit without stopping it. The WAL index is shared memory, the -shm file
 * beside the state (so a state on a network file system cannot be read while it is
 * written; SQLite's WAL needs shared memory for that).
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
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA_VERSION 1
#define APPLICATION_ID 0x4C43524C /* "LCRL" in the file header: this file is ours */
#define DEFAULT_CACHE_KB (32 * 1024)

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
    if (tables == 0 && app == 0 && s->read_only)
        return set_err(err, STORE_INCOMPATIBLE, "state %s is empty, not a luacrawl state", s->path);
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
    if (sqlite3_db_readonly(s->db, "main") == 1) /* SQLite fell back to reading only */
        return set_err(err, STORE_READ_ONLY,
                       "state %s cannot be written: the file or its file system is read-only",
                       s->path);
    int rc = exec(s->db, "SELECT count(*) FROM sqlite_schema");
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

/* How often store_open asks again for a lock another process holds (about a second). */
#define LOCK_TRIES 20

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
    if (o->read_only && stat(path, &st) != 0)
        return set_err(err, STORE_IO, "state %s cannot be read: %s", path, strerror(errno)), NULL;
    if (stat(path, &st) != 0 && errno == ENOENT && create_whole(path, o, err) != 0) return NULL;
    store_t *s = open_file(path, o, err);
    /* Two processes that open one state at the same instant can each take the shared
     * lock of the first read and then both fail to write: neither would crawl. So a
     * lock refused is asked again, after a wait that differs from process to process,
     * for about a second; a crawl that holds the state keeps it, and the other is
     * then told it is in use. */
    for (unsigned i = 0; !s && err && err->kind == STORE_LOCKED && i < LOCK_TRIES; i++) {
        unsigned ms = 10 + ((unsigned)getpid() * 2654435761u + i * 40503u) % 70;
        struct timespec ts = {0, (long)ms * 1000000L};
        nanosleep(&ts, NULL);
        s = open_file(path, o, err);
    }
    if (s && !o->read_only) {
        /* PATH.new, the temporary file of an older luacrawl, left beside a whole
         * PATH by a kill between its link and its unlink: it goes. */
        char *tmp = with_suffix(path, ".new");
        if (tmp) remove_db_files(tmp);
        free(tmp);
    }
    return s;
}

/* The statements every store has. */
static int prepare_own(store_t *s, store_err_t *err)
{
    if (prepare(s, "SELECT value FROM meta WHERE key = ?1", &s->meta_get, err) != 0 ||
        prepare(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", &s->meta_set, err) ||
        prepare(s, "DELETE FROM meta WHERE key = ?1", &s->meta_del, err) ||
        prepare(s, "UPDATE objects SET count = ?2 WHERE id = ?1", &s->set_count, err) ||
        prepare(s, "BEGIN", &s->begin, err) || prepare(s, "COMMIT", &s->commit, err))
        return -1;
    return 0;
}

/* How long a reader waits for SQLite's locks: a WAL being recovered by another
 * connection, or a crawl opening the state. A writer never waits on a reader. */
#define READER_BUSY_MS 2000

/* A read-only store (o->read_only): it asks who writes the state, takes no lock of
 * ours, and reads in a deferred transaction, so its snapshot is taken at the first
 * read and let go at its next commit or its close. Its connection is opened for
 * writing (when the file allows) with query_only set: as the last connection of a
 * state no crawl has open, SQLite then folds the WAL back into the file and removes
 * the -wal and -shm files at close, as a crawl's close does; a connection opened
 * read-only would make them and leave them. */
static int open_reader(store_t *s, store_err_t *err)
{
    s->lock = store_lock_take(s->path, 0, 0, &s->writer, err);
    if (!s->lock) return -1;
    int rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_extended_result_codes(s->db, 1);
    if (rc == SQLITE_OK) rc = sqlite3_busy_timeout(s->db, READER_BUSY_MS);
    if (rc == SQLITE_OK) rc = exec(s->db, "PRAGMA query_only=1");
    if (rc == SQLITE_OK) rc = exec(s->db, "BEGIN");
    if (rc != SQLITE_OK) return sql_err(s->path, s->db, rc, "opening it for reading", err);
    if (check_schema(s, err) != 0 || prepare_own(s, err) != 0) return -1;
    return 0;
}

int store_writer(const store_t *s, long *pid)
{
    *pid = s->writer > 0 ? s->writer : 0;
    return s->writer != 0;
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
    s->read_only = o->read_only != 0;
    if (s->read_only) {
        if (open_reader(s, err) != 0) goto fail;
        return s;
    }
    long holder;
    s->lock = store_lock_take(path, 1, 1, &holder, err);
    if (!s->lock) {
        if (err && err->kind == STORE_READ_ONLY) new_in_read_only_dir(path, err);
        goto fail;
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
    /* Write once now: a directory or file that cannot be written fails here
     * rather than at the first commit. */
    rc = exec(s->db, "BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) {
        sql_err(path, s->db, rc, "opening it for writing", err);
        goto fail;
    }
    if (check_schema(s, err) != 0 || (!o->skip_check && quick_check(s, err) != 0) ||
        prepare_own(s, err) != 0)
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
    store_lock_release(s->lock, !s->read_only); /* after: it may close a descriptor */
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
int store_object(store_t *s, const char *kind, const char *name, const char *create, int64_t *id,
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
int store_prepare_for(store_t *s, const char *fmt, int64_t id, sqlite3_stmt **stmt,
                      store_err_t *err)
{
    char sql[160];
    snprintf(sql, sizeof(sql), fmt, (long long)id);
    return prepare(s, sql, stmt, err);
}
