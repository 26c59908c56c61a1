/* Unit tests of the fast paths of engine/url_fast.c: url_normalize, url_fingerprint and
 * url_resolve_normalize / url_resolve_base must give, to the byte, what the
 * curl-based paths give. Checked on the URLs of tests/spec/url_spec.lua, on the
 * inputs and bases of the WHATWG URL conformance cases (tests/data/urltestdata.json), and on a few
 * hundred thousand random URLs and references from a grammar biased to the edge
 * cases (case, ports, dots, escapes, odd bytes, empty queries, fragments, long and
 * numeric hosts), and on random one- and two-byte mutations of normalized URLs.
 *
 * test_url_fast [N]   N random cases of each kind (default 200000)
 * test_url_fast --bench   ns per call, curl path against fast path */
#include "html.h"
#include "test.h"
#include "url.h"
#include "url_internal.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct sbuf {
    char s[4096 * 4];
    size_t n;
} sbuf_t;

static void put(sbuf_t *b, const char *s)
{
    size_t l = strlen(s);
    if (b->n + l >= sizeof(b->s)) return;
    memcpy(b->s + b->n, s, l + 1);
    b->n += l;
}

static void putc_(sbuf_t *b, char c)
{
    if (b->n + 1 >= sizeof(b->s)) return;
    b->s[b->n++] = c;
    b->s[b->n] = '\0';
}

static const char ODD[] =
    "abcXYZ019.-_~!$&'()*+,;=:@/?#[]%\\\"<>^`{|} \t\n\x01\x7f\x80\xc3\xa9\xff";

static void put_random(sbuf_t *b, int max)
{
    int k = 1 + (int)rnd((uint32_t)max);
    for (int i = 0; i < k; i++)
        putc_(b, ODD[rnd(sizeof(ODD) - 1)]);
}

static void gen_host(sbuf_t *b)
{
    static const char *const special[] = {
        "[::1]",
        "[2001:DB8::1]",
        "[2001:db8::1]",
        "127.0.0.1",
        "1.2.3",
        "0x7f.1",
        "010.0.0.1",
        "4294967295",
        "256.1.1.1",
        "1.2.3.4.",
        "01.2.3.4",
        "1.2.3.4.5",
        "0",
        "1.2.3.04",
        "B\xc3\xbc"
        "cher.example",
        "a%41b.com",
        "xn--bcher-kva.example",
        "localhost",
        "",
        "a..b",
        ".a",
        "a.",
        "-a.com",
        "a-.com",
        "a_b.com",
        "0.0.0.0",
        "255.255.255.255",
        "1.2.3.4",
        "10.0.0.1",
        "0x1.com",
        "1e.com",
        "1.com",
        "a.1",
        "1.a",
        "09.1.1.1",
        "0xff.0xff.0xff.0xff",
        "1.2.3.256",
        "999.1.1.1",
        "a b",
        "a|b",
        "a%zzb",
        "%2e",
        "ex%2Eample.com",
        "EXAMPLE.COM",
        "exa\tmple.org",
        "a:b",
    };
    static const char *const labels[] = {
        "example",  "www",   "a",   "b",   "com",    "org", "co", "uk",  "EXAMPLE", "Www",
        "x-y",      "1",     "12",  "255", "0",      "0x1", "9a", "a9",  "-",       "_",
        "xn--p1ai", "a-b-c", "007", "x_y", "ab--cd", "0x",  "08", "1a2",
    };
    uint32_t k = rnd(100);
    if (k < 10) {
        put(b, PICK(special));
        return;
    }
    if (k < 13) { /* long */
        int nl = 1 + (int)rnd(6);
        for (int i = 0; i < nl; i++) {
            if (i) putc_(b, '.');
            int len = 1 + (int)rnd(i == 0 && rnd(2) ? 140 : 66);
            for (int j = 0; j < len; j++)
                putc_(b, "abcdefghijklmnopqrstuvwxyz0123456789-"[rnd(j ? 37 : 26)]);
        }
        return;
    }
    int nl = 1 + (int)rnd(4);
    for (int i = 0; i < nl; i++) {
        if (i) putc_(b, '.');
        if (rnd(40) == 0) continue; /* an empty label */
        if (rnd(25) == 0)
            put_random(b, 3);
        else
            put(b, PICK(labels));
    }
    if (rnd(30) == 0) putc_(b, '.');
}

static const char *const SEGS[] = {
    "",       ".",          "..",
    "a",      "b",          "c",
    "A",      "index.html", "%2e",
    "%2E",    "%2e%2E",     ".%2e",
    "%2F",    "%2f",        "%41",
    "%7e",    "%7E",        "%20",
    "%C3%A9", "%c3%a9",     "%zz",
    "%",      "%4",         "%4g",
    "~u",     "a;b=c",      ";jsessionid=1",
    "a:b",    "@",          "!$&'()*+,=",
    "[x]",    "a b",        "\xc3\xa9",
    "\x01",   "\t",         "\"",
    "<>",     "{}",         "|",
    "^",      "`",          "...",
    ".a",     "a.",         "-_~",
    "%00",    "%2D",        "%5B",
    "x",      "y",          "page2.html",
    "g;x=1",  "%3A",        "%3a",
    "%2",     "%25",        "%%41",
    "..%2F",  "a%2Fb",      ".;x",
    "..;y",   "%FF",        "%ff",
    "%7F",    "%5C",        "%2E.",
    "%2E%2e",
};

