/* http_errors.c: how a transfer fails: the names of the kinds (http_types.h), the
 * message a failure carries, and the table of libcurl result codes (http_errors.h)
 * that, after our own reasons, says what a curl result means to a fetch.
 *
 * Only http and https are fetched and curl never resolves a name itself, so many
 * codes cannot happen; they still have a row (most as protocol: a reply or a state
 * curl could not make sense of), so that every code's kind is a decision. */
#include "http_errors.h"

#include "http_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define ROW(code, k, w) [code] = {k, w}

static const http_curl_error_t table[CURL_LAST] = {
    /* The URL: our own checks refuse it first; these are curl's. */
    ROW(CURLE_URL_MALFORMAT, HTTP_E_INVALID_URL, "invalid URL"),
    /* We check the scheme before curl sees a URL, so what curl refuses then is the
     * reply: an HTTP/0.9 answer (no status line) ends this way in 7.88. */
    ROW(CURLE_UNSUPPORTED_PROTOCOL, HTTP_E_PROTOCOL, "not an HTTP response"),
    ROW(CURLE_WEIRD_SERVER_REPLY, HTTP_E_PROTOCOL, "not an HTTP response"),
    ROW(CURLE_NOT_BUILT_IN, HTTP_E_PROTOCOL, "a feature this libcurl lacks"),
    ROW(CURLE_FAILED_INIT, HTTP_E_MEMORY, "curl could not start the transfer"),
    /* Names: dns.c resolves them; curl reaches these only for a proxy's or when
     * it tried to resolve by itself (on_resolver_start refuses: aborted). */
    ROW(CURLE_COULDNT_RESOLVE_PROXY, HTTP_E_DNS, "cannot resolve the proxy"),
    ROW(CURLE_COULDNT_RESOLVE_HOST, HTTP_E_DNS, "cannot resolve the host"),
    ROW(CURLE_ABORTED_BY_CALLBACK, HTTP_E_DNS, "a name curl would have resolved itself"),
    /* The connection. */
    ROW(CURLE_COULDNT_CONNECT, HTTP_E_CONNECT, "cannot connect"),
    ROW(CURLE_INTERFACE_FAILED, HTTP_E_CONNECT, "cannot use the local interface"),
    ROW(CURLE_SEND_ERROR, HTTP_E_CONNECT, "sending the request failed"),
    ROW(CURLE_UPLOAD_FAILED, HTTP_E_CONNECT, "sending the request body failed"),
    ROW(CURLE_SEND_FAIL_REWIND, HTTP_E_CONNECT, "the request body cannot be sent again"),
    ROW(CURLE_GOT_NOTHING, HTTP_E_CONNECT, "the server closed the connection without a reply"),
    ROW(CURLE_AGAIN, HTTP_E_CONNECT, "the connection is not ready"),
    ROW(CURLE_NO_CONNECTION_AVAILABLE, HTTP_E_CONNECT, "no connection available"),
    ROW(CURLE_QUIC_CONNECT_ERROR, HTTP_E_CONNECT, "cannot connect (QUIC)"),
    ROW(CURLE_PROXY, HTTP_E_CONNECT, "the proxy refused or failed the connection"),
    ROW(CURLE_UNRECOVERABLE_POLL, HTTP_E_CONNECT, "cannot wait on the connection"),
    /* RECV_ERROR: connect, or protocol once the response began (http_curl_error). */
    ROW(CURLE_RECV_ERROR, HTTP_E_CONNECT, "receiving failed"),
    ROW(CURLE_OPERATION_TIMEDOUT, HTTP_E_TIMEOUT, "timed out"),
    /* TLS. */
    ROW(CURLE_SSL_CONNECT_ERROR, HTTP_E_TLS, "TLS handshake failed"),
    ROW(CURLE_PEER_FAILED_VERIFICATION, HTTP_E_TLS, "the certificate did not verify"),
    ROW(CURLE_SSL_CERTPROBLEM, HTTP_E_TLS, "the client certificate is unusable"),
    ROW(CURLE_SSL_CIPHER, HTTP_E_TLS, "no usable TLS cipher"),
    ROW(CURLE_SSL_CACERT_BADFILE, HTTP_E_TLS, "cannot read the CA certificates"),
    ROW(CURLE_SSL_ISSUER_ERROR, HTTP_E_TLS, "the certificate's issuer did not verify"),
    ROW(CURLE_SSL_PINNEDPUBKEYNOTMATCH, HTTP_E_TLS, "the pinned public key did not match"),
    ROW(CURLE_SSL_INVALIDCERTSTATUS, HTTP_E_TLS, "the certificate status is invalid"),
    ROW(CURLE_SSL_CRL_BADFILE, HTTP_E_TLS, "cannot read the CRL file"),
    ROW(CURLE_SSL_ENGINE_NOTFOUND, HTTP_E_TLS, "TLS engine not found"),
    ROW(CURLE_SSL_ENGINE_SETFAILED, HTTP_E_TLS, "cannot use the TLS engine"),
    ROW(CURLE_SSL_ENGINE_INITFAILED, HTTP_E_TLS, "cannot start the TLS engine"),
    ROW(CURLE_SSL_SHUTDOWN_FAILED, HTTP_E_TLS, "TLS shutdown failed"),
    ROW(CURLE_USE_SSL_FAILED, HTTP_E_TLS, "TLS required but not available"),
    ROW(CURLE_SSL_CLIENTCERT, HTTP_E_TLS, "the server wants a client certificate"),
    /* The response. */
    ROW(CURLE_PARTIAL_FILE, HTTP_E_PROTOCOL, "response cut short (Content-Length or chunks)"),
    ROW(CURLE_HTTP2, HTTP_E_PROTOCOL, "HTTP/2 error"),
    ROW(CURLE_HTTP2_STREAM, HTTP_E_PROTOCOL, "HTTP/2 stream error"),
    ROW(CURLE_HTTP3, HTTP_E_PROTOCOL, "HTTP/3 error"),
    ROW(CURLE_BAD_CONTENT_ENCODING, HTTP_E_PROTOCOL, "broken content encoding"),
    ROW(CURLE_HTTP_RETURNED_ERROR, HTTP_E_PROTOCOL, "HTTP error status"),
    ROW(CURLE_RANGE_ERROR, HTTP_E_PROTOCOL, "the server did not honour the range"),
    ROW(CURLE_BAD_DOWNLOAD_RESUME, HTTP_E_PROTOCOL, "cannot resume the download"),
    ROW(CURLE_TOO_MANY_REDIRECTS, HTTP_E_PROTOCOL, "too many redirects"),
    ROW(CURLE_AUTH_ERROR, HTTP_E_PROTOCOL, "authentication failed"),
    ROW(CURLE_LOGIN_DENIED, HTTP_E_PROTOCOL, "login denied"),
    ROW(CURLE_REMOTE_ACCESS_DENIED, HTTP_E_PROTOCOL, "access denied"),
    ROW(CURLE_FILESIZE_EXCEEDED, HTTP_E_TOO_LARGE, "body larger than max_size"),
    /* Our callbacks stopped it (http_fail_curl says why before the table is asked), or
     * memory ran out. */
    ROW(CURLE_WRITE_ERROR, HTTP_E_PROTOCOL, "the response could not be stored"),
    ROW(CURLE_READ_ERROR, HTTP_E_PROTOCOL, "the request body could not be read"),
    ROW(CURLE_OUT_OF_MEMORY, HTTP_E_MEMORY, "out of memory"),
    /* Mistakes of ours in calling curl: no retry will help, and they are rare. */
    ROW(CURLE_BAD_FUNCTION_ARGUMENT, HTTP_E_PROTOCOL, "curl refused an argument"),
    ROW(CURLE_UNKNOWN_OPTION, HTTP_E_PROTOCOL, "curl does not know an option"),
    ROW(CURLE_SETOPT_OPTION_SYNTAX, HTTP_E_PROTOCOL, "curl refused an option's syntax"),
    ROW(CURLE_RECURSIVE_API_CALL, HTTP_E_PROTOCOL, "curl called from its own callback"),
    ROW(CURLE_FUNCTION_NOT_FOUND, HTTP_E_PROTOCOL, "a function curl needs is missing"),
    ROW(CURLE_CHUNK_FAILED, HTTP_E_PROTOCOL, "chunk callback failed"),
    /* Other protocols' codes: never for http(s), a reply curl could not use. */
    ROW(CURLE_FTP_ACCEPT_FAILED, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_WEIRD_PASS_REPLY, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_ACCEPT_TIMEOUT, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_WEIRD_PASV_REPLY, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_WEIRD_227_FORMAT, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_CANT_GET_HOST, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_COULDNT_SET_TYPE, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_COULDNT_RETR_FILE, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_PORT_FAILED, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_COULDNT_USE_REST, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_PRET_FAILED, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_FTP_BAD_FILE_LIST, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_QUOTE_ERROR, HTTP_E_PROTOCOL, "FTP error"),
    ROW(CURLE_HTTP_POST_ERROR, HTTP_E_PROTOCOL, "form post error"),
    ROW(CURLE_FILE_COULDNT_READ_FILE, HTTP_E_PROTOCOL, "file error"),
    ROW(CURLE_LDAP_CANNOT_BIND, HTTP_E_PROTOCOL, "LDAP error"),
    ROW(CURLE_LDAP_SEARCH_FAILED, HTTP_E_PROTOCOL, "LDAP error"),
    ROW(CURLE_TFTP_NOTFOUND, HTTP_E_PROTOCOL, "TFTP error"),
    ROW(CURLE_TFTP_PERM, HTTP_E_PROTOCOL, "TFTP error"),
    ROW(CURLE_REMOTE_DISK_FULL, HTTP_E_PROTOCOL, "remote disk full"),
    ROW(CURLE_TFTP_ILLEGAL, HTTP_E_PROTOCOL, "TFTP error"),
    ROW(CURLE_TFTP_UNKNOWNID, HTTP_E_PROTOCOL, "TFTP error"),
    ROW(CURLE_REMOTE_FILE_EXISTS, HTTP_E_PROTOCOL, "remote file exists"),
    ROW(CURLE_TFTP_NOSUCHUSER, HTTP_E_PROTOCOL, "TFTP error"),
    ROW(CURLE_REMOTE_FILE_NOT_FOUND, HTTP_E_PROTOCOL, "remote file not found"),
    ROW(CURLE_SSH, HTTP_E_PROTOCOL, "SSH error"),
    ROW(CURLE_RTSP_CSEQ_ERROR, HTTP_E_PROTOCOL, "RTSP error"),
    ROW(CURLE_RTSP_SESSION_ERROR, HTTP_E_PROTOCOL, "RTSP error"),
};

