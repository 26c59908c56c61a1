/* warc.h: WARC/1.1 files (ISO 28500), written and read back.
 *
 * The writer keeps what a fetch sent and received (http.h's archive capture) as
 * request and response records, one gzip member per record so that any record can be
 * read at its offset; a file being written is named with an ".open" suffix until it
 * is closed, and a prefix rotates to PREFIX-00001.warc.gz, ... at a size. With cdx,
 * a CDXJ index (as pywb reads it) is kept beside each file. A record is written
 * whole or not at all: a failed write (a full disk) is cut back off the file.
 *
 * A writer has a thread of its own (jobq.h): a write call copies what it is given
 * and queues it, and that thread computes the digests, compresses the records and
 * writes them. So a write call waits only when 8 MB of records are queued already
 * (warc.c); and a record that could not be written there is reported by the next
 * call (write, metadata or close), which then writes nothing of its own. Rotation
 * happens there too. One thread at a time may call a writer's functions.
 *
 * The reader gives the records of a .warc.gz (per-record gzip members, or one
 * stream) or of a plain .warc, one at a time, with the offset each starts at. No
 * Lua here: lua_warc.c binds both. */
#ifndef LUACRAWL_WARC_H
#define LUACRAWL_WARC_H

#include <stddef.h>

#include "warc_err.h"

typedef struct warc warc_t;
typedef struct warc_reader warc_reader_t;

#define WARC_DEFAULT_MAX_SIZE 1000000000ull /* 1 GB, as Heritrix and wget's --warc-max-size */
#define WARC_ID_SIZE 48                     /* "<urn:uuid:" 36 ">" and a NUL */
#define WARC_DIGEST_SIZE 38                 /* "sha1:", 32 base32 characters, a NUL */
/* gzip level of the records: 1, ISA-L's igzip, the fastest; 2 to 9 are libdeflate's
 * levels, smaller files for several times the CPU (docs/benchmarks.md). */
#define WARC_DEFAULT_LEVEL 1

typedef struct warc_opts {
    unsigned long long max_size; /* a file is closed once it holds this much; 0: the default */
    int cdx;                     /* a CDXJ index beside each file */
    int dedupe;                  /* revisit records for a payload already written by this writer */
    int level;                   /* gzip level, 1 (fastest) to 9 (smallest); 0: the default */
    const char *software;        /* warcinfo's software field ("luacrawl/VERSION") */
    const char *info;            /* more warcinfo fields, "name: value\r\n" lines; NULL: none */
} warc_opts_t;

/* A writer. target is a prefix (files PREFIX-00000.warc.gz, PREFIX-00001..., the first
 * serial number whose files do not exist yet) or a file name ending in ".warc.gz" or
 * ".warc" (that one file, gzip or plain, never rotated; refused if it exists). Each
 * file starts with a warcinfo record. NULL with err set when the first file cannot be
 * made. */
warc_t *warc_open(const char *target, const warc_opts_t *opts, warc_err_t *err);

/* Write the records queued, finish the file being written (rename it and its index to
 * their final names) and free w. 0, or -1 with err set when that failed, or when a
 * record queued could not be written (w is freed all the same). */
int warc_close(warc_t *w, warc_err_t *err);

/* Wait until the records queued are written (to the file: not fsynced). 0, or -1 with
 * err set when one of them could not be written (as the next write would report). A
 * crawl with a state calls it before each commit, so that the state never says a page
 * is done whose records are still in the queue. */
int warc_sync(warc_t *w, warc_err_t *err);

/* The name of the file being written, as it will be once closed (after the records
 * queued are written: it waits for them). */
const char *warc_filename(const warc_t *w);

/* One HTTP exchange as it went over the wire (http.h's http_exchange_t, which has the
 * same fields). */
typedef struct warc_exchange {
    const char *url;
    const char *ip; /* NULL or "": unknown */
    double date;    /* Unix time the request was sent */
    const char *request;
    size_t request_len; /* request line, headers and body as sent; 0: no request record */
    const char *head;
    size_t head_len; /* status line and headers as received, through the empty line */
    const char *payload;
    size_t payload_len; /* the body as received: Content-Encoding intact, chunked framing removed */
    int truncated;      /* payload cut short at the fetch's max_size */
} warc_exchange_t;

/* Write a response record (or, with dedupe, a revisit record when a 2xx payload with
 * the same digest was written before) and a request record whose WARC-Concurrent-To
 * names it. id (may be NULL) gets the response record's WARC-Record-ID. 0 (the
 * records are queued: ex is copied), or -1 with err set and nothing queued: ex was
 * refused, or an earlier record failed (the writer's thread). */
int warc_write_exchange(warc_t *w, const warc_exchange_t *ex, char id[WARC_ID_SIZE],
                        warc_err_t *err);

/* The same with ex->payload lent rather than copied (a body is most of an exchange):
 * the bytes must stay as they are until release(arg) is called, once, from the
 * writer's thread when it is done with them, or before this returns -1. Lent bytes
 * count against the queue's bound as copied ones do. */
typedef struct warc_loan {
    void (*release)(void *arg);
    void *arg;
} warc_loan_t;
int warc_write_exchange_lent(warc_t *w, const warc_exchange_t *ex, const warc_loan_t *loan,
                             char id[WARC_ID_SIZE], warc_err_t *err);

/* A metadata record (application/warc-fields: "name: value\r\n" lines) about url,
 * WARC-Concurrent-To concurrent_to when given (a record ID, with its angle brackets).
 * 0 (queued), or -1 with err set and nothing queued, as warc_write_exchange. */
