-- Specification of lc.url and lc.seen: RFC 3986 resolution with browser
-- tolerances, normalization, fingerprints, hosts and sites, fingerprint sets.

local lc = require "luacrawl"
local url = lc.url

local BASE = "http://a/b/c/d;p?q"

describe("lc.url.resolve", function()
  -- RFC 3986 section 5.4.1. One difference from the RFC's text: for http an empty
  -- path and "/" are the same (section 6.2.3), and we write "/" ("//g").
  local normal = {
    { "g:h", "g:h" },
    { "g", "http://a/b/c/g" },
    { "./g", "http://a/b/c/g" },
    { "g/", "http://a/b/c/g/" },
    { "/g", "http://a/g" },
    { "//g", "http://g/" },
    { "?y", "http://a/b/c/d;p?y" },
    { "g?y", "http://a/b/c/g?y" },
    { "#s", "http://a/b/c/d;p?q#s" },
    { "g#s", "http://a/b/c/g#s" },
    { "g?y#s", "http://a/b/c/g?y#s" },
    { ";x", "http://a/b/c/;x" },
    { "g;x", "http://a/b/c/g;x" },
    { "g;x?y#s", "http://a/b/c/g;x?y#s" },
    { "", "http://a/b/c/d;p?q" },
    { ".", "http://a/b/c/" },
    { "./", "http://a/b/c/" },
    { "..", "http://a/b/" },
    { "../", "http://a/b/" },
    { "../g", "http://a/b/g" },
    { "../..", "http://a/" },
    { "../../", "http://a/" },
    { "../../g", "http://a/g" },
  }

  -- RFC 3986 section 5.4.2. "http:g" is resolved the backward-compatible way the
  -- RFC allows, as browsers do.
  local abnormal = {
    { "../../../g", "http://a/g" },
    { "../../../../g", "http://a/g" },
    { "/./g", "http://a/g" },
    { "/../g", "http://a/g" },
    { "g.", "http://a/b/c/g." },
    { ".g", "http://a/b/c/.g" },
    { "g..", "http://a/b/c/g.." },
    { "..g", "http://a/b/c/..g" },
    { "./../g", "http://a/b/g" },
    { "./g/.", "http://a/b/c/g/" },
    { "g/./h", "http://a/b/c/g/h" },
    { "g/../h", "http://a/b/c/h" },
    { "g;x=1/./y", "http://a/b/c/g;x=1/y" },
    { "g;x=1/../y", "http://a/b/c/y" },
    { "g?y/./x", "http://a/b/c/g?y/./x" },
    { "g?y/../x", "http://a/b/c/g?y/../x" },
    { "g#s/./x", "http://a/b/c/g#s/./x" },
    { "g#s/../x", "http://a/b/c/g#s/../x" },
    { "http:g", "http://a/b/c/g" },
  }

  for _, case in ipairs(normal) do
    it(("resolves the normal example %q"):format(case[1]), function()
      assert.equal(case[2], url.resolve(BASE, case[1]))
    end)
  end

  for _, case in ipairs(abnormal) do
    it(("resolves the abnormal example %q"):format(case[1]), function()
      assert.equal(case[2], url.resolve(BASE, case[1]))
    end)
  end

  it("keeps empty segments next to dot segments, as RFC 3986 says", function()
    assert.equal("http://a/b//x", url.resolve(BASE, "..//x"))
    assert.equal("http://a/b/c//x", url.resolve(BASE, ".//x"))
  end)

  describe("tolerates what browsers tolerate", function()
    it("trims surrounding spaces and control characters", function()
      assert.equal("http://a/b/c/g", url.resolve(BASE, "  g \t\n"))
      assert.equal("http://a/b/c/g", url.resolve(BASE, "\1\31 g\31"))
    end)

    it("percent-encodes a NUL byte where the standard does, refuses it in a host", function()
      assert.equal("http://a/b/c/g%00h", url.resolve(BASE, "g\0h"))
      assert.equal("http://a/b/c/g?%00#%00x", url.resolve(BASE, "\0g?\0#\0x\0"))
      assert.equal("http://x/?%00y", url.normalize("http://x/?\0y"))
      assert.equal("http://%00u@x/", url.resolve(BASE, "http://\0u@x/"))
      local u, err = url.resolve(BASE, "http://a\0b/")
      assert.is_nil(u)
      assert.equal("invalid_url", err.kind)
      assert.equal("missing or invalid host", err.message)
      assert.is_nil(url.normalize("http://x:8\0/"))
      assert.is_nil(url.host("http://a\0b/"))
    end)

    it("drops tabs and newlines anywhere", function()
      assert.equal("http://a/b/c/gh?x=1", url.resolve(BASE, "g\th\n?x=\r\n1"))
      assert.equal("http://example.org/x", url.resolve(BASE, "ht\ntp://exa\tmple.org/x"))
    end)

    it("reads backslashes as slashes in http(s) paths, not in the query", function()
      assert.equal("http://a/b/c/g/h?a%5Cb", url.resolve(BASE, "g\\h?a\\b"))
      assert.equal("http://g/x", url.resolve(BASE, "\\\\g\\x"))
      assert.equal("https://h/p/q", url.resolve(BASE, "https:\\\\h\\p\\q"))
    end)

    it("percent-encodes spaces, non-ASCII bytes and other bytes URIs forbid", function()
      assert.equal("http://a/b/c/a%20b?c%20d#e%20f", url.resolve(BASE, "a b?c d#e f"))
      assert.equal("http://a/b/c/%C3%BC?%C3%BC", url.resolve(BASE, "ü?ü"))
      assert.equal("http://a/b/c/%22%3C%3E%60%7B%7D", url.resolve(BASE, '"<>`{}'))
      assert.equal("http://a/b/c/g#s%23t", url.resolve(BASE, "g#s#t"))
    end)

    it("leaves valid and invalid escapes as they are", function()
      assert.equal("http://a/b/c/%7e%zz", url.resolve(BASE, "%7e%zz"))
    end)

    it("reads a different special scheme without slashes as an authority", function()
      assert.equal("https://g/", url.resolve(BASE, "https:g"))
      assert.equal("https://g/", url.resolve(BASE, "https:/g"))
    end)

    it("lower-cases the scheme and host, and converts IDN hosts to punycode", function()
      assert.equal("http://example.org/A", url.resolve(BASE, "HTTP://Example.ORG/A"))
      assert.equal("http://xn--bcher-kva.example/x", url.resolve(BASE, "//Bücher.example/x"))
    end)
  end)

  it("returns references of other schemes as written, scheme lower-cased", function()
    assert.equal("mailto:Someone@Example.org", url.resolve(BASE, "MAILTO:Someone@Example.org"))
    assert.equal("javascript:void(0)", url.resolve(BASE, "javascript:void(0)"))
    assert.equal("ftp://files.example/b", url.resolve(BASE, "ftp://files.example/a/../b"))
  end)

  it("resolves against https bases and bases with ports and credentials", function()
    assert.equal("https://u:p@h:8443/x/y", url.resolve("https://u:p@h:8443/x/z?q", "y"))
    assert.equal("https://h/", url.resolve("https://h", "."))
    assert.equal("https://h/g", url.resolve("https://h", "g"))
  end)

  it("fails with an invalid_url error on a base that is not an absolute URL", function()
    local u, err = url.resolve("not a url", "g")
    assert.is_nil(u)
    assert.equal("invalid_url", err.kind)
    assert.is_string(err.message)
    u, err = url.resolve("/relative/path", "g")
    assert.is_nil(u)
    assert.equal("invalid_url", err.kind)
  end)

  it("fails with a message on a reference with a bad host", function()
    local u, err = url.resolve(BASE, "http://a b/")
    assert.is_nil(u)
    assert.matches("host", err)
  end)

  it("fails on URLs longer than 8192 bytes", function()
    local u, err = url.resolve(BASE, "g" .. ("x"):rep(9000))
    assert.is_nil(u)
    assert.matches("too long", err)
  end)

  it("raises on arguments that are not strings", function()
    assert.has_error(function() url.resolve(nil, "g") end)
    assert.has_error(function() url.resolve(BASE) end)
    assert.has_error(function() url.resolve(BASE, 42) end)
  end)
end)

