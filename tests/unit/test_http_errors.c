/* Unit tests of engine/http_errors.c: every libcurl result code has a kind chosen
 * for it. */
#include "http_errors.h"
#include "test.h"

#include <string.h>

/* Every code curl 7.88 names (curl_easy_strerror knows it) has a row of its own:
 * none falls into a kind by default. Codes curl retired say "Unknown error". */
static void test_every_code_has_a_row(void)
{
    for (int c = 1; c < CURL_LAST; c++) {
        const char *s = curl_easy_strerror((CURLcode)c);
        int retired = strstr(s, "Unknown error") != NULL;
        if (!retired && !http_curl_error_known((CURLcode)c)) {
            fprintf(stderr, "no row for CURLcode %d (%s)\n", c, s);
            CHECK(0);
        }
        http_curl_error_t e = http_curl_error((CURLcode)c, 0);
        CHECK(e.what && *e.what);
        CHECK(e.kind != HTTP_OK && e.kind != HTTP_E_CANCELLED);
    }
    /* A newer libcurl's code: protocol, with words. */
    http_curl_error_t e = http_curl_error((CURLcode)(CURL_LAST + 5), 1);
    CHECK(e.kind == HTTP_E_PROTOCOL && e.what);
}

static void test_kinds(void)
{
    static const struct {
        CURLcode code;
        int began;
        enum http_error kind;
    } cases[] = {
        /* Not HTTP: protocol, never invalid_url (our checks refuse bad URLs first). */
        {CURLE_UNSUPPORTED_PROTOCOL, 1, HTTP_E_PROTOCOL},
        {CURLE_UNSUPPORTED_PROTOCOL, 0, HTTP_E_PROTOCOL},
        {CURLE_WEIRD_SERVER_REPLY, 1, HTTP_E_PROTOCOL},
        {CURLE_URL_MALFORMAT, 0, HTTP_E_INVALID_URL},
        /* A reset: connect before the response began, protocol after. */
        {CURLE_RECV_ERROR, 0, HTTP_E_CONNECT},
        {CURLE_RECV_ERROR, 1, HTTP_E_PROTOCOL},
        {CURLE_GOT_NOTHING, 0, HTTP_E_CONNECT},
        {CURLE_COULDNT_CONNECT, 0, HTTP_E_CONNECT},
        {CURLE_SEND_ERROR, 0, HTTP_E_CONNECT},
        {CURLE_PARTIAL_FILE, 1, HTTP_E_PROTOCOL},
        {CURLE_BAD_CONTENT_ENCODING, 1, HTTP_E_PROTOCOL},
        {CURLE_HTTP2, 1, HTTP_E_PROTOCOL},
        {CURLE_HTTP2_STREAM, 1, HTTP_E_PROTOCOL},
        {CURLE_OPERATION_TIMEDOUT, 1, HTTP_E_TIMEOUT},
        {CURLE_OPERATION_TIMEDOUT, 0, HTTP_E_TIMEOUT},
        {CURLE_COULDNT_RESOLVE_HOST, 0, HTTP_E_DNS},
        {CURLE_COULDNT_RESOLVE_PROXY, 0, HTTP_E_DNS},
        {CURLE_ABORTED_BY_CALLBACK, 0, HTTP_E_DNS},
        {CURLE_PEER_FAILED_VERIFICATION, 0, HTTP_E_TLS},
        {CURLE_SSL_CONNECT_ERROR, 0, HTTP_E_TLS},
        {CURLE_SSL_CACERT_BADFILE, 0, HTTP_E_TLS},
        {CURLE_FILESIZE_EXCEEDED, 1, HTTP_E_TOO_LARGE},
        {CURLE_OUT_OF_MEMORY, 1, HTTP_E_MEMORY},
        {CURLE_FAILED_INIT, 0, HTTP_E_MEMORY},
        {CURLE_PROXY, 0, HTTP_E_CONNECT},
        {CURLE_FTP_WEIRD_PASV_REPLY, 1, HTTP_E_PROTOCOL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        http_curl_error_t e = http_curl_error(cases[i].code, cases[i].began);
        if (e.kind != cases[i].kind) {
            fprintf(stderr, "CURLcode %d (began %d): %s, want %s\n", cases[i].code, cases[i].began,
                    http_error_name(e.kind), http_error_name(cases[i].kind));
            CHECK(0);
        }
    }
}

int main(void)
{
    RUN(test_every_code_has_a_row);
    RUN(test_kinds);
    return test_failures ? 1 : 0;
}
