-- fixtures: --http --dns --tls
-- lc.fetch and lc.resolve against the fixture server and dnsmasq (tests/fixtures).
local lc = require "luacrawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_server })

local function fetch(url, opts)
  return lc.run(function() return lc.fetch(url, opts) end)
end

describe("lc.fetch", function()
  it("fetches a page with status, url, headers, body, ip and timings", function()
    local res = assert(fetch(h.url("/site/p/3.html")))
    assert.equal(200, res.status)
    assert.equal(h.url("/site/p/3.html"), res.url)
    assert.matches("<title>Page 3</title>", res.body)
    assert.equal("127.0.0.1", res.ip)
    assert.equal("1.1", res.http_version)
    for _, k in ipairs({ "dns", "connect", "tls", "ttfb", "total" }) do
      assert.is_number(res.time[k])
    end
    assert.is_true(res.time.total >= res.time.ttfb)
  end)

  it("looks headers up in any case", function()
    local res = assert(fetch(h.url("/headers?X-Thing=1")))
    assert.equal("1", res.headers["x-thing"])
    assert.equal("1", res.headers["X-Thing"])
    assert.equal("1", res.headers["X-THING"])
  end)

  it("joins repeated headers", function()
    local res = assert(fetch(h.url("/headers?X-Rep=a&X-Rep=b")))
    assert.equal("a, b", res.headers["x-rep"])
    -- apart, and in another case
    res = assert(fetch(h.url("/headers?X-Rep=a&Y=1&x-REP=b&Z=2&X-Rep=c")))
    assert.equal("a, b, c", res.headers["x-rep"])
    assert.equal("1", res.headers.y)
  end)

  it("makes res.headers on first use, from what the body keeps, after res:release() too", function()
    local res = assert(fetch(h.url("/headers?X-Rep=a&Y=1&x-REP=b&Z=2&X-Rep=c")))
    assert.is_nil(rawget(res, "headers"))
    -- One header without the table (the crawl reads a page's Content-Type so), joined
    -- as the table joins it.
    assert.equal("a, b, c", lc._header(res, "x-rep"))
    assert.equal("1", lc._header(res, "y"))
    assert.is_nil(lc._header(res, "x-none"))
    assert.is_nil(rawget(res, "headers"))
    res:release()
    local headers = res.headers
    assert.equal(headers, rawget(res, "headers")) -- made once, then kept
    assert.equal("a, b, c", headers["X-Rep"])
    assert.equal("1", headers.y)
    -- res.time.total without res.time
    assert.is_true(lc._elapsed(res) > 0)
    assert.is_nil(rawget(res, "time"))
    assert.equal(res.time.total, lc._elapsed(res))
  end)

  it("names every header right, however many names it has seen", function()
    -- Header names come from a small cache of strings (lua_http.c): 300 names, more
    -- than it holds, twice over, and a long one it does not keep.
    local long = ("L"):rep(40)
    for _ = 1, 2 do
      local res = assert(fetch(h.url("/manyheaders?count=300")))
      for i = 0, 299 do
        assert.equal("v", res.headers["x-h-" .. i])
      end
      local n = 0
      for name in pairs(res.headers) do
        if name:find("^x%-h%-%d+$") then n = n + 1 end
      end
      assert.equal(300, n)
      res = assert(fetch(h.url("/headers?" .. long .. "=1&X-H-7=2")))
      assert.equal("1", res.headers[long:lower()])
      assert.equal("2", res.headers["x-h-7"])
    end
  end)

  it("returns 404 and 500 as responses, not errors", function()
    assert.equal(404, fetch(h.url("/status/404")).status)
    assert.equal(500, fetch(h.url("/status/500")).status)
  end)

  it("decodes gzip and deflate bodies", function()
    assert.equal(("hello gzip "):rep(1000), fetch(h.url("/gzip")).body)
    assert.equal(("hello deflate "):rep(1000), fetch(h.url("/deflate")).body)
  end)

  it("decodes chunked bodies", function()
    assert.equal("chunk0chunk1chunk2chunk3chunk4chunk5chunk6chunk7chunk8chunk9", fetch(h.url("/chunked")).body)
  end)

  it("accepts a large body within max_size", function()
    local res = assert(fetch(h.url("/large?bytes=3000000")))
    assert.equal(3000000, #res.body)
  end)

  it("gives the body's size without making the body a string", function()
    local res = assert(fetch(h.url("/large?bytes=3000")))
    assert.equal(3000, res.size)
    assert.is_nil(rawget(res, "body"))
    assert.equal(3000, #res.body)
    assert.equal(res.body, rawget(res, "body")) -- made once, then kept
    assert.equal(0, assert(fetch(h.url("/status/204"))).size)
    assert.equal("", assert(fetch(h.url("/status/204"))).body)
  end)

  it("scans links from the body as received, and from the string after res.body", function()
    local res = assert(fetch(h.url("/site/p/3.html")))
    local before = res:html():links()
    assert.is_true(#before > 0)
    local again = assert(fetch(h.url("/site/p/3.html")))
    assert.matches("<title>", again.body)
    assert.same(before, again:html():links())
    local seen = lc.seen()
    seen:add(before[1])
    local fresh = assert(fetch(h.url("/site/p/3.html"))):html():links({ unseen = seen })
    local rest = {}
    for i = 2, #before do rest[#rest + 1] = before[i] end
    assert.same(rest, fresh)
  end)

  it("frees the body at once with res:release(), and says so when it is read after", function()
    -- A large body, so that what the Lua heap itself does meanwhile (a table grown, a
    -- trace compiled: a few KB) stays well within the slack.
    local big = assert(fetch(h.url("/large?bytes=300000")))
    local used = lc.memory()
    big:release()
    assert.is_true(used - lc.memory() > big.size - 65536, tostring(used - lc.memory()))
    local res = assert(fetch(h.url("/site/p/3.html")))
    assert.is_true(#res:html():links() > 0)
    res:release()
    assert.has_error(function() return res.body end, "res.body read after res:release()")
    assert.same({}, res:html():links()) -- a new, empty document
    res:release() -- twice is fine
    local read = assert(fetch(h.url("/site/p/3.html")))
    local body = read.body
    read:release()
    assert.equal(body, read.body) -- a string made before stays
  end)

  it("keeps ip, http_version, redirects, size and time after res:release()", function()
    local res = assert(fetch(h.url("/site/p/3.html")))
    local size = #res.body
    res:release()
    assert.equal("127.0.0.1", res.ip)
    assert.equal("1.1", res.http_version)
    assert.equal(0, res.redirects)
    assert.equal(size, res.size)
    assert.is_true(res.time.total > 0 and res.time.total >= res.time.ttfb)
    assert.equal(res.time, res.time) -- one table, made on first use
    assert.is_nil(res.no_such_field)
  end)

  it("aborts a body over max_size with too_large", function()
    local res, err = fetch(h.url("/large?bytes=200000"), { max_size = 100000 })
    assert.is_nil(res)
    assert.equal("too_large", err.kind)
  end)

  it("with truncate, cuts a body at max_size and says so", function()
    local res = assert(fetch(h.url("/large?bytes=300000"), { max_size = 100000, truncate = true }))
    assert.equal(100000, #res.body)
    assert.is_true(res.truncated)
    assert.is_nil(assert(fetch(h.url("/large?bytes=10"), { max_size = 100, truncate = true })).truncated)
  end)

  it("aborts a body over the default 10 MiB", function()
    local res, err = fetch(h.url("/large?bytes=" .. (11 * 1024 * 1024)))
    assert.is_nil(res)
    assert.equal("too_large", err.kind)
  end)

  it("reports a header over curl's limit as too_large", function()
    local res, err = fetch(h.url("/bigheader?bytes=200000"))
    assert.is_nil(res)
    assert.equal("too_large", err.kind)
  end)

  it("reports headers over max_header_size as too_large", function()
    local res, err = fetch(h.url("/manyheaders?count=100"), { max_header_size = 1000 })
    assert.is_nil(res)
    assert.equal("too_large", err.kind)
  end)

  it("reports a connection reset mid-body as protocol (the response began)", function()
    local res, err = fetch(h.url("/reset"))
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
  end)

  it("reports a body shorter than Content-Length as protocol", function()
    local res, err = fetch(h.url("/short"))
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
  end)

  it("times out a slow endpoint without holding up other fetches", function()
    local slow_err, slow_elapsed, fast_status, fast_elapsed = lc.run(function()
      local t0 = lc.now()
      local slow = lc.spawn(function()
        local _, err = lc.fetch(h.url("/slow?delay=3"), { timeout = 1.5 })
        return err, lc.now() - t0
      end)
      local fast = lc.fetch(h.url("/status/200"))
      local elapsed = lc.now() - t0
      local err, slow_t = slow:join()
      return err, slow_t, fast.status, elapsed
    end)
    assert.equal("timeout", slow_err.kind)
    assert.is_true(slow_elapsed >= 1.5 and slow_elapsed < 3)
    assert.equal(200, fast_status)
    -- Held up by the slow fetch, it would take its 1.5 s; a loaded machine may add
    -- some hundreds of milliseconds to a fetch, not a second.
    assert.is_true(fast_elapsed < 1)
  end)

  it("reports a refused connection as connect", function()
    local res, err = fetch("http://127.0.0.1:1/")
    assert.is_nil(res)
    assert.equal("connect", err.kind)
    assert.matches("127.0.0.1", tostring(err))
  end)

  it("sends method, headers, body and user agent", function()
    local res = assert(fetch(h.url("/echo"), {
      method = "PUT", headers = { ["X-One"] = "1", Accept = "text/plain" }, body = "payload",
      user_agent = "spec-agent/1.0",
    }))
    local echo = cjson.decode(res.body)
    assert.equal("PUT", echo.method)
    assert.equal("1", echo.headers["x-one"])
    assert.equal("text/plain", echo.headers.accept)
    assert.equal("payload", echo.body)
    assert.equal("spec-agent/1.0", echo.headers["user-agent"])
  end)

  it("carries nothing of one request's options into the next on a reused handle", function()
    -- One task fetching in turn: each transfer takes the handle the last one gave back.
    local plain1, head, put, plain2, ua, plain3 = lc.run(function()
      local function echo(opts) return cjson.decode(assert(lc.fetch(h.url("/echo"), opts)).body) end
      local a = echo()
      local b = assert(lc.fetch(h.url("/echo"), { method = "HEAD" }))
      local c = echo({ method = "PUT", headers = { ["X-One"] = "1" }, body = "payload" })
      local d = echo()
      local e = echo({ user_agent = "other/2" })
      local f = echo()
      return a, b, c, d, e, f
    end)
    for _, e in ipairs({ plain1, plain2, plain3 }) do
      assert.equal("GET", e.method)
      assert.is_nil(e.headers["x-one"])
      assert.equal("", e.body)
      assert.matches("^luacrawl/", e.headers["user-agent"])
    end
    assert.equal("", head.body)
    assert.equal("PUT", put.method)
    assert.equal("1", put.headers["x-one"])
    assert.equal("other/2", ua.headers["user-agent"])
  end)

  it("sends one User-Agent and the Accept-Encoding curl decodes, however the request is made", function()
    -- A plain request's two headers go to curl as a ready list (http_headers.c); any
    -- other request lets curl write them. Both must say the same, once each.
    local function echo(opts)
      return cjson.decode(assert(fetch(h.url("/echo"), opts)).body).headers
    end
    local plain, own_ua, with_headers, proxied = echo(), echo({ user_agent = "own/1" }),
      echo({ headers = { ["X-One"] = "1" } }), echo({ proxy = h.url("") })
    local version = lc.versions().luacrawl
    assert.equal("luacrawl/" .. version, plain["user-agent"])
    assert.equal("own/1", own_ua["user-agent"])
    assert.equal("luacrawl/" .. version, with_headers["user-agent"])
    assert.equal("luacrawl/" .. version, proxied["user-agent"])
    -- curl's own list (written by curl for the request with headers of its own).
    local curls = with_headers["accept-encoding"]
    assert.matches("gzip", curls)
    for _, e in ipairs({ plain, own_ua, proxied }) do assert.equal(curls, e["accept-encoding"]) end
    -- And what a plain request advertised came encoded and was decoded.
    local res = assert(fetch(h.url("/gzip")))
    assert.equal("gzip", res.headers["content-encoding"])
    assert.equal(("hello gzip "):rep(1000), res.body)
  end)

  it("sends the path and query of every kind of URL as they are", function()
    -- Normalized URLs reach curl in parts (http.c's url_handle), others as strings.
    local urls = {
      h.url("/echo?a=1&b=%2F"), h.url("/echo?q=%C3%A9&r=%7e"), h.url("/echo?r=[1]&s=/x:y@z"),
      h.url("/echo#frag"), h.url("/echo?"), h.url("/a/../echo?z=1"),
      (h.url("/echo?b=2"):gsub("127.0.0.1", "127.0.0.1.")),
    }
    local want = {
      "/echo?a=1&b=%2F", "/echo?q=%C3%A9&r=%7e", "/echo?r=[1]&s=/x:y@z", "/echo", "/echo?",
      "/echo?z=1", "/echo?b=2",
    }
    for i, url in ipairs(urls) do
      local res = assert(fetch(url))
      assert.equal(200, res.status)
      assert.equal(want[i], cjson.decode(res.body).path)
      assert.equal(url, res.url)
    end
  end)

  it("sends each URL's own origin, path and query on a handle that kept the last one's parts", function()
    -- One task fetching in turn takes the handle (and the URL parts: http_pool.c) the
    -- last transfer gave back; a query must not outlive its URL, nor a host its URLs.
    local other = h.url("/echo?o=1"):gsub("127%.0%.0%.1", "site.crawl.test")
    local urls = { h.url("/echo?a=1"), h.url("/echo"), other, h.url("/echo?b=2") }
    local want = { "/echo?a=1", "/echo", "/echo?o=1", "/echo?b=2" }
    local echoes, page = lc.run(function()
      local out = {}
      for i, url in ipairs(urls) do
        out[i] = cjson.decode(assert(lc.fetch(url)).body)
        if i == 1 then out.page = assert(lc.fetch(h.url("/site/p/3.html"))).body end -- another path
      end
      return out, out.page
    end)
    assert.matches("<title>Page 3</title>", page)
    for i, echo in ipairs(echoes) do
      assert.equal(want[i], echo.path)
      assert.equal(urls[i]:match("^http://([^/]+)"), echo.headers.host)
    end
  end)

  it("sends a default user agent naming luacrawl", function()
    local echo = cjson.decode(fetch(h.url("/echo")).body)
    assert.matches("^luacrawl/", echo.headers["user-agent"])
  end)

  it("sends POST when a body is given without a method", function()
    local echo = cjson.decode(fetch(h.url("/echo"), { body = "a=1" }).body)
    assert.equal("POST", echo.method)
  end)

  it("HEAD returns headers and no body", function()
    local res = assert(fetch(h.url("/site/p/1.html"), { method = "HEAD" }))
    assert.equal(200, res.status)
    assert.equal("", res.body)
  end)

  it("refuses header values with CR or LF", function()
    assert.has_error(function()
      fetch(h.url("/echo"), { headers = { ["X-Bad"] = "a\r\nInjected: 1" } })
    end)
    assert.has_error(function() fetch(h.url("/echo"), { user_agent = "a\nb" }) end)
  end)

  it("raises on options of the wrong type", function()
    local function message(opts)
      local ok, err = pcall(fetch, h.url("/"), opts)
      assert.is_false(ok)
      return tostring(err)
    end
    assert.matches("option 'timeout' must be a number", message({ timeout = "soon" }))
    assert.matches("option 'method' must be a string", message({ method = {} }))
    assert.matches("option 'body' must be a string", message({ body = true }))
    assert.matches("option 'headers' must be a table", message({ headers = "X-A: 1" }))
    assert.matches("options must be a table", message(5))
    assert.has_error(function() fetch(nil) end)
  end)

  it("reads options a metatable gives", function()
    local defaults = { method = "PUT", headers = { ["X-Default"] = "yes" } }
    local opts = setmetatable({ body = "b" }, { __index = defaults })
    local echo = cjson.decode(assert(fetch(h.url("/echo"), opts)).body)
    assert.equal("PUT", echo.method)
    assert.equal("yes", echo.headers["x-default"])
    assert.equal("b", echo.body)
  end)

  it("refuses an option name it does not know, with the nearest known one", function()
    local ok, err = pcall(fetch, h.url("/"), { timout = 1 })
    assert.is_false(ok)
    assert.matches("fetch: unknown option 'timout' %(did you mean 'timeout'%?%)", tostring(err))
    ok, err = pcall(fetch, h.url("/"), setmetatable({ methods = "PUT" }, { __index = {} }))
    assert.is_false(ok)
    assert.matches("unknown option 'methods' %(did you mean 'method'%?%)", tostring(err))
    ok, err = pcall(fetch, h.url("/"), { zzz = 1, timout = 1 })
    assert.matches("unknown options 'timout' %(did you mean 'timeout'%?%), 'zzz'$", tostring(err))
  end)

  it("fetches with options read once by lc.fetch_options as with their table, each time", function()
    local opts = {
      method = "PUT", headers = { ["X-One"] = "1" }, body = "payload", user_agent = "spec-agent/1.0",
    }
    local prepared = lc.fetch_options(opts)
    opts.method, opts.user_agent = "POST", "later/1" -- read once: not seen
    local echoes = lc.run(function()
      local out = {}
      for i = 1, 3 do out[i] = cjson.decode(assert(lc.fetch(h.url("/echo?n=" .. i), prepared)).body) end
      return out
    end)
    for _, echo in ipairs(echoes) do
      assert.equal("PUT", echo.method)
      assert.equal("1", echo.headers["x-one"])
      assert.equal("payload", echo.body)
      assert.equal("spec-agent/1.0", echo.headers["user-agent"])
    end
    local err = select(2, fetch(h.url("/large?bytes=5000"), lc.fetch_options({ max_size = 1000 })))
    assert.equal("too_large", err.kind)
  end)

  it("refuses in lc.fetch_options what fetch refuses in its options", function()
    local ok, err = pcall(lc.fetch_options, { timout = 1 })
    assert.is_false(ok)
    assert.matches("fetch: unknown option 'timout' %(did you mean 'timeout'%?%)", tostring(err))
    ok, err = pcall(lc.fetch_options, { headers = { ["X-A"] = "1\r\nX-B: 2" } })
    assert.is_false(ok)
    assert.matches("CR or LF", tostring(err))
    assert.has_error(function() lc.fetch_options("timeout=1") end)
  end)

  it("ignores keys that are not names", function()
    local echo = cjson.decode(assert(fetch(h.url("/echo"), { [1] = "x", [true] = 1 })).body)
    assert.equal("GET", echo.method)
  end)

  it("reports malformed URLs as invalid_url", function()
    for _, u in ipairs({ "", "not a url", "http://", "http://exa mple.org/", "http://[::1/" }) do
      local res, err = fetch(u)
      assert.is_nil(res, u)
      assert.equal("invalid_url", err.kind, u)
    end
  end)

  it("refuses file:// and ftp:// URLs", function()
    for _, u in ipairs({ "file:///etc/passwd", "ftp://127.0.0.1/" }) do
      local res, err = fetch(u)
      assert.is_nil(res)
      assert.equal("invalid_url", err.kind)
    end
  end)

  it("reuses connections", function()
    local stats_before = lc.stats()
    lc.run(function()
      for _ = 1, 20 do assert(lc.fetch(h.url("/status/200"))) end
    end)
    -- 20 sequential fetches on a keep-alive connection: only the first connects.
    local res = fetch(h.url("/status/200"))
    assert.equal(0, res.time.connect)
    assert.is_true(lc.stats().http_completed >= stats_before.http_completed + 21)
  end)

  it("fetches many URLs concurrently", function()
    local ok = lc.run(function()
      local tasks = {}
      for i = 1, 300 do
        tasks[i] = lc.spawn(function() return lc.fetch(h.url("/site/p/" .. i .. ".html")).status end)
      end
      local n = 0
      for i = 1, 300 do if tasks[i]:join() == 200 then n = n + 1 end end
      return n
    end)
    assert.equal(300, ok)
  end)

  it("cancelling a task aborts its fetch", function()
    local elapsed = lc.run(function()
      local t0 = lc.now()
      local t = lc.spawn(function() return lc.fetch(h.url("/slow?delay=5")) end)
      lc.sleep(0.05)
      t:cancel()
      pcall(t.join, t)
      return lc.now() - t0
    end)
    assert.is_true(elapsed < 1)
    assert.equal(0, lc.stats().http_active)
  end)
end)

describe("DNS through lc.configure{dns_servers=}", function()
  it("resolves names only the test server knows", function()
    local res = assert(fetch(h.url("/status/200", "a.crawl.test")))
    assert.equal(200, res.status)
    assert.equal("127.0.0.2", res.ip)
  end)

  it("fails fast with kind dns for an unknown name", function()
    local t0 = os.time()
    local res, err = fetch(h.url("/", "nope.crawl.test"))
    assert.is_nil(res)
    assert.equal("dns", err.kind)
    assert.matches("nope.crawl.test", err.message)
    assert.is_true(os.time() - t0 <= 1)
  end)

  it("lc.resolve returns addresses and a TTL", function()
    local addrs, ttl = lc.run(function() return lc.resolve("b.crawl.test") end)
    assert.same({ "127.0.0.3" }, addrs)
    assert.is_true(ttl > 0)
  end)

  it("lc.resolve of an unknown name returns nil and a dns error", function()
    local addrs, err = lc.run(function() return lc.resolve("missing.crawl.test") end)
    assert.is_nil(addrs)
    assert.equal("dns", err.kind)
  end)

  it("one query serves every task waiting on a name", function()
    local before = lc.stats().dns_queries
    lc.run(function()
      local tasks = {}
      for i = 1, 50 do tasks[i] = lc.spawn(lc.resolve, "c.crawl.test") end
      for i = 1, 50 do tasks[i]:join() end
    end)
    assert.equal(before + 1, lc.stats().dns_queries)
  end)

  it("refuses dns_servers once lookups have begun", function()
    assert.has_error(function() lc.configure({ dns_servers = "127.0.0.1:1" }) end)
  end)
end)

describe("TLS", function()
  local port, expired, selfsigned, ca = os.getenv("LC_TLS_PORT"), os.getenv("LC_TLS_EXPIRED_PORT"),
    os.getenv("LC_TLS_SELFSIGNED_PORT"), os.getenv("LC_TLS_CA")

  it("verifies certificates by default", function()
    local res, err = fetch("https://127.0.0.1:" .. port .. "/")
    assert.is_nil(res) -- signed by the test CA, which the system does not trust
    assert.equal("tls", err.kind)
  end)

  it("fetches over HTTP/2 when the certificate verifies against ca_file", function()
    local res = assert(fetch("https://localhost:" .. port .. "/echo-proto", { ca_file = ca }))
    assert.equal(200, res.status)
    assert.equal("2", res.http_version)
    assert.equal("HTTP/2.0\n", res.body)
    assert.is_true(res.time.tls > 0)
  end)

  it("refuses an expired certificate with kind tls", function()
    local res, err = fetch("https://localhost:" .. expired .. "/", { ca_file = ca })
    assert.is_nil(res)
    assert.equal("tls", err.kind)
    assert.matches("expired", err.message)
  end)

  it("refuses a self-signed certificate with kind tls", function()
    local res, err = fetch("https://localhost:" .. selfsigned .. "/", { ca_file = ca })
    assert.is_nil(res)
    assert.equal("tls", err.kind)
  end)

  it("insecure skips verification", function()
    local res = assert(fetch("https://127.0.0.1:" .. selfsigned .. "/", { insecure = true }))
    assert.equal("tls ok\n", res.body)
  end)

  it("multiplexes many requests on one HTTP/2 connection", function()
    local versions = lc.run(function()
      local tasks = {}
      for i = 1, 50 do
        tasks[i] = lc.spawn(function()
          return lc.fetch("https://localhost:" .. port .. "/gzip.txt", { ca_file = ca }).http_version
        end)
      end
      local v = {}
      for i = 1, 50 do v[tasks[i]:join()] = true end
      return v
    end)
    assert.same({ ["2"] = true }, versions)
  end)
end)

describe("proxies", function()
  it("sends the request through an HTTP proxy, which resolves the target itself", function()
    local res = assert(fetch("http://proxied.invalid/echo", { proxy = h.url("") }))
    assert.equal(200, res.status)
    assert.equal("http://proxied.invalid/echo", cjson.decode(res.body).proxied)
  end)

  it("reports an unreachable proxy as connect", function()
    local res, err = fetch("http://proxied.invalid/echo", { proxy = "http://127.0.0.1:1" })
    assert.is_nil(res)
    assert.equal("connect", err.kind)
  end)
end)