describe("lc.url.normalize", function()
  local function same(a, b)
    assert.equal(url.normalize(b), url.normalize(a))
  end

  it("lower-cases the scheme and host, not the path", function()
    assert.equal("http://example.org/A/b", url.normalize("HTTP://EXAMPLE.org/A/b"))
  end)

  it("drops default ports and keeps others", function()
    assert.equal("http://example.org/", url.normalize("http://example.org:80/"))
    assert.equal("https://example.org/", url.normalize("https://example.org:443/"))
    assert.equal("http://example.org:8080/", url.normalize("http://example.org:8080/"))
    assert.equal("https://example.org:80/", url.normalize("https://example.org:80/"))
  end)

  it("gives an empty path as /", function()
    assert.equal("http://example.org/", url.normalize("http://example.org"))
    assert.equal("http://example.org/?a=1", url.normalize("http://example.org?a=1"))
  end)

  it("removes dot segments, also escaped ones", function()
    assert.equal("http://example.org/c", url.normalize("http://example.org/a/./b/../../c"))
    assert.equal("http://example.org/b", url.normalize("http://example.org/a/%2e%2E/b"))
    assert.equal("http://example.org/a/", url.normalize("http://example.org/a/%2E"))
  end)

  it("upper-cases escapes and decodes unreserved characters", function()
    assert.equal("http://example.org/~user/A-Z%2F%3F?q=%2F~",
      url.normalize("http://example.org/%7euser/%41-%5a%2f%3f?q=%2f%7E"))
  end)

  it("encodes what must be encoded", function()
    assert.equal("http://example.org/a%20b/%C3%A9?x=%7C", url.normalize("http://example.org/a b/é?x=|"))
    same("http://example.org/é", "http://example.org/%c3%a9")
  end)

  it("converts IDN hosts to punycode", function()
    assert.equal("http://xn--bcher-kva.example/", url.normalize("http://Bücher.example/"))
    same("http://BÜCHER.example/", "http://xn--bcher-kva.example")
  end)

  it("drops the fragment unless asked to keep it", function()
    assert.equal("http://example.org/p", url.normalize("http://example.org/p#top"))
    assert.equal("http://example.org/p#top",
      url.normalize("http://example.org/p#top", { keep_fragment = true }))
  end)

  it("drops an empty query", function()
    assert.equal("http://example.org/p", url.normalize("http://example.org/p?"))
    assert.equal("http://example.org/p", url.normalize("http://example.org/p?#f"))
  end)

  it("keeps the order of query parameters unless asked to sort", function()
    local u = "http://example.org/s?b=2&a=1&c=3&a=0"
    assert.equal(u, url.normalize(u))
    assert.equal("http://example.org/s?a=1&a=0&b=2&c=3", url.normalize(u, { sort_query = true }))
  end)

  it("strips query parameters by name or prefix, in any case", function()
    local strip = { "utm_*", "sessionid", "PHPSESSID", "jsessionid", "sid" }
    assert.equal("http://example.org/p?id=7&sidebar=1",
      url.normalize("http://example.org/p?utm_source=x&id=7&UTM_Medium=y&phpsessid=abc&sidebar=1&SID=2",
        { strip = strip }))
    assert.equal("http://example.org/p",
      url.normalize("http://example.org/p?utm_campaign=z&sessionid=1", { strip = strip }))
  end)

  it("strips matching path parameters too", function()
    assert.equal("http://example.org/shop/cart?x=1",
      url.normalize("http://example.org/shop/cart;jsessionid=0A1B?x=1", { strip = { "jsessionid" } }))
    assert.equal("http://example.org/a;v=1/b",
      url.normalize("http://example.org/a;v=1;sid=9/b", { strip = { "sid" } }))
  end)

  it("sorts and strips together, dropping empty parameters", function()
    assert.equal("http://example.org/?a=1&b=2",
      url.normalize("http://example.org/?b=2&&utm_x=1&a=1&", { sort_query = true, strip = { "utm_*" } }))
  end)

  it("cleans its input the way resolve does", function()
    assert.equal("http://example.org/a/b", url.normalize("  http://example.org\\a\\b\n"))
  end)

  it("accepts http and https only", function()
    for _, u in ipairs({ "ftp://example.org/", "mailto:a@example.org", "javascript:x()", "//example.org/" }) do
      local n, err = url.normalize(u)
      assert.is_nil(n)
      assert.matches("scheme", err)
    end
  end)

  it("fails on bad input with an invalid_url error", function()
    for _, u in ipairs({ "http://", "not a url", "", "http://a:99999/", "http://[::1/" }) do
      local n, err = url.normalize(u)
      assert.is_nil(n, u)
      assert.equal("invalid_url", err.kind, u)
      assert.is_true(lc.is_error(err), u)
    end
    local n, err = url.normalize("http://example.org/" .. ("x"):rep(9000))
    assert.is_nil(n)
    assert.matches("too long", err.message)
  end)

  it("raises on a URL that is not a string, or options that are not a table", function()
    assert.has_error(function() url.normalize(nil) end)
    assert.has_error(function() url.normalize(12) end)
    assert.has_error(function() url.normalize("http://a/", "sort") end)
    assert.has_error(function() url.normalize("http://a/", { strip = "utm_*" }) end)
    assert.has_error(function() url.normalize("http://a/", { strip = { 1 } }) end)
  end)
end)