static const char *const PARAMS[] = {
    "a=1",          "b=",          "",      "=",      "%7e",      "%7E=1",
    "%20",          "c=%2F",       "x=/./", "y=../",  "q=a+b",    "[]=1",
    "a[]=2",        "?",           "/",     "%zz",    "\xc3\xa9", "a b",
    "utm_source=x", "%3D",         "%2e",   ".",      "..",       "'",
    "\\",           "|",           "id=42", "page=3", "s=%C3%A9", "s=%c3%a9",
    "k=v;w",        "x=:@!$'()*,", "%",     "%4",     "z=%25",    "%2B",
    "a=%41",        "#",
};

static const char *const FRAGS[] = {
    "", "top", "a#b", "a b", "%zz", "\xc3\xa9", "/./x", "x?y", "\\", "\"", "s", "%41", "<x>",
};

static void gen_path(sbuf_t *b, int first_slash)
{
    int ns = (int)rnd(6);
    for (int i = 0; i < ns; i++) {
        if (i || first_slash) putc_(b, rnd(30) ? '/' : '\\');
        if (rnd(12) == 0)
            put_random(b, 4);
        else
            put(b, PICK(SEGS));
    }
}

static void gen_query(sbuf_t *b)
{
    putc_(b, '?');
    int np = (int)rnd(5);
    for (int i = 0; i < np; i++) {
        if (i) putc_(b, '&');
        if (rnd(12) == 0)
            put_random(b, 4);
        else
            put(b, PICK(PARAMS));
    }
}

static void gen_frag(sbuf_t *b)
{
    putc_(b, '#');
    if (rnd(10) == 0)
        put_random(b, 4);
    else
        put(b, PICK(FRAGS));
}

static void gen_tail(sbuf_t *b)
{
    if (rnd(100) < 35) gen_query(b);
    if (rnd(100) < 15) gen_frag(b);
    if (rnd(60) == 0) put(b, rnd(2) ? " " : "\n");
}

/* An absolute URL, mostly http(s). */
static void gen_abs(sbuf_t *b)
{
    static const char *const schemes[] = {"http", "https", "http", "https", "http", "https",
                                          "http", "https", "HTTP", "hTTps", "ftp",  "htt"};
    static const char *const seps[] = {"://", "://", "://", "://", "://", "://",  "://",
                                       "://", "://", "://", ":/",  ":",   ":///", ":\\\\"};
    static const char *const users[] = {"u@", "u:p@", "@", "U%40x:p@", ":@", "u:@"};
    static const char *const ports[] = {":80",    ":443",  ":8080",   ":0",     ":080", ":65535",
                                        ":65536", ":",     ":8443",   ":1",     ":00",  ":99999",
                                        ":8o",    ":0443", ":123456", ":08080", ":9"};
    if (rnd(60) == 0) put(b, rnd(2) ? " " : "\t");
    put(b, PICK(schemes));
    put(b, PICK(seps));
    if (rnd(40) == 0) put(b, PICK(users));
    gen_host(b);
    if (rnd(100) < 15) put(b, PICK(ports));
    if (rnd(100) < 92) gen_path(b, 1);
    gen_tail(b);
}

/* A reference, as found in href attributes. */
static void gen_ref(sbuf_t *b)
{
    static const char *const schemed[] = {
        "http:g",  "https:g", "g:h",       "mailto:x@y", "javascript:void(0)",
        "HTTP:g",  "a:b/c",   "http:",     "https:/g",   "http:/g",
        "http:?x", "http:#f", "ftp://f/x", "data:x",     "h:/x",
        "./a:b",   "a/b:c"};
    uint32_t k = rnd(100);
    if (k < 15) {
        gen_abs(b);
    } else if (k < 20) {
        put(b, "//");
        gen_host(b);
        if (rnd(5) == 0) put(b, ":8080");
        gen_path(b, 1);
        gen_tail(b);
    } else if (k < 25) {
        gen_query(b);
        if (rnd(4) == 0) gen_frag(b);
    } else if (k < 30) {
        if (rnd(2)) gen_frag(b);
    } else if (k < 50) {
        gen_path(b, 1);
        if (b->n == 0) putc_(b, '/');
        gen_tail(b);
    } else if (k < 92) {
        gen_path(b, 0);
        gen_tail(b);
    } else {
        put(b, PICK(schemed));
        if (rnd(2)) gen_path(b, 1);
        if (rnd(3) == 0) gen_tail(b);
    }
}

/* The plain URLs and references most pages have, with dots, escapes and ports
 * here and there: mostly on the fast path, and near its edges. */
static const char *const PLAIN_LABELS[] = {"www",  "example", "com", "org", "a",   "b2",     "x-y",
                                           "shop", "co",      "uk",  "de",  "cdn", "static", "api"};
static const char *const PLAIN_SEGS[] = {
    "",      "a",     "b",        "index.html", "blog", "2024",      "page-2", ".",
    "..",    "%2F",   "%C3%A9",   "%20",        "%41",  "%7e",       "a;v=1",  "x:y",
    "@me",   "~user", "it's",     "(1)",        "a+b",  "a,b",       "a=b",    "a!",
    "a*",    "a$",    "...",      ".a",         "a.",   "%2E",       "%2e",    "%25",
    "%3A%3", "%3a",   "products", "item_7",     "Caps", "%E2%82%AC", "%FF",    "a&b",
};
static const char *const SAFE_SEGS[] = {"a",   "b",      "index.html", "blog", "2024",  "page-2",
                                        "%2F", "%C3%A9", "item_7",     "x:y",  "a;v=1", ""};
