/* warc_internal.h: the seams of the WARC files, internal to engine/warc*.c: how they
 * fill a warc_err_t; and the parts the writer (warc.c) puts a record together from:
 * a record's text (warc_record.c), its gzip member (warc_gzip.c), its digests
 * (warc_digest.c) and its CDXJ line (warc_cdx.c). The reader (warc_read.c) takes
 * only the errors. */
#ifndef LUACRAWL_WARC_INTERNAL_H
#define LUACRAWL_WARC_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "buf.h"
#include "warc.h"

/* ---- errors and small strings ---- */

/* Set err to kind and the formatted message; returns -1 for `return set_err(...)`. */
static inline int set_err(warc_err_t *err, enum warc_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int set_err(warc_err_t *err, enum warc_kind kind, const char *fmt, ...)
{
    va_list ap;
    err->kind = kind;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

static inline int oom(warc_err_t *err)
{
    return set_err(err, WARC_E_MEMORY, "out of memory");
}

/* a and b joined, malloc'd; NULL when out of memory. */
static inline char *cat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", a, b);
    return s;
}

static inline int put(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

/* A "name: value" line of a header block or of application/warc-fields. */
static inline int put_field(struct buf *b, const char *name, const char *value)
{
    return put(b, name) | put(b, ": ") | put(b, value) | put(b, "\r\n");
}

/* ---- a record's text (warc_record.c) ---- */

/* Random bytes for record IDs, drawn from getrandom a few hundred at a time. */
struct warc_random {
    unsigned char b[256];
    size_t left;
};

/* A random (version 4) UUID as a WARC-Record-ID, "<urn:uuid:...>": 47 characters. */
int warc_new_id(struct warc_random *r, char id[WARC_ID_SIZE], warc_err_t *err);

/* WARC-Date, to the microsecond (WARC/1.1 allows a fraction): 28 bytes and a NUL. */
void warc_format_date(double t, char out[32]);

/* The fields of a record's header block, as the writer gives them (warc_record_t is a
 * record read back). refers_id alone (no profile): a conversion's WARC-Refers-To. */
typedef struct record {
    const char *type, *id, *date, *uri, *ip, *concurrent_to, *content_type;
    const char *block_digest, *payload_digest, *truncated;
    const char *profile, *refers_uri, *refers_date, *refers_id, *filename;
} record_t;

/* A record's version line and header block, through the empty line that ends it, for a
 * block of block_len bytes, into b (emptied first). warcinfo_id: "" before the file's
 * warcinfo is written. 0, or -1 when out of memory. */
int warc_record_head(struct buf *b, const record_t *r, const char *warcinfo_id, size_t block_len);

/* The head as the record keeps it: curl removed the chunked framing from the body, so
 * "chunked" goes from Transfer-Encoding (the header goes when nothing is left), or a
 * reader would look for chunks. Into out (emptied first); -1 when out of memory. */
int warc_fixed_head(const char *head, size_t len, struct buf *out);

/* What the writer needs to know of a response's head. */
struct warc_head_facts {
    int status;
    char mime[128]; /* Content-Type up to ';', trimmed */
    int packed;     /* the payload is compressed already: a Content-Encoding, or its type's */
};

/* The facts of a head: its status line's code, its Content-Type and Content-Encoding. */
void warc_head_facts(const char *head, size_t len, struct warc_head_facts *f);

/* ---- gzip members (warc_gzip.c) ---- */

struct warc_codes;

/* A writer's compressor: libdeflate's for levels 2 to 9, or ISA-L's for level 1. */
struct warc_gzip {
    struct libdeflate_compressor *deflater; /* levels 2 to 9; or NULL and: */
    unsigned char *isal_buf;                /* level 1, ISA-L's (ISAL_DEF_LVL1_DEFAULT) */
    struct warc_codes *codes;               /* with isal_buf: Huffman codes, small and large */
};

/* z (zeroed) made ready for level 1 to 9: 0, or -1 when out of memory (free it all
 * the same). */
int warc_gzip_init(struct warc_gzip *z, int level);
void warc_gzip_free(struct warc_gzip *z);

/* n bytes at p as one gzip member, appended to out; -1 when out of memory. */
int warc_gzip_member(struct warc_gzip *z, struct buf *out, char *p, size_t n);

/* A gzip member of the n bytes at p, deflated (ISA-L's: level 1 only), then the
 * pieces given as they are, in stored blocks, appended to to; -1 when out of memory. */
int warc_gzip_member_stored(struct warc_gzip *z, struct buf *to, char *p, size_t n,
                            const char *const *piece, const size_t *len, int npieces);

/* ---- digests (warc_digest.c) ---- */

#define SHA1_LEN 20
#define SHA1_BASE32_LEN 32 /* 160 bits in 5-bit groups, no padding needed */

/* The digests of an exchange's records, made by whichever thread has the time
 * (warc_write_exchange_lent). block is the response's (head and payload): a
 * revisit's, of the head alone, is made when the writer's thread finds the payload
 * seen before. */
struct warc_digests {
    int done;
    unsigned char payload_raw[SHA1_LEN];
    char payload[WARC_DIGEST_SIZE], block[WARC_DIGEST_SIZE];
    char req_block[WARC_DIGEST_SIZE], req_payload[WARC_DIGEST_SIZE];
};

/* One digest of the pieces in turn as text (and raw, when not NULL), with ctx (md:
 * the SHA-1 fetched once; NULL: libcrypto's default); -1 when libcrypto failed. */
int warc_digest_with(EVP_MD_CTX *ctx, const EVP_MD *md, const char *const *piece, const size_t *len,
                     int n, char out[WARC_DIGEST_SIZE], unsigned char raw[SHA1_LEN]);

/* The digests of ex's records (its head fixed already) into d, with ctx; -1 when
 * libcrypto failed. */
int warc_digest_exchange(EVP_MD_CTX *ctx, const EVP_MD *md, const warc_exchange_t *ex,
                         struct warc_digests *d);

/* The SHA-1 of a digest as the text form gives it; -1 when text is not of that form. */
int warc_digest_raw(const char *text, unsigned char d[SHA1_LEN]);

/* ---- the CDXJ index (warc_cdx.c) ---- */

/* A file's index lines, sorted only when the file is closed. */
struct warc_cdx {
    struct buf lines;
    size_t n;
};

/* The index line of a response, revisit or conversion record at offset, length bytes
 * long, in the file called filename (status 0: none, as for a conversion); -1 when out
 * of memory (the line is not added). */
int warc_cdx_add(struct warc_cdx *c, const char *filename, const char *url, double date,
                 const char *mime, int status, const char *digest, unsigned long long offset,
                 unsigned long long length);

/* The index, sorted (replay tools search it by key), written to path (by way of
 * path.open). 0, or -1 with err set. */
int warc_cdx_write(const struct warc_cdx *c, const char *path, warc_err_t *err);

#endif