describe("lc.url.parse", function()
  it("splits a URL into its parts", function()
    local p = url.parse("HTTPS://User:Pa%40ss@Example.ORG:8443/a/b.html?x=1&y=%20#frag")
    assert.same({
      scheme = "https", user = "User", password = "Pa@ss", host = "example.org", port = 8443,
      path = "/a/b.html", query = "x=1&y=%20", fragment = "frag",
    }, p)
  end)

  it("gives the default port and / for an empty path", function()
    assert.same({ scheme = "http", host = "example.org", port = 80, path = "/" },
      url.parse("http://example.org"))
    assert.equal(443, url.parse("https://example.org/").port)
  end)

  it("gives IPv6 hosts without brackets", function()
    local p = url.parse("http://[2001:DB8::1]:8080/x")
    assert.equal("2001:db8::1", p.host)
    assert.equal(8080, p.port)
    assert.equal("::1", url.parse("http://[::1]/").host)
  end)

  it("parses IPv4 hosts", function()
    assert.equal("127.0.0.1", url.parse("http://127.0.0.1:8000/").host)
  end)

  it("parses a user without a password", function()
    local p = url.parse("ftp://anonymous@files.example/pub")
    assert.equal("anonymous", p.user)
    assert.is_nil(p.password)
    assert.equal("ftp", p.scheme)
    assert.equal(21, p.port)
  end)

  it("fails with an invalid_url error on what is not a URL", function()
    for _, u in ipairs({ "http://", "not a url", "/just/a/path", "http://a:65536/", "mailto:x@y" }) do
      local p, err = url.parse(u)
      assert.is_nil(p, u)
      assert.equal("invalid_url", err.kind, u)
      assert.is_string(err.message, u)
    end
    local p, err = url.parse("http://example.org/" .. ("x"):rep(9000))
    assert.is_nil(p)
    assert.matches("too long", err.message)
  end)

  it("raises on arguments that are not strings", function()
    assert.has_error(function() url.parse() end)
    assert.has_error(function() url.parse(80) end)
    assert.has_error(function() url.parse({}) end)
  end)
end)