static const char *const PLAIN_PARAMS[] = {
    "a=1",   "b=2",  "page=3", "q=a+b", "q=%20x", "id=%C3%A9",   "x=/./", "x=..", "s=%2F", "",
    "t=%41", "[]=1", "a[b]=2", "k=?",   "k=:@",   "u=http://x/", "e=",    "=",    "%7E",   "z=%25",
};

static void gen_plain(sbuf_t *b)
{
    static const char *const ports[] = {":8080",  ":80",    ":443", ":8443", ":1",
                                        ":65535", ":65536", ":080", ":0"};
    static const char *const hosts[] = {"127.0.0.1",       "10.0.0.255", "1.2.3",   "01.2.3.4",
                                        "255.255.255.255", "256.0.0.1",  "0.0.0.0", "1.2.3.4.5",
                                        "4.3.2.1.",        "123"};
    put(b, rnd(2) ? "http://" : "https://");
    if (rnd(20) == 0) {
        put(b, PICK(hosts));
    } else {
        int nl = 1 + (int)rnd(4);
        for (int i = 0; i < nl; i++) {
            if (i) putc_(b, '.');
            put(b, PICK(PLAIN_LABELS));
        }
    }
    if (rnd(8) == 0) put(b, PICK(ports));
    int ns = (int)rnd(6);
    if (ns == 0 && rnd(4)) ns = 1;
    for (int i = 0; i < ns; i++) {
        putc_(b, '/');
        put(b, rnd(3) ? PICK(SAFE_SEGS) : PICK(PLAIN_SEGS));
    }
    if (rnd(3) == 0) {
        putc_(b, '?');
        int np = (int)rnd(4);
        for (int i = 0; i < np; i++) {
            if (i) putc_(b, '&');
            put(b, PICK(PLAIN_PARAMS));
        }
    }
    if (rnd(6) == 0) {
        putc_(b, '#');
        put(b, PICK(FRAGS));
    }
}

static void gen_plain_ref(sbuf_t *b)
{
    uint32_t k = rnd(10);
    if (k == 0) {
        gen_plain(b);
        return;
    }
    if (k == 1) {
        put(b, "//");
        put(b, PICK(PLAIN_LABELS));
        put(b, ".com");
    } else if (k == 2) {
        put(b, rnd(2) ? "?" : "#");
    }
    int ns = (int)rnd(5);
    for (int i = 0; i < ns; i++) {
        if (i || k < 5) putc_(b, '/');
        put(b, PICK(PLAIN_SEGS));
    }
    if (rnd(4) == 0) {
        putc_(b, '?');
        put(b, PICK(PLAIN_PARAMS));
    }
    if (rnd(6) == 0) {
        putc_(b, '#');
        put(b, PICK(FRAGS));
    }
}

/* Change one or two bytes of s. */
static void mutate(sbuf_t *b)
{
    static const char pool[] = "aAzZ09.-_~%/?#:@[]\\ \t!$&'()*+,;=\"<>^`{|}\x01\x7f\x80\xff";
    int m = 1 + (int)rnd(2);
    for (int i = 0; i < m && b->n > 0; i++) {
        size_t pos = rnd((uint32_t)b->n);
        char c = pool[rnd(sizeof(pool) - 1)];
        uint32_t op = rnd(3);
        if (op == 0) {
            b->s[pos] = c;
        } else if (op == 1 && b->n + 2 < sizeof(b->s)) {
            memmove(b->s + pos + 1, b->s + pos, b->n - pos + 1);
            b->s[pos] = c;
            b->n++;
        } else {
            memmove(b->s + pos, b->s + pos + 1, b->n - pos);
            b->n--;
        }
    }
}

/* Cases from tests/spec/url_spec.lua ------------------------------------------- */