int http_curl_error_known(CURLcode rc)
{
    return rc > CURLE_OK && rc < CURL_LAST && table[rc].what != NULL;
}

http_curl_error_t http_curl_error(CURLcode rc, int began)
{
    http_curl_error_t e = {HTTP_E_PROTOCOL, "curl error"};
    if (http_curl_error_known(rc)) e = table[rc];
    if (rc == CURLE_RECV_ERROR && began) {
        e.kind = HTTP_E_PROTOCOL;
        e.what = "the connection broke in the middle of the response";
    }
    return e;
}

const char *http_error_name(enum http_error e)
{
    static const char *const names[] = {
        "ok",        "invalid_url", "dns",       "connect", "tls",    "timeout",
        "too_large", "protocol",    "cancelled", "memory",  "denied", "resource",
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == HTTP_E_COUNT, "a name for each kind");
    return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "protocol";
}

static void vset_message(http_xfer_t *x, const char *fmt, va_list ap)
{
    char text[HTTP_MESSAGE_MAX];
    vsnprintf(text, sizeof(text), fmt, ap);
    free(x->message);
    x->message = strdup(text); /* NULL when out of memory: http_finish says so */
}

void http_set_message(http_xfer_t *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_message(x, fmt, ap);
    va_end(ap);
}

void http_fail(http_xfer_t *x, enum http_error e, const char *fmt, ...)
{
    va_list ap;
    x->error = e;
    va_start(ap, fmt);
    vset_message(x, fmt, ap);
    va_end(ap);
}

