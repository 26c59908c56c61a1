/* warc_digest.c: the SHA-1 digests of WARC records, as WARC-Block-Digest and
 * WARC-Payload-Digest give them ("sha1:" and base32): by the CPU's SHA instructions
 * (digest_sha1_ni.h), two side by side, or by libcrypto. */
#include "warc_internal.h"

#include "digest_sha1_ni.h"

#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

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

/* One digest as text (and raw, when not NULL), with ctx; -1 when libcrypto failed. */
int warc_digest_with(EVP_MD_CTX *ctx, const EVP_MD *md, const char *const *piece, const size_t *len,
                     int n, char out[WARC_DIGEST_SIZE], unsigned char raw[SHA1_LEN])
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
        return warc_digest_with(ctx, md, pa, la, na, out_a, raw_a) < 0 ||
                       warc_digest_with(ctx, md, pb, lb, nb, out_b, NULL) < 0
                   ? -1
                   : 0;
    unsigned char da[SHA1_LEN], db[SHA1_LEN];
    sha1_ni(&(sha1_msg_t){pa, la, na}, da, &(sha1_msg_t){pb, lb, nb}, db);
    digest_text(da, out_a);
    if (raw_a) memcpy(raw_a, da, SHA1_LEN);
    digest_text(db, out_b);
    return 0;
}

/* The digests of ex's records (its head fixed already) into d, with ctx. */
int warc_digest_exchange(EVP_MD_CTX *ctx, const EVP_MD *md, const warc_exchange_t *ex,
                         struct warc_digests *d)
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

/* The SHA-1 of a digest as digest_text writes it; -1 when text is not of that form. */
int warc_digest_raw(const char *text, unsigned char d[SHA1_LEN])
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