describe("lc.url.host, site and same_site", function()
  it("gives the host lower-cased, IDN as punycode, IPv6 without brackets", function()
    assert.equal("a.b.example.co.uk", url.host("http://A.B.Example.CO.UK/x"))
    assert.equal("xn--bcher-kva.example", url.host("https://bücher.example/"))
    assert.equal("::1", url.host("http://[::1]:8080/"))
  end)

  it("gives the registrable domain as the site", function()
    assert.equal("example.co.uk", url.site("http://a.b.example.co.uk/"))
    assert.equal("example.com", url.site("https://www.example.com/"))
    assert.equal("someone.github.io", url.site("https://someone.github.io/repo"))
  end)

  it("gives an IP address, or a host that is a public suffix, as its own site", function()
    assert.equal("127.0.0.1", url.site("http://127.0.0.1:8080/"))
    assert.equal("::1", url.site("http://[::1]/"))
    assert.equal("localhost", url.site("http://localhost/"))
    assert.equal("co.uk", url.site("http://co.uk/"))
  end)

  it("fails with an invalid_url error on URLs without a host", function()
    local s, err = url.site("http://")
    assert.is_nil(s)
    assert.equal("invalid_url", err.kind)
    assert.equal("invalid_url: missing or invalid host", tostring(err))
    assert.is_nil((url.host("not a url")))
  end)

  it("tells whether two URLs are on the same site", function()
    assert.is_true(url.same_site("http://a.example.co.uk/", "https://b.c.example.co.uk/x"))
    assert.is_false(url.same_site("http://example.co.uk/", "http://other.co.uk/"))
    assert.is_false(url.same_site("https://alice.github.io/", "https://bob.github.io/"))
    assert.is_true(url.same_site("http://127.0.0.1:1/", "http://127.0.0.1:2/"))
    assert.is_false(url.same_site("http://127.0.0.1/", "http://127.0.0.2/"))
    assert.is_false(url.same_site("not a url", "not a url"))
  end)

  it("raises on arguments that are not strings", function()
    assert.has_error(function() url.host(nil) end)
    assert.has_error(function() url.site(1) end)
    assert.has_error(function() url.same_site("http://a/") end)
  end)
end)

