/* warc_gzip.c: a WARC record as a gzip member of its own, so that a reader can start
 * at any record's offset: ISA-L's igzip at level 1 (with Huffman codes learnt from the
 * first records), libdeflate's at 2 to 9, and stored blocks for a payload that is
 * compressed already. */
#include "warc_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

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
struct warc_codes {
    struct small_codes small, large;
};

/* n bytes at p deflated by ISA-L into out: a gzip member whole (end 1), or its
 * header and blocks byte-aligned, not final, for more to follow (end 0). */
static int isal_member(struct warc_gzip *z, struct buf *out, char *p, size_t n, int end)
{
    size_t bound = n + n / 4096 + 1024; /* stored blocks at worst: 5 bytes a 64 KB */
    if (buf_reserve(out, bound) < 0) return -1;
    struct small_codes *sc = n < SMALL_RECORD ? &z->codes->small : &z->codes->large;
    struct isal_zstream s;
    isal_deflate_stateless_init(&s);
    if (sc->ht) {
        s.level = 0;
        s.hufftables = sc->ht;
    } else {
        s.level = 1;
        s.level_buf = z->isal_buf;
        s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    }
    s.gzip_flag = IGZIP_GZIP;
    s.end_of_stream = (uint16_t)end;
    s.flush = end ? NO_FLUSH : FULL_FLUSH;
    s.next_in = (uint8_t *)p; /* only read, but ISA-L's field is not const */
    s.avail_in = (uint32_t)n;
    s.next_out = (unsigned char *)out->p + out->n;
    s.avail_out = (uint32_t)bound;
    if (isal_deflate_stateless(&s) != COMP_OK) return -1;
    out->n += s.total_out;
    if (!sc->ht && sc->counted < SAMPLE && (n < SMALL_RECORD || s.total_out * 4 < n * 3)) {
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

/* n bytes at p as one gzip member, appended to out; -1 when out of memory. Level 1
 * is ISA-L's igzip (faster than libdeflate's level 1, for a few percent more bytes),
 * the other levels libdeflate's. */
int warc_gzip_member(struct warc_gzip *z, struct buf *out, char *p, size_t n)
{
    if (!z->deflater) return isal_member(z, out, p, n, 1);
    size_t bound = libdeflate_gzip_compress_bound(z->deflater, n);
    if (buf_reserve(out, bound) < 0) return -1;
    size_t k = libdeflate_gzip_compress(z->deflater, p, n, (char *)out->p + out->n, bound);
    if (!k) return -1; /* cannot happen with the bound's room */
    out->n += k;
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
int warc_gzip_member_stored(struct warc_gzip *z, struct buf *to, char *p, size_t n,
                            const char *const *piece, const size_t *len, int npieces)
{
    size_t total = 0;
    for (int i = 0; i < npieces; i++)
        total += len[i];
    const size_t block = 65535; /* a stored block's most */
    size_t nblocks = total ? (total + block - 1) / block : 1;
    if (isal_member(z, to, p, n, 0) < 0 || buf_reserve(to, total + 5 * nblocks + 8) < 0) return -1;
    uint32_t crc = crc32_gzip_refl(0, (const unsigned char *)p, n);
    unsigned char *out = (unsigned char *)to->p + to->n;
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
    to->n = (size_t)(out + 8 - (unsigned char *)to->p);
    return 0;
}

int warc_gzip_init(struct warc_gzip *z, int level)
{
    if (level == 1) {
        z->isal_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
        z->codes = calloc(1, sizeof(*z->codes));
    } else {
        z->deflater = libdeflate_alloc_compressor(level);
    }
    return z->deflater || (z->isal_buf && z->codes) ? 0 : -1;
}

void warc_gzip_free(struct warc_gzip *z)
{
    if (z->deflater) libdeflate_free_compressor(z->deflater);
    free(z->isal_buf);
    if (z->codes) {
        free(z->codes->small.ht);
        free(z->codes->large.ht);
    }
    free(z->codes);
}