static const char *const SPEC_URLS[] = {
    "http://a/b/c/d;p?q",
    "https://h",
    "https://u:p@h:8443/x/z?q",
    "not a url",
    "/relative/path",
    "HTTP://EXAMPLE.org/A/b",
    "http://example.org:80/",
    "https://example.org:443/",
    "http://example.org:8080/",
    "https://example.org:80/",
    "http://example.org",
    "http://example.org?a=1",
    "http://example.org/a/./b/../../c",
    "http://example.org/a/%2e%2E/b",
    "http://example.org/a/%2E",
    "http://example.org/%7euser/%41-%5a%2f%3f?q=%2f%7E",
    "http://example.org/a b/\xc3\xa9?x=|",
    "http://example.org/\xc3\xa9",
    "http://example.org/%c3%a9",
    "http://B\xc3\xbc"
    "cher.example/",
    "http://B\xc3\x9c"
    "CHER.example/",
    "http://xn--bcher-kva.example",
    "http://xn--bcher-kva.example/",
    "http://example.org/p#top",
    "http://example.org/p?",
    "http://example.org/p?#f",
    "http://example.org/s?b=2&a=1&c=3&a=0",
    "http://example.org/p?utm_source=x&id=7&UTM_Medium=y&phpsessid=abc&sidebar=1&SID=2",
    "http://example.org/p?utm_campaign=z&sessionid=1",
    "http://example.org/shop/cart;jsessionid=0A1B?x=1",
    "http://example.org/a;v=1;sid=9/b",
    "http://example.org/?b=2&&utm_x=1&a=1&",
    "  http://example.org\\a\\b\n",
    "ftp://example.org/",
    "mailto:a@example.org",
    "javascript:x()",
    "//example.org/",
    "http://",
    "",
    "http://a:99999/",
    "http://[::1/",
    "http://a/",
    "HTTPS://User:Pa%40ss@Example.ORG:8443/a/b.html?x=1&y=%20#frag",
    "https://example.org/",
    "http://[2001:DB8::1]:8080/x",
    "http://[::1]/",
    "http://127.0.0.1:8000/",
    "ftp://anonymous@files.example/pub",
    "http://a:65536/",
    "mailto:x@y",
    "http://A.B.Example.CO.UK/x",
    "https://b\xc3\xbc"
    "cher.example/",
    "http://[::1]:8080/",
    "http://a.b.example.co.uk/",
    "https://www.example.com/",
    "https://someone.github.io/repo",
    "http://127.0.0.1:8080/",
    "http://localhost/",
    "http://co.uk/",
    "http://a.example.co.uk/",
    "https://b.c.example.co.uk/x",
    "http://example.co.uk/",
    "http://other.co.uk/",
    "https://alice.github.io/",
    "http://127.0.0.1:1/",
    "http://127.0.0.2/",
    "http://example.org/a/b?x=1",
    "HTTP://EXAMPLE.ORG:80/a/b?x=1",
    "http://example.org/a/./c/../b?x=1",
    "http://example.org/%61/b?x=%31",
    "http://example.org/a/b?x=1#section",
    "  http://example.org/a/b?x=1\n",
    "http://B\xc3\xbc"
    "cher.example",
    "http://example.org/a",
    "http://example.org/A",
    "http://example.org/?a=1",
    "http://example.org/?a=2",
    "http://example.org/?b=1&a=1",
    "http://example.org/?a=1&b=1",
    "http://www.example.org/",
    "http://example.org/a%2Fb",
    "http://example.org/a/b",
    "not an url",
    "http://example.org/a?x=1",
    "HTTP://Example.org:80/b/../a?x=%31#frag",
    "http://EXAMPLE.org/a?x=1",
    "http://example.org/a?x=2",
    "http://example.org/page/500",
    "https://www.example.com:8443/a/b%20c/%C3%A9;v=1?q=a+b&x[]=1&y=%2F",
    "https://www.example.com:8443/a/b%20c/%C3%A9;v=1?q=a+b&x[]=1&y=%2F#frag",
    "http://127.0.0.1/x",
    "http://a/.../c",
    "http://9/",
    "http://1.2.3/",
    "http://010.0.0.1/",
    "http://a:80/x",
    "https://a:443/x",
    "http://a:08080/x",
    "http://a/x?",
    "http://a/x?#f",
    "http://a",
    "http://a?x",
    "http://a/%7e",
    "http://a/%c3%a9",
    "http://a/b/./c",
    "http://a/b/../c",
    "http://a/b/.",
    "http://A.com/x",
    "http://a/x y",
    "http://a/x#y z",
    "https://www.example.com/blog/2024/post?id=3",
    "https://example.org/a%20b?x=1",
    "HTTPS://Example.org:443/./a%20b?x=1#f",
    "https://example.org/a%20b?x=1#f",
};

static const char *const SPEC_REFS[] = {
    "g:h",
    "g",
    "./g",
    "g/",
    "/g",
    "//g",
    "?y",
    "g?y",
    "#s",
    "g#s",
    "g?y#s",
    ";x",
    "g;x",
    "g;x?y#s",
    "",
    ".",
    "./",
    "..",
    "../",
    "../g",
    "../..",
    "../../",
    "../../g",
    "../../../g",
    "../../../../g",
    "/./g",
    "/../g",
    "g.",
    ".g",
    "g..",
    "..g",
    "./../g",
    "./g/.",
    "././g",
    "./?y",
    "./#s",
    "./.",
    "./..",
    ".//g",
    "g/./h",
    "g/../h",
    "g;x=1/./y",
    "g;x=1/../y",
    "g?y/./x",
    "g?y/../x",
    "g#s/./x",
    "g#s/../x",
    "http:g",
    "..//x",
    ".//x",
    "  g \t\n",
    "\1\31 g\31",
    "g\th\n?x=\r\n1",
    "ht\ntp://exa\tmple.org/x",
    "g\\h?a\\b",
    "\\\\g\\x",
    "https:\\\\h\\p\\q",
    "a b?c d#e f",
    "\xc3\xbc?\xc3\xbc",
    "\"<>`{}",
    "g#s#t",
    "%7e%zz",
    "https:g",
    "https:/g",
    "HTTP://Example.ORG/A",
    "//B\xc3\xbc"
    "cher.example/x",
    "MAILTO:Someone@Example.org",
    "javascript:void(0)",
    "ftp://files.example/a/../b",
    "y",
    "http://a b/",
    "../x/./y",
    "?q=1",
    "#top",
    "//cdn.example.org/s.css",
    "/a/b/..",
    "mailto:x@y",
    "ftp://f/x",
    "HTTP://Example.ORG:80/%7e",
    "g?",
    "https://x.example/p#f",
    "g h",
    /* A site written in directories (bench_site.py --shape tree): dot segments first,
     * then a plain path, maybe a fragment. */
    "../../d1/d0/123.html#s2",
    "./123.html#s5",
    "../a:b",
    "./../../a:b",
    "../../../../../../../../x.html",
    "../a.html#f g",
    "../a.html#",
    ".././g",
    "../.g",
    "../%7e/g",
};

/* Checks ------------------------------------------------------------------------ */