/* Our callbacks and checks say why first; the table speaks for the rest. */
void http_fail_curl(http_xfer_t *x, CURLcode rc)
{
    const char *detail = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
    if (x->denied[0] && rc == CURLE_COULDNT_CONNECT) {
        http_fail(x, HTTP_E_DENIED, "%s", x->denied);
        return;
    }
    /* Stopped by a callback of ours: it said why. */
    if (x->aborted == ABORT_DECODE || x->aborted == ABORT_BUDGET) return;
    if (x->aborted == ABORT_BODY || rc == CURLE_FILESIZE_EXCEEDED) {
        http_fail(x, HTTP_E_TOO_LARGE, "body larger than max_size (%zu bytes)", x->req->max_body);
        return;
    }
    if (x->aborted == ABORT_HEADER) {
        http_fail(x, HTTP_E_TOO_LARGE, "response headers too large");
        return;
    }
    if (x->aborted == ABORT_MEMORY) {
        http_fail(x, HTTP_E_MEMORY, "out of memory storing the response");
        return;
    }
    /* curl 7.88 reports a header line over its 100 KiB limit as out of memory. */
    if (rc == CURLE_OUT_OF_MEMORY && !x->headers_done && x->header_bytes) {
        http_fail(x, HTTP_E_TOO_LARGE, "a response header is over curl's 100 KiB limit");
        return;
    }
    if (x->sock_errno && rc == CURLE_COULDNT_CONNECT) {
        struct rlimit rl;
        if (x->sock_errno == ENFILE || getrlimit(RLIMIT_NOFILE, &rl) < 0)
            http_fail(x, HTTP_E_RESOURCE,
                      "too many open files in the system: no socket for the "
                      "connection");
        else
            http_fail(x, HTTP_E_RESOURCE,
                      "too many open files: the process's limit of %llu is reached, no socket for "
                      "the connection (raise ulimit -n, or lower the concurrency)",
                      (unsigned long long)rl.rlim_cur);
        return;
    }
    http_curl_error_t e = http_curl_error(rc, x->header_bytes > 0);
    /* curl 7.88 reports broken chunked encoding as a receive error too. */
    if (rc == CURLE_RECV_ERROR && strstr(detail, "chunk")) e.what = "broken chunked encoding";
    http_fail(x, e.kind, "%s: %s", e.what, detail);
}
