/* warc.c: the WARC writer: its two threads and the jobs between them, its files
 * (names, rotation, `.open` until closed), records put together and written whole or
 * cut back, the table of payloads for revisits. A record's text, its gzip member, the
 * CDXJ index and the digests have files of their own (warc_internal.h); warc_read.c
 * reads records back; warc.h says what each promises. */
#include "warc_internal.h"

#include "buf.h"
#include "jobq.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#define SERIAL_MAX 99999
/* Records queued for the writer's thread, at most (a larger one goes alone): a write
 * waits for room past it. A few hundred pages of a crawl. */
#define QUEUE_BYTES (8u << 20)

const char *warc_kind_name(enum warc_kind kind)
{
    static const char *const names[] = {"ok", "io", "memory", "format", "truncated", "usage"};
    return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "io";
}

/* ---- the writer ---- */

/* A payload written before, for revisits: its digest, and "uri\0date\0id\0". */
struct seen_payload {
    unsigned char digest[SHA1_LEN];
    char *ref;
};

/* The writer's state is split by thread. The caller's thread validates what a write
 * is given, makes the record IDs, copies the exchange into a job and queues it; the
 * writer's thread (jobq.h) does the rest: digests, the records, their compression,
 * the file, rotation, the index and the table of payloads. Between them pass only
 * the jobs (through the queue) and a failure (under mu). */
struct warc {
    char *prefix; /* PREFIX of PREFIX-NNNNN.warc.gz; or the one file's name */
    int single;   /* target named one file: no serial numbers, no rotation */
    int gz;
    int serial;
    warc_opts_t opts;
    char *software, *info;
    int fd;         /* the file being written; -1: none */
    char *path;     /* its final name */
    char *cdx_path; /* the index's final name */
    unsigned long long size;
    int records; /* written to this file besides its warcinfo */
    char warcinfo_id[WARC_ID_SIZE];
    int broken;             /* a failed write could not be cut back off: no more writes */
    struct warc_gzip gzip;  /* the records' compressor */
    EVP_MD *sha1;           /* fetched once: an implicit fetch per digest costs a lookup each */
    EVP_MD_CTX *md;         /* reused for every digest of the writer's thread */
    EVP_MD_CTX *main_md;    /* and of the caller's thread (warc_write_exchange_lent) */
    struct buf out;         /* the records of one write, compressed */
    struct buf head;        /* the caller's thread's: a head as warc_fixed_head makes it */
    struct buf rec;         /* one record before compression */
    struct warc_cdx cdx;    /* this file's index lines */
    struct warc_random ids; /* the caller's thread's, for the records it queues */
    struct warc_random info_ids; /* the writer's thread's, for the warcinfo of each file */
    struct seen_payload *seen;
    size_t nseen, seen_cap; /* seen_cap: a power of 2, or 0 */
    jobq_t *q;              /* NULL before the first file is made, and after close */
    int track;              /* originals written are listed in fresh (warc_track_originals) */
    pthread_mutex_t mu;     /* guards failed, nfailed and fresh */
    warc_err_t failed;      /* the first failure of the writer's thread not yet reported */
    int nfailed;            /* writes that failed since the last report */
    struct buf fresh;       /* originals written, "digest\0uri\0date\0id\0" each */
};

/* A write call's records, for the writer's thread: what it was given, copied (an
 * exchange's head with its Transfer-Encoding fixed already). */
struct job {
    jobq_job_t q;
    int metadata;              /* a metadata record; else a response (or revisit) and request */
    int conversion;            /* with metadata: a conversion record rather than metadata */
    int remember;              /* no record: an earlier writer's original (warc_remember) */
    char id[WARC_ID_SIZE];     /* the response's (or the metadata record's) */
    char req_id[WARC_ID_SIZE]; /* the request's */
    warc_exchange_t ex;        /* metadata: url, date, and the fields as payload */
    const char *concurrent_to; /* metadata: NULL or a record ID; conversion: WARC-Refers-To */
    const char *content_type;  /* metadata: NULL (warc-fields) or a conversion's */
    struct warc_digests dg;    /* an exchange's, when the caller's thread made them */
    warc_loan_t loan;          /* ex.payload's, when lent (release not NULL) */
    char data[];               /* the strings ex points to (but a lent payload) */
};

