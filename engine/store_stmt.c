/* store_stmt.c: SQL of the caller's own over the state's database and transaction
 * (store.h): statements prepared once per SQL text, values bound and read back, a
 * failed write as the store's other failed writes. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

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
