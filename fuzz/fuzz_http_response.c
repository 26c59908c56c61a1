/* fuzz_http_response.c: the response side of engine/http.c (the curl header and body
 * callbacks and the header list finish() builds), fed from a fake transfer by
 * http_fuzz_response (engine/http_fuzz.c, compiled in only with LUACRAWL_FUZZING).
 * The first byte picks the limits (defaults, or a small max_body and/or max_header
 * so they are hit); the rest is the response as the server sends it, status line
 * first.
 *
 * Known (fuzz/crashes/http_response-folded-nul): a folded header line (one starting
 * with a space or tab) with a NUL byte is appended to the last value as it is, and
 * the NUL then splits it: finish() walks the list out of step, names becoming values.
 * curl 7.83 and later refuse any header line with a NUL byte, so the transfers
 * model curl's rule unless FUZZ_KNOWN is set in the environment. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int http_fuzz_response(const char *data, size_t len, size_t max_body, size_t max_header,
                       int as_curl);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t max_body = (data[0] & 1) ? 64 : 0;
    size_t max_header = (data[0] & 2) ? 256 : 0;
    static int as_curl = -1;
    if (as_curl < 0) as_curl = getenv("FUZZ_KNOWN") == NULL;
    int rc = http_fuzz_response((const char *)data + 1, size - 1, max_body, max_header, as_curl);
    if (rc == -2) {
        fprintf(stderr,
                "fuzz_http_response: the header list does not walk to the end of its buffer\n");
        abort();
    }
    return 0;
}