/* A job done with (or never queued): its payload given back when lent. */
static void free_job(struct job *j)
{
    if (j && j->loan.release) j->loan.release(j->loan.arg);
    free(j);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
    return 0;
}

/* The gzip member (or plain bytes) of a record whose block is the n pieces given,
 * appended to w->out. Pieces from raw_from on are stored, not deflated, where the
 * level's compressor allows it (ISA-L's, the default). -1 when out of memory. */
static int add_record(warc_t *w, const record_t *r, const char *const *piece, const size_t *len,
                      int n, int raw_from)
{
    struct buf *b = &w->rec;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += len[i];
    int bad = warc_record_head(b, r, w->warcinfo_id, total);
    if (w->gz && !w->gzip.deflater && raw_from < n && n - raw_from <= 3) {
        const char *raw[4];
        size_t raw_len[4];
        int k = 0;
        for (int i = 0; i < raw_from; i++)
            bad |= buf_append(b, piece[i], len[i]);
        for (int i = raw_from; i < n; i++, k++) {
            raw[k] = piece[i];
            raw_len[k] = len[i];
        }
        raw[k] = "\r\n\r\n";
        raw_len[k++] = 4;
        return bad ? -1 : warc_gzip_member_stored(&w->gzip, &w->out, b->p, b->n, raw, raw_len, k);
    }
    /* The block and the two CR LF that end a record, after the header block: the whole
     * record in one buffer, compressed in one call. */
    for (int i = 0; i < n; i++)
        bad |= buf_append(b, piece[i], len[i]);
    bad |= buf_append(b, "\r\n\r\n", 4);
    if (bad) return -1;
    return w->gz ? warc_gzip_member(&w->gzip, &w->out, b->p, b->n)
                 : buf_append(&w->out, b->p, b->n);
}

/* A record is held whole in memory and compressed in one call: a message past 2 GB is
 * refused (a fetch's max_size is far below it). */
static int too_long(size_t n)
{
    return n > (size_t)UINT32_MAX / 2;
}