describe("lc.url.fingerprint", function()
  it("is 16 lower-case hex digits", function()
    assert.matches("^[0-9a-f]+$", url.fingerprint("http://example.org/"))
    assert.equal(16, #url.fingerprint("http://example.org/"))
  end)

  it("is equal for equivalent URLs", function()
    local fp = url.fingerprint("http://example.org/a/b?x=1")
    for _, u in ipairs({
      "HTTP://EXAMPLE.ORG:80/a/b?x=1",
      "http://example.org/a/./c/../b?x=1",
      "http://example.org/%61/b?x=%31",
      "http://example.org/a/b?x=1#section",
      "  http://example.org/a/b?x=1\n",
    }) do
      assert.equal(fp, url.fingerprint(u), u)
    end
    assert.equal(url.fingerprint("http://xn--bcher-kva.example/"), url.fingerprint("http://Bücher.example"))
  end)

  it("is the fingerprint of the normalized URL when an escape in the host decodes to a digit", function()
    for _, u in ipairs({ "http://%36/", "https://%39/", "http://0%36/x" }) do
      assert.equal(url.fingerprint(assert(url.normalize(u))), url.fingerprint(u), u)
    end
  end)

  it("differs for different URLs", function()
    local seen = {}
    for _, u in ipairs({
      "http://example.org/", "https://example.org/", "http://example.org:8080/",
      "http://example.org/a", "http://example.org/A", "http://example.org/?a=1",
      "http://example.org/?a=2", "http://example.org/?b=1&a=1", "http://example.org/?a=1&b=1",
      "http://www.example.org/", "http://example.org/a%2Fb", "http://example.org/a/b",
    }) do
      local fp = url.fingerprint(u)
      assert.is_nil(seen[fp], u)
      seen[fp] = u
    end
  end)

  it("hashes unparsable strings as they are", function()
    assert.equal(url.fingerprint("not a url"), url.fingerprint("not a url"))
    assert.are_not.equal(url.fingerprint("not a url"), url.fingerprint("not an url"))
  end)

  it("raises on arguments that are not strings", function()
    assert.has_error(function() url.fingerprint(nil) end)
    assert.has_error(function() url.fingerprint(1) end)
  end)
end)

describe("lc.seen", function()
  it("adds a URL once and then knows it", function()
    local set = lc.seen()
    assert.equal(0, set:size())
    assert.is_false(set:has("http://example.org/"))
    assert.is_true(set:add("http://example.org/"))
    assert.is_false(set:add("http://example.org/"))
    assert.is_true(set:has("http://example.org/"))
    assert.equal(1, set:size())
    assert.equal(1, #set)
  end)

  it("counts equivalent URLs once", function()
    local set = lc.seen()
    assert.is_true(set:add("http://example.org/a?x=1"))
    assert.is_false(set:add("HTTP://Example.org:80/b/../a?x=%31#frag"))
    assert.is_true(set:has("http://EXAMPLE.org/a?x=1"))
    assert.is_true(set:add("http://example.org/a?x=2"))
    assert.equal(2, set:size())
  end)

  it("keeps separate sets apart", function()
    local a, b = lc.seen(), lc.seen(100)
    a:add("http://example.org/")
    assert.is_false(b:has("http://example.org/"))
  end)

  it("holds many URLs in little memory", function()
    local set = lc.seen()
    for i = 1, 100000 do
      assert(set:add("http://example.org/page/" .. i))
    end
    assert.equal(100000, set:size())
    assert.is_false(set:add("http://example.org/page/500"))
    assert.is_true(set:bytes() / set:size() <= 16)
  end)

  it("raises on arguments of the wrong type", function()
    local set = lc.seen()
    assert.has_error(function() set:add(nil) end)
    assert.has_error(function() set:add(1) end)
    assert.has_error(function() set:has({}) end)
    assert.has_error(function() lc.seen("many") end)
    assert.has_error(function() set.add({}, "http://example.org/") end)
  end)
end)

-- url_fast.c takes a fast path, without curl, for URLs already in normalized form and for
-- plain references against such a base; tests/unit/test_url_fast.c checks it against
-- the curl path on random URLs. These pin the cases at its edges.
describe("lc.url fast path", function()
  it("gives back a URL already normalized as it is, fragment dropped unless kept", function()
    local u = "https://www.example.com:8443/a/b%20c/%C3%A9;v=1?q=a+b&x[]=1&y=%2F"
    assert.equal(u, url.normalize(u))
    assert.equal(u, url.normalize(u .. "#frag"))
    assert.equal(u .. "#frag", url.normalize(u .. "#frag", { keep_fragment = true }))
    assert.equal("http://127.0.0.1/x", url.normalize("http://127.0.0.1/x"))
    assert.equal("http://a/.../c", url.normalize("http://a/.../c"))
  end)

  it("leaves to the slow path what it would change", function()
    local cases = {
      { "http://9/", "http://0.0.0.9/" },
      { "http://1.2.3/", "http://1.2.0.3/" },
      { "http://010.0.0.1/", "http://8.0.0.1/" },
      { "http://a:80/x", "http://a/x" },
      { "https://a:443/x", "https://a/x" },
      { "http://a:08080/x", "http://a:8080/x" },
      { "http://a/x?", "http://a/x" },
      { "http://a/x?#f", "http://a/x" },
      { "http://a", "http://a/" },
      { "http://a?x", "http://a/?x" },
      { "http://a/%7e", "http://a/~" },
      { "http://a/%c3%a9", "http://a/%C3%A9" },
      { "http://a/b/./c", "http://a/b/c" },
      { "http://a/b/../c", "http://a/c" },
      { "http://a/b/.", "http://a/b/" },
      { "http://A.com/x", "http://a.com/x" },
      { "http://a/x y", "http://a/x%20y" },
    }
    for _, case in ipairs(cases) do
      assert.equal(case[2], url.normalize(case[1]), case[1])
    end
    assert.equal("http://a/x#y%20z", url.normalize("http://a/x#y z", { keep_fragment = true }))
  end)

  it("resolves a page's links as the slow path does", function()
    local page = [[<a href="g">1</a><a href="../x/./y">2</a><a href="?q=1">3</a>
      <a href="#top">4</a><a href="//cdn.example.org/s.css">5</a><a href="/a/b/..">6</a>
      <a href="mailto:x@y">7</a><a href="ftp://f/x">8</a><a href="HTTP://Example.ORG:80/%7e">9</a>
      <a href="g?">10</a><a href="https://x.example/p#f">11</a><a href="g h">12</a>]]
    assert.same({
      "https://www.example.com/blog/2024/g",
      "https://www.example.com/blog/x/y",
      "https://www.example.com/blog/2024/post?q=1",
      "https://www.example.com/blog/2024/post?id=3",
      "https://cdn.example.org/s.css",
      "https://www.example.com/a/",
      "http://example.org/~",
      "https://x.example/p",
      "https://www.example.com/blog/2024/g%20h",
    }, lc.html.links(page, { url = "https://www.example.com/blog/2024/post?id=3" }))
    assert.same({ "http://example.org/~", "https://x.example/p" }, lc.html.links(page))
  end)

  it("fingerprints a normalized URL and its unnormalized forms alike", function()
    local fp = url.fingerprint("https://example.org/a%20b?x=1")
    assert.equal(fp, url.fingerprint("HTTPS://Example.org:443/./a%20b?x=1#f"))
    assert.equal(fp, url.fingerprint("https://example.org/a%20b?x=1#f"))
  end)
end)

describe("lc.url.normalize on escaped hosts", function()
  it("is idempotent when curl decodes a numeric host", function()
    local once = lc.url.normalize("http://%39/")
    assert.equal("http://0.0.0.9/", once)
    assert.equal(once, lc.url.normalize(once))
  end)

  it("is idempotent with newlines before the authority (dropped, as anywhere in a URL)", function()
    local once = lc.url.normalize("https:\n\n//%39/")
    assert.equal("https://0.0.0.9/", once)
    assert.equal(once, lc.url.normalize(once))
  end)
end)

describe("lc.url on inputs the fuzzer found", function()
  it("strips path parameters of a long path without reading past it", function()
    local u = "http://a.test/" .. ("a"):rep(700) .. ";x"
    assert.equal(u, lc.url.normalize(u, { strip = { "sid" } }))
    assert.equal("http://a.test/b", lc.url.normalize("http://a.test/b;sid=1", { strip = { "sid" } }))
  end)

  it("keeps a reference with a scheme over 40 characters absolute", function()
    local ref = ("a"):rep(41) .. "://x"
    assert.equal(ref, lc.url.resolve("https://example.com/a/b", ref))
  end)
end)
