/* warc.c: the WARC writer: records as gzip members, rotation, the CDXJ index, the
 * table of payloads for revisits. warc_read.c reads them back; warc.h says what each
 * promises. */
#include "warc.h"
#include "warc_err.h"

#include "buf.h"
#include "jobq.h"
#include "json.h"
#include "digest_sha1_ni.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

#include <openssl/evp.h>

#define SHA1_LEN 20
#define SHA1_BASE32_LEN 32 /* 160 bits in 5-bit groups, no padding needed */
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
/* Random bytes for record IDs, drawn from getrandom a few hundred at a time. */
struct random {
    unsigned char b[256];
    size_t left;
};

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
    int broken; /* a failed write could not be cut back off: no more writes */
    struct libdeflate_compressor *deflater; /* levels 2 to 9; or NULL and: */
    unsigned char *isal_buf;                /* level 1, ISA-L's (ISAL_DEF_LVL1_DEFAULT) */
    struct codes *codes;                    /* with isal_buf: Huffman codes, small and large */
    EVP_MD *sha1;        /* fetched once: an implicit fetch per digest costs a lookup each */
    EVP_MD_CTX *md;      /* reused for every digest of the writer's thread */
    EVP_MD_CTX *main_md; /* and of the caller's thread (queue_exchange) */
    struct buf out;      /* the records of one write, compressed */
    struct buf head;     /* the caller's thread's: a head as fixed_head makes it */
    struct buf rec;      /* one record before compression */
    struct buf cdx;      /* this file's index lines */
    size_t ncdx;
    struct random ids;      /* the caller's thread's, for the records it queues */
    struct random info_ids; /* the writer's thread's, for the warcinfo of each file */
    struct seen_payload *seen;
    size_t nseen, seen_cap; /* seen_cap: a power of 2, or 0 */
    jobq_t *q;              /* NULL before the first file is made, and after close */
    int track;              /* originals written are listed in fresh (warc_track_originals) */
    pthread_mutex_t mu;     /* guards failed, nfailed and fresh */
    warc_err_t failed;      /* the first failure of the writer's thread not yet reported */
    int nfailed;            /* writes that failed since the last report */
    struct buf fresh;       /* originals written, "digest\0uri\0date\0id\0" each */
};

/* The digests of an exchange's records, made by whichever thread has the time
 * (queue_exchange). block is the response's (head and payload): a revisit's, of the
 * head alone, is made when the writer's thread finds the payload seen before. */
struct digests {
    int done;
    unsigned char payload_raw[SHA1_LEN];
    char payload[WARC_DIGEST_SIZE], block[WARC_DIGEST_SIZE];
    char req_block[WARC_DIGEST_SIZE], req_payload[WARC_DIGEST_SIZE];
};

/* A write call's records, for the writer's thread: what it was given, copied (an
 * exchange's head with its Transfer-Encoding fixed already). */
struct job {
    jobq_job_t q;
    int metadata;              /* a metadata record; else a response (or revisit) and request */
    int remember;              /* no record: an earlier writer's original (warc_remember) */
    char id[WARC_ID_SIZE];     /* the response's (or the metadata record's) */
    char req_id[WARC_ID_SIZE]; /* the request's */
    warc_exchange_t ex;        /* metadata: url, date, and the fields as payload */
    const char *concurrent_to; /* metadata: NULL or a record ID */
    struct digests dg;         /* an exchange's, when the caller's thread made them */
    warc_loan_t loan;          /* ex.payload's, when lent (release not NULL) */
    char data[];               /* the strings ex points to (but a lent payload) */
};

/* A job done with (or never queued): its payload given back when lent. */
static void free_job(struct job *j)
{
    if (j && j->loan.release) j->loan.release(j->loan.arg);
    free(j);
}

static int random_bytes(struct random *r, unsigned char *out, size_t n, warc_err_t *err)
{
    while (n) {
        if (!r->left) {
            ssize_t got = getrandom(r->b, sizeof(r->b), 0);
            if (got <= 0) {
                if (got < 0 && errno == EINTR) continue;
                return set_err(err, WARC_E_IO, "no random bytes for record IDs: %s",
                               strerror(errno));
            }
            r->left = (size_t)got;
        }
        size_t take = n < r->left ? n : r->left;
        memcpy(out, r->b + r->left - take, take);
        r->left -= take;
        out += take;
        n -= take;
    }
    return 0;
}