/* Write w->out to the file whole, or cut back to where it was. */
static int flush_out(warc_t *w, warc_err_t *err)
{
    size_t done = 0;
    while (done < w->out.n) {
        ssize_t k = write(w->fd, w->out.p + done, w->out.n - done);
        if (k > 0) {
            done += (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        int e = k < 0 ? errno : ENOSPC;
        if (done && ftruncate(w->fd, (off_t)w->size) < 0) {
            w->broken = 1;
            return set_err(err, WARC_E_IO,
                           "writing %s.open: %s; and it could not be cut back to its last whole "
                           "record at %llu bytes",
                           w->path, strerror(e), w->size);
        }
        if (done && lseek(w->fd, (off_t)w->size, SEEK_SET) < 0) w->broken = 1;
        return set_err(err, WARC_E_IO, "writing %s.open: %s", w->path, strerror(e));
    }
    return 0;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The final names of the file with serial number w->serial and of its index. */
static int make_names(warc_t *w)
{
    free(w->path);
    free(w->cdx_path);
    w->path = w->cdx_path = NULL;
    if (w->single) {
        w->path = strdup(w->prefix);
        size_t n = strlen(w->prefix) - (w->gz ? 8 : 5); /* less ".warc.gz" or ".warc" */
        char *stem = strndup(w->prefix, n);
        if (stem) w->cdx_path = cat(stem, ".cdxj");
        free(stem);
    } else {
        size_t n = strlen(w->prefix) + 32;
        w->path = malloc(n);
        w->cdx_path = malloc(n);
        if (w->path) snprintf(w->path, n, "%s-%05d.warc.gz", w->prefix, w->serial);
        if (w->cdx_path) snprintf(w->cdx_path, n, "%s-%05d.cdxj", w->prefix, w->serial);
    }
    return w->path && w->cdx_path ? 0 : -1;
}

/* Whether any of the files of the current names is there already (also as .open). */
static int names_taken(warc_t *w, int *err_oom)
{
    char *a = cat(w->path, ".open"), *b = cat(w->cdx_path, ".open");
    *err_oom = !a || !b;
    int taken = !*err_oom && (exists(w->path) || exists(a) ||
                              (w->opts.cdx && (exists(w->cdx_path) || exists(b))));
    free(a);
    free(b);
    return taken;
}

/* The digest of the pieces in turn, as text and (raw not NULL) raw. */
static int sha1_of(warc_t *w, const char *const *piece, const size_t *len, int n,
                   char out[WARC_DIGEST_SIZE], unsigned char raw[SHA1_LEN], warc_err_t *err)
{
    if (warc_digest_with(w->md, w->sha1, piece, len, n, out, raw) < 0)
        return set_err(err, WARC_E_MEMORY, "SHA-1 failed (libcrypto)");
    return 0;
}

static int write_warcinfo(warc_t *w, warc_err_t *err)
{
    struct buf info = {0};
    int bad = put_field(&info, "software", w->software) |
              put_field(&info, "format", "WARC File Format 1.1") |
              put_field(&info, "conformsTo",
                        "http://iipc.github.io/warc-specifications/specifications/warc-format/"
                        "warc-1.1/");
    if (w->info) bad |= put(&info, w->info);
    if (bad) {
        buf_free(&info);
        return oom(err);
    }
    char id[WARC_ID_SIZE], date[32], digest[WARC_DIGEST_SIZE];
    const char *piece = info.p;
    size_t len = info.n;
    if (warc_new_id(&w->info_ids, id, err) < 0 ||
        sha1_of(w, &piece, &len, 1, digest, NULL, err) < 0) {
        buf_free(&info);
        return -1;
    }
    warc_format_date(now(), date);
    record_t r = {.type = "warcinfo",
                  .id = id,
                  .date = date,
                  .filename = base_name(w->path),
                  .content_type = "application/warc-fields",
                  .block_digest = digest};
    w->out.n = 0;
    w->warcinfo_id[0] = '\0';
    int rc = add_record(w, &r, &piece, &len, 1, 1);
    buf_free(&info);
    if (rc < 0) return oom(err);
    if (flush_out(w, err) < 0) return -1;
    w->size += w->out.n;
    memcpy(w->warcinfo_id, id, WARC_ID_SIZE);
    return 0;
}

/* Start the next file: the first serial number whose names are free. */
static int open_file(warc_t *w, warc_err_t *err)
{
    for (;;) {
        int no_mem;
        if (make_names(w) < 0) return oom(err);
        int taken = names_taken(w, &no_mem);
        if (no_mem) return oom(err);
        if (!taken) break;
        if (w->single) return set_err(err, WARC_E_IO, "%s exists (or its .open)", w->path);
        if (w->serial >= SERIAL_MAX)
            return set_err(err, WARC_E_IO, "no free serial number for %s-NNNNN.warc.gz", w->prefix);
        w->serial++;
    }
    char *open_path = cat(w->path, ".open");
    if (!open_path) return oom(err);
    w->fd = open(open_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int e = errno;
    free(open_path);
    if (w->fd < 0)
        return set_err(err, WARC_E_IO, "cannot create %s.open: %s", w->path, strerror(e));
    w->size = 0;
    w->records = 0;
    w->cdx.lines.n = 0;
    w->cdx.n = 0;
    return write_warcinfo(w, err);
}

/* Close the file being written and give it (and its index) the final name. */
static int close_file(warc_t *w, warc_err_t *err)
{
    if (w->fd < 0) return 0;
    int rc = close(w->fd);
    int e = errno;
    w->fd = -1;
    if (rc < 0) return set_err(err, WARC_E_IO, "closing %s.open: %s", w->path, strerror(e));
    char *open_path = cat(w->path, ".open");
    if (!open_path) return oom(err);
    rc = rename(open_path, w->path);
    e = errno;
    free(open_path);
    if (rc < 0) return set_err(err, WARC_E_IO, "renaming %s.open: %s", w->path, strerror(e));
    return w->opts.cdx ? warc_cdx_write(&w->cdx, w->cdx_path, err) : 0;
}

/* Before a write: rotate at max_size, and refuse after an uncut failure. */
static int ready(warc_t *w, warc_err_t *err)
{
    if (w->broken || w->fd < 0)
        return set_err(err, WARC_E_IO, "the WARC writer failed earlier (%s)",
                       w->fd < 0 ? "no file open" : "a record could not be cut back");
    if (w->single || w->records == 0 || w->size < w->opts.max_size) return 0;
    if (close_file(w, err) < 0) return -1;
    w->serial++;
    return open_file(w, err);
}

/* ---- revisits ---- */

static struct seen_payload *seen_slot(warc_t *w, const unsigned char d[SHA1_LEN])
{
    size_t mask = w->seen_cap - 1, i;
    memcpy(&i, d, sizeof(i));
    for (i &= mask; w->seen[i].ref && memcmp(w->seen[i].digest, d, SHA1_LEN) != 0;
         i = (i + 1) & mask)
        ;
    return &w->seen[i];
}

static const char *seen_find(warc_t *w, const unsigned char d[SHA1_LEN])
{
    return w->seen_cap ? seen_slot(w, d)->ref : NULL;
}

/* Remember a payload; failing for lack of memory costs only a later revisit. */
static void seen_add(warc_t *w, const unsigned char d[SHA1_LEN], const char *uri, const char *date,
                     const char *id)
{
    if ((w->nseen + 1) * 4 > w->seen_cap * 3) {
        size_t cap = w->seen_cap ? w->seen_cap * 2 : 256;
        struct seen_payload *old = w->seen, *t = calloc(cap, sizeof(*t));
        if (!t) return;
        size_t old_cap = w->seen_cap;
        w->seen = t;
        w->seen_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].ref) *seen_slot(w, old[i].digest) = old[i];
        free(old);
    }
    size_t nu = strlen(uri) + 1, nd = strlen(date) + 1, ni = strlen(id) + 1;
    char *ref = malloc(nu + nd + ni);
    if (!ref) return;
    memcpy(ref, uri, nu);
    memcpy(ref + nu, date, nd);
    memcpy(ref + nu + nd, id, ni);
    struct seen_payload *slot = seen_slot(w, d);
    memcpy(slot->digest, d, SHA1_LEN);
    slot->ref = ref;
    w->nseen++;
}

/* A response written that a later run may revisit: listed for warc_originals. Failing
 * for lack of memory costs only a later revisit. */
static void list_original(warc_t *w, const char *digest, const char *uri, const char *date,
                          const char *id)
{
    pthread_mutex_lock(&w->mu);
    size_t mark = w->fresh.n;
    if (buf_append(&w->fresh, digest, strlen(digest) + 1) < 0 ||
        buf_append(&w->fresh, uri, strlen(uri) + 1) < 0 ||
        buf_append(&w->fresh, date, strlen(date) + 1) < 0 ||
        buf_append(&w->fresh, id, strlen(id) + 1) < 0)
        w->fresh.n = mark;
    pthread_mutex_unlock(&w->mu);
}

/* ---- records ---- */

/* The records of an exchange (on the writer's thread). */
static int write_exchange(warc_t *w, struct job *j, warc_err_t *err)
{
    const warc_exchange_t *ex = &j->ex;
    struct warc_digests *d = &j->dg;
    const char *resp_id = j->id, *req_id = j->req_id;
    if (ready(w, err) < 0) return -1;
    if (!d->done && warc_digest_exchange(w->md, w->sha1, ex, d) < 0)
        return set_err(err, WARC_E_MEMORY, "SHA-1 failed (libcrypto)");
    char date[32];
    warc_format_date(ex->date, date);
    struct warc_head_facts facts;
    warc_head_facts(ex->head, ex->head_len, &facts);
    int status = facts.status;
    const char *mime = facts.mime;
    /* A revisit for a 2xx payload seen before (a redirect's or an error page's short
     * body would make every other one a revisit of the first). */
    int dedupe =
        w->opts.dedupe && status >= 200 && status < 300 && ex->payload_len && !ex->truncated;
    const char *ref = dedupe ? seen_find(w, d->payload_raw) : NULL;
    record_t r = {.type = ref ? "revisit" : "response",
                  .id = resp_id,
                  .date = date,
                  .uri = ex->url,
                  .ip = ex->ip,
                  .content_type = "application/http; msgtype=response",
                  .block_digest = d->block,
                  .payload_digest = d->payload,
                  .truncated = ex->truncated ? "length" : NULL};
    const char *pieces[2] = {ex->head, ex->payload};
    size_t lens[2] = {ex->head_len, ex->payload_len};
    int npieces = 2;
    char head_digest[WARC_DIGEST_SIZE];
    if (ref) { /* the block is the head alone */
        npieces = 1;
        if (sha1_of(w, pieces, lens, 1, head_digest, NULL, err) < 0) return -1;
        r.block_digest = head_digest;
        r.profile = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
        r.refers_uri = ref;
        r.refers_date = ref + strlen(ref) + 1;
        r.refers_id = r.refers_date + strlen(r.refers_date) + 1;
        r.truncated = NULL;
    }
    w->out.n = 0;
    if (add_record(w, &r, pieces, lens, npieces, facts.packed ? 1 : npieces) < 0) return oom(err);
    unsigned long long resp_len = w->out.n;
    if (ex->request_len) {
        record_t q = {.type = "request",
                      .id = req_id,
                      .date = date,
                      .uri = ex->url,
                      .concurrent_to = resp_id,
                      .content_type = "application/http; msgtype=request",
                      .block_digest = d->req_block,
                      .payload_digest = d->req_payload};
        if (add_record(w, &q, &ex->request, &ex->request_len, 1, 1) < 0) return oom(err);
    }
    unsigned long long offset = w->size;
    if (flush_out(w, err) < 0) return -1;
    w->size += w->out.n;
    w->records++;
    if (w->opts.cdx)
        warc_cdx_add(&w->cdx, base_name(w->path), ex->url, ex->date,
                     ref ? "warc/revisit" : (*mime ? mime : "unk"), status, d->payload, offset,
                     resp_len);
    if (dedupe && !ref) {
        seen_add(w, d->payload_raw, ex->url, date, resp_id);
        if (w->track) list_original(w, d->payload, ex->url, date, resp_id);
    }
    return 0;
}

/* A metadata or conversion record (on the writer's thread). A conversion's block is
 * its payload (what an index gives the digest of), and it is indexed. */
static int write_metadata(warc_t *w, const struct job *j, warc_err_t *err)
{
    const char *fields = j->ex.payload;
    size_t len = j->ex.payload_len;
    if (ready(w, err) < 0) return -1;
    char when[32], digest[WARC_DIGEST_SIZE];
    if (sha1_of(w, &fields, &len, 1, digest, NULL, err) < 0) return -1;
    warc_format_date(j->ex.date, when);
    int conv = j->conversion;
    record_t r = {.type = conv ? "conversion" : "metadata",
                  .id = j->id,
                  .date = when,
                  .uri = j->ex.url,
                  .concurrent_to = conv ? NULL : j->concurrent_to,
                  .refers_id = conv ? j->concurrent_to : NULL,
                  .content_type = conv ? j->content_type : "application/warc-fields",
                  .block_digest = digest,
                  .payload_digest = conv ? digest : NULL};
    w->out.n = 0;
    /* An image is compressed already: stored, not deflated (where the level allows). */
    int packed = conv && strncmp(j->content_type, "image/", 6) == 0;
    if (add_record(w, &r, &fields, &len, 1, packed ? 0 : 1) < 0) return oom(err);
    unsigned long long offset = w->size;
    if (flush_out(w, err) < 0) return -1;
    w->size += w->out.n;
    w->records++;
    if (conv && w->opts.cdx)
        warc_cdx_add(&w->cdx, base_name(w->path), j->ex.url, j->ex.date, j->content_type, 0, digest,
                     offset, w->out.n);
    return 0;
}

/* jobq's function: a job's records written, or its failure kept for the caller. */
static void run_job(void *arg, jobq_job_t *q)
{
    warc_t *w = arg;
    struct job *j = (struct job *)q;
    warc_err_t err;
    if (j->remember) { /* the first original of a payload is the one revisits name */
        if (w->opts.dedupe && !seen_find(w, j->dg.payload_raw))
            seen_add(w, j->dg.payload_raw, j->ex.url, j->ex.payload, j->id);
        free_job(j);
        return;
    }
    if ((j->metadata ? write_metadata(w, j, &err) : write_exchange(w, j, &err)) < 0) {
        pthread_mutex_lock(&w->mu);
        if (!w->nfailed++) {
            w->failed = err;
            size_t k = strlen(err.message);
            snprintf(w->failed.message + k, sizeof(w->failed.message) - k, " (%s of %s %s)",
                     j->conversion ? "the conversion record"
                     : j->metadata ? "the metadata record"
                                   : "the records",
                     j->ex.url, j->metadata ? "was not written" : "were not written");
        }
        pthread_mutex_unlock(&w->mu);
    }
    free_job(j);
}

/* The failures of the writer's thread not reported yet: -1 with err set to the first
 * and the number of writes that failed ("; N writes failed" past one), or 0. Each
 * is reported once. */
static int take_failure(warc_t *w, warc_err_t *err)
{
    pthread_mutex_lock(&w->mu);
    int n = w->nfailed;
    if (n) *err = w->failed;
    w->nfailed = 0;
    pthread_mutex_unlock(&w->mu);
    if (n > 1) {
        size_t k = strlen(err->message);
        snprintf(err->message + k, sizeof(err->message) - k, "; %d writes failed", n);
    }
    return n ? -1 : 0;
}

/* Append n bytes of s and a NUL to a job's data at *at; the copy's address. */
static const char *copy_in(char **at, const char *s, size_t n)
{
    char *p = *at;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    *at = p + n + 1;
    return p;
}

/* A job for strings of the given lengths (a NUL after each), with its ID made; NULL
 * with err set. */
static struct job *new_job(warc_t *w, const size_t *len, int n, warc_err_t *err)
{
    size_t size = sizeof(struct job);
    for (int i = 0; i < n; i++)
        size += len[i] + 1;
    struct job *j = malloc(size);
    if (!j) {
        oom(err);
        return NULL;
    }
    memset(j, 0, sizeof(*j));
    j->q.size = size;
    if (warc_new_id(&w->ids, j->id, err) < 0) {
        free(j);
        return NULL;
    }
    return j;
}

/* The caller's side of a write: a failure of an earlier one first (this one is then
 * not queued), then the job queued and its ID given. */
static int queue_job(warc_t *w, struct job *j, char id_out[WARC_ID_SIZE], warc_err_t *err)
{
    if (take_failure(w, err) < 0) {
        free_job(j);
        return -1;
    }
    if (id_out) memcpy(id_out, j->id, WARC_ID_SIZE);
    jobq_push(w->q, &j->q); /* j belongs to the writer's thread now */
    return 0;
}

int warc_write_exchange(warc_t *w, const warc_exchange_t *ex, char id_out[WARC_ID_SIZE],
                        warc_err_t *err)
{
    return warc_write_exchange_lent(w, ex, NULL, id_out, err);
}

/* A refused lent write gives the payload back at once. */
static int refuse_loan(const warc_loan_t *loan)
{
    if (loan && loan->release) loan->release(loan->arg);
    return -1;
}

int warc_write_exchange_lent(warc_t *w, const warc_exchange_t *ex, const warc_loan_t *loan,
                             char id_out[WARC_ID_SIZE], warc_err_t *err)
{
    if (!ex->url || has_ctl(ex->url) || strchr(ex->url, ' ') || (ex->ip && has_ctl(ex->ip))) {
        set_err(err, WARC_E_USAGE, "a URL or address with spaces or control characters");
        return refuse_loan(loan);
    }
    if (too_long(ex->payload_len) || too_long(ex->head_len) || too_long(ex->request_len)) {
        set_err(err, WARC_E_USAGE, "a message too long for a record");
        return refuse_loan(loan);
    }
    struct buf *head = &w->head;
    if (warc_fixed_head(ex->head ? ex->head : "", ex->head_len, head) < 0) {
        oom(err);
        return refuse_loan(loan);
    }
    int lent = loan && loan->release;
    const char *ip = ex->ip ? ex->ip : "";
    size_t len[5] = {strlen(ex->url), strlen(ip), ex->request_len, head->n,
                     lent ? 0 : ex->payload_len};
    struct job *j = new_job(w, len, 5, err);
    if (!j || warc_new_id(&w->ids, j->req_id, err) < 0) {
        free(j);
        return refuse_loan(loan);
    }
    char *at = j->data;
    j->ex = *ex;
    j->ex.url = copy_in(&at, ex->url, len[0]);
    j->ex.ip = copy_in(&at, ip, len[1]);
    j->ex.request = copy_in(&at, ex->request, len[2]);
    j->ex.head = copy_in(&at, head->p, len[3]);
    j->ex.head_len = len[3];
    if (lent) {
        j->ex.payload = ex->payload ? ex->payload : "";
        j->loan = *loan;
        j->q.size += ex->payload_len; /* held by the queue all the same */
    } else {
        j->ex.payload = copy_in(&at, ex->payload, len[4]);
    }
    /* Digests are a good part of the writer's thread's work: when that thread is
     * behind (a quarter of the queue's bound waiting), this one makes them. */
    if (jobq_backlog(w->q) >= QUEUE_BYTES / 4 &&
        warc_digest_exchange(w->main_md, w->sha1, &j->ex, &j->dg) < 0)
        j->dg.done = 0; /* the writer's thread tries again, and says so */
    return queue_job(w, j, id_out, err);
}

/* A metadata record (content_type NULL) or a conversion record, queued; link is the
 * one's WARC-Concurrent-To, the other's WARC-Refers-To. */
static int queue_block(warc_t *w, const char *url, double date, const char *link,
                       const char *content_type, const char *block, size_t len,
                       char id_out[WARC_ID_SIZE], warc_err_t *err)
{
    if (!url || has_ctl(url) || strchr(url, ' ') || (link && has_ctl(link)) ||
        (content_type && (!*content_type || has_ctl(content_type))))
        return set_err(err, WARC_E_USAGE,
                       "a URL, record ID or content type with spaces or control characters");
    if (too_long(len)) return set_err(err, WARC_E_USAGE, "a block too long for a record");
    size_t lens[4] = {strlen(url), link ? strlen(link) : 0, len,
                      content_type ? strlen(content_type) : 0};
    struct job *j = new_job(w, lens, 4, err);
    if (!j) return -1;
    char *at = j->data;
    j->metadata = 1;
    j->conversion = content_type != NULL;
    j->ex.url = copy_in(&at, url, lens[0]);
    j->ex.date = date;
    j->concurrent_to = link ? copy_in(&at, link, lens[1]) : NULL;
    j->ex.payload = copy_in(&at, block, lens[2]);
    j->ex.payload_len = len;
    j->content_type = content_type ? copy_in(&at, content_type, lens[3]) : NULL;
    return queue_job(w, j, id_out, err);
}

int warc_write_metadata(warc_t *w, const char *url, double date, const char *concurrent_to,
                        const char *fields, size_t len, char id_out[WARC_ID_SIZE], warc_err_t *err)
{
    return queue_block(w, url, date, concurrent_to, NULL, fields, len, id_out, err);
}

int warc_write_conversion(warc_t *w, const char *url, double date, const char *refers_to,
                          const char *content_type, const char *block, size_t len,
                          char id_out[WARC_ID_SIZE], warc_err_t *err)
{
    if (!content_type) return set_err(err, WARC_E_USAGE, "a conversion record needs a type");
    return queue_block(w, url, date, refers_to, content_type, block, len, id_out, err);
}

int warc_remember(warc_t *w, const char *digest, const char *uri, const char *date, const char *id,
                  warc_err_t *err)
{
    unsigned char raw[SHA1_LEN];
    if (warc_digest_raw(digest, raw) < 0)
        return set_err(err, WARC_E_USAGE, "not a WARC payload digest (sha1:BASE32): %s", digest);
    if (strlen(id) >= WARC_ID_SIZE || has_ctl(id) || has_ctl(uri) || has_ctl(date))
        return set_err(err, WARC_E_USAGE, "a record ID, URI or date with control characters");
    size_t lens[2] = {strlen(uri), strlen(date)};
    struct job *j = new_job(w, lens, 2, err);
    if (!j) return -1;
    char *at = j->data;
    j->remember = 1;
    memcpy(j->dg.payload_raw, raw, SHA1_LEN);
    snprintf(j->id, sizeof(j->id), "%s", id);
    j->ex.url = copy_in(&at, uri, lens[0]);
    j->ex.payload = copy_in(&at, date, lens[1]);
    return queue_job(w, j, NULL, err);
}

void warc_track_originals(warc_t *w)
{
    w->track = 1;
}

void warc_originals(warc_t *w, warc_original_fn fn, void *arg)
{
    pthread_mutex_lock(&w->mu);
    struct buf list = w->fresh;
    w->fresh = (struct buf){0};
    pthread_mutex_unlock(&w->mu);
    for (const char *p = list.p, *end = list.p + list.n; p && p < end;) {
        const char *f[4];
        for (int i = 0; i < 4; i++) {
            f[i] = p;
            p += strlen(p) + 1;
        }
        fn(arg, f[0], f[1], f[2], f[3]);
    }
    buf_free(&list);
}

/* ---- opening and closing ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

warc_t *warc_open(const char *target, const warc_opts_t *opts, warc_err_t *err)
{
    if (!*target || has_ctl(target)) {
        set_err(err, WARC_E_USAGE, "bad WARC file name or prefix");
        return NULL;
    }
    warc_t *w = calloc(1, sizeof(*w));
    if (!w || pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        oom(err);
        return NULL;
    }
    w->fd = -1;
    w->opts = *opts;
    if (!w->opts.max_size) w->opts.max_size = WARC_DEFAULT_MAX_SIZE;
    w->single = ends_with(target, ".warc.gz") || ends_with(target, ".warc");
    w->gz = !w->single || ends_with(target, ".gz");
    w->prefix = strdup(target);
    w->software = strdup(opts->software ? opts->software : "luacrawl");
    w->info = opts->info ? strdup(opts->info) : NULL;
    if (!w->prefix || !w->software || (opts->info && !w->info)) goto no_memory;
    if (w->opts.level < 0 || w->opts.level > 9) {
        set_err(err, WARC_E_USAGE, "gzip level %d: 1 (fastest) to 9 (smallest)", w->opts.level);
        goto fail;
    }
    int level = w->opts.level ? w->opts.level : WARC_DEFAULT_LEVEL;
    int gz_ready = warc_gzip_init(&w->gzip, level) == 0;
    w->sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    w->md = EVP_MD_CTX_new();
    w->main_md = EVP_MD_CTX_new();
    if (!gz_ready || !w->sha1 || !w->md || !w->main_md) goto no_memory;
    if (open_file(w, err) < 0) goto fail;
    if (!(w->q = jobq_new(run_job, w, QUEUE_BYTES))) {
        set_err(err, WARC_E_MEMORY, "cannot start the WARC writer's thread");
        goto fail;
    }
    return w;
no_memory:
    oom(err);
fail:
    if (w->fd >= 0) { /* the warcinfo did not go in: leave no empty file behind */
        char *open_path = cat(w->path, ".open");
        if (open_path) unlink(open_path);
        free(open_path);
        close(w->fd);
        w->fd = -1;
    }
    warc_close(w, &(warc_err_t){0});
    return NULL;
}

