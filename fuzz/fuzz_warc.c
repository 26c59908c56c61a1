/* fuzz_warc.c: the WARC reader (warc.h) on arbitrary bytes, gzip or plain (the seeds
 * include .warc.gz files; mutations that keep the magic bytes reach the inflater),
 * and the HTTP helpers on each block. Checks: a record has a version starting "WARC/",
 * its block lies within what was read, offsets never go back; an error names a kind;
 * the reader stops after an error or the end; the chunked decoder never gives more
 * bytes than it was given. */
#include "warc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_warc: %s\n", what);
    abort();
}

static int count_header(void *arg, const char *name, size_t nlen, const char *value, size_t vlen)
{
    (void)name;
    (void)value;
    size_t *n = arg;
    *n += nlen + vlen;
    return 0;
}

static void check_block(const warc_record_t *rec)
{
    warc_http_t h;
    if (warc_http_parse(rec->block, rec->block_len, &h) < 0) return;
    if (h.head_len > rec->block_len || h.body + h.body_len != rec->block + rec->block_len)
        fail("HTTP parts outside the block");
    size_t n = 0;
    warc_http_headers(&h, count_header, &n);
    if (n > h.head_len) fail("headers longer than the head");
    char *out = NULL;
    size_t out_len = 0;
    int rc = warc_dechunk(h.body, h.body_len, &out, &out_len);
    if (rc != -2 && out_len > h.body_len) fail("dechunked data longer than the body");
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    warc_err_t err;
    warc_reader_t *r = warc_reader_mem(data, size, &err);
    if (!r) {
        if (err.kind == WARC_OK) fail("no reader and no error");
        return 0;
    }
    warc_record_t rec;
    unsigned long long last = 0;
    int rc, n = 0;
    while ((rc = warc_reader_next(r, &rec, &err)) == 1) {
        if (rec.damaged) {
            if (rec.nfields || rec.block) fail("a damaged member with a record's parts");
            if (n++ && rec.offset < last) fail("offsets went back");
            last = rec.offset;
            continue;
        }
        if (strncmp(rec.version, "WARC/", 5) != 0) fail("a version not starting WARC/");
        if (n++ && rec.offset < last) fail("offsets went back");
        last = rec.offset;
        if (rec.block_len > WARC_MAX_BLOCK) fail("a block over the limit");
        for (int i = 0; i < rec.nfields; i++)
            if (!rec.fields[i].name || !rec.fields[i].value) fail("a field without its text");
        (void)warc_record_field(&rec, "WARC-Type");
        check_block(&rec);
    }
    if (rc < 0 && (err.kind == WARC_OK || !err.message[0])) fail("an error without a kind");
    warc_reader_free(r);
    return 0;
}