/* A random (version 4) UUID as a WARC-Record-ID, "<urn:uuid:...>": 47 characters. */
static int new_id(struct random *r, char id[WARC_ID_SIZE], warc_err_t *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char u[16] = {0};
    if (random_bytes(r, u, sizeof(u), err) < 0) return -1;
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    char *p = id;
    memcpy(p, "<urn:uuid:", 10);
    p += 10;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
        *p++ = hex[u[i] >> 4];
        *p++ = hex[u[i] & 15];
    }
    *p++ = '>';
    *p = '\0';
    return 0;
}

/* WARC-Date, to the microsecond (WARC/1.1 allows a fraction): 28 bytes and a NUL. */
static void format_date(double t, char out[32])
{
    if (!(t >= 0 && t < 253402300800.0)) t = 0; /* years 1970-9999 only */
    time_t s = (time_t)t;
    int us = (int)((t - (double)s) * 1e6);
    if (us < 0 || us > 999999) us = 0;
    struct tm tm;
    gmtime_r(&s, &tm);
    char base[20];
    if (strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) != 19) base[0] = '\0';
    snprintf(out, 32, "%.19s.%06dZ", base, us);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* RFC 4648 base32 (upper case) of a digest after "sha1:", as WARC tools write it: 20
 * bytes are 32 groups of 5 bits exactly, 5 bytes making 8 characters. */
static void digest_text(const unsigned char d[SHA1_LEN], char out[WARC_DIGEST_SIZE])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    memcpy(out, "sha1:", 5);
    for (int g = 0; g < 4; g++) {
        uint64_t v = 0;
        for (int i = 0; i < 5; i++)
            v = v << 8 | d[5 * g + i];
        for (int i = 0; i < 8; i++)
            out[5 + 8 * g + i] = alphabet[(v >> (35 - 5 * i)) & 31];
    }
    out[5 + SHA1_BASE32_LEN] = '\0';
}

/* SHA-1 of the pieces in turn, by libcrypto (which uses the CPU's SHA instructions where
 * it has them); md NULL: its default SHA-1. -1 when libcrypto failed. */
static int sha1_pieces(EVP_MD_CTX *ctx, const EVP_MD *md, const char *const *piece,
                       const size_t *len, int n, unsigned char d[SHA1_LEN])
{
    unsigned int dn = 0;
    if (!EVP_DigestInit_ex(ctx, md ? md : EVP_sha1(), NULL)) return -1;
    for (int i = 0; i < n; i++)
        if (len[i] && !EVP_DigestUpdate(ctx, piece[i], len[i])) return -1;
    return EVP_DigestFinal_ex(ctx, d, &dn) && dn == SHA1_LEN ? 0 : -1;
}

int warc_digest(const char *const *piece, const size_t *len, int n, char out[WARC_DIGEST_SIZE])
{
    unsigned char d[SHA1_LEN];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = ctx ? sha1_pieces(ctx, NULL, piece, len, n, d) : -1;
    EVP_MD_CTX_free(ctx);
    if (rc == 0) digest_text(d, out);
    return rc;
}

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
    return 0;
}