int warc_sync(warc_t *w, warc_err_t *err)
{
    if (w->q) jobq_drain(w->q);
    return take_failure(w, err);
}

const char *warc_filename(const warc_t *w)
{
    if (w->q) jobq_drain(w->q); /* the records queued may start a new file */
    return w->path;
}

int warc_close(warc_t *w, warc_err_t *err)
{
    if (!w) return 0;
    jobq_free(w->q); /* the records queued go in first */
    w->q = NULL;
    warc_err_t later;
    int rc = take_failure(w, err);
    if (close_file(w, rc < 0 ? &later : err) < 0) rc = -1;
    pthread_mutex_destroy(&w->mu);
    warc_gzip_free(&w->gzip);
    EVP_MD_CTX_free(w->md);
    EVP_MD_CTX_free(w->main_md);
    EVP_MD_free(w->sha1);
    for (size_t i = 0; i < w->seen_cap; i++)
        free(w->seen[i].ref);
    free(w->seen);
    buf_free(&w->out);
    buf_free(&w->head);
    buf_free(&w->rec);
    buf_free(&w->cdx.lines);
    buf_free(&w->fresh);
    free(w->prefix);
    free(w->software);
    free(w->info);
    free(w->path);
    free(w->cdx_path);
    free(w);
    return rc;
}