static const char *const STRIP[] = {"utm_*", "sessionid", "PHPSESSID", "jsessionid", "sid", NULL};
static const url_norm_opts_t OPTS[] = {
    {0, NULL, 0}, {0, NULL, 1}, {1, NULL, 0}, {0, STRIP, 0}, {1, STRIP, 1},
};
#define NOPTS (sizeof(OPTS) / sizeof(OPTS[0]))

static long mismatches, checked, fast_hits;

static int same(int e1, const char *a, int e2, const char *b)
{
    if (e1 != e2) return 0;
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static void report(const char *what, const char *base, const char *in, int ef, const char *f,
                   int es, const char *s)
{
    if (++mismatches > 30) return;
    fprintf(stderr,
            "MISMATCH %s: base [%.200s] input [%.200s]\n  fast %d [%.200s]\n  slow %d [%.200s]\n",
            what, base ? base : "(none)", in, ef, f ? f : "NULL", es, s ? s : "NULL");
}

/* url_normalize against url_normalize_slow under every option set, and
 * url_fingerprint against the hash of the slow result. */
/* url_host_port_fast against url_host and curl's port, where it answers. */
static void check_host_port(const char *in)
{
    const char *h;
    size_t hl;
    int port;
    if (!url_host_port_fast(in, strlen(in), &h, &hl, &port)) return;
    checked++;
    char *want = NULL, *p = NULL;
    CURLU *u = curl_url();
    int ok = u && url_host(in, &want) == URL_OK && strlen(want) == hl && memcmp(want, h, hl) == 0 &&
             curl_url_set(u, CURLUPART_URL, in, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OK && p &&
             atoi(p) == port;
    if (!ok) {
        mismatches++;
        fprintf(stderr, "host_port: %s -> %.*s:%d (url_host %s, curl port %s)\n", in, (int)hl, h,
                port, want ? want : "-", p ? p : "-");
    }
    curl_free(p);
    curl_url_cleanup(u);
    free(want);
}

static void check_normalize(const char *in)
{
    for (size_t k = 0; k < NOPTS; k++) {
        const url_norm_opts_t *o = k ? &OPTS[k] : NULL;
        char *f = NULL, *s = NULL;
        int ef = url_normalize(in, o, &f), es = url_normalize_slow(in, o, &s);
        checked++;
        if (!same(ef, f, es, s)) report("normalize", NULL, in, ef, f, es, s);
        if (k == 0) {
            size_t len = url_normal_form(in, strlen(in));
            fast_hits += len != 0;
            uint64_t fp = es == URL_OK ? url_hash(s, strlen(s)) : url_hash(in, strlen(in));
            if (url_fingerprint(in) != fp) report("fingerprint", NULL, in, ef, f, es, s);
            /* What the fast test accepts, the slow path gives back as it is. */
            if (len && (es != URL_OK || strlen(s) != len || memcmp(s, in, len) != 0))
                report("normal_form", NULL, in, ef, f, es, s);
            check_host_port(in);
        }
        free(f);
        free(s);
    }
}

static int http_url(const char *u)
{
    return strncasecmp(u, "http://", 7) == 0 || strncasecmp(u, "https://", 8) == 0;
}

/* What engine/html.c did for each link before url_resolve_base: url_resolve, then
 * url_normalize of an http(s) result. *err: url_resolve's error. */
static char *two_step(const char *base, const char *ref, int *err)
{
    char *abs = NULL, *norm = NULL;
    *err = url_resolve(base, ref, &abs);
    if (*err != URL_OK) return NULL;
    if (http_url(abs)) url_normalize_slow(abs, NULL, &norm);
    free(abs);
    return norm;
}

/* Where url_resolve_normalize differs from url_resolve then url_normalize, as html.c
 * did before: url_resolve counts the fragment in URL_MAX_LENGTH where
 * url_resolve_normalize, which drops it, does not; and a host curl percent-decodes
 * to what it reads as an IPv4 address ("//%39") is rewritten ("0.0.0.9") only when
 * parsed a second time. The fast path may differ only in the first way. */
static long slow_differs;

/* url_resolve_normalize and url_resolve_base against url_resolve_normalize_slow
 * (base NULL: ref against itself, as html.c does without a base). */
static void check_resolve(const char *base, const char *ref)
{
    url_base_t b;
    url_base_prepare(base, &b);
    for (size_t k = 0; k < 3; k++) {
        const url_norm_opts_t *o = k ? &OPTS[k] : NULL;
        const char *sb = base ? base : ref;
        char *f = NULL, *g = NULL, *s = NULL, *q = NULL;
        int es = url_resolve_normalize_slow(sb, ref, o, &s);
        int ef = url_resolve_base(&b, ref, o, &f);
        checked++;
        if (!same(ef, f, es, s)) report("resolve_base", base, ref, ef, f, es, s);
        if (base) {
            int eg = url_resolve_normalize(base, ref, o, &g);
            if (!same(eg, g, es, s)) report("resolve_normalize", base, ref, eg, g, es, s);
        }
        int eq = url_resolve_fast(&b, ref, o, &q);
        if (k == 0) fast_hits += eq >= 0;
        if (eq >= 0 && !same(eq, q, es, s)) report("resolve_fast", base, ref, eq, q, es, s);
        if (k == 0) { /* url_resolve_into, which html.c calls */
            char buf[URL_MAX_LENGTH + 1];
            size_t len = 0;
            int normal = 0, ei = url_resolve_into(&b, ref, buf, &len, &normal);
            if (!same(ei, ei == URL_OK ? buf : NULL, es, s))
                report("resolve_into", base, ref, ei, ei == URL_OK ? buf : NULL, es, s);
            else if (ei == URL_OK &&
                     (len != strlen(buf) || (normal && url_normal_form(buf, len) != len)))
                report("resolve_into length or form", base, ref, ei, buf, es, s);
        }
        if (k == 0) { /* html.c's two steps, before url_resolve_base */
            int et;
            char *t = two_step(sb, ref, &et);
            int known = et == URL_E_TOO_LONG && strchr(ref, '#'); /* the fragment counted */
            if (!same(0, t, 0, f)) {
                if (eq >= 0 && !known)
                    report("two_step", base, ref, ef, f, 0, t);
                else if (++slow_differs <= 5)
                    fprintf(stderr,
                            "note: url_resolve_normalize and two steps differ: base [%.60s] ref "
                            "[%.60s]: [%.60s] against [%.60s]\n",
                            base ? base : "(none)", ref, f ? f : "NULL", t ? t : "NULL");
            }
            free(t);
        }
        free(f);
        free(g);
        free(s);
        free(q);
    }
}

static void test_spec_cases(void)
{
    long before = mismatches;
    mismatches = checked = fast_hits = slow_differs = 0;
    size_t nu = sizeof(SPEC_URLS) / sizeof(SPEC_URLS[0]);
    size_t nr = sizeof(SPEC_REFS) / sizeof(SPEC_REFS[0]);
    for (size_t i = 0; i < nu; i++)
        check_normalize(SPEC_URLS[i]);
    for (size_t i = 0; i < nr; i++)
        check_normalize(SPEC_REFS[i]);
    for (size_t i = 0; i < nu; i++) {
        check_resolve(SPEC_URLS[i], SPEC_URLS[(i + 1) % nu]);
        check_resolve(NULL, SPEC_URLS[i]);
        for (size_t j = 0; j < nr; j++)
            check_resolve(SPEC_URLS[i], SPEC_REFS[j]);
    }
    /* Too long, and just short enough. */
    static char longu[URL_MAX_LENGTH + 16];
    for (size_t n = URL_MAX_LENGTH - 2; n <= URL_MAX_LENGTH + 2; n++) {
        memcpy(longu, "http://a/", 9);
        memset(longu + 9, 'x', n - 9);
        longu[n] = '\0';
        check_normalize(longu);
        check_resolve("http://a/b", longu);
        check_resolve("http://a/b", longu + 8);
        longu[n - 2] = '#';
        check_normalize(longu);
        check_resolve("http://a/b", longu + 8);
    }
    printf("spec cases: %ld checks, %ld fast, %ld mismatches\n", checked, fast_hits, mismatches);
    printf("(url_resolve_normalize against url_resolve + url_normalize: %ld differences)\n",
           slow_differs);
    CHECK(mismatches == 0);
    mismatches += before;
}

/* The WHATWG URL Standard's conformance cases (tests/data/urltestdata.json) ------ */

/* The data file, found beside this source (CMake compiles it by its full path). */
static FILE *open_whatwg(void)
{
    char path[4096];
    const char *slash = strrchr(__FILE__, '/');
    int dir = slash ? (int)(slash - __FILE__) : 0;
    snprintf(path, sizeof(path), "%.*s%s../data/urltestdata.json", dir, __FILE__, slash ? "/" : "");
    return fopen(path, "rb");
}

static void put_utf8(sbuf_t *b, unsigned cp)
{
    if (cp == 0) { /* the C functions stop at a NUL: lc.url writes it so */
        put(b, "%00");
    } else if (cp < 0x80) {
        putc_(b, (char)cp);
    } else if (cp < 0x800) {
        putc_(b, (char)(0xc0 | cp >> 6));
        putc_(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        putc_(b, (char)(0xe0 | cp >> 12));
        putc_(b, (char)(0x80 | (cp >> 6 & 0x3f)));
        putc_(b, (char)(0x80 | (cp & 0x3f)));
    } else {
        putc_(b, (char)(0xf0 | cp >> 18));
        putc_(b, (char)(0x80 | (cp >> 12 & 0x3f)));
        putc_(b, (char)(0x80 | (cp >> 6 & 0x3f)));
        putc_(b, (char)(0x80 | (cp & 0x3f)));
    }
}

static unsigned hex4(const char *p)
{
    char h[5] = {p[0], p[1], p[2], p[3], 0};
    return (unsigned)strtoul(h, NULL, 16);
}

/* The JSON string that starts at *p (its opening quote) into b; *p moves past it. */
static void json_string(const char **p, sbuf_t *b)
{
    const char *s = *p + 1;
    b->n = 0;
    b->s[0] = '\0';
    while (*s && *s != '"') {
        if (*s != '\\') {
            putc_(b, *s++);
            continue;
        }
        s++;
        switch (*s) {
        case 'b':
            putc_(b, '\b');
            break;
        case 'f':
            putc_(b, '\f');
            break;
        case 'n':
            putc_(b, '\n');
            break;
        case 'r':
            putc_(b, '\r');
            break;
        case 't':
            putc_(b, '\t');
            break;
        case 'u': {
            unsigned cp = hex4(s + 1);
            s += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && s[1] == '\\' && s[2] == 'u') {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4(s + 3) - 0xdc00);
                s += 6;
            }
            put_utf8(b, cp);
            break;
        }
        default:
            putc_(b, *s); /* " \ / */
        }
        s++;
    }
    *p = *s ? s + 1 : s;
}

/* Each case's input against its base (or none), against fixed bases, and on its
 * own; the base and the expected href normalized too. Returns the number of cases. */
static long whatwg_cases(const char *text)
{
    static const char *const bases[] = {"http://example.org/foo/bar", "https://a.b/c/d?e=1"};
    static sbuf_t key, input, base, href;
    long n = 0;
    int have_input = 0, have_base = 0;
    for (const char *p = text; *p;) {
        if (*p == '}') {
            if (have_input) {
                n++;
                check_normalize(input.s);
                check_resolve(have_base ? base.s : NULL, input.s);
                check_resolve(NULL, input.s);
                for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
                    check_resolve(bases[i], input.s);
                if (have_base) check_normalize(base.s);
                if (href.n) check_normalize(href.s);
            }
            have_input = have_base = 0;
            href.n = 0;
            p++;
        } else if (*p == '"') {
            json_string(&p, &key);
            while (*p == ' ' || *p == '\n')
                p++;
            if (*p != ':') continue;
            for (p++; *p == ' ' || *p == '\n'; p++) {
            }
            sbuf_t *v = strcmp(key.s, "input") == 0  ? &input
                        : strcmp(key.s, "base") == 0 ? &base
                        : strcmp(key.s, "href") == 0 ? &href
                                                     : NULL;
            if (v && *p == '"') {
                json_string(&p, v);
                have_input |= v == &input;
                have_base |= v == &base;
            }
        } else {
            p++;
        }
    }
    return n;
}

static void test_whatwg_cases(void)
{
    long before = mismatches;
    mismatches = checked = fast_hits = slow_differs = 0;
    FILE *f = open_whatwg();
    CHECK(f != NULL);
    if (!f) return;
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    long n = whatwg_cases(text);
    printf("WHATWG cases: %ld, %ld checks, %ld fast, %ld mismatches\n", n, checked, fast_hits,
           mismatches);
    CHECK(n > 500);
    CHECK(mismatches == 0);
    mismatches += before;
}

static long n_random = 200000;

static void test_random_normalize(void)
{
    long before = mismatches;
    mismatches = checked = fast_hits = slow_differs = 0;
    for (long i = 0; i < n_random; i++) {
        sbuf_t b;
        b.n = 0;
        b.s[0] = '\0';
        if (rnd(2)) {
            gen_plain(&b);
            if (rnd(3) == 0) mutate(&b);
            check_normalize(b.s);
            continue;
        }
        gen_abs(&b);
        uint32_t k = rnd(10);
        if (k < 6) { /* its normalized form, maybe mutated */
            char *o = NULL;
            if (url_normalize_slow(b.s, NULL, &o) == URL_OK) {
                b.n = 0;
                put(&b, o);
                if (k < 2) gen_frag(&b);
                if (k >= 3) mutate(&b);
            }
            free(o);
        } else if (k < 8) {
            mutate(&b);
        }
        check_normalize(b.s);
    }
    printf("random normalize: %ld URLs (%ld on the fast path), %ld checks, %ld mismatches\n",
           n_random, fast_hits, checked, mismatches);
    CHECK(mismatches == 0);
    mismatches += before;
}

static void test_random_resolve(void)
{
    static const char *const bases[] = {
        "http://a/b/c/d;p?q",      "https://h/",           "https://u:p@h:8443/x/z?q",
        "http://example.org/a/b/", "http://a/b/c/d;p?q#f", "https://h:8443/x/",
        "http://a/b/c/d;p?q#",     "https://h/?",          "http://127.0.0.1/a/b",
    };
    long before = mismatches;
    mismatches = checked = fast_hits = slow_differs = 0;
    for (long i = 0; i < n_random; i++) {
        sbuf_t b, r;
        b.n = r.n = 0;
        b.s[0] = r.s[0] = '\0';
        char *base = NULL;
        uint32_t k = rnd(20);
        if (k < 4) {
            base = strdup(PICK(bases));
        } else if (k == 4) {
            base = NULL;
        } else {
            if (k < 13)
                gen_plain(&b);
            else
                gen_abs(&b);
            if (k < 17) url_normalize_slow(b.s, NULL, &base);
            if (!base) base = strdup(b.s);
        }
        if (rnd(2))
            gen_plain_ref(&r);
        else
            gen_ref(&r);
        if (rnd(8) == 0) mutate(&r);
        check_resolve(base, r.s);
        free(base);
    }
    printf("random resolve: %ld pairs (%ld on the fast path), %ld checks, %ld mismatches\n",
           n_random, fast_hits, checked, mismatches);
    printf("(url_resolve_normalize against url_resolve + url_normalize: %ld differences)\n",
           slow_differs);
    CHECK(mismatches == 0);
    mismatches += before;
}

/* Benchmark ---------------------------------------------------------------------- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The links of a typical page: site-relative and relative paths, queries, fragments,
 * absolute and scheme-relative URLs, a few that are not http(s). */
static const char *const PAGE_REFS[] = {
    "/",
    "/about",
    "/about/team",
    "/blog/",
    "/blog/2024/03/a-long-article-title-with-words",
    "/products?category=shoes&page=2",
    "/search?q=red+shoes&sort=price",
    "page2.html",
    "page3.html",
    "../index.html",
    "./sibling",
    "details/item-1234.html",
    "details/item-1235.html",
    "details/item-1236.html",
    "?page=3",
    "#top",
    "https://www.example.com/contact",
    "https://cdn.example.net/assets/app.css",
    "https://twitter.com/example",
    "https://www.facebook.com/example",
    "//static.example.com/img/logo.png",
    "/category/men/shoes/running",
    "/category/women/shoes/running",
    "/cart",
    "/account/login?next=/account",
    "/help/faq#shipping",
    "/help/returns",
    "/terms-of-service",
    "/privacy-policy",
    "/sitemap.xml",
    "/blog/tag/news",
    "/blog/tag/releases",
    "/blog/page/2/",
    "/blog/page/3/",
    "https://www.example.com/Blog/Post%20Title",
    "mailto:info@example.com",
    "javascript:void(0)",
    "/news/2024-03-01/headline-number-one",
    "/news/2024-03-02/headline-number-two",
    "/de/produkte",
};
#define NPAGE (sizeof(PAGE_REFS) / sizeof(PAGE_REFS[0]))
static const char PAGE_BASE[] = "https://www.example.com/blog/2024/03/some-article";

static volatile uint64_t sink;

typedef int (*norm_fn)(const char *, const url_norm_opts_t *, char **);
typedef int (*res_fn)(const char *, const char *, const url_norm_opts_t *, char **);

static double time_norm(norm_fn fn, const char *u, int iters)
{
    double t = now_ns();
    for (int i = 0; i < iters; i++) {
        char *o = NULL;
        fn(u, NULL, &o);
        sink += (uintptr_t)o;
        free(o);
    }
    return (now_ns() - t) / iters;
}

static double time_resolve(res_fn fn, int rounds)
{
    double t = now_ns();
    for (int i = 0; i < rounds; i++)
        for (size_t k = 0; k < NPAGE; k++) {
            char *o = NULL;
            fn(PAGE_BASE, PAGE_REFS[k], NULL, &o);
            sink += (uintptr_t)o;
            free(o);
        }
    return (now_ns() - t) / rounds / NPAGE;
}

static void bench(void)
{
    static const char *const urls[] = {
        "https://www.example.com/blog/2024/03/some-article-title?id=42&ref=home",
        "http://example.org/a/b/c.html",
        "https://www.example.com/Blog/Post%20Title#comments",
        "HTTP://Example.ORG:80/a/./b/../c?x=%7e#frag",
    };
    int iters = 200000;
    for (size_t k = 0; k < sizeof(urls) / sizeof(urls[0]); k++) {
        printf("url_normalize  %-72s curl %5.0f ns  fast %5.0f ns\n", urls[k],
               time_norm(url_normalize_slow, urls[k], iters),
               time_norm(url_normalize, urls[k], iters));
        double t = now_ns();
        for (int i = 0; i < iters; i++)
            sink += url_fingerprint(urls[k]);
        printf("url_fingerprint%-72s       %5.0f ns\n", "", (now_ns() - t) / iters);
    }
    int rounds = 5000;
    printf("url_resolve_normalize, %zu typical links: curl %.0f ns  fast %.0f ns per link\n", NPAGE,
           time_resolve(url_resolve_normalize_slow, rounds),
           time_resolve(url_resolve_normalize, rounds));
    url_base_t b;
    double t = now_ns();
    for (int i = 0; i < rounds; i++) {
        url_base_prepare(PAGE_BASE, &b);
        for (size_t k = 0; k < NPAGE; k++) {
            char *o = NULL;
            url_resolve_base(&b, PAGE_REFS[k], NULL, &o);
            sink += (uintptr_t)o;
            free(o);
        }
    }
    printf("url_resolve_base (base prepared once a page): %.0f ns per link\n",
           (now_ns() - t) / rounds / NPAGE);
    t = now_ns();
    for (int i = 0; i < rounds; i++)
        for (size_t k = 0; k < NPAGE; k++) {
            int err;
            char *o = two_step(PAGE_BASE, PAGE_REFS[k], &err);
            sink += (uintptr_t)o;
            free(o);
        }
    printf("url_resolve + url_normalize (html.c before): %.0f ns per link\n",
           (now_ns() - t) / rounds / NPAGE);

    /* A 15 KB page with those links, through html_links_body (SAX + resolution). */
    size_t cap = 1 << 16, n = 0;
    char *page = malloc(cap);
    if (!page) return;
    n += (size_t)snprintf(page + n, cap - n,
                          "<!doctype html><html><head><title>T</title></head><body>\n");
    for (size_t k = 0; k < NPAGE; k++)
        n += (size_t)snprintf(page + n, cap - n,
                              "<div class=\"item\"><p>Some filler text to pad the page out, "
                              "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed "
                              "do eiusmod tempor incididunt ut labore et dolore magna aliqua."
                              "</p><a href=\"%s\">link %zu</a></div>\n",
                              PAGE_REFS[k], k);
    while (n < 15000)
        n += (size_t)snprintf(page + n, cap - n,
                              "<p>more filler text, more filler text, more.</p>\n");
    n += (size_t)snprintf(page + n, cap - n, "</body></html>\n");
    rounds = 3000;
    size_t nl = 0;
    t = now_ns();
    for (int i = 0; i < rounds; i++) {
        html_links_t l;
        html_links_body(page, n, "utf-8", PAGE_BASE, 0, &l, NULL);
        nl = l.n;
        html_links_free(&l);
    }
    printf("html_links_body, %zu-byte page, %zu links out: %.1f us per page\n", n, nl,
           (now_ns() - t) / rounds / 1000);
    free(page);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    if (argc > 1) n_random = atol(argv[1]);
    if (argc > 2) rng_state ^= strtoull(argv[2], NULL, 0) * 0x9E3779B97F4A7C15u;
    RUN(test_spec_cases);
    RUN(test_whatwg_cases);
    RUN(test_random_normalize);
    RUN(test_random_resolve);
    return test_failures ? 1 : 0;
}
