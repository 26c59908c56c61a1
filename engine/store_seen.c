/* store_seen.c: the state's named seen sets (store.h): 64-bit URL fingerprints as
 * the keys of a WITHOUT ROWID table, added in batches, looked up one at a time. */
#include "store_internal.h"

#include <stdlib.h>

store_seen_t *store_seen(store_t *s, const char *name, store_err_t *err)
{
    if (check_failed(s, err)) return NULL;
    int64_t id = 0, count = 0;
    if (store_object(s, "seen", name,
                     "CREATE TABLE seen_%lld(fp INTEGER PRIMARY KEY) WITHOUT ROWID", &id, &count,
                     err) != 0)
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
    if (store_prepare_for(s, "INSERT OR IGNORE INTO seen_%lld(fp) VALUES (?1)", id, &set->add,
                          err) ||
        store_prepare_for(s, "SELECT 1 FROM seen_%lld WHERE fp = ?1", id, &set->has, err)) {
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
