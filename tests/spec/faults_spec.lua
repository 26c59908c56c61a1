-- fixtures: --http --dns-faults
-- The worst servers: every fault of tests/fixtures (server.py /fault/*, dns_faults.py)
-- gives a clear error kind, memory stays bounded, the crawl goes on, other hosts are
-- not slowed, and the stats count it.
local lc = require "luacrawl"
local crawl = require "luacrawl.crawl"
local h = require "spec_helper"
local cjson = require "cjson"

lc.configure({ dns_servers = h.dns_faults })

local function fetch(url, opts)
  return lc.run(function()
    local t0 = lc.now()
    local res, err = lc.fetch(url, opts)
    return res, err, lc.now() - t0
  end)
end

local function kind_of(path, opts)
  local res, err, secs = fetch(h.url(path), opts)
  return err and err.kind or res.status, secs, err, res
end

-- Peak resident memory of this process, in MB.
local function peak_rss_mb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s+(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end

describe("HTTP faults", function()
  it("connection refused: connect", function()
    local _, err = fetch("http://127.0.0.1:1/")
    assert.equal("connect", err.kind)
  end)

  it("reset before the response: connect", function()
    assert.equal("connect", (kind_of("/fault/reset-before")))
  end)

  it("reset during the body: protocol (the response began: a response cut short)", function()
    assert.equal("protocol", (kind_of("/reset")))
  end)

  it("a server that accepts and never answers: timeout, on time", function()
    local kind, secs = kind_of("/fault/hang?seconds=30", { timeout = 1 })
    assert.equal("timeout", kind)
    assert.is_true(secs >= 0.9 and secs < 3, secs) -- curl's timer may fire a hair early
  end)

  it("a body that trickles a byte a second: timeout", function()
    local kind, secs = kind_of("/fault/trickle?bytes=60", { timeout = 1.5 })
    assert.equal("timeout", kind)
    assert.is_true(secs < 4, secs)
  end)

  it("Content-Length longer than the body: protocol", function()
    assert.equal("protocol", (kind_of("/short")))
  end)

  it("invalid chunked encoding: protocol", function()
    assert.equal("protocol", (kind_of("/fault/bad-chunked")))
  end)

  it("a declared 10 GB body: too_large at once", function()
    local kind, secs = kind_of("/fault/huge")
    assert.equal("too_large", kind)
    assert.is_true(secs < 2, secs)
  end)

  it("an endless chunked body: too_large at max_size", function()
    local kind, _, err = kind_of("/fault/huge-chunked", { max_size = 2 * 1024 * 1024 })
    assert.equal("too_large", kind)
    assert.matches("2097152", err.message)
  end)

  it("a gzip bomb (1 MB expanding to 1 GB): too_large, memory bounded", function()
    local kind = kind_of("/fault/gzip-bomb")
    assert.equal("too_large", kind)
    assert.is_true(peak_rss_mb() < 200, peak_rss_mb() .. " MB")
  end)

  it("10,000 response headers: too_large", function()
    assert.equal("too_large", (kind_of("/manyheaders?count=10000")))
  end)

  it("one 1 MB header: too_large", function()
    assert.equal("too_large", (kind_of("/fault/header-1mb")))
  end)

  it("a 50-hop redirect chain: stops at the budget", function()
    local status, _, _, res = kind_of("/redirect/50", { follow = 10 })
    assert.equal(302, status)
    assert.equal(10, res.redirects)
  end)

  it("redirects to file://, ftp:// and gopher://: invalid_url", function()
    for _, u in ipairs({ "file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/" }) do
      assert.equal("invalid_url", (kind_of("/redirect-to?url=" .. u, { follow = 3 })))
    end
  end)

  it("a redirect to an IP literal is followed to that address", function()
    local status, _, _, res = kind_of("/fault/redirect-ip?to=127.0.0.3", { follow = 1 })
    assert.equal(200, status)
    assert.equal("127.0.0.3", res.ip)
  end)

  it("100 MB of HTML on one line: too_large with the default limit", function()
    assert.equal("too_large", (kind_of("/fault/bad-html?kind=oneline")))
  end)

  it("invalid UTF-8 and NUL bytes in HTML: parsed, the clean links kept", function()
    for _, k in ipairs({ "utf8", "nul" }) do
      local _, _, _, res = kind_of("/fault/bad-html?kind=" .. k)
      local links = lc.run(function() return res:html():links() end)
      local found = {}
      for _, l in ipairs(links) do found[l:match("/site/p/%d+%.html$") or l] = true end
      for i = 1, 5 do assert.is_true(found["/site/p/" .. i .. ".html"], k .. " link " .. i) end
      assert.is_string(lc.run(function() return res:html():css1("body"):text() end))
    end
  end)

  it("a URL longer than 8 KiB: invalid_url (max_url_length changes the limit)", function()
    local _, err = fetch(h.url("/status/200?" .. ("x"):rep(9000)))
    assert.equal("invalid_url", err.kind)
    local _, err2 = fetch(h.url("/status/200?" .. ("x"):rep(100)), { max_url_length = 64 })
    assert.matches("longer than 64 bytes", err2.message)
    assert(fetch(h.url("/status/200?" .. ("x"):rep(9000)), { max_url_length = 16384 }))
  end)
end)

describe("DNS faults", function()
  local function dns(name)
    local res, err, secs = fetch(("http://%s:%s/status/200"):format(name, h.fixture_port))
    return res, err, secs
  end

  it("NXDOMAIN: dns, at once", function()
    local _, err, secs = dns("nxdomain.fault.test")
    assert.equal("dns", err.kind)
    assert.is_true(secs < 1)
  end)

  it("SERVFAIL: dns", function()
    local _, err = dns("servfail.fault.test")
    assert.equal("dns", err.kind)
  end)

  it("REFUSED and a malformed reply: dns", function()
    assert.equal("dns", select(2, dns("refused.fault.test")).kind)
    assert.equal("dns", select(2, dns("garbage.fault.test")).kind)
  end)

  it("no answer: dns after the resolver's timeout", function()
    local _, err, secs = dns("timeout.fault.test")
    assert.equal("dns", err.kind)
    assert.is_true(secs < 10, secs)
  end)

  it("a CNAME loop: dns", function()
    assert.equal("dns", select(2, dns("loop.fault.test")).kind)
  end)

  it("a name resolving to 0.0.0.0 is never fetched", function()
    local _, err = dns("zero.fault.test")
    assert.equal("dns", err.kind)
    assert.matches("no usable address", err.message)
    local _, err2 = fetch(("http://0.0.0.0:%s/status/200"):format(h.fixture_port))
    assert.equal("dns", err2.kind)
  end)

  it("a good name still resolves", function()
    local res = dns("ok.fault.test")
    assert.equal("127.0.0.2", res.ip)
  end)
end)

describe("a crawl through faults", function()
  local function control(path, opts)
    return lc.run(function() return cjson.decode(assert(lc.fetch(h.url(path), opts)).body) end)
  end

  it("goes on, counts every fault by kind, and does not slow the healthy host", function()
    control("/__reset")
    local bad, good = "127.0.0.2", "127.0.0.3"
    local start = {}
    for _, p in ipairs({ "/fault/hang?seconds=30", "/fault/trickle", "/fault/reset-before", "/reset", "/short",
      "/fault/bad-chunked", "/fault/huge", "/fault/gzip-bomb", "/fault/header-1mb", "/redirect/50",
      "/redirect-to?url=file:///etc/passwd" }) do
      start[#start + 1] = h.url(p, bad)
    end
    start[#start + 1] = "http://nxdomain.fault.test:" .. h.fixture_port .. "/"
    for i = 1, 20 do start[#start + 1] = h.url("/site/p/" .. i .. ".html", good) end
    local st = crawl.run({
      start = start, robots = false, quiet = true, progress = false, signals = false, retries = 0,
      per_host = 4, concurrency = 16, max_redirect = 10, max_depth = 0, span_hosts = true,
      fetch = { timeout = 2 },
    })
    assert.equal(20, st.statuses[200])
    assert.equal(2, st.errors.timeout)
    assert.equal(1, st.errors.connect) -- reset before the response
    assert.equal(3, st.errors.protocol) -- reset in the body, short, bad chunking
    assert.equal(3, st.errors.too_large)
    assert.equal(1, st.errors.dns)
    assert.equal(1, st.errors.invalid_url)
    assert.equal(1, st.redirect_limit)
    -- The healthy host's pages were all served within a second of the start.
    local l = control("/__log")
    local first, last_good = math.huge, 0
    for _, e in ipairs(l.requests) do
      first = math.min(first, e.start)
      if e.addr == good then last_good = math.max(last_good, e["end"] or e.start) end
    end
    assert.is_true(last_good - first < 1, last_good - first)
    assert.is_true(peak_rss_mb() < 200)
  end)

  it("robots.txt that times out, answers 5xx, is 10 MB or is HTML", function()
    control("/__reset")
    local function robots(host, query, body)
      control(("/__robots?host=%s&%s"):format(host, query), { method = "POST", body = body or "" })
    end
    robots("127.0.0.2", "delay=5")                                       -- times out: not crawled
    robots("127.0.0.3", "status=503")                                    -- 5xx: not crawled
    robots("127.0.0.4", "size=" .. 10 * 1024 * 1024, "User-agent: *\nDisallow: /\n") -- rules past 500 KiB: ignored
    robots("127.0.0.1", "html=1")                                        -- HTML: no rules, allowed
    local start = {}
    for _, a in ipairs({ "127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4" }) do start[#start + 1] = h.url("/status/200", a) end
    local st = crawl.run({ start = start, quiet = true, progress = false, signals = false, span_hosts = true,
      max_depth = 0, fetch = { timeout = 2 } })
    assert.equal(2, st.pages)
    -- Unreachable (a timeout, a 5xx): errors naming the cause, not denials.
    assert.equal(0, st.robots_denied)
    assert.equal(2, st.errors.robots_unreachable)
    assert.is_true(peak_rss_mb() < 200)
  end)
end)
