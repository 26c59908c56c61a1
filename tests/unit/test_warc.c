/* Unit tests of engine/warc.c and warc_read.c: the digests on the test vectors of
 * FIPS 180 (RFC 3174), fed in pieces, and their base32; a writer's file read back record
 * by record, a cut file, rotation, revisits, a chunked head rewritten, the HTTP helpers. */
#include "digest_sha1_ni.h"
#include "test.h"
#include "warc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The SHA-1 of len bytes given in pieces of piece bytes, in hex: warc_digest's base32
 * decoded, so that the vectors read as FIPS 180 prints them. */
static void sha1_hex(const void *data, size_t len, size_t piece, char out[41])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    int n = (int)(len / piece + 1);
    const char **p = calloc((size_t)n, sizeof(*p));
    size_t *l = calloc((size_t)n, sizeof(*l));
    char text[WARC_DIGEST_SIZE];
    CHECK(p && l);
    out[0] = '\0';
    if (!p || !l) {
        free(p);
        free(l);
        return;
    }
    for (int i = 0; i < n; i++) {
        size_t off = (size_t)i * piece;
        p[i] = (const char *)data + off;
        l[i] = off >= len ? 0 : len - off < piece ? len - off : piece;
    }
    CHECK(warc_digest(p, l, n, text) == 0 && strncmp(text, "sha1:", 5) == 0);
    free(p);
    free(l);
    unsigned char d[20] = {0};
    for (int i = 0; i < 32; i++) {
        unsigned v = (unsigned)(strchr(alphabet, text[5 + i]) - alphabet);
        for (int b = 0; b < 5; b++)
            if (v >> (4 - b) & 1) d[(5 * i + b) / 8] |= (unsigned char)(0x80 >> ((5 * i + b) % 8));
    }
    for (int i = 0; i < 20; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha1_vectors(void)
{
    char out[41];
    sha1_hex("abc", 3, 3, out);
    CHECK(strcmp(out, "a9993e364706816aba3e25717850c26c9cd0d89d") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    for (size_t piece = 1; piece <= 64; piece *= 4) {
        sha1_hex(two, strlen(two), piece, out);
        CHECK(strcmp(out, "84983e441c3bd26ebaae4aa1f95129e5e54670f1") == 0);
    }
    static char million[1000000];
    memset(million, 'a', sizeof(million));
    sha1_hex(million, sizeof(million), 1000, out);
    CHECK(strcmp(out, "34aa973cd4c4daa4f61eeb2bdbad27316534016f") == 0);
    /* RFC 3174's fourth: "0123456701234567..." 80 times (640 bytes) */
    char rep[640];
    for (int i = 0; i < 80; i++)
        memcpy(rep + 8 * i, "01234567", 8);
    sha1_hex(rep, sizeof(rep), 7, out);
    CHECK(strcmp(out, "dea356a2cddd90c7a7ecedc5ebb563934f460452") == 0);
    sha1_hex("", 0, 1, out);
    CHECK(strcmp(out, "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0);
}

/* A raw SHA-1 as warc_digest writes it: "sha1:" and base32. */
static void raw_text(const unsigned char d[20], char out[WARC_DIGEST_SIZE])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    memcpy(out, "sha1:", 5);
    for (int i = 0; i < 32; i++) {
        unsigned v = 0;
        for (int b = 0; b < 5; b++) {
            int bit = 5 * i + b;
            v = v << 1 | (unsigned)(d[bit / 8] >> (7 - bit % 8) & 1);
        }
        out[5 + i] = alphabet[v];
    }
    out[37] = '\0';
}

/* sha1_ni (where the CPU has the instructions) against libcrypto's (warc_digest): two
 * messages at once as the writer gives them, a payload and the same payload after a
 * head, of lengths around the block size and padding's edges, the head in pieces. */
static void sha1_ni_matches(void)
{
    if (!sha1_ni_available()) {
        printf("  no SHA instructions here: sha1_ni not tested\n");
        return;
    }
    static char data[70000];
    srand(7);
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (char)(rand() & 0xff);
    static const size_t lens[] = {0,   1,   55,  56,  63,   64,    65,        119,
                                  120, 127, 128, 129, 1000, 16411, 65536 + 17};
    static const size_t heads[] = {0, 1, 3, 63, 64, 200, 333};
    int bad = 0;
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        for (size_t k = 0; k < sizeof(heads) / sizeof(heads[0]); k++) {
            size_t h = heads[k], l = lens[i], h1 = h / 3;
            const char *pa[1] = {data + h}, *pb[3] = {data, data + h1, data + h};
            size_t la[1] = {l}, lb[3] = {h1, h - h1, l};
            unsigned char da[20], db[20];
            char ta[WARC_DIGEST_SIZE], tb[WARC_DIGEST_SIZE], want[WARC_DIGEST_SIZE];
            sha1_ni(&(sha1_msg_t){pa, la, 1}, da, &(sha1_msg_t){pb, lb, 3}, db);
            raw_text(da, ta);
            raw_text(db, tb);
            bad += warc_digest(pa, la, 1, want) != 0 || strcmp(ta, want) != 0;
            bad += warc_digest(pb, lb, 3, want) != 0 || strcmp(tb, want) != 0;
            sha1_ni(&(sha1_msg_t){pb, lb, 3}, db, NULL, NULL); /* one alone */
            raw_text(db, tb);
            bad += strcmp(tb, want) != 0;
        }
    }
    CHECK(bad == 0);
    /* FIPS 180's "abc" */
    const char *abc = "abc";
    size_t three = 3;
    unsigned char d[20];
    sha1_ni(&(sha1_msg_t){&abc, &three, 1}, d, NULL, NULL);
    static const unsigned char want_abc[20] = {0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81,
                                               0x6a, 0xba, 0x3e, 0x25, 0x71, 0x78, 0x50,
                                               0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d};
    CHECK(memcmp(d, want_abc, 20) == 0);
}

static void base32(void)
{
    /* sha1("") in base32, as WARC tools write it */
    const char *empty = "";
    size_t zero = 0;
    char b[WARC_DIGEST_SIZE];
    CHECK(warc_digest(&empty, &zero, 1, b) == 0);
    CHECK(strcmp(b, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ") == 0);
}

static char dir[] = "/tmp/test_warc_XXXXXX";

static const char *path_in(const char *name)
{
    static char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n";
static const char req[] = "GET /a HTTP/1.1\r\nHost: example.org\r\n\r\n";

static warc_exchange_t exchange(const char *url, const char *payload)
{
    warc_exchange_t ex = {.url = url,
                          .ip = "127.0.0.1",
                          .date = 1700000000.25,
                          .request = req,
                          .request_len = strlen(req),
                          .head = head,
                          .head_len = strlen(head),
                          .payload = payload,
                          .payload_len = strlen(payload)};
    return ex;
}

static void write_and_read_back(void)
{
    warc_err_t err;
    warc_opts_t o = {.cdx = 1, .dedupe = 1, .software = "test/1", .info = "operator: me\r\n"};
    warc_t *w = warc_open(path_in("a"), &o, &err);
    CHECK(w != NULL);
    if (!w) return;
    CHECK(access(path_in("a-00000.warc.gz.open"), F_OK) == 0);
    warc_exchange_t ex = exchange("http://www.Example.org/a?b=2&a=1", "<p>hello</p>");
    char id[WARC_ID_SIZE];
    CHECK(warc_write_exchange(w, &ex, id, &err) == 0);
    CHECK(strncmp(id, "<urn:uuid:", 10) == 0 && strlen(id) == 47 && id[24] == '4');
    ex.url = "http://example.org/copy";
    CHECK(warc_write_exchange(w, &ex, NULL, &err) == 0); /* a revisit */
    CHECK(warc_write_metadata(w, "http://example.org/copy", 1700000001, id, "outlink: x\r\n", 12,
                              NULL, &err) == 0);
    CHECK(warc_close(w, &err) == 0);
    CHECK(access(path_in("a-00000.warc.gz"), F_OK) == 0);
    CHECK(access(path_in("a-00000.warc.gz.open"), F_OK) != 0);

    warc_reader_t *r = warc_reader_open(path_in("a-00000.warc.gz"), &err);
    CHECK(r != NULL);
    if (!r) return;
    const char *types[] = {"warcinfo", "response", "request", "revisit", "request", "metadata"};
    warc_record_t rec;
    int n = 0;
    unsigned long long last = 0;
    while (warc_reader_next(r, &rec, &err) == 1 && n < 6) {
        CHECK(strcmp(rec.version, "WARC/1.1") == 0);
        CHECK(strcmp(warc_record_field(&rec, "warc-type"), types[n]) == 0);
        CHECK(n == 0 || rec.offset > last);
        last = rec.offset;
        if (n == 1) {
            CHECK(strcmp(warc_record_field(&rec, "WARC-Record-ID"), id) == 0);
            /* chunked gone from the head, the payload as given */
            warc_http_t h;
            CHECK(warc_http_parse(rec.block, rec.block_len, &h) == 0 && h.status == 200);
            CHECK(!memmem(rec.block, h.head_len, "chunked", 7));
            CHECK(h.body_len == 12 && memcmp(h.body, "<p>hello</p>", 12) == 0);
            CHECK(strcmp(warc_record_field(&rec, "WARC-IP-Address"), "127.0.0.1") == 0);
            CHECK(strcmp(warc_record_field(&rec, "WARC-Date"), "2023-11-14T22:13:20.250000Z") == 0);
        }
        if (n == 2) CHECK(strcmp(warc_record_field(&rec, "WARC-Concurrent-To"), id) == 0);
        if (n == 3) {
            CHECK(strcmp(warc_record_field(&rec, "WARC-Refers-To"), id) == 0);
            CHECK(strcmp(warc_record_field(&rec, "WARC-Refers-To-Target-URI"),
                         "http://www.Example.org/a?b=2&a=1") == 0);
        }
        n++;
    }
    CHECK(n == 6);
    CHECK(warc_reader_next(r, &rec, &err) == 0);
    warc_reader_free(r);

    FILE *f = fopen(path_in("a-00000.cdxj"), "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[1024];
    CHECK(fgets(line, sizeof(line), f) != NULL);
    CHECK(strncmp(line, "org,example)/a?a=1&b=2 20231114221320 {\"url\": ", 46) == 0);
    CHECK(strstr(line, "\"mime\": \"text\\/html\"") != NULL);
    CHECK(fgets(line, sizeof(line), f) != NULL);
    CHECK(strncmp(line, "org,example)/copy 2023", 22) == 0 && strstr(line, "warc\\/revisit"));
    fclose(f);
}

/* A conversion record (a rendered page's DOM): WARC-Refers-To its response, its block as
 * its payload digest, an index line with its own Content-Type and no status; one with a
 * type of control characters is refused. */
static void conversion_record(void)
{
    warc_err_t err;
    warc_opts_t o = {.cdx = 1, .software = "test/1"};
    warc_t *w = warc_open(path_in("conv.warc.gz"), &o, &err);
    CHECK(w != NULL);
    if (!w) return;
    warc_exchange_t ex = exchange("http://example.org/js", "<p>shell</p>");
    char id[WARC_ID_SIZE], dom_id[WARC_ID_SIZE];
    const char dom[] = "<html><body><a href=\"/x\">x</a></body></html>";
    CHECK(warc_write_exchange(w, &ex, id, &err) == 0);
    CHECK(warc_write_conversion(w, "http://example.org/js", 1700000002, id,
                                "text/html; charset=utf-8", dom, strlen(dom), dom_id, &err) == 0);
    CHECK(strcmp(dom_id, id) != 0);
    CHECK(warc_write_conversion(w, "http://example.org/js", 1700000002, id, "text/html\r\nX: y",
                                dom, strlen(dom), NULL, &err) == -1 &&
          err.kind == WARC_E_USAGE);
    CHECK(warc_close(w, &err) == 0);
    warc_reader_t *r = warc_reader_open(path_in("conv.warc.gz"), &err);
    CHECK(r != NULL);
    if (!r) return;
    warc_record_t rec;
    int n = 0;
    while (warc_reader_next(r, &rec, &err) == 1) {
        if (++n != 4) continue; /* warcinfo, response, request, then the DOM */
        CHECK(strcmp(warc_record_field(&rec, "WARC-Type"), "conversion") == 0);
        CHECK(strcmp(warc_record_field(&rec, "WARC-Refers-To"), id) == 0);
        CHECK(strcmp(warc_record_field(&rec, "WARC-Record-ID"), dom_id) == 0);
        CHECK(strcmp(warc_record_field(&rec, "Content-Type"), "text/html; charset=utf-8") == 0);
        CHECK(!warc_record_field(&rec, "WARC-Concurrent-To"));
        CHECK(strcmp(warc_record_field(&rec, "WARC-Payload-Digest"),
                     warc_record_field(&rec, "WARC-Block-Digest")) == 0);
        CHECK(rec.block_len == strlen(dom) && memcmp(rec.block, dom, rec.block_len) == 0);
    }
    CHECK(n == 4);
    warc_reader_free(r);
    FILE *f = fopen(path_in("conv.cdxj"), "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[1024];
    int lines = 0, dom_line = 0;
    while (fgets(line, sizeof(line), f)) {
        lines++;
        if (strstr(line, "\"mime\": \"text\\/html; charset=utf-8\"")) {
            dom_line = 1;
            CHECK(!strstr(line, "\"status\""));
        }
    }
    CHECK(lines == 2 && dom_line);
    fclose(f);
}

/* A lent payload: given back once, after its record is written (or at once when the
 * write is refused), and read from the lender's bytes meanwhile. */
struct lender {
    char *bytes;
    int released;
};

static void give_back(void *arg)
{
    struct lender *l = arg;
    l->released++;
    free(l->bytes);
    l->bytes = NULL;
}

static void lent_payload(void)
{
    warc_err_t err;
    warc_opts_t o = {.software = "test/1"};
    warc_t *w = warc_open(path_in("lent.warc.gz"), &o, &err);
    CHECK(w != NULL);
    if (!w) return;
    struct lender l = {strdup("<p>lent bytes</p>"), 0};
    warc_exchange_t ex = exchange("http://example.org/lent", l.bytes);
    warc_loan_t loan = {give_back, &l};
    CHECK(warc_write_exchange_lent(w, &ex, &loan, NULL, &err) == 0);
    struct lender bad = {strdup("x"), 0};
    warc_exchange_t refused = exchange("http://example.org/a b", bad.bytes);
    warc_loan_t bad_loan = {give_back, &bad};
    CHECK(warc_write_exchange_lent(w, &refused, &bad_loan, NULL, &err) == -1);
    CHECK(err.kind == WARC_E_USAGE && bad.released == 1); /* given back before the return */
    CHECK(warc_close(w, &err) == 0);
    CHECK(l.released == 1);

    warc_reader_t *r = warc_reader_open(path_in("lent.warc.gz"), &err);
    CHECK(r != NULL);
    if (!r) return;
    warc_record_t rec;
    int found = 0;
    while (warc_reader_next(r, &rec, &err) == 1) {
        if (strcmp(warc_record_field(&rec, "warc-type"), "response") != 0) continue;
        warc_http_t h;
        CHECK(warc_http_parse(rec.block, rec.block_len, &h) == 0);
        CHECK(h.body_len == 17 && memcmp(h.body, "<p>lent bytes</p>", 17) == 0);
        found++;
    }
    CHECK(found == 1);
    warc_reader_free(r);
}

static void cut_file_keeps_whole_records(void)
{
    warc_err_t err;
    warc_opts_t o = {0};
    warc_t *w = warc_open(path_in("cut.warc.gz"), &o, &err);
    CHECK(w != NULL);
    if (!w) return;
    warc_exchange_t ex = exchange("http://example.org/", "body");
    CHECK(warc_write_exchange(w, &ex, NULL, &err) == 0);
    CHECK(warc_close(w, &err) == 0);
    FILE *f = fopen(path_in("cut.warc.gz"), "rb");
    static char data[65536];
    size_t n = f ? fread(data, 1, sizeof(data), f) : 0;
    if (f) fclose(f);
    CHECK(n > 100);
    /* Every cut: whole records first, then "truncated", never anything else (from the
     * second byte on: one byte is not yet gzip's magic number); a cut between two
     * members leaves a whole file. */
    int whole = 0;
    for (size_t cut = 2; cut < n; cut++) {
        warc_reader_t *r = warc_reader_mem(data, cut, &err);
        warc_record_t rec;
        int rc, k = 0;
        while ((rc = warc_reader_next(r, &rec, &err)) == 1)
            k++;
        CHECK(rc == 0 || (rc == -1 && err.kind == WARC_E_TRUNCATED));
        whole += rc == 0;
        CHECK(k <= 3);
        warc_reader_free(r);
    }
    CHECK(whole == 2); /* after the warcinfo, after the response */
    warc_reader_t *r = warc_reader_mem(data, n, &err);
    warc_record_t rec;
    int k = 0;
    while (warc_reader_next(r, &rec, &err) == 1)
        k++;
    CHECK(k == 3);
    warc_reader_free(r);
    /* The same file can not be made again. */
    CHECK(warc_open(path_in("cut.warc.gz"), &o, &err) == NULL && err.kind == WARC_E_IO);
}

static void rotation(void)
{
    warc_err_t err;
    warc_opts_t o = {.max_size = 1};
    warc_t *w = warc_open(path_in("rot"), &o, &err);
    CHECK(w != NULL);
    if (!w) return;
    warc_exchange_t ex = exchange("http://example.org/", "body");
    for (int i = 0; i < 3; i++)
        CHECK(warc_write_exchange(w, &ex, NULL, &err) == 0);
    CHECK(strstr(warc_filename(w), "rot-00002.warc.gz") != NULL);
    CHECK(warc_close(w, &err) == 0);
    CHECK(access(path_in("rot-00001.warc.gz"), F_OK) == 0);
    /* A new writer on the same prefix starts after the files there. */
    w = warc_open(path_in("rot"), &o, &err);
    CHECK(w && strstr(warc_filename(w), "rot-00003.warc.gz"));
    warc_close(w, &err);
}

static void plain_and_bad_input(void)
{
    const char *plain =
        "\r\nWARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    warc_err_t err;
    warc_reader_t *r = warc_reader_mem(plain, strlen(plain), &err);
    warc_record_t rec;
    CHECK(warc_reader_next(r, &rec, &err) == 1 && rec.block_len == 3 && rec.offset == 2);
    CHECK(warc_reader_next(r, &rec, &err) == 0);
    warc_reader_free(r);
    r = warc_reader_mem("<html>", 6, &err);
    CHECK(warc_reader_next(r, &rec, &err) == -1 && err.kind == WARC_E_FORMAT);
    warc_reader_free(r);
    const char *nolen = "WARC/1.1\r\nWARC-Type: x\r\n\r\n";
    r = warc_reader_mem(nolen, strlen(nolen), &err);
    CHECK(warc_reader_next(r, &rec, &err) == -1 && err.kind == WARC_E_FORMAT);
    warc_reader_free(r);
    char *out;
    size_t n;
    CHECK(warc_dechunk("3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n", 25, &out, &n) == 0 && n == 5 &&
          memcmp(out, "abcde", 5) == 0);
    free(out);
    CHECK(warc_dechunk("3\r\nabc\r\nzz", 10, &out, &n) == -1 && n == 3);
    free(out);
}

/* The gzip level changes only the size: the same records read back at 1 (ISA-L) and 9
 * (libdeflate); a level past 9 is refused. */
static void gzip_levels(void)
{
    /* Words drawn by a fixed LCG: text that level 9 compresses clearly better than
     * level 1 (a short period repeated would compress alike at both, and the
     * warcinfo's random ID and date could then tip the comparison). */
    static const char *const words[] = {"tale ",    "of ",     "two ",     "levels ", "deflate ",
                                        "gzip ",    "record ", "archive ", "<p>",     "</p>\n",
                                        "crawler ", "page ",   "link ",    "header "};
    static char page[20000];
    size_t len = 0;
    unsigned seed = 12345;
    while (len + 16 < sizeof(page)) {
        seed = seed * 1103515245u + 12345u;
        const char *wd = words[(seed >> 16) % (sizeof(words) / sizeof(words[0]))];
        size_t wl = strlen(wd);
        memcpy(page + len, wd, wl);
        len += wl;
    }
    page[len] = '\0';
    unsigned long long size[2] = {0};
    for (int k = 0; k < 2; k++) {
        warc_err_t err;
        warc_opts_t o = {.level = k ? 9 : 1, .software = "test/1"};
        const char *name = path_in(k ? "level9.warc.gz" : "level1.warc.gz");
        warc_t *w = warc_open(name, &o, &err);
        CHECK(w != NULL);
        if (!w) return;
        warc_exchange_t ex = exchange("http://example.org/l", page);
        CHECK(warc_write_exchange(w, &ex, NULL, &err) == 0);
        CHECK(warc_close(w, &err) == 0);
        warc_reader_t *r = warc_reader_open(name, &err);
        CHECK(r != NULL);
        if (!r) return;
        warc_record_t rec;
        CHECK(warc_reader_next(r, &rec, &err) == 1); /* warcinfo */
        CHECK(warc_reader_next(r, &rec, &err) == 1);
        warc_http_t h;
        CHECK(warc_http_parse(rec.block, rec.block_len, &h) == 0);
        CHECK(h.body_len == strlen(page) && memcmp(h.body, page, h.body_len) == 0);
        warc_reader_free(r);
        FILE *f = fopen(name, "rb");
        CHECK(f && fseek(f, 0, SEEK_END) == 0);
        if (f) size[k] = (unsigned long long)ftell(f), fclose(f);
    }
    CHECK(size[1] > 0 && size[1] < size[0]);
    warc_err_t err;
    warc_opts_t bad = {.level = 10};
    CHECK(warc_open(path_in("level10.warc.gz"), &bad, &err) == NULL && err.kind == WARC_E_USAGE);
    CHECK(access(path_in("level10.warc.gz.open"), F_OK) != 0);
}

/* The digest text of a block as a reader found it. */
static int digest_is(const char *block, size_t len, const char *want)
{
    char got[WARC_DIGEST_SIZE];
    return want && warc_digest(&block, &len, 1, got) == 0 && strcmp(got, want) == 0;
}

/* The whole of a file, or NULL; *n its length. */
static char *slurp(const char *name, size_t *n)
{
    FILE *f = fopen(name, "rb");
    char *data = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        rewind(f);
        data = size >= 0 ? malloc((size_t)size + 1) : NULL;
        *n = data ? fread(data, 1, (size_t)size, f) : 0;
    }
    if (f) fclose(f);
    return data;
}

/* `times` exchanges of the head and payload given, in a new writer of its own at name:
 * 0, or -1 when a write or the close failed. */
static int write_packed(const char *name, const char *head, const char *payload, size_t len,
                        int times)
{
    warc_err_t err;
    warc_opts_t o = {.software = "test/1"};
    unlink(name);
    warc_t *w = warc_open(name, &o, &err);
    if (!w) return -1;
    warc_exchange_t ex = exchange("http://example.org/p", "");
    ex.head = head;
    ex.head_len = strlen(head);
    ex.payload = payload;
    ex.payload_len = len;
    int rc = 0;
    for (int i = 0; i < times; i++)
        rc |= warc_write_exchange(w, &ex, NULL, &err);
    return warc_close(w, &err) | rc;
}

/* How many response records of the file at name hold the payload given, with its
 * digest; -1 when the file cannot be read to its end. */
static int responses_with(const char *name, const char *payload, size_t len)
{
    warc_err_t err;
    warc_reader_t *r = warc_reader_open(name, &err);
    if (!r) return -1;
    warc_record_t rec;
    int found = 0, rc;
    while ((rc = warc_reader_next(r, &rec, &err)) == 1) {
        warc_http_t h;
        if (strcmp(warc_record_field(&rec, "warc-type"), "response") != 0) continue;
        found += warc_http_parse(rec.block, rec.block_len, &h) == 0 && h.body_len == len &&
                 memcmp(h.body, payload, len) == 0 &&
                 digest_is(h.body, h.body_len, warc_record_field(&rec, "WARC-Payload-Digest"));
    }
    warc_reader_free(r);
    return rc == 0 ? found : -1;
}

/* A payload compressed already (a Content-Encoding, or an image's type) goes in
 * stored blocks: its bytes are in the file as they are, and read back whole, across
 * the 65,535-byte blocks' edges; the same bytes as text/html are deflated. */
static void packed_payload_stored(void)
{
    static const char *const heads[] = {
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\ncontent-type: image/png\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: identity\r\n\r\n"};
    static const size_t sizes[] = {0, 1, 65531, 65532, 150000};
    size_t max = 150000;
    char *page = malloc(max + 1);
    CHECK(page != NULL);
    if (!page) return;
    for (size_t i = 0; i < max; i++)
        page[i] = "<p>packed</p>\n"[i % 14];
    const char *name = path_in("packed.warc.gz");
    for (int k = 0; k < 3; k++) {
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
            CHECK(write_packed(name, heads[k], page, sizes[z], 1) == 0);
            CHECK(responses_with(name, page, sizes[z]) == 1);
            size_t n = 0;
            char *file = slurp(name, &n);
            CHECK(file != NULL);
            /* 60,000 bytes of the payload as they are: in a stored block, not deflated */
            size_t probe = sizes[z] < 60000 ? sizes[z] : 60000;
            int verbatim = file && probe >= 1000 && memmem(file, n, page, probe) != NULL;
            if (probe >= 1000) CHECK(verbatim == (k < 2));
            free(file);
        }
    }
    /* Past the writer's first 32 small records its headers go at level 0, with the
     * codes made from them: a stored payload after those as well. */
    CHECK(write_packed(name, heads[0], page, 20000, 40) == 0);
    CHECK(responses_with(name, page, 20000) == 40);
    free(page);
}

/* Writes faster than the writer's thread compresses: the queue fills, the caller's
 * thread makes the digests of some records and waits for room; every record is
 * there, in order, with the digests of its block and payload, and the revisits
 * refer to the first of each payload. */
static void writes_outrun_the_thread(void)
{
    static char page[3][16384];
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof(page[k]) - 1; i++)
            page[k][i] = (char)('a' + (i * 7 + i / 13 + (size_t)k * 5) % 26);
    warc_err_t err;
    warc_opts_t o = {.dedupe = 1, .software = "test/1"};
    warc_t *w = warc_open(path_in("busy.warc.gz"), &o, &err);
    CHECK(w != NULL);
    if (!w) return;
    enum { N = 1500 };
    char url[64];
    for (int i = 0; i < N; i++) {
        page[2][0] = (char)('A' + i % 26); /* the third page's payload differs each time */
        page[2][1] = (char)('A' + i / 26 % 26);
        page[2][2] = (char)('A' + i / 676 % 26);
        snprintf(url, sizeof(url), "http://example.org/%d", i);
        warc_exchange_t ex = exchange(url, page[i % 3]);
        if (warc_write_exchange(w, &ex, NULL, &err) != 0) {
            CHECK(0);
            break;
        }
    }
    CHECK(warc_close(w, &err) == 0);
    warc_reader_t *r = warc_reader_open(path_in("busy.warc.gz"), &err);
    CHECK(r != NULL);
    if (!r) return;
    warc_record_t rec;
    int responses = 0, revisits = 0, requests = 0, bad = 0;
    while (warc_reader_next(r, &rec, &err) == 1) {
        const char *type = warc_record_field(&rec, "WARC-Type");
        if (strcmp(type, "warcinfo") == 0) continue;
        bad += !digest_is(rec.block, rec.block_len, warc_record_field(&rec, "WARC-Block-Digest"));
        warc_http_t h;
        if (warc_http_parse(rec.block, rec.block_len, &h) < 0) {
            bad++;
            continue;
        }
        if (strcmp(type, "request") == 0) {
            requests++;
            bad += !digest_is(h.body, h.body_len, warc_record_field(&rec, "WARC-Payload-Digest"));
            continue;
        }
        snprintf(url, sizeof(url), "http://example.org/%d", responses + revisits);
        bad += strcmp(warc_record_field(&rec, "WARC-Target-URI"), url) != 0;
        if (strcmp(type, "revisit") == 0) {
            revisits++;
            continue;
        }
        responses++;
        bad += !digest_is(h.body, h.body_len, warc_record_field(&rec, "WARC-Payload-Digest"));
    }
    warc_reader_free(r);
    CHECK(bad == 0);
    CHECK(requests == N);
    CHECK(responses == 2 + N / 3 && revisits == N - responses);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN(sha1_vectors);
    RUN(sha1_ni_matches);
    RUN(base32);
    RUN(write_and_read_back);
    RUN(conversion_record);
    RUN(lent_payload);
    RUN(cut_file_keeps_whole_records);
    RUN(rotation);
    RUN(plain_and_bad_input);
    RUN(gzip_levels);
    RUN(packed_payload_stored);
    RUN(writes_outrun_the_thread);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) test_failures++;
    return test_failures ? 1 : 0;
}
