/* store_queue.c: the state's named FIFO queues (store.h): items appended to a rowid
 * table in seq order, popped by a range scan from the last seq taken (a position kept
 * in memory only), removed for good when acknowledged. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

store_queue_t *store_queue(store_t *s, const char *name, store_err_t *err)
{
    if (check_failed(s, err)) return NULL;
    int64_t id = 0, count = 0, max_seq = 0;
    if (store_object(s, "queue", name,
                     "CREATE TABLE queue_%lld(seq INTEGER PRIMARY KEY, item BLOB NOT NULL)", &id,
                     &count, err) != 0)
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
    if (store_prepare_for(s, "INSERT INTO queue_%lld(seq, item) VALUES (?1, ?2)", id, &q->push,
                          err) ||
        store_prepare_for(s,
                          "SELECT seq, item FROM queue_%lld WHERE seq > ?1 ORDER BY seq LIMIT ?2",
                          id, &q->pop, err) ||
        store_prepare_for(s, "DELETE FROM queue_%lld WHERE seq = ?1", id, &q->ack, err)) {
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