static int put(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

static int put_field(struct buf *b, const char *name, const char *value)
{
    return put(b, name) | put(b, ": ") | put(b, value) | put(b, "\r\n");
}

/* For a small record (a request, metadata, a redirect: under SMALL_RECORD bytes) most
 * of what ISA-L's level 1 costs is building its Huffman codes, which a record that
 * short barely repays; level 0 with codes made once from records like it is several
 * times faster for a few percent more bytes (level 0's built-in codes, made for other
 * text, lose much more: docs/benchmarks.md has the figures). So the first
 * SAMPLE small records of a writer go at level 1 and are counted; the rest at level 0,
 * with the codes of that count. Larger records likewise, with codes of their own: the
 * pages of a crawl are much alike, and level 0 with their codes takes about three
 * quarters of level 1's time for about 1% more bytes. Only records that level 1
 * shrinks by a quarter are counted for those codes: a body compressed already (gzip
 * as sent, an image) would teach them nothing, and level 0 stores what it cannot
 * shrink. */
#define SMALL_RECORD 4096
#define SAMPLE 32
struct small_codes {
    struct isal_huff_histogram counts;
    int counted;                /* records counted so far */
    struct isal_hufftables *ht; /* NULL until SAMPLE are counted */
};
struct codes {
    struct small_codes small, large;
};

/* n bytes at p deflated by ISA-L into w->out: a gzip member whole (end 1), or its
 * header and blocks byte-aligned, not final, for more to follow (end 0). */
static int isal_member(warc_t *w, char *p, size_t n, int end)
{
    size_t bound = n + n / 4096 + 1024; /* stored blocks at worst: 5 bytes a 64 KB */
    if (buf_reserve(&w->out, bound) < 0) return -1;
    struct small_codes *sc = n < SMALL_RECORD ? &w->codes->small : &w->codes->large;
    struct isal_zstream z;
    isal_deflate_stateless_init(&z);
    if (sc->ht) {
        z.level = 0;
        z.hufftables = sc->ht;
    } else {
        z.level = 1;
        z.level_buf = w->isal_buf;
        z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    }
    z.gzip_flag = IGZIP_GZIP;
    z.end_of_stream = (uint16_t)end;
    z.flush = end ? NO_FLUSH : FULL_FLUSH;
    z.next_in = (uint8_t *)p; /* only read, but ISA-L's field is not const */
    z.avail_in = (uint32_t)n;
    z.next_out = (unsigned char *)w->out.p + w->out.n;
    z.avail_out = (uint32_t)bound;
    if (isal_deflate_stateless(&z) != COMP_OK) return -1;
    w->out.n += z.total_out;
    if (!sc->ht && sc->counted < SAMPLE && (n < SMALL_RECORD || z.total_out * 4 < n * 3)) {
        isal_update_histogram((uint8_t *)p, (int)n, &sc->counts);
        /* Codes for every symbol, not just those counted; failing that, level 1 stays. */
        if (++sc->counted == SAMPLE && (sc->ht = malloc(sizeof(*sc->ht))) &&
            isal_create_hufftables(sc->ht, &sc->counts) != 0) {
            free(sc->ht);
            sc->ht = NULL;
        }
    }
    return 0;
}

/* n bytes at p as one gzip member, appended to w->out; -1 when out of memory. Level 1
 * is ISA-L's igzip (faster than libdeflate's level 1, for a few percent more bytes),
 * the other levels libdeflate's. */
static int gzip_member(warc_t *w, char *p, size_t n)
{
    if (!w->deflater) return isal_member(w, p, n, 1);
    size_t bound = libdeflate_gzip_compress_bound(w->deflater, n);
    if (buf_reserve(&w->out, bound) < 0) return -1;
    size_t k = libdeflate_gzip_compress(w->deflater, p, n, (char *)w->out.p + w->out.n, bound);
    if (!k) return -1; /* cannot happen with the bound's room */
    w->out.n += k;
    return 0;
}

static void put_le(unsigned char *p, uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A gzip member of the n bytes at p, deflated (ISA-L), then the pieces given as they
 * are, in stored blocks: a payload compressed already (sent gzipped, an image) gains
 * nothing from deflate but costs it as much as text does. -1 when out of memory. */
static int gzip_member_stored(warc_t *w, char *p, size_t n, const char *const *piece,
                              const size_t *len, int npieces)
{
    size_t total = 0;
    for (int i = 0; i < npieces; i++)
        total += len[i];
    const size_t block = 65535; /* a stored block's most */
    size_t nblocks = total ? (total + block - 1) / block : 1;
    if (isal_member(w, p, n, 0) < 0 || buf_reserve(&w->out, total + 5 * nblocks + 8) < 0) return -1;
    uint32_t crc = crc32_gzip_refl(0, (const unsigned char *)p, n);
    unsigned char *out = (unsigned char *)w->out.p + w->out.n;
    int i = 0;
    size_t at = 0; /* in piece[i] */
    for (size_t b = 0; b < nblocks; b++) {
        size_t k = total - b * block < block ? total - b * block : block;
        out[0] = b + 1 == nblocks; /* BFINAL; BTYPE 00, stored */
        put_le(out + 1, (uint32_t)k, 2);
        put_le(out + 3, (uint32_t)~k & 0xffff, 2);
        out += 5;
        while (k) {
            size_t m = len[i] - at < k ? len[i] - at : k;
            memcpy(out, piece[i] + at, m);
            crc = crc32_gzip_refl(crc, out, m);
            out += m;
            k -= m;
            at += m;
            if (at == len[i]) i++, at = 0;
        }
    }
    put_le(out, crc, 4);
    put_le(out + 4, (uint32_t)(n + total), 4); /* ISIZE: the length mod 2^32 */
    w->out.n = (size_t)(out + 8 - (unsigned char *)w->out.p);
    return 0;
}

/* The fields of a record's header block. */
typedef struct record {
    const char *type, *id, *date, *uri, *ip, *concurrent_to, *content_type;
    const char *block_digest, *payload_digest, *truncated;
    const char *profile, *refers_uri, *refers_date, *refers_id, *filename;
} record_t;

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
    char clen[24];
    snprintf(clen, sizeof(clen), "%zu", total);
    b->n = 0;
    int bad = put(b, "WARC/1.1\r\n") | put_field(b, "WARC-Type", r->type) |
              put_field(b, "WARC-Record-ID", r->id) | put_field(b, "WARC-Date", r->date);
    if (r->filename) bad |= put_field(b, "WARC-Filename", r->filename);
    if (r->uri) bad |= put_field(b, "WARC-Target-URI", r->uri);
    if (r->ip && *r->ip) bad |= put_field(b, "WARC-IP-Address", r->ip);
    if (r->concurrent_to) bad |= put_field(b, "WARC-Concurrent-To", r->concurrent_to);
    if (*w->warcinfo_id && strcmp(r->type, "warcinfo") != 0)
        bad |= put_field(b, "WARC-Warcinfo-ID", w->warcinfo_id);
    if (r->profile) {
        bad |= put_field(b, "WARC-Profile", r->profile) |
               put_field(b, "WARC-Refers-To-Target-URI", r->refers_uri) |
               put_field(b, "WARC-Refers-To-Date", r->refers_date) |
               put_field(b, "WARC-Refers-To", r->refers_id);
    }
    if (r->block_digest) bad |= put_field(b, "WARC-Block-Digest", r->block_digest);
    if (r->payload_digest) bad |= put_field(b, "WARC-Payload-Digest", r->payload_digest);
    if (r->truncated) bad |= put_field(b, "WARC-Truncated", r->truncated);
    bad |= put_field(b, "Content-Type", r->content_type) | put_field(b, "Content-Length", clen) |
           put(b, "\r\n");
    if (w->gz && !w->deflater && raw_from < n && n - raw_from <= 3) {
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
        return bad ? -1 : gzip_member_stored(w, b->p, b->n, raw, raw_len, k);
    }
    /* The block and the two CR LF that end a record, after the header block: the whole
     * record in one buffer, compressed in one call. */
    for (int i = 0; i < n; i++)
        bad |= buf_append(b, piece[i], len[i]);
    bad |= buf_append(b, "\r\n\r\n", 4);
    if (bad) return -1;
    return w->gz ? gzip_member(w, b->p, b->n) : buf_append(&w->out, b->p, b->n);
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

static char *cat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", a, b);
    return s;
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

/* One digest as text (and raw, when not NULL), with ctx; -1 when libcrypto failed. */
static int digest_with(EVP_MD_CTX *ctx, const EVP_MD *md, const char *const *piece,
                       const size_t *len, int n, char out[WARC_DIGEST_SIZE],
                       unsigned char raw[SHA1_LEN])
{
    unsigned char d[SHA1_LEN];
    if (sha1_ni_available()) {
        sha1_ni(&(sha1_msg_t){piece, len, n}, d, NULL, NULL);
    } else if (sha1_pieces(ctx, md, piece, len, n, d) < 0) {
        return -1;
    }
    digest_text(d, out);
    if (raw) memcpy(raw, d, SHA1_LEN);
    return 0;
}

/* Two digests as digest_with makes them (b's not raw): side by side where the CPU has
 * the instructions (digest_sha1_ni.h), in about the time of one. */
static int digest_two(EVP_MD_CTX *ctx, const EVP_MD *md, const char *const *pa, const size_t *la,
                      int na, char out_a[WARC_DIGEST_SIZE], unsigned char raw_a[SHA1_LEN],
                      const char *const *pb, const size_t *lb, int nb, char out_b[WARC_DIGEST_SIZE])
{
    if (!sha1_ni_available())
        return digest_with(ctx, md, pa, la, na, out_a, raw_a) < 0 ||
                       digest_with(ctx, md, pb, lb, nb, out_b, NULL) < 0
                   ? -1
                   : 0;
    unsigned char da[SHA1_LEN], db[SHA1_LEN];
    sha1_ni(&(sha1_msg_t){pa, la, na}, da, &(sha1_msg_t){pb, lb, nb}, db);
    digest_text(da, out_a);
    if (raw_a) memcpy(raw_a, da, SHA1_LEN);
    digest_text(db, out_b);
    return 0;
}

/* The digest of the pieces in turn, as text and (raw not NULL) raw. */
static int sha1_of(warc_t *w, const char *const *piece, const size_t *len, int n,
                   char out[WARC_DIGEST_SIZE], unsigned char raw[SHA1_LEN], warc_err_t *err)
{
    if (digest_with(w->md, w->sha1, piece, len, n, out, raw) < 0)
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
    if (new_id(&w->info_ids, id, err) < 0 || sha1_of(w, &piece, &len, 1, digest, NULL, err) < 0) {
        buf_free(&info);
        return -1;
    }
    format_date(now(), date);
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
    w->cdx.n = 0;
    w->ncdx = 0;
    return write_warcinfo(w, err);
}

struct line {
    const char *p;
    size_t n;
};

static int line_cmp(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The index, sorted (replay tools search it by key), written beside the file. */
static int write_cdx(warc_t *w, warc_err_t *err)
{
    struct line *lines = calloc(w->ncdx ? w->ncdx : 1, sizeof(*lines));
    if (!lines) return oom(err);
    size_t k = 0;
    for (size_t off = 0; off < w->cdx.n && k < w->ncdx;) {
        const char *nl = memchr(w->cdx.p + off, '\n', w->cdx.n - off);
        size_t n = nl ? (size_t)(nl - (w->cdx.p + off)) + 1 : w->cdx.n - off;
        lines[k].p = w->cdx.p + off;
        lines[k++].n = n;
        off += n;
    }
    qsort(lines, k, sizeof(*lines), line_cmp);
    char *tmp = cat(w->cdx_path, ".open");
    if (!tmp) {
        free(lines);
        return oom(err);
    }
    int rc = 0;
    FILE *f = fopen(tmp, "we");
    if (!f) {
        rc = set_err(err, WARC_E_IO, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        fwrite(lines[i].p, 1, lines[i].n, f);
    if (ferror(f) | fclose(f)) {
        rc = set_err(err, WARC_E_IO, "writing %s: %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, w->cdx_path) < 0)
        rc = set_err(err, WARC_E_IO, "renaming %s: %s", tmp, strerror(errno));
out:
    free(tmp);
    free(lines);
    return rc;
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
    return w->opts.cdx ? write_cdx(w, err) : 0;
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

/* The SHA-1 of a digest as digest_text writes it; -1 when text is not of that form. */
static int digest_raw(const char *text, unsigned char d[SHA1_LEN])
{
    if (strncmp(text, "sha1:", 5) != 0 || strlen(text) != 5 + SHA1_BASE32_LEN) return -1;
    for (int g = 0; g < 4; g++) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) {
            char c = text[5 + 8 * g + i];
            int x = c >= 'A' && c <= 'Z' ? c - 'A' : c >= '2' && c <= '7' ? c - '2' + 26 : -1;
            if (x < 0) return -1;
            v = v << 5 | (uint64_t)x;
        }
        for (int i = 0; i < 5; i++)
            d[5 * g + i] = (unsigned char)(v >> (32 - 8 * i));
    }
    return 0;
}

/* ---- response heads ---- */

static int ieq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

static void trim(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r' ||
                  (*s)[*n - 1] == '\n'))
        (*n)--;
}

/* The head as the record keeps it: curl removed the chunked framing from the body, so
 * "chunked" goes from Transfer-Encoding (the header goes when nothing is left), or a
 * reader would look for chunks. Appended to out. */
static int fixed_head(const char *head, size_t len, struct buf *out)
{
    out->n = 0;
    for (size_t off = 0; off < len;) {
        const char *line = head + off, *nl = memchr(line, '\n', len - off);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - off;
        off += n;
        const char *colon = memchr(line, ':', n);
        if (!colon || !ieq(line, (size_t)(colon - line), "Transfer-Encoding")) {
            if (buf_append(out, line, n) < 0) return -1;
            continue;
        }
        /* Keep the other codings of the list, in order. */
        struct buf kept = {0};
        const char *v = colon + 1, *end = line + n;
        while (v < end) {
            const char *comma = memchr(v, ',', (size_t)(end - v));
            const char *tok = v;
            size_t tn = comma ? (size_t)(comma - v) : (size_t)(end - v);
            v = comma ? comma + 1 : end;
            trim(&tok, &tn);
            if (!tn || ieq(tok, tn, "chunked")) continue;
            if ((kept.n && buf_append(&kept, ", ", 2) < 0) || buf_append(&kept, tok, tn) < 0) {
                buf_free(&kept);
                return -1;
            }
        }
        int bad = kept.n && (buf_append(out, line, (size_t)(colon - line)) < 0 ||
                             buf_append(out, ": ", 2) < 0 || buf_append(out, kept.p, kept.n) < 0 ||
                             buf_append(out, "\r\n", 2) < 0);
        buf_free(&kept);
        if (bad) return -1;
    }
    if (!out->p && buf_append(out, "", 0) < 0) return -1;
    return 0;
}

/* What the writer needs to know of a response's head. */
struct head_facts {
    int status;
    char mime[128]; /* Content-Type up to ';', trimmed */
    int packed;     /* the payload is compressed already: a Content-Encoding, or its type's */
};

/* Whether a MIME type's bodies are compressed in their own format. */
static int packed_type(const char *mime)
{
    static const char *const packed[] = {"image/jpeg",          "image/png",
                                         "image/gif",           "image/webp",
                                         "image/avif",          "font/woff",
                                         "font/woff2",          "application/zip",
                                         "application/gzip",    "application/x-gzip",
                                         "application/zstd",    "application/x-xz",
                                         "application/x-bzip2", "application/x-7z-compressed"};
    if (!strncasecmp(mime, "video/", 6) || !strncasecmp(mime, "audio/", 6)) return 1;
    for (size_t i = 0; i < sizeof(packed) / sizeof(packed[0]); i++)
        if (!strcasecmp(mime, packed[i])) return 1;
    return 0;
}

/* The facts of a head: its status line's code, its Content-Type and Content-Encoding. */
static void head_facts(const char *head, size_t len, struct head_facts *f)
{
    f->status = 0;
    f->mime[0] = '\0';
    f->packed = 0;
    const char *sp = memchr(head, ' ', len);
    if (sp) f->status = atoi(sp + 1);
    for (size_t off = 0; off < len;) {
        const char *line = head + off, *nl = memchr(line, '\n', len - off);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - off;
        off += n;
        const char *colon = memchr(line, ':', n);
        if (!colon) continue;
        size_t name_len = (size_t)(colon - line);
        const char *v = colon + 1;
        size_t vn = (size_t)(line + n - v);
        if (ieq(line, name_len, "Content-Encoding")) {
            trim(&v, &vn);
            f->packed |= vn && !ieq(v, vn, "identity");
        } else if (ieq(line, name_len, "Content-Type") && !f->mime[0]) {
            const char *semi = memchr(v, ';', vn);
            if (semi) vn = (size_t)(semi - v);
            trim(&v, &vn);
            if (vn >= sizeof(f->mime)) vn = sizeof(f->mime) - 1;
            memcpy(f->mime, v, vn);
            f->mime[vn] = '\0';
        }
    }
    f->packed |= packed_type(f->mime);
}

/* ---- CDXJ ---- */

/* The SURT form of a URL as warcio and pywb key it: lower case, no scheme, "www."
 * (and www2. ...) dropped, host labels reversed and joined by commas, the port when
 * not the scheme's, ")" and the path, query arguments sorted. */
static int surt(const char *url, struct buf *out)
{
    struct buf low = {0};
    if (buf_append(&low, url, strlen(url)) < 0) return -1;
    for (size_t i = 0; i < low.n; i++)
        if (low.p[i] >= 'A' && low.p[i] <= 'Z') low.p[i] = (char)(low.p[i] + 32);
    char *u = low.p;
    int https = strncmp(u, "https://", 8) == 0;
    if (!https && strncmp(u, "http://", 7) != 0) {
        int rc = buf_append(out, url, strlen(url));
        buf_free(&low);
        return rc;
    }
    char *p = u + (https ? 8 : 7);
    char *frag = strchr(p, '#');
    if (frag) *frag = '\0';
    size_t auth_len = strcspn(p, "/?");
    char *at = memchr(p, '@', auth_len);
    if (at) {
        auth_len -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    char *rest = p + auth_len;
    char *host = p, *port = NULL;
    size_t host_len = auth_len;
    char *colon = host[0] == '[' ? NULL : memchr(host, ':', auth_len);
    if (colon) {
        host_len = (size_t)(colon - host);
        port = colon + 1;
    }
    if (host_len > 3 && strncmp(host, "www", 3) == 0) {
        size_t k = 3;
        while (k < host_len && host[k] >= '0' && host[k] <= '9')
            k++;
        if (k < host_len && host[k] == '.') {
            host += k + 1;
            host_len -= k + 1;
        }
    }
    int bad = 0;
    for (size_t end = host_len; end > 0;) {
        size_t start = end;
        while (start > 0 && host[start - 1] != '.')
            start--;
        bad |= buf_append(out, host + start, end - start);
        if (start > 0) bad |= buf_append(out, ",", 1);
        end = start ? start - 1 : 0;
    }
    size_t port_len = port ? (size_t)(rest - port) : 0;
    if (port_len && !(port_len == 2 && !https && memcmp(port, "80", 2) == 0) &&
        !(port_len == 3 && https && memcmp(port, "443", 3) == 0))
        bad |= buf_append(out, ":", 1) | buf_append(out, port, port_len);
    bad |= buf_append(out, ")", 1);
    char *query = strchr(rest, '?');
    size_t path_len = query ? (size_t)(query - rest) : strlen(rest);
    bad |= path_len ? buf_append(out, rest, path_len) : buf_append(out, "/", 1);
    if (query && query[1]) {
        struct line args[256];
        size_t na = 0;
        for (char *a = query + 1; na < 256;) {
            size_t n = strcspn(a, "&");
            args[na].p = a;
            args[na++].n = n;
            if (!a[n]) break;
            a += n + 1;
        }
        qsort(args, na, sizeof(*args), line_cmp);
        bad |= buf_append(out, "?", 1);
        for (size_t i = 0; i < na; i++)
            bad |= (i ? buf_append(out, "&", 1) : 0) | buf_append(out, args[i].p, args[i].n);
    }
    buf_free(&low);
    return bad ? -1 : 0;
}

static int put_json_field(struct buf *b, const char *name, const char *value, int first)
{
    return (first ? 0 : buf_append(b, ", ", 2)) | json_put_string(b, name, strlen(name)) |
           buf_append(b, ": ", 2) | json_put_string(b, value, strlen(value));
}

/* The index line of a response or revisit record at offset, length bytes long. */
static int add_cdx(warc_t *w, const char *url, double date, const char *mime, int status,
                   const char *digest, unsigned long long offset, unsigned long long length)
{
    struct buf *b = &w->cdx;
    size_t mark = b->n;
    char ts[16], num[3][24];
    time_t s = (time_t)date;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm);
    snprintf(num[0], sizeof(num[0]), "%d", status);
    snprintf(num[1], sizeof(num[1]), "%llu", length);
    snprintf(num[2], sizeof(num[2]), "%llu", offset);
    int bad = surt(url, b) | buf_append(b, " ", 1) | put(b, ts) | buf_append(b, " {", 2) |
              put_json_field(b, "url", url, 1) | put_json_field(b, "mime", mime, 0) |
              (status ? put_json_field(b, "status", num[0], 0) : 0) |
              put_json_field(b, "digest", digest + 5, 0) | put_json_field(b, "length", num[1], 0) |
              put_json_field(b, "offset", num[2], 0) |
              put_json_field(b, "filename", base_name(w->path), 0) | buf_append(b, "}\n", 2);
    if (bad) {
        b->n = mark;
        return -1;
    }
    w->ncdx++;
    return 0;
}

/* ---- records ---- */

/* The digests of ex's records (its head fixed already) into d, with ctx. */
static int digest_exchange(EVP_MD_CTX *ctx, const EVP_MD *md, const warc_exchange_t *ex,
                           struct digests *d)
{
    const char *pieces[2] = {ex->head, ex->payload};
    size_t lens[2] = {ex->head_len, ex->payload_len};
    if (digest_two(ctx, md, pieces + 1, lens + 1, 1, d->payload, d->payload_raw, pieces, lens, 2,
                   d->block) < 0)
        return -1;
    if (ex->request_len) {
        const char *req = ex->request, *end = memmem(req, ex->request_len, "\r\n\r\n", 4);
        size_t body_off = end ? (size_t)(end + 4 - req) : ex->request_len;
        const char *body = req + body_off;
        size_t body_len = ex->request_len - body_off;
        if (digest_two(ctx, md, &req, &ex->request_len, 1, d->req_block, NULL, &body, &body_len, 1,
                       d->req_payload) < 0)
            return -1;
    }
    d->done = 1;
    return 0;
}

/* The records of an exchange (on the writer's thread). */
static int write_exchange(warc_t *w, struct job *j, warc_err_t *err)
{
    const warc_exchange_t *ex = &j->ex;
    struct digests *d = &j->dg;
    const char *resp_id = j->id, *req_id = j->req_id;
    if (ready(w, err) < 0) return -1;
    if (!d->done && digest_exchange(w->md, w->sha1, ex, d) < 0)
        return set_err(err, WARC_E_MEMORY, "SHA-1 failed (libcrypto)");
    char date[32];
    format_date(ex->date, date);
    struct head_facts facts;
    head_facts(ex->head, ex->head_len, &facts);
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
        add_cdx(w, ex->url, ex->date, ref ? "warc/revisit" : (*mime ? mime : "unk"), status,
                d->payload, offset, resp_len);
    if (dedupe && !ref) {
        seen_add(w, d->payload_raw, ex->url, date, resp_id);
        if (w->track) list_original(w, d->payload, ex->url, date, resp_id);
    }
    return 0;
}

/* A metadata record (on the writer's thread). */
static int write_metadata(warc_t *w, const struct job *j, warc_err_t *err)
{
    const char *fields = j->ex.payload;
    size_t len = j->ex.payload_len;
    if (ready(w, err) < 0) return -1;
    char when[32], digest[WARC_DIGEST_SIZE];
    if (sha1_of(w, &fields, &len, 1, digest, NULL, err) < 0) return -1;
    format_date(j->ex.date, when);
    record_t r = {.type = "metadata",
                  .id = j->id,
                  .date = when,
                  .uri = j->ex.url,
                  .concurrent_to = j->concurrent_to,
                  .content_type = "application/warc-fields",
                  .block_digest = digest};
    w->out.n = 0;
    if (add_record(w, &r, &fields, &len, 1, 1) < 0) return oom(err);
    if (flush_out(w, err) < 0) return -1;
    w->size += w->out.n;
    w->records++;
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
                     j->metadata ? "the metadata record" : "the records", j->ex.url,
                     j->metadata ? "was not written" : "were not written");
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
    if (new_id(&w->ids, j->id, err) < 0) {
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
    if (fixed_head(ex->head ? ex->head : "", ex->head_len, head) < 0) {
        oom(err);
        return refuse_loan(loan);
    }
    int lent = loan && loan->release;
    const char *ip = ex->ip ? ex->ip : "";
    size_t len[5] = {strlen(ex->url), strlen(ip), ex->request_len, head->n,
                     lent ? 0 : ex->payload_len};
    struct job *j = new_job(w, len, 5, err);
    if (!j || new_id(&w->ids, j->req_id, err) < 0) {
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
        digest_exchange(w->main_md, w->sha1, &j->ex, &j->dg) < 0)
        j->dg.done = 0; /* the writer's thread tries again, and says so */
    return queue_job(w, j, id_out, err);
}

int warc_write_metadata(warc_t *w, const char *url, double date, const char *concurrent_to,
                        const char *fields, size_t len, char id_out[WARC_ID_SIZE], warc_err_t *err)
{
    if (!url || has_ctl(url) || strchr(url, ' ') || (concurrent_to && has_ctl(concurrent_to)))
        return set_err(err, WARC_E_USAGE, "a URL or record ID with spaces or control characters");
    if (too_long(len)) return set_err(err, WARC_E_USAGE, "metadata too long for a record");
    size_t lens[3] = {strlen(url), concurrent_to ? strlen(concurrent_to) : 0, len};
    struct job *j = new_job(w, lens, 3, err);
    if (!j) return -1;
    char *at = j->data;
    j->metadata = 1;
    j->ex.url = copy_in(&at, url, lens[0]);
    j->ex.date = date;
    j->concurrent_to = concurrent_to ? copy_in(&at, concurrent_to, lens[1]) : NULL;
    j->ex.payload = copy_in(&at, fields, lens[2]);
    j->ex.payload_len = len;
    return queue_job(w, j, id_out, err);
}

int warc_remember(warc_t *w, const char *digest, const char *uri, const char *date, const char *id,
                  warc_err_t *err)
{
    unsigned char raw[SHA1_LEN];
    if (digest_raw(digest, raw) < 0)
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
    if (level == 1) {
        w->isal_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
        w->codes = calloc(1, sizeof(*w->codes));
    } else {
        w->deflater = libdeflate_alloc_compressor(level);
    }
    w->sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    w->md = EVP_MD_CTX_new();
    w->main_md = EVP_MD_CTX_new();
    if (!(w->deflater || (w->isal_buf && w->codes)) || !w->sha1 || !w->md || !w->main_md)
        goto no_memory;
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
    if (w->deflater) libdeflate_free_compressor(w->deflater);
    free(w->isal_buf);
    if (w->codes) {
        free(w->codes->small.ht);
        free(w->codes->large.ht);
    }
    free(w->codes);
    EVP_MD_CTX_free(w->md);
    EVP_MD_CTX_free(w->main_md);
    EVP_MD_free(w->sha1);
    for (size_t i = 0; i < w->seen_cap; i++)
        free(w->seen[i].ref);
    free(w->seen);
    buf_free(&w->out);
    buf_free(&w->head);
    buf_free(&w->rec);
    buf_free(&w->cdx);
    buf_free(&w->fresh);
    free(w->prefix);
    free(w->software);
    free(w->info);
    free(w->path);
    free(w->cdx_path);
    free(w);
    return rc;
}