int warc_write_metadata(warc_t *w, const char *url, double date, const char *concurrent_to,
                        const char *fields, size_t len, char id[WARC_ID_SIZE], warc_err_t *err);

/* A conversion record: block (of content_type, as "text/html; charset=utf-8") is url's
 * content in another form than the record refers_to holds (a record ID, with its angle
 * brackets; NULL: none), as a rendered page's DOM or its screenshot is of the response
 * the browser got. WARC-Payload-Digest is the block's; with cdx, it has an index line.
 * 0 (queued), or -1 with err set and nothing queued, as warc_write_exchange. */
int warc_write_conversion(warc_t *w, const char *url, double date, const char *refers_to,
                          const char *content_type, const char *block, size_t len,
                          char id[WARC_ID_SIZE], warc_err_t *err);

/* "sha1:" and the base32 SHA-1 of the n pieces taken in turn, as WARC-Block-Digest and
 * WARC-Payload-Digest give it (the writer's digests). 0, or -1 when libcrypto failed. */
int warc_digest(const char *const *piece, const size_t *len, int n, char out[WARC_DIGEST_SIZE]);

/* A payload an earlier writer archived (a crawl's state keeps them: crawl_warc.lua):
 * later exchanges with the same payload digest become revisits of it, as for one
 * written by w itself (w's dedupe must be on). digest is as WARC-Payload-Digest gives
 * it ("sha1:" and 32 base32 characters); uri, date and id are the original record's
 * WARC-Target-URI, WARC-Date and WARC-Record-ID. Queued like a write: 0, or -1 with
 * err set (WARC_E_USAGE for a digest or ID not of that form). */
int warc_remember(warc_t *w, const char *digest, const char *uri, const char *date, const char *id,
                  warc_err_t *err);

/* From now on, w lists each response record it writes whose payload a later revisit
 * may refer to (a 2xx, whole, with a payload: w's dedupe on), for warc_originals. */
void warc_track_originals(warc_t *w);

/* Call fn for each record listed since the last call (digest, uri, date, id as
 * warc_remember takes them), and forget them. Only records written to the file are
 * listed: after warc_sync, every record queued before it. */
typedef void (*warc_original_fn)(void *arg, const char *digest, const char *uri, const char *date,
                                 const char *id);
void warc_originals(warc_t *w, warc_original_fn fn, void *arg);

/* ---- reading ---- */

#define WARC_MAX_BLOCK (512u << 20) /* a longer record is refused: the block is held whole */

typedef struct warc_field {
    const char *name, *value;
} warc_field_t;

/* A record, valid until the next warc_reader_next or warc_reader_free. */
typedef struct warc_record {
    const char *version; /* "WARC/1.1" */
    int nfields;
    const warc_field_t *fields; /* as written, in order */
    const char *block;
    size_t block_len;
    unsigned long long offset; /* in the file: of its gzip member, or of its first byte */
    int skipped;               /* its block was over the reader's limit: read past, block NULL */
    /* Not a record: a gzip member whose data is damaged, at offset, and what was read
     * of it, dropped; reading goes on at the next member. No fields, no block. */
    int damaged;
} warc_record_t;

/* The first value of the field name (any case), NULL when it has none. */
const char *warc_record_field(const warc_record_t *rec, const char *name);

/* A reader of the file at path, or of len bytes at data (kept by the caller while the
 * reader lives). gzip or plain is told by the first bytes. */
warc_reader_t *warc_reader_open(const char *path, warc_err_t *err);
warc_reader_t *warc_reader_mem(const void *data, size_t len, warc_err_t *err);
void warc_reader_free(warc_reader_t *r);
/* Blocks over max_block bytes (0: none; at most WARC_MAX_BLOCK) are not held: their
 * records come with their fields, skipped set and no block, read past in chunks. */
void warc_reader_limit(warc_reader_t *r, size_t max_block);

/* The next record: 1, 0 at the end, -1 with err set (WARC_E_TRUNCATED when the data
 * ends inside a record: the records before it were whole). A damaged gzip member
 * comes as a record with damaged set, and the next call reads on from the member
 * after it. */
int warc_reader_next(warc_reader_t *r, warc_record_t *rec, warc_err_t *err);

/* ---- the HTTP message of a request, response or revisit block ---- */

typedef struct warc_http {
    int status;        /* a response's status code; 0 for a request */
    const char *start; /* the first line, up to its CR LF */
    size_t start_len;
    size_t head_len;  /* the head: the first line and headers, through the empty line */
    const char *body; /* what follows the head */
    size_t body_len;
} warc_http_t;

/* Split an HTTP message; -1 when block does not start with one (no empty line). */
int warc_http_parse(const char *block, size_t len, warc_http_t *out);

/* Each header of a head (name and value, not NUL-terminated): fn's non-zero stops the
 * walk and is returned. */
typedef int (*warc_header_fn)(void *arg, const char *name, size_t nlen, const char *value,
                              size_t vlen);
int warc_http_headers(const warc_http_t *h, warc_header_fn fn, void *arg);

/* Undo chunked framing: out (malloc'd, *out_len bytes and a NUL) gets the data; 0, -1
 * when body is not chunked data (what was whole is kept: out is still set), -2 when
 * out of memory. */
int warc_dechunk(const char *body, size_t len, char **out, size_t *out_len);

#endif
